"""The shared fit of the private ERM estimators of ``_erm``: ``_BasePrivateERM``.

The losses live in ``_losses``, the calibration of the mechanisms in
``_calibration`` and the training methods in the solver table of
``_solvers``; this module maps the features, plans the fit from public
information, and reports the model on the raw features. The whole private
training of every binary problem is one solver's ``train`` function of the
label codes, which the estimators call only through ``PrivateLabels.release``.

Feature map (public, label-independent). With ``R = data_norm`` (by default
``"auto"``, the median of the training ``X``'s row norms: free under
label DP, where the features are public, and warned about under full DP), each row
``x`` is first clipped to norm ``R`` (rows inside the ball are unchanged, rows
outside are scaled down to it by their own norm), then mapped to

- ``z = x / R`` without intercept, and
- ``z = [x / R, 1] / sqrt(2)`` with ``fit_intercept=True``: the intercept is
  an extra constant feature and the whole vector stays inside the unit ball.

A model ``f`` on ``z`` is reported in the raw feature space as
``coef_ = f[:p] / (R sqrt(2))`` and ``intercept_ = f[p] / sqrt(2)`` (without
the ``sqrt(2)`` when there is no intercept), so that ``decision_function(X) =
X @ coef_.T + intercept_`` as in scikit-learn. Predictions do not clip: a row
with norm above ``R`` is scored with the same coefficients. The intercept is
regularised like every other coordinate of ``f``.

Regularisation. ``C`` means what it means for scikit-learn's
``LogisticRegression(C, solver="liblinear", intercept_scaling=1)`` on ``x /
R``: the penalty is ``||w||^2 / (2 C n)`` per example on the coefficients ``w``
of ``[x / R, 1]`` (intercept included, as liblinear does). With ``f = sqrt(2)
w`` on ``z`` this is ``Lambda = 1 / (2 C n)`` in ``J``, the ``Lambda`` that
the privacy analysis uses (``1 / (C n)`` without intercept).
"""

import math
from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseLabelDPClassifier
from .._predict import DecisionFunctionPredictMixin
from ..utils import is_dask
from ._calibration import (
    DEFAULT_AUTO_C,
    NEWTON_LABEL_SIGNAL,
    SECOND_ORDER_AUTO_STEPS,
    auto_first_order_steps,
    auto_perturbation_regularization,
    auto_regularization,
    warn_one_vs_rest_noise,
)
from ._dask import LinearDecisionMixin, map_design, prepare_dask_Xy
from ._preprocessing import CLASSIFIER_AUTO_QUANTILE, clipped_design, plan_row_bound, row_norms
from ._randomized_labels import auto_solver, randomized_response_regularization
from ._solvers import SOLVERS, ERMSetting

__all__ = ["resolved_steps"]


def _feature_map(X, data_norm, fit_intercept, norms=None):
    """``z = [clip(x) / R, 1] / sqrt(2)``, or ``clip(x) / R`` without intercept (module doc).

    A dask ``X`` gets the same map on every block of rows, lazily; ``norms``
    are a numpy or sparse ``X``'s row norms from the plan (one pass over X).
    """
    scale = 1.0 / (data_norm * math.sqrt(2.0)) if fit_intercept else 1.0 / data_norm
    design = partial(clipped_design, max_norm=data_norm, intercept=fit_intercept, scale=scale)
    return map_design(design, X) if is_dask(X) else design(X, norms=norms)


def _example_attributes(spend):
    """``example_epsilon_`` and ``example_delta_`` from a full-DP spend; none under label DP."""
    if "example_epsilon" not in spend.params:
        return {}
    return {"example_epsilon_": spend.params["example_epsilon"],
            "example_delta_": spend.params["example_delta"]}


def resolved_steps(estimator, solver, n_samples, n_features, n_classes):
    """``{"n_noisy_steps": T}`` for a solver with noisy steps (``"auto"`` resolved), else ``{}``.

    ``solver`` is the estimator's solver, ``"auto"`` resolved.

    ``"auto"``: :data:`~sklearn_labeldp.linear_model._calibration.SECOND_ORDER_AUTO_STEPS`
    for DP-Newton and DP-FC,
    :func:`~sklearn_labeldp.linear_model._calibration.auto_first_order_steps` for
    DP-SGD and DP-Adam. Public quantities only.
    """
    if not SOLVERS[solver].reports_n_iter:
        return {}
    steps = estimator.n_noisy_steps
    if steps != "auto":
        return {"n_noisy_steps": steps}
    if solver in ("newton", "fc"):
        return {"n_noisy_steps": SECOND_ORDER_AUTO_STEPS}
    return {"n_noisy_steps": auto_first_order_steps(
        solver, epsilon=estimator.epsilon, delta=estimator.delta,
        n_samples=n_samples, n_classes=n_classes, n_features=n_features,
        privacy=estimator.privacy, max_grad_norm=estimator.max_grad_norm,
        learning_rate=estimator.learning_rate)}


