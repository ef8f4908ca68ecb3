"""Exact mechanism descriptions (RAPPOR, Laplace, RR with prior, Gaussian) in tight totals.

Every reference here is computed independently of dp-accounting: the output
laws' hockey-stick divergences with numpy (closed forms, binomial sums, or a
discretisation of the privacy loss rounded *down*, which bounds the exact
epsilon from below).
"""

import math

import numpy as np
import pytest
from _exact_privacy import binary_rr_composition, epsilon_at
from scipy.stats import binom, norm

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    MechanismDescription,
    PrivacySpend,
    calibrate_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    subsampled_gaussian_label_epsilon,
)
from sklearn_labeldp.accounting._descriptions import DESCRIPTIONS
from sklearn_labeldp.mechanisms import optimal_top_k, rr_top_k_distribution
from sklearn_labeldp.model_selection import exponential_mechanism_probabilities

pytest.importorskip("dp_accounting")

SLACK = 1e-6
N_FITS = 19






def _laplace_loss_law(epsilon, h):
    """The law of one Laplace pair's privacy loss under P, rounded down to the grid ``h``.

    P = Lap(0, 1 / eps), Q = Lap(1, 1 / eps): the loss is ``eps`` for ``x <= 0``
    (mass 1/2), ``-eps`` for ``x >= 1`` (mass ``e^-eps / 2``) and ``eps (1 - 2x)``
    between. Rounding down makes every hockey-stick divergence smaller: a lower
    bound. Returns ``(losses, masses)`` on the grid.
    """
    edges = np.linspace(0.0, 1.0, 200_001)
    mass = (np.exp(-epsilon * edges[:-1]) - np.exp(-epsilon * edges[1:])) / 2.0
    low = epsilon * (1.0 - 2.0 * edges[1:])  # the smallest loss in each x-bin
    top = int(math.floor(epsilon / h))
    index = np.floor(low / h).astype(np.int64) + top
    masses = np.bincount(index, weights=mass, minlength=2 * top + 1)
    masses[2 * top] += 0.5
    masses[int(math.floor(-epsilon / h)) + top] += math.exp(-epsilon) / 2.0
    return (np.arange(masses.size) - top) * h, masses


def _composed_lower_epsilon(losses, masses, count, h, delta):
    """A lower bound on the epsilon of ``count`` compositions of a rounded-down loss law."""
    law = masses
    for _ in range(count - 1):
        law = np.convolve(law, masses)
    grid = (np.arange(law.size) + count * losses[0] / h) * h

    def delta_of(e):
        return float(np.sum(law * np.maximum(0.0, 1.0 - np.exp(e - grid))))

    return epsilon_at(delta_of, delta)


def _tight(spend, n=1):
    acc = BudgetAccountant(math.inf, 1.0)
    for _ in range(n):
        acc.spend(spend)
    return acc.total(slack=SLACK).epsilon


# ------------------------------------------------------------------------------ RAPPOR


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_rappor_is_two_binary_randomized_responses_at_half_epsilon(epsilon):
    # The exact pair of one label change: two bits flip roles, each Bern(q+) vs Bern(q-).
    q_plus = math.exp(epsilon / 2) / (1 + math.exp(epsilon / 2))
    bit_p, bit_q = np.array([q_plus, 1 - q_plus]), np.array([1 - q_plus, q_plus])
    p_law = np.outer(bit_p, bit_q).ravel()  # bits (a, b) for label a
    q_law = np.outer(bit_q, bit_p).ravel()  # the same bits for label b

    def delta_of(e):
        return float(np.sum(np.maximum(p_law - math.exp(e) * q_law, 0.0)))

    exact = epsilon_at(delta_of, SLACK)
    assert exact == pytest.approx(binary_rr_composition(epsilon / 2, 2, SLACK), rel=1e-9)
    recorded = _tight(PrivacySpend.rappor(epsilon))
    assert exact * (1 - 1e-9) <= recorded <= exact * 1.01


def test_nineteen_rappor_fits_compose_exactly():
    exact = binary_rr_composition(0.25, 2 * N_FITS, SLACK)
    recorded = _tight(PrivacySpend.rappor(0.5), N_FITS)
    assert recorded < 0.5 * N_FITS
    assert 0.99 <= recorded / exact <= 1.01
    assert recorded < 8.0  # the sum is 9.5, the binary randomized response 9.49


