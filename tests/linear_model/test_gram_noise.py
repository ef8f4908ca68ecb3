"""Noisy Gram matrices: the symmetric Gaussian noise and the PSD projection."""

import math

import numpy as np
import pytest
from scipy import stats

from sklearn_labeldp.linear_model._gram_noise import (
    add_symmetric_noise,
    project_psd,
    project_psd_one,
)

# --------------------------------------------------------------------------- symmetric noise


def _chi2_bounds(n_values, tail=1e-12):
    """Two-sided bounds on sum(x^2) / sd^2 for n iid N(0, sd^2) values: chi2(n) quantiles.

    A correct implementation falls outside with probability 2e-12, whatever the seed.
    """
    return stats.chi2.ppf(tail, n_values), stats.chi2.isf(tail, n_values)


@pytest.mark.parametrize("std", [0.3, 2.0])
def test_diagonal_variance_is_sd2_and_off_diagonal_sd2_over_2(std):
    p, reps = 6, 3000
    noise = add_symmetric_noise(np.zeros((reps, p, p)), std, np.random.default_rng(0))
    assert np.array_equal(noise, np.swapaxes(noise, -1, -2))
    rows, cols = np.triu_indices(p, 1)
    pieces = {
        "diagonal": (np.diagonal(noise, axis1=-2, axis2=-1).ravel(), std**2),
        "off-diagonal": (noise[:, rows, cols].ravel(), std**2 / 2),
    }
    for name, (values, variance) in pieces.items():
        low, high = _chi2_bounds(values.size)
        statistic = np.sum(values**2) / variance
        assert low < statistic < high, (name, statistic / values.size)
        if name == "off-diagonal":
            # Mirroring an iid upper triangle (variance sd^2 off the diagonal) is far out.
            assert np.sum(values**2) / std**2 < low
        # Mean zero: |sum| below 7.5 standard deviations (probability 6e-14 of failing).
        assert abs(values.sum()) < 7.5 * math.sqrt(variance * values.size)


def test_distinct_entries_are_uncorrelated():
    noise = add_symmetric_noise(np.zeros((4000, 3, 3)), 1.0, np.random.default_rng(1))
    pairs = [((0, 1), (0, 2)), ((0, 0), (0, 1)), ((0, 0), (1, 1)), ((0, 1), (1, 2))]
    for a, b in pairs:
        corr = np.corrcoef(noise[:, a[0], a[1]], noise[:, b[0], b[1]])[0, 1]
        # sd of a null correlation ~ 1 / sqrt(4000) = 0.016: 0.1 is over 6 of them.
        assert abs(corr) < 0.1, (a, b, corr)


def test_noise_is_the_symmetrised_full_draw_in_place():
    # Matrix by matrix in the order of the leading axes, one p x p standard normal
    # draw E each: the noise is std (E + E^T) / 2, added to M in place.
    p, std = 5, 3.0
    M = np.arange(2 * 3 * p * p, dtype=float).reshape(2, 3, p, p)
    M = M + np.swapaxes(M, -1, -2)
    noisy = M.copy()
    out = add_symmetric_noise(noisy, std, np.random.default_rng(5))
    assert out is noisy
    rng = np.random.default_rng(5)
    expected = M.copy()
    for index in np.ndindex(2, 3):
        E = rng.standard_normal((p, p))
        expected[index] += std * (E + E.T) / 2
    np.testing.assert_allclose(noisy, expected, rtol=1e-15, atol=1e-12)
    assert np.array_equal(noisy, np.swapaxes(noisy, -1, -2))


# --------------------------------------------------------------------------- PSD projection


def test_project_psd():
    rng = np.random.default_rng(4)
    M = rng.normal(size=(5, 6, 6))
    M = M + np.swapaxes(M, 1, 2)
    P = project_psd(M)
    assert np.array_equal(P, np.swapaxes(P, 1, 2))
    assert np.linalg.eigvalsh(P).min() > -1e-10
    # PSD input is unchanged; the nearest PSD matrix keeps the nonnegative spectrum
    S = M @ np.swapaxes(M, 1, 2)
    np.testing.assert_allclose(project_psd(S), S, atol=1e-10)
    w, V = np.linalg.eigh(M[0])
    np.testing.assert_allclose(P[0], (V * np.maximum(w, 0)) @ V.T, atol=1e-12)


def _reference_projection(M):
    """V diag(max(w, 0)) V^T from a full eigendecomposition (the definition)."""
    w, V = np.linalg.eigh(M)
    return (V * np.maximum(w, 0.0)) @ V.T


def _symmetric(rng, p, shift=0.0):
    M = rng.normal(size=(p, p))
    return (M + M.T) / 2.0 + shift * np.eye(p)


def _psd_cases():
    """(name, matrix) with every branch of the projection: PD, few / many / all negative."""
    rng = np.random.default_rng(7)
    p = 40
    B = rng.normal(size=(p, 3 * p))
    PD = B @ B.T / p  # well-conditioned positive definite
    return [
        ("positive definite", PD),
        ("few negative", _symmetric(rng, p, shift=2.0)),  # some eigenvalues < 0
        ("half negative", _symmetric(rng, p)),
        ("many negative", _symmetric(rng, p, shift=-2.0)),
        ("negative definite", -PD),
        ("PSD, singular", B[:, :5] @ B[:, :5].T),
        ("zero", np.zeros((p, p))),
    ]


@pytest.mark.parametrize("name, M", _psd_cases(), ids=[c[0] for c in _psd_cases()])
def test_projection_shortcuts_equal_eigendecomposition(name, M):
    # The Cholesky fast path and the rank-k updates over the smaller side of the
    # spectrum give the definition's V diag(max(w, 0)) V^T (to 1e-10).
    expected = _reference_projection(M)
    scale = max(1.0, np.abs(M).max())
    for try_cholesky in (True, False):
        P = project_psd_one(M, try_cholesky=try_cholesky)
        assert np.array_equal(P, P.T)
        np.testing.assert_allclose(P, expected, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(project_psd(M), expected, rtol=0, atol=1e-10 * scale)


def test_projection_of_non_psd_matrix_is_done(monkeypatch):
    rng = np.random.default_rng(8)
    M = _symmetric(rng, 30, shift=1.0)
    assert np.linalg.eigvalsh(M).min() < -0.5
    calls = []
    eigh = np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda a: calls.append(1) or eigh(a))
    P = project_psd_one(M)
    assert calls, "a matrix that is not positive definite needs the eigendecomposition"
    assert np.linalg.eigvalsh(P).min() > -1e-10
    assert np.abs(P - M).max() > 0.1
    np.testing.assert_allclose(P, _reference_projection(M), atol=1e-10)


def test_positive_definite_matrix_skips_eigendecomposition(monkeypatch):
    rng = np.random.default_rng(9)
    M = _symmetric(rng, 30, shift=20.0)
    assert np.linalg.eigvalsh(M).min() > 1.0

    def forbidden(a):
        raise AssertionError("eigh called on a positive definite matrix")

    monkeypatch.setattr(np.linalg, "eigh", forbidden)
    np.testing.assert_array_equal(project_psd_one(M), M)


def test_projection_reads_the_lower_triangle():
    # Like LAPACK's eigh on both paths: the upper triangle is ignored.
    rng = np.random.default_rng(10)
    for M in (_symmetric(rng, 12, shift=10.0), _symmetric(rng, 12)):
        garbage = M + np.triu(rng.normal(size=M.shape), 1)
        np.testing.assert_allclose(
            project_psd_one(garbage), _reference_projection(M), atol=1e-10
        )
