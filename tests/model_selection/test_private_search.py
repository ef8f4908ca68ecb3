"""PrivateGridSearchCV and the exponential mechanism."""

import fnmatch
import math
import warnings

import numpy as np
import pytest
from scipy.stats import chisquare
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import ParameterGrid
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import sklearn_labeldp._base as base_module
import sklearn_labeldp.model_selection._strategies as strategies
from sklearn_labeldp._base import BaseLabelDPClassifier
from sklearn_labeldp.accounting import BudgetAccountant, BudgetError, PrivacySpend
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.mechanisms import randomized_response
from sklearn_labeldp.model_selection import (
    PrivateGridSearchCV,
    exponential_mechanism,
    exponential_mechanism_probabilities,
)

K = 4
GRID = {"estimator__n_neighbors": [1, 5, 25, 100]}
STRATEGIES = ["holdout", "random_stopping", "post_processing"]


def rr(**kwargs):
    return RRWithPriorClassifier(KNeighborsClassifier(), classes=range(K), **kwargs)


def vector_approx(**kwargs):
    return VectorApproxClassifier(KNeighborsRegressor(), classes=range(K), **kwargs)


@pytest.fixture(scope="module")
def data():
    return make_circle_gaussians(3000, K, sigma=0.3, random_state=0)


@pytest.fixture(scope="module")
def test_data():
    return make_circle_gaussians(2000, K, sigma=0.3, random_state=12345)


# ---------------------------------------------------------------- exponential mechanism
@pytest.mark.parametrize("sensitivity", [1.0, 2.5])
def test_exponential_mechanism_probabilities_match_formula(sensitivity):
    scores = np.array([0.0, -1.0, -3.0, 2.0])
    eps = 1.3
    weights = [math.exp(eps * s / (2 * sensitivity)) for s in scores]
    expected = [w / sum(weights) for w in weights]
    got = exponential_mechanism_probabilities(scores, epsilon=eps, sensitivity=sensitivity)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_exponential_mechanism_probabilities_never_overflow():
    got = exponential_mechanism_probabilities([-1e6, -1e6 + 2], epsilon=1.0)
    np.testing.assert_allclose(got, [1 / (1 + math.e), math.e / (1 + math.e)], rtol=1e-12)


def test_exponential_mechanism_frequencies_chi_square():
    scores = [0.0, -1.0, -2.0, -4.0]  # mistake counts 0, 1, 2, 4 at eps = 1
    probabilities = exponential_mechanism_probabilities(scores, epsilon=1.0)
    rng = np.random.default_rng(0)
    n = 20000
    draws = [exponential_mechanism(scores, epsilon=1.0, random_state=rng) for _ in range(n)]
    counts = np.bincount(draws, minlength=4)
    assert chisquare(counts, probabilities * n).pvalue > 1e-3


@pytest.mark.parametrize(
    "scores, kwargs",
    [([], {"epsilon": 1.0}), ([1.0], {"epsilon": 0.0}), ([1.0], {"epsilon": -1.0}),
     ([1.0, np.nan], {"epsilon": 1.0}), ([1.0], {"epsilon": 1.0, "sensitivity": 0.0})],
)
def test_exponential_mechanism_bad_inputs(scores, kwargs):
    with pytest.raises(ValueError):
        exponential_mechanism(scores, random_state=0, **kwargs)


