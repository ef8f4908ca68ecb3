"""The label memorization audit: validity on every private estimator, power, statistics."""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.svm import LinearSVC

from sklearn_labeldp.audit import AuditResult, clopper_pearson_lower, label_memorization_audit
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.exceptions import PrivacyLeakWarning
from sklearn_labeldp.priors import ClusterPrior

N, K = 3000, 3


@pytest.fixture(scope="module")
def data():
    # Distinct random points: each training point is its own nearest neighbour,
    # so a 1-NN base memorises exactly the privatised label of every canary.
    rng = np.random.default_rng(0)
    return rng.normal(size=(N, 2)), rng.integers(K, size=N)


def private_estimators(eps):
    """Every private estimator of the package, with a memorising 1-NN base."""
    return {
        "RR": RRWithPriorClassifier(KNeighborsClassifier(1), epsilon=eps),
        "LP-2ST": RRWithPriorClassifier(KNeighborsClassifier(1), epsilon=eps, n_stages=2),
        "RRWithPrior-cluster": RRWithPriorClassifier(
            KNeighborsClassifier(1), epsilon=eps,
            prior=ClusterPrior(n_clusters=10, epsilon=eps / 4),
        ),
        "VectorApprox": VectorApproxClassifier(KNeighborsRegressor(1), epsilon=eps),
        "ALIBI-Laplace": ALIBIClassifier(KNeighborsRegressor(1), epsilon=eps),
        "ALIBI-Gaussian": ALIBIClassifier(
            KNeighborsRegressor(1), epsilon=eps, noise="gaussian", delta=1e-5
        ),
    }


def rr_accuracy(eps, n_classes):
    """Exact attack accuracy against RR with a 1-NN base (ties broken by a coin)."""
    e = math.exp(eps)
    return 0.5 + 0.5 * (e - 1.0) / (e + n_classes - 1.0)


@pytest.mark.parametrize("eps", [1.0, 4.0])
@pytest.mark.parametrize("name", list(private_estimators(1.0)))
def test_private_estimators_pass_the_audit(data, name, eps):
    X, y = data
    estimator = private_estimators(eps)[name]
    with warnings.catch_warnings():
        # The audit passes the full label set, so no label-set leak is reported.
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = label_memorization_audit(estimator, X, y, n_canaries=N, random_state=1)
    assert res.epsilon_claimed == pytest.approx(eps)
    assert res.n_canaries == N
    assert 0.0 <= res.epsilon_lower <= res.epsilon_claimed
    # The estimator passed in is untouched (the audit fits a clone).
    assert estimator.classes is None and estimator.random_state is None
    assert not hasattr(estimator, "epsilon_")


@pytest.mark.parametrize("name", ["RR", "ALIBI-Laplace"])
def test_audit_is_not_vacuous_for_rr_and_alibi(data, name):
    """Malek et al. (2021) find ALIBI within ~2.5x of its bound; ask for 30% of eps at eps=4."""
    X, y = data
    res = label_memorization_audit(
        private_estimators(4.0)[name], X, y, n_canaries=N, random_state=2
    )
    assert 0.3 * 4.0 <= res.epsilon_lower <= 4.0


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_rr_attack_accuracy_matches_theory(data, eps):
    X, y = data
    res = label_memorization_audit(
        private_estimators(eps)["RR"], X, y, n_canaries=N, random_state=3
    )
    expected = rr_accuracy(eps, K)
    # 4.5 binomial standard deviations: fails by chance with probability < 1e-5.
    assert abs(res.accuracy - expected) < 4.5 * math.sqrt(expected * (1 - expected) / N)


def test_non_private_one_nn_has_a_large_lower_bound(data):
    X, y = data
    res = label_memorization_audit(KNeighborsClassifier(1), X, y, n_canaries=N, random_state=0)
    assert res.accuracy == 1.0
    assert res.epsilon_claimed == math.inf
    assert res.delta_claimed == 0.0
    assert res.epsilon_lower > 3.0
    # All correct: a_lo = (1 - confidence)^(1/n), so eps_lower = log(a_lo / (1 - a_lo)).
    a_lo = 0.05 ** (1.0 / N)
    assert res.accuracy_lower == pytest.approx(a_lo)
    assert res.epsilon_lower == pytest.approx(math.log(a_lo / (1.0 - a_lo)))
    assert res.tightness == 0.0


class LyingClassifier(KNeighborsClassifier):
    """A 1-NN that claims eps = 1: the audit must catch it."""

    def fit(self, X, y):
        super().fit(X, y)
        self.epsilon_, self.delta_ = 1.0, 0.0
        return self


def test_audit_detects_a_false_privacy_claim(data):
    X, y = data
    res = label_memorization_audit(LyingClassifier(1), X, y, n_canaries=500, random_state=0)
    assert res.epsilon_claimed == 1.0
    assert res.epsilon_lower > res.epsilon_claimed


def test_decision_function_only_classifier(data):
    X, y = data
    # A linear model cannot memorise random labels: its guesses are near chance.
    res = label_memorization_audit(LinearSVC(), X, y, n_canaries=1000, random_state=0)
    assert res.epsilon_claimed == math.inf
    assert res.epsilon_lower < 0.5


