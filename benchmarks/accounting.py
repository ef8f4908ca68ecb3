"""Recorded epsilon before and after the tight accounting, and the accuracy it buys on Adult.

Part ``records`` (no training): for each mechanism and a grid of parameters,

* DP-SGD under a label change (Poisson sampling rate ``q``, ``T`` steps,
  target label epsilon): *before*, the add/remove guarantee of the run
  (dp-accounting's RDP accountant, the old default) turned into a label-change
  guarantee by group privacy, ``(2 eps_ex, (1 + e^eps_ex) delta_ex)`` at the
  same total delta; *after*, what ``DPSGDClassifier`` records now
  (:func:`~sklearn_labeldp.accounting.calibrate_dp_sgd_label_change`, the
  replace-one privacy loss distribution); the *reference*, the same
  replace-one PLD built here from dp-accounting's events; and the noise
  ratio, the group-privacy calibration's noise over the new one;
* PATE's Gaussian aggregators (GNMax, Confident-GNMax with ``sigma1 = 2
  sigma2``; ``Q`` queries): *before*, dp-accounting's RDP accountant on the
  composed Gaussian; *after*, the aggregator's record now; the *reference*,
  dp-accounting's PLD of the same Gaussian; and the noise ratio;
* a 19-fit search (``GridSearchCV``, 9 candidates x 2 folds + refit) of
  one-stage ``RRWithPriorClassifier`` fits at 0.5 (K-ary randomized
  response): *before*, the sum 9.5; *after*, ``total(slack=1e-6)``; the
  *reference*, dp-accounting's PLD of 19 K-ary randomized responses.

Part ``descriptions`` (also run with ``records``): the tight total
(``total(slack=1e-6)``) of 19 fits at epsilon 0.5 of each mechanism whose
record now carries its exact description (RAPPOR, ALIBI's Laplace and
Gaussian one-hot vectors, Laplace label noise and counts, RRWithPrior with
its smallest set, DP least squares, Gaussian label noise), before and after,
against a reference computed here (binomial sums, dp-accounting's events,
the Gaussian's closed-form profile), and for the Gaussian mechanisms the noise
the old zCDP calibration used over the exact one's.

Part ``adult`` (accuracy gained at matched epsilon, UCI Adult from
``--data-dir``, a training subset of ``--n-train`` rows, the whole test file):
each learner is fitted with the noise the old accounting would have used for
the target and with the noise the new one uses, both meeting the same label
budget, over ``--seeds`` seeds:

* DP-SGD, ``DPSGDClassifier`` around an MLP with 32 hidden units (batch 256,
  5 epochs; label epsilon 0.1, 0.3, 1 and 4); the old noise is obtained by
  fitting at the label epsilon the new accounting records for the
  group-privacy noise;
* PATE (250 logistic-regression teachers, Confident-GNMax, 200 queries, a
  logistic-regression student), likewise with the old RDP noise;
* the 19-fit search of ``RRWithPriorClassifier(LogisticRegression())`` over
  ``C`` under a total of 9.5 at ``delta = 1e-6``: 0.5 per fit with the sum,
  and with ``BudgetAccountant(9.5, 1e-6, slack=1e-6)`` the largest per-fit
  epsilon whose tight composition fits.

Run ``nice python benchmarks/accounting.py`` (both parts; ``--part records``
takes a few minutes, ``--part adult`` about ten on one core).
"""

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

DELTA = 1e-5
SEARCH_DELTA = 1e-6


def _dpa():
    import dp_accounting

    return dp_accounting


def _pld_epsilon(event, delta, relation):
    dpa = _dpa()
    accountant = dpa.pld.PLDAccountant(neighboring_relation=relation,
                                       value_discretization_interval=1e-4)
    return accountant.compose(event).get_epsilon(delta)


def _rdp_epsilon(event, delta):
    dpa = _dpa()
    return dpa.rdp.RdpAccountant().compose(event).get_epsilon(delta)


