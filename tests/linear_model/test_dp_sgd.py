"""DP-SGD and DP-Adam in DPLogisticRegression (solver="sgd" and "adam").

Clipping, noise, Poisson sampling and accounting are checked on the functions
the solver runs (``_first_order``), and end to end on fitted estimators.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.optimize import brentq
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    _subsampled,
    approx_dp_to_zcdp,
    subsampled_gaussian_epsilon,
    zcdp_to_approx_dp,
)
from sklearn_labeldp.accounting._label_change import (
    bounded_label_change_epsilon,
    calibrate_bounded_label_change,
)
from sklearn_labeldp.accounting._subsampled import SUBSAMPLED_GAUSSIAN_METHODS, calibrate_dp_sgd
from sklearn_labeldp.exceptions import ReleaseError
from sklearn_labeldp.linear_model import DPLogisticRegression, _first_order, _solvers
from sklearn_labeldp.linear_model._calibration import (
    DEFAULT_LEARNING_RATES,
    first_order_label_sensitivity,
    first_order_params,
    first_order_sensitivity,
)
from sklearn_labeldp.linear_model._erm_base import _feature_map
from sklearn_labeldp.linear_model._first_order import (
    clipped_residuals,
    noisy_first_order_logistic,
    noisy_gradient,
    poisson_sample,
)
from sklearn_labeldp.linear_model._preprocessing import row_norms
from sklearn_labeldp.linear_model._statistics import one_vs_rest_targets

DELTA = 1e-5


def _gaussian_profile(epsilon, mu):
    """The exact privacy profile of a Gaussian of ``mu`` noise stds (Balle and Wang 2018)."""
    return (stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


def _exact_gaussian_mu(epsilon, delta):
    """The test oracle: the largest ``mu`` whose exact profile meets ``delta`` at ``epsilon``."""
    return brentq(lambda mu: _gaussian_profile(epsilon, mu) - delta, 1e-3, 50.0, xtol=1e-14)


def _exact_gaussian_epsilon(mu, delta):
    """The smallest ``epsilon`` whose exact profile at ``mu`` is within ``delta``."""
    return brentq(lambda eps: _gaussian_profile(eps, mu) - delta, 0.0, 100.0, xtol=1e-14)


def per_example_gradients(theta, Z, E, clip_norm):
    """The test oracle: every (clipped) per-example gradient, materialised, ``(n, m, d)``.

    The solver never forms this tensor; it sums ``R^T Z`` with the scaled residuals.
    """
    R = clipped_residuals(theta, Z, E, row_norms(Z), clip_norm)
    dense = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return R[:, :, None] * dense[:, None, :]


def _blobs(n_classes=3, n=300, seed=0):
    X, y = make_blobs(n, 4, centers=n_classes, cluster_std=2.0, random_state=seed)
    return X, y


def _design(n=200, d=6, seed=0, n_unit=None):
    """Rows of norm <= 1 as the feature map gives them, some exactly 1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d - 1)) * 3.0
    Z = _feature_map(X, 2.0, True)
    if n_unit:
        Z[:n_unit] /= np.linalg.norm(Z[:n_unit], axis=1, keepdims=True)
    return Z


def _fit(X, y, n_classes, **params):
    params = {"epsilon": 1.0, "delta": DELTA, "data_norm": 20.0, "classes": range(n_classes),
              "random_state": 0, **params}
    return DPLogisticRegression(**params).fit(X, y)


# --------------------------------------------------------------------------- clipping


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("clip_norm", [0.05, 0.3, 10.0])
def test_clipped_per_example_gradients_are_bounded(n_classes, clip_norm):
    Z = _design(n_unit=20)
    codes = np.random.default_rng(1).integers(0, n_classes, Z.shape[0])
    E = one_vs_rest_targets(codes, n_classes)
    theta = np.random.default_rng(2).standard_normal((E.shape[1], Z.shape[1])) * 2.0
    clipped = per_example_gradients(theta, Z, E, clip_norm)
    raw = per_example_gradients(theta, Z, E, None)
    norms = np.linalg.norm(clipped.reshape(len(Z), -1), axis=1)
    raw_norms = np.linalg.norm(raw.reshape(len(Z), -1), axis=1)
    assert norms.max() <= clip_norm * (1 + 1e-12)
    # Inside the ball: unchanged; outside: scaled onto the sphere, same direction.
    inside = raw_norms <= clip_norm
    np.testing.assert_allclose(clipped[inside], raw[inside])
    np.testing.assert_allclose(norms[~inside], clip_norm)
    np.testing.assert_allclose(clipped[~inside],
                               raw[~inside] * (clip_norm / raw_norms[~inside])[:, None, None])
    # The rank-one shortcut: ||r z^T||_F = ||r|| ||z||.
    R = clipped_residuals(theta, Z, E, row_norms(Z), None)
    np.testing.assert_allclose(raw_norms, np.linalg.norm(R, axis=1) * row_norms(Z))
    # The full-batch release with no noise is the mean of exactly these gradients.
    release = noisy_gradient(theta, Z, E, row_norms(Z), sample_rate=1.0, clip_norm=clip_norm,
                             expected_batch_size=len(Z), noise_std=0.0,
                             random_state=np.random.default_rng(0))
    np.testing.assert_allclose(release, clipped.sum(axis=0) / len(Z), atol=1e-12)


