"""Behaviour of RRWithPriorClassifier (LP-MST) beyond scikit-learn's checks."""

import pickle
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp import (
    BudgetAccountant,
    BudgetError,
    PrivacyLeakWarning,
    RRWithPriorClassifier,
)
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.mechanisms import optimal_top_k

K = 4
CLASSES = list(range(K))


class RecordingClassifier(ClassifierMixin, BaseEstimator):
    """Remembers the labels it was trained on; predicts a fixed prior.

    ``proba`` maps the first feature (an integer id) to a row of probabilities,
    which lets a test control exactly the prior that later stages see.
    """

    def __init__(self, proba=None, warm_start=False):
        self.proba = proba
        self.warm_start = warm_start

    def fit(self, X, y, sample_weight=None):
        self.X_seen_ = np.asarray(X)
        self.y_seen_ = np.asarray(y)
        self.sample_weight_seen_ = sample_weight
        self.classes_ = np.unique(y)
        self.fit_count_ = getattr(self, "fit_count_", 0) + 1
        return self

    def predict_proba(self, X):
        rows = np.asarray(self.proba)[np.asarray(X)[:, 0].astype(int)]
        return rows[:, self.classes_]

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


@pytest.fixture(scope="module")
def circle_data():
    return make_circle_gaussians(600, K, sigma=0.3, random_state=0)


def test_lp_1st_keep_rate_matches_rr():
    n, eps = 20000, 0.7
    X = np.arange(n, dtype=float)[:, None]  # the feature identifies the example
    y = np.arange(n) % K
    clf = RRWithPriorClassifier(
        RecordingClassifier(), epsilon=eps, classes=CLASSES, random_state=2
    ).fit(X, y)
    ids = clf.estimator_.X_seen_[:, 0].astype(int)
    noisy, truth = clf.estimator_.y_seen_, y[ids]
    assert clf.mechanism_params_["mean_k"].tolist() == [K]
    assert set(clf.mechanism_params_) == {
        "prior", "release_epsilon", "mean_k", "stage_fractions", "temperature", "warm_start",
        "n_neighbors", "default_base",
    }
    assert clf.mechanism_params_["release_epsilon"] == eps  # no cluster prior: all of epsilon
    p_keep = np.exp(eps) / (np.exp(eps) + K - 1)
    assert stats.binomtest(int((noisy == truth).sum()), n, p_keep).pvalue > 1e-3
    # A flipped label is uniform over the K - 1 others.
    shift = (noisy - truth)[noisy != truth] % K
    assert stats.chisquare(np.bincount(shift, minlength=K)[1:]).pvalue > 1e-3


def test_second_stage_uses_previous_model_as_prior():
    # The stage-1 model predicts a prior concentrated on class 2 for every
    # example: k* = 1, so every stage-2 label must be 2, whatever the truth.
    n = 400
    prior_rows = np.tile([0.02, 0.02, 0.94, 0.02], (n, 1))
    X = np.arange(n, dtype=float)[:, None]
    y = np.arange(n) % K
    clf = RRWithPriorClassifier(
        RecordingClassifier(proba=prior_rows),
        epsilon=1.0,
        classes=CLASSES,
        n_stages=2,
        filter_earlier_stages=False,
        random_state=0,
    ).fit(X, y)
    assert clf.mechanism_params_["mean_k"][0] == K
    assert clf.mechanism_params_["mean_k"][1] == optimal_top_k(prior_rows[:1], epsilon=1.0)[0] == 1
    first, second = clf.estimators_
    stage1_ids = set(first.X_seen_[:, 0].astype(int))
    seen = second.X_seen_[:, 0].astype(int)
    stage2 = np.array([i not in stage1_ids for i in seen])
    assert stage2.sum() == n - len(stage1_ids)
    assert np.all(second.y_seen_[stage2] == 2)
    # Without filtering, stage 2 trains on both stages.
    assert seen.size == n