def group_privacy_label_epsilon(sigma, q, steps, delta):
    """The old record of a run: 2 eps_ex at delta_ex with (1 + e^eps_ex) delta_ex = delta (RDP)."""
    dpa = _dpa()
    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)),
                                    steps)
    example = _rdp_epsilon(event, delta / 2)
    for _ in range(20):  # fixed point of delta_ex = delta / (1 + e^eps_ex), from above
        example_delta = delta / (1 + math.exp(example))
        example = _rdp_epsilon(event, example_delta)
    return 2 * example


def dp_sgd_rows(grid):
    from sklearn_labeldp.accounting import calibrate_dp_sgd, calibrate_dp_sgd_label_change

    dpa = _dpa()
    rows = []
    for q, steps, target in grid:
        sigma_old = calibrate_dp_sgd(target, DELTA, q, steps, method="rdp")[0]
        sigma, label_epsilon, _ = calibrate_dp_sgd_label_change(target, DELTA, q, steps)
        event = dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
        reference = _pld_epsilon(event, DELTA, dpa.NeighboringRelation.REPLACE_ONE)
        before = group_privacy_label_epsilon(sigma, q, steps, DELTA)
        rows.append((f"DP-SGD q={q:g} T={steps} eps={target:g}", sigma, before, label_epsilon,
                     reference, sigma_old / sigma))
    return rows


