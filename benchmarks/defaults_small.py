"""Small-data tables behind three default and reduction choices, medians over 9 splits.

Each table is a median over ``--seeds`` (default 9) splits of 70/30
(stratified for the classifiers), features standardised on the training part:

- ``perturbation``: :class:`~sklearn_labeldp.linear_model.DPLogisticRegression`
  with only ``epsilon``, ``delta`` and ``solver`` set, objective and output
  perturbation, pure DP (``delta=0``) against Gaussian noise (``delta=1e-5``),
  on the digits, wine, breast cancer and iris data at eps 1, 4, 8 (test
  accuracy; the linear models guide's table);
- ``prior-share``: :class:`~sklearn_labeldp.NoisyLabelRegressor` with
  RR-on-Bins around ``KNeighborsRegressor(10)`` and ``prior_epsilon="auto"``
  against the former 10% share, as test
  MSE over the MSE of the (non-private) training mean, on the diabetes data,
  Friedman #1/#2/#3 (430 rows) and two sets the rule was not set on: a linear
  ``make_regression`` and a sine, 200 and 450 rows (the regression guide's
  table);
- ``linear-small``: :class:`~sklearn_labeldp.linear_model.DPLogisticRegression`
  and :class:`~sklearn_labeldp.linear_model.DPLinearSVC` with only ``epsilon``
  set (``solver="auto"``, ``C="auto"``) against the best cell of their grids
  (solver x C, the best median on the test parts: an oracle, optimistic), and
  :class:`~sklearn_labeldp.linear_model.DPLeastSquaresClassifier`'s default,
  against scikit-learn's non-private ``LogisticRegression()``, on data of
  100-200 training rows and 2-3 classes at eps 1, 2, 4, 8 (the linear models
  guide's small-data table). The solver rule and its ridge were set on the
  iris, wine and breast cancer data, the comparison of the two noises that
  takes objective perturbation where there are few features for the rows
  on all six sets (30 splits; ``--seeds 30`` for the medians that set it);
- ``newton-small``: :class:`~sklearn_labeldp.linear_model.DPLogisticRegression`
  with ``solver="newton"``, ``delta=1e-5`` and ``C="auto"`` (whose ridge,
  under label DP, is at least the bias-variance ridge ``sigma^2 / (4
  gamma)``) against the former ``C="auto"`` (the noise scale alone) and a
  grid of ``C`` from 1e-4 to 1, on the ``linear-small`` sets at eps 0.5,
  1, 2, 4 (medians and means; the means are steadier on the blobs, whose
  centres change with the split);
- ``rr-ridge``: :class:`~sklearn_labeldp.linear_model.DPLogisticRegression`
  with only ``epsilon`` set against its former default (the solver rule
  that took objective perturbation past an inflation of 10, and the ridge
  ``d (rho - 1) / (27 n)``), objective perturbation and the best ``C`` of
  the randomized labels (an oracle), on data of 105 to 2,100 training rows
  and 4 to 784 features at eps 0.5 to 4 (means; the Fashion-MNIST rows need
  its files, ``--data-home``);
- ``alibi-reduction``: :class:`~sklearn_labeldp.ALIBIClassifier` with its
  default base against a ``KNeighborsClassifier`` of the same ``n_neighbors``
  and ``LinearDiscriminantAnalysis`` (neither takes ``sample_weight``), the
  latter also with argmax labels, on the digits, wine, breast cancer and 400
  rows of four circles at eps 1 and 4 (test accuracy; the ALIBI guide's table).

Usage::

    python benchmarks/defaults_small.py perturbation
    python benchmarks/defaults_small.py prior-share --seeds 9
    python benchmarks/defaults_small.py alibi-reduction
    python benchmarks/defaults_small.py linear-small
    python benchmarks/defaults_small.py newton-small --seeds 30
    python benchmarks/defaults_small.py rr-ridge --data-home .fmnist

Each prints one Markdown table (a few minutes on 2 cores each).
"""

