"""The ledger's tight composition is kept between queries: a charge composes one record.

The composed privacy loss distribution of a ledger's records is cached on the
accountant and extended by the records added since, so a charge under a
ceiling costs one convolution, not one per record. Instrumented: the number of
descriptions each (re)composition receives is counted.
"""

import pickle

import numpy as np
import pytest

from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend, _pld
from sklearn_labeldp.exceptions import BudgetError

pytest.importorskip("dp_accounting")

SLACK = 1e-6


def distinct_records(k, low=0.05, high=0.15):
    return [PrivacySpend.randomized_response(float(e), 2) for e in np.linspace(low, high, k)]


@pytest.fixture
def composed_sizes(monkeypatch):
    """The number of descriptions passed to each (re)composition of a ledger prefix."""
    sizes = []
    original = _pld._composed

    def counting(descriptions):
        sizes.append(len(descriptions))
        return original(descriptions)

    monkeypatch.setattr(_pld, "_composed", counting)
    return sizes


@pytest.mark.parametrize("persistent", [False, True])
def test_a_charge_composes_only_the_new_record(tmp_path, composed_sizes, persistent):
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(epsilon=4.0, delta=1e-5, slack=SLACK, path=path)
    spends = distinct_records(60)  # sum 6.0, tight composition 3.67
    for spend in spends:  # the basic sum passes 4 at the 41st: tight checks from there
        acc.spend(spend)
    first_tight = len(composed_sizes)
    assert first_tight >= 1
    # From the first tight check on, each charge adds one description to the cache.
    assert composed_sizes[0] > 1 and all(size == 1 for size in composed_sizes[1:])
    more = distinct_records(5, 0.01, 0.02)
    for spend in more:
        acc.spend(spend)
    assert composed_sizes[first_tight:] == [1] * len(more)
    # The cached composition is the one a fresh accountant builds (1e-9 relative).
    cold = _pld.tight_total(acc.spends, SLACK)[0]
    assert acc.total(slack=SLACK).epsilon == pytest.approx(cold, rel=1e-9)


def test_a_refused_candidate_does_not_enter_the_cache(composed_sizes):
    acc = BudgetAccountant(epsilon=2.6, delta=1e-5, slack=SLACK)
    for spend in distinct_records(30):  # sum 3.0, tight composition 2.39
        acc.spend(spend)
    with pytest.raises(BudgetError):
        acc.spend(PrivacySpend.randomized_response(3.0, 2))
    sizes = len(composed_sizes)
    acc.spend(PrivacySpend.randomized_response(0.001, 2))
    # The refused record was never cached, so the next charge extends the same prefix.
    assert composed_sizes[sizes:] in ([], [1])
    assert acc.total(slack=SLACK).epsilon == pytest.approx(
        _pld.tight_total(acc.spends, SLACK)[0], rel=1e-9)


def test_a_query_that_does_not_extend_the_cache_rebuilds_it(composed_sizes):
    composition = _pld.Composition()
    spends = distinct_records(20)
    first = _pld.tight_total(spends, SLACK, composition)
    assert composed_sizes == [19]
    reordered = spends[::-1]
    again = _pld.tight_total(reordered, SLACK, composition)
    assert composed_sizes == [19, 19]  # not a prefix: rebuilt
    assert again[0] == pytest.approx(first[0], rel=1e-9)  # composition commutes
    _pld.tight_total([*reordered, *distinct_records(3, 0.2, 0.3)], SLACK, composition)
    assert composed_sizes == [19, 19, 3]  # extended by the 2 new records before the last


def test_undescribed_records_are_summed_beside_the_cache():
    spends = distinct_records(10)
    approx = PrivacySpend.leaf("zcdp", 0.7, 1e-7)  # approximate DP, no description
    composition = _pld.Composition()
    with_cache = _pld.tight_total([spends[0], approx, *spends[1:]], SLACK, composition)
    cold = _pld.tight_total(spends, SLACK)
    assert with_cache[0] == pytest.approx(cold[0] + 0.7, rel=1e-9)
    assert with_cache[1] == pytest.approx(cold[1] + 1e-7)


def test_the_cache_pickles_empty():
    composition = _pld.Composition()
    _pld.tight_total(distinct_records(5), SLACK, composition)
    copy = pickle.loads(pickle.dumps(composition))
    assert copy._descriptions == () and copy._pld is None
    assert len(composition._descriptions) == 4


def test_the_tree_matches_a_chain_of_convolutions():
    # The former chain composition and the balanced tree read the same epsilon.
    spends = distinct_records(64)
    descriptions = [_pld._description(s) for s in spends]
    chain = _pld._pld(descriptions[0])
    for description in descriptions[1:]:
        chain = chain.compose(_pld._pld(description))
    tree = _pld._composed(descriptions)
    assert float(tree.get_epsilon_for_delta(SLACK)) == pytest.approx(
        float(chain.get_epsilon_for_delta(SLACK)), rel=1e-7)
