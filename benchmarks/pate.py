"""PATE on UCI Adult against the other label-DP methods, and its label-memorization audit.

**1. Adult: test accuracy against epsilon.** ``epsilon`` in {0.5, 1, 2.66, 5},
``delta = 1e-5`` for the Gaussian mechanisms; median test accuracy over 3
seeds (1 with ``--quick``). Data: ``adult.data.csv`` / ``adult.test.csv`` read
in place from ``--data-dir`` (default ``../shared/data/adult/`` relative to the
repository root), label income ``>50K``. Features (public under label DP, the
same for every method): the 6 numeric columns standardised and the 8
categorical columns one-hot encoded, fitted on the training features only
(``sklearn_labeldp.datasets.load_adult`` without its row clipping). Methods:

- ``PATEClassifier``: ``N_TEACHERS = 250`` teachers (each on ~130 rows),
  ``N_QUERIES = 200`` queries, logistic-regression teachers and a
  logistic-regression student fitted on the answered queries, with the GNMax
  aggregator (main row); variants with a semi-supervised student
  (``SelfTrainingClassifier(LogisticRegression())``, which also sees every
  unlabeled training input), depth-4 decision-tree teachers, the library's
  former default aggregator Confident-GNMax (``threshold=0.6``, ``sigma_ratio=2``) and
  LNMax (the 2017 aggregator, pure eps-DP). ``n_answered_`` and the calibrated
  vote noise are reported;
- ``ALIBIClassifier`` (Laplace noise, Bayesian post-processing, 2 rounds) and
  LP-2ST (``RRWithPriorClassifier(n_stages=2)``), both with a
  ``LogisticRegression`` base;
- ``DPLogisticRegression`` with all its defaults (objective perturbation,
  ``C=1``, ``data_norm="auto"``, which reads the public features only);
- baselines in the same run: the non-private ``LogisticRegression``, the
  majority class, and the published PATE result on Adult (Papernot et al.
  2017, Appendix C): 83.0% at (eps, delta) = (2.66, 1e-5), non-private 85.0%.

Caveat printed with the table: Papernot et al.'s eps is *data-dependent* (the
moments accountant evaluated on the actual vote histograms, a quantity that is
itself computed from the labels and released without noise), whereas every eps
here is a data-independent guarantee: the noise is calibrated so that the
(eps, delta) bound holds for every data set, with every query paid for. At
the same nominal eps our PATE therefore adds much more noise. Their setup also
differs (random-forest teachers, a student trained on held-out data).

Hyper-parameters were *not* tuned on the test labels. 250 teachers is the
number Papernot et al. used on Adult; the query count (200), the teacher models
and the students were chosen with a small development sweep (n_teachers in
{250, 500, 1000}, n_queries in {100, 200, 400}, logistic vs depth-3/4/5 tree
teachers, plain vs self-training student, GNMax vs Confident-GNMax) scored on
an 80/20 split of the *training* set, two seeds. That selection read training
labels non-privately and is not accounted; the accuracy surface was flat (most
settings within 2 points), so the rows are not sensitive to it. Every
estimator uses scikit-learn's default ``C=1``.

**2. Label-memorization audit** (``sklearn_labeldp.audit.label_memorization_audit``,
Malek et al. 2021, Section 5) of PATE and ALIBI on a synthetic task where the
base learner memorises: 3 Gaussian classes on the unit circle
(``make_circle_gaussians``, std 0.5, ``AUDIT_N`` training rows, a quarter of
them canaries with a wrong label) and a k-NN base with ``k = 20`` and distance
weights, which interpolates every training label (its score at a training
point is that point's label) yet generalises like a 20-NN. ALIBI uses
``KNeighborsRegressor`` of that kind; PATE has 200 5-NN teachers, 200
queries, GNMax and a student ``KNeighborsClassifier`` of that kind fitted on
the answered queries. Epsilons {1, 2, 4, 8} (2 and 8 with ``--quick``); the
table gives the test accuracy of a fit on the clean labels (to check that the
two are compared at roughly matched accuracy), the attack accuracy, its 95%
Clopper-Pearson lower bound, ``eps_lower`` and ``eps_lower / eps``, medians
over the seeds. Malek et al. (Table 1) find PATE's audited eps far below its
bound and ALIBI's within about 2.5x of it (ratio ~0.4); the checks printed at
the end compare with that, whatever they show.

**3. Figure** ``benchmarks/results/pate_adult.png`` (``--out``): Adult accuracy
against eps for every label-DP method, the non-private line, the published
PATE point and the majority-class accuracy.

**4. Defaults** (``--defaults``, instead of sections 1-3): ``PATEClassifier``
with only ``epsilon``, ``delta = 1e-5``, ``classes`` and ``random_state`` set
(``n_teachers="auto"``, ``n_queries="auto"``, ``aggregator="auto"``,
``student="auto"``: GNMax, balanced logistic-regression teachers, a
self-training student; see ``benchmarks/pate_defaults.py``), on the digits
(70/30 split, standardised), Adult (as in section 1) and two small sets,
``make_classification(n_samples=429, n_features=10, n_informative=5,
n_classes=K)`` with ``K`` = 2 and 3
(300 training rows); ``epsilon`` in {0.5, 1, 2, 4, 8}, median test accuracy
and answered queries over ``--seeds`` seeds, the resolved counts, and the
majority rate. A fit that raises is reported as ``error``; running the same
script on an earlier version of the library gives the "before" columns.

All BLAS pools are limited to 1 thread. Run ``python benchmarks/pate.py``
(a few minutes on 2 cores) or ``--quick`` (1 seed, smaller audit).
"""

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from sklearn_labeldp import ALIBIClassifier, PATEClassifier, RRWithPriorClassifier
from sklearn_labeldp.audit import label_memorization_audit
from sklearn_labeldp.datasets import load_adult, make_circle_gaussians
from sklearn_labeldp.linear_model import DPLogisticRegression

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data" / "adult"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "pate_adult.png"

