"""The high-privacy regime: which method at which epsilon, every one at its defaults.

Label randomization (randomized response with a prior, LP-2ST, ALIBI, vector
approximation) loses almost all signal at a small epsilon with many classes,
while DP-SGD accounted for a label change keeps its noise linear in 1 / eps
(Ghazi et al., ICLR 2024, Table 5 on MNIST). This script measures the
crossover on a CPU subset of Fashion-MNIST with every estimator at its
defaults (only ``epsilon``, ``delta`` where it has one, ``classes`` and
``random_state`` set):

- ``RR``: ``RRWithPriorClassifier()``; ``LP-2ST``: ``RRWithPriorClassifier(
  n_stages=2)``; ``ALIBI``: ``ALIBIClassifier()``; ``vector approx.``:
  ``VectorApproxClassifier()`` (their default base, a k-NN);
- ``DP-SGD``: ``DPSGDClassifier()`` (its default network and settings, resolved
  from n, d, K and epsilon: a linear model below the crossover of
  ``linear_below``, the MLP above);
- ``DP least squares``: ``DPLeastSquaresClassifier(delta=...)`` and
  ``DP logistic``: ``DPLogisticRegression()`` (label DP), the linear models;
- ``majority``: the test share of the most frequent class.

Data (``--dataset``): ``fashion``, ``--n-train`` training and ``--n-test``
test images drawn, without overlap, from Fashion-MNIST's training file (the
Debian package ``dataset-fashion-mnist``, or ``--data-home``), a new draw per
seed, pixels in [0, 1]; ``digits``, scikit-learn's 8x8 digits (pixels / 16)
split 70/30 anew per seed; ``adult``, UCI Adult's training and test files
(``--data-home``, default ``../shared/data/adult``; standardised numeric and
one-hot columns, two classes). Test accuracy, median over ``--seeds`` seeds; the best randomization
learner of each epsilon and DP-SGD's lead over it are printed last. torch and
BLAS use one thread per process; ``--n-jobs`` processes run the cells.

    python benchmarks/high_privacy.py [--epsilons 0.05 0.1 0.2 0.5 1 2] [--seeds 3]
        [--dataset fashion] [--n-train 10000] [--n-test 5000] [--methods ...] [--n-jobs 2]
"""

import argparse
import functools
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

DELTA = 1e-5
EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
RANDOMIZATION = ("RR", "LP-2ST", "ALIBI", "vector approx.")
METHODS = (*RANDOMIZATION, "DP-SGD", "DP least squares", "DP logistic")


@functools.lru_cache(maxsize=1)
def _read(dataset, data_home):
    """The data set's arrays, read once per process (a worker runs many cells)."""
    if dataset == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return (X / 16.0).astype(np.float32), y
    if dataset == "adult":
        from sklearn_labeldp.datasets import load_adult

        home = data_home or Path(__file__).resolve().parents[2] / "shared" / "data" / "adult"
        data = load_adult(home, norm_bound=1e6)
        return (data.X_train.astype(np.float32), data.y_train,
                data.X_test.astype(np.float32), data.y_test)
    from sklearn_labeldp.datasets import load_fashion_mnist

    return load_fashion_mnist(data_home, subset="train", return_X_y=True)


def load(args, seed):
    """Training and test rows of ``--dataset`` for ``seed``."""
    arrays = _read(args.dataset, args.data_home)
    if args.dataset == "adult":
        return arrays
    X, y = arrays
    if args.dataset == "digits":
        from sklearn.model_selection import train_test_split

        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=seed, stratify=y)
        return X_train, y_train, X_test, y_test
    train, test = split(len(X), args.n_train, args.n_test, seed)
    return X[train], y[train], X[test], y[test]


