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

    Issued by a label-DP fit with a given ``data_norm`` when more rows of
    ``X`` than the estimator's default bound would clip have an L2 norm above
    it (at least 5%). Clipping keeps the privacy guarantee but shortens those
    rows. For the linear classifiers the default ``"auto"`` bound is the
    median row norm: it clips about half of the rows, which only rescales
    their scores and rarely changes a predicted class, and the warning comes
    above half; for :class:`~sklearn_labeldp.linear_model.DPLeastSquaresRegressor`,
    whose predictions a shortened row biases, it is the 99th percentile
    (about 1% clipped) and the warning comes above 5%.
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
