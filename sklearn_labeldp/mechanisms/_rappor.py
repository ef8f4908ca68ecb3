"""Vector approximation: RAPPOR unary encoding of the label (Zhao et al., 2024)."""

import math

import numpy as np
import scipy.sparse as sp

from ..utils import check_generator, check_int, check_positive, is_dask
from ..utils._validation import CHUNK_ELEMENTS, check_label_codes, check_scores
from ._buffers import WorkBuffers, label_positions
from ._dask import map_mechanism
from ._histogram import normalise_rows

__all__ = ["debias_rappor", "rappor", "rappor_distribution", "rappor_probabilities"]

# Trials per chunk of rows are capped so that a running sum of clipped gaps
# (each at most this + 1; about CHUNK_ELEMENTS of them, or K q- when one row
# alone expects more ones) stays below 2**63 for any K below 2**31.
_MAX_CHUNK_TRIALS = 1 << 40


def rappor_probabilities(epsilon):
    """The law of one RAPPOR bit: ``(q+, q-)``, the probabilities that it is 1.

    ``q+ = e^(eps/2) / (1 + e^(eps/2))`` for the bit of the true label and
    ``q- = 1 / (1 + e^(eps/2))`` for every other bit (Erlingsson et al.
    2014), written with ``e^(-eps/2)`` so that they never overflow: every
    function of the library that needs them calls this one.

    Parameters
    ----------
    epsilon : float
        Label-DP epsilon of the bit vector (each bit flips with ``eps / 2``).

    Returns
    -------
    q_plus, q_minus : float

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import rappor_probabilities
    >>> [round(q, 4) for q in rappor_probabilities(2.0)]
    [0.7311, 0.2689]
    >>> rappor_probabilities(2000.0)
    (1.0, 0.0)
    """
    epsilon = check_positive(epsilon, "epsilon")
    t = np.exp(-epsilon / 2.0)
    return float(1.0 / (1.0 + t)), float(t / (1.0 + t))


def _bernoulli_positions(rng, size, p, buffers=None):
    """Sorted positions of the successes among ``size`` iid Bernoulli(``p``) trials.

    The gaps between successes are geometric, drawn by inversion of
    exponentials: ``P(floor(E / r) >= m) = e^(-m r) = (1 - p)^m`` with
    ``r = -log(1 - p)``. The work is proportional to the number of successes,
    not of trials, and how much of the generator is used depends on ``size``,
    ``p`` and the draws only.

    The draws and positions are written into ``buffers`` (fresh ones by
    default), so that the chunks of one call reuse their arrays; the result
    may be a view of them, valid until ``buffers`` is used again.
    """
    if p == 0.0 or size == 0:  # q- underflows to 0 beyond eps of about 1490
        return np.empty(0, dtype=np.int64)
    buffers = WorkBuffers() if buffers is None else buffers
    rate = -math.log1p(-p)
    found = []
    last = -1  # position of the last success found
    while True:
        expected = (size - 1 - last) * p
        n_draws = int(expected + 6.0 * math.sqrt(expected)) + 16
        gaps = rng.standard_exponential(out=buffers.get("gaps", n_draws))
        with np.errstate(over="ignore"):  # a subnormal p: inf, clipped next
            gaps /= rate
        # Past `size` every gap length is the same to us: clipping keeps the
        # float-to-int cast defined and the running sum from overflowing.
        np.minimum(gaps, size, out=gaps)
        positions = buffers.get("positions", n_draws, np.int64)
        np.copyto(positions, gaps, casting="unsafe")  # truncation, as astype(np.int64)
        positions += 1
        np.cumsum(positions, out=positions)
        positions += last
        if positions[-1] >= size:
            found.append(positions[: np.searchsorted(positions, size)])
            break
        found.append(positions.copy())  # the next batch reuses the buffer
        last = int(positions[-1])
    return found[0] if len(found) == 1 else np.concatenate(found)


