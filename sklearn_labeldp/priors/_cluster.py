"""Label-independent k-means groups of the public features, for cluster priors.

Ghazi et al. (2021, Algorithm 4) cluster the features into C groups and give
every example the noisy label histogram of its group as prior. The clustering
here sees the features only, so the groups, and hence the histogram's
sensitivity, do not depend on any label.
"""

from numbers import Integral

from sklearn.cluster import KMeans
from sklearn.utils.validation import _num_samples

__all__ = ["cluster_assignment"]


def cluster_assignment(X, n_clusters, *, n_init=3, random_state=None):
    """Fit k-means on public features and return the model and each row's cluster.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Public features; no label is involved.
    n_clusters : int
        Number of clusters C, in ``[1, n_samples]``.
    n_init : int, default=3
        Number of k-means++ initialisations; the best inertia is kept.
    random_state : None, int or RandomState, default=None
        Seed of k-means.

    Returns
    -------
    clusterer : KMeans
        The fitted model.
    groups : ndarray of shape (n_samples,), int64
        Cluster code of each row, in ``[0, n_clusters)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.priors import cluster_assignment
    >>> X = np.array([[0.0], [0.1], [10.0], [10.1]])
    >>> _, groups = cluster_assignment(X, 2, random_state=0)
    >>> bool(groups[0] == groups[1] != groups[2] == groups[3])
    True
    """
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, Integral):
        raise TypeError(f"n_clusters must be an int; got {n_clusters!r}.")
    n_samples = _num_samples(X)
    if not 1 <= n_clusters <= n_samples:
        raise ValueError(
            f"n_clusters={n_clusters} must lie in [1, n_samples]; got n_samples={n_samples}. "
            "Use fewer clusters or more data."
        )
    clusterer = KMeans(n_clusters=n_clusters, n_init=n_init, random_state=random_state)
    groups = clusterer.fit_predict(X).astype("int64")
    return clusterer, groups
