"""DPLogisticRegression and DPLinearSVC: mechanisms, budget split, agreement, checks."""

import inspect
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.linalg import LinAlgError, cho_factor
from scipy.linalg.blas import ssyrk
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr
from sklearn.datasets import load_breast_cancer, make_blobs, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.exceptions import ConvergenceError, ReleaseError
from sklearn_labeldp.linear_model import _gram_noise, _second_order
from sklearn_labeldp.linear_model._calibration import (
    objective_perturbation_params,
    output_perturbation_beta,
    perturbation_example_epsilon,
    perturbation_params,
)
from sklearn_labeldp.linear_model._erm import DPLinearSVC, DPLogisticRegression
from sklearn_labeldp.linear_model._erm_base import _feature_map
from sklearn_labeldp.linear_model._losses import HuberHingeLoss, LogisticLoss, neighbour_bounds
from sklearn_labeldp.linear_model._minimise import factor_preconditioner, minimise
from sklearn_labeldp.linear_model._perturbed_erm import perturbed_erm, sample_l2_gamma_noise
from sklearn_labeldp.linear_model._second_order import noisy_second_order_logistic
from sklearn_labeldp.linear_model._solvers import SOLVERS
from sklearn_labeldp.linear_model._statistics import gradient_sum, gram_sum, hessian_sum

# --------------------------------------------------------------------------- data


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, test_size=0.3, random_state=0)


def _blobs(n_classes=5, n=600, seed=0):
    X, y = make_blobs(n, 4, centers=n_classes, cluster_std=2.0, random_state=seed)
    return X, y


# ------------------------------------------------------------------ exact Gaussian profile


def _profile_delta(epsilon, mu):
    """Balle and Wang (2018), Thm. 8: the Gaussian mechanism of ``mu`` noise stds is
    exactly (epsilon, delta)-DP for ``delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``."""
    return ndtr(-epsilon / mu + mu / 2) - math.exp(epsilon + log_ndtr(-epsilon / mu - mu / 2))


def _exact_mu(epsilon, delta):
    """The largest ``mu`` whose exact profile meets ``delta`` at ``epsilon``."""
    return brentq(lambda mu: _profile_delta(epsilon, mu) - delta, 1e-3, 50.0, xtol=1e-15,
                  rtol=1e-15)


def _exact_epsilon(mu, delta):
    """The smallest ``epsilon`` with ``_profile_delta(epsilon, mu) <= delta``."""
    return brentq(lambda e: _profile_delta(e, mu) - delta, 0.0, 100.0, xtol=1e-14, rtol=1e-15)


# --------------------------------------------------------------------------- noise


@pytest.mark.parametrize("dim", [1, 4, 20])
def test_gamma_noise_norms_follow_gamma(dim):
    rng = np.random.default_rng(dim)
    scale = 0.7
    norms = [np.linalg.norm(sample_l2_gamma_noise(dim, scale, rng)) for _ in range(3000)]
    assert stats.kstest(norms, stats.gamma(dim, scale=scale).cdf).pvalue > 0.01
    # A wrong shape is detected by the same test.
    assert stats.kstest(norms, stats.gamma(dim + 1, scale=scale).cdf).pvalue < 1e-6


def test_gamma_noise_direction_is_uniform():
    rng = np.random.default_rng(1)
    b = np.array([sample_l2_gamma_noise(3, 2.0, rng) for _ in range(3000)])
    u = b / np.linalg.norm(b, axis=1, keepdims=True)
    # Archimedes: each coordinate of a uniform point on S^2 is Uniform(-1, 1).
    for k in range(3):
        assert stats.kstest(u[:, k], stats.uniform(-1, 2).cdf).pvalue > 0.01
    assert np.abs(u.mean(axis=0)).max() < 0.05


def test_output_perturbation_noise_of_the_mechanism():
    """coef - exact minimiser has norm ~ Gamma(d, 1/beta), beta = n Lambda eps (full DP
    calibrated for a label change: the logistic minimiser moves by <= 1 / (n Lambda))."""
    X, y = _blobs(2, n=60)
    Z = _feature_map(X, 5.0, True)
    n, d = Z.shape
    reg, eps = 1.0 / (2.0 * n), 3.0
    f_star, _ = minimise(LogisticLoss(), Z, np.where(y == 1, 1.0, -1.0), reg, np.zeros(d),
                         1e-10, 1000)
    params = perturbation_params("output", epsilon=eps, n_samples=n, n_classes=2, reg=reg,
                                 loss=LogisticLoss(), privacy="full")
    beta = output_perturbation_beta(eps, n, reg, 1.0)
    assert beta == pytest.approx(n * reg * eps)
    assert params["noise_scale"] == pytest.approx(1 / beta)
    # The substitution bound (g = 2) is twice the label one: the same noise is 2 eps-DP
    # for whole examples.
    assert output_perturbation_beta(eps, n, reg) == pytest.approx(n * reg * eps / 2)
    assert perturbation_example_epsilon("output", params, n) == pytest.approx(2 * eps)
    norms = []
    for seed in range(400):
        coef = perturbed_erm(
            y, Z=Z, n_classes=2, loss=LogisticLoss(), solver="output", params=params,
            tol=1e-10, max_iter=1000, random_state=np.random.default_rng(seed),
        )
        norms.append(np.linalg.norm(coef[0] - f_star))
    assert stats.kstest(norms, stats.gamma(d, scale=1 / beta).cdf).pvalue > 0.01


# --------------------------------------------------------------------------- objective


def test_objective_perturbation_branch_without_extra_ridge():
    # eps = 1, n = 100, Lambda = 0.01, c = 1/4: c/(n Lambda) = 1/4.
    eps_prime, extra = objective_perturbation_params(1.0, 100, 0.01, 0.25)
    assert eps_prime == pytest.approx(1.0 - math.log(1 + 0.5 + 0.0625))
    assert eps_prime == pytest.approx(0.5537129)
    assert extra == 0.0


