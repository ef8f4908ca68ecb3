"""The ledger's tight composition: kept between queries, on a grid the ledger sets.

The composed privacy loss distribution of a ledger's records is cached on the
accountant (one per process for a shared ledger) and extended by the records
added since, so a charge under a ceiling composes one record, not one per
record. Instrumented: the number of records each (re)composition receives is
counted. Randomized responses enter as the mixtures of their two neighbouring
grid points that dominate them: checked here against their hockey-stick
divergences, exact binomial compositions and an independent lower bound.
"""

import math
import pickle

import numpy as np
import pytest
from _exact_privacy import binary_rr_composition, epsilon_at

from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend, _pld
from sklearn_labeldp.exceptions import BudgetError

dpa = pytest.importorskip("dp_accounting")

SLACK = 1e-6


def distinct_records(k, low=0.05, high=0.15):
    return [PrivacySpend.randomized_response(float(e), 2) for e in np.linspace(low, high, k)]


def _size(parts):
    return sum(parts.responses.values()) + sum(parts.others.values())


@pytest.fixture
def composed(monkeypatch):
    """``(records, grid steps)`` of each composition of a set of records."""
    calls = []
    original = _pld._composed

    def counting(parts, steps):
        calls.append((_size(parts), steps))
        return original(parts, steps)

    monkeypatch.setattr(_pld, "_composed", counting)
    return calls


def _extensions_only(calls):
    """Every composition of more than one record is a (re)build onto a new grid."""
    previous = None
    for size, steps in calls:
        assert size == 1 or steps != previous
        previous = steps


@pytest.mark.parametrize("persistent", [False, True])
def test_a_charge_composes_only_the_new_record(tmp_path, composed, persistent):
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(epsilon=4.0, delta=1e-5, slack=SLACK, path=path)
    spends = distinct_records(60)  # sum 6.0, tight composition 3.67
    for spend in spends:  # the basic sum passes 4 at the 41st: tight checks from there
        acc.spend(spend)
    # The first tight check builds the records before it (45: their sum is 3.97).
    assert composed[0][0] == 45 and composed[1][0] == 1
    # Then each charge composes the record charged before it and itself.
    _extensions_only(composed)
    builds = [size for size, _ in composed if size > 1]
    assert len(builds) <= len({steps for _, steps in composed})
    first = len(composed)
    for spend in distinct_records(5, 0.01, 0.02):
        acc.spend(spend)
    assert [size for size, _ in composed[first:]] == [1] * 10
    # The cached composition is the one a fresh accountant builds (1e-9 relative).
    cold = _pld.tight_total(acc.spends, SLACK)[0]
    assert acc.total(slack=SLACK).epsilon == pytest.approx(cold, rel=1e-9)


def test_a_refused_candidate_does_not_enter_the_cache(composed):
    acc = BudgetAccountant(epsilon=2.6, delta=1e-5, slack=SLACK)
    for spend in distinct_records(30):  # sum 3.0, tight composition 2.39
        acc.spend(spend)
    with pytest.raises(BudgetError):
        acc.spend(PrivacySpend.randomized_response(3.0, 2))
    calls = len(composed)
    acc.spend(PrivacySpend.randomized_response(0.001, 2))
    # The refused record was never cached: the next charge composes only itself.
    assert [size for size, _ in composed[calls:]] == [1]
    assert acc.total(slack=SLACK).epsilon == pytest.approx(
        _pld.tight_total(acc.spends, SLACK)[0], rel=1e-9)


def test_a_query_that_does_not_extend_the_cache_rebuilds_it(composed):
    composition = _pld.Composition()
    spends = distinct_records(20)
    first = _pld.tight_total(spends, SLACK, composition)
    assert [size for size, _ in composed] == [19, 1]
    reordered = spends[::-1]
    again = _pld.tight_total(reordered, SLACK, composition)
    assert [size for size, _ in composed[2:]] == [19, 1]  # not a prefix: rebuilt
    assert again[0] == pytest.approx(first[0], rel=1e-9)  # composition commutes
    _pld.tight_total([*reordered, *distinct_records(3, 0.2, 0.3)], SLACK, composition)
    # Extended by the 3 records before the last, or rebuilt if they moved the grid.
    steps = composed[2][1]
    assert composed[4:] in ([(3, steps), (1, steps)], [(22, composed[4][1]), (1, composed[4][1])])


def test_undescribed_records_are_summed_beside_the_cache():
    spends = distinct_records(10)
    approx = PrivacySpend.leaf("zcdp", 0.7, 1e-7)  # approximate DP, no description
    composition = _pld.Composition()
    with_cache = _pld.tight_total([spends[0], approx, *spends[1:]], SLACK, composition)
    cold = _pld.tight_total(spends, SLACK)
    assert with_cache[0] == pytest.approx(cold[0] + 0.7, rel=1e-9)
    assert with_cache[1] == pytest.approx(cold[1] + 1e-7)