# ----------------------------------------------------------------------------- Laplace


@pytest.mark.parametrize("epsilon, count", [(0.5, 2), (1.0, 1)])
def test_laplace_description_against_its_loss_law(epsilon, count):
    h = 1e-4
    losses, masses = _laplace_loss_law(epsilon / count, h)
    lower = _composed_lower_epsilon(losses, masses, count, h, SLACK)
    upper = lower + count * h  # rounding moved each loss by less than h
    recorded = _tight(PrivacySpend.laplace(epsilon / count, count))
    assert lower * (1 - 1e-9) <= recorded <= upper + 2e-3
    assert recorded < epsilon  # below the pure bound


def test_nineteen_alibi_fits_compose_below_the_sum_never_below_the_exact():
    h = 2e-3
    losses, masses = _laplace_loss_law(0.25, h)
    lower = _composed_lower_epsilon(losses, masses, 2 * N_FITS, h, SLACK)
    recorded = _tight(PrivacySpend.laplace(0.25, 2), N_FITS)
    assert recorded / lower >= 0.99
    assert recorded <= lower + 2 * N_FITS * h  # the rounding's whole width
    assert recorded < 0.5 * N_FITS


def test_laplace_records_refuse_an_understated_budget():
    assert PrivacySpend.laplace(0.25, 2).epsilon == 0.5
    with pytest.raises(ValueError, match=r"laplace=\(0.25, 2\) implies PrivacyBudget\(epsilon=0.5"):
        PrivacySpend.leaf("ALIBI", 0.4, description=("laplace", (0.25, 2)))
    with pytest.raises(ValueError, match=r"description 'laplace': count must be >= 1; got 0\."):
        PrivacySpend.leaf("ALIBI", 0.5, description=("laplace", (0.25, 0)))
    with pytest.raises(TypeError, match=r"description 'laplace': count must be an int; got 2\.0"):
        PrivacySpend.leaf("ALIBI", 0.5, description=("laplace", (0.25, 2.0)))
    with pytest.raises(ValueError, match="description 'laplace': epsilon must be a finite number"):
        PrivacySpend.leaf("ALIBI", 0.5, description=("laplace", (math.inf, 2)))
    with pytest.raises(ValueError, match=r"rappor=0.6 implies"):
        PrivacySpend.leaf("RAPPOR", 0.5, description=("rappor", 0.6))


# ---------------------------------------------------------------------- RR with prior


def _hockey_stick(p_law, q_law, epsilons):
    return np.maximum(p_law[None, :] - np.exp(epsilons)[:, None] * q_law[None, :], 0).sum(1)


def test_rr_with_prior_is_dominated_by_k_ary_rr_at_the_smallest_set():
    epsilon, n_classes = 1.0, 6
    rng = np.random.default_rng(0)
    prior = rng.dirichlet(np.full(n_classes, 0.3), size=400)
    k = optimal_top_k(prior, epsilon=epsilon)
    used = np.unique(k[k >= 2])
    assert used.size >= 3  # the test covers several set sizes
    k_min = int(used[0])
    # k-ary RR's profile, delta(e) = (e^eps - e^e) / (e^eps + k - 1), at the smallest k.
    grid = np.linspace(0.0, epsilon, 41)
    bound = (math.exp(epsilon) - np.exp(grid)) / (math.exp(epsilon) + k_min - 1)
    laws = rr_top_k_distribution(prior, k=k, epsilon=epsilon)
    for row in np.flatnonzero(k >= 2)[:60]:
        for a in range(n_classes):
            for b in range(n_classes):
                if a != b:  # every label change, in and out of the set
                    divergence = _hockey_stick(laws[row, a], laws[row, b], grid)
                    assert np.all(divergence <= bound + 1e-12)
    # ... and the bound is attained by a row of the smallest set (both labels in it).
    row = int(np.flatnonzero(k == k_min)[0])
    a, b = np.argsort(-prior[row])[:2]
    np.testing.assert_allclose(_hockey_stick(laws[row, a], laws[row, b], grid), bound,
                               atol=1e-12)
    # The description the lead's RRWithPriorClassifier records for such a stage.
    spend = PrivacySpend.randomized_response(epsilon, k_min, mechanism="RRWithPrior")
    assert _tight(spend) == pytest.approx(
        epsilon_at(lambda e: max(0.0, (math.exp(epsilon) - math.exp(e))
                                  / (math.exp(epsilon) + k_min - 1)), SLACK), abs=2e-3)


