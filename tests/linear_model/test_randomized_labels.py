"""The "randomized_response" solver of the private ERM models and the solver="auto" rule."""

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.linear_model import DPLinearSVC, DPLogisticRegression
from sklearn_labeldp.linear_model._erm_base import _feature_map
from sklearn_labeldp.linear_model._losses import HuberHingeLoss, LogisticLoss
from sklearn_labeldp.linear_model._minimise import minimise
from sklearn_labeldp.linear_model._perturbed_erm import perturbation_noise_share
from sklearn_labeldp.linear_model._randomized_labels import (
    AUTO_SOLVER_MAX_CHANGED,
    AUTO_SOLVER_MAX_INFLATION,
    AUTO_SOLVER_NOISE_RATIO,
    auto_solver,
    debiasing_term,
    randomized_response_regularization,
)
from sklearn_labeldp.mechanisms import randomized_response
from sklearn_labeldp.mechanisms._randomized_response import rr_vote_inflation


def _iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("n_classes", [2, 3, 10])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_debiased_loss_is_unbiased_for_every_true_label(n_classes, epsilon):
    # For one row and either true side, the expectation over the randomized label of
    # l(s t) + linear(s).f is the clean loss l(y t), for every f (Natarajan et al. 2013).
    keep = math.exp(epsilon) / (math.exp(epsilon) + n_classes - 1)
    flip = (1 - keep) / (n_classes - 1)
    loss = LogisticLoss()
    z = np.array([[0.3, -0.5, 0.2]])
    for f in (np.array([1.0, 2.0, -3.0]), np.array([-4.0, 0.5, 0.0])):
        t = float((z @ f)[0])
        for true, p_positive in ((1.0, keep), (-1.0, flip)):
            expected = 0.0
            for s, prob in ((1.0, p_positive), (-1.0, 1 - p_positive)):
                value = loss.value(np.array([s * t]))[0]
                value += debiasing_term(z, np.array([s]), loss, keep, flip) @ f
                expected += prob * value
            assert expected == pytest.approx(loss.value(np.array([true * t]))[0], rel=1e-12)


def test_a_loss_without_even_curvature_is_not_debiased():
    z = np.ones((3, 2))
    assert not debiasing_term(z, np.array([1.0, -1.0, 1.0]), HuberHingeLoss(0.5), 0.9, 0.1).any()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_only_read_of_the_labels_is_randomized_response(n_classes):
    # The coefficients are those of the debiased fit on the library's randomized
    # response drawn from the same generator: the mechanism is exactly randomized
    # response (whose output law tests/mechanisms checks), the rest post-processing.
    X, y = make_classification(150, 4, n_informative=3, n_redundant=0,
                               n_classes=n_classes, random_state=1)
    clf = DPLogisticRegression(epsilon=2.0, solver="randomized_response", C=3.0,
                               classes=np.arange(n_classes), random_state=7).fit(X, y)
    # The fit's mechanism generator: the second of three spawned from random_state.
    noisy = randomized_response(y, epsilon=2.0, n_classes=n_classes,
                                random_state=np.random.default_rng(7).spawn(3)[1])
    params = clf.mechanism_params_
    Z = _feature_map(X, clf.data_norm_, True)
    problems = [1] if n_classes == 2 else range(n_classes)
    for row, k in enumerate(problems):
        signs = np.where(noisy == k, 1.0, -1.0)
        linear = debiasing_term(Z, signs, LogisticLoss(), params["keep_probability"],
                                params["flip_probability"])
        f, _ = minimise(LogisticLoss(), Z, signs, params["regularization"], linear, 1e-6, 1000)
        np.testing.assert_allclose(clf.coef_[row], f[:-1] / math.sqrt(2) / clf.data_norm_,
                                   rtol=1e-9, atol=1e-12)


