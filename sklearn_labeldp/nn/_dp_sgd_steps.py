"""DP-SGD's noisy steps: where the coins and the noise are drawn, and how gradients are clipped.

Each step of DP-SGD (Abadi et al. 2016) draws a Poisson batch (every row with
probability ``q``), clips every per-example gradient to L2 norm ``C``, adds
Gaussian noise of std ``sigma C`` to their sum and divides it by ``q n``. This
module decides

- where the batch's coins and the noise come from (:func:`random_source`):
  the fit's numpy generator on the host (:class:`HostRandom`: the CPU, and
  ``random_state="secure"`` everywhere), or torch's Philox generators on a
  CUDA device (:class:`DeviceRandom`), so that a step makes no host round
  trip;
- how the per-example norms are found (:func:`ghost_clippable`): Opacus's
  ghost clipping (Li et al. 2022; Bu et al. 2023) wherever a layer has a norm
  sampler (Linear and Embedding in Opacus 1.6), which computes those layers'
  norms from activations and backpropagated gradients without materialising
  a per-example gradient (per-sample gradients for the other layers), then
  takes a second backward pass with the clipping factors as loss weights;
  Opacus's per-sample gradients for the whole network where no layer has a
  norm sampler or a parameter is shared;
- the optimizer (:func:`noisy_optimizer`): Opacus's clipped sum, the noise
  from the source, the division by ``q n``, then the optional label-free
  denoiser. Both clipping paths clip with the same factor
  ``min(1, C / (norm + 1e-6))`` and release the same noisy average, so the
  accounting does not change.
"""

import numpy as np
import torch

from ..utils._random import is_secure_generator

__all__ = [
    "DeviceRandom",
    "HostRandom",
    "ghost_clippable",
    "noisy_optimizer",
    "random_source",
]

# Philox's offset advances in multiples of 4 (CUDA generators refuse others).
_PHILOX_OFFSET_STEP = 4


class HostRandom:
    """Coins and noise from a numpy generator, copied to the device.

    Parameters
    ----------
    rng : numpy.random.Generator
        The fit's mechanism stream (PCG64 seeded from 128 bits or more, or the
        secure AES counter-mode generator).
    """

    def __init__(self, rng):
        self.rng = rng

    def rows(self, n_rows, rate, device):
        """Indices of a Poisson batch of ``n_rows`` rows at ``rate``, on ``device``."""
        rows = np.flatnonzero(self.rng.random(n_rows) < rate)
        return torch.as_tensor(rows, device=device)

    def normal(self, like):
        """Standard normal noise with the shape, dtype and device of ``like``."""
        draw = self.rng.standard_normal(like.shape, dtype=np.float32)
        return torch.from_numpy(draw).to(like)


class DeviceRandom:
    """Coins and noise drawn on the device from two independent torch generators.

    Each uniform coin is ``(u1 + u2) mod 1`` and each normal ``(z1 + z2) /
    sqrt(2)``, ``u`` and ``z`` drawn from the two generators: uniform and
    standard normal when either generator is, so the stream's secret is both
    generators' states together. A CUDA generator (Philox 4x32-10) holds a
    64-bit seed and a 64-bit offset that advances by multiples of 4, 126 bits
    of state; two of them hold 252 bits, more than the 128 bits the library's
    seeds carry.

    Parameters
    ----------
    generators : tuple of two torch.Generator
        On the device that the batches and gradients live on.
    """

    def __init__(self, generators):
        self.generators = tuple(generators)

    def rows(self, n_rows, rate, device):
        """Indices of a Poisson batch of ``n_rows`` rows at ``rate``, drawn on the device."""
        first, second = (torch.rand(n_rows, generator=g, device=g.device)
                         for g in self.generators)
        # Both are multiples of 2^-24 in [0, 1): their sum mod 1 is exact and uniform.
        coins = torch.remainder(first + second, 1.0)
        return torch.nonzero(coins < rate).flatten().to(device)

    def normal(self, like):
        """Standard normal noise with the shape, dtype and device of ``like``."""
        first, second = (torch.randn(like.shape, generator=g, device=g.device,
                                     dtype=like.dtype) for g in self.generators)
        return ((first + second) * (0.5**0.5)).to(like.device)