def test_sparse_rows_give_the_same_clipped_gradients():
    Z = _design(n_unit=10)
    Z[:, :3][np.abs(Z[:, :3]) < 0.1] = 0.0
    E = one_vs_rest_targets(np.arange(len(Z)) % 3, 3)
    theta = np.random.default_rng(0).standard_normal((3, Z.shape[1]))
    np.testing.assert_allclose(per_example_gradients(theta, sp.csr_matrix(Z), E, 0.2),
                               per_example_gradients(theta, Z, E, 0.2))


def test_the_solver_clips_every_gradient_it_uses(monkeypatch):
    """Record the residuals of every step of a fit: each per-example gradient is <= C."""
    seen = []

    def recording(theta, Z, E, z_norms, clip_norm):
        R = clipped_residuals(theta, Z, E, z_norms, clip_norm)
        seen.append((np.linalg.norm(R, axis=1) * z_norms, clip_norm, Z.shape[0]))
        return R

    monkeypatch.setattr(_first_order, "clipped_residuals", recording)
    X, y = _blobs(3, n=400)
    clf = _fit(X, y, 3, solver="sgd", privacy="full", max_grad_norm=0.1, batch_size=100,
               n_noisy_steps=6)
    assert clf.mechanism_params_["max_grad_norm"] == 0.1
    assert len(seen) == 6
    for norms, clip, batch in seen:
        assert clip == 0.1 and batch < 400  # Poisson batches, not the whole set
        assert norms.max() <= 0.1 * (1 + 1e-12)
    # Some gradients were actually clipped (the bound is binding).
    assert any(np.isclose(norms, 0.1).any() for norms, _, _ in seen)


@pytest.mark.parametrize("n_classes, expected", [(2, 1.0), (5, math.sqrt(5.0))])
def test_clip_norm_defaults(n_classes, expected):
    assert first_order_sensitivity(n_classes, "full", None) == (expected, expected)
    assert first_order_sensitivity(n_classes, "full", 0.3) == (0.3, 0.3)
    label = first_order_sensitivity(n_classes, "label", 0.3)  # no clipping under label DP
    assert label == (None, 1.0 if n_classes == 2 else math.sqrt(2.0))
    # The default clips nothing: every per-example gradient is within sqrt(m).
    Z = _design(n_unit=50)
    E = one_vs_rest_targets(np.arange(len(Z)) % n_classes, n_classes)
    theta = np.random.default_rng(0).standard_normal((E.shape[1], Z.shape[1])) * 30
    raw = per_example_gradients(theta, Z, E, None)
    assert np.linalg.norm(raw.reshape(len(Z), -1), axis=1).max() <= expected


# --------------------------------------------------------------------------- sensitivity


@pytest.mark.parametrize("n_classes", [2, 3, 6])
def test_label_dp_sensitivity_on_neighbouring_label_vectors(n_classes):
    """Changing one label moves the unclipped gradient sum by (e_old - e_new) z^T."""
    Z = _design(n=120, n_unit=120)  # every row of norm exactly 1: the bound is attained
    rng = np.random.default_rng(0)
    codes = rng.integers(0, n_classes, len(Z))
    m = 1 if n_classes == 2 else n_classes
    delta_bound = first_order_params(
        "sgd", epsilon=1.0, delta=DELTA, n_samples=len(Z), n_classes=n_classes, reg=0.0,
        privacy="label", n_noisy_steps=5, batch_size=None, max_grad_norm=None,
        learning_rate=None,
    )["sensitivities"]["gradient"]
    assert delta_bound == (1.0 if m == 1 else math.sqrt(2.0))
    norms = row_norms(Z)
    worst = 0.0
    for _ in range(20):
        theta = rng.standard_normal((m, Z.shape[1])) * 3.0
        i = rng.integers(len(Z))
        other = codes.copy()
        other[i] = (codes[i] + 1 + rng.integers(n_classes - 1)) % n_classes
        sums = [np.asarray(Z.T @ clipped_residuals(theta, Z, one_vs_rest_targets(c, n_classes),
                                                    norms, None)).T
                for c in (codes, other)]
        change = np.linalg.norm(sums[0] - sums[1])
        assert change <= delta_bound * (1 + 1e-12)
        worst = max(worst, change)
    np.testing.assert_allclose(worst, delta_bound)  # tight: ||e_old - e_new|| ||z||


