"""The three strategies of PrivateGridSearchCV, each a function of a :class:`SearchContext`.

The search checks its parameters and its grid, then hands a strategy a
:class:`SearchContext`: the candidates and the search's settings, and the
three things a strategy needs from the search as plain callables (configure a
candidate, plan candidates' spends, resolve the accountant). A strategy
returns ``(results, best_index, best_estimator, spend, extra)``: the
strategy's ``cv_results_`` columns, the selected candidate and its fitted
model, the search's spend, and the strategy's own fitted attributes.

Every strategy plans its candidates' spends from label-free planning fits,
charges the whole spend once, and only then reads labels, through
:class:`~sklearn_labeldp._private_labels.PrivateLabels`: each candidate fit and
each selection is one release whose per-example cost the holder checks
against the charged total.

What the user sees of the candidates (warnings, output). The candidate fits
and the selection run inside the search's releases, sealed: nothing they emit
reaches the user directly. Their own progress bars would (the one channel a
seal leaves open, see :func:`~sklearn_labeldp.utils.progress`), and in
``"random_stopping"`` their count would tell the secret number of rounds, so
the candidates of ``"holdout"`` and ``"random_stopping"`` are fitted with every
``verbose`` at 0 (:func:`~sklearn_labeldp._base.quiet`); the search's own bar
counts what is public. Only the selected candidate's warnings are re-emitted, and
only those it emitted outside its own release: a candidate is a label-DP fit
whose label-reading part is its own release, so what it emits outside it is
either a label-free check made before its charge or post-processing of its DP
output (e.g. a base estimator fitted on its noisy labels that does not
converge). The warnings raised inside a candidate's release, and every warning
of the candidates not selected, are dropped: the first depend on the labels,
the second on losing rounds whose number and outputs the selection's
guarantee keeps secret (random stopping's ``T``).
"""

import threading
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone, is_regressor
from sklearn.model_selection import KFold
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

from .._base import quiet, seed_estimator
from .._private_labels import PrivateLabels
from ..accounting import BudgetAccountant, PrivacyBudget, PrivacySpend
from ..exceptions import BudgetError
from ..utils import SealedCall, derived_random_state, progress
from ._exponential import exponential_mechanism

# The fixed texts of the errors the search's releases raise when a computation on
# the labels fails: the failure's own type and text may depend on the labels (and,
# for random stopping, on the secret number of rounds), so they are withheld.
_WITHHELD = (
    "The details are withheld because they may depend on the labels, and the budget "
    "stays spent: to find a configuration error, fit the candidates alone on public or "
    "synthetic data."
)
FIT_FAILURE = (
    "PrivateGridSearchCV(strategy={strategy!r}): a candidate fit failed after the "
    "search's budget was charged. " + _WITHHELD
)
ROUNDS_FAILURE = (
    "PrivateGridSearchCV(strategy='random_stopping'): a round (a candidate's fit or its "
    "noisy validation score) failed after the search's budget was charged. " + _WITHHELD
)
SELECTION_FAILURE = (
    "PrivateGridSearchCV(strategy={strategy!r}): the private selection among the fitted "
    "candidates failed after the search's budget was charged (e.g. a candidate's "
    "predict failed on the validation rows). " + _WITHHELD
)


@dataclass(frozen=True)
class SearchContext:
    """All a strategy may use of the search: its settings and three callables.

    Attributes
    ----------
    estimator : estimator
        The search's ``estimator``, unfitted: cloned, never fitted itself.
    candidates : list of dict
        The grid's parameter dicts, checked against ``estimator``.
    epsilon : float
        The search's total budget.
    n_jobs : int or None
        Parallel candidate fits (joblib).
    cv : int
        Folds of ``"post_processing"``.
    stopping_probability : float or None
        ``gamma`` of ``"random_stopping"``; None: ``1 / len(candidates)``.
    validation_fraction : float
        Share of the rows ``"random_stopping"`` validates on.
    publish_rounds : bool
        Whether ``"random_stopping"`` releases every round.
    verbose : int
        A progress bar over the candidate fits when > 0 (counts and times
        only; none over ``"random_stopping"``'s rounds unless they are
        published: their number is part of what its theorem keeps secret).
    resolve_accountant : callable () -> BudgetAccountant
        The accountant the search charges: its own, else the private step's,
        else the process-wide default; resolved when the strategy charges.
    configure : callable (params, epsilon, accountant, random_state) -> estimator
        A fresh clone of ``estimator`` with ``params``, and with ``epsilon``,
        ``accountant`` and ``random_state`` set on its label-DP step (a
        Pipeline's included).
    plan_candidates : callable (candidates, epsilon, X, y) -> (spends, warnings)
        Each candidate's planned :class:`PrivacySpend`, from a fit configured
        with a :class:`PlanningAccountant` that stops at its charge, before
        any label is read, and the label-free warnings that fit emitted.
    """

    estimator: object
    candidates: list
    epsilon: float
    n_jobs: int
    cv: int
    stopping_probability: float
    validation_fraction: float
    publish_rounds: bool
    verbose: int
    resolve_accountant: Callable
    configure: Callable
    plan_candidates: Callable


