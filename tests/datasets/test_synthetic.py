import numpy as np
import pytest

from sklearn_labeldp.datasets import make_circle_gaussians


def test_means_on_unit_circle_and_shared_spread():
    K, sigma = 5, 0.1
    X, y = make_circle_gaussians(50_000, K, sigma=sigma, random_state=0)
    assert X.shape == (50_000, 2) and y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(y), np.full(K, 10_000))
    angles = 2 * np.pi * np.arange(K) / K
    for j in range(K):
        pts = X[y == j]
        np.testing.assert_allclose(pts.mean(axis=0), [np.cos(angles[j]), np.sin(angles[j])],
                                   atol=0.005)
        np.testing.assert_allclose(pts.std(axis=0), sigma, rtol=0.03)


def test_reproducible_and_shuffled():
    X1, y1 = make_circle_gaussians(100, 3, sigma=0.2, random_state=4)
    X2, y2 = make_circle_gaussians(100, 3, sigma=0.2, random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(y1, np.arange(100) % 3)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_samples": 0, "n_classes": 3, "sigma": 0.1}, "n_samples"),
        ({"n_samples": 10, "n_classes": 1, "sigma": 0.1}, "n_classes"),
        ({"n_samples": 10, "n_classes": 3, "sigma": -0.1}, "sigma"),
        ({"n_samples": 10, "n_classes": 3, "sigma": np.nan}, "sigma"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_circle_gaussians(**kwargs)
