"""The randomized-response meta-estimators with their defaults, beside the defaults they
replaced, the majority rate and the non-private bases.

Estimators (``--estimators``), each with only ``epsilon``, ``classes`` and
``random_state`` set unless stated:

- ``rr``, ``va``, ``alibi``: :class:`~sklearn_labeldp.classifiers.RRWithPriorClassifier`
  (LP-1ST), :class:`~sklearn_labeldp.classifiers.VectorApproxClassifier` and
  :class:`~sklearn_labeldp.classifiers.ALIBIClassifier` with their default k-NN
  base (``n_neighbors`` from the noise level); ``rr-k10``, ``va-k10``,
  ``alibi-k10``: the same with the earlier fixed default
  ``KNeighbors*(n_neighbors=10)``;
- ``rr-lr``: LP-1ST around ``LogisticRegression()``; ``lp2-lr``: LP-2ST
  (``n_stages=2``) around it with the defaults ``stage_fractions="auto"``,
  ``temperature="auto"``, ``warm_start="auto"``; ``lp2-lr-old``: LP-2ST with
  the earlier defaults ``stage_fractions=None`` (even split),
  ``temperature=1.0``, ``warm_start=False``;
- ``lp2``: LP-2ST with every default (the k-NN base included); ``lp2-old``:
  LP-2ST with the earlier defaults and ``KNeighborsClassifier(n_neighbors=10)``.

Data (``--datasets``): ``adult``, ``digits`` and ``synthetic`` as in
``benchmarks/defaults.py`` (its ``load``: standardised features, Adult with
one-hot categoricals and no row clipping); ``small-N-K``:
``make_classification(n_samples=N + 2000, n_features=10, n_informative=5,
n_classes=K, random_state=1)``, the first ``N`` rows for training and 2,000
for testing (standardised on the training rows).

Columns: test accuracy, median over the seeds (``--seeds``, default 3), at each
epsilon (``--epsilons``). The header gives the majority rate (the test share of
the most frequent class) and the non-private ``KNeighborsClassifier(10)`` and
``LogisticRegression()``.

Usage (a full run takes tens of minutes on 2 cores)::

    python benchmarks/defaults_meta.py --datasets digits small-200-2 --estimators rr rr-k10
    python benchmarks/defaults_meta.py --datasets adult --seeds 3 --n-jobs 2

Prints one Markdown table per data set (``--out FILE`` also writes them).
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from defaults import DEFAULT_DATA_DIR, load
from joblib import Parallel, delayed
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)

_OLD_LP2 = {"n_stages": 2, "stage_fractions": None, "temperature": 1.0, "warm_start": False}

ESTIMATORS = {
    "rr": lambda **kw: RRWithPriorClassifier(**kw),
    "rr-k10": lambda **kw: RRWithPriorClassifier(KNeighborsClassifier(10), **kw),
    "va": lambda **kw: VectorApproxClassifier(**kw),
    "va-k10": lambda **kw: VectorApproxClassifier(KNeighborsRegressor(10), **kw),
    "alibi": lambda **kw: ALIBIClassifier(**kw),
    "alibi-k10": lambda **kw: ALIBIClassifier(KNeighborsRegressor(10), **kw),
    "rr-lr": lambda **kw: RRWithPriorClassifier(LogisticRegression(), **kw),
    "lp2-lr": lambda **kw: RRWithPriorClassifier(LogisticRegression(), n_stages=2, **kw),
    "lp2-lr-old": lambda **kw: RRWithPriorClassifier(LogisticRegression(), **_OLD_LP2, **kw),
    "lp2": lambda **kw: RRWithPriorClassifier(n_stages=2, **kw),
    "lp2-old": lambda **kw: RRWithPriorClassifier(KNeighborsClassifier(10), **_OLD_LP2, **kw),
}


def load_data(name, data_dir):
    if not name.startswith("small-"):
        return load(name, data_dir)
    n, n_classes = (int(v) for v in name.split("-")[1:])
    X, y = make_classification(n_samples=n + 2000, n_features=10, n_informative=5,
                               n_classes=n_classes, random_state=1)
    scaler = StandardScaler().fit(X[:n])
    return scaler.transform(X[:n]), y[:n], scaler.transform(X[n:]), y[n:]


def _score(name, eps, seed, data):
    X_train, y_train, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LogisticRegression's convergence on noisy labels
        model = ESTIMATORS[name](epsilon=eps, classes=np.unique(y_train), random_state=seed)
        model.fit(X_train, y_train)
    return model.score(X_test, y_test)


def run(dataset, estimators, epsilons, seeds, n_jobs, data_dir):
    data = load_data(dataset, data_dir)
    X_train, y_train, X_test, y_test = data
    majority = np.bincount(y_test).max() / y_test.size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        knn = KNeighborsClassifier(10).fit(X_train, y_train).score(X_test, y_test)
        logreg = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)
    jobs = [(name, eps, seed) for name in estimators for eps in epsilons for seed in seeds]
    start = time.perf_counter()
    scores = Parallel(n_jobs=n_jobs)(
        delayed(_score)(name, eps, seed, data) for name, eps, seed in jobs)
    medians = {}
    for (name, eps, _), score in zip(jobs, scores, strict=True):
        medians.setdefault((name, eps), []).append(score)
    header = ["estimator", *[f"eps={eps:g}" for eps in epsilons]]
    lines = [f"### {dataset} (n={y_train.size}, K={np.unique(y_train).size}): majority "
             f"{majority:.3f}, non-private kNN(10) {knn:.3f}, LogisticRegression {logreg:.3f} "
             f"({len(seeds)} seeds, {time.perf_counter() - start:.0f} s)",
             "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in estimators:
        cells = [f"{np.median(medians[(name, eps)]):.3f}" for eps in epsilons]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+",
                        default=["adult", "digits", "synthetic", "small-100-2", "small-200-2",
                                 "small-400-3"])
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS),
                        choices=list(ESTIMATORS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1, 2, 4, 8])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    tables = []
    for dataset in args.datasets:  # each table as soon as it is done
        tables.append(run(dataset, args.estimators, args.epsilons, list(range(args.seeds)),
                          args.n_jobs, args.data_dir))
        print(tables[-1] + "\n", flush=True)
    if args.out is not None:
        args.out.write_text("\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()
