"""RRWithPriorClassifier with a cluster prior (Ghazi et al. 2021, Alg. 4)."""

import pickle

import numpy as np
import pytest
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score

from sklearn_labeldp import (
    BudgetAccountant,
    BudgetError,
    PrivacyLeakWarning,
    RRWithPriorClassifier,
)
from sklearn_labeldp._private_labels import PrivateLabels
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.mechanisms import histogram_prior, noisy_label_histogram, optimal_top_k
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.priors import ClusterPrior, cluster_assignment
from sklearn_labeldp.utils import check_generator

K = 4
CLASSES = list(range(K))
# Three far-apart blobs of 100 points; the label mix of each blob.
BLOB_LABELS = [[0] * 100, [1] * 70 + [2] * 30, [3] * 100]
BLOB_FREQ = np.array([[1.0, 0, 0, 0], [0, 0.7, 0.3, 0], [0, 0, 0, 1.0]])


class RecordingClassifier(ClassifierMixin, BaseEstimator):
    """Remembers what it was trained on; predicts the majority label seen."""

    def fit(self, X, y, sample_weight=None):
        self.X_seen_ = np.asarray(X)
        self.y_seen_ = np.asarray(y)
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        counts = np.bincount(np.searchsorted(self.classes_, self.y_seen_),
                             minlength=self.classes_.size)
        return np.tile(counts / counts.sum(), (len(X), 1))

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def blobs(random_state=0):
    """Well-separated blobs; the third column is a negligible example id."""
    rng = np.random.default_rng(random_state)
    centers = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]])
    X = np.vstack([c + rng.normal(size=(100, 2)) for c in centers])
    ids = np.arange(300)
    X = np.column_stack([X, ids * 1e-6])
    y = np.concatenate(BLOB_LABELS)
    return X, y, np.repeat(np.arange(3), 100)


def ids_of(X_seen):
    return np.rint(X_seen[:, 2] * 1e6).astype(int)


@pytest.fixture(scope="module")
def circle_data():
    return make_circle_gaussians(600, K, sigma=0.3, random_state=0)


def cluster_clf(estimator=None, n_clusters=5, prior_epsilon=0.5, **params):
    defaults = dict(epsilon=2.0, classes=CLASSES, random_state=0,
                    prior=ClusterPrior(n_clusters=n_clusters, epsilon=prior_epsilon))
    return RRWithPriorClassifier(estimator, **{**defaults, **params})


def test_epsilon_and_privacy_spend_structure(circle_data):
    X, y = circle_data
    clf = cluster_clf(n_stages=2).fit(X, y)
    assert clf.epsilon_ == 2.0 and clf.delta_ == 0.0
    spend = clf.privacy_spend_
    assert spend.mechanism == "RRWithPrior+cluster prior"
    assert spend.composition == "sequential" and spend.epsilon == 2.0
    histogram, lp_mst = spend.parts
    assert histogram.mechanism == "noisy label histogram"
    assert histogram.composition == "leaf" and histogram.epsilon == 0.5
    assert histogram.params["n_clusters"] == 5
    assert lp_mst.mechanism == "LP-MST" and lp_mst.composition == "parallel"
    assert lp_mst.epsilon == 1.5
    assert [p.epsilon for p in lp_mst.parts] == [1.5, 1.5]
    assert sum(p.params["n_samples"] for p in lp_mst.parts) == X.shape[0]
    assert clf.cluster_prior_.shape == (5, K)
    np.testing.assert_allclose(clf.cluster_prior_.sum(axis=1), 1.0)
    assert isinstance(clf.clusterer_, KMeans) and clf.clusterer_.n_clusters == 5


def test_rounding_of_the_split_still_reports_epsilon():
    X, y, _ = blobs()
    clf = cluster_clf(epsilon=0.3, prior_epsilon=0.1, n_clusters=3).fit(X, y)
    assert clf.epsilon_ == 0.3
    assert clf.privacy_spend_.parts[1].epsilon == 0.3 - 0.1


