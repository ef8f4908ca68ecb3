"""The tight ledger's cost as it grows: a charge under a ceiling and ``total(slack=)``.

A ledger of ``k`` distinct randomized-response records (K = 2, epsilon spread
over [0.05, 0.15], so that no two descriptions are equal and none is
self-composed) is filled without checks, then timed:

* ``total(slack=1e-6)`` cold: a new accountant over the same records (its
  composition not yet built: what a fresh process pays once), and warm (the
  second call);
* one charge under a ceiling (``BudgetAccountant(epsilon, 1e-5,
  slack=1e-6)`` whose epsilon the basic sum passes, so that every charge is
  checked by the tight composition), the first and the median of
  ``--repeats`` after it;
* beside them, in the same run (up to ``--baseline-max`` records), the
  composition the ledger computed before this one, dp-accounting's privacy
  loss distribution of each record (its losses rounded up onto the grid
  1e-4) composed as a balanced tree: its time and epsilon (*previous*), and
  the same with the losses rounded down (*floor*), a lower bound on the exact
  composition, so that the exact epsilon lies in [floor, previous] and the
  tight total must too.

Ledgers: in memory, SQLite (a charge there also reads and unpickles every
record) and, with ``--dask``, a Dask scheduler's (a ``LocalCluster`` of
threads; a charge moves every record through the scheduler). The load
average is printed beside the table; compare timings from one run only.

    python benchmarks/ledger.py [--records 100,1000,10000] [--repeats 5]
                                [--baseline-max 10000] [--dask]
"""

import argparse
import os
import pickle
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend
from sklearn_labeldp.accounting._ledger import _SPENDS
from sklearn_labeldp.accounting._pld import Composition

SLACK = 1e-6


def records(k):
    return [PrivacySpend.randomized_response(float(e), 2) for e in np.linspace(0.05, 0.15, k)]


def previous_epsilon(epsilons, pessimistic):
    """The former composition: each record's dp-accounting PLD, composed as a balanced tree."""
    import dp_accounting

    pld = dp_accounting.pld.privacy_loss_distribution
    plds = [pld.from_randomized_response(2 / (np.exp(e) + 1), 2,
                                         pessimistic_estimate=pessimistic) for e in epsilons]
    while len(plds) > 1:
        pairs = [plds[i].compose(plds[i + 1]) for i in range(0, len(plds) - 1, 2)]
        plds = pairs + plds[len(pairs) * 2:]
    return float(plds[0].get_epsilon_for_delta(SLACK))


def filled(spends, kind, folder, name, epsilon=None, client=None):
    """An accountant whose ledger holds ``spends``, appended without a check."""
    ceiling = {} if epsilon is None else {"epsilon": epsilon, "delta": 1e-5, "slack": SLACK}
    if kind == "memory":
        acc = BudgetAccountant(**ceiling)
    elif kind == "sqlite":
        acc = BudgetAccountant(**ceiling, path=Path(folder) / f"{name}.sqlite")
    else:
        acc = BudgetAccountant(**ceiling, client=client)
    if kind == "memory":
        for spend in spends:
            acc._ledger.append_if(spend, lambda records: None)
    elif kind == "sqlite":  # the rows append_if writes, in one transaction
        with sqlite3.connect(acc.path) as conn:
            conn.executemany(
                f"INSERT INTO {_SPENDS} (epsilon, delta, rho, mechanism, record, pid, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(s.epsilon, s.delta, s.rho, s.mechanism, pickle.dumps(s), os.getpid(),
                  time.time()) for s in spends])
    else:  # the variable append_if writes: the list of the records' pickles
        import distributed

        distributed.Variable(acc._ledger.name, client=client).set(
            pickle.dumps([pickle.dumps(s) for s in spends]))
    return acc


def timed(call):
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def row(k, kind, repeats, baseline_max, folder, client):
    spends = records(k)
    acc = filled(spends, kind, folder, f"ledger-{k}", client=client)
    reopened = pickle.loads(pickle.dumps(acc)) if kind == "dask" else acc
    reopened._composition = Composition()  # a cold cache over the same ledger
    cold, total = timed(lambda: reopened.total(slack=SLACK))
    warm, _ = timed(lambda: reopened.total(slack=SLACK))
    # A ceiling the basic sum passes and the tight composition leaves room under.
    charged = filled(spends, kind, folder, f"ceiling-{k}", epsilon=total.epsilon + 1.0,
                     client=client)
    spend = PrivacySpend.randomized_response(0.01, 2)
    first, _ = timed(lambda: charged.spend(spend))
    charges = [timed(lambda: charged.spend(spend))[0] for _ in range(repeats)]
    baseline = ""
    if k <= baseline_max and kind == "memory":
        epsilons = np.linspace(0.05, 0.15, k)
        seconds, previous = timed(lambda: previous_epsilon(epsilons, True))
        floor = previous_epsilon(epsilons, False)
        baseline = f"{seconds:8.2f} s  {previous:9.4f} {floor:9.4f}"
        assert floor <= total.epsilon <= previous, (floor, total.epsilon, previous)
    print(f"{k:>7} {kind:<7} {cold:9.3f} s {warm:8.3f} s {1e3 * first:9.1f} ms "
          f"{1e3 * statistics.median(charges):9.1f} ms {total.epsilon:9.4f}   {baseline}",
          flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default="100,1000,10000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-max", type=int, default=10000)
    parser.add_argument("--dask", action="store_true")
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"{'records':>7} {'ledger':<7} {'total cold':>11} {'warm':>10} {'1st charge':>12} "
          f"{'charge':>12} {'tight eps':>9}   {'previous':>10} {'prev eps':>9} {'floor eps':>9}")
    kinds = ["memory", "sqlite"] + (["dask"] if args.dask else [])
    client = None
    if args.dask:
        import distributed

        client = distributed.Client(processes=False, n_workers=1, dashboard_address=None)
    try:
        with tempfile.TemporaryDirectory() as folder:
            for k in (int(v) for v in args.records.split(",")):
                for kind in kinds:
                    row(k, kind, args.repeats, args.baseline_max, folder, client)
    finally:
        if client is not None:
            client.close()
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
