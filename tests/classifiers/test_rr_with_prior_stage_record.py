"""RRWithPriorClassifier's stage records: k-ary randomized response at the smallest set.

The references here are computed without the library's mechanisms or accounting:
the optimal set sizes from Ghazi et al. (2021)'s score with numpy, and the
composition of k-ary randomized responses from the multinomial law of their
privacy losses.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import multinomial
from sklearn.linear_model import LogisticRegression

from sklearn_labeldp import BudgetAccountant, RRWithPriorClassifier
from sklearn_labeldp.priors import ClusterPrior

K = 6
CLASSES = list(range(K))
EPSILON = 1.0
N_FITS = 19
SLACK = 1e-6


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), rng.integers(0, K, n)


def _mixed_prior(n, seed=0):
    """Flat Dirichlet rows (sets of 4 to 6 classes at epsilon 1) and a tenth of
    near one-hot rows (sets of one class, which release nothing)."""
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.full(K, 30.0), size=n)
    sharp = np.arange(n) % 10 == 0
    prior[sharp] = 0.02
    prior[sharp, rng.integers(0, K, sharp.sum())] = 0.9
    return prior


def _optimal_sizes(prior, epsilon):
    """``argmax_k (sum of the k largest p) / (1 + (k - 1) e^-eps)``, ties to the smallest k."""
    top = np.cumsum(-np.sort(-prior, axis=1), axis=1)
    score = top / (1.0 + np.arange(prior.shape[1]) * math.exp(-epsilon))
    return np.argmax(score, axis=1) + 1


def _k_ary_rr_epsilon(epsilon, k, m, delta):
    """The exact epsilon at ``delta`` of ``m`` k-ary randomized responses at ``epsilon``.

    Under the first output law of a label pair each response's privacy loss is
    ``+eps`` (the first label), ``-eps`` (the second) or 0 (any other), with
    probabilities ``(e^eps, 1, k - 2) / (e^eps + k - 1)``; the profile is
    ``E[max(0, 1 - e^(e - L))]`` over the multinomial law of the counts.
    """
    z = math.exp(epsilon) + k - 1
    a, b = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    a, b = a[a + b <= m], b[a + b <= m]
    mass = multinomial.pmf(np.stack([a, b, m - a - b], axis=1), m,
                           [math.exp(epsilon) / z, 1 / z, (k - 2) / z])
    loss = epsilon * (a - b)

    def delta_of(e):
        return float(np.sum(mass * np.maximum(0.0, 1.0 - np.exp(e - loss))))

    return brentq(lambda e: delta_of(e) - delta, 0.0, m * epsilon, xtol=1e-12)


def _fit(prior=None, **params):
    X, y = _data()
    return RRWithPriorClassifier(LogisticRegression(), epsilon=EPSILON, classes=CLASSES,
                                 prior=prior, random_state=0, **params).fit(X, y)


def test_a_dirichlet_prior_stage_is_k_ary_rr_at_its_smallest_set():
    pytest.importorskip("dp_accounting")
    prior = _mixed_prior(200)
    sizes = _optimal_sizes(prior, EPSILON)
    k_min = int(sizes[sizes >= 2].min())
    assert (sizes == 1).any() and 2 < k_min < K  # neither the K nor the binary record
    clf = _fit(prior)
    (stage,) = clf.privacy_spend_.parts
    assert stage.description.value == (EPSILON, k_min)
    # The sizes recorded are the ones the mechanism used (one stage: every row).
    assert clf.mechanism_params_["mean_k"][0] == pytest.approx(sizes.mean(), rel=1e-12)
    acc = BudgetAccountant(math.inf, 1.0)
    for _ in range(N_FITS):
        acc.spend(clf.privacy_spend_)
    tight = acc.total(slack=SLACK).epsilon
    exact = _k_ary_rr_epsilon(EPSILON, k_min, N_FITS, SLACK)
    # dp-accounting's pessimistic grid (1e-4 per loss) overstates, never understates.
    assert exact * (1 - 1e-9) <= tight <= exact + N_FITS * 1e-4
    # The records the estimator could have made instead are 1 apart either way.
    assert _k_ary_rr_epsilon(EPSILON, K, N_FITS, SLACK) < exact - 1.0
    assert _k_ary_rr_epsilon(EPSILON, 2, N_FITS, SLACK) > exact + 1.0


def test_no_prior_is_k_ary_rr_over_every_class():
    (stage,) = _fit().privacy_spend_.parts
    assert stage.description.value == (EPSILON, K)


def test_sets_of_one_class_only_record_every_class():
    # Every set a single class: nothing is released, and the record stays K-ary RR.
    prior = np.full((200, K), 0.02)
    prior[np.arange(200), np.arange(200) % K] = 0.9
    assert (_optimal_sizes(prior, EPSILON) == 1).all()
    (stage,) = _fit(prior).privacy_spend_.parts
    assert stage.description.value == (EPSILON, K)


def test_priors_unknown_at_the_charge_stay_generic_records():
    # Later stages' priors are earlier stages' models; a cluster prior is a DP
    # histogram: neither is known when the fit is charged.
    first, second = _fit(_mixed_prior(200), n_stages=2).privacy_spend_.parts
    assert first.description.value[1] > 2
    assert second.description is None
    assert (second.epsilon, second.delta) == (EPSILON, 0.0)
    clustered = _fit(ClusterPrior(n_clusters=4, epsilon=0.5))
    histogram, lp_mst = clustered.privacy_spend_.parts
    assert [(p.description is not None) for p in lp_mst.parts] == [False]
    assert lp_mst.parts[0].epsilon == pytest.approx(0.5)