def test_result_fields_and_reproducibility(data):
    X, y = data
    est = ALIBIClassifier(KNeighborsRegressor(1), epsilon=2.0)
    res = label_memorization_audit(est, X, y, n_canaries=400, confidence=0.9, random_state=7)
    again = label_memorization_audit(est, X, y, n_canaries=400, confidence=0.9, random_state=7)
    assert isinstance(res, AuditResult) and res == again
    assert res.n_canaries == 400 and res.confidence == 0.9
    assert res.accuracy == res.n_correct / 400
    assert res.accuracy_lower == pytest.approx(clopper_pearson_lower(res.n_correct, 400, 0.9))
    assert res.accuracy_lower <= res.accuracy
    expected = max(0.0, math.log(res.accuracy_lower / (1 - res.accuracy_lower)))
    assert res.epsilon_lower == pytest.approx(expected)
    assert res.tightness == pytest.approx(res.epsilon_lower / 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.accuracy = 0.0
    default = label_memorization_audit(KNeighborsClassifier(1), X[:101], y[:101], random_state=0)
    assert default.n_canaries == 50


def test_string_labels_and_lists():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2)).tolist()
    y = np.array(["a", "b", "c", "d"])[rng.integers(4, size=300)].tolist()
    res = label_memorization_audit(KNeighborsClassifier(1), X, y, n_canaries=300, random_state=0)
    assert res.accuracy == 1.0


def test_canary_labels_are_uniform_and_wrong():
    """Record the labels the clone was trained on: canaries get a uniform wrong label."""

    class Recorder(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.y_ = np.asarray(y)
            self.classes_ = np.unique(y)
            return self

        def predict_proba(self, X):
            return np.full((len(X), self.classes_.size), 1.0 / self.classes_.size)

    recorded = {}

    class Spy(Recorder):
        def fit(self, X, y):
            recorded["y"] = np.asarray(y)
            return super().fit(X, y)

    n = 20000
    y = np.random.default_rng(1).integers(4, size=n)
    X = np.arange(n, dtype=float)[:, None]
    res = label_memorization_audit(Spy(), X, y, n_canaries=n, random_state=0)
    # Every example is a canary: its trained label is wrong, and uniform among the wrong ones.
    shift = (recorded["y"] - y) % 4
    assert np.all(shift != 0)
    assert stats.chisquare(np.bincount(shift, minlength=4)[1:]).pvalue > 1e-4
    # Constant scores: every guess is a tie, decided by a fair coin.
    assert abs(res.accuracy - 0.5) < 4.5 * math.sqrt(0.25 / n)


def test_wrong_label_helpers_are_exact():
    from sklearn_labeldp.audit._memorization import _second_wrong_labels, _wrong_labels

    rng = np.random.default_rng(0)
    codes = rng.integers(5, size=50000)
    first = _wrong_labels(codes, 5, rng)
    second = _second_wrong_labels(codes, first, 5, rng)
    assert np.all(first != codes) and np.all(second != codes) and np.all(second != first)
    assert first.max() < 5 and second.max() < 5
    # Given (y, y'), y'' is uniform over the 3 remaining labels.
    mask = (codes == 0) & (first == 2)
    counts = np.bincount(second[mask], minlength=5)[[1, 3, 4]]
    assert stats.chisquare(counts).pvalue > 1e-4


def test_clopper_pearson_known_values():
    # k = n: a_lo = (1 - confidence)^(1/n) in closed form.
    assert clopper_pearson_lower(20, 20, 0.95) == pytest.approx(0.05 ** (1 / 20))
    # k = 1: a_lo = 1 - confidence^(1/n).
    assert clopper_pearson_lower(1, 10, 0.95) == pytest.approx(1 - 0.95 ** 0.1)
    # A textbook value: 7 successes out of 10, one-sided 95% -> 0.3933.
    assert clopper_pearson_lower(7, 10, 0.95) == pytest.approx(0.39338, abs=1e-4)
    assert clopper_pearson_lower(0, 10) == 0.0
    # Coverage: the bound lies below the truth in at least 95% of draws.
    rng = np.random.default_rng(0)
    k = rng.binomial(50, 0.3, size=20000)
    lo = clopper_pearson_lower(k, np.full(k.shape, 50), 0.95)
    assert np.mean(lo <= 0.3) >= 0.95
    with pytest.raises(ValueError, match="n_successes"):
        clopper_pearson_lower(11, 10)
    with pytest.raises(TypeError, match="integers"):
        clopper_pearson_lower(1.5, 10)


def test_delta_enters_the_bound():
    from sklearn_labeldp.audit._memorization import _epsilon_from_accuracy

    assert _epsilon_from_accuracy(0.5) == 0.0
    assert _epsilon_from_accuracy(0.75) == pytest.approx(math.log(3))
    assert _epsilon_from_accuracy(0.75, delta=0.05) == pytest.approx(math.log(0.7 / 0.25))
    assert _epsilon_from_accuracy(0.52, delta=0.05) == 0.0
    assert _epsilon_from_accuracy(1.0) == math.inf


class NoScores(BaseEstimator):
    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X))


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"n_canaries": 0}, ValueError, "n_canaries"),
        ({"n_canaries": 301}, ValueError, "n_canaries"),
        ({"n_canaries": 2.5}, TypeError, "n_canaries"),
        ({"n_canaries": True}, TypeError, "n_canaries"),
        ({"confidence": 1.0}, ValueError, "confidence"),
        ({"confidence": 0.0}, ValueError, "confidence"),
        ({"confidence": "high"}, TypeError, "confidence"),
    ],
)
def test_bad_parameters(kwargs, err, match):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 2)), rng.integers(3, size=300)
    with pytest.raises(err, match=match):
        label_memorization_audit(KNeighborsClassifier(1), X, y, **kwargs)


def test_bad_estimator_and_data():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 2)), rng.integers(3, size=300)
    with pytest.raises(TypeError, match="predict_proba nor decision_function"):
        label_memorization_audit(NoScores(), X, y)
    with pytest.raises(ValueError, match="at least 3 distinct labels"):
        label_memorization_audit(LogisticRegression(), X, y % 2)
    with pytest.raises(ValueError, match="inconsistent"):
        label_memorization_audit(KNeighborsClassifier(1), X[:10], y)
