"""Zero-concentrated DP (Bun and Steinke 2016) and its conversion to (eps, delta).

A Gaussian mechanism with L2 sensitivity ``D`` and noise std ``s`` is
``rho``-zCDP with ``rho = D^2 / (2 s^2)``; rho adds under composition.
"""

import math
import sys

from scipy.optimize import minimize_scalar

from ..utils import check_option, check_positive, check_unit_interval

__all__ = [
    "approx_dp_to_zcdp",
    "gaussian_rho",
    "gaussian_sigma_for_approx_dp",
    "zcdp_to_approx_dp",
]

_METHODS = ("cks", "classic")


def gaussian_rho(sensitivity, sigma):
    """zCDP parameter of the Gaussian mechanism: ``rho = sensitivity^2 / (2 sigma^2)``.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the released statistic, > 0.
    sigma : float
        Standard deviation of the added noise, > 0.

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import gaussian_rho
    >>> gaussian_rho(2 ** 0.5, 1.0)
    1.0000000000000002
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    return sensitivity**2 / (2.0 * sigma**2)


def _classic_epsilon(rho, delta):
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _cks_epsilon_at_order(alpha, rho, delta):
    return alpha * rho + (
        math.log(1.0 / delta) + (alpha - 1.0) * math.log1p(-1.0 / alpha) - math.log(alpha)
    ) / (alpha - 1.0)


def _cks_epsilon(rho, delta):
    # Every order alpha > 1 gives a valid bound; search log(alpha - 1) for the best.
    result = minimize_scalar(
        lambda t: _cks_epsilon_at_order(1.0 + math.exp(t), rho, delta),
        bounds=(-20.0, 30.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return min(float(result.fun), _classic_epsilon(rho, delta))


def _epsilon(rho, delta, method):
    """The conversion without input validation; ``rho = 0`` gives 0."""
    if rho == 0:
        return 0.0
    eps = _classic_epsilon(rho, delta) if method == "classic" else _cks_epsilon(rho, delta)
    # A negative bound still implies (0, delta)-DP (CKS 2020, Prop. 12 holds for any eps).
    return max(0.0, eps)


def _classic_rho(epsilon, delta):
    # Closed-form inverse of eps = rho + 2 sqrt(rho L): sqrt(rho) = sqrt(L + eps) - sqrt(L),
    # written without cancellation.
    log_inv_delta = math.log(1.0 / delta)
    return (epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))) ** 2


def zcdp_to_approx_dp(rho, delta, *, method="cks"):
    """Convert rho-zCDP to (eps, delta)-DP.

    Parameters
    ----------
    rho : float
        zCDP parameter, >= 0.
    delta : float
        Target delta in (0, 1).
    method : {"cks", "classic"}, default="cks"
        ``"classic"``: ``eps = rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke
        2016, Prop. 1.3). ``"cks"``: ``eps = min_{a>1} a rho + (log(1/delta) +
        (a-1) log(1-1/a) - log a) / (a-1)`` (Canonne, Kamath and Steinke 2020,
        Prop. 12), never larger than the classic value.

    Returns
    -------
    float
        The epsilon (>= 0).

    Examples
    --------
    >>> from sklearn_labeldp.accounting import zcdp_to_approx_dp
    >>> round(zcdp_to_approx_dp(0.5, 1e-5, method="classic"), 4)
    5.2985
    >>> zcdp_to_approx_dp(0.5, 1e-5) < zcdp_to_approx_dp(0.5, 1e-5, method="classic")
    True
    """
    rho = check_positive(rho, "rho", allow_zero=True)
    delta = check_unit_interval(delta, "delta")
    check_option(method, "method", _METHODS)
    return _epsilon(rho, delta, method)


def approx_dp_to_zcdp(epsilon, delta, *, method="cks"):
    """The largest rho whose conversion (:func:`zcdp_to_approx_dp`) is within (eps, delta).

    Found by bisection on ``log(rho)``, started from the closed-form inverse of
    the classic bound; the returned rho always converts to at most ``epsilon``
    and is within a relative ``1e-12`` of the largest such rho.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in (0, 1).
    method : {"cks", "classic"}, default="cks"

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import approx_dp_to_zcdp, zcdp_to_approx_dp
    >>> rho = approx_dp_to_zcdp(1.0, 1e-5)
    >>> zcdp_to_approx_dp(rho, 1e-5) <= 1.0
    True
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_unit_interval(delta, "delta")
    check_option(method, "method", _METHODS)
    # Invariant: eps(lo) <= epsilon < eps(hi). The classic closed form is feasible for
    # both methods up to rounding (CKS is never above classic); halve past any rounding.
    lo, hi = max(_classic_rho(epsilon, delta), sys.float_info.min), None
    while _epsilon(lo, delta, method) > epsilon:
        lo, hi = lo / 2.0, lo
        if lo == 0:
            return 0.0
    if hi is None:
        # eps(rho) < rho is possible for CKS (delta near 1): grow hi until infeasible.
        hi = 2.0 * lo
        while _epsilon(hi, delta, method) <= epsilon:
            lo, hi = hi, 2.0 * hi
            if not math.isfinite(hi):
                return lo
    for _ in range(200):
        mid = math.sqrt(lo) * math.sqrt(hi)  # geometric mean without underflow
        if not lo < mid < hi:
            break
        if _epsilon(mid, delta, method) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return lo


def gaussian_sigma_for_approx_dp(epsilon, delta, *, sensitivity=1.0, method="cks"):
    """Smallest Gaussian noise std that makes one release (eps, delta)-DP via zCDP.

    Parameters
    ----------
    epsilon : float
    delta : float
    sensitivity : float, default=1.0
        L2 sensitivity of the released statistic.
    method : {"cks", "classic"}, default="cks"

    Returns
    -------
    float
        ``sensitivity / sqrt(2 rho)`` for the rho of :func:`approx_dp_to_zcdp`,
        rounded up so that the round trip never exceeds ``epsilon``; ``inf`` when
        ``epsilon`` is too small for any positive rho representable as a float.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import gaussian_sigma_for_approx_dp
    >>> sigma = gaussian_sigma_for_approx_dp(1.0, 1e-5, method="classic")
    >>> round(sigma, 3)
    4.901
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    rho = approx_dp_to_zcdp(epsilon, delta, method=method)
    if rho == 0:
        return math.inf
    sigma = sensitivity / math.sqrt(2.0 * rho)
    # The round trip sigma -> rho can land an ulp above rho; widen until it converts
    # within epsilon, so the returned sigma is never (even by rounding) too small.
    while _epsilon(gaussian_rho(sensitivity, sigma), delta, method) > epsilon:
        sigma = math.nextafter(sigma, math.inf)
    return sigma
