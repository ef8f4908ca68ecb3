"""Exact privacy curves the accounting tests compare the ledger against."""

import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom


def epsilon_at(delta_of, delta):
    """The epsilon at which the decreasing profile ``delta_of`` reaches ``delta``."""
    if delta_of(0.0) <= delta:
        return 0.0
    upper = 1.0
    while delta_of(upper) > delta:
        upper *= 2.0
    return brentq(lambda e: delta_of(e) - delta, 0.0, upper, xtol=1e-12)


def binary_rr_composition(epsilon, m, delta):
    """Exact epsilon of ``m`` binary randomized responses at ``epsilon`` (binomial sum).

    Under P the number of kept bits is Bin(m, p) with ``p = e^eps / (1 + e^eps)``,
    under Q Bin(m, 1 - p); the privacy loss of ``j`` kept bits is ``eps (2 j - m)``.
    """
    p = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    j = np.arange(m + 1)
    p_law, q_law = binom.pmf(j, m, p), binom.pmf(j, m, 1 - p)

    def delta_of(e):
        return float(np.sum(np.maximum(p_law - math.exp(e) * q_law, 0.0)))

    return epsilon_at(delta_of, delta)
