"""RAPPOR unary encoding and its debiasing (Zhao et al., 2024, eqs. 14 and 17).

The reference law is written from the paper, independently of the library:
P(Z_y = 1) = e^(eps/2) / (1 + e^(eps/2)), P(Z_j = 1) = 1 / (1 + e^(eps/2)), j != y,
coordinates independent.
"""

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _law_checks import assert_follows
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import binom, binomtest

from sklearn_labeldp.mechanisms import debias_rappor, rappor, rappor_distribution
from sklearn_labeldp.mechanisms._rappor import _bernoulli_positions

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


@pytest.mark.parametrize("sparse_output", [False, True])
@pytest.mark.parametrize("epsilon", [0.4, 3.0])
def test_whole_vectors_follow_the_law(epsilon, sparse_output):
    # K = 3: chi-square over the 8 possible vectors, for a label at each end.
    law = spec_bit_law(3, epsilon)
    vectors = list(itertools.product([0, 1], repeat=3))
    for y in (0, 2):
        z = rappor(np.full(20_000, y), epsilon=epsilon, n_classes=3, random_state=10 + y,
                   sparse_output=sparse_output)
        z = z.toarray() if sparse_output else z
        probs = np.array([vector_probability(law[y], v) for v in vectors])
        assert_follows(z @ np.array([4, 2, 1]), probs, f"(y={y})")


def test_many_classes_row_counts_and_columns_follow_the_law():
    # K = 500: the number of ones off the label is Binomial(K - 1, q-) per row,
    # and the ones spread uniformly over the columns.
    n, n_classes, epsilon = 4000, 500, 3.0
    y = np.arange(n) % n_classes
    z = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=5, sparse_output=True)
    q_minus = spec_bit_law(2, epsilon)[0, 1]
    on_label = np.asarray(z[np.arange(n), y]).ravel()
    off_counts = np.diff(z.indptr) - on_label
    law = binom(n_classes - 1, q_minus)
    edges = np.unique(law.ppf(np.linspace(0.05, 0.95, 19)))
    cells = np.searchsorted(edges, off_counts)  # cell i: edges[i-1] < count <= edges[i]
    probs = np.diff(np.concatenate([[0.0], law.cdf(edges), [1.0]]))
    assert_follows(cells, probs, "(row counts)")
    columns = np.bincount(z.indices, minlength=n_classes) - np.bincount(
        y, weights=on_label, minlength=n_classes
    )
    assert_follows(np.repeat(np.arange(n_classes), columns.astype(int)),
                   np.full(n_classes, 1 / n_classes), "(columns)")


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 8.0, 40.0, 3000.0])
def test_dense_and_sparse_outputs_hold_the_same_bits(epsilon):
    # Several chunks of rows; at eps = 3000, q- underflows to 0.
    n, n_classes = 50_000, 30
    y = np.random.default_rng(0).integers(n_classes, size=n)
    dense = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=1)
    sparse = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=1, sparse_output=True)
    assert sp.issparse(sparse) and sparse.format == "csr" and sparse.shape == (n, n_classes)
    assert sparse.dtype == np.uint8 and np.all(sparse.data == 1)
    assert sparse.has_sorted_indices and sparse.has_canonical_format
    assert_array_equal(sparse.toarray(), dense)
    if epsilon == 3000.0:
        assert_array_equal(dense, np.eye(n_classes, dtype=np.uint8)[y])


@pytest.mark.parametrize("sparse_output", [False, True])
def test_generator_advance_does_not_depend_on_the_labels(sparse_output):
    after = []
    for y in (np.zeros(3000, dtype=int), np.full(3000, 9), np.arange(3000) % 10):
        rng = np.random.default_rng(4)
        rappor(y, epsilon=1.0, n_classes=10, random_state=rng, sparse_output=sparse_output)
        after.append(rng.random())
    assert after[0] == after[1] == after[2]


class _FixedExponentials:
    """A stand-in generator whose exponential draws are all ``value``."""

    def __init__(self, value):
        self.value = value

    def standard_exponential(self, size=None, out=None):
        if out is None:
            return np.full(size, self.value)
        out.fill(self.value)
        return out


def test_bernoulli_positions_draws_again_when_a_batch_falls_short():
    # Zero exponentials make every trial a success: far more than the first
    # batch holds, so the sampler must continue from where that batch ended.
    assert_array_equal(_bernoulli_positions(_FixedExponentials(0.0), 1000, 0.5), np.arange(1000))
    # Huge ones make none, without overflowing the int64 positions.
    assert _bernoulli_positions(_FixedExponentials(1e300), 2**40, 1e-12).size == 0
    assert _bernoulli_positions(_FixedExponentials(0.0), 10, 0.0).size == 0
    # A subnormal rate (eps near 1490) overflows E / rate to inf: still none.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _bernoulli_positions(_FixedExponentials(1.0), 2**40, 5e-324).size == 0


def test_output_dtype_seed_and_empty():
    z = rappor([0, 1], epsilon=1.0, n_classes=3, random_state=0)
    assert z.dtype == np.uint8
    assert_array_equal(z, rappor([0, 1], epsilon=1.0, n_classes=3, random_state=0))
    assert rappor([], epsilon=1.0, n_classes=3).shape == (0, 3)
    empty = rappor([], epsilon=1.0, n_classes=3, sparse_output=True)
    assert empty.shape == (0, 3) and empty.nnz == 0


@pytest.mark.parametrize("sparse_output", [False, True])
def test_same_seed_same_bits_and_fresh_entropy_by_default(sparse_output):
    y = np.arange(2000) % 7

    def draw(random_state):
        z = rappor(y, epsilon=1.0, n_classes=7, random_state=random_state,
                   sparse_output=sparse_output)
        return z.toarray() if sparse_output else z

    assert_array_equal(draw(42), draw(42))
    assert not np.array_equal(draw(42), draw(43))
    assert not np.array_equal(draw(None), draw(None))
    generator = np.random.default_rng(42)
    first, second = draw(generator), draw(generator)
    assert_array_equal(first, draw(42))
    assert not np.array_equal(first, second)


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


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"y": [5]}, ValueError),
        ({"y": [0.5]}, TypeError),
        ({"epsilon": 0.0}, ValueError),
        ({"n_classes": 1}, ValueError),
        ({"sparse_output": "yes"}, TypeError),
        ({"sparse_output": None}, TypeError),
    ],
)
def test_bad_input_does_not_advance_the_generator(kwargs, error):
    rng = np.random.default_rng(0)
    call = {"y": [0, 1], "epsilon": 1.0, "n_classes": 3, "random_state": rng, **kwargs}
    with pytest.raises(error):
        rappor(call.pop("y"), **call)
    assert rng.random() == np.random.default_rng(0).random()


@pytest.mark.parametrize(
    "n_classes, epsilon, n, digest",
    [
        (2, 0.5, 200_000, "32c967aee465f4d8"),  # 2 chunks
        (10, 1.0, 120_000, "eeef16b26f6f0574"),  # 3 chunks
        (100, 6.0, 100_000, "ce4c468dcc2ba42e"),  # 3 chunks
    ],
)
def test_draws_are_pinned(n_classes, epsilon, n, digest):
    # The bits drawn from a given generator, recorded from the implementation
    # that allocated fresh arrays for every chunk: reusing the chunks' work
    # arrays must not change a single draw (nor the sparse output's).
    import hashlib

    y = np.random.default_rng(n_classes).integers(n_classes, size=n)
    z = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=21)
    assert hashlib.sha256(z.tobytes()).hexdigest()[:16] == digest
    sparse = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=21, sparse_output=True)
    assert_array_equal(sparse.toarray(), z)
