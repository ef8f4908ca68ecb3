"""Noisy per-group label histograms for priors (Ghazi et al., 2021, Algorithm 4)."""

import numpy as np

from ..utils import check_generator, check_int, check_positive
from ..utils._validation import check_codes, check_label_codes, check_scores

__all__ = ["histogram_prior", "noisy_label_histogram"]


def _check_groups(groups, n_samples, n_groups):
    n_groups = check_int(n_groups, "n_groups", minimum=1)
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n_samples:
        raise ValueError(
            f"groups must have shape ({n_samples},), one group per label; got {groups.shape}."
        )
    return check_codes(groups, n_groups, name="groups", what="group"), n_groups


def noisy_label_histogram(y, groups, *, epsilon, n_classes, n_groups, random_state=None):
    """Per-group label counts plus discrete Laplace noise.

    Counts ``h[c, k]`` = number of examples of group ``c`` with label ``k``, then
    adds iid noise with pmf ``P(z) = (1 - e^-a) / (1 + e^-a) e^(-a |z|)``,
    ``a = eps / 2``, to every cell. Changing one label moves one unit between
    two cells of one group (L1 sensitivity 2), so the release is eps-label-DP
    when the groups do not depend on the labels (e.g. k-means on public
    features).

    The noise is drawn as the difference of two iid geometric variables with
    success probability ``1 - e^-a`` (``2 * n_groups * n_classes`` draws).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``.
    groups : array-like of shape (n_samples,)
        Integer group codes in ``[0, n_groups)``; must not depend on ``y``.
    epsilon : float
        Privacy parameter of the histogram release, finite and > 0.
    n_classes : int
        Number of classes K >= 2.
    n_groups : int
        Number of groups C >= 1.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray of shape (n_groups, n_classes), int64
        The noisy counts; they can be negative. Callers clip them at 0 and
        normalise each row, e.g. with :func:`histogram_prior`.

    References
    ----------
    .. [1] B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep learning
       with label differential privacy. NeurIPS 2021, Algorithm 4.
    .. [2] A. Ghosh, T. Roughgarden, M. Sundararajan. Universally
       utility-maximizing privacy mechanisms. STOC 2009 (geometric mechanism).

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import noisy_label_histogram
    >>> noisy_label_histogram([0, 1, 1, 2], [0, 0, 1, 1], epsilon=100.0, n_classes=3,
    ...                       n_groups=2, random_state=0)
    array([[1, 1, 0],
           [0, 1, 1]])
    """
    epsilon = check_positive(epsilon, "epsilon")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    y = check_label_codes(y, n_classes)
    groups, n_groups = _check_groups(groups, y.shape[0], n_groups)
    rng = check_generator(random_state)
    counts = np.bincount(groups * n_classes + y, minlength=n_groups * n_classes)
    counts = counts.reshape(n_groups, n_classes).astype(np.int64)
    # numpy's geometric counts trials (support 1, 2, ...); the +1 shifts cancel
    # in the difference, which is discrete Laplace with ratio e^-a.
    success = -np.expm1(-epsilon / 2.0)
    draws = rng.geometric(success, size=(2, n_groups, n_classes))
    return counts + (draws[0] - draws[1])


def histogram_prior(noisy_counts):
    """Per-group priors from noisy counts: ``max(h, 0)`` normalised per row.

    A row with no positive count becomes the uniform distribution.

    Parameters
    ----------
    noisy_counts : array-like of shape (n_groups, n_classes)
        E.g. the output of :func:`noisy_label_histogram`.

    Returns
    -------
    ndarray of shape (n_groups, n_classes), float64
        Rows on the probability simplex.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import histogram_prior
    >>> histogram_prior([[3, -1, 1], [-2, 0, -5]])
    array([[0.75      , 0.        , 0.25      ],
           [0.33333333, 0.33333333, 0.33333333]])
    """
    h = check_scores(noisy_counts, "noisy_counts", rows="n_groups")
    return normalise_rows(np.maximum(h, 0.0))


def normalise_rows(weights):
    """Divide each row of nonnegative ``weights`` by its sum, in place.

    A row that sums to 0 says nothing about the class and becomes the
    uniform distribution.
    """
    total = weights.sum(axis=1, keepdims=True)
    empty = total[:, 0] == 0
    weights[empty] = 1.0
    total[empty] = weights.shape[1]
    weights /= total
    return weights