def test_objective_perturbation_branch_with_extra_ridge():
    # eps = 0.1, n = 100, Lambda = 0.001, c = 1/4: 0.1 - log(12.25) < 0.
    eps_prime, extra = objective_perturbation_params(0.1, 100, 0.001, 0.25)
    assert eps_prime == 0.05
    assert extra == pytest.approx(0.25 / (100 * (math.exp(0.025) - 1)) - 0.001)
    assert extra == pytest.approx(0.0977552, rel=1e-5)


# Adult, the benchmark's setting: n = 32,561, C = 0.1, Lambda = 1 / (C n), so n Lambda = 10.
ADULT_N = 32561
ADULT_REG = 1.0 / (0.1 * ADULT_N)


def test_adult_branch_values_by_hand():
    # Logistic loss, c = 1/4, whole examples (r = 2), n Lambda = 10. eps = 0.05:
    # eps'(0) = 0.05 - 2 log(1 + 0.25/10) = 0.000615 is above 0 (the paper's Alg. 2 would
    # keep Delta = 0 and eps' = 0.000615) but below eps / 2, so eps' = 0.025 and
    # Delta = 0.25 / (32561 (e^(0.05/4) - 1)) - 1/3256.1 = 6.1033e-4 - 3.0712e-4.
    eps_prime, extra = objective_perturbation_params(0.05, ADULT_N, ADULT_REG, 0.25)
    assert eps_prime == 0.025
    assert extra == pytest.approx(0.25 / (ADULT_N * math.expm1(0.0125)) - ADULT_REG, rel=1e-12)
    assert extra == pytest.approx(3.0321e-4, rel=1e-3)
    # eps = 0.04: eps'(0) = 0.04 - 0.049385 < 0, so eps' = eps / 2 and
    # Delta = 0.25 / (32561 (e^(0.04/4) - 1)) - 1/3256.1 = 7.6395e-4 - 3.0712e-4.
    eps_prime, extra = objective_perturbation_params(0.04, ADULT_N, ADULT_REG, 0.25)
    assert eps_prime == 0.02
    assert extra == pytest.approx(0.25 / (ADULT_N * math.expm1(0.01)) - ADULT_REG, rel=1e-12)
    assert extra == pytest.approx(4.568e-4, rel=1e-3)
    # Total ridge Lambda + Delta makes the Jacobian factor exactly e^(eps/2).
    assert 2 * math.log1p(0.25 / (ADULT_N * (ADULT_REG + extra))) == pytest.approx(0.02)
    # eps = 1: eps'(0) = 1 - 2 log(1.025) = 0.950615 > 0: no extra ridge.
    assert objective_perturbation_params(1.0, ADULT_N, ADULT_REG, 0.25) == (
        pytest.approx(0.950614775), 0.0)
    # Label change, Huber hinge h = 0.5 (c = 1, r = 1): eps'(0) = 0.05 - log(1.1) < 0.025;
    # Delta = 1 / (32561 (e^(0.05/2) - 1)) - Lambda = 9.0606e-4.
    eps_prime, extra = objective_perturbation_params(0.05, ADULT_N, ADULT_REG, 1.0,
                                                     hessian_rank=1)
    assert eps_prime == 0.025 and extra == pytest.approx(9.060558e-4, rel=1e-6)
    assert objective_perturbation_params(1.0, ADULT_N, ADULT_REG, 1.0, hessian_rank=1) == (
        pytest.approx(1 - math.log(1.1)), 0.0)
    # Label change, logistic (r = 0): no Jacobian term at all.
    assert objective_perturbation_params(0.05, ADULT_N, ADULT_REG, 0.25, hessian_rank=0) == (
        0.05, 0.0)


def _papers_rule(epsilon, n, reg, c, rank):
    """Chaudhuri et al. (2011), Alg. 2 read literally: Delta = 0 iff eps'(0) > 0."""
    eps_prime = epsilon - rank * math.log1p(c / (n * reg))
    if eps_prime > 0:
        return eps_prime, 0.0
    return epsilon / 2, c / (n * math.expm1(epsilon / (2 * rank))) - reg


@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("epsilon", [0.01, 0.05, 0.2, 1.0, 5.0])
def test_branch_rule_and_it_spends_exactly_epsilon(rank, epsilon):
    """Delta = 0 iff eps'(0) >= eps / 2; otherwise eps' = eps / 2 and the Jacobian the rest."""
    branches = set()
    for reg in np.geomspace(1e-6, 1e-1, 30):
        eps_prime, extra = objective_perturbation_params(epsilon, 1000, reg, 0.25,
                                                         hessian_rank=rank)
        at_zero = epsilon - rank * math.log1p(0.25 / (1000 * reg))
        if at_zero >= epsilon / 2:
            assert (eps_prime, extra) == (pytest.approx(at_zero, rel=1e-12), 0.0)
        else:
            assert eps_prime == epsilon / 2 and extra > 0
        branches.add(extra > 0)
        # The guarantee: eps' + r log(1 + c / (n (Lambda + Delta))) = eps.
        spent = eps_prime + rank * math.log1p(0.25 / (1000 * (reg + extra)))
        assert spent == pytest.approx(epsilon, rel=1e-9)
    assert branches == {True, False}


def test_amended_rule_is_never_worse_than_the_papers():
    """eps' >= Alg. 2's eps' everywhere, > in the band 0 < eps'(0) < eps / 2."""
    in_band = 0
    for epsilon in (0.01, 0.05, 0.1, 0.5, 1.0, 3.0):
        for n in (10, 1000, 32561):
            for reg in np.geomspace(1e-7, 1.0, 40):
                for c, rank in ((0.25, 1), (0.25, 2), (2.5, 1), (2.5, 2)):
                    new = objective_perturbation_params(epsilon, n, reg, c, hessian_rank=rank)
                    old = _papers_rule(epsilon, n, reg, c, rank)
                    assert new[0] >= old[0] and new[1] >= 0
                    if 0 < old[0] < epsilon / 2:
                        in_band += 1
                        assert new[0] == epsilon / 2 > old[0] and new[1] > 0
                    else:
                        assert new == (pytest.approx(old[0], rel=1e-12), pytest.approx(old[1]))
    assert in_band > 50
    # eps = 1e9 (a non-private fit): eps'(0) is huge, and e^(eps/(2r)) is never formed.
    assert objective_perturbation_params(1e9, 100, 1e-3, 0.25) == (
        pytest.approx(1e9 - 2 * math.log1p(2.5)), 0.0)


