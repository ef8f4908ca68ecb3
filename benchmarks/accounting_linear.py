"""The linear models' label-change accounting, before and after (issue 25, scopes 2-3).

Two tables.

1. Recorded epsilon. For each linear-model mechanism and a grid of label
   budgets (``--epsilons``, default 0.5 1 2 4 8) and class counts (2 and 10),
   at the public sizes of UCI Adult (``n = 30,162``, ``d = 105`` mapped
   features): the noise the former calibration drew for the budget, the
   epsilon the current accounting records for that *same* noise ("after"),
   the tight reference computed here independently (dp-accounting for the
   Gaussian mechanisms; the analytic label-change cost for the pure-DP ones),
   and the ratio of the former noise to the current one at the same epsilon.
   The former calibrations are re-implemented here from their definitions:

   - DP-SGD with Poisson minibatches (full DP, ``batch_size=256``, 300
     steps, the default clipping ``C = sqrt(m)``): group privacy of
     dp-accounting's Renyi-DP add/remove bound
     (:func:`~sklearn_labeldp.accounting.calibrate_dp_sgd`);
   - full-batch DP-SGD and DP-Newton (label DP, 300 and 5 steps) and DP least
     squares (weighted formulation, label and full DP; the class count does
     not enter): zCDP converted by Canonne, Kamath and Steinke (2020), the
     releases taken as one Gaussian of sensitivity ``sqrt(W)``
     (:func:`~sklearn_labeldp.accounting.gaussian_sigma_for_approx_dp`),
     against the exact Gaussian profile (Balle and Wang 2018) now;
   - output and objective perturbation of the logistic loss and of
     DPLinearSVC's Huber hinge (full DP, ``C = 1``): calibrated for the
     substitution of a whole example (``g = 2``, ``r = 2``, ``epsilon / K``
     per problem).

2. Accuracy on UCI Adult at matched label epsilon, 3 seeds: the current
   calibration against the former one, the latter reproduced by fitting the
   current code at the label epsilon the current accounting records for the
   former noise (the same noise, hence the same model up to the draw), for
   ``DPLogisticRegression(solver="sgd", privacy="full", batch_size=256)`` and
   ``DPLogisticRegression(solver="output", privacy="full")``.

Usage::

    python benchmarks/accounting_linear.py [--epsilons 0.5 1 2 4 8] [--seeds 3]
        [--data /work/shared/data/adult] [--skip-accuracy]
"""

import argparse
import math
import time
import warnings

import numpy as np

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    calibrate_dp_sgd,
    gaussian_epsilon,
    gaussian_sigma_for_approx_dp,
)
from sklearn_labeldp.accounting._label_change import bounded_label_change_epsilon
from sklearn_labeldp.linear_model import DPLeastSquaresClassifier, DPLogisticRegression
from sklearn_labeldp.linear_model._calibration import (
    first_order_params,
    objective_perturbation_params,
    perturbation_params,
    second_order_params,
)
from sklearn_labeldp.linear_model._least_squares import (
    least_squares_label_sensitivities,
    least_squares_sensitivities,
)
from sklearn_labeldp.linear_model._losses import HuberHingeLoss, LogisticLoss, neighbour_bounds

N, D, DELTA = 30_162, 105, 1e-5
BATCH, SGD_STEPS, NEWTON_STEPS = 256, 300, 5


def _dpa():
    import dp_accounting

    return dp_accounting