import argparse
import math
import warnings

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_wine,
    make_blobs,
    make_classification,
    make_friedman1,
    make_friedman2,
    make_friedman3,
    make_regression,
)
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp import ALIBIClassifier, NoisyLabelRegressor
from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
)
from sklearn_labeldp.linear_model._losses import LogisticLoss
from sklearn_labeldp.linear_model._perturbed_erm import perturbation_noise_share
from sklearn_labeldp.linear_model._solvers import SOLVERS
from sklearn_labeldp.mechanisms._randomized_response import rr_vote_inflation

CLASSIFICATION = {
    "digits": lambda seed: load_digits(return_X_y=True),
    "wine": lambda seed: load_wine(return_X_y=True),
    "breast cancer": lambda seed: load_breast_cancer(return_X_y=True),
    "iris": lambda seed: load_iris(return_X_y=True),
    "circles": lambda seed: make_circle_gaussians(400, 4, sigma=0.4, random_state=0),
}


def _subsample(data, n, seed):
    X, y = data
    rows = np.random.default_rng(seed).permutation(len(y))[:n]
    return X[rows], y[rows]


# 100-200 training rows (70% of each set), 2-3 classes: name -> seed -> (X, y).
SMALL = {
    "iris (105)": lambda seed: load_iris(return_X_y=True),
    "wine (124)": lambda seed: load_wine(return_X_y=True),
    "breast cancer (140)": lambda seed: _subsample(load_breast_cancer(return_X_y=True), 200, seed),
    "synthetic K=2 (105)": lambda seed: make_classification(
        150, 8, n_informative=4, random_state=100 + seed),
    "synthetic K=3 (140)": lambda seed: make_classification(
        200, 6, n_informative=4, n_redundant=1, n_classes=3, n_clusters_per_class=1,
        random_state=200 + seed),
    "blobs K=3 (126)": lambda seed: make_blobs(180, 5, centers=3, cluster_std=3.0,
                                               random_state=300 + seed),
}
GRID_C = (0.01, 0.1, 1.0, 10.0, 100.0, "auto")


def _sine(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n), (-2.0, 4.0)


# Name -> seed -> (X, y, public label range).
REGRESSION = {
    "diabetes": lambda seed: (*load_diabetes(return_X_y=True), (25.0, 346.0)),
    "friedman1": lambda seed: (*make_friedman1(430, noise=1.0, random_state=seed), (0.0, 30.0)),
    "friedman2": lambda seed: (*make_friedman2(430, random_state=seed), (0.0, 1700.0)),
    "friedman3": lambda seed: (*make_friedman3(430, random_state=seed), (0.0, 1.6)),
    "linear (200)": lambda seed: (*make_regression(200, 6, n_informative=4, noise=20.0,
                                                   random_state=seed), (-300.0, 300.0)),
    "sine (200)": lambda seed: _sine(200, seed),
    "sine (450)": lambda seed: _sine(450, seed),
}


def _small_splits(make, seeds):
    """``(seed, X_train, X_test, y_train, y_test)`` of a small set's stratified split per seed."""
    for seed in range(seeds):
        X, y = make(seed)
        yield seed, *_split(X, y, seed, True)


def _split(X, y, seed, stratify):
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=seed, stratify=y if stratify else None)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def _unlimited():
    return BudgetAccountant(math.inf, 1.0)


def _table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def perturbation(seeds):
    variants = {"objective, pure": ("objective", 0.0), "objective, Gaussian": ("objective", 1e-5),
                "output, pure": ("output", 0.0), "output, Gaussian": ("output", 1e-5)}
    rows = []
    for name in ("digits", "wine", "breast cancer", "iris"):
        X, y = CLASSIFICATION[name](0)
        classes = list(np.unique(y))
        for eps in (1.0, 4.0, 8.0):
            cells = []
            for solver, delta in variants.values():
                scores = []
                for seed in range(seeds):
                    X_train, X_test, y_train, y_test = _split(X, y, seed, True)
                    clf = DPLogisticRegression(epsilon=eps, delta=delta, solver=solver,
                                               classes=classes, random_state=seed,
                                               accountant=_unlimited()).fit(X_train, y_train)
                    scores.append(clf.score(X_test, y_test))
                cells.append(f"{np.median(scores):.3f}")
            rows.append([name, f"{eps:g}", *cells])
    _table("DPLogisticRegression, pure against Gaussian perturbation (test accuracy)",
           ["data", "eps", *variants], rows)