def test_delta_is_a_function_of_public_quantities():
    """Delta reads (eps, n, Lambda, c, r) only: two label vectors give the same plan."""
    assert list(inspect.signature(objective_perturbation_params).parameters) == [
        "epsilon", "n_samples", "reg", "c", "hessian_rank"]
    X, y = _blobs(2, n=200)
    # The Huber hinge's Hessian change under a label change has rank 1, so Delta > 0
    # here under either privacy; the logistic loss's has rank 0 (Delta = 0 always).
    for estimator in (DPLinearSVC(privacy="full"), DPLinearSVC(),
                      DPLogisticRegression(privacy="full")):
        estimator.set_params(epsilon=0.1, C=0.1, data_norm=20.0, classes=[0, 1],
                             random_state=0)
        plans = [estimator.fit(X, labels).mechanism_params_
                 for labels in (y, 1 - y, np.zeros_like(y))]
        assert (plans[0]["extra_regularization"] > 0) == isinstance(estimator, DPLinearSVC)
        assert plans[0] == plans[1] == plans[2]


def test_neighbour_bounds():
    m = np.linspace(-6, 6, 2001)
    logistic, huber = LogisticLoss(), HuberHingeLoss(0.5)
    # Label flip in a binary problem: gradient change (l'(m) + l'(-m)) x.
    assert np.allclose(np.abs(logistic.derivative(m) + logistic.derivative(-m)), 1.0)
    assert np.max(np.abs(huber.derivative(m) + huber.derivative(-m))) == pytest.approx(2.0)
    assert np.allclose(logistic.second_derivative(m), logistic.second_derivative(-m))
    assert not np.allclose(huber.second_derivative(m), huber.second_derivative(-m))
    assert neighbour_bounds(logistic, "label") == (1.0, 0)
    assert neighbour_bounds(huber, "label") == (2.0, 1)
    assert neighbour_bounds(logistic, "full") == neighbour_bounds(huber, "full") == (2.0, 2)


def _log_density(loss, Z, signs, reg_total, eps_prime, g, F):
    """log of the density of objective perturbation's output at each row of F (up to a
    constant shared by neighbours): -(eps'/g) ||b_D(f)|| + log det(d b_D / d f)."""
    n = Z.shape[0]
    out = []
    for f in F:
        m = signs * (Z @ f)
        b = -(Z.T @ (signs * loss.derivative(m)) + n * reg_total * f)
        J = (Z * loss.second_derivative(m)[:, None]).T @ Z + n * reg_total * np.eye(Z.shape[1])
        out.append(-(eps_prime / g) * np.linalg.norm(b) + np.linalg.slogdet(J)[1])
    return np.array(out)


@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("loss", [LogisticLoss(), HuberHingeLoss(0.1)], ids=["logistic", "huber"])
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_objective_perturbation_density_ratio_is_bounded(privacy, loss, epsilon):
    """The exact output density ratio of neighbours (change of variables, 2-D) <= e^eps."""
    rng = np.random.default_rng(0)
    n, reg = 4, 0.05  # tiny n Lambda: the Jacobian term matters
    g, rank = neighbour_bounds(loss, privacy)
    eps_prime, extra = objective_perturbation_params(epsilon, n, reg, loss.c, hessian_rank=rank)
    worst = 0.0
    for _ in range(20):
        Z = rng.normal(size=(n, 2))
        Z /= np.maximum(np.linalg.norm(Z, axis=1), 1.0)[:, None] * rng.uniform(1, 1.5, (n, 1))
        Z[0] /= np.linalg.norm(Z[0])  # the changed example on the sphere: the worst case
        signs = rng.choice([-1.0, 1.0], n)
        Z2, signs2 = Z.copy(), signs.copy()
        signs2[0] = -signs[0]
        if privacy == "full":
            Z2[0] = rng.normal(size=2)
            Z2[0] /= np.linalg.norm(Z2[0])
        F = np.vstack([rng.normal(scale=s, size=(300, 2)) for s in (0.3, 3.0, 30.0)])
        diff = (_log_density(loss, Z, signs, reg + extra, eps_prime, g, F)
                - _log_density(loss, Z2, signs2, reg + extra, eps_prime, g, F))
        worst = max(worst, np.abs(diff).max())
    assert worst <= epsilon * (1 + 1e-9)
    if privacy == "label" and isinstance(loss, LogisticLoss):
        # Tight: far out, b_D - b_D' = +-x is aligned with b, and the ratio reaches eps.
        assert worst > 0.95 * epsilon


def test_output_perturbation_label_sensitivity_of_logistic_minimiser():
    """A label flip moves the logistic minimiser by <= 1 / (n Lambda) (g = 1)."""
    rng = np.random.default_rng(3)
    n, reg = 30, 1.0  # strong ridge: the loss curvature hardly damps the move
    worst = 0.0
    for _ in range(30):
        Z = rng.normal(size=(n, 3))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        signs = rng.choice([-1.0, 1.0], n)
        f, _ = minimise(LogisticLoss(), Z, signs, reg, np.zeros(3), 1e-7, 1000)
        signs[0] *= -1
        f2, _ = minimise(LogisticLoss(), Z, signs, reg, np.zeros(3), 1e-7, 1000)
        worst = max(worst, np.linalg.norm(f - f2) * n * reg)
    assert 0.5 < worst <= 1.0 + 1e-4  # (the paper's g = 2 would allow 2)
    assert output_perturbation_beta(2.0, n, reg, 1.0) == pytest.approx(n * reg * 2.0)


