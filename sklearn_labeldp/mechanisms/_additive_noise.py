"""Additive one-hot label noise and its post-processing (Soft-RR, ALIBI; Malek et al., 2021)."""

import numpy as np

from ..utils import check_generator, check_int, check_positive, is_dask
from ..utils._validation import CHUNK_ELEMENTS, check_label_codes, check_prior, check_scores
from ._buffers import WorkBuffers, label_positions
from ._dask import map_mechanism

__all__ = [
    "alibi_posterior",
    "gaussian_one_hot",
    "gaussian_posterior",
    "laplace_one_hot",
    "project_to_simplex",
]


# Released noisy vectors lie on the lattice LATTICE * Z (a power of two, so
# every step below is exact in float64 for |o| < 2**33).
LATTICE = 2.0**-20


def _one_hot_plus(noise, y):
    """``e_y + noise``, rounded to the lattice: float-safe post-processing.

    Floating-point noise leaks through its low-order bits (Mironov 2012): the
    doubles reachable as ``1 + X`` are not those reachable as ``0 + X`` (for
    example, ``1 + X`` in (0.25, 0.5) is always a multiple of 2**-53, while
    ``0 + X`` there usually is not), so the exact value of a released
    coordinate can tell a label apart whatever epsilon says. Rounding to a
    lattice much coarser than the doubles' spacing and much finer than the
    noise removes the pattern: ``e_y`` lies on the lattice, so the release is
    ``e_y + round(noise)`` exactly, the same set of values for every label. In
    exact arithmetic rounding is post-processing of ``e_y + noise``, so the
    guarantee is unchanged.
    """
    # Multiplying by 1 / LATTICE, a power of two, is the exact division by
    # LATTICE, done in place.
    snapped = np.multiply(noise, 1.0 / LATTICE, out=noise)
    np.rint(snapped, out=snapped)
    snapped *= LATTICE
    # snapped[arange(n), y] += 1, chunk by chunk in reused arrays (see ._buffers).
    flat = snapped.reshape(-1)
    buffers = WorkBuffers()
    for start in range(0, y.shape[0], CHUNK_ELEMENTS):
        at_label = label_positions(buffers, y[start : start + CHUNK_ELEMENTS], snapped.shape[1],
                                   start)
        values = np.take(flat, at_label, out=buffers.get("values", at_label.shape[0]), mode="clip")
        values += 1.0
        flat[at_label] = values
    return snapped


def laplace_one_hot(y, *, epsilon, n_classes, random_state=None):
    """Release the one-hot label plus iid Laplace noise of scale ``2 / eps``.

    The one-hot vector has L1 sensitivity 2 under a label change, so
    ``o = e_y + xi`` with ``xi_j`` iid Laplace(0, ``b = 2 / eps``) is
    eps-label-DP (the Laplace mechanism).

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
    ndarray or dask.array.Array of shape (n_samples, n_classes), float64
        The noisy one-hot vectors ``o``, rounded to multiples of ``2**-20``
        (post-processing that removes the floating-point pattern of the noise;
        Mironov 2012); a dask array, with the K columns in one chunk, for a
        dask ``y``.

    See Also
    --------
    alibi_posterior : Bayesian post-processing of ``o`` given a prior.
    project_to_simplex : prior-free post-processing of ``o``.

    References
    ----------
    .. [1] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.
    .. [2] C. Dwork, F. McSherry, K. Nissim, A. Smith. Calibrating noise to
       sensitivity in private data analysis. TCC 2006.
    .. [3] I. Mironov. On significance of the least significant bits for
       differential privacy. CCS 2012.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import laplace_one_hot
    >>> o = laplace_one_hot([0, 2], epsilon=1e6, n_classes=3, random_state=0)
    >>> o.shape, o.argmax(axis=1)
    ((2, 3), array([0, 2]))
    """
    if is_dask(y):
        return map_mechanism(laplace_one_hot, y, random_state=random_state, epsilon=epsilon,
                             n_classes=n_classes)
    epsilon = check_positive(epsilon, "epsilon")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    y = check_label_codes(y, n_classes)
    rng = check_generator(random_state)
    noise = rng.laplace(0.0, 2.0 / epsilon, size=(y.shape[0], n_classes))
    return _one_hot_plus(noise, y)


