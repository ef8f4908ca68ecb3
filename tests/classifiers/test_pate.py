"""PATEClassifier: label independence, isolated teachers, spends and released state."""

import contextlib
import logging
import os
import pickle
import re
import sys
import warnings

import numpy as np
import pytest
from _attack import path_str, walk
from joblib import Parallel, delayed, parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier
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
    # Keys named after the parameters they come from, and the calibrated noise.
    noise_keys = {
        "lnmax": {"gamma"}, "gnmax": {"noise_scale"},
        "confident_gnmax": {"threshold_noise_scale", "noise_scale", "threshold"},
    }[aggregator]
    assert set(p) == {"aggregator", "n_teachers", "n_queries"} | noise_keys
    assert (p["aggregator"], p["n_teachers"], p["n_queries"]) == (aggregator, 10, 25)
    expected = {
        "lnmax": lambda: lnmax_spend(p["gamma"], 25),
        "gnmax": lambda: gnmax_spend(p["noise_scale"], 25, 1e-6),
        "confident_gnmax": lambda: confident_gnmax_spend(
            p["threshold_noise_scale"], p["noise_scale"], 25, 1e-6),
    }[aggregator]()
    assert clf.epsilon_ == expected.epsilon <= 2.0
    assert clf.epsilon_ == pytest.approx(2.0)
    assert clf.delta_ == (0.0 if aggregator == "lnmax" else 1e-6)
    assert acc.total().epsilon == pytest.approx(clf.epsilon_)
    if aggregator == "confident_gnmax":
        assert p["threshold_noise_scale"] == pytest.approx(2.0 * p["noise_scale"])
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
        "n_teachers_",
        "n_queries_",
        "aggregator_",
        "student_",
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


