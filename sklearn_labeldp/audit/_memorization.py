"""Label memorization audit (Malek et al., 2021): an empirical lower bound on label-DP epsilon."""

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_consistent_length, column_or_1d

from ..utils import check_generator, check_int, check_unit_interval

__all__ = ["AuditResult", "clopper_pearson_lower", "label_memorization_audit"]


def clopper_pearson_lower(n_successes, n_trials, confidence=0.95):
    """One-sided Clopper-Pearson lower confidence bound on a binomial proportion.

    The exact bound ``p_lo`` with ``P(p >= p_lo) >= confidence`` for every true
    ``p``: the ``1 - confidence`` quantile of ``Beta(k, n - k + 1)``, and 0 when
    ``k = 0``.

    Parameters
    ----------
    n_successes : int or array-like of int
        Number of successes ``k``, ``0 <= k <= n``.
    n_trials : int or array-like of int
        Number of trials ``n >= 1``.
    confidence : float, default=0.95
        Confidence level in (0, 1).

    Returns
    -------
    float or ndarray
        The lower bound, in ``[0, k / n]``.

    References
    ----------
    .. [1] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits
       illustrated in the case of the binomial. Biometrika 26(4), 1934.

    Examples
    --------
    >>> from sklearn_labeldp.audit import clopper_pearson_lower
    >>> round(float(clopper_pearson_lower(10, 10, 0.95)), 4)  # 0.05 ** (1 / 10)
    0.7411
    >>> float(clopper_pearson_lower(0, 10))
    0.0
    """
    confidence = check_unit_interval(confidence, "confidence")
    k = np.asarray(n_successes)
    n = np.asarray(n_trials)
    if not (np.issubdtype(k.dtype, np.integer) and np.issubdtype(n.dtype, np.integer)):
        raise TypeError("n_successes and n_trials must be integers.")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("need n_trials >= 1 and 0 <= n_successes <= n_trials.")
    with np.errstate(invalid="ignore"):
        lo = beta.ppf(1.0 - confidence, k, n - k + 1)
    lo = np.where(k == 0, 0.0, lo)
    return float(lo) if lo.ndim == 0 else lo


