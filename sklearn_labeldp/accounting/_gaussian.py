"""The Gaussian mechanism's exact privacy profile, its inverse and its calibration.

A mechanism that adds ``N(0, sigma^2 I)`` to a statistic which two neighbouring
datasets move by at most ``Delta`` in L2 norm is dominated by the pair
``N(0, 1)``, ``N(mu, 1)`` with ``mu = Delta / sigma``, and adaptive compositions
of such mechanisms are one of them with ``mu`` the root sum of squares (Dong,
Roth and Su 2022, Cor. 3.3). Its tight ``(epsilon, delta)`` curve is

    delta(epsilon) = Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2)

(Balle and Wang 2018, Thm. 8): :func:`gaussian_delta`, inverted in ``epsilon``
by :func:`gaussian_epsilon` and in ``mu`` by :func:`gaussian_mu`;
:func:`calibrate_gaussian_sigma` turns the largest admissible ``mu`` into the
least noise. The functions are exact up to root finding, and every inverse is
rounded to the safe side, so that a record built from it passes
:class:`~sklearn_labeldp.accounting.PrivacySpend`'s own check.
"""

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from ..utils import check_positive, check_unit_interval

__all__ = ["calibrate_gaussian_sigma", "gaussian_delta", "gaussian_epsilon", "gaussian_mu"]


def gaussian_delta(epsilon, mu):
    """The exact ``delta(epsilon)`` of a Gaussian mechanism of sensitivity ``mu`` noise stds.

    ``Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2)``
    (Balle and Wang 2018, Thm. 8), increasing in ``mu`` and decreasing in
    ``epsilon``; 0 for ``mu = 0``.

    Parameters
    ----------
    epsilon : float
        Nonnegative.
    mu : float
        Sensitivity over noise std, nonnegative.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import gaussian_delta
    >>> round(gaussian_delta(1.0, 1.0), 4)
    0.1269
    """
    if mu == 0:
        return 0.0
    # e^epsilon Phi(b) in log space: e^epsilon alone overflows past epsilon = 709.
    return float(ndtr(-epsilon / mu + mu / 2)
                 - math.exp(epsilon + log_ndtr(-epsilon / mu - mu / 2)))


def gaussian_epsilon(mu, delta):
    """The smallest ``epsilon`` with ``gaussian_delta(epsilon, mu) <= delta``.

    Found by root finding, then raised ulp by ulp so that the record's own
    check (:class:`~sklearn_labeldp.accounting.PrivacySpend` with
    ``("gaussian", mu)``) never sees an understated budget.

    Parameters
    ----------
    mu : float
        Sensitivity over noise std, nonnegative.
    delta : float
        In ``[0, 1]``.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import gaussian_epsilon
    >>> round(gaussian_epsilon(1.0, 1e-5), 3)
    4.377
    """
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    upper = 1.0
    while gaussian_delta(upper, mu) > delta:
        upper *= 2.0
    epsilon = brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, upper, xtol=1e-14,
                     rtol=1e-15)
    while gaussian_delta(epsilon, mu) > delta:
        epsilon = math.nextafter(epsilon, math.inf)
    return epsilon


def gaussian_mu(epsilon, delta):
    """The largest ``mu`` whose Gaussian mechanism is ``(epsilon, delta)``-DP.

    The root of ``gaussian_delta(epsilon, mu) = delta`` (the profile increases
    with ``mu``), lowered ulp by ulp until its profile is within ``delta``.

    Parameters
    ----------
    epsilon : float
        Positive.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``epsilon`` is too small for any Gaussian noise at ``delta``.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import gaussian_mu
    >>> round(gaussian_mu(1.0, 1e-5), 4)
    0.2681
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_unit_interval(delta, "delta")
    upper = 1.0
    while gaussian_delta(epsilon, upper) < delta:
        upper *= 2.0
    lower = 1e-12  # delta there is 0 for every finite epsilon > 0 this function accepts
    if gaussian_delta(epsilon, lower) >= delta:
        raise ValueError(f"epsilon={epsilon} is too small for any Gaussian noise at delta={delta}.")
    mu = brentq(lambda m: gaussian_delta(epsilon, m) - delta, lower, upper, xtol=1e-15,
                rtol=1e-15)
    while gaussian_delta(epsilon, mu) > delta:
        mu = math.nextafter(mu, 0.0)
    return mu


def calibrate_gaussian_sigma(epsilon, delta, squared_sensitivity, spend_of=None):
    """The smallest noise std whose Gaussian of L2 sensitivity ``sqrt(squared_sensitivity)``
    is ``(epsilon, delta)``-DP by the exact profile.

    ``sigma = sqrt(squared_sensitivity) / gaussian_mu(epsilon, delta)``, widened
    ulp by ulp until ``spend_of(sigma).epsilon`` (the record the caller will
    make, with its own rounding) stays within ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Positive.
    delta : float
        In ``(0, 1)``.
    squared_sensitivity : float
        Positive: the sum over releases of their squared L2 sensitivities in
        units of the noise std at ``sigma = 1``.
    spend_of : callable, default=None
        ``sigma -> PrivacySpend``; by default the spend of the Gaussian at
        ``mu = sqrt(squared_sensitivity) / sigma``.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import calibrate_gaussian_sigma
    >>> round(calibrate_gaussian_sigma(1.0, 1e-5, 2.0), 3)
    5.276
    """
    squared_sensitivity = check_positive(squared_sensitivity, "squared_sensitivity")
    root = math.sqrt(squared_sensitivity)
    sigma = root / gaussian_mu(epsilon, delta)
    if spend_of is None:
        while gaussian_epsilon(root / sigma, delta) > epsilon:
            sigma = math.nextafter(sigma, math.inf)
        return sigma
    while spend_of(sigma).epsilon > epsilon:
        sigma = math.nextafter(sigma, math.inf)
    return sigma