EPSILONS = (0.5, 1.0, 2.66, 5.0)
DELTA = 1e-5
N_SEEDS, QUICK_SEEDS = 3, 1
CLASSES = np.array([0, 1])
N_TEACHERS = 250
N_QUERIES = 200
# A bound no row reaches: the loader's StandardScaler + one-hot features, unclipped.
UNCLIPPED = float(np.finfo(np.float64).max)

PUBLISHED_EPS, PUBLISHED_PATE, PUBLISHED_NONPRIVATE = 2.66, 0.830, 0.850

NONPRIVATE = "non-private LogisticRegression"
PATE_GNMAX = "PATE GNMax (LR teachers, LR student)"
PATE_SELF = "PATE GNMax, self-training student"
PATE_TREE = "PATE GNMax, depth-4 tree teachers"
PATE_CONF = "PATE Confident-GNMax (T=0.6, ratio 2)"
PATE_LNMAX = "PATE LNMax (pure DP)"
ALIBI = "ALIBI (Laplace, LR base)"
LP2ST = "LP-2ST (LR base)"
DPLR = "DPLogisticRegression (defaults)"
PATE_ROWS = (PATE_GNMAX, PATE_SELF, PATE_TREE, PATE_CONF, PATE_LNMAX)
PRIVATE_ROWS = (*PATE_ROWS, ALIBI, LP2ST, DPLR)

AUDIT_K = 3
AUDIT_SIGMA = 0.5
AUDIT_N, QUICK_AUDIT_N = 12000, 6000
AUDIT_N_TEST = 5000
AUDIT_EPSILONS, QUICK_AUDIT_EPSILONS = (1.0, 2.0, 4.0, 8.0), (2.0, 8.0)
AUDIT_NEIGHBORS = 20
AUDIT_PATE_TEACHERS = 200
AUDIT_PATE_QUERIES = 200
MATCHED = 0.02  # "roughly matched" test accuracy: within 2 points
ALIBI_MIN_RATIO = 0.3  # as in benchmarks/audit.py, at eps >= 2
PATE_MAX_RATIO = 0.1  # "far below its bound"


def logistic():
    return LogisticRegression(max_iter=1000)


# ---------------------------------------------------------------------------
# 1. Adult
# ---------------------------------------------------------------------------