class ChargeReached(Exception):
    """A planning fit reached its budget charge: every label-free check passed."""

    def __init__(self, spend):
        super().__init__(spend)
        self.spend = spend


class PlanningAccountant(BudgetAccountant):
    """Stops a fit at its charge and hands back the spend it planned.

    The fit template charges only after validating its data and parameters and
    trying its base estimator on label-free targets, and before its mechanism
    reads any label: the search learns each candidate's own ``(epsilon,
    delta)`` that way, and a configuration error surfaces before the search
    charges anything.
    """

    def spend(self, epsilon, delta=0.0):
        raise ChargeReached(self._as_spend(epsilon, delta))


class PrepaidAccountant(BudgetAccountant):
    """Admits one candidate's spend, already charged by the search as part of its own."""

    def __init__(self, planned):
        super().__init__()
        self._planned = planned

    def spend(self, epsilon, delta=0.0):
        spend = self._as_spend(epsilon, delta)
        if not self._planned.budget.covers(spend.budget):
            raise BudgetError(
                f"a candidate tried to spend {spend.budget}, more than the "
                f"{self._planned.budget} its planning fit declared and the search charged."
            )


@contextmanager
def _public_warnings():
    """Record the warnings this thread emits outside any release opened meanwhile.

    Used inside the search's own release, around one candidate's fit. The
    candidate's release opens a seal nested in the search's, which sets its
    own "ignore" filter over the one set here: what the candidate emits while
    it reads labels never reaches this recorder. A warning of another thread
    is not this candidate's and is not recorded either.

    Yields
    ------
    list of (Warning, type)
        Filled as the warnings are emitted.
    """
    caught, thread = [], threading.get_ident()

    def record(message, category, filename, lineno, file=None, line=None):
        if threading.get_ident() == thread:
            caught.append((message, category))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = record
        yield caught


def _fit_candidate(estimator, X, y, record_warnings=False):
    """Fit one candidate; optionally return its public warnings (:func:`_public_warnings`)."""
    if not record_warnings:
        return estimator.fit(X, y), []
    with _public_warnings() as caught:
        estimator.fit(X, y)
    return estimator, caught


def _fit_on_parts(y, *, configured, X, parts, n_jobs, task_failure, show_progress):
    """Fit candidate ``i`` on the rows of ``parts[i]``; ``y`` holds their labels in order.

    A mechanism in the sense of :class:`PrivateLabels`: it reads the labels of
    the concatenated parts and nothing else.
    """
    labels = np.split(y, np.cumsum([part.size for part in parts])[:-1])
    return _fit_all(configured, [_safe_indexing(X, part) for part in parts], labels, n_jobs,
                    failure=task_failure, show_progress=show_progress)


def _fit_all(configured, Xs, ys, n_jobs, *, failure, show_progress=False):
    """Fit every candidate, in this thread or in joblib's workers, each sealed.

    In this thread (one job) each fit's public warnings are recorded
    (:func:`_public_warnings`). Fits that run concurrently are not recorded:
    warning filters are process state, shared by concurrent fits in one
    process, so a warning could not be told to belong to one candidate;
    their warnings are dropped, and the selected candidate's label-free ones
    come from its planning fit instead. A task sent to a worker runs sealed
    there (:class:`~sklearn_labeldp.utils.SealedCall`): a worker has its own
    file descriptors, filters and loggers, which the search's seal does not
    reach, and a losing candidate's output must not reach the user from there.
    With ``show_progress``, a bar counts the finished fits (the one channel a
    seal leaves open, :func:`~sklearn_labeldp.utils.progress`).
    """
    work = list(zip(configured, Xs, ys, strict=True))
    bar = partial(progress, total=len(work), desc="candidate fits", enabled=show_progress)
    if effective_n_jobs(n_jobs) == 1:
        return [_fit_candidate(estimator, X_part, y_part, True)
                for estimator, X_part, y_part in bar(work)]
    task = SealedCall(_fit_candidate, failure=failure)
    return list(bar(Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(task)(estimator, X_part, y_part) for estimator, X_part, y_part in work
    )))


