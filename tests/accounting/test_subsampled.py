"""Poisson-subsampled Gaussian (DP-SGD) accounting and its composition in the ledger."""

import copy
import math
import pickle
import sys

import pytest

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    BudgetError,
    PrivacySpend,
    _subsampled,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_noise_multiplier,
    zcdp_to_approx_dp,
)

dpa = pytest.importorskip("dp_accounting")

# Abadi et al. 2016: q = 0.01, sigma = 4, delta = 1e-5, 100 epochs; the moments
# accountant gave epsilon = 1.26.
ABADI = {"noise_multiplier": 4.0, "sample_rate": 0.01, "steps": 10_000, "delta": 1e-5}
ABADI_EPSILON = 1.26


def direct_epsilon(accountant, noise_multiplier, sample_rate, steps, delta):
    event = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(sample_rate, dpa.GaussianDpEvent(noise_multiplier)), steps
    )
    return accountant.compose(event).get_epsilon(delta)


# ------------------------------------------------------------------ the helpers


@pytest.mark.parametrize(
    "noise_multiplier, sample_rate, steps, delta",
    [(4.0, 0.01, 10_000, 1e-5), (2.0, 0.02, 500, 1e-6), (1.5, 0.2, 7, 1e-3), (2.0, 1.0, 20, 1e-5)],
)
def test_helpers_are_dp_accountings_numbers(noise_multiplier, sample_rate, steps, delta):
    args = (noise_multiplier, sample_rate, steps, delta)
    assert subsampled_gaussian_epsilon(*args) == direct_epsilon(dpa.rdp.RdpAccountant(), *args)
    assert subsampled_gaussian_epsilon(*args, method="pld") == direct_epsilon(
        dpa.pld.PLDAccountant(), *args
    )


def test_abadi_setting_is_below_the_moments_accountant():
    rdp = subsampled_gaussian_epsilon(**ABADI)
    pld = subsampled_gaussian_epsilon(**ABADI, method="pld")
    # Measured with dp-accounting 0.6.0: RDP 1.0355, PLD 0.9470.
    assert rdp == pytest.approx(1.0355, abs=1e-3)
    assert pld == pytest.approx(0.9470, abs=1e-3)
    assert pld < rdp < ABADI_EPSILON


def test_epsilon_decreases_with_noise_and_grows_with_steps_and_rate():
    base = subsampled_gaussian_epsilon(**ABADI)
    assert subsampled_gaussian_epsilon(**{**ABADI, "noise_multiplier": 5.0}) < base
    assert subsampled_gaussian_epsilon(**{**ABADI, "steps": 20_000}) > base
    assert subsampled_gaussian_epsilon(**{**ABADI, "sample_rate": 0.02}) > base
    assert subsampled_gaussian_epsilon(**{**ABADI, "delta": 1e-7}) > base


@pytest.mark.parametrize("noise_multiplier, steps", [(1.0, 1), (2.0, 50), (5.0, 1000), (0.7, 3)])
def test_full_batch_is_the_plain_gaussian(noise_multiplier, steps):
    rho = steps / (2 * noise_multiplier**2)
    delta = 1e-5
    rdp = subsampled_gaussian_epsilon(noise_multiplier, 1.0, steps, delta)
    pld = subsampled_gaussian_epsilon(noise_multiplier, 1.0, steps, delta, method="pld")
    cks = zcdp_to_approx_dp(rho, delta)
    # T Gaussian releases of std sigma are one of std sigma / sqrt(T); its exact epsilon
    # (Balle and Wang 2018) is the least any sound accountant can report.
    exact = dpa.get_epsilon_gaussian(noise_multiplier / math.sqrt(steps), delta)
    # RDP at rho-zCDP is alpha rho; dp-accounting converts with the same bound as CKS,
    # minimised over a grid of orders instead of all alpha > 1: never below CKS.
    assert rdp >= cks * (1 - 1e-9)
    assert rdp <= 1.01 * cks  # the grid is dense enough to lose under 1 %
    # PLD discretises pessimistically: never below the exact value, and tight here.
    assert exact * (1 - 1e-9) <= pld <= cks
    assert pld == pytest.approx(exact, rel=1e-5)