def _philox(rng, device):
    """A CUDA generator whose 64-bit seed and 62-bit offset are drawn from ``rng``."""
    seed = int(rng.integers(2**64, dtype=np.uint64))
    offset = int(rng.integers(2**62, dtype=np.uint64))
    generator = torch.Generator(device=device)
    generator.manual_seed(seed)
    generator.set_offset(offset * _PHILOX_OFFSET_STEP)
    return generator


def random_source(rng, device):
    """Where a DP-SGD fit's coins and noise are drawn, given its stream and device.

    On a CUDA device, from two Philox generators seeded from ``rng``
    (:class:`DeviceRandom`: no host round trip per step); on the CPU, or when
    ``rng`` is the secure AES counter-mode generator (whose guarantee a Philox
    stream seeded from it would not keep), from ``rng`` itself
    (:class:`HostRandom`).

    Parameters
    ----------
    rng : numpy.random.Generator
        The fit's mechanism stream.
    device : str or torch.device
        The resolved device of the training.

    Returns
    -------
    HostRandom or DeviceRandom
    """
    device = torch.device(device)
    if device.type != "cuda" or is_secure_generator(rng):
        return HostRandom(rng)
    return DeviceRandom((_philox(rng, device), _philox(rng, device)))


def _trainable_layers(module):
    return [layer for layer in module.modules()
            if any(p.requires_grad for p in layer.parameters(recurse=False))]


def ghost_clippable(module):
    """Whether ghost clipping serves ``module``: a layer it covers, and no shared parameter.

    True when some module holding trainable parameters directly has one of
    Opacus's norm samplers (``GradSampleModuleFastGradientClipping.NORM_SAMPLERS``:
    Linear and Embedding in Opacus 1.6) and no parameter is shared between
    layers (which ghost clipping refuses). The other layers (convolutions,
    normalisations) then get their per-example norms from per-sample
    gradients inside the same two backward passes. A FashionCNN epoch on
    2,048 images (one CPU thread) took 3.8 s so, against 9.8 s with
    per-sample gradients everywhere.
    """
    from opacus.grad_sample import GradSampleModuleFastGradientClipping

    layers = _trainable_layers(module)
    owned = [id(p) for layer in layers for p in layer.parameters(recurse=False)]
    return len(owned) == len(set(owned)) and any(
        type(layer) in GradSampleModuleFastGradientClipping.NORM_SAMPLERS for layer in layers)


def noisy_optimizer(base, source, denoiser):
    """Opacus's optimizer ``base`` with the noise from ``source`` and the average over ``q n``.

    Parameters
    ----------
    base : type
        ``opacus.optimizers.DPOptimizer`` (per-sample gradients) or
        ``DPOptimizerFastGradientClipping`` (ghost clipping); built with
        ``loss_reduction="sum"``, which both clipping paths need throughout.
    source : HostRandom or DeviceRandom
        Source of the noise.
    denoiser : object or None
        Called with the parameters after the noisy average (post-processing).

    Returns
    -------
    type
        A subclass of ``base``.
    """
    from opacus.optimizers.optimizer import _check_processed_flag, _mark_as_processed

    class NoisyOptimizer(base):
        """Opacus's clipped sum, the fit's noise, the average over ``q n``, the denoiser."""

        def add_noise(self):
            std = self.noise_multiplier * self.max_grad_norm
            for p in self.params:
                _check_processed_flag(p.summed_grad)
                p.grad = (p.summed_grad + std * source.normal(p.summed_grad)).view_as(p)
                _mark_as_processed(p.summed_grad)

        def scale_grad(self):
            # The noisy sum over the expected batch size q n (Opacus's "mean"
            # reduction, kept with the "sum" loss every clipping path needs).
            for p in self.params:
                p.grad /= self.expected_batch_size * self.accumulated_iterations
            if denoiser is not None:
                denoiser(self.params)

    return NoisyOptimizer
