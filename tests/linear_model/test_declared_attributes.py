"""The linear models declare every attribute their fit sets (the release allowlist).

``_dp_outputs`` and ``_derived_attributes`` (fnmatch patterns over attribute
paths, see ``BaseLabelDPClassifier``) list what a fit may return. A fitted
attribute missing from them would escape the checks that walk a fitted model
against the allowlist, so every solver and privacy mode is fitted here and its
attributes compared with the declaration.
"""

import fnmatch

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_labeldp.linear_model import DPLeastSquaresClassifier, DPLinearSVC, DPLogisticRegression

CASES = {
    **{
        f"logreg-{solver}-{privacy}": (DPLogisticRegression, dict(
            solver=solver, privacy=privacy, data_norm=4.0 if privacy == "full" else "auto",
            delta=0.0 if solver in ("objective", "output") else 1e-5))
        for solver in ("objective", "output", "newton", "fc", "sgd", "adam")
        for privacy in ("label", "full")
    },
    "logreg-sgd-minibatch": (DPLogisticRegression, dict(
        solver="sgd", privacy="full", data_norm=4.0, delta=1e-5, batch_size=50)),
    **{
        f"svc-{solver}-{privacy}": (DPLinearSVC, dict(
            solver=solver, privacy=privacy, data_norm=4.0 if privacy == "full" else "auto"))
        for solver in ("objective", "output")
        for privacy in ("label", "full")
    },
    **{
        f"dpls-{formulation}-{privacy}": (DPLeastSquaresClassifier, dict(
            formulation=formulation, privacy=privacy,
            data_norm=4.0 if privacy == "full" else "auto"))
        for formulation in ("weighted", "ridge")
        for privacy in ("label", "full")
    },
}


@pytest.mark.parametrize(("Estimator", "params"), CASES.values(), ids=CASES.keys())
def test_every_fitted_attribute_is_declared(Estimator, params):
    X, y = make_blobs(300, n_features=4, centers=3, random_state=0)
    clf = Estimator(epsilon=2.0, classes=[0, 1, 2], random_state=0, **params).fit(X, y)
    fitted = [name for name in vars(clf) if name.endswith("_") and not name.startswith("_")]
    declared = (*Estimator._dp_outputs, *Estimator._derived_attributes)
    undeclared = [name for name in fitted
                  if not any(fnmatch.fnmatchcase(name, pattern) for pattern in declared)]
    assert undeclared == []
    assert {"coef_", "intercept_"} <= set(fitted) and set(Estimator._dp_outputs) == {
        "coef_", "intercept_"}
    # What only some modes set is declared too, and set where documented.
    assert ("clipped_fraction_" in fitted) == (params["privacy"] == "label")
    assert ("example_epsilon_" in fitted) == (params["privacy"] == "full")
    assert np.isfinite(clf.coef_).all()
