"""RRTop-k and RRWithPrior (Ghazi et al., 2021, Algorithm 1 and Algorithm 2).

The ``spec_*`` functions are written from the paper, one example at a time,
independently of the library: sort the labels by (-prior, index), keep the
first k, score k by Alg. 2's w_k = S_k / (1 + (k - 1) e^-eps), and so on.
"""

import math

import numpy as np
import pytest
from _law_checks import assert_follows, max_likelihood_ratio
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_labeldp.mechanisms import (
    optimal_top_k,
    randomized_response,
    randomized_response_distribution,
    rr_top_k,
    rr_top_k_distribution,
    rr_with_prior,
    rr_with_prior_distribution,
    top_k_mask,
)

N_CLASSES = [2, 3, 10, 50]


# --- the definition, one example at a time ------------------------------------


def spec_order(prior_row):
    """Labels by decreasing prior, ties by lower label index."""
    return sorted(range(len(prior_row)), key=lambda j: (-prior_row[j], j))


def spec_top_k(prior_row, k):
    return set(spec_order(prior_row)[:k])


def spec_rr_top_k_law(prior_row, k, epsilon):
    """P[y, out] of RRTop-k (Alg. 1) for one prior row."""
    n_classes = len(prior_row)
    top = spec_top_k(prior_row, k)
    e = math.exp(epsilon)
    law = np.zeros((n_classes, n_classes))
    for y in range(n_classes):
        for out in top:
            if y in top:
                law[y, out] = (e if out == y else 1.0) / (e + k - 1)
            else:
                law[y, out] = 1.0 / k
    return law


def spec_optimal_k(prior_row, epsilon, off_by_one=False):
    """First k maximising w_k = (sum of the k largest p) / (1 + (k - 1) e^-eps).

    ``off_by_one`` scores k with the reference code's denominator 1 + k e^-eps.
    """
    c = math.exp(-epsilon)
    best_k, best_w, partial = 0, -math.inf, 0.0
    for k, value in enumerate(sorted(prior_row, reverse=True), start=1):
        partial += value
        w = partial / (1 + (k if off_by_one else k - 1) * c)
        if w > best_w:
            best_k, best_w = k, w
    return best_k


def spec_rr_with_prior_law(prior_row, epsilon):
    return spec_rr_top_k_law(prior_row, spec_optimal_k(prior_row, epsilon), epsilon)


# --- helpers -------------------------------------------------------------------


