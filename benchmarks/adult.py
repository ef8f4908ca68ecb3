"""UCI Adult: the private linear models against each other and against diffprivlib.

Data: ``adult.data.csv`` (32,561 training rows) and ``adult.test.csv`` (16,281
test rows) from ``--data-dir`` (default ``../shared/data/adult/`` relative to
the repository root; the data is read in place, never copied). Label: income
``>50K`` (whitespace and the test file's trailing ``.`` stripped).

Features (public under label DP; the same preprocessing is used for every
method, so it is also valid for the full-DP rows):

- the 6 numeric columns standardised and the 8 categorical columns one-hot
  encoded (``"?"`` is a category of its own); scaler and encoder are fitted
  on the *training features only* (no label is read; unknown test categories
  are ignored);
- every row clipped to L2 norm 1, a public bound. Clipping is a per-row map:
  a row inside the ball is unchanged, a row outside is scaled down to it by
  its own norm, so nothing about the other rows (or the labels) enters. Since
  the one-hot part alone has norm sqrt(8), every Adult row is clipped, i.e.
  this amounts to per-row L2 normalisation. We do *not* divide by the largest
  row norm of the training set: that factor is data-dependent, harmless for
  label DP (features are public) but a leak for the full-DP rows. Every
  estimator is given this public bound (``data_norm=1``) rather than its
  default ``"auto"``, which would read a quantile (the median, for the
  classifiers) of the row norms of the (private, for the full-DP rows) features.

Methods, each at ``epsilon`` in {0.05, 0.1, 0.5, 1, 2, 5}, 5 seeds (mean test
accuracy, median fit time):

- ``DPLogisticRegression`` objective vs output perturbation (label DP, pure
  eps-DP), the same with ``privacy="full"`` (DP for whole examples, like
  diffprivlib), ``DPLinearSVC`` (Huber hinge, h = 0.5) objective vs output;
- ``DPLeastSquaresClassifier`` label vs full DP (delta = 1e-5, weighted
  formulation, default ridge ``alpha=1`` and ``gram_weight=1``);
- ``DPLogisticRegression`` ``solver="newton"`` and ``"fc"`` (label DP, delta =
  1e-5, the default ``n_noisy_steps=10``);
- scikit-learn's non-private ``LogisticRegression``;
- ``DPLogisticRegression`` with *all its defaults* (``C=1``, ``data_norm="auto"``,
  objective perturbation, label DP) on the standardised features *without*
  the row clipping above (StandardScaler + one-hot only, as a user would feed
  it): the row "DP-LR objective (label), defaults after StandardScaler";
- diffprivlib's ``LogisticRegression(epsilon, data_norm=1.0, C)`` (objective
  perturbation, pure eps-DP on whole examples; its own defaults tol=1e-4,
  max_iter=100; a row "DP-LR objective, tol=1e-4" refits ours at that
  tolerance for a like-for-like fit time), run in the same process tree from a side virtual
  environment, since diffprivlib needs scikit-learn <= 1.7: ``--dpl-python``
  (default ``/tmp/dpl-venv/bin/python``, created with ``python -m venv`` and
  ``pip install "scikit-learn<=1.7" diffprivlib`` when it does not exist). It
  is fed the same preprocessed arrays through an ``.npz`` in a temporary
  folder. If it cannot be installed or run, the reason is printed and the
  benchmark goes on without it (``--no-diffprivlib`` skips it).

Regularisation: all ERM methods (ours, diffprivlib's and scikit-learn's) use
the same ``C`` (``--C``, default 0.1) in scikit-learn's convention, a penalty
``||w||^2 / (2 C n)`` per example on the coefficients (ours and liblinear's
include the intercept, as a constant feature 1; diffprivlib's and
scikit-learn's lbfgs leave it unpenalised, which objective perturbation's proof
does not cover: it needs a strongly convex regulariser). Output
perturbation's noise norm grows like ``C / epsilon``, so it wants a much
smaller C; two extra rows therefore refit objective and output
perturbation of the logistic loss with C *tuned per epsilon* on a validation
split of the training set (80/20, grid ``C_GRID``, one seed). That selection
reads the labels non-privately and its cost is NOT accounted: a private
selection (e.g. a report-noisy-max over the grid, or splitting the budget)
would cost extra budget, so the tuned rows are optimistic for both methods.

All BLAS pools are limited to 1 thread (``threadpoolctl`` here, environment
variables in the diffprivlib subprocess) so the fit times compare like with
like on a small machine. The agreement checks are printed at the end,
whatever they show:

- objective >= output perturbation at each eps (logistic and SVM, same C);
- label-DP DP-LS >= full-DP DP-LS at each eps;
- our objective-perturbation logistic accuracy >= diffprivlib's at each eps,
  with median fit time <= 1.5x diffprivlib's (label DP, our default, and full
  DP, diffprivlib's own setting).

Run ``python benchmarks/adult.py`` (a few minutes on 2 cores) or add
``--quick`` (2 epsilons, 1 seed). The figure (accuracy vs epsilon, log x) goes
to ``--out`` (default ``benchmarks/results/adult.png``).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from sklearn_labeldp.datasets._adult import ADULT_NUMERIC
from sklearn_labeldp.datasets._adult import load_adult as _load_adult
from sklearn_labeldp.exceptions import ReleaseError
from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data" / "adult"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "adult.png"
DEFAULT_DPL_PYTHON = "/tmp/dpl-venv/bin/python"

EPSILONS = (0.05, 0.1, 0.5, 1.0, 2.0, 5.0)
QUICK_EPSILONS = (0.1, 1.0)
N_SEEDS = 5
DELTA = 1e-5
C_DEFAULT = 0.1
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
CLASSES = np.array([0, 1])

NONPRIVATE = "non-private LogisticRegression"
DIFFPRIVLIB = "diffprivlib LogisticRegression"
LR_OBJ, LR_OUT = "DP-LR objective", "DP-LR output"
SVM_OBJ, SVM_OUT = "DP-SVM objective", "DP-SVM output"
LS_LABEL, LS_FULL = "DP-LS label", "DP-LS full"
NEWTON, FC = "DP-Newton (d=1e-5)", "DP-FC (d=1e-5)"
LR_OBJ_TUNED, LR_OUT_TUNED = "DP-LR objective, C tuned*", "DP-LR output, C tuned*"
LR_OBJ_LOOSE = "DP-LR objective, tol=1e-4"
LR_OBJ_FULL, LR_OUT_FULL = "DP-LR objective, full DP", "DP-LR output, full DP"
LR_DEFAULTS = "DP-LR objective (label), defaults after StandardScaler"
NORM_BOUND = 1.0  # the public row-norm bound of the clipped features
# A bound no row reaches: the loader's StandardScaler + one-hot features, unclipped.
UNCLIPPED = float(np.finfo(np.float64).max)


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def load_adult(data_dir, norm_bound=NORM_BOUND):
    """Preprocessed (X_train, y_train, X_test, y_test), rows clipped to ``norm_bound``, and a
    short description."""
    data = _load_adult(data_dir, norm_bound=norm_bound)
    n_numeric = len(ADULT_NUMERIC)
    info = (
        f"Adult: {data.X_train.shape[0]} train / {data.X_test.shape[0]} test rows, "
        f"{data.X_train.shape[1]} features ({n_numeric} standardised numeric + one-hot of "
        f"the categoricals); {100 * data.clipped_fraction_train:.0f}% of training rows clipped "
        f"to norm {norm_bound:g}; positive rate train {data.y_train.mean():.3f}, test "
        f"{data.y_test.mean():.3f}"
    )
    return (data.X_train, data.y_train, data.X_test, data.y_test), info


# ---------------------------------------------------------------------------
# Our methods
# ---------------------------------------------------------------------------


def make_estimator(name, eps, seed, C):
    if name == LR_DEFAULTS:
        return DPLogisticRegression(epsilon=eps, classes=CLASSES, random_state=seed)
    common = dict(classes=CLASSES, random_state=seed, data_norm=NORM_BOUND)  # not "auto"
    if name in (LR_OBJ, LR_OBJ_TUNED):
        return DPLogisticRegression(epsilon=eps, C=C, solver="objective", **common)
    if name == LR_OBJ_LOOSE:  # diffprivlib's tolerance, for a like-for-like fit time
        return DPLogisticRegression(epsilon=eps, C=C, solver="objective", tol=1e-4, **common)
    if name in (LR_OUT, LR_OUT_TUNED):
        return DPLogisticRegression(epsilon=eps, C=C, solver="output", **common)
    if name == LR_OBJ_FULL:
        return DPLogisticRegression(epsilon=eps, C=C, solver="objective", privacy="full", **common)
    if name == LR_OUT_FULL:
        return DPLogisticRegression(epsilon=eps, C=C, solver="output", privacy="full", **common)
    if name == SVM_OBJ:
        return DPLinearSVC(epsilon=eps, C=C, solver="objective", **common)
    if name == SVM_OUT:
        return DPLinearSVC(epsilon=eps, C=C, solver="output", **common)
    if name == LS_LABEL:
        return DPLeastSquaresClassifier(epsilon=eps, delta=DELTA, privacy="label", **common)
    if name == LS_FULL:
        return DPLeastSquaresClassifier(epsilon=eps, delta=DELTA, privacy="full", **common)
    if name == NEWTON:
        return DPLogisticRegression(epsilon=eps, delta=DELTA, C=C, solver="newton", **common)
    if name == FC:
        return DPLogisticRegression(epsilon=eps, delta=DELTA, C=C, solver="fc", **common)
    if name == NONPRIVATE:
        return LogisticRegression(C=C, max_iter=1000)
    raise ValueError(name)


def evaluate(name, eps, C, seeds, X_train, y_train, X_test, y_test):
    """Mean test accuracy, its std over seeds and the median fit time."""
    accs, times = [], []
    for seed in seeds:
        est = make_estimator(name, eps, seed, C)
        start = time.perf_counter()
        try:
            est.fit(X_train, y_train)
        except (ValueError, ReleaseError) as exc:  # e.g. no exact minimiser: no model, say so
            print(f"  {name} eps={eps:g} seed={seed}: {type(exc).__name__}: {exc}")
            return math.nan, math.nan, math.nan
        times.append(time.perf_counter() - start)
        accs.append(est.score(X_test, y_test))
    return float(np.mean(accs)), float(np.std(accs)), statistics.median(times)


def tune_C(name, eps, X_train, y_train, seed=12345):
    """C from ``C_GRID`` by validation accuracy (non-private selection, not accounted)."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(X_train.shape[0])
    n_val = X_train.shape[0] // 5
    val, fit = perm[:n_val], perm[n_val:]
    best = (-1.0, None)
    for C in C_GRID:
        acc, _, _ = evaluate(name, eps, C, [seed], X_train[fit], y_train[fit],
                             X_train[val], y_train[val])
        if acc > best[0]:
            best = (acc, C)
    return best[1]


