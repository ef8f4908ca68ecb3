"""Noisy label histograms for priors (Ghazi et al., 2021, Algorithm 4).

The reference noise law is the geometric mechanism (Ghosh et al., 2009):
pmf ∝ exp(-a |z|), a = eps / 2, normalised over the integers, i.e.
P(z) = (1 - e^-a) / (1 + e^-a) e^(-a |z|).
"""

import math

import numpy as np
import pytest
from _law_checks import assert_follows
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_labeldp.mechanisms import histogram_prior, noisy_label_histogram


def spec_discrete_laplace_pmf(z, epsilon):
    a = epsilon / 2
    norm = sum(math.exp(-a * abs(k)) for k in range(-5000, 5001))  # numeric normaliser
    return math.exp(-a * abs(z)) / norm


def exact_counts(y, groups, n_classes, n_groups):
    h = np.zeros((n_groups, n_classes), dtype=np.int64)
    for label, group in zip(y, groups, strict=True):
        h[group, label] += 1
    return h


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_noise_follows_discrete_laplace(epsilon):
    rng = np.random.default_rng(0)
    y = rng.integers(4, size=2000)
    groups = rng.integers(2500, size=2000)
    h = noisy_label_histogram(
        y, groups, epsilon=epsilon, n_classes=4, n_groups=2500, random_state=21
    )
    noise = (h - exact_counts(y, groups, 4, 2500)).ravel()
    assert noise.dtype.kind == "i"
    # Chi-square on the central cells, tails pooled into one cell each side.
    width = max(1, int(math.ceil(3.0 / (epsilon / 2))))
    support = np.arange(-width, width + 1)
    probs = np.array([spec_discrete_laplace_pmf(z, epsilon) for z in support])
    tail = (1 - probs.sum()) / 2
    probs = np.concatenate([[tail], probs, [tail]])
    codes = np.clip(noise, -width - 1, width + 1) + width + 1
    assert_follows(codes, probs)
    # The law is symmetric with the right spread: E|z| = 2 q / (1 - q^2), q = e^-a.
    q = math.exp(-epsilon / 2)
    standard_error = np.abs(noise).std() / math.sqrt(noise.size)
    assert abs(np.abs(noise).mean() - 2 * q / (1 - q * q)) < 5 * standard_error


def test_noise_law_is_not_off_by_one_geometric():
    # A sampler that forgot numpy's geometric starts at 1 on one side only would
    # have mean +-1; one that used a = eps (not eps/2) would be too concentrated.
    y = np.zeros(10, dtype=int)
    groups = np.zeros(10, dtype=int)
    noise = []
    rng = np.random.default_rng(2)
    for _ in range(2000):
        h = noisy_label_histogram(y, groups, epsilon=1.0, n_classes=2, n_groups=1, random_state=rng)
        noise.append(h[0] - [10, 0])
    noise = np.concatenate(noise)
    q = math.exp(-0.5)
    assert abs(noise.mean()) < 0.15  # sd of the mean ~ 0.05
    assert_allclose(noise.var(), 2 * q / (1 - q) ** 2, rtol=0.1)  # var of discrete Laplace


def test_zero_noise_limit_gives_exact_counts_and_shapes():
    rng = np.random.default_rng(3)
    y = rng.integers(5, size=300)
    groups = rng.integers(7, size=300)
    h = noisy_label_histogram(y, groups, epsilon=200.0, n_classes=5, n_groups=7, random_state=0)
    assert h.shape == (7, 5)
    assert h.dtype == np.int64
    assert_array_equal(h, exact_counts(y, groups, 5, 7))
    # Empty groups are still reported (all-zero rows) and empty input works.
    h = noisy_label_histogram([1], [0], epsilon=200.0, n_classes=3, n_groups=3, random_state=0)
    assert_array_equal(h, [[0, 1, 0], [0, 0, 0], [0, 0, 0]])
    h = noisy_label_histogram([], [], epsilon=200.0, n_classes=2, n_groups=2, random_state=0)
    assert_array_equal(h, np.zeros((2, 2)))


def test_draws_two_geometrics_per_cell():
    y, groups = [0, 1, 1], [0, 0, 1]
    got = noisy_label_histogram(y, groups, epsilon=1.0, n_classes=2, n_groups=2, random_state=8)
    g = np.random.default_rng(8).geometric(1 - math.exp(-0.5), size=(2, 2, 2))
    assert_array_equal(got, exact_counts(y, groups, 2, 2) + g[0] - g[1])
    assert_array_equal(
        got, noisy_label_histogram(y, groups, epsilon=1.0, n_classes=2, n_groups=2, random_state=8)
    )


def test_histogram_prior():
    got = histogram_prior([[3, -1, 1], [-2, 0, -5], [0, 0, 2]])
    assert_allclose(got, [[0.75, 0, 0.25], [1 / 3, 1 / 3, 1 / 3], [0, 0, 1]], atol=1e-15)
    for bad in ([1, 2], [[1]], [[np.nan, 1]], [[np.inf, 1]]):
        with pytest.raises(ValueError, match="noisy_counts"):
            histogram_prior(bad)


# --- bad inputs --------------------------------------------------------------


@pytest.mark.parametrize(
    ("groups", "n_groups", "error", "match"),
    [
        ([0, 3], 3, ValueError, "group codes"),
        ([0, -1], 3, ValueError, "group codes"),
        ([0], 3, ValueError, "shape"),
        ([0, 1, 2], 3, ValueError, "shape"),
        ([[0, 1]], 3, ValueError, "shape"),
        ([0.5, 1], 3, TypeError, "integer"),
        ([0, 1], 0, ValueError, "n_groups"),
        ([0, 1], 2.0, TypeError, "n_groups"),
        ([0, 1], True, TypeError, "n_groups"),
    ],
)
def test_bad_groups(groups, n_groups, error, match):
    rng = np.random.default_rng(0)
    with pytest.raises(error, match=match):
        noisy_label_histogram(
            [0, 1], groups, epsilon=1.0, n_classes=2, n_groups=n_groups, random_state=rng
        )
    assert rng.random() == np.random.default_rng(0).random()


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"epsilon": 0.0}, ValueError),
        ({"epsilon": np.nan}, ValueError),
        ({"epsilon": -np.inf}, ValueError),
        ({"epsilon": np.inf}, ValueError),
        ({"n_classes": 1}, ValueError),
        ({"y": [0, 2]}, ValueError),
        ({"y": [0.5, 1]}, TypeError),
    ],
)
def test_bad_other_inputs(kwargs, error):
    args = {"y": [0, 1], "epsilon": 1.0, "n_classes": 2} | kwargs
    y = args.pop("y")
    with pytest.raises(error):
        noisy_label_histogram(y, [0, 0], n_groups=1, **args)
