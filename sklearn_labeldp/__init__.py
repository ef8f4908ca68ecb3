"""sklearn-labeldp: learning with label differential privacy, the scikit-learn way.

Features are public, labels (classes or real values) are private: every
estimator here touches ``y`` only through a differentially private mechanism
and reports what it spent in
``epsilon_``, ``delta_`` and ``privacy_spend_``. The estimators, the private
search, the accountant and the library's errors and warnings are importable
from here; each subpackage keeps its own names too.
"""

from .accounting import BudgetAccountant, PrivacyBudget, PrivacySpend, default_accountant
from .classifiers import (
    ALIBIClassifier,
    PATEClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from .exceptions import (
    BudgetError,
    ConvergenceError,
    PrivacyLeakWarning,
    ReleaseError,
    RowClippingWarning,
)
from .linear_model import (
    DPLeastSquaresClassifier,
    DPLeastSquaresRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    NormalizedRandomFourierFeatures,
)
from .model_selection import PrivateGridSearchCV
from .regression import NoisyLabelRegressor

__version__ = "0.1.0.dev0"

__all__ = [
    "ALIBIClassifier",
    "BudgetAccountant",
    "BudgetError",
    "ConvergenceError",
    "DPLeastSquaresClassifier",
    "DPLeastSquaresRegressor",
    "DPLinearSVC",
    "DPLogisticRegression",
    "NoisyLabelRegressor",
    "NormalizedRandomFourierFeatures",
    "PATEClassifier",
    "PrivacyBudget",
    "PrivacyLeakWarning",
    "PrivacySpend",
    "PrivateGridSearchCV",
    "RRWithPriorClassifier",
    "ReleaseError",
    "RowClippingWarning",
    "VectorApproxClassifier",
    "__version__",
    "default_accountant",
]
