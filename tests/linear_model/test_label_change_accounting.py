"""The linear models' label change accounted directly, beside their example-level guarantee.

DP-SGD's Poisson minibatches by the label change's dominating pairs (checked
numerically against the worst configurations of one step, and recorded against
an independent dp-accounting reference), the full-batch Gaussian releases by
the exact Gaussian profile, and objective and output perturbation calibrated
for a label change with their substitution guarantee reported beside it.
"""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_labeldp.accounting import BudgetAccountant, calibrate_dp_sgd
from sklearn_labeldp.accounting._label_change import bounded_label_change_epsilon
from sklearn_labeldp.linear_model import DPLinearSVC, DPLogisticRegression
from sklearn_labeldp.linear_model._erm_base import _feature_map
from sklearn_labeldp.linear_model._losses import LogisticLoss
from sklearn_labeldp.linear_model._minimise import minimise

dpa = pytest.importorskip("dp_accounting")

DELTA = 1e-5


def _blobs(n_classes, n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, 4)) + 2.0 * np.eye(n_classes, 4)[y]
    return X, y


def _fit(n_classes, **params):
    X, y = _blobs(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPLogisticRegression(classes=np.arange(n_classes), random_state=0, data_norm=3.0,
                                    accountant=BudgetAccountant(delta=1.0), **params).fit(X, y)


# --------------------------------------------------------------------------- dominating pairs


def _hockey_stick(p, q, eps, dx):
    return np.sum(np.maximum(p - math.exp(eps) * q, 0.0)) * dx


def test_the_add_remove_pair_dominates_a_straddling_label_change():
    """One step, gradients -u e and v e (u + v <= D) around the shared component 0: the
    worst configuration is u = 0 (the add/remove pair of sensitivity D); the symmetric
    pair u = v = D / 2 (dp-accounting's replace-one pair of sensitivity D / 2) is not
    dominating."""
    x = np.linspace(-30, 30, 120_001)
    dx = x[1] - x[0]
    worst_gap, symmetric_short = -1.0, 0.0
    for q in (0.01, 0.2):
        for sigma in (0.5, 1.5):
            def law(shift, q=q, sigma=sigma):
                return (1 - q) * norm.pdf(x, 0, sigma) + q * norm.pdf(x, shift, sigma)

            for eps in (0.1, 1.0):
                pair = (norm.pdf(x, 0, sigma), law(1.0))
                bound = max(_hockey_stick(*pair, eps, dx), _hockey_stick(*pair[::-1], eps, dx))
                for u in np.linspace(0.0, 1.0, 11):
                    p, r = law(-u), law(1.0 - u)
                    worst = max(_hockey_stick(p, r, eps, dx), _hockey_stick(r, p, eps, dx))
                    worst_gap = max(worst_gap, worst - bound * (1 + 1e-9))
                symmetric = _hockey_stick(law(-0.5), law(0.5), eps, dx)
                symmetric_short = max(symmetric_short, bound / max(symmetric, 1e-300))
    assert worst_gap <= 0.0
    assert symmetric_short > 5.0  # the lead's Delta / 2 pair would understate delta


def _reference(noise_std, q, steps, delta, norm_bound, change_bound, straddle):
    """dp-accounting's accountants, built here: replace-one +-B, and add/remove D."""
    def epsilon(relation, sigma):
        accountant = dpa.pld.PLDAccountant(relation)
        accountant.compose(dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps))
        return accountant.get_epsilon(delta)

    relation = dpa.NeighboringRelation
    values = [epsilon(relation.REPLACE_ONE, noise_std / norm_bound)]
    if straddle:
        values.append(epsilon(relation.ADD_OR_REMOVE_ONE, noise_std / change_bound))
    return min(values)


@pytest.mark.parametrize(
    "n_classes, clip, epsilon",
    [(2, None, 1.0), (2, 0.3, 2.0), (3, 0.5, 1.0), (3, None, 4.0)],
)
def test_minibatch_record_against_an_independent_reference(n_classes, clip, epsilon):
    steps, batch = 40, 60
    clf = _fit(n_classes, solver="sgd", privacy="full", epsilon=epsilon, delta=DELTA,
               batch_size=batch, n_noisy_steps=steps, max_grad_norm=clip)
    params = clf.mechanism_params_
    m = 1 if n_classes == 2 else n_classes
    c = params["max_grad_norm"]
    noise_std = params["noise_multiplier"] * c
    label_bound = min(2 * c, 1.0 if m == 1 else math.sqrt(2.0))
    reference = _reference(noise_std, batch / 600, steps, DELTA, min(c, math.sqrt(m)),
                           label_bound, m == 1)
    assert 0.99 <= clf.epsilon_ / reference <= 1.10
    assert clf.epsilon_ <= epsilon and clf.delta_ == DELTA
    # Calibrated, not merely valid: the record is close to the budget.
    assert clf.epsilon_ >= 0.98 * epsilon
    # Less noise than group privacy bought for the same label budget.
    group_sigma, _, _ = calibrate_dp_sgd(epsilon, DELTA, batch / 600, steps)
    assert params["noise_multiplier"] < group_sigma
    # The example-level (add/remove) guarantee of the same run, beside it.
    add_remove = dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    add_remove.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(
        batch / 600, dpa.GaussianDpEvent(params["noise_multiplier"])), steps))
    assert clf.example_epsilon_ == pytest.approx(add_remove.get_epsilon(DELTA), rel=0.02)
    assert clf.example_delta_ == DELTA


