"""all_estimators: what the package's public estimator discovery lists, and what it leaves out."""

import importlib.util
from abc import ABC, abstractmethod

import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.linear_model import LogisticRegression

import sklearn_labeldp.classifiers
from sklearn_labeldp._base import BaseLabelDPClassifier, BaseLabelDPMetaClassifier
from sklearn_labeldp.utils import all_estimators

HAS_TORCH = all(importlib.util.find_spec(name) is not None for name in ("torch", "skorch"))
CORE = {
    "ALIBIClassifier",
    "DPLeastSquaresClassifier",
    "DPLinearSVC",
    "DPLogisticRegression",
    "NormalizedRandomFourierFeatures",
    "PATEClassifier",
    "PrivateGridSearchCV",
    "RRWithPriorClassifier",
    "VectorApproxClassifier",
}


def test_lists_each_public_estimator_once_sorted_by_name():
    estimators = all_estimators()
    names = [name for name, _ in estimators]
    assert names == sorted(set(names))  # RRWithPriorClassifier is exported twice, listed once
    assert CORE <= set(names)
    for name, cls in estimators:
        assert issubclass(cls, BaseEstimator) and cls.__name__ == name
        assert cls.__module__.startswith("sklearn_labeldp.")


def test_private_bases_and_non_estimators_are_left_out():
    classes = {cls for _, cls in all_estimators()}
    assert not {BaseLabelDPClassifier, BaseLabelDPMetaClassifier} & classes
    names = {name for name, _ in all_estimators()}
    assert not {"BudgetAccountant", "ClusterPrior", "PrivacyBudget", "PrivacyLeakWarning"} & names


class PublicEstimator(BaseEstimator):
    def fit(self, X, y):
        return self


class Configuration(BaseEstimator):
    """Has parameters (so it clones) but nothing to fit, like ClusterPrior."""


class AbstractEstimator(ABC, BaseEstimator):
    @abstractmethod
    def fit(self, X, y):
        """Abstract."""


def test_reads_public_names_and_skips_abstract_foreign_and_underscored(monkeypatch):
    for cls in (PublicEstimator, AbstractEstimator, Configuration):
        monkeypatch.setattr(cls, "__module__", "sklearn_labeldp.classifiers")
        monkeypatch.setattr(sklearn_labeldp.classifiers, cls.__name__, cls, raising=False)
    monkeypatch.setattr(sklearn_labeldp.classifiers, "_Hidden", PublicEstimator, raising=False)
    monkeypatch.setattr(
        sklearn_labeldp.classifiers, "LogisticRegression", LogisticRegression, raising=False
    )
    listed = dict(all_estimators())
    assert listed["PublicEstimator"] is PublicEstimator
    assert not {"AbstractEstimator", "Configuration", "_Hidden", "LogisticRegression"} & set(
        listed
    )


def test_type_filter():
    classifiers = all_estimators(type_filter="classifier")
    transformers = all_estimators(type_filter="transformer")
    assert transformers == [(name, cls) for name, cls in all_estimators()
                            if issubclass(cls, TransformerMixin)]
    assert {name for name, _ in transformers} == {"NormalizedRandomFourierFeatures"}
    assert all(issubclass(cls, ClassifierMixin) for _, cls in classifiers)
    assert CORE - {"NormalizedRandomFourierFeatures"} <= {name for name, _ in classifiers}
    both = all_estimators(type_filter=["classifier", "transformer"])
    assert both == sorted(classifiers + transformers)
    regressors = all_estimators(type_filter="regressor")
    assert {name for name, _ in regressors} == {"DPLeastSquaresRegressor", "NoisyLabelRegressor"}


@pytest.mark.parametrize("type_filter", ["cluster", [], ["classifier", "cluster"]])
def test_unknown_type_filter_is_refused(type_filter):
    with pytest.raises(ValueError, match="type_filter"):
        all_estimators(type_filter=type_filter)


def test_the_torch_estimators_are_left_out_without_the_extra(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *args: None if name == "torch" else
        find_spec(name, *args)
    )
    names = {name for name, _ in all_estimators()}
    assert CORE <= names and "LabelDPNetClassifier" not in names


@pytest.mark.skipif(not HAS_TORCH, reason="the torch extra is not installed")
def test_the_torch_estimators_are_listed_with_the_extra():
    assert "LabelDPNetClassifier" in dict(all_estimators(type_filter="classifier"))
