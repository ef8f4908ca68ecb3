"""Behaviour of VectorApproxClassifier and ALIBIClassifier."""

import math
import pickle
import re

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq
from scipy.stats import norm
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from sklearn_labeldp import BudgetAccountant
from sklearn_labeldp.accounting import gaussian_sigma_for_approx_dp
from sklearn_labeldp.classifiers import ALIBIClassifier, VectorApproxClassifier
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.mechanisms import alibi_posterior, debias_rappor, laplace_one_hot

K = 5
CLASSES = list(range(K))


class TargetRecorder(RegressorMixin, BaseEstimator):
    """Remembers its targets; predicts a fixed row for every input."""

    def __init__(self, prediction=None):
        self.prediction = prediction

    def fit(self, X, Y):
        self.targets_ = np.array(Y, dtype=float)
        self.n_fits_ = getattr(self, "n_fits_", 0) + 1
        return self

    def predict(self, X):
        row = self.targets_.mean(axis=0) if self.prediction is None else self.prediction
        return np.tile(row, (len(X), 1))


@pytest.fixture(scope="module")
def data():
    return make_circle_gaussians(1000, K, sigma=0.15, random_state=0)


def test_vector_approx_trains_on_rappor_bits(data):
    X, _ = data
    n, eps = 20_000, 1.0
    X_big = np.zeros((n, 2))
    y = np.arange(n) % K
    clf = VectorApproxClassifier(TargetRecorder(), epsilon=eps, classes=CLASSES, random_state=0)
    bits = clf.fit(X_big, y).estimator_.targets_
    q_plus = math.exp(eps / 2) / (1 + math.exp(eps / 2))
    on_label = bits[np.arange(n), y]
    assert stats.binomtest(int(on_label.sum()), n, q_plus).pvalue > 1e-3
    off = bits[np.arange(n)[:, None], (y[:, None] + np.arange(1, K)) % K]
    assert stats.binomtest(int(off.sum()), off.size, 1 - q_plus).pvalue > 1e-3
    assert clf.epsilon_ == eps and clf.delta_ == 0.0
    assert clf.privacy_spend_.mechanism == "RAPPOR"
    # Described: the bits measured above are binary randomized responses at eps / 2, and
    # a label change moves two of them, which a tight total composes as such.
    assert clf.privacy_spend_.description.value == eps


def test_vector_approx_predicts_argmax_and_debiased_proba(data):
    X, y = data
    scores = np.array([0.1, 0.6, 0.3, 0.2, 0.9])
    names = np.array(list("abcde"))
    clf = VectorApproxClassifier(TargetRecorder(prediction=scores), epsilon=2.0,
                                 classes=names, random_state=0).fit(X, names[y])
    assert set(clf.predict(X[:3])) == {"e"}
    np.testing.assert_allclose(clf.predict_proba(X[:3]),
                               debias_rappor(np.tile(scores, (3, 1)), epsilon=2.0))


@pytest.mark.parametrize(
    "base", [None, KNeighborsClassifier(20), LogisticRegression()], ids=["knn-reg", "knn", "lr"]
)
def test_vector_approx_learns(data, base):
    X, y = data
    X_test, y_test = make_circle_gaussians(2000, K, sigma=0.15, random_state=1)
    clf = VectorApproxClassifier(base, epsilon=2.0, classes=CLASSES, random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) > 0.85
    proba = clf.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_alibi_noise_is_drawn_once_and_rounds_refine_the_posterior(data):
    X, y = data
    eps, seed = 1.0, 3
    clf = ALIBIClassifier(TargetRecorder(prediction=np.array([0.5, 0.2, 0.1, 0.1, 0.1])),
                          epsilon=eps, classes=CLASSES, n_rounds=3, random_state=seed).fit(X, y)
    mechanism_rng = np.random.default_rng(seed).spawn(3)[1]
    noisy = laplace_one_hot(y, epsilon=eps, n_classes=K, random_state=mechanism_rng)
    first, second, third = (m.targets_ for m in clf.estimators_)
    np.testing.assert_allclose(first, alibi_posterior(noisy, epsilon=eps), rtol=1e-12)
    prior = np.array([0.5, 0.2, 0.1, 0.1, 0.1])
    expected = alibi_posterior(noisy, epsilon=eps, prior=np.tile(prior, (len(y), 1)))
    np.testing.assert_allclose(second, expected, rtol=1e-12)
    np.testing.assert_allclose(third, expected, rtol=1e-12)  # same prior, same noise
    np.testing.assert_allclose(clf.soft_labels_, third)
    assert [m.n_fits_ for m in clf.estimators_] == [1, 1, 1]
    assert clf.mechanism_params_["noise_scale"] == 2 / eps
    # Described: two coordinates move by 1 each, Laplace at eps / 2 each (a tight total
    # composes their product).
    assert clf.privacy_spend_.description.value == (eps / 2, 2) and clf.epsilon_ == eps


