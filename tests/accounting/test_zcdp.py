"""zCDP of the Gaussian mechanism and its conversion to (eps, delta)-DP."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_labeldp.accounting import (
    approx_dp_to_zcdp,
    gaussian_rho,
    gaussian_sigma_for_approx_dp,
    zcdp_to_approx_dp,
)

METHODS = ["cks", "classic"]
RHOS = [1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0]
DELTAS = [1e-10, 1e-6, 1e-2]


def brute_force_cks(rho, delta):
    """min over a > 1 of the CKS bound, on a dense log grid refined around its argmin."""
    log_inv_delta = math.log(1.0 / delta)

    def bound(a_minus_1):
        a = 1.0 + a_minus_1
        return a * rho + (log_inv_delta + a_minus_1 * np.log(1.0 - 1.0 / a) - np.log(a)) / a_minus_1

    grid = np.geomspace(1e-8, 1e10, 100_001)
    i = int(np.argmin(bound(grid)))
    fine = np.geomspace(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)], 100_001)
    return max(0.0, float(bound(fine).min()))


def classic_rho_closed_form(epsilon, delta):
    """Solve rho + 2 sqrt(rho L) = eps for rho: sqrt(rho) = sqrt(L + eps) - sqrt(L)."""
    log_inv_delta = math.log(1.0 / delta)
    return (math.sqrt(log_inv_delta + epsilon) - math.sqrt(log_inv_delta)) ** 2


def gaussian_exact_delta(epsilon, sigma, sensitivity=1.0):
    """The exact privacy profile of the Gaussian mechanism (Balle and Wang 2018, Thm. 8)."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b)


# ---------------------------------------------------------------------- gaussian_rho


@pytest.mark.parametrize("sensitivity, sigma", [(1.0, 1.0), (2.0, 0.5), (0.3, 7.0)])
def test_gaussian_rho(sensitivity, sigma):
    expected = sensitivity**2 / (2 * sigma**2)
    assert gaussian_rho(sensitivity, sigma) == pytest.approx(expected, rel=1e-15)


