"""NormalizedRandomFourierFeatures: norm bound, data independence, RBFSampler, pipelines."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_circles, make_moons
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline

from sklearn_labeldp.linear_model._erm import DPLinearSVC, DPLogisticRegression
from sklearn_labeldp.linear_model._kernels import NormalizedRandomFourierFeatures

# Rounding slack on the bound ||z|| <= 1 (a few ulps of a sum of D squares).
_ROUNDING = 1e-12


def _row_norms(Z):
    return np.linalg.norm(Z, axis=1)


# --------------------------------------------------------------------------- norm bound


@pytest.mark.parametrize("n_components", [1, 7, 100, 1000])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3, 1e12, 1e300])
def test_output_rows_in_unit_ball(n_components, scale):
    rng = np.random.default_rng(n_components)
    X = scale * rng.standard_normal((300, 5))
    Z = NormalizedRandomFourierFeatures(n_components, gamma=3.0, random_state=0).fit_transform(X)
    assert Z.shape == (300, n_components)
    assert np.all(np.isfinite(Z))
    assert _row_norms(Z).max() <= 1.0 + _ROUNDING


def test_norm_bound_is_tight_with_one_component():
    # x = 0 gives cos(b): the norm is sqrt(mean cos^2(b)) ~ 1/sqrt(2), never above 1,
    # and with a single component the norm |cos(w.x + b)| reaches 1 exactly.
    t = NormalizedRandomFourierFeatures(1, random_state=0).fit(np.zeros((1, 1)))
    x = np.array([[-(t.random_offset_[0]) / t.random_weights_[0, 0]]])
    assert _row_norms(t.transform(x))[0] == pytest.approx(1.0)


def test_sparse_and_float32_inputs_give_the_dense_float64_map():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 8))
    X[X < 0.5] = 0.0
    t = NormalizedRandomFourierFeatures(30, random_state=0).fit(X)
    dense = t.transform(X)
    np.testing.assert_allclose(t.transform(sp.csr_matrix(X)), dense, rtol=1e-12, atol=1e-12)
    z32 = t.transform(X.astype(np.float32))
    assert z32.dtype == np.float64
    assert _row_norms(z32).max() <= 1.0 + _ROUNDING


def test_overflowing_projection_is_rejected():
    t = NormalizedRandomFourierFeatures(5, random_state=0).fit(np.ones((2, 3)))
    with pytest.raises(ValueError, match="overflowed"):
        t.transform(np.full((2, 3), 1e308))


# --------------------------------------------------------------------------- data independence


def test_map_depends_only_on_the_shape_of_the_fit_data():
    rng = np.random.default_rng(0)
    X_a = rng.standard_normal((40, 6))
    X_b = 1e6 * rng.uniform(size=(40, 6)) - 7.0  # same shape, unrelated values
    X_new = rng.standard_normal((25, 6))
    t_a = NormalizedRandomFourierFeatures(64, gamma=0.7, random_state=3).fit(X_a)
    t_b = NormalizedRandomFourierFeatures(64, gamma=0.7, random_state=3).fit(X_b)
    np.testing.assert_array_equal(t_a.random_weights_, t_b.random_weights_)
    np.testing.assert_array_equal(t_a.random_offset_, t_b.random_offset_)
    np.testing.assert_array_equal(t_a.transform(X_new), t_b.transform(X_new))
    # Not even the number of rows matters.
    t_c = NormalizedRandomFourierFeatures(64, gamma=0.7, random_state=3).fit(X_a[:1])
    np.testing.assert_array_equal(t_a.transform(X_new), t_c.transform(X_new))


def test_map_changes_with_the_seed_and_the_number_of_features():
    X = np.random.default_rng(0).standard_normal((10, 4))
    z0 = NormalizedRandomFourierFeatures(16, random_state=0).fit_transform(X)
    z1 = NormalizedRandomFourierFeatures(16, random_state=1).fit_transform(X)
    assert not np.allclose(z0, z1)
    t = NormalizedRandomFourierFeatures(16, random_state=0).fit(X[:, :3])
    assert t.random_weights_.shape == (3, 16)
    with pytest.raises(ValueError, match="features"):
        t.transform(X)


def test_gamma_scale_is_rejected():
    # RBFSampler's gamma="scale" reads the variance of X: a data-dependent map.
    with pytest.raises(ValueError, match="gamma"):
        NormalizedRandomFourierFeatures(gamma="scale").fit(np.ones((3, 2)))


@pytest.mark.parametrize(
    "params",
    [
        {"n_components": 0},
        {"n_components": 2.5},
        {"gamma": 0.0},
        {"gamma": -1.0},
        {"gamma": np.inf},
        {"random_state": "seed"},
    ],
)
def test_bad_parameters(params):
    with pytest.raises(ValueError):
        NormalizedRandomFourierFeatures(**params).fit(np.ones((3, 2)))


# --------------------------------------------------------------------------- RBFSampler


@pytest.mark.parametrize("gamma", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("n_components", [1, 50, 257])
def test_equals_rbf_sampler_over_sqrt2(gamma, n_components):
    rng = np.random.default_rng(1)
    X, X_new = rng.standard_normal((30, 7)), rng.standard_normal((20, 7))
    ours = NormalizedRandomFourierFeatures(n_components, gamma=gamma, random_state=5).fit(X)
    ref = RBFSampler(gamma=gamma, n_components=n_components, random_state=5).fit(X)
    np.testing.assert_array_equal(ours.random_weights_, ref.random_weights_)
    np.testing.assert_array_equal(ours.random_offset_, ref.random_offset_)
    np.testing.assert_allclose(
        ours.transform(X_new), ref.transform(X_new) / np.sqrt(2.0), rtol=1e-13, atol=1e-15
    )
    assert _row_norms(ref.transform(X_new)).max() <= np.sqrt(2.0) + _ROUNDING


def test_twice_the_inner_product_approximates_the_rbf_kernel():
    rng = np.random.default_rng(2)
    X = 0.5 * rng.standard_normal((20, 3))
    Z = NormalizedRandomFourierFeatures(20_000, gamma=0.5, random_state=0).fit_transform(X)
    sq_dist = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(2.0 * Z @ Z.T, np.exp(-0.5 * sq_dist), atol=0.05)


# --------------------------------------------------------------------------- estimator API


def test_clone_and_pickle():
    X = np.random.default_rng(0).standard_normal((30, 4))
    t = NormalizedRandomFourierFeatures(20, gamma=2.0, random_state=4)
    c = clone(t)
    assert c.get_params() == t.get_params()
    t.fit(X)
    assert not hasattr(clone(t), "random_weights_")
    restored = pickle.loads(pickle.dumps(t))
    np.testing.assert_array_equal(restored.transform(X), t.transform(X))
    np.testing.assert_array_equal(clone(t).fit(X).transform(X), t.transform(X))


def test_feature_names_out():
    t = NormalizedRandomFourierFeatures(3, random_state=0).fit(np.ones((2, 2)))
    assert list(t.get_feature_names_out()) == [
        f"normalizedrandomfourierfeatures{k}" for k in range(3)
    ]


# --------------------------------------------------------------------------- pipelines


@pytest.mark.parametrize("dataset", ["circles", "moons"])
def test_private_kernel_model_solves_nonlinear_problem(dataset):
    if dataset == "circles":
        make = lambda n, seed: make_circles(n, noise=0.1, factor=0.5, random_state=seed)  # noqa: E731
    else:
        make = lambda n, seed: make_moons(n, noise=0.15, random_state=seed)  # noqa: E731
    X, y = make(3000, 0)
    X_test, y_test = make(2000, 1)
    kernel = make_pipeline(
        NormalizedRandomFourierFeatures(100, gamma=1.0, random_state=0),
        DPLogisticRegression(epsilon=1e6, C=1000.0, data_norm=1.0, solver="objective",
                             classes=[0, 1], random_state=0),
    ).fit(X, y)
    linear = DPLogisticRegression(
        epsilon=1e6, C=1000.0, data_norm=2.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    kernel_acc, linear_acc = kernel.score(X_test, y_test), linear.score(X_test, y_test)
    assert kernel_acc >= 0.95
    assert kernel_acc >= linear_acc + 0.07
    assert kernel[-1].privacy_spend_.mechanism == "ERM objective perturbation"


def test_private_kernel_svm_at_moderate_epsilon():
    X, y = make_moons(10_000, noise=0.2, random_state=0)
    X_test, y_test = make_moons(5000, noise=0.2, random_state=1)
    kernel = make_pipeline(
        NormalizedRandomFourierFeatures(100, gamma=1.0, random_state=0),
        DPLinearSVC(epsilon=1.0, C=100.0, classes=[0, 1], random_state=0),
    ).fit(X, y)
    linear = DPLinearSVC(epsilon=1.0, C=100.0, data_norm=2.5, classes=[0, 1], random_state=0).fit(
        X, y
    )
    assert kernel.score(X_test, y_test) > linear.score(X_test, y_test) + 0.05
    assert kernel[-1].epsilon_ == 1.0
