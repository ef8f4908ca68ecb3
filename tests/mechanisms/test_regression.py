"""Randomizers for real labels: RR-on-Bins (Ghazi et al. 2023) and the additive baselines.

RR-on-Bins' optimality is checked against linear programs over every
eps-label-DP channel from the prior's support into a finite output set (the
program's variables are the channel's probabilities, its constraints the
e^eps ratio between any two inputs for each output), solved by scipy's HiGHS.
"""

import math

import numpy as np
import pytest
from _law_checks import assert_follows, max_likelihood_ratio
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from scipy.optimize import linprog
from scipy.stats import chisquare, kstest, norm

from sklearn_labeldp.accounting import gaussian_sigma_for_approx_dp
from sklearn_labeldp.mechanisms import (
    gaussian_label,
    laplace_label,
    optimal_bins,
    rr_on_bins,
    rr_on_bins_distribution,
    staircase_gamma,
    staircase_label,
)
from sklearn_labeldp.mechanisms._regression_noise import _lattice_step

RANGE = (0.0, 3.0)
PRIORS = {
    "uniform": ([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0], np.full(7, 1 / 7)),
    "skewed": ([0.0, 0.2, 0.9, 1.0, 2.2, 3.0], [0.4, 0.25, 0.15, 0.1, 0.0, 0.1]),
    "bimodal": ([3.0, 0.1, 0.0, 2.9, 1.5], [0.3, 0.2, 0.2, 0.25, 0.05]),  # unsorted
}
EPSILONS = [0.05, 0.5, 1.0, 2.0, 4.0, 8.0]


def loss_matrix(values, outputs, loss):
    diff = np.subtract.outer(np.asarray(values), np.asarray(outputs))
    return diff**2 if loss == "squared" else np.abs(diff)


def expected_loss(prior, outputs, law, loss):
    values, probabilities = prior
    return float(np.asarray(probabilities) @ (law * loss_matrix(values, outputs, loss)).sum(1))


def lp_optimum(prior, outputs, epsilon, loss):
    """min over eps-label-DP channels from the prior's support into ``outputs``."""
    values, probabilities = np.asarray(prior[0]), np.asarray(prior[1])
    n, m = values.size, len(outputs)
    cost = (probabilities[:, None] * loss_matrix(values, outputs, loss)).ravel()
    # Row-stochastic: sum_o M[i, o] = 1.
    a_eq = sparse.kron(sparse.eye(n), np.ones((1, m)))
    # M[i, o] - e^eps M[j, o] <= 0 for every output o and inputs i != j.
    i, j = np.array([(i, j) for i in range(n) for j in range(n) if i != j]).T
    pair_rows = sparse.csr_matrix(
        (np.r_[np.ones(i.size), np.full(j.size, -math.exp(epsilon))],
         (np.r_[np.arange(i.size), np.arange(j.size)], np.r_[i, j])), shape=(i.size, n)
    )
    a_ub = sparse.kron(pair_rows, sparse.eye(m))
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq,
                     b_eq=np.ones(n), bounds=(0, None), method="highs")
    assert result.status == 0, result.message
    return result.fun


# --- the law ------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("name", list(PRIORS))
def test_likelihood_ratio_is_exactly_e_to_the_eps(name, loss):
    for epsilon in EPSILONS:
        outputs, law = rr_on_bins_distribution(
            epsilon=epsilon, prior=PRIORS[name], label_range=RANGE, loss=loss
        )
        assert_allclose(law.sum(axis=1), 1.0, rtol=1e-12)
        ratio = max_likelihood_ratio(law)
        if outputs.size == 1:  # one bin: the release is constant (absolute loss, small eps)
            assert loss == "absolute" and ratio == 1.0
            continue
        assert ratio <= math.exp(epsilon) * (1 + 1e-12)
        assert_allclose(ratio, math.exp(epsilon), rtol=1e-12)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_samples_follow_the_law(loss):
    prior = PRIORS["skewed"]
    outputs, law = rr_on_bins_distribution(epsilon=1.0, prior=prior, label_range=RANGE,
                                           loss=loss)
    rng = np.random.default_rng(5)
    for value, row in zip(prior[0], law, strict=True):
        released = rr_on_bins(np.full(4000, value), epsilon=1.0, prior=prior,
                              label_range=RANGE, loss=loss, random_state=rng)
        index = np.searchsorted(outputs, released)
        assert_array_equal(outputs[index], released)  # nothing but the outputs
        assert_follows(index, row, note=f"label {value}")


