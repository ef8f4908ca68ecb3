"""The "auto" hyperparameters of the linear models: public inputs only, user values win,
recorded, and useful on small data (n of 100-400, K of 2-3)."""

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from sklearn.datasets import make_blobs, make_classification

from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
)
from sklearn_labeldp.linear_model._calibration import (
    FIRST_ORDER_AUTO_STEPS,
    NEWTON_LABEL_SIGNAL,
    auto_first_order_steps,
    auto_regularization,
    perturbation_noise_share,
)
from sklearn_labeldp.linear_model._least_squares import AUTO_ALPHA_FLOOR, adaptive_ridge
from sklearn_labeldp.linear_model._losses import LogisticLoss

AUTO_CASES = {
    "ls-label-weighted": (DPLeastSquaresClassifier(delta=1e-5), ["alpha_"]),
    "ls-full-ridge": (DPLeastSquaresClassifier(privacy="full", formulation="ridge",
                                               data_norm=4.0), ["alpha_"]),
    "ls-full-weighted": (DPLeastSquaresClassifier(privacy="full", data_norm=4.0), ["alpha_"]),
    "newton-full": (DPLogisticRegression(solver="newton", delta=1e-5, privacy="full",
                                         data_norm=4.0), ["C_", "n_noisy_steps_"]),
    "newton-label": (DPLogisticRegression(solver="newton", delta=1e-5),
                     ["C_", "n_noisy_steps_"]),
    "fc-label": (DPLogisticRegression(solver="fc", delta=1e-5), ["C_", "n_noisy_steps_"]),
    "sgd-label": (DPLogisticRegression(solver="sgd", delta=1e-5), ["C_", "n_noisy_steps_"]),
    "adam-full-minibatch": (DPLogisticRegression(solver="adam", delta=1e-5, privacy="full",
                                                 batch_size=50, data_norm=4.0),
                            ["C_", "n_noisy_steps_"]),
    "objective": (DPLogisticRegression(), ["C_"]),
    "output-full": (DPLogisticRegression(solver="output", privacy="full", data_norm=4.0),
                    ["C_"]),
    "svc": (DPLinearSVC(), ["C_"]),
}