def gaussian_one_hot(y, *, sigma, n_classes, random_state=None):
    """Release the one-hot label plus iid Gaussian noise ``N(0, sigma^2 I)``.

    The one-hot vector has L2 sensitivity ``sqrt(2)``, so the release is
    ``rho``-zCDP for the label with ``rho = 1 / sigma^2``.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``. A dask array gives a lazy
        dask array chunked like ``y`` along rows: each block is drawn from its
        own generator spawned from ``random_state`` (so an int seed replays
        the output for the same chunking only), and its codes are checked
        when it is computed.
    sigma : float
        Noise standard deviation, finite and > 0.
    n_classes : int
        Number of classes K >= 2.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples, n_classes), float64
        The noisy one-hot vectors ``o``, rounded to multiples of ``2**-20``
        (post-processing that removes the floating-point pattern of the noise;
        Mironov 2012); a dask array, with the K columns in one chunk, for a
        dask ``y``.

    See Also
    --------
    gaussian_posterior : Bayesian post-processing of ``o`` given a prior.

    References
    ----------
    .. [1] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.
    .. [2] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016.
    .. [3] I. Mironov. On significance of the least significant bits for
       differential privacy. CCS 2012.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import gaussian_one_hot
    >>> gaussian_one_hot([1], sigma=1e-9, n_classes=2, random_state=0).round(6)
    array([[0., 1.]])
    """
    if is_dask(y):
        return map_mechanism(gaussian_one_hot, y, random_state=random_state, sigma=sigma,
                             n_classes=n_classes)
    sigma = check_positive(sigma, "sigma")
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    y = check_label_codes(y, n_classes)
    rng = check_generator(random_state)
    noise = rng.normal(0.0, sigma, size=(y.shape[0], n_classes))
    return _one_hot_plus(noise, y)


def _log_prior(prior, n_samples, n_classes):
    """``log(prior)`` as (n_samples, K) or (1, K); None stands for uniform."""
    if prior is None:
        return None
    prior = np.asarray(prior, dtype=np.float64)
    if prior.ndim == 1:
        if prior.shape[0] != n_classes:
            raise ValueError(
                f"a 1-d prior needs {n_classes} entries, one per class; got {prior.shape[0]}."
            )
        prior = check_prior(prior[np.newaxis, :])
    else:
        prior = check_prior(prior, n_samples)
        if prior.shape[1] != n_classes:
            raise ValueError(
                f"prior has {prior.shape[1]} columns but noisy has {n_classes} classes."
            )
    with np.errstate(divide="ignore"):
        return np.log(prior)  # zeros become -inf: zero posterior


