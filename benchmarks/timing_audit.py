"""Timing side channels of every private estimator on worst-case neighbouring labels.

Label DP bounds what the *output* of a fit says about one label. This audit
measures what the fit's *timing* says, through three channels an operator
can see, and compares it with the same bound.

Attacker model
--------------
The attacker knows the public features and every label but one, and wants
to tell two neighbouring label vectors apart: ``y0`` (all labels 0; for a
regressor, all at the low end of ``label_range``) and ``y1`` (``y0`` with
the first row's label 1, or the high end). It sees, for each fit:

1. ``fit time``: the wall time of ``fit()`` (``time.perf_counter``);
2. ``bar``: the progress bar that ``verbose=1`` draws through
   :func:`sklearn_labeldp.utils.progress`. The attacker gets the exact
   duration of every item (the time from the bar's creation, then from the
   previous item, to each item the wrapped iterable yields), more than the
   rounded bar shows, so the measurement is conservative. Statistics: the
   number of items, their total, max, max / median and standard deviation;
3. ``ledger gap``: the time between the fit's row in a persistent budget
   ledger (``BudgetAccountant(path=...)``, column ``created``, read with
   :mod:`sqlite3` after the run) and the next fit's row: it holds the work
   the fit does after its charge, i.e. while it reads labels. Fits run in
   pairs of one fit per world, each pair in a random (seeded) order, so a gap
   belongs to the world of the fit before it and a drift of the machine's
   load hits both worlds alike. A ledger's spend reads every earlier row, so
   its cost grows with the ledger: a fresh ledger file every ``--block``
   pairs keeps that drift small (the last fit of a block has no gap).

Each statistic is also given *detrended*: minus the median of the same
statistic over the 20 fits around it (both worlds, itself excluded), an
attacker that calibrates against the machine's current speed.

Distinguisher
-------------
The observations of each world are split at random into halves. On the
training half, for every statistic of a channel, a threshold and direction
are chosen to maximise accuracy; the statistic with the best training
accuracy is kept (so the choice costs no multiple comparisons), and its
accuracy on the held-out half is reported with a 95% Clopper-Pearson
interval. Beside it, the best accuracy any test can have between two
neighbours of an (eps, delta)-DP release with equal priors,
``(e^eps + delta) / (1 + e^eps)`` (from the fitted ``epsilon_``,
``delta_``; 0.525 at eps = 0.1). Timing is outside what DP covers, so this
is a reference, not a theorem: the verdict is ``ok`` when the interval's
upper limit is at most the bound + 0.05, else ``LEAK``. A channel that does
not exist for an estimator (no progress bar) is left out.

The default of 1000 fits per world (1000 held-out observations, an interval
about +-0.031 wide) is chosen for that rule: with no leak at all (accuracy
0.5), a row says ``LEAK`` when its held-out accuracy exceeds about 0.544, by
chance about 0.3% of the time, under 5% for the whole table; with 400 fits
per world (+-0.049) it would be about 15% per row, and several false alarms
per table. ``--quick`` (40 fits per world, +-0.16) only shows that the script
runs, or a leak as gross as a missing teacher fit.

Set-up: every fit uses ``random_state=None`` (fresh noise) and ``classes``
given, on the breast-cancer data (569 rows, standardised), after
``--warmup`` discarded fits per world, with one BLAS thread (threadpoolctl;
``--blas-threads``: on a loaded machine OpenBLAS threads spin against each
other and turn a 20 ms fit into 100-500 ms of noise that would hide a
leak). Warnings inside fits are silenced; a fit that raises is counted (a
failure in one world only is itself a leak, see the notes under the table)
and its times are kept.

Estimators (``--estimators``): ``pate-lr`` (PATEClassifier, its default
balanced LogisticRegression teachers, GNMax and self-training student),
``pate-spread`` (LabelSpreading(kernel="knn", n_neighbors=10) teachers),
``pate-sgd`` (SGDClassifier(loss="log_loss", max_iter=20, tol=None)
teachers: a fixed number of epochs), ``pate-failing`` (CalibratedClassifierCV(
LogisticRegression(), cv=3) teachers, which fail on a part holding one
positive and then abstain), all ``n_teachers=10`` (``--pate-teachers``;
"auto" gives 113 here, a 5x slower fit in which one teacher's work is a
smaller share), ``n_jobs=1, verbose=1``; ``lp2-knn``
(RRWithPriorClassifier(KNeighborsClassifier(), n_stages=2, verbose=1));
``alibi`` (ALIBIClassifier(verbose=1)); ``va`` (VectorApproxClassifier);
``dplr`` (DPLogisticRegression); ``dpls`` (DPLeastSquaresClassifier);
``noisy-reg`` (NoisyLabelRegressor(label_range=(0, 1))). Fits take 5-80 ms.

Run (the default takes about 10-15 minutes on 2 shared cores; progress per
estimator on stderr)::

    .venv/bin/python benchmarks/timing_audit.py [--quick] [--estimators pate-lr pate-spread]
    .venv/bin/python benchmarks/timing_audit.py --rst        # the table as an RST list-table

``--all-statistics`` prints a row for every statistic, not only the chosen
one. Exit status 1 if any row says ``LEAK``.
"""

