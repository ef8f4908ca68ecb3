"""Fashion-MNIST from local IDX files (nothing is ever downloaded)."""

import gzip
import os
import zlib
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..utils import check_option

__all__ = ["load_fashion_mnist"]

DEFAULT_DATA_HOME = "/usr/share/datasets/fashion-mnist"

TARGET_NAMES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

# (images, labels) base names; each may also exist with a ".gz" suffix.
_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}

# IDX type codes (third byte of the magic number); the format is big-endian.
_IDX_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}

_IMAGE_SHAPE = (28, 28)
_N_CLASSES = len(TARGET_NAMES)

_DESCR = """\
Fashion-MNIST
-------------

Zalando article images: 60,000 training and 10,000 test grey-scale images of
28 x 28 pixels, 10 balanced classes (T-shirt/top, Trouser, Pullover, Dress,
Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot). A drop-in replacement for
MNIST with the same file format and split.

Each row of ``data`` is one image flattened in row-major order (784 pixels),
divided by 255 so that every value lies in [0, 1].

Xiao, Rasul and Vollgraf (2017), Fashion-MNIST, arXiv:1708.07747.
"""


def _open_bytes(path):
    """The decompressed bytes of ``path`` (gzip detected from its content, not its name)."""
    with open(path, "rb") as f:
        raw = f.read()
    # Trust the gzip magic rather than the suffix: a renamed or already
    # decompressed copy should load all the same.
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as exc:
        # A cut-off download or a damaged archive: say which file, not just zlib's reason.
        raise ValueError(f"{path} is not a valid gzip file (truncated or corrupt): {exc}") from exc


def _read_idx(path, *, expected_ndim):
    """Parse one IDX file into an ndarray with the shape of its header.

    Layout: two zero bytes, a type code, the number of dimensions ``d``, then
    ``d`` big-endian uint32 sizes, then the data in C order.
    """
    raw = _open_bytes(path)
    if len(raw) < 4:
        raise ValueError(f"{path} is too short to be an IDX file ({len(raw)} bytes).")
    zero, code, ndim = raw[0:2], raw[2], raw[3]
    if zero != b"\x00\x00" or code not in _IDX_DTYPES:
        raise ValueError(
            f"{path} is not an IDX file: bad magic number 0x{raw[:4].hex()} "
            f"(expected 0x0000 then a type code in "
            f"{{{', '.join(f'0x{c:02x}' for c in _IDX_DTYPES)}}})."
        )
    if ndim != expected_ndim:
        raise ValueError(
            f"{path} has {ndim} dimension(s) in its IDX header; expected {expected_ndim} "
            f"(magic number 0x{raw[:4].hex()})."
        )
    header_size = 4 + 4 * ndim
    if len(raw) < header_size:
        raise ValueError(f"{path} is truncated: its IDX header is incomplete.")
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = len(raw) - header_size
    if actual != expected:
        # Fewer bytes: a truncated file; more: not the file the header describes.
        problem = "truncated" if actual < expected else "longer than its header says"
        raise ValueError(
            f"{path} is {problem}: header shape {shape} needs {expected} data bytes, "
            f"found {actual}."
        )
    return np.frombuffer(raw, dtype=dtype, offset=header_size).reshape(shape)


def _find(data_home, name):
    """The path of ``name`` or ``name.gz`` under ``data_home``, or None."""
    for candidate in (name, name + ".gz"):
        path = data_home / candidate
        if path.is_file():
            return path
    return None


def _resolve_files(data_home, splits):
    """Paths of the images and labels files of each split; one clear error if any is missing."""
    found, missing = {}, []
    for split in splits:
        paths = []
        for name in _FILES[split]:
            path = _find(data_home, name)
            if path is None:
                missing.append(f"{name}[.gz]")
            paths.append(path)
        found[split] = paths
    if missing:
        where = "does not exist" if not data_home.is_dir() else "lacks " + ", ".join(missing)
        raise FileNotFoundError(
            f"Fashion-MNIST not found: {data_home} {where}. Nothing is downloaded; install the "
            f"files with `apt-get install -y dataset-fashion-mnist` (which puts the four IDX "
            f"files under {DEFAULT_DATA_HOME}/) or pass data_home= a folder holding "
            f"{', '.join(n for split in splits for n in _FILES[split])} (each optionally .gz)."
        )
    return found


def _load_split(images_path, labels_path):
    images = _read_idx(images_path, expected_ndim=3)
    labels = _read_idx(labels_path, expected_ndim=1)
    if images.shape[1:] != _IMAGE_SHAPE:
        raise ValueError(
            f"{images_path} holds images of shape {images.shape[1:]}; Fashion-MNIST images "
            f"are {_IMAGE_SHAPE}."
        )
    if images.dtype != np.uint8 or labels.dtype != np.uint8:
        raise ValueError(
            f"{images_path} and {labels_path} must hold unsigned bytes (IDX type 0x08); "
            f"found {images.dtype} and {labels.dtype}."
        )
    if len(images) != len(labels):
        raise ValueError(
            f"{images_path} has {len(images)} images but {labels_path} has "
            f"{len(labels)} labels."
        )
    if labels.size and labels.max() >= _N_CLASSES:
        raise ValueError(
            f"{labels_path} holds label {int(labels.max())}; Fashion-MNIST labels are "
            f"0..{_N_CLASSES - 1}."
        )
    return images, labels