def make_priors(n_classes, seed):
    """Prior rows of every kind the mechanism must handle, as a list of float lists."""
    rng = np.random.default_rng(seed)
    rows = []
    for alpha in (0.1, 0.3, 1.0, 5.0):
        rows.extend(rng.dirichlet(np.full(n_classes, alpha), size=3))
    # Exact ties, including ties at the top-k boundary, and zeros.
    for _ in range(4):
        counts = rng.integers(0, 4, size=n_classes).astype(float)
        counts[rng.integers(n_classes)] = 3.0
        rows.append(counts)
    rows.append(np.r_[np.full(n_classes - n_classes // 2, 0.5), np.zeros(n_classes // 2)])
    rows.append(np.r_[np.zeros(n_classes // 2), np.full(n_classes - n_classes // 2, 0.5)])
    # Zeros among random values.
    for _ in range(3):
        row = rng.dirichlet(np.ones(n_classes))
        row[rng.random(n_classes) < 0.5] = 0.0
        row[rng.integers(n_classes)] = rng.random() + 0.1
        rows.append(row)
    # Unnormalised rows: only ratios matter.
    for scale in (1e-3, 37.5, 1e6):
        rows.append(rng.dirichlet(np.full(n_classes, 0.5)) * scale)
    rows.append(np.full(n_classes, 1.0 / n_classes))  # uniform
    rows.append(np.full(n_classes, 4.0))  # uniform, unnormalised
    rows.append(np.eye(n_classes)[rng.integers(n_classes)])  # one-hot
    return np.array(rows, dtype=np.float64)


def assert_laws_are_eps_dp(laws, epsilon):
    assert np.all(laws >= 0)
    assert_allclose(laws.sum(axis=2), 1.0, atol=1e-12, rtol=0)
    for law in laws:
        assert max_likelihood_ratio(law) <= math.exp(epsilon) * (1 + 1e-9)


# --- exact laws ----------------------------------------------------------------


@pytest.mark.parametrize("n_classes", N_CLASSES)
@pytest.mark.parametrize("epsilon", [0.1, 0.7, 1.3, 2.9, 6.0])
def test_rr_with_prior_distribution_matches_spec(n_classes, epsilon):
    priors = make_priors(n_classes, seed=n_classes)
    laws = rr_with_prior_distribution(priors, epsilon=epsilon)
    expected = np.array([spec_rr_with_prior_law(row.tolist(), epsilon) for row in priors])
    assert laws.shape == (len(priors), n_classes, n_classes)
    assert_allclose(laws, expected, atol=1e-12, rtol=0)
    assert_laws_are_eps_dp(laws, epsilon)


@pytest.mark.parametrize("n_classes", N_CLASSES)
def test_rr_top_k_distribution_matches_spec_for_every_k(n_classes):
    priors = make_priors(n_classes, seed=100 + n_classes)
    epsilon = 1.1
    ks = range(1, n_classes + 1) if n_classes <= 10 else [1, 2, 7, 25, 49, 50]
    for k in ks:
        laws = rr_top_k_distribution(priors, k=k, epsilon=epsilon)
        expected = np.array([spec_rr_top_k_law(row.tolist(), k, epsilon) for row in priors])
        assert_allclose(laws, expected, atol=1e-12, rtol=0, err_msg=f"k={k}")
        assert_laws_are_eps_dp(laws, epsilon)
        if k >= 2:
            # Inside Y_k the ratio e^eps is attained (y kept vs another label).
            assert_allclose(max_likelihood_ratio(laws[0]), math.exp(epsilon), rtol=1e-12)


@pytest.mark.parametrize("n_classes", N_CLASSES)
def test_rr_top_k_distribution_with_per_row_k(n_classes):
    priors = make_priors(n_classes, seed=200 + n_classes)
    k = np.random.default_rng(n_classes).integers(1, n_classes + 1, size=len(priors))
    laws = rr_top_k_distribution(priors, k=k, epsilon=0.4)
    expected = np.array(
        [spec_rr_top_k_law(row.tolist(), int(kk), 0.4) for row, kk in zip(priors, k, strict=True)]
    )
    assert_allclose(laws, expected, atol=1e-12, rtol=0)
    assert_laws_are_eps_dp(laws, 0.4)


def test_rr_with_prior_likelihood_ratio_reaches_e_to_the_eps_when_k_above_one():
    priors = make_priors(10, seed=3)
    laws = rr_with_prior_distribution(priors, epsilon=1.7)
    k = optimal_top_k(priors, epsilon=1.7)
    assert (k > 1).any() and (k == 1).any()
    for law, kk in zip(laws, k, strict=True):
        ratio = max_likelihood_ratio(law)
        expected = math.exp(1.7) if kk > 1 else 1.0  # k = 1: the output is constant
        assert_allclose(ratio, expected, rtol=1e-12)


@pytest.mark.parametrize("n_classes", [100, 130, 200])
def test_distribution_matches_spec_for_wide_priors(n_classes):
    # Beyond K = 53 and K = 128 the sampler packs labels differently; the law
    # it must follow is the same.
    rng = np.random.default_rng(n_classes)
    priors = np.vstack([rng.dirichlet(np.full(n_classes, 0.05), size=3), np.ones(n_classes)])
    laws = rr_with_prior_distribution(priors, epsilon=4.0)
    expected = np.array([spec_rr_with_prior_law(row.tolist(), 4.0) for row in priors])
    assert_allclose(laws, expected, atol=1e-12, rtol=0)


# --- k* (Alg. 2) ---------------------------------------------------------------


@pytest.mark.parametrize("n_classes", N_CLASSES)
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 3.0, 8.0, 20.0])
def test_optimal_top_k_is_alg2_argmax(n_classes, epsilon):
    priors = np.vstack(
        [make_priors(n_classes, seed=300 + n_classes)]
        + [np.random.default_rng(1).dirichlet(np.full(n_classes, a), size=40) for a in (0.2, 2.0)]
    )
    k = optimal_top_k(priors, epsilon=epsilon)
    assert k.dtype == np.int64
    expected = [spec_optimal_k(row.tolist(), epsilon) for row in priors]
    assert_array_equal(k, expected)
    # The returned k is also the one rr_with_prior reports.
    y = np.zeros(len(priors), dtype=int)
    assert_array_equal(rr_with_prior(y, priors, epsilon=epsilon, return_k=True)[1], expected)


def test_optimal_top_k_large_k_star():
    # k* well beyond the first few sorted values, for K = 50 and K = 300.
    for n_classes in (50, 300):
        priors = np.random.default_rng(n_classes).dirichlet(np.full(n_classes, 3.0), size=30)
        k = optimal_top_k(priors, epsilon=6.0)
        assert k.min() > 16
        assert_array_equal(k, [spec_optimal_k(row.tolist(), 6.0) for row in priors])


def test_optimal_top_k_follows_the_paper_not_the_reference_code():
    # Alg. 2: w_1 = 0.7 > w_2 = 1 / (1 + 1/2); the reference code's denominator
    # 1 + k e^-eps gives w_1 = 0.7 / 1.5 < w_2 = 1 / 2 and would pick k = 2.
    prior = [[0.7, 0.3]]
    assert spec_optimal_k(prior[0], math.log(2)) == 1
    assert spec_optimal_k(prior[0], math.log(2), off_by_one=True) == 2
    assert_array_equal(optimal_top_k(prior, epsilon=math.log(2)), [1])
    # So RRWithPrior returns the prior's mode with certainty, whatever y is.
    assert_array_equal(
        rr_with_prior([0, 1] * 50, np.repeat(prior, 100, axis=0), epsilon=math.log(2)),
        np.zeros(100),
    )
    # On random priors the two rules disagree often; the library follows Alg. 2.
    priors = np.random.default_rng(0).dirichlet(np.full(10, 0.5), size=300)
    k = optimal_top_k(priors, epsilon=1.0)
    reference = np.array([spec_optimal_k(row.tolist(), 1.0, off_by_one=True) for row in priors])
    assert (k != reference).mean() > 0.1
    assert_array_equal(k, [spec_optimal_k(row.tolist(), 1.0) for row in priors])


def test_optimal_top_k_exact_tie_goes_to_the_smallest_k():
    # eps = log 2 makes w_1 = 0.5 and w_2 = (0.5 + 0.25) / 1.5 = 0.5 equal.
    epsilon = math.log(2)
    assert math.exp(-epsilon) == 0.5
    assert_array_equal(optimal_top_k([[0.5, 0.25, 0.25]], epsilon=epsilon), [1])


def test_optimal_top_k_ignores_zero_prior_labels():
    prior = [[0.0, 0.5, 0.0, 0.5, 0.0]]
    for epsilon in (0.1, 1.0, 10.0, 800.0):
        assert optimal_top_k(prior, epsilon=epsilon)[0] == 2


def test_optimal_top_k_is_scale_free_up_to_the_float_limits():
    rng = np.random.default_rng(4)
    priors = rng.dirichlet(np.full(6, 0.5), size=50)
    k = optimal_top_k(priors, epsilon=1.0)
    for scale in (2.0**-1000, 2.0**-20, 2.0**30, 2.0**1000):
        assert_array_equal(optimal_top_k(priors * scale, epsilon=1.0), k)
    # Sums of these rows overflow float64 unless the rows are rescaled.
    huge = [[1e308, 1e308, 1e308, 1e307], [1.7e308, 0.9e308, 0.0, 0.0]]
    assert_array_equal(optimal_top_k(huge, epsilon=math.log(2)), [3, 2])


# --- uniform prior = RR ---------------------------------------------------------


@pytest.mark.parametrize("n_classes", N_CLASSES + [100])
def test_uniform_prior_is_randomized_response(n_classes):
    scales = [1.0 / n_classes, 1.0, 3.0, 1e-300, 1e300]
    priors = np.array([np.full(n_classes, s) for s in scales])
    for epsilon in (1e-12, 1e-3, 0.5, 1.0, 3.0, 20.0, 800.0):
        assert_array_equal(optimal_top_k(priors, epsilon=epsilon), n_classes)
        laws = rr_with_prior_distribution(priors, epsilon=epsilon)
        rr = randomized_response_distribution(epsilon=epsilon, n_classes=n_classes)
        assert_allclose(laws, np.broadcast_to(rr, laws.shape), atol=1e-12, rtol=0)


def test_uniform_prior_samples_follow_randomized_response():
    n_classes, epsilon, n = 6, 0.9, 30_000
    rr = randomized_response_distribution(epsilon=epsilon, n_classes=n_classes)
    prior = np.ones((n, n_classes))
    for y in (0, 3, 5):
        out = rr_with_prior(np.full(n, y), prior, epsilon=epsilon, random_state=y)
        assert_follows(out, rr[y], f"(y={y})")


@pytest.mark.parametrize("n_classes", [2, 10, 300])
def test_no_prior_draws_exactly_randomized_response(n_classes):
    y = np.random.default_rng(0).integers(n_classes, size=5000)
    rr = randomized_response(y, epsilon=0.8, n_classes=n_classes, random_state=5)
    out, k = rr_with_prior(y, epsilon=0.8, n_classes=n_classes, random_state=5, return_k=True)
    assert_array_equal(out, rr)
    assert k.dtype == np.int64 and np.all(k == n_classes)
    empty, k = rr_with_prior([], epsilon=0.8, n_classes=n_classes, return_k=True)
    assert empty.shape == k.shape == (0,)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "n_classes is required"),
        ({"n_classes": 1}, ValueError, "n_classes must be >= 2"),
        ({"n_classes": 3.0}, TypeError, "n_classes must be an int"),
        ({"n_classes": 2}, ValueError, r"must lie in \[0, 1\]"),
        (
            {"n_classes": 4, "prior": [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]},
            ValueError,
            "n_classes=4 but prior has 3",
        ),
        ({"n_classes": 3, "epsilon": 0.0}, ValueError, "finite number > 0"),
    ],
)
def test_no_prior_bad_input_does_not_advance_the_generator(kwargs, error, match):
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    call = {"prior": None, "epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        rr_with_prior([0, 2], random_state=rng, **call)
    assert rng.bit_generator.state == before


def test_matching_n_classes_with_a_prior_changes_nothing():
    y, prior = [0, 2], [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]
    assert_array_equal(
        rr_with_prior(y, prior, epsilon=1.0, n_classes=3, random_state=1),
        rr_with_prior(y, prior, epsilon=1.0, random_state=1),
    )


# --- top_k_mask ------------------------------------------------------------------


def test_top_k_mask_breaks_ties_by_lower_index():
    prior = [[0.2, 0.4, 0.4, 0.4], [0.4, 0.4, 0.4, 0.2], [0.1, 0.3, 0.3, 0.3]]
    assert_array_equal(
        top_k_mask(prior, k=2).astype(int), [[0, 1, 1, 0], [1, 1, 0, 0], [0, 1, 1, 0]]
    )
    assert_array_equal(
        top_k_mask(prior, k=1).astype(int), [[0, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    )
    # Per-row k, and zero-prior labels filling the set by index when k is large.
    assert_array_equal(
        top_k_mask([[0.0, 0.5, 0.0, 0.5], [1, 1, 1, 1], [3, 0, 2, 0]], k=[3, 2, 4]).astype(int),
        [[1, 1, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1]],
    )


@pytest.mark.parametrize("n_classes", N_CLASSES)
def test_top_k_mask_matches_spec(n_classes):
    # Several chunks of rows, with many ties (small integer priors).
    rng = np.random.default_rng(n_classes)
    n = 30_000 if n_classes == 10 else 600
    priors = rng.integers(0, 4, size=(n, n_classes)).astype(float)
    priors[np.arange(n), rng.integers(n_classes, size=n)] += 1.0
    k = rng.integers(1, n_classes + 1, size=n)
    mask = top_k_mask(priors, k)
    assert mask.dtype == bool
    assert_array_equal(mask.sum(axis=1), k)
    expected = np.zeros_like(mask)
    for i, (row, kk) in enumerate(zip(priors.tolist(), k, strict=True)):
        expected[i, list(spec_top_k(row, int(kk)))] = True
    assert_array_equal(mask, expected)


def test_tie_break_never_depends_on_the_true_label():
    # Labels 0, 1, 2 tie; k = 2 keeps {0, 1} for every y, so a true label 2
    # is never reported and its output is uniform over {0, 1}.
    n = 20_000
    prior = np.tile([0.3, 0.3, 0.3, 0.1], (n, 1))
    laws = rr_top_k_distribution(prior[:1], k=2, epsilon=1.0)[0]
    assert_allclose(laws[2], [0.5, 0.5, 0, 0], atol=1e-12, rtol=0)
    for y in range(4):
        out = rr_top_k(np.full(n, y), prior, k=2, epsilon=1.0, random_state=10 + y)
        assert_follows(out, laws[y], f"(y={y})")


# --- sampling -----------------------------------------------------------------------

SAMPLING_PRIORS = [
    [0.5, 0.2, 0.2, 0.1, 0.0],  # ties below the top, a zero
    [0.25, 0.25, 0.25, 0.25, 0.0],  # ties at the top, a zero
    [0.0, 3.0, 0.0, 1.0, 1.0],  # unnormalised, zeros, tie at the boundary
    [0.9, 0.05, 0.03, 0.01, 0.01],  # peaked
    [1.0, 1.0, 1.0, 1.0, 1.0],  # uniform
]


@pytest.mark.parametrize("row", range(len(SAMPLING_PRIORS)))
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_rr_with_prior_samples_follow_the_law(row, epsilon):
    n = 20_000
    prior_row = SAMPLING_PRIORS[row]
    law = spec_rr_with_prior_law(prior_row, epsilon)
    prior = np.tile(prior_row, (n, 1))
    for y in range(len(prior_row)):
        out = rr_with_prior(np.full(n, y), prior, epsilon=epsilon, random_state=100 * row + y)
        assert_follows(out, law[y], f"(row={row}, eps={epsilon}, y={y})")


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_rr_top_k_samples_follow_the_law(k):
    n = 20_000
    for row, prior_row in enumerate(SAMPLING_PRIORS[:3]):
        law = spec_rr_top_k_law(prior_row, k, 1.2)
        prior = np.tile(prior_row, (n, 1))
        for y in range(len(prior_row)):
            out = rr_top_k(np.full(n, y), prior, k=k, epsilon=1.2, random_state=1000 * k + y)
            assert_follows(out, law[y], f"(k={k}, row={row}, y={y})")


def test_rr_top_k_samples_with_per_row_k():
    # One call, k cycling over 1..5 row by row: each k-group follows its law.
    n = 50_000
    prior_row = [0.1, 0.4, 0.4, 0.0, 0.1]
    prior = np.tile(prior_row, (n, 1))
    k = np.arange(n) % 5 + 1
    for y in (0, 1, 3):
        out = rr_top_k(np.full(n, y), prior, k=k, epsilon=0.8, random_state=y)
        for kk in range(1, 6):
            law = spec_rr_top_k_law(prior_row, kk, 0.8)
            assert_follows(out[k == kk], law[y], f"(k={kk}, y={y})")


@pytest.mark.parametrize("n_classes", [10, 50])
def test_rr_with_prior_samples_many_chunks(n_classes):
    # Enough rows for several internal chunks; Dirichlet priors of one row.
    n = 60_000 if n_classes == 10 else 15_000
    prior_row = np.random.default_rng(n_classes).dirichlet(np.full(n_classes, 0.3))
    law = spec_rr_with_prior_law(prior_row.tolist(), 2.0)
    prior = np.tile(prior_row, (n, 1))
    for y in (int(np.argmax(prior_row)), int(np.argmin(prior_row))):
        out = rr_with_prior(np.full(n, y), prior, epsilon=2.0, random_state=y)
        assert_follows(out, law[y], f"(K={n_classes}, y={y})")


@pytest.mark.parametrize("n_classes", [64, 100, 130, 300])
def test_samples_reach_labels_across_word_and_byte_boundaries(n_classes):
    # Equal top labels straddling bits 7/8, 63/64 and 127/128 of the packed set.
    n, epsilon = 20_000, 5.0
    top = [0, 7, 8, 62, 63] + [j for j in (64, 65, 99, 127, 128, 129, 250) if j < n_classes]
    prior_row = np.full(n_classes, 1e-3)
    prior_row[top] = 1.0
    assert spec_optimal_k(prior_row.tolist(), epsilon) == len(top)
    law = spec_rr_with_prior_law(prior_row.tolist(), epsilon)
    prior = np.tile(prior_row, (n, 1))
    for y in (top[-1], top[len(top) // 2], 5):
        out = rr_with_prior(np.full(n, y), prior, epsilon=epsilon, random_state=y)
        assert_follows(out, law[y], f"(K={n_classes}, y={y})")


def test_mixed_rows_keep_the_true_label_at_the_predicted_rate():
    # Heterogeneous rows in one call: the number of kept labels must match the
    # sum of the per-row keep probabilities (a z-test with a 5-sigma margin).
    rng = np.random.default_rng(8)
    n, n_classes, epsilon = 40_000, 10, 1.0
    priors = rng.dirichlet(np.full(n_classes, 0.3), size=n)
    priors[::7] = np.round(priors[::7] * 3)  # ties and zeros
    priors[priors.sum(axis=1) == 0] = 1.0
    y = (priors.cumsum(axis=1) < rng.random((n, 1)) * priors.sum(axis=1, keepdims=True)).sum(1)
    laws = rr_with_prior_distribution(priors, epsilon=epsilon)
    keep = laws[np.arange(n), y, y]
    out = rr_with_prior(y, priors, epsilon=epsilon, random_state=9)
    z = ((out == y).sum() - keep.sum()) / np.sqrt((keep * (1 - keep)).sum())
    assert abs(z) < 5
    # And every output is possible under the law of its row.
    assert np.all(laws[np.arange(n), y, out] > 0)


def test_output_dtype_shape_and_return_k():
    prior = [[0.9, 0.1, 0.0], [1, 1, 1]]
    out, k = rr_with_prior([0, 1], prior, epsilon=1.0, random_state=0, return_k=True)
    assert out.dtype == np.int64 and out.shape == (2,)
    assert_array_equal(k, [1, 3])
    assert_array_equal(out[:1], [0])
    assert rr_top_k([0.0, 1.0], prior, k=2, epsilon=1.0, random_state=0).dtype == np.int64
    empty = rr_with_prior([], np.empty((0, 3)), epsilon=1.0, random_state=0)
    assert empty.shape == (0,) and empty.dtype == np.int64
    assert optimal_top_k(np.empty((0, 3)), epsilon=1.0).shape == (0,)


# --- bad inputs -----------------------------------------------------------------

GOOD_Y = [0, 1]
GOOD_PRIOR = [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]

BAD_EPSILONS = [
    (0.0, ValueError, "finite number > 0"),
    (-0.5, ValueError, "finite number > 0"),
    (float("nan"), ValueError, "finite number > 0"),
    (float("inf"), ValueError, "finite number > 0"),
    (True, TypeError, "real number"),
    ("1", TypeError, "real number"),
]

BAD_PRIORS = [
    ([[0.5, np.nan, 0.2], [0.1, 0.1, 0.8]], ValueError, "NaN"),
    ([[0.5, np.inf, 0.2], [0.1, 0.1, 0.8]], ValueError, "inf"),
    ([[0.5, -0.1, 0.2], [0.1, 0.1, 0.8]], ValueError, "nonnegative"),
    ([[0.5, -np.inf, 0.2], [0.1, 0.1, 0.8]], ValueError, "nonnegative"),
    ([[0.0, 0.0, 0.0], [0.1, 0.1, 0.8]], ValueError, "all-zero row"),
    ([0.5, 0.3, 0.2], ValueError, "2-d array"),
    ([[[0.5, 0.3, 0.2]]], ValueError, "2-d array"),
    ([[1.0], [1.0]], ValueError, "at least 2 columns"),
]


def sampler_calls(y=GOOD_Y, prior=GOOD_PRIOR, epsilon=1.0, k=2, random_state=None):
    """Every public function, called with the given inputs."""
    return {
        "rr_with_prior": lambda: rr_with_prior(
            y, prior, epsilon=epsilon, random_state=random_state
        ),
        "rr_top_k": lambda: rr_top_k(y, prior, k=k, epsilon=epsilon, random_state=random_state),
        "optimal_top_k": lambda: optimal_top_k(prior, epsilon=epsilon),
        "rr_with_prior_distribution": lambda: rr_with_prior_distribution(prior, epsilon=epsilon),
        "rr_top_k_distribution": lambda: rr_top_k_distribution(prior, k=k, epsilon=epsilon),
        "top_k_mask": lambda: top_k_mask(prior, k),
    }


@pytest.mark.parametrize(("epsilon", "error", "match"), BAD_EPSILONS)
def test_bad_epsilon(epsilon, error, match):
    for name, call in sampler_calls(epsilon=epsilon).items():
        if name == "top_k_mask":
            continue
        with pytest.raises(error, match=match):
            call()


@pytest.mark.parametrize(("prior", "error", "match"), BAD_PRIORS)
def test_bad_prior(prior, error, match):
    for call in sampler_calls(prior=prior).values():
        with pytest.raises(error, match=match):
            call()


def test_prior_and_labels_must_have_matching_rows():
    for sampler in (
        lambda: rr_with_prior([0, 1, 2], GOOD_PRIOR, epsilon=1.0),
        lambda: rr_top_k([0], GOOD_PRIOR, k=1, epsilon=1.0),
    ):
        with pytest.raises(ValueError, match="prior has 2 rows but y has"):
            sampler()


@pytest.mark.parametrize(
    ("y", "error", "match"),
    [
        ([0, 3], ValueError, r"must lie in \[0, 2\]"),
        ([-1, 0], ValueError, r"must lie in \[0, 2\]"),
        ([0.5, 1.0], TypeError, "integer label codes"),
        ([[0, 1]], ValueError, "1-d array"),
        (["a", "b"], TypeError, "integer label codes"),
    ],
)
def test_bad_labels(y, error, match):
    for name in ("rr_with_prior", "rr_top_k"):
        with pytest.raises(error, match=match):
            sampler_calls(y=y)[name]()


@pytest.mark.parametrize(
    ("k", "error", "match"),
    [
        (0, ValueError, r"k must lie in \[1, 3\]"),
        (4, ValueError, r"k must lie in \[1, 3\]"),
        ([1, 0], ValueError, r"k must lie in \[1, 3\]"),
        ([1, 2, 3], ValueError, r"k must be a scalar or have shape \(2,\)"),
        ([[1, 2]], ValueError, r"k must be a scalar or have shape \(2,\)"),
        (1.5, TypeError, "k must be an integer"),
        (2.0, TypeError, "k must be an integer"),
        (True, TypeError, "k must be an integer"),
    ],
)
def test_bad_k(k, error, match):
    for name in ("rr_top_k", "rr_top_k_distribution", "top_k_mask"):
        with pytest.raises(error, match=match):
            sampler_calls(k=k)[name]()


@pytest.mark.parametrize(
    "inputs",
    [
        {"epsilon": -1.0},
        {"prior": [[0.5, np.nan, 0.2], [0.1, 0.1, 0.8]]},
        {"prior": [[0.0, 0.0, 0.0], [0.1, 0.1, 0.8]]},
        {"y": [0, 3]},
        {"y": [0, 1, 1]},
        {"k": 4},
    ],
)
def test_bad_input_does_not_advance_the_generator(inputs):
    for name in ("rr_top_k",) if "k" in inputs else ("rr_with_prior", "rr_top_k"):
        rng = np.random.default_rng(3)
        before = rng.bit_generator.state
        with pytest.raises((ValueError, TypeError)):
            sampler_calls(random_state=rng, **inputs)[name]()
        assert rng.bit_generator.state == before, name


def test_bad_row_in_a_late_chunk_is_caught_before_any_draw():
    # Rows are processed in chunks; every chunk is checked before the first draw.
    n, n_classes = 200_000, 10
    prior = np.ones((n, n_classes))
    prior[-1] = 0.0
    y = np.zeros(n, dtype=int)
    for call in (
        lambda rng: rr_with_prior(y, prior, epsilon=1.0, random_state=rng),
        lambda rng: rr_top_k(y, prior, k=3, epsilon=1.0, random_state=rng),
    ):
        rng = np.random.default_rng(3)
        before = rng.bit_generator.state
        with pytest.raises(ValueError, match="all-zero row"):
            call(rng)
        assert rng.bit_generator.state == before


# --- randomness -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rr_with_prior", "rr_top_k"])
def test_reproducibility(name):
    rng = np.random.default_rng(0)
    n, n_classes = 1000, 10
    prior = rng.dirichlet(np.full(n_classes, 2.0), size=n)
    y = rng.integers(n_classes, size=n)

    def draw(random_state):
        return sampler_calls(y=y, prior=prior, epsilon=0.5, k=5, random_state=random_state)[name]()

    assert_array_equal(draw(42), draw(42))
    assert not np.array_equal(draw(42), draw(43))
    # None draws fresh OS entropy: two calls agree with negligible probability.
    assert not np.array_equal(draw(None), draw(None))
    generator = np.random.default_rng(42)
    first, second = draw(generator), draw(generator)
    assert_array_equal(first, draw(42))
    assert not np.array_equal(first, second)
    assert_array_equal(draw(np.random.RandomState(1)), draw(np.random.RandomState(1)))


def test_popcount_fallback_matches_numpy():
    # numpy < 2.0 has no bitwise_count; the sampler then uses this fallback.
    from sklearn_labeldp.mechanisms._bit_select import _popcount64_swar

    words = np.random.default_rng(0).integers(0, 2**63, size=1000, dtype=np.uint64)
    extremes = np.array([0, 2**64 - 1, 2**63, 1], dtype=np.uint64)
    words = np.concatenate([words * np.uint64(2) + np.uint64(1), words, extremes])
    expected = [bin(int(w)).count("1") for w in words]
    assert_array_equal(_popcount64_swar(words), expected)


def test_generator_state_after_sampling_does_not_depend_on_the_labels():
    rng_prior = np.random.default_rng(0)
    prior = rng_prior.dirichlet(np.full(10, 0.5), size=500)
    after = []
    for y in (np.zeros(500, dtype=int), np.full(500, 7), rng_prior.integers(10, size=500)):
        rng = np.random.default_rng(1)
        rr_with_prior(y, prior, epsilon=1.0, random_state=rng)
        after.append(rng.random())
    assert after[0] == after[1] == after[2]


# --- the draws, pinned --------------------------------------------------------------


def reference_rr_top_k_draws(y, prior, epsilon, rng, chunk_rows, k=None):
    """RRTop-k's documented use of the generator, with numpy written independently.

    For each chunk of ``chunk_rows`` rows, two uniforms per row (all first
    coins, then all second ones): the label is kept when it is in the top-k
    set and the first coin is below e^eps / (e^eps + k - 1); otherwise the
    output is the ``floor(U2 m)``-th label, in index order, of the top-k set
    minus y (``m`` its size). The top-k set comes from a stable argsort of
    ``-prior`` and, for ``k=None``, RRWithPrior's ``k*`` from a cumulative
    sum, where the library sorts negated values, thresholds them and selects
    packed bits.
    """
    n, n_classes = prior.shape
    order = np.argsort(-prior, axis=1, kind="stable")
    sorted_desc = np.take_along_axis(prior, order, axis=1)
    if k is None:
        w = np.cumsum(sorted_desc, axis=1) / (1.0 + np.arange(n_classes) * np.exp(-epsilon))
        k = np.argmax(w, axis=1) + 1
        k[sorted_desc[:, 0] == sorted_desc[:, -1]] = n_classes
    k = np.broadcast_to(k, (n,))
    top = np.zeros((n, n_classes), dtype=bool)
    np.put_along_axis(top, order, np.arange(n_classes) < k[:, None], axis=1)
    rows = np.arange(n)
    y_in = top[rows, y]
    coins = np.concatenate(
        [rng.random((2, min(chunk_rows, n - s))) for s in range(0, n, chunk_rows)], axis=1
    )
    keep = y_in & (coins[0] < np.exp(epsilon) / (np.exp(epsilon) + k - 1))
    members = top.copy()
    members[rows[y_in], y[y_in]] = False
    pick = np.floor(coins[1] * members.sum(axis=1)).astype(int)
    picked = np.argmax(np.cumsum(members, axis=1) > pick[:, None], axis=1)
    return np.where(keep, y, picked), k


@pytest.mark.parametrize("n_classes", [2, 10, 60, 200])
@pytest.mark.parametrize("kind", ["continuous", "vote counts", "a few ties"])
def test_draws_are_pinned_across_chunks(n_classes, kind):
    # The exact outputs for a given generator, over several of the chunks the
    # sampler reuses its work arrays across (K = 2: 131,072 rows per chunk;
    # K = 60: two 64-bit words per row; K = 200: the byte path). Ties at the
    # threshold are broken on the tied rows alone (a few) or on whole chunks
    # (vote counts); both must give these draws (with RRTop-k's k: RRWithPrior's
    # k* never ends inside a group of equal values).
    from sklearn_labeldp.utils._validation import CHUNK_ELEMENTS

    chunk_rows = CHUNK_ELEMENTS // n_classes
    n = 2 * chunk_rows + 321
    rng = np.random.default_rng(n_classes)
    if kind == "vote counts":
        prior = rng.integers(0, 4, size=(n, n_classes)).astype(float)
        prior[:, 0] += 0.5  # no all-zero row
    else:
        prior = rng.dirichlet(np.full(n_classes, 0.3), size=n)
        if kind == "a few ties":
            prior[::97] = np.round(prior[::97] * 2) + 1.0
    y = rng.integers(n_classes, size=n)
    for epsilon in (0.5, 3.0):
        out, k = rr_with_prior(y, prior, epsilon=epsilon, random_state=11, return_k=True)
        expected, expected_k = reference_rr_top_k_draws(
            y, prior, epsilon, np.random.default_rng(11), chunk_rows)
        assert_array_equal(k, expected_k)
        assert_array_equal(out, expected)
    # RRWithPrior's k* never splits a group of equal values; a given k does.
    k = np.maximum(1, np.arange(n) % n_classes // 2)
    out = rr_top_k(y, prior, k=k, epsilon=1.0, random_state=12)
    expected, _ = reference_rr_top_k_draws(y, prior, 1.0, np.random.default_rng(12), chunk_rows, k)
    assert_array_equal(out, expected)


@pytest.mark.parametrize("n_classes", [2, 10, 1000])
def test_randomized_response_draws_are_pinned(n_classes):
    # n uniforms (taken in chunks, the same stream as one call), then n offsets.
    n = 600_000
    y = np.random.default_rng(0).integers(n_classes, size=n)
    out = randomized_response(y, epsilon=1.5, n_classes=n_classes, random_state=5)
    rng = np.random.default_rng(5)
    keep = rng.random(n) < np.exp(1.5) / (np.exp(1.5) + n_classes - 1)
    other = (y + rng.integers(1, n_classes, size=n)) % n_classes
    assert_array_equal(out, np.where(keep, y, other))
    assert_array_equal(rr_with_prior(y, epsilon=1.5, n_classes=n_classes, random_state=5), out)