def test_a_parallel_node_of_equal_stage_descriptions_is_that_description():
    stage = PrivacySpend.randomized_response(0.5, 3, mechanism="RRWithPrior")
    lp_mst = PrivacySpend.compose("LP-MST", [stage, stage], "parallel")
    assert _tight(lp_mst, N_FITS) == pytest.approx(_tight(stage, N_FITS))
    mixed = PrivacySpend.compose(
        "LP-MST", [stage, PrivacySpend.randomized_response(0.5, 2)], "parallel")
    # Different set sizes: the stage of the larger divergence (k = 2) dominates both.
    assert _tight(mixed, N_FITS) >= _tight(stage, N_FITS)


# ----------------------------------------------------------------------------- Gaussian


@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0])
def test_gaussian_profile_functions_against_scipy(mu):
    def profile(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)

    assert gaussian_delta(1.0, mu) == pytest.approx(profile(1.0), rel=1e-9, abs=1e-300)
    epsilon = gaussian_epsilon(mu, 1e-5)
    assert profile(epsilon) <= 1e-5 * (1 + 1e-9)
    assert epsilon == pytest.approx(epsilon_at(profile, 1e-5), rel=1e-7)
    largest = gaussian_mu(epsilon, 1e-5)
    assert gaussian_delta(epsilon, largest) <= 1e-5
    assert largest == pytest.approx(mu, rel=1e-7)
    sigma = calibrate_gaussian_sigma(epsilon, 1e-5, 2.0)
    assert sigma == pytest.approx(math.sqrt(2.0) / mu, rel=1e-7)
    assert gaussian_epsilon(math.sqrt(2.0) / sigma, 1e-5) <= epsilon
    spend = PrivacySpend.gaussian(mu, 1e-5)
    assert (spend.epsilon, spend.description.value, spend.rho) == (epsilon, mu, mu**2 / 2)


def test_pates_gaussian_leaf_records_mu_and_rho():
    from sklearn_labeldp.mechanisms import _pate

    spend = _pate._gaussian_spend("GNMax", 0.5, 1e-5, n_queries=3)
    assert spend.params == {"rho": 0.25, "n_queries": 3}
    assert spend.description == MechanismDescription("gaussian", math.sqrt(0.5))


# ---------------------------------------------------------------------- the ledgers


def _records():
    return [PrivacySpend.rappor(0.5), PrivacySpend.laplace(0.25, 2),
            PrivacySpend.gaussian(0.5, 1e-7),
            PrivacySpend.randomized_response(0.5, 4, mechanism="RRWithPrior")]


def test_descriptions_survive_the_sqlite_ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    memory = BudgetAccountant(math.inf, 1.0)
    disk = BudgetAccountant(math.inf, 1.0, path=path)
    for spend in _records():
        memory.spend(spend)
        disk.spend(spend)
    reopened = BudgetAccountant(math.inf, 1.0, path=path)
    assert [s.params for s in reopened.spends] == [s.params for s in _records()]
    tight = reopened.total(slack=SLACK).epsilon
    assert tight == memory.total(slack=SLACK).epsilon
    # Undescribed, the same budgets compose (as binary RR, and the Gaussian by the sum)
    # to more: the descriptions, not only the budgets, went through the file.
    plain = BudgetAccountant(math.inf, 1.0)
    for spend in _records():
        plain.spend(spend.epsilon, spend.delta)
    assert tight < plain.total(slack=SLACK).epsilon - 0.1


# ------------------------------------------------------------------- the estimators