@pytest.mark.parametrize(
    "estimator, c",
    [(DPLogisticRegression(), 0.25), (DPLinearSVC(huber_width=0.2), 2.5)],
)
@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("epsilon", [0.05, 5.0])
def test_estimator_uses_the_objective_branch(estimator, c, privacy, epsilon):
    X, y = _blobs(2, n=200)
    estimator.set_params(epsilon=epsilon, C=0.1, data_norm=20.0, classes=[0, 1], random_state=0,
                         privacy=privacy, solver="objective")
    estimator.fit(X, y)
    plan = estimator.mechanism_params_
    # Calibrated for a label change under either privacy (g, r of the label relation).
    g, rank = neighbour_bounds(estimator._loss(), "label")
    reg = 1.0 / (2 * 0.1 * 200)  # Lambda = 1 / (2 C n) on z with an intercept
    assert plan["regularization"] == pytest.approx(reg)
    expected = objective_perturbation_params(epsilon, 200, reg, c, hessian_rank=rank)
    assert (plan["epsilon_prime"], plan["extra_regularization"]) == expected
    assert (plan["gradient_sensitivity"], plan["hessian_rank"]) == (g, rank)
    assert plan["noise_scale"] == pytest.approx(g / expected[0])
    assert plan["curvature_bound"] == c
    if privacy == "full":
        # Substitution (Chaudhuri et al. 2011, Thm. 9: gradient change 2, Hessian rank 2)
        # with the noise actually drawn.
        example = 2 * expected[0] / g + 2 * math.log1p(c / (200 * (reg + expected[1])))
        assert estimator.example_epsilon_ == pytest.approx(example, rel=1e-12)
        assert estimator.example_epsilon_ > epsilon
    # Both branches are exercised where the Jacobian term exists.
    assert (expected[1] > 0) == (epsilon == 0.05 and rank > 0)


def test_huber_hinge_loss_bounds():
    loss = HuberHingeLoss(0.5)
    m = np.linspace(-3, 3, 2001)
    assert loss.c == 1.0
    assert np.all(np.abs(loss.derivative(m)) <= 1)
    assert np.all((loss.second_derivative(m) >= 0) & (loss.second_derivative(m) <= loss.c))
    # value is C^1: its numerical derivative matches the analytic one.
    num = np.gradient(loss.value(m), m)
    assert np.allclose(num[1:-1], loss.derivative(m)[1:-1], atol=1e-2)


# --------------------------------------------------------------------------- Gaussian


@pytest.mark.parametrize(
    "privacy, solver", [("label", "fc"), ("label", "newton"), ("full", "fc"), ("full", "newton")]
)
def test_newton_fc_gradient_noise_std_is_calibrated(privacy, solver):
    X, y = _blobs(5, n=400)
    Z = _feature_map(X, 20.0, True)
    n, d = Z.shape
    eps, delta, T = 1.0, 1e-5, 4
    mu = _exact_mu(eps, delta)
    # The noise std is s times the relation's sensitivity (sqrt(2) label, sqrt(K) = sqrt(5)
    # add/remove); a label change moves the gradient by sqrt(2) and the curvature by 0, so
    # the run is one Gaussian of mu^2 = T (sqrt(2) / sens)^2 / s^2 noise stds for a label
    # change either way, mu where the exact profile meets (eps, delta).
    sens = math.sqrt(2.0) if privacy == "label" else math.sqrt(5.0)
    s = math.sqrt(T * 2.0 / sens**2) / mu
    clf = DPLogisticRegression(
        epsilon=eps, delta=delta, solver=solver, privacy=privacy, n_noisy_steps=T,
        data_norm=20.0, classes=range(5), random_state=0,
    ).fit(X, y)
    plan = clf.mechanism_params_
    assert plan["noise_multiplier"] == pytest.approx(s)
    assert plan["sensitivities"]["gradient"] == pytest.approx(sens)
    assert plan["noise_stds"]["gradient"] == pytest.approx(s * sens / n)
    assert plan["gaussian_mu"] == pytest.approx(mu)
    assert plan["rho"] == pytest.approx(mu**2 / 2)
    assert plan["n_noisy_steps"] == T
    if privacy == "label" and solver == "fc":
        # Empirical: one FC step from 0 is theta = -P^-1 (g + noise), P = G/(4n) + Lambda I.
        reg = plan["regularization"]
        E = np.eye(5)[y]
        g = Z.T @ (0.5 - E) / n
        P = Z.T @ Z / (4 * n) + reg * np.eye(d)
        noise = []
        for seed in range(20):
            theta = noisy_second_order_logistic(
                y, Z=Z, n_classes=5, solver="fc", n_noisy_steps=1, reg=reg,
                noise_stds=plan["noise_stds"], random_state=np.random.default_rng(seed),
            )
            noise.append((-(P @ theta.T) - g).ravel())
        noise = np.concatenate(noise) / (s * sens / n)
        assert stats.kstest(noise, "norm").pvalue > 0.01


def test_binary_label_sensitivity_is_one():
    X, y = _blobs(2, n=200)
    clf = DPLogisticRegression(
        epsilon=1.0, delta=1e-5, solver="newton", n_noisy_steps=3, data_norm=20.0,
        classes=[0, 1], random_state=0,
    ).fit(X, y)
    assert clf.mechanism_params_["n_problems"] == 1
    assert clf.mechanism_params_["sensitivities"] == {"gradient": 1.0}
    # label DP: the Hessian reads no label and gets no noise
    assert set(clf.mechanism_params_["noise_stds"]) == {"gradient"}
    full = clf.set_params(privacy="full").fit(X, y).mechanism_params_
    assert full["sensitivities"]["hessian"] == 0.25
    # Full DP, charged for a label change: the 3 gradients (noise s, shift 1) are a
    # Gaussian of mu^2 = 3 / s^2, the Hessians nothing. (Add/remove: 2 * 3 / s^2.)
    mu = _exact_mu(1.0, 1e-5)
    assert full["noise_multiplier"] == pytest.approx(math.sqrt(3) / mu)
    assert full["gaussian_mu"] == pytest.approx(mu)
    assert full["example_gaussian_mu"] == pytest.approx(math.sqrt(2) * mu)
    assert full["example_rho"] == pytest.approx(mu**2)


