"""The package logger records the label-free facts of a fit: charge, stages, resolved settings."""

import logging

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_labeldp import BudgetAccountant, PrivacyLeakWarning, RRWithPriorClassifier
from sklearn_labeldp.linear_model import DPLogisticRegression
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.regression import NoisyLabelRegressor


def test_the_logger_records_the_charge_and_the_resolved_settings(caplog):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.integers(0, 2, 200)
    with caplog.at_level(logging.DEBUG, logger="sklearn_labeldp"):
        RRWithPriorClassifier(LogisticRegression(), epsilon=1.0, classes=[0, 1],
                              random_state=0, accountant=BudgetAccountant()).fit(X, y)
        PrivateGridSearchCV(RRWithPriorClassifier(LogisticRegression(), classes=[0, 1]),
                            {"estimator__C": [0.1, 1.0]}, epsilon=0.5, random_state=0,
                            accountant=BudgetAccountant()).fit(X, y)
    messages = [r.getMessage() for r in caplog.records if r.name == "sklearn_labeldp"]
    assert messages[0] == "RRWithPriorClassifier charged epsilon=1, delta=0 (LP-MST)"
    assert messages[1] == "RRWithPriorClassifier: stage 1 of 1, 200 examples"
    assert messages[2].startswith("RRWithPriorClassifier resolved {")
    assert messages[-1] == ("PrivateGridSearchCV charged epsilon=0.5, delta=0 "
                            "(PrivateGridSearchCV(holdout)); selected candidate 0 of 2")
    assert len(messages) == 4  # the candidates' fits ran sealed: logging was off


@pytest.mark.parametrize("make", [RRWithPriorClassifier, DPLogisticRegression,
                                  NoisyLabelRegressor])
def test_a_leak_warning_points_at_the_users_call(make):
    # The fit's hooks sit at different depths (a meta-estimator's _fit calls the
    # template's); up to commit 05b8ffa the fixed stacklevels pointed into the library.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(float)
    estimator = make().set_params(accountant=BudgetAccountant())
    with pytest.warns(PrivacyLeakWarning) as record:
        estimator.fit(X, y if "Regressor" in type(estimator).__name__ else y.astype(int))
    assert {w.filename for w in record if w.category is PrivacyLeakWarning} == {__file__}