def test_the_record_is_a_pure_randomized_response_release():
    X, y = _iris()
    accountant = BudgetAccountant()
    clf = DPLogisticRegression(epsilon=3.0, delta=1e-5, solver="randomized_response",
                               classes=[0, 1, 2], random_state=0, accountant=accountant)
    clf.fit(X, y)
    spend = clf.privacy_spend_
    assert (clf.epsilon_, clf.delta_) == (3.0, 0.0)  # pure DP whatever delta
    assert spend.mechanism == "randomized response"
    assert (spend.description.kind, spend.description.value) == ("randomized_response", (3.0, 3))
    assert (accountant.total().epsilon, accountant.total().delta) == (3.0, 0.0)
    params = clf.mechanism_params_
    assert params["keep_probability"] == pytest.approx(math.exp(3) / (math.exp(3) + 2))
    assert params["flip_probability"] == pytest.approx(1 / (math.exp(3) + 2))
    assert not hasattr(clf, "n_iter_")


def test_randomized_response_refuses_full_privacy_before_any_charge():
    X, y = _iris()
    accountant = BudgetAccountant()
    clf = DPLogisticRegression(solver="randomized_response", privacy="full", data_norm=3.0,
                               classes=[0, 1, 2], accountant=accountant)
    with pytest.raises(ValueError, match="privacy='label'"):
        clf.fit(X, y)
    assert accountant.spends == []


@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_auto_solver_switches_where_the_label_variance_is_inflated_tenfold(n_classes):
    kw = dict(delta=0.0, n_classes=n_classes, privacy="label", n_samples=10**6,
              loss=LogisticLoss())
    for epsilon in (0.2, 0.5, 0.6, 0.8, 1.0, 1.5, 3.0, 8.0):
        rule = auto_solver(epsilon=epsilon, **kw)
        inflated = rr_vote_inflation(epsilon, n_classes) > AUTO_SOLVER_MAX_INFLATION
        assert rule == ("objective" if inflated else "randomized_response")
    kw["n_classes"] = 2
    assert auto_solver(epsilon=0.6, **kw) == "objective"
    assert auto_solver(epsilon=0.7, **kw) == "randomized_response"
    assert auto_solver(epsilon=8.0, **{**kw, "privacy": "full"}) == "objective"
    assert auto_solver(epsilon=8.0, **{**kw, "delta": 1e-5, "n_samples": None},
                       dask=True) == "newton"


def test_auto_solver_compares_the_two_noises_for_the_logistic_loss():
    # Randomized response's noise in the mean gradient, sqrt((rho - 1) / n), against twice
    # objective perturbation's nu = d / (n eps_problem) (eps / 2 per problem for K = 3).
    kw = dict(delta=0.0, privacy="label", loss=LogisticLoss())
    # The iris (105 rows, 4 features + intercept), K = 3: at epsilon 1, rho = 5.94,
    # sqrt(4.94 / 105) = 0.217 > 2 * 5 / 52.5 = 0.190: objective perturbation; at epsilon 2,
    # rho = 1.93, sqrt(0.93 / 105) = 0.094 < 2 * 5 / 105 = 0.095: randomized response.
    iris = dict(n_classes=3, n_samples=105, n_features=5, **kw)
    rho = rr_vote_inflation(1.0, 3)
    assert math.sqrt((rho - 1) / 105) > AUTO_SOLVER_NOISE_RATIO * 5 / (105 * 0.5)
    assert auto_solver(epsilon=1.0, **iris) == "objective"
    rho = rr_vote_inflation(2.0, 3)
    assert math.sqrt((rho - 1) / 105) < AUTO_SOLVER_NOISE_RATIO * 5 / (105 * 1.0)
    assert auto_solver(epsilon=2.0, **iris) == "randomized_response"
    # The wine's 13 features at epsilon 1: randomized response.
    assert auto_solver(epsilon=1.0, n_classes=3, n_samples=124, n_features=14,
                       **kw) == "randomized_response"
    # Without the dimension (or for the Huber hinge, not debiased) no comparison is made.
    assert auto_solver(epsilon=1.0, n_classes=3, n_samples=105, **kw) == "randomized_response"
    assert auto_solver(epsilon=1.0, **{**iris, "loss": HuberHingeLoss(0.5)}) == (
        "randomized_response")
    # The estimator reads the same public quantities: permuted or constant labels resolve
    # the same solver_, and a user's solver wins.
    X, y = _iris()
    fits = [DPLogisticRegression(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X, labels)
            for labels in (y, np.random.default_rng(0).permutation(y), np.zeros_like(y))]
    assert [fit.solver_ for fit in fits] == ["objective"] * 3
    given = DPLogisticRegression(epsilon=1.0, solver="randomized_response", classes=[0, 1, 2],
                                 random_state=0).fit(X, y)
    assert given.solver_ == "randomized_response"
    # 150 rows at epsilon 4: sqrt(0.095 / 150) = 0.025 < 2 * 5 / 300 = 0.033.
    assert DPLogisticRegression(epsilon=4.0, classes=[0, 1, 2], random_state=0).fit(
        X, y).solver_ == "randomized_response"


