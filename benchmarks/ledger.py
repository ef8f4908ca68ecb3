"""The tight ledger's cost as it grows: a charge under a ceiling and ``total(slack=)``.

A ledger of ``k`` distinct randomized-response records (K = 2, epsilon spread
over [0.05, 0.15], so that no two descriptions are equal and none is
self-composed) is filled without checks, then timed:

* ``total(slack=1e-6)`` cold: a new accountant over the same records (its
  composition not yet built: what a fresh process pays once), and warm (the
  second call);
* one charge under a ceiling (``BudgetAccountant(epsilon, 1e-5,
  slack=1e-6)`` whose epsilon the basic sum passes, so every charge is
  checked by the tight composition), warm: the median of ``--repeats``
  charges after the first;
* the baseline in the same run: the composition the ledger computed before it
  kept one, a chain of convolutions over the grouped records (``--baseline-max``
  records at most: it grows quadratically).

Both ledgers: in memory, and SQLite (a charge there also reads and unpickles
every record). The load average is printed beside the table; compare timings
from one run only.

    python benchmarks/ledger.py [--records 1000,10000] [--repeats 5] [--baseline-max 1000]
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend
from sklearn_labeldp.accounting._pld import _description, _pld

SLACK = 1e-6


def records(k):
    return [PrivacySpend.randomized_response(float(e), 2) for e in np.linspace(0.05, 0.15, k)]


def chain_epsilon(spends):
    """The former composition: group equal descriptions, then compose the groups in a chain."""
    counts = {}
    for spend in spends:
        description = _description(spend)
        counts[description] = counts.get(description, 0) + 1
    pld = None
    for description, count in counts.items():
        part = _pld(description, count)
        pld = part if pld is None else pld.compose(part)
    return float(pld.get_epsilon_for_delta(SLACK))


def filled(spends, path, epsilon=None):
    """An accountant whose ledger holds ``spends``, appended without a check."""
    acc = BudgetAccountant(epsilon, None if epsilon is None else 1e-5, path=path,
                           slack=None if epsilon is None else SLACK)
    for spend in spends:
        acc._ledger.append_if(spend, lambda records: None)
    return acc


def timed(call):
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def row(k, kind, repeats, baseline_max, folder):
    spends = records(k)
    path = None if kind == "memory" else Path(folder) / f"ledger-{k}.sqlite"
    if path is not None and path.exists():
        path.unlink()
    acc = filled(spends, path)
    reopened = acc if path is None else BudgetAccountant(path=path)
    if path is None:
        reopened._composition = type(acc._composition)()  # a cold cache over the same ledger
    cold, total = timed(lambda: reopened.total(slack=SLACK))
    warm, _ = timed(lambda: reopened.total(slack=SLACK))
    # A ceiling the basic sum passes and the tight composition leaves room under.
    ceiling = total.epsilon + 1.0
    charged_path = None if path is None else Path(folder) / f"ceiling-{k}.sqlite"
    if charged_path is not None and charged_path.exists():
        charged_path.unlink()
    charged = filled(spends, charged_path, epsilon=ceiling)
    spend = PrivacySpend.randomized_response(0.01, 2)
    first, _ = timed(lambda: charged.spend(spend))
    charges = [timed(lambda: charged.spend(spend))[0] for _ in range(repeats)]
    baseline = ""
    if k <= baseline_max:
        seconds, epsilon = timed(lambda: chain_epsilon(spends))
        baseline = f"{seconds:8.2f} s (eps {epsilon:.4f})"
    print(f"{k:>7} {kind:<7} {cold:9.3f} s {warm:8.3f} s {first:9.3f} s "
          f"{1e3 * statistics.median(charges):9.1f} ms   eps {total.epsilon:.4f}   {baseline}",
          flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default="1000,10000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-max", type=int, default=1000)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'records':>7} {'ledger':<7} {'total cold':>11} {'warm':>10} {'1st charge':>11} "
          f"{'charge':>12}   tight total     baseline (chain, cold)")
    with tempfile.TemporaryDirectory() as folder:
        for k in (int(v) for v in args.records.split(",")):
            for kind in ("memory", "sqlite"):
                row(k, kind, args.repeats, args.baseline_max, folder)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