def pate_rows(grid):
    from sklearn_labeldp.accounting import approx_dp_to_zcdp
    from sklearn_labeldp.mechanisms import (
        confident_gnmax_sigmas,
        confident_gnmax_spend,
        gnmax_sigma,
        gnmax_spend,
    )

    dpa = _dpa()
    rows = []
    for aggregator, n_queries, target in grid:
        if aggregator == "GNMax":
            sigma = gnmax_sigma(target, DELTA, n_queries)
            spend = gnmax_spend(sigma, n_queries, DELTA)
        else:
            sigma = confident_gnmax_sigmas(target, DELTA, n_queries, 2.0)[1]
            spend = confident_gnmax_spend(2.0 * sigma, sigma, n_queries, DELTA)
        mu = spend.description.value  # the composed Gaussian, sensitivity mu noise stds
        event = dpa.GaussianDpEvent(1.0 / mu)
        reference = _pld_epsilon(event, DELTA, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
        before = _rdp_epsilon(event, DELTA)
        # The old calibration: the largest rho whose zCDP conversion meets the target.
        mu_old = math.sqrt(2 * approx_dp_to_zcdp(target, DELTA))
        rows.append((f"{aggregator} Q={n_queries} eps={target:g}", sigma, before,
                     spend.epsilon, reference, mu / mu_old))
    return rows


def search_rows(n_classes_grid):
    from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend

    dpa = _dpa()
    rows = []
    for n_classes in n_classes_grid:
        acc = BudgetAccountant()
        for _ in range(19):
            acc.spend(PrivacySpend.randomized_response(0.5, n_classes))
        noise = n_classes / (math.exp(0.5) + n_classes - 1)
        pld = dpa.pld.privacy_loss_distribution.from_randomized_response(
            noise, n_classes, neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
        reference = pld.self_compose(19).get_epsilon_for_delta(SEARCH_DELTA)
        rows.append((f"19-fit search RR eps=0.5 K={n_classes}", math.nan, acc.total().epsilon,
                     acc.total(slack=SEARCH_DELTA).epsilon, reference, math.nan))
    return rows


def print_records(quick):
    dp_sgd_grid = [(0.01, 1000, 1.0), (0.01, 1000, 8.0), (0.0256, 200, 1.0),
                   (0.0256, 200, 4.0)]
    pate_grid = [(agg, q, eps) for agg in ("GNMax", "Confident-GNMax")
                 for q in (100, 1000) for eps in (1.0, 4.0)]
    if quick:
        dp_sgd_grid, pate_grid = dp_sgd_grid[2:3], pate_grid[:2]
    start = time.perf_counter()
    rows = dp_sgd_rows(dp_sgd_grid) + pate_rows(pate_grid) + search_rows((2, 3, 10))
    header = (f"{'mechanism and parameters':38s} {'before':>7s} {'after':>7s} {'ref':>7s} "
              f"{'after/ref':>9s} {'before/ref':>10s} {'noise old/new':>13s}")
    print(f"recorded label epsilon (delta = {DELTA:g}; the search at {SEARCH_DELTA:g})")
    print(header)
    print("-" * len(header))
    failures = []
    for name, _sigma, before, after, reference, noise in rows:
        ratio = after / reference
        noise_text = "" if math.isnan(noise) else f"{noise:13.3f}"
        print(f"{name:38s} {before:7.3f} {after:7.3f} {reference:7.3f} {ratio:9.3f} "
              f"{before / reference:10.3f} {noise_text}")
        limit = 1.10 if name.startswith("DP-SGD") else 1.05 if name.startswith("19") else 1.02
        if not 0.99 <= ratio <= limit:
            failures.append(f"{name}: after/reference {ratio:.3f} outside [0.99, {limit}]")
    print(f"({time.perf_counter() - start:.0f} s)")
    return failures


# --- 19 fits of each described mechanism -------------------------------------------------

N_FITS = 19
FIT_EPSILON = 0.5
FIT_DELTA = 1e-7  # each approximate-DP fit's; the tight totals add SEARCH_DELTA as slack


def _binary_rr_composition(epsilon, m, delta):
    """Exact epsilon of m binary randomized responses at epsilon (binomial sum), dp-free."""
    from scipy.optimize import brentq
    from scipy.stats import binom

    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    j = np.arange(m + 1)
    p_law, q_law = binom.pmf(j, m, p), binom.pmf(j, m, 1 - p)

    def excess(e):
        return float(np.sum(np.maximum(p_law - math.exp(e) * q_law, 0.0))) - delta

    return brentq(excess, 0.0, m * epsilon, xtol=1e-12)


def _bounded_range_composition(epsilon, m, delta, h=1e-3):
    """m-fold composition of the epsilon-bounded-range envelope pair, dp-free.

    Its privacy loss has the density e^((epsilon + l) / 2) / (2 (e^epsilon - 1))
    on [-epsilon, epsilon]; convolved m times on a grid of midpoints.
    """
    from scipy.optimize import brentq

    losses = np.arange(-epsilon + h / 2, epsilon, h)
    masses = np.exp((epsilon + losses) / 2) / (2 * math.expm1(epsilon)) * h
    law = masses
    for _ in range(m - 1):
        law = np.convolve(law, masses)
    grid = np.arange(law.size) * h + m * losses[0]

    def excess(e):
        return float(np.sum(law * np.maximum(0.0, 1 - np.exp(e - grid)))) - delta

    return brentq(excess, 0.0, m * epsilon, xtol=1e-12)


def _tight(spend, n=N_FITS):
    from sklearn_labeldp.accounting import BudgetAccountant

    acc = BudgetAccountant(math.inf, 1.0)
    for _ in range(n):
        acc.spend(spend)
    return acc.total(slack=SEARCH_DELTA).epsilon


def description_rows():
    """(name, tight total before, after, reference, noise old/new) for 19 fits at 0.5.

    *before*: ``total(slack=1e-6)`` of the records as the library made them
    before they carried these descriptions (a pure record as binary randomized
    response, an approximate one without description by the sum); *after*:
    the same total of today's records; *reference*: computed here without the
    library's composition (binomial sums, dp-accounting's events, the
    Gaussian's closed-form profile).
    """
    from sklearn_labeldp.accounting import (
        PrivacySpend,
        calibrate_gaussian_sigma,
        gaussian_epsilon,
        gaussian_sigma_for_approx_dp,
    )
    from sklearn_labeldp.linear_model import DPLeastSquaresClassifier
    from sklearn_labeldp.mechanisms import gaussian_label_sigma

    dpa = _dpa()
    pld = dpa.pld.privacy_loss_distribution
    eps, total_delta = FIT_EPSILON, N_FITS * FIT_DELTA + SEARCH_DELTA
    pure_before = _tight(PrivacySpend.leaf("pure", eps))
    rows = [("RAPPOR (vector approximation)", pure_before, _tight(PrivacySpend.rappor(eps)),
             _binary_rr_composition(eps / 2, 2 * N_FITS, SEARCH_DELTA), math.nan)]
    laplace = pld.from_laplace_mechanism(2 / eps, value_discretization_interval=1e-4)
    rows.append(("ALIBI, Laplace one-hot", pure_before, _tight(PrivacySpend.laplace(eps / 2, 2)),
                 laplace.self_compose(2 * N_FITS).get_epsilon_for_delta(SEARCH_DELTA),
                 math.nan))
    laplace = pld.from_laplace_mechanism(1 / eps, value_discretization_interval=1e-4)
    rows.append(("Laplace label noise / Laplace count", pure_before,
                 _tight(PrivacySpend.laplace(eps, 1)),
                 laplace.self_compose(N_FITS).get_epsilon_for_delta(SEARCH_DELTA), math.nan))
    for k_min in (3, 5):
        noise = k_min / (math.exp(eps) + k_min - 1)
        rr = pld.from_randomized_response(noise, k_min,
                                          neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
        rows.append((f"RRWithPrior, smallest set {k_min}", pure_before,
                     _tight(PrivacySpend.randomized_response(eps, k_min)),
                     rr.self_compose(N_FITS).get_epsilon_for_delta(SEARCH_DELTA), math.nan))
    rows.append(("exponential mechanism (bounded range)", pure_before,
                 _tight(PrivacySpend.bounded_range(eps)),
                 _bounded_range_composition(eps, N_FITS, SEARCH_DELTA), math.nan))
    # Gaussian mechanisms: before, zCDP-calibrated records composed by the sum.
    for formulation in ("weighted", "ridge"):
        clf = DPLeastSquaresClassifier(epsilon=eps, delta=FIT_DELTA, formulation=formulation)
        s, mu, _ = clf._noise_multiplier(formulation)
        root = mu * s  # sqrt(W): the releases' label-change weight
        s_old = gaussian_sigma_for_approx_dp(eps, FIT_DELTA, sensitivity=root)
        spend = PrivacySpend.leaf("DP least squares", eps, FIT_DELTA, description=("gaussian", mu))
        rows.append((f"DP least squares ({formulation})", N_FITS * eps, _tight(spend),
                     gaussian_epsilon(math.sqrt(N_FITS) * mu, total_delta), s_old / s))
    sigma_old = gaussian_sigma_for_approx_dp(eps, FIT_DELTA, sensitivity=math.sqrt(2))
    sigma = calibrate_gaussian_sigma(eps, FIT_DELTA, 2.0)
    spend = PrivacySpend.leaf("Gaussian one-hot", eps, FIT_DELTA,
                              description=("gaussian", math.sqrt(2) / sigma))
    rows.append(("ALIBI, Gaussian one-hot (exact calibration)", N_FITS * eps, _tight(spend),
                 gaussian_epsilon(math.sqrt(N_FITS * 2) / sigma, total_delta), sigma_old / sigma))
    # NoisyLabelRegressor(mechanism="gaussian"): its noise by the exact profile (the
    # zCDP noise it drew before stated eps 0.5 where its description implies less, a
    # record the ledger now refuses); labels of range width 1, so mu = 1 / sigma.
    sigma_old = gaussian_label_sigma(eps, FIT_DELTA, 1.0, method="cks")
    sigma = gaussian_label_sigma(eps, FIT_DELTA, 1.0, method="exact")
    spend = PrivacySpend.leaf("Gaussian label noise", eps, FIT_DELTA,
                              description=("gaussian", 1.0 / sigma))
    rows.append(("Gaussian label noise (exact calibration)", N_FITS * eps, _tight(spend),
                 gaussian_epsilon(math.sqrt(N_FITS) / sigma, total_delta), sigma_old / sigma))
    return rows


def print_descriptions():
    start = time.perf_counter()
    rows = description_rows()
    header = (f"{'mechanism (19 fits at eps 0.5)':44s} {'sum':>6s} {'before':>7s} {'after':>7s} "
              f"{'ref':>7s} {'after/ref':>9s} {'noise old/new':>13s}")
    print(f"\ntight total (slack {SEARCH_DELTA:g}; approximate-DP fits at delta "
          f"{FIT_DELTA:g} each) of {N_FITS} fits at epsilon {FIT_EPSILON}")
    print(header)
    print("-" * len(header))
    failures = []
    for name, before, after, reference, noise in rows:
        ratio = after / reference
        noise_text = "" if math.isnan(noise) else f"{noise:13.3f}"
        print(f"{name:44s} {N_FITS * FIT_EPSILON:6.2f} {before:7.3f} {after:7.3f} "
              f"{reference:7.3f} {ratio:9.3f} {noise_text}")
        if not 0.99 <= ratio <= 1.01 or after > before + 1e-9:
            failures.append(f"{name}: after/reference {ratio:.3f}, after {after:.3f} vs "
                            f"before {before:.3f}")
    print(f"({time.perf_counter() - start:.0f} s)")
    return failures


# --- accuracy on Adult ------------------------------------------------------------------


def _adult(data_dir, n_train, seed):
    from sklearn_labeldp.datasets import load_adult

    data = load_adult(data_dir, norm_bound=5.0)
    rng = np.random.default_rng(seed)
    rows = rng.choice(data.X_train.shape[0], size=n_train, replace=False)
    X = data.X_train[rows].astype(np.float32)
    return X, data.y_train[rows], data.X_test.astype(np.float32), data.y_test


def adult_dp_sgd(X, y, X_test, y_test, epsilon, seeds):
    import torch

    from sklearn_labeldp.accounting import (
        calibrate_dp_sgd,
        subsampled_gaussian_label_epsilon,
    )
    from sklearn_labeldp.nn import MLP, DPSGDClassifier, LabelDPNetClassifier

    torch.set_num_threads(1)
    net = LabelDPNetClassifier(MLP, module__hidden_units=(32,), max_epochs=5, batch_size=256,
                               lr=0.5)
    q = 256 / X.shape[0]
    steps = 5 * math.ceil(1 / q)
    sigma_old = calibrate_dp_sgd(epsilon, DELTA, q, steps, method="rdp")[0]
    # The old noise under the new accounting records less than the target: fit at that.
    equivalent = subsampled_gaussian_label_epsilon(sigma_old, q, steps, DELTA)
    scores = {}
    for label, target in (("before", equivalent), ("after", epsilon)):
        accs, sigma = [], None
        for seed in seeds:
            clf = DPSGDClassifier(net, epsilon=target, delta=DELTA, classes=[0, 1],
                                  random_state=seed).fit(X, y)
            accs.append(clf.score(X_test, y_test))
            sigma = clf.mechanism_params_["noise_multiplier"]
        scores[label] = (np.mean(accs), np.std(accs), sigma)
    return scores


def adult_pate(X, y, X_test, y_test, epsilon, seeds):
    from sklearn.linear_model import LogisticRegression

    from sklearn_labeldp.accounting import approx_dp_to_zcdp
    from sklearn_labeldp.classifiers import PATEClassifier
    from sklearn_labeldp.mechanisms import confident_gnmax_spend

    # The old calibration spent rho = approx_dp_to_zcdp(epsilon) (zCDP/RDP): the
    # same Gaussian, exactly accounted, records this epsilon.
    mu_old = math.sqrt(2 * approx_dp_to_zcdp(epsilon, DELTA))
    # rho = mu^2 / 2 = Q / (2 sigma1^2) + Q / sigma2^2 with sigma1 = 2 sigma2, Q = 200.
    sigma2 = math.sqrt(2 * 200 * (1 / 8 + 1)) / mu_old
    equivalent = confident_gnmax_spend(2 * sigma2, sigma2, 200, DELTA).epsilon
    scores = {}
    for label, target in (("before", equivalent), ("after", epsilon)):
        accs, sigma = [], None
        for seed in seeds:
            clf = PATEClassifier(LogisticRegression(max_iter=200), n_teachers=250,
                                 n_queries=200, epsilon=target, delta=DELTA, classes=[0, 1],
                                 random_state=seed).fit(X, y)
            accs.append(clf.score(X_test, y_test))
            sigma = clf.privacy_spend_.parts[-1].params.get("sigma2", math.nan)
        scores[label] = (np.mean(accs), np.std(accs), sigma)
    return scores


def _per_fit_epsilon(total, n_fits, n_classes, slack):
    """The largest per-fit epsilon whose tight composition over n_fits fits ``total``."""
    from sklearn_labeldp.accounting import PrivacySpend
    from sklearn_labeldp.accounting._pld import tight_total

    def composed(eps):
        return tight_total([PrivacySpend.randomized_response(eps, n_classes)] * n_fits,
                           slack)[0]

    lo, hi = total / n_fits, 2 * total / n_fits
    for _ in range(14):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if composed(mid) <= total else (lo, mid)
    return lo


def adult_search(X, y, X_test, y_test, seeds):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV

    from sklearn_labeldp.accounting import BudgetAccountant
    from sklearn_labeldp.classifiers import RRWithPriorClassifier

    per_fit = _per_fit_epsilon(9.5, 19, 2, SEARCH_DELTA)
    grid = {"estimator__C": list(np.logspace(-3, 1, 9))}
    scores = {}
    for label, eps, slack in (("before", 0.5, None), ("after", per_fit, SEARCH_DELTA)):
        accs = []
        for seed in seeds:
            acc = BudgetAccountant(9.5, SEARCH_DELTA, slack=slack)
            clf = RRWithPriorClassifier(LogisticRegression(max_iter=300), epsilon=eps,
                                        classes=[0, 1], random_state=seed, accountant=acc)
            search = GridSearchCV(clf, grid, cv=2).fit(X, y)
            assert len(acc.spends) == 19
            accs.append(search.score(X_test, y_test))
        scores[label] = (np.mean(accs), np.std(accs), eps)
    return scores


def print_adult(data_dir, n_train, n_seeds, quick, learners):
    if not os.path.exists(os.path.join(data_dir, "adult.data.csv")):
        print(f"no UCI Adult under {data_dir!r}: skipping the accuracy part")
        return []
    X, y, X_test, y_test = _adult(data_dir, n_train, 0)
    seeds = list(range(n_seeds))
    print(f"\naccuracy on the Adult test file ({X_test.shape[0]} rows), {n_train} training "
          f"rows, mean (std) over {n_seeds} seeds, same label budget before and after")
    header = (f"{'learner':34s} {'eps':>5s} {'before':>15s} {'after':>15s} {'gain':>7s} "
              f"{'noise/eps per fit: before -> after':>36s}")
    print(header)
    print("-" * len(header))
    runs = []
    if "dp-sgd" in learners:
        runs += [("DP-SGD (MLP 32)", eps, adult_dp_sgd)
                 for eps in ((1.0,) if quick else (0.1, 0.3, 1.0, 4.0))]
    if "pate" in learners:
        runs += [("PATE Confident-GNMax", 1.0, adult_pate)]
    if "search" in learners:
        runs += [("19-fit search, total 9.5", 9.5, None)]
    for name, eps, fn in runs:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if fn is None:
                scores = adult_search(X, y, X_test, y_test, seeds)
            else:
                scores = fn(X, y, X_test, y_test, eps, seeds)
        (b, bs, bn), (a, as_, an) = scores["before"], scores["after"]
        print(f"{name:34s} {eps:5.1f} {b:8.4f} ({bs:.4f}) {a:8.4f} ({as_:.4f}) "
              f"{a - b:+7.4f} {bn:15.4f} -> {an:.4f}  "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    return []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["records", "descriptions", "adult", "all"],
                        default="all")
    parser.add_argument("--data-dir", default=os.environ.get("SKLEARN_LABELDP_ADULT",
                                                             "../shared/data/adult"))
    parser.add_argument("--n-train", type=int, default=10000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a few rows of each table")
    parser.add_argument("--learners", default="dp-sgd,pate,search",
                        help="comma-separated, among dp-sgd, pate, search")
    args = parser.parse_args(argv)
    failures = []
    if args.part in ("records", "all"):
        failures += print_records(args.quick)
    if args.part in ("records", "descriptions", "all"):
        failures += print_descriptions()
    if args.part in ("adult", "all"):
        failures += print_adult(args.data_dir, args.n_train, args.seeds, args.quick,
                                args.learners.split(","))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