def test_labels_off_the_support_take_the_nearest_values_bin():
    prior = ([0.0, 1.0, 2.0, 3.0], [0.4, 0.1, 0.1, 0.4])
    outputs, bins = optimal_bins(epsilon=4.0, prior=prior, label_range=RANGE)
    assert_array_equal(bins, [0, 1, 2, 3])
    # 1.4 is nearest 1, 1.5 halfway goes to the lower bin, -7 and 9 are clipped.
    y = np.array([1.4, 1.5, 1.6, -7.0, 9.0])
    same = np.array([1.0, 1.0, 2.0, 0.0, 3.0])
    assert_array_equal(
        rr_on_bins(y, epsilon=4.0, prior=prior, label_range=RANGE, random_state=3),
        rr_on_bins(same, epsilon=4.0, prior=prior, label_range=RANGE, random_state=3),
    )


def test_generator_advance_does_not_depend_on_the_labels():
    prior = PRIORS["uniform"]
    states = []
    for y in ([0.0] * 50, np.linspace(0, 3, 50)):
        rng = np.random.default_rng(0)
        rr_on_bins(y, epsilon=2.0, prior=prior, label_range=RANGE, random_state=rng)
        states.append(rng.bit_generator.state["state"]["state"])
    assert states[0] == states[1]


def test_zero_probability_value_follows_its_neighbours_law():
    prior = PRIORS["skewed"]  # 2.2 has probability 0, between 1.0 and 3.0
    _, law = rr_on_bins_distribution(epsilon=8.0, prior=prior, label_range=RANGE)
    nearest = 5 if 3.0 - 2.2 < 2.2 - 1.0 else 3
    assert_array_equal(law[4], law[nearest])


# --- optimality ---------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("name", ["skewed", "bimodal"])
def test_absolute_loss_equals_the_lp_over_all_channels(name, epsilon):
    prior = PRIORS[name]
    outputs, law = rr_on_bins_distribution(epsilon=epsilon, prior=prior, label_range=RANGE,
                                           loss="absolute")
    ours = expected_loss(prior, outputs, law, "absolute")
    # Into the label support: the optimum over every eps-label-DP channel.
    best = lp_optimum(prior, np.sort(prior[0]), epsilon, "absolute")
    assert abs(ours - best) <= 1e-6


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("name", ["skewed", "bimodal"])
def test_squared_loss_equals_the_lp_on_its_outputs_and_beats_a_fine_grid(name, epsilon):
    prior = PRIORS[name]
    outputs, law = rr_on_bins_distribution(epsilon=epsilon, prior=prior, label_range=RANGE)
    ours = expected_loss(prior, outputs, law, "squared")
    assert abs(ours - lp_optimum(prior, outputs, epsilon, "squared")) <= 1e-6
    # The optimal channel with its outputs rounded to a grid of step h costs at
    # most h R + h^2 / 4 more (R = the range), so the grid's optimum is within
    # that of the true optimum, which RR-on-Bins attains.
    grid = np.linspace(*RANGE, 151)
    h, width = grid[1] - grid[0], RANGE[1] - RANGE[0]
    on_grid = lp_optimum(prior, grid, epsilon, "squared")
    assert ours <= on_grid + 1e-6
    assert on_grid <= ours + h * width + h * h / 4


def test_more_bins_with_more_budget():
    prior = PRIORS["uniform"]
    sizes = [optimal_bins(epsilon=e, prior=prior, label_range=RANGE)[0].size for e in EPSILONS]
    assert sizes == sorted(sizes) and sizes[0] == 2 and sizes[-1] == 7