@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("solver", ["newton", "fc"])
def test_second_order_matrices_get_the_shared_symmetric_noise(monkeypatch, privacy, solver):
    """Full DP: each Hessian (Newton) or G once (FC) through add_symmetric_noise, std s sens/n."""
    calls = []

    def recording(M, std, random_state):
        calls.append(std)
        return _gram_noise.add_symmetric_noise(M, std, random_state)

    monkeypatch.setattr(_second_order, "add_symmetric_noise", recording)
    X, y = _blobs(3, n=300)
    clf = DPLogisticRegression(epsilon=1.0, delta=1e-5, solver=solver, privacy=privacy,
                               n_noisy_steps=4, data_norm=20.0, classes=range(3),
                               random_state=0).fit(X, y)
    if privacy == "label":
        assert calls == []  # the curvature reads no label
        return
    plan = clf.mechanism_params_
    key = "hessian" if solver == "newton" else "gram"
    expected = plan["noise_multiplier"] * plan["sensitivities"][key] / 300
    assert plan["noise_stds"][key] == pytest.approx(expected)
    assert calls == [pytest.approx(expected)] * (4 * 3 if solver == "newton" else 1)


def _neighbouring_label_vectors(codes, n_classes, rng, count):
    """``count`` pairs (i, other): ``other`` is ``codes`` with label ``i`` changed."""
    for _ in range(count):
        i = rng.integers(len(codes))
        other = codes.copy()
        other[i] = (codes[i] + 1 + rng.integers(n_classes - 1)) % n_classes
        yield i, other


@pytest.mark.parametrize("n_classes", [2, 3, 6])
@pytest.mark.parametrize("solver", ["newton", "fc"])
def test_full_dp_second_order_label_sensitivity_on_neighbouring_label_vectors(solver,
                                                                              n_classes):
    """Changing one label moves the released gradient sum by at most label_sensitivities
    (tight: rows of norm 1) and the released Hessians or Gram matrix not at all."""
    X, _ = _blobs(n_classes, n=120)
    params = DPLogisticRegression(
        epsilon=1.0, delta=1e-5, solver=solver, privacy="full", n_noisy_steps=2,
        data_norm=20.0, classes=range(n_classes), random_state=0,
    ).fit(X, np.arange(120) % n_classes).mechanism_params_
    bound = params["label_sensitivities"]
    assert bound["gradient"] == (1.0 if n_classes == 2 else math.sqrt(2.0))
    assert bound["hessian" if solver == "newton" else "gram"] == 0.0
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((120, 5))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)  # every row at the bound
    codes = rng.integers(0, n_classes, 120)
    m = 1 if n_classes == 2 else n_classes

    def targets(c):
        return (c == 1).astype(float)[:, None] if m == 1 else np.eye(n_classes)[c]

    worst = 0.0
    for _, other in _neighbouring_label_vectors(codes, n_classes, rng, 30):
        P = 1 / (1 + np.exp(-(Z @ (rng.standard_normal((m, 5)) * 3).T)))
        change = np.linalg.norm(gradient_sum(P, Z, targets(codes))
                                - gradient_sum(P, Z, targets(other)))
        assert change <= bound["gradient"] * (1 + 1e-12)
        worst = max(worst, change)
    np.testing.assert_allclose(worst, bound["gradient"])
    # End to end: the matrices the solver noises (step 1, theta = 0 for both label
    # vectors; later steps see the same theta given the same earlier outputs).
    seen = []

    def recording(M, std, random_state):
        seen.append(M.copy())
        return M

    i, other = next(_neighbouring_label_vectors(codes, n_classes, rng, 1))
    key = "hessian" if solver == "newton" else "gram"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_second_order, "add_symmetric_noise", recording)
        for c in (codes, other):
            noisy_second_order_logistic(
                c, Z=Z, n_classes=n_classes, solver=solver, n_noisy_steps=1, reg=0.1,
                noise_stds={"gradient": 0.0, key: 1.0}, random_state=np.random.default_rng(0),
            )
    half = len(seen) // 2
    assert half == (m if solver == "newton" else 1)
    for a, b in zip(seen[:half], seen[half:], strict=True):
        np.testing.assert_array_equal(a, b)
    # ... and they are the sums of the helpers (at theta = 0: p = 1/2), divided by n.
    expected = Z.T @ Z / 4 if solver == "newton" else Z.T @ Z
    np.testing.assert_allclose(seen[0] * 120, expected)
    np.testing.assert_allclose(hessian_sum(np.full(120, 0.5), Z), Z.T @ Z / 4)
    np.testing.assert_allclose(gram_sum(Z), Z.T @ Z)


