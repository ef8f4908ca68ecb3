"""RRTop-k and RRWithPrior (Ghazi et al., 2021, Algorithm 1 and Algorithm 2).

Everything is vectorised over examples and processed in row chunks so the
(rows, K) temporaries stay in cache; the only Python loops are over chunks
(and, for a few steps, over short column blocks).

A sampling call makes two passes. The first sorts each chunk of the prior,
checks its values from the sorted extremes and records per row ``k``, the
k-th largest prior value and whether it ties; the second builds each chunk's
top-k set and draws the outputs. No randomness is drawn before every row has
been checked, so a bad prior never advances the caller's generator. Beyond
the prior itself, memory is O(n_samples) plus one chunk; without a prior
(``prior=None``) RRWithPrior is randomized response and needs O(n_samples).
"""

import numpy as np

from ..utils import check_generator, check_int, check_positive, is_dask
from ..utils._validation import (
    CHUNK_ELEMENTS,
    check_k,
    check_label_codes,
    check_negated_sorted_prior,
    check_prior_shape,
)
from ._bit_select import nth_member
from ._buffers import WorkBuffers, label_positions
from ._dask import map_mechanism
from ._randomized_response import _draw_randomized_response, _keep_probability

__all__ = [
    "optimal_top_k",
    "rr_top_k",
    "rr_top_k_distribution",
    "rr_with_prior",
    "rr_with_prior_distribution",
    "top_k_mask",
]

# k* is first looked for among the _K_PREFIX largest prior values of a row, then
# among 4x as many for the rows whose maximum sits at the end of that prefix,
# and so on. This finds the argmax of a scan of all K columns because w_k is
# unimodal in k: w_{k+1} is a weighted mean of w_k and p_(k+1) e^eps, so once w
# stops rising (p_(k+1) <= e^-eps w_k) every later, smaller p keeps it falling.
_K_PREFIX = 8

_LARGEST_SAFE_VALUE = 2.0**1000  # prior values whose K-term sums cannot overflow

# Ties at the threshold are broken on the tied rows alone when fewer than one
# row in _FEW_TIED ties (their temporaries then stay small), on the whole
# chunk in reused arrays otherwise.
_FEW_TIED = 32