def test_gaussian_rho_hand_values():
    assert gaussian_rho(1.0, 1.0) == 0.5
    assert gaussian_rho(2.0, 0.5) == 8.0
    assert gaussian_rho(1, 10) == pytest.approx(0.005, rel=1e-15)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_gaussian_rho_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_rho(bad, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_rho(1.0, bad)


def test_gaussian_rho_rejects_non_numbers():
    with pytest.raises(TypeError, match="sigma"):
        gaussian_rho(1.0, "1")
    with pytest.raises(TypeError, match="sensitivity"):
        gaussian_rho(True, 1.0)


# ----------------------------------------------------------------- zcdp_to_approx_dp


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_classic_conversion_is_the_bun_steinke_formula(rho, delta):
    expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert zcdp_to_approx_dp(rho, delta, method="classic") == pytest.approx(expected, rel=1e-15)


def test_classic_conversion_hand_value():
    # 0.5 + 2 sqrt(0.5 ln 1e5) = 0.5 + 2 * 2.399263... = 5.298526...
    assert zcdp_to_approx_dp(0.5, 1e-5, method="classic") == pytest.approx(5.2985264, abs=1e-6)


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_cks_conversion_matches_brute_force_minimum(rho, delta):
    eps = zcdp_to_approx_dp(rho, delta)
    assert eps == pytest.approx(brute_force_cks(rho, delta), rel=1e-6, abs=1e-12)
    assert eps <= zcdp_to_approx_dp(rho, delta, method="classic")


def test_cks_is_strictly_tighter_than_classic():
    for rho in [1e-3, 0.1, 1.0, 5.0]:
        for delta in [1e-10, 1e-5]:
            cks = zcdp_to_approx_dp(rho, delta)
            classic = zcdp_to_approx_dp(rho, delta, method="classic")
            assert 0 < cks < classic


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("rho", [1e-3, 0.05, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_conversion_is_sound_for_the_gaussian(method, rho, delta):
    # The exact delta of a Gaussian at the converted eps must not exceed the target.
    sigma = 1.0 / math.sqrt(2.0 * rho)
    eps = zcdp_to_approx_dp(rho, delta, method=method)
    assert gaussian_exact_delta(eps, sigma) <= delta * (1 + 1e-9)


def test_cks_may_report_zero_for_tiny_rho():
    # A negative CKS bound still implies (0, delta)-DP; the Gaussian agrees (TV <= delta).
    rho, delta = 1e-4, 1e-2
    assert zcdp_to_approx_dp(rho, delta) == 0.0
    assert gaussian_exact_delta(0.0, 1.0 / math.sqrt(2 * rho)) <= delta
    assert zcdp_to_approx_dp(rho, delta, method="classic") > 0.0


@pytest.mark.parametrize("method", METHODS)
def test_zero_rho_is_zero_epsilon(method):
    assert zcdp_to_approx_dp(0.0, 1e-5, method=method) == 0.0
    assert zcdp_to_approx_dp(0, 1e-5, method=method) == 0.0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.5])
def test_conversion_is_monotone_in_rho(method, delta):
    rhos = np.geomspace(1e-6, 100.0, 120)
    eps = np.array([zcdp_to_approx_dp(r, delta, method=method) for r in rhos])
    assert np.all(np.diff(eps) >= 0)
    assert eps[-1] > 100.0  # eps >= rho for large rho
    assert np.all(np.diff(eps)[eps[:-1] > 0] > 0)  # strictly increasing once positive


@pytest.mark.parametrize("method", METHODS)
def test_conversion_is_decreasing_in_delta(method):
    eps = [zcdp_to_approx_dp(0.1, d, method=method) for d in [1e-12, 1e-8, 1e-4, 1e-1]]
    assert all(a > b for a, b in zip(eps, eps[1:], strict=False))


# ----------------------------------------------------------------- approx_dp_to_zcdp


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2, 0.5, 0.99])
def test_approx_dp_to_zcdp_is_the_tight_inverse(method, epsilon, delta):
    rho = approx_dp_to_zcdp(epsilon, delta, method=method)
    assert rho > 0
    assert zcdp_to_approx_dp(rho, delta, method=method) <= epsilon
    assert zcdp_to_approx_dp(rho * (1 + 1e-6), delta, method=method) > epsilon


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_classic_inverse_matches_closed_form(epsilon, delta):
    rho = approx_dp_to_zcdp(epsilon, delta, method="classic")
    assert rho == pytest.approx(classic_rho_closed_form(epsilon, delta), rel=1e-9)


def test_cks_allows_more_rho_than_classic():
    for epsilon, delta in [(0.1, 1e-10), (1.0, 1e-5), (8.0, 1e-3)]:
        assert approx_dp_to_zcdp(epsilon, delta) > approx_dp_to_zcdp(
            epsilon, delta, method="classic"
        )


def test_approx_dp_to_zcdp_tiny_epsilon_errs_on_the_safe_side():
    for epsilon in [1e-20, 1e-100]:
        rho = approx_dp_to_zcdp(epsilon, 1e-5, method="classic")
        assert 0 < rho and zcdp_to_approx_dp(rho, 1e-5, method="classic") <= epsilon
    # Below what a float rho can express the answer is 0 (no Gaussian is private enough).
    assert approx_dp_to_zcdp(1e-200, 1e-5, method="classic") == 0.0
    assert gaussian_sigma_for_approx_dp(1e-200, 1e-5, method="classic") == math.inf


# ---------------------------------------------------------- gaussian_sigma_for_approx_dp


def test_sigma_hand_value_classic():
    # L = ln 1e5 = 11.512925; rho = (sqrt(12.512925) - sqrt(11.512925))^2 = 0.0208193;
    # sigma = 1 / sqrt(2 rho) = 4.90056.
    sigma = gaussian_sigma_for_approx_dp(1.0, 1e-5, method="classic")
    assert sigma == pytest.approx(4.9006, abs=1e-4)
    expected = 1 / math.sqrt(2 * classic_rho_closed_form(1.0, 1e-5))
    assert sigma == pytest.approx(expected, rel=1e-9)


