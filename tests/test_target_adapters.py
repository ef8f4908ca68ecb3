import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelPropagation, LabelSpreading, SelfTrainingClassifier
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from sklearn_labeldp._target_adapters import (
    SOFT_REPLICAS,
    BitColumnClassifiers,
    TargetReuseMixin,
    check_target_capability,
    fit_bit_targets,
    fit_semi_supervised_targets,
    fit_soft_targets,
    learns_natively,
    learns_semi_supervised,
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
    assert isinstance(models, BitColumnClassifiers) and models.estimators_[2] == 1.0
    scores = predict_bit_scores(models, X)
    assert scores.shape == (100, 3) and np.all(scores[:, 2] == 1.0)
    np.testing.assert_allclose(scores[:, 0], models.estimators_[0].predict_proba(X)[:, 1])


@pytest.mark.parametrize(
    ("estimator", "kind", "match"),
    [
        (LinearSVC(), "soft", "predict_proba"),
        (LinearSVC(), "bits", "predict_proba"),
        (LinearSVC(), "hard", "predict_proba"),
        (StandardScaler(), "soft", "neither a classifier nor a regressor"),
    ],
)
def test_missing_capabilities_are_clear_errors(estimator, kind, match):
    with pytest.raises(ValueError, match=match):
        check_target_capability(estimator, kind)


def test_a_knn_classifier_learns_soft_labels_as_the_knn_regressor_of_its_neighbourhood():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    soft = rng.dirichlet(np.ones(3), size=60)
    clf = KNeighborsClassifier(n_neighbors=7, weights="distance", p=1)
    check_target_capability(clf, "soft")
    model = fit_soft_targets(clf, X, soft, {})
    assert isinstance(model, KNeighborsRegressor)
    assert (model.n_neighbors, model.weights, model.p) == (7, "distance", 1)
    # The soft form of the vote: with one-hot rows it is the classifier's predict_proba.
    np.testing.assert_allclose(model.predict(X[:5]), KNeighborsRegressor(
        n_neighbors=7, weights="distance", p=1).fit(X, soft).predict(X[:5]))
    hard = np.eye(3)[rng.integers(0, 3, 60)] * 0.999 + 0.001 / 3  # soft, nearly one-hot
    np.testing.assert_allclose(
        fit_soft_targets(KNeighborsClassifier(7), X, hard, {}).predict(X),
        KNeighborsClassifier(7).fit(X, hard.argmax(1)).predict_proba(X) * 0.999 + 0.001 / 3)


def test_another_classifier_without_sample_weight_learns_replicated_rows():
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

    class Recorder(QuadraticDiscriminantAnalysis):
        def fit(self, X, y):
            self.X_seen_, self.y_seen_ = np.asarray(X), np.asarray(y)
            return super().fit(X, y)

    X = np.random.default_rng(1).normal(size=(30, 2))
    soft = np.tile([[0.62, 0.38]], (30, 1))
    model = fit_soft_targets(Recorder(reg_param=0.5), X, soft, {})
    assert model.X_seen_.shape == (30 * SOFT_REPLICAS, 2)
    # 0.62 * 20 = 12.4 copies: 12 of class 0, 8 of class 1 for every row.
    per_row = model.y_seen_.reshape(30, SOFT_REPLICAS)
    assert ((per_row == 0).sum(1) == 12).all() and ((per_row == 1).sum(1) == 8).all()
    np.testing.assert_array_equal(model.X_seen_[:SOFT_REPLICAS], np.repeat(X[:1], 20, axis=0))


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


class NativeTargets(ClassifierMixin, BaseEstimator):
    """A stand-in for a network: learns soft and bit targets natively, by "epochs".

    Each epoch records the targets it trains on; between epochs it hands a
    fixed, made-up prediction to ``refresh`` (as the network's callback does).
    """

    def __init__(self, n_epochs=3, random_state=None):
        self.n_epochs = n_epochs
        self.random_state = random_state

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.epoch_targets_ = [np.eye(self.classes_.size)[np.searchsorted(self.classes_, y)]]
        return self

    def _epoch_proba(self, n_samples, n_classes, epoch):
        logits = np.add.outer(np.arange(n_samples), np.arange(n_classes) * (epoch + 1.0))
        return np.exp(-np.sin(logits)) / np.exp(-np.sin(logits)).sum(axis=1, keepdims=True)

    def fit_soft(self, X, targets, *, refresh=None):
        n_samples, n_classes = targets.shape
        self.classes_ = np.arange(n_classes)
        self.epoch_targets_, self.refresh_inputs_ = [targets], []
        for epoch in range(self.n_epochs - 1):
            if refresh is not None:
                proba = self._epoch_proba(n_samples, n_classes, epoch)
                self.refresh_inputs_.append(proba)
                self.epoch_targets_.append(refresh(proba))
        return self

    def fit_bits(self, X, bits):
        self.classes_ = np.arange(bits.shape[1])
        self.bits_ = bits
        return self

    def predict_proba(self, X):
        return self._epoch_proba(len(X), self.classes_.size, 0)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def test_native_estimators_learn_soft_and_bit_targets_directly():
    X = np.zeros((4, 1))
    soft = np.array([[0.5, 0.5, 0.0]] * 4)
    for kind in ("soft", "bits", "hard"):
        check_target_capability(NativeTargets(), kind)  # no sample_weight needed
    model = fit_soft_targets(NativeTargets(), X, soft, {})
    assert len(model.epoch_targets_) == 1 and model.epoch_targets_[0] is soft
    bits = np.array([[1, 0, 1]] * 4, dtype=np.uint8)
    model = fit_bit_targets(NativeTargets(), X, bits, {})
    assert model.bits_ is bits
    np.testing.assert_array_equal(predict_bit_scores(model, X), model.predict_proba(X))


def test_refresh_needs_a_native_estimator():
    with pytest.raises(ValueError, match="cannot refresh"):
        fit_soft_targets(
            LogisticRegression(), np.zeros((2, 1)), np.eye(2), {}, refresh=lambda p: p
        )


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_alibi_refreshes_a_native_model_from_the_same_noise(noise):
    # The posterior with prior p is p * posterior_uniform, renormalised, for the
    # *same* noisy vector (Bayes). Targets that follow this identity between
    # epochs prove the refresh reuses the one noisy release.
    from sklearn_labeldp.classifiers import ALIBIClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), rng.integers(0, 4, size=50)
    delta = 1e-5 if noise == "gaussian" else None
    clf = ALIBIClassifier(
        NativeTargets(n_epochs=4), epsilon=1.0, classes=np.arange(4), n_rounds=1,
        noise=noise, delta=delta, random_state=0,
    ).fit(X, y)
    model = clf.estimator_
    assert len(model.refresh_inputs_) == 3
    np.testing.assert_array_equal(model.epoch_targets_[0], clf.soft_labels_)
    for proba, targets in zip(model.refresh_inputs_, model.epoch_targets_[1:], strict=True):
        expected = proba * clf.soft_labels_
        expected /= expected.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(targets, expected, rtol=1e-9)
        assert not np.allclose(targets, clf.soft_labels_)


