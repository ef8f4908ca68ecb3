"""Worked values of the linear models' private calibration helpers.

Each value is computed by hand from the formula in the helper's docstring
(Chaudhuri, Monteleoni and Sarwate 2011; Mehta et al. 2023), so a change in a
sensitivity, a budget split or a noise scale fails here with the number it
should have been.
"""

import math

import numpy as np
import pytest

from sklearn_labeldp.accounting import (
    approx_dp_to_zcdp,
    gaussian_delta,
    group_privacy_example_budget,
    group_privacy_label_budget,
)
from sklearn_labeldp.linear_model._calibration import (
    calibrate_exact_gaussian_releases,
    first_order_label_sensitivity,
    gaussian_release_mus,
    objective_perturbation_params,
    one_vs_rest_epsilon,
    output_perturbation_beta,
    perturbation_example_epsilon,
    perturbation_params,
    second_order_label_sensitivities,
    second_order_params,
    second_order_release_counts,
    second_order_sensitivities,
)
from sklearn_labeldp.linear_model._gram_noise import project_psd
from sklearn_labeldp.linear_model._least_squares import (
    least_squares_label_sensitivities,
    least_squares_sensitivities,
    noisy_least_squares_statistics,
)
from sklearn_labeldp.linear_model._losses import HuberHingeLoss, LogisticLoss, neighbour_bounds
from sklearn_labeldp.linear_model._preprocessing import clip_rows, plan_row_bound


def test_loss_constants():
    assert LogisticLoss().derivative(0.0) == -0.5
    assert HuberHingeLoss(0.5).c == 1.0  # c = 1 / (2 h)
    # (gradient change, Hessian rank change) between neighbours.
    assert neighbour_bounds(LogisticLoss(), "label") == (1.0, 0)
    assert neighbour_bounds(LogisticLoss(), "full") == (2.0, 2)
    assert neighbour_bounds(HuberHingeLoss(0.5), "label") == (2.0, 1)


def test_output_and_objective_perturbation_constants():
    assert output_perturbation_beta(1.0, 100, 0.01) == 0.5  # n Lambda eps / 2
    eps_prime, extra = objective_perturbation_params(1.0, 100, 0.01, 0.25)
    assert eps_prime == pytest.approx(1 - 2 * math.log(1.25)) and extra == 0.0
    assert objective_perturbation_params(1.0, 100, 0.01, 0.25, hessian_rank=0) == (1.0, 0.0)
    # eps'(0) = 1 - 2 log(1 + 0.25 / 0.5) = 0.189 < eps / 2: add Delta, keep eps / 2.
    eps_prime, extra = objective_perturbation_params(1.0, 100, 0.005, 0.25)
    assert eps_prime == 0.5
    assert extra == pytest.approx(0.25 / (100 * (math.exp(0.25) - 1)) - 0.005)
    params = perturbation_params("output", epsilon=1.0, n_samples=100, n_classes=2,
                                 reg=0.01, loss=LogisticLoss(), privacy="label")
    assert params["noise_scale"] == 1.0  # 1 / beta, beta = n Lambda eps / g, g = 1


def test_one_vs_rest_budget_split():
    # A label change touches two of the K binary problems: the budget is the label one.
    assert one_vs_rest_epsilon(1.0, 2) == (1, 1.0)
    assert one_vs_rest_epsilon(1.0, 5) == (5, 0.5)


@pytest.mark.parametrize("solver", ["objective", "output"])
@pytest.mark.parametrize("loss", [LogisticLoss(), HuberHingeLoss(0.5)], ids=["logistic", "huber"])
@pytest.mark.parametrize("n_classes", [2, 5])
def test_full_dp_perturbation_is_calibrated_for_the_label_change(solver, loss, n_classes):
    # privacy="full" draws the label calibration's noise (the ledger's relation), and
    # reports the substitution guarantee of that noise beside it.
    kwargs = dict(epsilon=1.0, n_samples=100, n_classes=n_classes, reg=0.01, loss=loss)
    full = perturbation_params(solver, privacy="full", **kwargs)
    assert full == perturbation_params(solver, privacy="label", **kwargs)
    g_label, _ = neighbour_bounds(loss, "label")
    touched = 1 if n_classes == 2 else 2
    scale, n_lambda = full["noise_scale"], 100 * 0.01
    if solver == "output":
        # Label: the minimiser moves by g_label / (n Lambda) in each touched problem.
        assert touched * g_label / (n_lambda * scale) == pytest.approx(1.0)
        per_problem = 2 / (n_lambda * scale)  # substitution: 2 / (n Lambda)
    else:
        delta_reg = full["extra_regularization"]
        jacobian = math.log1p(loss.c / (100 * (0.01 + delta_reg)))
        rank = 0 if loss.even_curvature else 1
        assert touched * (g_label / scale + rank * jacobian) == pytest.approx(1.0)
        per_problem = 2 / scale + 2 * jacobian
    example = perturbation_example_epsilon(solver, full, 100)
    assert example == pytest.approx(full["n_problems"] * per_problem)
    # Logistic, output: 2 eps with two classes, K eps with K (2 / g_label per problem).
    if solver == "output" and loss.even_curvature:
        assert example == pytest.approx(2.0 if n_classes == 2 else n_classes)