def test_no_answer_falls_back_to_a_constant_student_with_one_warning():
    # Teachers that memorise random labels never all agree: nothing reaches the threshold.
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 2)), np.array(["a", "b"])[rng.integers(0, 2, size=400)]
    acc = BudgetAccountant(delta=0.5)
    clf = PATEClassifier(
        KNeighborsClassifier(n_neighbors=1),
        n_teachers=20,
        n_queries=20,
        aggregator="confident_gnmax",
        epsilon=100.0,
        threshold=1.0,
        classes=["a", "b"],
        accountant=acc,
        random_state=0,
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clf.fit(X, y)
    messages = [str(w.message) for w in record]
    assert len(messages) == 1 and "no query was answered" in messages[0]
    assert "lower `threshold`" in messages[0] and "gnmax" in messages[0]
    assert len(acc.spends) == 1  # the budget is spent: the outcome is the mechanism's
    assert clf.n_answered_ == 0 and clf.answered_indices_.size == 0
    assert clf.answered_labels_.size == 0
    np.testing.assert_array_equal(clf.predict(X[:5]), ["a"] * 5)
    np.testing.assert_allclose(clf.predict_proba(X[:3]), 0.5)


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


class SpreadingTeacher(LabelSpreading):
    """scikit-learn's LabelSpreading (semi-supervised through ``fit``), recording its targets."""

    def fit(self, X, y):
        RECORDS.append(("teacher", np.asarray(X)[:, 0].astype(int), np.asarray(y).copy()))
        return super().fit(X, y)


@pytest.mark.filterwarnings("ignore:.*same label:UserWarning")
@pytest.mark.parametrize("teacher", [FitSemiTeacher(), SpreadingTeacher(kernel="knn")],
                         ids=["fit_semi", "LabelSpreading"])
def test_a_semi_supervised_teacher_reads_its_part_and_sees_every_other_row_unlabeled(teacher):
    X, y = _indexed()
    RECORDS.clear()
    PATEClassifier(teacher, student=LogisticRegression(), n_teachers=4, n_queries=20,
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


def test_a_semi_supervised_teacher_is_tried_on_every_row_not_on_a_part():
    # Parts of 5 rows, fewer than the graph's 10 neighbours: the teachers are
    # fitted on all 200 rows, and so is the label-free trial (it failed on 5).
    X, y = make_circle_gaussians(200, 2, sigma=0.2, random_state=0)
    clf = PATEClassifier(LabelSpreading(kernel="knn", n_neighbors=10), n_teachers=40,
                         n_queries=30, epsilon=8.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.n_teachers_ == 40 and clf.score(X, y) > 0.8


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_semi_supervised_teacher_with_a_graph_larger_than_the_trial_rows_fits():
    # Every teacher gets all 200 rows; the trial fit had 64 (up to 05b8ffa) and
    # refused a graph of 100 neighbours before anything was charged.
    X, y = make_circle_gaussians(200, 2, sigma=0.2, random_state=0)
    clf = PATEClassifier(LabelSpreading(kernel="knn", n_neighbors=100), n_teachers=10,
                         n_queries=30, epsilon=8.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.n_teachers_ == 10


def test_a_teacher_refusing_a_missing_value_fails_before_the_charge():
    # Whichever part the row with a NaN falls in, the trial fits that part: a
    # teacher refusing it would otherwise abstain, unseen, after the charge.
    X, y = make_circle_gaussians(300, 2, sigma=0.3, random_state=0)
    X[250, 1] = np.nan
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=r"`estimator`.*trial fit.*no budget was spent.*NaN"):
        PATEClassifier(n_teachers=10, n_queries=30, classes=[0, 1],
                       accountant=accountant).fit(X, y)
    assert accountant.spends == []


def test_a_selection_noise_that_drowns_the_threshold_is_announced():
    X, y = make_circle_gaussians(500, 2, sigma=0.3, random_state=0)
    with pytest.warns(UserWarning, match="selection noise") as record:
        PATEClassifier(n_teachers=20, n_queries=50, aggregator="confident_gnmax", epsilon=8.0,
                       classes=[0, 1], random_state=0).fit(X, y)
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




# ----------------------------------------------------------------------------
# Sealed teachers. The attacker sees every warning, print (Python's and the
# file descriptors'), log record and error text of `fit` and knows every label
# but one. Each attack below fits two neighbouring label vectors several times
# and compares what the caller saw. Without the seal (commit bd705e5) they
# fail in-process; with the seal around the release only (fcde750) they fail
# for n_jobs=2, where the teachers run in loky workers whose stderr is the
# caller's.


def _one_label_apart(n=36):
    """Neighbouring label vectors: all class 0, and the same with row 0 of class 1.

    In the first world every part is one class; in the second, the teacher
    holding row 0 sees two classes. Up to commit 05b8ffa a one-class part
    voted its class without a fit, so the first world fitted no teacher and
    the second one: whatever a fit emits told the worlds apart. Now every
    teacher is fitted in both (a one-class part on stand-in codes).
    """
    X = np.random.default_rng(0).normal(size=(n, 2))
    y0 = np.zeros(n, dtype=np.intp)
    y1 = y0.copy()
    y1[0] = 1
    return X, y0, y1


class ChattyTeacher(ClassifierMixin, BaseEstimator):
    """Votes its part's majority and tells its labels through every side channel."""

    def __init__(self, verbose=0):
        self.verbose = verbose

    def fit(self, X, y):
        y = np.asarray(y)
        secret = f"CHATTY {int(y.sum())} of {y.size} labels are 1"
        print(secret)
        sys.stderr.write(secret + "\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(1, (secret + " (fd 1)\n").encode())
        os.write(2, (secret + " (fd 2)\n").encode())
        logging.getLogger("chatty_teacher").warning(secret)
        warnings.warn(secret, UserWarning, stacklevel=2)
        self.classes_ = np.unique(y)
        self.majority_ = np.bincount(y).argmax()
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


TEACHERS = {
    # lbfgs stops after one iteration: a ConvergenceWarning whenever it is fitted.
    "convergence": lambda: LogisticRegression(max_iter=1),
    # Prints its true-label loss per iteration, and does not converge.
    "verbose_mlp": lambda: MLPClassifier(hidden_layer_sizes=(2,), max_iter=2, verbose=True),
    "chatty": lambda: ChattyTeacher(verbose=1),
}

# A worker-idle timeout that no other code uses: joblib keeps one loky
# executor per setting, so these workers are the ones spawned below.
_IDLE = 299.75


def _warm_worker():
    # Imported once here rather than in the first timed fit.
    import sklearn.neural_network  # noqa: F401

    import sklearn_labeldp.classifiers  # noqa: F401

    return os.getpid()


@pytest.fixture(scope="module")
def terminal(tmp_path_factory):
    """The file that plays the caller's terminal for loky workers (their fds 1 and 2)."""
    return tmp_path_factory.mktemp("loky") / "terminal"


@contextlib.contextmanager
def _workers_writing_to(terminal):
    """Run the block with loky workers whose stdout and stderr are ``terminal``.

    That is a user's case when joblib ran before the fit (a grid search, an
    earlier estimator): the workers exist and write to the caller's terminal.
    Workers are spawned (or reused: same setting, same file) here, outside any
    seal; one spawned inside the caller's seal would inherit /dev/null and
    hide a leak.
    """
    with open(terminal, "ab") as file, parallel_config(backend="loky", idle_worker_timeout=_IDLE):
        sys.stdout.flush()
        sys.stderr.flush()
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        try:
            for fd in saved:
                os.dup2(file.fileno(), fd)
            Parallel(n_jobs=2)(delayed(_warm_worker)() for _ in range(4))
        finally:
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)
        yield


def _transcript(capfd, caplog, clf, X, y, terminal=None):
    """Everything the caller of ``clf.fit(X, y)`` sees besides the returned object."""
    capfd.readouterr()
    caplog.clear()
    offset = terminal.stat().st_size if terminal is not None else 0
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            clf.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - its type and text are part of the transcript
            error = (type(exc).__name__, str(exc), exc.__cause__, exc.__context__)
    out, err = capfd.readouterr()
    workers = terminal.read_bytes()[offset:].decode() if terminal is not None else ""
    return (
        tuple((w.category.__name__, str(w.message)) for w in caught),
        out,
        err,
        tuple((r.name, r.levelname, r.getMessage()) for r in caplog.records),
        error,
        workers,
    )


def _pate(teacher, n_jobs, accountant=None):
    return PATEClassifier(
        teacher,
        # A student that emits nothing: it learns from the DP answers, so its
        # output would be fair game, but it is not what is being tested.
        student=KNeighborsClassifier(n_neighbors=1),
        n_teachers=3,
        # 20 answers of pure noise at epsilon=1: all alike with chance 2**-19,
        # so the "same label" warning (a DP output) does not show.
        n_queries=20,
        aggregator="lnmax",
        epsilon=1.0,
        classes=[0, 1],
        accountant=BudgetAccountant() if accountant is None else accountant,
        n_jobs=n_jobs,
    )


def _transcripts(capfd, caplog, terminal, make_clf, X, worlds, n_jobs, repeats):
    """``repeats`` transcripts per world, the worlds alternated (neither on warmer workers)."""
    transcripts = [[] for _ in worlds]
    with _workers_writing_to(terminal) if n_jobs > 1 else contextlib.nullcontext():
        for _ in range(repeats):
            for seen, y in zip(transcripts, worlds, strict=True):
                seen.append(
                    _transcript(capfd, caplog, make_clf(), X, y, terminal if n_jobs > 1 else None)
                )
    return transcripts


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("teacher", sorted(TEACHERS))
def test_neighbouring_labels_leave_identical_transcripts(teacher, n_jobs, capfd, caplog, terminal):
    # Fails on bd705e5 (every case: the world with a fitted teacher shows its
    # ConvergenceWarning, loss or prints) and on fcde750 (the n_jobs=2 cases,
    # through the workers' stderr).
    caplog.set_level(logging.DEBUG)
    X, y0, y1 = _one_label_apart()
    world0, world1 = _transcripts(
        capfd, caplog, terminal, lambda: _pate(TEACHERS[teacher](), n_jobs), X, (y0, y1),
        n_jobs, repeats=4,
    )
    # The channel is deterministic once sealed: one transcript, the same for
    # every fit of either world (the label-free trial fit's output and the
    # public noise warning, identical in both).
    assert set(world0) == set(world1)
    assert len(set(world0)) == 1
    warned, out, err, logged, error, workers = world1[0]
    assert error is None and workers == ""
    assert not any(category == "ConvergenceWarning" for category, _ in warned)
    assert "loss" not in out and "Iteration" not in out
    # Only the label-free trial fit, before the charge, speaks: its targets are
    # fixed (6 ones among its 12 rows), and a teacher would have said 1 or 0.
    said = re.findall(r"CHATTY (\d+) of (\d+)", repr((warned, out, err, logged)))
    assert set(said) <= {("6", "12")}
    assert len(said) == (5 if teacher == "chatty" else 0)  # 2 prints, 2 fd writes, 1 log


def test_unsealed_teachers_would_be_seen(capfd, caplog, terminal):
    # The attack's control: the transcript sees a teacher fitted outside the
    # seal, in this process and in a worker.
    caplog.set_level(logging.DEBUG)
    X, _, y1 = _one_label_apart()
    warned, out, err, logged, _, _ = _transcript(capfd, caplog, ChattyTeacher(), X, y1)
    assert "CHATTY 1 of 36" in out and "CHATTY 1 of 36" in err
    assert ("UserWarning", "CHATTY 1 of 36 labels are 1") in warned
    assert logged == (("chatty_teacher", "WARNING", "CHATTY 1 of 36 labels are 1"),)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LogisticRegression(max_iter=1).fit(X, y1)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    with _workers_writing_to(terminal):
        offset = terminal.stat().st_size
        Parallel(n_jobs=2)(delayed(ChattyTeacher().fit)(X, y) for y in (y1, y1))
    assert "CHATTY 1 of 36 labels are 1 (fd 2)" in terminal.read_bytes()[offset:].decode()


class RaisingTeacher(ClassifierMixin, BaseEstimator):
    """Fails when its part holds an odd number of ones, with that number in the message.

    The label-free trial fit's codes ``0, 1, 0, 1, ...`` on a part of 12 rows
    hold 6 ones: it passes, and only real parts can fail.
    """

    def fit(self, X, y):
        if int(np.sum(y)) % 2:
            raise ValueError(f"{int(np.sum(y))} ones among {len(y)} labels")
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[-1])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_failing_teacher_abstains_and_the_fit_goes_on(n_jobs, capfd, caplog, terminal):
    # Up to commit 05b8ffa a teacher that raised aborted the fit with a ReleaseError
    # after the charge, so whether the fit failed told the worlds apart (a teacher
    # failing on exactly one world's part: 20/20 right at eps 0.1).
    caplog.set_level(logging.DEBUG)
    X = np.random.default_rng(1).normal(size=(36, 2))
    y0 = np.tile([0, 1], 18)
    y1 = y0.copy()
    y1[0] = 1  # the part holding row 0 has odd ones in one world and even in the other
    accountants = []

    def make_clf():
        accountants.append(BudgetAccountant())
        return _pate(RaisingTeacher(), n_jobs, accountant=accountants[-1])

    world0, world1 = _transcripts(
        capfd, caplog, terminal, make_clf, X, (y0, y1), n_jobs, repeats=2
    )
    assert [len(acc.spends) for acc in accountants] == [1] * len(accountants)
    assert set(world0) == set(world1) and len(set(world0)) == 1
    _, out, err, logged, error, workers = world0[0]
    assert error is None  # fitted in both worlds
    assert "ones among" not in out + err + workers
    assert all(record[0] == "sklearn_labeldp" for record in logged)


def test_a_teacher_that_fails_casts_no_vote_and_a_one_class_part_is_fitted():
    # Unit test of the release: teacher 0 raises on its part (one positive: odd) and
    # abstains, teacher 1 holds one class and is fitted on stand-in codes, then
    # abstains (it has seen one class); teacher 2 has one row and abstains without a
    # fit; teacher 3 holds two positives and a zero, and votes (classes_[-1] = 1).
    from sklearn_labeldp.classifiers._pate import _pate_release

    X = np.column_stack([np.arange(10), np.zeros(10)])
    codes = np.array([1, 0, 0, 0, 0, 0, 1, 1, 1, 0])
    parts = [np.array([0, 1, 2]), np.array([3, 4, 5]), np.array([6]), np.array([7, 8, 9])]
    RECORDS.clear()

    class Recording(RaisingTeacher):
        def fit(self, X, y):
            RECORDS.append((np.asarray(X)[:, 0].astype(int), np.asarray(y).copy()))
            return super().fit(X, y)

    histograms = _pate_release(
        codes, X=X, parts=parts, queries=np.arange(10), teachers=[Recording()] * 4,
        fit_params={}, n_classes=2, n_jobs=1, verbose=0, aggregate=lambda votes: votes,
    )
    # Teacher 0 fails on its labels; teacher 1 is fitted on stand-in codes, one row
    # away from one class as its part is in a neighbouring world (not 0, 0, 0), and
    # fails alike (an odd count); teacher 3 is fitted on its labels.
    assert [rows.tolist() for rows, _ in RECORDS] == [[0, 1, 2], [3, 4, 5], [7, 8, 9]]
    assert [targets.tolist() for _, targets in RECORDS] == [[1, 0, 0], [1, 0, 0], [1, 1, 0]]
    # Per query: teachers 0, 1 and 2 abstain, teacher 3 votes 1.
    np.testing.assert_array_equal(histograms, np.tile([0, 1], (10, 1)))


def test_a_one_class_teacher_abstains_so_a_minority_class_can_win():
    # Four parts of one class 0 and two parts that each hold one row of class 1 and
    # vote 1: with one-class teachers voting, the plurality would be 0 on every
    # query (4 against 2); they have seen one class and abstain, and 1 wins.
    from sklearn_labeldp.classifiers._pate import _pate_release

    codes = np.array([0] * 12 + [1, 0, 0, 1, 0, 0])
    X = np.column_stack([np.arange(18), np.zeros(18)])
    parts = [np.arange(3 * i, 3 * i + 3) for i in range(6)]

    class VotesOne(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[-1])

    histograms = _pate_release(
        codes, X=X, parts=parts, queries=np.arange(18), teachers=[VotesOne()] * 6,
        fit_params={}, n_classes=2, n_jobs=1, verbose=0, aggregate=lambda votes: votes,
    )
    np.testing.assert_array_equal(histograms, np.tile([0, 2], (18, 1)))


class QuietRecordingTeacher(ClassifierMixin, BaseEstimator):
    """Records the ``verbose`` of itself and of its nested estimator when fitted."""

    def __init__(self, inner=None, verbose=0):
        self.inner = inner
        self.verbose = verbose

    def fit(self, X, y):
        RECORDS.append(("verbose", self.verbose, self.inner.verbose))
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        # Votes that differ across queries, so that the student gets two classes.
        return self.classes_[(np.asarray(X)[:, 0] > 0) * (self.classes_.size - 1)]


def test_teachers_are_quiet_and_the_student_keeps_its_verbose():
    X, y = make_circle_gaussians(200, 2, sigma=0.3, random_state=0)
    template = QuietRecordingTeacher(MLPClassifier(verbose=True), verbose=2)
    RECORDS.clear()
    clf = PATEClassifier(template, n_teachers=4, n_queries=20, aggregator="lnmax",
                         epsilon=50.0, classes=[0, 1], random_state=0).fit(X, y)
    # The teacher's trial fit and the four teachers are quiet, nested estimator
    # included. The student, a clone of the template fitted on DP answers, is
    # as the user configured it (its label-free trial fit quiet on top only).
    assert RECORDS == [("verbose", 0, 0), ("verbose", 0, True), *[("verbose", 0, 0)] * 4,
                       ("verbose", 2, True)]
    assert clf.estimator_.verbose == 2 and clf.estimator_.inner.verbose is True
    assert template.verbose == 2 and template.inner.verbose is True  # not mutated


class PickyTeacher(QuietRecordingTeacher):
    """Accepts only a string ``verbose``."""

    def fit(self, X, y):
        if not isinstance(self.verbose, str):
            raise TypeError("verbose must be 'yes' or 'no'")
        return super().fit(X, y)


def test_a_teacher_that_refuses_verbose_zero_fails_before_the_charge():
    X, y = make_circle_gaussians(200, 2, sigma=0.3, random_state=0)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="`estimator`.*no budget was spent"):
        PATEClassifier(PickyTeacher(MLPClassifier(), verbose="yes"), n_teachers=4,
                       n_queries=20, classes=[0, 1], accountant=acc).fit(X, y)
    assert acc.spends == []


class MarkedTeacher(KNeighborsClassifier):
    """A teacher type that appears nowhere else."""


def test_nothing_reachable_holds_a_teacher_or_a_vote_histogram():
    X, y = make_circle_gaussians(300, 3, sigma=0.3, random_state=2)
    clf = PATEClassifier(MarkedTeacher(n_neighbors=3), student=LogisticRegression(),
                         n_teachers=6, n_queries=30, aggregator="gnmax", epsilon=20.0,
                         classes=range(3)).fit(X, y)
    fitted = [k for k in vars(clf) if k.endswith("_") and not k.startswith("_")]
    allowed = (*PATEClassifier._dp_outputs, *PATEClassifier._derived_attributes)
    assert all(any(re.fullmatch(p.replace("*", ".*"), k) for p in allowed) for k in fitted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unpickled = pickle.loads(pickle.dumps(clf))
    for root in (clf, unpickled):
        for path, value in walk(root):
            where = path_str(path)
            if isinstance(value, MarkedTeacher):  # only the unfitted parameter
                assert where == "estimator" and not hasattr(value, "n_samples_fit_"), where
            if isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype.kind in "iu":
                # A histogram would hold 6 votes per query.
                assert not (value.sum(axis=1) == 6).all(), where
            assert not isinstance(value, np.ndarray) or value.shape[:1] != (6,), where


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_verbose_shows_a_progress_bar_over_the_teachers(n_jobs, capfd):
    # The bar writes to the real stderr (file descriptor 2) from inside the seal:
    # capsys, which swaps sys.stderr only, does not see it.
    pytest.importorskip("tqdm")
    X, y = make_circle_gaussians(300, 2, sigma=0.3, random_state=0)
    PATEClassifier(LogisticRegression(max_iter=1), student=LogisticRegression(), n_teachers=12,
                   n_queries=20, epsilon=5.0, classes=[0, 1], verbose=1, n_jobs=n_jobs,
                   random_state=0).fit(X, y)
    err = capfd.readouterr().err
    assert "PATE teachers" in err and "12/12" in err
    assert "ConvergenceWarning" not in err  # the teachers' own output stays sealed
