"""PATEClassifier's "auto" teacher and query counts: public inputs only, user values win,
recorded, and useful on small data."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.classifiers import PATEClassifier
from sklearn_labeldp.mechanisms import confident_gnmax_sigmas, gnmax_sigma


def _small(n, K, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=K, n_clusters_per_class=1, class_sep=1.5,
                               random_state=seed)
    return StandardScaler().fit_transform(X), y


# The counts do not depend on the teacher: a cheap one (GaussianNB) where the
# default's accuracy is not what is tested.


def _fit(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.fit(X, y)


def _noise_free(params):
    return {k: v for k, v in params.items() if k != "threshold"}


@pytest.mark.parametrize("aggregator", ["confident_gnmax", "lnmax"])
def test_counts_are_resolved_from_public_inputs_only(aggregator):
    X, y = _small(120, 3)
    rng = np.random.default_rng(0)
    fits = [
        _fit(PATEClassifier(GaussianNB(), epsilon=4.0, aggregator=aggregator,
                            classes=[0, 1, 2], random_state=0), X, labels)
        for labels in (y, rng.permutation(y), np.zeros_like(y))
    ]
    resolved = {(f.n_teachers_, f.n_queries_) for f in fits}
    assert len(resolved) == 1
    assert len({repr(sorted(f.mechanism_params_.items())) for f in fits}) == 1
    assert {f.epsilon_ for f in fits} == {fits[0].epsilon_}


def test_resolved_values_are_recorded_and_a_user_value_wins():
    X, y = _small(120, 2)
    auto = _fit(PATEClassifier(GaussianNB(), epsilon=8.0, classes=[0, 1], random_state=0), X, y)
    params = auto.mechanism_params_
    assert (params["n_teachers"], params["n_queries"]) == (auto.n_teachers_, auto.n_queries_)
    assert auto.get_params()["n_teachers"] == "auto" == auto.get_params()["n_queries"]
    given = _fit(PATEClassifier(GaussianNB(), n_teachers=7, n_queries=33, epsilon=8.0,
                                classes=[0, 1], random_state=0), X, y)
    assert (given.n_teachers_, given.n_queries_) == (7, 33)
    assert given.mechanism_params_["n_teachers"] == 7
    # One count given, the other resolved against it: fewer teachers cover less noise.
    few = PATEClassifier(n_teachers=5, epsilon=8.0)._resolve_counts(200, 2)
    many = PATEClassifier(n_teachers=40, epsilon=8.0)._resolve_counts(200, 2)
    assert few[0] == 5 and many[0] == 40 and few[1] < many[1]
    assert PATEClassifier(n_queries=0.25, epsilon=8.0)._resolve_counts(200, 2)[1] == 50


@pytest.mark.parametrize("n,K", [(100, 2), (300, 3), (1257, 10), (32561, 2)])
def test_the_rule_covers_the_noise_within_the_rows(n, K):
    margin = 3.5 * math.sqrt(1 + math.log(K))
    most_teachers = n // max(5, 2 * K)  # two rows per class or more
    floor = min(n, max(50, 5 * K))  # the student's few labels per class
    previous = 0
    for epsilon in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
        T, Q = PATEClassifier(epsilon=epsilon)._resolve_counts(n, K)
        sigma = confident_gnmax_sigmas(epsilon, 1e-5, Q, 2.0)[1]
        assert 1 <= T <= most_teachers and floor <= Q <= min(n, 1000)
        assert T == min(most_teachers, math.ceil(margin * sigma))
        if Q > floor:  # the margin rule set Q: the teachers cover its noise...
            assert margin * sigma <= T
            # ... and one more query would not be covered (or Q is at its cap).
            if Q < min(n, 1000):
                more = confident_gnmax_sigmas(epsilon, 1e-5, Q + 1, 2.0)[1]
                assert margin * more > most_teachers
        else:  # the floor: the most teachers the rows allow, or fewer that cover it
            assert Q == floor
        assert Q >= previous  # a larger epsilon never buys fewer queries
        previous = Q
    T, Q = PATEClassifier(epsilon=8.0, aggregator="gnmax")._resolve_counts(n, K)
    if floor < Q < min(n, 1000):  # GNMax's own noise sets its counts
        assert margin * gnmax_sigma(8.0, 1e-5, Q) <= T
        assert margin * gnmax_sigma(8.0, 1e-5, Q + 1) > most_teachers


def test_the_floors_at_small_epsilon():
    # 300 rows, 2 classes, epsilon 0.5: the margin rule alone would ask one
    # query (the noise covers any margin of 60 teachers); the floor asks 50.
    assert PATEClassifier(epsilon=0.5)._resolve_counts(300, 2) == (60, 50)
    # The digits' 1,257 rows and 10 classes: teachers of 20 rows (2 per class).
    assert PATEClassifier(epsilon=4.0)._resolve_counts(1257, 10) == (62, 50)
    # A given n_teachers is kept; the floor still sets the queries.
    assert PATEClassifier(n_teachers=9, epsilon=0.5)._resolve_counts(300, 2) == (9, 50)


@pytest.mark.parametrize("n,K", [(100, 2), (150, 3)])
def test_defaults_fit_below_250_rows_at_every_epsilon(n, K):
    X, y = _small(n, K)
    for epsilon in (0.5, 8.0):  # the noise alone, and teachers that cover it
        clf = _fit(PATEClassifier(epsilon=epsilon, classes=range(K), random_state=0), X, y)
        assert clf.n_teachers_ <= n // 5 and clf.predict(X).shape == (n,)


def test_defaults_learn_on_small_data_at_large_epsilon():
    X, y = _small(300, 2, seed=1)
    X_test, y_test = X[200:], y[200:]
    clf = _fit(PATEClassifier(epsilon=8.0, classes=[0, 1], random_state=0), X[:200], y[:200])
    majority = max(y_test.mean(), 1 - y_test.mean())
    assert clf.n_answered_ >= 20
    assert clf.score(X_test, y_test) >= majority + 0.2
