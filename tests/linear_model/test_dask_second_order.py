"""DP-Newton and DP-FC (DPLogisticRegression) on dask arrays: blockwise sums, same noise."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from sklearn_labeldp._private_labels import PrivateLabels  # noqa: E402
from sklearn_labeldp.accounting import BudgetAccountant  # noqa: E402
from sklearn_labeldp.linear_model import DPLinearSVC, DPLogisticRegression  # noqa: E402
from sklearn_labeldp.linear_model._dask import dask_second_order_sums  # noqa: E402
from sklearn_labeldp.linear_model._preprocessing import clipped_design  # noqa: E402
from sklearn_labeldp.linear_model._second_order import (  # noqa: E402
    noisy_second_order_logistic,
)
from sklearn_labeldp.linear_model._statistics import NumpySecondOrderSums  # noqa: E402

CHUNKINGS = [1000, 333, (400, 1, 0, 599)]
N, D = 1000, 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = rng.integers(3, size=N)
    X = rng.normal(size=(N, D)) + 1.5 * np.eye(3, D)[y]
    return X, y


def to_dask(X, y, chunks):
    return da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,))


def params(solver, privacy, n_classes, **extra):
    return dict(epsilon=1.0, delta=1e-5, solver=solver, privacy=privacy, data_norm=4.0,
                classes=list(range(n_classes)), random_state=3, n_noisy_steps=4, **extra)


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("hessians", [True, False])
def test_blockwise_sums_equal_numpy(data, chunks, n_classes, hessians):
    X, y = data
    y = y % n_classes
    Z = clipped_design(X, 3.0, intercept=True, scale=0.5)
    theta = np.random.default_rng(1).normal(size=(1 if n_classes == 2 else n_classes, D + 1))
    Zd, yd = to_dask(Z, y, chunks)
    expected = NumpySecondOrderSums(y, Z, n_classes)
    got = dask_second_order_sums(yd, Zd, n_classes=n_classes, solver="newton", split_every=2)
    np.testing.assert_allclose(got.gram(), expected.gram(), rtol=1e-10, atol=1e-10)
    (g1, h1), (g0, h0) = got.step(theta, hessians), expected.step(theta, hessians)
    np.testing.assert_allclose(g1, g0, rtol=1e-10, atol=1e-10)
    if hessians:
        np.testing.assert_allclose(h1, h0, rtol=1e-10, atol=1e-10)
    else:
        assert h1 is None and h0 is None


@pytest.mark.parametrize("solver", ["newton", "fc"])
def test_trainer_draws_the_same_noise(data, solver):
    X, y = data
    Z = clipped_design(X, 3.0, intercept=True, scale=0.5)
    Zd, yd = to_dask(Z, y, 250)
    kwargs = dict(Z=None, n_classes=3, solver=solver, n_noisy_steps=3, reg=1e-3,
                  noise_stds={"gradient": 0.1, "hessian": 0.05, "gram": 0.05})
    reference = np.random.default_rng(7)
    expected = noisy_second_order_logistic(y, **{**kwargs, "Z": Z}, random_state=reference)
    rng = np.random.default_rng(7)
    got = noisy_second_order_logistic(yd, **{**kwargs, "Z": Zd}, random_state=rng)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-12)
    assert rng.standard_normal() == reference.standard_normal()


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("solver", ["newton", "fc"])
@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_equals_numpy(data, chunks, solver, privacy, n_classes):
    X, y = data
    y = y % n_classes
    Xd, yd = to_dask(X, y, chunks)
    p = params(solver, privacy, n_classes)
    ref = DPLogisticRegression(**p, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    clf = DPLogisticRegression(**p, accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    assert isinstance(clf.coef_, np.ndarray) and clf.coef_.shape == ref.coef_.shape
    assert clf.n_iter_ == ref.n_iter_ == 4
    assert clf.mechanism_params_ == ref.mechanism_params_
    assert clf.n_features_in_ == D and clf.data_norm_ == ref.data_norm_
    if privacy == "label":
        assert clf.clipped_fraction_ == ref.clipped_fraction_
    else:
        assert clf.example_epsilon_ == ref.example_epsilon_
    assert clf.accountant.total() == ref.accountant.total()
    assert len(clf.accountant.spends) == 1
    # The model is an ordinary numpy model: it predicts on numpy X as the reference.
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))


def test_fit_without_intercept_and_numpy_y(data):
    X, y = data
    X = X.astype(np.float32)  # cast to float64 block by block
    p = params("newton", "label", 3, fit_intercept=False)
    ref = DPLogisticRegression(**p, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    clf = DPLogisticRegression(**p, accountant=BudgetAccountant(10.0, 0.1)).fit(
        da.from_array(X, chunks=(300, 2)), y)  # column chunks are joined
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(clf.intercept_, 0.0)


@pytest.mark.parametrize("solver,computes", [("newton", 4), ("fc", 5)])
def test_labels_read_once_after_the_charge_one_compute_per_step(data, monkeypatch, solver,
                                                                computes):
    # The trainer receives the dask codes (lazy) through one PrivateLabels.release,
    # after the charge; inside it, one dask.compute per step (and one for FC's G).
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    accountant = BudgetAccountant(10.0, 0.1)
    seen, calls = [], []
    original_release, original_compute = PrivateLabels.release, dask.compute

    def counting_compute(*args, **kwargs):
        calls.append(len(args))
        return original_compute(*args, **kwargs)

    def spy(self, mechanism, indices, **kwargs):
        assert self.spent.max() == 0.0
        assert len(accountant.spends) == 1  # charged before any label-dependent compute
        monkeypatch.setattr(dask, "compute", counting_compute)
        try:
            out = original_release(
                self, lambda codes, **kw: seen.append(codes) or mechanism(codes, **kw),
                indices, **kwargs)
        finally:
            monkeypatch.setattr(dask, "compute", original_compute)
        assert np.all(self.spent == self.epsilon)
        return out

    monkeypatch.setattr(PrivateLabels, "release", spy)
    DPLogisticRegression(**params(solver, "label", 3), accountant=accountant).fit(Xd, yd)
    assert len(seen) == 1 and isinstance(seen[0], da.Array)
    np.testing.assert_array_equal(seen[0].compute(), y)
    assert calls == [1] * computes


@pytest.mark.parametrize("solver", ["objective", "output", "sgd", "adam"])
def test_other_solvers_refuse_dask_before_charge(data, solver):
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    accountant = BudgetAccountant(10.0, 0.1)
    delta = 0.0 if solver in ("objective", "output") else 1e-5
    for X_, y_ in [(Xd, yd), (Xd, y), (X, yd)]:
        with pytest.raises(TypeError, match="not supported on dask arrays; compute"):
            DPLogisticRegression(solver=solver, delta=delta, classes=[0, 1, 2],
                                 accountant=accountant).fit(X_, y_)
    with pytest.raises(TypeError, match="not supported on dask arrays; compute"):
        DPLinearSVC(classes=[0, 1, 2], accountant=accountant).fit(Xd, yd)
    assert accountant.spends == [] and accountant.total().epsilon == 0.0


def test_label_checks_before_charge(data):
    X, y = data
    Xd, yd = to_dask(X, y, 250)
    accountant = BudgetAccountant(10.0, 0.1)
    p = params("newton", "label", 3)
    with pytest.raises(ValueError, match="pass `classes`"):
        DPLogisticRegression(**{**p, "classes": None}, accountant=accountant).fit(Xd, yd)
    with pytest.raises(ValueError, match="not in `classes`"):
        DPLogisticRegression(**{**p, "classes": [0, 1]}, accountant=accountant).fit(Xd, yd)
    with pytest.raises(ValueError, match="delta must lie"):
        DPLogisticRegression(**{**p, "delta": 0.0}, accountant=accountant).fit(Xd, yd)
    assert accountant.spends == [] and accountant.total().epsilon == 0.0


@pytest.mark.dask_cluster
def test_newton_fit_on_local_cluster(data):
    distributed = pytest.importorskip("distributed")
    X, y = data
    p = params("newton", "full", 3)
    ref = DPLogisticRegression(**p, accountant=BudgetAccountant(10.0, 0.1)).fit(X, y)
    with dask.config.set(scheduler=None), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:
        Xd, yd = to_dask(X, y, 125)
        Xd, yd = client.persist([Xd, yd])
        distributed.wait([Xd, yd])
        clf = DPLogisticRegression(**p, accountant=BudgetAccountant(10.0, 0.1)).fit(Xd, yd)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
