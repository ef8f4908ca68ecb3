"""Additive-noise baselines for real labels: Laplace, Gaussian and staircase noise.

The baselines of Ghazi et al. (2023) for regression with label DP: noise on
labels clipped to the public ``label_range``, whose width bounds the
sensitivity. Releases are computed exactly on a lattice so that the floating
point noise does not leak the label (Mironov 2012).
"""

import math

import numpy as np

from ..accounting import calibrate_gaussian_sigma, gaussian_sigma_for_approx_dp
from ..utils import (
    check_generator,
    check_label_range,
    check_nonnegative,
    check_option,
    check_positive,
    is_dask,
)
from ._dask import map_mechanism
from ._regression import _LOSSES, _clipped_labels

__all__ = ["gaussian_label", "laplace_label", "staircase_gamma", "staircase_label"]

# Releases lie on a lattice of about 2**-21 of the label range (see
# _release_on_lattice), clipped this many lattice steps beyond the range.
_LATTICE_BITS = 20
_LATTICE_MARGIN = 2.0**40



def _lattice_step(label_range):
    low, high = label_range
    step = 2.0 ** (math.frexp(high - low)[1] - 1 - _LATTICE_BITS)
    if max(abs(low), abs(high)) / step >= 2.0**52 - 2 * _LATTICE_MARGIN:
        raise ValueError(
            f"label_range ({low!r}, {high!r}) is too narrow for the size of its bounds: "
            "shift the labels towards 0 first."
        )
    return step


def _release_on_lattice(y, noise, label_range):
    """``y + noise`` computed exactly, on a lattice finer than the noise.

    Floating-point noise leaks through its low-order bits (Mironov 2012): the
    doubles reachable as ``y + X`` differ between labels. So the clipped label
    is first snapped to the lattice ``step * Z`` (``step`` a power of two about
    ``2**-21`` of the range, inside the range, so the sensitivity is still at
    most ``high - low``) and the release is the centre of the lattice cell
    holding ``y + X``: ``(k_y + floor(X / step) + 1/2) step``, every step of it
    exact integer arithmetic in float64, a function of ``y + X`` alone, and
    clipped ``2**40`` steps beyond the range (post-processing too).
    """
    step = _lattice_step(label_range)
    low_k, high_k = math.ceil(label_range[0] / step), math.floor(label_range[1] / step)
    k = np.clip(np.rint(y / step), low_k, high_k)
    k += np.floor(noise / step)
    np.clip(k, low_k - _LATTICE_MARGIN, high_k + _LATTICE_MARGIN, out=k)
    k += 0.5
    k *= step
    return k


def laplace_label(y, *, epsilon, label_range, random_state=None):
    """Laplace mechanism on labels clipped to ``label_range``.

    Clipped labels have sensitivity ``high - low``, so adding Laplace noise of
    scale ``(high - low) / eps`` is eps-label-DP (Dwork et al. 2006), the
    baseline of Ghazi et al. (2023). Releases are rounded to a lattice of
    about ``2**-21`` of the range (see Notes).

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Real labels; values outside ``label_range`` are clipped to it. A
        dask array gives a lazy dask array chunked like ``y``.
    epsilon : float
        Privacy parameter, finite and > 0.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,), float64

    Notes
    -----
    Floating-point noise added to a label leaks the label through the low
    bits of the sum (Mironov 2012). The clipped label is snapped to a lattice
    of step ``2**(e - 21)``, ``2**e`` the power of two just above ``high -
    low``, and the release is the centre of the lattice cell that holds the
    label plus the noise, computed exactly: post-processing of the noisy
    label, so the guarantee is unchanged, at an error of at most one step.

    See Also
    --------
    rr_on_bins : the optimal randomizer given a prior.

    References
    ----------
    .. [1] C. Dwork, F. McSherry, K. Nissim, A. Smith. Calibrating noise to
       sensitivity in private data analysis. TCC 2006.
    .. [2] B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi, A. Varadarajan,
       C. Zhang. Regression with label differential privacy. ICLR 2023.
    .. [3] I. Mironov. On significance of the least significant bits for
       differential privacy. CCS 2012.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import laplace_label
    >>> laplace_label([0.25, 0.75, 9.0], epsilon=1e6, label_range=(0, 1),
    ...               random_state=0).round(3)
    array([0.25, 0.75, 1.  ])
    """
    if is_dask(y):
        return map_mechanism(laplace_label, y, random_state=random_state, epsilon=epsilon,
                             label_range=label_range)
    epsilon = check_positive(epsilon, "epsilon")
    label_range = check_label_range(label_range)
    _lattice_step(label_range)
    y = _clipped_labels(y, label_range)
    rng = check_generator(random_state)
    noise = rng.laplace(0.0, (label_range[1] - label_range[0]) / epsilon, size=y.shape[0])
    return _release_on_lattice(y, noise, label_range)


