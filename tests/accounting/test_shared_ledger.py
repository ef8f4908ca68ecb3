"""One ledger behind every copy of an accountant: clone, pickle, worker processes, crashes."""

import base64
import copy
import math
import multiprocessing
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from sklearn_labeldp._private_labels import PrivateLabels
from sklearn_labeldp.accounting import BudgetAccountant, BudgetError, PrivacyBudget, PrivacySpend
from sklearn_labeldp.classifiers import RRWithPriorClassifier

WORKER = Path(__file__).with_name("_ledger_worker.py")
GRID = {"estimator__n_neighbors": list(range(1, 10))}  # 9 candidates
EPS = 0.5
needs_fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)


def _fork():
    return multiprocessing.get_context("fork")


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=90, n_features=4, random_state=0)


def _model(acc):
    return RRWithPriorClassifier(
        KNeighborsClassifier(), epsilon=EPS, classes=[0, 1], random_state=0, accountant=acc
    )


def _ledger_rows(path):
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT epsilon, delta, mechanism, pid FROM labeldp_spends ORDER BY id"
        ).fetchall()


@pytest.fixture
def count_releases(monkeypatch):
    """Count the times any label is read (every read goes through PrivateLabels.release)."""
    calls = []
    original = PrivateLabels.release

    def release(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(PrivateLabels, "release", release)
    return calls


# --- scikit-learn model selection ----------------------------------------------------


def test_clone_shares_the_accountant():
    acc = BudgetAccountant(epsilon=10.0)
    model = _model(acc)
    assert clone(model).accountant is acc
    assert clone(clone(model)).get_params()["accountant"] is acc
    assert copy.deepcopy(model).accountant is acc


def test_grid_search_records_every_fit_in_process(data, count_releases):
    X, y = data
    acc = BudgetAccountant(epsilon=100.0)
    search = GridSearchCV(_model(acc), GRID, cv=3, n_jobs=1, error_score="raise").fit(X, y)
    assert len(acc.spends) == 9 * 3 + 1 == 28
    assert len(count_releases) == 28
    assert acc.total() == PrivacyBudget(28 * EPS)
    assert all(s.epsilon == EPS for s in acc.spends)
    assert search.best_estimator_.accountant is acc


def test_grid_search_records_every_fit_in_worker_processes(data, tmp_path):
    X, y = data
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=100.0, path=path)
    search = GridSearchCV(_model(acc), GRID, cv=3, n_jobs=2, error_score="raise").fit(X, y)
    assert len(acc.spends) == 28
    assert acc.total() == PrivacyBudget(28 * EPS)
    rows = _ledger_rows(path)
    assert len(rows) == 28
    pids = [pid for *_, pid in rows]
    # The 27 search fits ran in loky workers, the refit here.
    assert os.getpid() not in pids[:27] and pids[27] == os.getpid()
    assert search.best_estimator_.accountant.path == acc.path


def test_in_memory_ledger_refuses_worker_processes(data):
    X, y = data
    acc = BudgetAccountant(epsilon=100.0)
    search = GridSearchCV(_model(acc), GRID, cv=3, n_jobs=2, error_score="raise")
    with pytest.raises(RuntimeError, match="path="):
        search.fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_cross_val_score_records_each_fold(data, tmp_path, n_jobs):
    X, y = data
    path = tmp_path / "ledger.sqlite" if n_jobs > 1 else None
    acc = BudgetAccountant(epsilon=10.0, path=path)
    scores = cross_val_score(_model(acc), X, y, cv=3, n_jobs=n_jobs, error_score="raise")
    assert scores.shape == (3,)
    assert len(acc.spends) == 3 and acc.total() == PrivacyBudget(3 * EPS)


def test_ceiling_stops_the_search_before_labels_are_used(data, count_releases):
    X, y = data
    acc = BudgetAccountant(epsilon=5 * EPS)  # room for 5 of the 28 fits
    search = GridSearchCV(_model(acc), GRID, cv=3, n_jobs=1, error_score="raise")
    with pytest.raises(BudgetError, match="would exceed"):
        search.fit(X, y)
    # Five fits recorded and ran; the sixth raised before reading any label.
    assert len(acc.spends) == 5 and len(count_releases) == 5
    assert acc.total() == PrivacyBudget(5 * EPS)

    model = _model(acc)
    with pytest.raises(BudgetError):
        model.fit(X, y)
    assert len(count_releases) == 5 and not hasattr(model, "classes_")
    assert len(acc.spends) == 5


