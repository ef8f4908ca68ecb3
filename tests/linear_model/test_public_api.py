"""One public vocabulary for the private linear models, and one record of each mechanism."""

import inspect

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
)

CASES = {
    "ls-label-auto": DPLeastSquaresClassifier(),
    "ls-label-weighted": DPLeastSquaresClassifier(formulation="weighted"),
    "ls-full-ridge": DPLeastSquaresClassifier(privacy="full", formulation="ridge", data_norm=8.0),
    "logistic-auto": DPLogisticRegression(),
    "logistic-objective": DPLogisticRegression(solver="objective"),
    "logistic-output-full": DPLogisticRegression(solver="output", privacy="full", data_norm=8.0),
    "logistic-newton": DPLogisticRegression(solver="newton", delta=1e-5, n_noisy_steps=3),
    "logistic-fc-full": DPLogisticRegression(solver="fc", delta=1e-5, privacy="full",
                                             data_norm=8.0),
    "logistic-adam": DPLogisticRegression(solver="adam", delta=1e-5, n_noisy_steps=5),
    "logistic-sgd-full-minibatch": DPLogisticRegression(
        solver="sgd", delta=1e-5, privacy="full", batch_size=30, n_noisy_steps=5, data_norm=8.0
    ),
    "svc-objective": DPLinearSVC(),
    "svc-output": DPLinearSVC(solver="output"),
}

COMMON = {"epsilon", "privacy", "data_norm", "fit_intercept", "classes", "random_state",
          "accountant"}


def _parameters(Estimator):
    return dict(inspect.signature(Estimator).parameters)


@pytest.mark.parametrize("Estimator", [DPLeastSquaresClassifier, DPLogisticRegression,
                                       DPLinearSVC])
def test_shared_parameters_have_one_name_and_default(Estimator):
    params = _parameters(Estimator)
    assert COMMON <= set(params)
    assert params["data_norm"].default == "auto"
    assert params["privacy"].default == "label"
    # scikit-learn's meanings: C for the ERM models (LogisticRegression, LinearSVC),
    # alpha for least squares (Ridge); max_iter and tol only with an optimiser.
    if Estimator is DPLeastSquaresClassifier:
        assert {"alpha", "gram_weight"} <= set(params)
        assert not {"C", "max_iter", "tol"} & set(params)
    else:
        assert {"C", "max_iter", "tol"} <= set(params) and "alpha" not in params
        assert params["max_iter"].default == 1000


@pytest.mark.parametrize("name", CASES)
def test_fitted_attributes_and_label_independent_mechanism_record(name):
    X, y = make_classification(300, 5, n_informative=3, n_classes=3, random_state=0)
    estimator = CASES[name]
    fits = [
        estimator.set_params(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X, labels)
        for labels in (y, (y + 1) % 3, np.zeros_like(y))
    ]
    fitted = {key for key in vars(fits[0]) if key.endswith("_") and not key.startswith("_")}
    expected = {"classes_", "coef_", "intercept_", "n_features_in_", "epsilon_", "delta_",
                "privacy_spend_", "mechanism_params_", "data_norm_"}
    if estimator.privacy == "label":
        expected.add("clipped_fraction_")
    else:
        expected |= {"example_epsilon_", "example_delta_"}  # whole examples, besides labels
    if getattr(estimator, "solver", None) in ("newton", "fc", "sgd", "adam"):
        expected |= {"n_iter_", "n_noisy_steps_"}  # the public step count, resolved
    # The resolved hyperparameters ("auto" or given): alpha_ and formulation_ for least
    # squares, C_ and solver_ for ERM.
    expected |= ({"alpha_", "formulation_"} if isinstance(estimator, DPLeastSquaresClassifier)
                 else {"C_", "solver_"})
    assert fitted == expected
    if isinstance(estimator, DPLeastSquaresClassifier):
        # "auto": the ridge formulation under label DP, the weighted one under full DP.
        assert {fit.formulation_ for fit in fits} == {
            {"ls-label-auto": "ridge", "ls-label-weighted": "weighted",
             "ls-full-ridge": "ridge"}.get(name, "weighted")}
    # The calibrated parameters are public: the same for any labels.
    records = [fit.mechanism_params_ for fit in fits]
    assert records[0] == records[1] == records[2]
    # Least squares resolves alpha after the release (post-processing of the released or
    # public Gramian): in mechanism_params_, not in the spend charged before it.
    charged = {key: value for key, value in records[0].items() if key != "alpha"}
    assert records[0] is not None and fits[0].privacy_spend_.params.items() >= charged.items()
    if estimator.privacy == "full":
        assert fits[0].privacy_spend_.params["example_epsilon"] == fits[0].example_epsilon_
        assert fits[0].privacy_spend_.params["example_delta"] == fits[0].example_delta_
