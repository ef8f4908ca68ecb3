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
  histogram prior (10% of epsilon, the defaults);
- ``dp_ls``: :class:`~sklearn_labeldp.DPLeastSquaresRegressor` (label DP,
  delta 1e-5, defaults) on the same features;
- ``nonprivate``: the base regressor on the true labels (one column).

Columns: test MSE (median over ``--seeds``, default 1) at each epsilon
(``--epsilons``, default 0.05 0.1 0.5 1 2 4 8), then the MSE of the released
training labels against the true ones (the randomizer's own error, which
RR-on-Bins minimises under the prior, Ghazi et al. 2023), and R^2 at the
largest epsilon. Run with ``nice``: about ten minutes on 2 cores for both data
sets and one seed.

Usage::

    python benchmarks/regression.py --datasets friedman --epsilons 1 4
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


def run(name, data, epsilons, seeds):
    X, y, X_test, y_test, label_range = data
    rows = {}
    start = time.perf_counter()
    public = base().fit(X, y).predict(X_test)
    rows["nonprivate"] = {"test": [mean_squared_error(y_test, public)] * len(epsilons),
                          "r2": r2_score(y_test, public)}
    for method in (*MECHANISMS, "dp_ls"):
        test, labels, r2 = [], [], None
        for epsilon in epsilons:
            mse, label_mse = [], []
            for seed in seeds:
                if method == "dp_ls":
                    model = DPLeastSquaresRegressor(epsilon=epsilon, label_range=label_range,
                                                    random_state=seed)
                else:
                    model = NoisyLabelRegressor(base(), epsilon=epsilon, mechanism=method,
                                                label_range=label_range, random_state=seed)
                model.fit(X, y)
                prediction = model.predict(X_test)
                mse.append(mean_squared_error(y_test, prediction))
                if method != "dp_ls":
                    label_mse.append(mean_squared_error(np.clip(y, *label_range),
                                                        model.privatized_labels_))
                if epsilon == epsilons[-1]:
                    r2 = r2_score(y_test, prediction)
            test.append(float(np.median(mse)))
            labels.append(float(np.median(label_mse)) if label_mse else np.nan)
        rows[method] = {"test": test, "labels": labels, "r2": r2}
        print(f"  {name} {method}: {time.perf_counter() - start:.0f} s", flush=True)
    return rows


def table(name, rows, epsilons):
    head = " | ".join(f"{e:g}" for e in epsilons)
    lines = [f"### {name}: test MSE", "", f"| estimator | {head} | R^2 at eps "
             f"{epsilons[-1]:g} |", "|---" * (len(epsilons) + 2) + "|"]
    for method, row in rows.items():
        cells = " | ".join(f"{v:.4g}" for v in row["test"])
        lines.append(f"| {method} | {cells} | {row['r2']:.3f} |")
    lines += ["", f"### {name}: MSE of the released training labels", "",
              f"| mechanism | {head} |", "|---" * (len(epsilons) + 1) + "|"]
    for method in MECHANISMS:
        cells = " | ".join(f"{v:.4g}" for v in rows[method]["labels"])
        lines.append(f"| {method} | {cells} |")
    checks = []
    bins, laplace = rows["rr_on_bins"]["test"], rows["laplace"]["test"]
    small = [i for i, e in enumerate(epsilons) if e <= 4]
    checks.append("RR-on-Bins test MSE below Laplace at every eps <= 4: "
                  f"{all(bins[i] < laplace[i] for i in small)}")
    checks.append(f"RR-on-Bins R^2 within 0.1 of non-private at eps {epsilons[-1]:g}: "
                  f"{rows['rr_on_bins']['r2'] >= rows['nonprivate']['r2'] - 0.1} "
                  f"({rows['rr_on_bins']['r2']:.3f} vs {rows['nonprivate']['r2']:.3f})")
    label_rows = np.array([rows[m]["labels"] for m in MECHANISMS])
    checks.append("RR-on-Bins' released labels have the least MSE at every eps: "
                  f"{bool((label_rows.argmin(axis=0) == 0).all())}")
    return "\n".join(lines + [""] + [f"- {c}" for c in checks] + [""])


def main():
    parser = argparse.ArgumentParser(description="Label-DP regression benchmark.")
    parser.add_argument("--datasets", nargs="+", default=["friedman", "adult"],
                        choices=["friedman", "adult"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(DEFAULT_EPSILONS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--data-dir", default=os.environ.get(
        "SKLEARN_LABELDP_ADULT", str(Path(__file__).resolve().parents[2] / "shared/data/adult")))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    output = []
    for name in args.datasets:
        data = friedman() if name == "friedman" else adult(args.data_dir)
        rows = run(name, data, args.epsilons, list(range(args.seeds)))
        text = table(name, rows, args.epsilons)
        print(text, flush=True)
        output.append(text)
    if args.out:
        Path(args.out).write_text("\n".join(output))


if __name__ == "__main__":
    main()
