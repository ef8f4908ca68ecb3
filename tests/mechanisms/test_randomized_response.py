"""Randomized response (Warner, 1965; Ghazi et al., 2021, Section 3) against its definition.

The reference law below is written from the definition, independently of the
library: P(out = y) = e^eps / (e^eps + K - 1), P(out = j) = 1 / (e^eps + K - 1).
"""

import math

import numpy as np
import pytest
from _law_checks import assert_follows, max_likelihood_ratio
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_labeldp.mechanisms import (
    randomized_response,
    randomized_response_distribution,
)

N_CLASSES = [2, 3, 10, 50]
EPSILONS = [0.05, 0.7, 1.0, 2.9, 5.0]


def spec_rr_law(n_classes, epsilon):
    """P[y, out] of K-ary randomized response, one entry at a time."""
    e = math.exp(epsilon)
    law = np.empty((n_classes, n_classes))
    for y in range(n_classes):
        for out in range(n_classes):
            law[y, out] = (e if out == y else 1.0) / (e + n_classes - 1)
    return law


# --- exact law ---------------------------------------------------------------


@pytest.mark.parametrize("n_classes", N_CLASSES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_distribution_matches_spec(n_classes, epsilon):
    law = randomized_response_distribution(epsilon=epsilon, n_classes=n_classes)
    assert law.shape == (n_classes, n_classes)
    assert_allclose(law, spec_rr_law(n_classes, epsilon), atol=1e-12, rtol=0)
    assert_allclose(law.sum(axis=1), 1.0, atol=1e-12, rtol=0)


@pytest.mark.parametrize("n_classes", N_CLASSES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_likelihood_ratio_is_exactly_e_to_the_eps(n_classes, epsilon):
    law = randomized_response_distribution(epsilon=epsilon, n_classes=n_classes)
    ratio = max_likelihood_ratio(law)
    assert ratio <= math.exp(epsilon) * (1 + 1e-9)
    assert_allclose(ratio, math.exp(epsilon), rtol=1e-12)


@pytest.mark.parametrize("epsilon", [50.0, 700.0, 1e4])
def test_large_epsilon_does_not_overflow(epsilon):
    law = randomized_response_distribution(epsilon=epsilon, n_classes=4)
    assert np.all(np.isfinite(law))
    assert_allclose(np.diag(law), 1.0, atol=1e-12, rtol=0)
    assert_allclose(law.sum(axis=1), 1.0, atol=1e-12, rtol=0)
    y = np.arange(4).repeat(10)
    assert_array_equal(randomized_response(y, epsilon=epsilon, n_classes=4, random_state=0), y)


# --- sampling ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_classes", "epsilon", "labels"),
    [(2, 0.3, [0, 1]), (3, 1.0, [0, 1, 2]), (10, 2.0, [0, 4, 9]), (50, 1.5, [0, 31, 49])],
)
def test_samples_follow_the_law(n_classes, epsilon, labels):
    law = spec_rr_law(n_classes, epsilon)
    for seed, y in enumerate(labels):
        samples = randomized_response(
            np.full(20_000, y), epsilon=epsilon, n_classes=n_classes, random_state=seed
        )
        assert samples.dtype == np.int64
        assert_follows(samples, law[y], f"(K={n_classes}, y={y}, seed={seed})")


def test_samples_with_mixed_labels_keep_each_label_at_the_right_rate():
    # Many labels in one call: per true label, the outputs follow its row.
    n_classes, epsilon = 5, 0.8
    y = np.random.default_rng(1).integers(n_classes, size=50_000)
    samples = randomized_response(y, epsilon=epsilon, n_classes=n_classes, random_state=2)
    law = spec_rr_law(n_classes, epsilon)
    for label in range(n_classes):
        assert_follows(samples[y == label], law[label], f"(y={label})")


# --- inputs ------------------------------------------------------------------


def test_accepts_lists_integral_floats_and_empty_input():
    out = randomized_response([0.0, 1.0, 2.0], epsilon=50.0, n_classes=3, random_state=0)
    assert_array_equal(out, [0, 1, 2])
    assert out.dtype == np.int64
    empty = randomized_response([], epsilon=1.0, n_classes=3, random_state=0)
    assert empty.shape == (0,) and empty.dtype == np.int64
    unsigned = np.array([0, 2], dtype=np.uint8)
    assert_array_equal(
        randomized_response(unsigned, epsilon=50.0, n_classes=3, random_state=0), [0, 2]
    )


BAD_EPSILONS = [
    (0.0, ValueError, "finite number > 0"),
    (-1.0, ValueError, "finite number > 0"),
    (float("nan"), ValueError, "finite number > 0"),
    (float("inf"), ValueError, "finite number > 0"),
    (True, TypeError, "real number"),
    ("1.0", TypeError, "real number"),
    (None, TypeError, "real number"),
]


@pytest.mark.parametrize(("epsilon", "error", "match"), BAD_EPSILONS)
def test_bad_epsilon(epsilon, error, match):
    with pytest.raises(error, match=match):
        randomized_response([0, 1], epsilon=epsilon, n_classes=2)
    with pytest.raises(error, match=match):
        randomized_response_distribution(epsilon=epsilon, n_classes=2)


@pytest.mark.parametrize(
    ("n_classes", "error", "match"),
    [
        (1, ValueError, "n_classes must be >= 2"),
        (0, ValueError, "n_classes must be >= 2"),
        (2.0, TypeError, "n_classes must be an int"),
        (True, TypeError, "n_classes must be an int"),
    ],
)
def test_bad_n_classes(n_classes, error, match):
    with pytest.raises(error, match=match):
        randomized_response([0, 0], epsilon=1.0, n_classes=n_classes)
    with pytest.raises(error, match=match):
        randomized_response_distribution(epsilon=1.0, n_classes=n_classes)


BAD_LABELS = [
    ([0, 3], ValueError, r"must lie in \[0, 2\]"),
    ([-1, 0], ValueError, r"must lie in \[0, 2\]"),
    ([0.5, 1.0], TypeError, "integer label codes"),
    ([0.0, np.nan], TypeError, "integer label codes"),
    ([1e300, 0.0], ValueError, r"must lie in \[0, 2\]"),
    ([[0, 1], [1, 2]], ValueError, "1-d array"),
    (0, ValueError, "1-d array"),
    (["a", "b"], TypeError, "integer label codes"),
    ([True, False], TypeError, "integer label codes"),
]


@pytest.mark.parametrize(("y", "error", "match"), BAD_LABELS)
def test_bad_labels(y, error, match):
    with pytest.raises(error, match=match):
        randomized_response(y, epsilon=1.0, n_classes=3)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"y": [0, 3], "epsilon": 1.0, "n_classes": 3},
        {"y": [0.5], "epsilon": 1.0, "n_classes": 3},
        {"y": [0, 1], "epsilon": -1.0, "n_classes": 3},
        {"y": [0, 1], "epsilon": 1.0, "n_classes": 1},
    ],
)
def test_bad_input_does_not_advance_the_generator(kwargs):
    rng = np.random.default_rng(7)
    before = rng.bit_generator.state
    with pytest.raises((ValueError, TypeError)):
        randomized_response(**kwargs, random_state=rng)
    assert rng.bit_generator.state == before