# ---------------------------------------------------------------- total epsilon
def test_holdout_total_epsilon_is_parallel_composition(data):
    X, y = data
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(
        rr(), GRID, epsilon=0.7, strategy="holdout", random_state=0, accountant=acc
    ).fit(X, y)
    m = len(GRID["estimator__n_neighbors"])
    assert search.epsilon_ == 0.7 and search.delta_ == 0.0
    assert len(acc.spends) == 1 and acc.total().epsilon == pytest.approx(0.7)
    spend = acc.spends[0]
    assert spend is search.privacy_spend_
    assert spend.composition == "parallel" and len(spend.parts) == m + 1
    assert all(part.epsilon == 0.7 for part in spend.parts)
    assert spend.parts[-1].mechanism == "exponential mechanism"
    assert spend.parts[-1].description.value == 0.7  # its tight-total description
    # Disjoint parts of n / (m + 1) rows, and each candidate ran at the full epsilon.
    sizes = search.cv_results_["n_train_samples"]
    assert sizes.sum() + spend.parts[-1].params["n_samples"] == X.shape[0]
    assert sizes.max() - sizes.min() <= 1 and sizes[0] == X.shape[0] // (m + 1)
    assert search.best_estimator_.epsilon_ == 0.7
    assert search.best_estimator_.estimator_.n_samples_fit_ in set(sizes)
    assert search.cv_results_["selected"].sum() == 1
    assert not hasattr(search, "best_score_")
    assert not any("score" in key for key in search.cv_results_)  # mistake counts stay secret


def test_random_stopping_total_epsilon_is_three_times_the_round_epsilon(data):
    X, y = data
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(
        rr(), GRID, epsilon=1.5, strategy="random_stopping", stopping_probability=0.3,
        random_state=1, accountant=acc,
    ).fit(X, y)
    assert search.epsilon_ == 1.5 and len(acc.spends) == 1
    spend = acc.spends[0]
    assert spend.params["round_epsilon"] == pytest.approx(0.5)
    assert spend.epsilon == pytest.approx(3 * spend.params["round_epsilon"])
    assert search.best_estimator_.epsilon_ == pytest.approx(0.5)
    assert "n_rounds" not in spend.params and "n_rounds" not in search.cv_results_
    assert not hasattr(search, "n_rounds_") and not hasattr(search, "rounds_")


def test_published_rounds_are_charged_per_round(data):
    X, y = data
    totals = set()
    for seed in range(6):
        acc = BudgetAccountant()
        search = PrivateGridSearchCV(
            rr(), {"estimator__n_neighbors": [5, 25]}, epsilon=1.5,
            strategy="random_stopping", stopping_probability=0.5, publish_rounds=True,
            random_state=seed, accountant=acc,
        ).fit(X[:600], y[:600])
        n_rounds = search.rounds_["candidate"].size
        assert search.rounds_["score"].shape == (n_rounds,)
        assert acc.total().epsilon == pytest.approx(0.5 * n_rounds)
        assert search.best_score_ == search.rounds_["score"].max()
        totals.add(n_rounds)
    assert len(totals) > 1


def test_random_stopping_number_of_rounds_is_geometric(data, monkeypatch):
    # Rounds are drawn before any label is read; stub the fits to count many searches fast.
    X, y = data[0][:100], data[1][:100]
    monkeypatch.setattr(strategies, "_fit_candidate", lambda est, X, y, *a: (_Constant(), []))
    monkeypatch.setattr(strategies, "_loss", lambda model, X, y: 0)
    monkeypatch.setattr(PrivateGridSearchCV, "_returned", lambda self, model: model)
    monkeypatch.setattr(
        PrivateGridSearchCV, "_plan_candidates",
        lambda self, candidates, eps, X, y: ([PrivacySpend.leaf("stub", eps)] * len(candidates),
                                             [[]] * len(candidates)),
    )
    search = PrivateGridSearchCV(
        rr(), {"estimator__n_neighbors": [1, 5, 10, 25]}, epsilon=1.0,
        strategy="random_stopping", stopping_probability=0.25, publish_rounds=True,
        accountant=BudgetAccountant(),
    )
    rng = np.random.default_rng(0)
    rounds = [
        search.set_params(random_state=rng).fit(X, y).rounds_["candidate"].size
        for _ in range(500)
    ]
    assert min(rounds) >= 1
    # E[T] = 1 / gamma = 4, sd of the mean sqrt(12 / 500) = 0.15.
    assert np.mean(rounds) == pytest.approx(4.0, abs=0.6)


