import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from skorch.callbacks import Callback  # noqa: E402

from sklearn_labeldp.nn import LabelDPNetClassifier, WarmupLinearDecay  # noqa: E402


class RateRecorder(Callback):
    def initialize(self):
        self.rates = []
        return self

    def on_batch_end(self, net, batch=None, training=False, **kwargs):
        if training:
            self.rates.append(net.optimizer_.param_groups[0]["lr"])


def tiny_net(callbacks, **params):
    module = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    return LabelDPNetClassifier(
        module, max_epochs=5, batch_size=10, lr=0.02, callbacks=callbacks,
        optimizer__momentum=0.9, random_state=0, iterator_train__shuffle=False, **params,
    )


def test_rate_ramps_up_then_decays_to_zero_each_fit():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    net = tiny_net([("schedule", WarmupLinearDecay(0.15)), ("rates", RateRecorder())])
    net.fit(X, y)
    rates = np.array(dict(net.callbacks_)["rates"].rates)
    n_steps = 4 * 5  # 4 batches of 10 per epoch, 5 epochs
    warmup = 3  # round(0.15 * 20)
    expected = [0.02 * (s + 1) / warmup for s in range(warmup)] + [
        0.02 * (n_steps - 1 - s) / (n_steps - warmup) for s in range(warmup, n_steps)
    ]
    np.testing.assert_allclose(rates, expected, rtol=1e-12)
    assert rates.max() == pytest.approx(0.02) and rates[-1] == 0.0
    # A second (warm-started) fit runs the whole schedule again.
    net.set_params(warm_start=True).fit(X, y)
    np.testing.assert_allclose(dict(net.callbacks_)["rates"].rates[n_steps:], expected, rtol=1e-12)


def test_warmup_fraction_is_validated():
    net = tiny_net([("schedule", WarmupLinearDecay(1.0))])
    with pytest.raises(ValueError, match="warmup_fraction"):
        net.fit(np.zeros((4, 3)), [0, 1, 0, 1])
