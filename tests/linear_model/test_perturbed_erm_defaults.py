"""DPLinearSVC's C="auto" under objective perturbation: the Huber hinge's two-branch rule
(Chaudhuri et al. 2011's bias/noise balance with a reference norm sqrt(d) while the noise
share nu is at most a class's share 1/K of the gradient, the hinge's linear zone beyond),
resolved from public inputs only."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_labeldp.linear_model import DPLinearSVC
from sklearn_labeldp.linear_model._losses import HuberHingeLoss
from sklearn_labeldp.linear_model._perturbed_erm import (
    auto_perturbation_regularization,
    huber_objective_regularization,
)


def _data(n, k, n_features=4, seed=0):
    X, y = make_blobs(n, n_features=n_features, centers=k, cluster_std=2.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


def _expected_lambda(n, d, k, epsilon, h):
    # Written out independently of the library: the Huber hinge's label-change gradient
    # bound is 2, epsilon / 2 per one-vs-rest problem when k > 2; nu = d g / (n eps).
    eps_problem = epsilon if k == 2 else epsilon / 2
    nu = d * 2.0 / (n * eps_problem)
    if nu <= 1 / k:  # the noise share against a class's share of the mean gradient
        # unit margin for mapped rows [x / R, 1] / sqrt(2): ||f0|| = sqrt(2 d)
        reg, branch = nu / math.sqrt(d), "margin"
    else:  # the ridge stops growing past twice a class's share
        capped = min(nu, 2 / k)
        reg, branch = (capped / (1 - h) if h < 1 else capped / (2 * h)), "linear zone"
    return max(reg, 1 / (2 * n)), branch  # never below scikit-learn's C = 1


@pytest.mark.parametrize(("n", "k", "epsilon", "h", "branch"), [
    (300, 2, 2.0, 0.5, "margin"),         # nu = 0.017 <= 1/2
    (300, 3, 0.5, 0.5, "margin"),         # nu = 0.13 <= 1/3
    (300, 3, 0.15, 0.5, "linear zone"),   # nu = 0.44 > 1/3
    (120, 3, 0.4, 0.25, "linear zone"),   # nu = 0.42
    (120, 3, 0.4, 2.0, "linear zone"),    # h >= 1: no linear zone, Lambda = nu / (2h)
    (120, 3, 0.15, 0.5, "linear zone"),   # nu = 1.11 > 2/3: Lambda stays at (2/3) / (1 - h)
])
def test_huber_rule_matches_an_independent_computation(n, k, epsilon, h, branch):
    X, y = _data(n, k)
    d = X.shape[1] + 1
    reg, got_branch = _expected_lambda(n, d, k, epsilon, h)
    assert got_branch == branch
    assert auto_perturbation_regularization(
        "objective", epsilon=epsilon, n_samples=n, n_classes=k, n_features=d,
        loss=HuberHingeLoss(h), privacy="label") == pytest.approx(reg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one-vs-rest noise warning in the noisy cases
        fit = DPLinearSVC(epsilon=epsilon, solver="objective", huber_width=h, data_norm=3.0,
                          classes=list(range(k)), random_state=0).fit(X, y)
    # Recorded: the Lambda the noise was calibrated with, and its scikit-learn C.
    assert fit.mechanism_params_["regularization"] == pytest.approx(reg)
    assert fit.C_ == fit.mechanism_params_["C"] == pytest.approx(1 / (2 * n * reg))


def test_huber_rule_without_intercept_uses_the_unscaled_rows():
    # Without the intercept the mapped rows are x / R (no 1 / sqrt(2)), d = p, and the
    # unit-margin predictor has norm sqrt(d): Lambda = sqrt(2) nu / sqrt(d), C = 1 / (n Lambda).
    n, k, epsilon = 300, 3, 0.5
    X, y = _data(n, k)
    d = X.shape[1]
    nu = d * 2.0 / (n * epsilon / 2)
    reg = math.sqrt(2) * nu / math.sqrt(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = DPLinearSVC(epsilon=epsilon, solver="objective", fit_intercept=False, data_norm=3.0,
                          classes=list(range(k)), random_state=0).fit(X, y)
    assert nu <= 1 / k  # the margin branch
    assert fit.mechanism_params_["regularization"] == pytest.approx(reg)
    assert fit.C_ == pytest.approx(1 / (n * reg))


def test_huber_rule_switches_where_the_noise_outweighs_a_class():
    # The switch is at nu = 1 / K: just below it the margin branch's Lambda is
    # 1 / (K sqrt(d)), just above it 1 / (K (1 - h)): more ridge (a jump up).
    n, d, k, h = 1257, 65, 10, 0.5
    switch = 1 / k
    below = huber_objective_regularization(switch * (1 - 1e-9), n, d, k, h)
    above = huber_objective_regularization(switch * (1 + 1e-9), n, d, k, h)
    assert below == pytest.approx(1 / (k * math.sqrt(d)))
    assert above == pytest.approx(switch / (1 - h))
    # Monotone within each branch; two classes switch later (1/2).
    assert huber_objective_regularization(0.5 * switch, n, d, k, h) < below
    assert huber_objective_regularization(2 * switch, n, d, k, h) > above
    # Past twice a class's share the ridge stays at its value there (the digits at eps 0.5).
    assert huber_objective_regularization(4.1 * switch, n, d, k, h) == pytest.approx(
        2 * switch / (1 - h))
    assert huber_objective_regularization(4.1 * switch, n, d, k, 2.0) == pytest.approx(
        2 * switch / 4.0)
    assert huber_objective_regularization(0.3, n, d, 2, h) == pytest.approx(0.3 / math.sqrt(d))
    # Without the intercept's column the mapped rows are x / R, twice the energy:
    # the reference predictor's norm is sqrt(d), not sqrt(2 d).
    assert huber_objective_regularization(0.3, n, d, 2, h, fit_intercept=False) == (
        pytest.approx(math.sqrt(2) * 0.3 / math.sqrt(d)))
    # As the noise vanishes the ridge stops at scikit-learn's C = 1: 1 / (2n).
    assert huber_objective_regularization(1e-9, n, d, k, h) == pytest.approx(1 / (2 * n))
    assert huber_objective_regularization(0.026, n, d, k, h) > 1 / (2 * n)  # digits, eps 8


def test_output_perturbation_of_the_hinge_keeps_the_noise_share():
    n, d, k, eps = 300, 5, 3, 2.0
    nu = d * 2.0 / (n * eps / 2)
    assert auto_perturbation_regularization(
        "output", epsilon=eps, n_samples=n, n_classes=k, n_features=d,
        loss=HuberHingeLoss(0.5), privacy="full") == pytest.approx(nu)


@pytest.mark.parametrize(("epsilon", "privacy"), [(2.0, "label"), (0.15, "full")])
def test_huber_rule_reads_no_label_and_a_user_value_wins(epsilon, privacy):
    # Both branches (nu = 0.03 and 0.44 at n = 300, K = 3): permuted and constant labels
    # resolve the same C_; an explicit C is used as given.
    X, y = _data(300, 3)
    rng = np.random.default_rng(0)
    kw = dict(epsilon=epsilon, privacy=privacy, solver="objective", data_norm=3.0,
              classes=[0, 1, 2], random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [DPLinearSVC(**kw).fit(X, ys) for ys in (y, rng.permutation(y), np.zeros_like(y))]
        given = DPLinearSVC(C=0.3, **kw).fit(X, y)
    assert fits[0].C_ == fits[1].C_ == fits[2].C_
    assert (fits[0].mechanism_params_["regularization"]
            == fits[1].mechanism_params_["regularization"])
    assert given.C_ == given.mechanism_params_["C"] == 0.3
    assert given.mechanism_params_["regularization"] == pytest.approx(1 / (2 * 300 * 0.3))
    assert given.get_params()["C"] == 0.3


def test_linear_zone_branch_fits_the_noisy_centroid():
    # In the noise-dominated branch the fit should be the noisy class-mean difference up to
    # the rows the noise pushes past the linear zone: its predictions stay those of a much
    # larger ridge (the centroid's plateau) for most test rows, and it beats chance.
    X, y = _data(2000, 3, n_features=20)
    Xtr, ytr, Xte, yte = X[:1000], y[:1000], X[1000:], y[1000:]
    kw = dict(epsilon=0.2, solver="objective", data_norm=4.0, classes=[0, 1, 2],
              random_state=0)  # nu = 0.42
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = DPLinearSVC(**kw).fit(Xtr, ytr)
        plateau = DPLinearSVC(C=auto.C_ * 1e-3, **kw).fit(Xtr, ytr)
    d = Xtr.shape[1] + 1
    assert _expected_lambda(1000, d, 3, 0.2, 0.5)[1] == "linear zone"
    assert np.mean(auto.predict(Xte) == plateau.predict(Xte)) > 0.9
    assert auto.score(Xte, yte) > 0.5
