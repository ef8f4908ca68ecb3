"""Empirical privacy audits: label memorization and statistical DP checks.

An audit gives a *lower* bound on the privacy loss of a training procedure or
mechanism, from its observed behaviour. A lower bound above the claimed epsilon
proves a bug; a lower bound below it proves nothing about the claim, but a bound
close to it shows that the claim is nearly tight.
"""

from ._memorization import AuditResult, clopper_pearson_lower, label_memorization_audit
from ._statistical import EventAuditResult, event_privacy_audit

__all__ = [
    "AuditResult",
    "EventAuditResult",
    "clopper_pearson_lower",
    "event_privacy_audit",
    "label_memorization_audit",
]
