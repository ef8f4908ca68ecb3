"""Objective and output perturbation with Gaussian noise (``delta > 0``).

Output perturbation releases the minimisers of all the one-vs-rest problems at
once with ``N(0, sigma^2 I)`` noise; a label change moves them by at most
``sqrt(t) g / (n Lambda)`` (``t`` problems touched: 1 for two classes, 2
otherwise). Objective perturbation minimises ``J(f) + b.f / n``: ``b = -n grad
J(f)`` is recovered from the release, a label change moves it by at most
``sqrt(t) g`` and, for the logistic loss, leaves the Jacobian unchanged. Either
way one Gaussian mechanism, the largest ``mu`` whose exact profile is within
``(epsilon, delta)``.
"""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend, gaussian_epsilon
from sklearn_labeldp.linear_model import DPLinearSVC, DPLogisticRegression
from sklearn_labeldp.linear_model._losses import HuberHingeLoss, LogisticLoss
from sklearn_labeldp.linear_model._minimise import minimise
from sklearn_labeldp.linear_model._perturbed_erm import (
    gaussian_perturbation_params,
    perturbed_erm,
)

DELTA = 1e-5


def _unit_rows(rng, n, d):
    Z = rng.standard_normal((n, d))
    return Z / np.maximum(1.0, np.linalg.norm(Z, axis=1, keepdims=True))


def _minimisers(loss, Z, codes, n_classes, reg):
    """The exact minimiser of every one-vs-rest problem, stacked."""
    problems = [1] if n_classes == 2 else range(n_classes)
    return np.concatenate([
        minimise(loss, Z, np.where(codes == k, 1.0, -1.0), reg, np.zeros(Z.shape[1]),
                 1e-8, 2000)[0] for k in problems])


@pytest.mark.parametrize("n_classes", [2, 4])
def test_the_release_is_the_exact_minimisers_plus_gaussian_noise(n_classes):
    rng = np.random.default_rng(0)
    Z = _unit_rows(rng, 300, 8)
    codes = rng.integers(0, n_classes, 300)
    loss, reg = LogisticLoss(), 0.01
    params = gaussian_perturbation_params(
        "output", epsilon=2.0, delta=DELTA, n_samples=300, n_classes=n_classes, reg=reg, loss=loss,
        privacy="label")
    exact = _minimisers(loss, Z, codes, n_classes, reg)
    noise = np.concatenate([
        perturbed_erm(codes, Z=Z, n_classes=n_classes, loss=loss, solver="output",
                      params=params, tol=1e-12, max_iter=200,
                      random_state=np.random.default_rng(seed)).ravel() - exact
        for seed in range(60)])
    assert stats.kstest(noise / params["noise_scale"], "norm").pvalue > 1e-3


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberHingeLoss(0.5)])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_label_change_moves_the_minimisers_within_the_calibrated_shift(loss, n_classes):
    rng = np.random.default_rng(1)
    n, reg = 80, 0.05
    params = gaussian_perturbation_params(
        "output", epsilon=1.0, delta=DELTA, n_samples=n, n_classes=n_classes, reg=reg, loss=loss,
        privacy="label")
    touched = 1 if n_classes == 2 else 2
    bound = math.sqrt(touched) * params["gradient_sensitivity"] / (n * reg)
    # The record's mu is that shift in noise stds.
    assert params["gaussian_mu"] == pytest.approx(bound / params["noise_scale"], rel=1e-12)
    largest = 0.0
    for _ in range(20):
        Z = _unit_rows(rng, n, 5)
        codes = rng.integers(0, n_classes, n)
        other = codes.copy()
        i = rng.integers(n)
        other[i] = (codes[i] + 1 + rng.integers(n_classes - 1)) % n_classes
        moved = np.linalg.norm(_minimisers(loss, Z, codes, n_classes, reg)
                               - _minimisers(loss, Z, other, n_classes, reg))
        largest = max(largest, moved)
    assert largest <= bound + 2 * 1e-8 / reg  # up to the minimiser's tolerance
    assert largest > 0.2 * bound  # the bound is not vacuous


@pytest.mark.parametrize("solver", ["output", "objective"])
@pytest.mark.parametrize("privacy", ["label", "full"])
def test_the_fit_records_one_described_gaussian(privacy, solver):
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:600])
    y = y[:600]
    acc = BudgetAccountant(math.inf, 1.0)
    clf = DPLogisticRegression(epsilon=2.0, delta=DELTA, solver=solver, privacy=privacy,
                               data_norm=8.0, classes=list(range(10)), random_state=0,
                               accountant=acc).fit(X, y)
    params, spend = clf.mechanism_params_, clf.privacy_spend_
    assert (clf.epsilon_, clf.delta_) == (2.0, DELTA)
    assert params["noise"] == "gaussian" and "release_epsilon" not in params  # no split
    mu = params["gaussian_mu"]
    assert spend.description.kind == "gaussian" and spend.description.value == mu
    assert gaussian_epsilon(mu, DELTA) == pytest.approx(2.0, rel=1e-9)  # calibrated
    assert spend.rho == pytest.approx(mu**2 / 2)
    # Two fits compose as one Gaussian of sqrt(2) mu in a tight total.
    clf.fit(X, y)
    expected = PrivacySpend.gaussian(math.sqrt(2) * mu, 2 * DELTA + 1e-6).epsilon
    assert acc.total(slack=1e-6).epsilon == pytest.approx(expected, abs=2e-3)
    if privacy == "full":
        lam, sigma = params["regularization"], params["noise_scale"]
        units = 600 * lam if solver == "output" else 1.0
        example_mu = math.sqrt(10) * 2.0 / (units * sigma)
        assert params["example_gaussian_mu"] == pytest.approx(example_mu, rel=1e-12)
        jacobian = 0.0 if solver == "output" else 10 * 2 * math.log1p(0.25 / (600 * lam))
        assert params.get("example_jacobian_epsilon", 0.0) == pytest.approx(jacobian)
        assert clf.example_epsilon_ == pytest.approx(
            gaussian_epsilon(example_mu, DELTA) + jacobian, rel=1e-12)
        assert clf.example_delta_ == DELTA