def test_every_label_is_read_twice_with_costs_summing_to_epsilon(circle_data, monkeypatch):
    X, y = circle_data
    calls, seen = [], []
    original = PrivateLabels.release

    def spy(self, mechanism, indices, **kwargs):
        calls.append((mechanism.__name__, np.asarray(indices).copy(), kwargs))
        seen.append(self)
        return original(self, mechanism, indices, **kwargs)

    monkeypatch.setattr(PrivateLabels, "release", spy)
    cluster_clf(n_stages=3, epsilon=1.0, prior_epsilon=0.25).fit(X, y)
    names = [c[0] for c in calls]
    assert names == ["noisy_label_histogram"] + ["rr_with_prior"] * 3
    assert np.array_equal(np.sort(calls[0][1]), np.arange(X.shape[0]))
    assert calls[0][2]["privacy_cost"] == calls[0][2]["epsilon"] == 0.25
    for _, _, kwargs in calls[1:]:
        assert kwargs["privacy_cost"] == kwargs["epsilon"] == 0.75
    stages = np.concatenate([c[1] for c in calls[1:]])
    assert np.array_equal(np.sort(stages), np.arange(X.shape[0]))  # disjoint stages
    np.testing.assert_allclose(seen[0].spent, 1.0)
    assert seen[0].epsilon == 1.0


def test_plain_lp_mst_releases_each_label_once_at_the_whole_epsilon(circle_data, monkeypatch):
    X, y = circle_data
    costs = []
    original = PrivateLabels.release

    def spy(self, mechanism, indices, **kwargs):
        costs.append(kwargs.get("privacy_cost"))
        return original(self, mechanism, indices, **kwargs)

    monkeypatch.setattr(PrivateLabels, "release", spy)
    RRWithPriorClassifier(epsilon=1.0, classes=CLASSES, n_stages=2, random_state=0).fit(X, y)
    assert costs == [1.0, 1.0]  # two disjoint stages, each at the whole budget


def test_accountant_is_charged_the_total_once(circle_data):
    X, y = circle_data
    acc = BudgetAccountant(epsilon=3.0)
    cluster_clf(accountant=acc, n_stages=2).fit(X, y)
    assert len(acc.spends) == 1
    assert acc.total().epsilon == pytest.approx(2.0)
    assert acc.spends[0].mechanism == "RRWithPrior+cluster prior"


def test_budget_error_before_any_label_is_used(circle_data, monkeypatch):
    X, y = circle_data
    # 1.5 covers the stages' epsilon - prior_epsilon but not the total 2.0.
    acc = BudgetAccountant(epsilon=1.5)

    def fail(*args, **kwargs):
        raise AssertionError("labels were used despite the refused budget")

    monkeypatch.setattr(PrivateLabels, "release", fail)
    clf = cluster_clf(accountant=acc)
    with pytest.raises(BudgetError, match="exceed"):
        clf.fit(X, y)
    assert acc.spends == []
    assert not hasattr(clf, "cluster_prior_") and not hasattr(clf, "classes_")


def test_cluster_prior_is_the_noisy_histogram_release(circle_data):
    X, y = circle_data
    clf = cluster_clf(prior_epsilon=0.05, epsilon=1.0, n_clusters=6, random_state=7).fit(X, y)
    # Replay the mechanism with the fit's mechanism stream (the base spawns
    # plan, mechanism and estimator streams in that order); the histogram is
    # the first draw from it.
    _, mechanism_rng, _ = check_generator(7).spawn(3)
    groups = clf.clusterer_.labels_
    counts = noisy_label_histogram(y, groups, epsilon=0.05, n_classes=K, n_groups=6,
                                   random_state=mechanism_rng)
    np.testing.assert_array_equal(clf.cluster_prior_, histogram_prior(counts))
    # At this small prior_epsilon the noise is visible: the prior is not the truth.
    truth = np.array([np.bincount(y[groups == c], minlength=K) for c in range(6)])
    truth = truth / truth.sum(axis=1, keepdims=True)
    assert np.abs(clf.cluster_prior_ - truth).max() > 0.05


def test_large_prior_epsilon_recovers_cluster_frequencies_and_small_k():
    X, y, blob = blobs()
    clf = cluster_clf(RecordingClassifier(), epsilon=1e4 + 1.0, prior_epsilon=1e4,
                      n_clusters=3).fit(X, y)
    # Match each k-means cluster to its blob (the clustering is exact here).
    cluster_of_blob = [int(np.unique(clf.clusterer_.labels_[blob == b])[0]) for b in range(3)]
    assert sorted(cluster_of_blob) == [0, 1, 2]
    np.testing.assert_allclose(clf.cluster_prior_[cluster_of_blob], BLOB_FREQ, atol=1e-12)
    # eps = 1 for RRWithPrior: k* = 1 on the pure blobs, 2 on the mixed one.
    k_blob = optimal_top_k(BLOB_FREQ, epsilon=1.0)
    assert k_blob.tolist() == [1, 2, 1]
    assert clf.mechanism_params_["mean_k"][0] == pytest.approx(4 / 3)
    noisy, ids = clf.estimator_.y_seen_, ids_of(clf.estimator_.X_seen_)
    assert np.array_equal(np.sort(ids), np.arange(300))
    pure = blob[ids] != 1
    assert np.array_equal(noisy[pure], y[ids][pure])  # k* = 1: the top label
    assert set(noisy[blob[ids] == 1].tolist()) == {1, 2}  # the top-2 of the mixed blob
    # Without the prior, RR at the same eps = 1 would flip many pure labels.
    rr = RRWithPriorClassifier(RecordingClassifier(), epsilon=1.0, classes=CLASSES,
                               random_state=0).fit(X, y)
    assert rr.mechanism_params_["mean_k"][0] == K


