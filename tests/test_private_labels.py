import numpy as np
import pytest

from sklearn_labeldp._private_labels import PrivateLabels


def identity(y, **kwargs):
    return y


def test_release_passes_labels_to_the_mechanism_once():
    labels = PrivateLabels(np.array([3, 1, 2, 0]), n_classes=4, epsilon=1.0)
    out = labels.release(lambda y, shift: y + shift, [2, 0], shift=10)
    assert out.tolist() == [12, 13]
    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(identity, [1, 2])
    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(identity, [1, 1])
    assert labels.release(identity, [1, 3]).tolist() == [1, 0]


def test_refused_release_calls_no_mechanism_and_spends_nothing():
    labels = PrivateLabels(np.array([0, 1, 0]), n_classes=2, epsilon=1.0)
    labels.release(identity, [0])

    def fail(y, **kwargs):
        raise AssertionError("the mechanism saw labels")

    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(fail, [0, 1])
    assert labels.spent.tolist() == [1.0, 0.0, 0.0]
    assert labels.release(identity, [1, 2]).tolist() == [1, 0]


def test_accounted_releases_compose_sequentially_up_to_the_budget():
    labels = PrivateLabels(np.array([0, 1, 1, 0]), n_classes=2, epsilon=1.0)
    # A histogram-like release of every label at 0.3, then two disjoint
    # stages at 0.7: each example spends 0.3 + 0.7 = 1.0.
    assert labels.release(identity, np.arange(4), privacy_cost=0.3).tolist() == [0, 1, 1, 0]
    labels.release(identity, [0, 2], privacy_cost=0.7, epsilon=0.7)
    labels.release(identity, [1, 3], privacy_cost=0.7)
    np.testing.assert_allclose(labels.spent, 1.0)
    with pytest.raises(RuntimeError, match="beyond the planned budget"):
        labels.release(identity, [3], privacy_cost=0.01)


def test_rounding_slack_and_duplicates_cost_twice():
    eps, eps_p = 0.3, 0.1  # eps_p + (eps - eps_p) is not exactly eps in floats
    labels = PrivateLabels(np.zeros(3, dtype=int), n_classes=2, epsilon=eps)
    labels.release(identity, [0, 1, 2], privacy_cost=eps_p)
    labels.release(identity, [0, 1, 2], privacy_cost=eps - eps_p)
    labels = PrivateLabels(np.zeros(3, dtype=int), n_classes=2, epsilon=1.0)
    labels.release(identity, [0, 0], privacy_cost=0.5)
    assert labels.spent.tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="budget"):
        labels.release(identity, [1, 1], privacy_cost=0.6)


def test_mixing_a_whole_budget_release_with_accounted_ones():
    labels = PrivateLabels(np.array([0, 1]), n_classes=2, epsilon=2.0)
    labels.release(identity, [0], privacy_cost=0.5)
    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(identity, [0])  # a plain release costs the whole budget
    labels.release(identity, [1])
    with pytest.raises(RuntimeError, match="budget"):
        labels.release(identity, [1], privacy_cost=0.1)


def test_privacy_cost_must_cover_the_mechanism_epsilon():
    labels = PrivateLabels(np.array([0, 1]), n_classes=2, epsilon=1.0)
    with pytest.raises(ValueError, match="privacy_cost of only"):
        labels.release(identity, [0], privacy_cost=0.5, epsilon=0.6)
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="privacy_cost"):
            labels.release(identity, [0], privacy_cost=bad)
    assert labels.spent.tolist() == [0.0, 0.0]


def test_the_budget_must_be_finite_and_positive():
    for bad in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
            PrivateLabels(np.array([0, 1]), n_classes=2, epsilon=bad)
