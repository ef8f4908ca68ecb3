"""Label randomizers: pure functions of the labels, a public prior and eps.

These are the only functions in the package that read true labels. Each comes
with a function returning its exact output distribution, so that users and
tests can check the privacy guarantee directly.
"""

from ._randomized_response import randomized_response, randomized_response_distribution
from ._rr_with_prior import (
    optimal_top_k,
    rr_top_k,
    rr_top_k_distribution,
    rr_with_prior,
    rr_with_prior_distribution,
    top_k_mask,
)

__all__ = [
    "optimal_top_k",
    "randomized_response",
    "randomized_response_distribution",
    "rr_top_k",
    "rr_top_k_distribution",
    "rr_with_prior",
    "rr_with_prior_distribution",
    "top_k_mask",
]