def test_ceiling_holds_across_worker_processes(data, tmp_path):
    X, y = data
    acc = BudgetAccountant(epsilon=5 * EPS, path=tmp_path / "ledger.sqlite")
    search = GridSearchCV(_model(acc), GRID, cv=3, n_jobs=2)  # failed fits score nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetError):
            search.fit(X, y)  # the refit finds the budget spent
    assert len(acc.spends) == 5
    assert acc.total() == PrivacyBudget(5 * EPS)


# --- the persistent ledger -----------------------------------------------------------


def test_persistent_ledger_is_shared_by_handles_and_pickles(tmp_path):
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5, path=path)
    assert acc.path == str(path.resolve())
    assert repr(acc) == f"BudgetAccountant(epsilon=2.0, delta=1e-05, path={str(path)!r})"
    assert copy.deepcopy(acc) is acc
    record = PrivacySpend.compose(
        "LP-MST", [PrivacySpend.leaf("RR", 1.0, stage=t) for t in range(2)], "parallel"
    )
    acc.spend(record)
    other = pickle.loads(pickle.dumps(acc))
    assert other is not acc and other.path == acc.path
    other.spend(0.5, 1e-6)
    again = BudgetAccountant(epsilon=2.0, delta=1e-5, path=path)
    assert again.spends == [record, PrivacySpend.leaf("user", 0.5, 1e-6)]
    assert acc.total() == again.total() == PrivacyBudget(1.5, 1e-6)
    with pytest.raises(BudgetError):
        again.spend(0.6)
    acc.check(0.5)
    with pytest.raises(BudgetError):
        acc.check(0.5, 1e-5)
    assert acc.total_zcdp() is None  # the approximate-DP "user" spend has no rho
    assert len(acc.spends) == 2


def test_persistent_ledger_rejects_mismatches_and_strangers(tmp_path):
    path = tmp_path / "ledger.sqlite"
    BudgetAccountant(epsilon=2.0, path=path).spend(1.0)
    with pytest.raises(ValueError, match="ceiling"):
        BudgetAccountant(epsilon=3.0, path=path)
    with pytest.raises(ValueError, match="ceiling"):
        BudgetAccountant(epsilon=2.0, delta=1e-6, path=path)
    assert BudgetAccountant(epsilon=2.0, path=path).total() == PrivacyBudget(1.0)

    other_db = tmp_path / "other.sqlite"
    with sqlite3.connect(other_db) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="not a budget ledger"):
        BudgetAccountant(path=other_db)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match="not a usable budget ledger"):
        BudgetAccountant(path=garbage)
    with pytest.raises(ValueError, match="timeout"):
        BudgetAccountant(path=tmp_path / "x.sqlite", timeout=0)


def test_lost_or_replaced_ledger_file_is_never_a_fresh_budget(tmp_path):
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=2.0, path=path)
    acc.spend(1.5)
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with pytest.raises(RuntimeError, match="cannot open"):
        acc.spend(0.1)
    with pytest.raises(RuntimeError, match="cannot open"):
        acc.total()
    BudgetAccountant(epsilon=2.0, path=path)  # a new, empty ledger at the same place
    with pytest.raises(RuntimeError, match="replaced"):
        acc.spend(0.1)


def test_persistent_check_and_spend_is_atomic_under_threads(tmp_path, monkeypatch):
    from sklearn_labeldp.accounting import _accountant

    original = _accountant.compose_sequential

    def slow(budgets):
        budgets = list(budgets)
        time.sleep(1e-3)
        return original(budgets)

    monkeypatch.setattr(_accountant, "compose_sequential", slow)
    acc = BudgetAccountant(epsilon=1.0, path=tmp_path / "ledger.sqlite")
    barrier = threading.Barrier(8)
    successes = []

    def worker():
        barrier.wait()
        for _ in range(3):
            try:
                acc.spend(0.1)
                successes.append(1)
            except BudgetError:
                pass

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(successes) == 10 and len(acc.spends) == 10


