"""PrivateGridSearchCV: hyperparameter search whose total label-DP cost is proven."""

import copy
import math
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.model_selection import KFold, ParameterGrid
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._target_adapters import fit_bit_targets, predict_bit_scores
from ..accounting import BudgetAccountant, PrivacyBudget, PrivacySpend
from ..classifiers import RRWithPriorClassifier, VectorApproxClassifier
from ..mechanisms._randomized_response import _keep_probability
from ..mechanisms._rappor import _rappor_probabilities
from ..utils import check_generator, spawn_seeds
from ._exponential import exponential_mechanism

__all__ = ["PrivateGridSearchCV"]

# Parameters the search itself sets on every candidate: a grid may not touch them.
_SEARCH_OWNED = ("epsilon", "accountant")


def _search_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


def _fit_candidate(estimator, X, y):
    return estimator.fit(X, y)


def _holdout_mistakes(model, X, y):
    """The number of mistakes on held-out labels: the score of a private selection.

    This reads true labels. Its output is never published; only a DP mechanism
    (the exponential mechanism or Laplace noise) may consume it.
    """
    return int(np.sum(np.asarray(model.predict(X)) != np.asarray(y)))


def _laplace_count(count, epsilon, rng):
    """``count + Laplace(1 / epsilon)``: ``epsilon``-DP for a count of sensitivity 1."""
    return float(count + rng.laplace(scale=1.0 / epsilon))


