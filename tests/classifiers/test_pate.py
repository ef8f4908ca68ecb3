"""PATEClassifier: label independence, isolated teachers, spends and released state."""

import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading

from sklearn_labeldp import BudgetAccountant, BudgetError
from sklearn_labeldp.classifiers import PATEClassifier
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.mechanisms import confident_gnmax_spend, gnmax_spend, lnmax_spend

RECORDS = []


class RecordingTeacher(ClassifierMixin, BaseEstimator):
    """Records the row ids (column 0 of X) and labels it is fitted on; votes its majority."""

    def fit(self, X, y):
        RECORDS.append((np.asarray(X)[:, 0].astype(int), np.asarray(y).copy()))
        self.classes_ = np.unique(y)
        self.majority_ = np.bincount(y).argmax()
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


class RecordingSpreading(LabelSpreading):
    """LabelSpreading that records the targets it is fitted on."""

    def fit(self, X, y):
        RECORDS.append(np.asarray(y).copy())
        return super().fit(X, y)


def _indexed(n=400, K=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    X = np.column_stack([np.arange(n), rng.normal(size=n) + y])
    return X, y


def _fit_recording(X, y, **kw):
    RECORDS.clear()
    # Every teacher votes its part's majority on every query: one answered label.
    with pytest.warns(UserWarning, match="same label"):
        clf = PATEClassifier(
            RecordingTeacher(),
            student=LogisticRegression(),
            n_teachers=7,
            n_queries=40,
            aggregator="lnmax",
            epsilon=1e4,
            classes=[0, 1],
            random_state=3,
            **kw,
        ).fit(X, y)
    teachers = RECORDS[-7:]  # the first record is the label-free trial fit
    return clf, teachers


def test_teachers_see_only_their_own_disjoint_part():
    X, y = _indexed()
    _, teachers = _fit_recording(X, y)
    ids = [rows for rows, _ in teachers]
    joined = np.concatenate(ids)
    assert joined.size == X.shape[0]
    np.testing.assert_array_equal(np.sort(joined), np.arange(X.shape[0]))
    for rows, labels in teachers:
        np.testing.assert_array_equal(labels, y[rows])


def test_partition_and_queries_do_not_depend_on_the_labels():
    X, y = _indexed()
    clf_a, parts_a = _fit_recording(X, y)
    clf_b, parts_b = _fit_recording(X, np.random.default_rng(9).permutation(y))
    for (rows_a, _), (rows_b, _) in zip(parts_a, parts_b, strict=True):
        np.testing.assert_array_equal(rows_a, rows_b)
    # LNMax answers every query: the answered rows are the queries.
    assert clf_a.n_answered_ == 40
    np.testing.assert_array_equal(clf_a.answered_indices_, clf_b.answered_indices_)


def test_answers_follow_the_teachers_majority_at_large_epsilon():
    X, y = _indexed()
    clf, teachers = _fit_recording(X, y)
    votes = np.array([np.bincount(labels).argmax() for _, labels in teachers])
    expected = np.bincount(votes, minlength=2).argmax()
    assert np.all(clf.answered_labels_ == expected)  # 7 votes, 2 classes: no tie


def test_semi_supervised_student_gets_all_inputs_with_minus_one():
    X, y = make_circle_gaussians(600, 3, sigma=0.2, random_state=0)
    RECORDS.clear()
    clf = PATEClassifier(
        student=RecordingSpreading(),
        n_teachers=20,
        n_queries=30,
        epsilon=5.0,
        classes=range(3),
        random_state=0,
    ).fit(X, y)
    targets = RECORDS[-1]
    assert targets.shape == (600,)
    labelled = np.flatnonzero(targets >= 0)
    np.testing.assert_array_equal(labelled, clf.answered_indices_)
    np.testing.assert_array_equal(targets[labelled], clf.answered_labels_)
    assert 0 < clf.n_answered_ <= 30


@pytest.mark.parametrize("aggregator", ["lnmax", "gnmax", "confident_gnmax"])
def test_spend_matches_the_aggregator(aggregator):
    X, y = make_circle_gaussians(400, 2, sigma=0.3, random_state=1)
    acc = BudgetAccountant(delta=0.5)
    clf = PATEClassifier(
        n_teachers=10,
        n_queries=25,
        aggregator=aggregator,
        epsilon=2.0,
        delta=1e-6,
        classes=[0, 1],
        accountant=acc,
        random_state=0,
    ).fit(X, y)
    p = clf.mechanism_params_
    expected = {
        "lnmax": lambda: lnmax_spend(p["gamma"], 25),
        "gnmax": lambda: gnmax_spend(p["sigma"], 25, 1e-6),
        "confident_gnmax": lambda: confident_gnmax_spend(p["sigma1"], p["sigma2"], 25, 1e-6),
    }[aggregator]()
    assert clf.epsilon_ == expected.epsilon <= 2.0
    assert clf.epsilon_ == pytest.approx(2.0)
    assert clf.delta_ == (0.0 if aggregator == "lnmax" else 1e-6)
    assert acc.total().epsilon == pytest.approx(clf.epsilon_)
    if aggregator == "confident_gnmax":
        assert p["sigma1"] == pytest.approx(2.0 * p["sigma2"])
        assert p["threshold"] == pytest.approx(6.0)


@pytest.mark.parametrize(
    "kw",
    [
        {"n_teachers": 500},
        {"n_queries": 500},
        {"student": KNeighborsClassifier(n_neighbors=500)},
        {"estimator": KNeighborsClassifier(n_neighbors=100)},
        {"aggregator": "median"},
        {"threshold": 1.5},
        {"estimator": LinearRegression()},
        {"student": KNeighborsRegressor()},
    ],
)
def test_configuration_error_costs_nothing(kw):
    X, y = make_circle_gaussians(300, 2, sigma=0.3, random_state=1)
    acc = BudgetAccountant(epsilon=10.0, delta=0.5)
    clf = PATEClassifier(**({"n_queries": 30, "classes": [0, 1], "accountant": acc} | kw))
    with pytest.raises(ValueError):
        clf.fit(X, y)
    assert acc.spends == [] or len(acc.spends) == 0
    assert not [k for k in vars(clf) if k.endswith("_") and not k.startswith("_")]


def test_fitted_object_holds_no_teacher_and_no_votes():
    X, y = make_circle_gaussians(400, 3, sigma=0.3, random_state=1)
    clf = PATEClassifier(
        KNeighborsClassifier(n_neighbors=3),
        student=LogisticRegression(),
        n_teachers=10,
        n_queries=40,
        epsilon=3.0,
        classes=range(3),
    ).fit(X, y)
    fitted = {k for k in vars(clf) if k.endswith("_") and not k.startswith("_")}
    assert fitted == {
        "estimator_",
        "answered_indices_",
        "answered_labels_",
        "n_answered_",
        "mechanism_params_",
        "classes_",
        "privacy_spend_",
        "epsilon_",
        "delta_",
        "n_features_in_",
    }
    assert isinstance(clf.estimator_, LogisticRegression)
    blob = pickle.dumps(clf)
    assert b"KNeighborsClassifier" in pickle.dumps(clf.estimator)
    assert blob.count(b"KNeighborsClassifier") == 1  # only the unfitted parameter
    assert all(np.ndim(v) <= 1 for v in vars(clf).values() if isinstance(v, np.ndarray))


def test_student_accuracy_well_above_chance():
    X, y = make_circle_gaussians(3000, 4, sigma=0.25, random_state=0)
    Xt, yt = make_circle_gaussians(1000, 4, sigma=0.25, random_state=1)
    clf = PATEClassifier(
        student=LabelSpreading(),
        n_teachers=60,
        n_queries=40,
        epsilon=3.0,
        classes=range(4),
        random_state=0,
    ).fit(X, y)
    assert clf.n_answered_ >= 10
    assert clf.score(Xt, yt) > 0.75  # chance is 0.25


def test_clone_pickle_pipeline_and_search_with_shared_accountant():
    X, y = make_circle_gaussians(600, 2, sigma=0.3, random_state=2)
    acc = BudgetAccountant(delta=0.5)
    base = PATEClassifier(n_teachers=10, n_queries=30, epsilon=2.0, classes=[0, 1], accountant=acc)
    assert clone(base).get_params()["accountant"] is acc
    pipe = make_pipeline(StandardScaler(), base).fit(X, y)
    assert set(pipe.predict(X)) <= {0, 1}
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(restored.predict(X), pipe.predict(X))
    search = GridSearchCV(base, {"aggregator": ["lnmax", "gnmax"]}, cv=2).fit(X, y)
    assert hasattr(search, "best_estimator_")
    # 1 pipeline fit + 2 candidates x 2 folds + the refit.
    assert len(acc.spends) == 6


def test_no_answer_raises_after_charging():
    # Teachers that memorise random labels never all agree: nothing reaches the threshold.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 2)), rng.integers(0, 2, size=400)
    acc = BudgetAccountant(delta=0.5)
    clf = PATEClassifier(
        KNeighborsClassifier(n_neighbors=1),
        n_teachers=20,
        n_queries=20,
        epsilon=100.0,
        threshold=1.0,
        classes=[0, 1],
        accountant=acc,
        random_state=0,
    )
    with pytest.raises(ValueError, match="no query was answered"):
        clf.fit(X, y)
    assert len(acc.spends) == 1
    assert not hasattr(clf, "estimator_")


def test_parallel_teachers_give_the_same_release():
    X, y = make_circle_gaussians(400, 3, sigma=0.4, random_state=3)
    kw = dict(n_teachers=8, n_queries=30, epsilon=5.0, classes=range(3), random_state=4)
    one = PATEClassifier(n_jobs=1, **kw).fit(X, y)
    two = PATEClassifier(n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(one.answered_indices_, two.answered_indices_)
    np.testing.assert_array_equal(one.answered_labels_, two.answered_labels_)


class WeightedRecordingTeacher(RecordingTeacher):
    """A recording teacher that also records its sample weights."""

    def fit(self, X, y, sample_weight=None):
        RECORDS.append((np.asarray(X)[:, 0].astype(int), np.asarray(y), sample_weight))
        self.classes_ = np.unique(y)
        self.majority_ = np.bincount(y).argmax()
        return self


@pytest.mark.filterwarnings("ignore:.*same label:UserWarning")
def test_sample_weight_reaches_each_teacher_for_its_own_rows():
    X, y = _indexed(seed=1)
    weights = np.arange(X.shape[0], dtype=float) + 1.0
    RECORDS.clear()
    PATEClassifier(
        WeightedRecordingTeacher(),
        student=LogisticRegression(),
        n_teachers=5,
        n_queries=20,
        aggregator="gnmax",
        epsilon=50.0,
        classes=[0, 1],
    ).fit(X, y, sample_weight=weights)
    assert len(RECORDS) == 6  # the trial fit and the five teachers
    for rows, _, w in RECORDS:
        np.testing.assert_array_equal(w, weights[rows])


def test_nothing_internally_derived_is_kept():
    X, y = make_circle_gaussians(300, 2, sigma=0.3, random_state=0)
    clf = PATEClassifier(
        n_teachers=5, n_queries=20, epsilon=5.0, classes=[0, 1], student=LabelSpreading()
    ).fit(X, y)
    assert clf.random_state is None
    assert b"DerivedRandomState" not in pickle.dumps(clf)
    assert all(
        v is None for k, v in clf.estimator_.get_params().items() if k.endswith("random_state")
    )


class FitSemiStudent(ClassifierMixin, BaseEstimator):
    """A student with the ``fit_semi`` protocol (as a FixMatch network has): records targets."""

    def fit(self, X, y):
        raise AssertionError("a student with fit_semi must be fitted through fit_semi")

    def fit_semi(self, X, y):
        RECORDS.append(("fit_semi", np.asarray(y).copy()))
        self.classes_ = np.unique(y[y >= 0])
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_student_with_fit_semi_gets_every_row_through_fit_semi():
    X, y = make_circle_gaussians(500, 3, sigma=0.2, random_state=0)
    RECORDS.clear()
    clf = PATEClassifier(
        student=FitSemiStudent(), n_teachers=20, n_queries=25, epsilon=5.0, classes=range(3),
        random_state=0,
    ).fit(X, y)
    assert [kind for kind, _ in RECORDS] == ["fit_semi", "fit_semi"]  # trial fit, then the fit
    targets = RECORDS[-1][1]
    assert targets.shape == (500,)
    np.testing.assert_array_equal(np.flatnonzero(targets >= 0), clf.answered_indices_)
    assert isinstance(clf.estimator_, FitSemiStudent)


def test_one_row_parts_and_one_query_need_no_trial_fit_that_cannot_succeed():
    X, y = make_circle_gaussians(60, 2, sigma=0.3, random_state=0)
    acc = BudgetAccountant(delta=0.5)
    # One row per teacher: every teacher votes its own label, none is fitted.
    clf = PATEClassifier(n_teachers=60, n_queries=10, epsilon=2.0, classes=[0, 1],
                         accountant=acc, random_state=0).fit(X, y)
    assert clf.n_answered_ >= 1 and len(acc.spends) == 1
    with pytest.warns(UserWarning, match="same label"):
        one = PATEClassifier(n_teachers=5, n_queries=1, epsilon=2.0, classes=[0, 1],
                             aggregator="gnmax", accountant=acc, random_state=0).fit(X, y)
    assert one.n_answered_ == 1 and len(acc.spends) == 2


def test_a_noise_that_drowns_the_votes_is_announced_before_the_charge():
    X, y = make_circle_gaussians(500, 2, sigma=0.3, random_state=0)
    acc = BudgetAccountant(epsilon=0.1, delta=0.5)
    with pytest.warns(UserWarning, match="most answers will be noise"):
        with pytest.raises(BudgetError):
            PATEClassifier(n_teachers=10, n_queries=100, epsilon=1.0, classes=[0, 1],
                           accountant=acc).fit(X, y)


def test_predict_proba_follows_the_student():
    from sklearn.svm import LinearSVC

    teacher_only = PATEClassifier(LogisticRegression(), student=LinearSVC())
    student_only = PATEClassifier(LinearSVC(), student=LogisticRegression())
    assert not hasattr(teacher_only, "predict_proba")
    assert hasattr(student_only, "predict_proba")


class FitSemiTeacher(FitSemiStudent):
    """A teacher with ``fit_semi``: records its targets and votes its part's majority."""

    def fit_semi(self, X, y):
        RECORDS.append(("teacher", np.asarray(X)[:, 0].astype(int), np.asarray(y).copy()))
        self.classes_ = np.unique(y[y >= 0])
        self.majority_ = np.bincount(y[y >= 0]).argmax()
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


@pytest.mark.filterwarnings("ignore:.*same label:UserWarning")
def test_a_fit_semi_teacher_reads_its_part_and_sees_every_other_row_unlabeled():
    X, y = _indexed()
    RECORDS.clear()
    PATEClassifier(FitSemiTeacher(), student=LogisticRegression(), n_teachers=4, n_queries=20,
                   aggregator="gnmax", epsilon=100.0, classes=[0, 1], random_state=0).fit(X, y)
    teachers = [r for r in RECORDS if r[0] == "teacher"][1:]  # after the trial fit
    assert len(teachers) == 4
    labelled = []
    for _, rows, targets in teachers:
        np.testing.assert_array_equal(rows, np.arange(len(y)))  # every input, in order
        part = np.flatnonzero(targets >= 0)
        np.testing.assert_array_equal(targets[part], y[part])
        labelled.append(part)
    np.testing.assert_array_equal(np.sort(np.concatenate(labelled)), np.arange(len(y)))


def test_a_selection_noise_that_drowns_the_threshold_is_announced():
    X, y = make_circle_gaussians(500, 2, sigma=0.3, random_state=0)
    with pytest.warns(UserWarning, match="selection noise") as record:
        PATEClassifier(n_teachers=20, n_queries=50, epsilon=8.0, classes=[0, 1],
                       random_state=0).fit(X, y)
    assert not any("vote noise" in str(w.message) for w in record)  # sigma2 is fine here


class EpochStudent(FitSemiStudent):
    """Records the max_epochs it is fitted with."""

    def __init__(self, max_epochs=50):
        self.max_epochs = max_epochs

    def fit_semi(self, X, y):
        RECORDS.append(("epochs", self.max_epochs))
        return super().fit_semi(X, y)


def test_trial_fits_are_one_epoch_and_the_real_fit_keeps_its_epochs():
    X, y = make_circle_gaussians(400, 2, sigma=0.2, random_state=0)
    RECORDS.clear()
    PATEClassifier(student=EpochStudent(50), n_teachers=10, n_queries=30, epsilon=5.0,
                   classes=[0, 1], random_state=0).fit(X, y)
    epochs = [r[1] for r in RECORDS if r[0] == "epochs"]
    assert epochs == [1, 50]


def test_verbose_shows_a_progress_bar_over_the_teachers(capsys):
    pytest.importorskip("tqdm")
    X, y = make_circle_gaussians(300, 2, sigma=0.3, random_state=0)
    PATEClassifier(n_teachers=12, n_queries=20, epsilon=5.0, classes=[0, 1], verbose=1,
                   random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "PATE teachers" in err and "12/12" in err