def test_estimators_record_their_descriptions():
    from sklearn.linear_model import LinearRegression

    from sklearn_labeldp.linear_model import DPLeastSquaresClassifier, DPLeastSquaresRegressor
    from sklearn_labeldp.regression import NoisyLabelRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=120)
    gaussian = NoisyLabelRegressor(LinearRegression(), epsilon=1.0, delta=1e-5,
                                   label_range=(-3, 3), mechanism="gaussian",
                                   random_state=0).fit(X, y)
    params = gaussian.mechanism_params_
    # One clipped label moves by at most the range, 6: mu = 6 / sigma, checked exactly.
    assert gaussian.privacy_spend_.description.value == pytest.approx(6.0 / params["noise_scale"])
    assert gaussian_delta(1.0, gaussian.privacy_spend_.description.value) <= 1e-5
    laplace = NoisyLabelRegressor(LinearRegression(), epsilon=1.0, label_range=(-3, 3),
                                  mechanism="laplace", random_state=0).fit(X, y)
    assert laplace.privacy_spend_.description.value == (1.0, 1)
    assert laplace.mechanism_params_["noise_scale"] == 6.0  # range / epsilon

    labels = (X[:, 0] > 0).astype(int)
    fits = [DPLeastSquaresClassifier(epsilon=1.0, delta=1e-6, data_norm=3.0, classes=[0, 1],
                                     random_state=0).fit(X, labels),
            DPLeastSquaresRegressor(epsilon=1.0, delta=1e-6, data_norm=3.0,
                                    label_range=(-3, 3), random_state=0).fit(X, y)]
    for fit in fits:
        mu = fit.privacy_spend_.description.value
        # 19 fits are one Gaussian of sqrt(19) mu (Dong, Roth and Su 2022).
        acc = BudgetAccountant(math.inf, 1.0)
        for _ in range(N_FITS):
            acc.spend(fit.privacy_spend_)
        exact = gaussian_epsilon(math.sqrt(N_FITS) * mu, N_FITS * 1e-6 + SLACK)
        assert 0.99 <= acc.total(slack=SLACK).epsilon / exact <= 1.01
        assert acc.total(slack=SLACK).epsilon < 0.4 * acc.total().epsilon


def test_descriptions_that_release_nothing_compose_to_zero():
    nothing = [PrivacySpend.gaussian(0.0, 1e-6), PrivacySpend.laplace(0.0, 2),
               PrivacySpend.rappor(0.0), PrivacySpend.randomized_response(0.0, 3)]
    acc = BudgetAccountant(math.inf, 1.0)
    for spend in nothing:
        assert spend.epsilon == 0.0
        acc.spend(spend)
    acc.spend(PrivacySpend.rappor(1.0))
    # RAPPOR alone, read at the same delta (the Gaussian's 1e-6 and the slack).
    alone = BudgetAccountant(math.inf, 1.0)
    alone.spend(PrivacySpend.rappor(1.0))
    assert acc.total(slack=SLACK).epsilon == pytest.approx(
        alone.total(slack=SLACK + 1e-6).epsilon, rel=1e-12)


def test_a_described_record_of_huge_epsilon_composes_by_the_basic_sum():
    # ALIBI, DP least squares and Gaussian label noise build their leaves with
    # gaussian=mu directly: at eps >= 700 the loss distribution's grid would take
    # hundreds of GiB, so the tight total must take such a record at its epsilon.
    from sklearn_labeldp.accounting import gaussian_epsilon

    mu = 60.0
    epsilon = gaussian_epsilon(mu, 1e-5)
    assert epsilon > 700
    acc = BudgetAccountant(math.inf, 1.0)
    acc.spend(PrivacySpend.leaf("Gaussian one-hot", epsilon, 1e-5, description=("gaussian", mu)))
    acc.spend(PrivacySpend.laplace(800.0))
    acc.spend(PrivacySpend.leaf("LP-MST", 1000.0))  # pure: no binary RR at 1000 either
    acc.spend(PrivacySpend.laplace(0.5))
    tight = acc.total(slack=SLACK)
    assert tight.epsilon == pytest.approx(epsilon + 1800.0 + 0.5, rel=1e-9)


# ------------------------------------------------------------------ bounded range


def _bounded_range_profile_epsilon(epsilon, delta):
    """Inverse of the envelope profile (e^(eps/2) - e^(e/2))^2 / (e^eps - 1) = delta."""
    return 2.0 * math.log(math.exp(epsilon / 2) - math.sqrt(delta * math.expm1(epsilon)))