# ---------------------------------------------------------------------------
# diffprivlib in a side environment
# ---------------------------------------------------------------------------

DPL_HELPER = textwrap.dedent(
    """
    import json, statistics, sys, time, warnings
    import numpy as np
    import diffprivlib
    import sklearn
    from diffprivlib.models import LogisticRegression

    data = np.load(sys.argv[1])
    X_train, y_train, X_test, y_test = (data[k] for k in ("X_train", "y_train", "X_test", "y_test"))
    C = float(data["C"])
    out = {"versions": f"diffprivlib {diffprivlib.__version__}, scikit-learn {sklearn.__version__}",
           "results": {}}
    for eps in data["epsilons"]:
        accs, times = [], []
        for seed in data["seeds"]:
            clf = LogisticRegression(epsilon=float(eps), data_norm=1.0, C=C,
                                     random_state=int(seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                clf.fit(X_train, y_train)
                times.append(time.perf_counter() - start)
            accs.append(float(clf.score(X_test, y_test)))
        out["results"][repr(float(eps))] = [float(np.mean(accs)), float(np.std(accs)),
                                            statistics.median(times)]
    json.dump(out, open(sys.argv[2], "w"))
    """
)

SINGLE_THREAD_ENV = {
    k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
}


def ensure_dpl_python(path):
    """Path of a python with diffprivlib (creating the venv if needed), or (None, reason)."""
    path = Path(path)
    check = [str(path), "-c", "import diffprivlib, sklearn"]
    if path.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(path), None
    venv = path.parent.parent
    if not path.exists():
        print(f"creating {venv} with scikit-learn<=1.7 and diffprivlib ...", flush=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)],
                              capture_output=True, text=True)
        if made.returncode != 0:
            return None, f"python -m venv {venv} failed: {made.stderr.strip()[-500:]}"
    pip = subprocess.run(
        [str(path), "-m", "pip", "install", "-q", "scikit-learn<=1.7", "diffprivlib"],
        capture_output=True, text=True,
    )
    if pip.returncode != 0:
        return None, f"pip install scikit-learn<=1.7 diffprivlib failed: {pip.stderr[-800:]}"
    if subprocess.run(check, capture_output=True).returncode != 0:
        return None, f"{path} cannot import diffprivlib after installation"
    return str(path), None