@pytest.mark.parametrize("n_classes", [2, 3, 6])
@pytest.mark.parametrize("clip_norm", [0.05, 0.3, 0.6, None])
def test_full_dp_label_sensitivity_on_neighbouring_label_vectors(n_classes, clip_norm):
    """Full DP clips; a label change moves the clipped sum by at most min(2 C, sqrt(2))
    (min(2 C, 1) for two classes), the label_sensitivities the ledger is charged for."""
    Z = _design(n=120, n_unit=120)  # every row of norm exactly 1
    rng = np.random.default_rng(1)
    codes = rng.integers(0, n_classes, len(Z))
    m = 1 if n_classes == 2 else n_classes
    params = first_order_params(
        "sgd", epsilon=1.0, delta=DELTA, n_samples=len(Z), n_classes=n_classes, reg=0.0,
        privacy="full", n_noisy_steps=5, batch_size=None, max_grad_norm=clip_norm,
        learning_rate=None,
    )
    clip = params["max_grad_norm"]
    bound = params["label_sensitivities"]["gradient"]
    unclipped = 1.0 if m == 1 else math.sqrt(2.0)
    assert bound == first_order_label_sensitivity(n_classes, clip) == min(2 * clip, unclipped)
    norms = row_norms(Z)
    worst = 0.0
    for _ in range(30):
        theta = rng.standard_normal((m, Z.shape[1])) * 3.0
        i = rng.integers(len(Z))
        other = codes.copy()
        other[i] = (codes[i] + 1 + rng.integers(n_classes - 1)) % n_classes
        sums = [np.asarray(Z.T @ clipped_residuals(theta, Z, one_vs_rest_targets(c, n_classes),
                                                    norms, clip)).T
                for c in (codes, other)]
        change = np.linalg.norm(sums[0] - sums[1])
        assert change <= bound * (1 + 1e-12)
        worst = max(worst, change)
    if m == 1 or clip >= math.sqrt(m):
        # Tight with two classes (both gradients clipped and opposite when 2 C < 1; the
        # residual moves by exactly 1 otherwise) and when nothing is clipped.
        np.testing.assert_allclose(worst, bound, rtol=0.05 if clip < 0.5 else 1e-12)


def test_full_dp_sensitivity_is_the_clip_norm_for_add_remove():
    Z = _design(n=150, n_unit=150)
    E = one_vs_rest_targets(np.arange(150) % 4, 4)
    theta = np.random.default_rng(0).standard_normal((4, Z.shape[1])) * 5
    grads = per_example_gradients(theta, Z, E, 0.5)
    total = grads.sum(axis=0)
    changes = [np.linalg.norm(total - (total - grads[i])) for i in range(150)]
    assert max(changes) <= 0.5 * (1 + 1e-12)


# --------------------------------------------------------------------------- noise


@pytest.mark.parametrize("sample_rate", [1.0, 0.2])
def test_noise_std_of_the_release(sample_rate):
    """Zero rows: the release is pure noise, of std noise_multiplier * C / (q n)."""
    n, d, m = 500, 5, 3
    Z = np.zeros((n, d))
    E = one_vs_rest_targets(np.arange(n) % m, m)
    s, clip = 2.5, 0.7
    expected_batch = sample_rate * n
    std = s * clip / expected_batch
    rng = np.random.default_rng(0)
    draws = np.concatenate([
        noisy_gradient(np.zeros((m, d)), Z, E, np.zeros(n), sample_rate=sample_rate,
                       clip_norm=clip, expected_batch_size=expected_batch, noise_std=std,
                       random_state=rng).ravel()
        for _ in range(400)
    ])
    assert stats.kstest(draws / std, "norm").pvalue > 0.01
    assert np.std(draws) == pytest.approx(std, rel=0.03)


