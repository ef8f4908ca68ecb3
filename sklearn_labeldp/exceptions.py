"""Warnings and errors specific to label differential privacy."""

__all__ = [
    "BudgetError",
    "ConvergenceError",
    "PrivacyLeakWarning",
    "ReleaseError",
    "RowClippingWarning",
]


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
    The optimiser runs inside the sealed release, so a fit reports this
    failure as a :class:`ReleaseError` with a fixed message: this error's own
    text (the final gradient norm) depends on the labels and stays inside.
    """


class RowClippingWarning(UserWarning):
    """Many training rows were clipped to the row-norm bound (label DP only).

    Issued by a label-DP fit with a given ``data_norm`` when more than 5% of
    the rows of ``X`` have an L2 norm above it. Clipping keeps the privacy
    guarantee but shortens those rows, which usually costs accuracy; the
    default ``"auto"`` bound, the 99th percentile of the row norms, clips
    about 1% of the rows and does not warn.
    """


class ReleaseError(RuntimeError):
    """A computation on the private labels failed after the budget was charged.

    Everything that reads true labels runs sealed (see
    :meth:`PrivateLabels.release <sklearn_labeldp._private_labels.PrivateLabels.release>`):
    when it raises, its exception's type and text, which may hold numbers
    computed from the labels, are dropped, and this error with a fixed
    message per release site is raised instead. Configuration errors are
    found by label-free checks before the charge, so this is rare; its
    occurrence can depend on the labels (e.g. an optimiser that fails on one
    label vector and not on its neighbour), which the DP guarantee does not
    cover: the budget stays spent.
    """
