"""The meta-estimators and the label-DP regressors predict on dask arrays lazily, by row blocks.

Fitted on numpy, ``predict``, ``predict_proba`` and ``decision_function`` (where
the final model has them) on a dask ``X`` return dask arrays chunked like
``X`` along rows, equal to the numpy predictions once computed; on a
``LocalCluster`` the blocks are predicted in the worker processes.
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC

from sklearn_labeldp import (
    ALIBIClassifier,
    BudgetAccountant,
    DPLeastSquaresRegressor,
    NoisyLabelRegressor,
    PATEClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.utils import row_blocks_on_dask

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

K = 3


def _rr():
    return RRWithPriorClassifier(LogisticRegression(), epsilon=2.0, classes=range(K),
                                 n_stages=2, accountant=BudgetAccountant())


def _rr_unseen_class():
    # A class no row has, which randomized response at epsilon 50 never
    # produces: decision_function pads its column with -inf, as the blocks must.
    return RRWithPriorClassifier(LogisticRegression(), epsilon=50.0, classes=range(K + 1),
                                 accountant=BudgetAccountant())


def _alibi():
    return ALIBIClassifier(epsilon=2.0, classes=range(K),
                           accountant=BudgetAccountant())


def _pate():
    return PATEClassifier(KNeighborsClassifier(), student=LogisticRegression(), n_teachers=30,
                          n_queries=30, epsilon=8.0, aggregator="lnmax", classes=range(K),
                          accountant=BudgetAccountant())


def _vector_approx():
    return VectorApproxClassifier(epsilon=2.0, classes=range(K), accountant=BudgetAccountant())


def _vector_approx_per_column():
    # A classifier base: one LogisticRegression per bit column (BitColumnClassifiers).
    return VectorApproxClassifier(LogisticRegression(), epsilon=2.0, classes=range(K),
                                  accountant=BudgetAccountant())


MAKERS = {"lp_mst": _rr, "lp_mst_unseen": _rr_unseen_class, "alibi": _alibi, "pate": _pate,
          "vector_approx": _vector_approx, "vector_approx_per_column": _vector_approx_per_column}


@pytest.fixture(scope="module")
def data():
    X, y = make_circle_gaussians(600, K, sigma=0.3, random_state=0)
    X_new, _ = make_circle_gaussians(250, K, sigma=0.3, random_state=1)
    return X, y, X_new


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_predictions_on_dask_are_lazy_blockwise_and_equal_numpy(data, name):
    X, y, X_new = data
    clf = MAKERS[name]().fit(X, y)
    X_dask = da.from_array(X_new, chunks=((100, 100, 50), (1, 1)))
    methods = [m for m in ("predict", "predict_proba", "decision_function") if hasattr(clf, m)]
    assert "predict_proba" in methods
    with dask.config.set(scheduler="synchronous"):
        for method in methods:
            lazy = getattr(clf, method)(X_dask)
            assert isinstance(lazy, da.Array), method
            assert lazy.chunks[0] == (100, 100, 50)
            expected = getattr(clf, method)(X_new)
            assert lazy.shape == expected.shape and lazy.dtype == expected.dtype
            np.testing.assert_array_equal(lazy.compute(), expected)
    if name == "lp_mst_unseen":
        assert np.all(clf.decision_function(X_new)[:, K] == -np.inf)


def _regressor(debias):
    # RR-on-Bins with debias="predictions" undoes the release's shrinkage on
    # every block's predictions; "none" returns the base's predictions as they are.
    return NoisyLabelRegressor(Ridge(), epsilon=2.0, label_range=(-2.0, 2.0),
                               mechanism="rr_on_bins", debias=debias,
                               accountant=BudgetAccountant())


def _least_squares():
    return DPLeastSquaresRegressor(epsilon=2.0, label_range=(-2.0, 2.0),
                                   accountant=BudgetAccountant(delta=1e-5))


REGRESSORS = {"noisy_labels_none": lambda: _regressor("none"),
              "noisy_labels_predictions": lambda: _regressor("predictions"),
              "least_squares": _least_squares}


@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_regressor_predictions_on_dask_are_lazy_blockwise_and_equal_numpy(data, name):
    X, _, X_new = data
    y = np.clip(X[:, 0] - 0.5 * X[:, 1], -2.0, 2.0)
    reg = REGRESSORS[name]().fit(X, y)
    expected = reg.predict(X_new)
    if name.startswith("noisy_labels"):
        assert reg.mechanism_params_["debias"] == name.rsplit("_", 1)[1]
    if name == "noisy_labels_predictions":  # the correction changes the predictions
        np.testing.assert_raises(AssertionError, np.testing.assert_allclose,
                                 reg.estimator_.predict(X_new), expected)
    X_dask = da.from_array(X_new, chunks=((100, 100, 50), (1, 1)))
    with dask.config.set(scheduler="synchronous"):
        lazy = reg.predict(X_dask)
        assert isinstance(lazy, da.Array)
        assert lazy.chunks == ((100, 100, 50),)
        assert lazy.dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(lazy.compute(), expected)
    if name == "least_squares":  # a linear model of the features, not a constant
        np.testing.assert_allclose(expected, X_new @ reg.coef_ + reg.intercept_)
        assert np.std(expected) > 0.1


def test_available_if_still_hides_what_the_final_model_lacks(data):
    X, y, X_new = data
    clf = RRWithPriorClassifier(LinearSVC(), epsilon=2.0, classes=range(K),
                                accountant=BudgetAccountant())
    assert not hasattr(clf, "predict_proba")
    clf.fit(X, y)
    assert not hasattr(clf, "predict_proba") and hasattr(clf, "decision_function")
    with pytest.raises(AttributeError, match="predict_proba"):
        clf.predict_proba(da.from_array(X_new, chunks=100))
    lazy = clf.decision_function(da.from_array(X_new, chunks=100))
    assert lazy.shape == (X_new.shape[0], K)
    np.testing.assert_array_equal(lazy.compute(scheduler="synchronous"),
                                  clf.decision_function(X_new))


def test_a_dask_x_of_the_wrong_width_fails_at_the_call(data):
    X, y, _ = data
    wide = da.zeros((10, X.shape[1] + 1), chunks=5)
    clf = _alibi().fit(X, y)
    reg = _least_squares().fit(X, np.clip(X[:, 0], -2.0, 2.0))
    for method in (clf.predict, clf.predict_proba, reg.predict):
        with pytest.raises(ValueError, match="3 features, but .* expecting 2"):
            method(wide)


def test_row_blocks_on_dask_reads_the_shape_from_one_public_row_when_not_given():
    class Scores(BaseEstimator):
        n_calls = 0

        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        @row_blocks_on_dask()
        def decision_function(self, X):
            type(self).n_calls += 1
            return np.column_stack([X.sum(axis=1), -X.sum(axis=1)]).astype(np.float32)

    X = np.arange(12.0).reshape(6, 2)
    scores = Scores().fit(X)
    lazy = scores.decision_function(da.from_array(X, chunks=(4, 1)))
    assert Scores.n_calls == 1  # the probe only: nothing of X was computed
    assert lazy.chunks == ((4, 2), (2,)) and lazy.dtype == np.float32
    np.testing.assert_array_equal(lazy.compute(scheduler="synchronous"),
                                  scores.decision_function(X))


def test_row_blocks_on_dask_refuses_an_unfitted_estimator():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        _vector_approx().predict(da.zeros((10, 2), chunks=5))
    with pytest.raises(NotFittedError):
        _regressor("none").predict(da.zeros((10, 2), chunks=5))


@pytest.mark.dask_cluster
def test_predictions_run_in_the_workers_of_a_local_cluster(data):
    distributed = pytest.importorskip("distributed")
    X, y, X_new = data
    clf = _alibi().fit(X, y)
    vector = _vector_approx().fit(X, y)
    reg = _regressor("predictions").fit(X, np.clip(X[:, 0], -2.0, 2.0))
    least_squares = _least_squares().fit(X, np.clip(X[:, 0], -2.0, 2.0))
    X_dask = da.from_array(X_new, chunks=(50, 2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster):
        labels = clf.predict(X_dask).compute()
        proba = clf.predict_proba(X_dask).compute()
        vector_proba = vector.predict_proba(X_dask).compute()
        values = reg.predict(X_dask).compute()
        linear_values = least_squares.predict(X_dask).compute()
    np.testing.assert_array_equal(labels, clf.predict(X_new))
    np.testing.assert_allclose(proba, clf.predict_proba(X_new))
    np.testing.assert_allclose(vector_proba, vector.predict_proba(X_new))
    np.testing.assert_allclose(values, reg.predict(X_new))
    np.testing.assert_allclose(linear_values, least_squares.predict(X_new))


def _seeded_alibi(data):
    X, y, _ = data
    return ALIBIClassifier(epsilon=2.0, classes=range(K), random_state=0,
                           accountant=BudgetAccountant()).fit(X, y)


def test_a_seeded_models_dask_predict_warns_nothing_but_its_pickle_still_does(data):
    # Dask pickles the model to tokenize the graph and to ship it; only the user's
    # own pickle of a seeded model warns (the replay key leaves with it).
    import pickle
    import warnings

    from sklearn_labeldp.exceptions import PrivacyLeakWarning

    clf = _seeded_alibi(data)
    X_dask = da.from_array(data[2], chunks=(50, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = clf.predict_proba(X_dask)
        np.testing.assert_allclose(proba.compute(scheduler="processes", num_workers=2),
                                   clf.predict_proba(data[2]))
        pickle.loads(pickle.dumps(proba.dask))  # the graph itself, as a scheduler sends it
    with pytest.warns(PrivacyLeakWarning, match="replay key"):
        pickle.dumps(clf)


@pytest.mark.dask_cluster
def test_a_seeded_models_predict_on_a_local_cluster_warns_nothing(data):
    import warnings

    distributed = pytest.importorskip("distributed")
    clf = _seeded_alibi(data)
    X_dask = da.from_array(data[2], chunks=(50, 2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster), warnings.catch_warnings():
        warnings.simplefilter("error", category=Warning)
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        labels = clf.predict(X_dask).compute()
    np.testing.assert_array_equal(labels, clf.predict(data[2]))
