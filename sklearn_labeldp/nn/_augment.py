"""Batched, seeded image augmentations for FixMatch (weak and strong).

Both take a float batch of images, flat rows ``(n, C*H*W)`` or ``(n, C, H, W)``,
and a :class:`torch.Generator` on the batch's device, and return a batch of the
same shape and dtype. Every random number comes from that generator, drawn for
the whole batch at once (no loop over examples, and the same draws whatever the
images are), so a seeded generator makes them reproducible and the global torch
RNG is never touched.
"""

import math
from numbers import Integral

import torch
from torch.nn import functional as F

from ..utils import check_int, check_nonnegative, check_option

__all__ = ["resolve_image_shape", "strong_augment", "weak_augment"]

# PIL's ImageFilter.SMOOTH, the "degenerate" image of ImageEnhance.Sharpness.
_SMOOTH = torch.tensor([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13.0
_PADDING_MODES = ("reflect", "zeros", "replicate")


def check_image_shape(image_shape, name="image_shape"):
    """``image_shape`` as a tuple of three positive ints, or a ``ValueError`` naming it.

    The image shape of the augmentations and of the networks' inputs
    (``input_shape``): ``(channels, height, width)``.
    """
    try:
        shape = tuple(image_shape)
    except TypeError:
        shape = ()
    if len(shape) != 3 or not all(
        isinstance(s, Integral) and not isinstance(s, bool) and s >= 1 for s in shape
    ):
        raise ValueError(
            f"{name} must be a tuple (channels, height, width) of positive ints; "
            f"got {image_shape!r}."
        )
    return tuple(int(s) for s in shape)


def resolve_image_shape(sample_shape, image_shape=None):
    """The ``(C, H, W)`` of the images whose rows have shape ``sample_shape``.

    Parameters
    ----------
    sample_shape : tuple of int
        The shape of one input row, ``X.shape[1:]``.
    image_shape : tuple (C, H, W) or None, default=None
        Given: it must hold as many values as a row. None: a row of shape
        ``(C, H, W)`` is its own image, and a flat row of ``d`` features, ``d``
        a perfect square, is the grey-scale image ``(1, sqrt(d), sqrt(d))``.

    Returns
    -------
    image_shape : tuple of int

    Raises
    ------
    ValueError
        When the image shape cannot be inferred or does not match the rows.
    """
    sample_shape = tuple(int(s) for s in sample_shape)
    n_values = math.prod(sample_shape)
    if image_shape is not None:
        shape = check_image_shape(image_shape)
        if math.prod(shape) != n_values:
            raise ValueError(
                f"image_shape {shape} holds {math.prod(shape)} values, but each input row "
                f"(shape {sample_shape}) holds {n_values}."
            )
        return shape
    if len(sample_shape) == 3:
        return sample_shape
    if len(sample_shape) == 1:
        side = math.isqrt(n_values)
        if side * side == n_values and n_values > 0:
            return (1, side, side)
    raise ValueError(
        f"The default image augmentations cannot infer the image shape of input rows of shape "
        f"{sample_shape} (neither (C, H, W) nor a perfect square of features): pass "
        "image_shape=(channels, height, width), or your own weak_augment and strong_augment "
        "callables for data that are not images (e.g. small Gaussian noise for tabular data)."
    )


def _as_images(batch, image_shape):
    if not isinstance(batch, torch.Tensor) or not torch.is_floating_point(batch):
        raise TypeError(
            f"the augmentations take a float torch.Tensor batch; got "
            f"{getattr(batch, 'dtype', type(batch))}."
        )
    shape = resolve_image_shape(batch.shape[1:], image_shape)
    return batch.reshape(len(batch), *shape)


def _uniform(n, generator, device):
    return torch.rand(n, generator=generator, device=device)


def _per_image(values):
    """(n,) -> (n, 1, 1, 1), to broadcast over images."""
    return values.view(-1, 1, 1, 1)


def _flip(images, generator, p):
    flip = _uniform(len(images), generator, images.device) < p
    return torch.where(_per_image(flip), images.flip(-1), images)


def _translate(images, generator, fraction, padding_mode):
    """Shift each image by its own integer offset, up to ``fraction`` of the side."""
    n, channels, height, width = images.shape
    pad_h = int(fraction * height + 0.5)
    pad_w = int(fraction * width + 0.5)
    device = images.device
    # Drawn even when a pad is 0, so the stream does not depend on the image size.
    dy = torch.randint(0, 2 * pad_h + 1, (n,), generator=generator, device=device)
    dx = torch.randint(0, 2 * pad_w + 1, (n,), generator=generator, device=device)
    if pad_h == 0 and pad_w == 0:
        return images
    mode = "constant" if padding_mode == "zeros" else padding_mode
    padded = F.pad(images, (pad_w, pad_w, pad_h, pad_h), mode=mode)
    # Crop an (H, W) window at (dy, dx) of each padded image by one gather.
    rows = dy[:, None] + torch.arange(height, device=device)  # (n, H)
    cols = dx[:, None] + torch.arange(width, device=device)  # (n, W)
    return padded[
        torch.arange(n, device=device)[:, None, None, None],
        torch.arange(channels, device=device)[None, :, None, None],
        rows[:, None, :, None],
        cols[:, None, None, :],
    ]


def _weak(images, generator, flip, max_shift, padding_mode):
    if flip:
        images = _flip(images, generator, 0.5)
    if max_shift > 0:
        images = _translate(images, generator, max_shift, padding_mode)
    return images


def _check_weak_options(flip, max_shift, padding_mode):
    check_nonnegative(max_shift, "max_shift", upper=1.0, include_upper=False)
    check_option(padding_mode, "padding_mode", _PADDING_MODES)


def weak_augment(
    batch, generator, *, image_shape=None, flip=True, max_shift=0.125, padding_mode="reflect"
):
    """FixMatch's weak augmentation: random horizontal flip and translation.

    Each image is flipped left-right with probability 1/2, then shifted by an
    integer offset drawn uniformly in ``[-s, s]`` on each axis, ``s`` being
    ``max_shift`` times the side, rounded (pad by ``s`` and crop back, as the
    FixMatch code does; 4 pixels on 32x32, 1 on 8x8).

    Parameters
    ----------
    batch : torch.Tensor of shape (n, C*H*W) or (n, C, H, W)
        Float images.
    generator : torch.Generator
        The source of every random draw, on the batch's device.
    image_shape : tuple (C, H, W) or None, default=None
        See :func:`resolve_image_shape`: None infers it from the batch.
    flip : bool, default=True
        Whether to flip; set False for digits and text, where a mirror image
        is another symbol.
    max_shift : float in [0, 1), default=0.125
        Largest translation as a fraction of the height and width.
    padding_mode : {"reflect", "zeros", "replicate"}, default="reflect"
        What the translation shifts in at the border.

    Returns
    -------
    augmented : torch.Tensor of the shape and dtype of ``batch``
    """
    _check_weak_options(flip, max_shift, padding_mode)
    images = _as_images(batch, image_shape)
    return _weak(images, generator, flip, max_shift, padding_mode).reshape(batch.shape)


# ------------------------------------------------------------- RandAugment ops
# Each op maps images normalised to [0, 1] and per-image magnitudes m in [0, 1]
# to images in [0, 1]; ranges follow the FixMatch paper's RandAugment table.


def _identity(z, m, aux):
    return z


def _brightness(z, m, aux):
    # Blend with black, factor in [0.05, 0.95].
    return z * _per_image(0.05 + 0.9 * m)


def _contrast(z, m, aux):
    # Blend with the image's mean grey level, factor in [0.05, 0.95].
    mean = z.mean(dim=(1, 2, 3), keepdim=True)
    return mean + _per_image(0.05 + 0.9 * m) * (z - mean)


def _sharpness(z, m, aux):
    # Blend with PIL's 3x3 smoothing (borders unchanged), factor in [0.05, 0.95]: a blur.
    channels = z.shape[1]
    kernel = _SMOOTH.to(device=z.device, dtype=z.dtype).expand(channels, 1, 3, 3)
    smooth = F.conv2d(F.pad(z, (1, 1, 1, 1), mode="replicate"), kernel, groups=channels)
    border = torch.ones_like(z[:1, :1], dtype=torch.bool)
    border[..., 1:-1, 1:-1] = False
    smooth = torch.where(border, z, smooth)
    return smooth + _per_image(0.05 + 0.9 * m) * (z - smooth)


def _solarize(z, m, aux):
    # Invert the values at or above a threshold in [0, 1].
    return torch.where(z >= _per_image(m), 1.0 - z, z)


def _posterize(z, m, aux):
    # Keep 4 to 8 bits of an 8-bit quantisation.
    bits = 4 + torch.clamp(torch.floor(m * 5), max=4)
    step = _per_image(torch.exp2(8 - bits))
    return torch.floor(torch.round(z * 255) / step) * step / 255


def _shear(z, m, aux):
    # Shear along x or y (aux < 1/2 or not) by a factor in [-0.3, 0.3], zero fill.
    n = len(z)
    shear = 0.3 * (2 * m - 1)
    along_x = aux < 0.5
    theta = torch.zeros(n, 2, 3, device=z.device, dtype=z.dtype)
    theta[:, 0, 0] = 1
    theta[:, 1, 1] = 1
    theta[:, 0, 1] = torch.where(along_x, shear, 0).to(z.dtype)
    theta[:, 1, 0] = torch.where(along_x, 0, shear).to(z.dtype)
    grid = F.affine_grid(theta, list(z.shape), align_corners=False)
    return F.grid_sample(z, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


_RANDAUGMENT_OPS = (
    _identity,
    _brightness,
    _contrast,
    _sharpness,
    _solarize,
    _posterize,
    _shear,
)


def _randaugment(images, generator, n_ops):
    """Apply ``n_ops`` ops per image, each drawn uniformly (with replacement) with its magnitude.

    The images are mapped to [0, 1] by their own minimum and maximum, so the
    ops suit any value range, and mapped back at the end. Every op runs on the
    whole batch and ``torch.where`` keeps each image's pick: no sync with the
    device, no loop over images.
    """
    n = len(images)
    device = images.device
    low = images.amin(dim=(1, 2, 3), keepdim=True)
    span = images.amax(dim=(1, 2, 3), keepdim=True) - low
    span = torch.where(span > 0, span, torch.ones_like(span))
    z = (images - low) / span
    for _ in range(n_ops):
        choice = torch.randint(0, len(_RANDAUGMENT_OPS), (n,), generator=generator, device=device)
        magnitude = _uniform(n, generator, device)
        aux = _uniform(n, generator, device)
        picked = z
        for k, op in enumerate(_RANDAUGMENT_OPS[1:], start=1):
            picked = torch.where(_per_image(choice == k), op(z, magnitude, aux).clamp(0, 1), picked)
        z = picked
    return low + z * span


def _cutout(images, generator, size):
    """Set a random (size*H) x (size*W) box of each image (clipped at the border) to its mean."""
    n, _, height, width = images.shape
    device = images.device
    box_h = max(1, int(size * height))
    box_w = max(1, int(size * width))
    cy = torch.randint(0, height, (n,), generator=generator, device=device)
    cx = torch.randint(0, width, (n,), generator=generator, device=device)
    top = (cy - box_h // 2)[:, None]
    left = (cx - box_w // 2)[:, None]
    ys = torch.arange(height, device=device)[None, :]
    xs = torch.arange(width, device=device)[None, :]
    in_rows = (ys >= top) & (ys < top + box_h)  # (n, H)
    in_cols = (xs >= left) & (xs < left + box_w)  # (n, W)
    box = (in_rows[:, :, None] & in_cols[:, None, :])[:, None]  # (n, 1, H, W)
    fill = images.mean(dim=(2, 3), keepdim=True)
    return torch.where(box, fill, images)


def strong_augment(
    batch,
    generator,
    *,
    image_shape=None,
    n_ops=2,
    cutout=0.5,
    flip=True,
    max_shift=0.125,
    padding_mode="reflect",
):
    """FixMatch's strong augmentation: weak, then RandAugment, then Cutout.

    After the flip and translation of :func:`weak_augment` (drawn afresh),
    ``n_ops`` operations are applied to each image, each drawn uniformly from
    identity, brightness, contrast, sharpness (a blur), solarize, posterize
    and shear, with a uniform random magnitude (RandAugment as in FixMatch's
    RA variant). The ops work on each image rescaled to [0, 1] by its own
    minimum and maximum, so any value range is fine. Finally a box of
    ``cutout`` times the height and width, centred at a uniform pixel and
    clipped at the border, is set to the image's per-channel mean.

    Parameters
    ----------
    batch : torch.Tensor of shape (n, C*H*W) or (n, C, H, W)
        Float images.
    generator : torch.Generator
        The source of every random draw, on the batch's device.
    image_shape : tuple (C, H, W) or None, default=None
        See :func:`resolve_image_shape`: None infers it from the batch.
    n_ops : int >= 0, default=2
        Operations per image.
    cutout : float in [0, 1], default=0.5
        Side of the Cutout box as a fraction of the height and width; 0 skips it.
    flip, max_shift, padding_mode
        As in :func:`weak_augment`.

    Returns
    -------
    augmented : torch.Tensor of the shape and dtype of ``batch``
    """
    _check_weak_options(flip, max_shift, padding_mode)
    check_int(n_ops, "n_ops", minimum=0)
    check_nonnegative(cutout, "cutout", upper=1.0)
    images = _as_images(batch, image_shape)
    images = _weak(images, generator, flip, max_shift, padding_mode)
    if n_ops:
        images = _randaugment(images, generator, int(n_ops))
    if cutout > 0:
        images = _cutout(images, generator, cutout)
    return images.reshape(batch.shape)
