"""Fitted methods read fitted attributes only: ``set_params`` after a fit changes nothing.

A fitted model is a function of its release. A method that read a constructor
parameter instead (``self.epsilon`` rather than the fitted ``epsilon_``) would
answer for a release that never happened: up to commit 05b8ffa,
``RRWithPriorClassifier`` and ``VectorApproxClassifier`` debiased their eps-1
labels with eps-8 laws after ``set_params(epsilon=8)``, and a post-processing
search scored its candidates with the wrong law. Every estimator of
``test_common.INSTANCES`` is fitted, its privacy parameters changed, and every
fitted method's output compared.
"""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler
from test_common import INSTANCES

from sklearn_labeldp._target_adapters import TargetReuseMixin
from sklearn_labeldp.accounting import BudgetAccountant

_METHODS = ("predict", "predict_proba", "decision_function", "transform")


def _data(estimator):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X, (y.astype(float) if getattr(estimator, "_estimator_type", "") == "regressor"
               else y)


def _outputs(model, X):
    """What every fitted method returns (and the reusable targets' laws, where offered)."""
    out = {name: np.asarray(getattr(model, name)(X)) for name in _METHODS
           if hasattr(model, name)}
    if isinstance(model, TargetReuseMixin):
        try:
            model.check_target_reuse()
        except ValueError:  # the configuration's targets cannot be reused: nothing to read
            return out
        reuse = model.reusable_targets()
        out["reusable"] = dataclasses.asdict(reuse)
    return out


def _changed_privacy(estimator):
    """Every privacy parameter of ``estimator`` (nested too) moved far from its value."""
    changed = {}
    for key, value in estimator.get_params(deep=True).items():
        name = key.rsplit("__", 1)[-1]
        if name == "epsilon" and isinstance(value, float):
            changed[key] = value * 8.0 if value < 1e5 else value / 1e3
        elif name == "delta" and isinstance(value, float):
            changed[key] = value * 10.0
    return changed


def _assert_same(before, after, path="outputs"):
    if isinstance(before, dict):
        assert before.keys() == after.keys(), path
        for key in before:
            _assert_same(before[key], after[key], f"{path}[{key!r}]")
    else:
        np.testing.assert_array_equal(np.asarray(before), np.asarray(after), err_msg=path)


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_set_params_after_fit_changes_no_fitted_output(estimator):
    model = clone(estimator)
    params = model.get_params()
    if "classes" in params:
        model.set_params(classes=[0, 1, 2])
    if "accountant" in params:
        model.set_params(accountant=BudgetAccountant(math.inf, 1.0))
    X, y = _data(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        before = _outputs(model, X)
        changed = _changed_privacy(model)
        assert changed or "epsilon" not in params, "a privacy parameter to change"
        model.set_params(**changed)
        after = _outputs(model, X)
    _assert_same(before, after)
