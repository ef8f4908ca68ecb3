"""The label change accounted directly (replace one), and the tight total of the ledger."""

import math
import pickle

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    PrivacySpend,
    calibrate_dp_sgd,
    calibrate_dp_sgd_label_change,
    group_privacy_label_budget,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_label_epsilon,
    subsampled_gaussian_label_noise_multiplier,
)

dpa = pytest.importorskip("dp_accounting")

SETTINGS = [(1.5, 0.1, 30), (2.0, 0.02, 500), (3.0, 1.0, 5)]


def replace_one_reference(sigma, q, steps, delta):
    """dp-accounting's own replace-one PLD accountant, built here independently."""
    accountant = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    accountant.compose(dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("sigma, q, steps", SETTINGS)
def test_label_epsilon_is_the_replace_one_pld_and_below_group_privacy(sigma, q, steps):
    delta = 1e-5
    epsilon = subsampled_gaussian_label_epsilon(sigma, q, steps, delta)
    assert 0.99 <= epsilon / replace_one_reference(sigma, q, steps, delta) <= 1.10
    # Group privacy of the add/remove guarantee (valid, looser) at the delta it gives.
    eps_ex = subsampled_gaussian_epsilon(sigma, q, steps, delta, method="pld")
    group, group_delta = group_privacy_label_budget(eps_ex, delta, math.inf, 1.0)
    assert subsampled_gaussian_label_epsilon(sigma, q, steps, group_delta) <= group


def test_full_batch_is_the_gaussian_of_sensitivity_2c():
    """q = 1: T steps of N(., sigma^2 C^2) on gradients 2C apart are the Gaussian with
    mu = 2 sqrt(T) / sigma, whose exact profile is Balle and Wang's (2018)."""
    sigma, steps, delta = 3.0, 5, 1e-5
    mu = 2 * math.sqrt(steps) / sigma

    def exact_delta(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    epsilon = subsampled_gaussian_label_epsilon(sigma, 1.0, steps, delta)
    assert exact_delta(epsilon) <= delta * (1 + 1e-6)
    assert exact_delta(epsilon - 1e-3) > delta  # tight, not merely valid
    # Passing sigma / 2 (a sensitivity of 2C counted twice) would record more.
    assert epsilon < subsampled_gaussian_label_epsilon(sigma / 2, 1.0, steps, delta)


def _hockey_stick(eps, u, v, sigma, q):
    """``H_{e^eps}(P || Q)`` of one Poisson-subsampled step in two dimensions, where the
    replaced example contributes ``u`` under one label and ``v`` under the other
    (the rest of the batch shifts both laws alike)."""

    def density(point, x, y):
        d2 = (x - point[0]) ** 2 + (y - point[1]) ** 2
        return np.exp(-d2 / (2 * sigma**2)) / (2 * np.pi * sigma**2)

    def integrand(y, x):
        zero = density((0.0, 0.0), x, y)
        p = q * density(u, x, y) + (1 - q) * zero
        r = q * density(v, x, y) + (1 - q) * zero
        return max(p - math.exp(eps) * r, 0.0)

    lim = 1.0 + 9 * sigma
    return integrate.dblquad(integrand, -lim, lim, -lim, lim, epsabs=1e-9)[0]


def test_no_pair_of_clipped_gradients_exceeds_the_recorded_guarantee():
    """The worst case constructed: one step, the replaced example's clipped gradient
    (||g|| <= C = 1) under either label, at several angles and norms. Its exact
    hockey-stick divergence at the recorded epsilon stays within delta, and the
    opposite pair (the dominating pair) attains the largest divergence."""
    sigma, q, delta = 0.8, 0.3, 1e-2
    epsilon = subsampled_gaussian_label_epsilon(sigma, q, 1, delta)
    pairs = [((-1.0, 0.0), (1.0, 0.0)),
             ((math.cos(2.0), math.sin(2.0)), (1.0, 0.0)),
             ((0.0, 0.5), (1.0, 0.0)),
             ((0.0, 0.0), (1.0, 0.0)),
             ((-0.6, 0.0), (0.6, 0.0))]
    values = [_hockey_stick(epsilon, u, v, sigma, q) for u, v in pairs]
    assert max(values) <= delta * 1.01
    assert values[0] == max(values) and values[0] > 0.9 * delta


def test_calibration_buys_less_noise_at_the_same_label_budget():
    epsilon, delta, q, steps = 2.0, 1e-5, 0.01, 1_000
    sigma, label_epsilon, example_epsilon = calibrate_dp_sgd_label_change(epsilon, delta, q, steps)
    assert label_epsilon <= epsilon
    assert label_epsilon == subsampled_gaussian_label_epsilon(sigma, q, steps, delta)
    assert example_epsilon == subsampled_gaussian_epsilon(sigma, q, steps, delta, method="pld")
    assert label_epsilon > epsilon * 0.99  # calibrated to the budget, not far below
    group_sigma = calibrate_dp_sgd(epsilon, delta, q, steps)[0]
    assert sigma < group_sigma / 1.1
    assert subsampled_gaussian_label_noise_multiplier(epsilon, q, steps, delta) == sigma


def test_a_label_spend_may_not_understate_the_replace_one_accounting():
    run = (1.0, 0.1, 30)
    epsilon = subsampled_gaussian_label_epsilon(*run, 1e-5)
    PrivacySpend.leaf("DP-SGD", epsilon, 1e-5, description=("subsampled_gaussian_label", run))
    add_remove = subsampled_gaussian_epsilon(*run, 1e-5, method="pld")
    with pytest.raises(ValueError, match="subsampled_gaussian_label=.* implies"):
        PrivacySpend.leaf("DP-SGD", add_remove, 1e-5,
                          description=("subsampled_gaussian_label", run))


# ---------------------------------------------------------------- total(slack=...)


def rr_reference(epsilon, n_outputs, count, delta):
    """PLD composition of ``count`` K-ary randomized responses, from dp-accounting's PLD."""
    pld = dpa.pld.privacy_loss_distribution.from_randomized_response(
        n_outputs / (math.exp(epsilon) + n_outputs - 1), n_outputs)
    return pld.self_compose(count).get_epsilon_for_delta(delta)


def test_nineteen_three_ary_randomized_responses_compose_tightly(tmp_path):
    reference = rr_reference(0.5, 3, 19, 1e-6)
    for acc in (BudgetAccountant(), BudgetAccountant(path=tmp_path / "ledger.sqlite")):
        for _ in range(19):
            # The one stage of an RRWithPriorClassifier without a prior is K-ary RR.
            acc.spend(PrivacySpend.compose(
                "LP-MST", [PrivacySpend.randomized_response(0.5, 3, mechanism="RRWithPrior")],
                "parallel"))
        assert acc.total().epsilon == pytest.approx(9.5)
        tight = acc.total(slack=1e-6)
        assert tight.delta == 1e-6
        assert tight.epsilon < 9.5
        assert reference * 0.99 <= tight.epsilon <= reference * 1.05
        # The description survives the SQLite ledger (and any pickle of the records).
        assert pickle.loads(pickle.dumps(acc.spends))[0] == acc.spends[0]


def test_one_stage_rr_fits_compose_as_k_ary_randomized_response():
    """19 one-stage RRWithPriorClassifier fits without a prior at eps 0.5 on 3 classes
    are 19 3-ary randomized responses: their tight total is that composition."""
    from sklearn.neighbors import KNeighborsClassifier

    from sklearn_labeldp import RRWithPriorClassifier
    from sklearn_labeldp.datasets import make_circle_gaussians

    X, y = make_circle_gaussians(90, 3, sigma=0.3, random_state=0)
    acc = BudgetAccountant()
    for seed in range(19):
        RRWithPriorClassifier(KNeighborsClassifier(), epsilon=0.5, classes=[0, 1, 2],
                              accountant=acc, random_state=seed).fit(X, y)
    tight = acc.total(slack=1e-6)
    ternary = rr_reference(0.5, 3, 19, 1e-6)
    assert ternary * 0.99 <= tight.epsilon <= ternary * 1.05 and tight.epsilon < 9.5


def test_undescribed_pure_spends_compose_as_binary_randomized_response():
    """Kairouz, Oh and Viswanath (2015): k eps-DP mechanisms compose at most as k binary
    randomized responses (a two-stage LP-MST's later stage picks sets from a prior)."""
    from sklearn.neighbors import KNeighborsClassifier

    from sklearn_labeldp import RRWithPriorClassifier
    from sklearn_labeldp.datasets import make_circle_gaussians

    X, y = make_circle_gaussians(90, 3, sigma=0.3, random_state=0)
    acc = BudgetAccountant()
    for seed in range(19):
        RRWithPriorClassifier(KNeighborsClassifier(), epsilon=0.5, classes=[0, 1, 2],
                              n_stages=2, accountant=acc, random_state=seed).fit(X, y)
    tight = acc.total(slack=1e-6)
    binary = rr_reference(0.5, 2, 19, 1e-6)
    assert binary * 0.99 <= tight.epsilon <= binary * 1.01 and tight.epsilon < 9.5


def test_tight_total_mixes_described_and_summed_spends():
    acc = BudgetAccountant(math.inf, 1.0)
    run = (1.0, 0.1, 30)
    acc.spend(PrivacySpend.leaf("DP-SGD", subsampled_gaussian_label_epsilon(*run, 1e-5), 1e-5,
                                description=("subsampled_gaussian_label", run)))
    acc.spend(PrivacySpend.randomized_response(1.0, 4))
    acc.spend(0.7, 1e-4)  # no description: added as it is
    tight = acc.total(slack=1e-6)
    assert tight.delta == pytest.approx(1e-5 + 1e-4 + 1e-6)
    dpsgd = dpa.pld.privacy_loss_distribution.from_gaussian_mechanism(
        1.0, sampling_prob=0.1, neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE,
    ).self_compose(30)
    rr = dpa.pld.privacy_loss_distribution.from_randomized_response(4 / (math.e + 3), 4)
    expected = dpsgd.compose(rr).get_epsilon_for_delta(1e-5 + 1e-6) + 0.7
    assert tight.epsilon == pytest.approx(expected, rel=1e-6)
    assert tight.epsilon < acc.total().epsilon
    assert BudgetAccountant().total(slack=1e-6).epsilon == 0.0
    with pytest.raises(ValueError):
        acc.total(slack=0.0)


def test_a_randomized_response_record_may_not_understate_it():
    with pytest.raises(ValueError, match="implies"):
        PrivacySpend.leaf("RR", 0.4, description=("randomized_response", (0.5, 3)))
    with pytest.raises(ValueError, match="n_outputs"):
        PrivacySpend.randomized_response(0.5, 1)
