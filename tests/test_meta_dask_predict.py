"""The meta-estimators predict on dask arrays lazily, block by block of rows.

Fitted on numpy, ``predict``, ``predict_proba`` and ``decision_function`` (where
the final model has them) on a dask ``X`` return dask arrays chunked like
``X`` along rows, equal to the numpy predictions once computed; on a
``LocalCluster`` the blocks are predicted in the worker processes.
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from sklearn_labeldp import (
    ALIBIClassifier,
    BudgetAccountant,
    PATEClassifier,
    RRWithPriorClassifier,
)
from sklearn_labeldp.datasets import make_circle_gaussians

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


MAKERS = {"lp_mst": _rr, "lp_mst_unseen": _rr_unseen_class, "alibi": _alibi, "pate": _pate}


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


@pytest.mark.dask_cluster
def test_predictions_run_in_the_workers_of_a_local_cluster(data):
    distributed = pytest.importorskip("distributed")
    X, y, X_new = data
    clf = _alibi().fit(X, y)
    X_dask = da.from_array(X_new, chunks=(50, 2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster):
        labels = clf.predict(X_dask).compute()
        proba = clf.predict_proba(X_dask).compute()
    np.testing.assert_array_equal(labels, clf.predict(X_new))
    np.testing.assert_allclose(proba, clf.predict_proba(X_new))
