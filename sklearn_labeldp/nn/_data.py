"""Data, devices and seeds of one network fit: what every training mode shares.

- :func:`resolve_device` and :func:`check_device_available`: the ``device``
  parameter and the machine's accelerators;
- :func:`draw_seed` and :func:`seeded`: one torch seed per fit, used without
  touching the caller's global torch state;
- :class:`ArrayDataset`, :class:`ArrayBatches` and :func:`stage`: in-memory
  training data held as whole tensors, moved to the device once, and sliced
  into mini-batches;
- :func:`check_soft_targets`, :func:`check_bit_targets` and
  :func:`split_unlabeled`: the targets of each kind, checked before any work.
"""

from contextlib import contextmanager
from textwrap import shorten

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets

__all__ = [
    "ArrayBatches",
    "ArrayDataset",
    "as_tensor",
    "check_bit_targets",
    "check_device_available",
    "check_soft_targets",
    "draw_seed",
    "resolve_device",
    "seeded",
    "split_unlabeled",
    "stage",
]

# Training data up to this size is copied to the accelerator once per fit
# instead of once per batch; larger data stays in host memory.
STAGE_LIMIT_BYTES = 2 * 1024**3


def resolve_device(device):
    """The torch device a ``device`` parameter means: ``"auto"`` picks CUDA when present."""
    if isinstance(device, str) and device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def check_device_available(device):
    """Raise ``ValueError`` unless ``device`` names a torch device this machine has.

    ``"auto"`` and None always pass. Anything else must parse as a
    :class:`torch.device` on which an empty tensor can be allocated (a CUDA
    device also needs its index among the visible GPUs), so that a network
    configured for an absent accelerator fails before any work, not mid-fit.
    """
    resolved = resolve_device(device)
    if resolved is None:
        return
    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    try:
        parsed = torch.device(resolved)
        # Allocation, not only parsing: it fails for a device type this build or machine lacks.
        torch.empty(0, device=parsed)
    except Exception as exc:  # torch raises RuntimeError, AssertionError, NotImplementedError...
        reason = shorten(str(exc), 200) or type(exc).__name__
    else:
        reason = None
        if parsed.type == "cuda" and (parsed.index or 0) >= n_gpus:
            reason = f"this machine has {n_gpus} CUDA device(s)"
    if reason is not None:
        available = ", ".join(repr(name) for name in ["cpu", *(f"cuda:{i}" for i in range(n_gpus))])
        raise ValueError(
            f"device must be 'auto', None or a torch device available here ({available}); "
            f"got {device!r}, which is unavailable: {reason}."
        )


def draw_seed(random_state):
    """One torch seed in [0, 2**63) for a fit, from a validated ``random_state``.

    None draws it from the operating system's entropy; a ``RandomState`` or
    ``Generator`` draws it from its bit generator (which advances), so a
    128-bit-seeded MT19937 or PCG64 stream gives a 63-bit seed, not a narrowed one.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int64).max, dtype=np.int64))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    return int(random_state)


@contextmanager
def seeded(seed, device):
    """Seed torch for one fit without disturbing the caller's global RNG state."""
    on_cuda = device is not None and torch.device(device).type == "cuda"
    devices = list(range(torch.cuda.device_count())) if on_cuda else []
    with torch.random.fork_rng(devices=devices):
        if on_cuda:
            torch.manual_seed(seed)  # seeds the CPU and every (forked) CUDA generator
        else:
            # Only the CPU generator: the accelerators' states are not forked.
            torch.default_generator.manual_seed(seed)
        yield


def as_tensor(data, float32=False):
    """``data`` as a tensor sharing its memory where possible (float32 on request)."""
    if isinstance(data, torch.Tensor):
        if float32 and data.dtype != torch.float32:
            data = data.to(torch.float32)
        return data
    data = np.asarray(data)
    if float32 and data.dtype != np.float32:
        data = data.astype(np.float32)
    if not data.flags.writeable or not data.flags.c_contiguous:
        data = np.ascontiguousarray(data).copy()  # torch.from_numpy needs writable memory
    return torch.from_numpy(data)


def stage(tensors, device):
    """The ``tensors`` moved to ``device`` together when they fit in 2 GiB, else as they are.

    Staging once per fit spares a host-to-device copy of every batch; data too
    large for that stays in host memory and batches are moved one by one.
    """
    if device is None or sum(t.nbytes for t in tensors) > STAGE_LIMIT_BYTES:
        return tensors
    return [t.to(device) for t in tensors]


