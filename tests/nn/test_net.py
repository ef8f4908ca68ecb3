"""Behaviour of LabelDPNetClassifier, its losses and the TargetRefresh callback."""

import importlib
import pickle
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils.validation import has_fit_parameter  # noqa: E402
from skorch.callbacks import Callback  # noqa: E402
from skorch.exceptions import DeviceWarning  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from sklearn_labeldp.nn import (  # noqa: E402
    FashionCNN,
    LabelDPNetClassifier,
    SoftCrossEntropyLoss,
    TargetRefresh,
    soft_cross_entropy,
)
from sklearn_labeldp.nn._data import draw_seed  # noqa: E402
from sklearn_labeldp.nn._net_access import fit_label_codes  # noqa: E402
from sklearn_labeldp.nn._training import MixupTraining, Training, combine  # noqa: E402

N_SAMPLES = 96


@pytest.fixture(scope="module")
def data():
    X, y = load_digits(return_X_y=True)
    return X[:N_SAMPLES] / 16.0, y[:N_SAMPLES]


def make_net(**params):
    defaults = dict(
        module=FashionCNN,
        module__input_shape=(1, 8, 8),
        max_epochs=2,
        batch_size=32,
        lr=0.05,
        random_state=0,
    )
    defaults.update(params)
    return LabelDPNetClassifier(**defaults)


def weights(net):
    return torch.cat([p.detach().flatten() for p in net.module_.parameters()])


class RecordTargets(Callback):
    """Records the training targets of every batch, grouped by epoch."""

    def initialize(self):
        self.epochs_ = []
        return self

    def on_epoch_begin(self, net, **kwargs):
        self.epochs_.append([])

    def on_batch_begin(self, net, batch=None, training=False, **kwargs):
        if training:
            self.epochs_[-1].append(batch[1].detach().cpu().numpy().copy())

    def targets(self, epoch):
        return np.concatenate(self.epochs_[epoch])


# ----------------------------------------------------------------------- losses


def test_soft_cross_entropy_matches_hand_computation():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 4, generator=gen)
    targets = torch.softmax(torch.randn(6, 4, generator=gen), dim=1)
    by_hand = -(targets * torch.log(torch.softmax(logits, dim=1))).sum(dim=1).mean()
    torch.testing.assert_close(soft_cross_entropy(logits, targets), by_hand)
    torch.testing.assert_close(SoftCrossEntropyLoss()(logits, targets), by_hand)
    labels = torch.tensor([0, 3, 1, 1, 2, 0])
    one_hot = F.one_hot(labels, 4).float()
    torch.testing.assert_close(soft_cross_entropy(logits, one_hot), F.cross_entropy(logits, labels))
    # log_softmax, not log(softmax): huge logits still give a finite loss.
    assert torch.isfinite(soft_cross_entropy(logits * 1e4, targets))


def test_fit_soft_uses_the_soft_cross_entropy(data):
    X, y = data
    targets = np.random.default_rng(0).dirichlet(np.ones(10), size=N_SAMPLES)
    net = make_net(max_epochs=1).fit_soft(X, targets)
    assert isinstance(net.criterion_, SoftCrossEntropyLoss)
    np.testing.assert_array_equal(net.classes_, np.arange(10))
    logits = net.forward(X.astype(np.float32))
    t = torch.as_tensor(targets, dtype=torch.float32)
    expected = -(t * torch.log_softmax(logits, 1)).sum(1).mean()
    torch.testing.assert_close(net.get_loss(logits, t), expected)
    proba = net.predict_proba(X)
    assert proba.shape == (N_SAMPLES, 10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)


def test_one_hot_soft_targets_train_like_hard_labels(data):
    X, y = data
    hard = make_net(optimizer__momentum=0.9).fit(X, y)
    soft = make_net(optimizer__momentum=0.9).fit_soft(X, np.eye(10)[y])
    torch.testing.assert_close(weights(soft), weights(hard), rtol=1e-4, atol=1e-5)
    losses = [epoch["train_loss"] for epoch in soft.history]
    assert losses == pytest.approx([epoch["train_loss"] for epoch in hard.history], rel=1e-4)
    assert losses[-1] < losses[0]  # and it learns


