"""Fit time of DPLeastSquaresClassifier against scikit-learn's RidgeClassifier.

100,000 samples x 256 features, 100 classes (synthetic Gaussian data, rows
scaled to norm <= 1). Median of 3 fits each; prints a table and the ratio of
each DP-LS variant to RidgeClassifier (goal: <= 2x for the default).

    python benchmarks/bench_least_squares.py [--n-samples N] [--repeats R]
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.linear_model import RidgeClassifier

from sklearn_labeldp.linear_model._least_squares import DPLeastSquaresClassifier


def make_data(n_samples, n_features, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(n_classes, n_features))
    y = rng.integers(n_classes, size=n_samples)
    X = centers[y] + 2.0 * rng.normal(size=(n_samples, n_features))
    X /= np.linalg.norm(X, axis=1).max()  # a fixed scale for the benchmark: norms <= 1
    return X, y


def median_fit_time(make_estimator, X, y, repeats):
    times = []
    for _ in range(repeats):
        est = make_estimator()
        start = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - start)
    return statistics.median(times), est


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--n-features", type=int, default=256)
    parser.add_argument("--n-classes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_data(args.n_samples, args.n_features, args.n_classes)
    classes = np.arange(args.n_classes)
    print(f"X: {X.shape}, {args.n_classes} classes, median of {args.repeats} fits")

    candidates = {
        "RidgeClassifier (sklearn)": lambda: RidgeClassifier(alpha=1.0),
        "DP-LS label weighted (default)": lambda: DPLeastSquaresClassifier(
            epsilon=1.0, classes=classes, random_state=0
        ),
        "DP-LS label ridge": lambda: DPLeastSquaresClassifier(
            epsilon=1.0, formulation="ridge", classes=classes, random_state=0
        ),
        "DP-LS full weighted": lambda: DPLeastSquaresClassifier(
            epsilon=1.0, privacy="full", classes=classes, random_state=0
        ),
        "DP-LS full ridge": lambda: DPLeastSquaresClassifier(
            epsilon=1.0, privacy="full", formulation="ridge", classes=classes, random_state=0
        ),
    }
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in candidates.items():
            results[name] = median_fit_time(make, X, y, args.repeats)
    base = results["RidgeClassifier (sklearn)"][0]
    print(f"{'model':34s} {'fit s':>8s} {'ratio':>7s} {'train acc':>9s}")
    for name, (seconds, est) in results.items():
        acc = est.score(X[:20000], y[:20000])
        print(f"{name:34s} {seconds:8.3f} {seconds / base:7.2f} {acc:9.3f}")
    ratio = results["DP-LS label weighted (default)"][0] / base
    verdict = "meets" if ratio <= 2.0 else "MISSES"
    print(f"default DP-LS / RidgeClassifier = {ratio:.2f}x ({verdict} the <= 2x goal)")


if __name__ == "__main__":
    main()