def test_noisy_labels_lie_in_top_k_of_their_cluster_prior(circle_data):
    X, y = circle_data
    ids = np.arange(X.shape[0])
    Xi = np.column_stack([X, ids * 1e-9])
    clf = cluster_clf(RecordingClassifier(), epsilon=3.0, prior_epsilon=1.0,
                      n_clusters=8).fit(Xi, y)
    seen = ids_of(clf.estimator_.X_seen_ * 1e3)
    prior = clf.cluster_prior_[clf.clusterer_.labels_[seen]]
    k = optimal_top_k(prior, epsilon=2.0)
    assert clf.mechanism_params_["mean_k"][0] == pytest.approx(k.mean())
    order = np.argsort(-prior, axis=1, kind="stable")
    rank = np.argmax(order == clf.estimator_.y_seen_[:, None], axis=1)
    assert np.all(rank < k)


def test_clusters_do_not_depend_on_labels(circle_data):
    X, y = circle_data
    y_perm = np.random.default_rng(1).permutation(y)
    a = cluster_clf(n_clusters=7, random_state=3).fit(X, y)
    b = cluster_clf(n_clusters=7, random_state=3).fit(X, y_perm)
    np.testing.assert_array_equal(a.clusterer_.labels_, b.clusterer_.labels_)
    np.testing.assert_array_equal(a.clusterer_.cluster_centers_, b.clusterer_.cluster_centers_)
    assert not np.array_equal(a.cluster_prior_, b.cluster_prior_)
    # And they are those of a plain k-means on X with the fit's plan seed.
    c = cluster_clf(n_clusters=7, random_state=4).fit(X, y)
    assert not np.array_equal(a.clusterer_.cluster_centers_, c.clusterer_.cluster_centers_)


def test_cluster_assignment_helper():
    X, _, blob = blobs()
    model, groups = cluster_assignment(X, 3, random_state=0)
    assert groups.dtype == np.int64 and model.n_clusters == 3
    for b in range(3):
        assert np.unique(groups[blob == b]).size == 1
    with pytest.raises(ValueError, match="n_clusters=301"):
        cluster_assignment(X, 301)
    with pytest.raises(TypeError, match="int"):
        cluster_assignment(X, 2.0)


def test_later_stages_use_the_model_prior_with_the_remaining_epsilon(circle_data):
    X, y = circle_data
    clf = cluster_clf(LogisticRegression(), n_stages=2, epsilon=3.0, prior_epsilon=1.0)
    clf.fit(X, y)
    assert len(clf.estimators_) == 2 and clf.mechanism_params_["mean_k"].shape == (2,)
    # Each stage runs RRWithPrior with what the cluster prior left of epsilon.
    assert clf.mechanism_params_["release_epsilon"] == 3.0 - 1.0
    assert clf.score(X, y) > 0.8


def test_sparse_features(circle_data):
    X, y = circle_data
    clf = cluster_clf(LogisticRegression()).fit(sparse.csr_matrix(X), y)
    assert clf.cluster_prior_.shape == (5, K)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(prior_epsilon=2.0), r"prior.epsilon=2.0 \(ClusterPrior\(epsilon=...\)\) must be < "
                                  "epsilon=2.0"),
        (dict(prior_epsilon=3.0), "must be < epsilon"),
        (dict(prior_epsilon=0.0), "'epsilon' parameter of ClusterPrior"),
        (dict(prior_epsilon=-1.0), "'epsilon' parameter of ClusterPrior"),
        (dict(prior_epsilon=None), "'epsilon' parameter of ClusterPrior"),
        (dict(prior="cluster"), "'prior' parameter"),
        (dict(prior="kmeans"), "'prior' parameter"),
        (dict(n_clusters=601), r"prior.n_clusters=601 > n_samples=600.*ClusterPrior\(n_clusters"),
        (dict(n_clusters=0), "'n_clusters' parameter of ClusterPrior"),
        (dict(n_clusters=2.0), "'n_clusters' parameter of ClusterPrior"),
    ],
)
def test_bad_inputs_fail_before_any_label_is_used(circle_data, monkeypatch, params, match):
    X, y = circle_data

    def fail(*args, **kwargs):
        raise AssertionError("labels were used despite invalid parameters")

    monkeypatch.setattr(PrivateLabels, "release", fail)
    acc = BudgetAccountant(epsilon=10.0)
    clf = cluster_clf(accountant=acc, **params)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert acc.spends == []
    assert not hasattr(clf, "classes_") and not hasattr(clf, "cluster_prior_")