@pytest.mark.parametrize(
    "privacy, n_classes, batch_size",
    [("label", 2, None), ("label", 4, None), ("full", 4, None), ("full", 3, 150)],
)
def test_estimator_noise_is_calibrated(privacy, n_classes, batch_size):
    """One SGD step from 0 on zero-gradient data: theta_1 = -lr * noise."""
    X, y = _blobs(n_classes, n=600)
    eps, T = 1.0, 7
    kw = dict(solver="sgd", privacy=privacy, n_noisy_steps=T, batch_size=batch_size,
              learning_rate=1.0, max_grad_norm=0.8 if privacy == "full" else None)
    plan = _fit(X, y, n_classes, **kw).mechanism_params_
    m = 1 if n_classes == 2 else n_classes
    sens = 0.8 if privacy == "full" else (1.0 if m == 1 else math.sqrt(2.0))
    if batch_size is None:
        # A label change moves each release by label_shift (min(2 C, sqrt(2)) = sqrt(2)
        # under full DP with C = 0.8 and 4 classes): the run is one Gaussian of
        # mu = sqrt(T) (shift / sens) / s noise stds, mu where the exact profile meets delta.
        label_shift = 1.0 if m == 1 else math.sqrt(2.0)
        mu = _exact_gaussian_mu(eps, DELTA)
        s = math.sqrt(T) * (label_shift / sens) / mu
        assert plan["gaussian_mu"] == pytest.approx(mu, rel=1e-6)
        assert plan["rho"] == pytest.approx(mu**2 / 2, rel=1e-6)
        assert (math.sqrt(T) * (label_shift / sens) / plan["noise_multiplier"]
                == pytest.approx(plan["gaussian_mu"], rel=1e-12))
        # Less noise than the zCDP conversion the exact profile replaced.
        assert s < math.sqrt(T * (label_shift / sens) ** 2 / (2 * approx_dp_to_zcdp(eps, DELTA)))
        q = 1.0
    else:
        # The label change accounted directly: clipped gradients of norm <= B = min(C,
        # sqrt(m)) = 0.8, moved by <= D = min(2 C, sqrt(2)) = sqrt(2); with 3 classes only
        # the replace-one pair +-B dominates (no straddle).
        q = batch_size / 600
        s = plan["noise_multiplier"]
        label_eps, key, value = bounded_label_change_epsilon(
            s * 0.8, q, T, DELTA, norm_bound=0.8, change_bound=math.sqrt(2.0), straddle=False)
        assert key == "subsampled_gaussian_label" and plan["dominating_pair"] == (key, value)
        assert value == (s, q, T)
        assert plan["label_epsilon"] == label_eps
        assert 0.98 * eps <= label_eps <= eps  # calibrated, not merely valid
        assert s < calibrate_dp_sgd(eps, DELTA, q, T)[0]  # less than group privacy's
        assert "rho" not in plan and "gaussian" not in plan
    assert plan["noise_multiplier"] == pytest.approx(s)
    assert plan["sample_rate"] == pytest.approx(q)
    assert plan["expected_batch_size"] == pytest.approx(q * 600)
    assert plan["sensitivities"] == {"gradient": pytest.approx(sens)}
    assert plan["noise_scales"]["gradient"] == pytest.approx(s * sens / (q * 600))
    assert plan["max_grad_norm"] == (0.8 if privacy == "full" else None)
    # Empirically, through the solver the estimator runs: zero features (the
    # gradient is 0 whatever the labels), one step, learning rate 1.
    Z = np.zeros((600, 5))
    rng = np.random.default_rng(0)
    noise = np.concatenate([
        -noisy_first_order_logistic(
            y, Z=Z, n_classes=n_classes, optimizer="sgd", n_noisy_steps=1, reg=0.0,
            learning_rate=1.0, sample_rate=plan["sample_rate"], clip_norm=plan["max_grad_norm"],
            expected_batch_size=plan["expected_batch_size"],
            noise_std=plan["noise_scales"]["gradient"], random_state=rng,
        ).ravel()
        for _ in range(150)
    ])
    assert stats.kstest(noise / plan["noise_scales"]["gradient"], "norm").pvalue > 0.01


def test_noise_decreases_with_epsilon_and_grows_with_steps():
    X, y = _blobs(2, n=300)
    std = {(eps, T): _fit(X, y, 2, solver="adam", epsilon=eps, n_noisy_steps=T)
           .mechanism_params_["noise_scales"]["gradient"] for eps in (0.5, 2.0) for T in (4, 16)}
    assert std[(2.0, 4)] < std[(0.5, 4)] and std[(0.5, 4)] < std[(0.5, 16)]
    # sqrt(T): T releases compose into one Gaussian of mu = sqrt(T) / s.
    assert std[(0.5, 16)] == pytest.approx(2 * std[(0.5, 4)])


# --------------------------------------------------------------------------- sampling


def test_poisson_sampling_rate_and_variance():
    """Count the rows in each batch through the release itself: binomial(n, q), not fixed."""
    n, q = 400, 0.1
    Z = np.zeros((n, 2))
    Z[:, 0] = 1.0
    E = np.zeros((n, 1))  # theta = 0: every residual is 1/2
    rng = np.random.default_rng(0)
    counts = np.array([
        noisy_gradient(np.zeros((1, 2)), Z, E, np.ones(n), sample_rate=q, clip_norm=1.0,
                       expected_batch_size=1.0, noise_std=0.0, random_state=rng)[0, 0] / 0.5
        for _ in range(3000)
    ])
    np.testing.assert_allclose(counts, np.round(counts))
    assert counts.mean() == pytest.approx(n * q, rel=0.02)
    assert counts.var() == pytest.approx(n * q * (1 - q), rel=0.1)
    # Each row independently: the inclusion frequency of every row is about q.
    hits = np.zeros(n)
    for _ in range(2000):
        hits[poisson_sample(n, q, rng)] += 1
    assert hits.mean() / 2000 == pytest.approx(q, rel=0.02)
    assert stats.chisquare(hits).pvalue > 0.001
    np.testing.assert_array_equal(poisson_sample(7, 1.0, rng), np.arange(7))