class _Constant:
    classes_ = np.arange(K)


@pytest.mark.parametrize("estimator", [rr(), vector_approx()], ids=["rr", "vector_approx"])
def test_post_processing_costs_one_mechanism(data, estimator):
    X, y = data
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(
        estimator, GRID, epsilon=1.0, strategy="post_processing", random_state=0,
        accountant=acc,
    ).fit(X, y)
    assert search.epsilon_ == 1.0 and len(acc.spends) == 1
    assert acc.total().epsilon == pytest.approx(1.0)
    (mechanism,) = search.privacy_spend_.parts
    assert mechanism.epsilon == 1.0
    best = search.best_estimator_
    attr = "privatized_labels_" if isinstance(estimator, RRWithPriorClassifier) else (
        "privatized_bits_"
    )
    assert getattr(best, attr).shape[0] == X.shape[0]
    base = best.estimator_
    assert base.n_neighbors == search.best_params_["estimator__n_neighbors"]
    assert base.n_samples_fit_ == X.shape[0]  # refitted on all privatised targets, for free
    results = search.cv_results_
    assert results["rank_test_score"][search.best_index_] == 1
    assert search.best_score_ == results["mean_test_score"].max()
    # The debiased score is the affine correction of the raw agreement.
    eps = 1.0
    if isinstance(estimator, RRWithPriorClassifier):
        p, q = math.e / (math.e + K - 1), 1 / (math.e + K - 1)
    else:
        p, q = math.exp(eps / 2) / (1 + math.exp(eps / 2)), 1 / (1 + math.exp(eps / 2))
    np.testing.assert_allclose(
        results["mean_test_score"], (results["mean_observed_score"] - q) / (p - q)
    )


def test_post_processing_debiased_score_is_unbiased(data, test_data):
    X, y = data
    Xt, yt = test_data
    scores, truths = [], []
    for seed in range(5):
        search = PrivateGridSearchCV(
            rr(), {"estimator__n_neighbors": [25]}, epsilon=1.0, strategy="post_processing",
            random_state=seed,
        ).fit(X, y)
        scores.append(search.best_score_)
        truths.append(search.score(Xt, yt))
    assert np.mean(scores) == pytest.approx(np.mean(truths), abs=0.05)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_budget_charged_before_any_label(data, strategy, monkeypatch):
    X, y = data

    def refuse(*args, **kwargs):
        raise AssertionError("a label was read before the budget was charged")

    monkeypatch.setattr(base_module, "PrivateLabels", refuse)
    monkeypatch.setattr(strategies, "PrivateLabels", refuse)
    monkeypatch.setattr(strategies, "_loss", refuse)
    acc = BudgetAccountant(epsilon=0.9)
    search = PrivateGridSearchCV(
        rr(), GRID, epsilon=1.0, strategy=strategy, random_state=0, accountant=acc
    )
    with pytest.raises(BudgetError):
        search.fit(X, y)
    assert acc.spends == []


def test_estimator_accountant_is_used_when_search_has_none(data):
    X, y = data
    acc = BudgetAccountant()
    PrivateGridSearchCV(
        rr(accountant=acc), GRID, epsilon=1.0, random_state=0
    ).fit(X[:1000], y[:1000])
    assert len(acc.spends) == 1 and acc.total().epsilon == 1.0


# ---------------------------------------------------------------- selection quality
def _reference_accuracy(n_neighbors, epsilon, n_train, test_data):
    """Mean test accuracy of one configuration trained like the search trains it."""
    Xt, yt = test_data
    accs = []
    for seed in range(3):
        X, y = make_circle_gaussians(n_train, K, sigma=0.3, random_state=100 + seed)
        model = rr(epsilon=epsilon, random_state=seed).set_params(
            estimator__n_neighbors=n_neighbors
        )
        accs.append(model.fit(X, y).score(Xt, yt))
    return np.mean(accs)