@pytest.mark.parametrize("post", ["simplex", "argmax"])
def test_alibi_other_post_processing(data, post):
    X, y = data
    clf = ALIBIClassifier(TargetRecorder(), epsilon=1.0, classes=CLASSES, n_rounds=1,
                          post_processing=post, random_state=0).fit(X, y)
    soft = clf.soft_labels_
    np.testing.assert_allclose(soft.sum(axis=1), 1.0)
    assert soft.min() >= 0
    if post == "argmax":
        assert set(np.unique(soft)) == {0.0, 1.0}


def _gaussian_profile(epsilon, mu):
    """Balle and Wang (2018)'s exact delta(epsilon) of the Gaussian of sensitivity mu stds."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


def test_alibi_gaussian_is_calibrated_by_the_exact_profile(data):
    X, y = data
    clf = ALIBIClassifier(LogisticRegression(), epsilon=2.0, noise="gaussian", delta=1e-5,
                          classes=CLASSES, random_state=0).fit(X, y)
    assert (clf.epsilon_, clf.delta_) == (2.0, 1e-5)
    # The one-hot label moves by sqrt(2) in L2: the least sigma is sqrt(2) / mu, mu the
    # largest sensitivity in noise stds whose exact profile at epsilon 2 is 1e-5.
    mu = brentq(lambda m: _gaussian_profile(2.0, m) - 1e-5, 1e-3, 10.0, xtol=1e-14)
    sigma = clf.mechanism_params_["noise_scale"]
    assert sigma == pytest.approx(math.sqrt(2) / mu, rel=1e-9)
    assert _gaussian_profile(2.0, math.sqrt(2) / sigma) <= 1e-5 * (1 + 1e-9)
    # Less noise than the zCDP calibration it replaces (Canonne, Kamath and Steinke 2020).
    assert sigma < 0.95 * gaussian_sigma_for_approx_dp(2.0, 1e-5, sensitivity=math.sqrt(2))
    params = clf.privacy_spend_.params
    assert clf.privacy_spend_.description.value == math.sqrt(2) / sigma
    assert params["rho"] == pytest.approx(1 / sigma**2)
    assert clf.score(X, y) > 0.6  # well above chance (0.2) despite sigma ~ 2.8


def test_alibi_gaussian_fits_compose_as_one_gaussian(data):
    pytest.importorskip("dp_accounting")
    X, y = data
    clf = ALIBIClassifier(LogisticRegression(), epsilon=1.0, noise="gaussian", delta=1e-6,
                          classes=CLASSES, n_rounds=1, random_state=0).fit(X[:200], y[:200])
    acc = BudgetAccountant(math.inf, 1.0)
    for _ in range(19):
        acc.spend(clf.privacy_spend_)
    # 19 Gaussians of sqrt(2) / sigma stds are one of sqrt(19) times that (Dong, Roth
    # and Su 2022), read at the recorded deltas plus the slack.
    mu = math.sqrt(19 * 2) / clf.mechanism_params_["noise_scale"]
    exact = brentq(lambda e: _gaussian_profile(e, mu) - (19e-6 + 1e-6), 0.0, 50.0, xtol=1e-12)
    tight = acc.total(slack=1e-6).epsilon
    assert exact * (1 - 1e-9) <= tight <= exact * 1.01
    assert tight < 0.4 * acc.total().epsilon  # 19 by the sum


@pytest.mark.parametrize("base", [None, LogisticRegression()], ids=["knn-reg", "lr"])
def test_alibi_learns(data, base):
    X, y = data
    X_test, y_test = make_circle_gaussians(2000, K, sigma=0.15, random_state=1)
    clf = ALIBIClassifier(base, epsilon=2.0, classes=CLASSES, random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) > 0.85


@pytest.mark.parametrize(
    ("estimator", "match"),
    [
        (VectorApproxClassifier(LinearSVC(), classes=CLASSES), "predict_proba"),
        (ALIBIClassifier(LinearSVC(), classes=CLASSES), "predict_proba"),
        (ALIBIClassifier(n_rounds=0, classes=CLASSES), "n_rounds"),
        (ALIBIClassifier(post_processing="argmax", classes=CLASSES), "n_rounds=1"),
        (ALIBIClassifier(noise="gaussian", classes=CLASSES), "needs delta"),
        (ALIBIClassifier(delta=1e-5, classes=CLASSES), "gaussian' only"),
        (ALIBIClassifier(noise="uniform", classes=CLASSES), "noise"),
        (ALIBIClassifier(epsilon=-1.0, classes=CLASSES), "epsilon"),
    ],
    ids=repr,
)
def test_bad_inputs_fail_before_the_budget_is_charged(data, estimator, match):
    X, y = data
    acc = BudgetAccountant(epsilon=100.0)
    with pytest.raises(ValueError, match=match):
        estimator.set_params(accountant=acc).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize(
    "estimator",
    [VectorApproxClassifier(epsilon=2.0, classes=CLASSES),
     ALIBIClassifier(epsilon=2.0, classes=CLASSES)],
    ids=["vector", "alibi"],
)
def test_sklearn_tools_round_trip(data, estimator):
    X, y = data
    acc = BudgetAccountant(epsilon=2.0)
    model = make_pipeline(StandardScaler(), clone(estimator).set_params(random_state=0,
                                                                         accountant=acc))
    model.fit(X, y)
    assert acc.total().epsilon == 2.0
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    name = model.steps[-1][0]
    search = GridSearchCV(clone(model).set_params(**{f"{name}__accountant": None}),
                          {f"{name}__estimator": [KNeighborsRegressor(5), KNeighborsRegressor(25)]},
                          cv=3).fit(X, y)
    assert search.best_estimator_[-1].epsilon_ == 2.0


def test_vector_approx_at_a_huge_epsilon_has_no_nan():
    # e^(eps/2) overflows above eps of about 1419: every probability must come
    # from the one overflow-free RAPPOR law.
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y = load_iris(return_X_y=True)
    clf = VectorApproxClassifier(
        LogisticRegression(), epsilon=2000.0, classes=[0, 1, 2], random_state=0
    ).fit(X, y)
    assert clf.mechanism_params_ == {"p_true": 1.0, "p_other": 0.0, "n_neighbors": None,
                                     "default_base": None}
    targets = clf.reusable_targets()
    assert (targets.agree_if_right, targets.agree_if_wrong) == (1.0, 0.0)
    assert np.isfinite(clf.predict_proba(X)).all()
    assert clf.score(X, y) > 0.9


def test_alibi_around_a_knn_classifier_is_the_knn_regressor_of_its_neighbourhood(data):
    # A k-NN classifier's fit takes no sample_weight: it learns the soft labels as
    # the k-NN regressor of the same neighbourhood, round after round.
    X, y = data
    kw = dict(epsilon=1.0, classes=CLASSES, random_state=0)
    classifier = ALIBIClassifier(KNeighborsClassifier(n_neighbors=15), **kw).fit(X, y)
    regressor = ALIBIClassifier(KNeighborsRegressor(n_neighbors=15), **kw).fit(X, y)
    assert isinstance(classifier.estimator_, KNeighborsRegressor)
    np.testing.assert_array_equal(classifier.predict_proba(X), regressor.predict_proba(X))


def test_vector_approx_verbose_counts_the_column_fits_whatever_the_labels(capsys):
    pytest.importorskip("tqdm")
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(300, 5, n_informative=3, n_classes=3, random_state=0)
    outputs = []
    for labels in (y, np.random.default_rng(0).permutation(y)):
        VectorApproxClassifier(LogisticRegression(), epsilon=2.0, classes=[0, 1, 2],
                               verbose=1, random_state=0).fit(X, labels)
        err = capsys.readouterr().err
        # The bar's totals and its end (how often tqdm refreshes it depends on timing).
        outputs.append((set(re.findall(r"\d+/(\d+)", err)), "3/3" in err))
    assert outputs[0] == outputs[1] == ({"3"}, True)
    VectorApproxClassifier(LogisticRegression(), epsilon=2.0, classes=[0, 1, 2],
                           random_state=0).fit(X, y)
    assert "bit columns" not in capsys.readouterr().err
