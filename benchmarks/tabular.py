"""Raw UCI Adult as a pandas DataFrame through every label-DP meta-estimator and search.

Each learner is fitted twice at the same epsilon and seed: on the DataFrame as
pandas reads it (strings and numbers), with a base that is a
``ColumnTransformer`` pipeline (one-hot encoding of the string columns chosen
by dtype, scaling of the numeric ones, then the learner), and on the numeric
array that preprocessor makes, with the learner alone as the base. Columns:
test accuracy on ``adult.test.csv`` for each, and their difference in points.
Learners fitted on parts (the stages of LP-2ST, PATE's teachers) fit their
own preprocessor on their part, so their difference may exceed that of one
fit on all rows; everything else sees the same numbers in the same order.

Learners: ``RRWithPriorClassifier`` (one stage, and LP-2ST with a cluster prior
on the preprocessed features), ``VectorApproxClassifier``, ``ALIBIClassifier``,
``PATEClassifier`` (its defaults: teachers and queries resolved from n, K and
epsilon) around a LogisticRegression, and
``PrivateGridSearchCV`` with each strategy over the regularisation ``C``
of the pipeline's LogisticRegression.

Data: ``adult.data.csv`` and ``adult.test.csv`` from ``--data-dir`` (default
``../shared/data/adult`` beside the repository), read in place.

Usage::

    python benchmarks/tabular.py            # eps 1, seed 0, all learners (a few minutes)
    python benchmarks/tabular.py --epsilon 2 --learners rr alibi
"""

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_labeldp import BudgetAccountant
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    PATEClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.priors import ClusterPrior

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ["<=50K", ">50K"]


def read(path):
    frame = pd.read_csv(path, skipinitialspace=True)
    return frame.drop(columns="class"), frame["class"].str.rstrip(".").to_numpy()


def preprocessor():
    return ColumnTransformer([
        ("text", OneHotEncoder(handle_unknown="ignore"),
         make_column_selector(dtype_include=["object", "string"])),
        ("numbers", StandardScaler(), make_column_selector(dtype_include="number")),
    ])


def learner():
    return LogisticRegression(max_iter=1000)


def learners(epsilon, seed, frame):
    """Each learner for the DataFrame (``frame``) or for the preprocessed array."""
    base = make_pipeline(preprocessor(), learner()) if frame else learner()
    common = dict(classes=CLASSES, random_state=seed)
    search_base = RRWithPriorClassifier(base, classes=CLASSES)
    C = "estimator__logisticregression__C" if frame else "estimator__C"
    return {
        "rr": RRWithPriorClassifier(base, epsilon=epsilon, **common),
        "lp2st_cluster": RRWithPriorClassifier(
            base, epsilon=epsilon, n_stages=2,
            prior=ClusterPrior(n_clusters=8, epsilon=epsilon / 4,
                               preprocessor=preprocessor() if frame else None),
            **common,
        ),
        "vector_approx": VectorApproxClassifier(base, epsilon=epsilon, **common),
        "alibi": ALIBIClassifier(base, epsilon=epsilon, n_rounds=1, **common),
        "pate": PATEClassifier(base, epsilon=epsilon, delta=1e-5, **common),
        **{
            f"search_{strategy}": PrivateGridSearchCV(
                search_base, {C: [0.01, 1.0]}, epsilon=epsilon, strategy=strategy,
                random_state=seed,
            )
            for strategy in ("holdout", "random_stopping", "post_processing")
        },
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "adult"))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--learners", nargs="*", default=None)
    args = parser.parse_args()
    X, y = read(Path(args.data_dir) / "adult.data.csv")
    X_test, y_test = read(Path(args.data_dir) / "adult.test.csv")
    encoder = preprocessor().fit(X)  # features are public under label DP
    data = {True: (X, X_test), False: (encoder.transform(X), encoder.transform(X_test))}
    names = args.learners or list(learners(1.0, 0, True))
    print(f"UCI Adult, {len(X)} training and {len(X_test)} test rows, eps = {args.epsilon}, "
          f"seed {args.seed}; majority {(y_test == CLASSES[0]).mean():.4f}\n")
    print("| learner | DataFrame + pipeline | preprocessed array | difference (points) | "
          "ledger (DataFrame) | seconds |")
    print("|---|---|---|---|---|---|")
    for name in names:
        scores, start = {}, time.perf_counter()
        for frame in (True, False):
            model = clone(learners(args.epsilon, args.seed, frame)[name])
            accountant = BudgetAccountant(delta=1e-3)
            model.set_params(accountant=accountant)
            train, test = data[frame]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence of the noisy-label fits
                scores[frame] = model.fit(train, y).score(test, y_test)
            if frame:
                ledger = accountant.total().epsilon
        print(f"| {name} | {scores[True]:.4f} | {scores[False]:.4f} | "
              f"{100 * (scores[True] - scores[False]):+.2f} | {ledger:.3f} | "
              f"{time.perf_counter() - start:.0f} |")


if __name__ == "__main__":
    main()