def test_binary_label_change_costs_the_add_remove_epsilon():
    # Two classes, C >= 1/2: the add/remove pair of sensitivity 1 gives the record,
    # described as such for the ledger's exact composition.
    eps, key, value = bounded_label_change_epsilon(
        2.0, 0.05, 100, DELTA, norm_bound=1.0, change_bound=1.0, straddle=True)
    assert key == "subsampled_gaussian" and value == (2.0, 0.05, 100)
    replace, _, _ = bounded_label_change_epsilon(
        2.0, 0.05, 100, DELTA, norm_bound=1.0, change_bound=1.0, straddle=False)
    assert eps < 0.75 * replace
    with pytest.raises(ValueError, match="change_bound"):
        bounded_label_change_epsilon(2.0, 0.05, 100, DELTA, norm_bound=0.4, change_bound=1.0,
                                     straddle=True)


# --------------------------------------------------------------------------- full batch


def _exact_epsilon(mu, delta):
    pld = dpa.pld.privacy_loss_distribution.from_gaussian_mechanism(1.0 / mu)
    return pld.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("solver", ["sgd", "newton", "fc"])
@pytest.mark.parametrize("privacy", ["label", "full"])
def test_full_batch_gaussian_records_are_exact(solver, privacy):
    clf = _fit(3, solver=solver, privacy=privacy, epsilon=1.0, delta=DELTA, n_noisy_steps=5)
    spend = clf.privacy_spend_
    mu = spend.description.value
    assert 0.99 <= clf.epsilon_ / _exact_epsilon(mu, DELTA) <= 1.01
    if privacy == "full":
        mu_ex = spend.params["example_gaussian_mu"]
        assert clf.example_epsilon_ == pytest.approx(_exact_epsilon(mu_ex, DELTA), rel=0.01)
    # Five fits compose by the privacy loss distribution: well below the sum.
    accountant = BudgetAccountant(delta=1.0)
    for _ in range(5):
        accountant.spend(spend)
    total = accountant.total(slack=DELTA).epsilon
    assert total == pytest.approx(_exact_epsilon(math.sqrt(5) * mu, 6 * DELTA), rel=0.01)
    assert total < 0.6 * 5 * clf.epsilon_


# --------------------------------------------------------------------------- perturbation


@pytest.mark.parametrize("n_classes", [2, 4])
def test_output_perturbation_label_change_moves_the_minimiser_by_at_most_its_charge(n_classes):
    """The exact minimisers of two label vectors one label apart: each touched problem's
    moves by <= g_label / (n Lambda) = 1 / (n Lambda) (logistic), so the Gamma noise of
    density exp(-||b|| / scale) costs at most epsilon in total."""
    X, y = _blobs(n_classes, n=200)
    clf = DPLogisticRegression(solver="output", privacy="full", epsilon=1.0, C=0.5,
                               classes=np.arange(n_classes), data_norm=3.0, random_state=0,
                               accountant=BudgetAccountant()).fit(X, y)
    params = clf.mechanism_params_
    Z = _feature_map(X, 3.0, True)
    reg, n = params["regularization"], len(y)
    y2 = y.copy()
    y2[0] = (y[0] + 1) % n_classes
    problems = [1] if n_classes == 2 else range(n_classes)
    cost = 0.0
    for k in problems:
        signs = [np.where(labels == k, 1.0, -1.0) for labels in (y, y2)]
        f, f2 = (minimise(LogisticLoss(), Z, s, reg, np.zeros(Z.shape[1]), 1e-12, 1000)[0]
                 for s in signs)
        assert np.linalg.norm(f - f2) <= 1 / (n * reg) * (1 + 1e-6)
        cost += np.linalg.norm(f - f2) / params["noise_scale"]
    assert cost <= clf.epsilon_ * (1 + 1e-6)
    # The whole-example guarantee of the same noise: 2 / (n Lambda scale) per problem.
    assert clf.example_epsilon_ == pytest.approx(
        params["n_problems"] * 2 / (n * reg * params["noise_scale"]))
    assert clf.example_epsilon_ == pytest.approx(2.0 if n_classes == 2 else n_classes)


@pytest.mark.parametrize("estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("solver", ["objective", "output"])
def test_full_dp_perturbation_draws_the_label_calibrations_noise(estimator, solver):
    X, y = _blobs(5, n=300)
    fits = {}
    for privacy in ("label", "full"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[privacy] = estimator(solver=solver, privacy=privacy, epsilon=2.0, C=1.0,
                                      classes=np.arange(5), data_norm=3.0, random_state=0,
                                      accountant=BudgetAccountant()).fit(X, y)
    label, full = fits["label"], fits["full"]
    assert full.mechanism_params_ == label.mechanism_params_
    np.testing.assert_array_equal(full.coef_, label.coef_)
    assert full.epsilon_ == label.epsilon_ == 2.0
    # Substitution touches all 5 problems, a label change 2: more than 5/2 times eps.
    assert full.example_epsilon_ >= 2.5 * full.epsilon_
    assert full.privacy_spend_.params["example_epsilon"] == full.example_epsilon_
