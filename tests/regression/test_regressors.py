"""NoisyLabelRegressor and DPLeastSquaresRegressor: privacy records, errors before the charge,
scikit-learn plumbing, and utility at a large epsilon."""

import math
import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.datasets import make_friedman1, make_regression
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp import (
    BudgetAccountant,
    DPLeastSquaresRegressor,
    NoisyLabelRegressor,
    PrivacyLeakWarning,
)
from sklearn_labeldp._private_labels import PrivateLabels, check_real_labels
from sklearn_labeldp.mechanisms import laplace_label

RANGE = (0.0, 30.0)


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(2000, random_state=0)
    return X, y


def test_real_labels_door():
    labels = PrivateLabels.real_valued(np.array([1, 2, 3]), epsilon=1.0)
    assert labels.n_classes is None and labels.n_samples == 3
    out = labels.release(laplace_label, [0, 2], epsilon=1e6, label_range=(0, 3),
                         random_state=0)
    assert_allclose(out, [1.0, 3.0], atol=1e-4)
    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(laplace_label, [0], epsilon=1.0, label_range=(0, 3))
    for bad, error, match in [
        ([1.0, np.nan], ValueError, "finite"), ([[1.0, 2.0]], ValueError, "1-d"),
        (["a", "b"], TypeError, "real numbers"), ([True, False], TypeError, "real numbers"),
        ([1 + 1j], ValueError, "Complex"), ([], ValueError, "empty"),
    ]:
        with pytest.raises(error, match=match):
            check_real_labels(bad)
    with pytest.raises(ValueError, match="X has 3 rows"):
        check_real_labels([1.0, 2.0], n_samples=3)


@pytest.mark.parametrize("mechanism", ["rr_on_bins", "unbiased", "laplace", "gaussian",
                                       "staircase"])
def test_spend_records(friedman, mechanism):
    X, y = friedman
    accountant = BudgetAccountant(delta=0.5)
    reg = NoisyLabelRegressor(KNeighborsRegressor(), epsilon=2.0, label_range=RANGE,
                              mechanism=mechanism, random_state=0, accountant=accountant)
    reg.fit(X, y)
    assert accountant.spends == [reg.privacy_spend_]
    assert reg.epsilon_ == 2.0
    assert reg.delta_ == (1e-5 if mechanism == "gaussian" else 0.0)
    assert reg.predict(X).dtype == np.float64
    if mechanism in ("rr_on_bins", "unbiased"):
        # The DP histogram takes 10% of the budget, the randomizer the rest.
        histogram, randomizer = reg.privacy_spend_.parts
        assert histogram.epsilon == pytest.approx(0.2)
        assert randomizer.epsilon == pytest.approx(1.8)
        assert reg.mechanism_params_["release_epsilon"] == pytest.approx(1.8)
        values, probabilities = reg.prior_
        assert values.size == reg.mechanism_params_["n_prior_values"]
        assert probabilities.sum() == pytest.approx(1.0)
    if mechanism == "rr_on_bins":
        # Every release is one of the bins' outputs.
        assert np.isin(reg.privatized_labels_, reg.mechanism_params_["bin_outputs"]).all()


def test_public_prior_costs_nothing_extra(friedman):
    X, y = friedman
    prior = (np.linspace(0, 30, 7), np.full(7, 1 / 7))
    reg = NoisyLabelRegressor(epsilon=1.0, label_range=RANGE, prior=prior,
                              random_state=0).fit(X, y)
    assert reg.privacy_spend_.composition == "leaf"
    assert reg.mechanism_params_["release_epsilon"] == 1.0
    assert reg.prior_ is not None and "prior_epsilon" not in reg.mechanism_params_


@pytest.mark.parametrize("kwargs, error, match", [
    ({"label_range": (3, 1)}, ValueError, "low < high"),
    ({"label_range": (0, np.inf)}, ValueError, "label_range"),
    ({"label_range": "wide"}, ValueError, "label_range"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"mechanism": "laplace", "prior_epsilon": 0.1}, ValueError, "uses no prior"),
    ({"prior_epsilon": 2.0}, ValueError, "prior_epsilon=2.0 must be < epsilon"),
    ({"prior": ([40.0], [1.0])}, ValueError, "prior values must lie"),
    ({"prior": ([1.0, 2.0], [0.5, 0.6])}, ValueError, "sum to 1"),
    ({"prior": ([1.0], [1.0]), "prior_epsilon": 0.5}, ValueError, "public prior"),
    ({"estimator": LogisticRegression()}, ValueError, "must be a regressor"),
    ({"estimator": KNeighborsRegressor(n_neighbors=-1)}, ValueError, "trial fit"),
    ({"estimator": make_pipeline(StandardScaler(), KNeighborsRegressor(metric="nope"))},
     ValueError, "trial fit"),
])
def test_bad_configuration_costs_nothing(friedman, kwargs, error, match):
    X, y = friedman
    X, y = X[:100], y[:100]
    accountant = BudgetAccountant()
    params = {"epsilon": 1.0, "label_range": RANGE, "accountant": accountant, **kwargs}
    with pytest.raises(error, match=match):
        NoisyLabelRegressor(**params).fit(X, y)
    assert accountant.spends == []


