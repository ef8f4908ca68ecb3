"""The package logger records the label-free facts of a fit: charge, stages, resolved settings."""

import logging

import numpy as np
from sklearn.linear_model import LogisticRegression

from sklearn_labeldp import BudgetAccountant, RRWithPriorClassifier
from sklearn_labeldp.model_selection import PrivateGridSearchCV


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