def make_adult_estimator(name, eps, seed, n_jobs):
    """The estimator of one row of the Adult table at ``eps``."""
    if name == NONPRIVATE:
        return logistic()
    common = {"epsilon": eps, "classes": CLASSES, "random_state": seed}
    if name in PATE_ROWS:
        pate = {"n_teachers": N_TEACHERS, "n_queries": N_QUERIES, "delta": DELTA,
                "n_jobs": n_jobs, **common}
        teacher = DecisionTreeClassifier(max_depth=4) if name == PATE_TREE else logistic()
        student = SelfTrainingClassifier(logistic()) if name == PATE_SELF else logistic()
        aggregator = {PATE_CONF: "confident_gnmax", PATE_LNMAX: "lnmax"}.get(name, "gnmax")
        return PATEClassifier(teacher, student=student, aggregator=aggregator, **pate)
    if name == ALIBI:
        return ALIBIClassifier(logistic(), **common)
    if name == LP2ST:
        return RRWithPriorClassifier(logistic(), n_stages=2, **common)
    if name == DPLR:
        return DPLogisticRegression(**common)
    raise ValueError(name)


def vote_noise(params):
    """The calibrated noise of a fitted PATE, in votes."""
    if params["aggregator"] == "lnmax":
        return f"Laplace scale {1 / params['gamma']:.0f}"
    if params["aggregator"] == "gnmax":
        return f"sigma {params['noise_scale']:.1f}"
    return f"sigma1 {params['threshold_noise_scale']:.1f}, sigma2 {params['noise_scale']:.1f}"


def run_adult(data, epsilons, seeds, n_jobs):
    """{row: {eps: median accuracy}}, {PATE row: {eps: (median n_answered_, noise)}} and the
    mean time per fit (fit and test score) of each row."""
    X_train, y_train, X_test, y_test = data
    acc, answered, fit_time = {}, {}, {}
    for name in (NONPRIVATE, *PRIVATE_ROWS):
        start = time.perf_counter()
        acc[name], answered[name] = {}, {}
        eps_list = epsilons[:1] if name == NONPRIVATE else epsilons  # it ignores eps
        for eps in eps_list:
            scores, counts = [], []
            for seed in seeds:
                est = make_adult_estimator(name, eps, seed, n_jobs).fit(X_train, y_train)
                scores.append(est.score(X_test, y_test))
                if name in PATE_ROWS:
                    counts.append(est.n_answered_)
            acc[name][eps] = statistics.median(scores)
            if name in PATE_ROWS:  # the noise depends on eps only, not on the seed
                answered[name][eps] = (statistics.median(counts),
                                       vote_noise(est.mechanism_params_))
        if name == NONPRIVATE:
            acc[name] = dict.fromkeys(epsilons, acc[name][epsilons[0]])
        fit_time[name] = (time.perf_counter() - start) / (len(seeds) * len(eps_list))
        print(f"  done: {name} ({fit_time[name]:.2f}s per fit)", flush=True)
    return acc, {k: v for k, v in answered.items() if v}, fit_time


def markdown_table(header, rows):
    """Print a markdown table: ``header`` and ``rows`` are lists of cells."""
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def print_adult(acc, answered, fit_time, epsilons, n_seeds, majority):
    eps_cols = [f"eps={e:g}" for e in epsilons]
    print(f"\n### Adult: median test accuracy over {n_seeds} seed(s), delta = {DELTA:g}\n")
    rows = [[name] + [f"{acc[name][e]:.4f}" for e in epsilons] + [f"{fit_time[name]:.2f}"]
            for name in (*PRIVATE_ROWS, NONPRIVATE)]
    rows.append(["majority class (constant)"] + [f"{majority:.4f}"] * len(epsilons) + [""])
    rows.append(["PATE, Papernot et al. 2017 (data-dependent eps)"]
                + [f"{PUBLISHED_PATE:.3f}" if e == PUBLISHED_EPS else "" for e in epsilons]
                + [""])
    rows.append(["non-private, Papernot et al. 2017"]
                + [f"{PUBLISHED_NONPRIVATE:.3f}"] * len(epsilons) + [""])
    markdown_table(["method", *eps_cols, "time per fit (s)"], rows)
    print(f"\nCaveat: Papernot et al.'s eps = {PUBLISHED_EPS} is a data-dependent bound (moments "
          "accountant on the actual vote histograms, itself released without noise; LNMax, "
          "random-forest teachers, student trained on held-out data). Every eps above is a "
          "data-independent guarantee: the noise is calibrated for the worst case and all "
          f"{N_QUERIES} queries are paid for, so at the same nominal eps our PATE adds more "
          "noise.")
    print(f"\n### PATE: median n_answered_ of {N_QUERIES} queries, and the calibrated vote noise "
          f"({N_TEACHERS} teachers)\n")
    rows = [[name] + [f"{answered[name][e][0]:g} ({answered[name][e][1]})" for e in epsilons]
            for name in PATE_ROWS]
    markdown_table(["method", *eps_cols], rows)