@pytest.mark.parametrize("solver", ["newton", "fc"])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_full_dp_second_order_records_the_label_guarantee(solver, n_classes):
    X, y = _blobs(n_classes, n=300)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = DPLogisticRegression(
        epsilon=1.5, delta=1e-5, solver=solver, privacy="full", n_noisy_steps=6,
        data_norm=20.0, classes=range(n_classes), random_state=0, accountant=acc,
    ).fit(X, y)
    params, spend = clf.mechanism_params_, clf.privacy_spend_
    assert clf.epsilon_ <= 1.5 and clf.delta_ == 1e-5
    assert (acc.total().epsilon, acc.total().delta) == (clf.epsilon_, clf.delta_)
    # The ledger's Gaussian is the label-change one; its exact profile meets (epsilon,
    # delta): the noise is calibrated, not merely valid.
    s, m = params["noise_multiplier"], params["n_problems"]
    shift = 1.0 if n_classes == 2 else math.sqrt(2.0)
    mu = params["gaussian_mu"]
    assert mu == pytest.approx(math.sqrt(6 * shift**2 / m) / s, rel=1e-12)
    assert mu == pytest.approx(_exact_mu(1.5, 1e-5), rel=1e-9)
    assert _profile_delta(1.5, mu) <= 1e-5 * (1 + 1e-9)
    assert spend.rho == params["rho"] == pytest.approx(mu**2 / 2, rel=1e-12)
    assert acc.total_zcdp() == spend.rho
    # The example-level guarantee is the add/remove accounting of the same noise, by the
    # same exact profile.
    releases = 2 * 6 if solver == "newton" else 6 + 1
    assert params["example_gaussian_mu"] == pytest.approx(math.sqrt(releases) / s, rel=1e-12)
    assert params["example_rho"] == pytest.approx(releases / (2 * s**2))
    assert clf.example_epsilon_ == pytest.approx(
        _exact_epsilon(params["example_gaussian_mu"], 1e-5), rel=1e-9)
    assert clf.example_epsilon_ > clf.epsilon_
    assert clf.example_delta_ == 1e-5
    assert spend.params == {"privacy": "full", **params, "example_epsilon": clf.example_epsilon_,
                            "example_delta": 1e-5}


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("solver", ["objective", "output"])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_substitution_guarantee_covers_the_label_change(Estimator, solver, n_classes):
    X, y = _blobs(n_classes, n=300)
    acc = BudgetAccountant(epsilon=10.0)
    kw = dict(epsilon=2.0, solver=solver, data_norm=20.0, classes=range(n_classes),
              random_state=0, accountant=acc)
    clf = Estimator(privacy="full", **kw).fit(X, y)
    assert (clf.epsilon_, clf.delta_) == (2.0, 0.0)
    assert acc.total().epsilon == 2.0  # the ledger is charged the label change only
    # The noise is calibrated for a label change; the same noise's substitution guarantee
    # (Chaudhuri et al. 2011: gradient change 2, Hessian change rank 2, every one of the
    # m problems) is reported beside it, and covers the label change.
    params, n = clf.mechanism_params_, 300
    scale, reg, m = params["noise_scale"], params["regularization"], params["n_problems"]
    if solver == "output":
        per_problem = 2 / (n * reg * scale)
    else:
        per_problem = 2 / scale + 2 * math.log1p(
            params["curvature_bound"] / (n * (reg + params["extra_regularization"])))
    assert clf.example_epsilon_ == pytest.approx(m * per_problem, rel=1e-12)
    assert clf.example_epsilon_ >= clf.epsilon_ and clf.example_delta_ == 0.0
    assert clf.privacy_spend_.params["example_epsilon"] == clf.example_epsilon_
    if Estimator is DPLogisticRegression and solver == "output":
        # 2 / g_label = 2 times eps with two classes; K times eps with K (eps / 2 each).
        assert clf.example_epsilon_ == pytest.approx(4.0 if n_classes == 2 else 8.0)
    label = Estimator(privacy="label", **kw).fit(X, y)
    assert not hasattr(label, "example_epsilon_") and not hasattr(label, "example_delta_")
    assert "example_epsilon" not in label.privacy_spend_.params
    # privacy="full" draws exactly the noise of privacy="label".
    assert label.mechanism_params_ == params
    np.testing.assert_array_equal(label.coef_, clf.coef_)


# --------------------------------------------------------------------------- budget split


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("solver", ["objective", "output"])
@pytest.mark.parametrize(
    "n_classes, privacy, share",
    # A label change moves 2 of the K one-vs-rest problems under either privacy.
    [(2, "label", 1), (2, "full", 1), (5, "label", 2), (5, "full", 2)],
)
def test_budget_split(Estimator, solver, n_classes, privacy, share):
    X, y = _blobs(n_classes, n=300)
    acc = BudgetAccountant(epsilon=10.0)
    clf = Estimator(
        epsilon=2.0, solver=solver, privacy=privacy, data_norm=20.0, classes=range(n_classes),
        random_state=0, accountant=acc,
    ).fit(X, y)
    assert clf.mechanism_params_["release_epsilon"] == pytest.approx(2.0 / share)
    assert clf.mechanism_params_["n_problems"] == (1 if n_classes == 2 else n_classes)
    assert clf.coef_.shape == (1 if n_classes == 2 else n_classes, 4)
    assert clf.epsilon_ == 2.0 and clf.delta_ == 0.0
    assert acc.total().epsilon == pytest.approx(2.0)


# --------------------------------------------------------------------------- agreement


@pytest.mark.parametrize(
    "params",
    [
        dict(solver="objective"),
        dict(solver="output"),
        dict(solver="newton", delta=1e-6, n_noisy_steps=15),
        dict(solver="fc", delta=1e-6, n_noisy_steps=400),
        dict(solver="objective", privacy="full"),
        dict(solver="fc", delta=1e-6, n_noisy_steps=400, privacy="full"),
    ],
)
def test_logistic_agrees_with_sklearn_at_huge_epsilon(params):
    X_train, X_test, y_train, y_test = _breast_cancer()
    R = 8.0
    clf = DPLogisticRegression(
        epsilon=1e9, C=1.0, data_norm=R, classes=[0, 1], random_state=0, **params
    ).fit(X_train, y_train)
    # The non-private counterpart: scikit-learn's C on u = [x / R, 1] (a regularised
    # intercept, as liblinear's intercept_scaling=1), i.e. sqrt(2) times the mapped features.
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=10000)
    ref.fit(math.sqrt(2) * _feature_map(X_train, R, True), y_train)
    # Predictions do not clip: the same map without clipping.
    Z_test = np.hstack([X_test / R, np.ones((len(X_test), 1))])
    agree = np.mean(clf.predict(X_test) == ref.predict(Z_test))
    assert agree >= 0.99
    if params["solver"] in ("objective", "output", "newton"):
        assert np.allclose(clf.decision_function(X_test), ref.decision_function(Z_test),
                           atol=1e-3)


@pytest.mark.parametrize("solver", ["objective", "output", "newton"])
def test_multiclass_logistic_agrees_with_one_vs_rest(solver):
    X, y = _blobs(4, n=800, seed=3)
    R = 20.0
    clf = DPLogisticRegression(
        epsilon=1e9, delta=1e-6 if solver == "newton" else 0.0, C=2.0, data_norm=R,
        solver=solver, n_noisy_steps=20, classes=range(4), random_state=0,
    ).fit(X, y)
    Z = math.sqrt(2) * _feature_map(X, R, True)  # [x / R, 1]
    ref = OneVsRestClassifier(LogisticRegression(C=2.0, fit_intercept=False, tol=1e-10)).fit(Z, y)
    assert np.mean(clf.predict(X) == ref.predict(Z)) >= 0.99


