"""Cold solve time of the optimal unbiased randomizer, against the paper's program.

``unbiased_randomizer_distribution`` finds the least-variance unbiased eps-DP
channel (Badanidiyuru et al. 2023) by column generation over windows of
values with free outputs (see ``sklearn_labeldp.mechanisms._unbiased``). The
baseline, run in the same process and alternating with it, is the program as
the paper states it: a linear program over the whole channel into a fixed
output grid (three candidate outputs per value, 64 to 256, spread over the
range and geometric tails beyond it), with a floor variable per output for the
ratio constraints, solved by scipy's HiGHS. It is what this package ran
before; it grows about cubically with the values, so it runs only up to
``--baseline-max`` values. The second reference, up to ``--cold-max`` values,
is the same column generation started cold on every grid (no coarser grid's
solution to start from, as before the coarse start), run alternating too.

For each number of values (a uniform prior and a peaked one: a discretised
two-component normal mixture) and each epsilon it prints the median cold
time over ``--repeats`` alternating repeats (the solution cache cleared before
each), the ratio to the baseline, and both programs' expected squared errors
(free outputs can only be lower), then the cold column generation's time,
its ratio and the relative difference of the objectives (ours minus cold).
The machine's load average is printed before and after. The goal: 1,000
values in at most a second.

Run ``python benchmarks/unbiased.py`` (17, 33 and 100 values; the baseline up
to 33) or ``--values 17 33 64 100 1000 --cold-max 1000``.
"""

import argparse
import math
import os
import platform
import statistics
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from sklearn_labeldp.mechanisms import _unbiased

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
GOAL_SECONDS = 1.0


def priors(n):
    """Uniform and peaked priors over ``n`` values spread over [0, 1]."""
    values = np.linspace(0.0, 1.0, n)
    peaked = (np.exp(-0.5 * ((values - 0.3) / 0.08) ** 2)
              + 0.5 * np.exp(-0.5 * ((values - 0.75) / 0.05) ** 2) + 1e-3)
    return {"uniform": (values, np.full(n, 1.0 / n)), "peaked": (values, peaked / peaked.sum())}


def fixed_grid_program(epsilon, values, probabilities):
    """The paper's linear program into a fixed output grid; its expected squared error."""
    n = values.size
    n_outputs = int(min(256, max(64, 3 * n)))
    w = 1.0 / math.expm1(epsilon)
    tail = np.geomspace(min(w, 1.0) / 64, 16 * w, max(n_outputs // 4, 1))
    inside = np.linspace(0.0, 1.0, max(n_outputs - 2 * tail.size, 2))
    outputs = np.unique(np.concatenate([-tail, [-w], inside, values, [1 + w], 1 + tail]))
    m = outputs.size
    cost = np.concatenate([(probabilities[:, None] * (outputs[None, :] - values[:, None]) ** 2)
                           .ravel(), np.zeros(m)])
    channel = sp.eye(n * m, format="csr")
    floors = sp.kron(np.ones((n, 1)), sp.eye(m), format="csr")
    upper = sp.vstack([sp.hstack([channel, -math.exp(epsilon) * floors]),
                       sp.hstack([-channel, floors])], format="csr")
    equal = sp.hstack([sp.vstack([sp.kron(sp.eye(n), np.ones((1, m))),
                                  sp.kron(sp.eye(n), outputs[None, :])]),
                       sp.csr_matrix((2 * n, m))], format="csr")
    result = linprog(cost, A_ub=upper, b_ub=np.zeros(2 * n * m), A_eq=equal,
                     b_eq=np.concatenate([np.ones(n), values]), bounds=(0, None),
                     method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                              "dual_feasibility_tolerance": 1e-10})
    assert result.status == 0, result.message
    return float(result.fun)


def column_generation(epsilon, values, probabilities):
    _unbiased._solve.cache_clear()
    return _unbiased._solve(epsilon, tuple(values), tuple(probabilities))[2]


def cold_column_generation(epsilon, values, probabilities):
    """The column generation without the coarse grid's start."""
    coarsest = _unbiased._COARSEST
    _unbiased._COARSEST = math.inf
    try:
        return column_generation(epsilon, values, probabilities)
    finally:
        _unbiased._COARSEST = coarsest


def timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return time.perf_counter() - start, value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, nargs="+", default=[17, 33, 100])
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--baseline-max", type=int, default=33)
    parser.add_argument("--cold-max", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import highspy  # noqa: F401 - imported once, outside the timed solves

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}, repeats {args.repeats} (medians, alternating)")
    print(f"{'values':>6} {'prior':>8} {'eps':>4} {'ours s':>8} {'paper LP s':>10} "
          f"{'ratio':>7} {'ours MSE':>10} {'LP MSE':>10} {'cold s':>8} {'ratio':>7} "
          f"{'vs cold':>9}  goal")
    worst = {}
    for n in args.values:
        for name, (values, probabilities) in priors(n).items():
            for epsilon in args.epsilons:
                ours, baseline, cold = [], [], []
                for _ in range(args.repeats):
                    seconds, error = timed(column_generation, epsilon, values, probabilities)
                    ours.append(seconds)
                    if n <= args.cold_max:
                        seconds, cold_error = timed(cold_column_generation, epsilon, values,
                                                    probabilities)
                        cold.append(seconds)
                    if n <= args.baseline_max:
                        seconds, reference = timed(fixed_grid_program, epsilon, values,
                                                   probabilities)
                        baseline.append(seconds)
                mine = statistics.median(ours)
                worst[n] = max(worst.get(n, 0.0), mine)
                if baseline:
                    theirs = statistics.median(baseline)
                    columns = f"{theirs:10.3f} {mine / theirs:7.3f} {error:10.4g} {reference:10.4g}"
                else:
                    columns = f"{'-':>10} {'-':>7} {error:10.4g} {'-':>10}"
                if cold:
                    theirs = statistics.median(cold)
                    columns += (f" {theirs:8.3f} {mine / theirs:7.3f} "
                                f"{(error - cold_error) / cold_error:9.1e}")
                else:
                    columns += f" {'-':>8} {'-':>7} {'-':>9}"
                goal = "yes" if mine <= GOAL_SECONDS else "no"
                print(f"{n:6d} {name:>8} {epsilon:4g} {mine:8.3f} {columns}  {goal}", flush=True)
    print("# worst median per number of values: "
          + ", ".join(f"{n}: {seconds:.3f} s" for n, seconds in worst.items())
          + f"; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