def plot_adult(acc, epsilons, out, majority):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    colors = plt.get_cmap("tab10").colors
    for i, name in enumerate(PRIVATE_ROWS):
        ax.plot(epsilons, [acc[name][e] for e in epsilons], marker="osD^v<>p"[i],
                color=colors[i], label=name, markersize=4,
                ls="-" if name in PATE_ROWS else "--")
    ax.plot(epsilons, [acc[NONPRIVATE][e] for e in epsilons], "k:", label=NONPRIVATE)
    ax.axhline(majority, color="grey", lw=0.8, ls=":", label="majority class")
    ax.plot([PUBLISHED_EPS], [PUBLISHED_PATE], "k*", markersize=12,
            label="PATE, Papernot et al. 2017 (data-dependent eps)")
    ax.set_xscale("log")
    ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    ax.set_xticks([], minor=True)
    ax.set_xlabel(f"epsilon (delta = {DELTA:g} for the Gaussian mechanisms)")
    ax.set_ylabel("test accuracy (median over seeds)")
    ax.set_title("UCI Adult (income > 50K): label-DP methods")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


# ---------------------------------------------------------------------------
# 2. Memorization audit
# ---------------------------------------------------------------------------


def interpolating_knn(kind):
    """k-NN with distance weights: exact on its training points, smooth elsewhere."""
    return kind(AUDIT_NEIGHBORS, weights="distance")


def make_audit_estimator(name, eps, seed):
    common = {"epsilon": eps, "classes": np.arange(AUDIT_K), "random_state": seed}
    if name == "ALIBI":
        return ALIBIClassifier(interpolating_knn(KNeighborsRegressor), **common)
    if name == "PATE":
        return PATEClassifier(
            KNeighborsClassifier(5), student=interpolating_knn(KNeighborsClassifier),
            n_teachers=AUDIT_PATE_TEACHERS, n_queries=AUDIT_PATE_QUERIES, aggregator="gnmax",
            delta=DELTA, **common,
        )
    raise ValueError(name)


def run_audit(n, epsilons, seeds):
    """Rows of the audit table (median over seeds) and the non-private baseline."""
    X, y = make_circle_gaussians(n, AUDIT_K, sigma=AUDIT_SIGMA, random_state=0)
    X_test, y_test = make_circle_gaussians(AUDIT_N_TEST, AUDIT_K, sigma=AUDIT_SIGMA,
                                           random_state=1)
    n_canaries = n // 4
    results = []
    for eps in epsilons:
        for name in ("PATE", "ALIBI"):
            runs = []
            for seed in seeds:
                test_acc = make_audit_estimator(name, eps, seed).fit(X, y).score(X_test, y_test)
                res = label_memorization_audit(make_audit_estimator(name, eps, seed), X, y,
                                               n_canaries=n_canaries, random_state=seed)
                runs.append((test_acc, res))
            med = {key: statistics.median(getattr(r, key) for _, r in runs)
                   for key in ("accuracy", "accuracy_lower", "epsilon_lower", "tightness")}
            med["test"] = statistics.median(t for t, _ in runs)
            med["claimed"], med["delta"] = runs[0][1].epsilon_claimed, runs[0][1].delta_claimed
            results.append((name, eps, med))
    base = interpolating_knn(KNeighborsClassifier)
    base_test = base.fit(X, y).score(X_test, y_test)
    base_res = label_memorization_audit(base, X, y, n_canaries=n_canaries, random_state=0)
    return results, (base_test, base_res), n_canaries