@pytest.mark.parametrize("solver", ["objective", "output"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_svc_agrees_with_non_private_minimiser(solver, n_classes):
    if n_classes == 2:
        X, _, y, _ = _breast_cancer()
    else:
        X, y = _blobs(3, n=600, seed=1)
    R, C = 8.0, 1.0
    clf = DPLinearSVC(
        epsilon=1e9, C=C, huber_width=0.3, data_norm=R, solver=solver,
        classes=range(n_classes), random_state=0,
    ).fit(X, y)
    Z = math.sqrt(2) * _feature_map(X, R, True)  # [x / R, 1], penalty ||w||^2 / (2 C n)
    n = Z.shape[0]
    positives = [1] if n_classes == 2 else range(n_classes)
    F = np.array([
        minimise(HuberHingeLoss(0.3), Z, np.where(y == k, 1.0, -1.0), 1 / (C * n),
                 np.zeros(Z.shape[1]), 1e-9, 5000)[0]
        for k in positives
    ])
    scores = Z @ F.T
    ref = (scores[:, 0] > 0).astype(int) if n_classes == 2 else np.argmax(scores, axis=1)
    assert np.mean(clf.predict(X) == ref) >= 0.99


# --------------------------------------------------------------------------- convergence


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("solver", ["objective", "output"])
def test_convergence_error_when_max_iter_too_small(Estimator, solver):
    X, _, y, _ = _breast_cancer()
    acc = BudgetAccountant()
    clf = Estimator(epsilon=1.0, C=100.0, data_norm=8.0, solver=solver, max_iter=2,
                    tol=1e-8, classes=[0, 1], random_state=0, accountant=acc)
    # Inside the release the optimiser raises ConvergenceError; what leaves it is the
    # release site's fixed text, which names the public tol and max_iter only.
    with pytest.raises(ReleaseError, match=r"exact minimiser.*tol=1e-08.*max_iter=2") as info:
        clf.fit(X, y)
    assert f"{Estimator.__name__}(solver={solver!r})" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert not hasattr(clf, "coef_")
    assert acc.total().epsilon == 1.0  # charged before training: the budget stays spent
    # The optimiser's own error, raised inside the release, names public values only.
    Z = _feature_map(X, 8.0, True)
    signs = np.where(y == 1, 1.0, -1.0)
    with pytest.raises(ConvergenceError) as inner:
        minimise(Estimator()._loss(), Z, signs, 1e-4, np.zeros(Z.shape[1]), 1e-8, 2)
    assert str(inner.value) == (
        "the minimiser was not found to the gradient-norm tolerance tol=1e-08 within "
        "max_iter=2 iterations. The privacy guarantee of objective and output "
        "perturbation holds only for the exact minimiser, so no model is returned: "
        "increase max_iter (or C smaller / tol larger)."
    )


def test_newton_and_lbfgs_find_the_same_minimiser():
    X, y = _blobs(2, n=400)
    Z = _feature_map(X, 20.0, True)
    signs = np.where(y == 1, 1.0, -1.0)
    linear = sample_l2_gamma_noise(Z.shape[1], 0.01, np.random.default_rng(0))

    class LBFGSLogistic(LogisticLoss):
        newton = False

    f_newton, it_newton = minimise(LogisticLoss(), Z, signs, 1e-3, linear, 1e-9, 1000)
    f_lbfgs, it_lbfgs = minimise(LBFGSLogistic(), Z, signs, 1e-3, linear, 1e-9, 1000)
    # Strong convexity 1e-3: both within ||grad|| / 1e-3 of the minimiser.
    assert np.linalg.norm(f_newton - f_lbfgs) <= 2e-6
    assert it_newton < 15 < it_lbfgs
    f_sparse, _ = minimise(LogisticLoss(), sp.csr_matrix(Z), signs, 1e-3, linear, 1e-9, 1000)
    assert np.linalg.norm(f_sparse - f_newton) <= 2e-6


# --------------------------------------------------------------------------- features


def test_feature_map_clips_and_maps_back():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    Z = _feature_map(X, 1.0, True)
    assert np.allclose(Z[0], np.array([0.6, 0.8, 1.0]) / math.sqrt(2))
    assert np.allclose(Z[1], np.array([0.3, 0.4, 1.0]) / math.sqrt(2))
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)
    assert np.allclose(_feature_map(X, 10.0, False), X / 10.0)


@pytest.mark.parametrize("fit_intercept, factor", [(True, 2), (False, 1)])
def test_regularization_matches_sklearn_C(fit_intercept, factor):
    X, y = _blobs(2, n=300)
    clf = DPLogisticRegression(C=0.5, fit_intercept=fit_intercept, data_norm=20.0,
                               classes=[0, 1], random_state=0).fit(X, y)
    assert clf.mechanism_params_["regularization"] == pytest.approx(1 / (factor * 0.5 * 300))


def test_coefficients_are_reported_on_raw_features():
    X, y = _blobs(2, n=300)
    clf = DPLogisticRegression(epsilon=5.0, data_norm=20.0, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    assert np.allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0])
    p = clf.predict_proba(X)
    assert np.allclose(p.sum(axis=1), 1) and np.allclose(p[:, 1], 1 / (1 + np.exp(
        -clf.decision_function(X))))


def test_sparse_matches_dense():
    X, y = _blobs(3, n=300)
    X[X < 0] = 0.0
    for Est, kw in [(DPLogisticRegression, {}), (DPLinearSVC, {}),
                    (DPLogisticRegression, dict(solver="newton", delta=1e-5))]:
        dense = Est(data_norm=20.0, classes=range(3), random_state=0, **kw).fit(X, y)
        sparse = Est(data_norm=20.0, classes=range(3), random_state=0, **kw).fit(
            sp.csr_matrix(X), y)
        assert np.allclose(dense.coef_, sparse.coef_, atol=1e-5)
        assert np.array_equal(dense.predict(X), sparse.predict(sp.csr_matrix(X)))


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("solver", ["newton", "fc"])
@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5])
def test_delta_outside_unit_interval_for_zcdp_solvers(solver, delta):
    X, y = _blobs(2, n=100)
    with pytest.raises(ValueError, match="delta"):
        DPLogisticRegression(solver=solver, delta=delta, classes=[0, 1]).fit(X, y)