def _minibatch_row(eps, k):
    m = 1 if k == 2 else k
    q, clip = BATCH / N, math.sqrt(m)
    old, _, _ = calibrate_dp_sgd(eps, DELTA, q, SGD_STEPS)
    bounds = dict(norm_bound=min(clip, math.sqrt(m)),
                  change_bound=min(2 * clip, 1.0 if m == 1 else math.sqrt(2)), straddle=m == 1)
    after, _, _ = bounded_label_change_epsilon(old * clip, q, SGD_STEPS, DELTA, **bounds)
    dpa = _dpa()
    refs = []
    pairs = [(dpa.NeighboringRelation.REPLACE_ONE, bounds["norm_bound"])]
    if bounds["straddle"]:
        pairs.append((dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, bounds["change_bound"]))
    for relation, bound in pairs:
        accountant = dpa.pld.PLDAccountant(relation)
        accountant.compose(dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(old * clip / bound)), SGD_STEPS))
        refs.append(accountant.get_epsilon(DELTA))
    new = first_order_params("sgd", epsilon=eps, delta=DELTA, n_samples=N, n_classes=k,
                             reg=1e-4, privacy="full", n_noisy_steps=SGD_STEPS,
                             batch_size=BATCH, max_grad_norm=None, learning_rate=None)
    return after, min(refs), old / new["noise_multiplier"]


def _gaussian_row(solver, eps, k):
    if solver == "sgd":
        new = first_order_params("sgd", epsilon=eps, delta=DELTA, n_samples=N, n_classes=k,
                                 reg=1e-4, privacy="label", n_noisy_steps=SGD_STEPS,
                                 batch_size=None, max_grad_norm=None, learning_rate=None)
        counts = {"gradient": SGD_STEPS}
    else:
        new = second_order_params("newton", epsilon=eps, delta=DELTA, n_samples=N,
                                  n_classes=k, reg=1e-4, privacy="label",
                                  n_noisy_steps=NEWTON_STEPS)
        counts = {"gradient": NEWTON_STEPS}
    sens = {"gradient": new["sensitivities"]["gradient"]}
    return _former_gaussian(eps, counts, sens, sens, new["noise_multiplier"])


def _least_squares_row(privacy, eps):
    # Only ratios of the sensitivities matter: taken at R = 1, as the estimator does.
    sens = least_squares_sensitivities(privacy, "weighted", 1.0)
    shifts = least_squares_label_sensitivities(privacy, "weighted", 1.0)
    new = DPLeastSquaresClassifier(epsilon=eps, delta=DELTA, privacy=privacy)
    return _former_gaussian(eps, dict.fromkeys(sens, 1), sens, shifts,
                            new._noise_multiplier()[0])


def _former_gaussian(eps, counts, sens, shifts, new_multiplier):
    """The former zCDP noise multiplier, the exact epsilon of that noise (the library's
    and dp-accounting's), and its ratio to the current multiplier at ``eps``."""
    root = math.sqrt(math.fsum(counts[k] * (shifts[k] / sens[k]) ** 2 for k in counts))
    old = gaussian_sigma_for_approx_dp(eps, DELTA, sensitivity=root)
    mu_old = root / old
    after = gaussian_epsilon(mu_old, DELTA)
    pld = _dpa().pld.privacy_loss_distribution.from_gaussian_mechanism(1.0 / mu_old)
    return after, pld.get_epsilon_for_delta(DELTA), old / new_multiplier


def _perturbation_row(solver, loss, eps, k):
    """The former full-DP calibration (substitution, eps / K per problem), the label
    cost of its noise, and the noise ratio at the same label epsilon."""
    reg = 1.0 / (2 * N)  # C = 1 with intercept
    touched = 1 if k == 2 else 2
    eps_old = eps if k == 2 else eps / k
    g_label, r_label = neighbour_bounds(loss, "label")
    if solver == "output":
        scale_old = 2.0 / (N * reg * eps_old)
        after = touched * g_label / (N * reg * scale_old)
    else:
        eps_prime, extra = objective_perturbation_params(eps_old, N, reg, loss.c, hessian_rank=2)
        scale_old = 2.0 / eps_prime
        after = touched * (g_label / scale_old
                           + r_label * math.log1p(loss.c / (N * (reg + extra))))
    new = perturbation_params(solver, epsilon=eps, n_samples=N, n_classes=k, reg=reg,
                              loss=loss, privacy="full")
    return after, after, scale_old / new["noise_scale"]