# PLD at small noise is slow: one target for it.
@pytest.mark.parametrize("method, target", [("rdp", 0.5), ("rdp", 2.0), ("pld", 0.5)])
def test_noise_multiplier_round_trip(method, target):
    q, steps, delta = 0.01, 2_000, 1e-5
    sigma = subsampled_gaussian_noise_multiplier(target, q, steps, delta, method=method)
    assert subsampled_gaussian_epsilon(sigma, q, steps, delta, method=method) <= target
    # Within the documented relative tolerance of an infeasible multiplier.
    below = sigma / (1 + 2e-6)
    assert subsampled_gaussian_epsilon(below, q, steps, delta, method=method) > target
    assert subsampled_gaussian_epsilon(sigma, q, steps, delta, method=method) == pytest.approx(
        target, rel=1e-3
    )


def test_noise_multiplier_below_one_and_full_batch():
    # A large target needs little noise: the search must bracket below 1.
    sigma = subsampled_gaussian_noise_multiplier(20.0, 1.0, 1, 1e-5)
    assert sigma < 1
    assert subsampled_gaussian_epsilon(sigma, 1.0, 1, 1e-5) <= 20.0
    assert subsampled_gaussian_epsilon(sigma / (1 + 2e-6), 1.0, 1, 1e-5) > 20.0


BAD_EPSILON_ARGS = [
    ({"noise_multiplier": 0.0}, ValueError, "noise_multiplier"),
    ({"noise_multiplier": -1.0}, ValueError, "noise_multiplier"),
    ({"noise_multiplier": math.inf}, ValueError, "noise_multiplier"),
    ({"noise_multiplier": "4"}, TypeError, "noise_multiplier"),
    ({"sample_rate": 0.0}, ValueError, "sample_rate"),
    ({"sample_rate": 1.5}, ValueError, "sample_rate"),
    ({"sample_rate": math.nan}, ValueError, "sample_rate"),
    ({"sample_rate": True}, TypeError, "sample_rate"),
    ({"steps": 0}, ValueError, "steps"),
    ({"steps": 10.0}, TypeError, "steps"),
    ({"steps": True}, TypeError, "steps"),
    ({"delta": 0.0}, ValueError, "delta"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"method": "moments"}, ValueError, "method"),
]


@pytest.mark.parametrize("change, error, name", BAD_EPSILON_ARGS)
def test_epsilon_rejects_bad_inputs(change, error, name):
    with pytest.raises(error, match=name):
        subsampled_gaussian_epsilon(**{**ABADI, **change})


@pytest.mark.parametrize(
    "change, error, name",
    [(c, e, n) for c, e, n in BAD_EPSILON_ARGS if n != "noise_multiplier"]
    + [
        ({"target_epsilon": 0.0}, ValueError, "target_epsilon"),
        ({"target_epsilon": math.inf}, ValueError, "target_epsilon"),
    ],
)
def test_noise_multiplier_rejects_bad_inputs(change, error, name):
    args = {"target_epsilon": 1.0, "sample_rate": 0.01, "steps": 100, "delta": 1e-5}
    with pytest.raises(error, match=name):
        subsampled_gaussian_noise_multiplier(**{**args, **change})


