"""The noise-following k-NN rule shared by the default bases of the meta-estimators.

A k-NN prediction averages the privatised targets of ``k`` neighbours; a
mechanism that inflates the variance of one target by a factor ``rho``
(:func:`~sklearn_labeldp.mechanisms._randomized_response.rr_vote_inflation`
and its siblings for the classifiers, a randomizer's ``vote_inflation`` for
:class:`~sklearn_labeldp.NoisyLabelRegressor`) needs ``rho`` times the
neighbours of clean labels. The classifiers' rule and its measurements are in
:mod:`sklearn_labeldp.classifiers._default_base`; the regressor's, with two
"classes" for the cap, in :mod:`sklearn_labeldp.regression._noisy_labels`.
"""

__all__ = ["CLEAN_NEIGHBORS", "default_n_neighbors"]

# Neighbours of the vote without label noise (epsilon -> infinity): the
# library's earlier fixed default, which the rule keeps where the noise vanishes.
CLEAN_NEIGHBORS = 10


def default_n_neighbors(n_samples, n_classes, inflation):
    """``10 rho`` neighbours (rounded), capped at ``n / (2 K)`` and at least 1.

    Parameters
    ----------
    n_samples : int
        Rows of the smallest training set the base estimator is fitted on.
    n_classes : int
        Number of classes ``K``.
    inflation : float
        The mechanism's factor ``rho`` (see the module docstring).

    Returns
    -------
    int
    """
    cap = max(1, n_samples // (2 * n_classes))
    # min() first: at a tiny epsilon the factor can overflow an int, never the cap.
    return int(max(1, min(cap, round(CLEAN_NEIGHBORS * min(inflation, 1e12)))))
