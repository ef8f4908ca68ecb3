"""The first two moments of each randomizer's release given the label, and the debiasing rule.

Every randomizer of :class:`~sklearn_labeldp.regression.NoisyLabelRegressor`
releases a ``z`` with ``E[z | y] = scale b(y) + shift`` and ``E[z^2 | y] =
scale b(y)^2 + shift_squares`` (see
:class:`~sklearn_labeldp._target_adapters.ReusableRealTargets`). The three
numbers are computed here from public quantities only: the mechanism's
parameters, its epsilon, the label range and the (public or DP) prior.
"""

import math

import numpy as np

from ..mechanisms import unbiased_randomizer_distribution

__all__ = ["release_moments", "resolve_debias", "staircase_variance"]

# debias="auto" undoes RR-on-Bins' shrinkage when the n releases, once debiased,
# carry as much information as this many noise-free labels: a debiased release
# has its noise variance multiplied by 1 / (p - q)^2, so n releases weigh about
# n (p - q)^2 clean ones. Chosen from benchmarks/regression.py (Friedman #1 with
# 8,000 rows, Adult hours-per-week with 32,561, three seeds, see the user guide):
# debiasing lowered the test MSE wherever n (p - q)^2 >= 66 (Adult from eps 0.1,
# both from eps 0.5: by up to 30% at Friedman's eps 1), was within the seeds'
# spread at 16 (Friedman, eps 0.1) and raised it at 3.9 (Friedman, eps 0.05).
AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES = 50.0


def staircase_variance(epsilon, gamma, width):
    """Variance of the staircase noise of :func:`~sklearn_labeldp.mechanisms.staircase_label`.

    The noise is ``S D M`` with ``M = G + V``, ``G`` geometric with ``P(G = k)
    = (1 - b) b^k`` (``b = e^-eps``) and ``V`` independent of it, ``gamma U``
    with probability ``1 - r`` and ``gamma + (1 - gamma) U`` with
    probability ``r = (1 - gamma) b / (gamma + (1 - gamma) b)`` (Geng and
    Viswanath 2014), so ``E[M^2] = E[G^2] + 2 E[G] E[V] + E[V^2]``.

    Parameters
    ----------
    epsilon : float
    gamma : float
        In [0, 1].
    width : float
        ``D``, the width of the label range.

    Returns
    -------
    float
    """
    b = math.exp(-epsilon)
    r = (1 - gamma) * b / (gamma + (1 - gamma) * b)
    mean_g = b / (1 - b)
    square_g = b * (1 + b) / (1 - b) ** 2
    mean_v = (1 - r) * gamma / 2 + r * (1 + gamma) / 2
    square_v = (1 - r) * gamma**2 / 3 + r * (gamma**2 + gamma * (1 - gamma)
                                             + (1 - gamma) ** 2 / 3)
    return width**2 * (square_g + 2 * mean_g * mean_v + square_v)


def _rr_on_bins_moments(bin_outputs, epsilon):
    """RR over the bins keeps with ``p = 1 / (1 + (m - 1) e^-eps)``, moves to each other with
    ``q = e^-eps p``: ``E[z | bin j] = (p - q) b_j + q sum_k b_k``, and the same with squares."""
    outputs = np.asarray(bin_outputs, dtype=np.float64)
    keep = 1.0 / (1.0 + (outputs.size - 1) * math.exp(-epsilon))
    other = math.exp(-epsilon) * keep
    # p - q = p (1 - e^-eps), written with expm1 so that a small epsilon keeps its digits.
    return (-math.expm1(-epsilon) * keep, other * float(outputs.sum()),
            other * float(np.square(outputs).sum()))


def release_moments(mechanism, params, *, prior, label_range):
    """``(scale, shift, shift_squares)`` of a fitted randomizer's release.

    Parameters
    ----------
    mechanism : {"rr_on_bins", "unbiased", "laplace", "gaussian", "staircase"}
    params : dict
        The fit's ``mechanism_params_``.
    prior : tuple (values, probabilities) or None
        The prior the randomizer used (``"rr_on_bins"``, ``"unbiased"``).
    label_range : tuple of float

    Returns
    -------
    scale, shift, shift_squares : float
        ``E[z | y] = scale b(y) + shift`` and ``E[z^2 | y] = scale b(y)^2 +
        shift_squares``; for the unbiased randomizer, whose variance depends on
        the label, ``shift_squares`` is its variance averaged over the prior.
        The additive mechanisms' releases lie on a lattice of about ``2^-21``
        of the range, which adds about ``step^2 / 12`` to the variance: left
        out, some ``10^-13`` of the squared range.
    """
    epsilon = params["mechanism_epsilon"]
    if mechanism == "rr_on_bins":
        return _rr_on_bins_moments(params["bin_outputs"], epsilon)
    if mechanism == "laplace":
        return 1.0, 0.0, 2.0 * params["noise_scale"] ** 2
    if mechanism == "gaussian":
        return 1.0, 0.0, params["noise_std"] ** 2
    if mechanism == "staircase":
        width = label_range[1] - label_range[0]
        return 1.0, 0.0, staircase_variance(epsilon, params["gamma"], width)
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=prior,
                                                    label_range=label_range)
    values, probabilities = (np.asarray(part, dtype=np.float64) for part in prior)
    variance = law @ np.square(outputs) - np.square(law @ outputs)
    return 1.0, 0.0, float(probabilities @ variance)


def resolve_debias(debias, mechanism, scale, n_samples):
    """The correction of RR-on-Bins' shrinkage that a fit applies.

    Parameters
    ----------
    debias : {"auto", "none", "targets", "predictions"}
        The parameter; a value other than ``"auto"`` is returned as given.
    mechanism : str
    scale : float
        ``p - q`` of RR-on-Bins (1 for the unbiased mechanisms).
    n_samples : int
        The number of released labels.

    Returns
    -------
    {"none", "targets", "predictions"}
        ``"auto"`` is ``"none"`` for the unbiased mechanisms (nothing to
        undo), and for RR-on-Bins ``"predictions"`` when ``n (p - q)^2 >= 50``
        (:data:`AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES`), else ``"none"``: below,
        the debiased model's variance costs more than the shrinkage.
    """
    if debias != "auto":
        return debias
    if mechanism != "rr_on_bins" or n_samples * scale**2 < AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES:
        return "none"
    return "predictions"