def print_audit(results, baseline, n, n_canaries, n_seeds):
    print(f"\n### Label-memorization audit: {AUDIT_K} circle Gaussians (std {AUDIT_SIGMA}), "
          f"n = {n}, {n_canaries} canaries, {AUDIT_NEIGHBORS}-NN distance-weighted base, "
          f"95% confidence, median over {n_seeds} seed(s)\n")
    rows = []
    for name, eps, m in results:
        claimed = f"{m['claimed']:g}" + (f" (d={m['delta']:g})" if m["delta"] else "")
        rows.append([name, f"{eps:g}", f"{m['test']:.4f}", f"{m['accuracy']:.4f}",
                     f"{m['accuracy_lower']:.4f}", f"{m['epsilon_lower']:.3f}", claimed,
                     f"{m['tightness']:.2f}"])
    base_test, base_res = baseline
    rows.append([f"{AUDIT_NEIGHBORS}-NN, not private", "inf", f"{base_test:.4f}",
                 f"{base_res.accuracy:.4f}", f"{base_res.accuracy_lower:.4f}",
                 f"{base_res.epsilon_lower:.3f}", "inf", ""])
    markdown_table(["method", "eps", "test acc (clean fit)", "attack acc", "acc_lo",
                    "eps_lower", "claimed eps", "eps_lower / eps"], rows)


def print_audit_checks(results):
    """Malek et al.'s findings against ours, reported whatever they show."""
    def line(ok, text):
        print(f"  [{'PASS' if ok else 'FAIL'}] {text}")

    print("\nChecks against Malek et al. (2021), Table 1:")
    by_key = {(name, eps): m for name, eps, m in results}
    epsilons = sorted({eps for _, eps, _ in results})
    over = [f"{name} eps={eps:g}" for name, eps, m in results if m["epsilon_lower"] > eps]
    line(not over, "eps_lower <= claimed eps everywhere"
         + (f"; exceeded for {', '.join(over)}" if over else ""))
    pate = [by_key["PATE", e]["tightness"] for e in epsilons]
    line(max(pate) <= PATE_MAX_RATIO, f"PATE's eps_lower far below its bound (ratio <= "
         f"{PATE_MAX_RATIO:g}): ratios {', '.join(f'{r:.2f}' for r in pate)}")
    alibi = {e: by_key["ALIBI", e]["tightness"] for e in epsilons}
    line(all(r >= ALIBI_MIN_RATIO for e, r in alibi.items() if e >= 2),
         f"ALIBI's eps_lower close to its bound (ratio >= {ALIBI_MIN_RATIO:g} at eps >= 2; "
         f"'within about 2.5x' is 0.4): ratios "
         + ", ".join(f"eps={e:g}: {r:.2f}" for e, r in alibi.items()))
    matched = [e for e in epsilons
               if abs(by_key["PATE", e]["test"] - by_key["ALIBI", e]["test"]) <= MATCHED]
    print(f"  test accuracies within {100 * MATCHED:g} points (matched) at eps = "
          + (", ".join(f"{e:g}" for e in matched) if matched else "none"))


# ---------------------------------------------------------------------------
# 4. Defaults
# ---------------------------------------------------------------------------

DEFAULTS_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)


def defaults_data(name, data_dir):
    """``(X_train, y_train, X_test, y_test)`` of one data set of section 4."""
    from sklearn.datasets import load_digits, make_classification
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    if name == "adult":
        adult = load_adult(data_dir, norm_bound=UNCLIPPED)
        return adult.X_train, adult.y_train, adult.X_test, adult.y_test
    if name == "digits":
        X, y = load_digits(return_X_y=True)
    else:  # "small-K"
        X, y = make_classification(n_samples=429, n_features=10, n_informative=5,
                                   n_classes=int(name.split("-")[1]), random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), y_train, scaler.transform(X_test), y_test