def test_filtering_drops_earlier_labels_outside_top_k_f():
    n = 1000
    # Prior favouring {0, 1} equally: k* = 2 at eps = 1, so k_f = 2 and
    # stage-1 noisy labels in {2, 3} must be dropped from stage-2 training.
    prior_rows = np.tile([0.45, 0.45, 0.05, 0.05], (n, 1))
    X = np.arange(n, dtype=float)[:, None]
    y = np.arange(n) % K
    clf = RRWithPriorClassifier(
        RecordingClassifier(proba=prior_rows),
        epsilon=1.0,
        classes=CLASSES,
        n_stages=2,
        random_state=0,
    ).fit(X, y)
    assert clf.mechanism_params_["mean_k"][1] == 2
    first, second = clf.estimators_
    stage1_noisy = dict(zip(first.X_seen_[:, 0].astype(int), first.y_seen_, strict=True))
    expected_kept = {i for i, label in stage1_noisy.items() if label in (0, 1)}
    seen = second.X_seen_[:, 0].astype(int)
    kept_earlier = {i for i in seen if i in stage1_noisy}
    assert kept_earlier == expected_kept
    assert 0 < len(expected_kept) < len(stage1_noisy)
    assert len(seen) == len(expected_kept) + (n - len(stage1_noisy))


def test_stage_fractions_split_sizes():
    n = 1000
    X = np.arange(n, dtype=float)[:, None]
    y = np.arange(n) % K
    clf = RRWithPriorClassifier(
        RecordingClassifier(proba=np.full((n, K), 0.25)),
        classes=CLASSES,
        n_stages=3,
        stage_fractions=[0.5, 0.3, 0.2],
        filter_earlier_stages=False,
        random_state=0,
    ).fit(X, y)
    sizes = [est.X_seen_.shape[0] for est in clf.estimators_]
    assert sizes == [500, 800, 1000]
    assert [p.params["n_samples"] for p in clf.privacy_spend_.parts] == [500, 300, 200]
    assert clf.privacy_spend_.composition == "parallel"
    assert clf.epsilon_ == 1.0


def test_public_prior_array_and_model(circle_data):
    X, y = circle_data
    # An oracle-quality public prior makes k* = 1 almost everywhere, so even
    # a tiny epsilon gives accurate labels.
    perfect = np.eye(K)[y] * 0.97 + 0.01
    clf = RRWithPriorClassifier(
        epsilon=0.1, classes=CLASSES, prior=perfect, random_state=0
    ).fit(X, y)
    assert clf.mechanism_params_["mean_k"][0] == pytest.approx(1.0)
    assert clf.score(X, y) > 0.9

    public_model = LogisticRegression().fit(X, y)
    clf = RRWithPriorClassifier(
        epsilon=0.1, classes=CLASSES, prior=public_model, random_state=0
    ).fit(X, y)
    assert clf.mechanism_params_["mean_k"][0] < K
    assert clf.score(X, y) > 0.8


def test_prior_model_with_unknown_class_is_rejected(circle_data):
    X, y = circle_data
    public_model = LogisticRegression().fit(X, y + 10)
    with pytest.raises(ValueError, match="not in `classes`"):
        RRWithPriorClassifier(classes=CLASSES, prior=public_model).fit(X, y)


def test_accuracy_improves_with_epsilon(circle_data):
    X, y = circle_data
    X_test, y_test = make_circle_gaussians(2000, K, sigma=0.3, random_state=1)
    low = RRWithPriorClassifier(epsilon=0.05, classes=CLASSES, random_state=0).fit(X, y)
    high = RRWithPriorClassifier(epsilon=5.0, classes=CLASSES, random_state=0).fit(X, y)
    assert high.score(X_test, y_test) > 0.9
    assert high.score(X_test, y_test) > low.score(X_test, y_test) + 0.2