def _envelope_composition(epsilon, k, delta, h=1e-4):
    """k-fold composition of the envelope pair: the k-th power of its loss law's transform.

    The law is the density's exact mass on each interval of width h, put at the
    interval's upper end (so the result can only be above the truth).
    """
    edges = np.linspace(-epsilon, epsilon, int(round(2 * epsilon / h)) + 1)
    cdf = np.expm1((epsilon + edges) / 2) / math.expm1(epsilon)
    size = k * (edges.size - 1)
    law = np.fft.irfft(np.fft.rfft(np.diff(cdf), size) ** k, size).clip(min=0.0)
    grid = k * edges[1] + np.arange(size) * (edges[1] - edges[0])
    return epsilon_at(lambda e: float(np.sum(law * -np.expm1(np.minimum(e - grid, 0.0)))),
                       delta)


def _best_two_outcome_composition(epsilon, k, delta):
    """Dong, Durfee and Rogers (2020): the worst k-fold composition of one two-outcome
    bounded-range pair (losses (1 - t) eps and -t eps), over a grid of t: a lower
    bound that no valid accounting of k epsilon-bounded-range mechanisms may go under."""
    j = np.arange(k + 1)
    best = 0.0
    for t in np.linspace(0.02, 0.98, 49):
        q1 = math.expm1(t * epsilon) / math.expm1(epsilon)
        p1 = math.exp((1 - t) * epsilon) * q1
        P, Q = binom.pmf(j, k, p1), binom.pmf(j, k, q1)
        best = max(best, epsilon_at(
            lambda e, P=P, Q=Q: float(np.sum(np.maximum(P - np.exp(e) * Q, 0.0))), delta))
    return best


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_one_bounded_range_record_has_the_envelope_profile(epsilon):
    exact = _bounded_range_profile_epsilon(epsilon, SLACK)
    tight = _tight(PrivacySpend.bounded_range(epsilon))
    assert exact <= tight <= exact + 1e-3
    assert tight < epsilon


def test_nineteen_exponential_mechanisms_compose_between_the_bounds():
    tight = _tight(PrivacySpend.bounded_range(0.5), 19)
    reference = _envelope_composition(0.5, 19, SLACK)
    assert tight == pytest.approx(reference, rel=1e-3)
    assert tight >= _best_two_outcome_composition(0.5, 19, SLACK)
    assert tight < 0.7 * _tight(PrivacySpend.leaf("pure", 0.5), 19)  # 5.87 against 9.49


def test_the_exponential_mechanism_is_dominated_by_the_envelope_pair():
    # Neighbouring score vectors of sensitivity 1: each score moves by -1, 0 or +1.
    epsilon, k = 1.0, 8
    scores = np.array([0.0, 3.0, 1.0, 2.0])
    moved = scores + np.array([1.0, -1.0, 0.0, -1.0])
    P = exponential_mechanism_probabilities(scores, epsilon=epsilon)
    Q = exponential_mechanism_probabilities(moved, epsilon=epsilon)
    losses, weights = np.log(P / Q), P
    law, grid = np.ones(1), np.zeros(1)
    for _ in range(k):  # the exact k-fold loss law, support and masses
        grid = (grid[:, None] + losses[None, :]).ravel()
        law = (law[:, None] * weights[None, :]).ravel()
    exact = epsilon_at(lambda e: float(np.sum(law * np.maximum(0.0, 1 - np.exp(e - grid)))),
                        SLACK)
    assert exact <= _tight(PrivacySpend.bounded_range(epsilon), k)


def test_a_bounded_range_description_above_the_record_is_refused():
    with pytest.raises(ValueError, match=r"bounded_range=0.5 implies"):
        PrivacySpend.leaf("exponential mechanism", 0.4, description=("bounded_range", 0.5))


# --------------------------------------------------- one source of truth per record

# Hand-built records whose stated budget is far above what their description
# implies. Up to commit 05b8ffa each was admitted (the description only had to be
# covered by the budget), and the tight total, which composes the description,
# reported the smaller: e.g. 0.100 for the first under a ceiling of epsilon 1.
_MISSTATED = {
    "randomized_response": (5.0, 0.0, (0.1, 2)),
    "rappor": (5.0, 0.0, 0.1),
    "bounded_range": (5.0, 0.0, 0.1),
    "laplace": (5.0, 0.0, (0.05, 2)),
    "gaussian": (5.0, 1e-6, 0.01),
    "subsampled_gaussian": (5.0, 1e-5, (8.0, 0.01, 100)),
    "subsampled_gaussian_label": (5.0, 1e-5, (8.0, 0.01, 100)),
}