@pytest.mark.parametrize("make", [
    lambda a: NoisyLabelRegressor(epsilon=1.0, label_range=RANGE, accountant=a),
    lambda a: DPLeastSquaresRegressor(epsilon=1.0, label_range=RANGE, accountant=a),
])
@pytest.mark.parametrize("X_bad, y_bad, error, match", [
    (None, [1.0, np.nan], ValueError, "finite"),
    (None, ["a", "b"], TypeError, "real numbers"),
    (None, np.ones((2, 2)), ValueError, "1-d"),
    (None, np.ones(5), ValueError, "rows"),
    ("nan", None, ValueError, "NaN"),
])
def test_bad_data_costs_nothing(friedman, make, X_bad, y_bad, error, match):
    X, y = friedman[0][:2].copy(), friedman[1][:2]
    if X_bad == "nan":
        X[0, 0] = np.nan
    accountant = BudgetAccountant()
    with pytest.raises(error, match=match):
        make(accountant).fit(X, y if y_bad is None else y_bad)
    assert accountant.spends == []


def test_bad_least_squares_configuration_costs_nothing(friedman):
    X, y = friedman
    accountant = BudgetAccountant()
    for kwargs, match in [({"alpha": 0.0}, "alpha"), ({"data_norm": -1.0}, "data_norm"),
                          ({"privacy": "both"}, "privacy"), ({"delta": 0.0}, "delta"),
                          ({"label_range": (1, 1)}, "low < high")]:
        with pytest.raises(ValueError, match=match):
            DPLeastSquaresRegressor(**{"label_range": RANGE, "accountant": accountant,
                                       **kwargs}).fit(X, y)
    assert accountant.spends == []


def test_label_range_none_warns(friedman):
    X, y = friedman
    for reg in (NoisyLabelRegressor(epsilon=1.0), DPLeastSquaresRegressor(epsilon=1.0)):
        with pytest.warns(PrivacyLeakWarning, match="label_range"):
            reg.fit(X, y)
        assert reg.label_range_ == (y.min(), y.max())


def test_least_squares_is_ridge_without_noise():
    X, y = make_regression(500, n_features=4, noise=1.0, random_state=0)
    y = y / 10
    reg = DPLeastSquaresRegressor(epsilon=1e12, alpha=1e-3, label_range=(-100, 100),
                                  data_norm=100.0, random_state=0).fit(X, y)
    # The design is [x, R] / sqrt(2) and the labels are scaled by 1 / 100: the same
    # ridge in those units.
    Z = np.hstack([X, np.full((500, 1), 100.0)]) / np.sqrt(2)
    theta = Ridge(alpha=1e-3, fit_intercept=False).fit(Z, y / 100).coef_
    assert_allclose(reg.coef_, theta[:-1] / np.sqrt(2) * 100, rtol=1e-4)
    assert reg.score(X, y) > 0.99


def test_least_squares_full_dp_records_both_guarantees(friedman):
    X, y = friedman
    reg = DPLeastSquaresRegressor(epsilon=2.0, label_range=RANGE, privacy="full",
                                  data_norm=3.0, random_state=0).fit(X, y)
    params = reg.mechanism_params_
    assert sorted(params["noise_scales"]) == ["G", "b"]
    assert params["label_sensitivities"]["G"] == 0.0
    # A label change moves b twice as far as adding an example: 4 / (2 s^2) vs 2 / (2 s^2).
    assert params["rho"] == pytest.approx(2 * params["example_rho"])
    assert reg.example_epsilon_ < reg.epsilon_
    assert not hasattr(reg, "clipped_fraction_")
    assert reg.score(X, y) > 0.5