def test_string_labels_and_classes_absent_from_y(circle_data):
    X, y = circle_data
    names = np.array(["ant", "bee", "cat", "dog", "eel"])
    clf = RRWithPriorClassifier(
        LogisticRegression(), epsilon=50.0, classes=names, random_state=0
    ).fit(X, names[y])
    assert clf.classes_.tolist() == names.tolist()
    assert clf.estimator_.classes_.tolist() == [0, 1, 2, 3]  # "eel" never drawn
    assert set(clf.predict(X)) <= set(names[:4])
    proba = clf.predict_proba(X)
    assert proba.shape == (X.shape[0], 5)
    np.testing.assert_array_equal(proba[:, 4], 0.0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_float_labels_with_given_classes(circle_data):
    X, y = circle_data
    values = np.array([0.0, 0.5, 1.0, 1.5])
    clf = RRWithPriorClassifier(epsilon=5.0, classes=values, random_state=0).fit(X, values[y])
    assert set(clf.predict(X)) <= set(values)


def test_classes_inferred_from_y_warns(circle_data):
    X, y = circle_data
    with pytest.warns(PrivacyLeakWarning, match="reveals which labels occur"):
        RRWithPriorClassifier(random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        RRWithPriorClassifier(classes=CLASSES, random_state=0).fit(X, y)


def test_decision_function_marks_unseen_classes(circle_data):
    X, y = circle_data
    keep = y < 3
    clf = RRWithPriorClassifier(
        LogisticRegression(), epsilon=50.0, classes=CLASSES, random_state=0
    ).fit(X[keep], y[keep])
    scores = clf.decision_function(X)
    assert scores.shape == (X.shape[0], K)
    assert np.all(scores[:, 3] == -np.inf)
    np.testing.assert_array_equal(np.argmax(scores, axis=1), clf.predict(X))


def test_reproducible_with_int_seed_and_fresh_with_none(circle_data):
    X, y = circle_data
    make = lambda rs: RRWithPriorClassifier(  # noqa: E731
        epsilon=0.5, classes=CLASSES, n_stages=2, random_state=rs
    ).fit(X, y)
    np.testing.assert_array_equal(make(3).predict_proba(X), make(3).predict_proba(X))
    assert not np.array_equal(make(None).predict_proba(X), make(None).predict_proba(X))
    rng = np.random.default_rng(0)
    assert not np.array_equal(make(rng).predict_proba(X), make(rng).predict_proba(X))


def test_warm_start_continues_from_previous_stage(circle_data):
    X, y = circle_data
    n = X.shape[0]
    X_ids = np.arange(n, dtype=float)[:, None]
    clf = RRWithPriorClassifier(
        RecordingClassifier(proba=np.full((n, K), 0.25)),
        classes=CLASSES,
        n_stages=3,
        warm_start=True,
        random_state=0,
    ).fit(X_ids, y)
    # Each stage continues the previous stage's model (a copy of it), so the
    # stage-t model has been fitted t times; the earlier models are untouched.
    assert [est.fit_count_ for est in clf.estimators_] == [1, 2, 3]
    assert all(est.warm_start for est in clf.estimators_)
    assert len({id(est) for est in clf.estimators_}) == 3

    cold = RRWithPriorClassifier(
        RecordingClassifier(proba=np.full((n, K), 0.25)),
        classes=CLASSES,
        n_stages=3,
        warm_start=False,
        random_state=0,
    ).fit(X_ids, y)
    assert [est.fit_count_ for est in cold.estimators_] == [1, 1, 1]
    assert not cold.warm_start_

    with pytest.raises(ValueError, match="warm_start parameter"):
        RRWithPriorClassifier(classes=CLASSES, warm_start=True).fit(X, y)


def test_accountant_is_charged_once_per_fit(circle_data):
    X, y = circle_data
    acc = BudgetAccountant(epsilon=3.0)
    RRWithPriorClassifier(epsilon=1.0, classes=CLASSES, n_stages=3, accountant=acc).fit(X, y)
    assert acc.total().epsilon == pytest.approx(1.0)
    assert acc.spends[0].mechanism == "LP-MST" and len(acc.spends[0].parts) == 3


def test_budget_error_before_any_label_is_used(circle_data, monkeypatch):
    X, y = circle_data
    acc = BudgetAccountant(epsilon=0.5)

    def fail(*args, **kwargs):
        raise AssertionError("labels were used despite the refused budget")

    monkeypatch.setattr("sklearn_labeldp._private_labels.PrivateLabels.release", fail)
    clf = RRWithPriorClassifier(RecordingClassifier(), epsilon=1.0, classes=CLASSES,
                                accountant=acc)
    with pytest.raises(BudgetError, match="exceed"):
        clf.fit(X, y)
    assert acc.spends == []
    assert not hasattr(clf, "classes_") and not hasattr(clf, "n_features_in_")


def test_pipeline_search_cross_val_clone_pickle(circle_data):
    X, y = circle_data
    model = make_pipeline(
        StandardScaler(),
        RRWithPriorClassifier(epsilon=2.0, classes=CLASSES, n_stages=2, random_state=0),
    )
    model.fit(X, y)
    assert model.score(X, y) > 0.8

    search = GridSearchCV(
        model,
        {"rrwithpriorclassifier__estimator": [KNeighborsClassifier()],
         "rrwithpriorclassifier__estimator__n_neighbors": [5, 25]},
        cv=3,
    ).fit(X, y)
    assert search.best_params_["rrwithpriorclassifier__estimator__n_neighbors"] in (5, 25)
    assert search.best_estimator_[-1].epsilon_ == 2.0

    scores = cross_val_score(model, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.6)

    fresh = clone(model)
    assert not hasattr(fresh[-1], "classes_")
    assert fresh.get_params()["rrwithpriorclassifier__n_stages"] == 2

    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))