def prior_share(seeds):
    rows = []
    for name, make in REGRESSION.items():
        for eps in (0.25, 0.5, 1.0, 2.0):
            cells = []
            for share in ("auto", 0.1):
                ratios = []
                for seed in range(seeds):
                    X, y, label_range = make(seed)
                    X_train, X_test, y_train, y_test = _split(X, y, seed, False)
                    # RR-on-Bins with the former k-NN: the table is the prior's share.
                    reg = NoisyLabelRegressor(
                        KNeighborsRegressor(10), mechanism="rr_on_bins",
                        epsilon=eps, label_range=label_range, random_state=seed,
                        prior_epsilon="auto" if share == "auto" else share * eps,
                        accountant=_unlimited()).fit(X_train, y_train)
                    mean = np.full(len(y_test), y_train.mean())
                    ratios.append(mean_squared_error(y_test, reg.predict(X_test))
                                  / mean_squared_error(y_test, mean))
                cells.append(f"{np.median(ratios):.3f}")
            rows.append([name, f"{eps:g}", *cells])
    _table("NoisyLabelRegressor: test MSE over the training mean's",
           ["data", "eps", "prior_epsilon='auto'", "10% (before)"], rows)


def alibi_reduction(seeds):
    rows = []
    for name in ("digits", "wine", "breast cancer", "circles"):
        X, y = CLASSIFICATION[name](0)
        classes = list(np.unique(y))
        for eps in (1.0, 4.0):
            scores = {key: [] for key in ("default", "knn", "lda", "lda argmax")}
            for seed in range(seeds):
                X_train, X_test, y_train, y_test = _split(X, y, seed, True)
                kw = dict(epsilon=eps, classes=classes, random_state=seed,
                          accountant=_unlimited())
                default = ALIBIClassifier(**kw).fit(X_train, y_train)
                k = default.mechanism_params_["n_neighbors"]
                fits = {
                    "default": default,
                    "knn": ALIBIClassifier(KNeighborsClassifier(n_neighbors=k), **kw),
                    "lda": ALIBIClassifier(LinearDiscriminantAnalysis(), **kw),
                    "lda argmax": ALIBIClassifier(LinearDiscriminantAnalysis(),
                                                  post_processing="argmax", n_rounds=1, **kw),
                }
                for key, model in fits.items():
                    if model is not default:
                        model.fit(X_train, y_train)
                    scores[key].append(model.score(X_test, y_test))
            rows.append([name, f"{eps:g}", *(f"{np.median(v):.3f}" for v in scores.values())])
    _table("ALIBIClassifier around classifiers without sample_weight (test accuracy)",
           ["data", "eps", "default", "KNeighborsClassifier", "LDA, Bayes", "LDA, argmax"], rows)


def linear_small(seeds):
    estimators = {"DPLogisticRegression": DPLogisticRegression, "DPLinearSVC": DPLinearSVC}
    rows = []
    for name, make in SMALL.items():
        for eps in (1.0, 2.0, 4.0, 8.0):
            scores = {}  # cell -> test accuracies over the seeds
            for seed, X_train, X_test, y_train, y_test in _small_splits(make, seeds):
                classes = list(np.unique(y_train))
                kw = dict(epsilon=eps, classes=classes, random_state=seed,
                          accountant=_unlimited())

                models = {"non-private": LogisticRegression(),
                          "least squares": DPLeastSquaresClassifier(**kw)}
                for label, Estimator in estimators.items():
                    models[(label, "default")] = Estimator(**kw)
                    # The solvers of the default delta = 0 (pure DP).
                    solvers = [name for name in Estimator._parameter_constraints["solver"][0]
                               .options if name in SOLVERS and SOLVERS[name].deltas == "any"]
                    for solver in sorted(solvers):
                        for C in GRID_C:
                            models[(label, solver, C)] = Estimator(solver=solver, C=C, **kw)
                for key, model in models.items():
                    model.fit(X_train, y_train)
                    scores.setdefault(key, []).append(model.score(X_test, y_test))
                for label in estimators:
                    scores.setdefault((label, "solver"), []).append(
                        models[(label, "default")].solver_)
            cells = [f"{np.median(scores['non-private']):.3f}",
                     f"{np.median(scores['least squares']):.3f}"]
            for label in estimators:
                grid = max(np.median(v) for k, v in scores.items()
                           if isinstance(k, tuple) and k[0] == label and len(k) == 3)
                solver = max(set(scores[(label, "solver")]), key=scores[(label, "solver")].count)
                cells += [f"{np.median(scores[(label, 'default')]):.3f}", f"{grid:.3f}",
                          solver.replace("randomized_response", "RR")]
            rows.append([name, f"{eps:g}", *cells])
    _table("Linear models on 100-200 training rows: defaults against their grids (test accuracy)",
           ["data (train rows)", "eps", "LogisticRegression (non-private)",
            "DPLeastSquaresClassifier", "DPLogisticRegression", "its grid", "solver_",
            "DPLinearSVC", "its grid", "solver_"], rows)