def test_second_order_constants():
    assert second_order_sensitivities("fc", 4, "full") == (4, {"gradient": 2.0, "gram": 1.0})
    # A label change moves the gradient by sqrt(2) (1 for two classes), never the curvature.
    assert second_order_label_sensitivities("fc", 4, "full") == {"gradient": math.sqrt(2),
                                                                  "gram": 0.0}
    assert second_order_label_sensitivities("newton", 2, "full") == {"gradient": 1.0,
                                                                      "hessian": 0.0}
    assert second_order_release_counts("newton", "full", 5) == {"gradient": 5, "hessian": 5}
    assert second_order_release_counts("fc", "full", 5) == {"gradient": 5, "gram": 1}
    params = second_order_params("newton", epsilon=1.0, delta=1e-5, n_samples=100,
                                 n_classes=2, reg=0.01, privacy="label", n_noisy_steps=5)
    assert sorted(params["noise_scales"]) == ["gradient"]  # label DP noises the gradient only


def test_gaussian_release_accounting_by_hand():
    # T = 4 gradients of noise s * 2 that a label change moves by sqrt(2), and G once
    # (noise s * 1) that it does not move: mu^2 = 4 * (sqrt(2) / 2)^2 / s^2 = 2 / s^2.
    counts, sens = {"gradient": 4, "gram": 1}, {"gradient": 2.0, "gram": 1.0}
    shifts = {"gradient": math.sqrt(2.0), "gram": 0.0}
    mu, rho = gaussian_release_mus(2.0, counts, sens, shifts)
    assert mu == pytest.approx(math.sqrt(0.5)) and rho == pytest.approx(0.25)
    # Add/remove (shifts = sensitivities): mu^2 = (4 + 1) / s^2.
    assert gaussian_release_mus(2.0, counts, sens, sens)[1] == pytest.approx(5 / 8)


def test_exact_gaussian_calibration_by_hand():
    # The releases of the test above compose into one Gaussian of mu = sqrt(W) / s
    # noise stds, W = 4 (sqrt(2) / 2)^2 = 2; mu is where the exact profile (Balle and
    # Wang 2018) meets delta, and the zCDP calibration needs more noise.
    counts, sens = {"gradient": 4, "gram": 1}, {"gradient": 2.0, "gram": 1.0}
    shifts = {"gradient": math.sqrt(2.0), "gram": 0.0}
    s, mu = calibrate_exact_gaussian_releases(1.0, 1e-5, counts, sens, shifts)
    assert mu == pytest.approx(math.sqrt(2.0) / s, rel=1e-12)
    assert gaussian_delta(1.0, mu) <= 1e-5 < gaussian_delta(1.0, mu * (1 + 1e-6))
    # The zCDP calibration (Canonne, Kamath and Steinke 2020's conversion) of the same
    # one Gaussian of sensitivity sqrt(W) = sqrt(2) needs more noise.
    rho = approx_dp_to_zcdp(1.0, 1e-5)
    assert 1.05 < math.sqrt(2.0 / (2 * rho)) / s < 1.3


