import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from sklearn_labeldp.priors import ClusterPrior, apply_temperature, model_prior, uniform_prior


def test_temperature_is_softmax_of_scaled_log_probabilities():
    p = np.array([[0.1, 0.6, 0.3, 0.0], [0.25, 0.25, 0.25, 0.25]])
    for tau in (0.2, 1.0, 3.0):
        out = apply_temperature(p, tau)
        expected = p ** (1 / tau) / (p ** (1 / tau)).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(out, expected, rtol=1e-12)
    np.testing.assert_allclose(apply_temperature(p, 1.0), p, rtol=1e-12)
    assert apply_temperature(p, 0.2)[0, 3] == 0.0


def test_tiny_temperature_does_not_underflow():
    p = np.array([[1e-3, 2e-3, 1e-3]])
    out = apply_temperature(p, 0.001)
    np.testing.assert_allclose(out, [[0, 1, 0]], atol=1e-12)


@pytest.mark.parametrize("tau", [0.0, -1.0, np.inf, np.nan])
def test_bad_temperature(tau):
    with pytest.raises(ValueError, match="temperature"):
        apply_temperature(uniform_prior(2, 3), tau)


def test_model_prior_aligns_columns_with_classes():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = LogisticRegression().fit(X, ["b", "b", "d", "d"])
    proba = model_prior(model, X, np.array(["a", "b", "c", "d"]))
    assert proba.shape == (4, 4)
    np.testing.assert_array_equal(proba[:, [0, 2]], 0.0)
    np.testing.assert_allclose(proba[:, [1, 3]], model.predict_proba(X))
    with pytest.raises(ValueError, match="not in `classes`"):
        model_prior(model, X, np.array(["a", "b"]))


def test_cluster_prior_holds_only_its_configuration():
    prior = ClusterPrior(n_clusters=8, epsilon=0.5)
    assert prior.get_params() == {"n_clusters": 8, "epsilon": 0.5, "preprocessor": None}
    assert ClusterPrior(epsilon=0.5).n_clusters == 10
    assert repr(prior) == "ClusterPrior(epsilon=0.5, n_clusters=8)"
    copy = clone(prior)
    assert copy is not prior and copy.get_params() == prior.get_params()
    assert copy.set_params(n_clusters=3) is copy and prior.n_clusters == 8
    assert pickle.loads(pickle.dumps(prior)).get_params() == prior.get_params()
    assert not hasattr(prior, "fit")


def test_cluster_prior_needs_an_epsilon_and_takes_keywords_only():
    with pytest.raises(TypeError, match="epsilon"):
        ClusterPrior(n_clusters=8)
    with pytest.raises(TypeError):
        ClusterPrior(8, 0.5)
