"""PATE aggregators: output laws, privacy ratios on neighbouring histograms, calibration."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from sklearn_labeldp.accounting import BudgetAccountant, approx_dp_to_zcdp, zcdp_to_approx_dp
from sklearn_labeldp.mechanisms import (
    confident_gnmax,
    confident_gnmax_sigmas,
    confident_gnmax_spend,
    gnmax,
    gnmax_sigma,
    gnmax_spend,
    lnmax,
    lnmax_gamma,
    lnmax_spend,
)

N_DRAWS = 200_000
# Four-sigma binomial margin on an estimated probability.
MARGIN = 4.0 * math.sqrt(0.25 / N_DRAWS)


def _laplace_cdf(x, b):
    return 0.5 * math.exp(x / b) if x < 0 else 1.0 - 0.5 * math.exp(-x / b)


def _lnmax_law(votes, gamma):
    """Exact P(LNMax = j) for one histogram, by numerical integration over bin j's noise."""
    b = 1.0 / gamma
    law = []
    for j in range(len(votes)):
        others = [votes[i] for i in range(len(votes)) if i != j]

        def density(x, j=j, others=others):
            return (
                math.exp(-abs(x) / b)
                / (2 * b)
                * math.prod(_laplace_cdf(votes[j] + x - o, b) for o in others)
            )

        law.append(integrate.quad(density, -60 * b, 60 * b, points=[0.0], limit=200)[0])
    return np.array(law)


