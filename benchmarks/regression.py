"""Regression with label DP: each randomizer with the same base regressor, DP least squares,
and the non-private base, against epsilon.

Data:

- ``friedman``: ``make_friedman1(n_samples=10000, noise=1.0, random_state=0)``,
  8,000 rows to train and 2,000 to test; public label range ``(0, 30)``;
- ``adult``: UCI Adult (``--data-dir``, default ``../shared/data/adult`` or
  ``$SKLEARN_LABELDP_ADULT``), target ``hours-per-week`` from every other
  column (one-hot categorical and standardised numeric columns, the income
  class included), its own train and test files; public label range ``(1,
  99)``, the field's range in the census questionnaire.

Estimators (all ``random_state`` from the seed):

- ``rr_on_bins``, ``unbiased``, ``laplace``, ``gaussian`` (delta 1e-5),
  ``staircase``: :class:`~sklearn_labeldp.NoisyLabelRegressor` with that
  ``mechanism`` around the base regressor
  ``HistGradientBoostingRegressor(max_iter=100)``; the first two with the DP
  histogram prior (10% of epsilon, the defaults). ``rr_on_bins`` is the
  default ``debias="auto"``; from the same fit (whose base model is trained
  on the released labels), ``rr_on_bins:none`` reads the base model's
  predictions as they are (the shrunk model) and ``rr_on_bins:predictions``
  maps them by the affine debiasing ``(f - q sum b) / (p - q)``;
  ``--debias-targets`` adds ``rr_on_bins:targets``, a second base model
  trained on the debiased releases;
- ``dp_ls``: :class:`~sklearn_labeldp.DPLeastSquaresRegressor` (label DP,
  delta 1e-5, defaults) on the same features;
- ``nonprivate``: the base regressor on the true labels (one column).

Columns: test MSE (median over ``--seeds``, default 1; ``--spread`` adds the
smallest and largest) at each epsilon
(``--epsilons``, default 0.05 0.1 0.5 1 2 4 8), then the MSE of the released
training labels against the true ones (the randomizer's own error, which
RR-on-Bins minimises under the prior, Ghazi et al. 2023), and R^2 at the
largest epsilon. Run with ``nice``: about ten minutes on 2 cores for both data
sets and one seed.

Usage::

    python benchmarks/regression.py --datasets friedman --epsilons 1 4
    python benchmarks/regression.py --mechanisms rr_on_bins laplace --seeds 3
    python benchmarks/regression.py --out /tmp/regression.md
"""

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import mean_squared_error, r2_score

from sklearn_labeldp import DPLeastSquaresRegressor, NoisyLabelRegressor
from sklearn_labeldp.regression._randomizers import resolve_debias

MECHANISMS = ("rr_on_bins", "unbiased", "laplace", "gaussian", "staircase")
DEFAULT_EPSILONS = (0.05, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0)


def friedman():
    X, y = make_friedman1(n_samples=10_000, noise=1.0, random_state=0)
    return X[:8000], y[:8000], X[8000:], y[8000:], (0.0, 30.0)


def adult(data_dir):
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    frames = [pd.read_csv(Path(data_dir) / name, skipinitialspace=True)
              for name in ("adult.data.csv", "adult.test.csv")]
    target = "hours-per-week"
    for frame in frames:
        frame["class"] = frame["class"].str.rstrip(".")
    numeric = [c for c in frames[0].columns
               if frames[0][c].dtype.kind in "if" and c != target]
    categorical = [c for c in frames[0].columns
                   if c not in numeric and c != target]
    encode = ColumnTransformer([("num", StandardScaler(), numeric),
                                ("cat", OneHotEncoder(handle_unknown="ignore",
                                                      sparse_output=False), categorical)])
    X_train = encode.fit_transform(frames[0].drop(columns=target))
    X_test = encode.transform(frames[1].drop(columns=target))
    return (X_train, frames[0][target].to_numpy(float), X_test,
            frames[1][target].to_numpy(float), (1.0, 99.0))


def base():
    return HistGradientBoostingRegressor(max_iter=100)


def rr_on_bins_variants(model, X, X_test, seed, debias_targets):
    """Test predictions of RR-on-Bins' debiasing options, from one fit with ``debias="none"``.

    The base model trained on the released labels gives ``none`` (as it is)
    and ``predictions`` (its predictions debiased); ``targets`` needs a base
    model trained on the debiased releases.
    """
    params = model.mechanism_params_
    scale, shift = params["release_scale"], params["release_shift"]
    raw = model.predict(X_test)
    variants = {"none": raw, "predictions": (raw - shift) / scale}
    if debias_targets:
        targets = (model.privatized_labels_ - shift) / scale
        variants["targets"] = base().set_params(random_state=seed).fit(X, targets).predict(X_test)
    return variants


