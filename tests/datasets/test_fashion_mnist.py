import gzip
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from sklearn_labeldp.datasets._fashion_mnist import (
    DEFAULT_DATA_HOME,
    TARGET_NAMES,
    load_fashion_mnist,
)

TRAIN = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")
TEST = ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def idx_bytes(array, type_code=0x08):
    """An IDX file: 0x0000, the type code, ndim, big-endian uint32 dims, then the data."""
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.tobytes()


def write(path, data, compress=False):
    path.write_bytes(gzip.compress(data) if compress else data)


def make_split(rng, n):
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[0, 0, 0], images[0, 0, 1] = 0, 255  # pin both ends of the range
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    return images, labels


@pytest.fixture
def fake_home(tmp_path):
    """Tiny train (7 images) and test (3 images) splits as plain IDX files."""
    rng = np.random.default_rng(0)
    data = {"train": make_split(rng, 7), "test": make_split(rng, 3)}
    for names, (images, labels) in ((TRAIN, data["train"]), (TEST, data["test"])):
        write(tmp_path / names[0], idx_bytes(images))
        write(tmp_path / names[1], idx_bytes(labels))
    return tmp_path, data


def gzip_home(src, dst):
    dst.mkdir()
    for name in TRAIN + TEST:
        write(dst / (name + ".gz"), (src / name).read_bytes(), compress=True)
    return dst


def test_plain_files_bunch(fake_home):
    home, data = fake_home
    bunch = load_fashion_mnist(home)
    images, labels = data["train"]
    assert bunch.data.shape == (7, 784) and bunch.data.dtype == np.float32
    assert bunch.target.dtype == np.int64
    np.testing.assert_array_equal(bunch.target, labels)
    # row-major flattening, divided by 255
    np.testing.assert_allclose(bunch.data, images.reshape(7, -1) / 255.0, rtol=1e-6)
    assert bunch.data.min() == 0.0 and bunch.data.max() == 1.0
    np.testing.assert_array_equal(bunch.images, bunch.data.reshape(7, 28, 28))
    assert np.shares_memory(bunch.images, bunch.data)
    assert bunch.target_names == list(TARGET_NAMES)
    assert bunch.target_names[0] == "T-shirt/top" and bunch.target_names[9] == "Ankle boot"
    assert len(bunch.feature_names) == 784 and bunch.feature_names[-1] == "pixel_783"
    assert "Fashion-MNIST" in bunch.DESCR


def test_gzipped_files_match_plain(fake_home, tmp_path):
    home, _ = fake_home
    gz = gzip_home(home, tmp_path / "gz")
    for subset in ("train", "test", "all"):
        X_plain, y_plain = load_fashion_mnist(home, subset=subset, return_X_y=True)
        X_gz, y_gz = load_fashion_mnist(str(gz), subset=subset, return_X_y=True)
        np.testing.assert_array_equal(X_plain, X_gz)
        np.testing.assert_array_equal(y_plain, y_gz)


def test_gzip_detected_from_content_not_suffix(fake_home, tmp_path):
    home, data = fake_home
    other = tmp_path / "renamed"
    other.mkdir()
    for name in TEST:  # gzipped bytes under the plain name
        write(other / name, (home / name).read_bytes(), compress=True)
    _, y = load_fashion_mnist(other, subset="test", return_X_y=True)
    np.testing.assert_array_equal(y, data["test"][1])


def test_subsets_and_dtype(fake_home):
    home, data = fake_home
    X_tr, y_tr = load_fashion_mnist(home, subset="train", return_X_y=True)
    X_te, y_te = load_fashion_mnist(home, subset="test", return_X_y=True)
    X_all, y_all = load_fashion_mnist(home, subset="all", return_X_y=True, dtype=np.float64)
    assert X_te.shape == (3, 784)
    np.testing.assert_array_equal(y_te, data["test"][1])
    assert X_all.dtype == np.float64 and X_all.shape == (10, 784)
    np.testing.assert_array_equal(y_all, np.concatenate([y_tr, y_te]))  # train first
    np.testing.assert_allclose(X_all, np.vstack([X_tr, X_te]), rtol=1e-6)


def test_test_subset_needs_only_test_files(fake_home):
    home, _ = fake_home
    for name in TRAIN:
        (home / name).unlink()
    assert load_fashion_mnist(home, subset="test").data.shape == (3, 784)
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_fashion_mnist(home, subset="all")