def emit_selected_warnings(planning, fitted, stacklevel):
    """Emit the selected candidate's warnings: its planning fit's, then its fit's.

    ``planning`` are label-free (the planning fit stops at its charge, before
    any label is read); ``fitted`` are what the candidate's real fit emitted
    outside its release (:func:`_public_warnings`). A warning both emitted is
    emitted once.
    """
    seen = set()
    for message, category in [*planning, *fitted]:
        key = (category, str(message))
        if key not in seen:
            seen.add(key)
            warnings.warn(message, category, stacklevel=stacklevel + 1)


def _label_range(model):
    """The public ``label_range_`` of a fitted label-DP regressor, alone or in a Pipeline."""
    steps = [step for _, step in model.steps] if hasattr(model, "steps") else [model]
    return next(step.label_range_ for step in steps if hasattr(step, "label_range_"))


def _loss(model, X, y):
    """A held-out loss whose sensitivity to one label is 1: never published, only privatised.

    A classifier's number of mistakes. A regressor's sum of squared errors with
    its predictions and the labels clipped to its public ``label_range_`` and
    divided by the range's squared width, so each row adds a value in [0, 1]
    and a changed label moves the sum by at most 1.
    """
    predictions = np.asarray(model.predict(X))
    if not is_regressor(model):
        return float(np.sum(predictions != np.asarray(y)))
    low, high = _label_range(model)
    errors = (np.clip(predictions, low, high) - np.clip(np.asarray(y, dtype=float), low, high))
    return float(np.sum(np.square(errors / (high - low))))


def _select_by_exponential_mechanism(y, *, models, X, epsilon, rng):
    """The exponential mechanism on the held-out losses of ``models`` (sensitivity 1)."""
    losses = np.array([_loss(model, X, y) for model in models], dtype=np.float64)
    return exponential_mechanism(-losses, epsilon=epsilon, sensitivity=1.0, random_state=rng)


def _noisy_accuracies(y, *, models, X, epsilon, rng):
    """Each model's validation score ``1 - loss / n`` from a Laplace(1 / epsilon) loss.

    Accuracy for a classifier; one minus the clipped, range-normalised mean
    squared error for a regressor (:func:`_loss`).
    """
    losses = np.array([_loss(model, X, y) for model in models], dtype=np.float64)
    return 1.0 - (losses + rng.laplace(scale=1.0 / epsilon, size=losses.size)) / len(y)


def fit_holdout(context, X, y, rng):
    """Train candidate ``i`` on part ``i`` and select on part ``m + 1`` (Chaudhuri et al.)."""
    candidates, epsilon = context.candidates, context.epsilon
    m, n = len(candidates), _num_samples(X)
    if n < m + 1:
        raise ValueError(
            f"strategy='holdout' splits the data into n_candidates + 1 = {m + 1} parts, "
            f"but there are only {n} samples."
        )
    split_rng, select_rng, candidate_rng = rng.spawn(3)
    parts = np.array_split(split_rng.permutation(n), m + 1)
    planned, planning_warnings = [], []
    for params, part in zip(candidates, parts, strict=False):
        spends, caught = context.plan_candidates([params], epsilon,
                                                 _safe_indexing(X, part), y[part])
        planned.append(spends[0])
        planning_warnings.append(caught[0])
    spend = PrivacySpend.compose(
        "PrivateGridSearchCV(holdout)",
        [
            *planned,
            PrivacySpend.bounded_range(epsilon, n_samples=int(parts[m].size),
                                       sensitivity=1),
        ],
        "parallel",
        n_candidates=m,
    )
    configured = [
        quiet(context.configure(params, epsilon, PrepaidAccountant(plan), child))
        for params, plan, child in zip(candidates, planned, candidate_rng.spawn(m), strict=True)
    ]
    context.resolve_accountant().spend(spend)  # BudgetError here: no label read yet
    labels = PrivateLabels(y, None, spend.epsilon)
    fit_failure = FIT_FAILURE.format(strategy="holdout")
    fitted = labels.release(
        _fit_on_parts, np.concatenate(parts[:m]), privacy_cost=spend.epsilon,
        failure=fit_failure, configured=configured, X=X, parts=parts[:m],
        n_jobs=context.n_jobs, task_failure=fit_failure, show_progress=context.verbose > 0,
    )
    models = [model for model, _ in fitted]
    best = labels.release(
        _select_by_exponential_mechanism, parts[m], privacy_cost=epsilon,
        failure=SELECTION_FAILURE.format(strategy="holdout"),
        models=models, X=_safe_indexing(X, parts[m]), epsilon=epsilon, rng=select_rng,
    )
    # The selected model's public warnings only (module docstring); every candidate
    # was fitted, but only the selection's output is released.
    emit_selected_warnings(planning_warnings[best], fitted[best][1], stacklevel=4)
    results = {
        "n_train_samples": np.array([part.size for part in parts[:m]]),
        "selected": np.arange(m) == best,
    }
    return results, best, models[best], spend, {}


