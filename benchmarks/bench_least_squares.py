"""Fit time of DPLeastSquaresClassifier against scikit-learn's RidgeClassifier, and where it goes.

100,000 samples x 256 features, 100 classes (synthetic Gaussian data, rows
scaled to norm <= 1). For each BLAS thread limit of ``--threads`` (default 1
and 2) the table gives the median (and the fastest) of ``--repeats`` fit times
of each model and the ratio of medians to RidgeClassifier (goal: <= 1.2x for
the default, ``formulation="auto"``: the ``"ridge"`` formulation under label
DP; the ``"weighted"`` one, Mehta et al.'s per-class systems, is timed beside
it), all from the same
run, with the median CPU time of the process (less sensitive than the wall
clock to other processes taking the cores, at one thread; spinning BLAS threads
count at two), then the breakdown of the median fit by phase (below). The load average
of the machine is printed with every table: on a shared machine, compare
ratios from one run only.

Order of the fits (``--order``): ``blocks`` (default) fits each model
``--repeats`` times in a row after one untimed warm-up fit of its own, so each is
timed in its steady state; ``round-robin`` lets the models take turns, so that a
slow spell of a shared machine hits them all alike. On a shared machine the
order matters: a fit that follows another model's (or an idle pause) can be
much slower than one that follows a fit of the same model, and
RidgeClassifier, which is the shortest and the most memory-bound, suffers most
(round-robin flatters DP-LS); ``blocks`` is the conservative choice.

Fairness of the baseline: ``RidgeClassifier(alpha=1.0)`` and its ``"auto"``
solver (the one it picked is printed) solves the same kind of normal equations
(``X^T X + alpha I``, one Cholesky factorisation for all classes, on centred
data) as DP-LS's ``"ridge"`` formulation (the default under label DP); the
``"weighted"`` formulation solves one system per class. Both run under the same BLAS thread
limit; DP-LS spreads its per-class work over that many threads.

Breakdown. ``--profile-repeats`` more fits of RidgeClassifier and of the
two label-DP formulations run under :mod:`cProfile`, and the cumulative time of
the functions of each phase (``PHASES``) is summed; the median over those fits
is printed, with the rest of the fit as ``other``. cProfile sees the calling
thread only: with more than one thread the per-class solves run on a thread
pool and only their total is seen (the PSD projections' share is printed at one
thread).

    python benchmarks/bench_least_squares.py [--n-samples N] [--repeats R]
        [--threads 1,2] [--order {blocks,round-robin}] [--profile-repeats P]
"""

import argparse
import cProfile
import os
import pstats
import statistics
import time
import warnings

import numpy as np
from sklearn.linear_model import RidgeClassifier
from threadpoolctl import threadpool_info, threadpool_limits

from sklearn_labeldp.linear_model import DPLeastSquaresClassifier

BASELINE = "RidgeClassifier (sklearn)"
DEFAULT = "DP-LS label auto = ridge (default)"
LABEL_WEIGHTED = "DP-LS label weighted"
GOAL = 1.2

# Phase -> (file suffix, function[, only when called from this function]) whose
# cumulative times add up to it. No function of a phase runs inside another listed one.
_LS = "linear_model/_least_squares.py"
_ST = "linear_model/_statistics.py"
_DP_PHASES = {
    "input checks, labels, row bound": [(_LS, "_prepare_Xy"), (_LS, "_plan_fit")],
    "design: clipped copy of X, intercept column": [(_LS, "_design")],
    "label statistics: b_j = Z^T Y, A_j (gather + syrk), row check": [
        (_ST, "_class_statistics"), (_ST, "_class_sums", "least_squares_statistics"),
        (_ST, "_largest_squared_norm", "least_squares_statistics"),
    ],
    "noise (b; K symmetric p x p for A)": [(_LS, "add_statistics_noise")],
    "Gramian G = Z^T Z (public)": [(_ST, "dense_gram", "_fit_private")],
    "alpha='auto' (eigenvalues of G)": [(_LS, "adaptive_ridge")],
    "solve: K x (PSD projection + Cholesky), or one Cholesky": [
(_LS, "_solve_weighted"), (_LS, "_solve_ridge")],
    "  of which PSD projections (eigh; seen at 1 thread)": [
        ("linear_model/_gram_noise.py", "project_psd_one")
    ],
}
_RIDGE_PHASES = {
    "input checks, label binarizer": [("linear_model/_ridge.py", "_prepare_data")],
    "copies of X: centring, sample weights": [
        ("linear_model/_base.py", "_preprocess_data"), ("linear_model/_base.py", "_rescale_data"),
    ],
    "X^T X and X^T Y": [("utils/extmath.py", "safe_sparse_dot", "_solve_cholesky")],
    "Cholesky solve": [("scipy/linalg/_basic.py", "solve", "_solve_cholesky")],
}
PHASES = {BASELINE: _RIDGE_PHASES, DEFAULT: _DP_PHASES, LABEL_WEIGHTED: _DP_PHASES}
_NESTED = "  of which"


def make_data(n_samples, n_features, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(n_classes, n_features))
    y = rng.integers(n_classes, size=n_samples)
    X = centers[y] + 2.0 * rng.normal(size=(n_samples, n_features))
    X /= np.linalg.norm(X, axis=1).max()  # a fixed scale for the benchmark: norms <= 1
    return X, y


def candidates(classes):
    def dpls(**params):
        return lambda: DPLeastSquaresClassifier(
            epsilon=1.0, classes=classes, random_state=0, **params
        )

    return {
        BASELINE: lambda: RidgeClassifier(alpha=1.0),
        DEFAULT: dpls(),
        LABEL_WEIGHTED: dpls(formulation="weighted"),
        "DP-LS full auto = weighted": dpls(privacy="full"),
        "DP-LS full ridge": dpls(privacy="full", formulation="ridge"),
    }


