"""PrivateGridSearchCV: hyperparameter search whose total label-DP cost is proven."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_y, check_is_fitted, indexable

from .._base import ReplayKeyWarningMixin
from .._target_adapters import TargetReuseMixin
from ..accounting import BudgetAccountant, PrivacyBudget, default_accountant
from ..utils import SECURE, forget_derived_seeds, is_dask_frame, spawn_generators
from ..utils._logging import logger
from ._strategies import (
    ChargeReached,
    PlanningAccountant,
    SearchContext,
    fit_holdout,
    fit_post_processing,
    fit_random_stopping,
)

__all__ = ["PrivateGridSearchCV"]

# Parameters of the private step that the search itself sets: a grid may not touch them.
_SEARCH_OWNED = ("epsilon", "accountant", "random_state")


def _search_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


class PrivateGridSearchCV(
    ReplayKeyWarningMixin, ClassifierMixin, MetaEstimatorMixin, BaseEstimator
):
    """Hyperparameter search over a label-DP classifier with a proven total cost.

    Plain :class:`~sklearn.model_selection.GridSearchCV` fits every candidate
    on every fold and refits the best one: with ``m`` candidates and ``k``
    folds, each fitted at ``eps``, the labels are read ``m * k + 1`` times and
    the whole search costs ``(m * k + 1) * eps`` by sequential composition.
    This search costs ``epsilon`` in total (pure label-DP), with one of three
    strategies:

    ``"holdout"`` (Chaudhuri, Monteleoni and Sarwate 2011, Alg. 4)
        The rows are split at random, independently of the labels, into
        ``m + 1`` equal parts. Candidate ``i`` (with its ``epsilon`` set to the
        search's ``epsilon``) is trained on part ``i``; its mistakes ``z_i`` on
        part ``m + 1`` are counted and candidate ``i`` is returned with
        probability proportional to ``exp(-epsilon * z_i / 2)`` (the
        exponential mechanism; one label changes each ``z_i`` by at most 1).
        *Theorem*: the search is ``epsilon``-label-DP. Each label lies in
        exactly one part; a label of part ``i <= m`` is read only by
        candidate ``i``'s ``epsilon``-DP fit, and a label of part ``m + 1``
        only by the ``epsilon``-DP exponential mechanism (which may depend
        adaptively on the models, trained on other parts). Parallel
        composition over disjoint, label-independent parts gives
        ``max(epsilon, ..., epsilon) = epsilon``. ``best_estimator_`` is the
        selected candidate's model trained on its part (``n / (m + 1)`` rows):
        refitting it on all the data would read every label again and cost
        another ``epsilon``, so it is not refitted.

    ``"random_stopping"`` (Liu and Talwar 2019, random stopping; Papernot and Steinke 2022)
        A label-independent number of rounds ``T ~ Geometric(gamma)``
        (``P(T = t) = gamma (1 - gamma)^(t - 1)``, ``gamma =
        stopping_probability``, expected ``1 / gamma`` rounds) is drawn. The
        rows are split once at random into a training part and a validation
        part (``validation_fraction``). Each round runs an
        ``eps0``-label-DP algorithm ``Q`` with ``eps0 = epsilon / 3``: pick a
        candidate uniformly at random, train it on the training part with
        ``epsilon = eps0``, and release its validation accuracy from a
        mistake count with Laplace noise of scale ``1 / eps0`` (``Q`` is
        ``eps0``-DP by parallel composition over the two parts). The search
        returns the round with the highest noisy accuracy. *Theorem* (Liu and
        Talwar 2019, random stopping with geometric ``T``): if ``Q`` is
        ``eps0``-DP, the best of the ``T`` runs is ``3 * eps0``-DP, whatever
        ``gamma`` is; so the search is ``epsilon``-label-DP. The bound holds
        only while ``T`` and the losing rounds stay hidden (given ``T = t``
        the transcript is ``t * eps0``-DP), so nothing the search returns,
        records or warns depends on ``T``: no round count, no losing score,
        only the winner's warnings (those it emitted outside its own release,
        see below). ``publish_rounds=True`` releases every
        round for debugging and is charged ``T * eps0`` instead. Candidates
        must be pure DP (``delta = 0``): the bound is proven here for
        ``eps0``-DP rounds only, and other candidates are refused before
        anything is charged.

    ``"post_processing"``
        For grids that change only the base learner (keys ``"estimator"`` or
        ``"estimator__..."``), never the mechanism: the labels are privatised
        once, by fitting ``estimator`` (with ``epsilon``), and every candidate
        base learner is cross-validated on the privatised targets with a
        noise-aware (debiased) accuracy. Everything after the single release
        is post-processing, so the search costs exactly one mechanism's
        ``epsilon``. Supported: the estimators that implement the post-processing
        protocol of :class:`~sklearn_labeldp._target_adapters.TargetReuseMixin`,
        :class:`~sklearn_labeldp.classifiers.RRWithPriorClassifier`
        with ``n_stages=1`` and ``prior=None`` (randomized response; debiased
        accuracy ``(a_obs - q) / (p - q)``, ``p = e^eps / (e^eps + K - 1)``,
        ``q = 1 / (e^eps + K - 1)``, with ``a_obs`` the agreement with the
        noisy labels) and :class:`~sklearn_labeldp.classifiers.VectorApproxClassifier`
        (debiased ``(mean Z_pred - q-) / (q+ - q-)`` from the bit of the
        predicted class, ``q+ = e^(eps/2) / (1 + e^(eps/2))``,
        ``q- = 1 / (1 + e^(eps/2))``). Both are unbiased estimates of the true
        accuracy because a validation row's noise is independent of the model
        that predicts it. ``best_estimator_`` is the privatising fit with its
        base learner replaced by the best candidate refitted on all the
        privatised targets (free).

    Regressors. A label-DP regressor
    (:class:`~sklearn_labeldp.regression.NoisyLabelRegressor`,
    :class:`~sklearn_labeldp.linear_model.DPLeastSquaresRegressor`) is searched
    with ``"holdout"`` or ``"random_stopping"``: a mistake count is replaced by
    the held-out squared error with the predictions and the labels clipped to
    the regressor's public ``label_range_`` and divided by the range's squared
    width, so each row adds a value in ``[0, 1]`` and one label still moves the
    sum by at most 1 (the same sensitivity, hence the same theorems);
    ``best_score_`` of ``"random_stopping"`` is one minus the noisy mean of that
    loss, and :meth:`score` is the selected model's R^2. ``"post_processing"``
    takes a :class:`~sklearn_labeldp.regression.NoisyLabelRegressor` (the
    protocol of :class:`~sklearn_labeldp._target_adapters.TargetReuseMixin`):
    its ``mean_test_score`` is an unbiased estimate, from the released labels,
    of the negative mean squared error against the mechanism's noiseless
    target (``b(y)``, the label's bin value for RR-on-Bins, the clipped label
    otherwise), and ``mean_observed_score`` the raw negative mean squared error
    against the releases.

    Warnings and errors. The candidate fits and the selections of
    ``"holdout"`` and ``"random_stopping"`` run sealed, inside the search's
    releases. Of their warnings only the selected candidate's are emitted, and
    only those it raised outside its own release: label-free checks before its
    charge and post-processing of its DP output (e.g. its base estimator, fitted
    on noisy labels, not converging). Fits run in parallel (``n_jobs``) keep
    only the label-free ones, as warnings of concurrent fits cannot be told
    apart. A fit that fails after the charge raises a
    :class:`~sklearn_labeldp.exceptions.ReleaseError` with a fixed message: its
    own error could depend on the labels. ``"post_processing"`` cross-validates
    on the privatised targets outside any release: all of it is post-processing.

    Parameters
    ----------
    estimator : label-DP classifier or regressor, or Pipeline
        An estimator of this library, or a Pipeline with one such step. The
        search sets its ``epsilon`` (``epsilon / 3`` per round for
        ``"random_stopping"``), its ``accountant`` and its ``random_state``
        for every candidate fit, and puts back the user's ``accountant`` and
        ``random_state`` on the estimator it returns.
    param_grid : dict or list of dicts
        As for :class:`~sklearn.model_selection.GridSearchCV`; it must not set
        ``epsilon``, ``accountant`` or ``random_state``. An empty dict ``{}``
        (or ``[{}]``) is, as there, the grid of one candidate: ``estimator``
        as given. The search then runs that candidate through its strategy:
        useful with ``"post_processing"``, whose noisy debiased
        cross-validated accuracy of it is free, wasteful otherwise
        (``"holdout"`` trains it on half the rows, ``"random_stopping"`` at
        ``epsilon / 3``): fit the estimator directly instead. An empty list,
        which has no candidate, is refused before anything is charged.
    epsilon : float
        Total label-DP epsilon of the search, > 0 and finite.
    strategy : {"holdout", "random_stopping", "post_processing"}, default="holdout"
    scoring : {"accuracy"} or None, default=None
        Only accuracy is supported: the private selections rely on a
        mistake count, whose sensitivity to one label is 1.
    cv : int, default=5
        Folds (shuffled ``KFold``, label-independent) for ``"post_processing"``.
    stopping_probability : float in (0, 1], default=None
        ``gamma`` of ``"random_stopping"``; ``None`` means ``1 / n_candidates``.
    validation_fraction : float in (0, 1), default=0.5
        Share of the rows used for validation by ``"random_stopping"``.
    publish_rounds : bool, default=False
        ``"random_stopping"`` only: release every round (``rounds_``) and
        charge ``T * eps0`` instead of ``epsilon``. For debugging.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Controls the splits, the selections and every candidate's randomness
        (each candidate fit gets its own generator, spawned with 128 bits or
        more; none is stored on what the search returns). ``None`` draws
        fresh operating-system entropy (``"secure"``: into AES counter-mode
        generators). An int, ``RandomState`` or
        ``Generator`` is a replay key: whoever knows it and the features can
        replay the mechanisms' noise and recover the labels, so keep it as
        secret as the labels.
    n_jobs : int, default=None
        Parallel candidate fits (joblib); ``None`` means 1.
    verbose : int, default=0
        Above 0, a progress bar (tqdm, when installed) counts the candidate
        fits: counts and times only. ``"random_stopping"`` shows none over its
        rounds unless ``publish_rounds=True``: their number is part of what its
        guarantee keeps secret. The candidates of ``"holdout"`` and
        ``"random_stopping"`` run with every ``verbose`` at 0 whatever theirs
        (their own bars would count the rounds), and so does the returned
        ``best_estimator_``.
    accountant : BudgetAccountant, default=None
        Charged with the whole spend of the search before any label is used
        (the candidates' own fits are not charged again). ``None`` uses the
        estimator's ``accountant``, and if it has none the process-wide
        :func:`~sklearn_labeldp.accounting.default_accountant`. The spend is
        composed from each candidate's own planned ``(epsilon, delta)``,
        read from a planning fit that stops at the candidate's charge, before
        its mechanism reads any label.

    Attributes
    ----------
    best_params_ : dict
    best_estimator_ : estimator
        The selected fitted model (see each strategy above for what it was
        trained on); ``predict``, ``predict_proba``, ``score``... delegate to it.
    best_index_ : int
        Index of the selected candidate in ``cv_results_["params"]``.
    best_score_ : float
        ``"post_processing"``: the best mean debiased CV accuracy (noisy);
        ``"random_stopping"``: the winning round's Laplace-noised validation
        accuracy. Not set by ``"holdout"``, whose mistake counts stay secret.
    cv_results_ : dict of arrays
        ``params`` and ``param_<name>`` (masked arrays) for every candidate,
        plus, per strategy:

        - ``"holdout"``: ``n_train_samples`` (size of each candidate's part)
          and ``selected``. No scores: the mistake counts are private, and
          publishing them would cost more than ``epsilon``.
        - ``"random_stopping"``: ``selected``. Only the winner's score is
          released (``best_score_``); the number of rounds and the rounds
          drawn stay secret.
        - ``"post_processing"``: ``split<k>_test_score``, ``mean_test_score``,
          ``std_test_score``, ``rank_test_score``: debiased accuracies
          computed from the privatised targets, hence **noisy** (unbiased
          estimates of the true accuracy), and free to publish; and
          ``mean_observed_score``, the raw agreement with the privatised
          targets (biased toward chance).
    rounds_ : dict
        Only with ``publish_rounds=True``: ``"candidate"`` (index drawn in each
        round) and ``"score"`` (its noisy validation accuracy).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        The selected estimator's, when it has one.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The selected estimator's, when it has them (``X`` a DataFrame).
    epsilon_ : float
        Total label-DP epsilon of the search (equal to ``epsilon``).
    delta_ : float
        The largest delta of a candidate (``"holdout"``), 0 for
        ``"random_stopping"``, the privatising fit's for ``"post_processing"``.
    privacy_spend_ : PrivacySpend
        Structured record of the search's spend, as charged to the accountant.

    References
    ----------
    .. [1] K. Chaudhuri, S. Vinterbo. A stability-based validation procedure
       for differentially private machine learning. NeurIPS 2013; and
       K. Chaudhuri, C. Monteleoni, A. Sarwate. Differentially private
       empirical risk minimization. JMLR 2011, Alg. 4.
    .. [2] J. Liu, K. Talwar. Private selection from private candidates.
       STOC 2019 (random stopping with a geometric number of runs: 3 eps).
    .. [3] N. Papernot, T. Steinke. Hyperparameter tuning with Renyi
       differential privacy. ICLR 2022.

    Examples
    --------
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn_labeldp.classifiers import RRWithPriorClassifier
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> from sklearn_labeldp.model_selection import PrivateGridSearchCV
    >>> X, y = make_circle_gaussians(2000, 4, sigma=0.3, random_state=0)
    >>> clf = RRWithPriorClassifier(KNeighborsClassifier(), classes=range(4))
    >>> search = PrivateGridSearchCV(clf, {"estimator__n_neighbors": [1, 50]}, epsilon=1.0,
    ...                              strategy="post_processing", random_state=0).fit(X, y)
    >>> search.best_params_, search.epsilon_
    ({'estimator__n_neighbors': 50}, 1.0)
    """

    # What a fit returns, as an allowlist of attribute paths (fnmatch patterns over
    # dotted paths), as the estimators declare it (BaseLabelDPClassifier):
    # ``_dp_outputs`` are outputs of the search's private selection (the selected
    # index, random stopping's noisy winning score, and with publish_rounds every
    # round's noisy score); ``_derived_attributes`` are computed from DP outputs
    # and public data only: the selected candidate's parameters and its label-DP
    # fit, the results table (public parameters and part sizes, the selection
    # indicator, and post-processing's scores from the privatised targets), the
    # label set and the spend record.
    _dp_outputs = ("best_index_", "best_score_", "rounds_")
    _derived_attributes = (
        "best_params_",
        "best_estimator_",
        "cv_results_",
        "classes_",
        "epsilon_",
        "delta_",
        "privacy_spend_",
        "n_features_in_",
        "feature_names_in_",
    )

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict", "get_params", "set_params"])],
        "param_grid": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "strategy": [StrOptions({"holdout", "random_stopping", "post_processing"})],
        "scoring": [StrOptions({"accuracy"}), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "stopping_probability": [Interval(Real, 0, 1, closed="right"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "publish_rounds": ["boolean"],
        "random_state": ["random_state", np.random.Generator, StrOptions({SECURE})],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "accountant": [BudgetAccountant, None],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        epsilon,
        strategy="holdout",
        scoring=None,
        cv=5,
        stopping_probability=None,
        validation_fraction=0.5,
        publish_rounds=False,
        random_state=None,
        n_jobs=None,
        verbose=0,
        accountant=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.strategy = strategy
        self.scoring = scoring
        self.cv = cv
        self.stopping_probability = stopping_probability
        self.validation_fraction = validation_fraction
        self.publish_rounds = publish_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.accountant = accountant

    # ------------------------------------------------------------------ checks
    def _private_prefix(self):
        """The parameter prefix of the label-DP step (``""``, or e.g. ``"clf__"`` in a Pipeline)."""
        params = self.estimator.get_params(deep=True)
        if all(name in params for name in _SEARCH_OWNED):
            return ""
        prefixes = [
            key[: -len("epsilon")]
            for key in params
            if key.endswith("__epsilon")
            and all(key[: -len("epsilon")] + name in params for name in _SEARCH_OWNED)
        ]
        if len(prefixes) != 1:
            raise ValueError(
                f"estimator {type(self.estimator).__name__} has "
                f"{'no' if not prefixes else 'more than one'} label-DP step with "
                "`epsilon`, `accountant` and `random_state` parameters: PrivateGridSearchCV "
                "tunes one label-DP estimator of this library, alone or as a Pipeline step."
            )
        return prefixes[0]

    def _candidates(self):
        """The candidate parameter dicts, checked against the estimator (public only)."""
        # {} and [{}] are scikit-learn's grid of one candidate (the estimator as
        # given) and are searched as such; [] has no candidate at all.
        no_candidate = (
            "param_grid=[] has no candidate: give at least one dict of parameter lists "
            "(an empty dict {} is the one candidate `estimator` as given)."
        )
        if isinstance(self.param_grid, list) and not self.param_grid:
            raise ValueError(no_candidate)
        candidates = list(ParameterGrid(self.param_grid))  # raises on empty value lists
        if not candidates:
            raise ValueError(no_candidate)
        prefix = self._private_prefix()
        if self.strategy == "post_processing":
            self._check_post_processing(candidates)
        for params in candidates:
            owned = [key for key in params if key in {prefix + n for n in _SEARCH_OWNED}]
            if owned:
                raise ValueError(
                    f"param_grid sets {owned}, which the search controls: the search sets "
                    "every candidate's epsilon from its own budget, charges its own "
                    "accountant and draws every candidate's randomness. Remove them from "
                    "the grid."
                )
            try:
                clone(self.estimator).set_params(**params)  # unknown names fail here
            except (AttributeError, ValueError) as exc:  # e.g. "estimator__k", estimator=None
                raise ValueError(
                    f"param_grid sets {sorted(params)}, but {type(self.estimator).__name__} "
                    f"cannot take them ({exc}); with estimator=None pass the base estimator "
                    "explicitly to tune its parameters."
                ) from exc
        return candidates

    def _check_post_processing(self, candidates):
        if self._private_prefix():
            raise ValueError(
                "strategy='post_processing' refits the base learner of one bare "
                "RRWithPriorClassifier, VectorApproxClassifier or NoisyLabelRegressor on its "
                "privatised "
                f"targets; it cannot reach into a {type(self.estimator).__name__}. Use "
                "strategy='holdout' or 'random_stopping' for a Pipeline."
            )
        if not isinstance(self.estimator, TargetReuseMixin):
            raise ValueError(
                "strategy='post_processing' needs an estimator whose privatised targets "
                "can be learnt from again, one that implements the post-processing "
                "protocol of sklearn_labeldp._target_adapters.TargetReuseMixin "
                "(check_target_reuse, reusable_targets, with_final_estimator): "
                "RRWithPriorClassifier, VectorApproxClassifier and NoisyLabelRegressor; got "
                f"{type(self.estimator).__name__}. Use strategy='holdout' instead."
            )
        self.estimator.check_target_reuse()
        for params in candidates:
            mechanism = [k for k in params if k != "estimator" and not k.startswith("estimator__")]
            if mechanism:
                raise ValueError(
                    f"strategy='post_processing' can only tune the base learner (parameters "
                    f"'estimator' or 'estimator__...'), but param_grid changes {mechanism}, "
                    "which changes the mechanism: every such candidate would privatise the "
                    "labels again. Use strategy='holdout' or 'random_stopping'."
                )

    def _accountant(self):
        """The search's own, else the private step's, else the process-wide default."""
        if self.accountant is not None:
            return self.accountant
        own = self.estimator.get_params(deep=True)[self._private_prefix() + "accountant"]
        return default_accountant() if own is None else own

    def _user_settings(self):
        """The private step's accountant and random_state as the user set them."""
        prefix = self._private_prefix()
        params = self.estimator.get_params(deep=True)
        return {prefix + name: params[prefix + name] for name in ("accountant", "random_state")}

    def _configured(self, params, epsilon, accountant, rng):
        """A fresh candidate with the search's epsilon, accountant and generator."""
        prefix = self._private_prefix()
        return clone(self.estimator).set_params(
            **params,
            **{prefix + "epsilon": epsilon, prefix + "accountant": accountant,
               prefix + "random_state": rng},
        )

    def _plan_candidates(self, candidates, epsilon, X, y):
        """Each candidate's own planned spend, from a fit stopped at its charge.

        No label reaches a mechanism: the planning fit raises at the charge,
        which comes after every label-free check. A configuration error of any
        candidate therefore surfaces here, before the search charges anything.

        Returns
        -------
        spends : list of PrivacySpend
        warnings : list of list of (Warning, type)
            What each planning fit warned, label-free since it comes before the
            candidate's charge (e.g. that ``classes`` is inferred). They are
            emitted for the selected candidate only, with the warnings its real
            fit emitted outside its release.
        """
        spends, caught_warnings = [], []
        for params in candidates:
            candidate = self._configured(params, epsilon, PlanningAccountant(),
                                         np.random.default_rng(0))
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    candidate.fit(X, y)
            except ChargeReached as reached:
                spend = reached.spend
            else:
                raise ValueError(
                    f"candidate {params} fitted without charging its accountant: "
                    "PrivateGridSearchCV tunes label-DP estimators of this library."
                )
            if not PrivacyBudget(epsilon, 1.0).covers(spend.budget):
                raise ValueError(
                    f"candidate {params} plans to spend {spend.budget}, more than the "
                    f"epsilon={epsilon} the search gives it."
                )
            spends.append(spend)
            caught_warnings.append([(w.message, w.category) for w in caught])
        return spends, caught_warnings

    def _returned(self, model):
        """``model`` as the search hands it back: the user's accountant and random_state."""
        model.set_params(**self._user_settings())
        return forget_derived_seeds(model)

    def _expected_failed_checks(self):
        # See sklearn_labeldp.utils.expected_failed_checks.
        return {"check_fit2d_1feature": (
            "holdout trains each candidate on its own third of the check's 10 rows: a part "
            "holds a single label, and a candidate without `classes` refuses one class")}

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Run the private search.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Public features, passed to the candidates as given (as
            :class:`~sklearn.model_selection.GridSearchCV` does), so a pipeline
            whose ``ColumnTransformer`` selects columns by name or dtype sees the
            DataFrame; rows are taken with :func:`sklearn.utils._safe_indexing`.
        y : array-like of shape (n_samples,)
            Private labels.

        Returns
        -------
        self : object
        """
        # Only the labels are validated here, as an array the strategies index by
        # position (a pandas Series would be indexed by its labels); X is made
        # indexable by rows as GridSearchCV does (sparse to CSR), nothing more.
        if is_dask_frame(X, y):
            raise TypeError(
                f"{type(self).__name__} splits the rows of X and y in memory: got a dask "
                "DataFrame or Series. Call `.compute()` on X and y first (a pandas DataFrame "
                "reaches the candidates as it is)."
            )
        y = _check_y(y, estimator=self)
        X, y = indexable(X, y)
        candidates = self._candidates()
        for name in ("best_score_", "rounds_"):  # strategy-specific, from an earlier fit
            self.__dict__.pop(name, None)
        strategy = {
            "holdout": fit_holdout,
            "random_stopping": fit_random_stopping,
            "post_processing": fit_post_processing,
        }[self.strategy]
        context = SearchContext(
            estimator=self.estimator,
            candidates=candidates,
            epsilon=self.epsilon,
            n_jobs=self.n_jobs,
            cv=self.cv,
            stopping_probability=self.stopping_probability,
            validation_fraction=self.validation_fraction,
            publish_rounds=self.publish_rounds,
            verbose=self.verbose,
            resolve_accountant=self._accountant,
            configure=self._configured,
            plan_candidates=self._plan_candidates,
        )
        results, best_index, best_estimator, spend, extra = strategy(
            context, X, y, spawn_generators(self.random_state, 1)[0]
        )
        for name, value in extra.items():
            setattr(self, name, value)
        self.cv_results_ = {**self._param_results(candidates), **results}
        self.best_index_ = best_index
        self.best_params_ = candidates[best_index]
        self.best_estimator_ = self._returned(best_estimator)
        self.__dict__.pop("classes_", None)
        if hasattr(best_estimator, "classes_"):  # a regressor has none
            self.classes_ = best_estimator.classes_
        # As GridSearchCV: the features seen are the selected estimator's.
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
            if hasattr(self.best_estimator_, name):
                setattr(self, name, getattr(self.best_estimator_, name))
        self.privacy_spend_ = spend
        self.epsilon_ = spend.epsilon
        self.delta_ = spend.delta
        logger.info("%s charged epsilon=%.6g, delta=%.6g (%s); selected candidate %d of %d",
                    type(self).__name__, spend.epsilon, spend.delta, spend.mechanism,
                    best_index, len(candidates))
        return self

    @staticmethod
    def _param_results(candidates):
        names = sorted({key for params in candidates for key in params})
        results = {"params": candidates}
        for name in names:
            column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
            for i, params in enumerate(candidates):
                if name in params:
                    column[i] = params[name]
            results[f"param_{name}"] = column
        return results

    # ------------------------------------------------------------------ delegation
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        if inner.estimator_type == "regressor":  # as GridSearchCV: the estimator's kind
            tags.estimator_type = "regressor"
            tags.classifier_tags = None
            tags.regressor_tags = inner.regressor_tags
        return tags

    def predict(self, X):
        """Predict with ``best_estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_search_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_search_has("decision_function"))
    def decision_function(self, X):
        """Decision scores of ``best_estimator_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """``best_estimator_``'s score on ``(X, y)``: accuracy, or R^2 for a regressor.

        Not private: use it on public test data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        check_is_fitted(self)
        return self.best_estimator_.score(X, y, sample_weight=sample_weight)