def test_the_released_mean_divides_by_the_expected_batch_size():
    n, q = 300, 0.2
    Z = np.zeros((n, 1))
    Z[:, 0] = 1.0
    rng = np.random.default_rng(5)
    rows = poisson_sample(n, q, np.random.default_rng(5))
    release = noisy_gradient(np.zeros((1, 1)), Z, np.zeros((n, 1)), np.ones(n), sample_rate=q,
                             clip_norm=1.0, expected_batch_size=q * n, noise_std=0.0,
                             random_state=rng)
    assert release[0, 0] == pytest.approx(0.5 * rows.size / (q * n))


# --------------------------------------------------------------------------- accounting


@pytest.mark.parametrize("solver, mechanism", [("sgd", "DP-SGD"), ("adam", "DP-Adam")])
@pytest.mark.parametrize("privacy", ["label", "full"])
def test_full_batch_spend_is_the_exact_gaussian_leaf(solver, mechanism, privacy):
    X, y = _blobs(3, n=300)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = _fit(X, y, 3, solver=solver, privacy=privacy, n_noisy_steps=12, epsilon=1.5,
               accountant=acc)
    spend = clf.privacy_spend_
    mu = _exact_gaussian_mu(1.5, DELTA)
    assert spend.mechanism == mechanism and spend.composition == "leaf"
    example = {}
    if privacy == "full":
        example = {"example_epsilon": clf.example_epsilon_, "example_delta": DELTA}
    assert spend.params == {"privacy": privacy, **clf.mechanism_params_, **example}
    # The Gaussian of mu noise stds whose exact profile is (1.5, DELTA); rho = mu^2 / 2.
    assert spend.description.value == pytest.approx(mu, rel=1e-6)
    assert _gaussian_profile(1.5, spend.description.value) <= DELTA * (1 + 1e-9)
    assert spend.rho == pytest.approx(mu**2 / 2, rel=1e-6)
    # The zCDP conversion of the same rho overstates the spend: the exact profile buys more.
    assert zcdp_to_approx_dp(spend.rho, DELTA) > 1.5
    assert (clf.epsilon_, clf.delta_) == (1.5, DELTA)
    assert acc.spends == [spend]
    assert clf.n_iter_ == 12


@pytest.mark.parametrize("n_classes, max_grad_norm", [(2, None), (2, 0.1), (3, None), (3, 0.5)])
def test_full_batch_full_dp_is_charged_for_the_label_change(n_classes, max_grad_norm):
    """The ledger's Gaussian is the label-change one, mu = sqrt(T) min(2 C, Delta) / (s C),
    exact profile at (1, DELTA); the add/remove sqrt(T) / s gives example_epsilon_. With
    C = 0.1 and two classes a label change moves the releases twice as far as adding or
    removing an example (an add/remove record would under-state it)."""
    X, y = _blobs(n_classes, n=300)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    T = 9
    clf = _fit(X, y, n_classes, solver="sgd", privacy="full", n_noisy_steps=T,
               max_grad_norm=max_grad_norm, accountant=acc)
    params = clf.mechanism_params_
    s, clip = params["noise_multiplier"], params["max_grad_norm"]
    shift = min(2 * clip, 1.0 if n_classes == 2 else math.sqrt(2.0))
    assert params["label_sensitivities"] == {"gradient": shift}
    mu = params["gaussian_mu"]
    assert mu == pytest.approx(math.sqrt(T) * (shift / clip) / s, rel=1e-12)
    assert mu == pytest.approx(_exact_gaussian_mu(1.0, DELTA), rel=1e-6)
    assert params["rho"] == pytest.approx(mu**2 / 2, rel=1e-12)
    assert params["example_gaussian_mu"] == pytest.approx(math.sqrt(T) / s, rel=1e-12)
    assert params["example_rho"] == pytest.approx(T / (2 * s**2), rel=1e-12)
    if max_grad_norm == 0.1:
        assert mu == pytest.approx(2 * params["example_gaussian_mu"])
        assert params["rho"] == pytest.approx(4 * params["example_rho"])
    assert clf.epsilon_ <= 1.0 and _gaussian_profile(clf.epsilon_, mu) <= DELTA * (1 + 1e-9)
    assert clf.privacy_spend_.description.value == mu
    assert (acc.total().epsilon, acc.total().delta) == (clf.epsilon_, clf.delta_)
    assert clf.example_epsilon_ == pytest.approx(
        _exact_gaussian_epsilon(params["example_gaussian_mu"], DELTA), rel=1e-9)
    assert _gaussian_profile(clf.example_epsilon_, params["example_gaussian_mu"]) <= DELTA * (
        1 + 1e-9)
    assert clf.example_delta_ == DELTA