def gaussian_label_sigma(epsilon, delta, sensitivity, method="cks"):
    """The noise std :func:`gaussian_label` draws for labels of range width ``sensitivity``.

    ``method="exact"``: the least noise by the Gaussian's exact privacy profile
    (Balle and Wang 2018); ``"cks"`` or ``"classic"``: through zCDP (see
    :func:`~sklearn_labeldp.accounting.gaussian_sigma_for_approx_dp`).

    Raises
    ------
    ValueError
        If no finite noise reaches ``(epsilon, delta)``.
    """
    if method == "exact":
        sigma = calibrate_gaussian_sigma(epsilon, delta, sensitivity**2)
    else:
        sigma = gaussian_sigma_for_approx_dp(epsilon, delta, sensitivity=sensitivity,
                                             method=method)
    if not math.isfinite(sigma):
        raise ValueError(f"epsilon={epsilon!r} is too small for any finite Gaussian noise "
                         f"at delta={delta!r}.")
    return sigma


def gaussian_label(y, *, epsilon, delta, label_range, method="cks", random_state=None):
    """Gaussian mechanism on labels clipped to ``label_range``.

    Clipped labels have L2 sensitivity ``high - low``; the noise standard
    deviation is the smallest that makes the release (eps, delta)-label-DP,
    by the Gaussian's exact privacy profile for ``method="exact"``
    (:func:`~sklearn_labeldp.accounting.calibrate_gaussian_sigma`, Balle and
    Wang 2018), or through zero-concentrated DP
    (:func:`~sklearn_labeldp.accounting.gaussian_sigma_for_approx_dp`, Bun and
    Steinke 2016, with the conversion of Canonne, Kamath and Steinke 2020 for
    ``method="cks"``), which needs more noise. Releases are rounded to a
    lattice as in :func:`laplace_label`.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Real labels; values outside ``label_range`` are clipped to it.
    epsilon : float
        Finite and > 0.
    delta : float
        In (0, 1).
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    method : {"cks", "classic", "exact"}, default="cks"
        The calibration: the exact profile, or a zCDP to (eps, delta)
        conversion (:class:`~sklearn_labeldp.regression.NoisyLabelRegressor`
        uses ``"exact"``).
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,), float64

    References
    ----------
    .. [1] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016.
    .. [2] C. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for
       differential privacy. NeurIPS 2020.
    .. [3] B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi, A. Varadarajan,
       C. Zhang. Regression with label differential privacy. ICLR 2023.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import gaussian_label
    >>> gaussian_label([0.25, 4.0], epsilon=1e5, delta=1e-5, label_range=(0, 1),
    ...                random_state=0).round(3)
    array([0.25, 1.  ])
    """
    if is_dask(y):
        return map_mechanism(gaussian_label, y, random_state=random_state, epsilon=epsilon,
                             delta=delta, label_range=label_range, method=method)
    label_range = check_label_range(label_range)
    sigma = gaussian_label_sigma(epsilon, delta, label_range[1] - label_range[0], method)
    _lattice_step(label_range)
    y = _clipped_labels(y, label_range)
    rng = check_generator(random_state)
    return _release_on_lattice(y, rng.normal(0.0, sigma, size=y.shape[0]), label_range)


