"""PrivacyBudget, its composition rules and PrivacySpend records."""

import dataclasses
import math

import numpy as np
import pytest

from sklearn_labeldp.accounting import (
    PrivacyBudget,
    PrivacySpend,
    compose_parallel,
    compose_sequential,
)

# --------------------------------------------------------------------------- budget


def test_budget_stores_floats_and_defaults_to_pure_dp():
    b = PrivacyBudget(2)
    assert b.epsilon == 2.0 and isinstance(b.epsilon, float)
    assert b.delta == 0.0 and isinstance(b.delta, float)
    b = PrivacyBudget(np.float64(0.5), np.float32(0.25))
    assert (b.epsilon, b.delta) == (0.5, 0.25)
    assert type(b.epsilon) is float and type(b.delta) is float


@pytest.mark.parametrize("epsilon, delta", [(0.0, 0.0), (math.inf, 0.0), (1.0, 1.0), (3.0, 1e-300)])
def test_budget_accepts_boundary_values(epsilon, delta):
    b = PrivacyBudget(epsilon, delta)
    assert (b.epsilon, b.delta) == (epsilon, delta)


@pytest.mark.parametrize(
    "epsilon, delta, name",
    [
        (-1e-12, 0.0, "epsilon"),
        (-1.0, 0.0, "epsilon"),
        (math.nan, 0.0, "epsilon"),
        (-math.inf, 0.0, "epsilon"),
        (1.0, -1e-12, "delta"),
        (1.0, 1.0 + 1e-12, "delta"),
        (1.0, 2.0, "delta"),
        (1.0, math.nan, "delta"),
        (1.0, math.inf, "delta"),
    ],
)
def test_budget_rejects_out_of_range_values(epsilon, delta, name):
    with pytest.raises(ValueError, match=name):
        PrivacyBudget(epsilon, delta)


@pytest.mark.parametrize(
    "epsilon, delta, name",
    [
        (True, 0.0, "epsilon"),
        ("1.0", 0.0, "epsilon"),
        (None, 0.0, "epsilon"),
        (1 + 0j, 0.0, "epsilon"),
        (1.0, False, "delta"),
        (1.0, "0", "delta"),
        (1.0, None, "delta"),
    ],
)
def test_budget_rejects_non_real_values(epsilon, delta, name):
    with pytest.raises(TypeError, match=name):
        PrivacyBudget(epsilon, delta)