SELECTION = {
    # strategy: (extra parameters, epsilon of one candidate fit, training rows, threshold)
    "holdout": ({}, 1.0, 3000 // 5, 0.8),
    "post_processing": ({}, 1.0, 3000, 0.8),
    "random_stopping": ({"stopping_probability": 0.05}, 1.0 / 3, 1500, 0.6),
}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_selects_best_or_near_best_at_epsilon_one(strategy, test_data):
    extra, eps_fit, n_train, threshold = SELECTION[strategy]
    reference = np.array([
        _reference_accuracy(k, eps_fit, n_train, test_data) for k in GRID["estimator__n_neighbors"]
    ])
    near_best = reference >= reference.max() - 0.02
    hits = []
    for seed in range(20):
        X, y = make_circle_gaussians(3000, K, sigma=0.3, random_state=1000 + seed)
        search = PrivateGridSearchCV(
            rr(), GRID, epsilon=1.0, strategy=strategy, random_state=seed, **extra
        ).fit(X, y)
        hits.append(near_best[search.best_index_])
    rate = float(np.mean(hits))
    print(f"\n{strategy}: near-best selection rate {rate:.2f}, reference {reference.round(3)}")
    assert rate >= threshold


# ---------------------------------------------------------------- behaviour
def test_delegation_clone_and_n_jobs(data, test_data):
    X, y = data
    Xt, yt = test_data
    search = PrivateGridSearchCV(rr(), GRID, epsilon=1.0, random_state=3)
    clone(search)
    one = clone(search).fit(X, y)
    two = clone(search).set_params(n_jobs=2).fit(X, y)
    assert one.best_params_ == two.best_params_
    np.testing.assert_array_equal(one.predict(Xt), two.predict(Xt))
    np.testing.assert_array_equal(one.predict(Xt), one.best_estimator_.predict(Xt))
    assert one.predict_proba(Xt).shape == (Xt.shape[0], K)
    assert one.score(Xt, yt) == one.best_estimator_.score(Xt, yt)
    np.testing.assert_array_equal(one.classes_, np.arange(K))
    assert one.cv_results_["param_estimator__n_neighbors"].tolist() == [1, 5, 25, 100]


def test_seeded_search_is_reproducible(data):
    X, y = data
    runs = [
        PrivateGridSearchCV(vector_approx(), GRID, epsilon=1.0, strategy="post_processing",
                            random_state=7).fit(X, y).cv_results_["mean_test_score"]
        for _ in range(2)
    ]
    np.testing.assert_array_equal(*runs)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"param_grid": []}, "empty"),
        ({"param_grid": {"estimator__n_neighbors": []}}, "empty|non-empty"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"strategy": "bayesian"}, "strategy"),
        ({"scoring": "f1"}, "scoring"),
        ({"param_grid": {"epsilon": [1.0, 2.0]}}, "controls"),
        ({"param_grid": {"estimator__no_such_parameter": [1]}}, "no_such_parameter"),
        ({"param_grid": {"n_stages": [1, 2]}, "strategy": "post_processing"}, "mechanism"),
        ({"param_grid": {"classes": [None, [0, 1, 2, 3]]}, "strategy": "post_processing"},
         "mechanism"),
        ({"estimator": rr(n_stages=2), "strategy": "post_processing"}, "n_stages=1"),
        ({"estimator": ALIBIClassifier(classes=range(K)), "strategy": "post_processing"},
         "learnt from again.*TargetReuseMixin"),
        ({"estimator": KNeighborsClassifier()}, "epsilon"),
    ],
)
def test_bad_inputs(data, params, match):
    X, y = data
    search = PrivateGridSearchCV(rr(), GRID, epsilon=1.0, random_state=0).set_params(**params)
    with pytest.raises(ValueError, match=match):
        search.fit(X[:500], y[:500])
    assert not hasattr(search, "best_estimator_")