def test_sigma_cks_is_smaller_than_classic_but_not_below_the_exact_gaussian():
    # The optimal (analytic) Gaussian for eps=1, delta=1e-5 has sigma ~ 3.73
    # (Balle and Wang 2018); any valid zCDP-based sigma must be at least that.
    classic = gaussian_sigma_for_approx_dp(1.0, 1e-5, method="classic")
    cks = gaussian_sigma_for_approx_dp(1.0, 1e-5)
    assert 3.7 < cks < classic
    assert gaussian_exact_delta(1.0, cks) <= 1e-5


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-2])
@pytest.mark.parametrize("sensitivity", [1.0, 0.3, 7.0])
def test_sigma_is_sufficient_and_tight(method, epsilon, delta, sensitivity):
    sigma = gaussian_sigma_for_approx_dp(epsilon, delta, sensitivity=sensitivity, method=method)
    rho = gaussian_rho(sensitivity, sigma)
    assert zcdp_to_approx_dp(rho, delta, method=method) <= epsilon
    smaller = gaussian_rho(sensitivity, sigma * (1 - 1e-6))
    assert zcdp_to_approx_dp(smaller, delta, method=method) > epsilon


def test_sigma_scales_with_sensitivity():
    base = gaussian_sigma_for_approx_dp(1.0, 1e-6)
    assert gaussian_sigma_for_approx_dp(1.0, 1e-6, sensitivity=3.0) == pytest.approx(
        3 * base, rel=1e-12
    )


def test_sigma_never_rounds_below_the_target():
    # A sigma -> rho round trip can land an ulp above rho; the result must absorb that.
    # This grid held such a case (eps ~ 0.0404) for an earlier, unrounded version.
    for epsilon in np.geomspace(0.01, 50.0, 300):
        sigma = gaussian_sigma_for_approx_dp(float(epsilon), 1e-5, sensitivity=7.0)
        rho = gaussian_rho(7.0, sigma)
        assert zcdp_to_approx_dp(rho, 1e-5) <= epsilon


# -------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, 1.5, math.nan, math.inf])
def test_bad_delta_is_rejected(delta):
    with pytest.raises(ValueError, match="delta"):
        zcdp_to_approx_dp(0.5, delta)
    with pytest.raises(ValueError, match="delta"):
        approx_dp_to_zcdp(1.0, delta)
    with pytest.raises(ValueError, match="delta"):
        gaussian_sigma_for_approx_dp(1.0, delta)


@pytest.mark.parametrize("delta", ["1e-5", True, None])
def test_non_numeric_delta_is_rejected(delta):
    with pytest.raises(TypeError, match="delta"):
        zcdp_to_approx_dp(0.5, delta)
    with pytest.raises(TypeError, match="delta"):
        approx_dp_to_zcdp(1.0, delta)


@pytest.mark.parametrize("rho", [-1e-12, -1.0, math.nan, math.inf])
def test_bad_rho_is_rejected(rho):
    with pytest.raises(ValueError, match="rho"):
        zcdp_to_approx_dp(rho, 1e-5)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.nan, math.inf])
def test_bad_epsilon_is_rejected(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        approx_dp_to_zcdp(epsilon, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_sigma_for_approx_dp(epsilon, 1e-5)


def test_non_numeric_inputs_are_rejected():
    with pytest.raises(TypeError, match="rho"):
        zcdp_to_approx_dp("0.5", 1e-5)
    with pytest.raises(TypeError, match="epsilon"):
        approx_dp_to_zcdp(None, 1e-5)
    with pytest.raises(TypeError, match="sensitivity"):
        gaussian_sigma_for_approx_dp(1.0, 1e-5, sensitivity="1")


@pytest.mark.parametrize("method", ["rdp", "CKS", "", None])
def test_unknown_method_is_rejected(method):
    with pytest.raises(ValueError, match="method"):
        zcdp_to_approx_dp(0.5, 1e-5, method=method)
    with pytest.raises(ValueError, match="method"):
        approx_dp_to_zcdp(1.0, 1e-5, method=method)
    with pytest.raises(ValueError, match="method"):
        gaussian_sigma_for_approx_dp(1.0, 1e-5, method=method)