def estimator(method, epsilon, seed, classes):
    from sklearn_labeldp import ALIBIClassifier, RRWithPriorClassifier, VectorApproxClassifier
    from sklearn_labeldp.linear_model import DPLeastSquaresClassifier, DPLogisticRegression
    from sklearn_labeldp.nn import DPSGDClassifier

    common = {"epsilon": epsilon, "classes": classes, "random_state": seed}
    return {
        "RR": lambda: RRWithPriorClassifier(**common),
        "LP-2ST": lambda: RRWithPriorClassifier(n_stages=2, **common),
        "ALIBI": lambda: ALIBIClassifier(**common),
        "vector approx.": lambda: VectorApproxClassifier(**common),
        "DP-SGD": lambda: DPSGDClassifier(delta=DELTA, **common),
        "DP least squares": lambda: DPLeastSquaresClassifier(delta=DELTA, **common),
        "DP logistic": lambda: DPLogisticRegression(**common),
    }[method]()


def split(n_images, n_train, n_test, seed):
    order = np.random.default_rng(seed).permutation(n_images)
    return order[:n_train], order[n_train:n_train + n_test]


def cell(method, epsilon, seed, args):
    import torch
    from threadpoolctl import threadpool_limits

    from sklearn_labeldp.accounting import BudgetAccountant

    torch.set_num_threads(1)
    X_train, y_train, X_test, y_test = load(args, seed)
    model = estimator(method, epsilon, seed, np.unique(np.concatenate([y_train, y_test])))
    if "accountant" in model.get_params():
        model.set_params(accountant=BudgetAccountant())  # one fit's budget, not a shared one
    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train, y_train)
        score = float(model.score(X_test, y_test))
    majority = float(np.unique(y_test, return_counts=True)[1].max() / y_test.size)
    return method, epsilon, seed, score, time.perf_counter() - start, majority


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-train", type=int, default=10_000)
    parser.add_argument("--n-test", type=int, default=5_000)
    parser.add_argument("--dataset", choices=("fashion", "digits", "adult"), default="fashion")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)

    X_train, _, X_test, _ = load(args, 0)
    print(f"# {args.dataset}: {X_train.shape[0]} training / {X_test.shape[0]} test rows of "
          f"{X_train.shape[1]} features, {args.seeds} seeds (medians), delta {DELTA:g}; "
          f"load {os.getloadavg()[0]:.2f}, {args.n_jobs} processes of 1 thread", flush=True)
    start = time.perf_counter()
    jobs = [(method, epsilon, seed) for epsilon in args.epsilons for method in args.methods
            for seed in range(args.seeds)]
    # Forked workers (the multiprocessing backend) run this script's functions by
    # reference, so each keeps _read's cache across its cells; loky's workers would
    # need the cached function pickled by value, which lru_cache refuses.
    results = Parallel(n_jobs=args.n_jobs, backend="multiprocessing")(
        delayed(cell)(*job, args) for job in jobs)
    scores, seconds = {}, {}
    majority = statistics.median(result[-1] for result in results)
    for method, epsilon, _, score, elapsed, _ in results:
        scores.setdefault((method, epsilon), []).append(score)
        seconds.setdefault(method, []).append(elapsed)
    print("\n| method | " + " | ".join(f"eps {e:g}" for e in args.epsilons) + " |")
    print("|---|" + "---:|" * len(args.epsilons))
    for method in args.methods:
        row = [f"{statistics.median(scores[method, e]):.3f}" for e in args.epsilons]
        print(f"| {method} | " + " | ".join(row) + " |")
    print("| majority | " + " | ".join(f"{majority:.3f}" for _ in args.epsilons) + " |")
    randomization = [m for m in args.methods if m in RANDOMIZATION]
    if randomization and "DP-SGD" in args.methods:
        print("\n| eps | best randomization | its accuracy | DP-SGD | lead (points) |")
        print("|---:|---|---:|---:|---:|")
        for e in args.epsilons:
            best = max(randomization, key=lambda m: statistics.median(scores[m, e]))
            top = statistics.median(scores[best, e])
            sgd = statistics.median(scores["DP-SGD", e])
            print(f"| {e:g} | {best} | {top:.3f} | {sgd:.3f} | {100 * (sgd - top):+.1f} |")
    print("\nmedian seconds per fit: " + ", ".join(
        f"{m} {statistics.median(s):.1f}" for m, s in seconds.items())
          + f"; total {time.perf_counter() - start:.0f} s; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
