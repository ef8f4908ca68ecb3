"""Every row of the randomizer table, tested by being a row.

``RANDOMIZERS`` (``regression/_randomizers.py``) holds everything
:class:`NoisyLabelRegressor` dispatches on. Each row is checked here for what
the estimator relies on: that its release is as private as its ledger record
says (an event audit on the two ends of the label range), that the record is
the one its description implies at the planned epsilon, and that its release
has the first two moments its row states (what the post-processing search
and the debiasing use). A new row is tested by being added.
"""

import numpy as np
import pytest

from sklearn_labeldp import NoisyLabelRegressor
from sklearn_labeldp.audit import event_privacy_audit
from sklearn_labeldp.regression._randomizers import RANDOMIZERS, RandomizerSetting

RANGE = (0.0, 1.0)
PRIOR = (np.array([0.0, 0.25, 0.5, 0.75, 1.0]), np.array([0.1, 0.2, 0.4, 0.2, 0.1]))
EPSILON, DELTA = 1.0, 1e-5
N_DRAWS = 200_000


def _planned(name):
    row = RANDOMIZERS[name]
    setting = RandomizerSetting(EPSILON, DELTA, RANGE, "squared")
    prior = PRIOR if row.uses_prior else None
    params = {"mechanism": name, "release_epsilon": EPSILON, **row.plan(setting)}
    if row.bins is not None:
        params.update(row.bins(setting, prior))
    return row, setting, params, prior


def _release(name, y, seed):
    row, setting, params, prior = _planned(name)
    return row.release(np.asarray(y, dtype=float), epsilon=EPSILON, label_range=RANGE,
                       random_state=seed, **row.kwargs(setting, params, prior))


@pytest.mark.parametrize("name", RANDOMIZERS)
def test_the_release_is_as_private_as_the_record_says(name):
    row, setting, params, _ = _planned(name)
    record = row.spend(row.name, setting, params)
    assert record.epsilon == pytest.approx(EPSILON, rel=1e-9)
    assert record.mechanism == row.name
    low = _release(name, np.full(N_DRAWS, RANGE[0]), 1)
    high = _release(name, np.full(N_DRAWS, RANGE[1]), 2)
    # Events fixed before looking at these draws: "at most t" for quantiles of
    # independent draws from the middle of the range, both directions.
    thresholds = np.unique(np.quantile(_release(name, np.full(4000, 0.5), 3),
                                       np.linspace(0.05, 0.95, 7)))
    lower_bounds = []
    for t in thresholds:
        for a, b in ((low, high), (high, low)):
            audit = event_privacy_audit(a <= t, b <= t, confidence=0.999)
            lower_bounds.append(audit.epsilon_lower(record.delta))
    assert max(lower_bounds) <= record.epsilon
    # Not vacuous: the events do see the mechanism's privacy loss.
    assert max(lower_bounds) > 0.3 * record.epsilon


@pytest.mark.parametrize("name", RANDOMIZERS)
def test_the_release_has_the_moments_its_row_states(name):
    row, setting, params, prior = _planned(name)
    scale, shift, shift_squares = row.moments(setting, params, prior)
    rng = np.random.default_rng(4)
    y = rng.choice(PRIOR[0], size=N_DRAWS, p=PRIOR[1])
    z = _release(name, y, 5)
    if row.shrinks:
        # b(y), the value a release stands for, is RR-on-Bins' output of y's bin:
        # for labels on the prior's support, the output its law moves most to.
        assert 0 < scale < 1
        return _check_shrinking_moments(params, y, z, scale, shift)
    assert (scale, shift) == (1.0, 0.0)
    standard_error = z.std() / np.sqrt(z.size)
    assert abs(np.mean(z - y)) < 4 * standard_error  # unbiased: E[z | y] = y
    # E[z^2 | y] = y^2 + shift_squares (the noise variance, averaged over the prior).
    excess = np.square(z) - np.square(y)
    assert np.mean(excess) == pytest.approx(shift_squares, abs=4 * excess.std() / np.sqrt(z.size))


def _check_shrinking_moments(params, y, z, scale, shift):
    outputs = np.asarray(params["bin_outputs"])
    for value in np.unique(y):
        released = z[y == value]
        # The output RR-on-Bins keeps with probability p: the most frequent one.
        kept, counts = np.unique(released, return_counts=True)
        b = kept[np.argmax(counts)]
        assert b in outputs
        standard_error = released.std() / np.sqrt(released.size)
        assert abs(released.mean() - (scale * b + shift)) < 4 * standard_error


@pytest.mark.parametrize("name", RANDOMIZERS)
def test_the_estimator_records_and_releases_through_the_row(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.uniform(*RANGE, size=300)
    prior = PRIOR if RANDOMIZERS[name].uses_prior else None
    reg = NoisyLabelRegressor(mechanism=name, epsilon=EPSILON, label_range=RANGE,
                              prior=prior, random_state=0).fit(X, y)
    assert reg.privacy_spend_.mechanism == RANDOMIZERS[name].name
    assert reg.epsilon_ == pytest.approx(EPSILON, rel=1e-9)
    row, setting, params, _ = _planned(name)
    for key, value in params.items():
        if key != "mechanism":
            np.testing.assert_allclose(reg.mechanism_params_[key], value, err_msg=key)


@pytest.mark.parametrize("name", RANDOMIZERS)
def test_the_vote_inflation_is_public_and_follows_the_noise(name):
    # The default base's factor reads the setting and planned parameters only (no
    # prior: it is resolved before the DP histogram exists), is >= 1, falls as
    # epsilon grows, and for an unbiased release with its own variance in the row's
    # moments is 1 + 12 variance / width^2 (labels spread evenly over the range).
    row = RANDOMIZERS[name]
    if row.vote_inflation is None:
        return
    factors = []
    for epsilon in (0.5, 1.0, 4.0):
        setting = RandomizerSetting(epsilon, DELTA, (0.0, 10.0), "squared")
        params = row.plan(setting)
        factors.append(row.vote_inflation(setting, params))
        if not row.uses_prior:  # additive noise: its variance is in the row's moments
            scale, _, variance = row.moments(setting, params, None)
            assert scale == 1.0
            assert factors[-1] == pytest.approx(1 + 12 * variance / 10.0**2)
    assert factors == sorted(factors, reverse=True) and factors[-1] >= 1.0


def test_a_new_row_is_all_the_estimator_and_these_tests_need(monkeypatch):
    # The developers' recipe: a release function, a row, its export and API entry.
    # Here the row reuses the Laplace release under a new key: nothing else in the
    # library changes, and the estimator and every test above take it as it is.
    from dataclasses import replace

    from sklearn.utils._param_validation import StrOptions

    row = replace(RANDOMIZERS["laplace"], name="recipe example")
    monkeypatch.setitem(RANDOMIZERS, "recipe_example", row)
    monkeypatch.setitem(NoisyLabelRegressor._parameter_constraints, "mechanism",
                        [StrOptions(set(RANDOMIZERS))])
    test_the_release_is_as_private_as_the_record_says("recipe_example")
    test_the_release_has_the_moments_its_row_states("recipe_example")
    test_the_estimator_records_and_releases_through_the_row("recipe_example")