@pytest.mark.parametrize("width", [0.0, -0.5])
def test_bad_huber_width(width):
    X, y = _blobs(2, n=100)
    with pytest.raises(ValueError, match="huber_width"):
        DPLinearSVC(huber_width=width, classes=[0, 1]).fit(X, y)


def test_svc_has_no_newton_solver():
    X, y = _blobs(2, n=100)
    with pytest.raises(ValueError, match="solver"):
        DPLinearSVC(solver="newton", classes=[0, 1]).fit(X, y)


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
def test_n_features_mismatch_at_predict(Estimator):
    X, y = _blobs(2, n=100)
    clf = Estimator(classes=[0, 1], data_norm=20.0, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_budget_charged_with_delta_for_zcdp_solvers():
    X, y = _blobs(2, n=100)
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    clf = DPLogisticRegression(solver="fc", delta=1e-5, classes=[0, 1], data_norm=20.0,
                               random_state=0, accountant=acc).fit(X, y)
    assert (clf.epsilon_, clf.delta_) == (1.0, 1e-5)
    assert acc.total().delta == pytest.approx(1e-5)
    # One Gaussian of mu noise stds (exact profile at (1, 1e-5)), recorded with rho = mu^2 / 2.
    mu = _exact_mu(1.0, 1e-5)
    assert clf.privacy_spend_.description.value == pytest.approx(mu, rel=1e-9)
    assert clf.privacy_spend_.rho == pytest.approx(mu**2 / 2, rel=1e-9)


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("solver", ["objective", "output"])
def test_the_optimisers_iteration_count_is_not_released(Estimator, solver):
    # The count of a noise-free minimisation is a deterministic function of the
    # labels (output perturbation): releasing it would void the guarantee.
    X, y = make_classification(200, 4, random_state=0)
    clf = Estimator(epsilon=1.0, solver=solver, data_norm=20.0, classes=[0, 1],
                    random_state=0).fit(X, y)
    assert not hasattr(clf, "n_iter_")


def test_newton_and_fc_report_their_public_step_count():
    X, y = make_classification(200, 4, random_state=0)
    clf = DPLogisticRegression(epsilon=1.0, delta=1e-5, solver="fc", n_noisy_steps=7,
                               data_norm=20.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.n_iter_ == 7


@pytest.mark.parametrize("solver", ["newton", "fc"])
def test_max_iter_and_tol_belong_to_the_exact_minimiser_only(solver):
    # One meaning per name: the noisy-step count is n_noisy_steps, never max_iter.
    X, y = make_classification(200, 4, random_state=0)
    kw = dict(epsilon=1.0, delta=1e-5, solver=solver, n_noisy_steps=5, data_norm=20.0,
              classes=[0, 1], random_state=0)
    base = DPLogisticRegression(**kw).fit(X, y)
    other = DPLogisticRegression(max_iter=1, tol=1e-1, **kw).fit(X, y)
    np.testing.assert_array_equal(base.coef_, other.coef_)
    assert base.n_iter_ == other.n_iter_ == 5
    fewer = DPLogisticRegression(**{**kw, "n_noisy_steps": 2}).fit(X, y)
    assert not np.array_equal(base.coef_, fewer.coef_)
    # ... and objective perturbation does not read n_noisy_steps.
    kw.update(solver="objective", delta=0.0)
    objective = DPLogisticRegression(**kw).fit(X, y)
    one_step = DPLogisticRegression(**{**kw, "n_noisy_steps": 1}).fit(X, y)
    np.testing.assert_array_equal(objective.coef_, one_step.coef_)


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
def test_every_solver_is_in_the_table_and_recorded_in_the_spend(Estimator):
    solvers = Estimator._parameter_constraints["solver"][0].options - {"auto"}
    assert solvers <= set(SOLVERS)
    if Estimator is DPLinearSVC:  # no delta, so no Gaussian solver for SVC
        assert all(SOLVERS[name].deltas != "positive" for name in solvers)
    X, y = make_classification(200, 4, random_state=0)
    deltas = {"zero": [0.0], "positive": [1e-5], "any": [0.0, 1e-5]}
    for name in sorted(solvers):
        for delta in deltas[SOLVERS[name].deltas] if Estimator is DPLogisticRegression else [0]:
            clf = Estimator(epsilon=1.0, solver=name, data_norm=20.0, classes=[0, 1],
                            random_state=0)
            if delta:
                clf.set_params(delta=delta)
            spend = clf.fit(X, y).privacy_spend_
            assert spend.mechanism == SOLVERS[name].mechanism
            assert spend.params == {"privacy": "label", **clf.mechanism_params_}
            assert hasattr(clf, "n_iter_") == SOLVERS[name].reports_n_iter


def test_collinear_one_hot_columns_with_a_tiny_ridge_still_fit():
    # One-hot blocks plus the intercept are collinear; with Lambda below float32's
    # rounding of the Hessian, its Cholesky factorisation fails unless lifted.
    rng = np.random.default_rng(0)
    n = 5000
    X = np.hstack([np.eye(8)[rng.integers(0, 8, n)], np.eye(5)[rng.integers(0, 5, n)],
                   rng.standard_normal((n, 3))])
    y = (X[:, :8] @ rng.standard_normal(8) + X[:, -3:].sum(1) + rng.standard_normal(n) > 0)
    clf = DPLogisticRegression(epsilon=1e9, C=1e8, data_norm=4.0, classes=[False, True],
                               max_iter=200, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8
    Z32 = _feature_map(X, 4.0, True).astype(np.float32)
    hessian = ssyrk(0.25 / n, Z32.T).astype(np.float64)
    hessian.flat[:: hessian.shape[0] + 1] += 1.0 / (2 * 1e8 * n)
    with pytest.raises(LinAlgError):
        cho_factor(hessian, lower=False, check_finite=False)
    factor = factor_preconditioner(hessian)
    assert np.all(np.isfinite(factor[0]))
