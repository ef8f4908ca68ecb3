"""Label-DP meta-estimators wrapping any scikit-learn classifier."""

from ._alibi import ALIBIClassifier
from ._pate import PATEClassifier
from ._rr_with_prior import RRWithPriorClassifier
from ._vector_approx import VectorApproxClassifier

__all__ = ["ALIBIClassifier", "PATEClassifier", "RRWithPriorClassifier", "VectorApproxClassifier"]