def test_epsilon_is_required():
    with pytest.raises(TypeError, match="epsilon"):
        ClusterPrior(n_clusters=3)


@pytest.mark.parametrize("old", [dict(n_clusters=3), dict(prior_epsilon=0.5)])
def test_old_keywords_are_gone(old):
    with pytest.raises(TypeError, match="unexpected keyword"):
        RRWithPriorClassifier(epsilon=1.0, classes=CLASSES, **old)
    assert not set(old) & set(RRWithPriorClassifier().get_params())


def test_prior_parameters_are_nested_parameters(circle_data):
    X, y = circle_data
    clf = cluster_clf(epsilon=4.0, n_clusters=3, prior_epsilon=1.0)
    params = clf.get_params(deep=True)
    assert params["prior__n_clusters"] == 3 and params["prior__epsilon"] == 1.0
    cloned = clone(clf)
    assert cloned.prior is not clf.prior
    assert cloned.prior.get_params() == clf.prior.get_params()
    cloned.set_params(prior__n_clusters=6, prior__epsilon=2.0)
    assert clf.prior.get_params() == {
        "n_clusters": 3, "epsilon": 1.0, "preprocessor": None
    }  # the original is intact
    cloned.fit(X, y)
    assert cloned.cluster_prior_.shape == (6, K)
    assert cloned.privacy_spend_.parts[0].epsilon == 2.0
    assert cloned.get_params()["prior__n_clusters"] == 6  # fit does not touch the prior
    assert "ClusterPrior(epsilon=2.0, n_clusters=6)" in repr(cloned)
    restored = pickle.loads(pickle.dumps(cloned.prior))
    assert restored.get_params() == cloned.prior.get_params()


def test_clone_pickle_search_cross_val(circle_data):
    X, y = circle_data
    clf = cluster_clf(epsilon=4.0, prior_epsilon=1.0)
    cloned = clone(clf).get_params(deep=True)
    assert cloned.pop("prior") is not clf.prior  # cloned, and equal in all its parameters
    assert cloned == {k: v for k, v in clf.get_params(deep=True).items() if k != "prior"}
    clf.fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))
    np.testing.assert_array_equal(restored.cluster_prior_, clf.cluster_prior_)
    search = GridSearchCV(clf, {"prior__n_clusters": [2, 8]}, cv=3).fit(X, y)
    assert search.best_params_["prior__n_clusters"] in (2, 8)
    best = search.best_estimator_
    assert best.cluster_prior_.shape[0] == best.prior.n_clusters
    assert best.prior.n_clusters == search.best_params_["prior__n_clusters"]
    assert clf.prior.n_clusters == 5  # the search set its clones' priors, not this one
    assert cross_val_score(clf, X, y, cv=3).mean() > 0.7


def test_private_search_over_the_number_of_clusters(circle_data):
    X, y = circle_data
    clf = cluster_clf(classes=CLASSES, random_state=None)
    search = PrivateGridSearchCV(clf, {"prior__n_clusters": [2, 8]}, epsilon=4.0,
                                 random_state=0).fit(X, y)
    assert search.epsilon_ == 4.0
    best = search.best_estimator_
    assert best.cluster_prior_.shape == (search.best_params_["prior__n_clusters"], K)
    candidates = search.privacy_spend_.parts[:2]
    assert [c.mechanism for c in candidates] == ["RRWithPrior+cluster prior"] * 2
    assert [c.params["n_clusters"] for c in candidates] == [2, 8]
    assert clf.prior.n_clusters == 5


def test_same_seed_same_fit(circle_data):
    X, y = circle_data
    a = cluster_clf(n_stages=2, random_state=5).fit(X, y)
    b = cluster_clf(n_stages=2, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.cluster_prior_, b.cluster_prior_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_leak_warning_without_classes(circle_data):
    X, y = circle_data
    with pytest.warns(PrivacyLeakWarning):
        cluster_clf(classes=None).fit(X, y)