def test_the_pure_release_is_unchanged_at_delta_zero():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:300])
    pure = DPLogisticRegression(epsilon=2.0, solver="output", classes=list(range(10)),
                                random_state=0, accountant=BudgetAccountant(math.inf, 1.0))
    params = pure.fit(X, y[:300]).mechanism_params_
    assert "noise" not in params and params["release_epsilon"] == 1.0
    assert pure.privacy_spend_.description is None and pure.delta_ == 0.0
    assert DPLinearSVC()._delta == 0  # the SVC has no delta: pure output perturbation only


@pytest.mark.parametrize("solver", ["output", "objective"])
def test_gaussian_perturbation_beats_the_pure_release_on_the_digits(solver):
    # Issue figures: (8, 1e-5), 5 splits; the Gaussian release needs no split of
    # epsilon over the 10 one-vs-rest problems.
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    scores = {0.0: [], DELTA: []}
    for seed in range(3):
        order = rng.permutation(len(y))
        train, test = order[:1257], order[1257:]
        scaler = StandardScaler().fit(X[train])
        for delta in scores:
            clf = DPLogisticRegression(epsilon=4.0, delta=delta, solver=solver,
                                       classes=list(range(10)), random_state=seed,
                                       accountant=BudgetAccountant(math.inf, 1.0))
            clf.fit(scaler.transform(X[train]), y[train])
            scores[delta].append(clf.score(scaler.transform(X[test]), y[test]))
    assert np.median(scores[DELTA]) > np.median(scores[0.0])


@pytest.mark.parametrize("n_classes", [2, 4])
def test_the_objective_release_reveals_gaussian_noise_through_its_gradient(n_classes):
    # The release f minimises J(f) + b.f / n: b = -n grad J(f), exactly N(0, sigma^2 I).
    rng = np.random.default_rng(2)
    n, d, reg = 300, 6, 0.02
    Z = _unit_rows(rng, n, d)
    codes = rng.integers(0, n_classes, n)
    loss = LogisticLoss()
    params = gaussian_perturbation_params(
        "objective", epsilon=2.0, delta=DELTA, n_samples=n, n_classes=n_classes, reg=reg,
        loss=loss, privacy="label")
    problems = [1] if n_classes == 2 else range(n_classes)
    noise = []
    for seed in range(40):
        coef = perturbed_erm(codes, Z=Z, n_classes=n_classes, loss=loss, solver="objective",
                             params=params, tol=1e-10, max_iter=200,
                             random_state=np.random.default_rng(seed))
        for f, k in zip(coef, problems, strict=True):
            signs = np.where(codes == k, 1.0, -1.0)
            margins = signs * (Z @ f)
            # grad J = mean(-signs sigmoid(-m) z) + reg f.
            grad = (-(signs / (1.0 + np.exp(margins))) @ Z) / n + reg * f
            noise.append(-n * grad)
    noise = np.concatenate(noise)
    assert stats.kstest(noise / params["noise_scale"], "norm").pvalue > 1e-3


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_label_change_moves_the_objective_gradient_within_the_shift_not_its_curvature(
        n_classes):
    rng = np.random.default_rng(3)
    n, d = 50, 4
    Z = _unit_rows(rng, n, d)
    codes = rng.integers(0, n_classes, n)
    params = gaussian_perturbation_params(
        "objective", epsilon=1.0, delta=DELTA, n_samples=n, n_classes=n_classes, reg=0.1,
        loss=LogisticLoss(), privacy="label")
    touched = 1 if n_classes == 2 else 2
    assert params["gaussian_mu"] == pytest.approx(
        math.sqrt(touched) * params["gradient_sensitivity"] / params["noise_scale"], rel=1e-12)
    problems = [1] if n_classes == 2 else range(n_classes)
    for _ in range(20):
        other = codes.copy()
        i = rng.integers(n)
        other[i] = (codes[i] + 1 + rng.integers(n_classes - 1)) % n_classes
        f = rng.normal(size=(len(problems), d)) * 3
        shift, hessian_moved = 0.0, 0.0
        for row, k in enumerate(problems):
            grads, hessians = [], []
            for labels in (codes, other):
                signs = np.where(labels == k, 1.0, -1.0)
                m = signs * (Z @ f[row])
                grads.append(-(signs / (1.0 + np.exp(m))) @ Z)  # n grad of the loss sum
                w = np.exp(m) / (1.0 + np.exp(m)) ** 2
                hessians.append((Z * w[:, None]).T @ Z)
            shift += np.sum((grads[0] - grads[1]) ** 2)
            hessian_moved = max(hessian_moved, np.abs(hessians[0] - hessians[1]).max())
        assert math.sqrt(shift) <= math.sqrt(touched) * params["gradient_sensitivity"] + 1e-12
        assert hessian_moved < 1e-12  # the logistic loss's curvature is even: no Jacobian term


def test_gaussian_objective_perturbation_refuses_a_loss_whose_curvature_moves():
    with pytest.raises(ValueError, match="curvature"):
        gaussian_perturbation_params("objective", epsilon=1.0, delta=DELTA, n_samples=100,
                                     n_classes=2, reg=0.1, loss=HuberHingeLoss(0.5),
                                     privacy="label")