def staircase_gamma(epsilon, *, loss="squared"):
    """The staircase mechanism's optimal ``gamma`` (Geng and Viswanath 2014).

    With ``b = e^-eps``: ``gamma* = 1 / (1 + e^(eps / 2))`` for absolute loss
    and ``gamma* = -b / (1 - b) + (b - 2 b^2 + 2 b^4 - b^5)^(1/3) / (2^(1/3)
    (1 - b)^2)`` for squared loss.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    loss : {"squared", "absolute"}, default="squared"

    Returns
    -------
    float
        In ``[0, 1/2]``.

    References
    ----------
    .. [1] Q. Geng, P. Viswanath. The optimal mechanism in differential
       privacy. IEEE ISIT 2014; IEEE Trans. Inf. Theory 62(2), 2016.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import staircase_gamma
    >>> round(staircase_gamma(2.0, loss="absolute"), 4)
    0.2689
    """
    epsilon = check_positive(epsilon, "epsilon")
    loss = check_option(loss, "loss", _LOSSES)
    if loss == "absolute":
        return 1.0 / (1.0 + math.exp(epsilon / 2))
    b = math.exp(-epsilon)
    gamma = -b / (1 - b) + (b - 2 * b**2 + 2 * b**4 - b**5) ** (1 / 3) / (
        2 ** (1 / 3) * (1 - b) ** 2
    )
    return min(max(gamma, 0.0), 0.5)


def staircase_label(y, *, epsilon, label_range, gamma=None, loss="squared", random_state=None):
    """Staircase mechanism (Geng and Viswanath 2014) on labels clipped to ``label_range``.

    The noise density, with ``D = high - low`` and ``b = e^-eps``, is
    ``a b^k`` on ``|x|`` in ``[k D, (k + gamma) D)`` and ``a b^(k+1)`` on
    ``[(k + gamma) D, (k + 1) D)``, ``k = 0, 1, ...``: a staircase whose
    density falls by at most ``e^eps`` over any shift of ``D``, so the release
    is eps-label-DP. It is the optimal additive noise for a given cost of the
    noise. It is drawn as ``S D (G + gamma U)`` or ``S D (G + gamma + (1 -
    gamma) U)`` (the second with probability ``(1 - gamma) b / (gamma + (1 -
    gamma) b)``), with a random sign ``S``, ``G`` geometric with ``P(G = k) =
    (1 - b) b^k`` and ``U`` uniform on [0, 1). Releases are rounded to a lattice
    as in :func:`laplace_label`.

    Parameters
    ----------
    y : array-like or dask.array.Array of shape (n_samples,)
        Real labels; values outside ``label_range`` are clipped to it.
    epsilon : float
        Finite and > 0.
    label_range : tuple (low, high)
        Public range of the labels, ``low < high``.
    gamma : float in [0, 1], default=None
        ``None`` takes :func:`staircase_gamma` for ``loss``.
    loss : {"squared", "absolute"}, default="squared"
        The noise cost ``gamma`` is optimised for when it is None.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray or dask.array.Array of shape (n_samples,), float64

    References
    ----------
    .. [1] Q. Geng, P. Viswanath. The optimal mechanism in differential
       privacy. IEEE ISIT 2014; IEEE Trans. Inf. Theory 62(2), 2016.
    .. [2] Q. Geng, P. Kairouz, S. Oh, P. Viswanath. The staircase mechanism
       in differential privacy. IEEE J. Sel. Topics Signal Process. 9(7), 2015.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import staircase_label
    >>> staircase_label([0.25, 2.0], epsilon=50.0, label_range=(0, 1),
    ...                 random_state=0).round(3)
    array([0.25, 1.  ])
    """
    if is_dask(y):
        return map_mechanism(staircase_label, y, random_state=random_state, epsilon=epsilon,
                             label_range=label_range, gamma=gamma, loss=loss)
    epsilon = check_positive(epsilon, "epsilon")
    label_range = check_label_range(label_range)
    if gamma is None:
        gamma = staircase_gamma(epsilon, loss=loss)
    else:
        gamma = check_nonnegative(gamma, "gamma", upper=1.0)
    _lattice_step(label_range)
    y = _clipped_labels(y, label_range)
    rng = check_generator(random_state)
    n = y.shape[0]
    b = math.exp(-epsilon)
    draws = rng.random((3, n))
    geometric = rng.geometric(1 - b, size=n) - 1.0  # numpy's counts trials, from 1
    upper = draws[0] < (1 - gamma) * b / (gamma + (1 - gamma) * b)
    magnitude = geometric + np.where(upper, gamma + (1 - gamma) * draws[1], gamma * draws[1])
    sign = np.where(draws[2] < 0.5, -1.0, 1.0)
    noise = sign * magnitude * (label_range[1] - label_range[0])
    return _release_on_lattice(y, noise, label_range)
