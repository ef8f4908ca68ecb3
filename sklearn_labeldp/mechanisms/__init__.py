"""Label randomizers and their post-processing; numpy only, no estimators.

The randomizers (randomized response, RRTop-k, RRWithPrior, RAPPOR, additive
noise on the one-hot label, noisy label histograms, and for real-valued labels
RR-on-Bins, the optimal unbiased randomizer and Laplace, Gaussian or staircase
noise) read true labels, and the
PATE aggregators read votes of teachers trained on them; they are not the only
code that does. An estimator reads its labels only through
``PrivateLabels.release``, and whatever runs inside a release reads them,
sealed: one of these functions, or the estimator's own DP computation (a noisy
solver, DP-SGD training, PATE's teachers, a private search's candidate fits).
Every discrete randomizer comes with a function returning its exact output
distribution, so users and tests can check the privacy guarantee directly.
The posteriors, debiasing and simplex projection are post-processing of
already privatised outputs and cost no privacy.
"""

from ..utils._validation import check_prior
from ._additive_noise import (
    alibi_posterior,
    gaussian_one_hot,
    gaussian_posterior,
    laplace_one_hot,
    project_to_simplex,
)
from ._histogram import histogram_prior, noisy_label_histogram
from ._pate import (
    confident_gnmax,
    confident_gnmax_sigmas,
    confident_gnmax_spend,
    gnmax,
    gnmax_sigma,
    gnmax_spend,
    lnmax,
    lnmax_gamma,
    lnmax_spend,
)
from ._randomized_response import randomized_response, randomized_response_distribution
from ._rappor import debias_rappor, rappor, rappor_distribution, rappor_probabilities
from ._regression import optimal_bins, rr_on_bins, rr_on_bins_distribution
from ._regression_noise import (
    gaussian_label,
    gaussian_label_sigma,
    laplace_label,
    staircase_gamma,
    staircase_label,
)
from ._rr_with_prior import (
    optimal_top_k,
    rr_top_k,
    rr_top_k_distribution,
    rr_with_prior,
    rr_with_prior_distribution,
    top_k_mask,
)
from ._unbiased import unbiased_randomizer, unbiased_randomizer_distribution

__all__ = [
    "alibi_posterior",
    "check_prior",
    "confident_gnmax",
    "confident_gnmax_sigmas",
    "confident_gnmax_spend",
    "debias_rappor",
    "gaussian_label",
    "gaussian_label_sigma",
    "gaussian_one_hot",
    "gaussian_posterior",
    "gnmax",
    "gnmax_sigma",
    "gnmax_spend",
    "histogram_prior",
    "laplace_label",
    "laplace_one_hot",
    "lnmax",
    "lnmax_gamma",
    "lnmax_spend",
    "noisy_label_histogram",
    "optimal_bins",
    "optimal_top_k",
    "project_to_simplex",
    "randomized_response",
    "randomized_response_distribution",
    "rappor",
    "rappor_distribution",
    "rappor_probabilities",
    "rr_on_bins",
    "rr_on_bins_distribution",
    "rr_top_k",
    "rr_top_k_distribution",
    "rr_with_prior",
    "rr_with_prior_distribution",
    "staircase_gamma",
    "staircase_label",
    "top_k_mask",
    "unbiased_randomizer",
    "unbiased_randomizer_distribution",
]