# ---------------------------------------------------------------- the search's own record
def _alibi_gaussian(**kwargs):
    return ALIBIClassifier(KNeighborsRegressor(), classes=range(K), noise="gaussian",
                           delta=1e-4, n_rounds=1, **kwargs)


@pytest.mark.parametrize(
    ("estimator", "strategy", "grid"),
    [
        (rr(), "holdout", GRID),
        (_alibi_gaussian(), "holdout", {"estimator__n_neighbors": [5, 25]}),
        (rr(), "random_stopping", GRID),
        (rr(), "post_processing", GRID),
        (vector_approx(), "post_processing", GRID),
    ],
    ids=["holdout-rr", "holdout-gaussian-alibi", "random_stopping", "post_processing-rr",
         "post_processing-vector"],
)
def test_search_records_at_least_what_its_candidates_spend(data, estimator, strategy, grid):
    X, y = data
    acc = BudgetAccountant(5.0, 1e-3)
    search = PrivateGridSearchCV(estimator, grid, epsilon=1.0, strategy=strategy,
                                 accountant=acc).fit(X, y)
    (recorded,) = acc.spends
    assert recorded.budget == search.privacy_spend_.budget
    candidate = search.best_estimator_.privacy_spend_
    assert recorded.epsilon >= candidate.epsilon
    assert recorded.delta >= candidate.delta
    if strategy == "holdout":
        # Parallel composition of every candidate's own record and the selection.
        parts = recorded.parts
        assert len(parts) == len(ParameterGrid(grid)) + 1
        assert all(recorded.delta >= part.delta for part in parts)


def test_gaussian_candidates_make_the_search_approximate_dp(data):
    X, y = data
    search = PrivateGridSearchCV(_alibi_gaussian(), {"estimator__n_neighbors": [5, 25]},
                                 epsilon=1.0, accountant=BudgetAccountant(5.0, 1e-3)).fit(X, y)
    assert search.delta_ == search.best_estimator_.delta_ == 1e-4


def test_search_wraps_a_pipeline_and_reports_its_spend(data):
    X, y = data
    pipe = Pipeline([("scale", StandardScaler()),
                     ("clf", ALIBIClassifier(KNeighborsRegressor(), classes=range(K)))])
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(pipe, {"clf__estimator__n_neighbors": [5, 25]},
                                 epsilon=1.0, accountant=acc).fit(X, y)
    assert search.epsilon_ == 1.0 and acc.total().epsilon == 1.0
    assert search.best_estimator_.named_steps["clf"].epsilon_ == 1.0
    assert search.best_estimator_.named_steps["clf"].accountant is None
    assert search.score(X, y) > 0.5


def test_post_processing_refuses_a_pipeline_before_any_spend(data):
    X, y = data
    pipe = Pipeline([("scale", StandardScaler()),
                     ("clf", RRWithPriorClassifier(KNeighborsClassifier(), classes=range(K)))])
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(pipe, {"clf__estimator__n_neighbors": [5, 25]}, epsilon=1.0,
                                 strategy="post_processing", accountant=acc)
    with pytest.raises(ValueError, match="cannot reach into a Pipeline"):
        search.fit(X, y)
    assert acc.spends == []


def test_search_returns_the_users_random_state_and_accountant(data):
    X, y = data
    acc = BudgetAccountant()
    for strategy in STRATEGIES:
        base = RRWithPriorClassifier(LogisticRegression(), classes=range(K), accountant=acc)
        search = PrivateGridSearchCV(base, {"estimator__C": [0.1, 1.0]}, epsilon=1.0,
                                     strategy=strategy).fit(X, y)
        best = search.best_estimator_
        assert best.random_state is None and best.accountant is acc
        seeds = [value for key, value in best.estimator_.get_params(deep=True).items()
                 if key.endswith("random_state")]
        assert seeds == [None]
    assert len(acc.spends) == len(STRATEGIES)