def test_pipeline_clone_pickle_and_search(friedman):
    X, y = friedman
    reg = make_pipeline(StandardScaler(), NoisyLabelRegressor(
        KNeighborsRegressor(), epsilon=8.0, label_range=RANGE))
    search = GridSearchCV(reg, {"noisylabelregressor__estimator__n_neighbors": [5, 20]},
                          cv=2).fit(X, y)
    assert search.best_estimator_.score(X, y) > 0.5
    fitted = search.best_estimator_
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        restored = pickle.loads(pickle.dumps(fitted))
    assert_allclose(restored.predict(X[:5]), fitted.predict(X[:5]))
    assert not hasattr(clone(fitted)[-1], "estimator_")


def test_rr_on_bins_regressor_close_to_non_private_at_large_epsilon(friedman):
    X, y = friedman
    base = KNeighborsRegressor(n_neighbors=10)
    private = NoisyLabelRegressor(base, epsilon=8.0, label_range=RANGE,
                                  random_state=0).fit(X[:1500], y[:1500])
    public = clone(base).fit(X[:1500], y[:1500])
    assert private.score(X[1500:], y[1500:]) > public.score(X[1500:], y[1500:]) - 0.1


class _FailsOnLargeFits(KNeighborsRegressor):
    """Passes the label-free trial fit (64 rows), fails on the released labels."""

    def fit(self, X, y):
        if len(y) > 100:
            raise RuntimeError("no")
        return super().fit(X, y)


def test_a_fit_failing_after_the_charge_leaves_no_fitted_attribute(friedman):
    X, y = friedman
    reg = NoisyLabelRegressor(KNeighborsRegressor(), epsilon=8.0, label_range=RANGE,
                              random_state=0).fit(X, y)
    accountant = BudgetAccountant()
    reg.set_params(estimator=_FailsOnLargeFits(), accountant=accountant)
    with pytest.raises(Exception, match="withheld|no"):
        reg.fit(X, y)
    assert accountant.total().epsilon == 8.0  # charged: the failure came after
    assert [name for name in vars(reg) if name.endswith("_") and not name.startswith("_")] == []


def test_the_prior_share_follows_the_release_strength_from_public_n_and_epsilon():
    # prior_epsilon="auto": 0.1 epsilon, 0.3 epsilon when even two-output randomized
    # response at the rest would keep fewer than 50 effective samples.
    from sklearn_labeldp.regression._noisy_labels import auto_prior_epsilon

    assert auto_prior_epsilon(0.5, 309) == pytest.approx(0.15)  # 309 tanh(0.225)^2 = 15
    assert auto_prior_epsilon(1.0, 309) == pytest.approx(0.1)  # 309 tanh(0.45)^2 = 55
    assert auto_prior_epsilon(0.5, 5000) == pytest.approx(0.05)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(309, 3)), rng.uniform(0, 1, 309)
    recorded = []
    for labels in (y, rng.permutation(y), np.zeros(309)):  # public: labels change nothing
        reg = NoisyLabelRegressor(epsilon=0.5, label_range=(0, 1), random_state=0).fit(X, labels)
        recorded.append(reg.mechanism_params_["prior_epsilon"])
        assert reg.privacy_spend_.parts[0].epsilon == pytest.approx(recorded[-1])
    assert recorded == [pytest.approx(0.15)] * 3
    given = NoisyLabelRegressor(epsilon=0.5, prior_epsilon=0.05, label_range=(0, 1),
                                random_state=0).fit(X, y)
    assert given.mechanism_params_["prior_epsilon"] == 0.05  # a user value wins



# ---------------------------------------------------------------- the default configuration


def _v(epsilon):
    """Debiased two-output randomized response's variance per squared width, p q / (p - q)^2."""
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    return p * (1 - p) / (2 * p - 1) ** 2


def _resolved(reg):
    params = reg.mechanism_params_
    return (params["mechanism"], round(params["release_epsilon"], 12),
            round(params.get("prior_epsilon", -1.0), 12), params.get("n_prior_values"),
            params["n_neighbors"], reg.estimator_.n_neighbors, reg.privacy_spend_.mechanism,
            reg.privacy_spend_.epsilon)