def test_beyond_a_tenfold_inflation_the_two_noises_must_be_at_most_equal():
    # Past rho = 10 the randomized labels are taken only while their noise in the mean
    # gradient is at most objective perturbation's (factor 1, not 2).
    kw = dict(delta=0.0, privacy="label", loss=LogisticLoss(), n_classes=10)
    loss = LogisticLoss()

    def noises(epsilon, n, d):
        rho = rr_vote_inflation(epsilon, 10)
        share = perturbation_noise_share(epsilon=epsilon, n_samples=n, n_classes=10,
                                         n_features=d, loss=loss, privacy="label")
        return rho, math.sqrt((rho - 1) / n), share

    # 2,000 Fashion-MNIST-sized rows (785 mapped features) at eps 1: randomized labels.
    rho, labels, share = noises(1.0, 2000, 785)
    assert rho > AUTO_SOLVER_MAX_INFLATION and labels < share
    assert auto_solver(epsilon=1.0, n_samples=2000, n_features=785, **kw) == (
        "randomized_response")
    # The digits' shape (1,257 rows, 65) at eps 1: the label noise is between one and two
    # times objective perturbation's, which the factor 2 below rho = 10 would accept.
    rho, labels, share = noises(1.0, 1257, 65)
    assert rho > AUTO_SOLVER_MAX_INFLATION and share < labels < AUTO_SOLVER_NOISE_RATIO * share
    assert auto_solver(epsilon=1.0, n_samples=1257, n_features=65, **kw) == "objective"


def test_the_ridge_of_randomized_labels_stops_growing_with_the_dimension_at_9():
    # min(d, 9) (rho - 1) / (27 n) + 1 / (200 n): from 9 mapped dimensions on the dimension
    # cancels against the norm of a separating predictor on rows spread over it.
    rho = rr_vote_inflation(1.0, 10)

    def reg(d):
        return randomized_response_regularization(epsilon=1.0, n_samples=2000, n_classes=10,
                                                  n_features=d)

    assert reg(785) == reg(9) == pytest.approx((rho - 1) / (3 * 2000) + 1 / (200 * 2000))
    assert reg(5) == pytest.approx(5 * (rho - 1) / (27 * 2000) + 1 / (200 * 2000))
    fits = [DPLogisticRegression(epsilon=1.0, solver="randomized_response", classes=range(3),
                                 random_state=0).fit(X, np.arange(120) % 3)
            for X in (np.random.default_rng(0).normal(size=(120, d)) for d in (3, 8, 40))]
    assert fits[0].C_ > fits[1].C_ == fits[2].C_


def test_the_hinge_randomizes_labels_only_while_few_are_expected_to_change():
    # n (1 - p) <= 1000: at eps 1 with two classes 26.9% of the labels change.
    kw = dict(epsilon=1.0, delta=0.0, n_classes=2, privacy="label", loss=HuberHingeLoss(0.5))
    changed = 1.0 - math.exp(1) / (math.exp(1) + 1)
    limit = int(AUTO_SOLVER_MAX_CHANGED / changed)
    assert auto_solver(n_samples=limit, **kw) == "randomized_response"
    assert auto_solver(n_samples=limit + 1, **kw) == "objective"
    assert auto_solver(**{**kw, "loss": LogisticLoss()}, n_samples=10**7) == (
        "randomized_response")