class ArrayDataset(torch.utils.data.Dataset):
    """Inputs and targets held as whole tensors, so batches are slices, not stacks."""

    def __init__(self, X, y=None):
        self.X = X
        self.y = y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        # For a user-configured DataLoader; the default path slices whole batches.
        return self.X[i], (0 if self.y is None else self.y[i])


class ArrayBatches:
    """Mini-batches of an :class:`ArrayDataset` by tensor indexing.

    A DataLoader indexes and collates sample by sample; on in-memory arrays
    that Python loop costs more than a small network's forward pass. Targets are
    read at the start of every epoch, so a refreshed ``dataset.y`` takes effect
    in the next one.
    """

    def __init__(self, dataset, batch_size, shuffle):
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = shuffle

    def _stops(self, n):
        stops = list(range(self.batch_size, n, self.batch_size)) + [n]
        if self.shuffle and len(stops) > 1 and n - stops[-2] == 1:
            # A training batch of one sample breaks BatchNorm; fold it into the previous.
            del stops[-2]
        return stops

    def __len__(self):
        return len(self._stops(len(self.dataset)))

    def __iter__(self):
        X, y = self.dataset.X, self.dataset.y
        n = len(X)
        order = torch.randperm(n, device=X.device) if self.shuffle else None
        start = 0
        for stop in self._stops(n):
            index = slice(start, stop) if order is None else order[start:stop]
            yield X[index], (None if y is None else y[index])
            start = stop


def check_soft_targets(targets, n_samples, n_classes=None, *, name="targets"):
    """Validate rows on the probability simplex; return them as float32."""
    targets = np.asarray(targets)
    if targets.ndim != 2 or targets.shape[0] != n_samples:
        raise ValueError(
            f"{name} must have shape (n_samples, n_classes) = ({n_samples}, K); "
            f"got {targets.shape}."
        )
    if n_classes is not None and targets.shape[1] != n_classes:
        raise ValueError(f"{name} must have {n_classes} columns; got {targets.shape[1]}.")
    if targets.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 columns (classes); got {targets.shape[1]}.")
    if not np.issubdtype(targets.dtype, np.number) or np.iscomplexobj(targets):
        raise TypeError(f"{name} must be a real float array; got dtype {targets.dtype}.")
    targets = targets.astype(np.float32)
    # float32 sums of K probabilities are off by a few ulps; anything beyond
    # this tolerance is a caller's bug (e.g. unnormalised posteriors).
    if (
        not np.all(np.isfinite(targets))
        or targets.min() < -1e-6
        or not np.allclose(targets.sum(axis=1), 1.0, atol=1e-3)
    ):
        raise ValueError(f"every row of {name} must lie on the probability simplex.")
    return targets


def check_bit_targets(bits, n_samples):
    """Validate K >= 1 columns of {0, 1} (bit vectors); return them as float32."""
    bits = np.asarray(bits)
    if bits.ndim != 2 or bits.shape[0] != n_samples or bits.shape[1] < 1:
        raise ValueError(f"bits must have shape ({n_samples}, K) with K >= 1; got {bits.shape}.")
    if not np.all((bits == 0) | (bits == 1)):
        raise ValueError("bits must contain only 0 and 1.")
    return bits.astype(np.float32)


def split_unlabeled(y):
    """The unlabeled rows of ``y`` (``-1``), and the classes and codes of the labeled ones.

    ``y`` is 1-d: ints, or an object array mixing labels and ``-1``. A string
    array is refused (it cannot hold the marker ``-1``), and so are ``y``
    without labeled rows and labeled rows of fewer than two classes.

    Returns
    -------
    unlabeled : bool ndarray of shape (n_samples,)
    classes : ndarray
        The sorted distinct labels other than ``-1``.
    codes : int64 ndarray of shape (n_labeled,)
        The labeled rows' indices into ``classes``.
    """
    if y.dtype.kind in "USV":
        raise ValueError(
            f"y has dtype {y.dtype}: fit_semi marks unlabeled rows by -1, so string "
            "labels need an object array with -1 for the unlabeled rows."
        )
    unlabeled = np.asarray(y == -1, dtype=bool)
    if unlabeled.shape != y.shape:  # an object array whose == did not broadcast
        unlabeled = np.array([label == -1 for label in y], dtype=bool)
    if unlabeled.all():
        raise ValueError("fit_semi needs labeled rows: every entry of y is -1 (unlabeled).")
    labels = y[~unlabeled]
    check_classification_targets(labels)
    classes, codes = np.unique(labels, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"the labeled rows of y (y != -1) need at least 2 classes; got {len(classes)}."
        )
    return unlabeled, classes, codes.astype(np.int64)
