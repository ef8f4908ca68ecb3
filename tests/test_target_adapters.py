import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from sklearn_labeldp._target_adapters import (
    check_target_capability,
    fit_bit_targets,
    fit_soft_targets,
    predict_bit_scores,
    predict_soft_targets,
)


class WeightRecorder(ClassifierMixin, BaseEstimator):
    def fit(self, X, y, sample_weight=None):
        self.X_, self.y_, self.w_ = np.asarray(X), np.asarray(y), sample_weight
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((len(X), self.classes_.size), 1 / self.classes_.size)


def test_soft_labels_expand_to_weighted_rows_and_drop_zeros():
    X = np.array([[0.0], [1.0]])
    soft = np.array([[0.25, 0.75, 0.0], [0.0, 0.0, 1.0]])
    model = fit_soft_targets(WeightRecorder(), X, soft, {"sample_weight": np.array([2.0, 3.0])})
    rows = sorted(zip(model.X_[:, 0], model.y_, model.w_, strict=True))
    assert rows == [(0.0, 0, 0.5), (0.0, 1, 1.5), (1.0, 2, 3.0)]


def test_weighted_expansion_is_soft_cross_entropy():
    # Logistic regression on the expanded data minimises sum_i sum_k p_ik (-log q_k(x_i)),
    # so at the optimum its gradient matches the soft-label gradient: the fitted
    # probabilities satisfy sum_i (q(x_i) - p_i) x_i = -C^-1 W (the ridge term).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    soft = rng.dirichlet(np.ones(4), size=200)
    model = fit_soft_targets(LogisticRegression(C=1e6, tol=1e-10, max_iter=10_000), X, soft, {})
    q = model.predict_proba(X)
    np.testing.assert_allclose((q - soft).T @ X, 0.0, atol=1e-3)
    np.testing.assert_allclose((q - soft).sum(axis=0), 0.0, atol=1e-3)


def test_hard_rows_need_no_weights_and_regressors_fit_directly():
    X = np.arange(6, dtype=float)[:, None]
    hard = np.eye(3)[[0, 1, 2, 0, 1, 2]]
    knn = fit_soft_targets(KNeighborsClassifier(1), X, hard, {})
    np.testing.assert_array_equal(knn.predict(X), [0, 1, 2, 0, 1, 2])
    soft = np.full((6, 3), 1 / 3)
    reg = fit_soft_targets(LinearRegression(), X, soft, {})
    np.testing.assert_allclose(predict_soft_targets(reg, X, 3), soft, atol=1e-12)


def test_predicted_soft_targets_align_missing_classes():
    X = np.arange(4, dtype=float)[:, None]
    model = fit_soft_targets(LogisticRegression(), X, np.eye(3)[[0, 0, 2, 2]], {})
    proba = predict_soft_targets(model, X, 3)
    assert proba.shape == (4, 3)
    np.testing.assert_array_equal(proba[:, 1], 0.0)


def test_bit_targets_with_regressor_and_per_column_classifiers():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 2))
    bits = (rng.random((100, 3)) < [0.2, 0.8, 0.5]).astype(np.uint8)
    bits[:, 2] = 1  # a constant column
    reg = fit_bit_targets(KNeighborsRegressor(100), X, bits, {})
    np.testing.assert_allclose(predict_bit_scores(reg, X), np.tile(bits.mean(axis=0), (100, 1)))
    models = fit_bit_targets(DecisionTreeClassifier(max_depth=1), X, bits, {})
    assert isinstance(models, list) and models[2] == 1.0
    scores = predict_bit_scores(models, X)
    assert scores.shape == (100, 3) and np.all(scores[:, 2] == 1.0)
    np.testing.assert_allclose(scores[:, 0], models[0].predict_proba(X)[:, 1])


@pytest.mark.parametrize(
    ("estimator", "kind", "match"),
    [
        (KNeighborsClassifier(), "soft", "sample_weight"),
        (LinearSVC(), "soft", "predict_proba"),
        (LinearSVC(), "bits", "predict_proba"),
        (LinearSVC(), "hard", "predict_proba"),
        (StandardScaler(), "soft", "neither a classifier nor a regressor"),
    ],
)
def test_missing_capabilities_are_clear_errors(estimator, kind, match):
    with pytest.raises(ValueError, match=match):
        check_target_capability(estimator, kind)


def test_capable_estimators_pass():
    for estimator, kind in [
        (KNeighborsRegressor(), "soft"),
        (LogisticRegression(), "soft"),
        (KNeighborsClassifier(), "hard"),
        (KNeighborsClassifier(), "bits"),
    ]:
        check_target_capability(estimator, kind)


class TagRecorder(WeightRecorder):
    def fit(self, X, y, sample_weight=None, tag=None):
        self.tag_ = tag
        return super().fit(X, y, sample_weight)


def test_other_per_sample_fit_params_follow_the_expanded_rows():
    X = np.array([[0.0], [1.0]])
    soft = np.array([[0.5, 0.5], [0.0, 1.0]])
    model = fit_soft_targets(TagRecorder(), X, soft, {"tag": np.array([7, 9])})
    np.testing.assert_array_equal(model.tag_, [7, 7, 9])
    np.testing.assert_array_equal(model.X_[:, 0], [0.0, 0.0, 1.0])