def _neighbours(K, total):
    """Histograms with ``total`` votes and every neighbour: one vote moved between two bins."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        votes = rng.multinomial(total, rng.dirichlet(np.ones(K)))
        for i in range(K):
            for j in range(K):
                if i != j and votes[i] > 0:
                    moved = votes.copy()
                    moved[i] -= 1
                    moved[j] += 1
                    yield votes, moved


@pytest.mark.parametrize("K", [2, 3])
def test_lnmax_law_matches_exact_and_ratio_is_within_e_2gamma(K):
    gamma = 0.3
    votes = np.array([6, 4, 2][:K])
    draws = lnmax(np.tile(votes, (N_DRAWS, 1)), gamma=gamma, random_state=1)
    empirical = np.bincount(draws, minlength=K) / N_DRAWS
    np.testing.assert_allclose(empirical, _lnmax_law(votes, gamma), atol=MARGIN)
    worst = 0.0
    for a, b in _neighbours(K, 8):
        pa, pb = _lnmax_law(a, gamma), _lnmax_law(b, gamma)
        worst = max(worst, np.max(np.log(pa / pb)))
    assert worst <= 2 * gamma + 1e-9
    assert worst > 1.0 * gamma  # the bound is not vacuous: a shift of 2 is felt


def _gnmax_law_two(votes, sigma):
    p0 = stats.norm.cdf((votes[0] - votes[1]) / (sigma * math.sqrt(2.0)))
    return np.array([p0, 1.0 - p0])


def test_gnmax_law_and_exact_gaussian_bound():
    sigma, delta = 2.0, 1e-3
    votes = np.array([5, 3])
    draws = gnmax(np.tile(votes, (N_DRAWS, 1)), sigma=sigma, random_state=2)
    np.testing.assert_allclose(
        np.bincount(draws, minlength=2) / N_DRAWS, _gnmax_law_two(votes, sigma), atol=MARGIN
    )
    epsilon = gnmax_spend(sigma, 1, delta).epsilon
    # Tighter than the zCDP conversion of rho = 1 / sigma^2 it replaced.
    assert epsilon < 0.95 * zcdp_to_approx_dp(1.0 / sigma**2, delta)
    for a, b in _neighbours(2, 10):
        pa, pb = _gnmax_law_two(a, sigma), _gnmax_law_two(b, sigma)
        assert np.all(pa <= math.exp(epsilon) * pb + delta)


def test_gnmax_three_classes_monte_carlo_within_bound():
    sigma, delta = 1.5, 1e-3
    epsilon = gnmax_spend(sigma, 1, delta).epsilon
    a, b = np.array([4, 3, 1]), np.array([3, 4, 1])
    pa = np.bincount(gnmax(np.tile(a, (N_DRAWS, 1)), sigma=sigma, random_state=3), minlength=3)
    pb = np.bincount(gnmax(np.tile(b, (N_DRAWS, 1)), sigma=sigma, random_state=4), minlength=3)
    pa, pb = pa / N_DRAWS, pb / N_DRAWS
    assert np.all(pa - MARGIN <= math.exp(epsilon) * (pb + MARGIN) + delta)


def test_confident_gnmax_selection_law_and_bound():
    s1, s2, delta, threshold = 2.0, 1.0, 1e-3, 6.0
    votes = np.array([7, 2, 1])
    out = confident_gnmax(
        np.tile(votes, (N_DRAWS, 1)), threshold=threshold, sigma1=s1, sigma2=s2, random_state=5
    )
    p_answer = stats.norm.sf((threshold - 7) / s1)
    assert abs(np.mean(out >= 0) - p_answer) <= MARGIN
    # The selection step alone, on neighbours whose maximum differs by one.
    epsilon = zcdp_to_approx_dp(1.0 / (2 * s1**2), delta)
    for top in range(1, 12):
        pa, pb = stats.norm.sf((threshold - top) / s1), stats.norm.sf((threshold - top + 1) / s1)
        for x, z in ((pa, pb), (pb, pa), (1 - pa, 1 - pb), (1 - pb, 1 - pa)):
            assert x <= math.exp(epsilon) * z + delta


def test_confident_gnmax_marks_unanswered_and_answers_confident():
    votes = np.array([[10, 0, 0], [4, 3, 3], [0, 0, 10]])
    out = confident_gnmax(votes, threshold=8, sigma1=1e-6, sigma2=1e-6, random_state=0)
    np.testing.assert_array_equal(out, [0, -1, 2])


@pytest.mark.parametrize("agg", ["lnmax", "gnmax", "confident"])
def test_same_seed_same_output(agg):
    votes = np.random.default_rng(0).integers(0, 5, size=(50, 4))
    run = {
        "lnmax": lambda rs: lnmax(votes, gamma=0.5, random_state=rs),
        "gnmax": lambda rs: gnmax(votes, sigma=1.0, random_state=rs),
        "confident": lambda rs: confident_gnmax(
            votes, threshold=3, sigma1=1.0, sigma2=1.0, random_state=rs
        ),
    }[agg]
    np.testing.assert_array_equal(run(7), run(7))
    assert run(None).shape == (50,)


def test_lnmax_spend_adds_up_and_calibration_never_exceeds():
    assert lnmax_spend(0.25, 4).epsilon == 2.0
    assert lnmax_spend(0.25, 4).delta == 0.0
    for epsilon, q in [(1.0, 3), (0.7, 1000), (8.0, 7)]:
        gamma = lnmax_gamma(epsilon, q)
        spent = lnmax_spend(gamma, q).epsilon
        assert spent <= epsilon
        assert spent == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize("epsilon,delta,q", [(1.0, 1e-5, 10), (4.0, 1e-6, 500), (0.3, 1e-3, 1)])
def test_gnmax_calibration_inverts_the_conversion(epsilon, delta, q):
    sigma = gnmax_sigma(epsilon, delta, q)
    spent = gnmax_spend(sigma, q, delta)
    assert spent.epsilon <= epsilon
    assert spent.epsilon == pytest.approx(epsilon, rel=1e-9)
    assert spent.rho == pytest.approx(q / sigma**2)
    assert spent.description.value == pytest.approx(math.sqrt(2 * q) / sigma)
    assert gnmax_spend(sigma * (1 - 1e-6), q, delta).epsilon > epsilon


@pytest.mark.parametrize("ratio", [0.5, 2.0, 4.0])
def test_confident_gnmax_calibration_inverts_the_conversion(ratio):
    epsilon, delta, q = 2.0, 1e-5, 200
    s1, s2 = confident_gnmax_sigmas(epsilon, delta, q, ratio)
    assert s1 == pytest.approx(ratio * s2)
    spent = confident_gnmax_spend(s1, s2, q, delta)
    assert spent.epsilon <= epsilon
    assert spent.epsilon == pytest.approx(epsilon, rel=1e-9)
    assert spent.rho == pytest.approx(q / (2 * s1**2) + q / s2**2)
    assert spent.description.value == pytest.approx(math.sqrt(2 * spent.rho))
    assert confident_gnmax_spend(s1, s2 * (1 - 1e-6), q, delta).epsilon > epsilon


def _pld_reference(events, delta):
    """dp-accounting's PLD composition of ``(noise_multiplier, count)`` Gaussian events."""
    dpa = pytest.importorskip("dp_accounting")
    accountant = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    for noise_multiplier, count in events:
        accountant.compose(dpa.GaussianDpEvent(noise_multiplier), count)
    return accountant.get_epsilon(delta)


# Per query, GNMax's histogram moves by sqrt(2) (one vote between two bins):
# a Gaussian event of noise multiplier sigma / sqrt(2); the selection's maximum by 1.
GRID = [(0.5, 1e-5, 20), (1.0, 1e-5, 100), (2.0, 1e-6, 7), (4.0, 1e-5, 300), (8.0, 1e-5, 50)]