import argparse
import math
import os
import sqlite3
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import beta
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading
from threadpoolctl import threadpool_limits

from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    PATEClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.linear_model import DPLeastSquaresClassifier, DPLogisticRegression
from sklearn_labeldp.regression import NoisyLabelRegressor

try:
    import tqdm.auto
except ImportError:  # the library then draws no bar: the channel does not exist
    tqdm = None

CLASSES = [0, 1]
LABEL_RANGE = (0.0, 1.0)
DETREND_HALF_WINDOW = 10


def estimator_table(eps, n_teachers=10):
    """name -> (factory(accountant) -> unfitted estimator, is_regressor, has_bar)."""
    common = {"epsilon": eps, "random_state": None}
    clf = {**common, "classes": CLASSES}
    pate = {**clf, "n_teachers": n_teachers, "n_jobs": 1, "verbose": 1}
    return {
        "pate-lr": (lambda acc: PATEClassifier(**pate, accountant=acc), False, True),
        "pate-spread": (lambda acc: PATEClassifier(
            LabelSpreading(kernel="knn", n_neighbors=10), **pate, accountant=acc), False, True),
        # Teachers whose work is fixed (exactly max_iter epochs): the residual of
        # pate-lr (lbfgs's iterations to converge follow the labels) removed.
        "pate-sgd": (lambda acc: PATEClassifier(
            SGDClassifier(loss="log_loss", max_iter=20, tol=None), **pate, accountant=acc),
            False, True),
        # A teacher that cannot fit a part holding one positive (3 folds of one
        # member): it fails in one world and abstains; a residual of its run time.
        "pate-failing": (lambda acc: PATEClassifier(
            CalibratedClassifierCV(LogisticRegression(), cv=3), **pate, accountant=acc),
            False, True),
        "lp2-knn": (lambda acc: RRWithPriorClassifier(
            KNeighborsClassifier(), **clf, n_stages=2, verbose=1, accountant=acc), False, True),
        "alibi": (lambda acc: ALIBIClassifier(**clf, verbose=1, accountant=acc), False, True),
        "va": (lambda acc: VectorApproxClassifier(**clf, accountant=acc), False, False),
        "dplr": (lambda acc: DPLogisticRegression(**clf, accountant=acc), False, False),
        "dpls": (lambda acc: DPLeastSquaresClassifier(**clf, accountant=acc), False, False),
        "noisy-reg": (lambda acc: NoisyLabelRegressor(
            **common, label_range=LABEL_RANGE, accountant=acc), True, False),
    }


# --------------------------------------------------------------------------- bar recorder


