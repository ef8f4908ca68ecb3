"""The exponential mechanism (McSherry and Talwar 2007) over a finite set."""

import numpy as np
from scipy.special import log_softmax

from ..utils import check_generator, check_positive

__all__ = ["exponential_mechanism", "exponential_mechanism_probabilities"]


def _check(scores, epsilon, sensitivity):
    """The scores as a finite 1-d float64 array, and ``epsilon`` and ``sensitivity`` as floats."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-d array; got shape {scores.shape}.")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite.")
    return scores, check_positive(epsilon, "epsilon"), check_positive(sensitivity, "sensitivity")


def exponential_mechanism_probabilities(scores, *, epsilon, sensitivity=1.0):
    """Exact selection probabilities of the exponential mechanism.

    ``P(i) = exp(eps * s_i / (2 * sensitivity)) / sum_j exp(eps * s_j / (2 * sensitivity))``,
    computed in log space so that large scores never overflow.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Utility of each candidate (higher is better), e.g. minus a mistake count.
    epsilon : float
        > 0 and finite.
    sensitivity : float, default=1.0
        Largest change of any one score when one label changes.

    Returns
    -------
    ndarray of shape (n_candidates,)

    Examples
    --------
    >>> from sklearn_labeldp.model_selection import exponential_mechanism_probabilities
    >>> exponential_mechanism_probabilities([0.0, 0.0], epsilon=1.0).tolist()
    [0.5, 0.5]
    """
    scores, epsilon, sensitivity = _check(scores, epsilon, sensitivity)
    return np.exp(log_softmax(epsilon * scores / (2.0 * sensitivity)))


def exponential_mechanism(scores, *, epsilon, sensitivity=1.0, random_state=None):
    """Select an index with the exponential mechanism; ``epsilon``-DP.

    If changing one private label moves every score by at most
    ``sensitivity``, returning ``i`` with probability proportional to
    ``exp(epsilon * scores[i] / (2 * sensitivity))`` is ``epsilon``-DP
    (McSherry and Talwar 2007, Theorem 6). Chaudhuri, Monteleoni and Sarwate
    (2011, Alg. 4) use it with
    ``scores = -mistakes``: candidate ``i`` is chosen with probability
    proportional to ``exp(-epsilon * z_i / 2)``.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Utility of each candidate (higher is better).
    epsilon : float
        > 0 and finite.
    sensitivity : float, default=1.0
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    int
        The selected index.

    See Also
    --------
    exponential_mechanism_probabilities : the exact distribution sampled here.

    References
    ----------
    .. [1] F. McSherry, K. Talwar. Mechanism design via differential privacy.
       FOCS 2007.

    Examples
    --------
    >>> from sklearn_labeldp.model_selection import exponential_mechanism
    >>> exponential_mechanism([-100.0, 0.0, -100.0], epsilon=1.0, random_state=0)
    1
    """
    probabilities = exponential_mechanism_probabilities(
        scores, epsilon=epsilon, sensitivity=sensitivity
    )
    rng = check_generator(random_state)
    # Inverse-CDF sampling from one uniform draw.
    cdf = np.cumsum(probabilities)
    index = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(index, probabilities.size - 1)
