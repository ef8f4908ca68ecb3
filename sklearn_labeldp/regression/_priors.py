"""Priors over real labels: an evenly spaced grid and its DP histogram.

RR-on-Bins and the unbiased randomizer need a prior over label values. When
none is public, the labels, rounded to a grid of the public range, are
counted with discrete Laplace noise: the noisy label histogram of Ghazi et al.
(2021, Alg. 4) with a single group, here over value cells instead of classes.
"""

import math

import numpy as np

from ..mechanisms import histogram_prior, noisy_label_histogram
from ..mechanisms._regression import _clipped_labels

__all__ = ["auto_prior_size", "label_grid", "value_histogram"]

# A cell should hold on average this many labels per unit of 1 / prior_epsilon:
# its noise (discrete Laplace, scale 2 / prior_epsilon) then has a standard
# deviation of about 2.8 / prior_epsilon, some 6% of the average count.
_LABELS_PER_CELL = 50.0


def auto_prior_size(n_samples, prior_epsilon, *, lower=4, upper=64):
    """The number of grid values of a DP histogram prior: ``n eps_p / 50`` within bounds.

    Fewer cells hold more labels each, so their counts are less noisy but
    the grid is coarser; ``n eps_p / 50`` cells give each cell about ``50 /
    eps_p`` labels on average, against a noise standard deviation of ``2
    sqrt(2) / eps_p``, some 6% of the count.

    Parameters
    ----------
    n_samples : int
    prior_epsilon : float
    lower, upper : int
        The bounds.

    Returns
    -------
    int

    Examples
    --------
    >>> from sklearn_labeldp.regression._priors import auto_prior_size
    >>> auto_prior_size(30_000, 0.1), auto_prior_size(30_000, 0.005), auto_prior_size(10**6, 1.0)
    (60, 4, 64)
    """
    return int(min(upper, max(lower, math.floor(n_samples * prior_epsilon / _LABELS_PER_CELL))))


def label_grid(label_range, n_values):
    """``n_values`` evenly spaced values from ``low`` to ``high``, both included."""
    return np.linspace(label_range[0], label_range[1], n_values)


def value_histogram(y, *, epsilon, grid, random_state=None):
    """The DP histogram of real labels over ``grid``, as prior probabilities.

    Each label, clipped to the grid's range, is counted in the cell of its
    nearest grid value; every count gets discrete Laplace noise of scale ``2 /
    epsilon`` (:func:`~sklearn_labeldp.mechanisms.noisy_label_histogram`:
    changing one label moves one unit between two cells, L1 sensitivity 2),
    and the noisy counts are clipped at 0 and normalised (post-processing).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Real labels.
    epsilon : float
        > 0.
    grid : ndarray of shape (n_values,)
        Ascending, at least 2 values; public.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_values,)
        Probabilities summing to 1 (uniform if no noisy count is positive).
    """
    y = _clipped_labels(y, (grid[0], grid[-1]))
    cells = np.clip(np.searchsorted((grid[1:] + grid[:-1]) / 2, y), 0, grid.size - 1)
    counts = noisy_label_histogram(cells, np.zeros(y.shape[0], dtype=np.intp),
                                   epsilon=epsilon, n_classes=grid.size, n_groups=1,
                                   random_state=random_state)
    return histogram_prior(counts)[0]
