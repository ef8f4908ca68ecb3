"""Group privacy for a label change: add/remove guarantees on the label-DP ledger.

Every spend is recorded for the library's neighbouring relation, changing one
label. A mechanism analysed for adding or removing one example (DP-SGD with
Poisson sampling) covers a label change, a removal followed by an addition,
through group privacy for groups of two (Dwork and Roth 2014, Sec. 2.3).
"""

import math

__all__ = ["group_privacy_example_budget", "group_privacy_label_budget"]

# Poisson minibatches under group privacy: the example-level epsilon target is
# epsilon / 2, at most this. Beyond it delta / (1 + e^eps_ex) underflows (at about
# eps_ex = 745) while the guarantee is void long before; a smaller eps_ex than
# epsilon / 2 is still within the label budget, only noisier.
MAX_EXAMPLE_EPSILON = 500.0


def group_privacy_example_budget(epsilon, delta):
    """The add/remove target ``(eps_ex, delta_ex)`` whose group-privacy bound is within a
    label budget ``(epsilon, delta)``.

    A label change is a removal followed by an addition, so an ``(eps_ex,
    delta_ex)`` add/remove guarantee gives ``(2 eps_ex, (1 + e^eps_ex)
    delta_ex)`` for a label change (group privacy for groups of 2, Dwork and
    Roth 2014, Sec. 2.3: ``P[M(D) in S] <= e^eps_ex (e^eps_ex P[M(D'') in S] +
    delta_ex) + delta_ex``). ``eps_ex = min(epsilon / 2, 500)`` and
    ``delta_ex = delta / (1 + e^eps_ex)``.

    Parameters
    ----------
    epsilon : float
        Label-DP epsilon budget, > 0.
    delta : float
        Label-DP delta budget, in (0, 1).

    Returns
    -------
    eps_ex : float
    delta_ex : float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import group_privacy_example_budget
    >>> eps_ex, delta_ex = group_privacy_example_budget(2.0, 1e-5)
    >>> eps_ex, round(delta_ex * 1e6, 4)
    (1.0, 2.6894)
    """
    eps_ex = min(epsilon / 2.0, MAX_EXAMPLE_EPSILON)
    return eps_ex, delta / (1.0 + math.exp(eps_ex))


def group_privacy_label_budget(example_epsilon, example_delta, epsilon, delta):
    """The label-change guarantee ``(2 eps_ex, (1 + e^eps_ex) delta_ex)`` of an add/remove one.

    Clamped to ``(epsilon, delta)`` (the budget it was calibrated within, which it
    meets up to rounding).

    Parameters
    ----------
    example_epsilon, example_delta : float
        The add/remove guarantee achieved.
    epsilon, delta : float
        The label budget it was calibrated within.

    Returns
    -------
    epsilon, delta : float

    Examples
    --------
    >>> from sklearn_labeldp.accounting import group_privacy_label_budget
    >>> group_privacy_label_budget(0.9, 1e-6, 2.0, 1e-5)
    (1.8, 3.4596031111569495e-06)
    """
    return (min(2.0 * example_epsilon, epsilon),
            min((1.0 + math.exp(example_epsilon)) * example_delta, delta))
