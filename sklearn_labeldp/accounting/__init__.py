"""Privacy budgets: pure eps, zCDP rho, conversion to (eps, delta), the ledger."""

from ..exceptions import BudgetError, PrivacyLeakWarning
from ._accountant import BudgetAccountant
from ._budget import PrivacyBudget, PrivacySpend, compose_parallel, compose_sequential
from ._default import DEFAULT_LEDGER_ENV, default_accountant
from ._descriptions import MechanismDescription
from ._gaussian import calibrate_gaussian_sigma, gaussian_delta, gaussian_epsilon, gaussian_mu
from ._group_privacy import group_privacy_example_budget, group_privacy_label_budget
from ._label_change import (
    calibrate_dp_sgd_label_change,
    subsampled_gaussian_label_epsilon,
    subsampled_gaussian_label_noise_multiplier,
)
from ._noise_multiplier import get_noise_multiplier
from ._subsampled import (
    SUBSAMPLED_GAUSSIAN_METHODS,
    calibrate_dp_sgd,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_noise_multiplier,
)
from ._zcdp import (
    approx_dp_to_zcdp,
    gaussian_rho,
    gaussian_sigma_for_approx_dp,
    zcdp_to_approx_dp,
)

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "DEFAULT_LEDGER_ENV",
    "MechanismDescription",
    "PrivacyBudget",
    "PrivacyLeakWarning",
    "PrivacySpend",
    "SUBSAMPLED_GAUSSIAN_METHODS",
    "approx_dp_to_zcdp",
    "calibrate_dp_sgd",
    "calibrate_dp_sgd_label_change",
    "calibrate_gaussian_sigma",
    "compose_parallel",
    "compose_sequential",
    "default_accountant",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_rho",
    "gaussian_sigma_for_approx_dp",
    "get_noise_multiplier",
    "group_privacy_example_budget",
    "group_privacy_label_budget",
    "subsampled_gaussian_epsilon",
    "subsampled_gaussian_label_epsilon",
    "subsampled_gaussian_label_noise_multiplier",
    "subsampled_gaussian_noise_multiplier",
    "zcdp_to_approx_dp",
]