def load_fashion_mnist(data_home=None, *, subset="train", return_X_y=False, dtype=np.float32):
    """Load Fashion-MNIST from local IDX files.

    Reads the four IDX files of Fashion-MNIST [1]_ (``train-images-idx3-ubyte``,
    ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
    ``t10k-labels-idx1-ubyte``, each either plain or gzipped with a ``.gz``
    suffix) from ``data_home``. Unlike scikit-learn's ``fetch_*`` functions
    this never downloads anything: on this project's machines the files come
    from the ``dataset-fashion-mnist`` system package
    (``apt-get install -y dataset-fashion-mnist``), which installs them under
    ``/usr/share/datasets/fashion-mnist/``.

    =================   =================
    Classes             10
    Samples per class   6,000 / 1,000
    Samples total       60,000 / 10,000
    Dimensionality      784
    Features            float in [0, 1]
    =================   =================

    (train / test). Every class has the same number of examples.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder holding the IDX files. ``None`` means
        ``/usr/share/datasets/fashion-mnist``.
    subset : {"train", "test", "all"}, default="train"
        Which split to load. ``"all"`` stacks the 60,000 training images
        followed by the 10,000 test images.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    dtype : floating dtype, default=numpy.float32
        Dtype of ``data``. float32 keeps the training split at 188 MB (float64
        doubles that) and is what neural networks consume.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : ndarray of shape (n_samples, 784), dtype ``dtype``
            Pixel intensities divided by 255, in [0, 1]; each row is one image
            flattened in row-major order.
        target : ndarray of shape (n_samples,), int64
            Class codes 0..9.
        images : ndarray of shape (n_samples, 28, 28)
            A reshaped view of ``data``.
        target_names : list of str
            The class names, indexed by the codes of ``target``.
        feature_names : list of str
            ``"pixel_0"`` ... ``"pixel_783"``.
        DESCR : str
            Description of the dataset.

    (data, target) : tuple if ``return_X_y`` is True
        The ``data`` and ``target`` arrays described above.

    Raises
    ------
    FileNotFoundError
        If a needed file is absent (the message names the folder searched and
        the package that provides the files).
    ValueError
        If ``subset`` or ``dtype`` is invalid, or a file is corrupt: bad magic
        number, truncated data, wrong image size or out-of-range labels.

    References
    ----------
    .. [1] H. Xiao, K. Rasul, R. Vollgraf. Fashion-MNIST: a novel image dataset
       for benchmarking machine learning. arXiv:1708.07747, 2017.

    Examples
    --------
    >>> from sklearn_labeldp.datasets import load_fashion_mnist
    >>> X, y = load_fashion_mnist(subset="test", return_X_y=True)  # doctest: +SKIP
    >>> X.shape, X.dtype, y.shape  # doctest: +SKIP
    ((10000, 784), dtype('float32'), (10000,))
    >>> load_fashion_mnist().target_names[0]  # doctest: +SKIP
    'T-shirt/top'
    """
    check_option(subset, "subset", ("train", "test", "all"))
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise ValueError(f"dtype must be a floating dtype; got {dtype!r}.") from exc
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating dtype such as numpy.float32; got {dtype}.")
    if data_home is None:
        data_home = DEFAULT_DATA_HOME
    elif not isinstance(data_home, str | os.PathLike):
        raise TypeError(f"data_home must be a str, a path-like or None; got {data_home!r}.")
    data_home = Path(data_home).expanduser()

    splits = ("train", "test") if subset == "all" else (subset,)
    files = _resolve_files(data_home, splits)
    parts = [_load_split(*files[split]) for split in splits]

    n_samples = sum(len(labels) for _, labels in parts)
    n_features = _IMAGE_SHAPE[0] * _IMAGE_SHAPE[1]
    # Fill one preallocated array: concatenating float copies would briefly hold
    # the training split twice (~376 MB in float32).
    X = np.empty((n_samples, n_features), dtype=dtype)
    y = np.empty(n_samples, dtype=np.int64)
    start = 0
    for images, labels in parts:
        stop = start + len(labels)
        np.divide(images.reshape(len(images), n_features), 255, out=X[start:stop], dtype=dtype)
        y[start:stop] = labels
        start = stop

    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        images=X.reshape(n_samples, *_IMAGE_SHAPE),
        target_names=list(TARGET_NAMES),
        feature_names=[f"pixel_{i}" for i in range(n_features)],
        DESCR=_DESCR,
    )