def _row_chunks(n_samples, n_classes):
    step = max(1, CHUNK_ELEMENTS // n_classes)
    for start in range(0, n_samples, step):
        yield slice(start, min(start + step, n_samples))


def _optimal_k_into(k, negated_sorted, denominator, buffers):
    """Write the ``k*`` of each row of a negated sorted prior chunk into ``k``.

    ``denominator[j] = 1 + j e^-eps``. w_k = (sum of the k largest p) /
    (1 + (k - 1) e^-eps), Alg. 2 of Ghazi et al., is computed negated: the
    first minimiser of -w_k is the first maximiser of w_k (exact ties go to
    the smallest k). Sums are accumulated left to right from column 0, so
    they are bit-for-bit those of one cumulative sum over all K.
    """
    n_rows, n_classes = negated_sorted.shape
    uniform = np.equal(negated_sorted[:, 0], negated_sorted[:, -1],
                       out=buffers.get("uniform", n_rows, bool))
    if -negated_sorted[:, 0].min() > _LARGEST_SAFE_VALUE / n_classes:
        # Prefix sums could overflow to inf. Scaling each row by a power of two
        # is exact, so every comparison below keeps its outcome.
        exponent = np.frexp(negated_sorted[:, :1])[1]
        negated_sorted = np.ldexp(negated_sorted, -exponent)
    width = n_classes if n_classes <= 2 * _K_PREFIX else _K_PREFIX
    # The first columns, for all rows, one column at a time: vector operations
    # over rows beat row-wise cumsum/argmin on such short rows.
    partial = buffers.get("partial", n_rows)
    np.copyto(partial, negated_sorted[:, 0])  # -S_1 = -w_1
    best = buffers.get("best", n_rows)
    np.copyto(best, partial)
    k.fill(1)
    weight = buffers.get("weight", n_rows)
    better = buffers.get("better", n_rows, bool)
    for j in range(1, width):
        partial += negated_sorted[:, j]
        np.divide(partial, denominator[j], out=weight)
        np.less(weight, best, out=better)
        np.putmask(k, better, j + 1)
        np.minimum(best, weight, out=best)
    if width < n_classes:
        # K > 16, so a chunk has at most CHUNK_ELEMENTS / 17 rows, and only the
        # rows whose maximum ends the prefix get here: small temporaries.
        rows = np.flatnonzero(k == width)
        while width < n_classes and rows.size:
            width = min(4 * width, n_classes)
            weights = np.cumsum(negated_sorted[rows, :width], axis=1)
            weights /= denominator[:width]
            k[rows] = np.argmin(weights, axis=1) + 1
            rows = rows[k[rows] == width]
    # A uniform row has w_k rising in k for every eps > 0, so k* = K (RR). For
    # eps below about 1e-10 the rise drops under float64 resolution; pin it.
    np.putmask(k, uniform, n_classes)


def _scan_prior(prior, k, epsilon, buffers=None):
    """First pass: check ``prior`` and locate each row's top-k set.

    Parameters
    ----------
    prior : ndarray of shape (n_samples, n_classes), float64
        Shape already checked; values are checked here, chunk by chunk.
    k : ndarray of shape (n_samples,) or None
        ``None`` computes RRWithPrior's ``k*`` from ``epsilon``.
    epsilon : float or None
    buffers : WorkBuffers, default=None
        The chunks' work arrays (see :mod:`._buffers`); fresh ones by default.

    Returns
    -------
    k : ndarray of shape (n_samples,), int64
    threshold : ndarray of shape (n_samples,), float64
        The k-th largest prior value of each row.
    tied : ndarray of shape (n_samples,), bool
        Whether the (k+1)-th largest value equals it, i.e. more than ``k``
        labels reach the threshold and ties must be broken by label index.
    """
    buffers = WorkBuffers() if buffers is None else buffers
    n_samples, n_classes = prior.shape
    find_k = k is None
    if find_k:
        k = np.empty(n_samples, dtype=np.int64)
        denominator = 1.0 + np.arange(n_classes) * np.exp(-epsilon)
    threshold = np.empty(n_samples, dtype=np.float64)
    tied = np.empty(n_samples, dtype=bool)
    for rows in _row_chunks(n_samples, n_classes):
        n_rows = rows.stop - rows.start
        # np.sort(-chunk): the prior in descending order, negated. Negation is
        # exact, so column j holds minus the (j+1)-th largest value and
        # cumulative sums of it are exactly minus those of the descending
        # values; unlike a reversed view of an ascending sort, prefixes are
        # leading columns.
        negated = np.negative(prior[rows], out=buffers.get("negated", (n_rows, n_classes)))
        negated.sort(axis=1)
        check_negated_sorted_prior(negated)
        kr = k[rows]
        if find_k:
            _optimal_k_into(kr, negated, denominator, buffers)
        # negated[i, kr[i] - 1] and negated[i, min(kr[i], K - 1)], by flat index.
        offsets = buffers.row_offsets(n_rows, n_classes)
        index = buffers.get("index", n_rows, np.int64)
        np.add(offsets, kr, out=index)
        index -= 1
        minus_threshold = buffers.get("minus_threshold", n_rows)
        np.take(negated.reshape(-1), index, out=minus_threshold, mode="clip")
        np.negative(minus_threshold, out=threshold[rows])
        np.minimum(kr, n_classes - 1, out=index)
        index += offsets
        following = buffers.get("following", n_rows)
        np.take(negated.reshape(-1), index, out=following, mode="clip")
        tied_rows = np.less(kr, n_classes, out=tied[rows])
        tied_rows &= np.equal(following, minus_threshold,
                              out=buffers.get("at_threshold", n_rows, bool))
    return k, threshold, tied


def _break_ties(mask, chunk, k, threshold, tied, buffers):
    """Keep only the lowest-index labels at the threshold in the ``tied`` rows of ``mask``.

    More than ``k`` labels of such a row reach the threshold: those above it
    stay, and of those at it the first ``k - #above`` in label order.
    """
    n_tied = np.count_nonzero(tied)
    if n_tied * _FEW_TIED < tied.shape[0]:
        # Few tied rows (continuous priors have none): work on them alone, in
        # small temporaries.
        rows = np.flatnonzero(tied)
        sub, t = chunk[rows], threshold[rows, None]
        above = sub > t
        at = sub == t
        room = (k[rows] - above.sum(axis=1))[:, None]
        mask[rows] = above | (at & (np.cumsum(at, axis=1) <= room))
        return
    # Many (a prior of vote counts): the same on every row, in reused arrays.
    t = threshold[:, None]
    above = np.greater(chunk, t, out=buffers.get("above", chunk.shape, bool))
    at = np.equal(chunk, t, out=buffers.get("at", chunk.shape, bool))
    room = np.sum(above, axis=1, out=buffers.get("room", chunk.shape[0], np.int64))
    np.subtract(k, room, out=room)
    rank = np.cumsum(at, axis=1, out=buffers.get("rank", chunk.shape, np.int64))
    kept = np.less_equal(rank, room[:, None], out=buffers.get("kept", chunk.shape, bool))
    kept &= at
    kept |= above
    np.copyto(mask, kept, where=tied[:, None])


def _top_k_mask_chunk(chunk, k, threshold, tied, buffers):
    """The top-k sets of a chunk of rows, given :func:`_scan_prior`'s results.

    Returns one of ``buffers``' arrays.
    """
    mask = np.greater_equal(chunk, threshold[:, None], out=buffers.get("mask", chunk.shape, bool))
    if tied.any():
        _break_ties(mask, chunk, k, threshold, tied, buffers)
    return mask


def _sample_top_k(out, y, mask, k, epsilon, rng, buffers):
    """Write RRTop-k outputs given each row's top-k set ``mask`` into ``out``."""
    n_rows, n_classes = mask.shape
    y_in = np.take(mask.reshape(-1), label_positions(buffers, y, n_classes),
                   out=buffers.get("y_in", n_rows, bool), mode="clip")
    # Two uniforms per row, whatever the labels: the generator's state after
    # the call must not depend on y (it is visible to later code).
    coins = rng.random(out=buffers.get("coins", (2, n_rows)))
    keep = np.less(coins[0], _keep_probability(epsilon, k, out=buffers.get("keep_p", n_rows)),
                   out=buffers.get("keep", n_rows, bool))
    keep &= y_in
    np.copyto(out, y)
    if keep.all():
        return
    # Uniform over the top-k set minus y (y in it) or the whole set (y not):
    # the pick-th label, in index order, of the set with y's bit cleared.
    # floor(U m) < m for every double U < 1 and integer m >= 1. It is computed
    # for every row (a kept row asks for the first member of its whole set,
    # which exists, and the answer is dropped): selecting the other rows
    # first would cost a fresh array per chunk.
    size = np.subtract(k, y_in, out=buffers.get("size", n_rows, np.int64))
    pick = np.multiply(coins[1], size, out=coins[1])
    n = buffers.get("pick", n_rows, np.int64)
    np.copyto(n, pick, casting="unsafe")  # truncation, as astype(np.int64)
    exclude = buffers.get("exclude", n_rows, np.int64)
    exclude.fill(-1)
    np.copyto(exclude, y, where=y_in)
    np.putmask(n, keep, 0)
    np.putmask(exclude, keep, -1)
    np.copyto(out, nth_member(mask, n, exclude, buffers), where=np.invert(keep, out=keep))


def _sample(y, prior, k, threshold, tied, epsilon, rng, buffers=None):
    """Second pass: draw RRTop-k outputs chunk by chunk."""
    buffers = WorkBuffers() if buffers is None else buffers
    out = np.empty(y.shape, dtype=np.int64)
    for rows in _row_chunks(*prior.shape):
        mask = _top_k_mask_chunk(prior[rows], k[rows], threshold[rows], tied[rows], buffers)
        _sample_top_k(out[rows], y[rows], mask, k[rows], epsilon, rng, buffers)
    return out


def _check_y_prior(y, prior):
    y = check_label_codes(y, prior.shape[1])
    if y.shape[0] != prior.shape[0]:
        raise ValueError(f"prior has {prior.shape[0]} rows but y has {y.shape[0]} labels.")
    return y


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
    prior = check_prior_shape(prior)
    k = check_k(k, *prior.shape)
    buffers = WorkBuffers()
    k, threshold, tied = _scan_prior(prior, k, None, buffers)
    mask = np.empty(prior.shape, dtype=bool)
    for rows in _row_chunks(*prior.shape):
        mask[rows] = _top_k_mask_chunk(prior[rows], k[rows], threshold[rows], tied[rows], buffers)
    return mask


def optimal_top_k(prior, *, epsilon):
    """The ``k*`` that RRWithPrior uses for each row (Ghazi et al. 2021, Algorithm 2).

    ``k* = argmax_k w_k`` with ``w_k = (sum of the k largest p) / (1 + (k-1) e^-eps)``:
    the k maximising the probability that RRTop-k returns the true label when
    that label is drawn from the prior. Exact ties go to the smallest k. ``k*``
    depends on the prior only, never on the label. A uniform row gets
    ``k* = K`` (plain randomized response) for every eps, including eps so
    small that the rise of ``w_k`` is below float64 resolution.

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
    epsilon = check_positive(epsilon, "epsilon")
    prior = check_prior_shape(prior)
    return _scan_prior(prior, None, epsilon)[0]


def rr_top_k(y, prior, *, k, epsilon, random_state=None):
    """RRTop-k (Ghazi et al. 2021, Algorithm 1): randomized response inside the prior's top k.

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
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

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
    epsilon = check_positive(epsilon, "epsilon")
    prior = check_prior_shape(prior)
    y = _check_y_prior(y, prior)
    k = check_k(k, *prior.shape)
    buffers = WorkBuffers()
    k, threshold, tied = _scan_prior(prior, k, None, buffers)
    rng = check_generator(random_state)
    return _sample(y, prior, k, threshold, tied, epsilon, rng, buffers)


def rr_with_prior(y, prior=None, *, epsilon, n_classes=None, random_state=None,
                  return_k=False):
    """RRWithPrior (Ghazi et al. 2021, Algorithm 2): RRTop-k with the prior's optimal ``k*``.

    Because ``k*`` (:func:`optimal_top_k`) is a function of the public prior
    only, the release is eps-label-DP. With a uniform prior ``k* = K`` and this
    is plain :func:`randomized_response`. ``prior=None`` stands for the
    uniform prior without forming it: it runs :func:`randomized_response`
    (the same outputs from the same generator), in O(n_samples) memory
    whatever ``n_classes``.

    Dask arrays are accepted for ``y`` and ``prior``: the output is then a
    lazy dask array chunked like ``y``, one task per block of rows, each
    block drawn from its own generator spawned from ``random_state`` (an int
    seed replays the output for the same chunking only). A dask ``prior``
    must be chunked like ``y`` along rows; a numpy one is split like ``y``.
    Labels and prior values are checked block by block when it is computed.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``.
    prior : array-like, dask.array.Array of shape (n_samples, n_classes) or None, default=None
        Public prior per example; nonnegative, rows with a positive entry
        (rows need not be normalised: only ratios matter). ``None`` is the
        uniform prior (no prior knowledge).
    epsilon : float
    n_classes : int, default=None
        Number of classes K >= 2. Required when ``prior`` is None; otherwise
        optional and, if given, must equal ``prior.shape[1]``.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).
    return_k : bool, default=False
        Also return ``k*`` per example (public: it depends on the prior only).

    Returns
    -------
    out : ndarray or dask.array.Array of shape (n_samples,), int64
        A dask array when ``y`` or ``prior`` is one.
    k : ndarray or dask.array.Array of shape (n_samples,), int64
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
    >>> from sklearn_labeldp.mechanisms import randomized_response, rr_with_prior
    >>> out, k = rr_with_prior([0, 1], [[0.9, 0.1, 0.0], [1, 1, 1]], epsilon=1.0,
    ...                        random_state=0, return_k=True)
    >>> k
    array([1, 3])

    Without a prior it is randomized response, for any number of classes:

    >>> y = [0, 99_999, 5]
    >>> out = rr_with_prior(y, epsilon=1.0, n_classes=100_000, random_state=0)
    >>> bool((out == randomized_response(y, epsilon=1.0, n_classes=100_000,
    ...                                   random_state=0)).all())
    True
    """
    if is_dask(y, prior):
        return map_mechanism(rr_with_prior, y, prior, random_state=random_state,
                             epsilon=epsilon, n_classes=n_classes, return_k=return_k)
    epsilon = check_positive(epsilon, "epsilon")
    if prior is None:
        if n_classes is None:
            raise ValueError("n_classes is required when prior is None.")
        n_classes = check_int(n_classes, "n_classes", minimum=2)
        y = check_label_codes(y, n_classes)
        rng = check_generator(random_state)
        out = _draw_randomized_response(y, n_classes, epsilon, rng)
        return (out, np.full(y.shape[0], n_classes, dtype=np.int64)) if return_k else out
    prior = check_prior_shape(prior)
    if n_classes is not None and check_int(n_classes, "n_classes", minimum=2) != prior.shape[1]:
        raise ValueError(
            f"n_classes={n_classes} but prior has {prior.shape[1]} columns (classes)."
        )
    y = _check_y_prior(y, prior)
    buffers = WorkBuffers()
    k, threshold, tied = _scan_prior(prior, None, epsilon, buffers)
    rng = check_generator(random_state)
    out = _sample(y, prior, k, threshold, tied, epsilon, rng, buffers)
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
    epsilon = check_positive(epsilon, "epsilon")
    prior = check_prior_shape(prior)
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