def test_sample_weight_is_forwarded(circle_data):
    X, y = circle_data
    w = np.linspace(0.5, 2.0, X.shape[0])
    X_ids = np.arange(X.shape[0], dtype=float)[:, None]
    clf = RRWithPriorClassifier(RecordingClassifier(), classes=CLASSES, random_state=0)
    clf.fit(X_ids, y, sample_weight=w)
    ids = clf.estimator_.X_seen_[:, 0].astype(int)
    np.testing.assert_allclose(clf.estimator_.sample_weight_seen_, w[ids])
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        RRWithPriorClassifier(classes=CLASSES).fit(X, y, sample_weight=w)


def test_metadata_routing_to_base_estimator(circle_data):
    X, y = circle_data
    w = np.linspace(0.5, 2.0, X.shape[0])
    X_ids = np.arange(X.shape[0], dtype=float)[:, None]
    with config_context(enable_metadata_routing=True):
        base = RecordingClassifier().set_fit_request(sample_weight=True)
        clf = RRWithPriorClassifier(base, classes=CLASSES, random_state=0)
        clf.fit(X_ids, y, sample_weight=w)
        ids = clf.estimator_.X_seen_[:, 0].astype(int)
        np.testing.assert_allclose(clf.estimator_.sample_weight_seen_, w[ids])
        unrequested = RRWithPriorClassifier(RecordingClassifier(), classes=CLASSES)
        with pytest.raises(ValueError, match="sample_weight"):
            unrequested.fit(X_ids, y, sample_weight=w)


BAD_PARAMS = [
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": np.nan}, "epsilon"),
    ({"epsilon": np.inf}, "epsilon"),
    ({"temperature": 0.0}, "temperature"),
    ({"temperature": -2.0}, "temperature"),
    ({"temperature": np.inf}, "temperature"),
    ({"n_stages": 0}, "n_stages"),
    ({"n_stages": 2, "stage_fractions": [0.5, 0.6]}, "sum to 1"),
    ({"n_stages": 2, "stage_fractions": [0.5, 0.3, 0.2]}, "one entry per stage"),
    ({"n_stages": 2, "stage_fractions": [1.2, -0.2]}, "finite and > 0"),
    ({"n_stages": 700}, "leaves a stage without examples"),
    ({"prior": np.full((3, K), 0.25)}, "rows"),
    ({"prior": np.full((600, K + 1), 0.2)}, "columns"),
    ({"prior": np.full((600, K), -0.25)}, "nonnegative"),
    ({"prior": np.full((600, K), np.nan)}, "NaN"),
    ({"classes": [0]}, "at least 2 classes"),
    ({"classes": [0, 1, 1, 2]}, "duplicates"),
]


@pytest.mark.parametrize(("params", "match"), BAD_PARAMS, ids=[m for _, m in BAD_PARAMS])
def test_bad_parameters_raise_clear_errors(circle_data, params, match):
    X, y = circle_data
    params = {"classes": CLASSES, **params}
    with pytest.raises(ValueError, match=match):
        RRWithPriorClassifier(**params).fit(X, y)


def test_bad_data_raises_clear_errors(circle_data):
    X, y = circle_data
    clf = RRWithPriorClassifier(classes=CLASSES)
    for bad in (np.nan, np.inf):
        X_bad = X.copy()
        X_bad[3, 1] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            clf.fit(X_bad, y)
    with pytest.raises(ValueError, match="y holds labels that are not in `classes`"):
        clf.fit(X, np.where(np.arange(y.size) == 5, 9, y))
    with pytest.raises(ValueError, match="at least 2 classes"):
        with pytest.warns(PrivacyLeakWarning):
            RRWithPriorClassifier().fit(X, np.zeros_like(y))
    with pytest.raises(ValueError, match="not in `classes`"):
        clf.fit(X, y + 0.5)
    with pytest.raises(ValueError, match="Unknown label type"):
        RRWithPriorClassifier().fit(X, y + np.linspace(0, 0.5, y.size))
    clf.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :1])


def test_failed_refit_leaves_no_fitted_state(circle_data):
    X, y = circle_data
    clf = RRWithPriorClassifier(classes=CLASSES, random_state=0).fit(X, y)
    assert hasattr(clf, "estimator_")
    with pytest.raises(ValueError, match="not in `classes`"):
        clf.fit(X, y + 7)
    assert not [k for k in vars(clf) if k.endswith("_") and not k.startswith("_")]


