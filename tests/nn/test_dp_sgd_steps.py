"""DP-SGD's random sources and clipping paths: the laws they draw and when each is used."""

import numpy as np
import pytest
from scipy import stats

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

from sklearn_labeldp.nn import MLP  # noqa: E402
from sklearn_labeldp.nn import _dp_sgd_steps as steps  # noqa: E402
from sklearn_labeldp.nn._dp_sgd_steps import (  # noqa: E402
    DeviceRandom,
    HostRandom,
    ghost_clippable,
    random_source,
)


def _cpu_generators(a=3, b=4):
    return [torch.Generator().manual_seed(a), torch.Generator().manual_seed(b)]


@pytest.mark.parametrize("make", [lambda: HostRandom(np.random.default_rng(0)),
                                  lambda: DeviceRandom(_cpu_generators())])
def test_noise_is_standard_normal_in_the_reference_dtype(make):
    source = make()
    like = torch.zeros(200_000, dtype=torch.float32)
    draw = source.normal(like)
    assert draw.dtype == like.dtype and draw.shape == like.shape
    assert stats.kstest(draw.double().numpy(), "norm").pvalue > 1e-3
    # Fresh draws every call, never a replay of the previous one.
    assert not torch.equal(draw, source.normal(like))


def test_device_coins_are_uniform_and_exact_on_the_float32_grid():
    # (u1 + u2) mod 1 of two 2^-24-grid uniforms: on the grid, in [0, 1), uniform.
    generators = _cpu_generators()
    first, second = (torch.rand(400_000, generator=g) for g in generators)
    coins = torch.remainder(first + second, 1.0)
    assert ((coins >= 0) & (coins < 1)).all()
    assert torch.equal(coins * 2**24, torch.round(coins * 2**24))
    assert stats.kstest(coins.double().numpy(), "uniform").pvalue > 1e-3
    rows = DeviceRandom(_cpu_generators()).rows(400_000, 0.3, "cpu")
    assert rows.dtype == torch.int64 and torch.equal(rows, torch.nonzero(coins < 0.3).flatten())


def test_the_device_stream_needs_both_generators():
    # Changing either generator's state changes the draws.
    base = DeviceRandom(_cpu_generators(3, 4)).normal(torch.zeros(64))
    assert not torch.equal(base, DeviceRandom(_cpu_generators(3, 5)).normal(torch.zeros(64)))
    assert not torch.equal(base, DeviceRandom(_cpu_generators(2, 4)).normal(torch.zeros(64)))


def test_the_cpu_and_the_secure_generator_stay_on_the_host():
    rng = np.random.default_rng(0)
    source = random_source(rng, "cpu")
    assert isinstance(source, HostRandom) and source.rng is rng
    randomgen = pytest.importorskip("randomgen")
    secure = np.random.Generator(randomgen.AESCounter())
    source = random_source(secure, "cuda")  # never builds a CUDA generator
    assert isinstance(source, HostRandom) and source.rng is secure


class _RecordingGenerator:
    """Stands in for a CUDA torch.Generator: records how it is seeded."""

    made = []

    def __init__(self, device):
        self.device = device
        self.calls = {}
        _RecordingGenerator.made.append(self)

    def manual_seed(self, seed):
        self.calls["seed"] = seed
        return self

    def set_offset(self, offset):
        self.calls["offset"] = offset


def test_a_cuda_fit_seeds_two_philox_generators_from_its_stream(monkeypatch):
    monkeypatch.setattr(steps.torch, "Generator", _RecordingGenerator)
    _RecordingGenerator.made = []
    rng = np.random.default_rng(7)
    source = random_source(rng, "cuda:0")
    assert isinstance(source, DeviceRandom) and len(source.generators) == 2
    seeds = [g.calls for g in _RecordingGenerator.made]
    assert all(str(g.device) == "cuda:0" for g in _RecordingGenerator.made)
    # 64-bit seeds and offsets that are multiples of 4 below 2^64, drawn from the stream.
    replay = np.random.default_rng(7)
    for calls in seeds:
        assert calls["seed"] == int(replay.integers(2**64, dtype=np.uint64))
        assert calls["offset"] == 4 * int(replay.integers(2**62, dtype=np.uint64))
        assert 0 <= calls["seed"] < 2**64 and calls["offset"] % 4 == 0
    assert seeds[0] != seeds[1]


class _Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


def test_ghost_clipping_wherever_a_layer_has_a_norm_sampler():
    mlp = MLP(n_outputs=3, hidden_units=(8,))
    mlp(torch.zeros(2, 4))  # lazy layers materialised, as when DP-SGD attaches
    assert ghost_clippable(mlp)
    conv = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(),
                               torch.nn.Linear(8, 3))
    assert ghost_clippable(conv)  # the Linear layer's norms ghost, the Conv2d's per sample
    conv_only = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten())
    assert not ghost_clippable(conv_only)  # no norm sampler at all: per-sample gradients
    frozen = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(),
                                 torch.nn.Linear(8, 3))
    frozen[2].requires_grad_(False)
    assert not ghost_clippable(frozen)  # only trainable layers count
    assert not ghost_clippable(_Tied())  # shared parameters: ghost clipping refuses them