def _fashion_subset(n_train, data_home):
    """``n_train / 0.7`` Fashion-MNIST training images per seed (None without the files)."""
    from sklearn_labeldp.datasets import load_fashion_mnist

    try:
        X, y = load_fashion_mnist(data_home, subset="train", return_X_y=True)
    except (OSError, ValueError):
        return None
    X = X.reshape(len(X), -1).astype(np.float64) / 255.0

    def load(seed):
        rows = np.random.default_rng(1000 + seed).permutation(len(y))[:round(n_train / 0.7)]
        return X[rows], y[rows]

    return load


# Rows and features from 105 x 4 to 2,100 x 784, K 2 to 10: name -> seed -> (X, y).
MANY_FEATURES = {
    "digits": lambda seed: load_digits(return_X_y=True),
    "wine": lambda seed: load_wine(return_X_y=True),
    "iris": lambda seed: load_iris(return_X_y=True),
    "breast cancer": lambda seed: load_breast_cancer(return_X_y=True),
    "synthetic K=5 d=20": lambda seed: make_classification(
        1000, 20, n_informative=10, n_classes=5, n_clusters_per_class=1, random_state=50 + seed),
    "synthetic K=10 d=40": lambda seed: make_classification(
        3000, 40, n_informative=20, n_classes=10, n_clusters_per_class=1,
        random_state=70 + seed),
    "synthetic K=3 d=60": lambda seed: make_classification(
        600, 60, n_informative=15, n_classes=3, n_clusters_per_class=2, random_state=80 + seed),
    "synthetic K=2 d=100": lambda seed: make_classification(
        2000, 100, n_informative=20, n_classes=2, random_state=90 + seed),
}
RR_GRID_C = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def _former_default(eps, n, d, n_classes):
    """The solver and C of ``DPLogisticRegression()`` before version 0.1's change."""
    rho = rr_vote_inflation(eps, n_classes)
    share = perturbation_noise_share(epsilon=eps, n_samples=n, n_classes=n_classes,
                                     n_features=d, loss=LogisticLoss(), privacy="label")
    if rho > 10 or math.sqrt((rho - 1) / n) > 2 * share:
        return {"solver": "objective"}
    reg = d * (rho - 1) / (27 * n) + 1 / (200 * n)
    return {"solver": "randomized_response", "C": 1 / (2 * reg * n)}