def test_bad_random_state():
    with pytest.raises(TypeError, match="random_state"):
        randomized_response([0, 1], epsilon=1.0, n_classes=2, random_state="seed")


# --- randomness --------------------------------------------------------------


def test_same_seed_same_output_and_fresh_entropy_by_default():
    y = np.random.default_rng(0).integers(10, size=1000)
    first = randomized_response(y, epsilon=1.0, n_classes=10, random_state=42)
    assert_array_equal(first, randomized_response(y, epsilon=1.0, n_classes=10, random_state=42))
    assert not np.array_equal(
        first, randomized_response(y, epsilon=1.0, n_classes=10, random_state=43)
    )
    # None seeds from the OS: two calls agree with probability ~ 0.5^1000.
    fresh = [randomized_response(y, epsilon=1.0, n_classes=10) for _ in range(2)]
    assert not np.array_equal(*fresh)


def test_generator_is_used_and_advanced():
    y = np.random.default_rng(0).integers(10, size=1000)
    rng = np.random.default_rng(5)
    first = randomized_response(y, epsilon=1.0, n_classes=10, random_state=rng)
    second = randomized_response(y, epsilon=1.0, n_classes=10, random_state=rng)
    assert_array_equal(
        first,
        randomized_response(y, epsilon=1.0, n_classes=10, random_state=np.random.default_rng(5)),
    )
    assert not np.array_equal(first, second)
    legacy = randomized_response(
        y, epsilon=1.0, n_classes=10, random_state=np.random.RandomState(3)
    )
    assert_array_equal(
        legacy,
        randomized_response(y, epsilon=1.0, n_classes=10, random_state=np.random.RandomState(3)),
    )


def test_generator_state_after_sampling_does_not_depend_on_the_labels():
    after = []
    for y in (np.zeros(1000, dtype=int), np.full(1000, 9), np.arange(1000) % 10):
        rng = np.random.default_rng(8)
        randomized_response(y, epsilon=1.0, n_classes=10, random_state=rng)
        after.append(rng.random())
    assert after[0] == after[1] == after[2]
