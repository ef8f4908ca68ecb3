"""PATE's teachers on a Dask cluster: charged on the client, fitted in the workers."""

import contextlib
import logging
import os
import sys
import uuid
import warnings

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from joblib import parallel_backend  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

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


class ChattyTeacher(ClassifierMixin, BaseEstimator):
    """Votes its part's majority and tells its labels through every side channel.

    It speaks only on a part's real or stand-in labels (the label-free trial
    fit before the charge gets the codes ``0, 1, 0, 1, ...``), and fails there
    too when ``fail``.
    """

    def __init__(self, fail=False):
        self.fail = fail

    def fit(self, X, y):
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        self.majority_ = np.bincount(y).argmax()
        if np.array_equal(y, np.arange(y.size) % 2):
            return self
        secret = f"CHATTY {int(y.sum())} of {y.size} labels are 1"
        print(secret, flush=True)
        sys.stderr.write(secret + "\n")
        sys.stderr.flush()
        os.write(2, (secret + " (fd 2)\n").encode())
        logging.getLogger("chatty_teacher").warning(secret)
        warnings.warn(secret, UserWarning, stacklevel=2)
        if self.fail:
            raise ValueError(secret)
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_teachers_are_sealed_in_the_dask_workers(tmp_path):
    # Fails on bd705e5 and fcde750: the teachers' prints, warnings and log
    # records reach the workers' stderr, which is the caller's terminal.
    X = np.column_stack([np.arange(36), np.random.default_rng(0).normal(size=36)])
    y0 = np.zeros(36, dtype=int)  # every part one class: fitted on stand-in codes
    y1 = y0.copy()
    y1[0] = 1  # one teacher is fitted on two classes
    terminal = tmp_path / "terminal"
    with contextlib.ExitStack() as stack:
        file = stack.enter_context(open(terminal, "ab"))
        # The worker processes get this file as their stdout and stderr.
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        try:
            for fd in saved:
                os.dup2(file.fileno(), fd)
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                host="127.0.0.1"))
            client = stack.enter_context(distributed.Client(cluster))
        finally:
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)

        def worker_output(fit):
            offset = terminal.stat().st_size
            try:
                with parallel_backend("dask"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit()
            finally:
                client.run(lambda: sys.stdout.flush() or sys.stderr.flush())
            return terminal.read_bytes()[offset:].decode()

        # The control: an unsealed fit in a worker is seen.
        assert "CHATTY 1 of 36" in worker_output(
            lambda: client.submit(ChattyTeacher().fit, X[::-1], y1[::-1]).result())

        def pate(fail=False):
            return PATEClassifier(ChattyTeacher(fail), student=KNeighborsClassifier(1),
                                  n_teachers=3, n_queries=20, aggregator="lnmax",
                                  classes=[0, 1], accountant=BudgetAccountant(), n_jobs=2)

        for y in (y0, y1, y0, y1):
            assert "CHATTY" not in worker_output(lambda y=y: pate().fit(X, y))
        # Neighbours where every part holds both classes: every teacher fails, in
        # both worlds, with a count that differs, and abstains (up to commit
        # 05b8ffa the fit ended with a ReleaseError after the charge).
        z0 = np.tile([0, 1], 18)
        z1 = z0.copy()
        z1[0] = 1
        offset = terminal.stat().st_size
        for y in (z0, z1):
            fitted = []
            worker_output(lambda y=y, fitted=fitted: fitted.append(pate(fail=True).fit(X, y)))
            assert fitted[0].n_answered_ == 20  # LNMax answers every query, from noise
    # Neither the failing teachers' words nor their errors reached the terminal.
    said = terminal.read_bytes()[offset:].decode()
    assert "CHATTY" not in said and "ValueError" not in said