def run_defaults(names, data_dir, seeds, n_jobs):
    """Print the defaults table of section 4, one row per data set and epsilon."""
    rows = []
    for name in names:
        X, y, X_test, y_test = defaults_data(name, data_dir)
        classes = np.unique(y)
        majority = np.bincount(np.searchsorted(classes, y_test)).max() / len(y_test)
        for eps in DEFAULTS_EPSILONS:
            scores, answered, counts = [], [], "error"
            for seed in seeds:
                clf = PATEClassifier(epsilon=eps, delta=DELTA, classes=classes,
                                     random_state=seed, n_jobs=n_jobs)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        clf.fit(X, y)
                except ValueError:
                    continue
                scores.append(clf.score(X_test, y_test))
                answered.append(clf.n_answered_)
                params = clf.mechanism_params_
                counts = f"{params['n_teachers']} / {params['n_queries']}"
            rows.append([
                name, f"{eps:g}", f"{majority:.3f}", counts,
                f"{statistics.median(scores):.3f}" if scores else "error",
                f"{statistics.median(answered):g}" if answered else "error",
                f"{len(scores)}/{len(seeds)}",
            ])
            print(" | ".join(rows[-1]), flush=True)
    print()
    markdown_table(["data", "eps", "majority", "teachers / queries", "accuracy",
                    "answered", "fits"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--n-jobs", type=int, default=1, help="PATE teachers in parallel")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_SEEDS} seed, audit on n = {QUICK_AUDIT_N} at 2 epsilons")
    parser.add_argument("--defaults", nargs="*", metavar="DATA",
                        help="only section 4, on these data sets (default: digits adult "
                        "small-2 small-3)")
    parser.add_argument("--seeds", type=int, default=N_SEEDS, help="seeds of section 4")
    args = parser.parse_args()

    if args.defaults is not None:
        with threadpool_limits(limits=1):
            run_defaults(args.defaults or ["digits", "adult", "small-2", "small-3"],
                         args.data_dir, list(range(args.seeds)), args.n_jobs)
        return
    start_all = time.perf_counter()
    seeds = list(range(QUICK_SEEDS if args.quick else N_SEEDS))
    adult = load_adult(args.data_dir, norm_bound=UNCLIPPED)
    data = (adult.X_train, adult.y_train, adult.X_test, adult.y_test)
    print(f"Adult: {adult.X_train.shape[0]} train / {adult.X_test.shape[0]} test rows, "
          f"{adult.X_train.shape[1]} features; positive rate train {adult.y_train.mean():.3f}, "
          f"test {adult.y_test.mean():.3f}; {len(seeds)} seed(s); BLAS limited to 1 thread")

    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", category=ConvergenceWarning)
        start = time.perf_counter()
        acc, answered, fit_time = run_adult(data, EPSILONS, seeds, args.n_jobs)
        majority = max(adult.y_test.mean(), 1 - adult.y_test.mean())
        print_adult(acc, answered, fit_time, EPSILONS, len(seeds), majority)
        adult_time = time.perf_counter() - start
        print(f"\n[section 1, Adult: {adult_time:.0f}s]")

        start = time.perf_counter()
        n = QUICK_AUDIT_N if args.quick else AUDIT_N
        audit_eps = QUICK_AUDIT_EPSILONS if args.quick else AUDIT_EPSILONS
        results, baseline, n_canaries = run_audit(n, audit_eps, seeds)
        print_audit(results, baseline, n, n_canaries, len(seeds))
        print_audit_checks(results)
        print(f"\n[section 2, audit: {time.perf_counter() - start:.0f}s]")

    start = time.perf_counter()
    try:
        out = plot_adult(acc, EPSILONS, args.out, majority)
    except ImportError as exc:  # matplotlib is the optional [plot] extra
        print(f"\nfigure: not drawn ({exc}); pip install matplotlib")
    else:
        print(f"\nfigure: {out} [section 3: {time.perf_counter() - start:.1f}s]")
    print(f"total time: {time.perf_counter() - start_all:.0f}s")


if __name__ == "__main__":
    main()
