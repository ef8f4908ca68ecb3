"""
==========================================================
Raw tabular data: UCI Adult as a pandas DataFrame
==========================================================

A tabular user reads a CSV with pandas and writes a scikit-learn pipeline whose
``ColumnTransformer`` one-hot encodes the string columns and scales the
numeric ones, choosing the columns by dtype. The label-DP meta-estimators take
that pipeline as their base estimator and hand it the DataFrame as given, as
scikit-learn's own meta-estimators do; only the labels go through a DP
mechanism: randomized response (Ghazi et al. 2021) or ALIBI's Laplace noise
with Bayesian denoising (Malek et al. 2021). A private hyperparameter search
(Chaudhuri and Vinterbo 2013; Liu and Talwar 2019) tunes the pipeline's
parameters, and a :class:`~sklearn_labeldp.BudgetAccountant` records every
spend.

The features of UCI Adult (Kohavi 1996) are public here and the income label
is private. :func:`~sklearn_labeldp.datasets.fetch_adult` reads the data from
``--data-dir`` (default: the environment variable ``SKLEARN_LABELDP_ADULT``,
else ``../shared/data/adult`` next to the repository when it holds
``adult.data.csv`` and ``adult.test.csv``), or else downloads OpenML's copy
once into scikit-learn's data home.
"""

import argparse
import os
import warnings

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_labeldp import ALIBIClassifier, BudgetAccountant, RRWithPriorClassifier
from sklearn_labeldp.datasets import fetch_adult
from sklearn_labeldp.linear_model import DPLogisticRegression
from sklearn_labeldp.model_selection import PrivateGridSearchCV

try:
    HERE = os.path.dirname(os.path.abspath(__file__))
except NameError:  # run by sphinx-gallery, from the examples folder
    HERE = os.getcwd()
BESIDE = os.path.join(HERE, "..", "..", "shared", "data", "adult")
if not os.path.exists(os.path.join(BESIDE, "adult.data.csv")):
    BESIDE = None  # fetch_adult then downloads OpenML's copy (once)
DEFAULT = os.environ.get("SKLEARN_LABELDP_ADULT", BESIDE)
parser = argparse.ArgumentParser(description="Raw UCI Adult through a label-DP pipeline.")
parser.add_argument("--data-dir", default=DEFAULT, help="folder with adult.data.csv")
args, _ = parser.parse_known_args()

# %%
# The data as it comes: strings and numbers in one DataFrame, a third of it
# held out for testing.

X, y = fetch_adult(args.data_dir, return_X_y=True)
X, X_test, y, y_test = train_test_split(X, y, test_size=1 / 3, random_state=0)
CLASSES = ["<=50K", ">50K"]  # public: the label set is not learnt from y
print(f"{len(X)} training rows, {X.shape[1]} columns:")
print(X.dtypes.astype(str).value_counts().to_string())


def preprocessor():
    return ColumnTransformer([
        ("text", OneHotEncoder(handle_unknown="ignore"),
         make_column_selector(dtype_exclude="number")),
        ("numbers", StandardScaler(), make_column_selector(dtype_include="number")),
    ])


def pipeline():
    return make_pipeline(preprocessor(), LogisticRegression(max_iter=500))


# %%
# The pipeline inside two label-DP meta-estimators, at epsilon = 1 each. The
# accountant is charged before any label is read.

EPSILON, SEED = 1.0, 0
accountant = BudgetAccountant(delta=1e-5)  # room for one Gaussian fit below
models = {
    "RRWithPrior (randomized response)": RRWithPriorClassifier(
        pipeline(), epsilon=EPSILON, classes=CLASSES, random_state=SEED, accountant=accountant
    ),
    "ALIBI (Laplace + Bayes)": ALIBIClassifier(
        pipeline(), epsilon=EPSILON, classes=CLASSES, n_rounds=1, random_state=SEED,
        accountant=accountant,
    ),
}
accuracy = {}
for name, model in models.items():
    model.fit(X, y)
    accuracy[name] = model.score(X_test, y_test)
    print(f"{name:<36} test accuracy {accuracy[name]:.4f}  (eps = {model.epsilon_})")
