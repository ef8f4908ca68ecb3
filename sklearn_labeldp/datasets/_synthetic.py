"""Synthetic classification problems from the label-DP literature."""

import numpy as np

from ..utils import check_generator, check_int, check_positive

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
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    n_classes = check_int(n_classes, "n_classes", minimum=2)
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    rng = check_generator(random_state)
    y = rng.permutation(np.arange(n_samples) % n_classes)
    angles = 2.0 * np.pi * np.arange(n_classes) / n_classes
    means = np.column_stack([np.cos(angles), np.sin(angles)])
    X = means[y] + sigma * rng.standard_normal((n_samples, 2))
    return X, y.astype(np.int64)