def _dp_accounting_epsilon(relation, noise_multiplier, q, steps, delta):
    """dp-accounting's PLD epsilon of ``steps`` Poisson-subsampled Gaussians, built here."""
    dpa = pytest.importorskip("dp_accounting")
    accountant = dpa.pld.PLDAccountant(getattr(dpa.NeighboringRelation, relation))
    accountant.compose(dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(noise_multiplier)), steps))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("solver", ["sgd", "adam"])
def test_minibatch_spend_is_the_direct_label_change_guarantee(solver):
    """Poisson minibatches, two classes, C = 1: every clipped gradient has norm <= B = 1 and
    a label change moves it by <= D = min(2 C, 1) = 1, through 0; the replace-one pair +-B
    and the add/remove pair of sensitivity D both dominate, and the record is the smaller
    epsilon (the add/remove one here), at the fit's delta, with no group privacy."""
    X, y = _blobs(2, n=1000)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    T, b = 40, 50
    clf = _fit(X, y, 2, solver=solver, privacy="full", n_noisy_steps=T, batch_size=b,
               epsilon=0.8, accountant=acc)
    q = b / 1000
    params, spend = clf.mechanism_params_, clf.privacy_spend_
    s = params["noise_multiplier"]
    assert params["max_grad_norm"] == 1.0
    label_eps, key, value = bounded_label_change_epsilon(
        s, q, T, DELTA, norm_bound=1.0, change_bound=1.0, straddle=True)
    assert key == "subsampled_gaussian" and value == (s, q, T)
    assert clf.epsilon_ == params["label_epsilon"] == label_eps
    assert 0.98 * 0.8 <= clf.epsilon_ <= 0.8 and clf.delta_ == DELTA
    # Independently: dp-accounting's accountants of the two pairs, the smaller of them.
    reference = min(_dp_accounting_epsilon("REPLACE_ONE", s, q, T, DELTA),
                    _dp_accounting_epsilon("ADD_OR_REMOVE_ONE", s, q, T, DELTA))
    assert 0.99 <= clf.epsilon_ / reference <= 1.10
    # Less noise than group privacy bought for the same label budget.
    assert s < calibrate_dp_sgd(0.8, DELTA, q, T)[0]
    # The add/remove guarantee of the same noise, beside it (here the same pair: D = C).
    assert clf.example_epsilon_ == subsampled_gaussian_epsilon(s, q, T, DELTA, method="pld")
    assert clf.example_epsilon_ == pytest.approx(
        _dp_accounting_epsilon("ADD_OR_REMOVE_ONE", s, q, T, DELTA), rel=0.02)
    assert clf.example_delta_ == DELTA
    assert spend.params["example_epsilon"] == clf.example_epsilon_
    assert (spend.description.kind, spend.description.value) == (key, value)
    assert spend.rho is None
    assert spend.params.items() >= params.items()
    assert (acc.total().epsilon, acc.total().delta) == (clf.epsilon_, clf.delta_)
    # The described add/remove pair composes by Renyi DP too: valid, looser than the PLD.
    assert acc.total_rdp_approx_dp(DELTA).epsilon >= clf.epsilon_


