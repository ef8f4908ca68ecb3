"""sklearn-labeldp: learning with label differential privacy, the scikit-learn way.

Features are public, labels are private: every estimator here touches ``y``
only through a differentially private mechanism and reports what it spent in
``epsilon_``, ``delta_`` and ``privacy_spend_``.
"""

from .accounting import BudgetAccountant
from .classifiers import RRWithPriorClassifier
from .exceptions import BudgetError, PrivacyLeakWarning

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "PrivacyLeakWarning",
    "RRWithPriorClassifier",
    "__version__",
]