@pytest.mark.parametrize("epsilon,delta,q", GRID)
def test_gaussian_aggregators_are_recorded_at_the_tight_pld_epsilon(epsilon, delta, q):
    sigma = gnmax_sigma(epsilon, delta, q)
    ratio = gnmax_spend(sigma, q, delta).epsilon / _pld_reference(
        [(sigma / math.sqrt(2), q)], delta
    )
    assert 0.99 <= ratio <= 1.02
    s1, s2 = confident_gnmax_sigmas(epsilon, delta, q, 2.0)
    reference = _pld_reference([(s1, q), (s2 / math.sqrt(2), q)], delta)
    ratio = confident_gnmax_spend(s1, s2, q, delta).epsilon / reference
    assert 0.99 <= ratio <= 1.02


@pytest.mark.parametrize("epsilon,delta,q", GRID)
def test_exact_calibration_shrinks_the_noise_against_zcdp(epsilon, delta, q):
    """The noise the zCDP conversion needed (rho = Q / sigma^2) against the exact one."""
    zcdp_sigma = math.sqrt(q / approx_dp_to_zcdp(epsilon, delta))
    assert gnmax_sigma(epsilon, delta, q) < 0.96 * zcdp_sigma


def test_the_ledger_composes_pate_spends_by_their_privacy_loss_distributions():
    pytest.importorskip("dp_accounting")
    accountant = BudgetAccountant(epsilon=100.0, delta=1e-3)
    s1, s2 = confident_gnmax_sigmas(1.0, 1e-6, 40, 2.0)
    sigma = gnmax_sigma(1.0, 1e-6, 40)
    for _ in range(3):
        accountant.spend(confident_gnmax_spend(s1, s2, 40, 1e-6))
        accountant.spend(gnmax_spend(sigma, 40, 1e-6))
    total = accountant.total(slack=1e-6)
    reference = _pld_reference(
        [(s1, 120), (s2 / math.sqrt(2), 120), (sigma / math.sqrt(2), 120)], total.delta
    )
    assert 0.99 <= total.epsilon / reference <= 1.02
    assert total.epsilon < 0.5 * accountant.total().epsilon


BAD_VOTES = [
    ([1, 2, 3], ValueError),
    ([[1]], ValueError),
    ([[1, -1]], ValueError),
    ([[1.5, 2]], ValueError),
    ([[np.nan, 2]], ValueError),
    ([[np.inf, 2]], ValueError),
    ([["a", "b"]], TypeError),
]


def _calls(votes, **overrides):
    kw = dict(gamma=1.0, sigma=1.0, threshold=1.0, sigma1=1.0, sigma2=1.0) | overrides
    return [
        lambda rng: lnmax(votes, gamma=kw["gamma"], random_state=rng),
        lambda rng: gnmax(votes, sigma=kw["sigma"], random_state=rng),
        lambda rng: confident_gnmax(
            votes,
            threshold=kw["threshold"],
            sigma1=kw["sigma1"],
            sigma2=kw["sigma2"],
            random_state=rng,
        ),
    ]


def _raises_before_draw(call, error):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(error):
        call(rng)
    assert rng.bit_generator.state == before


@pytest.mark.parametrize("votes,error", BAD_VOTES)
def test_bad_votes_raise_before_any_draw(votes, error):
    for call in _calls(votes):
        _raises_before_draw(call, error)


@pytest.mark.parametrize(
    "override,error,which",
    [
        ({"gamma": 0.0}, ValueError, 0),
        ({"gamma": -1.0}, ValueError, 0),
        ({"gamma": True}, TypeError, 0),
        ({"sigma": math.inf}, ValueError, 1),
        ({"sigma1": 0.0}, ValueError, 2),
        ({"sigma2": -2.0}, ValueError, 2),
        ({"threshold": math.nan}, ValueError, 2),
        ({"threshold": "5"}, TypeError, 2),
    ],
)
def test_bad_noise_raises_before_any_draw(override, error, which):
    _raises_before_draw(_calls([[1, 2]], **override)[which], error)


@pytest.mark.parametrize(
    "call",
    [
        lambda: lnmax_spend(1.0, 0),
        lambda: gnmax_spend(1.0, 2.5, 1e-5),
        lambda: gnmax_spend(1.0, 2, 0.0),
        lambda: confident_gnmax_spend(1.0, 0.0, 2, 1e-5),
        lambda: gnmax_sigma(0.0, 1e-5, 2),
        lambda: confident_gnmax_sigmas(1.0, 1e-5, 2, 0.0),
        lambda: lnmax_gamma(1.0, True),
    ],
)
def test_bad_accounting_arguments_raise(call):
    with pytest.raises((ValueError, TypeError)):
        call()


def test_a_huge_epsilon_calibrates_without_overflow():
    # e^epsilon overflows past 709: the profile is evaluated in log space, and
    # such a record goes without its description (composed by the basic sum).
    for epsilon in (650.0, 1000.0):
        sigma = gnmax_sigma(epsilon, 1e-5, 50)
        spend = gnmax_spend(sigma, 50, 1e-5)
        assert spend.epsilon == pytest.approx(epsilon, rel=1e-9) and spend.epsilon <= epsilon
        assert (spend.description is not None) == (epsilon < 700)