def test_the_dp_sgd_calibrations(monkeypatch):
    """calibrate_dp_sgd (DPSGDClassifier's): the smallest multiplier whose add/remove
    guarantee is within (epsilon / 2, delta / (1 + e^(epsilon / 2))), so that its
    group-privacy label guarantee is within (epsilon, delta); the guarantee it returns is
    the accountant's for that multiplier. The linear models' Poisson minibatches use
    calibrate_bounded_label_change instead, the label change accounted directly."""
    eps, q, T = 1.0, 0.05, 30
    sigma, eps_ex, delta_ex = calibrate_dp_sgd(eps, DELTA, q, T)
    assert delta_ex == DELTA / (1 + math.exp(eps / 2))
    assert eps_ex == subsampled_gaussian_epsilon(sigma, q, T, delta_ex) <= eps / 2
    assert subsampled_gaussian_epsilon(sigma / (1 + 1e-5), q, T, delta_ex) > eps / 2  # smallest
    assert 2 * eps_ex <= eps and (1 + math.exp(eps_ex)) * delta_ex <= DELTA
    # The estimator's minibatch calibration (3 classes, default C = sqrt(3)): norm bound
    # B = min(C, sqrt(3)), change bound D = min(2 C, sqrt(2)), replace-one pair only.
    params = first_order_params("sgd", epsilon=eps, delta=DELTA, n_samples=1000, n_classes=3,
                                reg=1e-3, privacy="full", n_noisy_steps=T, batch_size=50,
                                max_grad_norm=None, learning_rate=None)
    clip = params["max_grad_norm"]
    assert clip == pytest.approx(math.sqrt(3.0))
    std, label_eps, key, value = calibrate_bounded_label_change(
        eps, DELTA, q, T, math.sqrt(3.0), math.sqrt(2.0), False)
    assert (params["noise_multiplier"] * clip, params["sample_rate"]) == pytest.approx((std, q))
    assert params["label_epsilon"] == label_eps <= eps and params["dominating_pair"] == (key, value)
    assert label_eps == bounded_label_change_epsilon(
        std, q, T, DELTA, norm_bound=math.sqrt(3.0), change_bound=math.sqrt(2.0),
        straddle=False)[0]
    assert params["noise_multiplier"] < sigma  # below group privacy's multiplier
    # The accountants are named once, and the calibration takes no other.
    assert SUBSAMPLED_GAUSSIAN_METHODS == ("rdp", "pld")
    with pytest.raises(ValueError, match=r"\('rdp', 'pld'\)"):
        calibrate_dp_sgd(eps, DELTA, q, T, method="gdp")
    # A run whose epsilon computes as 0 cannot be charged: refused, with public numbers.
    monkeypatch.setattr(_subsampled, "subsampled_gaussian_epsilon", lambda *a, **k: 0.0)
    with pytest.raises(ValueError, match="computes as 0.0"):
        calibrate_dp_sgd(eps, DELTA, q, T)


def test_budget_is_charged_before_training(monkeypatch):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    charged_at_training = []

    def spy(codes, **kwargs):
        charged_at_training.append(len(acc.spends))
        raise RuntimeError("stop")

    monkeypatch.setattr(_solvers, "noisy_first_order_logistic", spy)
    X, y = _blobs(2, n=200)
    # The training runs inside the release: its error becomes the release site's
    # fixed ReleaseError, whose text is not the training's ("stop").
    with pytest.raises(ReleaseError, match=r"DPLogisticRegression\(solver='sgd'\)") as info:
        _fit(X, y, 2, solver="sgd", accountant=acc)
    assert "stop" not in str(info.value) and info.value.__context__ is None
    assert charged_at_training == [1]  # the charge came before the training started
    assert acc.total().epsilon == pytest.approx(1.0)  # spent although the fit failed


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(batch_size=50), "privacy='full'"),  # label DP with minibatches
        (dict(batch_size=201, privacy="full"), "larger than the number"),
        (dict(batch_size=0, privacy="full"), "batch_size"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(learning_rate=-1.0), "learning_rate"),
        (dict(max_grad_norm=0.0, privacy="full"), "max_grad_norm"),
        (dict(delta=0.0), "delta"),
        (dict(n_noisy_steps=0), "n_noisy_steps"),
    ],
)
@pytest.mark.parametrize("solver", ["sgd", "adam"])
def test_bad_configurations_are_refused_before_any_charge(monkeypatch, solver, params, match):
    def never(*args, **kwargs):  # pragma: no cover - reached only on a bug
        raise AssertionError("the labels were read")

    monkeypatch.setattr(_solvers, "noisy_first_order_logistic", never)
    X, y = _blobs(2, n=200)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match=match):
        _fit(X, y, 2, solver=solver, accountant=acc, **params)
    assert acc.spends == []


# --------------------------------------------------------------------------- utility


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize(
    "params",
    [
        dict(solver="sgd", learning_rate=16.0, n_noisy_steps=400),
        dict(solver="adam", learning_rate=0.1, n_noisy_steps=300),
        dict(solver="adam", learning_rate=0.1, n_noisy_steps=300, privacy="full"),
        dict(solver="sgd", learning_rate=4.0, n_noisy_steps=600, privacy="full", batch_size=64),
    ],
)
def test_huge_epsilon_agrees_with_the_non_private_model(params):
    X_train, X_test, y_train, y_test = _breast_cancer()
    R = 8.0
    clf = DPLogisticRegression(epsilon=1e9, delta=DELTA, C=1.0, data_norm=R, classes=[0, 1],
                               random_state=0, **params).fit(X_train, y_train)
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=10000)
    ref.fit(math.sqrt(2) * _feature_map(X_train, R, True), y_train)
    Z_test = np.hstack([X_test / R, np.ones((len(X_test), 1))])
    assert np.mean(clf.predict(X_test) == ref.predict(Z_test)) >= 0.97
    assert clf.score(X_test, y_test) >= ref.score(Z_test, y_test) - 0.03


