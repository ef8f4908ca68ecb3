"""Label-DP meta-estimators wrapping any scikit-learn classifier."""

from ._rr_with_prior import RRWithPriorClassifier

__all__ = ["RRWithPriorClassifier"]
