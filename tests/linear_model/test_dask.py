"""The linear models on dask arrays: blockwise statistics equal numpy's, same noise; lazy
predictions for every linear model."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from sklearn_labeldp._private_labels import PrivateLabels  # noqa: E402
from sklearn_labeldp.accounting import BudgetAccountant  # noqa: E402
from sklearn_labeldp.linear_model import (  # noqa: E402
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
)
from sklearn_labeldp.linear_model._dask import (  # noqa: E402
    dask_least_squares_statistics,
)
from sklearn_labeldp.linear_model._least_squares import (  # noqa: E402
    noisy_least_squares_statistics,
)
from sklearn_labeldp.linear_model._preprocessing import clipped_design  # noqa: E402
from sklearn_labeldp.linear_model._statistics import least_squares_statistics  # noqa: E402

CHUNKINGS = [1000, 333, (400, 1, 0, 599)]
N, D, K = 1000, 5, 3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = rng.integers(K, size=N)
    X = rng.normal(size=(N, D)) + 1.5 * np.eye(K, D)[y]
    return X, y


def to_dask(X, y, chunks):
    return da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,))


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
@pytest.mark.parametrize("intercept", [True, False])
def test_blockwise_statistics_equal_numpy(data, chunks, formulation, intercept):
    X, y = data
    Z = clipped_design(X, 2.5, intercept=intercept, scale=0.7)
    Xd, yd = to_dask(Z, y, chunks)
    kwargs = dict(n_classes=K, formulation=formulation, data_norm=2.5, gram=True)
    expected = least_squares_statistics(y, Z, **kwargs)
    got = dask_least_squares_statistics(yd, Xd, split_every=2, **kwargs)
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
def test_noisy_statistics_draw_the_same_noise(data, privacy, formulation):
    # The noise is drawn on the client, after the reduction, from the same generator
    # in the same order (b, A, G): equal seeds give equal noisy statistics.
    X, y = data
    Z = clipped_design(X, 3.0, intercept=True, scale=2**-0.5)
    Zd, yd = to_dask(Z, y, 250)
    kwargs = dict(n_classes=K, privacy=privacy, formulation=formulation,
                  noise_multiplier=2.0, data_norm=4.0)
    expected = noisy_least_squares_statistics(y, Z=Z, random_state=np.random.default_rng(7),
                                              **kwargs)
    rng = np.random.default_rng(7)
    got = noisy_least_squares_statistics(yd, Z=Zd, random_state=rng, **kwargs)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-9, atol=1e-9)
    if privacy == "label":  # exact public G from the same pass
        np.testing.assert_allclose(got["G_public"], Z.T @ Z, rtol=1e-10)
    # The generator advanced exactly as the numpy path's: the next draws agree.
    reference = np.random.default_rng(7)
    noisy_least_squares_statistics(y, Z=Z, random_state=reference, **kwargs)
    assert rng.standard_normal() == reference.standard_normal()


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
def test_fit_equals_numpy(data, chunks, privacy, formulation):
    X, y = data
    Xd, yd = to_dask(X, y, chunks)
    params = dict(epsilon=1.0, privacy=privacy, formulation=formulation, data_norm=4.0,
                  classes=list(range(K)), random_state=3)
    ref = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    clf = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    assert isinstance(clf.coef_, np.ndarray)
    # alpha="auto" reads the smallest eigenvalue of the (blockwise summed) Gramian: equal
    # up to the rounding of the summation order; the calibration is exactly equal.
    calibrated = {key: value for key, value in clf.mechanism_params_.items() if key != "alpha"}
    assert calibrated == {key: value for key, value in ref.mechanism_params_.items()
                          if key != "alpha"}
    assert clf.alpha_ == pytest.approx(ref.alpha_, rel=1e-10)
    assert clf.mechanism_params_["alpha"] == clf.alpha_
    assert clf.n_features_in_ == D and clf.data_norm_ == ref.data_norm_
    if privacy == "label":
        assert clf.clipped_fraction_ == ref.clipped_fraction_
    else:
        assert clf.example_epsilon_ == ref.example_epsilon_
    assert clf.accountant.total() == ref.accountant.total()
    # predict / decision_function on dask X: lazy, and equal to numpy's.
    scores = clf.decision_function(Xd)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), ref.decision_function(X), rtol=1e-8,
                               atol=1e-9)
    predicted = clf.predict(Xd)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), clf.predict(X))


def test_fit_equals_numpy_without_intercept_and_numpy_y(data):
    X, y = data
    X = X.astype(np.float32)  # cast to float64 block by block
    params = dict(data_norm=4.0, fit_intercept=False, classes=[0, 1, 2], random_state=1)
    ref = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    clf = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(
        da.from_array(X, chunks=(300, 2)), y)  # column chunks are joined
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(clf.intercept_, 0.0)


def test_binary_labels_and_predict(data):
    X, y = data
    y2 = np.where(y == 0, "a", "b")
    params = dict(data_norm=4.0, classes=["a", "b"], random_state=0)
    ref = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y2)
    Xd, yd = to_dask(X, y2, 200)
    clf = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    assert clf.decision_function(Xd).shape == (N,)
    np.testing.assert_array_equal(clf.predict(Xd).compute(), ref.predict(X))


def test_auto_bound_uses_approximate_quantile(data):
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    params = dict(classes=list(range(K)), random_state=0)
    ref = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    clf = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
    assert clf.data_norm_ == pytest.approx(ref.data_norm_, rel=0.05)
    assert clf.clipped_fraction_ == pytest.approx(0.5, abs=0.05)
    assert clf.score(X, y) > 0.6


def test_labels_are_read_once_through_release(data, monkeypatch):
    # The mechanism receives the dask codes (lazy) through PrivateLabels.release, and
    # nothing of y is computed before the charge except the membership check.
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    seen = []
    original = PrivateLabels.release

    def spy(self, mechanism, indices, **kwargs):
        assert self.spent.max() == 0.0
        out = original(self, lambda codes, **kw: seen.append(codes) or mechanism(codes, **kw),
                       indices, **kwargs)
        assert np.all(self.spent == self.epsilon)
        return out

    monkeypatch.setattr(PrivateLabels, "release", spy)
    DPLeastSquaresClassifier(data_norm=4.0, classes=[0, 1, 2], random_state=0,
                             accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
    assert len(seen) == 1 and isinstance(seen[0], da.Array)
    np.testing.assert_array_equal(seen[0].compute(), y)


def test_label_checks_before_charge(data):
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    accountant = BudgetAccountant(10.0, 0.1)
    with pytest.raises(ValueError, match="pass `classes`"):
        DPLeastSquaresClassifier(data_norm=4.0, accountant=accountant).fit(Xd, yd)
    with pytest.raises(ValueError, match="not in `classes`"):
        DPLeastSquaresClassifier(data_norm=4.0, classes=[0, 1], accountant=accountant).fit(
            Xd, yd)
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        DPLeastSquaresClassifier(data_norm=4.0, classes=[0, 1, 2], accountant=accountant).fit(
            da.from_array(bad, chunks=(250, -1)), yd)
    with pytest.raises(ValueError, match="inconsistent"):
        DPLeastSquaresClassifier(data_norm=4.0, classes=[0, 1, 2], accountant=accountant).fit(
            Xd, yd[:10])
    assert accountant.spends == [] and accountant.total().epsilon == 0.0
    clf = DPLeastSquaresClassifier(data_norm=4.0, classes=[0, 1, 2],
                                   accountant=accountant).fit(Xd, yd)
    with pytest.raises(ValueError, match="features"):
        clf.predict(Xd[:, :3])


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
def test_erm_models_refuse_dask_before_charge(data, Estimator):
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    accountant = BudgetAccountant(10.0, 0.1)
    for X_, y_ in [(Xd, yd), (Xd, y), (X, yd)]:
        with pytest.raises(TypeError, match="not supported on dask arrays; compute"):
            Estimator(classes=[0, 1, 2], accountant=accountant).fit(X_, y_)
    assert accountant.spends == [] and accountant.total().epsilon == 0.0


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("make", [
    lambda K: DPLogisticRegression(classes=range(K)),
    lambda K: DPLogisticRegression(solver="newton", delta=1e-5, classes=range(K)),
    lambda K: DPLinearSVC(classes=range(K)),
    lambda K: DPLeastSquaresClassifier(classes=range(K)),
])
def test_every_linear_model_predicts_on_dask_lazily(data, make, n_classes):
    """Fitted on numpy, the predictions on a dask X are lazy, chunked like X, equal to numpy's.

    Up to 7bea6a6 the ERM models (objective perturbation, DP-Newton, DPLinearSVC)
    validated a dask X as an in-memory array.
    """
    X, y = data
    y = y % n_classes
    clf = make(n_classes).set_params(epsilon=2.0, random_state=0,
                                     accountant=BudgetAccountant(delta=1e-3)).fit(X, y)
    Xd = da.from_array(X, chunks=(333, -1))
    methods = ["predict", "decision_function"] + (
        ["predict_proba", "predict_log_proba"] if hasattr(clf, "predict_proba") else [])
    for method in methods:
        lazy = getattr(clf, method)(Xd)
        assert isinstance(lazy, da.Array) and lazy.chunks[0] == Xd.chunks[0], method
        np.testing.assert_allclose(lazy.compute(), getattr(clf, method)(X), err_msg=method)


@pytest.mark.dask_cluster
def test_fit_on_local_cluster(data):
    distributed = pytest.importorskip("distributed")
    X, y = data
    params = dict(data_norm=4.0, privacy="full", classes=[0, 1, 2], random_state=5)
    ref = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    with dask.config.set(scheduler=None), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:
        Xd, yd = to_dask(X, y, 125)
        Xd, yd = client.persist([Xd, yd])
        distributed.wait([Xd, yd])
        assert len(client.who_has()) > 0
        clf = DPLeastSquaresClassifier(**params, accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
        predicted = clf.predict(Xd).compute()
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(predicted, ref.predict(X))