def _draw_chunks(y, n_classes, epsilon, rng, buffers):
    """Draw RAPPOR bits for chunks of rows, in memory proportional to their ones.

    Yields ``(start, labels, label_on, ones)``: the chunk's first row, its
    labels, the bit of each row at its label (q+) and the flat positions
    ``row * n_classes + column`` (row within the chunk) of the ones among all
    coordinates drawn at rate q-. The caller overwrites the label coordinates
    with ``label_on``; the draws do not depend on the labels. ``label_on``
    and ``ones`` are arrays of ``buffers``, refilled by the next chunk.
    """
    q_plus, q_minus = rappor_probabilities(epsilon)
    # About CHUNK_ELEMENTS ones per chunk, whatever K and eps.
    step = int(min(CHUNK_ELEMENTS / (1.0 + n_classes * q_minus), _MAX_CHUNK_TRIALS // n_classes))
    step = max(1, step)
    for start in range(0, y.shape[0], step):
        labels = y[start : start + step]
        n_rows = labels.shape[0]
        uniforms = rng.random(out=buffers.get("uniforms", n_rows))
        label_on = np.less(uniforms, q_plus, out=buffers.get("label_on", n_rows, bool))
        ones = _bernoulli_positions(rng, n_rows * n_classes, q_minus, buffers)
        yield start, labels, label_on, ones


def _dense_bits(y, n_classes, epsilon, rng):
    """RAPPOR bits as a dense uint8 array of shape (n_samples, n_classes)."""
    z = np.zeros((y.shape[0], n_classes), dtype=np.uint8)
    flat = z.reshape(-1)
    buffers = WorkBuffers()
    for start, labels, label_on, ones in _draw_chunks(y, n_classes, epsilon, rng, buffers):
        ones += start * n_classes
        flat[ones] = 1
        flat[label_positions(buffers, labels, n_classes, start)] = label_on
    return z


def _sparse_bits(y, n_classes, epsilon, rng):
    """The same bits as :func:`_dense_bits`, as a CSR matrix of the ones."""
    n_samples = y.shape[0]
    q_plus, q_minus = rappor_probabilities(epsilon)
    # Room for the expected number of ones plus 6 standard deviations, so that
    # the indices are written once instead of kept in pieces and concatenated,
    # in the index type scipy will keep (64-bit from 2**31 ones on).
    expected = n_samples * (q_plus + (n_classes - 1) * q_minus)
    capacity = int(expected + 6.0 * math.sqrt(n_samples * n_classes * q_plus * q_minus)) + 16
    small = max(capacity, n_classes) <= np.iinfo(np.int32).max
    indices = np.empty(capacity, dtype=np.int32 if small else np.int64)
    indptr = np.zeros(n_samples + 1, dtype=np.int64)
    nnz = 0
    for start, labels, label_on, ones in _draw_chunks(y, n_classes, epsilon, rng,
                                                      WorkBuffers()):
        rows, cols = np.divmod(ones, n_classes)
        off_label = cols != labels[rows]
        ones, rows, cols = ones[off_label], rows[off_label], cols[off_label]
        # Insert each row's label coordinate among its sorted off-label ones.
        on_rows = np.flatnonzero(label_on)
        at = np.searchsorted(ones, on_rows * n_classes + labels[on_rows])
        cols = np.insert(cols, at, labels[on_rows])
        if nnz + cols.shape[0] > indices.shape[0]:
            grown = np.empty(2 * (nnz + cols.shape[0]), dtype=indices.dtype)
            grown[:nnz] = indices[:nnz]
            indices = grown
        indices[nnz : nnz + cols.shape[0]] = cols
        nnz += cols.shape[0]
        row_counts = np.bincount(rows, minlength=labels.shape[0])
        row_counts += label_on
        indptr[start + 1 : start + 1 + labels.shape[0]] = row_counts
    np.cumsum(indptr, out=indptr)
    data = np.ones(nnz, dtype=np.uint8)
    return sp.csr_matrix((data, indices[:nnz], indptr), shape=(n_samples, n_classes))


def rappor(y, *, epsilon, n_classes, random_state=None, sparse_output=False):
    """RAPPOR unary encoding: release K independent noisy bits per label.

    Coordinate ``j`` of the output row for label ``y`` is 1 with probability
    ``q+ = e^(eps/2) / (1 + e^(eps/2))`` if ``j == y`` and
    ``q- = 1 / (1 + e^(eps/2))`` otherwise, independently across coordinates
    and examples. Changing ``y`` changes the law of two coordinates, each by a
    likelihood ratio of at most ``e^(eps/2)``: the release is eps-label-DP.

    Only the ones are drawn: the gaps between the ones at rate ``q-`` are
    geometric, and each label coordinate gets its own coin at rate ``q+``.
    The time is proportional to the number of ones (about
    ``n_samples * (q+ + (n_classes - 1) q-)``) and, beyond the output, memory
    is that of a fixed-size chunk. How far the generator advances depends on
    the draws, ``n_samples``, ``n_classes`` and ``epsilon``, never on the
    labels. Dense and sparse outputs hold the same bits for the same generator.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``. A dask array gives a lazy
        dask array chunked like ``y`` along rows: each block is drawn from its
        own generator spawned from ``random_state`` (so an int seed replays
        the output for the same chunking only), and its codes are checked
        when it is computed.
    epsilon : float
        Privacy parameter, finite and > 0.
    n_classes : int
        Number of classes K >= 2.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).
    sparse_output : bool, default=False
        Return a CSR matrix holding the ones only. The dense output takes
        ``n_samples * n_classes`` bytes; the sparse one about 5 bytes per one
        (9 from 2**31 ones on, where scipy needs 64-bit indices), so it is
        the smaller when ``q+ + (n_classes - 1) q-`` is below about
        ``n_classes / 5``, i.e. ``q-`` below about 0.2 (``eps`` above about 2.8).
        Not with a dask ``y``, whose output is dense (ValueError).

    Returns
    -------
    ndarray of shape (n_samples, n_classes), uint8, or scipy.sparse.csr_matrix
        The bit vectors ``Z``, entries 0 or 1; the CSR matrix (uint8, sorted
        indices) when ``sparse_output=True``; a dask array chunked like ``y``
        along rows, with the K columns in one chunk, for a dask ``y``.

    See Also
    --------
    rappor_distribution : the exact per-coordinate law.
    debias_rappor : turn scores fitted on ``Z`` into class probabilities.

    References
    ----------
    .. [1] U. Erlingsson, V. Pihur, A. Korolova. RAPPOR: randomized aggregatable
       privacy-preserving ordinal response. CCS 2014.
    .. [2] P. Zhao, R. Fan, H. Wu, Q. Li, J. Wu, Z. Liu. Enhancing learning with
       label differential privacy by vector approximation. arXiv:2405.15150,
       2024 (ICLR 2025), eqs. (14) and (17).
    .. [3] L. Devroye. Non-uniform random variate generation. Springer, 1986,
       Section 10.2 (geometric gaps by inversion).

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import rappor
    >>> rappor([0, 2, 1], epsilon=80.0, n_classes=3, random_state=0)
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 1, 0]], dtype=uint8)
    >>> z = rappor([0, 99_999], epsilon=40.0, n_classes=100_000, random_state=0,
    ...            sparse_output=True)
    >>> z.shape, z.nnz, z.indices.tolist()
    ((2, 100000), 2, [0, 99999])
    """
    if is_dask(y):
        return map_mechanism(rappor, y, random_state=random_state, epsilon=epsilon,
                             n_classes=n_classes, sparse_output=sparse_output)
    epsilon = check_positive(epsilon, "epsilon")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    y = check_label_codes(y, n_classes)
    if not isinstance(sparse_output, (bool, np.bool_)):
        raise TypeError(f"sparse_output must be a bool; got {sparse_output!r}.")
    rng = check_generator(random_state)
    draw = _sparse_bits if sparse_output else _dense_bits
    return draw(y, n_classes, epsilon, rng)


def rappor_distribution(*, epsilon, n_classes):
    """Exact per-coordinate law of :func:`rappor`.

    Parameters
    ----------
    epsilon : float
    n_classes : int

    Returns
    -------
    ndarray of shape (n_classes, n_classes)
        Entry ``[y, j]`` is ``P(Z_j = 1 | y)``; coordinates are independent,
        so the probability of a whole vector is the product over ``j``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import rappor_distribution
    >>> P = rappor_distribution(epsilon=2 * np.log(3), n_classes=3)
    >>> np.round(P, 3)
    array([[0.75, 0.25, 0.25],
           [0.25, 0.75, 0.25],
           [0.25, 0.25, 0.75]])
    """
    epsilon = check_positive(epsilon, "epsilon")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    q_plus, q_minus = rappor_probabilities(epsilon)
    dist = np.full((n_classes, n_classes), q_minus)
    np.fill_diagonal(dist, q_plus)
    return dist


def debias_rappor(scores, *, epsilon):
    """Turn estimates of ``E[Z | x]`` into class probabilities.

    Since ``E[Z_j | x] = q- + (q+ - q-) eta_j(x)``, the estimate is
    ``eta_j = (f_j - q-) / (q+ - q-)``, clipped to ``[0, 1]`` and renormalised
    per row. A row whose entries all clip to 0 carries no information about the
    class and is returned as the uniform distribution.

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_classes)
        Finite scores ``f_j(x)``, e.g. a regressor's predictions fitted on the
        output of :func:`rappor`.
    epsilon : float
        The epsilon the bits were released with.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), float64
        Rows on the probability simplex.

    References
    ----------
    .. [1] P. Zhao, R. Fan, H. Wu, Q. Li, J. Wu, Z. Liu. Enhancing learning with
       label differential privacy by vector approximation. arXiv:2405.15150,
       2024 (ICLR 2025), eq. (17).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import debias_rappor, rappor_distribution
    >>> P = rappor_distribution(epsilon=1.0, n_classes=3)
    >>> debias_rappor(P, epsilon=1.0).round(12)
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    >>> debias_rappor([[0.0, 0.0, 0.0]], epsilon=1.0)
    array([[0.33333333, 0.33333333, 0.33333333]])
    """
    epsilon = check_positive(epsilon, "epsilon")
    scores = check_scores(scores, "scores")
    _, q_minus = rappor_probabilities(epsilon)
    # q+ - q- = (e^(eps/2) - 1) / (e^(eps/2) + 1) = tanh(eps/4), exact for tiny eps.
    return normalise_rows(np.clip((scores - q_minus) / np.tanh(epsilon / 4.0), 0.0, 1.0))