def test_every_description_kind_is_exercised():
    # A new row of DESCRIPTIONS is tested by the parametrised tests below once
    # it is added here.
    assert set(_MISSTATED) == set(DESCRIPTIONS)


@pytest.mark.parametrize("kind", _MISSTATED)
def test_a_record_stating_another_budget_than_its_description_is_refused(kind):
    epsilon, delta, value = _MISSTATED[kind]
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-5, slack=1e-6)
    with pytest.raises(ValueError, match=f"states .* but its description {kind}=.* implies"):
        accountant.spend(PrivacySpend.leaf("user", epsilon, delta, description=(kind, value)))
    assert accountant.spends == []


@pytest.mark.parametrize("kind", _MISSTATED)
def test_a_record_built_from_its_description_is_admitted_and_composes_to_it(kind):
    _, delta, value = _MISSTATED[kind]
    description = MechanismDescription(kind, value)
    implied = {
        "randomized_response": lambda: PrivacySpend.randomized_response(*value),
        "rappor": lambda: PrivacySpend.rappor(value),
        "bounded_range": lambda: PrivacySpend.bounded_range(value),
        "laplace": lambda: PrivacySpend.laplace(*value),
        "gaussian": lambda: PrivacySpend.gaussian(value, delta),
        "subsampled_gaussian": lambda: PrivacySpend.subsampled_gaussian(*value, delta,
                                                                         method="pld"),
        "subsampled_gaussian_label": lambda: PrivacySpend.leaf(
            "DP-SGD", subsampled_gaussian_label_epsilon(*value, delta), delta,
            description=description),
    }[kind]()
    # The same budget restated by hand (within the relative 1e-9) is the same record.
    assert implied.description == description
    again = PrivacySpend.leaf("user", implied.epsilon * (1 + 1e-12), implied.delta,
                              description=description)
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    accountant.spend(again)
    tight = accountant.total(slack=1e-6).epsilon
    assert tight <= implied.epsilon * (1 + 1e-6) + 2e-4  # the PLD grid's pessimism at most


# ------------------------------------------------ a description is its own field


def test_an_unknown_description_kind_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown mechanism description kind 'gausian'.*"
                                         "'randomized_response'.*'bounded_range'"):
        PrivacySpend.leaf("user", 1.0, 1e-5, description=("gausian", 1.0))
    with pytest.raises(TypeError, match="MechanismDescription"):
        PrivacySpend(
            "user", PrivacySpend.gaussian(1.0, 1e-5).budget, {}, description=("gaussian", 1.0))


@pytest.mark.parametrize("kind", sorted(_MISSTATED))
def test_a_description_kind_among_the_free_params_is_refused(kind):
    # Before descriptions had their own field a misspelt kind was silently kept as a
    # public parameter; now the params are free-form and a kind there is a mistake.
    _, delta, value = _MISSTATED[kind]
    with pytest.raises(ValueError, match=f"names the description kind '{kind}' among its "
                                         f"free-form params; pass it as description="):
        PrivacySpend.leaf("user", 5.0, delta, **{kind: value})


def test_only_leaves_have_descriptions():
    leaf = PrivacySpend.rappor(1.0)
    node = PrivacySpend.compose("two", [leaf, leaf], "sequential")
    assert node.description is None
    with pytest.raises(ValueError, match="only a leaf"):
        PrivacySpend("two", node.budget, {}, "sequential", node.parts, leaf.description)


def test_records_pickled_with_the_description_among_params_still_read(tmp_path):
    # Ledgers written before the field kept the description in params: such a
    # record unpickles with its description moved to the field, and composes
    # tightly as before.
    import pickle

    new = PrivacySpend.laplace(0.5, 2, mechanism="ALIBI", n_rounds=2)
    old_state = {"mechanism": "ALIBI", "budget": new.budget,
                 "params": {"n_rounds": 2, "laplace": (0.5, 2)},
                 "composition": "leaf", "parts": ()}
    old = PrivacySpend.__new__(PrivacySpend)
    old.__setstate__(old_state)
    assert old == new
    assert pickle.loads(pickle.dumps(new)) == new
    acc_old, acc_new = BudgetAccountant(math.inf, 1.0), BudgetAccountant(math.inf, 1.0)
    acc_old.spend(old)
    acc_new.spend(new)
    assert acc_old.total(slack=1e-6) == acc_new.total(slack=1e-6)
