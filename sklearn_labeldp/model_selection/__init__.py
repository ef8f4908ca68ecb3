"""Private hyperparameter search."""

from ._exponential import exponential_mechanism, exponential_mechanism_probabilities
from ._search import PrivateGridSearchCV

__all__ = ["PrivateGridSearchCV", "exponential_mechanism", "exponential_mechanism_probabilities"]
