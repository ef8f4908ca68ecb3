"""The defaults of the randomized-response meta-estimators: resolved from public
quantities only, recorded, and overridden by a user's value."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.classifiers._default_base import (
    default_n_neighbors,
    default_uses_trees,
    rappor_vote_inflation,
    rr_vote_inflation,
)
from sklearn_labeldp.classifiers._rr_with_prior import (
    auto_stage_fractions,
    auto_temperature,
    auto_warm_start,
)
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.mechanisms import randomized_response, rappor, rappor_probabilities

META = (RRWithPriorClassifier, VectorApproxClassifier, ALIBIClassifier)


def _vote_inflation_by_simulation(targets, y):
    """Var(D) / g^2 for D = T_0 - T_1 on labels split evenly between classes 0 and 1."""
    d = targets[:, 0] - targets[:, 1]
    gap = (d[y == 0].mean() - d[y == 1].mean()) / 2
    return d.var() / gap**2


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_vote_inflation_matches_the_mechanisms(epsilon):
    rng = np.random.default_rng(0)
    y = np.arange(200_000) % 2
    n_classes = 4
    rr = np.eye(n_classes)[randomized_response(y, epsilon=epsilon, n_classes=n_classes,
                                               random_state=rng)]
    assert _vote_inflation_by_simulation(rr, y) == pytest.approx(
        rr_vote_inflation(epsilon, n_classes), rel=0.05)
    bits = rappor(y, epsilon=epsilon, n_classes=n_classes, random_state=rng).astype(float)
    assert _vote_inflation_by_simulation(bits, y) == pytest.approx(
        rappor_vote_inflation(epsilon), rel=0.05)
    # Closed forms: coth^2(eps / 2) for binary RR; RAPPOR's from its bit law.
    assert rr_vote_inflation(epsilon, 2) == pytest.approx(1 / math.tanh(epsilon / 2) ** 2)
    q_plus, q_minus = rappor_probabilities(epsilon)
    assert rappor_vote_inflation(epsilon) == pytest.approx(
        (q_plus**2 + q_minus**2) / (q_plus - q_minus) ** 2)


def test_default_n_neighbors_follows_the_noise_and_the_cap():
    ks = [default_n_neighbors(30_000, 2, rr_vote_inflation(eps, 2)) for eps in (0.5, 1, 2, 8)]
    assert ks == [167, 47, 17, 10]  # 10 coth^2(eps / 2), rounded; 10 without noise
    assert default_n_neighbors(30_000, 2, rr_vote_inflation(1e3, 2)) == 10
    assert default_n_neighbors(100, 2, rr_vote_inflation(0.5, 2)) == 25  # n / (2 K)
    assert default_n_neighbors(3, 2, rr_vote_inflation(0.5, 2)) == 1
    # An epsilon so small that the inflation overflows still gives the cap.
    assert default_n_neighbors(1000, 2, rr_vote_inflation(1e-300, 2)) == 250
    assert default_n_neighbors(1000, 2, rappor_vote_inflation(1e-300)) == 250


def _fit(cls, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(classes=[0, 1, 2], random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("cls", META)
def test_default_base_is_resolved_from_public_inputs_and_recorded(cls):
    X, y = make_circle_gaussians(600, 3, sigma=0.3, random_state=0)
    clf = _fit(cls, X, y, epsilon=1.0)
    permuted = _fit(cls, X, np.random.default_rng(1).permutation(y), epsilon=1.0)
    k = clf.mechanism_params_["n_neighbors"]
    inflation = (rappor_vote_inflation(1.0) if cls is VectorApproxClassifier
                 else rr_vote_inflation(1.0, 3))
    assert k == default_n_neighbors(600, 3, inflation) > 10
    assert clf.estimator_.n_neighbors == k
    assert permuted.mechanism_params_["n_neighbors"] == k
    assert isinstance(clf.estimator_, KNeighborsClassifier if cls is RRWithPriorClassifier
                      else KNeighborsRegressor)
    assert clf.mechanism_params_["default_base"] == type(clf.estimator_).__name__
    # Less noise, fewer neighbours (on 150 rows, still a k-NN at eps 8).
    assert _fit(cls, X[:150], y[:150], epsilon=8.0).estimator_.n_neighbors == 10


def _trees(clf):
    # VectorApproxClassifier wraps a classifier in one fit per bit column.
    model = clf.estimator_
    return getattr(model, "estimators_", [model])[0]


@pytest.mark.parametrize("cls", META)
def test_default_base_is_boosted_trees_where_the_noisy_labels_suffice(cls):
    # n / (K rho^2) >= 60 (randomized response) or 150 (soft and bit targets):
    # 600 rows of three classes at eps 8 (about 200), a k-NN at eps 1 (under 20).
    X, y = make_circle_gaussians(600, 3, sigma=0.3, random_state=0)
    inflation = (rappor_vote_inflation(8.0) if cls is VectorApproxClassifier
                 else rr_vote_inflation(8.0, 3))
    assert default_uses_trees(600, 3, inflation, cls._trees_min_rows)
    fits = [_fit(cls, X, labels, epsilon=8.0)
            for labels in (y, np.random.default_rng(2).permutation(y), np.zeros_like(y))]
    for clf in fits:
        assert clf.mechanism_params_["default_base"] == "HistGradientBoostingClassifier"
        assert clf.mechanism_params_["n_neighbors"] is None
    assert isinstance(_trees(fits[0]), HistGradientBoostingClassifier)
    assert fits[0].score(X, y) > 0.9
    assert _fit(cls, X, y, epsilon=1.0).mechanism_params_["default_base"] != (
        "HistGradientBoostingClassifier")
    # The trees take no sparse matrix: a sparse X keeps the k-NN.
    sparse = _fit(cls, sp.csr_matrix(X), y, epsilon=8.0)
    assert sparse.mechanism_params_["n_neighbors"] == 10


def test_trees_rule_thresholds():
    assert default_uses_trees(120, 2, 1.0, 60) and not default_uses_trees(119, 2, 1.0, 60)
    # The noise counts twice: rho = 2 needs four times the rows.
    assert default_uses_trees(480, 2, 2.0, 60) and not default_uses_trees(479, 2, 2.0, 60)
    assert not default_uses_trees(10**9, 2, math.inf, 60)


@pytest.mark.parametrize("cls", META)
def test_a_user_base_is_used_as_given(cls):
    X, y = make_circle_gaussians(300, 3, sigma=0.3, random_state=0)
    base = (KNeighborsClassifier(3) if cls is RRWithPriorClassifier else KNeighborsRegressor(3))
    clf = _fit(cls, X, y, epsilon=0.5, estimator=base)
    assert clf.estimator_.n_neighbors == 3
    assert clf.mechanism_params_["n_neighbors"] is None


@pytest.mark.parametrize("cls", META)
def test_the_noise_adapted_default_beats_ten_neighbours_at_a_small_epsilon(cls):
    X, y = make_circle_gaussians(2000, 2, sigma=0.3, random_state=0)
    X_test, y_test = make_circle_gaussians(1000, 2, sigma=0.3, random_state=1)
    ten = KNeighborsClassifier(10) if cls is RRWithPriorClassifier else KNeighborsRegressor(10)
    for seed in range(2):
        default = cls(epsilon=0.5, classes=[0, 1], random_state=seed).fit(X, y)
        fixed = cls(ten, epsilon=0.5, classes=[0, 1], random_state=seed).fit(X, y)
        assert default.score(X_test, y_test) > fixed.score(X_test, y_test) + 0.05


def test_lp_mst_schedule_rules():
    assert auto_stage_fractions(1).tolist() == [1.0]
    assert auto_stage_fractions(2) == pytest.approx([0.6, 0.4])
    assert auto_stage_fractions(3) == pytest.approx([0.4, 0.3, 0.3])
    # 1 - s (1 - s), s the keep-minus-flip probability: 0.75 at s = 1/2, 1 at both ends.
    s = math.expm1(2.0) / (math.exp(2.0) + 9)
    assert auto_temperature(2.0, 10) == pytest.approx(1 - s * (1 - s))
    assert auto_temperature(math.log(3.0), 2) == pytest.approx(0.75)
    assert 0.99 < auto_temperature(1e-3, 10) < 1.0
    assert 0.99 < auto_temperature(12.0, 10) < 1.0
    assert auto_warm_start(LogisticRegression(), 2)
    assert not auto_warm_start(LogisticRegression(), 1)
    assert not auto_warm_start(KNeighborsClassifier(), 2)  # no warm_start parameter
    assert not auto_warm_start(RandomForestClassifier(), 2)  # warm_start grows the forest


def test_lp_mst_schedule_is_resolved_from_public_inputs_and_recorded():
    X, y = make_circle_gaussians(600, 3, sigma=0.3, random_state=0)
    fits = [_fit(RRWithPriorClassifier, X, labels, estimator=LogisticRegression(), epsilon=2.0,
                 n_stages=2)
            for labels in (y, np.random.default_rng(1).permutation(y))]
    for clf in fits:
        assert clf.stage_fractions_ == pytest.approx([0.6, 0.4])
        assert clf.temperature_ == auto_temperature(2.0, 3)
        assert clf.warm_start_ is True
        assert all(est.warm_start for est in clf.estimators_)
        params = clf.mechanism_params_
        assert (params["temperature"], params["warm_start"]) == (clf.temperature_, True)
        assert params["stage_fractions"] == pytest.approx([0.6, 0.4])
        assert params["n_neighbors"] is None
    one = _fit(RRWithPriorClassifier, X, y, epsilon=2.0)
    assert one.stage_fractions_.tolist() == [1.0] and one.warm_start_ is False


def test_lp_mst_user_schedule_wins():
    X, y = make_circle_gaussians(600, 3, sigma=0.3, random_state=0)
    clf = _fit(RRWithPriorClassifier, X, y, estimator=LogisticRegression(), epsilon=2.0,
               n_stages=2, stage_fractions=[0.3, 0.7], temperature=2.0, warm_start=False)
    assert clf.stage_fractions_.tolist() == [0.3, 0.7]
    assert clf.estimators_[0].n_features_in_ == 2
    assert (clf.temperature_, clf.warm_start_) == (2.0, False)
    assert not any(est.warm_start for est in clf.estimators_)
    even = _fit(RRWithPriorClassifier, X, y, epsilon=2.0, n_stages=2, stage_fractions=None)
    assert even.stage_fractions_.tolist() == [0.5, 0.5]


def test_auto_temperature_uses_a_public_prior_as_given():
    X, y = make_circle_gaussians(600, 3, sigma=0.3, random_state=0)
    prior = np.random.default_rng(0).dirichlet(np.ones(3), size=600)
    labels = [_fit(RRWithPriorClassifier, X, y, epsilon=1.0, prior=prior,
                   temperature=t).privatized_labels_ for t in ("auto", 1.0, 0.5)]
    assert np.array_equal(labels[0], labels[1])
    assert not np.array_equal(labels[0], labels[2])


def test_default_lp_mst_fits_small_data():
    # The fixed 10 neighbours could not predict from a first stage of 8 rows.
    X, y = make_circle_gaussians(20, 3, sigma=0.3, random_state=0)
    clf = _fit(RRWithPriorClassifier, X, y, epsilon=1.0, n_stages=3)
    assert clf.mechanism_params_["n_neighbors"] == 1  # 8 // (2 * 3)
    assert clf.predict(X).shape == (20,)