def _data(n=300, k=3, seed=0):
    X, y = make_blobs(n, n_features=4, centers=k, cluster_std=2.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


@pytest.mark.parametrize("name", AUTO_CASES)
def test_auto_values_are_public_and_recorded(name):
    estimator, attributes = AUTO_CASES[name]
    X, y = _data()
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # data_norm and one-vs-rest warnings: not tested here
        fits = [estimator.set_params(epsilon=2.0, classes=[0, 1, 2], random_state=1).fit(X, ys)
                for ys in (y, rng.permutation(y), np.zeros_like(y))]
    for attribute in attributes:
        values = [getattr(fit, attribute) for fit in fits]
        # Permuted or constant labels resolve to the same value: no label is read.
        assert values[0] == values[1] == values[2]
        assert values[0] > 0
        assert fits[0].mechanism_params_[attribute[:-1]] == values[0]
    if "n_noisy_steps_" in attributes:
        assert fits[0].n_iter_ == fits[0].n_noisy_steps_


@pytest.mark.parametrize(("name", "given"), [
    ("ls-label-weighted", {"alpha": 3.5}),
    ("ls-full-ridge", {"alpha": 2.0}),
    ("newton-full", {"C": 0.25, "n_noisy_steps": 3}),
    ("newton-label", {"C": 0.3}),
    ("sgd-label", {"C": 4.0, "n_noisy_steps": 7}),
    ("svc", {"C": 0.5}),
    ("output-full", {"C": 0.5}),
])
def test_user_value_wins(name, given):
    estimator, _ = AUTO_CASES[name]
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = estimator.set_params(epsilon=2.0, classes=[0, 1, 2], random_state=1, **given).fit(
            X, y)
    for key, value in given.items():
        assert getattr(fit, f"{key}_") == value
        assert fit.mechanism_params_[key] == value
        assert fit.get_params()[key] == value  # fit never mutates a parameter
    if "C" in given:
        n_mapped_reg = 1.0 / (given["C"] * X.shape[0] * 2.0)
        assert fit.mechanism_params_["regularization"] == pytest.approx(n_mapped_reg)


def test_auto_steps_follow_the_random_walk_rule():
    # Two classes, label DP: T = n mu / eta with eta = 4, mu the Gaussian (in noise stds)
    # of one step at (epsilon, delta) by the exact profile (Balle and Wang 2018), before
    # clipping to [10, 1000]; the dimension does not enter.
    n, d, eps, delta = 10000, 9, 1.0, 1e-5
    mu = brentq(lambda m: norm.cdf(-eps / m + m / 2) - math.exp(eps) * norm.cdf(-eps / m - m / 2)
                - delta, 1e-3, 50.0, xtol=1e-14)
    expected = math.floor(n * mu / 4.0)
    assert FIRST_ORDER_AUTO_STEPS[0] < expected < FIRST_ORDER_AUTO_STEPS[1]
    kw = dict(delta=delta, privacy="label", max_grad_norm=None, learning_rate=None)
    got = auto_first_order_steps("sgd", epsilon=eps, n_samples=n, n_classes=2, n_features=d,
                                 **kw)
    assert abs(got - expected) <= 1
    assert auto_first_order_steps("sgd", epsilon=eps, n_samples=n, n_classes=2,
                                  n_features=10 * d, **kw) == got
    # More budget or more rows: more steps; more classes (a larger label sensitivity) or a
    # larger learning rate: fewer.
    assert auto_first_order_steps("sgd", epsilon=2.0, n_samples=n, n_classes=2,
                                  n_features=d, **kw) > got
    assert auto_first_order_steps("sgd", epsilon=eps, n_samples=n, n_classes=3,
                                  n_features=d, **kw) < got
    assert auto_first_order_steps("sgd", epsilon=eps, n_samples=n, n_classes=2, n_features=d,
                                  **dict(kw, learning_rate=8.0)) < got
    # Clipped to the range at both ends.
    assert auto_first_order_steps("sgd", epsilon=0.5, n_samples=100, n_classes=3,
                                  n_features=5, **kw) == FIRST_ORDER_AUTO_STEPS[0]
    assert auto_first_order_steps("sgd", epsilon=8.0, n_samples=10**6, n_classes=2,
                                  n_features=5, **kw) == FIRST_ORDER_AUTO_STEPS[1]
    # DP-Adam takes at least (D / learning_rate)^2 steps: 100 at its default 0.1, 400
    # at 0.05; above that floor the same T as DP-SGD.
    small = dict(epsilon=0.5, n_samples=100, n_classes=3, n_features=5)
    assert auto_first_order_steps("adam", **small, **kw) == 100
    assert auto_first_order_steps("adam", **small, **dict(kw, learning_rate=0.05)) == 400
    assert auto_first_order_steps("adam", epsilon=eps, n_samples=n, n_classes=2,
                                  n_features=d, **kw) == got


@pytest.mark.parametrize(("solver", "privacy", "k"), [
    ("objective", "label", 2), ("objective", "full", 3), ("output", "label", 3),
    ("output", "full", 2)])
def test_auto_perturbation_regularization_is_the_noise_share(solver, privacy, k):
    # nu = d g / (n eps_problem); Lambda = c nu (objective, c = 1/4 logistic) or nu
    # (output); C_ is its scikit-learn C, recorded with the Lambda the noise was
    # calibrated with. Both privacy settings are calibrated for a label change: g = 1 and
    # epsilon / 2 for each of the 2 problems it touches (the whole epsilon with K = 2).
    X, y = _data(300, k)
    n, d = X.shape[0], X.shape[1] + 1
    eps_problem = 2.0 if k == 2 else 1.0
    g = 1.0
    nu = d * g / (n * eps_problem)
    reg = 0.25 * nu if solver == "objective" else nu
    assert perturbation_noise_share(epsilon=2.0, n_samples=n, n_classes=k, n_features=d,
                                    loss=LogisticLoss(), privacy=privacy) == pytest.approx(nu)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # data_norm under full DP, one-vs-rest
        fit = DPLogisticRegression(solver=solver, privacy=privacy, epsilon=2.0,
                                   classes=list(range(k)), random_state=0).fit(X, y)
    assert fit.mechanism_params_["regularization"] == pytest.approx(reg)
    assert fit.C_ == fit.mechanism_params_["C"] == pytest.approx(1.0 / (2.0 * n * reg))
    # The Huber hinge: output perturbation keeps nu; objective perturbation balances the
    # ridge against the noise with a reference norm sqrt(2 d), the unit-margin predictor of the
    # mapped rows [x / R, 1] / sqrt(2) (nu = 0.017 or 0.033 here, below a class's share 1/K:
    # the margin branch, Lambda = nu / sqrt(d)).
    svc = DPLinearSVC(solver=solver, privacy=privacy, epsilon=2.0, huber_width=0.25,
                      classes=list(range(k)), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(X, y)
    g_svc = 2.0  # the Huber hinge's label-change gradient bound (neighbour_bounds)
    nu_svc = d * g_svc / (n * eps_problem)
    reg_svc = nu_svc / math.sqrt(d) if solver == "objective" else nu_svc
    assert svc.mechanism_params_["regularization"] == pytest.approx(reg_svc)


def test_auto_regularization_is_the_noise_scale():
    # Lambda = (1/4) sqrt(d / 2) sigma, at least (1/4) sigma^2 / gamma with a signal gamma,
    # and C_ is its scikit-learn C.
    assert auto_regularization(0.02, 50) == pytest.approx(0.25 * 5.0 * 0.02)
    # Small noise: the floor (1/4) 0.02^2 / 0.01 = 0.01 is below 0.025, which stays.
    assert auto_regularization(0.02, 50, signal=0.01) == pytest.approx(0.25 * 5.0 * 0.02)
    # Large noise: sigma = 0.2 > sqrt(50 / 2) 0.01 = 0.05, the floor 0.25 * 4 = 1 wins.
    assert auto_regularization(0.2, 50, signal=0.01) == pytest.approx(0.25 * 0.04 / 0.01)
    X, y = _data(400, 2)
    d = X.shape[1] + 1
    kw = dict(delta=1e-5, classes=[0, 1], random_state=0)
    # The floor is DP-Newton's under label DP only; DP-FC and full-DP DP-Newton keep the
    # noise scale. At epsilon 0.1 on 400 rows the noise is large enough for the floor.
    for estimator, signal in [
            (DPLogisticRegression(solver="newton", epsilon=0.1, **kw), NEWTON_LABEL_SIGNAL),
            (DPLogisticRegression(solver="fc", epsilon=0.1, **kw), None),
            (DPLogisticRegression(solver="newton", privacy="full", data_norm=4.0, epsilon=0.1,
                                  **kw), None)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = estimator.fit(X, y)
        sigma = fit.mechanism_params_["noise_scales"]["gradient"]
        reg = auto_regularization(sigma, d, signal=signal)
        assert fit.mechanism_params_["regularization"] == pytest.approx(reg)
        assert fit.C_ == pytest.approx(1.0 / (2.0 * X.shape[0] * reg))
        if signal is not None:
            assert reg > auto_regularization(sigma, d)  # the floor is active


def _gaussian_mu(eps, delta):
    # The largest Gaussian (in noise stds) within (eps, delta), exact profile (Balle and
    # Wang 2018).
    return brentq(lambda m: norm.cdf(-eps / m + m / 2) - math.exp(eps) * norm.cdf(-eps / m - m / 2)
                  - delta, 1e-3, 50.0, xtol=1e-14)


@pytest.mark.parametrize(("eps", "expected_C", "floor"), [(2.0, 0.2837205, False),
                                                           (0.2, 0.00601900, True)])
def test_label_dp_newton_auto_C_exact_value(eps, expected_C, floor):
    # Two classes, n = 400, d = 4 + 1, label DP, delta = 1e-5, 5 steps: mu^2 = T / s^2, each
    # step's mean gradient has L2 sensitivity 1 / n (a label flip moves one residual by 1 on
    # a row of norm <= 1), sigma = s / n; Lambda = (1/4) max(sqrt(d / 2) sigma,
    # sigma^2 / 0.01) and C = 1 / (2 n Lambda). At epsilon 2 the noise scale wins
    # (sigma = 0.011 < sqrt(5 / 2) 0.01), at epsilon 0.2 the floor (sigma = 0.091).
    n, d, delta, steps = 400, 5, 1e-5, 5
    sigma = math.sqrt(steps) / _gaussian_mu(eps, delta) / n
    reg = 0.25 * (sigma ** 2 / 0.01 if floor else math.sqrt(d / 2) * sigma)
    assert (sigma > math.sqrt(d / 2) * 0.01) == floor
    assert 1.0 / (2.0 * n * reg) == pytest.approx(expected_C, rel=1e-5)
    X, y = _data(n, 2)
    kw = dict(solver="newton", delta=delta, epsilon=eps, classes=[0, 1], random_state=0)
    fits = [DPLogisticRegression(**kw).fit(X, labels)
            for labels in (y, np.random.default_rng(1).permutation(y), np.zeros_like(y))]
    assert fits[0].n_noisy_steps_ == steps
    assert fits[0].C_ == pytest.approx(expected_C, rel=1e-5)
    assert fits[0].mechanism_params_["C"] == fits[0].C_
    # The labels do not enter: permuted or constant labels resolve the very same C_.
    assert fits[1].C_ == fits[2].C_ == fits[0].C_
    # A user's C wins.
    assert DPLogisticRegression(C=0.3, **kw).fit(X, y).C_ == 0.3


def test_adaptive_ridge_reads_the_smallest_eigenvalue():
    p, sigma = 6, 10.0
    stds = {"A": sigma, "b": 1.0}
    kw = dict(n_features=p, noise_stds=stds, privacy="label", formulation="weighted",
              gram_weight=1.0, data_norm=1.0, noise_norm="typical")
    # A singular Gram matrix leaves the whole noise scale sqrt(p / 2) sigma to the ridge,
    # or AdaSSP's spectral norm sqrt(2 p) sigma, twice as much.
    assert adaptive_ridge(gram=np.zeros((p, p)), **kw) == pytest.approx(math.sqrt(3) * sigma)
    spectral = dict(kw, noise_norm="spectral")
    assert adaptive_ridge(gram=np.zeros((p, p)), **spectral) == pytest.approx(
        math.sqrt(12) * sigma)
    # A Gram matrix whose smallest eigenvalue exceeds the noise needs only the floor.
    assert adaptive_ridge(gram=100.0 * np.eye(p), **kw) == AUTO_ALPHA_FLOOR
    # In between, the eigenvalue is subtracted.
    assert adaptive_ridge(gram=5.0 * np.eye(p), **kw) == pytest.approx(math.sqrt(3) * sigma - 5)
    assert adaptive_ridge(gram=5.0 * np.eye(p), **spectral) == pytest.approx(
        math.sqrt(12) * sigma - 5)
    # Full DP: the released G's eigenvalue is discounted by the noise's spectral norm.
    full = dict(kw, privacy="full", noise_stds={"A": sigma, "b": 1.0, "G": sigma})
    lower = max(0.0, 100.0 - math.sqrt(2 * p) * sigma)
    assert adaptive_ridge(gram=100.0 * np.eye(p), **full) == pytest.approx(
        max(1.0, math.sqrt(p / 2) * math.hypot(sigma, sigma) - lower))


@pytest.mark.parametrize(("n", "k"), [(150, 2), (400, 3)])
def test_defaults_learn_on_small_data(n, k):
    # Every default configuration beats the majority class by a clear margin on small,
    # well-separated data at epsilon = 4 (median of 3 seeds). With the former defaults
    # (C=1, 10 steps) full-DP DP-Newton did not: 0.54 (n=150, K=2, majority 0.50) and
    # 0.60 (n=400, K=3, majority 0.34).
    X, y = make_classification(n + 2000, n_features=5, n_informative=3, n_redundant=0,
                               n_classes=k, n_clusters_per_class=1, class_sep=2.0,
                               random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    X_train, y_train, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    majority = np.bincount(y_test).max() / y_test.size
    estimators = {
        "ls-full": DPLeastSquaresClassifier(privacy="full", data_norm=4.0),
        "ls-label": DPLeastSquaresClassifier(),
        "newton-full": DPLogisticRegression(solver="newton", delta=1e-5, privacy="full",
                                            data_norm=4.0),
        "fc-full": DPLogisticRegression(solver="fc", delta=1e-5, privacy="full",
                                        data_norm=4.0),
        "sgd-full": DPLogisticRegression(solver="sgd", delta=1e-5, privacy="full",
                                         data_norm=4.0),
        "adam-label": DPLogisticRegression(solver="adam", delta=1e-5),
        "objective-label": DPLogisticRegression(),
        "output-label": DPLogisticRegression(solver="output"),
        "svc-full": DPLinearSVC(privacy="full", data_norm=4.0),
    }
    for name, estimator in estimators.items():
        scores = [estimator.set_params(epsilon=4.0, classes=list(range(k)), random_state=s)
                  .fit(X_train, y_train).score(X_test, y_test) for s in range(3)]
        assert np.median(scores) > majority + 0.15, (name, scores, majority)


def test_one_vs_rest_warning_once_when_the_split_leaves_noise():
    # Three classes, epsilon / 2 per problem under either privacy: the noise share
    # d g / (n eps / 2) = 5 / (300 * 0.04) = 0.42 exceeds a class's 1/3 at epsilon = 0.08,
    # and 5 / (300 * 0.1) = 0.17 does not at 0.2.
    X, y = _data(300, 3)
    for privacy in ("full", "label"):
        with pytest.warns(UserWarning, match="one-vs-rest") as record:
            DPLogisticRegression(epsilon=0.08, privacy=privacy, data_norm=4.0,
                                 classes=[0, 1, 2], random_state=0).fit(X, y)
        assert sum("one-vs-rest" in str(w.message) for w in record) == 1
    # Two classes, or a budget that leaves signal, do not warn.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPLogisticRegression(epsilon=0.2, privacy="full", data_norm=4.0, classes=[0, 1, 2],
                             random_state=0).fit(X, y)
        DPLinearSVC(epsilon=0.5, privacy="full", data_norm=4.0, classes=[0, 1],
                    random_state=0).fit(X, (y > 0).astype(int))
        Xb, yb = _data(4000, 3)
        DPLogisticRegression(epsilon=8.0, data_norm=4.0, classes=[0, 1, 2],
                             random_state=0).fit(Xb, yb)
