"""PATE's teachers on a Dask cluster: charged on the client, fitted in the workers."""

import os
import uuid

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from joblib import parallel_backend  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402

from sklearn_labeldp import BudgetAccountant, PATEClassifier  # noqa: E402
from sklearn_labeldp.datasets import make_circle_gaussians  # noqa: E402

pytestmark = pytest.mark.dask_cluster


class PidTeacher(ClassifierMixin, BaseEstimator):
    """Votes its part's majority; writes the id of the process it is fitted in to ``log_dir``."""

    def __init__(self, log_dir=None):
        self.log_dir = log_dir

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.majority_ = np.bincount(y).argmax()
        with open(os.path.join(self.log_dir, uuid.uuid4().hex), "w") as log:
            log.write(str(os.getpid()))
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def _pid(_):
    return os.getpid()


def test_teachers_run_in_the_workers_and_the_charge_stays_on_the_client(tmp_path):
    X, y = make_circle_gaussians(800, 3, sigma=0.3, random_state=0)
    # An in-memory ledger refuses any use outside this process: had a worker
    # charged, the fit would have failed.
    acc = BudgetAccountant(delta=1e-3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster) as client:
        workers = set(client.gather(client.map(_pid, range(8), pure=False)))
        with parallel_backend("dask"):
            clf = PATEClassifier(PidTeacher(str(tmp_path)), n_teachers=20, n_queries=40,
                                 epsilon=4.0, aggregator="gnmax", classes=range(3),
                                 accountant=acc, n_jobs=2, random_state=0).fit(X, y)
    pids = [int(path.read_text()) for path in tmp_path.iterdir()]
    # Here: the label-free trial fits of a teacher and of the student (a clone of
    # the teacher), before the charge, and the student on the answers. In the
    # workers: the 20 teachers.
    assert len(pids) == 23 and pids.count(os.getpid()) == 3
    assert {pid for pid in pids if pid != os.getpid()} <= workers
    assert len(acc.spends) == 1 and acc.total().epsilon == pytest.approx(clf.epsilon_)
    assert clf.n_answered_ == 40