def test_an_unshared_cache_pickles_empty():
    composition = _pld.Composition()
    _pld.tight_total(distinct_records(5), SLACK, composition)
    copy = pickle.loads(pickle.dumps(composition))
    assert copy is not composition and copy._descriptions == () and copy._pld is None
    assert len(composition._descriptions) == 4


def test_handles_of_one_sqlite_ledger_share_the_process_composition(tmp_path, composed):
    acc = BudgetAccountant(path=tmp_path / "ledger.sqlite")
    for spend in distinct_records(30):
        acc.spend(spend)
    total = acc.total(slack=SLACK)
    assert [size for size, _ in composed] == [29, 1]
    # Another handle of the same file in this process, opened or unpickled, reuses it.
    for handle in (BudgetAccountant(path=tmp_path / "ledger.sqlite"),
                   pickle.loads(pickle.dumps(acc))):
        assert handle._composition is acc._composition
        assert handle.total(slack=SLACK) == total
    assert [size for size, _ in composed[2:]] == [1, 1]  # only each query's last record
    # Another ledger has its own.
    other = BudgetAccountant(path=tmp_path / "other.sqlite")
    assert other._composition is not acc._composition


# ------------------------------------------------------------------ the mixtures


def _hockey_stick(epsilon, n_outputs, order):
    """K-ary randomized response's hockey-stick divergence of order ``e^order >= 1``."""
    return np.exp(order) * np.expm1(np.maximum(epsilon - order, 0.0)) / (
        np.exp(epsilon) + n_outputs - 1)