print("features seen by the pipeline:", list(models["ALIBI (Laplace + Bayes)"].feature_names_in_))

# %%
# The same learners on the numeric array the preprocessor makes, at the same
# epsilon and seed: the DataFrame costs no accuracy. (Not private as a whole:
# the array's preprocessor is fitted once here, only to compare.)

encoder = preprocessor().fit(X)
X_array, X_test_array = encoder.transform(X), encoder.transform(X_test)
for name, model in models.items():
    twin = clone(model).set_params(estimator=clone(model.estimator.steps[-1][1]),
                                   accountant=BudgetAccountant())
    array_accuracy = twin.fit(X_array, y).score(X_test_array, y_test)
    print(f"{name:<36} on the array {array_accuracy:.4f}  "
          f"difference {100 * (accuracy[name] - array_accuracy):+.2f} points")

# %%
# A private search over the pipeline's parameters: the regularisation of the
# logistic regression and the one-hot encoder's treatment of rare categories.
# With the ``"holdout"`` strategy the whole search costs its ``epsilon`` once.

grid = {
    "estimator__logisticregression__C": [0.01, 1.0],
    "estimator__columntransformer__text__min_frequency": [None, 50],
}
search = PrivateGridSearchCV(
    RRWithPriorClassifier(pipeline(), classes=CLASSES), grid, epsilon=EPSILON,
    strategy="holdout", random_state=SEED, accountant=accountant,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    search.fit(X, y)
name = "PrivateGridSearchCV (holdout)"
accuracy[name] = search.score(X_test, y_test)
print(f"{name:<36} test accuracy {accuracy[name]:.4f}  selected {search.best_params_}")

# %%
# A dask DataFrame. The meta-estimators hand ``X`` to a scikit-learn base that
# fits in memory, so they refuse a dask DataFrame with a message (before any
# charge); the linear models of :mod:`sklearn_labeldp.linear_model` fit a dask
# DataFrame of numeric columns blockwise, as the dask array of its values.
# Under label DP the features are public, so the encoder fitted above on them
# may encode the partitions.

try:
    import dask.dataframe as dd
except ImportError:  # the [dask] extra is not installed
    dd = None
if dd is not None:
    y_dask = dd.from_pandas(pd.Series(y, name="class"), npartitions=4)
    try:
        RRWithPriorClassifier(pipeline(), classes=CLASSES, accountant=accountant).fit(
            dd.from_pandas(X, npartitions=4), y_dask)
    except TypeError as error:
        print("RRWithPriorClassifier on a dask DataFrame:", str(error).split(". ")[0] + ".")

    def encoded_frame(array):
        dense = array.toarray() if hasattr(array, "toarray") else array
        return pd.DataFrame(dense, columns=encoder.get_feature_names_out())

    X_dask = dd.from_pandas(encoded_frame(X_array), npartitions=4)
    dask_model = DPLogisticRegression(
        solver="newton", epsilon=EPSILON, delta=1e-5, classes=CLASSES, random_state=SEED,
        accountant=accountant,
    ).fit(X_dask, y_dask)
    name = "DPLogisticRegression (dask)"
    accuracy[name] = dask_model.score(encoded_frame(X_test_array), y_test)
    print(f"{name:<36} test accuracy {accuracy[name]:.4f}  (eps = {dask_model.epsilon_})")

# %%
# The ledger: one record per fit, each charged before its labels were read.

for spend in accountant.spends:
    print(f"  {spend.mechanism:<32} eps = {spend.epsilon:.3f}")
total = accountant.total()
print(f"ledger total: eps = {total.epsilon:.3f}, delta = {total.delta}")

fig, ax = plt.subplots(figsize=(7, 2.8))
ax.barh(list(accuracy), list(accuracy.values()), color="tab:blue")
majority = (y_test == "<=50K").mean()
ax.axvline(majority, color="gray", linestyle="--", label=f"majority class ({majority:.3f})")
ax.set_xlim(0.7, 0.9)
ax.set_xlabel("test accuracy")
ax.set_title(f"UCI Adult as a DataFrame, label-DP at epsilon = {EPSILON} per fit")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
