"""Statistical DP check of a mechanism from samples on two neighbouring inputs."""

import math
from dataclasses import dataclass

import numpy as np

from ..utils import check_unit_interval
from ._memorization import clopper_pearson_lower

__all__ = ["EventAuditResult", "event_privacy_audit"]


@dataclass(frozen=True)
class EventAuditResult:
    """Outcome of :func:`event_privacy_audit`.

    Attributes
    ----------
    p_a, p_b : float
        Empirical frequencies of the event under the two inputs.
    p_a_lower : float
        Clopper-Pearson lower bound on ``P_a(S)``.
    p_b_upper : float
        Clopper-Pearson upper bound on ``P_b(S)``.
    confidence : float
        Joint confidence of the two bounds (each is at ``(1 + confidence) / 2``).
    """

    p_a: float
    p_b: float
    p_a_lower: float
    p_b_upper: float
    confidence: float

    def epsilon_lower(self, delta=0.0):
        """Lower bound on eps: ``log((P_a_lo - delta) / P_b_hi)``, 0 if not positive."""
        num = self.p_a_lower - delta
        if num <= self.p_b_upper:
            return 0.0
        if self.p_b_upper <= 0.0:
            return math.inf
        return math.log(num / self.p_b_upper)

    def delta_lower(self, epsilon):
        """Lower bound on delta at ``epsilon``: ``P_a_lo - e^eps P_b_hi``, at least 0."""
        return max(0.0, self.p_a_lower - math.exp(epsilon) * self.p_b_upper)


def event_privacy_audit(in_event_a, in_event_b, *, confidence=0.95):
    """Bound the privacy of a mechanism from one event's frequencies on neighbours.

    A mechanism ``M`` is (eps, delta)-DP only if ``P[M(a) in S] <= e^eps
    P[M(b) in S] + delta`` for every event ``S`` and neighbouring inputs
    ``a, b``. Given, for independent draws of ``M(a)`` and ``M(b)``, whether
    each draw falls in ``S``, this returns exact (Clopper-Pearson) confidence
    bounds on both probabilities; with probability at least ``confidence``
    the mechanism is then not (eps, delta)-DP for any pair with
    ``delta < p_a_lower - e^eps p_b_upper``. The event must be chosen before
    looking at the samples (or on separate samples).

    Unlike the label memorization audit this is a formal statistical test: the
    draws are independent runs of the mechanism.

    Parameters
    ----------
    in_event_a, in_event_b : array-like of bool
        For each draw of ``M(a)`` (resp. ``M(b)``), whether it lies in ``S``.
    confidence : float, default=0.95
        Joint confidence level in (0, 1).

    Returns
    -------
    EventAuditResult

    References
    ----------
    .. [1] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations
       of differential privacy. CCS 2018.

    Examples
    --------
    Randomized response on one bit with eps = log 3 reports the truth w.p. 3/4:

    >>> import numpy as np
    >>> from sklearn_labeldp.audit import event_privacy_audit
    >>> rng = np.random.default_rng(0)
    >>> a = rng.random(200_000) < 0.75  # P[report 1 | bit 1]
    >>> b = rng.random(200_000) < 0.25  # P[report 1 | bit 0]
    >>> res = event_privacy_audit(a, b)
    >>> bool(1.05 < res.epsilon_lower() <= np.log(3))
    True
    """
    confidence = check_unit_interval(confidence, "confidence")
    in_a = np.asarray(in_event_a, dtype=bool).ravel()
    in_b = np.asarray(in_event_b, dtype=bool).ravel()
    if in_a.size == 0 or in_b.size == 0:
        raise ValueError("in_event_a and in_event_b must each hold at least one draw.")
    each = 0.5 * (1.0 + confidence)  # union bound over the two intervals
    k_a, k_b = int(in_a.sum()), int(in_b.sum())
    return EventAuditResult(
        p_a=k_a / in_a.size,
        p_b=k_b / in_b.size,
        p_a_lower=clopper_pearson_lower(k_a, in_a.size, each),
        p_b_upper=1.0 - clopper_pearson_lower(in_b.size - k_b, in_b.size, each),
        confidence=confidence,
    )
