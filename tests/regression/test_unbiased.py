"""The optimal unbiased randomizer (Badanidiyuru et al. 2023): exact ratio, no bias, optimality.

The released law is checked directly: every column's largest entry at most
e^eps times its smallest (no tolerance), the mean of every row the input, and
its expected squared error the optimum of the linear program over unbiased
eps-DP channels into the same outputs, solved here independently (pairwise
ratio constraints, no floor variables).
"""

import math

import numpy as np
import pytest
from _law_checks import assert_follows
from numpy.testing import assert_allclose
from scipy import sparse
from scipy.optimize import linprog

from sklearn_labeldp.mechanisms import (
    _unbiased,
    rr_on_bins_distribution,
    unbiased_randomizer,
    unbiased_randomizer_distribution,
)
from sklearn_labeldp.mechanisms._unbiased import _coarse_grid, _repair

RANGE = (0.0, 3.0)
PRIOR = ([0.0, 0.5, 1.0, 2.0, 3.0], [0.3, 0.25, 0.2, 0.15, 0.1])
EPSILONS = [0.05, 0.5, 2.0, 8.0]


def squared_error(prior, outputs, law):
    values, probabilities = np.asarray(prior[0]), np.asarray(prior[1])
    return float(probabilities @ (law * (outputs[None, :] - values[:, None]) ** 2).sum(1))


def unbiased_lp(prior, outputs, epsilon):
    """min E (o - y)^2 over unbiased eps-DP channels into ``outputs`` (pairwise constraints)."""
    values, probabilities = np.asarray(prior[0]), np.asarray(prior[1])
    n, m = values.size, outputs.size
    cost = (probabilities[:, None] * (outputs[None, :] - values[:, None]) ** 2).ravel()
    a_eq = sparse.vstack([sparse.kron(sparse.eye(n), np.ones((1, m))),
                          sparse.kron(sparse.eye(n), outputs[None, :])])
    i, j = np.array([(i, j) for i in range(n) for j in range(n) if i != j]).T
    pairs = sparse.csr_matrix((np.r_[np.ones(i.size), np.full(j.size, -math.exp(epsilon))],
                               (np.r_[np.arange(i.size), np.arange(j.size)], np.r_[i, j])),
                              shape=(i.size, n))
    a_ub = sparse.kron(pairs, sparse.eye(m))
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq,
                     b_eq=np.r_[np.ones(n), values], bounds=(0, None), method="highs",
                     options={"primal_feasibility_tolerance": 1e-10,
                              "dual_feasibility_tolerance": 1e-10})
    assert result.status == 0
    return result.fun


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_ratio_is_exact_and_release_unbiased(epsilon):
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=PRIOR,
                                                    label_range=RANGE)
    assert (law > 0).all()
    assert_allclose(law.sum(axis=1), 1.0, atol=1e-12)
    # No tolerance: the repaired law meets e^eps as computed in floating point.
    assert (law.max(axis=0) <= math.exp(epsilon) * law.min(axis=0)).all()
    assert_allclose(law @ outputs, PRIOR[0], atol=1e-6 * (RANGE[1] - RANGE[0]))
    assert outputs.min() < RANGE[0] and outputs.max() > RANGE[1]  # unbiasedness needs them


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_expected_error_is_the_programs_optimum(epsilon):
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=PRIOR,
                                                    label_range=RANGE)
    # The repair moved the outputs by an affine map; the independent program on the
    # released outputs must reach the same error (1e-6 relative: solver tolerance).
    optimum = unbiased_lp(PRIOR, outputs, epsilon)
    assert squared_error(PRIOR, outputs, law) == pytest.approx(optimum, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_rr_on_bins_beats_the_unbiased_randomizer(epsilon):
    # RR-on-Bins is optimal among all eps-DP randomizers; unbiasedness is a restriction.
    unbiased = squared_error(PRIOR, *unbiased_randomizer_distribution(
        epsilon=epsilon, prior=PRIOR, label_range=RANGE))
    bins = squared_error(PRIOR, *rr_on_bins_distribution(epsilon=epsilon, prior=PRIOR,
                                                         label_range=RANGE))
    assert bins < unbiased


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_free_outputs_beat_any_fixed_output_grid(epsilon):
    # The paper's program on a fine fixed grid (the released outputs included)
    # bounds the optimum over all outputs from above: the solution here, whose
    # outputs are chosen freely, must reach it (the program's sets are any
    # subsets, so this also checks the restriction to windows of values).
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=PRIOR,
                                                    label_range=RANGE)
    w = (RANGE[1] - RANGE[0]) / math.expm1(epsilon)
    grid = np.union1d(np.linspace(RANGE[0] - 8 * w, RANGE[1] + 8 * w, 300), outputs)
    assert squared_error(PRIOR, outputs, law) <= unbiased_lp(PRIOR, grid, epsilon) * (1 + 1e-6)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 6.0])