def _posterior(logits_fn, noisy, prior):
    """Row-wise softmax of ``logits_fn(noisy) + log(prior)``, chunked over rows.

    The max-shifted form ``exp(z - max z) / sum exp(z - max z)`` is the exponential
    of the log-softmax: no overflow whatever the logits, and entries with prior 0
    (``z = -inf``) come out exactly 0.
    """
    n_samples, n_classes = noisy.shape
    log_prior = _log_prior(prior, n_samples, n_classes)
    out = np.empty_like(noisy)
    step = max(1, CHUNK_ELEMENTS // n_classes)
    for start in range(0, n_samples, step):
        stop = min(start + step, n_samples)
        z = out[start:stop]
        logits_fn(noisy[start:stop], z)
        if log_prior is not None:
            z += log_prior if log_prior.shape[0] == 1 else log_prior[start:stop]
        z -= z.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
    return out


def alibi_posterior(noisy, *, epsilon, prior=None):
    """ALIBI: posterior over the label given the Laplace-noised one-hot.

    With ``o = e_y + xi`` and ``xi_j`` iid Laplace(0, ``b = 2 / eps``), Bayes'
    rule gives ``P(y = k | o) ∝ pi_k exp((|o_k| - |o_k - 1|) / b)``: only the
    coordinate ``k`` differs between hypotheses. The computation is in log
    space (max-shifted softmax of the logits plus ``log pi``), O(nK), and never
    overflows. This is post-processing: it costs no privacy.

    Parameters
    ----------
    noisy : array-like of shape (n_samples, n_classes)
        Finite noisy one-hot vectors, e.g. from :func:`laplace_one_hot`.
    epsilon : float
        The epsilon the noise was drawn with (``b = 2 / eps``).
    prior : None or array-like of shape (n_classes,) or (n_samples, n_classes)
        Nonnegative class weights (rows need not sum to 1, but each needs a
        positive entry); a class with weight 0 gets posterior 0. ``None`` means
        uniform.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), float64
        Posterior probabilities; rows sum to 1.

    References
    ----------
    .. [1] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import alibi_posterior
    >>> alibi_posterior([[1.0, 0.0], [0.5, 0.5]], epsilon=2 * np.log(3)).round(3)
    array([[0.9, 0.1],
           [0.5, 0.5]])
    """
    epsilon = check_positive(epsilon, "epsilon")
    noisy = check_scores(noisy, "noisy")
    inv_b = epsilon / 2.0

    def logits(o, out):
        # (|o| - |o - 1|) = 2 clip(o, 0, 1) - 1; the constant -1 cancels.
        np.clip(o, 0.0, 1.0, out=out)
        out *= 2.0 * inv_b

    return _posterior(logits, noisy, prior)


def gaussian_posterior(noisy, *, sigma, prior=None):
    """Posterior over the label given the Gaussian-noised one-hot ("AGIBI").

    With ``o = e_y + xi`` and ``xi ~ N(0, sigma^2 I)``, Bayes' rule gives
    ``P(y = k | o) ∝ pi_k exp(o_k / sigma^2)``. The public reference code
    divides by ``sigma`` instead of ``sigma^2``; that is a bug, and this
    function follows the derivation. Computed in log space, O(nK).

    Parameters
    ----------
    noisy : array-like of shape (n_samples, n_classes)
        Finite noisy one-hot vectors, e.g. from :func:`gaussian_one_hot`.
    sigma : float
        The noise standard deviation, finite and > 0.
    prior : None or array-like of shape (n_classes,) or (n_samples, n_classes)
        As in :func:`alibi_posterior`.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), float64
        Posterior probabilities; rows sum to 1.

    References
    ----------
    .. [1] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import gaussian_posterior
    >>> gaussian_posterior([[np.log(3), 0.0]], sigma=1.0).round(3)
    array([[0.75, 0.25]])
    """
    sigma = check_positive(sigma, "sigma")
    noisy = check_scores(noisy, "noisy")
    inv_var = 1.0 / (sigma * sigma)

    def logits(o, out):
        np.multiply(o, inv_var, out=out)

    return _posterior(logits, noisy, prior)


def project_to_simplex(v):
    """Euclidean projection of each row onto the probability simplex.

    Sort each row descending (``u``), take the largest ``j`` with
    ``u_j - (sum_{r <= j} u_r - 1) / j > 0``, set
    ``theta = (sum_{r <= j} u_r - 1) / j`` and return ``max(v - theta, 0)``.
    Vectorised over rows, O(nK log K).

    Parameters
    ----------
    v : array-like of shape (n_samples, n_classes) or (n_classes,)
        Finite vectors, e.g. from :func:`laplace_one_hot`.

    Returns
    -------
    ndarray of the same shape as ``v``, float64
        The closest points of the simplex ``{p >= 0, sum p = 1}``.

    References
    ----------
    .. [1] W. Wang, M. A. Carreira-Perpinan. Projection onto the probability
       simplex: an efficient algorithm with a simple proof. arXiv:1309.1541, 2013.
    .. [2] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import project_to_simplex
    >>> project_to_simplex([[1.5, 0.5, -1.0], [0.2, 0.2, 0.2]])
    array([[1.        , 0.        , 0.        ],
           [0.33333333, 0.33333333, 0.33333333]])
    """
    v = np.asarray(v, dtype=np.float64)
    if v.ndim not in (1, 2) or v.shape[-1] < 1:
        raise ValueError(f"v must be a 1-d or 2-d array with >= 1 column; got shape {v.shape}.")
    if not np.all(np.isfinite(v)):
        raise ValueError("v must be finite.")
    one_row = v.ndim == 1
    v2 = v[np.newaxis, :] if one_row else v
    u = -np.sort(-v2, axis=1)
    excess = np.cumsum(u, axis=1)
    excess -= 1.0
    j = np.arange(1, v2.shape[1] + 1)
    positive = u * j > excess  # u_j - excess_j / j > 0, division-free
    # Largest j where it holds (the first column always qualifies).
    rho = v2.shape[1] - np.argmax(positive[:, ::-1], axis=1)
    theta = excess[np.arange(v2.shape[0]), rho - 1] / rho
    out = np.maximum(v2 - theta[:, np.newaxis], 0.0)
    return out[0] if one_row else out
