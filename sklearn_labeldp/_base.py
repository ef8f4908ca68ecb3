"""The shared base of every label-DP meta-estimator.

Data flows one way: ``y`` -> a DP mechanism (through :class:`PrivateLabels`,
the only reader of the true labels) -> privatised targets -> the base
estimator. The base class does everything that must be identical across
estimators: parameter and data validation, the label set and its encoding,
the budget charge before any label is used, metadata routing, prediction
through ``classes_``, and the fitted privacy attributes.
"""

import copy
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    _fit_context,
    clone,
    is_regressor,
)
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metadata_routing import (
    UNUSED,
    MetadataRouter,
    MethodMapping,
    _raise_for_params,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    _check_y,
    _num_samples,
    has_fit_parameter,
    indexable,
    validate_data,
)

from ._private_labels import PrivateLabels
from .accounting import BudgetAccountant, default_accountant
from .exceptions import PrivacyLeakWarning
from .utils import (
    SECURE,
    dask_frames_as_arrays,
    derived_random_state,
    forget_derived_seeds,
    is_dask_frame,
    spawn_generators,
)
from .utils._estimator_checks import meta_estimator_failures
from .utils._logging import logger, user_stacklevel
from .utils._mechanism_params import MechanismParams


def quick_trial(estimator):
    """Make a clone for a label-free trial fit quiet and short: one epoch is enough
    to surface a configuration error (shapes, devices, augmentations)."""
    params = estimator.get_params()
    if params.get("verbose"):  # a Pipeline's verbose is a bool, a network's an int
        estimator.set_params(verbose=False if isinstance(params["verbose"], bool) else 0)
    epochs = params.get("max_epochs")
    # Only shortened: an invalid value must still reach the estimator's own check.
    if isinstance(epochs, Integral) and not isinstance(epochs, bool) and epochs > 1:
        estimator.set_params(max_epochs=1)
    return estimator


def quiet(estimator):
    """Set ``verbose=0`` on ``estimator`` and on every nested estimator that has it.

    For an estimator fitted inside a mechanism, or whose number of fits is a
    secret (random stopping's rounds): what it prints (an ``MLPClassifier``'s
    loss per iteration, a network's epoch table) is computed from true labels,
    and a progress bar of this library inside it (a nested meta-estimator's)
    writes to the public stderr, the one stream the seal leaves open, so that
    its count of bars would tell how often it was fitted. The seal drops the
    rest; a quiet estimator does not compute it in the first place.
    """
    loud = [
        key
        for key, value in estimator.get_params(deep=True).items()
        if (key == "verbose" or key.endswith("__verbose")) and value != 0
    ]
    if loud:
        estimator.set_params(**dict.fromkeys(loud, 0))
    return estimator


def check_classes(classes):
    """The label set as a sorted 1-d array of at least two distinct labels."""
    classes = np.asarray(classes)
    if classes.ndim != 1:
        raise ValueError(f"classes must be 1-d; got shape {classes.shape}.")
    if np.unique(classes).size != classes.size:
        raise ValueError("classes must not contain duplicates.")
    if classes.size < 2:
        raise ValueError(
            f"Classification needs at least 2 classes; got {classes.size} class "
            f"({classes.tolist()}). Pass all possible labels through `classes`."
        )
    return np.sort(classes)


def check_sample_weight(sample_weight, X):
    """``sample_weight`` as a float array of one finite weight >= 0 per row of ``X``.

    Checked before any charge. scikit-learn's own check accepts negative
    weights, and a base estimator may too (or fail on them only after the
    budget was spent); a negative weight has no meaning as public importance.
    """
    try:
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
    except ValueError as exc:  # shape, NaN or infinity: scikit-learn's text says which
        raise ValueError(
            f"sample_weight must hold one finite weight >= 0 per row of X: {exc}"
        ) from exc
    if (weights < 0).any():
        raise ValueError(
            "sample_weight must hold finite weights >= 0; got "
            f"{int((weights < 0).sum())} negative weight(s)."
        )
    return weights


def subset_fit_params(fit_params, indices, n_samples):
    """Index the per-sample entries of ``fit_params`` (e.g. ``sample_weight``)."""
    return {
        key: _safe_indexing(value, indices)
        if hasattr(value, "__len__") and not isinstance(value, str)
        and _num_samples(value) == n_samples
        else value
        for key, value in fit_params.items()
    }


