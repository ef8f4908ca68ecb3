"""Discovery of the package's public estimators, for tests and documentation."""

import importlib
import importlib.util
import inspect
import pkgutil

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin

__all__ = ["all_estimators"]

_PACKAGE = "sklearn_labeldp"
# Subpackages behind an optional extra, with the distributions they import.
_OPTIONAL_MODULES = {f"{_PACKAGE}.nn": ("torch", "skorch")}
_TYPE_MIXINS = {
    "classifier": ClassifierMixin,
    "regressor": RegressorMixin,
    "transformer": TransformerMixin,
}


def _public_modules(package):
    """The package and its public submodules, recursively; skips missing optional extras."""
    yield package
    for info in pkgutil.iter_modules(package.__path__, prefix=f"{package.__name__}."):
        if info.name.rpartition(".")[2].startswith("_"):
            continue
        needs = _OPTIONAL_MODULES.get(info.name, ())
        if any(importlib.util.find_spec(name) is None for name in needs):
            continue
        module = importlib.import_module(info.name)
        if info.ispkg:
            yield from _public_modules(module)
        else:
            yield module


def all_estimators(type_filter=None):
    """List the public estimators of sklearn-labeldp.

    Walks the package's public modules (private modules are skipped: their
    public classes are found where they are re-exported) and collects every
    public, concrete subclass of :class:`sklearn.base.BaseEstimator` defined
    in the package that has a ``fit`` method (configuration objects such as
    :class:`~sklearn_labeldp.priors.ClusterPrior` are parameters, not
    estimators). The estimators of :mod:`sklearn_labeldp.nn` are listed
    only when its extra (PyTorch and skorch) is installed.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer"}, list of those or None, \
            default=None
        Keep only the estimators of these kinds (subclasses of
        :class:`~sklearn.base.ClassifierMixin`,
        :class:`~sklearn.base.RegressorMixin` or
        :class:`~sklearn.base.TransformerMixin`); None keeps every estimator.

    Returns
    -------
    estimators : list of (str, type) tuples
        ``(name, class)`` of each estimator once, sorted by name.

    Examples
    --------
    >>> from sklearn_labeldp.utils import all_estimators
    >>> [name for name, _ in all_estimators(type_filter="transformer")]
    ['NormalizedRandomFourierFeatures']
    >>> "PrivateGridSearchCV" in dict(all_estimators(type_filter="classifier"))
    True
    """
    kinds = [type_filter] if isinstance(type_filter, str) else type_filter
    if kinds is not None and (not kinds or any(kind not in _TYPE_MIXINS for kind in kinds)):
        raise ValueError(
            f"type_filter must be None, one of {sorted(_TYPE_MIXINS)} or a non-empty list of "
            f"them; got {type_filter!r}."
        )
    estimators = {
        (name, cls)
        for module in _public_modules(importlib.import_module(_PACKAGE))
        for name, cls in inspect.getmembers(module, inspect.isclass)
        if not name.startswith("_")
        and issubclass(cls, BaseEstimator)
        and callable(getattr(cls, "fit", None))
        and not inspect.isabstract(cls)
        and cls.__module__.partition(".")[0] == _PACKAGE
    }
    if kinds is not None:
        mixins = tuple(_TYPE_MIXINS[kind] for kind in kinds)
        estimators = {(name, cls) for name, cls in estimators if issubclass(cls, mixins)}
    return sorted(estimators, key=lambda pair: (pair[0], pair[1].__module__))
