"""RAPPOR unary encoding and its debiasing (ALGORITHMS.md section 1.4) against the spec.

The reference law is written from the spec text, independently of the library:
P(Z_y = 1) = e^(eps/2) / (1 + e^(eps/2)), P(Z_j = 1) = 1 / (1 + e^(eps/2)), j != y,
coordinates independent.
"""

import itertools
import math

import numpy as np
import pytest
from _law_checks import assert_follows
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import binomtest

from sklearn_labeldp.mechanisms import debias_rappor, rappor, rappor_distribution

N_CLASSES = [2, 3, 10, 50]
EPSILONS = [0.05, 0.7, 1.0, 2.9, 5.0]


def spec_bit_law(n_classes, epsilon):
    """P[y, j] = P(Z_j = 1 | y), one entry at a time."""
    h = math.exp(epsilon / 2)
    law = np.empty((n_classes, n_classes))
    for y in range(n_classes):
        for j in range(n_classes):
            law[y, j] = h / (1 + h) if j == y else 1 / (1 + h)
    return law


def vector_probability(bit_law_row, z):
    """P(Z = z | y) as the product over independent coordinates."""
    return math.prod(p if b else 1 - p for p, b in zip(bit_law_row, z, strict=True))


# --- exact law ---------------------------------------------------------------


@pytest.mark.parametrize("n_classes", N_CLASSES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_distribution_matches_spec(n_classes, epsilon):
    law = rappor_distribution(epsilon=epsilon, n_classes=n_classes)
    assert law.shape == (n_classes, n_classes)
    assert_allclose(law, spec_bit_law(n_classes, epsilon), atol=1e-12, rtol=0)


@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_vector_likelihood_ratio_brute_force(n_classes, epsilon):
    law = rappor_distribution(epsilon=epsilon, n_classes=n_classes)
    worst = 0.0
    for z in itertools.product([0, 1], repeat=n_classes):
        probs = [vector_probability(law[y], z) for y in range(n_classes)]
        assert min(probs) > 0
        worst = max(worst, max(probs) / min(probs))
    assert worst <= math.exp(epsilon) * (1 + 1e-9)
    # Attained by Z = e_y against y' (Z_y = 1, Z_y' = 0).
    assert_allclose(worst, math.exp(epsilon), rtol=1e-9)


@pytest.mark.parametrize("n_classes", [10, 50])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_vector_likelihood_ratio_analytic(n_classes, epsilon):
    # Between y and y' only coordinates y and y' have different laws, so the
    # ratio of the products is the product of those two coordinates' ratios;
    # maximise each over its bit value.
    law = rappor_distribution(epsilon=epsilon, n_classes=n_classes)
    worst = 0.0
    for y, y2 in itertools.permutations(range(n_classes), 2):
        assert_array_equal(np.delete(law[y], [y, y2]), np.delete(law[y2], [y, y2]))
        ratio = 1.0
        for j in (y, y2):
            ratio *= max(law[y, j] / law[y2, j], (1 - law[y, j]) / (1 - law[y2, j]))
        worst = max(worst, ratio)
    assert worst <= math.exp(epsilon) * (1 + 1e-9)
    assert_allclose(worst, math.exp(epsilon), rtol=1e-9)


@pytest.mark.parametrize("epsilon", [50.0, 700.0, 1e4])
def test_large_epsilon_does_not_overflow(epsilon):
    law = rappor_distribution(epsilon=epsilon, n_classes=4)
    assert np.all(np.isfinite(law))
    assert_allclose(law, np.eye(4), atol=1e-10, rtol=0)
    y = np.arange(4).repeat(10)
    z = rappor(y, epsilon=epsilon, n_classes=4, random_state=0)
    assert_array_equal(z, np.eye(4, dtype=np.uint8)[y])


# --- samples -----------------------------------------------------------------


@pytest.mark.parametrize(("n_classes", "epsilon"), [(2, 0.7), (3, 2.9), (10, 1.0), (50, 5.0)])
def test_samples_follow_the_law_per_coordinate(n_classes, epsilon):
    n = 4000
    y = np.arange(n) % n_classes  # every label, mixed
    z = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=1234)
    assert z.shape == (n, n_classes)
    assert set(np.unique(z)) <= {0, 1}
    law = spec_bit_law(n_classes, epsilon)
    on = np.zeros((n, n_classes), dtype=bool)
    on[np.arange(n), y] = True
    # Per coordinate: the bit at the label and the bits off the label.
    p_values = []
    for j in range(n_classes):
        for mask, p in ((on[:, j], law[j, j]), (~on[:, j], law[(j + 1) % n_classes, j])):
            p_values.append(binomtest(int(z[mask, j].sum()), int(mask.sum()), p).pvalue)
    # Bonferroni over the 2K tests.
    assert min(p_values) > 1e-3 / len(p_values)
    # Pooled: far more power on the totals.
    for mask, p in ((on, law[0, 0]), (~on, law[0, 1])):
        assert binomtest(int(z[mask].sum()), int(mask.sum()), p).pvalue > 1e-3