def test_full_dp_second_order_is_charged_for_the_label_change():
    # Newton, two classes, T = 5, full DP: the gradient (noise s * 1, shift 1) is a
    # Gaussian of mu^2 = 5 / s^2 for a label change; the Hessians (shift 0) cost
    # nothing. Mehta et al.'s add/remove releases are 2 T / s^2 = 10 / s^2.
    _, mu = calibrate_exact_gaussian_releases(1.0, 1e-5, {"g": 1}, {"g": 1.0}, {"g": 1.0})
    params = second_order_params("newton", epsilon=1.0, delta=1e-5, n_samples=100,
                                 n_classes=2, reg=0.01, privacy="full", n_noisy_steps=5)
    s = params["noise_multiplier"]
    assert s == pytest.approx(math.sqrt(5) / mu, rel=1e-12)
    assert params["gaussian_mu"] == pytest.approx(mu, rel=1e-12)
    assert params["rho"] == pytest.approx(mu**2 / 2, rel=1e-12)
    assert params["example_gaussian_mu"] == pytest.approx(math.sqrt(10) / s, rel=1e-12)
    assert params["example_rho"] == pytest.approx(5 / s**2, rel=1e-12)
    assert params["label_sensitivities"] == {"gradient": 1.0, "hessian": 0.0}
    # K = 4, FC: the gradient noise s * 2 moves by sqrt(2): mu^2 = T (sqrt(2) / 2)^2 / s^2.
    params = second_order_params("fc", epsilon=1.0, delta=1e-5, n_samples=100,
                                 n_classes=4, reg=0.01, privacy="full", n_noisy_steps=5)
    s = params["noise_multiplier"]
    assert s == pytest.approx(math.sqrt(5 * 0.5) / mu, rel=1e-12)
    assert params["example_rho"] == pytest.approx(6 / (2 * s**2), rel=1e-12)


def test_first_order_label_sensitivity_and_group_privacy():
    assert first_order_label_sensitivity(2, None) == 1.0
    assert first_order_label_sensitivity(2, 0.3) == 0.6  # 2 C
    assert first_order_label_sensitivity(2, 0.8) == 1.0  # the unclipped bound
    assert first_order_label_sensitivity(5, 0.5) == 1.0  # 2 C < sqrt(2)
    assert first_order_label_sensitivity(5, 0.8) == pytest.approx(math.sqrt(2))
    # (eps_ex, delta_ex) = (eps / 2, delta / (1 + e^(eps / 2))), and back.
    example = group_privacy_example_budget(2.0, 1e-5)
    assert example == (1.0, pytest.approx(1e-5 / (1 + math.e)))
    assert group_privacy_label_budget(*example, 2.0, 1e-5) == (2.0, pytest.approx(1e-5))
    assert group_privacy_label_budget(0.9, example[1], 2.0, 1e-5) == (
        1.8, pytest.approx((1 + math.exp(0.9)) * 1e-5 / (1 + math.e)))
    # A huge label budget keeps delta_ex a normal float (eps_ex capped at 500).
    eps_ex, delta_ex = group_privacy_example_budget(1e9, 1e-5)
    assert eps_ex == 500.0 and delta_ex > 0


def test_least_squares_statistics():
    sensitivities = least_squares_sensitivities("label", "weighted", 2.0)
    assert sensitivities["A"] == pytest.approx(4 * math.sqrt(2))
    assert sensitivities["b"] == pytest.approx(2 * math.sqrt(2))
    assert "G" not in sensitivities  # the Gram matrix is public under label DP
    # Full DP: noise scaled to the add/remove sensitivities, a label change moves G by 0.
    assert least_squares_label_sensitivities("full", "weighted", 2.0) == {
        "b": pytest.approx(2 * math.sqrt(2)), "A": pytest.approx(4 * math.sqrt(2)), "G": 0.0}
    assert least_squares_sensitivities("full", "ridge", 2.0) == {"b": 2.0, "G": 4.0}
    Z = np.array([[0.6, 0.0], [0.0, 0.8], [0.5, 0.5]])
    stats = noisy_least_squares_statistics(
        np.array([0, 1, 1]), Z=Z, n_classes=2, privacy="label", formulation="ridge",
        noise_multiplier=0.0, data_norm=1.0, random_state=0)
    np.testing.assert_allclose(stats["b"], [[0.6, 0.5], [0.0, 1.3]])  # per-class sums


def test_row_bound_and_psd_projection():
    X = np.array([[3.0, 4.0], [0.3, 0.4]])
    # Norms 5 and 0.5; the median of two values interpolates linearly:
    # 0.5 + 0.5 (5 - 0.5) = 2.75, which clips the first row (1 of 2, no warning for "auto").
    bound, attributes = plan_row_bound(X, "auto", privacy="label", quantile=0.5)
    assert bound == attributes["data_norm_"] == pytest.approx(2.75, rel=1e-14)
    assert attributes["clipped_fraction_"] == 0.5
    assert plan_row_bound(X, 5.0, privacy="label") == (
        5.0, {"data_norm_": 5.0, "clipped_fraction_": 0.0})
    np.testing.assert_allclose(clip_rows(X, 1.0), [[0.6, 0.8], [0.3, 0.4]])
    np.testing.assert_array_equal(project_psd(np.diag([1.0, -2.0])), np.diag([1.0, 0.0]))
