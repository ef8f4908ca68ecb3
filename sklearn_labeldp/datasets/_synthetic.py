"""Synthetic classification problems from the label-DP literature."""

from numbers import Integral, Real

import numpy as np

from ..utils import check_generator

__all__ = ["make_circle_gaussians"]


def make_circle_gaussians(n_samples, n_classes, *, sigma, random_state=None):
    """K isotropic Gaussian classes with means equally spaced on the unit circle.

    The synthetic benchmark of Zhao et al. (2024, Section 5.1): class ``j`` has mean
    ``(cos 2 pi j / K, sin 2 pi j / K)`` and every class the same standard
    deviation ``sigma``. Classes are balanced (sizes differ by at most one) and
    the rows are shuffled.

    Parameters
    ----------
    n_samples : int
        Number of examples, >= 1.
    n_classes : int
        Number of classes K, >= 2.
    sigma : float
        Standard deviation of each coordinate, >= 0.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,), int64
        Labels in ``0..n_classes-1``.

    References
    ----------
    .. [1] P. Zhao, R. Fan, H. Wu, Q. Li, J. Wu, Z. Liu. Enhancing learning with
       label differential privacy by vector approximation. arXiv:2405.15150,
       2024 (ICLR 2025), Section 5.1.

    Examples
    --------
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> X, y = make_circle_gaussians(6, 3, sigma=0.0, random_state=0)
    >>> X.shape, sorted(y.tolist())
    ((6, 2), [0, 0, 1, 1, 2, 2])
    """
    for name, value, low in (("n_samples", n_samples, 1), ("n_classes", n_classes, 2)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
            raise ValueError(f"{name} must be an int >= {low}; got {value!r}.")
    if isinstance(sigma, bool) or not isinstance(sigma, Real) or not (
        np.isfinite(sigma) and sigma >= 0
    ):
        raise ValueError(f"sigma must be a finite number >= 0; got {sigma!r}.")
    rng = check_generator(random_state)
    y = rng.permutation(np.arange(n_samples) % n_classes)
    angles = 2.0 * np.pi * np.arange(n_classes) / n_classes
    means = np.column_stack([np.cos(angles), np.sin(angles)])
    X = means[y] + sigma * rng.standard_normal((n_samples, 2))
    return X, y.astype(np.int64)
