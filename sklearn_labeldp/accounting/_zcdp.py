"""Zero-concentrated DP (Bun and Steinke 2016) and its conversion to (eps, delta).

A Gaussian mechanism with L2 sensitivity ``D`` and noise std ``s`` is
``rho``-zCDP with ``rho = D^2 / (2 s^2)``; rho adds under composition.
"""

import math
from numbers import Real

from scipy.optimize import minimize_scalar

__all__ = [
    "approx_dp_to_zcdp",
    "gaussian_rho",
    "gaussian_sigma_for_approx_dp",
    "zcdp_to_approx_dp",
]

_METHODS = ("cks", "classic")


def _check_positive(value, name, *, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number; got {value!r}.")
    value = float(value)
    ok = value >= 0 if allow_zero else value > 0
    if not (math.isfinite(value) and ok):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}; got {value!r}.")
    return value


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(f"delta must lie in the open interval (0, 1); got {delta!r}.")
    return float(delta)


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}.")


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
    sensitivity = _check_positive(sensitivity, "sensitivity")
    sigma = _check_positive(sigma, "sigma")
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
    rho = _check_positive(rho, "rho", allow_zero=True)
    delta = _check_delta(delta)
    _check_method(method)
    if rho == 0:
        return 0.0
    eps = _classic_epsilon(rho, delta) if method == "classic" else _cks_epsilon(rho, delta)
    return max(0.0, eps)


def approx_dp_to_zcdp(epsilon, delta, *, method="cks"):
    """The largest rho whose conversion (:func:`zcdp_to_approx_dp`) is within (eps, delta).

    Found by bisection on ``log(rho)``; the returned rho errs on the safe side.

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
    epsilon = _check_positive(epsilon, "epsilon")
    delta = _check_delta(delta)
    _check_method(method)
    lo, hi = 1e-300, max(1.0, epsilon)  # eps(rho) >= rho, so eps(epsilon) >= epsilon
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if zcdp_to_approx_dp(mid, delta, method=method) <= epsilon:
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

    Examples
    --------
    >>> from sklearn_labeldp.accounting import gaussian_sigma_for_approx_dp
    >>> sigma = gaussian_sigma_for_approx_dp(1.0, 1e-5, method="classic")
    >>> round(sigma, 3)
    4.901
    """
    sensitivity = _check_positive(sensitivity, "sensitivity")
    rho = approx_dp_to_zcdp(epsilon, delta, method=method)
    return sensitivity / math.sqrt(2.0 * rho)