def _run_rounds(y, *, configured, X, train, val, epsilon, rng, n_jobs, task_failure,
                publish, show_progress):
    """Random stopping's rounds and their selection: the 3 * eps0-DP algorithm.

    Every round fits its candidate on the training rows and scores it on the
    others with a Laplace-noised mistake count; the round of the highest
    noisy score wins. Only the winner leaves (its round, model, public
    warnings and noisy score), and every round only with ``publish``: the
    losing rounds and their number are what the theorem keeps secret.
    ``y`` holds the labels of ``train`` followed by those of ``val``.
    """
    X_train, y_train = _safe_indexing(X, train), y[: train.size]
    rounds = len(configured)
    fitted = _fit_all(configured, [X_train] * rounds, [y_train] * rounds, n_jobs,
                      failure=task_failure, show_progress=show_progress and publish)
    models = [model for model, _ in fitted]
    noisy = _noisy_accuracies(y[train.size:], models=models, X=_safe_indexing(X, val),
                              epsilon=epsilon, rng=rng)
    winner = int(np.argmax(noisy))
    return {"round": winner, "model": models[winner], "warnings": fitted[winner][1],
            "score": float(noisy[winner]), "scores": noisy if publish else None}


def fit_random_stopping(context, X, y, rng):
    """Liu and Talwar's random stopping: the best of a geometric number of rounds."""
    candidates = context.candidates
    m, n = len(candidates), _num_samples(X)
    gamma = (1.0 / m if context.stopping_probability is None
             else float(context.stopping_probability))
    eps0 = context.epsilon / 3.0
    n_val = int(round(context.validation_fraction * n))
    if not 1 <= n_val < n:
        raise ValueError(
            f"validation_fraction={context.validation_fraction} leaves an empty training "
            f"or validation part for n_samples={n}."
        )
    split_rng, plan_rng, noise_rng, candidate_rng = rng.spawn(4)
    perm = split_rng.permutation(n)
    val, train = perm[:n_val], perm[n_val:]
    planned, planning_warnings = context.plan_candidates(
        candidates, eps0, _safe_indexing(X, train), y[train])
    spending_delta = [c for c, p in zip(candidates, planned, strict=True) if p.delta > 0]
    if spending_delta:
        raise ValueError(
            f"strategy='random_stopping' needs pure-DP candidates, but {spending_delta} "
            "spend delta > 0: Liu and Talwar's 3 * eps0 bound is proven here for "
            "eps0-DP rounds only. Use strategy='holdout', whose parallel composition "
            "covers (epsilon, delta) candidates."
        )
    # T and the candidates drawn are label-independent, so they can be drawn first.
    n_rounds = int(plan_rng.geometric(gamma))
    drawn = plan_rng.integers(m, size=n_rounds)
    if context.publish_rounds:
        spend = PrivacySpend.compose(
            "PrivateGridSearchCV(random_stopping, published rounds)",
            [
                PrivacySpend.compose(
                    "random stopping round",
                    [planned[c], PrivacySpend.laplace(eps0, mechanism="Laplace count",
                                                          n_samples=n_val)],
                    "parallel",
                )
                for c in drawn
            ],
            "sequential",
            stopping_probability=gamma,
        )
    else:
        # Only the winner is released and T stays secret: the record holds
        # nothing that depends on T.
        spend = PrivacySpend(
            "PrivateGridSearchCV(random_stopping)",
            PrivacyBudget(context.epsilon),
            {"round_epsilon": eps0, "stopping_probability": gamma,
             "theorem": "Liu-Talwar 2019: geometric random stopping, 3 * round_epsilon"},
        )
    # Quiet rounds: a candidate's own progress bar (a meta-estimator's verbose)
    # would draw once per round and so print T.
    configured = [
        quiet(context.configure(candidates[c], eps0, PrepaidAccountant(planned[c]), child))
        for c, child in zip(drawn, candidate_rng.spawn(n_rounds), strict=True)
    ]
    context.resolve_accountant().spend(spend)  # BudgetError here: no label read yet
    labels = PrivateLabels(y, None, spend.epsilon)
    # One release: the whole loop and the selection are the 3 * eps0-DP algorithm of
    # the theorem, and what leaves it is the winning round only.
    won = labels.release(
        _run_rounds, np.concatenate([train, val]), privacy_cost=spend.epsilon,
        failure=ROUNDS_FAILURE,
        configured=configured, X=X, train=train, val=val, epsilon=eps0, rng=noise_rng,
        n_jobs=context.n_jobs, task_failure=FIT_FAILURE.format(strategy="random_stopping"),
        publish=context.publish_rounds, show_progress=context.verbose > 0,
    )
    best = int(drawn[won["round"]])
    # The winner's public warnings (module docstring); the losers' are not released,
    # and neither is their number.
    emit_selected_warnings(planning_warnings[best], won["warnings"], stacklevel=4)
    extra = {"best_score_": won["score"]}
    if context.publish_rounds:
        extra["rounds_"] = {"candidate": drawn, "score": won["scores"]}
    return {"selected": np.arange(m) == best}, best, won["model"], spend, extra