@pytest.mark.parametrize("name", ["uniform", "bimodal"])
def test_squared_loss_below_laplace(name):
    prior = PRIORS[name]
    width = RANGE[1] - RANGE[0]
    for epsilon in EPSILONS:
        outputs, law = rr_on_bins_distribution(epsilon=epsilon, prior=prior, label_range=RANGE)
        # Laplace noise of scale R / eps on an in-range label: MSE 2 (R / eps)^2.
        assert expected_loss(prior, outputs, law, "squared") < 2 * (width / epsilon) ** 2


def test_dask_labels_follow_the_law():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    prior = PRIORS["uniform"]
    outputs, law = rr_on_bins_distribution(epsilon=1.0, prior=prior, label_range=RANGE)
    y = da.full(6000, 1.5, chunks=1000)
    with dask.config.set(scheduler="synchronous"):
        released = rr_on_bins(y, epsilon=1.0, prior=prior, label_range=RANGE,
                              random_state=4).compute()
    assert_follows(np.searchsorted(outputs, released), law[3])


# --- additive baselines -------------------------------------------------------


@pytest.mark.parametrize("mechanism", [laplace_label, gaussian_label, staircase_label])
def test_releases_lie_on_one_lattice_whatever_the_label(mechanism):
    # Without the lattice, y + X computed in floats takes label-dependent values
    # (Mironov 2012); every release must be a cell centre (k + 1/2) step.
    kwargs = {"delta": 1e-5} if mechanism is gaussian_label else {}
    step = _lattice_step(RANGE)
    for label in (0.1, 0.7, 2.9999999):
        out = mechanism(np.full(500, label), epsilon=1.0, label_range=RANGE, random_state=0,
                        **kwargs)
        cells = out / step - 0.5
        assert_array_equal(cells, np.round(cells))


def test_laplace_noise_law():
    y = np.full(4000, 1.2)
    noise = laplace_label(y, epsilon=0.7, label_range=RANGE, random_state=1) - 1.2
    assert kstest(noise, "laplace", args=(0.0, 3.0 / 0.7)).pvalue > 1e-3
    # Clipping: a label above the range is released like the top of the range.
    assert_array_equal(laplace_label([50.0], epsilon=1.0, label_range=RANGE, random_state=2),
                       laplace_label([3.0], epsilon=1.0, label_range=RANGE, random_state=2))


def test_gaussian_noise_law():
    sigma = gaussian_sigma_for_approx_dp(2.0, 1e-6, sensitivity=3.0)
    noise = gaussian_label(np.full(4000, 0.5), epsilon=2.0, delta=1e-6, label_range=RANGE,
                           random_state=1) - 0.5
    assert kstest(noise, norm(0.0, sigma).cdf).pvalue > 1e-3


def staircase_moments(gamma, epsilon):
    """E|X| / D and E X^2 / D^2 of the staircase noise, from its mixture form."""
    b = math.exp(-epsilon)
    upper = (1 - gamma) * b / (gamma + (1 - gamma) * b)
    g1, g2 = b / (1 - b), b * (1 + b) / (1 - b) ** 2
    v1 = (1 - upper) * gamma / 2 + upper * (gamma + (1 - gamma) / 2)
    v2 = (1 - upper) * gamma**2 / 3 + upper * (gamma**2 + gamma * (1 - gamma)
                                                + (1 - gamma) ** 2 / 3)
    return g1 + v1, g2 + 2 * g1 * v1 + v2


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_staircase_gamma_minimises_the_noise_cost(epsilon):
    grid = np.linspace(0.0, 1.0, 20001)
    for loss, which in (("absolute", 0), ("squared", 1)):
        costs = [staircase_moments(g, epsilon)[which] for g in grid]
        best = grid[int(np.argmin(costs))]
        assert abs(staircase_gamma(epsilon, loss=loss) - best) <= 1e-4


