"""The base of the label-DP regressors: what their fit has of its own.

The fit is the classifiers' template (``_base.py``'s ``LabelDPFitTemplate``):
validate the public inputs and the format of ``y``, settle the public label
range, plan the fit and its whole privacy spend from public information, run
the label-free checks, charge, and only then hand the labels, wrapped in
:class:`~sklearn_labeldp._private_labels.PrivateLabels` (its real-valued form),
to :meth:`_fit_private`. A failed fit leaves no fitted attribute.
"""

import warnings
from abc import ABCMeta, abstractmethod
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _num_samples

from .._base import LabelDPFitTemplate, PreparedFit, ReplayKeyWarningMixin
from .._private_labels import PrivateLabels, check_real_labels
from ..accounting import BudgetAccountant
from ..exceptions import PrivacyLeakWarning
from ..utils import SECURE, check_label_range
from ..utils._logging import user_stacklevel

__all__ = ["BaseLabelDPRegressor"]


class BaseLabelDPRegressor(LabelDPFitTemplate, ReplayKeyWarningMixin, RegressorMixin,
                           BaseEstimator, metaclass=ABCMeta):
    """Base class of the regressors whose fit is label-DP.

    The fit is :class:`~sklearn_labeldp._base.LabelDPFitTemplate`'s, the
    classifiers' too; what is the regressors' own is the labels' public frame
    (:meth:`_prepare_fit`: real labels, checked, and the public label range)
    and the ``fit`` metadata (:meth:`_fit_params`).

    Subclasses implement :meth:`_validate_X` (the features they accept),
    :meth:`_plan_fit` and :meth:`_fit_private`, and declare ``_dp_outputs``
    and ``_derived_attributes`` (see
    :class:`~sklearn_labeldp._base.BaseLabelDPClassifier`).
    """

    _logs_resolved_settings = False  # mechanism_params_ holds DP-derived values too
    _dp_outputs: tuple = ()
    _derived_attributes: tuple = (
        "label_range_",
        "epsilon_",
        "delta_",
        "privacy_spend_",
        "mechanism_params_",
        "n_features_in_",
        "feature_names_in_",
    )

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "label_range": ["array-like", tuple, None],
        "random_state": ["random_state", np.random.Generator, StrOptions({SECURE})],
        "accountant": [BudgetAccountant, None],
    }

    @abstractmethod
    def _validate_X(self, X, *, reset):
        """The features as the subclass uses them (validated, or as given)."""

    @abstractmethod
    def _plan_fit(self, X, label_range, rng):
        """Everything decided from public data, and the whole privacy spend.

        Returns
        -------
        spend : PrivacySpend
        plan : dict
        """

    @abstractmethod
    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        """Fit from ``labels`` (read only through ``labels.release``); return fitted attributes."""

    def _check_before_charge(self, X, label_range, plan, fit_params):
        """Label-free checks beyond the plan (e.g. a trial fit); none here."""

    def _fit_params(self, X, sample_weight):
        """Checked ``fit`` metadata for the base estimator; none here."""
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__} does not accept sample_weight.")
        return {}

    def _label_range(self, y):
        """The public label range: the parameter, or (leaking it) that of ``y``."""
        if self.label_range is not None:
            return check_label_range(self.label_range)
        warnings.warn(
            f"{type(self).__name__}: `label_range` is None, so the range is taken from the "
            "smallest and largest label of y, which reveals them. Pass the public range "
            "of the labels as label_range=(low, high) to avoid this leak.",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        low, high = float(y.min()), float(y.max())
        if low == high:  # one label value: any range holding it; the width is the scale
            low, high = low - 0.5, high + 0.5
        return low, high

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit from labels released by a DP mechanism.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Public features.
        y : array-like of shape (n_samples,)
            Private real labels; read only by the DP mechanism.

        Returns
        -------
        self : object
        """
        return self._fit_or_discard(X, y, lambda X: self._fit_params(X, None))

    def _prepare_fit(self, X, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        X = self._validate_X(X, reset=True)
        values = check_real_labels(y, _num_samples(X))
        label_range = self._label_range(values)
        return PreparedFit(X, label_range, label_range,
                           lambda epsilon: PrivateLabels.real_valued(values, epsilon),
                           {"label_range_": label_range})
