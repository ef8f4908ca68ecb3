"""Label memorization audit of every private estimator: claimed eps vs empirical lower bound.

For each estimator and eps in {0.5, 1, 2, 4, 8} it runs
:func:`sklearn_labeldp.audit.label_memorization_audit` on a problem where
memorisation is easy (distinct random points in 2-d, K = 3 classes, a 1-NN
base, so every training point is its own nearest neighbour and the model
reproduces its privatised label), with every training example a canary
(``--n`` of them, default 20000). It prints the attack accuracy, its 95%
Clopper-Pearson lower bound, ``eps_lower`` and the tightness ratio
``eps_lower / eps``.

Baselines in the same run: the exact optimal accuracy of this attack against
randomized response (``1/2 + (e^eps - 1) / (2 (e^eps + K - 1))``) and a
non-private 1-NN. Malek et al. (2021, Section 5) report ALIBI within about
2.5x of its bound (ratio ~0.4). The goals, checked at the end (exit status 1
if one fails): ``eps_lower <= eps`` for every private row, and a ratio of at least
0.3 for RR and ALIBI (Laplace) at eps >= 2.

Run ``python benchmarks/audit.py`` (about 15 s) or ``--quick`` (n = 3000).
"""

import argparse
import math
import sys
import time
import warnings

import numpy as np
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from sklearn_labeldp.audit import label_memorization_audit
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.priors import ClusterPrior

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
K = 3
DELTA = 1e-5


def estimators(eps):
    return {
        "RR (LP-1ST)": RRWithPriorClassifier(KNeighborsClassifier(1), epsilon=eps),
        "LP-2ST": RRWithPriorClassifier(KNeighborsClassifier(1), epsilon=eps, n_stages=2),
        "RRWithPrior cluster": RRWithPriorClassifier(
            KNeighborsClassifier(1), epsilon=eps,
            prior=ClusterPrior(n_clusters=10, epsilon=eps / 4),
        ),
        "VectorApprox": VectorApproxClassifier(KNeighborsRegressor(1), epsilon=eps),
        "ALIBI Laplace": ALIBIClassifier(KNeighborsRegressor(1), epsilon=eps),
        f"ALIBI Gaussian d={DELTA:g}": ALIBIClassifier(
            KNeighborsRegressor(1), epsilon=eps, noise="gaussian", delta=DELTA
        ),
    }


def rr_optimal_accuracy(eps):
    e = math.exp(eps)
    return 0.5 + 0.5 * (e - 1.0) / (e + K - 1.0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="training examples = canaries")
    parser.add_argument("--quick", action="store_true", help="n = 3000")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n = 3000 if args.quick else args.n

    rng = np.random.default_rng(args.seed)
    X, y = rng.normal(size=(n, 2)), rng.integers(K, size=n)
    print(f"label memorization audit: n = {n} canaries, K = {K}, 1-NN base, 95% confidence")
    header = (f"{'estimator':28s} {'eps':>5s} {'acc':>7s} {'acc_lo':>7s} "
              f"{'eps_lower':>9s} {'ratio':>6s} {'time':>6s}")
    print(header)
    print("-" * len(header))
    failures = []
    start = time.perf_counter()
    for eps in EPSILONS:
        for name, est in estimators(eps).items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # k-means / convergence chatter
                res = label_memorization_audit(est, X, y, n_canaries=n, random_state=args.seed)
            dt = time.perf_counter() - t0
            print(f"{name:28s} {eps:5.1f} {res.accuracy:7.4f} {res.accuracy_lower:7.4f} "
                  f"{res.epsilon_lower:9.3f} {res.tightness:6.2f} {dt:5.2f}s")
            if res.epsilon_lower > res.epsilon_claimed:
                failures.append(f"{name} at eps={eps}: eps_lower {res.epsilon_lower:.3f} > eps")
            if (name.startswith(("RR (", "ALIBI Laplace")) and eps >= 2
                    and res.tightness < 0.3):
                failures.append(f"{name} at eps={eps}: ratio {res.tightness:.2f} < 0.3")
        print(f"{'  RR optimum (exact)':28s} {eps:5.1f} {rr_optimal_accuracy(eps):7.4f}")
    base = label_memorization_audit(KNeighborsClassifier(1), X, y, n_canaries=n,
                                    random_state=args.seed)
    print(f"{'1-NN, not private':28s} {'inf':>5s} {base.accuracy:7.4f} "
          f"{base.accuracy_lower:7.4f} {base.epsilon_lower:9.3f}")
    print(f"total {time.perf_counter() - start:.1f}s")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("all goals met: eps_lower <= eps everywhere; RR and ALIBI ratio >= 0.3 at eps >= 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