class _BasePrivateERM(LinearDecisionMixin, DecisionFunctionPredictMixin, BaseLabelDPClassifier):
    """Shared planning, fit and predictions of the private ERM models."""

    _dp_outputs = ("coef_", "intercept_")
    _derived_attributes = (
        *BaseLabelDPClassifier._derived_attributes,
        "n_iter_",
        "solver_",
        "C_",
        "n_noisy_steps_",
        "data_norm_",
        "clipped_fraction_",
        "example_epsilon_",
        "example_delta_",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPClassifier._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "data_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "privacy": [StrOptions({"label", "full"})],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    _delta = 0.0  # pure-DP solvers; DPLogisticRegression reads its parameter
    # Solvers whose training reduces its statistics blockwise over a dask X (rows
    # chunked): the full-batch second-order steps of DPLogisticRegression.
    _dask_solvers = frozenset()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validate_X(self, X, *, reset, y="no_validation"):
        # The first step of a fit (and of a prediction): before any charge, and before
        # validate_data would compute a dask array.
        if is_dask(X, y):
            also = ""
            if self._dask_solvers:
                also = f" (its solvers {sorted(self._dask_solvers)} fit on dask arrays)"
            raise TypeError(
                f"{type(self).__name__} is not supported on dask arrays; compute() first "
                "or use DPLeastSquaresClassifier, which reduces its statistics blockwise"
                f"{also}."
            )
        return super()._validate_X(X, reset=reset, y=y)

    def _prepare_Xy(self, X, y):
        """The base class's; for a dask fit with a blockwise solver, lazy (as
        DPLeastSquaresClassifier's): shapes and chunks are checked without
        computing ``X`` or ``y``, the labels become a dask array of codes, and
        one small reduction checks they are all in ``classes``. Other solvers
        refuse dask input here, before any charge."""
        if not (is_dask(X, y) and self._solver_for(X) in self._dask_solvers):
            return super()._prepare_Xy(X, y)
        return prepare_dask_Xy(self, X, y)

    def _expected_failed_checks(self):
        # See sklearn_labeldp.utils.expected_failed_checks.
        if self.solver != "auto" and SOLVERS[self.solver].reports_n_iter:
            return {}
        return {"check_non_transformer_estimators_n_iter": (
            "objective and output perturbation withhold n_iter_: the optimiser's iteration "
            "count depends on the labels and is not covered by the privacy guarantee")}

    def _solver_for(self, X, n_classes=2):
        """The solver of a fit: ``solver``, or ``"auto"`` resolved by
        :func:`~sklearn_labeldp.linear_model._randomized_labels.auto_solver`
        from public quantities (epsilon, delta, n, d, K, ``privacy``, the
        loss, dask input)."""
        if self.solver != "auto":
            return self.solver
        # A dask X's row count is not computed here; the dask branch needs none (nor K).
        dask = is_dask(X)
        return auto_solver(epsilon=self.epsilon, delta=self._delta, n_classes=n_classes,
                           privacy=self.privacy, n_samples=None if dask else X.shape[0],
                           n_features=self._mapped_features(X),
                           loss=self._loss(), dask=dask)

    def _mapped_features(self, X):
        """``d``: the columns of the mapped features, the intercept's included."""
        return X.shape[1] + (1 if self.fit_intercept else 0)

    def _regularization(self, C, n_samples):
        # Lambda on z = [x / R, 1] / sqrt(2) such that the penalty on the coefficients of
        # [x / R, 1] is scikit-learn's ||w||^2 / (2 C n) (module docstring).
        return 1.0 / (C * n_samples * (2.0 if self.fit_intercept else 1.0))

    def _resolve(self, solver, n_samples, n_features, n_classes):
        """The "auto" hyperparameters, from public quantities only (n, d, K, the budget).

        ``solver`` is the fit's (``"auto"`` resolved); ``n_features`` is ``d``,
        the mapped features (the intercept's column included). Returns the
        resolved values by name; ``C`` is always among them:
        ``_calibration.auto_regularization`` for DP-Newton and DP-FC (with
        its bias-variance floor for DP-Newton under label DP),
        :func:`~sklearn_labeldp.linear_model._calibration.auto_perturbation_regularization`
        for objective and output perturbation,
        :func:`~sklearn_labeldp.linear_model._randomized_labels.randomized_response_regularization`
        for randomized response, 1 for DP-SGD and DP-Adam.
        """
        if self.C != "auto":
            return {"C": self.C}
        if solver == "randomized_response":
            reg = randomized_response_regularization(
                epsilon=self.epsilon, n_samples=n_samples, n_classes=n_classes,
                n_features=n_features)
        elif solver in ("objective", "output"):
            reg = auto_perturbation_regularization(
                solver, epsilon=self.epsilon, n_samples=n_samples, n_classes=n_classes,
                n_features=n_features, loss=self._loss(), privacy=self.privacy,
                fit_intercept=self.fit_intercept, delta=self._delta)
        elif solver in ("newton", "fc"):
            # The noise does not depend on Lambda: calibrate once at any C to read it.
            probe = SOLVERS[solver].calibrate(self._setting(
                n_samples, n_classes, C=1.0,
                **resolved_steps(self, solver, n_samples, n_features, n_classes)))
            # Label-DP DP-Newton: at least the bias-variance ridge of a noisy Newton step
            # (auto_regularization), which matters where the noise is large (small data).
            signal = NEWTON_LABEL_SIGNAL if solver == "newton" and self.privacy == "label" else (
                None)
            reg = auto_regularization(probe["noise_scales"]["gradient"], n_features,
                                      signal=signal)
        else:
            return {"C": DEFAULT_AUTO_C}
        return {"C": 1.0 / (reg * n_samples * (2.0 if self.fit_intercept else 1.0))}

    def _setting(self, n_samples, n_classes, C, **resolved):
        """The public description of the fit that the solver is calibrated from."""
        reg = self._regularization(C, n_samples)
        return ERMSetting(
            epsilon=self.epsilon, delta=self._delta, privacy=self.privacy, loss=self._loss(),
            n_samples=n_samples, n_classes=n_classes, regularization=reg, tol=self.tol,
            max_iter=self.max_iter,
        )

    def _plan_fit(self, X, classes, rng):
        # Every check and choice here reads public information only (X, n, the
        # parameters): a configuration error costs no budget, and the bound, Lambda
        # and the mechanism's parameters are fixed before any label is read.
        name = self._solver_for(X, classes.size)
        solver = SOLVERS[name]
        if solver.deltas == "positive" and not 0 < self._delta < 1:
            raise ValueError(
                f"solver={name!r} adds Gaussian noise and is (epsilon, delta)-DP: "
                f"delta must lie in (0, 1); got {self._delta!r}."
            )
        if name == "randomized_response" and self.privacy != "label":
            raise ValueError(
                "solver='randomized_response' protects the labels only: it needs "
                f"privacy='label'; got privacy={self.privacy!r}."
            )
        n_features = self._mapped_features(X)
        resolved = {**resolved_steps(self, name, X.shape[0], n_features, classes.size),
                    **self._resolve(name, X.shape[0], n_features, classes.size)}
        setting = self._setting(X.shape[0], classes.size, **resolved)
        params = solver.calibrate(setting)
        params.update({key: value for key, value in resolved.items() if key != "n_noisy_steps"})
        warn_one_vs_rest_noise(type(self).__name__, name, params, X.shape[0], n_features,
                               classes.size)
        # The row norms serve the bound and the clipping (_feature_map): one pass over X.
        norms = None if is_dask(X) else row_norms(X)
        data_norm, bound_attributes = plan_row_bound(
            X, self.data_norm, privacy=self.privacy, quantile=CLASSIFIER_AUTO_QUANTILE,
            norms=norms)
        spend = solver.privacy_spend(setting, params)
        plan = {"solver": name, "setting": setting, "mechanism_params": params,
                "data_norm": data_norm, "row_norms": norms, "bound_attributes": bound_attributes,
                "resolved": {"solver_": name,
                             **{f"{key}_": value for key, value in resolved.items()}},
                "example_attributes": _example_attributes(spend)}
        return spend, plan

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        solver, params = SOLVERS[plan["solver"]], plan["mechanism_params"]
        data_norm = plan["data_norm"]
        # For dask X (newton, fc), Z is lazy and the solver reduces it blockwise.
        coef = labels.release(
            solver.train,
            np.arange(labels.n_samples),
            failure=solver.failure(type(self).__name__, plan["setting"]),
            Z=_feature_map(X, data_norm, self.fit_intercept, plan["row_norms"]),
            setting=plan["setting"],
            params=params,
            random_state=mechanism_rng,
        )
        # coef_ and intercept_ on the raw features (module docstring).
        if self.fit_intercept:
            coef = coef / math.sqrt(2.0)
            fitted = {"coef_": coef[:, :-1] / data_norm, "intercept_": coef[:, -1].copy()}
        else:
            fitted = {"coef_": coef / data_norm, "intercept_": np.zeros(coef.shape[0])}
        if solver.reports_n_iter:
            fitted["n_iter_"] = params["n_noisy_steps"]
        return {**fitted, "mechanism_params_": params, **plan["resolved"],
                **plan["bound_attributes"], **plan["example_attributes"]}
