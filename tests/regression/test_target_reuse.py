"""NoisyLabelRegressor's post-processing protocol and RR-on-Bins' debiasing: the score of a model
on the released labels is an unbiased estimate of its score on the labels they stand for, and a
post-processing search of base regressors costs one epsilon."""

import dataclasses
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.datasets import make_friedman1
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

from sklearn_labeldp import BudgetAccountant, NoisyLabelRegressor
from sklearn_labeldp._target_adapters import ReusableRealTargets, TargetReuseMixin
from sklearn_labeldp.mechanisms import (
    gaussian_label,
    laplace_label,
    optimal_bins,
    rr_on_bins_distribution,
    staircase_label,
    unbiased_randomizer_distribution,
)
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.regression._moments import staircase_variance
from sklearn_labeldp.regression._randomizers import (
    AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES,
    resolve_debias,
)

RANGE = (0.0, 4.0)
PRIOR = (np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([0.1, 0.3, 0.3, 0.2, 0.1]))


class FirstColumn(RegressorMixin, BaseEstimator):
    """A fixed model: predicts the first column of X (fit learns nothing)."""

    def fit(self, X, y):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        return np.asarray(X, dtype=float)[:, 0]


def _fitted(mechanism, epsilon=1.0, **kwargs):
    """A regressor fitted with the public prior (its moments are what is tested)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), rng.choice(PRIOR[0], size=50)
    prior = PRIOR if mechanism in ("rr_on_bins", "unbiased") else None
    return NoisyLabelRegressor(KNeighborsRegressor(5), epsilon=epsilon, label_range=RANGE,
                               mechanism=mechanism, prior=prior, random_state=0,
                               **kwargs).fit(X, y)


def _expected_scores(reuse, predictions, outputs, law):
    """The exact expectation of (observed, unbiased) scores, row i released from law[i]."""
    n, m = law.shape
    # One row per (label, output) pair; the mean over rows of a score is linear, so
    # the expectation is the law-weighted sum of each pair's one-row score.
    X = np.repeat(predictions, m)[:, None]
    pairs = dataclasses.replace(reuse, targets=np.tile(outputs, n))
    per_pair = np.array([pairs.scores(FirstColumn(), X, [r]) for r in range(n * m)])
    return (law.reshape(-1, 1) * per_pair).sum(axis=0) / n


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("correction", ["none", "predictions"])
def test_rr_on_bins_score_is_exactly_unbiased_for_the_bin_values(epsilon, correction):
    reuse = _fitted("rr_on_bins", epsilon).reusable_targets()
    assert isinstance(reuse, ReusableRealTargets) and reuse.kind == "real"
    reuse = dataclasses.replace(reuse, correction=correction)
    outputs, law = rr_on_bins_distribution(epsilon=epsilon, prior=PRIOR, label_range=RANGE)
    bin_outputs, bins = optimal_bins(epsilon=epsilon, prior=PRIOR, label_range=RANGE)
    b = bin_outputs[bins]  # what each label's release stands for
    # The affine maps are unbiased for b(y) and b(y)^2 under the exact law.
    assert_allclose(law @ ((outputs - reuse.shift) / reuse.scale), b, atol=1e-12)
    assert_allclose(law @ ((outputs**2 - reuse.shift_squares) / reuse.scale), b**2, atol=1e-11)
    f = np.array([0.5, 1.5, 1.0, 3.5, 2.0])  # a model's predictions for the five labels
    observed, unbiased = _expected_scores(reuse, f, outputs, law)
    read = (f - reuse.shift) / reuse.scale if correction == "predictions" else f
    assert unbiased == pytest.approx(-np.mean((read - b) ** 2), abs=1e-10)
    assert abs(observed - unbiased) > 0.1  # the raw score against the releases is biased


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_unbiased_randomizers_score_is_exact_for_labels_that_follow_its_prior(epsilon):
    reuse = _fitted("unbiased", epsilon).reusable_targets()
    assert (reuse.scale, reuse.shift) == (1.0, 0.0)
    outputs, law = unbiased_randomizer_distribution(epsilon=epsilon, prior=PRIOR,
                                                    label_range=RANGE)
    # Rows whose labels follow the prior: 1, 3, 3, 2, 1 of each value.
    labels = np.repeat(PRIOR[0], [1, 3, 3, 2, 1])
    rows = np.repeat(np.arange(5), [1, 3, 3, 2, 1])
    f = np.linspace(0.5, 3.5, labels.size)
    observed, unbiased = _expected_scores(reuse, f, outputs, law[rows])
    assert unbiased == pytest.approx(-np.mean((f - labels) ** 2), abs=1e-6)
    assert observed < unbiased - 1.0  # the releases' variance, left in the raw score


def test_staircase_variance_matches_its_samples():
    draws = staircase_label(np.zeros(400_000), epsilon=1.5, label_range=(0, 2),
                            random_state=0)
    expected = staircase_variance(1.5, _fitted("staircase", 1.5).mechanism_params_["gamma"], 2.0)
    assert np.var(draws) == pytest.approx(expected, rel=0.015)


@pytest.mark.parametrize("mechanism,draw", [
    ("laplace", lambda y, p, rs: laplace_label(y, epsilon=p["release_epsilon"],
                                               label_range=RANGE, random_state=rs)),
    ("gaussian", lambda y, p, rs: gaussian_label(y, epsilon=p["release_epsilon"],
                                                 delta=1e-5, label_range=RANGE,
                                                 method="exact", random_state=rs)),
    ("staircase", lambda y, p, rs: staircase_label(y, epsilon=p["release_epsilon"],
                                                   gamma=p["gamma"], label_range=RANGE,
                                                   random_state=rs)),
])
def test_additive_noise_score_is_the_observed_one_minus_the_noise_variance(mechanism, draw):
    model = _fitted(mechanism, 2.0)
    reuse = model.reusable_targets()
    assert (reuse.scale, reuse.shift, reuse.correction) == (1.0, 0.0, "none")
    rng = np.random.default_rng(1)
    y = rng.uniform(*RANGE, size=200_000)
    f = np.clip(y + rng.normal(0, 0.7, size=y.size), *RANGE)  # a decent model
    released = dataclasses.replace(reuse, targets=draw(y, model.mechanism_params_, 2))
    observed, unbiased = released.scores(FirstColumn(), f[:, None], np.arange(y.size))
    assert unbiased == pytest.approx(observed + reuse.shift_squares)
    z = released.targets
    per_row = f * (f - 2 * z) + z**2
    standard_error = per_row.std() / math.sqrt(y.size)
    truth = -np.mean((f - y) ** 2)
    assert abs(unbiased - truth) < 4 * standard_error
    assert abs(observed - truth) > 20 * standard_error


def test_debias_rule_and_what_each_option_fits():
    assert issubclass(NoisyLabelRegressor, TargetReuseMixin)
    # "auto" from n and p - q; a user value wins; unbiased mechanisms have nothing to undo.
    n = 1000
    bound = math.sqrt(AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES / n)
    assert resolve_debias("auto", "rr_on_bins", bound * 1.01, n) == "predictions"
    assert resolve_debias("auto", "rr_on_bins", bound * 0.99, n) == "none"
    assert resolve_debias("targets", "rr_on_bins", 0.01, n) == "targets"
    assert resolve_debias("auto", "laplace", 1.0, n) == "none"
    X, y = make_friedman1(600, random_state=0)
    fits = {debias: NoisyLabelRegressor(LinearRegression(), epsilon=2.0, label_range=(0, 30),
                                        debias=debias, random_state=0).fit(X, y)
            for debias in ("none", "predictions", "targets")}
    params = fits["none"].mechanism_params_
    bins, epsilon = params["bin_outputs"], params["release_epsilon"]
    p = math.exp(epsilon) / (math.exp(epsilon) + bins.size - 1)
    q = p / math.exp(epsilon)
    assert params["release_scale"] == pytest.approx(p - q)
    assert params["release_shift"] == pytest.approx(q * bins.sum())
    assert [f.mechanism_params_["debias"] for f in fits.values()] == list(fits)
    raw = fits["none"].predict(X)
    deshrunk = (raw - params["release_shift"]) / params["release_scale"]
    assert_allclose(fits["predictions"].predict(X), deshrunk)
    # Least squares is affine-equivariant: training on the debiased releases is the same.
    assert_allclose(fits["targets"].predict(X), deshrunk, rtol=1e-8, atol=1e-8)
    assert np.std(deshrunk) > np.std(raw) * 1.05  # the shrinkage was undone
    default = NoisyLabelRegressor(LinearRegression(), epsilon=2.0,
                                  label_range=(0, 30), random_state=0).fit(X, y)
    assert default.mechanism_params_["debias"] == resolve_debias(
        "auto", "rr_on_bins", params["release_scale"], len(y)) == "predictions"
    tiny = NoisyLabelRegressor(LinearRegression(), epsilon=0.05, label_range=(0, 30),
                               random_state=0).fit(X, y)
    assert tiny.mechanism_params_["debias"] == "none"  # 600 (p - q)^2 is about 0.3


def test_post_processing_search_costs_one_epsilon_and_picks_a_sensible_base():
    X, y = make_friedman1(1500, noise=1.0, random_state=0)
    X_test, y_test = make_friedman1(1000, noise=1.0, random_state=1)
    acc = BudgetAccountant()
    candidates = [DummyRegressor(), DecisionTreeRegressor(max_depth=1),
                  KNeighborsRegressor(n_neighbors=20)]
    search = PrivateGridSearchCV(
        NoisyLabelRegressor(label_range=(0, 30), debias="predictions"),
        {"estimator": candidates}, epsilon=4.0, strategy="post_processing", cv=3,
        random_state=0, accountant=acc,
    ).fit(X, y)
    assert len(acc.spends) == 1 and acc.total().epsilon == pytest.approx(4.0)
    assert isinstance(search.best_estimator_.estimator_, KNeighborsRegressor)
    results = search.cv_results_
    assert search.best_score_ == results["mean_test_score"].max()
    assert results["rank_test_score"][search.best_index_] == 1
    # Each candidate's unbiased CV score is near its true negative test MSE (as the
    # final model would be trained), and the raw score against the releases is not.
    best = search.best_estimator_
    reuse = best.reusable_targets()
    truth = []
    for candidate in candidates:
        model = reuse.fit(clone(candidate), X, np.arange(len(y)))
        truth.append(-np.mean((reuse.predict(model, X_test) - y_test) ** 2))
    assert np.argmax(truth) == search.best_index_
    assert_allclose(results["mean_test_score"], truth, rtol=0.35)
    assert best.predict(X_test).shape == (1000,)
