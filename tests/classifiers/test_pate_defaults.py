"""PATEClassifier's "auto" teacher and query counts: public inputs only, user values win,
recorded, and useful on small data."""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.classifiers import PATEClassifier
from sklearn_labeldp.mechanisms import confident_gnmax_sigmas, gnmax_sigma


def _small(n, K, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=K, n_clusters_per_class=1, class_sep=1.5,
                               random_state=seed)
    return StandardScaler().fit_transform(X), y


# The counts do not depend on the teacher: a cheap one (GaussianNB) where the
# default's accuracy is not what is tested.


def _fit(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.fit(X, y)


def _noise_free(params):
    return {k: v for k, v in params.items() if k != "threshold"}


@pytest.mark.parametrize("aggregator", ["confident_gnmax", "lnmax"])
def test_counts_are_resolved_from_public_inputs_only(aggregator):
    X, y = _small(120, 3)
    rng = np.random.default_rng(0)
    fits = [
        _fit(PATEClassifier(GaussianNB(), epsilon=4.0, aggregator=aggregator,
                            classes=[0, 1, 2], random_state=0), X, labels)
        for labels in (y, rng.permutation(y), np.zeros_like(y))
    ]
    resolved = {(f.n_teachers_, f.n_queries_) for f in fits}
    assert len(resolved) == 1
    assert len({repr(sorted(f.mechanism_params_.items())) for f in fits}) == 1
    assert {f.epsilon_ for f in fits} == {fits[0].epsilon_}


def test_resolved_values_are_recorded_and_a_user_value_wins():
    X, y = _small(120, 2)
    auto = _fit(PATEClassifier(GaussianNB(), epsilon=8.0, classes=[0, 1], random_state=0), X, y)
    params = auto.mechanism_params_
    assert (params["n_teachers"], params["n_queries"]) == (auto.n_teachers_, auto.n_queries_)
    assert auto.get_params()["n_teachers"] == "auto" == auto.get_params()["n_queries"]
    given = _fit(PATEClassifier(GaussianNB(), n_teachers=7, n_queries=33, epsilon=8.0,
                                classes=[0, 1], random_state=0), X, y)
    assert (given.n_teachers_, given.n_queries_) == (7, 33)
    assert given.mechanism_params_["n_teachers"] == 7
    # One count given, the other resolved against it: fewer teachers cover less noise.
    few = PATEClassifier(n_teachers=5, epsilon=8.0)._resolve_counts(200, 2)
    many = PATEClassifier(n_teachers=40, epsilon=8.0)._resolve_counts(200, 2)
    assert few[0] == 5 and many[0] == 40 and few[1] < many[1]
    assert PATEClassifier(n_queries=0.25, epsilon=8.0)._resolve_counts(200, 2)[1] == 50


@pytest.mark.parametrize("aggregator", ["confident_gnmax", "auto"])
@pytest.mark.parametrize("n,K", [(100, 2), (300, 3), (1257, 10), (32561, 2)])
def test_the_rule_covers_the_noise_within_the_rows(n, K, aggregator):
    # "auto" is GNMax: its own noise sets its counts.
    def noise(epsilon, Q):
        if aggregator == "confident_gnmax":
            return confident_gnmax_sigmas(epsilon, 1e-5, Q, 2.0)[1]
        return gnmax_sigma(epsilon, 1e-5, Q)

    margin = 3.5 * math.sqrt(1 + math.log(K))
    most_teachers = n // max(5, 2 * K)  # two rows per class or more
    floor = min(n, max(50, 5 * K))  # the student's few labels per class
    previous = 0
    for epsilon in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
        T, Q = PATEClassifier(epsilon=epsilon, aggregator=aggregator)._resolve_counts(n, K)
        sigma = noise(epsilon, Q)
        assert 1 <= T <= most_teachers and floor <= Q <= min(n, 1000)
        assert T == min(most_teachers, math.ceil(margin * sigma))
        if Q > floor:  # the margin rule set Q: the teachers cover its noise...
            assert margin * sigma <= T
            # ... and one more query would not be covered (or Q is at its cap).
            if Q < min(n, 1000):
                assert margin * noise(epsilon, Q + 1) > most_teachers
        else:  # the floor: the most teachers the rows allow, or fewer that cover it
            assert Q == floor
        assert Q >= previous  # a larger epsilon never buys fewer queries
        previous = Q


def test_the_floors_at_small_epsilon():
    # 300 rows, 2 classes, epsilon 0.5: the margin rule alone would ask one
    # query (the noise covers any margin of 60 teachers); the floor asks 50.
    assert PATEClassifier(epsilon=0.5)._resolve_counts(300, 2) == (60, 50)
    # The digits' 1,257 rows and 10 classes: teachers of 20 rows (2 per class).
    assert PATEClassifier(epsilon=4.0)._resolve_counts(1257, 10) == (62, 50)
    # A given n_teachers is kept; the floor still sets the queries.
    assert PATEClassifier(n_teachers=9, epsilon=0.5)._resolve_counts(300, 2) == (9, 50)


@pytest.mark.parametrize("n,K", [(100, 2), (150, 3)])
def test_defaults_fit_below_250_rows_at_every_epsilon(n, K):
    X, y = _small(n, K)
    for epsilon in (0.5, 8.0):  # the noise alone, and teachers that cover it
        clf = _fit(PATEClassifier(epsilon=epsilon, classes=range(K), random_state=0), X, y)
        assert clf.n_teachers_ <= n // 5 and clf.predict(X).shape == (n,)


def test_defaults_learn_on_small_data_at_large_epsilon():
    X, y = _small(300, 2, seed=1)
    X_test, y_test = X[200:], y[200:]
    clf = _fit(PATEClassifier(epsilon=8.0, classes=[0, 1], random_state=0), X[:200], y[:200])
    majority = max(y_test.mean(), 1 - y_test.mean())
    assert clf.n_answered_ >= 20
    assert clf.score(X_test, y_test) >= majority + 0.2


# --------------------------------------------------------------------------
# The "auto" aggregator and student (and the default teacher's class weights).


def _imbalanced(n=300, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               weights=[0.85], class_sep=1.5, random_state=seed)
    return StandardScaler().fit_transform(X), y


def _described(model):
    """What the student and the aggregator resolved to, as comparable text."""
    return (model.aggregator_, repr(model.student_),
            repr(sorted(model.student_.get_params().items())))


@pytest.mark.parametrize("n,K", [(150, 3), (300, 2)])
def test_auto_aggregator_and_student_resolve_from_public_inputs_only(n, K):
    X, y = _small(n, K)
    rng = np.random.default_rng(0)
    worlds = (y, rng.permutation(y), np.zeros_like(y), (y + 1) % K)
    for epsilon in (1.0, 8.0):
        fits = [_fit(PATEClassifier(epsilon=epsilon, classes=range(K), random_state=0), X, labels)
                for labels in worlds]
        assert len({_described(f) for f in fits}) == 1
        assert len({(f.n_teachers_, f.n_queries_) for f in fits}) == 1
        assert len({repr(sorted(f.mechanism_params_.items())) for f in fits}) == 1
        assert len({repr(f.privacy_spend_) for f in fits}) == 1


def test_the_auto_rule():
    from sklearn.pipeline import Pipeline
    from sklearn.semi_supervised import SelfTrainingClassifier

    from sklearn_labeldp.classifiers._pate import _auto_aggregator, _auto_student

    assert _auto_aggregator() == "gnmax"
    # Parts of fewer than 10 K rows: balanced class weights; self-training while Q < n.
    for n, K, T, Q, balanced in [(300, 2, 60, 50, True), (300, 2, 15, 50, False),
                                 (1257, 10, 62, 117, True), (32561, 2, 221, 1000, False),
                                 (400, 2, 20, 50, False), (400, 2, 21, 50, True)]:
        student = _auto_student(None, n, K, T, Q)
        assert isinstance(student, SelfTrainingClassifier)
        pipeline = student.estimator
        assert isinstance(pipeline, Pipeline)
        scaler, logistic = (step for _, step in pipeline.steps)
        assert scaler.with_mean
        assert logistic.class_weight == ("balanced" if balanced else None)
    # Every row queried: no unlabeled row for self-training.
    assert isinstance(_auto_student(None, 100, 2, 20, 100), Pipeline)
    # A sparse X is scaled without centring.
    assert not _auto_student(None, 300, 2, 60, 50, sparse_X=True).estimator.steps[0][1].with_mean
    # A teacher of the user's is the student.
    teacher = GaussianNB()
    assert _auto_student(teacher, 300, 2, 60, 50) is teacher


def test_auto_values_are_recorded_and_the_parameters_stay_auto():
    from sklearn.exceptions import NotFittedError
    from sklearn.semi_supervised import SelfTrainingClassifier
    from sklearn.utils.validation import check_is_fitted

    X, y = _small(300, 2)
    clf = _fit(PATEClassifier(epsilon=8.0, classes=[0, 1], random_state=0), X, y)
    assert clf.get_params()["aggregator"] == "auto" == clf.get_params()["student"]
    assert clf.aggregator_ == clf.mechanism_params_["aggregator"] == "gnmax"
    assert set(clf.mechanism_params_) == {"aggregator", "n_teachers", "n_queries",
                                          "noise_scale"}
    # student_ is the resolved template, unfitted; estimator_ the fitted student.
    assert isinstance(clf.student_, SelfTrainingClassifier)
    with pytest.raises(NotFittedError):
        check_is_fitted(clf.student_)
    assert isinstance(clf.estimator_, SelfTrainingClassifier)
    assert repr(clone(clf.estimator_)) == repr(clf.student_)
    assert clf.n_answered_ == clf.n_queries_  # GNMax answers every query
    assert clf.predict_proba(X[:3]).shape == (3, 2)


def test_a_user_value_wins_over_auto():
    from sklearn.linear_model import LogisticRegression

    X, y = _small(300, 2)
    kw = dict(epsilon=8.0, classes=[0, 1], random_state=0)
    confident = _fit(PATEClassifier(aggregator="confident_gnmax", **kw), X, y)
    assert confident.aggregator_ == confident.mechanism_params_["aggregator"]
    assert confident.aggregator_ == "confident_gnmax"
    assert {"threshold_noise_scale", "threshold"} <= set(confident.mechanism_params_)
    given = _fit(PATEClassifier(student=GaussianNB(var_smoothing=1e-3), **kw), X, y)
    assert isinstance(given.student_, GaussianNB) and given.student_.var_smoothing == 1e-3
    assert isinstance(given.estimator_, GaussianNB)
    # None keeps its meaning: a clone of the teacher, here the default one.
    teacher_clone = _fit(PATEClassifier(student=None, **kw), X, y)
    assert type(teacher_clone.student_) is LogisticRegression
    assert teacher_clone.student_.get_params() == LogisticRegression(
        class_weight="balanced").get_params()
    # "auto" with a teacher of the user's: a clone of that teacher.
    own = _fit(PATEClassifier(GaussianNB(), **kw), X, y)
    assert isinstance(own.student_, GaussianNB) and isinstance(own.estimator_, GaussianNB)
    # The counts follow the aggregator given: Confident-GNMax's noise is larger.
    assert confident.n_queries_ <= given.n_queries_


def test_the_ledger_of_auto_is_gnmax_exactly():
    from sklearn_labeldp import BudgetAccountant
    from sklearn_labeldp.mechanisms import gnmax_spend

    X, y = _small(300, 2)
    records = {}
    for aggregator in ("auto", "gnmax"):
        acc = BudgetAccountant(delta=0.5)
        clf = _fit(PATEClassifier(aggregator=aggregator, epsilon=4.0, delta=1e-6,
                                  classes=[0, 1], accountant=acc, random_state=0), X, y)
        records[aggregator] = (clf, acc)
    auto, acc = records["auto"]
    gnmax, _ = records["gnmax"]
    assert auto.privacy_spend_ == gnmax.privacy_spend_
    assert dict(auto.mechanism_params_) == dict(gnmax.mechanism_params_)
    (leaf,) = auto.privacy_spend_.parts
    p = auto.mechanism_params_
    assert leaf == gnmax_spend(p["noise_scale"], p["n_queries"], 1e-6)
    assert leaf.description.kind == "gaussian"
    assert leaf.description.value == pytest.approx(math.sqrt(2 * p["n_queries"]) /
                                                   p["noise_scale"])
    assert auto.epsilon_ == leaf.epsilon <= 4.0 and auto.delta_ == 1e-6
    assert acc.spends == [auto.privacy_spend_]
    assert acc.total().epsilon == pytest.approx(auto.epsilon_)


def test_defaults_do_not_collapse_to_the_majority_on_imbalanced_data():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score

    # 85/15, 300 training rows: parts of 5 rows, most without a minority row.
    X, y = _imbalanced(430, seed=0)
    X_test, y_test = X[300:], y[300:]
    kw = dict(epsilon=8.0, classes=[0, 1], random_state=0)
    old = _fit(PATEClassifier(LogisticRegression(), student=None, aggregator="confident_gnmax",
                              **kw), X[:300], y[:300])
    new = _fit(PATEClassifier(**kw), X[:300], y[:300])
    assert balanced_accuracy_score(y_test, old.predict(X_test)) == 0.5  # the majority only
    assert balanced_accuracy_score(y_test, new.predict(X_test)) >= 0.65
    assert new.score(X_test, y_test) >= 1 - y_test.mean()  # and no less accurate


@pytest.mark.parametrize("seed", [0, 1])
def test_one_class_teachers_abstain_so_a_10_percent_class_is_answered(seed):
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import train_test_split

    # 90/10, 301 training rows, epsilon 4: 60 parts of 5 rows, 59% of them without a
    # row of the 10% class. Had those teachers voted the majority class on every
    # query, the plurality would answer it nearly always: with these seeds the
    # student predicted it alone (balanced accuracy 0.5) until they abstained.
    X, y = make_classification(430, n_features=8, n_informative=4, n_redundant=2,
                               weights=[0.9], random_state=3000 + seed)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3,
                                                        random_state=seed, stratify=y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    clf = _fit(PATEClassifier(epsilon=4.0, classes=[0, 1], random_state=seed),
               X_train, y_train)
    assert (clf.n_teachers_, clf.n_queries_) == (60, 74)
    assert 0 < np.mean(clf.answered_labels_ == 1) < 0.5
    assert balanced_accuracy_score(y_test, clf.predict(X_test)) >= 0.7


def test_defaults_fit_a_sparse_matrix():
    from scipy import sparse

    X, y = _small(200, 2)
    X = sparse.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    clf = _fit(PATEClassifier(epsilon=8.0, classes=[0, 1], random_state=0), X, y)
    assert not clf.student_.estimator.steps[0][1].with_mean
    assert clf.predict(X).shape == (200,)