def test_alibi_without_bayes_does_not_refresh():
    from sklearn_labeldp.classifiers import ALIBIClassifier

    X, y = np.zeros((20, 1)), np.arange(20) % 2
    clf = ALIBIClassifier(
        NativeTargets(), epsilon=1.0, classes=[0, 1], n_rounds=1, post_processing="simplex",
        random_state=0,
    ).fit(X, y)
    assert clf.estimator_.refresh_inputs_ == []


def test_vector_approximation_trains_one_native_model_on_all_bits():
    from sklearn_labeldp.classifiers import VectorApproxClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.integers(0, 5, size=30)
    clf = VectorApproxClassifier(
        NativeTargets(), epsilon=1.0, classes=np.arange(5), random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(clf.estimator_.bits_, clf.privatized_bits_)
    assert clf.predict_proba(X).shape == (30, 5)


# ---------------------------------------------------------------- semi-supervised targets
class NativeSemi(ClassifierMixin, BaseEstimator):
    """Learns -1 = unlabeled natively (as a FixMatch network does); plain fit refused."""

    def fit(self, X, y):
        raise AssertionError("an estimator with fit_semi must be fitted through fit_semi")

    def fit_semi(self, X, y, **fit_params):
        self.y_, self.fit_params_ = np.asarray(y), fit_params
        self.classes_ = np.unique(self.y_[self.y_ >= 0])
        return self


@pytest.mark.parametrize(
    "estimator, semi, native",
    [
        (NativeSemi(), True, True),
        (LabelSpreading(), True, False),
        (LabelPropagation(), True, False),
        (SelfTrainingClassifier(LogisticRegression()), True, False),
        (make_pipeline(StandardScaler(), LabelSpreading()), True, False),
        (make_pipeline(LabelSpreading(), StandardScaler()), False, False),  # not its last step
        (LogisticRegression(), False, False),
        (KNeighborsRegressor(), False, False),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, bool) else str(v),
)
def test_semi_supervised_is_a_declared_capability(estimator, semi, native):
    assert learns_semi_supervised(estimator) is semi
    assert learns_natively(estimator, "semi") is native


def test_semi_supervised_targets_reach_fit_semi_or_fit():
    X = np.arange(8, dtype=float)[:, None]
    targets = np.array([0, 1, -1, -1, 0, 1, -1, -1])
    native = fit_semi_supervised_targets(NativeSemi(), X, targets, {"epochs": 2})
    np.testing.assert_array_equal(native.y_, targets)
    assert native.fit_params_ == {"epochs": 2}
    spread = fit_semi_supervised_targets(LabelSpreading(n_neighbors=2), X, targets, {})
    np.testing.assert_array_equal(spread.classes_, [0, 1])  # -1 read as unlabeled
    assert set(spread.transduction_) == {0, 1}


# ---------------------------------------------------------------- the post-processing protocol
def test_target_reuse_protocol_is_declared_by_both_implementations():
    from sklearn_labeldp.classifiers import (
        ALIBIClassifier,
        PATEClassifier,
        RRWithPriorClassifier,
        VectorApproxClassifier,
    )

    assert issubclass(RRWithPriorClassifier, TargetReuseMixin)
    assert issubclass(VectorApproxClassifier, TargetReuseMixin)
    assert not issubclass(ALIBIClassifier, TargetReuseMixin)
    assert not issubclass(PATEClassifier, TargetReuseMixin)


def test_reusable_targets_and_final_estimator_of_randomized_response():
    from sklearn_labeldp.classifiers import RRWithPriorClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 3, size=60)
    clf = RRWithPriorClassifier(LogisticRegression(), epsilon=1.0, classes=range(3),
                                random_state=0)
    with pytest.raises(NotFittedError):
        clf.reusable_targets()
    clf.fit(X, y)
    reuse = clf.reusable_targets()
    assert reuse.kind == "hard" and reuse.targets is clf.privatized_labels_
    p = np.e / (np.e + 2)  # e^eps / (e^eps + K - 1)
    assert reuse.agree_if_right == pytest.approx(p)
    assert reuse.agree_if_wrong == pytest.approx(p / np.e)
    model = reuse.fit(KNeighborsClassifier(3), X, np.arange(60))
    original = clf.estimator_
    copied = clf.with_final_estimator(model)
    assert type(copied) is RRWithPriorClassifier
    assert copied.estimator_ is model and copied.estimators_ == [model]
    assert clf.estimator_ is original and clf.estimators_ == [original]  # left as it was
    two_stages = clone(clf).set_params(n_stages=2)
    with pytest.raises(ValueError, match="n_stages=1"):
        two_stages.check_target_reuse()