def test_fit_soft_rejects_targets_off_the_simplex(data):
    X, _ = data
    net = make_net()
    with pytest.raises(ValueError, match="simplex"):
        net.fit_soft(X, np.full((N_SAMPLES, 3), 0.5))
    with pytest.raises(ValueError, match="shape"):
        net.fit_soft(X, np.full((N_SAMPLES - 1, 2), 0.5))
    with pytest.raises(TypeError, match="refresh"):
        net.fit_soft(X, np.full((N_SAMPLES, 2), 0.5), refresh="bayes")
    assert not hasattr(net, "classes_")


# ------------------------------------------------------------ target refresh


def test_refresh_is_called_between_epochs_and_its_targets_are_used(data):
    X, y = data
    initial = np.eye(10)[y]
    calls = []

    def refresh(proba):
        calls.append(proba.copy())
        new = np.zeros_like(proba)
        new[:, len(calls)] = 1.0  # call k makes every target e_k
        return new

    recorder = RecordTargets()
    net = make_net(max_epochs=3, callbacks=[("record", recorder)])
    net.fit_soft(X, initial, refresh=refresh)

    assert len(calls) == net.max_epochs - 1
    for proba in calls:
        assert proba.shape == (N_SAMPLES, 10)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)
    # Epoch 1 trains on the given targets (shuffled), epochs 2 and 3 on refresh's.
    first = recorder.targets(0)
    np.testing.assert_array_equal(np.sort(first.argmax(1)), np.sort(y))
    np.testing.assert_array_equal(recorder.targets(1), np.tile(np.eye(10)[1], (N_SAMPLES, 1)))
    np.testing.assert_array_equal(recorder.targets(2), np.tile(np.eye(10)[2], (N_SAMPLES, 1)))
    # The callback is gone after the fit, so the net pickles without the closure.
    assert "target_refresh" not in dict(net.callbacks_)
    pickle.loads(pickle.dumps(net))


def test_refresh_sees_eval_mode_predictions_and_draws_nothing_random(data):
    X, y = data
    targets = np.eye(10)[y] * 0.9 + 0.01
    seen = []

    def identity(proba):
        seen.append(proba)
        return targets

    refreshed = make_net(max_epochs=2).fit_soft(X, targets, refresh=identity)
    plain = make_net(max_epochs=2).fit_soft(X, targets)
    # No RNG consumed by the refresh: same weights as training without it.
    torch.testing.assert_close(weights(refreshed), weights(plain), rtol=0, atol=0)
    # What refresh saw is the deterministic (dropout-off) prediction after epoch 1.
    one_epoch = make_net(max_epochs=1).fit_soft(X, targets)
    np.testing.assert_array_equal(seen[0], one_epoch.predict_proba(X))


def test_refresh_output_is_validated(data):
    X, y = data
    net = make_net(max_epochs=2)
    with pytest.raises(ValueError, match="refresh"):
        net.fit_soft(X, np.eye(10)[y], refresh=lambda proba: proba[:, :5])
    assert not hasattr(net, "classes_")  # a failed fit leaves nothing half-fitted


def test_no_training_set_predictions_without_refresh(data, monkeypatch):
    X, y = data
    net = make_net(max_epochs=2)
    calls = []
    monkeypatch.setattr(net, "predict_proba", lambda X: calls.append(1))
    net.fit_soft(X, np.eye(10)[y])
    assert calls == []


def test_target_refresh_is_a_callback():
    callback = TargetRefresh(lambda p: p)
    assert isinstance(callback, Callback)
    with pytest.raises(TypeError, match="callable"):
        TargetRefresh(3).initialize()


# ------------------------------------------------------------------ bits