def test_budget_is_immutable():
    b = PrivacyBudget(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.epsilon = 2.0
    assert b == PrivacyBudget(1.0) and hash(b) == hash(PrivacyBudget(1.0))


def test_add_is_sequential_composition():
    total = PrivacyBudget(1.0, 1e-6) + PrivacyBudget(0.5, 2e-6)
    assert total == PrivacyBudget(1.5, 3e-6)
    assert PrivacyBudget(0.75, 0.6) + PrivacyBudget(0.25, 0.7) == PrivacyBudget(1.0, 1.0)
    assert PrivacyBudget(1.0) + PrivacyBudget(math.inf) == PrivacyBudget(math.inf)
    with pytest.raises(TypeError):
        PrivacyBudget(1.0) + 1.0
    with pytest.raises(TypeError):
        1.0 + PrivacyBudget(1.0)


def test_covers():
    ceiling = PrivacyBudget(1.0, 1e-5)
    assert ceiling.covers(PrivacyBudget(1.0, 1e-5))
    assert ceiling.covers(PrivacyBudget(0.0))
    assert ceiling.covers(PrivacyBudget(0.3, 1e-6))
    assert not ceiling.covers(PrivacyBudget(1.01, 0.0))
    assert not ceiling.covers(PrivacyBudget(0.5, 2e-5))
    assert not ceiling.covers(PrivacyBudget(math.inf))
    # The tolerance absorbs float rounding, not a real overspend.
    assert ceiling.covers(PrivacyBudget(1.0 + 1e-14, 1e-5 * (1 + 1e-14)))
    assert not ceiling.covers(PrivacyBudget(1.0 + 1e-9, 1e-5))
    assert not ceiling.covers(PrivacyBudget(1.0, 1e-5 * (1 + 1e-9)))
    assert not ceiling.covers(PrivacyBudget(1.0 + 1e-14), rtol=0.0)
    # Pure-DP and zero ceilings are exact: no delta, no epsilon can be added.
    assert not PrivacyBudget(5.0).covers(PrivacyBudget(0.0, 1e-300))
    assert not PrivacyBudget(0.0).covers(PrivacyBudget(1e-300))
    assert PrivacyBudget(math.inf, 1.0).covers(PrivacyBudget(1e300, 1.0))


# ---------------------------------------------------------------------- composition


def test_compose_sequential_sums():
    budgets = [PrivacyBudget(1.0, 1e-6), PrivacyBudget(2.0), PrivacyBudget(0.25, 3e-6)]
    total = compose_sequential(budgets)
    assert total.epsilon == 3.25
    assert total.delta == pytest.approx(4e-6, rel=1e-15)
    # Generators are accepted, and the sum is exactly rounded (math.fsum).
    assert compose_sequential(PrivacyBudget(0.1) for _ in range(10)) == PrivacyBudget(1.0)
    assert sum([0.1] * 10) != 1.0  # why the exact sum matters


def test_compose_sequential_caps_delta_at_one():
    total = compose_sequential([PrivacyBudget(1.0, 0.6), PrivacyBudget(1.0, 0.6)])
    assert total == PrivacyBudget(2.0, 1.0)


def test_compose_sequential_empty_is_zero():
    assert compose_sequential([]) == PrivacyBudget(0.0, 0.0)


def test_compose_parallel_takes_componentwise_max():
    budgets = [PrivacyBudget(1.0, 1e-6), PrivacyBudget(2.0), PrivacyBudget(0.5, 3e-6)]
    assert compose_parallel(budgets) == PrivacyBudget(2.0, 3e-6)
    assert compose_parallel(iter(budgets)) == PrivacyBudget(2.0, 3e-6)
    assert compose_parallel([PrivacyBudget(0.7, 1e-9)]) == PrivacyBudget(0.7, 1e-9)


def test_compose_parallel_empty_is_zero():
    assert compose_parallel([]) == PrivacyBudget(0.0, 0.0)
    assert compose_parallel(iter(())) == PrivacyBudget(0.0, 0.0)


# --------------------------------------------------------------------------- spends


def test_leaf_records_mechanism_budget_and_params():
    s = PrivacySpend.leaf("RRWithPrior", 1.5, 1e-7, stage=2, k=3)
    assert s.mechanism == "RRWithPrior"
    assert s.budget == PrivacyBudget(1.5, 1e-7)
    assert (s.epsilon, s.delta) == (1.5, 1e-7)
    assert s.params == {"stage": 2, "k": 3}
    assert s.composition == "leaf"
    assert s.parts == ()


def test_leaf_validates_budget():
    with pytest.raises(ValueError, match="epsilon"):
        PrivacySpend.leaf("RR", -1.0)
    with pytest.raises(ValueError, match="delta"):
        PrivacySpend.leaf("RR", 1.0, 1.5)


def test_nested_composition_budget():
    # LP-MST style: a prior from a noisy histogram, then stages on disjoint parts.
    prior = PrivacySpend.leaf("histogram", 0.5, 1e-6)
    stages = [
        PrivacySpend.leaf("RRWithPrior", 1.0, stage=0),
        PrivacySpend.leaf("RRWithPrior", 2.0, 1e-7, stage=1),
        PrivacySpend.leaf("RRWithPrior", 1.5, 2e-6, stage=2),
    ]
    parallel = PrivacySpend.compose("stages", stages, "parallel", n_stages=3)
    assert parallel.budget == PrivacyBudget(2.0, 2e-6)
    assert parallel.composition == "parallel"
    assert parallel.parts == tuple(stages)
    assert parallel.params == {"n_stages": 3}

    total = PrivacySpend.compose("LP-MST", [prior, parallel], "sequential")
    assert total.epsilon == 2.5
    assert total.delta == pytest.approx(3e-6, rel=1e-15)
    assert total.composition == "sequential"
    assert total.parts == (prior, parallel)
    assert total.parts[1].parts[1].params == {"stage": 1}

    # The other nesting: parallel of sequential chains.
    chains = [
        PrivacySpend.compose("chain", [prior, stages[0]], "sequential"),
        PrivacySpend.compose("chain", [stages[1], stages[2]], "sequential"),
    ]
    outer = PrivacySpend.compose("outer", chains, "parallel")
    assert outer.epsilon == 3.5
    assert outer.delta == pytest.approx(2.1e-6, rel=1e-15)


def test_compose_of_nothing():
    assert PrivacySpend.compose("none", [], "sequential").budget == PrivacyBudget(0.0)
    assert PrivacySpend.compose("none", [], "parallel").budget == PrivacyBudget(0.0)


@pytest.mark.parametrize("composition", ["leaf", "Sequential", "series", "max", None])
def test_compose_rejects_unknown_composition(composition):
    parts = [PrivacySpend.leaf("RR", 1.0)]
    with pytest.raises(ValueError, match="composition"):
        PrivacySpend.compose("x", parts, composition)


def test_spend_is_immutable():
    s = PrivacySpend.leaf("RR", 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.budget = PrivacyBudget(0.0)


def test_compose_rejects_parts_that_are_not_spends():
    with pytest.raises(TypeError, match="PrivacySpend"):
        PrivacySpend.compose("x", [PrivacyBudget(1.0)], "sequential")


def test_direct_construction_states_exactly_what_the_parts_compose_to():
    parts = (PrivacySpend.leaf("RR", 1.0), PrivacySpend.leaf("RR", 2.0, 1e-6))
    assert PrivacySpend("x", PrivacyBudget(3.0, 1e-6), {}, "sequential", parts).epsilon == 3.0
    # Neither less than the parts compose to, nor more: up to commit 05b8ffa an
    # overstated node was admitted, and the tight total (which composes the parts)
    # then said less than its budget.
    for budget, composition in [((2.0, 1e-6), "sequential"), ((2.0, 0.0), "parallel"),
                                ((5.0, 1e-5), "sequential"), ((2.0, 1e-5), "parallel")]:
        with pytest.raises(ValueError, match=f"is not the {composition} composition"):
            PrivacySpend("x", PrivacyBudget(*budget), {}, composition, parts)
    with pytest.raises(ValueError, match="composition"):
        PrivacySpend("x", PrivacyBudget(3.0), {}, "serial", parts)
    with pytest.raises(ValueError, match="leaf"):
        PrivacySpend("x", PrivacyBudget(3.0), {}, "leaf", parts)
    with pytest.raises(TypeError, match="budget"):
        PrivacySpend("x", 1.0)


def test_a_gaussian_record_is_checked_without_overflow_at_a_huge_epsilon():
    # e^eps Phi(.) overflowed past eps = 709; the profile is now evaluated in log space.
    from sklearn_labeldp.accounting import gaussian_epsilon

    mu = 1414.2
    epsilon = gaussian_epsilon(mu, 1e-5)
    assert epsilon > 1e5
    spend = PrivacySpend.leaf("Gaussian", epsilon, 1e-5, description=("gaussian", mu))
    assert spend.epsilon == epsilon
    for wrong in (0.99 * epsilon, 1.01 * epsilon):
        with pytest.raises(ValueError, match="implies"):
            PrivacySpend.leaf("Gaussian", wrong, 1e-5, description=("gaussian", mu))
