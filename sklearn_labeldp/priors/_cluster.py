"""Cluster priors: their configuration and the label-independent k-means groups.

Ghazi et al. (2021, Algorithm 4) cluster the features into C groups and give
every example the noisy label histogram of its group as prior. The clustering
here sees the features only, so the groups, and hence the histogram's
sensitivity, do not depend on any label.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.cluster import KMeans
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import _num_samples, check_array

from ..utils import check_int

__all__ = ["ClusterPrior", "cluster_assignment"]


class ClusterPrior(BaseEstimator):
    """A prior learnt privately from the labels: noisy histograms of k-means clusters.

    Passed as ``prior`` to
    :class:`~sklearn_labeldp.classifiers.RRWithPriorClassifier`, it makes the
    first stage's prior the cluster prior of Ghazi et al. (2021, Alg. 4):
    k-means groups the training examples into ``n_clusters`` clusters using
    the public features only, the label histogram of every cluster is released
    with discrete Laplace noise (an ``epsilon``-label-DP release of all
    labels), and each example's prior is its cluster's histogram, clipped at 0
    and normalised. Every label is then read a second time by RRWithPrior,
    which gets the rest of the classifier's budget (sequential composition).

    This object holds configuration only; the classifier does the clustering
    and the release when it is fitted, so one ``ClusterPrior`` can be shared,
    cloned and searched over (``prior__n_clusters``) like any parameter.

    Parameters
    ----------
    n_clusters : int, default=10
        Number of k-means clusters ``C``, at most the number of training
        examples.
    epsilon : float
        Part of the classifier's ``epsilon`` spent on the noisy cluster
        histograms, with ``0 < epsilon`` and strictly less than the
        classifier's ``epsilon``; RRWithPrior runs with the difference.
    preprocessor : transformer, default=None
        Applied to the public features before k-means (a clone is fitted on
        the training features, e.g. the ``ColumnTransformer`` that one-hot
        encodes the string columns of a DataFrame and scales the numeric
        ones). k-means needs finite numeric features: without a preprocessor,
        ``X`` must already be such an array, and anything else (a DataFrame
        with string columns) is refused with a ``ValueError`` before any budget
        is charged. The classifier's base estimator does not lend its own
        preprocessing: it is fitted only after the prior is built.

    See Also
    --------
    cluster_assignment : the label-independent k-means groups.
    sklearn_labeldp.mechanisms.noisy_label_histogram : the histogram release.

    References
    ----------
    .. [1] B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep learning
       with label differential privacy. NeurIPS 2021, Alg. 4.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_labeldp.classifiers import RRWithPriorClassifier
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> from sklearn_labeldp.priors import ClusterPrior
    >>> X, y = make_circle_gaussians(2000, 4, sigma=0.3, random_state=0)
    >>> clf = RRWithPriorClassifier(LogisticRegression(), epsilon=2.0, classes=[0, 1, 2, 3],
    ...                             prior=ClusterPrior(n_clusters=8, epsilon=1.0),
    ...                             random_state=0).fit(X, y)
    >>> clf.epsilon_, clf.cluster_prior_.shape
    (2.0, (8, 4))
    >>> clf.get_params()["prior__n_clusters"]
    8
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(self, *, n_clusters=10, epsilon, preprocessor=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.preprocessor = preprocessor

    def cluster_features(self, X):
        """The public features k-means clusters, and the fitted preprocessor.

        Reads no label, so the classifier calls it while planning its fit,
        before any charge: a preprocessor that fails, or features that are not
        finite numbers, cost nothing.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            The public training features, as given to the classifier.

        Returns
        -------
        features : {ndarray, sparse matrix} of shape (n_samples, n_features_out)
            Finite floats.
        preprocessor : transformer or None
            The fitted clone of ``preprocessor``, or None without one.

        Raises
        ------
        ValueError or TypeError
            When the features (after ``preprocessor``) are not finite numbers
            (``TypeError`` for objects that cannot be read as numbers at all).
        """
        preprocessor = None
        if self.preprocessor is not None:
            preprocessor = clone(self.preprocessor)
            X = preprocessor.fit_transform(X)
        try:
            features = check_array(
                X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32]
            )
        except (TypeError, ValueError) as exc:
            given = "after ClusterPrior(preprocessor=...)" if preprocessor else "as given"
            # A TypeError (an object that is no number at all) stays one, as in k-means.
            raise (TypeError if isinstance(exc, TypeError) else ValueError)(
                "ClusterPrior: k-means clusters finite numeric features, and the features "
                f"{given} are not ({exc}). Pass ClusterPrior(preprocessor=...), e.g. a "
                "ColumnTransformer that one-hot encodes the string columns and scales the "
                "numeric ones; no budget was spent."
            ) from exc
        return features, preprocessor


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
    n_clusters = check_int(n_clusters, "n_clusters", minimum=1)
    n_samples = _num_samples(X)
    if n_clusters > n_samples:
        raise ValueError(
            f"n_clusters={n_clusters} must lie in [1, n_samples]; got n_samples={n_samples}. "
            "Use fewer clusters or more data."
        )
    clusterer = KMeans(n_clusters=n_clusters, n_init=n_init, random_state=random_state)
    groups = clusterer.fit_predict(X).astype("int64")
    return clusterer, groups