def test_missing_extra_names_it_and_inputs_are_checked_first(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # makes the import fail
    with pytest.raises(ValueError, match="sample_rate"):
        subsampled_gaussian_epsilon(1.0, 2.0, 10, 1e-5)
    # Arguments never computed before, so no cached result answers.
    with pytest.raises(ImportError, match=r"sklearn-labeldp\[accounting\]"):
        subsampled_gaussian_epsilon(1.234567, 0.0123, 11, 1e-5)
    with pytest.raises(ImportError, match=r"sklearn-labeldp\[accounting\]"):
        subsampled_gaussian_noise_multiplier(0.987654, 0.0123, 11, 1e-5)


# ------------------------------------------------------------------ spend records


def test_spend_record_reports_epsilon_and_parameters():
    spend = PrivacySpend.subsampled_gaussian(4, 0.01, 10_000, 1e-5, n_samples=60_000)
    assert spend.mechanism == "DP-SGD"
    assert spend.epsilon == subsampled_gaussian_epsilon(**ABADI)
    assert spend.delta == 1e-5
    assert spend.params == {"n_samples": 60_000}
    assert (spend.description.kind, spend.description.value) == (
        "subsampled_gaussian", (4.0, 0.01, 10_000))
    assert spend.rho is None  # a subsampled Gaussian has no zCDP guarantee
    pld = PrivacySpend.subsampled_gaussian(4, 0.01, 10_000, 1e-5, method="pld")
    assert pld.epsilon == subsampled_gaussian_epsilon(**ABADI, method="pld")


def test_full_batch_spend_records_its_exact_rho():
    spend = PrivacySpend.subsampled_gaussian(2.0, 1, 50, 1e-5, mechanism="DP-Adam")
    assert spend.rho == 50 / (2 * 2.0**2)
    assert spend.description.value == (2.0, 1.0, 50)


def test_spend_record_refuses_an_understated_or_malformed_record():
    abadi = ("subsampled_gaussian", (4.0, 0.01, 10_000))
    with pytest.raises(ValueError, match="implies"):
        PrivacySpend.leaf("DP-SGD", 0.9, 1e-5, description=abadi)
    # The RDP and the PLD values are the two budgets such a record may state;
    # anything above them is refused too (the ledger would believe the description).
    for method in ("rdp", "pld"):
        bound = subsampled_gaussian_epsilon(**ABADI, method=method)
        PrivacySpend.leaf("DP-SGD", bound, 1e-5, description=abadi)
    with pytest.raises(ValueError, match="implies"):
        PrivacySpend.leaf("DP-SGD", 1.1 * bound, 1e-5, description=abadi)
    with pytest.raises(ValueError, match="delta"):
        PrivacySpend.leaf("DP-SGD", 5.0, 0.0, description=abadi)
    with pytest.raises(ValueError, match="tuple"):
        PrivacySpend.leaf("DP-SGD", 5.0, 1e-5, description=("subsampled_gaussian", (4.0, 0.01)))
    with pytest.raises(ValueError, match="sample_rate"):
        PrivacySpend.leaf("DP-SGD", 5.0, 1e-5, description=("subsampled_gaussian", (4.0, 0.0, 10)))
    with pytest.raises(ValueError, match="steps"):
        PrivacySpend.subsampled_gaussian(4.0, 0.01, 0, 1e-5)


# ------------------------------------------------------------------ the accountant


def mixed_spends():
    """A DP-SGD run, a pure-DP spend and a Gaussian (zCDP) spend."""
    rho = 0.005
    return [
        PrivacySpend.subsampled_gaussian(**ABADI),
        PrivacySpend.leaf("RR", 0.1),
        PrivacySpend.leaf("Gaussian", zcdp_to_approx_dp(rho, 1e-6), 1e-6, rho=rho),
    ]


def rdp_of(events, delta):
    return dpa.rdp.RdpAccountant().compose(dpa.ComposedDpEvent(events)).get_epsilon(delta)


@pytest.mark.parametrize("persistent", [False, True])
def test_accountant_composes_dp_sgd_with_pure_and_zcdp_spends(tmp_path, persistent):
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(2.0, 1e-4, path=path)
    spends = mixed_spends()
    for spend in spends:
        acc.spend(spend)
    naive = acc.total()
    assert naive.epsilon == pytest.approx(math.fsum(s.epsilon for s in spends))
    assert naive.delta == pytest.approx(1.1e-5)
    assert acc.total_zcdp() is None  # the DP-SGD run has no zCDP guarantee

    delta = naive.delta
    total = acc.total_rdp_approx_dp(delta)
    assert total.delta == delta
    # Renyi DP adds per order: the DP-SGD curve plus 0.1^2/2 + 0.005 times the order.
    expected = rdp_of(
        [_subsampled._dp_event(4.0, 0.01, 10_000), dpa.ZCDpEvent(0.1**2 / 2 + 0.005)], delta
    )
    assert total.epsilon == pytest.approx(expected, rel=1e-12)
    # A larger curve at the same delta converts to at least the DP-SGD run's own RDP epsilon.
    assert total.epsilon >= subsampled_gaussian_epsilon(4.0, 0.01, 10_000, delta)
    assert total.epsilon >= max(s.epsilon for s in spends)
    assert total.epsilon < naive.epsilon

    # The same answer from a copy of the handle and, for the file, from a fresh handle.
    assert copy.deepcopy(acc).total_rdp_approx_dp(delta) == total
    assert pickle.loads(pickle.dumps(acc)).total_rdp_approx_dp(delta) == total
    if persistent:
        reopened = BudgetAccountant(2.0, 1e-4, path=path)
        assert reopened.spends == spends
        assert reopened.total_rdp_approx_dp(delta) == total


@pytest.mark.parametrize("persistent", [False, True])
def test_over_budget_dp_sgd_spend_is_refused_before_it_is_recorded(tmp_path, persistent):
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(2.0, 1e-4, path=path)
    acc.spend(1.0)
    run = PrivacySpend.subsampled_gaussian(**ABADI)  # epsilon 1.04: 2.04 > 2
    with pytest.raises(BudgetError, match="would exceed"):
        acc.check(run)
    with pytest.raises(BudgetError, match="would exceed"):
        acc.spend(run)
    assert len(acc.spends) == 1
    if persistent:
        assert len(BudgetAccountant(2.0, 1e-4, path=path).spends) == 1
    acc.spend(PrivacySpend.subsampled_gaussian(**{**ABADI, "steps": 2_000}))
    assert len(acc.spends) == 2
    # delta counts too: a pure-DP ceiling admits no DP-SGD run.
    with pytest.raises(BudgetError):
        BudgetAccountant(100.0).spend(run)


def test_rdp_total_of_pure_and_zcdp_spends_is_their_zcdp_sum():
    acc = BudgetAccountant(math.inf, 1.0)
    acc.spend(0.3)
    acc.spend(PrivacySpend.leaf("Gaussian", 2.0, 1e-6, rho=0.02))
    rho = acc.total_zcdp()
    assert rho == pytest.approx(0.3**2 / 2 + 0.02)
    assert acc.total_rdp_approx_dp(1e-6).epsilon == pytest.approx(
        rdp_of([dpa.ZCDpEvent(rho)], 1e-6), rel=1e-12
    )
    # The order grid can only lose against CKS's continuous minimum.
    assert acc.total_rdp_approx_dp(1e-6).epsilon >= acc.total_zcdp_approx_dp(1e-6).epsilon


def test_rdp_total_inside_composed_records_and_unsupported_spends():
    runs = [PrivacySpend.subsampled_gaussian(4.0, 0.01, 1_000, 1e-6) for _ in range(2)]
    node = PrivacySpend.compose("two models", [*runs, PrivacySpend.leaf("RR", 0.2)], "parallel")
    acc = BudgetAccountant(math.inf, 1.0)
    acc.spend(node)
    # Parallel parts are bounded by their sequential composition.
    expected = rdp_of(
        [_subsampled._dp_event(4.0, 0.01, 1_000)] * 2 + [dpa.ZCDpEvent(0.2**2 / 2)], 1e-5
    )
    assert acc.total_rdp_approx_dp(1e-5).epsilon == pytest.approx(expected, rel=1e-12)
    acc.spend(0.5, 1e-7)  # approximate DP without a zCDP or Renyi guarantee
    assert acc.total_rdp_approx_dp(1e-5) is None
    with pytest.raises(ValueError, match="delta"):
        acc.total_rdp_approx_dp(0.0)


def test_empty_ledger_rdp_total_is_zero():
    assert BudgetAccountant().total_rdp_approx_dp(1e-5).epsilon == 0.0


_HUGE_EPSILON_CHILD = """
import resource, sys, warnings
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
warnings.simplefilter("error", RuntimeWarning)  # dp-accounting's overflow stays quiet
from sklearn_labeldp.accounting import PrivacySpend, calibrate_dp_sgd_label_change
epsilon, rate, steps = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
sigma, label_eps, example_eps = calibrate_dp_sgd_label_change(epsilon, 1e-5, rate, steps)
PrivacySpend.leaf("DP-SGD", label_eps, 1e-5,  # the record's own check
                  description=("subsampled_gaussian_label", (sigma, rate, steps)))
print(sigma, label_eps, example_eps)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS")
@pytest.mark.parametrize(("epsilon", "rate", "steps"),
                         [(1e3, 0.0366, 2734), (1e6, 0.0366, 2734), (500.0, 0.25, 400)])
def test_huge_epsilon_calibrates_within_memory(epsilon, rate, steps):
    # A sanity check with a huge epsilon (DPSGDClassifier(epsilon=1e6)) once needed more
    # than 6 GB of privacy-loss grid and was killed; the grid now widens with the run's
    # epsilon. Within 3 GB of address space, the calibration and its record's check pass,
    # without the RuntimeWarnings of dp-accounting's overflow past e^709.
    import subprocess

    out = subprocess.run([sys.executable, "-c", _HUGE_EPSILON_CHILD, str(epsilon), str(rate),
                          str(steps)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    sigma, label_eps, example_eps = map(float, out.stdout.split())
    assert 0 < sigma < 0.5 and 0 < label_eps <= epsilon and 0 < example_eps <= epsilon
    assert label_eps > 0.7 * min(epsilon, 709)  # dp-accounting overflows beyond e^709
