"""Warnings and errors specific to label differential privacy."""

__all__ = ["BudgetError", "ConvergenceError", "PrivacyLeakWarning"]


class BudgetError(ValueError):
    """Raised when a spend would exceed a privacy budget.

    Raised before any label is used, so a refused fit has spent nothing.
    """


class PrivacyLeakWarning(UserWarning):
    """Warns that an operation reveals information about the private labels.

    For example, inferring the label set from ``y`` discloses which labels
    occur; pass ``classes`` explicitly to avoid it.
    """


class ConvergenceError(ValueError):
    """The optimiser did not reach the gradient-norm tolerance within ``max_iter``.

    Objective and output perturbation are private only for the exact
    minimiser; an inexact one voids the guarantee, so the fit is refused.
    """