# ---------------------------------------------------------------- what reaches the user
class _Announcing(BaseLabelDPClassifier):
    """A label-DP candidate that warns inside its release and after it.

    Randomized response on the labels (its release, which also warns, as a
    mechanism whose warnings depend on the labels would), then a warning from
    its post-processing, as a base estimator fitted on the noisy labels might.
    ``tag=1`` predicts from the public feature that carries the label, ``tag=0``
    always class 0, so the selection has a clear winner.
    """

    _dp_outputs = ("privatized_labels_",)
    _parameter_constraints = {**BaseLabelDPClassifier._parameter_constraints,
                              "tag": [int]}

    def __init__(self, tag=0, *, epsilon=1.0, classes=(0, 1), random_state=None,
                 accountant=None):
        self.tag = tag
        self.epsilon = epsilon
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def _plan_fit(self, X, classes, rng):
        return PrivacySpend.leaf("randomized response", self.epsilon), {}

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        def mechanism(codes, **kwargs):
            warnings.warn(f"inside the release of candidate {self.tag}", UserWarning,
                          stacklevel=2)
            return randomized_response(codes, **kwargs)

        noisy = labels.release(mechanism, np.arange(labels.n_samples), epsilon=self.epsilon,
                               n_classes=labels.n_classes, random_state=mechanism_rng)
        warnings.warn(f"post-processing of candidate {self.tag}", UserWarning, stacklevel=2)
        return {"privatized_labels_": noisy}

    def predict(self, X):
        return self.classes_.take((np.asarray(X)[:, 0] > 0).astype(int) * self.tag)


def _announced(search, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    return [str(w.message) for w in caught if "candidate" in str(w.message)]


@pytest.mark.parametrize("strategy", ["holdout", "random_stopping"])
def test_only_the_selected_candidates_public_warnings_reach_the_user(strategy):
    # Up to fcde750, random stopping re-emitted the winner's warnings from inside its
    # own release too (the candidate's seal, nested in the search's, kept the
    # recording filter), and holdout dropped the winner's post-processing warning.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = (X[:, 0] > 0).astype(int)
    for seed in range(3):
        search = PrivateGridSearchCV(
            _Announcing(), {"tag": [0, 1]}, epsilon=2.0, strategy=strategy,
            stopping_probability=0.3, random_state=seed, accountant=BudgetAccountant(),
        )
        announced = _announced(search, X, y)
        # One warning, the selected candidate's post-processing; never one from inside
        # a release, never a losing candidate's, never one per round (T is secret).
        assert announced == [f"post-processing of candidate {search.best_params_['tag']}"]


def test_parallel_rounds_keep_only_label_free_warnings():
    # Concurrent fits cannot be told apart in the process-wide warning state, so their
    # warnings are dropped; the selected candidate's label-free ones (its planning fit,
    # before its charge) are still emitted.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 2))
    y = (X[:, 0] > 0).astype(int)
    search = PrivateGridSearchCV(_Announcing(classes=None), {"tag": [0, 1]}, epsilon=2.0,
                                 random_state=0, n_jobs=2, accountant=BudgetAccountant())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "candidate" in m]
    assert sum("`classes` is None" in m for m in messages) == 1


