"""RRTop-k and RRWithPrior (Ghazi et al., NeurIPS 2021, Algorithms 1 and 2).

Everything is vectorised over examples and processed in row chunks so the
(rows, K) temporaries stay in cache; the only Python loop is over chunks.
"""

import numpy as np

from ..utils import check_generator
from ._randomized_response import _keep_probability
from ._validation import (
    CHUNK_ELEMENTS,
    check_epsilon,
    check_k,
    check_label_codes,
    check_prior,
)

__all__ = [
    "optimal_top_k",
    "rr_top_k",
    "rr_top_k_distribution",
    "rr_with_prior",
    "rr_with_prior_distribution",
    "top_k_mask",
]


def _row_chunks(n_samples, n_classes):
    step = max(1, CHUNK_ELEMENTS // n_classes)
    for start in range(0, n_samples, step):
        yield slice(start, min(start + step, n_samples))


def _sorted_descending(prior):
    return np.sort(prior, axis=1)[:, ::-1]


def _optimal_k_from_sorted(sorted_desc, epsilon):
    # w_k = (sum of the k largest p) / (1 + (k - 1) e^-eps), Alg. 2 of seed 000.
    n_classes = sorted_desc.shape[1]
    weights = np.cumsum(sorted_desc, axis=1)
    weights /= 1.0 + np.arange(n_classes) * np.exp(-epsilon)
    return np.argmax(weights, axis=1) + 1  # first maximiser: the smallest k


def _top_k_mask_from_sorted(prior, sorted_desc, k):
    rows = np.arange(prior.shape[0])
    threshold = sorted_desc[rows, k - 1][:, None]  # the k-th largest value
    mask = prior >= threshold
    # Rows where several labels tie at the threshold keep the lowest indices.
    tied = np.flatnonzero(mask.sum(axis=1) > k)
    if tied.size:
        sub, t = prior[tied], threshold[tied]
        above = sub > t
        at = sub == t
        room = (k[tied] - above.sum(axis=1))[:, None]
        mask[tied] = above | (at & (np.cumsum(at, axis=1) <= room))
    return mask


def _sample_top_k(y, mask, k, epsilon, rng):
    """Draw RRTop-k outputs given each row's top-k set ``mask``."""
    n_samples, n_classes = mask.shape
    rows = np.arange(n_samples)
    y_in = mask[rows, y]
    keep = y_in & (rng.random(n_samples) < _keep_probability(epsilon, k))
    out = y.copy()
    todo = np.flatnonzero(~keep)
    if todo.size:
        # Uniform over the top-k set minus y (y in it) or the whole set (y not).
        candidates = mask[todo]
        inside = y_in[todo]
        candidates[np.flatnonzero(inside), y[todo][inside]] = False
        pick = rng.integers(k[todo] - inside)
        count_dtype = np.int16 if n_classes < np.iinfo(np.int16).max else np.int32
        rank = np.cumsum(candidates, axis=1, dtype=count_dtype)
        out[todo] = (rank <= pick[:, None]).sum(axis=1)
    return out


def top_k_mask(prior, k):
    """The label set ``Y_k`` of RRTop-k for each row.

    ``Y_k`` holds the ``k`` labels with the largest prior; ties are broken by
    label index (lower first), never by the true label.

    Parameters
    ----------
    prior : array-like of shape (n_samples, n_classes)
        Nonnegative, each row with a positive entry (rows need not sum to one).
    k : int or array-like of shape (n_samples,)
        Set size per row, in ``[1, n_classes]``.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), bool

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import top_k_mask
    >>> top_k_mask([[0.2, 0.5, 0.3], [0.4, 0.2, 0.4]], k=2).astype(int)
    array([[0, 1, 1],
           [1, 0, 1]])
    """
    prior = check_prior(prior)
    k = check_k(k, *prior.shape)
    mask = np.empty(prior.shape, dtype=bool)
    for rows in _row_chunks(*prior.shape):
        sub = prior[rows]
        mask[rows] = _top_k_mask_from_sorted(sub, _sorted_descending(sub), k[rows])
    return mask


def optimal_top_k(prior, *, epsilon):
    """The ``k*`` that RRWithPrior uses for each row (seed 000, Alg. 2).

    ``k* = argmax_k w_k`` with ``w_k = (sum of the k largest p) / (1 + (k-1) e^-eps)``:
    the k maximising the probability that RRTop-k returns the true label when
    that label is drawn from the prior. Exact ties go to the smallest k. ``k*``
    depends on the prior only, never on the label.

    The public reference code (google-research/label-dp) scores ``k`` with the
    denominator of ``k + 1``; this function follows the paper.

    Parameters
    ----------
    prior : array-like of shape (n_samples, n_classes)
    epsilon : float

    Returns
    -------
    ndarray of shape (n_samples,), int64
        Values in ``[1, n_classes]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import optimal_top_k
    >>> optimal_top_k([[0.25, 0.25, 0.25, 0.25], [0.7, 0.3, 0.0, 0.0]],
    ...               epsilon=np.log(2))
    array([4, 1])
    """
    epsilon = check_epsilon(epsilon)
    prior = check_prior(prior)
    k = np.empty(prior.shape[0], dtype=np.int64)
    for rows in _row_chunks(*prior.shape):
        k[rows] = _optimal_k_from_sorted(_sorted_descending(prior[rows]), epsilon)
    return k


def rr_top_k(y, prior, *, k, epsilon, random_state=None):
    """RRTop-k (seed 000, Alg. 1): randomized response inside the prior's top k.

    With ``Y_k`` the ``k`` most likely labels under the prior (see
    :func:`top_k_mask`): if ``y`` is in ``Y_k`` the output is ``y`` with
    probability ``e^eps / (e^eps + k - 1)`` and each other label of ``Y_k`` with
    probability ``1 / (e^eps + k - 1)``; otherwise it is uniform over ``Y_k``.
    Every output probability lies in ``[1/(e^eps+k-1), e^eps/(e^eps+k-1)]``, so
    the release is eps-label-DP as long as ``k`` does not depend on ``y``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``.
    prior : array-like of shape (n_samples, n_classes)
        Public prior per example; nonnegative, rows with a positive entry.
    k : int or array-like of shape (n_samples,)
    epsilon : float
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    ndarray of shape (n_samples,), int64

    See Also
    --------
    rr_top_k_distribution : the exact output law.

    References
    ----------
    .. [1] B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep learning
       with label differential privacy. NeurIPS 2021.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import rr_top_k
    >>> rr_top_k([2, 0], [[0.1, 0.2, 0.7], [0.1, 0.2, 0.7]], k=1, epsilon=1.0,
    ...          random_state=0)
    array([2, 2])
    """
    epsilon = check_epsilon(epsilon)
    prior = check_prior(prior)
    y = check_label_codes(y, prior.shape[1])
    if y.shape[0] != prior.shape[0]:
        raise ValueError(f"prior has {prior.shape[0]} rows but y has {y.shape[0]} labels.")
    k = check_k(k, *prior.shape)
    rng = check_generator(random_state)
    out = np.empty_like(y)
    for rows in _row_chunks(*prior.shape):
        sub = prior[rows]
        mask = _top_k_mask_from_sorted(sub, _sorted_descending(sub), k[rows])
        out[rows] = _sample_top_k(y[rows], mask, k[rows], epsilon, rng)
    return out


def rr_with_prior(y, prior, *, epsilon, random_state=None, return_k=False):
    """RRWithPrior (seed 000, Alg. 2): RRTop-k with the prior's optimal ``k*``.

    Because ``k*`` (:func:`optimal_top_k`) is a function of the public prior
    only, the release is eps-label-DP. With a uniform prior ``k* = K`` and this
    is plain :func:`randomized_response`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``.
    prior : array-like of shape (n_samples, n_classes)
        Public prior per example; nonnegative, rows with a positive entry
        (rows need not be normalised: only ratios matter).
    epsilon : float
    random_state : None, int or numpy.random.Generator, default=None
    return_k : bool, default=False
        Also return ``k*`` per example (public: it depends on the prior only).

    Returns
    -------
    out : ndarray of shape (n_samples,), int64
    k : ndarray of shape (n_samples,), int64
        Only when ``return_k=True``.

    See Also
    --------
    rr_with_prior_distribution : the exact output law.

    References
    ----------
    .. [1] B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep learning
       with label differential privacy. NeurIPS 2021.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import rr_with_prior
    >>> out, k = rr_with_prior([0, 1], [[0.9, 0.1, 0.0], [1, 1, 1]], epsilon=1.0,
    ...                        random_state=0, return_k=True)
    >>> k
    array([1, 3])
    """
    epsilon = check_epsilon(epsilon)
    prior = check_prior(prior)
    y = check_label_codes(y, prior.shape[1])
    if y.shape[0] != prior.shape[0]:
        raise ValueError(f"prior has {prior.shape[0]} rows but y has {y.shape[0]} labels.")
    rng = check_generator(random_state)
    out = np.empty_like(y)
    k = np.empty_like(y)
    for rows in _row_chunks(*prior.shape):
        sub = prior[rows]
        sorted_desc = _sorted_descending(sub)
        k[rows] = _optimal_k_from_sorted(sorted_desc, epsilon)
        mask = _top_k_mask_from_sorted(sub, sorted_desc, k[rows])
        out[rows] = _sample_top_k(y[rows], mask, k[rows], epsilon, rng)
    return (out, k) if return_k else out


def rr_top_k_distribution(prior, *, k, epsilon):
    """Exact output law of :func:`rr_top_k`.

    Parameters
    ----------
    prior : array-like of shape (n_samples, n_classes)
    k : int or array-like of shape (n_samples,)
    epsilon : float

    Returns
    -------
    ndarray of shape (n_samples, n_classes, n_classes)
        Entry ``[i, y, out]`` is ``P(out | y, prior_i)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import rr_top_k_distribution
    >>> P = rr_top_k_distribution([[0.5, 0.3, 0.2]], k=2, epsilon=np.log(3))
    >>> P[0]
    array([[0.75, 0.25, 0.  ],
           [0.25, 0.75, 0.  ],
           [0.5 , 0.5 , 0.  ]])
    """
    epsilon = check_epsilon(epsilon)
    prior = check_prior(prior)
    k = check_k(k, *prior.shape)
    mask = top_k_mask(prior, k)
    keep = _keep_probability(epsilon, k)[:, None, None]
    other = np.exp(-epsilon) * keep
    y_in = mask[:, :, None]
    dist = np.where(y_in, other, 1.0 / k[:, None, None]) * mask[:, None, :]
    diagonal = np.einsum("iyy->iy", dist)  # a writable view of P(out = y | y)
    diagonal += np.where(mask, keep[:, :, 0] - other[:, :, 0], 0.0)
    return dist


def rr_with_prior_distribution(prior, *, epsilon):
    """Exact output law of :func:`rr_with_prior`.

    Parameters
    ----------
    prior : array-like of shape (n_samples, n_classes)
    epsilon : float

    Returns
    -------
    ndarray of shape (n_samples, n_classes, n_classes)
        Entry ``[i, y, out]`` is ``P(out | y, prior_i)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import rr_with_prior_distribution
    >>> P = rr_with_prior_distribution([[1, 1]], epsilon=np.log(3))
    >>> P[0]
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    return rr_top_k_distribution(prior, k=optimal_top_k(prior, epsilon=epsilon), epsilon=epsilon)