def _epsilon_from_accuracy(accuracy, delta=0.0):
    """Smallest eps compatible with attack accuracy ``a`` under (eps, delta)-DP.

    An (eps, delta)-DP trainer keeps ``a <= (e^eps + delta) / (1 + e^eps)``,
    i.e. ``eps >= log((a - delta) / (1 - a))``; 0 when that is not positive.
    """
    num, den = accuracy - delta, 1.0 - accuracy
    if num <= den:
        return 0.0
    if den <= 0.0:
        return math.inf
    return math.log(num / den)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`label_memorization_audit`.

    Attributes
    ----------
    n_canaries : int
        Number of canaries (guesses).
    n_correct : int
        Number of correct guesses.
    accuracy : float
        Attack accuracy ``n_correct / n_canaries``.
    accuracy_lower : float
        One-sided Clopper-Pearson lower bound on the accuracy at ``confidence``.
    epsilon_lower : float
        Empirical lower bound on epsilon: ``log((a_lo - delta) / (1 - a_lo))``
        with ``a_lo = accuracy_lower`` and ``delta = delta_claimed``, or 0 when
        that is not positive (``a_lo <= 1/2`` for pure DP).
    epsilon_claimed : float
        The fitted model's ``epsilon_``; ``inf`` for a model that claims no
        privacy (no ``epsilon_`` attribute).
    delta_claimed : float
        The fitted model's ``delta_`` (0 when absent).
    confidence : float
        Confidence level of ``accuracy_lower``.
    """

    n_canaries: int
    n_correct: int
    accuracy: float
    accuracy_lower: float
    epsilon_lower: float
    epsilon_claimed: float
    delta_claimed: float
    confidence: float

    @property
    def tightness(self):
        """``epsilon_lower / epsilon_claimed`` (0 for a non-private model)."""
        if not math.isfinite(self.epsilon_claimed) or self.epsilon_claimed <= 0:
            return 0.0
        return self.epsilon_lower / self.epsilon_claimed


def _wrong_labels(codes, n_classes, rng):
    """A uniformly random label code different from each ``codes[i]``."""
    return (codes + 1 + rng.integers(n_classes - 1, size=codes.shape[0])) % n_classes


def _second_wrong_labels(codes, first, n_classes, rng):
    """A uniformly random code different from both ``codes[i]`` and ``first[i]``."""
    lo, hi = np.minimum(codes, first), np.maximum(codes, first)
    v = rng.integers(n_classes - 2, size=codes.shape[0])
    v += v >= lo  # skip the two excluded codes in increasing order
    v += v >= hi
    return v


def _scores_method(estimator):
    for name in ("predict_proba", "decision_function"):
        if hasattr(estimator, name):
            return name
    return None


def _class_scores(model, X_canaries, labels):
    """Scores of ``model`` on ``X_canaries``, one column per entry of ``labels``.

    Labels the model never saw score ``-inf``.
    """
    method = _scores_method(model)
    if method is None:
        raise TypeError(
            f"the fitted {type(model).__name__} has neither predict_proba nor "
            "decision_function; the audit needs per-class scores."
        )
    scores = np.asarray(getattr(model, method)(X_canaries), dtype=np.float64)
    model_classes = getattr(model, "classes_", labels)
    model_classes = np.asarray(model_classes)
    if scores.ndim == 1:
        if model_classes.shape[0] != 2:
            raise ValueError(f"{method} returned 1-d scores for {model_classes.shape[0]} classes.")
        scores = np.column_stack([-scores, scores])
    if scores.shape[1] != model_classes.shape[0]:
        raise ValueError(
            f"{method} returned {scores.shape[1]} columns but the model has "
            f"{model_classes.shape[0]} classes."
        )
    out = np.full((scores.shape[0], labels.shape[0]), -np.inf)
    order = np.argsort(model_classes, kind="stable")
    pos = np.searchsorted(model_classes, labels, sorter=order)
    pos = np.clip(pos, 0, model_classes.shape[0] - 1)
    found = model_classes[order[pos]] == labels
    out[:, found] = scores[:, order[pos[found]]]
    return out


def label_memorization_audit(estimator, X, y, *, n_canaries=None, confidence=0.95,
                             random_state=None):
    """Audit a label-DP training procedure with the label memorization attack.

    ``n_canaries`` training examples (the canaries) are chosen at random; each
    canary's label is replaced by a uniformly random *wrong* label ``y'`` and a
    clone of ``estimator`` is fitted on the modified data. For each canary a
    second wrong label ``y''`` (different from ``y'`` and from the true label)
    is drawn, and the attacker guesses "trained on ``y'``" iff the model scores
    ``y'`` above ``y''`` on the canary's features (ties: a fair coin). As
    ``y'`` and ``y''`` are exchangeable a priori, each guess is a test between
    two neighbouring datasets, and an eps-label-DP trainer keeps its accuracy
    at most ``e^eps / (1 + e^eps)`` (``(e^eps + delta) / (1 + e^eps)`` under
    (eps, delta)-DP). Inverting that at a one-sided Clopper-Pearson lower
    confidence bound ``a_lo`` on the accuracy gives ``epsilon_lower``.

    What the result means: if the canaries' guesses were independent trials,
    then with probability at least ``confidence`` the trainer is *not*
    (eps, delta)-label-DP for any ``eps < epsilon_lower``. An
    ``epsilon_lower`` above ``epsilon_claimed`` therefore points to a bug (or
    to bad luck, with probability at most ``1 - confidence``). A small
    ``epsilon_lower`` proves nothing: the attack may simply be weak.

    .. warning::
       Placing many canaries in **one** model is a heuristic, not a formal
       guarantee. DP bounds the effect of one label change; the canaries'
       guesses come from one jointly trained model and need not be
       independent, so the confidence level is exact only when each label is
       randomised independently and the model's score on a canary depends on
       that canary's label alone (e.g. per-example mechanisms with a 1-NN
       base). A rigorous audit trains one model per guess, or uses the
       group-privacy / "one run" auditing bounds.

    Parameters
    ----------
    estimator : classifier
        Unfitted classifier (private or not) with ``predict_proba`` or
        ``decision_function``. It is cloned. A ``classes`` parameter left at
        ``None`` is set to the full label set of ``y`` (the auditor owns the
        data, and the canaries must not change the label set), and a
        ``random_state`` parameter left at ``None`` is seeded from
        ``random_state`` so that the audit is reproducible.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training features.
    y : array-like of shape (n_samples,)
        Training labels, with at least 3 distinct values (two distinct wrong
        labels are needed per canary).
    n_canaries : int, default=None
        Number of canaries, in ``[1, n_samples]``; ``None`` means half of the
        training examples (at least one).
    confidence : float, default=0.95
        Confidence level of the lower bound, in (0, 1).
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Controls the canaries, their labels, the tie-breaking coins and the
        clone's seed. ``None`` draws fresh operating-system entropy.

    Returns
    -------
    AuditResult
        Attack accuracy, its lower bound, ``epsilon_lower`` and the fitted
        clone's claimed ``epsilon_`` (``inf`` when it has none) and ``delta_``.

    Raises
    ------
    TypeError
        If the estimator has neither ``predict_proba`` nor ``decision_function``.
    ValueError
        If ``n_canaries`` or ``confidence`` is out of range, if ``X`` and ``y``
        have different lengths, or if ``y`` has fewer than 3 distinct labels.

    References
    ----------
    .. [1] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021, Section 5.
    .. [2] M. Jagielski, J. Ullman, A. Oprea. Auditing differentially private
       machine learning: how private is private SGD? NeurIPS 2020.
    .. [3] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits
       illustrated in the case of the binomial. Biometrika 26(4), 1934.

    Examples
    --------
    A 1-NN classifier memorises every label, so it has no label privacy:

    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn_labeldp.audit import label_memorization_audit
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(500, 2)), rng.integers(4, size=500)
    >>> res = label_memorization_audit(KNeighborsClassifier(1), X, y, n_canaries=500,
    ...                                random_state=0)
    >>> res.accuracy, res.epsilon_claimed, bool(res.epsilon_lower > 5)
    (1.0, inf, True)
    """
    if _scores_method(estimator) is None:
        raise TypeError(
            f"estimator {type(estimator).__name__} has neither predict_proba nor "
            "decision_function; the audit needs per-class scores."
        )
    confidence = check_unit_interval(confidence, "confidence")
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    n_samples = y.shape[0]
    if n_canaries is None:
        n_canaries = max(1, n_samples // 2)
    n_canaries = check_int(n_canaries, "n_canaries", minimum=1)
    if n_canaries > n_samples:
        raise ValueError(
            f"n_canaries must lie in [1, n_samples={n_samples}]; got {n_canaries}."
        )
    labels, codes = np.unique(y, return_inverse=True)
    n_classes = labels.shape[0]
    if n_classes < 3:
        raise ValueError(
            f"the audit needs at least 3 distinct labels in y (two distinct wrong labels "
            f"per canary); got {n_classes}."
        )
    rng = check_generator(random_state)

    canaries = rng.choice(n_samples, size=n_canaries, replace=False)
    trained = _wrong_labels(codes[canaries], n_classes, rng)
    other = _second_wrong_labels(codes[canaries], trained, n_classes, rng)
    coins = rng.random(n_canaries) < 0.5

    y_audit = y.copy()
    y_audit[canaries] = labels[trained]

    model = clone(estimator)
    params = model.get_params(deep=False)
    overrides = {}
    if "classes" in params and params["classes"] is None:
        overrides["classes"] = labels
    if "random_state" in params and params["random_state"] is None:
        overrides["random_state"] = int(rng.integers(2**31 - 1))
    model.set_params(**overrides)
    model.fit(X, y_audit)

    scores = _class_scores(model, _safe_indexing(X, canaries), labels)
    rows = np.arange(n_canaries)
    s_trained, s_other = scores[rows, trained], scores[rows, other]
    correct = np.where(s_trained == s_other, coins, s_trained > s_other)

    n_correct = int(np.count_nonzero(correct))
    accuracy_lower = clopper_pearson_lower(n_correct, n_canaries, confidence)
    epsilon_claimed = float(getattr(model, "epsilon_", math.inf))
    delta_claimed = float(getattr(model, "delta_", 0.0))
    return AuditResult(
        n_canaries=int(n_canaries),
        n_correct=n_correct,
        accuracy=n_correct / n_canaries,
        accuracy_lower=accuracy_lower,
        epsilon_lower=_epsilon_from_accuracy(accuracy_lower, delta_claimed),
        epsilon_claimed=epsilon_claimed,
        delta_claimed=delta_claimed,
        confidence=confidence,
    )