def _fold_scores(reuse, base, X, train, test):
    """``base`` fitted on the privatised targets of ``train``: its (observed, unbiased) scores."""
    return reuse.scores(reuse.fit(clone(base), X, train), X, test)


def fit_post_processing(context, X, y, rng):
    """Privatise once, then cross-validate every base learner on the privatised targets.

    The estimator implements the post-processing protocol
    (:class:`~sklearn_labeldp._target_adapters.TargetReuseMixin`), which the
    search checked before calling this.
    """
    candidates, epsilon = context.candidates, context.epsilon
    template_rng, cv_rng, base_rng = rng.spawn(3)
    # Every candidate's base learner gets its label-free trial fit before the one
    # charge (the template's fit): a candidate that cannot fit must cost nothing.
    # Their warnings are dropped: the template's fit, which follows, emits its own.
    context.plan_candidates(candidates, epsilon, X, y)
    template = context.configure({}, epsilon, context.resolve_accountant(), template_rng)
    # The one release of the labels, read through the template's own
    # PrivateLabels after it has charged the accountant.
    template.fit(X, y)
    spend = PrivacySpend.compose(
        "PrivateGridSearchCV(post_processing)",
        [template.privacy_spend_],
        "sequential",
        n_candidates=len(candidates),
    )
    # Everything below reads only the privatised targets and public data: every
    # candidate's cross-validation is post-processing of the one release, so its
    # warnings, losers' included, and its scores (cv_results_) may reach the user.
    reuse = template.reusable_targets()
    folds = list(
        KFold(context.cv, shuffle=True, random_state=derived_random_state(cv_rng)).split(X)
    )
    bases = [
        seed_estimator(clone(_base_estimator(context, template, params)), child)
        for params, child in zip(candidates, base_rng.spawn(len(candidates)), strict=True)
    ]
    fits = Parallel(n_jobs=context.n_jobs, return_as="generator")(
        delayed(_fold_scores)(reuse, base, X, train, test)
        for base in bases
        for train, test in folds
    )
    # Per fold, the raw score against the privatised targets and its unbiased
    # estimate of the score against the true labels (accuracy for a classifier,
    # negative squared error for a regressor).
    observed, debiased = np.moveaxis(np.array(list(progress(
        fits, total=len(bases) * len(folds), desc="candidate fits", enabled=context.verbose > 0,
    ))).reshape(len(candidates), len(folds), 2), -1, 0)
    mean = debiased.mean(axis=1)
    best = int(np.argmax(mean))
    # Copies, not views: a released array carries no base holding other numbers.
    results = {f"split{k}_test_score": debiased[:, k].copy() for k in range(len(folds))}
    results.update(
        mean_test_score=mean,
        std_test_score=debiased.std(axis=1),
        rank_test_score=(np.argsort(np.argsort(-mean, kind="stable")) + 1).astype(np.int32),
        mean_observed_score=observed.mean(axis=1),
    )
    best_model = reuse.fit(bases[best], X, np.arange(_num_samples(X)))
    best_estimator = template.with_final_estimator(best_model).set_params(**candidates[best])
    return results, best, best_estimator, spend, {"best_score_": float(mean[best])}


def _base_estimator(context, template, params):
    """The base learner of one candidate: the grid's, or the template's default."""
    base = clone(context.estimator).set_params(**params).get_params()["estimator"]
    return template.estimator_ if base is None else base
