"""The private linear models with their defaults, beside the majority rate, the
non-private LogisticRegression and the best of a small grid.

Data (each split 70/30 with ``random_state=0`` unless it has its own test set;
features standardised with a scaler fitted on the training features only, no
row normalisation, so the defaults' ``data_norm="auto"`` sees the raw row
norms):

- ``adult``: UCI Adult, one-hot categorical and standardised numeric columns
  (``sklearn_labeldp.datasets.load_adult(data_dir, norm_bound=1e6)``, i.e. no
  row is clipped by the loader; row norms up to about 14), its own test file;
- ``digits``: scikit-learn's 8x8 digits (10 classes, 1,797 rows);
- ``synthetic``: ``make_classification(n_samples=20000, n_features=20,
  n_informative=10, n_classes=5, random_state=0)``.

Estimators (``--estimators``, names below): every linear model with only
``epsilon``, ``delta`` (1e-5 for the Gaussian solvers, 0 for the pure-DP ones),
``classes`` and ``random_state`` set, under ``privacy="label"`` and, where it
exists, ``privacy="full"`` (whose ``data_norm="auto"`` reads the private
features and warns; the benchmark silences that warning, a user should pass a
public bound).

Columns: test accuracy, median over the seeds (``--seeds``, default 3), at
each epsilon (``--epsilons``, default 0.5 1 2 4 8); ``grid`` is the best median
over a small grid of the estimator's main hyperparameter (``GRIDS`` below),
chosen on the *test* data: an upper reference for a tuned model, not a private
result. ``majority`` is the test share of the most frequent class and
``nonprivate`` scikit-learn's ``LogisticRegression(max_iter=2000)``.

Usage (runnable in parts; a full run takes tens of minutes on 2 cores)::

    python benchmarks/defaults.py --datasets adult --estimators ls-full newton-full
    python benchmarks/defaults.py --datasets digits synthetic --no-grid --n-jobs 2

Prints one Markdown table per data set (``--out FILE`` also writes them).
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.datasets import load_digits, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "data" / "adult"


def _logreg(solver, privacy):
    gaussian = solver in ("newton", "fc", "sgd", "adam")
    return lambda **kw: DPLogisticRegression(
        solver=solver, privacy=privacy, delta=1e-5 if gaussian else 0.0, **kw)


ESTIMATORS = {
    "auto-label": lambda **kw: DPLogisticRegression(**kw),  # solver="auto", the default
    "ls-label": lambda **kw: DPLeastSquaresClassifier(delta=1e-5, **kw),
    "ls-full": lambda **kw: DPLeastSquaresClassifier(delta=1e-5, privacy="full", **kw),
    **{f"{solver}-{privacy}": _logreg(solver, privacy)
       for solver in ("objective", "output", "newton", "fc", "sgd", "adam")
       for privacy in ("label", "full")},
    "svc-label": lambda **kw: DPLinearSVC(**kw),
    "svc-full": lambda **kw: DPLinearSVC(privacy="full", **kw),
}

# The grid of each estimator's main hyperparameter (the upper reference).
_C_GRID = {"C": [1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0]}
_SECOND_ORDER_GRID = {"C": [0.001, 0.003, 0.01, 0.03, 0.1, 1.0]}
_STEPS_GRID = {"n_noisy_steps": [10, 30, 100, 300, 1000]}
GRIDS = {
    "ls": {"alpha": [1.0, 10.0, 100.0, 1e3, 3e3, 1e4, 3e4]},
    "auto": _C_GRID, "objective": _C_GRID, "output": _C_GRID, "svc": _C_GRID,
    "newton": _SECOND_ORDER_GRID, "fc": _SECOND_ORDER_GRID,
    "sgd": _STEPS_GRID, "adam": _STEPS_GRID,
}


def load(name, data_dir):
    if name == "adult":
        from sklearn_labeldp.datasets import load_adult

        d = load_adult(data_dir, norm_bound=1e6)
        return d.X_train, d.y_train, d.X_test, d.y_test
    if name == "digits":
        X, y = load_digits(return_X_y=True)
    elif name == "synthetic":
        X, y = make_classification(n_samples=20000, n_features=20, n_informative=10,
                                   n_classes=5, random_state=0)
    else:
        raise ValueError(f"unknown data set {name!r}")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), y_train, scaler.transform(X_test), y_test


def _score(name, params, eps, seed, data):
    X_train, y_train, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # data_norm="auto" under full DP; one-vs-rest
        model = ESTIMATORS[name](epsilon=eps, classes=np.unique(y_train), random_state=seed,
                                 **params)
        model.fit(X_train, y_train)
    return model.score(X_test, y_test)


def run(dataset, estimators, epsilons, seeds, grid, n_jobs, data_dir):
    data = load(dataset, data_dir)
    X_train, y_train, X_test, y_test = data
    majority = np.bincount(y_test).max() / y_test.size
    nonprivate = LogisticRegression(max_iter=2000).fit(X_train, y_train).score(X_test, y_test)
    jobs = []
    for name in estimators:
        settings = [{}]
        if grid:
            (key, values), = GRIDS[name.split("-")[0]].items()
            settings += [{key: value} for value in values]
        jobs += [(name, i, params, eps, seed) for i, params in enumerate(settings)
                 for eps in epsilons for seed in seeds]
    start = time.perf_counter()
    scores = Parallel(n_jobs=n_jobs)(
        delayed(_score)(name, params, eps, seed, data) for name, _, params, eps, seed in jobs)
    medians = {}
    for (name, i, _, eps, _), score in zip(jobs, scores, strict=True):
        medians.setdefault((name, i, eps), []).append(score)
    medians = {key: float(np.median(value)) for key, value in medians.items()}
    header = ["estimator", *[f"eps={eps:g}" for eps in epsilons]]
    lines = [f"### {dataset}: majority {majority:.3f}, non-private LogisticRegression "
             f"{nonprivate:.3f} ({len(seeds)} seeds, {time.perf_counter() - start:.0f} s)",
             "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in estimators:
        cells = []
        for eps in epsilons:
            cell = f"{medians[(name, 0, eps)]:.3f}"
            if grid:
                best = max(value for (n, i, e), value in medians.items()
                           if n == name and e == eps and i > 0)
                cell += f" ({best:.3f})"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "digits", "synthetic"])
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS),
                        choices=list(ESTIMATORS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1, 2, 4, 8])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--no-grid", dest="grid", action="store_false",
                        help="skip the grid's upper reference (in parentheses)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    tables = [run(dataset, args.estimators, args.epsilons, list(range(args.seeds)), args.grid,
                  args.n_jobs, args.data_dir) for dataset in args.datasets]
    text = "\n\n".join(tables) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
