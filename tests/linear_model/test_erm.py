"""DPLogisticRegression and DPLinearSVC: mechanisms, budget split, agreement, checks."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_labeldp import PrivacyLeakWarning
from sklearn_labeldp.accounting import BudgetAccountant, approx_dp_to_zcdp
from sklearn_labeldp.exceptions import ConvergenceError
from sklearn_labeldp.linear_model._erm import (
    DPLinearSVC,
    DPLogisticRegression,
    HuberHingeLoss,
    LogisticLoss,
    _feature_map,
    _minimise,
    objective_perturbation_params,
    output_perturbation_beta,
    perturbed_erm,
    sample_l2_gamma_noise,
)
from sklearn_labeldp.linear_model._newton import (
    newton_fc_noise_multiplier,
    noisy_second_order_logistic,
)

# --------------------------------------------------------------------------- data


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, test_size=0.3, random_state=0)


def _blobs(n_classes=5, n=600, seed=0):
    X, y = make_blobs(n, 4, centers=n_classes, cluster_std=2.0, random_state=seed)
    return X, y


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
    """coef - exact minimiser has norm ~ Gamma(d, 1/beta), beta = n Lambda eps / 2."""
    X, y = _blobs(2, n=60)
    Z = _feature_map(X, 5.0, True)
    n, d = Z.shape
    reg, eps = 1.0 / (2.0 * n), 3.0
    f_star, _ = _minimise(LogisticLoss(), Z, np.where(y == 1, 1.0, -1.0), reg, np.zeros(d),
                          1e-10, 1000)
    norms = []
    for seed in range(400):
        coef, _ = perturbed_erm(
            y, Z=Z, n_classes=2, loss=LogisticLoss(), solver="output", epsilon_problem=eps,
            reg=reg, tol=1e-10, max_iter=1000, random_state=np.random.default_rng(seed),
        )
        norms.append(np.linalg.norm(coef[0] - f_star))
    beta = output_perturbation_beta(eps, n, reg)
    assert beta == pytest.approx(n * reg * eps / 2)
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


@pytest.mark.parametrize(
    "estimator, c",
    [(DPLogisticRegression(), 0.25), (DPLinearSVC(huber_width=0.2), 2.5)],
)
@pytest.mark.parametrize("epsilon", [0.05, 5.0])
def test_estimator_uses_the_objective_branch(estimator, c, epsilon):
    X, y = _blobs(2, n=200)
    estimator.set_params(epsilon=epsilon, C=0.5, data_norm=20.0, classes=[0, 1], random_state=0)
    estimator.fit(X, y)
    plan = estimator.perturbation_
    expected = objective_perturbation_params(epsilon, 200, 1.0 / (0.5 * 200), c)
    assert (plan["epsilon_prime"], plan["extra_regularization"]) == expected
    assert plan["c"] == c
    assert (expected[1] > 0) == (epsilon == 0.05)  # both branches are exercised


def test_huber_hinge_loss_bounds():
    loss = HuberHingeLoss(0.5)
    m = np.linspace(-3, 3, 2001)
    assert loss.c == 1.0
    assert np.all(np.abs(loss.derivative(m)) <= 1)
    assert np.all((loss.second_derivative(m) >= 0) & (loss.second_derivative(m) <= loss.c))
    # value is C^1: its numerical derivative matches the analytic one.
    num = np.gradient(loss.value(m), m)
    assert np.allclose(num[1:-1], loss.derivative(m)[1:-1], atol=1e-2)


# --------------------------------------------------------------------------- Gaussian (zCDP)


@pytest.mark.parametrize("privacy, solver", [("label", "fc"), ("label", "newton"), ("full", "fc")])
def test_newton_fc_gradient_noise_std_is_calibrated(privacy, solver):
    X, y = _blobs(5, n=400)
    Z = _feature_map(X, 20.0, True)
    n, d = Z.shape
    eps, delta, T = 1.0, 1e-5, 4
    rho = approx_dp_to_zcdp(eps, delta)
    releases = {"label": T, "full": (T + 1) if solver == "fc" else 2 * T}[privacy]
    s = math.sqrt(releases / (2 * rho))
    assert newton_fc_noise_multiplier(rho, solver, privacy, T) == pytest.approx(s)
    sens = math.sqrt(2.0) if privacy == "label" else math.sqrt(5.0)
    clf = DPLogisticRegression(
        epsilon=eps, delta=delta, solver=solver, privacy=privacy, max_iter=T, data_norm=20.0,
        classes=range(5), random_state=0,
    ).fit(X, y)
    plan = clf.perturbation_
    assert plan["noise_multiplier"] == pytest.approx(s)
    assert plan["gradient_sensitivity"] == pytest.approx(sens)
    assert plan["gradient_std"] == pytest.approx(s * sens / n)
    assert plan["rho"] == pytest.approx(rho)
    if privacy == "label" and solver == "fc":
        # Empirical: one FC step from 0 is theta = -P^-1 (g + noise), P = G/(4n) + Lambda I.
        reg = plan["regularization"]
        E = np.eye(5)[y]
        g = Z.T @ (0.5 - E) / n
        P = Z.T @ Z / (4 * n) + reg * np.eye(d)
        noise = []
        for seed in range(20):
            theta = noisy_second_order_logistic(
                y, Z=Z, n_classes=5, solver="fc", privacy="label", n_iter=1,
                noise_multiplier=s, reg=reg, random_state=np.random.default_rng(seed),
            )
            noise.append((-(P @ theta.T) - g).ravel())
        noise = np.concatenate(noise) / (s * sens / n)
        assert stats.kstest(noise, "norm").pvalue > 0.01


def test_binary_label_sensitivity_is_one():
    X, y = _blobs(2, n=200)
    clf = DPLogisticRegression(
        epsilon=1.0, delta=1e-5, solver="newton", max_iter=3, data_norm=20.0, classes=[0, 1],
        random_state=0,
    ).fit(X, y)
    assert clf.perturbation_["n_problems"] == 1
    assert clf.perturbation_["gradient_sensitivity"] == 1.0
    assert "hessian_std" not in clf.perturbation_  # label DP: the Hessian reads no label
    full = clf.set_params(privacy="full").fit(X, y).perturbation_
    assert full["hessian_sensitivity"] == 0.25
    assert full["noise_multiplier"] == pytest.approx(
        math.sqrt(2 * 3 / (2 * approx_dp_to_zcdp(1.0, 1e-5)))
    )


# --------------------------------------------------------------------------- budget split


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("solver", ["objective", "output"])
@pytest.mark.parametrize(
    "n_classes, privacy, share",
    [(2, "label", 1), (2, "full", 1), (5, "label", 2), (5, "full", 5)],
)
def test_budget_split(Estimator, solver, n_classes, privacy, share):
    X, y = _blobs(n_classes, n=300)
    acc = BudgetAccountant(epsilon=10.0)
    clf = Estimator(
        epsilon=2.0, solver=solver, privacy=privacy, data_norm=20.0, classes=range(n_classes),
        random_state=0, accountant=acc,
    ).fit(X, y)
    assert clf.perturbation_["epsilon_per_problem"] == pytest.approx(2.0 / share)
    assert clf.perturbation_["n_problems"] == (1 if n_classes == 2 else n_classes)
    assert clf.coef_.shape == (1 if n_classes == 2 else n_classes, 4)
    assert clf.epsilon_ == 2.0 and clf.delta_ == 0.0
    assert acc.total().epsilon == pytest.approx(2.0)


# --------------------------------------------------------------------------- agreement


@pytest.mark.parametrize(
    "params",
    [
        dict(solver="objective"),
        dict(solver="output"),
        dict(solver="newton", delta=1e-6, max_iter=15),
        dict(solver="fc", delta=1e-6, max_iter=400),
        dict(solver="objective", privacy="full"),
        dict(solver="fc", delta=1e-6, max_iter=400, privacy="full"),
    ],
)
def test_logistic_agrees_with_sklearn_at_huge_epsilon(params):
    X_train, X_test, y_train, y_test = _breast_cancer()
    R = 8.0
    clf = DPLogisticRegression(
        epsilon=1e9, C=1.0, data_norm=R, classes=[0, 1], random_state=0, **params
    ).fit(X_train, y_train)
    # The non-private counterpart: scikit-learn on the same features (intercept as feature).
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=10000)
    ref.fit(_feature_map(X_train, R, True), y_train)
    # Predictions do not clip: the same map without clipping.
    Z_test = np.hstack([X_test / R, np.ones((len(X_test), 1))]) / math.sqrt(2)
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
        solver=solver, max_iter=20 if solver == "newton" else None, classes=range(4),
        random_state=0,
    ).fit(X, y)
    Z = _feature_map(X, R, True)
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
    Z = _feature_map(X, R, True)
    n = Z.shape[0]
    positives = [1] if n_classes == 2 else range(n_classes)
    F = np.array([
        _minimise(HuberHingeLoss(0.3), Z, np.where(y == k, 1.0, -1.0), 1 / (C * n),
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
    clf = Estimator(epsilon=1.0, C=100.0, data_norm=8.0, solver=solver, max_iter=2,
                    tol=1e-8, classes=[0, 1], random_state=0)
    with pytest.raises(ConvergenceError, match="privacy guarantee"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")
    assert issubclass(ConvergenceError, ValueError)


# --------------------------------------------------------------------------- features


def test_feature_map_clips_and_maps_back():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    Z = _feature_map(X, 1.0, True)
    assert np.allclose(Z[0], np.array([0.6, 0.8, 1.0]) / math.sqrt(2))
    assert np.allclose(Z[1], np.array([0.3, 0.4, 1.0]) / math.sqrt(2))
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)
    assert np.allclose(_feature_map(X, 10.0, False), X / 10.0)


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


@pytest.mark.parametrize("solver", ["objective", "output"])
def test_nonzero_delta_refused_for_pure_solvers(solver):
    X, y = _blobs(2, n=100)
    with pytest.raises(ValueError, match="delta must be 0"):
        DPLogisticRegression(solver=solver, delta=1e-5, classes=[0, 1]).fit(X, y)


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("data_norm", [0.0, -1.0, np.inf])
def test_bad_data_norm(Estimator, data_norm):
    X, y = _blobs(2, n=100)
    with pytest.raises(ValueError, match="data_norm"):
        Estimator(data_norm=data_norm, classes=[0, 1]).fit(X, y)


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
    assert clf.privacy_spend_.rho == pytest.approx(approx_dp_to_zcdp(1.0, 1e-5))


# --------------------------------------------------------------------------- estimator checks

# A huge epsilon and a loose norm bound make the models (nearly) the non-private
# ones, so the accuracy checks test the plumbing, not the privacy trade-off.
_CHECKED = [
    DPLogisticRegression(epsilon=1e6, C=10.0, data_norm=10.0, random_state=0),
    DPLogisticRegression(epsilon=1e6, C=10.0, data_norm=10.0, solver="output", random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, C=10.0, data_norm=10.0, solver="newton",
                         random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, C=10.0, data_norm=10.0, solver="fc",
                         max_iter=100, random_state=0),
    DPLinearSVC(epsilon=1e6, C=10.0, data_norm=10.0, random_state=0),
    DPLinearSVC(epsilon=1e6, C=10.0, data_norm=10.0, solver="output", random_state=0),
]

_NOISE_PER_FIT = (
    "the noise is drawn once per fit, and the regularisation Lambda = 1/(C n) and the "
    "per-example noise weight depend on n, so duplicating an example is not a weight of 2"
)


def _expected_failed_checks(estimator):
    return {
        "check_sample_weight_equivalence_on_dense_data": _NOISE_PER_FIT,
        "check_sample_weight_equivalence_on_sparse_data": _NOISE_PER_FIT,
    }


@parametrize_with_checks(_CHECKED, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)