def test_coordinates_are_independent():
    # For K = 2 and y = 0, P(Z = (a, b)) factorises: chi-square on the 4 cells.
    epsilon = 1.3
    law = spec_bit_law(2, epsilon)[0]
    z = rappor(np.zeros(20000, dtype=int), epsilon=epsilon, n_classes=2, random_state=7)
    codes = 2 * z[:, 0].astype(int) + z[:, 1]
    probs = np.array([vector_probability(law, (a, b)) for a in (0, 1) for b in (0, 1)])
    assert_follows(codes, probs)


def test_draws_exactly_n_times_k_uniforms():
    rng = np.random.default_rng(3)
    rappor([0, 1, 2, 2, 1], epsilon=1.0, n_classes=3, random_state=rng)
    reference = np.random.default_rng(3)
    reference.random((5, 3))
    assert rng.random() == reference.random()
    # The same uniforms, thresholded per the spec.
    u = np.random.default_rng(3).random((5, 3))
    law = spec_bit_law(3, 1.0)
    expected = (u < law[[0, 1, 2, 2, 1]]).astype(np.uint8)
    got = rappor([0, 1, 2, 2, 1], epsilon=1.0, n_classes=3, random_state=3)
    assert_array_equal(got, expected)


def test_output_dtype_seed_and_empty():
    z = rappor([0, 1], epsilon=1.0, n_classes=3, random_state=0)
    assert z.dtype == np.uint8
    assert_array_equal(z, rappor([0, 1], epsilon=1.0, n_classes=3, random_state=0))
    assert rappor([], epsilon=1.0, n_classes=3).shape == (0, 3)


# --- debiasing ---------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3, 10])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 5.0])
def test_debias_inverts_the_expectation(n_classes, epsilon):
    law = spec_bit_law(n_classes, epsilon)  # row y = E[Z | y]
    assert_allclose(debias_rappor(law, epsilon=epsilon), np.eye(n_classes), atol=1e-9)
    # A mixture eta gives E[Z] = q- + (q+ - q-) eta; debiasing returns eta.
    eta = np.random.default_rng(0).dirichlet(np.ones(n_classes), size=5)
    expected_z = eta @ law
    assert_allclose(debias_rappor(expected_z, epsilon=epsilon), eta, atol=1e-9)


def test_debias_clips_and_renormalises():
    epsilon = 2.0
    h = math.exp(epsilon / 2)
    q_plus, q_minus = h / (1 + h), 1 / (1 + h)
    gap = q_plus - q_minus
    scores = np.array(
        [
            [q_minus + 2 * gap, q_minus + 0.5 * gap, q_minus - gap],  # -> [1, .5, 0] / 1.5
            [0.0, 0.0, 0.0],  # all clip to 0 -> uniform
            [q_minus + 0.2 * gap, q_minus + 0.2 * gap, q_minus + 0.1 * gap],
        ]
    )
    out = debias_rappor(scores, epsilon=epsilon)
    assert_allclose(out[0], [1 / 1.5, 0.5 / 1.5, 0.0], atol=1e-12)
    assert_allclose(out[1], [1 / 3, 1 / 3, 1 / 3], atol=1e-12)
    assert_allclose(out[2], [0.4, 0.4, 0.2], atol=1e-12)
    assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)


def test_debias_of_sampled_bits_recovers_the_label_rates():
    epsilon, n_classes = 1.0, 4
    y = np.random.default_rng(0).choice(n_classes, p=[0.1, 0.2, 0.3, 0.4], size=40000)
    z = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=1)
    eta = debias_rappor(z.mean(axis=0, keepdims=True), epsilon=epsilon)
    assert_allclose(eta[0], np.bincount(y) / y.size, atol=0.03)


# --- bad inputs --------------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "error"),
    [
        (0.0, ValueError),
        (-1.0, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
        ("1", TypeError),
        (True, TypeError),
    ],
)
def test_bad_epsilon(epsilon, error):
    with pytest.raises(error, match="epsilon"):
        rappor([0], epsilon=epsilon, n_classes=2)
    with pytest.raises(error, match="epsilon"):
        rappor_distribution(epsilon=epsilon, n_classes=2)
    with pytest.raises(error, match="epsilon"):
        debias_rappor([[0.5, 0.5]], epsilon=epsilon)


@pytest.mark.parametrize(
    ("y", "n_classes", "error"),
    [
        ([0, 3], 3, ValueError),
        ([-1], 3, ValueError),
        ([[0]], 3, ValueError),
        ([0.5], 3, TypeError),
        ([0], 1, ValueError),
    ],
)
def test_bad_labels_or_classes(y, n_classes, error):
    with pytest.raises(error):
        rappor(y, epsilon=1.0, n_classes=n_classes)


@pytest.mark.parametrize("scores", [[0.5, 0.5], [[0.5]], [[np.nan, 0.5]], [[np.inf, 0.5]]])
def test_debias_bad_scores(scores):
    with pytest.raises(ValueError, match="scores"):
        debias_rappor(scores, epsilon=1.0)


def test_bad_input_does_not_advance_the_generator():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        rappor([5], epsilon=1.0, n_classes=3, random_state=rng)
    assert rng.random() == np.random.default_rng(0).random()