def seed_estimator(estimator, rng):
    """Give every unset ``random_state`` of ``estimator`` (nested too) its own seed.

    The seeds are :class:`~sklearn_labeldp.utils.DerivedRandomState` objects
    drawn from ``rng``, a stream independent of the mechanism's; the fit
    template resets them to ``None`` on everything it returns.
    """
    unset = [
        key
        for key, value in estimator.get_params(deep=True).items()
        if (key == "random_state" or key.endswith("__random_state")) and value is None
    ]
    if unset:
        estimator.set_params(**{key: derived_random_state(rng) for key in unset})
    return estimator


class TrialTypeError(ValueError, TypeError):
    """A base estimator's ``TypeError`` in a trial fit: a configuration error (so a
    ``ValueError``, as every failed trial fit) that remains a ``TypeError`` for
    callers that expect the base's type, as with scikit-learn's meta-estimators."""


def trial_fit(owner, fit, *, estimator, where, parameter="estimator", role="base estimator",
              hint=""):
    """Run ``fit()``, a label-free trial of ``estimator`` on ``where``, warnings ignored.

    Its failure becomes the configuration error of ``owner`` that says no
    budget was spent (it is raised before the charge), naming the ``parameter``
    that holds ``estimator``; a ``TypeError`` (e.g. an object the base cannot
    read as a number) stays one, as for scikit-learn's meta-estimators, and is
    a ``ValueError`` too (:class:`TrialTypeError`).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit()
    except Exception as exc:
        error = TrialTypeError if isinstance(exc, TypeError) else ValueError
        raise error(
            f"{type(owner).__name__}: the {role} (parameter `{parameter}`, "
            f"{type(estimator).__name__}) failed a trial fit on {where} "
            f"with label-free targets, so no budget was spent: {exc}{hint}"
        ) from exc


# Rows of the public data used by the trial fit that precedes any budget charge.
_TRIAL_ROWS = 64


def _rows_with_missing_values(X):
    """Rows of ``X`` holding a NaN, a missing value or an infinity, where that is cheap to see.

    Covers numeric arrays, sparse matrices and pandas DataFrames; other inputs
    (lists of strings, dask arrays) are left to the base estimator's own checks.
    """
    if sp.issparse(X):
        coo = X.tocoo()
        return np.unique(coo.row[~np.isfinite(coo.data)]).astype(np.intp)
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "fc":
        return np.flatnonzero(~np.isfinite(X).all(axis=1))
    if hasattr(X, "isna") and hasattr(X, "select_dtypes") and X.ndim == 2:
        missing = X.isna().to_numpy().any(axis=1)
        numeric = X.select_dtypes(include="number").to_numpy(dtype=np.float64, na_value=np.nan)
        return np.flatnonzero(missing | ~np.isfinite(numeric).all(axis=1))
    return np.empty(0, dtype=np.intp)


def trial_rows(X, n_rows):
    """Indices of the public rows a label-free trial fit uses.

    The first ``n_rows`` rows, except that rows with a missing or non-finite
    value (see :func:`_rows_with_missing_values`) come in first, so a base
    estimator that refuses them fails in the trial, before the charge, even
    when such a row lies beyond the first ``n_rows`` (a base that imputes them
    simply fits). Rows are taken from ``X`` as it is (same type, same columns)
    through :func:`sklearn.utils._safe_indexing` by the caller.
    """
    n_total = _num_samples(X)
    n_rows = min(n_rows, n_total)
    missing = _rows_with_missing_values(X)[:n_rows]
    if missing.size == 0:
        return np.arange(n_rows)
    rest = np.setdiff1d(np.arange(min(n_total, n_rows + missing.size)), missing)
    return np.sort(np.concatenate([missing, rest[: n_rows - missing.size]]))


def trial_codes(n_rows, n_classes):
    """Label-free hard targets for a trial fit: the codes ``0, 1, ..., K - 1, 0, 1, ...``."""
    return np.arange(n_rows) % n_classes


class DiscardOnFailureMixin:
    """A fit that fails leaves no fitted attribute, whatever step failed.

    ``_fit_or_discard(X, y, extra)`` runs the subclass's ``self._fit(X, y,
    extra)``; on any exception every public attribute ending in ``_`` is
    removed before the exception propagates, so a model is never left half
    fitted (a failure after the charge keeps the charge, recorded on the
    accountant).
    """

    def _fit_or_discard(self, X, y, extra):
        try:
            self._fit(X, y, extra)
        except BaseException:
            self._discard_fitted_state()
            raise
        return self

    def _discard_fitted_state(self):
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)


@dataclass(frozen=True)
class PreparedFit:
    """What a fit knows before its plan: validated inputs and the labels' public frame.

    Attributes
    ----------
    X : object
        The features as the estimator uses them.
    target : object
        The public frame of the labels that ``_plan_fit`` receives: the label
        set ``classes`` of a classifier, the ``label_range`` of a regressor.
    check_target : object
        What ``_check_before_charge`` receives of it: the number of classes,
        or the label range.
    labels : callable (epsilon) -> PrivateLabels
        The door to the true labels, opened after the charge.
    attributes : dict
        Fitted attributes of the labels' public frame (``classes_``,
        ``label_range_``, a dask DataFrame's ``feature_names_in_``), set when
        the fit succeeds.
    """

    X: object
    target: object
    check_target: object
    labels: Callable
    attributes: dict


class LabelDPFitTemplate(DiscardOnFailureMixin):
    """The one fit of every label-DP estimator, classifier or regressor.

    1. :meth:`_prepare_fit` (the subclass's): validation, and the labels'
       public frame (the label set, or the label range);
    2. ``fit_params_of(X)``: the checked ``fit`` metadata;
    3. :meth:`_plan_fit`: everything decided from public data, and the whole
       :class:`~sklearn_labeldp.accounting.PrivacySpend`;
    4. :meth:`_check_before_charge`: label-free checks (trial fits);
    5. the charge to the accountant (a ``BudgetError`` here costs nothing);
    6. :meth:`_fit_private`, the only hook that receives the labels, through
       :class:`PrivateLabels`; what follows its releases is post-processing.

    The fitted attributes it returns, the labels' public frame and the
    privacy attributes (``privacy_spend_``, ``epsilon_``, ``delta_``) are then
    set; a fit that fails leaves none (:class:`DiscardOnFailureMixin`).
    """

    def _fit(self, X, y, fit_params_of):
        prepared = self._prepare_fit(X, y)
        X = prepared.X
        fit_params = fit_params_of(X)
        plan_rng, mechanism_rng, estimator_rng = spawn_generators(self.random_state, 3)
        spend, plan = self._plan_fit(X, prepared.target, plan_rng)
        self._check_before_charge(X, prepared.check_target, plan, fit_params)
        accountant = default_accountant() if self.accountant is None else self.accountant
        accountant.spend(spend)  # BudgetError here: no label used yet
        logger.info("%s charged epsilon=%.6g, delta=%.6g (%s)", type(self).__name__,
                    spend.epsilon, spend.delta, spend.mechanism)
        fitted = self._fit_private(X, prepared.labels(spend.epsilon), plan, fit_params,
                                   mechanism_rng, estimator_rng)
        forget_derived_seeds(fitted)  # nothing internally derived is handed back
        if "mechanism_params_" in fitted:  # one key scheme, the renamed keys still read
            fitted["mechanism_params_"] = MechanismParams(fitted["mechanism_params_"])
        for name, value in {**fitted, **prepared.attributes}.items():
            setattr(self, name, value)
        self.privacy_spend_ = spend
        self.epsilon_ = spend.epsilon
        self.delta_ = spend.delta
        if self._logs_resolved_settings and hasattr(self, "mechanism_params_"):
            logger.debug("%s resolved %s", type(self).__name__, self.mechanism_params_)

    # Whether mechanism_params_ holds resolved settings only, logged at DEBUG. A
    # regressor's also holds values computed from its DP release (RR-on-Bins'
    # outputs under a DP prior): in the model, not in the log, so that the log
    # says the same whatever the labels.
    _logs_resolved_settings = True


class ReplayKeyWarningMixin:
    """Warn when a fitted private model whose ``random_state`` the user gave is pickled.

    A user-given ``random_state`` (int, ``RandomState`` or ``Generator``) is
    kept as given, as scikit-learn keeps every parameter, and it replays the
    mechanism's noise: a pickle is how a model leaves the process, so that is
    where the :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning` is
    raised. ``copy.deepcopy`` stays in the process and does not warn.
    """

    def __getstate__(self):
        fresh = self.random_state is None or (
            isinstance(self.random_state, str) and self.random_state == SECURE
        )
        if not fresh and hasattr(self, "privacy_spend_"):
            warnings.warn(
                f"pickling a fitted {type(self).__name__} whose random_state="
                f"{self.random_state!r} was given by the user: random_state is a replay key "
                "of the mechanism's noise, and whoever knows it (and the features) can "
                "subtract the noise and recover the private labels. Keep such a model "
                "private, or fit with random_state=None before releasing it.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        return super().__getstate__()

    def __deepcopy__(self, memo):
        # A copy stays in the process: no leak warning (pickling warns, see __getstate__).
        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        copied.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return copied


class BaseLabelDPClassifier(
    LabelDPFitTemplate, ReplayKeyWarningMixin, ClassifierMixin, BaseEstimator,
    metaclass=ABCMeta,
):
    """Base class for classifiers whose fit is label-DP.

    The fit is :class:`LabelDPFitTemplate`'s: validate ``X`` and ``y``, settle
    the label set, let the subclass plan the fit from public information
    (:meth:`_plan_fit`, which also returns the whole privacy spend), charge the
    accountant, and only then hand the labels, wrapped in
    :class:`PrivateLabels`, to :meth:`_fit_private`. A fit that fails leaves
    no fitted attribute behind.
    """

    # What a fit returns, as an allowlist of attribute paths (fnmatch patterns
    # over dotted paths, e.g. "estimator_.*"): ``_dp_outputs`` are the outputs
    # of the DP mechanism; ``_derived_attributes`` are computed from them and
    # from public data only (a base estimator fitted on noisy labels is
    # derived). Nothing else computed from true labels may be reachable from
    # a fitted estimator: tests/test_released_state.py walks it against these.
    _dp_outputs: tuple = ()
    _derived_attributes: tuple = (
        "classes_",
        "epsilon_",
        "delta_",
        "privacy_spend_",
        "mechanism_params_",
        "n_features_in_",
        "feature_names_in_",
    )

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "random_state": ["random_state", np.random.Generator, StrOptions({SECURE})],
        "accountant": [BudgetAccountant, None],
    }

    @abstractmethod
    def _plan_fit(self, X, classes, rng):
        """Validate data-dependent parameters and plan the fit before labels are used.

        ``rng`` is a stream of its own for label-independent choices (splits).

        Returns
        -------
        spend : PrivacySpend
            Everything the fit will spend; charged to the accountant.
        plan : dict
            Public state handed to :meth:`_fit_private`.
        """

    @abstractmethod
    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        """Fit from the labels, read only through ``labels.release``.

        ``mechanism_rng`` feeds the mechanisms only; ``estimator_rng`` seeds
        anything fitted afterwards, so seeds visible on fitted models say
        nothing about the mechanism's coins.

        Returns
        -------
        dict
            Fitted attributes to set on ``self``.
        """

    def _validate_X(self, X, *, reset, y="no_validation"):
        tags = self.__sklearn_tags__()
        kwargs = dict(
            accept_sparse=["csr", "csc"] if tags.input_tags.sparse else False,
            ensure_all_finite=not tags.input_tags.allow_nan,
            reset=reset,
        )
        return validate_data(self, X, y, **kwargs)

    def _encode_labels(self, y):
        """The sorted label set and the codes of ``y`` in it."""
        if self.classes is None:
            warnings.warn(
                f"{type(self).__name__}: `classes` is None, so the label set is inferred "
                "from y, which reveals which labels occur in the private data. Pass "
                "`classes` explicitly to avoid this leak.",
                PrivacyLeakWarning,
                stacklevel=user_stacklevel(),

            )
            classes = np.unique(y)
        else:
            classes = self.classes
        classes = check_classes(classes)
        try:
            codes = np.searchsorted(classes, y)
        except TypeError as exc:
            raise ValueError(
                f"the labels in y are not comparable with classes={classes.tolist()}."
            ) from exc
        codes = np.clip(codes, 0, classes.size - 1)
        unknown = classes[codes] != y
        if unknown.any():
            raise ValueError(f"y holds labels that are not in `classes` ({classes.tolist()}).")
        return classes, codes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit from privatised labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Public features.
        y : array-like of shape (n_samples,)
            Private labels; read only by the DP mechanism.

        Returns
        -------
        self : object
        """
        return self._fit_or_discard(X, y, lambda X: {})

    def _prepare_Xy(self, X, y):
        """Validated features, the label set and the label codes, before any charge."""
        X, y = self._validate_X(X, y=y, reset=True)
        if self.classes is None:  # given classes are checked by membership instead
            check_classification_targets(y)
        classes, codes = self._encode_labels(y)
        return X, classes, codes

    def _prepare_fit(self, X, y):
        feature_names = None
        if is_dask_frame(X, y):
            X, y, feature_names = self._dask_frames_as_arrays(X, y)
        X, classes, codes = self._prepare_Xy(X, y)
        attributes = {"classes_": classes}
        if feature_names is not None:  # as validate_data records a pandas DataFrame's
            attributes["feature_names_in_"] = feature_names
        return PreparedFit(X, classes, classes.size,
                           lambda epsilon: PrivateLabels(codes, classes.size, epsilon),
                           attributes)

    def _dask_frames_as_arrays(self, X, y):
        """A dask DataFrame/Series as dask arrays (fitted blockwise where supported),
        and the DataFrame's feature names."""
        return dask_frames_as_arrays(X, y, owner=type(self).__name__)

    def _check_before_charge(self, X, n_classes, plan, fit_params):
        """Label-free checks that need more than the plan (e.g. a trial fit); none here."""


class BaseLabelDPMetaClassifier(MetaEstimatorMixin, BaseLabelDPClassifier):
    """Base class for label-DP meta-estimators that wrap any scikit-learn estimator.

    Subclasses implement :meth:`_default_estimator` besides the fit hooks of
    :class:`BaseLabelDPClassifier`. The base estimator is cloned and seeded
    for every model fitted. In a subclass with ``_passes_X_through`` (every
    classifier of :mod:`sklearn_labeldp.classifiers`) it receives ``X`` as
    given (a DataFrame, a sparse matrix, a list of documents) and decides which
    inputs are accepted, first in a label-free trial fit before the charge;
    ``n_features_in_`` and ``feature_names_in_`` are then the fitted base
    estimator's, as for ``OneVsRestClassifier``. ``sample_weight`` and other
    ``fit`` metadata are routed to the base estimator.
    """

    # sample_weight is only forwarded to the base estimator, never consumed here:
    # routing it must not require a request on the meta-estimator itself.
    __metadata_request__fit = {"sample_weight": UNUSED}

    _parameter_constraints: dict = {
        **BaseLabelDPClassifier._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict"]), None],
    }

    @abstractmethod
    def _default_estimator(self):
        """The base estimator used when ``estimator=None``."""

    def _fit_trial_targets(self, estimator, X, n_classes, fit_params, *, full_size):
        """Fit ``estimator`` on label-free targets of the kind the mechanism produces.

        Called by the base's :meth:`_check_before_charge`; a subclass that
        overrides that with a trial of its own (PATE tries one teacher on the
        data a teacher gets) need not define it. ``full_size`` says whether
        ``X`` is as large as the smallest training set of the real fit, so
        size-dependent steps can be tried too.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no trial targets.")

    def _trial_rows(self, plan):
        """Rows of the smallest training set the real fit gives the base estimator."""
        return None

    def _get_estimator(self):
        return self._default_estimator() if self.estimator is None else self.estimator

    def _expected_failed_checks(self):
        # See sklearn_labeldp.utils.expected_failed_checks.
        return meta_estimator_failures(has_fit_parameter(self._get_estimator(), "sample_weight"))

    # Whether X reaches the base estimator as given (see _prepare_Xy). A subclass
    # whose own steps compute on X as a numeric array (DP-SGD's sampling reads
    # X.shape and trains a network on it) keeps the array validation of
    # BaseLabelDPClassifier by leaving this False.
    _passes_X_through = False

    def _dask_frames_as_arrays(self, X, y):
        if not self._passes_X_through:
            return super()._dask_frames_as_arrays(X, y)
        raise TypeError(
            f"{type(self).__name__} passes X to its base estimator as given, and "
            "scikit-learn estimators fit in memory: got a dask DataFrame or Series. Call "
            "`.compute()` on X and y first (a pandas DataFrame goes through a "
            "ColumnTransformer pipeline as it is), or, for data larger than memory, use a "
            "model of sklearn_labeldp.linear_model, which fits a dask DataFrame of numeric "
            "columns blockwise."
        )

    def _prediction_X(self, X):
        """``X`` for the fitted base estimator: as given, or validated as at fit."""
        return X if self._passes_X_through else self._validate_X(X, reset=False)

    def _prepare_Xy(self, X, y):
        """The label set and the label codes; ``X`` is returned as given.

        As scikit-learn's meta-estimators (``OneVsRestClassifier``) and
        ``GridSearchCV`` do, the features go to the base estimator untouched (a
        DataFrame with string columns for a ``ColumnTransformer`` pipeline, a
        sparse matrix, a list of documents): the base validates them, first in
        the trial fit before the charge. Only the labels and the row count, which
        the mechanisms need, are checked here; as in ``GridSearchCV``,
        ``indexable`` makes rows selectable (a sparse matrix becomes CSR, an
        object with ``__array__`` only an ndarray), leaving DataFrames and
        lists as they are.
        """
        if not self._passes_X_through:
            return super()._prepare_Xy(X, y)
        y = _check_y(y, estimator=self)
        X, y = indexable(X, y)  # also: X must be array-like with y's row count
        if self.classes is None:  # given classes are checked by membership instead
            check_classification_targets(y)
        classes, codes = self._encode_labels(y)
        return X, classes, codes

    def _fit(self, X, y, route_fit_params):
        super()._fit(X, y, route_fit_params)
        if not self._passes_X_through:
            return  # validate_data set the feature attributes
        # As OneVsRestClassifier: the base that saw X (as given) says what it saw.
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
            if hasattr(self.estimator_, name):
                setattr(self, name, getattr(self.estimator_, name))

    def _final_estimator_template(self):
        """The unfitted estimator whose fitted clone becomes ``estimator_``."""
        return self._get_estimator()

    def _trial_template(self, plan):
        """The unfitted estimator the label-free trial fits a clone of: the base."""
        return self._get_estimator()

    def _check_before_charge(self, X, n_classes, plan, fit_params):
        """Fit a clone of the base estimator on a few public rows with label-free targets.

        Configuration errors (a network whose input shape does not fit ``X``,
        an unavailable device, a single-output regressor where one output per
        class is needed, ...) would otherwise surface only after the budget
        was charged. The trial reads no label, so it costs nothing.
        """
        smallest = self._trial_rows(plan) or _num_samples(X)
        n_rows = min(smallest, _TRIAL_ROWS)
        rows = trial_rows(X, n_rows)
        estimator = seed_estimator(clone(self._trial_template(plan)), np.random.default_rng(0))
        quick_trial(estimator)
        hint = ""
        if is_regressor(estimator) and not get_tags(estimator).target_tags.multi_output:
            hint = (
                " A regressor must predict one output per class here: wrap a "
                "single-output regressor in sklearn.multioutput.MultiOutputRegressor."
            )
        trial_fit(
            self,
            lambda: self._fit_trial_targets(
                estimator,
                _safe_indexing(X, rows),
                n_classes,
                subset_fit_params(fit_params, rows, _num_samples(X)),
                full_size=n_rows == smallest,
            ),
            estimator=estimator,
            where=f"{n_rows} public rows",
            hint=hint,
        )

    def _new_estimator(self, rng):
        """A fresh, seeded clone of the base estimator."""
        return seed_estimator(clone(self._get_estimator()), rng)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base_tags = get_tags(self._get_estimator())
        tags.input_tags.sparse = base_tags.input_tags.sparse
        tags.input_tags.allow_nan = base_tags.input_tags.allow_nan
        tags.input_tags.string = base_tags.input_tags.string
        tags.input_tags.categorical = base_tags.input_tags.categorical
        return tags

    def get_metadata_routing(self):
        """Route ``fit`` metadata such as ``sample_weight`` to the base estimator.

        Returns
        -------
        MetadataRouter
        """
        return (
            MetadataRouter(owner=self)
            .add_self_request(self)
            .add(
                estimator=self._get_estimator(),
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )

    def _route_fit_params(self, X, sample_weight, fit_params):
        if _routing_enabled():
            if sample_weight is not None:
                fit_params["sample_weight"] = sample_weight
            routed = dict(process_routing(self, "fit", **fit_params).estimator.fit)
            if routed.get("sample_weight") is not None:
                routed["sample_weight"] = check_sample_weight(routed["sample_weight"], X)
            return routed
        _raise_for_params(fit_params, self, "fit")
        if sample_weight is None:
            return {}
        if not has_fit_parameter(self._get_estimator(), "sample_weight"):
            raise ValueError(
                f"the base estimator {type(self._get_estimator()).__name__} does not "
                "accept sample_weight."
            )
        return {"sample_weight": check_sample_weight(sample_weight, X)}

    # The base estimator's parameters are validated by its own fit.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the base estimator on privatised labels.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Public features, passed to the base estimator as given.
        y : array-like of shape (n_samples,)
            Private labels; read only by the DP mechanism.
        sample_weight : array-like of shape (n_samples,), default=None
            Public, label-independent weights passed to the base estimator;
            finite and >= 0, checked before any budget is charged.
        **fit_params : dict
            Routed to the base estimator's ``fit`` (requires metadata routing).

        Returns
        -------
        self : object
        """
        return self._fit_or_discard(
            X, y, lambda X: self._route_fit_params(X, sample_weight, fit_params)
        )