def run(name, data, epsilons, seeds, mechanisms, debias_targets=False):
    X, y, X_test, y_test, label_range = data
    rows = {}
    start = time.perf_counter()
    public = base().fit(X, y).predict(X_test)
    rows["nonprivate"] = {"test": [[mean_squared_error(y_test, public)]] * len(epsilons),
                          "r2": r2_score(y_test, public)}
    for method in mechanisms:
        found = {}  # row name -> (test MSEs per epsilon, labels' MSEs per epsilon, R^2)
        for epsilon in epsilons:
            for seed in seeds:
                if method == "dp_ls":
                    model = DPLeastSquaresRegressor(epsilon=epsilon, label_range=label_range,
                                                    random_state=seed)
                else:
                    model = NoisyLabelRegressor(
                        base(), epsilon=epsilon, mechanism=method, label_range=label_range,
                        random_state=seed, **({"debias": "none"} if method == "rr_on_bins"
                                              else {}))
                model.fit(X, y)
                predictions = {method: model.predict(X_test)}
                if method == "rr_on_bins":
                    variants = rr_on_bins_variants(model, X, X_test, seed, debias_targets)
                    # The default's own fit would have trained the same base model on
                    # the same releases: its predictions are one of the variants.
                    default = resolve_debias("auto", method, model.mechanism_params_[
                        "release_scale"], len(y))
                    predictions = {method: variants[default],
                                   **{f"{method}:{k}": v for k, v in variants.items()}}
                label_mse = (mean_squared_error(np.clip(y, *label_range), model.privatized_labels_)
                             if method != "dp_ls" else np.nan)
                for row, prediction in predictions.items():
                    test, labels, r2 = found.setdefault(
                        row, ([[] for _ in epsilons], [[] for _ in epsilons], []))
                    i = epsilons.index(epsilon)
                    test[i].append(mean_squared_error(y_test, prediction))
                    labels[i].append(label_mse)
                    if epsilon == epsilons[-1]:
                        r2.append(r2_score(y_test, prediction))
        for row, (test, labels, r2) in found.items():
            rows[row] = {"test": test, "labels": [float(np.median(v)) for v in labels],
                         "r2": float(np.median(r2))}
        print(f"  {name} {method}: {time.perf_counter() - start:.0f} s", flush=True)
    return rows


def table(name, rows, epsilons, spread=False):
    def cell(values):
        text = f"{np.median(values):.4g}"
        if spread and len(values) > 1:
            text += f" ({min(values):.4g}-{max(values):.4g})"
        return text

    head = " | ".join(f"{e:g}" for e in epsilons)
    lines = [f"### {name}: test MSE", "", f"| estimator | {head} | R^2 at eps "
             f"{epsilons[-1]:g} |", "|---" * (len(epsilons) + 2) + "|"]
    for method, row in rows.items():
        cells = " | ".join(cell(v) for v in row["test"])
        lines.append(f"| {method} | {cells} | {row['r2']:.3f} |")
    mechanisms = [m for m in MECHANISMS if m in rows]
    lines += ["", f"### {name}: MSE of the released training labels", "",
              f"| mechanism | {head} |", "|---" * (len(epsilons) + 1) + "|"]
    for method in mechanisms:
        cells = " | ".join(f"{v:.4g}" for v in rows[method]["labels"])
        lines.append(f"| {method} | {cells} |")
    checks = []
    if "rr_on_bins" in rows and "laplace" in rows:
        small = [i for i, e in enumerate(epsilons) if e <= 4]
        for row in [r for r in rows if r.startswith("rr_on_bins")]:
            bins, laplace = rows[row]["test"], rows["laplace"]["test"]
            wins = [np.median(bins[i]) < np.median(laplace[i]) for i in small]
            every = [max(bins[i]) < min(laplace[i]) for i in small]
            checks.append(f"{row} median test MSE below Laplace's at every eps <= 4: "
                          f"{all(wins)}; every seed below every Laplace seed: {all(every)}")
    if "rr_on_bins" in rows:
        r2 = rows["rr_on_bins"]["r2"]
        checks.append(f"RR-on-Bins R^2 within 0.1 of non-private at eps {epsilons[-1]:g}: "
                      f"{r2 >= rows['nonprivate']['r2'] - 0.1} "
                      f"({r2:.3f} vs {rows['nonprivate']['r2']:.3f})")
    if mechanisms and mechanisms[0] == "rr_on_bins" and len(mechanisms) > 1:
        label_rows = np.array([rows[m]["labels"] for m in mechanisms])
        checks.append("RR-on-Bins' released labels have the least MSE at every eps: "
                      f"{bool((label_rows.argmin(axis=0) == 0).all())}")
    return "\n".join(lines + [""] + [f"- {c}" for c in checks] + [""])


def main():
    parser = argparse.ArgumentParser(description="Label-DP regression benchmark.")
    parser.add_argument("--datasets", nargs="+", default=["friedman", "adult"],
                        choices=["friedman", "adult"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(DEFAULT_EPSILONS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--mechanisms", nargs="+", default=[*MECHANISMS, "dp_ls"],
                        choices=[*MECHANISMS, "dp_ls"])
    parser.add_argument("--debias-targets", action="store_true",
                        help="also train RR-on-Bins' base model on the debiased releases")
    parser.add_argument("--spread", action="store_true",
                        help="print the smallest and largest MSE over the seeds too")
    parser.add_argument("--data-dir", default=os.environ.get(
        "SKLEARN_LABELDP_ADULT", str(Path(__file__).resolve().parents[2] / "shared/data/adult")))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    output = []
    for name in args.datasets:
        data = friedman() if name == "friedman" else adult(args.data_dir)
        rows = run(name, data, args.epsilons, list(range(args.seeds)), args.mechanisms,
                   args.debias_targets)
        text = table(name, rows, args.epsilons, args.spread)
        print(text, flush=True)
        output.append(text)
    if args.out:
        Path(args.out).write_text("\n".join(output))


if __name__ == "__main__":
    main()