@pytest.mark.parametrize("n_outputs", [2, 3, 10])
@pytest.mark.parametrize("steps", [1, 8, 64])
def test_the_mixture_dominates_its_randomized_response_and_is_the_least(n_outputs, steps):
    interval = steps * _pld.DISCRETISATION
    epsilon = np.concatenate([np.linspace(1e-4, 0.3, 301), [0.5, 1.0, 3.3, 8.0, 35.0]])
    index, mass = _pld._mixtures(epsilon, float(n_outputs), interval)
    assert np.all(mass >= 0) and np.allclose(mass.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    b, a = index[:, 4] * interval, index[:, 3] * interval
    assert np.all((a < epsilon) & (epsilon <= b)) and np.all(index[:, 4] - index[:, 3] == 1)
    weight = mass[:, 4] * (np.exp(b) + n_outputs - 1) / np.exp(b)  # the share of b
    for order in np.linspace(0.0, 36.0, 721):
        mixed = weight * _hockey_stick(b, n_outputs, order) + (1 - weight) * _hockey_stick(
            a, n_outputs, order)
        assert np.all(mixed >= _hockey_stick(epsilon, n_outputs, order) * (1 - 1e-12))
    # At the order e^a the two are equal: no smaller weight dominates.
    at_a = weight * _hockey_stick(b, n_outputs, a)
    assert np.allclose(at_a, _hockey_stick(epsilon, n_outputs, a), rtol=1e-9, atol=0)






@pytest.mark.parametrize("epsilon, m", [(0.55, 19), (0.0123, 1000), (0.1, 300), (1.7, 40)])
def test_equal_records_compose_above_the_exact_binomial_and_within_1e3(epsilon, m):
    exact = binary_rr_composition(epsilon, m, SLACK)
    tight = _pld.tight_total([PrivacySpend.randomized_response(epsilon, 2)] * m, SLACK)[0]
    assert exact * (1 - 1e-9) <= tight <= exact * (1 + _pld._TOLERANCE)


def _rounded_composition(epsilons, h, rounding, delta):
    """Binary randomized responses with their losses rounded by ``rounding`` onto ``h``.

    Rounding down (``np.floor``) lowers every hockey-stick divergence: a lower
    bound on the composition; up (``np.ceil``), an upper one. Composed exactly
    (no truncation) through the product of the transforms.
    """
    p = np.exp(epsilons) / (1.0 + np.exp(epsilons))
    up, down = rounding(epsilons / h).astype(int), rounding(-epsilons / h).astype(int)
    offset = int(down.sum())
    size = int(up.sum() - offset) + 1
    frequency = np.fft.rfftfreq(size) * 2j * np.pi
    spectrum = np.ones(len(frequency), dtype=complex)
    for i in range(len(epsilons)):
        spectrum *= p[i] * np.exp(-frequency * (up[i] - down[i])) + (1 - p[i])
    law = np.fft.irfft(spectrum, size).clip(min=0.0)
    losses = (offset + np.arange(size)) * h
    return epsilon_at(
        lambda e: float(np.sum(law * -np.expm1(np.minimum(e - losses, 0.0)))), delta)


def test_distinct_records_compose_between_independent_bounds():
    epsilons = np.linspace(0.05, 0.15, 100)
    spends = [PrivacySpend.randomized_response(float(e), 2) for e in epsilons]
    tight = _pld.tight_total(spends, SLACK)[0]
    lower = _rounded_composition(epsilons, 2e-5, np.floor, SLACK)
    upper = _rounded_composition(epsilons, 2e-5, np.ceil, SLACK)
    assert upper <= lower * (1 + 1e-3)  # the two bracket the exact composition closely
    assert lower <= tight <= lower * (1 + _pld._TOLERANCE)
    # dp-accounting's rounding of each record's losses up (the former composition).
    pld = dpa.pld.privacy_loss_distribution
    rounded = [pld.from_randomized_response(2 / (math.exp(e) + 1), 2) for e in epsilons]
    while len(rounded) > 1:
        pairs = [rounded[i].compose(rounded[i + 1]) for i in range(0, len(rounded) - 1, 2)]
        rounded = pairs + rounded[len(pairs) * 2:]
    assert tight <= rounded[0].get_epsilon_for_delta(SLACK)


def test_the_tree_matches_a_chain_of_convolutions():
    # On one grid, the batched tree and a chain of dp-accounting's convolutions of the
    # records' mixtures read the same epsilon.
    spends = distinct_records(64)
    parts = _pld._Parts()
    for spend in spends:
        parts.add(_pld._description(spend))
    steps = parts.steps()
    chain = None
    for key in parts.responses:
        one = _pld._responses_pld({key: 1}, steps * _pld.DISCRETISATION)
        chain = one if chain is None else chain.compose(one)
    tree = _pld._composed(parts, steps)
    assert float(tree.get_epsilon_for_delta(SLACK)) == pytest.approx(
        float(chain.get_epsilon_for_delta(SLACK)), rel=1e-9)


def test_the_grid_coarsens_with_the_composed_spread_and_refines_for_other_records():
    def steps(spends):
        parts = _pld._Parts()
        for spend in spends:
            parts.add(_pld._description(spend))
        return parts.steps()

    # Few records: read near the largest loss, on dp-accounting's grid.
    assert steps(distinct_records(1)) == steps([PrivacySpend.randomized_response(1.7, 2)] * 40) == 1
    assert steps(distinct_records(100)) == steps(distinct_records(1000)) == 32
    assert steps(distinct_records(10_000)) == _pld._MAX_STEPS
    gaussian = PrivacySpend.gaussian(1.0, 1e-5)
    assert steps([*distinct_records(1000), *[gaussian] * 10]) == 16
    assert steps([*distinct_records(1000), *[gaussian] * 100]) == 2
    assert steps([*distinct_records(1000), *[gaussian] * 1000]) == 1


def test_an_sqlite_ledger_decodes_each_row_once_per_process(tmp_path):
    from sklearn_labeldp.accounting import _ledger

    acc = BudgetAccountant(path=tmp_path / "ledger.sqlite")
    for spend in distinct_records(30):
        acc.spend(spend)
    first = acc.spends
    BudgetAccountant(path=tmp_path / "ledger.sqlite").spend(distinct_records(1)[0])
    again = acc.spends
    # The rows read before are the same objects; only the new row was unpickled.
    assert len(again) == 31 and all(a is b for a, b in zip(first, again, strict=False))
    _ledger._DECODED.clear()  # as in a process that has read nothing yet
    fresh = acc.spends
    assert fresh == again and fresh[0] is not again[0]


def test_an_accountant_pickles_with_cloudpickle_as_dask_and_joblib_send_it(tmp_path):
    # cloudpickle pickles a bound classmethod by value, with its module's globals (a
    # lock): the composition must reduce to a module-level function, or a search
    # sending its accountant to dask workers fails to serialise it (and joblib waits).
    cloudpickle = pytest.importorskip("cloudpickle")
    for accountant in (BudgetAccountant(10.0, 1e-4),
                       BudgetAccountant(10.0, 1e-4, path=tmp_path / "ledger.db")):
        accountant.spend(0.5, 0.0)
        restored = cloudpickle.loads(cloudpickle.dumps(accountant))
        assert restored.total() == accountant.total()
    shared = _pld.Composition.shared(("sqlite", "x", 1))
    assert cloudpickle.loads(cloudpickle.dumps(shared)) is shared