class PrivateGridSearchCV(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Hyperparameter search over a label-DP classifier with a proven total cost.

    Plain :class:`~sklearn.model_selection.GridSearchCV` fits every candidate
    on every fold and refits the best one: with ``m`` candidates and ``k``
    folds, each fitted at ``eps``, the labels are read ``m * k + 1`` times and
    the whole search costs ``(m * k + 1) * eps`` by sequential composition.
    This search costs ``epsilon`` in total (pure label-DP), with one of three
    strategies:

    ``"holdout"`` (seed 004, Alg. 4)
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
        ``gamma`` is; so the search is ``epsilon``-label-DP. Only the winning
        round's output is covered: the other rounds' scores are not published.

    ``"post_processing"``
        For grids that change only the base learner (keys ``"estimator"`` or
        ``"estimator__..."``), never the mechanism: the labels are privatised
        once, by fitting ``estimator`` (with ``epsilon``), and every candidate
        base learner is cross-validated on the privatised targets with a
        noise-aware (debiased) accuracy. Everything after the single release
        is post-processing, so the search costs exactly one mechanism's
        ``epsilon``. Supported: :class:`~sklearn_labeldp.classifiers.RRWithPriorClassifier`
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

    Parameters
    ----------
    estimator : label-DP classifier
        An estimator of this library with an ``epsilon`` parameter; the
        search sets it (``epsilon / 3`` per round for ``"random_stopping"``).
    param_grid : dict or list of dicts
        As for :class:`~sklearn.model_selection.GridSearchCV`; it must not set
        ``epsilon`` or ``accountant``.
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
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Controls the splits, the selections and the candidates' unset seeds.
        ``None`` draws fresh operating-system entropy.
    n_jobs : int, default=None
        Parallel candidate fits (joblib); ``None`` means 1.
    accountant : BudgetAccountant, default=None
        Charged with the whole spend of the search before any label is used
        (the candidates' own fits are not charged again). ``None`` uses the
        estimator's ``accountant``, if it has one.

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
        - ``"random_stopping"``: ``n_rounds`` (times each candidate was drawn,
          label-independent) and ``selected``. Only the winner's score is
          released (``best_score_``).
        - ``"post_processing"``: ``split<k>_test_score``, ``mean_test_score``,
          ``std_test_score``, ``rank_test_score``: debiased accuracies
          computed from the privatised targets, hence **noisy** (unbiased
          estimates of the true accuracy), and free to publish; and
          ``mean_observed_score``, the raw agreement with the privatised
          targets (biased toward chance).
    n_rounds_ : int
        ``"random_stopping"`` only: the number of rounds ``T``.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    epsilon_ : float
        Total label-DP epsilon of the search (equal to ``epsilon``).
    delta_ : float
        0 for the pure-DP estimators supported here.
    privacy_spend_ : PrivacySpend
        Structured record of the search's spend, as charged to the accountant.

    References
    ----------
    .. [1] K. Chaudhuri, S. Vinterbo. A stability-based validation procedure
       for differentially private machine learning. NeurIPS 2013; and
       K. Chaudhuri, C. Monteleoni, A. Sarwate, JMLR 2011, Alg. 4 (seed 004).
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

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict", "get_params", "set_params"])],
        "param_grid": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "strategy": [StrOptions({"holdout", "random_stopping", "post_processing"})],
        "scoring": [StrOptions({"accuracy"}), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "stopping_probability": [Interval(Real, 0, 1, closed="right"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": [Integral, None],
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
        random_state=None,
        n_jobs=None,
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
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.accountant = accountant

    # ------------------------------------------------------------------ checks
    def _candidates(self):
        """The candidate parameter dicts, checked against the estimator (public only)."""
        if not math.isfinite(self.epsilon):
            raise ValueError(f"epsilon must be finite and > 0; got {self.epsilon!r}.")
        if isinstance(self.param_grid, list) and not self.param_grid:
            raise ValueError("param_grid is empty: give at least one candidate.")
        candidates = list(ParameterGrid(self.param_grid))  # raises on empty value lists
        if not candidates:
            raise ValueError("param_grid is empty: give at least one candidate.")
        if "epsilon" not in self.estimator.get_params():
            raise ValueError(
                f"estimator {type(self.estimator).__name__} has no `epsilon` parameter: "
                "PrivateGridSearchCV tunes the label-DP estimators of this library."
            )
        if self.strategy == "post_processing":
            self._check_post_processing(candidates)
        for params in candidates:
            owned = [key for key in params if key in _SEARCH_OWNED]
            if owned:
                raise ValueError(
                    f"param_grid sets {owned}, which the search controls: the search sets "
                    "every candidate's epsilon from its own budget and charges its own "
                    "accountant. Remove them from the grid."
                )
            try:
                clone(self.estimator).set_params(**params)  # unknown names fail here
            except AttributeError as exc:  # e.g. "estimator__k" while estimator=None
                raise ValueError(
                    f"param_grid sets {sorted(params)}, but {type(self.estimator).__name__} "
                    f"cannot take them ({exc}); with estimator=None pass the base estimator "
                    "explicitly to tune its parameters."
                ) from exc
        return candidates

    def _check_post_processing(self, candidates):
        estimator = self.estimator
        if isinstance(estimator, RRWithPriorClassifier):
            if estimator.n_stages != 1 or estimator.prior is not None:
                raise ValueError(
                    "strategy='post_processing' supports RRWithPriorClassifier with "
                    f"n_stages=1 and prior=None only (got n_stages={estimator.n_stages!r}, "
                    f"prior={estimator.prior!r}): the debiased accuracy assumes plain "
                    "randomized response. Use strategy='holdout' instead."
                )
        elif not isinstance(estimator, VectorApproxClassifier):
            raise ValueError(
                "strategy='post_processing' supports RRWithPriorClassifier (n_stages=1, "
                "prior=None) and VectorApproxClassifier; got "
                f"{type(estimator).__name__}. Use strategy='holdout' instead."
            )
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
        if self.accountant is not None:
            return self.accountant
        return self.estimator.get_params().get("accountant")

    def _candidate(self, params, epsilon, seed):
        estimator = clone(self.estimator).set_params(**params, epsilon=epsilon)
        estimator.set_params(accountant=None)  # the search charges the whole spend itself
        if estimator.get_params().get("random_state", 0) is None:
            estimator.set_params(random_state=seed)
        return estimator

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Run the private search.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Public features.
        y : array-like of shape (n_samples,)
            Private labels.

        Returns
        -------
        self : object
        """
        X, y = validate_data(
            self, X, y, accept_sparse=["csr", "csc"], ensure_all_finite=False, dtype=None
        )
        candidates = self._candidates()
        for name in ("best_score_", "n_rounds_"):  # strategy-specific, from an earlier fit
            self.__dict__.pop(name, None)
        rng = check_generator(self.random_state)
        fit = {
            "holdout": self._fit_holdout,
            "random_stopping": self._fit_random_stopping,
            "post_processing": self._fit_post_processing,
        }[self.strategy]
        results, best_index, best_estimator, spend = fit(X, y, candidates, rng)
        self.cv_results_ = {**self._param_results(candidates), **results}
        self.best_index_ = best_index
        self.best_params_ = candidates[best_index]
        self.best_estimator_ = best_estimator
        self.classes_ = best_estimator.classes_
        self.privacy_spend_ = spend
        self.epsilon_ = spend.epsilon
        self.delta_ = spend.delta
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

    def _charge(self, spend):
        accountant = self._accountant()
        if accountant is not None:
            accountant.spend(spend)  # BudgetError here: no label read yet

    def _fit_holdout(self, X, y, candidates, rng):
        m, n = len(candidates), X.shape[0]
        if n < m + 1:
            raise ValueError(
                f"strategy='holdout' splits the data into n_candidates + 1 = {m + 1} parts, "
                f"but there are only {n} samples."
            )
        split_rng, select_rng, seed_rng = rng.spawn(3)
        parts = np.array_split(split_rng.permutation(n), m + 1)
        spend = PrivacySpend.compose(
            "PrivateGridSearchCV(holdout)",
            [
                *(
                    PrivacySpend.leaf("candidate fit", self.epsilon, candidate=i,
                                      n_samples=int(parts[i].size))
                    for i in range(m)
                ),
                PrivacySpend.leaf("exponential mechanism", self.epsilon,
                                  n_samples=int(parts[m].size), sensitivity=1),
            ],
            "parallel",
            n_candidates=m,
        )
        self._charge(spend)
        seeds = spawn_seeds(seed_rng, m)
        models = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_candidate)(
                self._candidate(params, self.epsilon, seed),
                _safe_indexing(X, parts[i]),
                y[parts[i]],
            )
            for i, (params, seed) in enumerate(zip(candidates, seeds, strict=True))
        )
        X_sel, y_sel = _safe_indexing(X, parts[m]), y[parts[m]]
        mistakes = np.array([_holdout_mistakes(model, X_sel, y_sel) for model in models])
        best = exponential_mechanism(
            -mistakes.astype(np.float64), epsilon=self.epsilon, sensitivity=1.0,
            random_state=select_rng,
        )
        results = {
            "n_train_samples": np.array([parts[i].size for i in range(m)]),
            "selected": np.arange(m) == best,
        }
        return results, best, models[best], spend

    def _fit_random_stopping(self, X, y, candidates, rng):
        m, n = len(candidates), X.shape[0]
        gamma = 1.0 / m if self.stopping_probability is None else float(self.stopping_probability)
        eps0 = self.epsilon / 3.0
        n_val = int(round(self.validation_fraction * n))
        if not 1 <= n_val < n:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves an empty training "
                f"or validation part for n_samples={n}."
            )
        split_rng, plan_rng, noise_rng, seed_rng = rng.spawn(4)
        perm = split_rng.permutation(n)
        val, train = perm[:n_val], perm[n_val:]
        # T and the candidates drawn are label-independent, so they can be drawn first.
        n_rounds = int(plan_rng.geometric(gamma))
        drawn = plan_rng.integers(m, size=n_rounds)
        spend = PrivacySpend(
            "PrivateGridSearchCV(random_stopping)",
            PrivacyBudget(self.epsilon),
            {"round_epsilon": eps0, "stopping_probability": gamma, "n_rounds": n_rounds,
             "theorem": "Liu-Talwar 2019: geometric random stopping, 3 * round_epsilon"},
        )
        self._charge(spend)
        X_train, y_train = _safe_indexing(X, train), y[train]
        X_val, y_val = _safe_indexing(X, val), y[val]
        seeds = spawn_seeds(seed_rng, n_rounds)
        models = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_candidate)(self._candidate(candidates[c], eps0, s), X_train, y_train)
            for c, s in zip(drawn, seeds, strict=True)
        )
        noisy = np.array([
            1.0 - _laplace_count(_holdout_mistakes(model, X_val, y_val), eps0, noise_rng) / n_val
            for model in models
        ])
        winner = int(np.argmax(noisy))
        best = int(drawn[winner])
        self.best_score_ = float(noisy[winner])
        self.n_rounds_ = n_rounds
        results = {
            "n_rounds": np.bincount(drawn, minlength=m),
            "selected": np.arange(m) == best,
        }
        return results, best, models[winner], spend

    def _fit_post_processing(self, X, y, candidates, rng):
        template_rng, cv_rng, seed_rng = rng.spawn(3)
        template = clone(self.estimator).set_params(
            epsilon=self.epsilon, accountant=self._accountant()
        )
        if template.random_state is None:
            (seed,) = spawn_seeds(template_rng, 1)
            template.set_params(random_state=seed)
        # The one release of the labels; the template charges the accountant first.
        template.fit(X, y)
        spend = PrivacySpend.compose(
            "PrivateGridSearchCV(post_processing)",
            [template.privacy_spend_],
            "sequential",
            n_candidates=len(candidates),
        )
        # Everything below reads only the privatised targets.
        rr = isinstance(template, RRWithPriorClassifier)
        targets = template.privatized_labels_ if rr else template.privatized_bits_
        n_classes = template.classes_.size
        # P(noisy target agrees | true label) when it is / is not the truth.
        if rr:
            p = _keep_probability(self.epsilon, n_classes)
            q = math.exp(-self.epsilon) * p
        else:
            p, q = _rappor_probabilities(self.epsilon)
        folds = list(KFold(self.cv, shuffle=True, random_state=spawn_seeds(cv_rng, 1)[0])
                      .split(X))
        seeds = spawn_seeds(seed_rng, len(candidates) + 1)
        bases = [
            clone(self.estimator).set_params(**params)._new_estimator(np.random.default_rng(seed))
            for params, seed in zip(candidates, seeds, strict=False)
        ]
        observed = np.array(
            Parallel(n_jobs=self.n_jobs)(
                delayed(_observed_agreement)(base, X, targets, train, test, rr)
                for base in bases
                for train, test in folds
            )
        ).reshape(len(candidates), len(folds))
        debiased = (observed - q) / (p - q)
        mean = debiased.mean(axis=1)
        best = int(np.argmax(mean))
        results = {f"split{k}_test_score": debiased[:, k] for k in range(len(folds))}
        results.update(
            mean_test_score=mean,
            std_test_score=debiased.std(axis=1),
            rank_test_score=(np.argsort(np.argsort(-mean, kind="stable")) + 1).astype(np.int32),
            mean_observed_score=observed.mean(axis=1),
        )
        self.best_score_ = float(mean[best])
        best_estimator = self._refit_on_targets(template, candidates[best], targets, X, rr,
                                                seeds[-1])
        return results, best, best_estimator, spend

    @staticmethod
    def _refit_on_targets(template, params, targets, X, rr, seed):
        """The privatising fit with the chosen base learner refitted on its targets (free)."""
        best = copy.deepcopy(template)
        best.set_params(**params)
        base = best._new_estimator(np.random.default_rng(seed))
        for name in ("estimator_", "estimators_"):
            if hasattr(best, name):
                delattr(best, name)
        if rr:
            model = base.fit(X, targets)
            best.estimator_, best.estimators_ = model, [model]
            return best
        model = fit_bit_targets(base, X, targets, {})
        if isinstance(model, list):
            best.estimators_ = model
        else:
            best.estimator_ = model
        return best

    # ------------------------------------------------------------------ delegation
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
        """Accuracy of ``best_estimator_`` on ``(X, y)`` (not private: use on public test data).

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


def _observed_agreement(base, X, targets, train, test, rr):
    """Mean agreement of a base learner with held-out privatised targets (post-processing).

    For randomized-response labels: the share of predictions equal to the noisy
    label. For RAPPOR bits: the mean bit of the predicted class.
    """
    X_train, X_test = _safe_indexing(X, train), _safe_indexing(X, test)
    if rr:
        predictions = np.asarray(clone(base).fit(X_train, targets[train]).predict(X_test))
        return float(np.mean(predictions == targets[test]))
    model = fit_bit_targets(clone(base), X_train, targets[train], {})
    predictions = np.argmax(predict_bit_scores(model, X_test), axis=1)
    return float(np.mean(targets[test][np.arange(test.size), predictions]))