@pytest.mark.parametrize("n, epsilon, expected", [
    # Weak release: RR-on-Bins, 30% to the DP histogram, 10 coth(0.35 / 2) neighbours.
    (300, 0.5, ("rr_on_bins", 0.35, 0.15, 4, round(10 / math.tanh(0.175)))),
    # The unbiased randomizer's 10 (1 + 12 v(2)) = 31.7 neighbours fit in 300 / 4 rows:
    # it runs at all of epsilon under the uniform prior (64 values).
    (300, 2.0, ("unbiased", 2.0, 0.0, 64, round(10 * (1 + 12 * _v(2.0))))),
    # 10 (1 + 12 v(1)) = 120.5 neighbours need 482 rows (n / 4): RR-on-Bins below,
    # unbiased from there (1.25 rho^2 = 181 rows binds only below eps 0.61).
    (481, 1.0, ("rr_on_bins", 0.9, 0.1, 4, round(10 / math.tanh(0.45)))),
    (482, 1.0, ("unbiased", 1.0, 0.0, 64, 120)),
    # At eps 0.5, 1.25 rho^2 = 2881.5 rows bind (40 rho = 1,921): RR-on-Bins below 2,882
    # rows (10% to the histogram: 2000 tanh(0.225)^2 = 98 effective samples).
    (2000, 0.5, ("rr_on_bins", 0.45, 0.05, 4, round(10 / math.tanh(0.225)))),
    (2882, 0.5, ("unbiased", 0.5, 0.0, 64, round(10 * (1 + 12 * _v(0.5))))),
    # rho = 1 + 12 v(4) < 1.5: RR-on-Bins, whose bins are fine by then, 10 coth(1.8) = 11.
    (2000, 4.0, ("rr_on_bins", 3.6, 0.4, 16, 11)),
])
def test_the_default_follows_the_noise_by_a_rule_of_public_quantities(n, epsilon, expected):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(n, 3)), rng.uniform(0, 30, n)
    recorded, params = set(), []
    # The labels, permuted, constant or at the range's end: n and epsilon decide alone.
    for labels in (y, rng.permutation(y), np.zeros(n), np.full(n, 30.0)):
        reg = NoisyLabelRegressor(epsilon=epsilon, label_range=RANGE, random_state=0,
                                  accountant=BudgetAccountant(np.inf)).fit(X, labels)
        recorded.add(_resolved(reg))
        params.append(dict(reg.mechanism_params_))
    assert len(recorded) == 1
    if expected[0] == "unbiased":  # nothing in its record comes from a DP release
        assert all(p == params[0] for p in params[1:])
    mechanism, release_epsilon, prior_epsilon, n_values, k, k_fitted, name, total = \
        recorded.pop()
    assert mechanism == expected[0] and n_values == expected[3] and k == expected[4]
    assert release_epsilon == pytest.approx(expected[1])
    assert prior_epsilon == pytest.approx(expected[2])
    assert k_fitted == k and total == pytest.approx(epsilon)
    if mechanism == "unbiased":
        # The uniform prior is public: no histogram, one leaf at all of epsilon.
        assert name == "optimal unbiased randomizer"
        assert reg.privacy_spend_.composition == "leaf"
        values, probabilities = reg.prior_
        assert_allclose(values, np.linspace(*RANGE, 64))
        assert_allclose(probabilities, 1 / 64)
        assert reg.mechanism_params_["debias"] == "none"
    else:
        assert name == "RR-on-Bins+DP histogram prior"
        assert reg.privacy_spend_.parts[0].epsilon == pytest.approx(expected[2])
    # fit resolves the values into fitted attributes; it never writes a parameter.
    assert reg.get_params()["mechanism"] == "auto" and reg.get_params()["estimator"] is None