def test_missing_folder_message(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as info:
        load_fashion_mnist(missing)
    message = str(info.value)
    assert "apt-get install -y dataset-fashion-mnist" in message
    assert str(missing) in message and "does not exist" in message
    assert DEFAULT_DATA_HOME in message
    assert isinstance(info.value, OSError)


def test_missing_file_is_named(fake_home):
    home, _ = fake_home
    (home / TEST[1]).unlink()
    with pytest.raises(FileNotFoundError, match=r"lacks t10k-labels-idx1-ubyte\[\.gz\]"):
        load_fashion_mnist(home, subset="test")


@pytest.mark.parametrize("header", [b"\x08\x03\x00\x00", b"\x00\x01\x08\x03", b"\x00\x00\x07\x03"])
def test_bad_magic(fake_home, header):
    home, _ = fake_home
    path = home / TRAIN[0]
    write(path, header + path.read_bytes()[4:])
    with pytest.raises(ValueError, match="bad magic number"):
        load_fashion_mnist(home)


def test_wrong_number_of_dimensions(fake_home):
    home, data = fake_home
    write(home / TRAIN[1], idx_bytes(data["train"][1].reshape(7, 1)))
    with pytest.raises(ValueError, match="2 dimension.*expected 1"):
        load_fashion_mnist(home)


@pytest.mark.parametrize("compress", [False, True])
def test_truncated_data(fake_home, compress):
    home, _ = fake_home
    path = home / TRAIN[0]
    write(path, path.read_bytes()[:-100], compress=compress)
    with pytest.raises(ValueError, match="is truncated"):
        load_fashion_mnist(home)


@pytest.mark.parametrize("keep", [0, 3, 10])
def test_truncated_header(fake_home, keep):
    home, _ = fake_home
    path = home / TRAIN[0]
    write(path, path.read_bytes()[:keep])
    with pytest.raises(ValueError, match="too short|truncated"):
        load_fashion_mnist(home)


def test_truncated_gzip_stream(fake_home):
    home, _ = fake_home
    path = home / TRAIN[0]
    blob = gzip.compress(path.read_bytes())
    path.unlink()
    write(home / (TRAIN[0] + ".gz"), blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="not a valid gzip file"):
        load_fashion_mnist(home)


def test_trailing_bytes(fake_home):
    home, _ = fake_home
    path = home / TRAIN[1]
    write(path, path.read_bytes() + b"\x00")
    with pytest.raises(ValueError, match="longer than its header"):
        load_fashion_mnist(home)


def test_inconsistent_files(fake_home):
    home, data = fake_home
    images, labels = data["train"]
    write(home / TRAIN[1], idx_bytes(labels[:5]))
    with pytest.raises(ValueError, match="7 images but .* 5 labels"):
        load_fashion_mnist(home)
    write(home / TRAIN[1], idx_bytes(np.full(7, 10, dtype=np.uint8)))
    with pytest.raises(ValueError, match="label 10"):
        load_fashion_mnist(home)
    write(home / TRAIN[1], idx_bytes(labels))
    write(home / TRAIN[0], idx_bytes(np.zeros((7, 27, 28), dtype=np.uint8)))
    with pytest.raises(ValueError, match=r"\(27, 28\)"):
        load_fashion_mnist(home)
    write(home / TRAIN[0], idx_bytes(images.astype(">i4"), type_code=0x0C))
    with pytest.raises(ValueError, match="unsigned bytes"):
        load_fashion_mnist(home)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"subset": "validation"}, ValueError, "subset"),
        ({"dtype": np.uint8}, ValueError, "floating dtype"),
        ({"dtype": "not a dtype"}, ValueError, "floating dtype"),
        ({"data_home": 3}, TypeError, "data_home"),
    ],
)
def test_bad_arguments(fake_home, kwargs, error, match):
    home, _ = fake_home
    kwargs = {"data_home": home, **kwargs}
    with pytest.raises(error, match=match):
        load_fashion_mnist(**kwargs)


@pytest.mark.skipif(
    not os.path.isdir(DEFAULT_DATA_HOME),
    reason="dataset-fashion-mnist is not installed (apt-get install -y dataset-fashion-mnist)",
)
def test_real_files():
    assert Path(DEFAULT_DATA_HOME).is_dir()
    for subset, n in (("train", 60_000), ("test", 10_000)):
        X, y = load_fashion_mnist(subset=subset, return_X_y=True)
        assert X.shape == (n, 784) and X.dtype == np.float32 and y.shape == (n,)
        assert X.min() == 0.0 and X.max() == 1.0
        # the published splits are exactly balanced
        np.testing.assert_array_equal(np.bincount(y, minlength=10), np.full(10, n // 10))
