"""DPSGDClassifier's default network: width, batch, epochs and rate from n, d, K and epsilon."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")
pytest.importorskip("opacus")
pytest.importorskip("dp_accounting")

from sklearn.datasets import make_classification  # noqa: E402

from sklearn_labeldp import BudgetAccountant, BudgetError  # noqa: E402
from sklearn_labeldp.nn import MLP, DPSGDClassifier, LabelDPNetClassifier  # noqa: E402
from sklearn_labeldp.nn._dp_sgd_defaults import default_training, linear_below  # noqa: E402

pytestmark = pytest.mark.usefixtures("quiet_accountant")

SETTINGS = ("batch_size", "max_epochs", "lr")


@pytest.fixture(scope="module")
def small():
    """300 training rows of three classes and 1,000 test rows, standardised."""
    X, y = make_classification(n_samples=1300, n_features=10, n_informative=5, n_classes=3,
                               random_state=1)
    X = ((X - X[:300].mean(0)) / X[:300].std(0)).astype(np.float32)
    return X[:300], y[:300], X[300:], y[300:]


MLP_AT_1 = {"hidden_units": (64,), "batch_size": 64, "max_epochs": 20, "lr": 0.1}


@pytest.mark.parametrize("epsilon", [0.3, 0.5, 1.0])
def test_budgets_from_the_crossover_to_1_keep_the_earlier_fixed_mlp(epsilon):
    # 14,000 rows of 20 features, 5 classes: the crossover is at 0.29.
    assert default_training(14_000, epsilon, 20, 5) == MLP_AT_1


@pytest.mark.parametrize(("shape", "crossover"), [
    ((10_000, 784, 10), 0.5 * ((64 * 785 + 650) / 10_000) ** 0.25),  # Fashion-MNIST subset
    ((1_257, 64, 10), 0.5 * ((64 * 65 + 650) / 1_257) ** 0.25),  # the digits
    ((14_000, 20, 5), 0.5 * ((64 * 21 + 325) / 14_000) ** 0.25),  # the synthetic set
    ((10**7, 5, 2), 0.25),  # clipped below: a small network on many rows
    ((100, 10_000, 2), 1.0),  # clipped above: a large network on few rows
])
def test_the_crossover_grows_with_the_mlps_parameters_per_row(shape, crossover):
    assert linear_below(*shape) == pytest.approx(crossover)
    n, d, k = shape
    below = default_training(n, 0.999 * crossover, d, k)
    assert below == {"hidden_units": (), "batch_size": min(256, max(64, n // 4)),
                     "max_epochs": 20, "lr": 0.1}
    assert default_training(n, crossover, d, k)["hidden_units"] == (64,)


@pytest.mark.parametrize(("epsilon", "batch_size"), [
    (0.2, 256), (0.1, 1024), (0.05, 2500), (0.01, 2500),  # 10,000 rows: n / 4 caps it
])
def test_below_epsilon_02_the_linear_models_batch_grows_like_its_inverse_square(epsilon,
                                                                                batch_size):
    settings = default_training(10_000, epsilon, 784, 10)
    assert settings["hidden_units"] == () and settings["batch_size"] == batch_size
    assert settings["lr"] == 0.1 and settings["max_epochs"] == 20


def test_larger_budgets_train_longer_on_larger_batches_with_a_scaled_rate():
    rows = [default_training(14_000, eps, 20, 5) for eps in (1.0, 2.0, 4.0, 8.0, 50.0)]
    assert [r["batch_size"] for r in rows] == [64, 128, 256, 512, 512]
    assert [r["max_epochs"] for r in rows] == [20, 25, 50, 100, 100]
    # The linear scaling rule: lr / batch_size stays 0.1 / 64.
    for r in rows:
        assert r["lr"] == pytest.approx(0.1 * r["batch_size"] / 64)


@pytest.mark.parametrize("n", [100, 256, 300, 1_257, 2_000])
def test_an_epoch_keeps_at_least_four_steps_once_the_data_allow(n):
    batch_size = default_training(n, 8.0, 10, 3)["batch_size"]
    assert batch_size == max(64, min(512, n // 4))
    if n >= 256:
        assert math.ceil(n / batch_size) >= 4


def test_default_network_records_the_resolved_settings(small):
    X, y, _, _ = small
    clf = DPSGDClassifier(epsilon=8.0, classes=range(3), random_state=0).fit(X, y)
    expected = {"batch_size": 75, "max_epochs": 100, "lr": 0.1 * 75 / 64}
    settings = default_training(300, 8.0, 10, 3)
    assert settings.pop("hidden_units") == (64,) and settings == pytest.approx(expected)
    resolved = {name: getattr(clf, name + "_") for name in SETTINGS}
    assert resolved == pytest.approx(expected)
    p = clf.mechanism_params_
    assert {name: p[name] for name in SETTINGS} == pytest.approx(expected)
    assert p["hidden_units"] == (64,)
    # The run is the resolved one: q = batch / n, T = epochs * ceil(n / batch).
    assert p["sample_rate"] == pytest.approx(75 / 300)
    assert p["n_noisy_steps"] == 100 * 4
    assert clf.privacy_spend_.description.value[1:] == (75 / 300, 400)
    assert clf.estimator_.get_params()["batch_size"] == 75
    assert clf.estimator_.get_params()["max_epochs"] == 100
    assert clf.epsilon_ <= 8.0
    assert DPSGDClassifier().estimator is None  # the parameter itself is left alone


def test_resolved_settings_read_no_label(small):
    X, y, _, _ = small
    rng = np.random.default_rng(0)
    fits = [DPSGDClassifier(epsilon=2.0, classes=range(3), random_state=0).fit(X, labels)
            for labels in (y, rng.permutation(y), np.zeros_like(y))]
    for clf in fits[1:]:
        for name in SETTINGS:
            assert getattr(clf, name + "_") == getattr(fits[0], name + "_")
        assert clf.mechanism_params_ == fits[0].mechanism_params_


def test_a_users_network_keeps_its_own_settings(small):
    X, y, _, _ = small
    net = LabelDPNetClassifier(MLP, max_epochs=2, batch_size=30, lr=0.05)
    before = {name: net.get_params()[name] for name in SETTINGS}
    clf = DPSGDClassifier(net, epsilon=8.0, classes=range(3), random_state=0).fit(X, y)
    assert (clf.batch_size_, clf.max_epochs_, clf.lr_) == (30, 2, 0.05)
    assert not {*SETTINGS, "hidden_units"} & set(clf.mechanism_params_)  # none resolved
    assert clf.mechanism_params_["sample_rate"] == pytest.approx(30 / 300)
    assert clf.mechanism_params_["n_noisy_steps"] == 2 * 10
    assert clf.estimator is net and not hasattr(net, "module_")  # cloned, never fitted
    assert {name: net.get_params()[name] for name in SETTINGS} == before
    assert {name: clf.estimator_.get_params()[name] for name in SETTINGS} == before


def test_the_budget_is_charged_after_the_resolution(small):
    X, y, _, _ = small
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-3)
    with pytest.raises(BudgetError):
        DPSGDClassifier(epsilon=2.0, classes=range(3), accountant=accountant).fit(X, y)
    assert accountant.spends == []
    clf = DPSGDClassifier(epsilon=1.0, classes=range(3), accountant=accountant,
                          random_state=0).fit(X, y)
    # The charge describes the run with the resolved settings.
    (spend,) = accountant.spends
    assert spend.params["batch_size"] == clf.batch_size_ == 64
    assert spend.description.value[2] == 20 * math.ceil(300 / 64)


def test_below_the_crossover_the_default_network_is_linear(small):
    # 300 rows, 10 features, 3 classes: the crossover is at 0.66.
    X, y, _, _ = small
    clf = DPSGDClassifier(epsilon=0.3, classes=range(3), random_state=0).fit(X, y)
    assert clf.mechanism_params_["hidden_units"] == ()
    assert clf.batch_size_ == 75 and clf.max_epochs_ == 20 and clf.lr_ == 0.1
    layers = [m for m in clf.estimator_.module_.modules() if isinstance(m, torch.nn.Linear)]
    assert [(layer.in_features, layer.out_features) for layer in layers] == [(10, 3)]
    assert clf.privacy_spend_.description.value[1:] == (75 / 300, 20 * 4)


def test_resolved_settings_beat_the_fixed_ones_at_a_large_budget(small):
    """At eps 8 the resolved 100 epochs of 75-row batches learn more than 20 epochs of 64."""
    X, y, X_test, y_test = small
    fixed = LabelDPNetClassifier(MLP, max_epochs=20, batch_size=64, lr=0.1)
    scores = [DPSGDClassifier(estimator, epsilon=8.0, classes=range(3), random_state=seed)
              .fit(X, y).score(X_test, y_test)
              for estimator in (None, fixed) for seed in (0, 1)]
    assert min(scores[:2]) > max(scores[2:])