def run_diffprivlib(python, epsilons, seeds, C, X_train, y_train, X_test, y_test):
    """{eps: (mean acc, std, median fit time)} and a version string, or (None, reason)."""
    with tempfile.TemporaryDirectory(prefix="adult-dpl-") as tmp:
        data, result, helper = (Path(tmp) / n for n in ("data.npz", "out.json", "helper.py"))
        np.savez(data, X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
                 epsilons=np.array(epsilons, dtype=float), seeds=np.array(seeds), C=C)
        helper.write_text(DPL_HELPER)
        env = {**os.environ, **SINGLE_THREAD_ENV}
        proc = subprocess.run([python, str(helper), str(data), str(result)],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            return None, f"diffprivlib helper failed: {proc.stderr.strip()[-800:]}"
        out = json.loads(result.read_text())
    return {float(k): tuple(v) for k, v in out["results"].items()}, out["versions"]


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def print_table(title, methods, epsilons, results, column, fmt, labels):
    width = max(len(labels[m]) for m in methods) + 2
    print(f"\n{title}")
    print("method".ljust(width) + "".join(f"{'eps=' + format(e, 'g'):>10}" for e in epsilons))
    for m in methods:
        cells = []
        for e in epsilons:
            v = results[m].get(e, (math.nan,) * 3)[column]
            cells.append(f"{'n/a' if math.isnan(v) else format(v, fmt):>10}")
        print(labels[m].ljust(width) + "".join(cells))


def run_checks(results, epsilons):
    def acc(m, e):
        return results[m][e][0] if m in results and e in results[m] else math.nan

    def line(ok, text):
        print(f"  [{'PASS' if ok else 'FAIL'}] {text}")
        return ok

    print("\nChecks against the published Adult results:")
    for obj, out, tag in ((LR_OBJ, LR_OUT, "logistic"),
                          (LR_OBJ_FULL, LR_OUT_FULL, "logistic, full DP"),
                          (SVM_OBJ, SVM_OUT, "Huber SVM"),
                          (LR_OBJ_TUNED, LR_OUT_TUNED, "logistic, both C tuned*")):
        if obj not in results:
            continue
        fails = [e for e in epsilons if not acc(obj, e) >= acc(out, e)]
        line(not fails, f"objective >= output perturbation ({tag}) at every eps"
             + (f"; fails at eps={', '.join(format(e, 'g') for e in fails)}" if fails else ""))
    fails = [e for e in epsilons if not acc(LS_LABEL, e) >= acc(LS_FULL, e)]
    line(not fails, "label-DP DP-LS >= full-DP DP-LS at every eps"
         + (f"; fails at eps={', '.join(format(e, 'g') for e in fails)}" if fails else ""))
    if 1.0 in epsilons:
        line(acc(LR_DEFAULTS, 1.0) >= 0.80, f"{LR_DEFAULTS} at eps=1 (the default): accuracy "
             f"{acc(LR_DEFAULTS, 1.0):.4f} >= 0.80")
    if DIFFPRIVLIB not in results:
        print("  [SKIP] ours vs diffprivlib: diffprivlib was not run")
        return
    for name in (LR_OBJ, LR_OBJ_FULL):
        for e in epsilons:
            ours, theirs = results[name][e], results[DIFFPRIVLIB][e]
            ratio = ours[2] / theirs[2]
            line(ours[0] >= theirs[0] and ratio <= 1.5,
                 f"{name}, eps={e:g}: accuracy {ours[0]:.4f} vs diffprivlib "
                 f"{theirs[0]:.4f} (>=: {ours[0] >= theirs[0]}); fit time {ours[2]:.3f}s vs "
                 f"{theirs[2]:.3f}s, ratio {ratio:.2f} (<= 1.5: {ratio <= 1.5})")
    if LR_OBJ_LOOSE in results:
        print("  (ours enforces ||grad|| <= tol = 1e-6, the exact minimiser its guarantee needs; "
              "diffprivlib stops at tol=1e-4 / max_iter=100. At tol=1e-4 ours takes, per eps: "
              + ", ".join(f"{e:g}: {results[LR_OBJ_LOOSE][e][2]:.3f}s "
                          f"({results[LR_OBJ_LOOSE][e][2] / results[DIFFPRIVLIB][e][2]:.2f}x)"
                          for e in epsilons) + ")")


def plot(results, methods, labels, epsilons, out, majority):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    colors = plt.get_cmap("tab20").colors
    markers = "osD^v<>ph*Xd"
    for i, m in enumerate(methods):
        ys = [results[m].get(e, (math.nan,))[0] for e in epsilons]
        if m == NONPRIVATE:
            ax.plot(epsilons, ys, "k--", label=labels[m])
        else:
            ax.plot(epsilons, ys, marker=markers[i % len(markers)], color=colors[i % 20],
                    label=labels[m], markersize=4)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("test accuracy")
    ax.set_title("UCI Adult (income > 50K), mean over seeds")
    ax.axhline(majority, color="grey", lw=0.8, ls=":", label="majority class")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--C", type=float, default=C_DEFAULT, help="C shared by ERM methods")
    parser.add_argument("--seeds", type=int, default=N_SEEDS)
    parser.add_argument("--dpl-python", default=DEFAULT_DPL_PYTHON,
                        help="python of a venv with diffprivlib (created if missing)")
    parser.add_argument("--no-diffprivlib", action="store_true")
    parser.add_argument("--no-tuned", action="store_true", help="skip the C-tuned rows")
    parser.add_argument("--quick", action="store_true", help="2 epsilons, 1 seed")
    args = parser.parse_args()

    start_all = time.perf_counter()
    epsilons = QUICK_EPSILONS if args.quick else EPSILONS
    seeds = list(range(1 if args.quick else args.seeds))
    data, info = load_adult(args.data_dir)
    X_train, y_train, X_test, y_test = data
    standardised, _ = load_adult(args.data_dir, norm_bound=UNCLIPPED)
    print(info)
    print(f"{LR_DEFAULTS}: the same features without the row clipping")
    print(f"C = {args.C:g} for every ERM method (penalty ||w||^2/(2 C n)); delta = {DELTA:g} for "
          f"DP-LS, DP-Newton and DP-FC; {len(seeds)} seed(s); BLAS limited to 1 thread")

    private = [LR_OBJ, LR_OUT, LR_OBJ_FULL, LR_OUT_FULL, SVM_OBJ, SVM_OUT, LS_LABEL, LS_FULL,
               NEWTON, FC, LR_OBJ_LOOSE, LR_DEFAULTS]
    results = {}
    labels = {m: m for m in private + [NONPRIVATE, DIFFPRIVLIB]}
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        acc = evaluate(NONPRIVATE, None, args.C, seeds, X_train, y_train, X_test, y_test)
        results[NONPRIVATE] = {e: acc for e in epsilons}
        for m in private:
            results[m] = {}
            for e in epsilons:
                results[m][e] = evaluate(m, e, args.C, seeds,
                                         *(standardised if m == LR_DEFAULTS else data))
            print(f"  done: {m} ({time.perf_counter() - start_all:.0f}s)", flush=True)

        tuned_C = {}
        if not args.no_tuned:
            for m in (LR_OBJ_TUNED, LR_OUT_TUNED):
                results[m], tuned_C[m] = {}, {}
                for e in epsilons:
                    C = tune_C(m, e, X_train, y_train)
                    tuned_C[m][e] = C
                    results[m][e] = evaluate(m, e, C, seeds, X_train, y_train, X_test, y_test)
                labels[m] = m
                print(f"  done: {m} ({time.perf_counter() - start_all:.0f}s)", flush=True)

    dpl_note = "skipped (--no-diffprivlib)"
    if not args.no_diffprivlib:
        python, why = ensure_dpl_python(args.dpl_python)
        if python is None:
            dpl_note = f"NOT RUN: {why}"
        else:
            res, info = run_diffprivlib(python, epsilons, seeds, args.C,
                                        X_train, y_train, X_test, y_test)
            if res is None:
                dpl_note = f"NOT RUN: {info}"
            else:
                results[DIFFPRIVLIB] = res
                dpl_note = f"{info} from {python}"
    print(f"diffprivlib: {dpl_note}")

    methods = [NONPRIVATE] + private + [m for m in (LR_OBJ_TUNED, LR_OUT_TUNED) if m in results]
    if DIFFPRIVLIB in results:
        methods.append(DIFFPRIVLIB)
    print_table(f"Test accuracy (mean over {len(seeds)} seed(s))", methods, epsilons,
                results, 0, ".4f", labels)
    print_table("Std of test accuracy over seeds", methods, epsilons, results, 1, ".4f", labels)
    print_table("Median fit time (s)", methods, epsilons, results, 2, ".3f", labels)
    if tuned_C:
        print("\n* C tuned per eps on an 80/20 split of the training set over "
              f"{list(C_GRID)}; the selection is non-private and NOT accounted (a private "
              "selection would cost budget):")
        for m, by_eps in tuned_C.items():
            print(f"  {m}: " + ", ".join(f"eps={e:g}: C={c:g}" for e, c in by_eps.items()))
    run_checks(results, epsilons)
    majority = max(np.mean(y_test), 1 - np.mean(y_test))
    try:
        out = plot(results, methods, labels, epsilons, args.out, majority)
    except ImportError as exc:  # matplotlib is the optional [plot] extra
        print(f"\nfigure: not drawn ({exc}); pip install matplotlib")
    else:
        print(f"\nfigure: {out}")
    print(f"total time: {time.perf_counter() - start_all:.0f}s")


if __name__ == "__main__":
    main()