def rr_ridge(seeds, data_home=None):
    sets = dict(MANY_FEATURES)
    fashion = _fashion_subset(2000, data_home)
    if fashion is not None:
        sets["Fashion-MNIST 2,000"] = fashion
    rows = []
    for name, load in sets.items():
        for eps in (0.5, 1.0, 2.0, 4.0):
            scores, solvers = {}, []
            for seed in range(seeds):
                X_train, X_test, y_train, y_test = _split(*load(seed), seed, True)
                classes = list(np.unique(y_train))
                kw = dict(epsilon=eps, classes=classes, random_state=seed,
                          accountant=_unlimited())
                n, d = X_train.shape[0], X_train.shape[1] + 1
                models = {"default": DPLogisticRegression(**kw),
                          "former": DPLogisticRegression(
                              **_former_default(eps, n, d, len(classes)), **kw),
                          "objective": DPLogisticRegression(solver="objective", **kw)}
                for C in RR_GRID_C:
                    models[C] = DPLogisticRegression(solver="randomized_response", C=C, **kw)
                for key, model in models.items():
                    scores.setdefault(key, []).append(
                        model.fit(X_train, y_train).score(X_test, y_test))
                solvers.append(models["default"].solver_)
            best = max(RR_GRID_C, key=lambda C: np.mean(scores[C]))
            rows.append([name, f"{len(y_train)} x {X_train.shape[1]}, K={len(classes)}",
                         f"{eps:g}",
                         *(f"{np.mean(scores[k]):.3f}" for k in ("former", "default")),
                         max(set(solvers), key=solvers.count).replace(
                             "randomized_response", "RR"),
                         f"{np.mean(scores['objective']):.3f}",
                         f"{np.mean(scores[best]):.3f} (C={best:g})"])
    _table("DPLogisticRegression() under label DP, pure: the former and the present solver "
           "rule and ridge (test accuracy, mean over the splits)",
           ["data", "train rows x features", "eps", "former default", "default", "solver_",
            "objective perturbation", "randomized labels, best C (oracle)"], rows)


NEWTON_GRID_C = (1e-4, 1e-3, 1e-2, 0.1, 1.0)


def newton_small(seeds):
    rows = []
    for name, make in SMALL.items():
        for eps in (0.5, 1.0, 2.0, 4.0):
            scores = {}  # cell -> test accuracies over the seeds
            for seed, X_train, X_test, y_train, y_test in _small_splits(make, seeds):
                kw = dict(epsilon=eps, delta=1e-5, solver="newton",
                          classes=list(np.unique(y_train)),
                          random_state=seed, accountant=_unlimited())
                default = DPLogisticRegression(**kw).fit(X_train, y_train)
                # The former C="auto": Lambda = (1/4) sqrt(d / 2) sigma alone.
                sigma = default.mechanism_params_["noise_scales"]["gradient"]
                reg = 0.25 * math.sqrt((X_train.shape[1] + 1) / 2.0) * sigma
                models = {"default": default,
                          "former": DPLogisticRegression(C=1.0 / (2.0 * reg * len(y_train)), **kw)}
                for C in NEWTON_GRID_C:
                    models[C] = DPLogisticRegression(C=C, **kw)
                for key, model in models.items():
                    if model is not default:
                        model.fit(X_train, y_train)
                    scores.setdefault(key, []).append(model.score(X_test, y_test))
                scores.setdefault("non-private", []).append(
                    LogisticRegression().fit(X_train, y_train).score(X_test, y_test))
            grid = max(NEWTON_GRID_C, key=lambda C: np.median(scores[C]))
            rows.append([name, f"{eps:g}", f"{np.median(scores['non-private']):.3f}",
                         *(f"{np.median(scores[k]):.3f} / {np.mean(scores[k]):.3f}"
                           for k in ("default", "former")),
                         f"{np.median(scores[grid]):.3f} (C={grid:g})"])
    _table("DP-Newton (label DP, delta 1e-5) on 100-200 training rows: C='auto' against the "
           "former rule and a grid (test accuracy, median / mean)",
           ["data (train rows)", "eps", "LogisticRegression (non-private)", "C='auto'",
            "former C='auto'", "grid best (oracle)"], rows)


TABLES = {"perturbation": perturbation, "prior-share": prior_share,
          "alibi-reduction": alibi_reduction, "linear-small": linear_small,
          "newton-small": newton_small, "rr-ridge": rr_ridge}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", choices=list(TABLES))
    parser.add_argument("--seeds", type=int, default=9)
    parser.add_argument("--data-home", default=None,
                        help="Fashion-MNIST's IDX files, for rr-ridge")
    args = parser.parse_args(argv)
    options = {"data_home": args.data_home} if args.table == "rr-ridge" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TABLES[args.table](args.seeds, **options)


if __name__ == "__main__":
    main()