def test_routing_through_a_pipeline_needs_only_the_base_request(circle_data):
    X, y = circle_data
    w = np.linspace(0.5, 2.0, X.shape[0])
    X_ids = np.arange(X.shape[0], dtype=float)[:, None]
    with config_context(enable_metadata_routing=True):
        base = RecordingClassifier().set_fit_request(sample_weight=True)
        pipe = make_pipeline(RRWithPriorClassifier(base, classes=CLASSES, random_state=0))
        pipe.fit(X_ids, y, sample_weight=w)
        model = pipe[-1].estimator_
        np.testing.assert_allclose(model.sample_weight_seen_, w[model.X_seen_[:, 0].astype(int)])


def _charged_nothing(fit):
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError) as info:
        fit(acc)
    assert acc.spends == []
    return str(info.value)


def test_public_problems_are_caught_before_the_budget_is_charged(circle_data):
    X, y = circle_data
    n = X.shape[0]
    X_ids = np.arange(n, dtype=float)[:, None]

    def wrong_length_weights(acc):
        with config_context(enable_metadata_routing=True):
            base = RecordingClassifier().set_fit_request(sample_weight=True)
            RRWithPriorClassifier(base, classes=CLASSES, accountant=acc).fit(
                X_ids, y, sample_weight=np.ones(n - 1)
            )

    assert "sample_weight" in _charged_nothing(wrong_length_weights)

    zero_model = RecordingClassifier(proba=np.zeros((n, K))).fit(X_ids, y)
    assert "all-zero row" in _charged_nothing(
        lambda acc: RRWithPriorClassifier(
            classes=CLASSES, prior=zero_model, accountant=acc
        ).fit(X_ids, y)
    )
    assert "n_neighbors = 10" in _charged_nothing(
        lambda acc: RRWithPriorClassifier(
            KNeighborsClassifier(n_neighbors=10), classes=CLASSES, n_stages=3, accountant=acc
        ).fit(X[:20], y[:20])  # a first stage of 8 rows
    )


def test_warm_start_falls_back_to_cold_when_the_label_set_changes():
    X, y = make_circle_gaussians(300, 10, sigma=0.3, random_state=0)
    warned = 0
    for seed in range(10):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = RRWithPriorClassifier(
                LogisticRegression(), epsilon=0.5, classes=range(10), n_stages=3,
                warm_start=True, random_state=seed,
            ).fit(X, y)
        warned += any("fitted from scratch" in str(w.message) for w in caught)
        assert len(clf.estimators_) == 3
    assert warned > 0


def test_every_fitted_attribute_is_declared_with_a_cluster_prior():
    import fnmatch

    from sklearn_labeldp.priors import ClusterPrior

    X, y = make_circle_gaussians(400, 3, sigma=0.3, random_state=0)
    clf = RRWithPriorClassifier(KNeighborsClassifier(5), epsilon=2.0, classes=range(3),
                                n_stages=2, prior=ClusterPrior(n_clusters=4, epsilon=0.5),
                                random_state=0).fit(X, y)
    fitted = [name for name in vars(clf) if name.endswith("_") and not name.startswith("_")]
    declared = (*clf._dp_outputs, *clf._derived_attributes)
    assert "clusterer_" in fitted  # k-means on the public features: derived
    assert [n for n in fitted if not any(fnmatch.fnmatchcase(n, p) for p in declared)] == []


def test_a_failing_stage_raises_the_fixed_release_error(monkeypatch):
    import sklearn_labeldp.classifiers._rr_with_prior as module
    from sklearn_labeldp.accounting import BudgetAccountant
    from sklearn_labeldp.exceptions import ReleaseError

    def failing(codes, **kwargs):
        raise ValueError(f"label counts {np.bincount(codes).tolist()}")  # label-dependent

    monkeypatch.setattr(module, "rr_with_prior", failing)
    X, y = make_circle_gaussians(200, 3, sigma=0.3, random_state=0)
    acc = BudgetAccountant()
    clf = RRWithPriorClassifier(KNeighborsClassifier(5), classes=range(3), accountant=acc)
    with pytest.raises(ReleaseError) as info:
        clf.fit(X, y)
    assert str(info.value).startswith("RRWithPriorClassifier: RRWithPrior failed on stage 1 of 1")
    assert "label counts" not in str(info.value) and info.value.__context__ is None
    assert acc.total().epsilon == 1.0 and not hasattr(clf, "estimator_")
