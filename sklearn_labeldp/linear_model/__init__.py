"""Private linear models: DP least squares and private ERM (label DP or full DP)."""

from ..exceptions import RowClippingWarning
from ._erm import DPLinearSVC, DPLogisticRegression
from ._kernels import NormalizedRandomFourierFeatures
from ._least_squares import DPLeastSquaresClassifier
from ._least_squares_regression import DPLeastSquaresRegressor

__all__ = [
    "DPLeastSquaresClassifier",
    "DPLeastSquaresRegressor",
    "DPLinearSVC",
    "DPLogisticRegression",
    "NormalizedRandomFourierFeatures",
    "RowClippingWarning",
]