def test_fit_bits_gives_independent_sigmoids_with_bce(data):
    X, y = data
    bits = np.random.default_rng(1).integers(0, 2, size=(N_SAMPLES, 6))
    net = make_net(max_epochs=1).fit_bits(X, bits)
    assert isinstance(net.criterion_, torch.nn.BCEWithLogitsLoss)
    np.testing.assert_array_equal(net.classes_, np.arange(6))
    assert net.module_.classifier[-1].out_features == 6
    proba = net.predict_proba(X)
    assert proba.shape == (N_SAMPLES, 6)
    assert np.all((proba >= 0) & (proba <= 1))
    assert np.abs(proba.sum(axis=1) - 1).max() > 0.5  # not a softmax
    logits = net.forward(X.astype(np.float32))
    np.testing.assert_allclose(proba, torch.sigmoid(logits).numpy(), rtol=1e-6)
    b = torch.as_tensor(bits, dtype=torch.float32)
    torch.testing.assert_close(
        net.get_loss(logits, b), F.binary_cross_entropy_with_logits(logits, b)
    )
    assert set(net.predict(X)) <= set(range(6))


def test_fit_bits_rejects_non_binary_values(data):
    X, _ = data
    with pytest.raises(ValueError, match="0 and 1"):
        make_net().fit_bits(X, np.full((N_SAMPLES, 3), 0.5))
    with pytest.raises(ValueError, match="shape"):
        make_net().fit_bits(X, np.ones(N_SAMPLES))


# ----------------------------------------------------- hard labels, sklearn API


def test_string_classes_round_trip_through_predict(data):
    X, y = data
    names = np.array(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    )
    net = make_net(max_epochs=1).fit(X, names[y])
    np.testing.assert_array_equal(net.classes_, np.sort(names))
    assert isinstance(net.criterion_, torch.nn.CrossEntropyLoss)
    assert net.module_.classifier[-1].out_features == 10
    predictions = net.predict(X)
    assert predictions.dtype == names.dtype and set(predictions) <= set(names)
    proba = net.predict_proba(X)
    np.testing.assert_array_equal(predictions, net.classes_[proba.argmax(1)])


def test_n_outputs_follows_the_number_of_classes(data):
    X, y = data
    net = make_net(max_epochs=1).fit(X, y % 3)
    assert net.module_.classifier[-1].out_features == 3
    assert net.predict_proba(X).shape == (N_SAMPLES, 3)
    with pytest.raises(ValueError, match="2 classes"):
        make_net().fit(X, np.zeros(N_SAMPLES))


def test_sklearn_compatibility(data):
    X, y = data
    net = make_net()
    assert is_classifier(net)
    tags = get_tags(net)
    assert tags.estimator_type == "classifier" and tags.input_tags.two_d_array
    assert not has_fit_parameter(net, "sample_weight")
    with pytest.raises(NotFittedError):
        net.predict(X)

    params = net.get_params()
    for name in [
        "module",
        "max_epochs",
        "batch_size",
        "lr",
        "optimizer",
        "mixup_alpha",
        "device",
        "random_state",
        "warm_start",
        "verbose",
        "module__input_shape",
    ]:
        assert name in params
    assert params["train_split"] is None and params["device"] == "auto"

    net.set_params(lr=0.1, random_state=7, module__dropout=0.25, optimizer__momentum=0.5)
    assert net.get_params()["lr"] == 0.1 and net.random_state == 7
    copy = clone(net)
    assert copy.get_params()["module__dropout"] == 0.25
    assert copy.get_params()["optimizer__momentum"] == 0.5
    copy.fit(X, y)
    assert copy.module_.classifier[1].p == 0.25
    assert copy.optimizer_.param_groups[0]["momentum"] == 0.5
    assert copy.n_features_in_ == 64
    assert not hasattr(clone(copy), "classes_")
    with pytest.raises(ValueError, match="features"):
        copy.predict(X[:, :10])


def test_pickle_round_trip(data):
    X, y = data
    net = make_net(mixup_alpha=0.2).fit(X, y)
    restored = pickle.loads(pickle.dumps(net))
    np.testing.assert_array_equal(restored.predict_proba(X), net.predict_proba(X))
    assert restored.device == "auto" and restored.mixup_alpha == 0.2


def test_seeded_fits_are_reproducible_and_leave_the_global_rng_alone(data):
    X, y = data
    state = torch.get_rng_state()
    first = make_net(random_state=3).fit(X, y)
    assert torch.equal(torch.get_rng_state(), state)
    second = make_net(random_state=3).fit(X, y)
    torch.testing.assert_close(weights(first), weights(second), rtol=0, atol=0)
    np.testing.assert_array_equal(first.predict_proba(X), second.predict_proba(X))
    other = make_net(random_state=4).fit(X, y)
    assert not torch.equal(weights(first), weights(other))
    rng = np.random.default_rng(0)
    from_generator = make_net(random_state=rng).fit(X, y)
    assert not torch.equal(weights(from_generator), weights(other))