def test_noiseless_full_batch_sgd_is_gradient_descent():
    Z = _design(n=100)
    codes = np.arange(100) % 2
    theta = noisy_first_order_logistic(
        codes, Z=Z, n_classes=2, optimizer="sgd", n_noisy_steps=3, reg=0.01,
        learning_rate=2.0, sample_rate=1.0, clip_norm=None, expected_batch_size=100,
        noise_std=0.0, random_state=np.random.default_rng(0),
    )
    ref = np.zeros((1, Z.shape[1]))
    for _ in range(3):
        p = 1 / (1 + np.exp(-(Z @ ref.T)))
        ref -= 2.0 * ((Z.T @ (p - codes[:, None])).T / 100 + 0.01 * ref)
    np.testing.assert_allclose(theta, ref)


def test_noiseless_adam_matches_the_reference_update():
    Z = _design(n=100)
    codes = np.arange(100) % 3
    E = one_vs_rest_targets(codes, 3)
    theta = noisy_first_order_logistic(
        codes, Z=Z, n_classes=3, optimizer="adam", n_noisy_steps=4, reg=0.0,
        learning_rate=0.05, sample_rate=1.0, clip_norm=None, expected_batch_size=100,
        noise_std=0.0, random_state=np.random.default_rng(0),
    )
    ref, m1, m2 = np.zeros((3, Z.shape[1])), 0.0, 0.0
    for t in range(1, 5):
        g = (Z.T @ (1 / (1 + np.exp(-(Z @ ref.T))) - E)).T / 100
        m1 = 0.9 * m1 + 0.1 * g
        m2 = 0.999 * m2 + 0.001 * g**2
        ref -= 0.05 * (m1 / (1 - 0.9**t)) / (np.sqrt(m2 / (1 - 0.999**t)) + 1e-8)
    np.testing.assert_allclose(theta, ref)


@pytest.mark.parametrize("solver", ["sgd", "adam"])
def test_multiclass_fit_at_moderate_epsilon(solver):
    X, y = make_blobs(3000, 4, centers=4, cluster_std=1.0, random_state=0)
    clf = DPLogisticRegression(epsilon=1.0, delta=DELTA, solver=solver, n_noisy_steps=100,
                               learning_rate=16.0 if solver == "sgd" else 0.1, C=10.0,
                               classes=range(4), random_state=0).fit(X, y)
    assert clf.coef_.shape == (4, 4) and clf.n_iter_ == 100
    assert clf.score(X, y) >= 0.9
    assert clf.predict_proba(X[:5]).shape == (5, 4)


# --------------------------------------------------------------------------- bookkeeping


@pytest.mark.parametrize("solver", ["sgd", "adam"])
def test_default_learning_rates(solver):
    X, y = _blobs(2, n=200)
    assert _fit(X, y, 2, solver=solver).mechanism_params_["learning_rate"] == (
        DEFAULT_LEARNING_RATES[solver])
    assert DEFAULT_LEARNING_RATES == {"sgd": 4.0, "adam": 0.1}


@pytest.mark.parametrize("params", [dict(), dict(privacy="full", batch_size=60)])
def test_parameters_are_public_and_runs_replay(params):
    X, y = _blobs(3, n=300)
    fits = [_fit(X, labels, 3, solver="adam", n_noisy_steps=5, **params)
            for labels in (y, (y + 1) % 3, y)]
    assert fits[0].mechanism_params_ == fits[1].mechanism_params_
    np.testing.assert_array_equal(fits[0].coef_, fits[2].coef_)  # same seed, same noise
    other = _fit(X, y, 3, solver="adam", n_noisy_steps=5, random_state=1, **params)
    assert not np.array_equal(fits[0].coef_, other.coef_)
    fitted = {k for k in vars(fits[0]) if k.endswith("_") and not k.startswith("_")}
    assert not any(isinstance(getattr(fits[0], k), np.random.Generator) for k in fitted)


def test_sparse_input_matches_dense():
    X, y = _blobs(3, n=300)
    X[np.abs(X) < 1.0] = 0.0
    kw = dict(solver="sgd", privacy="full", batch_size=60, n_noisy_steps=8)
    dense = _fit(X, y, 3, **kw)
    sparse = _fit(sp.csr_matrix(X), y, 3, **kw)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, atol=1e-10)


def test_the_exact_minimisers_parameters_are_unused():
    X, y = _blobs(2, n=200)
    base = _fit(X, y, 2, solver="sgd", n_noisy_steps=5)
    other = _fit(X, y, 2, solver="sgd", n_noisy_steps=5, max_iter=1, tol=1.0)
    np.testing.assert_array_equal(base.coef_, other.coef_)