def test_a_user_value_wins_over_the_default_rule():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(800, 3)), rng.uniform(0, 30, 800)
    kw = {"epsilon": 1.0, "label_range": RANGE, "random_state": 0,
          "accountant": BudgetAccountant(np.inf)}
    assert NoisyLabelRegressor(**kw).fit(X, y).mechanism_params_["mechanism"] == "unbiased"
    # A given estimator is used as given, with the former default, RR-on-Bins.
    given = NoisyLabelRegressor(KNeighborsRegressor(n_neighbors=3), **kw).fit(X, y)
    assert given.mechanism_params_["mechanism"] == "rr_on_bins"
    assert given.mechanism_params_["n_neighbors"] is None
    assert given.estimator_.n_neighbors == 3
    # A given mechanism is used as given; the default base follows its noise.
    bins = NoisyLabelRegressor(mechanism="rr_on_bins", **kw).fit(X, y)
    assert bins.mechanism_params_["mechanism"] == "rr_on_bins"
    assert bins.mechanism_params_["n_neighbors"] == round(10 / math.tanh(0.45))
    # mechanism="unbiased" keeps its DP histogram prior (the uniform one is "auto"'s).
    unbiased = NoisyLabelRegressor(mechanism="unbiased", **kw).fit(X, y)
    assert unbiased.privacy_spend_.parts[0].epsilon == pytest.approx(0.1)
    assert unbiased.mechanism_params_["n_neighbors"] == round(10 * (1 + 12 * _v(0.9)))
    laplace = NoisyLabelRegressor(mechanism="laplace", **kw).fit(X, y)
    assert laplace.mechanism_params_["n_neighbors"] == 800 // 4  # 10 (1 + 12 * 2) > n / 4
    # A given prior_epsilon: its DP histogram, and the rule at the rest of epsilon
    # (rho(0.6) = 33.4: max(40 rho, 1.25 rho^2) = 1,391 rows; RR-on-Bins with 800).
    share = NoisyLabelRegressor(prior_epsilon=0.4, **kw).fit(X, y)
    assert share.mechanism_params_["mechanism"] == "rr_on_bins"
    assert share.mechanism_params_["prior_epsilon"] == 0.4
    bigger = NoisyLabelRegressor(prior_epsilon=0.4, **kw).fit(np.vstack([X, X]),
                                                              np.hstack([y, y]))
    assert bigger.mechanism_params_["mechanism"] == "unbiased"
    assert bigger.privacy_spend_.parts[0].epsilon == pytest.approx(0.4)
    # A public prior or a grid size is used by the resolved randomizer.
    prior = (np.linspace(0, 30, 5), np.full(5, 0.2))
    public = NoisyLabelRegressor(prior=prior, **kw).fit(X, y)
    assert public.mechanism_params_["mechanism"] == "unbiased"
    assert_allclose(public.prior_[0], prior[0])
    assert "prior_epsilon" not in public.mechanism_params_
    grid = NoisyLabelRegressor(n_prior_values=9, **kw).fit(X, y)
    assert grid.prior_[0].size == 9 == grid.mechanism_params_["n_prior_values"]


def test_the_default_rule_functions():
    from sklearn_labeldp.regression._moments import two_output_variance, unbiased_variance
    from sklearn_labeldp.regression._noisy_labels import (
        auto_mechanism,
        auto_unbiased_min_rows,
        default_n_neighbors,
    )

    for epsilon in (0.1, 1.0, 3.0, 30.0):
        assert two_output_variance(epsilon) == pytest.approx(_v(epsilon))
    assert two_output_variance(1e-320) == np.inf and two_output_variance(800.0) == 0.0
    # It stands for the unbiased randomizer's variance under a uniform prior: within
    # 8% up to eps 2 (the rule's range of eps where n / 4 rows matter).
    uniform = (np.linspace(0, 1, 17), np.full(17, 1 / 17))
    for epsilon in (0.45, 0.9, 1.8):
        ratio = unbiased_variance(epsilon, uniform, (0, 1)) / two_output_variance(epsilon)
        assert 1.0 <= ratio < 1.08
    # The rows the unbiased randomizer needs: max(40 rho, 1.25 rho^2), rho = 1 + 12 v(eps).
    for epsilon in (0.25, 0.5, 0.6, 0.62, 0.75, 1.0, 2.0, 3.0):
        rho = 1 + 12 * _v(epsilon)
        assert auto_unbiased_min_rows(epsilon) == pytest.approx(max(40 * rho, 1.25 * rho**2))
    assert auto_unbiased_min_rows(0.6) == pytest.approx(1.25 * (1 + 12 * _v(0.6)) ** 2)
    assert auto_unbiased_min_rows(0.62) == pytest.approx(40 * (1 + 12 * _v(0.62)))
    assert auto_unbiased_min_rows(3.27) == np.inf  # rho < 1.5: RR-on-Bins at any n
    # The thresholds the docstrings state.
    for n, epsilon, mechanism in [(126, 2.0, "rr_on_bins"), (127, 2.0, "unbiased"),
                                  (481, 1.0, "rr_on_bins"), (482, 1.0, "unbiased"),
                                  (854, 0.75, "rr_on_bins"), (855, 0.75, "unbiased"),
                                  (2881, 0.5, "rr_on_bins"), (2882, 0.5, "unbiased"),
                                  (1000, 0.69, "rr_on_bins"), (1000, 0.70, "unbiased"),
                                  (10**6, 3.25, "unbiased"), (10**6, 3.27, "rr_on_bins")]:
        assert auto_mechanism(n, epsilon) == mechanism, (n, epsilon)
    assert default_n_neighbors(1000, 1.0) == 10
    assert default_n_neighbors(1000, 4.04) == 40
    assert default_n_neighbors(100, 7.0) == 25  # the cap n / 4
    assert default_n_neighbors(3, 7.0) == 1
    assert default_n_neighbors(10**6, np.inf) == 250_000