def test_unseeded_fits_draw_fresh_entropy(data):
    X, y = data
    a = make_net(random_state=None, max_epochs=1).fit(X, y)
    b = make_net(random_state=None, max_epochs=1).fit(X, y)
    assert not torch.equal(weights(a), weights(b))
    net = make_net(random_state=-1)
    with pytest.raises(ValueError, match="random_state"):
        net.fit(X, y)
    assert not hasattr(net, "n_features_in_") and not hasattr(net, "classes_")


def test_device_auto_resolves_to_cpu_here(data):
    X, y = data
    assert not torch.cuda.is_available()
    net = make_net(max_epochs=1).fit(X, y)
    assert net.device == "auto"  # the parameter is left as given
    assert net.device_ == "cpu"
    assert all(p.device.type == "cpu" for p in net.module_.parameters())


def test_history_records_every_batch_loss(data):
    X, y = data
    net = make_net(max_epochs=2, batch_size=40).fit(X, y)
    for epoch in net.history:
        sizes = [row["train_batch_size"] for row in epoch["batches"]]
        losses = [row["train_loss"] for row in epoch["batches"]]
        assert sizes == [40, 40, 16] and epoch["train_batch_count"] == 3
        assert all(isinstance(loss, float) and loss > 0 for loss in losses)
        assert epoch["train_loss"] == pytest.approx(np.average(losses, weights=sizes))
    # A last training batch of one sample (BatchNorm cannot take it) joins the previous one.
    net = make_net(max_epochs=1, batch_size=19).fit(X[:39], y[:39])
    assert [row["train_batch_size"] for row in net.history[-1]["batches"]] == [19, 20]


def test_verbose_prints_the_epoch_table_only_when_asked(data, capsys):
    X, y = data
    make_net(max_epochs=1).fit(X, y)
    assert capsys.readouterr().out == ""
    make_net(max_epochs=1, verbose=1).fit(X, y)
    assert "train_loss" in capsys.readouterr().out


# ------------------------------------------------------------------- mixup


def test_mixup_changes_training_and_is_seeded(data):
    X, y = data
    plain = make_net().fit(X, y)
    mixed = make_net(mixup_alpha=0.4).fit(X, y)
    again = make_net(mixup_alpha=0.4).fit(X, y)
    other_seed = make_net(mixup_alpha=0.4, random_state=1).fit(X, y)
    assert not torch.equal(weights(plain), weights(mixed))
    torch.testing.assert_close(weights(mixed), weights(again), rtol=0, atol=0)
    assert not torch.equal(weights(mixed), weights(other_seed))
    with pytest.raises(ValueError, match="mixup_alpha"):
        make_net(mixup_alpha=-1.0).fit(X, y)


def test_mixup_batch_is_a_beta_weighted_convex_combination(data):
    X, y = data
    net = make_net(mixup_alpha=0.7, max_epochs=1).fit(X, y)
    mixup = MixupTraining(0.7)
    mixup.rng = np.random.default_rng(11)
    Xb = torch.as_tensor(X[:16], dtype=torch.float32)
    yb = torch.as_tensor(y[:16])
    torch.manual_seed(5)
    Xm, ym = mixup.transform_batch(net, Xb, yb)
    lam = np.random.default_rng(11).beta(0.7, 0.7)
    torch.manual_seed(5)
    perm = torch.randperm(16)
    torch.testing.assert_close(Xm, lam * Xb + (1 - lam) * Xb[perm])
    one_hot = F.one_hot(yb, 10).float()
    torch.testing.assert_close(ym, lam * one_hot + (1 - lam) * one_hot[perm])
    # Bits are mixed into soft BCE targets in the same way.
    bits = torch.randint(0, 2, (16, 4)).float()
    mixup.rng = np.random.default_rng(11)
    torch.manual_seed(5)
    _, bm = mixup.transform_batch(net, Xb, bits)
    torch.testing.assert_close(bm, lam * bits + (1 - lam) * bits[perm])