def test_auto_is_resolved_from_public_quantities_and_recorded():
    X, y = _iris()
    rng = np.random.default_rng(0)
    for epsilon, solver in ((0.5, "objective"), (4.0, "randomized_response")):
        fits = [DPLogisticRegression(epsilon=epsilon, classes=[0, 1, 2], random_state=0)
                .fit(X, labels) for labels in (y, rng.permutation(y), np.zeros_like(y))]
        assert {fit.solver_ for fit in fits} == {solver}
        assert len({fit.C_ for fit in fits}) == 1
        assert fits[0].mechanism_params_["C"] == fits[0].C_
    default = DPLogisticRegression(epsilon=4.0, classes=[0, 1, 2]).fit(X, y)
    reg = randomized_response_regularization(epsilon=4.0, n_samples=150, n_classes=3,
                                             n_features=5)
    assert default.C_ == pytest.approx(1 / (2 * reg * 150))
    assert default.mechanism_params_["regularization"] == pytest.approx(reg)


def test_a_user_solver_and_C_win_over_auto():
    X, y = _iris()
    clf = DPLogisticRegression(epsilon=8.0, solver="output", C=2.0, classes=[0, 1, 2],
                               random_state=0).fit(X, y)
    assert (clf.solver_, clf.C_) == ("output", 2.0)
    assert clf.privacy_spend_.mechanism == "ERM output perturbation"
    clf = DPLogisticRegression(epsilon=0.2, solver="randomized_response", classes=[0, 1, 2],
                               random_state=0).fit(X, y)
    assert clf.solver_ == "randomized_response"


def test_randomized_labels_learn_on_small_data_at_a_large_epsilon():
    # Iris, 150 rows, three classes: at eps 8 about one label in 1500 changes, and the
    # default is as good as scikit-learn's non-private model on the same rows.
    X, y = _iris()
    clf = DPLogisticRegression(epsilon=8.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.solver_ == "randomized_response"
    assert clf.score(X, y) >= LogisticRegression().fit(X, y).score(X, y) - 0.03


def test_randomized_response_round_trips_through_clone_and_search():
    X, y = _iris()
    search = GridSearchCV(
        DPLogisticRegression(epsilon=4.0, classes=[0, 1, 2], random_state=0),
        {"C": ["auto", 10.0]}, cv=3).fit(X, y)
    assert search.best_estimator_.solver_ == "randomized_response"
    assert clone(search.best_estimator_).get_params()["solver"] == "auto"


def test_linear_svc_randomizes_labels_too_and_fits_the_hinge_as_it_is():
    X, y = _iris()
    svc = DPLinearSVC(epsilon=4.0, classes=[0, 1, 2], random_state=3).fit(X, y)
    assert svc.solver_ == "randomized_response"
    assert svc.privacy_spend_.description.kind == "randomized_response"
    # The coefficients are the plain Huber-hinge minimiser on the randomized labels.
    noisy = randomized_response(y, epsilon=4.0, n_classes=3,
                                random_state=np.random.default_rng(3).spawn(3)[1])
    Z = _feature_map(X, svc.data_norm_, True)
    signs = np.where(noisy == 0, 1.0, -1.0)
    f, _ = minimise(HuberHingeLoss(0.5), Z, signs, svc.mechanism_params_["regularization"],
                    np.zeros(5), 1e-6, 1000, exact=False)
    np.testing.assert_allclose(svc.coef_[0], f[:-1] / math.sqrt(2) / svc.data_norm_,
                               rtol=1e-7, atol=1e-10)
    with pytest.warns(UserWarning, match="one-vs-rest"):  # objective perturbation's split
        assert DPLinearSVC(epsilon=0.5, classes=[0, 1, 2]).fit(X, y).solver_ == "objective"