def _fork_child(acc, queue):
    try:
        acc.spend(0.25)
        queue.put("spent")
    except RuntimeError as exc:
        queue.put(str(exc))


@needs_fork
@pytest.mark.parametrize("persistent", [False, True])
def test_forked_process(tmp_path, persistent):
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(epsilon=1.0, path=path)
    acc.spend(0.25)
    ctx = _fork()
    queue = ctx.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        child = ctx.Process(target=_fork_child, args=(acc, queue))
        child.start()
    message = queue.get(timeout=60)
    child.join(timeout=60)
    if persistent:
        assert message == "spent" and acc.total() == PrivacyBudget(0.5)
    else:  # the forked copy of an in-memory ledger refuses instead of forgetting
        assert "path=" in message and acc.total() == PrivacyBudget(0.25)


# --- separate processes: concurrency and crashes ------------------------------------


def _start_fit_process(acc, ready):
    """A fresh interpreter that unpickles ``acc`` and fits with it (see _ledger_worker.py)."""
    payload = base64.b64encode(pickle.dumps(acc)).decode()
    return subprocess.Popen(
        [sys.executable, str(WORKER), payload, str(ready)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_ready(proc, ready, timeout=120):
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if proc.poll() is not None:
            raise AssertionError(f"worker exited early: {proc.communicate()}")
        assert time.monotonic() < deadline, "worker never became ready"
        time.sleep(0.01)


def _spend_worker(payload, n, eps, barrier, queue):
    # Reach the ledger as a joblib worker would: through a pickle of the accountant.
    from sklearn_labeldp.accounting import _accountant

    acc = pickle.loads(payload)
    original = _accountant.compose_sequential

    def slow(budgets):  # widen the window between reading the ledger and writing it
        budgets = list(budgets)
        time.sleep(0.002)
        return original(budgets)

    _accountant.compose_sequential = slow
    barrier.wait()
    successes = 0
    for _ in range(n):
        try:
            acc.spend(eps)
            successes += 1
        except BudgetError:
            pass
    queue.put(successes)


def _hold_worker(path, ready):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO labeldp_spends (epsilon, delta, rho, mechanism, record, pid, created) "
        "VALUES (0.5, 0.0, NULL, 'uncommitted', x'00', ?, 0.0)",
        (os.getpid(),),
    )
    ready.set()
    time.sleep(600)


def _open_worker(path, barrier, queue):
    barrier.wait()
    try:
        BudgetAccountant(epsilon=1.0, path=path).spend(0.1, 0.0)
    except Exception as exc:  # reported to the test, which shows it
        queue.put(repr(exc))
    else:
        queue.put("ok")


@needs_fork
def test_processes_creating_one_new_ledger_at_once(tmp_path):
    # The workers of joblib's n_jobs > 1 open the default ledger's new file at
    # the same moment: switching it to WAL mode must wait for the others rather
    # than fail with "database is locked" (before, 4 of 10 runs of four spawned
    # processes failed, and this test failed).
    ctx = _fork()
    for trial in range(5):
        path = tmp_path / f"ledger{trial}.sqlite"
        barrier, queue = ctx.Barrier(8), ctx.Queue()
        procs = [ctx.Process(target=_open_worker, args=(path, barrier, queue)) for _ in range(8)]
        for proc in procs:
            proc.start()
        outcomes = [queue.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(timeout=60)
        assert outcomes == ["ok"] * 8
        assert len(_ledger_rows(path)) == 8


@needs_fork
def test_eight_processes_never_exceed_the_ceiling(tmp_path):
    acc = BudgetAccountant(epsilon=3.0, path=tmp_path / "ledger.sqlite")
    ctx = _fork()
    barrier, queue = ctx.Barrier(8), ctx.Queue()
    payload = pickle.dumps(acc)
    procs = [
        ctx.Process(target=_spend_worker, args=(payload, 8, 0.1, barrier, queue))
        for _ in range(8)
    ]
    for proc in procs:  # 64 attempts at 0.1 against 3.0, all at once
        proc.start()
    successes = [queue.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert sum(successes) == 30
    assert sum(s > 0 for s in successes) >= 2  # they did compete
    rows = _ledger_rows(acc.path)
    assert len(rows) == 30 and len(acc.spends) == 30
    assert acc.total().epsilon <= 3.0 * (1 + 1e-12)
    assert acc.remaining().epsilon == pytest.approx(0.0, abs=1e-12)
    assert {pid for *_, pid in rows} <= {proc.pid for proc in procs}


@needs_fork
def test_process_killed_holding_the_ledger_lock(tmp_path):
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=1.0, path=path)
    impatient = BudgetAccountant(epsilon=1.0, path=path, timeout=0.1)
    acc.spend(0.25)
    ctx = _fork()
    ready = ctx.Event()
    proc = ctx.Process(target=_hold_worker, args=(str(path), ready))
    proc.start()
    try:
        assert ready.wait(timeout=60)
        # The lock is really held: a writer that will not wait fails, recording nothing.
        with pytest.raises(RuntimeError, match="nothing was recorded"):
            impatient.spend(0.25)
        with pytest.raises(RuntimeError, match="locked"):
            BudgetAccountant(epsilon=1.0, path=path, timeout=0.1)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=60)
    assert proc.exitcode == -signal.SIGKILL
    # The dead process's transaction is rolled back and its lock released.
    acc.spend(0.5)
    assert [r[:3] for r in _ledger_rows(path)] == [(0.25, 0.0, "user"), (0.5, 0.0, "user")]
    assert acc.total() == PrivacyBudget(0.75)
    with pytest.raises(BudgetError):
        impatient.spend(0.5)
    impatient.spend(0.25)
    assert acc.remaining() == PrivacyBudget(0.0)


def test_process_killed_mid_fit_after_its_spend(tmp_path, data):
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=2.0, path=path)
    ready = tmp_path / "fitting"
    proc = _start_fit_process(acc, ready)
    try:
        _wait_ready(proc, ready)  # the labels are being used: the spend has committed
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    rows = _ledger_rows(path)
    assert len(rows) == 1 and rows[0][0] == 1.0 and rows[0][3] == proc.pid
    assert len(acc.spends) == 1 and acc.total() == PrivacyBudget(1.0)
    # Later fits charge on top of it, exactly up to the ceiling.
    X, y = data
    model = RRWithPriorClassifier(
        KNeighborsClassifier(), epsilon=1.0, classes=[0, 1], random_state=0, accountant=acc
    )
    model.fit(X, y)
    with pytest.raises(BudgetError):
        clone(model).fit(X, y)
    assert len(acc.spends) == 2 and acc.total() == PrivacyBudget(2.0)
    assert np.isin(model.predict(X), [0, 1]).all()


def test_a_ledger_file_keeps_its_ceiling_and_an_accountant_without_one_adopts_it(tmp_path):
    path = tmp_path / "ledger.sqlite"
    written = BudgetAccountant(epsilon=2.0, delta=1e-5, path=path)
    written.spend(1.5, 1e-6)
    reopened = BudgetAccountant(path=path)  # no ceiling stated: the stored one
    assert (reopened.epsilon, reopened.delta) == (2.0, 1e-5)
    assert reopened.total() == written.total()
    with pytest.raises(BudgetError, match="created with epsilon=2.5"):
        reopened.spend(1.0)
    same = BudgetAccountant(epsilon=2.0, delta=1e-5, path=path)  # the same ceiling: fine
    assert same.total().epsilon == 1.5
    with pytest.raises(ValueError, match="must state the same ceiling"):
        BudgetAccountant(epsilon=3.0, delta=1e-5, path=path)
    fresh = BudgetAccountant(path=tmp_path / "new.sqlite")  # a new file without a ceiling
    fresh.spend(1.0, 1e-5)
    assert (fresh.epsilon, fresh.delta) == (math.inf, 1.0)
    assert BudgetAccountant(path=tmp_path / "new.sqlite").delta == 1.0