def test_combined_modes_attach_in_order_and_all_detach_when_one_fails(data):
    # A mode that wraps the network (DP-SGD's Opacus hooks) must be undone even when
    # another mode fails to attach, and a failed fit leaves nothing half-fitted.
    X, y = data
    calls = []

    class Probe(Training):
        def __init__(self, name, fail=False):
            self.name, self.fail = name, fail

        def attach(self, net):
            calls.append(("attach", self.name))
            if self.fail:
                raise RuntimeError("attach failed")

        def detach(self, net):
            calls.append(("detach", self.name))

    net = make_net(max_epochs=1)
    modes = combine(Probe("a"), Probe("b", fail=True), Probe("c"))
    with pytest.raises(RuntimeError, match="attach failed"):
        fit_label_codes(net, X, y, 10, modes)
    assert calls == [("attach", "a"), ("attach", "b"),
                     ("detach", "c"), ("detach", "b"), ("detach", "a")]
    assert not hasattr(net, "classes_")
    # The modes are the fit's arguments only: a mixup fit stores none of them.
    fitted = make_net(mixup_alpha=0.3, max_epochs=1).fit(X, y)
    assert not any(isinstance(value, Training) for value in vars(fitted).values())


def test_mixup_with_soft_and_bit_targets_trains(data):
    X, y = data
    soft = make_net(mixup_alpha=0.2, max_epochs=1).fit_soft(X, np.eye(10)[y])
    bits = make_net(mixup_alpha=0.2, max_epochs=1).fit_bits(X, np.eye(10)[y])
    assert np.all(np.isfinite(soft.predict_proba(X)))
    assert np.all(np.isfinite(bits.predict_proba(X)))


# -------------------------------------------------------------- warm start


def test_warm_start_continues_the_same_module(data):
    X, y = data
    cold = make_net().fit(X, y)
    cold_weights = weights(cold)
    warm = make_net(warm_start=True).fit(X, y)
    module = warm.module_
    torch.testing.assert_close(weights(warm), cold_weights, rtol=0, atol=0)
    warm.fit(X, y)
    assert warm.module_ is module
    assert len(warm.history) == 2 * warm.max_epochs
    assert not torch.equal(weights(warm), cold_weights)
    refit_cold = cold.fit(X, y)  # without warm_start the module starts over
    torch.testing.assert_close(weights(refit_cold), cold_weights, rtol=0, atol=0)
    # The same network can continue on soft targets with the same outputs...
    warm.fit_soft(X, np.eye(10)[y])
    assert warm.module_ is module and isinstance(warm.criterion_, SoftCrossEntropyLoss)
    # ...but not on a different number of outputs.
    with pytest.raises(ValueError, match="outputs"):
        warm.fit_bits(X, np.eye(10)[y][:, :4])


def test_partial_fit_continues_with_the_fitted_classes(data):
    X, y = data
    net = make_net(max_epochs=1).fit(X, y)
    module, before = net.module_, weights(net)
    net.partial_fit(X[y < 5], y[y < 5])
    assert net.module_ is module and not torch.equal(weights(net), before)
    np.testing.assert_array_equal(net.classes_, np.arange(10))
    with pytest.raises(ValueError, match="classes"):
        net.partial_fit(X, y + 20)


# ----------------------------------------------------- configuration errors


class RecordTrainBegin(Callback):
    """Counts the trainings that started."""

    def initialize(self):
        self.calls_ = 0
        return self

    def on_train_begin(self, net, **kwargs):
        self.calls_ += 1


def fit_each_way(net, X, y):
    """The four ways a net starts training; each must fail before it does."""
    yield lambda: net.fit(X, y)
    yield lambda: net.partial_fit(X, y)
    yield lambda: net.fit_soft(X, np.eye(10)[y])
    yield lambda: net.fit_bits(X, np.eye(10)[y])


def no_cuda_device():
    # An index past the last GPU: absent on every machine, with or without CUDA.
    return f"cuda:{torch.cuda.device_count()}"