@pytest.mark.parametrize("grid", [{}, [{}]], ids=["dict", "list"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_empty_grid_is_the_one_candidate_grid(data, grid, strategy):
    # scikit-learn's ParameterGrid({}) has one candidate, the estimator as given.
    X, y = data[0][:600], data[1][:600]
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(rr(), grid, epsilon=1.0, strategy=strategy, random_state=0,
                                 accountant=acc, cv=3).fit(X, y)
    assert search.best_params_ == {} and search.best_index_ == 0
    assert search.cv_results_["params"] == [{}]
    assert acc.total().epsilon == pytest.approx(1.0)
    assert search.best_estimator_.get_params()["estimator"].n_neighbors == 5


def test_empty_list_grid_costs_nothing(data):
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(rr(), [], epsilon=1.0, accountant=acc)
    with pytest.raises(ValueError, match=r"param_grid=\[\] has no candidate.*empty dict"):
        search.fit(*data)
    assert acc.spends == []


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("publish_rounds", [False, True])
def test_every_fitted_attribute_is_declared(data, strategy, publish_rounds):
    if publish_rounds and strategy != "random_stopping":
        pytest.skip("publish_rounds is random stopping's")
    X, y = data[0][:600], data[1][:600]
    search = PrivateGridSearchCV(rr(), GRID, epsilon=1.0, strategy=strategy, cv=3,
                                 publish_rounds=publish_rounds, random_state=0,
                                 accountant=BudgetAccountant()).fit(X, y)
    fitted = [name for name in vars(search) if name.endswith("_") and not name.startswith("_")]
    declared = (*PrivateGridSearchCV._dp_outputs, *PrivateGridSearchCV._derived_attributes)
    assert "best_estimator_" in fitted and "cv_results_" in fitted
    assert [n for n in fitted if not any(fnmatch.fnmatchcase(n, p) for p in declared)] == []
    assert set(PrivateGridSearchCV._dp_outputs).isdisjoint(
        PrivateGridSearchCV._derived_attributes)


class _FailsToPredict(_Announcing):
    def predict(self, X):
        raise ValueError(f"predict failed on {len(X)} rows")


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [("holdout", strategies.SELECTION_FAILURE.format(strategy="holdout")),
     ("random_stopping", strategies.ROUNDS_FAILURE)],
)
def test_a_failure_inside_the_search_raises_its_fixed_text(strategy, expected):
    from sklearn_labeldp.exceptions import ReleaseError

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(_FailsToPredict(), {"tag": [0, 1]}, epsilon=1.0,
                                 strategy=strategy, random_state=0, accountant=acc)
    with pytest.raises(ReleaseError) as info:
        search.fit(X, y)
    # The same text whatever failed and however many rounds ran; nothing chained.
    assert str(info.value) == expected and info.value.__context__ is None
    assert acc.total().epsilon == pytest.approx(1.0)


# ---------------------------------------------------------------- the strategies' context
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_strategy_needs_only_its_context(data, strategy):
    # The strategies read the search through a SearchContext only: built here by
    # hand, with no search at all, it gives the search's own selection and model.
    from sklearn_labeldp.utils import spawn_generators

    X, y = data[0][:600], data[1][:600]
    grid = {"estimator__n_neighbors": [1, 25]}
    accountant = BudgetAccountant()

    def configure(params, epsilon, acc, random_state):
        return clone(rr()).set_params(**params, epsilon=epsilon, accountant=acc,
                                      random_state=random_state)

    def plan_candidates(candidates, epsilon, X_plan, y_plan):
        spends = []
        for params in candidates:
            with pytest.raises(strategies.ChargeReached) as reached:
                configure(params, epsilon, strategies.PlanningAccountant(),
                          np.random.default_rng(0)).fit(X_plan, y_plan)
            spends.append(reached.value.spend)
        return spends, [[] for _ in candidates]

    context = strategies.SearchContext(
        estimator=rr(), candidates=list(ParameterGrid(grid)), epsilon=2.0, n_jobs=None, cv=3,
        stopping_probability=None, validation_fraction=0.5, publish_rounds=False, verbose=0,
        resolve_accountant=lambda: accountant, configure=configure,
        plan_candidates=plan_candidates,
    )
    fit = {"holdout": strategies.fit_holdout, "random_stopping": strategies.fit_random_stopping,
           "post_processing": strategies.fit_post_processing}[strategy]
    results, best, model, spend, extra = fit(context, X, y, spawn_generators(7, 1)[0])
    search = PrivateGridSearchCV(rr(), grid, epsilon=2.0, strategy=strategy, cv=3,
                                 random_state=7, accountant=BudgetAccountant()).fit(X, y)
    assert best == search.best_index_
    # Post-processing's one charge is the privatising fit's own, which its record wraps.
    charged = spend.parts[0] if strategy == "post_processing" else spend
    assert spend == search.privacy_spend_ and accountant.spends == [charged]
    np.testing.assert_array_equal(model.predict(X), search.best_estimator_.predict(X))
    for name, column in results.items():
        np.testing.assert_array_equal(column, search.cv_results_[name])
    assert extra.get("best_score_") == getattr(search, "best_score_", None)


# ------------------------------------------------------------------ progress


@pytest.mark.parametrize(
    "strategy, publish, bar",
    [("holdout", False, "3/3"), ("post_processing", False, "6/6"),
     ("random_stopping", False, None), ("random_stopping", True, "/")],
)
def test_verbose_counts_the_candidate_fits_and_never_secret_rounds(
        data, capfd, strategy, publish, bar):
    pytest.importorskip("tqdm")
    X, y = data
    search = PrivateGridSearchCV(
        vector_approx(), {"estimator__n_neighbors": [1, 5, 25]}, epsilon=2.0,
        strategy=strategy, cv=2, publish_rounds=publish, verbose=1, random_state=0,
        accountant=BudgetAccountant(),
    )
    capfd.readouterr()
    search.fit(X, y)
    out, err = capfd.readouterr()
    assert out == ""
    if bar is None:  # the number of rounds is what random stopping keeps secret
        assert "candidate fits" not in err
    else:
        assert "candidate fits" in err and bar in err


# ------------------------------------------------------------------ regressors


def _regression_data(n=600, seed=0):
    from sklearn.datasets import make_friedman1

    return make_friedman1(n, random_state=seed)


def test_a_regressors_held_out_loss_moves_by_at_most_one_per_label():
    from sklearn_labeldp import NoisyLabelRegressor

    X, y = _regression_data()
    model = NoisyLabelRegressor(KNeighborsRegressor(), label_range=(0.0, 30.0), epsilon=2.0,
                                random_state=0, accountant=BudgetAccountant()).fit(X, y)
    rng = np.random.default_rng(0)
    loss = strategies._loss(model, X, y)
    predictions = np.clip(model.predict(X), 0, 30)
    assert loss == pytest.approx(np.sum(((predictions - np.clip(y, 0, 30)) / 30) ** 2))
    for i in rng.integers(len(y), size=20):  # any replacement, far outside the range too
        changed = y.copy()
        changed[i] = rng.choice([-1e6, 1e6, rng.uniform(0, 30)])
        assert abs(strategies._loss(model, X, changed) - loss) <= 1.0


@pytest.mark.parametrize("strategy", ["holdout", "random_stopping"])
def test_a_regressor_is_searched_as_a_regressor(strategy):
    from sklearn.base import is_regressor
    from sklearn.metrics import r2_score

    from sklearn_labeldp import NoisyLabelRegressor

    X, y = _regression_data()
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(
        NoisyLabelRegressor(KNeighborsRegressor(), label_range=(0.0, 30.0)),
        {"estimator__n_neighbors": [1, 20]}, epsilon=2.0, strategy=strategy,
        random_state=0, accountant=acc,
    ).fit(X, y)
    assert is_regressor(search) and not hasattr(search, "classes_")
    assert search.score(X, y) == pytest.approx(r2_score(y, search.best_estimator_.predict(X)))
    assert acc.total().epsilon == pytest.approx(2.0)


def test_post_processing_refuses_a_regressor_without_reusable_targets_for_free():
    from sklearn_labeldp import DPLeastSquaresRegressor

    X, y = _regression_data()
    acc = BudgetAccountant(delta=1e-3)
    search = PrivateGridSearchCV(
        DPLeastSquaresRegressor(label_range=(0.0, 30.0)), {}, epsilon=2.0,
        strategy="post_processing", accountant=acc,
    )
    with pytest.raises(ValueError, match="post-processing protocol"):
        search.fit(X, y)
    assert acc.total().epsilon == 0
