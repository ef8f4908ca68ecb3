"""Fitted methods read fitted attributes only: ``set_params`` after a fit changes nothing.

A fitted model is a function of its release. A method that read a constructor
parameter instead (``self.epsilon`` rather than the fitted ``epsilon_``) would
answer for a release that never happened: up to commit 05b8ffa,
``RRWithPriorClassifier`` and ``VectorApproxClassifier`` debiased their eps-1
labels with eps-8 laws after ``set_params(epsilon=8)``, and a post-processing
search scored its candidates with the wrong law; ``NormalizedRandomFourierFeatures``
scaled its features by the ``n_components`` parameter, and a fitted
``RRWithPriorClassifier`` refused or allowed target reuse by its current
``n_stages`` and ``prior``. Every estimator of ``test_common.INSTANCES`` is
fitted, every numeric parameter changed, and every fitted method's output
compared.
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
            reuse = model.reusable_targets()
        except ValueError:  # the fitted release's targets cannot be reused: nothing to read
            return out
        out["reusable"] = dataclasses.asdict(reuse)
    return out


# Parameters whose change cannot move a fitted output by design: the seed, how
# much is printed, the worker count, where spends are charged, the label set.
_UNMOVED = {"random_state", "verbose", "n_jobs", "accountant", "classes"}


def _changed_parameters(estimator):
    """Every numeric parameter of ``estimator`` (nested too) moved far from its value."""
    changed = {}
    for key, value in estimator.get_params(deep=True).items():
        name = key.rsplit("__", 1)[-1]
        if name in _UNMOVED or isinstance(value, bool):
            continue
        if isinstance(value, float):
            changed[key] = value * 8.0 if value < 1e5 else value / 1e3
        elif isinstance(value, int):
            changed[key] = value + 1
    return changed


def _assert_same(before, after, path="outputs"):
    if isinstance(before, dict):
        assert before.keys() == after.keys(), path
        for key in before:
            _assert_same(before[key], after[key], f"{path}[{key!r}]")
    else:
        np.testing.assert_array_equal(np.asarray(before), np.asarray(after), err_msg=path)


def fitted_on_wine(estimator):
    """A clone of ``estimator`` fitted on the wine data (its label set and an unlimited ledger)."""
    model = clone(estimator)
    params = model.get_params()
    if "classes" in params:
        model.set_params(classes=[0, 1, 2])
    if "accountant" in params:
        model.set_params(accountant=BudgetAccountant(math.inf, 1.0))
    X, y = _data(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y), X


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_set_params_after_fit_changes_no_fitted_output(estimator):
    # Every numeric parameter, the privacy ones (epsilon, delta) included.
    params = estimator.get_params()
    model, X = fitted_on_wine(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = _outputs(model, X)
        changed = _changed_parameters(model)
        assert changed or "epsilon" not in params, "a privacy parameter to change"
        model.set_params(**changed)
        after = _outputs(model, X)
    _assert_same(before, after)


def test_target_reuse_follows_the_fitted_release_not_the_parameters():
    # check_target_reuse reads the parameters (a search asks it before any charge);
    # reusable_targets asks the fitted release, whatever set_params did after it.
    from sklearn_labeldp.classifiers import RRWithPriorClassifier

    X, y = _data(RRWithPriorClassifier())
    plain = RRWithPriorClassifier(epsilon=2.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    law = dataclasses.asdict(plain.reusable_targets())
    plain.set_params(n_stages=2)
    with pytest.raises(ValueError, match="n_stages=1 and prior=None only"):
        plain.check_target_reuse()
    _assert_same(law, dataclasses.asdict(plain.reusable_targets()))
    two = RRWithPriorClassifier(epsilon=2.0, classes=[0, 1, 2], n_stages=2,
                                random_state=0).fit(X, y)
    two.set_params(n_stages=1)
    two.check_target_reuse()
    with pytest.raises(ValueError, match="got n_stages=2"):
        two.reusable_targets()
    given = RRWithPriorClassifier(epsilon=2.0, classes=[0, 1, 2], prior=np.full((len(y), 3), 1 / 3),
                                  random_state=0).fit(X, y)
    assert given.mechanism_params_["prior"] == "given"
    given.set_params(prior=None)
    with pytest.raises(ValueError, match="a given prior"):
        given.reusable_targets()