@pytest.mark.parametrize(
    "params, parameter",
    [
        ({"device": no_cuda_device()}, "device"),
        pytest.param(
            {"device": "cuda"},
            "device",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present"),
        ),
        ({"device": "banana"}, "device"),
        ({"device": 3.5}, "device"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -2}, "batch_size"),
        ({"batch_size": 2.5}, "batch_size"),
        ({"max_epochs": 0}, "max_epochs"),
        ({"lr": -0.1}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"lr": float("inf")}, "lr"),
        ({"mixup_alpha": -1.0}, "mixup_alpha"),
        ({"mixup_alpha": float("nan")}, "mixup_alpha"),
        ({"random_state": 2**63}, "random_state"),
        ({"random_state": "seed"}, "random_state"),
        ({"warm_start": "yes"}, "warm_start"),
        ({"verbose": -1}, "verbose"),
    ],
)
def test_configuration_errors_name_the_parameter_before_any_training(data, params, parameter):
    X, y = data
    recorder = RecordTrainBegin()
    net = make_net(callbacks=[("record", recorder)], **params)
    for start in fit_each_way(net, X, y):
        with pytest.raises(ValueError, match=rf"\b{parameter}\b") as error:
            start()
        # The message says what is allowed, not only what is wrong.
        assert "must be" in str(error.value)
        assert not net.initialized_ and not hasattr(net, "module_")
        assert not hasattr(net, "classes_") and not hasattr(net, "n_features_in_")
    assert not hasattr(recorder, "calls_")  # callbacks were never even initialised
    assert net.get_params()[parameter] is params[parameter]  # fit mutates no parameter


def test_boundary_values_are_accepted(data):
    X, y = data
    # skorch's batch_size=-1 is one batch of the whole data.
    net = make_net(batch_size=-1, max_epochs=1).fit(X, y)
    assert net.history[-1]["train_batch_count"] == 1
    # lr=0 keeps the initial weights (the meta-estimators' tests rely on it).
    one, two = (make_net(lr=0.0, max_epochs=n).fit(X, y) for n in (1, 2))
    torch.testing.assert_close(weights(one), weights(two), rtol=0, atol=0)


def test_a_module_that_does_not_fit_x_fails_before_training_naming_module(data):
    X, y = data
    recorder = RecordTrainBegin()
    # FashionCNN reshaping 64 features into a 1x4x4 image: a raw RuntimeError inside torch.
    net = make_net(module__input_shape=(1, 4, 4), callbacks=[("record", recorder)])
    for start in fit_each_way(net, X, y):
        with pytest.raises(ValueError, match=r"module.*module__\*.*X of shape \(96, 64\)") as error:
            start()
        assert isinstance(error.value.__cause__, RuntimeError)
        assert not hasattr(net, "classes_") and not hasattr(net, "n_features_in_")
    assert recorder.calls_ == 0
    # A first layer of the wrong width fails the same way.
    linear = LabelDPNetClassifier(
        torch.nn.Linear, module__in_features=10, module__out_features=10, max_epochs=1
    )
    with pytest.raises(ValueError, match=r"X of shape \(96, 64\).*RuntimeError"):
        linear.fit(X, y)


def test_a_module_of_the_wrong_output_width_is_rejected(data):
    X, y = data
    recorder = RecordTrainBegin()
    # A module instance keeps its width: 3 logits for 10 classes or 5 bit columns.
    net = LabelDPNetClassifier(
        torch.nn.Linear(64, 3), max_epochs=1, callbacks=[("record", recorder)]
    )
    with pytest.raises(ValueError, match=r"shape \(n_samples, 10\).*10 classes.*\(2, 3\)"):
        net.fit(X, y)
    with pytest.raises(ValueError, match=r"5 bit columns.*module__n_outputs"):
        net.fit_bits(X, np.eye(5)[y % 5])
    assert recorder.calls_ == 0 and not hasattr(net, "classes_")
    # The width that matches trains.
    assert net.fit(X, y % 3).predict_proba(X).shape == (N_SAMPLES, 3)


def test_a_warm_start_on_inputs_of_another_width_fails_clearly(data):
    X, y = data
    net = make_net(warm_start=True, max_epochs=1).fit(X, y)
    with pytest.raises(ValueError, match=r"X of shape \(96, 32\)"):
        net.fit(X[:, :32], y)


# ------------------------------------------------ seeds set by a meta-estimator