MECHANISMS = {
    "DP-SGD minibatch (full)": _minibatch_row,
    "DP-SGD full batch": lambda e, k: _gaussian_row("sgd", e, k),
    "DP-Newton": lambda e, k: _gaussian_row("newton", e, k),
    "DP-LS weighted (label)": lambda e, k: _least_squares_row("label", e),
    "DP-LS weighted (full)": lambda e, k: _least_squares_row("full", e),
    "output pert. logistic (full)": lambda e, k: _perturbation_row("output", LogisticLoss(), e, k),
    "objective pert. logistic (full)": lambda e, k: _perturbation_row(
        "objective", LogisticLoss(), e, k),
    "output pert. SVC (full)": lambda e, k: _perturbation_row("output", HuberHingeLoss(0.5), e, k),
    "objective pert. SVC (full)": lambda e, k: _perturbation_row(
        "objective", HuberHingeLoss(0.5), e, k),
}


def recorded_table(epsilons):
    print("| mechanism | K | eps before | eps after (same noise) | tight ref. | after/ref "
          "| noise before/after (same eps) |")
    print("|---|---|---|---|---|---|---|")
    for name, row in MECHANISMS.items():
        for k in (2, 10):
            for eps in epsilons:
                after, ref, noise = row(eps, k)
                print(f"| {name} | {k} | {eps:g} | {after:.3f} | {ref:.3f} | {after / ref:.3f} "
                      f"| {noise:.2f} |", flush=True)


def _adult(data_dir):
    from sklearn_labeldp.datasets import load_adult

    d = load_adult(data_dir, norm_bound=1e6)
    return d.X_train, d.y_train, d.X_test, d.y_test


def _former_label_epsilon(solver, eps, n):
    """The label epsilon the current accounting records for the former noise at ``eps``."""
    if solver == "sgd":
        q = BATCH / n
        old, _, _ = calibrate_dp_sgd(eps, DELTA, q, SGD_STEPS)
        return bounded_label_change_epsilon(old, q, SGD_STEPS, DELTA, norm_bound=1.0,
                                            change_bound=1.0, straddle=True)[0]
    return eps / 2.0  # output perturbation, logistic, K = 2: g_label / g_full


def accuracy_table(epsilons, seeds, data_dir):
    X, y, X_test, y_test = _adult(data_dir)
    data_norm = float(np.median(np.linalg.norm(X, axis=1)))  # a public bound for the benchmark
    configs = {
        "sgd": dict(solver="sgd", batch_size=BATCH, n_noisy_steps=SGD_STEPS, delta=DELTA, C=1.0),
        "output": dict(solver="output"),
    }
    print("\n| estimator | eps | before (mean +- sd) | after (mean +- sd) | gain |")
    print("|---|---|---|---|---|")
    for name, params in configs.items():
        for eps in epsilons:
            scores = {"before": [], "after": []}
            for which, label_eps in (("before", _former_label_epsilon(name, eps, len(y))),
                                     ("after", eps)):
                for seed in range(seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        clf = DPLogisticRegression(
                            epsilon=label_eps, privacy="full", data_norm=data_norm,
                            classes=[0, 1], random_state=seed,
                            accountant=BudgetAccountant(delta=1.0), **params).fit(X, y)
                    scores[which].append(clf.score(X_test, y_test))
            b, a = np.array(scores["before"]), np.array(scores["after"])
            print(f"| {name} | {eps:g} | {b.mean():.4f} +- {b.std():.4f} | "
                  f"{a.mean():.4f} +- {a.std():.4f} | {a.mean() - b.mean():+.4f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1, 2, 4, 8])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--data", default="/work/shared/data/adult")
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    start = time.time()
    recorded_table(args.epsilons)
    if not args.skip_accuracy:
        accuracy_table(args.epsilons, args.seeds, args.data)
    print(f"\n({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