def test_staircase_noise_law():
    epsilon, width = 1.0, RANGE[1] - RANGE[0]
    gamma = staircase_gamma(epsilon)
    noise = staircase_label(np.full(20000, 1.0), epsilon=epsilon, label_range=RANGE,
                            random_state=6) - 1.0
    step = _lattice_step(RANGE)
    # Cells [k, k + gamma) and [k + gamma, k + 1) of |X| / D, k < 4, and the tail:
    # the density a b^k, a b^(k+1) times their widths.
    b = math.exp(-epsilon)
    a = (1 - b) / (2 * (gamma + (1 - gamma) * b))
    edges = np.r_[np.ravel([[k, k + gamma] for k in range(4)]), 4.0]
    mass = 2 * a * np.ravel([[b**k * gamma, b ** (k + 1) * (1 - gamma)] for k in range(4)])
    expected = np.r_[mass, 1 - mass.sum()]
    # The lattice moves a release by at most one step: drop those within a step of an edge.
    scaled = np.abs(noise) / width
    near = np.min(np.abs(scaled[:, None] - edges[None, :]), axis=1) < 2 * step / width
    # Cell i is [edges[i], edges[i+1]); the last one, from 4 on, is the tail.
    counts = np.bincount(np.searchsorted(edges, scaled[~near], side="right") - 1, minlength=9)
    assert chisquare(counts, expected * counts.sum()).pvalue > 1e-3
    assert abs(np.mean(noise > 0) - 0.5) < 0.02


# --- bad inputs ---------------------------------------------------------------


GOOD = {"epsilon": 1.0, "prior": PRIORS["uniform"], "label_range": RANGE}


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"epsilon": math.inf}, ValueError, "epsilon"),
        ({"epsilon": True}, TypeError, "epsilon"),
        ({"prior": ([0.0, 1.0], [0.5, 0.6])}, ValueError, "prior probabilities must sum to 1"),
        ({"prior": ([0.0, 1.0], [1.5, -0.5])}, ValueError, "prior probabilities must be nonn"),
        ({"prior": ([0.0, 0.0], [0.5, 0.5])}, ValueError, "prior values must be distinct"),
        ({"prior": ([0.0, 4.0], [0.5, 0.5])}, ValueError, "prior values must lie in label_r"),
        ({"prior": ([0.0, 1.0], [1.0])}, ValueError, "prior must be a pair"),
        ({"prior": [0.5, 0.5]}, ValueError, "prior must be a pair"),
        ({"prior": 0.5}, TypeError, "prior must be a pair"),
        ({"label_range": (3.0, 3.0)}, ValueError, "label_range must have low < high"),
        ({"label_range": (3.0, 0.0)}, ValueError, "label_range must have low < high"),
        ({"label_range": (0.0, math.nan)}, ValueError, "label_range"),
        ({"label_range": 3.0}, ValueError, "label_range must be a pair"),
        ({"loss": "huber"}, ValueError, "loss must be one of"),
    ],
)
def test_bad_rr_on_bins_arguments(change, error, match):
    kwargs = {**GOOD, **change}
    with pytest.raises(error, match=match):
        rr_on_bins([1.0], **kwargs)
    with pytest.raises(error, match=match):
        rr_on_bins_distribution(**kwargs)


@pytest.mark.parametrize("mechanism", [laplace_label, gaussian_label, staircase_label])
def test_bad_additive_arguments(mechanism):
    kwargs = {"delta": 1e-5} if mechanism is gaussian_label else {}
    with pytest.raises(ValueError, match="epsilon"):
        mechanism([1.0], epsilon=0.0, label_range=RANGE, **kwargs)
    with pytest.raises(ValueError, match="label_range must have low < high"):
        mechanism([1.0], epsilon=1.0, label_range=(1.0, 0.0), **kwargs)
    with pytest.raises(ValueError, match="too narrow"):
        mechanism([1.0], epsilon=1.0, label_range=(1e12, 1e12 + 1e-3), **kwargs)
    with pytest.raises(ValueError, match="finite"):
        mechanism([math.nan], epsilon=1.0, label_range=RANGE, **kwargs)
    with pytest.raises(ValueError, match="1-d"):
        mechanism([[1.0]], epsilon=1.0, label_range=RANGE, **kwargs)
    with pytest.raises(ValueError, match="delta"):
        gaussian_label([1.0], epsilon=1.0, delta=1.0, label_range=RANGE)
    with pytest.raises(ValueError, match="gamma"):
        staircase_label([1.0], epsilon=1.0, label_range=RANGE, gamma=1.5)
