"""Randomized response (Warner 1965) on K classes."""

import math

import numpy as np

from ..utils import check_generator, check_int, check_positive, is_dask
from ..utils._validation import CHUNK_ELEMENTS, check_label_codes
from ._dask import map_mechanism

__all__ = ["randomized_response", "randomized_response_distribution", "rr_vote_inflation"]


def _keep_probability(epsilon, k, out=None):
    """``e^eps / (e^eps + k - 1)`` written with ``e^-eps`` so it never overflows.

    ``k`` is an int or an int array; for an array, ``out`` (float64, same
    shape) receives the result instead of a fresh array, with the same
    rounding: ``1 / (1 + (k - 1) e^-eps)`` in that order.
    """
    if out is None:
        return 1.0 / (1.0 + (k - 1) * np.exp(-epsilon))
    np.subtract(k, 1, out=out)
    out *= np.exp(-epsilon)
    out += 1.0
    return np.divide(1.0, out, out=out)


def _draw_randomized_response(y, n_classes, epsilon, rng):
    """Randomized response on checked inputs, in O(n) memory whatever K."""
    n_samples = y.shape[0]
    keep_probability = _keep_probability(epsilon, n_classes)
    keep = np.empty(n_samples, dtype=bool)
    # The n coins come in chunks through one reused array (see ._buffers): the
    # same stream, hence the same coins, as one call rng.random(n_samples).
    uniforms = np.empty(min(n_samples, CHUNK_ELEMENTS))
    for start in range(0, n_samples, CHUNK_ELEMENTS):
        stop = min(start + CHUNK_ELEMENTS, n_samples)
        coins = rng.random(out=uniforms[: stop - start])
        np.less(coins, keep_probability, out=keep[start:stop])
    # A uniform label among the K - 1 others: shift y by 1..K-1 modulo K.
    out = rng.integers(1, n_classes, size=n_samples)
    out += y
    out %= n_classes
    np.copyto(out, y, where=keep)
    return out


def randomized_response(y, *, epsilon, n_classes, random_state=None):
    """Randomized response: keep each label or replace it by a uniform other one.

    ``P(out = y) = e^eps / (e^eps + K - 1)`` and ``P(out = j) = 1 / (e^eps + K - 1)``
    for every ``j != y``, independently per example. The worst-case likelihood
    ratio is exactly ``e^eps``: the release is eps-label-DP.

    Each example costs a coin and an offset: the output is ``y`` or, failing
    the coin, ``(y + U) mod K`` with ``U`` uniform on ``{1, ..., K - 1}``.
    Memory is O(n_samples) whatever ``n_classes`` (no row of K probabilities
    is formed), and how far the generator advances does not depend on the
    labels.

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

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,), int64
        The randomized label codes (a dask array for a dask ``y``).

    See Also
    --------
    randomized_response_distribution : the exact output law.
    rr_with_prior : randomized response restricted to the classes a prior favours.

    References
    ----------
    .. [1] S. L. Warner. Randomized response: a survey technique for eliminating
       evasive answer bias. JASA, 1965.
    .. [2] B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep learning
       with label differential privacy. NeurIPS 2021, Section 3.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import randomized_response
    >>> randomized_response([0, 1, 2, 1], epsilon=50.0, n_classes=3, random_state=0)
    array([0, 1, 2, 1])
    """
    if is_dask(y):
        return map_mechanism(randomized_response, y, random_state=random_state,
                             epsilon=epsilon, n_classes=n_classes)
    epsilon = check_positive(epsilon, "epsilon")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    y = check_label_codes(y, n_classes)
    rng = check_generator(random_state)
    return _draw_randomized_response(y, n_classes, epsilon, rng)


def randomized_response_distribution(*, epsilon, n_classes):
    """Exact output law of :func:`randomized_response`.

    Parameters
    ----------
    epsilon : float
    n_classes : int

    Returns
    -------
    ndarray of shape (n_classes, n_classes)
        Entry ``[y, out]`` is ``P(out | y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import randomized_response_distribution
    >>> P = randomized_response_distribution(epsilon=np.log(2), n_classes=3)
    >>> np.round(P, 3)
    array([[0.5 , 0.25, 0.25],
           [0.25, 0.5 , 0.25],
           [0.25, 0.25, 0.5 ]])
    """
    epsilon = check_positive(epsilon, "epsilon")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    keep = _keep_probability(epsilon, n_classes)
    other = np.exp(-epsilon) * keep  # 1 / (e^eps + K - 1)
    dist = np.full((n_classes, n_classes), other)
    np.fill_diagonal(dist, keep)
    return dist


def rr_vote_inflation(epsilon, n_classes):
    """The factor ``rho`` by which K-ary randomized response inflates the variance of a vote.

    ``(p + q) / (p - q)^2`` with ``p`` and ``q`` the keep and flip
    probabilities: the variance of a one-hot difference over its squared gap
    (see :mod:`sklearn_labeldp.classifiers._default_base`), so that ``n``
    randomized labels are worth about ``n / rho`` clean ones. Written with
    ``e^-eps`` so that it never overflows; 1 in the limit of no noise.

    Parameters
    ----------
    epsilon : float
        The mechanism's epsilon, > 0.
    n_classes : int
        Number of classes ``K`` >= 2.

    Returns
    -------
    float
    """
    x, gap2 = math.exp(-epsilon), math.expm1(-epsilon) ** 2
    # At an epsilon so small that the squared gap underflows, no vote suffices.
    return math.inf if gap2 == 0.0 else (1.0 + x) * (1.0 + (n_classes - 1) * x) / gap2
