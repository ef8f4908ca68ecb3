"""Additive noise on the one-hot label and its post-processing (Malek et al., 2021).

The posteriors are checked against a brute-force Bayes computation written from
the noise densities, one hypothesis at a time: P(y = k | o) ∝ prior_k times the
product over all coordinates j of density(o_j - [j == k]). Products are taken
as exact rational sums of log densities, so extreme noise values neither underflow
nor lose digits in the reference.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import minimize
from scipy.stats import kstest

from sklearn_labeldp.mechanisms import (
    alibi_posterior,
    gaussian_one_hot,
    gaussian_posterior,
    laplace_one_hot,
    project_to_simplex,
)


def laplace_exponent(b):
    """x -> log Laplace(0, b) density of x, less its constant, as an exact Fraction."""
    b = Fraction(b)
    return lambda x: -abs(x) / b


def gaussian_exponent(sigma):
    """x -> log N(0, sigma^2) density of x, less its constant, as an exact Fraction."""
    var = Fraction(sigma) ** 2
    return lambda x: -(x * x) / (2 * var)


def brute_force_posterior(o_row, prior_row, exponent):
    """P(y = k | o) by Bayes' rule: prior_k times the product over every coordinate j
    of density(o_j - [j == k]).

    The log-likelihood of each hypothesis is summed exactly in rational arithmetic
    (the densities' normalising constants are the same for every k and cancel), so
    the reference neither overflows nor loses digits to cancellation when |o| is large.
    """
    n_classes = len(o_row)
    o_row = [Fraction(float(v)) for v in o_row]
    log_lik = [
        sum(exponent(o_row[j] - (1 if j == k else 0)) for j in range(n_classes))
        for k in range(n_classes)
    ]
    top = max(log_lik[k] for k in range(n_classes) if prior_row[k] > 0)
    weights = [
        prior_row[k] * math.exp(float(log_lik[k] - top)) if prior_row[k] > 0 else 0.0
        for k in range(n_classes)
    ]
    s = sum(weights)
    return [w / s for w in weights]


def brute_force(o, prior, exponent):
    return np.array(
        [brute_force_posterior(list(o[i]), list(prior[i]), exponent) for i in range(len(o))]
    )


# --- noise laws --------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "n_classes"), [(0.5, 3), (1.0, 10), (4.0, 2)])
def test_laplace_noise_law(epsilon, n_classes):
    y = np.arange(3000) % n_classes
    o = laplace_one_hot(y, epsilon=epsilon, n_classes=n_classes, random_state=11)
    assert o.shape == (y.size, n_classes)
    one_hot = np.eye(n_classes)[y]
    noise = o - one_hot
    b = 2.0 / epsilon
    assert kstest(noise.ravel(), "laplace", args=(0.0, b)).pvalue > 1e-3
    # Also on the label coordinate alone (where the +1 sits).
    on_label = noise[np.arange(y.size), y]
    assert kstest(on_label, "laplace", args=(0.0, b)).pvalue > 1e-3
    # Wrong scales are rejected by the same test (the test has power).
    assert kstest(noise.ravel(), "laplace", args=(0.0, 1.2 * b)).pvalue < 1e-3
    assert kstest(noise.ravel(), "laplace", args=(0.0, 1.0 / epsilon)).pvalue < 1e-3


@pytest.mark.parametrize(("sigma", "n_classes"), [(0.3, 3), (1.0, 10), (5.0, 2)])
def test_gaussian_noise_law(sigma, n_classes):
    y = np.arange(3000) % n_classes
    o = gaussian_one_hot(y, sigma=sigma, n_classes=n_classes, random_state=12)
    noise = o - np.eye(n_classes)[y]
    assert kstest(noise.ravel(), "norm", args=(0.0, sigma)).pvalue > 1e-3
    on_label = noise[np.arange(y.size), y]
    assert kstest(on_label, "norm", args=(0.0, sigma)).pvalue > 1e-3
    assert kstest(noise.ravel(), "norm", args=(0.0, 1.1 * sigma)).pvalue < 1e-3


def test_one_hot_part_is_exact_and_the_noise_is_rounded_to_the_lattice():
    y = np.array([2, 0, 1, 1])
    lattice = 2.0**-20
    o = laplace_one_hot(y, epsilon=1.0, n_classes=3, random_state=5)
    noise = np.random.default_rng(5).laplace(0.0, 2.0, size=(4, 3))
    assert_array_equal(o, np.round(noise / lattice) * lattice + np.eye(3)[y])
    assert np.abs(o - noise - np.eye(3)[y]).max() <= lattice / 2
    o = gaussian_one_hot(y, sigma=0.7, n_classes=3, random_state=5)
    noise = np.random.default_rng(5).normal(0.0, 0.7, size=(4, 3))
    assert_array_equal(o, np.round(noise / lattice) * lattice + np.eye(3)[y])
    assert laplace_one_hot([], epsilon=1.0, n_classes=3).shape == (0, 3)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_draws_are_pinned_across_chunks(mechanism):
    # The one-hot part is added chunk by chunk through reused arrays: over
    # several chunks the release is still exactly e_y + round(noise) for the
    # generator's noise, drawn in one call.
    from sklearn_labeldp.utils._validation import CHUNK_ELEMENTS

    n, n_classes, lattice = 2 * CHUNK_ELEMENTS + 17, 3, 2.0**-20
    y = np.random.default_rng(1).integers(n_classes, size=n)
    rng = np.random.default_rng(6)
    if mechanism == "laplace":
        o = laplace_one_hot(y, epsilon=0.8, n_classes=n_classes, random_state=6)
        noise = rng.laplace(0.0, 2.0 / 0.8, size=(n, n_classes))
    else:
        o = gaussian_one_hot(y, sigma=0.8, n_classes=n_classes, random_state=6)
        noise = rng.normal(0.0, 0.8, size=(n, n_classes))
    expected = np.round(noise / lattice) * lattice
    expected[np.arange(n), y] += 1.0
    assert_array_equal(o, expected)


# --- posteriors --------------------------------------------------------------


def _cases(n_classes, seed, scale):
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=30)
    return np.eye(n_classes)[y] + rng.laplace(0.0, scale, size=(30, n_classes))


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_alibi_posterior_matches_brute_force_bayes(n_classes, epsilon):
    b = 2.0 / epsilon
    o = _cases(n_classes, 0, b)
    density = laplace_exponent(b)
    uniform = np.ones((len(o), n_classes))
    assert_allclose(
        alibi_posterior(o, epsilon=epsilon), brute_force(o, uniform, density), atol=1e-10, rtol=0
    )
    # Non-uniform (n, K) prior with zeros, rows not normalised.
    prior = np.random.default_rng(1).random((len(o), n_classes))
    prior[::3, 0] = 0.0
    prior[1::3, -1] = 0.0
    got = alibi_posterior(o, epsilon=epsilon, prior=prior)
    assert_allclose(got, brute_force(o, prior, density), atol=1e-10, rtol=0)
    assert np.all(got[prior == 0] == 0.0)
    # A (K,) prior is broadcast to every row.
    row = np.linspace(1.0, 2.0, n_classes)
    assert_allclose(
        alibi_posterior(o, epsilon=epsilon, prior=row),
        brute_force(o, np.tile(row, (len(o), 1)), density),
        atol=1e-10,
        rtol=0,
    )


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("sigma", [0.05, 1.0, 6.0])
def test_gaussian_posterior_matches_brute_force_bayes(n_classes, sigma):
    rng = np.random.default_rng(2)
    o = np.eye(n_classes)[rng.integers(n_classes, size=30)] + rng.normal(0, sigma, (30, n_classes))
    density = gaussian_exponent(sigma)
    uniform = np.ones((len(o), n_classes))
    assert_allclose(
        gaussian_posterior(o, sigma=sigma), brute_force(o, uniform, density), atol=1e-10, rtol=0
    )
    prior = rng.random((len(o), n_classes))
    prior[::2, 1] = 0.0
    got = gaussian_posterior(o, sigma=sigma, prior=prior)
    assert_allclose(got, brute_force(o, prior, density), atol=1e-10, rtol=0)
    assert np.all(got[prior == 0] == 0.0)


def test_gaussian_posterior_divides_by_sigma_squared_not_sigma():
    # The reference code's exp(o_k / sigma) would give a different answer.
    o = np.array([[1.0, 0.0]])
    got = gaussian_posterior(o, sigma=2.0)
    assert_allclose(got[0, 0], 1 / (1 + math.exp(-1 / 4)), rtol=1e-12)
    assert abs(got[0, 0] - 1 / (1 + math.exp(-1 / 2))) > 0.05


def test_extreme_values_do_not_overflow():
    o = np.array([[1e3, -1e3, 0.5], [-1e3, 2e3, 1e3], [1e3, 1e3, -5.0], [0.2, 0.9, 0.0]])
    prior = np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 1.0], [1.0, 2.0, 0.0], [0.0, 1.0, 1.0]])
    for epsilon in [1.0, 500.0, 5000.0]:  # 1/b up to 2500: naive exp overflows
        b = 2.0 / epsilon
        density = laplace_exponent(b)
        with np.errstate(over="raise", invalid="raise"):
            got = alibi_posterior(o, epsilon=epsilon, prior=prior)
        assert np.all(np.isfinite(got))
        assert_allclose(got, brute_force(o, prior, density), atol=1e-10, rtol=0)
    for sigma in [0.01, 1.0, 30.0]:  # o / sigma^2 up to 2e7
        density = gaussian_exponent(sigma)
        with np.errstate(over="raise"):
            got = gaussian_posterior(o, sigma=sigma, prior=prior)
        assert np.all(np.isfinite(got))
        assert_allclose(got, brute_force(o, prior, density), atol=1e-10, rtol=0)


def test_posterior_chunking_matches_single_chunk():
    # More rows than one chunk holds, with a per-row prior: chunks must line up.
    rng = np.random.default_rng(4)
    n_classes = 3
    n = (1 << 18) // n_classes + 17
    o = rng.laplace(0.0, 1.0, size=(n, n_classes))
    prior = rng.random((n, n_classes)) + 0.01
    got = alibi_posterior(o, epsilon=2.0, prior=prior)
    logits = np.clip(o, 0, 1) * 2.0 + np.log(prior)
    expected = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    assert_allclose(got, expected, atol=1e-12, rtol=0)


# --- simplex projection ------------------------------------------------------


def reference_projection(v):
    """argmin ||p - v||^2 over the simplex by SLSQP."""
    k = len(v)
    res = minimize(
        lambda p: 0.5 * np.sum((p - v) ** 2),
        np.full(k, 1.0 / k),
        jac=lambda p: p - v,
        method="SLSQP",
        bounds=[(0, None)] * k,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1, "jac": lambda p: np.ones(k)}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return res.x


def assert_kkt(v, p):
    """p is the projection iff p on the simplex and v - p = theta on supp(p), <= theta off it."""
    assert np.all(p >= 0)
    assert_allclose(p.sum(), 1.0, atol=1e-12)
    r = v - p
    support = p > 0
    theta = r[support].mean()
    assert_allclose(r[support], theta, atol=1e-10)
    assert np.all(r[~support] <= theta + 1e-10)


@pytest.mark.parametrize("n_classes", [1, 2, 3, 7, 30])
def test_projection_matches_reference(n_classes):
    rng = np.random.default_rng(n_classes)
    v = np.concatenate([rng.normal(0, 1, (20, n_classes)), rng.laplace(0.3, 3, (20, n_classes))])
    p = project_to_simplex(v)
    assert p.shape == v.shape
    for i in range(len(v)):
        assert_kkt(v[i], p[i])
        if n_classes <= 7:
            assert_allclose(p[i], reference_projection(v[i]), atol=1e-6)
    # 1-d input gives the same row.
    assert_allclose(project_to_simplex(v[0]), p[0], atol=0)


def test_projection_is_idempotent_and_fixes_simplex_points():
    rng = np.random.default_rng(9)
    q = rng.dirichlet(np.ones(6), size=50)
    q[:10, 0] = 0
    q[:10] /= q[:10].sum(axis=1, keepdims=True)
    assert_allclose(project_to_simplex(q), q, atol=1e-14)
    p = project_to_simplex(rng.normal(0, 2, (50, 6)))
    assert_allclose(project_to_simplex(p), p, atol=1e-14)
    # Shifting a row by a constant does not change its projection.
    v = rng.normal(0, 1, (5, 4))
    assert_allclose(project_to_simplex(v + 3.7), project_to_simplex(v), atol=1e-12)


def test_projection_known_values():
    got = project_to_simplex([[2.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.6, 0.4, -3.0], [1, 1, 0]])
    assert_allclose(got, [[1, 0, 0], [1 / 3] * 3, [0.6, 0.4, 0.0], [0.5, 0.5, 0]], atol=1e-15)


# --- bad inputs --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (0.0, ValueError),
        (-1.0, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
        (None, TypeError),
    ],
)
def test_bad_epsilon_and_sigma(value, error):
    o = [[1.0, 0.0]]
    with pytest.raises(error, match="epsilon"):
        laplace_one_hot([0], epsilon=value, n_classes=2)
    with pytest.raises(error, match="epsilon"):
        alibi_posterior(o, epsilon=value)
    with pytest.raises(error, match="sigma"):
        gaussian_one_hot([0], sigma=value, n_classes=2)
    with pytest.raises(error, match="sigma"):
        gaussian_posterior(o, sigma=value)


@pytest.mark.parametrize(
    "noisy", [[1.0, 0.0], [[1.0]], [[[1.0, 0.0]]], [[np.nan, 0.0]], [[np.inf, 0.0]]]
)
def test_bad_noisy(noisy):
    with pytest.raises(ValueError, match="noisy"):
        alibi_posterior(noisy, epsilon=1.0)
    with pytest.raises(ValueError, match="noisy"):
        gaussian_posterior(noisy, sigma=1.0)


@pytest.mark.parametrize(
    ("prior", "match"),
    [
        ([[1.0, -0.1]] * 2, "nonnegative"),
        ([[1.0, np.nan]] * 2, "NaN"),
        ([[1.0, 1.0], [0.0, 0.0]], "all-zero"),
        ([0.0, 0.0], "all-zero"),
        ([1.0, -1.0], "nonneg"),
        ([[1.0, 1.0]] * 3, "rows"),
        ([1.0, 1.0, 1.0], "entries"),
        ([[1.0, 1.0, 1.0]] * 2, "columns"),
        ([[1.0, np.inf]] * 2, "inf"),
    ],
)
def test_bad_prior(prior, match):
    o = [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match=match):
        alibi_posterior(o, epsilon=1.0, prior=prior)
    with pytest.raises(ValueError, match=match):
        gaussian_posterior(o, sigma=1.0, prior=prior)


@pytest.mark.parametrize(
    ("y", "error"),
    [([0, 2], ValueError), ([-1], ValueError), ([0.5], TypeError), ([[0]], ValueError)],
)
def test_bad_labels(y, error):
    with pytest.raises(error):
        laplace_one_hot(y, epsilon=1.0, n_classes=2)
    with pytest.raises(error):
        gaussian_one_hot(y, sigma=1.0, n_classes=2)


def test_bad_input_does_not_advance_the_generator():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        laplace_one_hot([5], epsilon=1.0, n_classes=3, random_state=rng)
    with pytest.raises(ValueError):
        gaussian_one_hot([0], sigma=-1.0, n_classes=3, random_state=rng)
    assert rng.random() == np.random.default_rng(0).random()


@pytest.mark.parametrize("v", [[[np.nan, 1.0]], [[[1.0]]], 3.0])
def test_projection_bad_input(v):
    with pytest.raises(ValueError, match="v must"):
        project_to_simplex(v)


@pytest.mark.parametrize(
    ("mechanism", "noise_kw"),
    [(laplace_one_hot, {"epsilon": 1.0}), (gaussian_one_hot, {"sigma": 1.0})],
    ids=["laplace", "gaussian"],
)
def test_released_values_carry_no_floating_point_pattern_of_the_label(mechanism, noise_kw):
    # Mironov (2012): with raw float noise, 1 + X in (0.25, 0.5) is always a
    # multiple of 2**-53 while 0 + X there is so only half the time, so the
    # exact value of a coordinate reveals the label. The control shows the
    # distinguisher works on raw noise; the release must defeat it.
    n = 50_000
    X = np.random.default_rng(0).laplace(0.0, 2.0, size=n)

    def pattern(values):
        window = values[(values > 0.25) & (values < 0.5)]
        return np.mean(np.mod(window * 2.0**53, 1.0) == 0)

    assert pattern(1.0 + X) == 1.0 and pattern(0.0 + X) < 0.6
    released = {
        y: mechanism(np.full(n, y), n_classes=2, random_state=1, **noise_kw)[:, 0]
        for y in (0, 1)
    }
    for values in released.values():
        assert np.all(np.mod(values * 2.0**20, 1.0) == 0)  # the lattice, for either label
        assert pattern(values) == 1.0