def test_reusable_targets_and_final_estimator_of_vector_approximation():
    from sklearn_labeldp.classifiers import VectorApproxClassifier
    from sklearn_labeldp.mechanisms import rappor_probabilities

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 3, size=60)
    clf = VectorApproxClassifier(epsilon=2.0, classes=range(3), random_state=0).fit(X, y)
    clf.check_target_reuse()  # every fit's bits can be reused
    reuse = clf.reusable_targets()
    assert reuse.kind == "bits" and reuse.targets is clf.privatized_bits_
    assert (reuse.agree_if_right, reuse.agree_if_wrong) == rappor_probabilities(2.0)
    model = reuse.fit(LinearRegression(), X, np.arange(60))
    copied = clf.with_final_estimator(model)
    assert copied.estimator_ is model and clf.estimator_ is not model
    np.testing.assert_array_equal(copied.predict(X), np.argmax(model.predict(X), axis=1))


def test_both_kinds_of_reusable_targets_share_fit_and_scores():
    from sklearn_labeldp._target_adapters import ReusableRealTargets, ReusableTargets

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    hard = ReusableTargets(rng.integers(0, 2, size=40), 0.8, 0.2, "hard")
    model = hard.fit(KNeighborsClassifier(3), X, np.arange(30))
    rows = np.arange(30, 40)
    observed, unbiased = hard.scores(model, X, rows)
    assert observed == hard.agreement(model, X, rows)
    assert unbiased == pytest.approx((observed - 0.2) / 0.6)
    # Real targets: "targets" trains on (z - shift) / scale, "predictions" maps the
    # predictions of a model trained on z; least squares makes them the same model.
    z = X @ [1.0, -2.0] + 3.0
    real = {c: ReusableRealTargets(z, scale=0.5, shift=1.0, shift_squares=2.0, correction=c)
            for c in ("none", "targets", "predictions")}
    fitted = {c: r.fit(LinearRegression(), X, np.arange(40)) for c, r in real.items()}
    np.testing.assert_allclose(fitted["targets"].predict(X), (z - 1.0) / 0.5)
    np.testing.assert_allclose(fitted["none"].predict(X), z)
    np.testing.assert_allclose(real["predictions"].predict(fitted["predictions"], X),
                               (z - 1.0) / 0.5)
    observed, unbiased = real["none"].scores(fitted["none"], X, rows)
    assert observed == pytest.approx(0.0, abs=1e-20)  # f = z exactly
    f = z[rows]
    assert unbiased == pytest.approx(-np.mean(f * (f - 2 * (f - 1.0) / 0.5)
                                              + (f**2 - 2.0) / 0.5))