def fit_times(makers, X, y, repeats, order):
    """Wall-clock and CPU seconds of each model's fits (``repeats`` each), the last fits."""
    times = {name: [] for name in makers}
    cpu = {name: [] for name in makers}
    fitted = {}

    def timed_fit(name):
        est = makers[name]()
        start, start_cpu = time.perf_counter(), time.process_time()
        est.fit(X, y)
        times[name].append(time.perf_counter() - start)
        cpu[name].append(time.process_time() - start_cpu)
        fitted[name] = est

    if order == "round-robin":
        for name in makers:  # untimed warm-up
            makers[name]().fit(X, y)
        for _ in range(repeats):
            for name in makers:
                timed_fit(name)
    else:
        for name in makers:
            makers[name]().fit(X, y)  # untimed warm-up, right before the timed fits
            for _ in range(repeats):
                timed_fit(name)
    return times, cpu, fitted


def _function_time(stats, file_suffix, function, caller=None):
    """Cumulative seconds in ``function`` (of a file ending in ``file_suffix``), all
    calls or only those from a function named ``caller``."""
    total = 0.0
    for (filename, _, name), (_, _, _, cumulative, callers) in stats.stats.items():
        if name != function or not filename.endswith(file_suffix):
            continue
        if caller is None:
            total += cumulative
        else:
            total += sum(edge[3] for key, edge in callers.items() if key[2] == caller)
    return total


def profiled_phases(make, X, y, phases):
    """Seconds of each phase of one fit (and ``"total"``, ``"other"``) under cProfile."""
    profile = cProfile.Profile()
    estimator = make()
    start = time.perf_counter()
    profile.enable()
    estimator.fit(X, y)
    profile.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(profile)
    seconds = {
        phase: sum(_function_time(stats, *function) for function in functions)
        for phase, functions in phases.items()
    }
    listed = sum(value for phase, value in seconds.items() if not phase.startswith(_NESTED))
    return {"total": total, **seconds, "other": total - listed}


def breakdown(makers, X, y, repeats):
    """Median seconds of each phase over ``repeats`` profiled fits, per profiled model."""
    result = {}
    for name, phases in PHASES.items():
        runs = [profiled_phases(makers[name], X, y, phases) for _ in range(repeats)]
        result[name] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    return result


def blas_threads():
    counts = {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}
    return ", ".join(str(c) for c in sorted(counts)) or "no BLAS found"


def load():
    return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def report(threads, args, X, y, makers):
    with warnings.catch_warnings(), threadpool_limits(limits=threads, user_api="blas"):
        warnings.simplefilter("ignore")
        used = blas_threads()
        before = load()
        times, cpu, fitted = fit_times(makers, X, y, args.repeats, args.order)
        phases = breakdown(makers, X, y, args.profile_repeats) if args.profile_repeats else {}
        after = load()
    print(
        f"\nX: {X.shape}, {args.n_classes} classes, {args.repeats} fits each ({args.order}), "
        f"BLAS threads: {used}; RidgeClassifier solver: {fitted[BASELINE].solver_}; "
        f"{before} (start), {after} (end), {os.cpu_count()} CPUs"
    )
    base = statistics.median(times[BASELINE])
    base_cpu = statistics.median(cpu[BASELINE])
    print(f"{'model':34s} {'median s':>9s} {'min s':>7s} {'ratio':>6s} {'CPU s':>7s} "
          f"{'ratio':>6s} {'train acc':>9s}")
    for name, seconds in times.items():
        median, median_cpu = statistics.median(seconds), statistics.median(cpu[name])
        acc = fitted[name].score(X[:20000], y[:20000])
        print(f"{name:34s} {median:9.3f} {min(seconds):7.3f} {median / base:6.2f} "
              f"{median_cpu:7.3f} {median_cpu / base_cpu:6.2f} {acc:9.3f}")
    ratio = statistics.median(times[DEFAULT]) / base
    verdict = "meets" if ratio <= GOAL else "MISSES"
    print(f"default DP-LS / RidgeClassifier = {ratio:.2f}x wall clock ({verdict} the <= {GOAL}x "
          f"goal), {statistics.median(cpu[DEFAULT]) / base_cpu:.2f}x CPU time")
    if phases:
        print(f"where the time goes (median of {args.profile_repeats} profiled fits, s; "
              "share of that model's fit):")
        for name, seconds in phases.items():
            print(f"  {name:58s} {seconds['total']:7.3f}")
            for phase, value in seconds.items():
                if phase != "total":
                    print(f"    {phase:56s} {value:7.3f} {value / seconds['total']:6.0%}")
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--n-features", type=int, default=256)
    parser.add_argument("--n-classes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--threads", default="1,2",
        help="comma-separated BLAS thread limits, one table each ('0': the BLAS default)",
    )
    parser.add_argument("--order", choices=["blocks", "round-robin"], default="blocks")
    parser.add_argument("--profile-repeats", type=int, default=3,
                        help="profiled fits per model for the breakdown (0: none)")
    args = parser.parse_args()
    X, y = make_data(args.n_samples, args.n_features, args.n_classes)
    makers = candidates(np.arange(args.n_classes))
    ratios = {}
    for threads in (int(value) for value in args.threads.split(",")):
        ratios[threads or "default"] = report(threads or None, args, X, y, makers)
    print("\nsummary, default DP-LS / RidgeClassifier: " + ", ".join(
        f"{ratio:.2f}x at {threads} thread(s)" for threads, ratio in ratios.items()))


if __name__ == "__main__":
    main()