class _BarRecorder:
    """Stands in for ``tqdm.auto.tqdm``: records each item's time instead of drawing."""

    bars = []  # one list of perf_counter stamps per bar created during the current fit
    last_error = None  # the last exception a fit raised (reported, not raised)

    def __init__(self, iterable=None, *args, **kwargs):
        self.iterable = iterable
        self.stamps = [time.perf_counter()]  # tqdm starts its clock at creation
        _BarRecorder.bars.append(self.stamps)

    def __iter__(self):
        for item in self.iterable:
            self.stamps.append(time.perf_counter())
            yield item

    def __len__(self):
        return len(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        self.stamps.append(time.perf_counter())

    def close(self, *args, **kwargs):
        pass

    def set_description(self, *args, **kwargs):
        pass

    def set_postfix(self, *args, **kwargs):
        pass


BAR_STATISTICS = ("items", "total", "max", "max/median", "std")


def bar_statistics(bars):
    """One number per statistic from the per-item durations of every bar of one fit."""
    durations = np.concatenate([np.diff(s) for s in bars]) if bars else np.empty(0)
    if durations.size == 0:
        return dict.fromkeys(BAR_STATISTICS, 0.0)
    return {
        "items": float(durations.size),
        "total": float(durations.sum()),
        "max": float(durations.max()),
        "max/median": float(durations.max() / np.median(durations)),
        "std": float(durations.std()),
    }


# --------------------------------------------------------------------------- running fits


@dataclass
class Run:
    worlds: np.ndarray  # world of each measured fit, in time order
    fit_time: np.ndarray
    bar: dict  # statistic -> array
    gap: np.ndarray  # NaN where the fit has no following ledger row in its block
    failures: list = field(default_factory=lambda: [0, 0])
    rows_per_fit: set = field(default_factory=set)
    epsilon: float = math.nan
    delta: float = 0.0
    seconds: float = 0.0


def _fit_once(make, accountant, X, y):
    """One fit; returns (perf seconds, wall-clock start, end, bars, estimator or None)."""
    _BarRecorder.bars = []
    est = make(accountant)
    w0 = time.time()
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        ok = True
    except Exception as exc:  # a fit that fails is an observation too
        ok = False
        _BarRecorder.last_error = f"{type(exc).__name__}: {exc}"
    t1 = time.perf_counter()
    w1 = time.time()
    return t1 - t0, w0, w1, _BarRecorder.bars, est if ok else None


def _ledger_times(path):
    with sqlite3.connect(path) as conn:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            if "created" in columns:
                rows = conn.execute(f"SELECT created FROM {table} ORDER BY id").fetchall()
                return np.array([r[0] for r in rows], dtype=float)
    raise RuntimeError(f"no table with a `created` column in the ledger {path}")


def _gaps(created, starts, ends):
    """Per fit: first ledger row of the next fit minus the last row of this fit."""
    owner = np.full(created.size, -1)
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        owner[(created >= a) & (created <= b)] = i
    first = np.full(len(starts), np.nan)
    last = np.full(len(starts), np.nan)
    counts = np.zeros(len(starts), dtype=int)
    for t, i in zip(created, owner, strict=True):
        if i < 0:
            continue
        counts[i] += 1
        if np.isnan(first[i]):
            first[i] = t
        last[i] = t
    gaps = np.full(len(starts), np.nan)
    gaps[:-1] = first[1:] - last[:-1]
    return gaps, counts


def run_estimator(name, make, is_regressor, X, *, n_fits, warmup, block, rng, tmpdir):
    n = X.shape[0]
    if is_regressor:
        y0 = np.full(n, LABEL_RANGE[0])
        y1 = y0.copy()
        y1[0] = LABEL_RANGE[1]
    else:
        y0 = np.zeros(n, dtype=int)
        y1 = y0.copy()
        y1[0] = 1
    ys = (y0, y1)

    warm = BudgetAccountant(math.inf, 1.0, path=os.path.join(tmpdir, f"{name}-warmup.sqlite"))
    for _ in range(warmup):
        for y in ys:
            _fit_once(make, warm, X, y)

    # Pairs of one fit per world in random order, in blocks with a fresh ledger each:
    # a ledger's spend reads every earlier row, so its cost grows with the ledger.
    n_pairs = n_fits
    worlds, fit_time, gaps, stats = [], [], [], {s: [] for s in BAR_STATISTICS}
    failures = [0, 0]
    rows_per_fit = set()
    last_est = None
    start = time.perf_counter()
    for b, first_pair in enumerate(range(0, n_pairs, block)):
        path = os.path.join(tmpdir, f"{name}-{b}.sqlite")
        accountant = BudgetAccountant(math.inf, 1.0, path=path)
        accountant.spend(1e-9)  # creates the file now, not in the first fit (a row of no fit)
        pairs = min(block, n_pairs - first_pair)
        order = np.concatenate([rng.permutation(2) for _ in range(pairs)])
        starts, ends = [], []
        for w in order:
            dt, w0, w1, bars, est = _fit_once(make, accountant, X, ys[w])
            worlds.append(int(w))
            fit_time.append(dt)
            for s, v in bar_statistics(bars).items():
                stats[s].append(v)
            starts.append(w0)
            ends.append(w1)
            if est is None:
                failures[w] += 1
            else:
                last_est = est
        g, counts = _gaps(_ledger_times(path), starts, ends)
        gaps.extend(g)
        rows_per_fit.update(int(c) for c in counts)
        done = min(first_pair + block, n_pairs)
        print(f"  {name}: {done}/{n_pairs} pairs, {time.perf_counter() - start:.1f}s",
              file=sys.stderr, flush=True)
    return Run(
        worlds=np.array(worlds), fit_time=np.array(fit_time),
        bar={s: np.array(v) for s, v in stats.items()}, gap=np.array(gaps),
        failures=failures, rows_per_fit=rows_per_fit,
        epsilon=float(getattr(last_est, "epsilon_", math.nan)),
        delta=float(getattr(last_est, "delta_", 0.0)),
        seconds=time.perf_counter() - start,
    )


# --------------------------------------------------------------------------- distinguisher


def detrend(values, half_window=DETREND_HALF_WINDOW):
    """``values`` minus the median of its neighbours in time (itself and NaNs excluded)."""
    out = np.full(values.size, np.nan)
    for i in range(values.size):
        lo, hi = max(0, i - half_window), min(values.size, i + half_window + 1)
        around = np.concatenate([values[lo:i], values[i + 1:hi]])
        around = around[~np.isnan(around)]
        if around.size and not np.isnan(values[i]):
            out[i] = values[i] - np.median(around)
    return out


def fit_threshold(x, w):
    """Threshold and direction maximising accuracy on (x, w); returns (t, sign, accuracy).

    Predicts world 1 when ``sign * (x - t) > 0``.
    """
    order = np.argsort(x, kind="stable")
    xs, ws = x[order], w[order]
    n1 = ws.sum()
    n0 = ws.size - n1
    # Cut after position k (k = 0..n): left of the cut predicted 0 (sign +1).
    ones_left = np.concatenate([[0], np.cumsum(ws)])
    zeros_left = np.arange(ws.size + 1) - ones_left
    correct_plus = zeros_left + (n1 - ones_left)
    correct_minus = ones_left + (n0 - zeros_left)
    # Only cuts between distinct values (and the two ends) are realisable.
    valid = np.concatenate([[True], xs[1:] != xs[:-1], [True]])
    best = None
    for sign, correct in ((1, correct_plus), (-1, correct_minus)):
        c = np.where(valid, correct, -1)
        k = int(np.argmax(c))
        if best is None or c[k] > best[2]:
            if k == 0:
                t = -np.inf
            elif k == ws.size:
                t = np.inf
            else:
                t = 0.5 * (xs[k - 1] + xs[k])
            best = (t, sign, int(c[k]))
    t, sign, correct = best
    return t, sign, correct / ws.size


def predict_threshold(x, t, sign):
    if np.isinf(t):
        return np.full(x.size, int((t < 0) == (sign > 0)))
    return (sign * (x - t) > 0).astype(int)


def clopper_pearson(k, n, level=0.95):
    a = (1 - level) / 2
    lo = beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


@dataclass
class Result:
    statistic: str
    n_per_world: int
    train_accuracy: float
    accuracy: float
    low: float
    high: float


def distinguish(candidates, worlds, train_mask):
    """Best statistic on the training half, scored on the test half.

    ``candidates`` maps a statistic's name to its values (NaN: not observed).
    Returns the chosen Result and one Result per statistic.
    """
    results = []
    for stat, values in candidates.items():
        seen = ~np.isnan(values)
        tr, te = seen & train_mask, seen & ~train_mask
        if tr.sum() < 4 or te.sum() < 4:
            continue
        t, sign, train_acc = fit_threshold(values[tr], worlds[tr])
        correct = int((predict_threshold(values[te], t, sign) == worlds[te]).sum())
        n_test = int(te.sum())
        lo, hi = clopper_pearson(correct, n_test)
        n_per_world = int(min((seen & (worlds == 0)).sum(), (seen & (worlds == 1)).sum()))
        results.append(Result(stat, n_per_world, train_acc, correct / n_test, lo, hi))
    chosen = max(results, key=lambda r: r.train_accuracy) if results else None
    return chosen, results


def channel_candidates(run, has_bar):
    """channel -> {statistic: values}, each statistic raw and detrended."""
    channels = {"fit time": {"raw": run.fit_time, "detrended": detrend(run.fit_time)}}
    if has_bar:
        channels["bar"] = {}
        for s in BAR_STATISTICS:
            channels["bar"][s] = run.bar[s]
            channels["bar"][f"{s} detrended"] = detrend(run.bar[s])
    channels["ledger gap"] = {"raw": run.gap, "detrended": detrend(run.gap)}
    return channels


# --------------------------------------------------------------------------- output


COLUMNS = ("estimator", "channel", "statistic", "fits/world", "accuracy", "CI low",
           "CI high", "bound", "verdict")


def format_rows(rows):
    return [
        (r["estimator"], r["channel"], r["statistic"], str(r["n"]), f"{r['acc']:.3f}",
         f"{r['lo']:.3f}", f"{r['hi']:.3f}", f"{r['bound']:.3f}", r["verdict"])
        for r in rows
    ]


def print_text(rows):
    cells = [COLUMNS, *format_rows(rows)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    for j, c in enumerate(cells):
        print("  ".join(v.ljust(w) if i < 3 else v.rjust(w)
                        for i, (v, w) in enumerate(zip(c, widths, strict=True))))
        if j == 0:
            print("  ".join("-" * w for w in widths))


def print_rst(rows, eps):
    print(f".. list-table:: Timing side channels at eps = {eps:g} (held-out accuracy, 95% CI)")
    print("   :header-rows: 1")
    print()
    for c in [COLUMNS, *format_rows(rows)]:
        print(f"   * - {c[0]}")
        for v in c[1:]:
            print(f"     - {v}")


def main(argv=None):
    names = list(estimator_table(1.0))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--fits", type=int, default=1000, help="measured fits per world")
    parser.add_argument("--warmup", type=int, default=5, help="discarded fits per world")
    parser.add_argument("--block", type=int, default=50,
                        help="pairs of fits per ledger file (the ledger's cost grows with it)")
    parser.add_argument("--quick", action="store_true", help="40 fits per world, 2 warm-up")
    parser.add_argument("--pate-teachers", default="10",
                        help='n_teachers of the PATE rows: an int or "auto" (113 here: 5x slower)')
    parser.add_argument("--estimators", nargs="+", choices=names, default=names)
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS/OpenMP threads during the fits (threadpoolctl)")
    parser.add_argument("--all-statistics", action="store_true",
                        help="a row for every statistic, not only the one chosen on training")
    parser.add_argument("--rst", action="store_true", help="print the table as an RST list-table")
    parser.add_argument("--seed", type=int, default=0, help="order of the worlds and the split")
    args = parser.parse_args(argv)
    n_fits, warmup = (40, 2) if args.quick else (args.fits, args.warmup)

    X, _ = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    n_teachers = "auto" if args.pate_teachers == "auto" else int(args.pate_teachers)
    table = estimator_table(args.epsilon, n_teachers)
    rng = np.random.default_rng(args.seed)

    if tqdm is not None:
        real_tqdm = tqdm.auto.tqdm
        tqdm.auto.tqdm = _BarRecorder  # `progress` imports it from tqdm.auto at each call
    rows, notes = [], []
    total_start = time.perf_counter()
    # One BLAS thread: under load, OpenBLAS threads spin against each other and turn a
    # 20 ms fit into 100-500 ms of noise that would hide a leak.
    blas = threadpool_limits(limits=args.blas_threads)
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            for name in args.estimators:
                make, is_regressor, has_bar = table[name]
                print(f"{name}: {warmup} warm-up + {n_fits} fits per world", file=sys.stderr,
                      flush=True)
                run = run_estimator(name, make, is_regressor, X, n_fits=n_fits, warmup=warmup,
                                    block=args.block, rng=rng, tmpdir=tmpdir)
                print(f"{name}: {run.seconds:.1f}s "
                      f"({1e3 * run.seconds / (2 * n_fits):.1f} ms per fit and charge)",
                      file=sys.stderr, flush=True)
                if any(run.failures):
                    notes.append(f"{name}: fits that raised: {run.failures[0]} with y0, "
                                 f"{run.failures[1]} with y1; last: {_BarRecorder.last_error}")
                if run.rows_per_fit - {1}:
                    notes.append(f"{name}: ledger rows per fit {sorted(run.rows_per_fit)}")
                if has_bar and not run.bar["items"].any():
                    notes.append(f"{name}: verbose=1 drew no progress bar (is tqdm installed?)")
                    has_bar = False
                eps = run.epsilon if not math.isnan(run.epsilon) else args.epsilon
                bound = (math.exp(eps) + run.delta) / (1 + math.exp(eps))
                # Half of each world's fits for training, stratified.
                train = np.zeros(run.worlds.size, dtype=bool)
                for w in (0, 1):
                    idx = np.flatnonzero(run.worlds == w)
                    train[rng.choice(idx, size=idx.size // 2, replace=False)] = True
                for channel, candidates in channel_candidates(run, has_bar).items():
                    chosen, results = distinguish(candidates, run.worlds, train)
                    for r in (results if args.all_statistics else [chosen]):
                        if r is None:
                            continue
                        rows.append({
                            "estimator": name, "channel": channel, "statistic": r.statistic,
                            "n": r.n_per_world, "acc": r.accuracy, "lo": r.low, "hi": r.high,
                            "bound": bound,
                            "verdict": "ok" if r.high <= bound + 0.05 else "LEAK",
                        })
    finally:
        if tqdm is not None:
            tqdm.auto.tqdm = real_tqdm
        blas.restore_original_limits()

    widest = max((r["hi"] - r["lo"] for r in rows), default=0.0)
    if widest > 0.1:
        notes.append(f"intervals up to {widest:.2f} wide: with so few fits, LEAK may be chance "
                     "(a LEAK row whose CI low is below the bound is not significant); the "
                     "default --fits 1000 gives about 0.06")
    lead = ".. " if args.rst else ""  # an RST comment, so the output pastes as it is
    print(f"{lead}timing audit at eps = {args.epsilon:g}: held-out accuracy of a threshold "
          f"test between worst-case neighbours (95% Clopper-Pearson interval); bound = "
          f"(e^eps + delta) / (1 + e^eps); LEAK when CI high > bound + 0.05")
    if args.rst:
        print()
        print_rst(rows, args.epsilon)
        print()
    else:
        print_text(rows)
    for note in notes:
        print(f"{lead}note: {note}")
    print(f"{lead}total {time.perf_counter() - total_start:.1f}s")
    return 1 if any(r["verdict"] == "LEAK" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