def test_hundred_values_exact_and_few_outputs(epsilon):
    values = np.linspace(-1.0, 4.0, 100)
    probabilities = np.random.default_rng(3).dirichlet(np.ones(values.size))
    prior = (values, probabilities)
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=prior,
                                                    label_range=(-1.0, 4.0))
    assert (law.max(axis=0) <= math.exp(epsilon) * law.min(axis=0)).all()
    assert_allclose(law @ outputs, values, atol=1e-6)
    assert np.all(np.diff(outputs) >= 0)
    # Badanidiyuru et al.: an optimum with at most 2 |Y| outputs; a basic solution has no more.
    assert outputs.size <= 2 * values.size
    # Unbiasedness costs variance over the optimal biased randomizer, never less.
    bins = squared_error(prior, *rr_on_bins_distribution(epsilon=epsilon, prior=prior,
                                                         label_range=(-1.0, 4.0)))
    assert squared_error(prior, outputs, law) > bins


@pytest.mark.parametrize("epsilon", [1.0, 6.0])
def test_coarse_start_reaches_the_cold_optimum(epsilon, monkeypatch):
    # Above _COARSEST values the program starts from a coarser grid's solution;
    # the exact pricing still certifies the fine optimum, so the cold start agrees.
    values = np.linspace(0.0, 1.0, 150)
    probabilities = np.random.default_rng(5).dirichlet(np.full(values.size, 0.5))
    arguments = (epsilon, tuple(values), tuple(probabilities))
    _unbiased._solve.cache_clear()
    outputs, law, error = _unbiased._solve(*arguments)
    assert (law.max(axis=0) <= math.exp(epsilon) * law.min(axis=0)).all()
    assert_allclose(law @ outputs, values, atol=1e-6)
    assert outputs.size <= 2 * values.size
    monkeypatch.setattr(_unbiased, "_COARSEST", math.inf)
    _unbiased._solve.cache_clear()
    cold = _unbiased._solve(*arguments)[2]
    _unbiased._solve.cache_clear()
    assert error == pytest.approx(cold, rel=1e-6)


def test_coarse_grid_keeps_the_mass_and_the_mean():
    values = np.sort(np.random.default_rng(0).random(101))
    probabilities = np.random.default_rng(1).dirichlet(np.ones(values.size))
    coarse, masses = _coarse_grid(values, probabilities, 26)
    assert coarse.size == 26 and coarse[0] == values[0] and coarse[-1] == values[-1]
    assert np.isin(coarse, values).all() and (masses >= 0).all()
    assert masses.sum() == pytest.approx(1.0)
    assert masses @ coarse == pytest.approx(probabilities @ values)


def test_repair_restores_an_exact_ratio_of_a_violating_law():
    epsilon = 1.0
    law = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])  # column 3 is infinitely violated
    outputs = np.array([0.0, 1.0, 2.0])
    mixed, shifted = _repair(law, outputs, epsilon)
    assert (mixed.max(0) <= math.exp(epsilon) * mixed.min(0)).all()
    # The relabelled outputs keep each row's mean.
    assert_allclose(mixed @ shifted, law @ outputs, atol=1e-12)


def test_samples_follow_the_law_and_keep_the_mean():
    epsilon = 2.0
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=PRIOR,
                                                    label_range=RANGE)
    n = 40_000
    released = unbiased_randomizer(np.full(n, 0.5), epsilon=epsilon, prior=PRIOR,
                                   label_range=RANGE, random_state=1)
    index = np.searchsorted(outputs, released)
    assert_allclose(outputs[index], released)
    # Merge rare outputs so that the chi-square has enough draws per cell.
    order = np.argsort(law[1])[::-1]
    keep = np.sort(order[np.cumsum(law[1][order]) < 0.95])
    codes = np.where(np.isin(index, keep), np.searchsorted(keep, index), keep.size)
    expected = np.r_[law[1][keep], 1 - law[1][keep].sum()]
    assert_follows(codes, expected)
    # Between grid values a label is rounded at random: still unbiased.
    off_grid = unbiased_randomizer(np.full(n, 1.7), epsilon=epsilon, prior=PRIOR,
                                   label_range=RANGE, random_state=2)
    spread = off_grid.std() / math.sqrt(n)
    assert abs(off_grid.mean() - 1.7) < 5 * spread


def test_bad_arguments():
    with pytest.raises(ValueError, match="epsilon"):
        unbiased_randomizer([1.0], epsilon=0.0, prior=PRIOR, label_range=RANGE)
    with pytest.raises(ValueError, match="label_range"):
        unbiased_randomizer([1.0], epsilon=1.0, prior=PRIOR, label_range=(3, 0))
    with pytest.raises(ValueError, match="prior values must lie"):
        unbiased_randomizer([1.0], epsilon=1.0, prior=([5.0], [1.0]), label_range=RANGE)
    with pytest.raises(ValueError, match="finite"):
        unbiased_randomizer([np.nan], epsilon=1.0, prior=PRIOR, label_range=RANGE)