def test_resetting_random_state_on_a_fitted_net_changes_nothing(data):
    X, y = data
    net = make_net(random_state=np.random.RandomState(5), optimizer__momentum=0.9).fit(X, y)
    module, optimizer, before = net.module_, net.optimizer_, weights(net)
    proba = net.predict_proba(X)
    net.set_params(random_state=None)  # what a meta-estimator does after fitting
    assert net.random_state is None
    assert net.module_ is module and net.optimizer_ is optimizer
    torch.testing.assert_close(weights(net), before, rtol=0, atol=0)
    np.testing.assert_array_equal(net.predict_proba(X), proba)
    # A refit then draws fresh entropy: the fitted state came from the seed, not the parameter.
    assert not torch.equal(weights(net.fit(X, y)), before)


def mt19937(entropy):
    return np.random.RandomState(np.random.MT19937(np.random.SeedSequence(entropy)))


def pcg64(entropy):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def test_draw_seed_reads_the_whole_state_of_128_bit_seeded_generators():
    low_bits = 12345
    for make in (mt19937, pcg64):
        same = [draw_seed(make(2**100 + low_bits)) for _ in range(2)]
        assert same[0] == same[1]  # reproducible from equal states
        # Entropies equal in their low 64 bits still give different seeds.
        assert draw_seed(make(2**101 + low_bits)) != same[0]
        rng = make(2**127 + low_bits)
        seeds = [draw_seed(rng) for _ in range(32)]
        assert len(set(seeds)) == 32  # each draw advances the stream
        assert all(0 <= s < 2**63 for s in seeds)
        assert max(seeds) >= 2**62  # 63 bits wide, not narrowed to 32
    assert draw_seed(7) == 7
    unseeded = [draw_seed(None) for _ in range(4)]
    assert len(set(unseeded)) == 4 and max(unseeded) >= 2**40


def test_nets_seeded_by_mt19937_random_states_are_reproducible(data):
    X, y = data
    first = make_net(random_state=mt19937(2**100 + 1), max_epochs=1).fit(X, y)
    again = make_net(random_state=mt19937(2**100 + 1), max_epochs=1).fit(X, y)
    other = make_net(random_state=mt19937(2**101 + 1), max_epochs=1).fit(X, y)
    torch.testing.assert_close(weights(first), weights(again), rtol=0, atol=0)
    assert not torch.equal(weights(first), weights(other))


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CUDA weights would load on CUDA")
def test_a_net_pickled_on_cuda_loads_on_a_cpu_only_machine(data):
    X, y = data
    net = make_net(max_epochs=1).fit(X, y)
    proba = net.predict_proba(X)
    # What a net trained with device="cuda" carries (its weights are mapped on load).
    net.__dict__["device"] = "cuda"
    net.__dict__["device_"] = "cuda"
    with pytest.warns(DeviceWarning):
        restored = pickle.loads(pickle.dumps(net))
    # skorch moves the net to the CPU and says so; device_ says where it now is.
    assert torch.device(restored.device).type == "cpu"
    assert torch.device(restored.device_).type == "cpu"
    np.testing.assert_array_equal(restored.predict_proba(X), proba)
    restored.fit(X, y)  # and it trains here


# ---------------------------------------------------------------- import


def test_import_error_names_the_extra(monkeypatch):
    for name in list(sys.modules):
        if name.startswith("sklearn_labeldp.nn"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "skorch", None)
    with pytest.raises(ImportError, match=r'pip install "sklearn-labeldp\[torch\]"'):
        importlib.import_module("sklearn_labeldp.nn")


def test_the_epoch_loop_counts_tuple_list_dict_and_tensor_batches():
    # Up to commit 05b8ffa the loop read batch[0], a KeyError on a dict batch (as a
    # custom train_step may take); skorch's own loop counts X of a tuple or list.
    from sklearn_labeldp.nn._training import batch_size

    X, y = torch.zeros(6, 3), torch.zeros(6)
    assert batch_size((X, y)) == batch_size([X, y]) == 6
    assert batch_size(({"a": X, "b": X}, y)) == 6
    assert batch_size({"x": torch.zeros(5, 2), "y": torch.zeros(5)}) == 5
    assert batch_size(torch.zeros(7, 2)) == 7
