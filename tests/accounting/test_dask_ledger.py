"""A BudgetAccountant whose ledger lives in a Dask scheduler, on a LocalCluster of processes."""

import os
import pickle

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

from joblib import parallel_backend  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

from sklearn_labeldp import BudgetAccountant, BudgetError, RRWithPriorClassifier  # noqa: E402
from sklearn_labeldp.datasets import make_circle_gaussians  # noqa: E402

pytestmark = pytest.mark.dask_cluster


@pytest.fixture(scope="module")
def client():
    # Two worker processes on localhost; a task whose worker dies is not retried,
    # so the tests below count exactly.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            host="127.0.0.1",
        ) as cluster, distributed.Client(cluster) as client:
            yield client


def _spend(accountant, epsilon):
    accountant.spend(epsilon)
    return os.getpid()


def _spend_then_die(accountant, epsilon):
    accountant.spend(epsilon)
    os._exit(1)


def test_workers_record_on_the_scheduler_ledger(client):
    acc = BudgetAccountant(5.0, client=client)
    pids = client.gather(client.map(_spend, [acc] * 8, [0.25] * 8, pure=False))
    assert len(set(pids)) >= 1 and os.getpid() not in pids  # spent in the workers
    assert len(acc.spends) == 8
    assert acc.total().epsilon == pytest.approx(2.0)
    assert "records" not in pickle.dumps(acc).decode("latin-1")  # a handle, not the records


def test_the_ceiling_holds_across_workers(client):
    acc = BudgetAccountant(1.0, client=client)
    futures = client.map(_spend, [acc] * 10, [0.25] * 10, pure=False)
    results = client.gather(futures, errors="skip")
    assert len(results) == 4  # the check and the append are one step under the lock
    assert acc.total().epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetError):
        acc.spend(0.25)


def _spend_rr(accountant):
    from sklearn_labeldp.accounting import PrivacySpend

    accountant.spend(PrivacySpend.randomized_response(0.5, 3))
    return 1


def test_the_tight_ceiling_holds_across_workers(client):
    pytest.importorskip("dp_accounting")
    # The composition of 20 ternary randomized responses at 0.5 is 8.97 at delta 1e-6
    # (the sum 10), of 21 it is 9.37: 20 of 26 concurrent spends fit, each checked
    # against the records under the scheduler's lock.
    acc = BudgetAccountant(9.0, 1e-6, client=client, slack=1e-6)
    restored = pickle.loads(pickle.dumps(acc))
    assert restored.slack == 1e-6  # the handle carries the slack, like the ceiling
    futures = client.map(_spend_rr, [acc] * 26, pure=False)
    assert len(client.gather(futures, errors="skip")) == 20
    assert len(acc.spends) == 20 and acc.total().epsilon == pytest.approx(10.0)
    assert acc.total(slack=1e-6).epsilon <= 9.0


def test_a_worker_killed_after_its_spend_loses_no_recorded_spend(client):
    acc = BudgetAccountant(client=client)
    future = client.submit(_spend_then_die, acc, 0.5, pure=False)
    with pytest.raises(Exception):  # noqa: B017 - KilledWorker or a closed connection
        future.result(timeout=60)
    assert acc.total().epsilon == pytest.approx(0.5)
    assert len(acc.spends) == 1


def test_grid_search_on_the_dask_backend_records_every_fit(client):
    X, y = make_circle_gaussians(300, 3, sigma=0.3, random_state=0)
    acc = BudgetAccountant(client=client)
    clf = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=0.5, classes=[0, 1, 2],
                                accountant=acc)
    search = GridSearchCV(clf, {"estimator__n_neighbors": [5, 15]}, cv=3, n_jobs=2)
    with parallel_backend("dask"):
        search.fit(X, y)
    # 2 candidates x 3 folds, then the refit on the client.
    assert len(acc.spends) == 7
    assert acc.total().epsilon == pytest.approx(3.5)
    assert np.isfinite(search.best_score_)


def test_a_handle_without_its_scheduler_says_so():
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as other:
            acc = BudgetAccountant(client=other)
            handle = pickle.dumps(acc)
    restored = pickle.loads(handle)
    with pytest.raises(RuntimeError, match="Dask scheduler"):
        restored.spend(0.1)


def test_path_and_client_together_are_refused(client, tmp_path):
    with pytest.raises(ValueError, match="not both"):
        BudgetAccountant(path=tmp_path / "ledger.sqlite", client=client)


def _spend_described(accountant, which):
    from sklearn_labeldp.accounting import PrivacySpend

    spend = {"rappor": PrivacySpend.rappor(0.5), "laplace": PrivacySpend.laplace(0.25, 2),
             "gaussian": PrivacySpend.gaussian(0.5, 1e-7)}[which]
    accountant.spend(spend)
    return which


def test_new_descriptions_survive_the_scheduler_ledger(client):
    pytest.importorskip("dp_accounting")
    from sklearn_labeldp.accounting import PrivacySpend

    kinds = ["rappor", "laplace", "gaussian"] * 3
    acc = BudgetAccountant(float("inf"), 1.0, client=client)
    client.gather(client.map(_spend_described, [acc] * len(kinds), kinds, pure=False))
    local = BudgetAccountant(float("inf"), 1.0)
    for spend in [PrivacySpend.rappor(0.5), PrivacySpend.laplace(0.25, 2),
                  PrivacySpend.gaussian(0.5, 1e-7)] * 3:
        local.spend(spend)
    assert sorted(str(s.params) for s in acc.spends) == sorted(
        str(s.params) for s in local.spends)
    assert acc.total(slack=1e-6).epsilon == pytest.approx(local.total(slack=1e-6).epsilon,
                                                          rel=1e-9)
    assert acc.total(slack=1e-6).epsilon < acc.total().epsilon - 1.0


def _cached_before_total(accountant):
    """This worker's cached records of the ledger before a tight total, and the total."""
    cached = len(accountant._composition._descriptions)
    return os.getpid(), cached, accountant.total(slack=1e-6).epsilon


def test_a_worker_keeps_the_composition_between_tasks(client):
    # Each task unpickles its own handle; the worker process keeps one composition of
    # the ledger, so the second task extends the first's instead of rebuilding it.
    pytest.importorskip("dp_accounting")
    from sklearn_labeldp.accounting import PrivacySpend

    acc = BudgetAccountant(client=client)
    for epsilon in np.linspace(0.05, 0.15, 20):
        acc.spend(PrivacySpend.randomized_response(float(epsilon), 2))
    worker = sorted(client.scheduler_info()["workers"])[0]
    first, second = (client.submit(_cached_before_total, acc, workers=[worker], pure=False)
                     .result() for _ in range(2))
    assert first[0] == second[0] and (first[1], second[1]) == (0, 19)
    assert first[2] == second[2] == acc.total(slack=1e-6).epsilon


def test_a_process_unpickles_each_scheduler_record_once(client):
    acc = BudgetAccountant(client=client)
    client.gather(client.map(_spend, [acc] * 4, [0.25] * 4, pure=False))
    first = acc.spends
    acc.spend(0.25)
    again = acc.spends
    # The records read before are the same objects: only the new one was unpickled.
    assert len(again) == 5 and all(a is b for a, b in zip(first, again, strict=False))
    assert acc.total().epsilon == pytest.approx(1.25)
