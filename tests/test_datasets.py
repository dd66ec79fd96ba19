"""Tests for assocmem.datasets: the bundled digits and MNIST from local IDX files (a fake MNIST
directory in torchvision's layout is written here; nothing is downloaded)."""

import gzip
import inspect
import struct

import numpy as np
import pytest

from assocmem import datasets
from assocmem.datasets import (
    MNIST_FILES,
    PREPROCESSING,
    find_mnist,
    load_digits_patterns,
    load_mnist,
    read_idx,
    stratified_split,
    write_idx,
)

pytest.importorskip("sklearn")


# ------------------------------------------------------------------------------------------
# digits
# ------------------------------------------------------------------------------------------


def test_digits_shapes_split_and_centring():
    s = load_digits_patterns()
    assert s.train.shape == (1347, 64) and s.test.shape == (450, 64) and s.n == 64
    assert s.image_shape == (8, 8) and s.preprocessing == "center"
    assert s.train.dtype == np.float64 and s.train_labels.dtype == np.int64
    assert np.intersect1d(s.train_index, s.test_index).size == 0
    assert np.union1d(s.train_index, s.test_index).size == 1797
    np.testing.assert_allclose(s.train.mean(axis=0), 0.0, atol=1e-12)  # centred on the training mean
    # stratified: every digit is in both sets, in about the same proportion
    for digit in range(10):
        in_test = np.sum(s.test_labels == digit)
        in_all = np.sum(np.r_[s.train_labels, s.test_labels] == digit)
        assert 0.24 < in_test / in_all < 0.26
    # binary and unit views
    assert set(np.unique(s.binary())) <= {0, 1}
    np.testing.assert_allclose(np.linalg.norm(s.unit("test"), axis=1), 1.0)


def test_digits_seeded_and_preprocessing():
    a, b = load_digits_patterns(seed=3), load_digits_patterns(seed=3)
    np.testing.assert_array_equal(a.train_index, b.train_index)
    c = load_digits_patterns(seed=4)
    assert not np.array_equal(a.train_index, c.train_index)
    raw = load_digits_patterns(preprocessing="none")
    assert raw.train.min() == 0 and raw.train.max() == 16
    scaled = load_digits_patterns(preprocessing="scale")
    np.testing.assert_allclose(scaled.train, raw.train / 16)
    std = load_digits_patterns(preprocessing="standardize")
    sd = std.train.std(axis=0)
    assert np.all((np.abs(sd - 1) < 1e-9) | (sd == 0))  # constant pixels stay at 0
    assert set(PREPROCESSING) == {"center", "standardize", "scale", "none"}
    with pytest.raises(ValueError, match="preprocessing"):
        load_digits_patterns(preprocessing="whiten")
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits_patterns(test_fraction=1.0)
    with pytest.raises(ValueError, match="split"):
        a.unit("validation")


def test_stratified_split():
    y = np.repeat(np.arange(3), [10, 4, 2])
    tr, te = stratified_split(y, 0.25, seed=0)
    assert np.bincount(y[te], minlength=3).tolist() == [2, 1, 1]  # round(2.5)=2, 1, max(0.5->0, 1)
    assert sorted(np.r_[tr, te].tolist()) == list(range(16))


# ------------------------------------------------------------------------------------------
# IDX
# ------------------------------------------------------------------------------------------


def test_read_idx_parses_hand_written_bytes(tmp_path):
    # magic 0x00000803 (uint8, 3 dims), sizes 2 x 2 x 3, then 12 bytes
    raw = struct.pack(">BBBB", 0, 0, 0x08, 3) + struct.pack(">III", 2, 2, 3) + bytes(range(12))
    (tmp_path / "x").write_bytes(raw)
    np.testing.assert_array_equal(read_idx(tmp_path / "x"), np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
    # big-endian int32 labels, gzip-compressed
    raw = struct.pack(">BBBB", 0, 0, 0x0C, 1) + struct.pack(">I", 3) + struct.pack(">iii", -1, 7, 70000)
    with gzip.open(tmp_path / "y.gz", "wb") as fh:
        fh.write(raw)
    out = read_idx(tmp_path / "y.gz")
    assert out.dtype == np.int32 and out.tolist() == [-1, 7, 70000]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("name", ["a.idx", "a.idx.gz"])
def test_idx_round_trip(tmp_path, dtype, name):
    arr = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    out = read_idx(write_idx(tmp_path / name, arr))
    assert out.dtype == np.dtype(dtype) and np.array_equal(out, arr)


def test_idx_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "missing")
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x01\x00")
    with pytest.raises(ValueError, match="magic"):
        read_idx(tmp_path / "bad")
    (tmp_path / "code").write_bytes(b"\x00\x00\x07\x01\x00\x00\x00\x01\x00")
    with pytest.raises(ValueError, match="type code"):
        read_idx(tmp_path / "code")
    (tmp_path / "short").write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x05\x00")
    with pytest.raises(ValueError, match="promises"):
        read_idx(tmp_path / "short")
    with pytest.raises(ValueError, match="dtype"):
        write_idx(tmp_path / "z", np.zeros(3, dtype=np.uint16))


# ------------------------------------------------------------------------------------------
# MNIST
# ------------------------------------------------------------------------------------------


@pytest.fixture
def fake_mnist(tmp_path):
    """A tiny MNIST in torchvision's layout: root/MNIST/raw, train uncompressed, test gzipped."""
    rng = np.random.default_rng(0)
    raw = tmp_path / "MNIST" / "raw"
    data = {}
    for split, count, suffix in (("train", 5, ""), ("test", 3, ".gz")):
        images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=count, dtype=np.uint8)
        img_name, lab_name = MNIST_FILES[split]
        write_idx(raw / (img_name + suffix), images)
        write_idx(raw / (lab_name + suffix), labels)
        data[split] = (images, labels)
    return tmp_path, data


def test_load_mnist_from_a_fake_directory(fake_mnist):
    root, data = fake_mnist
    x, y = load_mnist(root)
    images, labels = data["train"]
    assert x.shape == (5, 784) and x.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(x, images.reshape(5, -1) / 255.0)
    np.testing.assert_array_equal(y, labels)
    xt, yt = load_mnist(root, "test", flatten=False, scale=False)
    assert xt.shape == (3, 28, 28) and xt.dtype == np.uint8
    np.testing.assert_array_equal(xt, data["test"][0])
    x2, y2 = load_mnist(root, limit=2)
    assert x2.shape == (2, 784) and y2.tolist() == labels[:2].tolist()
    assert find_mnist(root / "MNIST" / "raw", "train")[0].name == "train-images-idx3-ubyte"


def test_load_mnist_never_downloads(tmp_path):
    with pytest.raises(FileNotFoundError, match="never downloads"):
        load_mnist(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="split"):
        load_mnist(tmp_path, "validation")
    source = inspect.getsource(datasets)
    assert "import torchvision" not in source and "urllib" not in source and "requests" not in source


def test_load_mnist_rejects_inconsistent_files(tmp_path):
    img, lab = MNIST_FILES["train"]
    write_idx(tmp_path / img, np.zeros((4, 28, 28), np.uint8))
    write_idx(tmp_path / lab, np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="4 images but 3 labels"):
        load_mnist(tmp_path)
    write_idx(tmp_path / lab, np.zeros((4, 1), np.uint8))
    with pytest.raises(ValueError, match="1-D uint8"):
        load_mnist(tmp_path)


def test_docstrings_cite_public_sources_only():
    src = inspect.getsource(datasets)
    assert "REFERENCE" not in src and "[REF]" not in src
    assert "TrentBrick/attention-approximates-sdm" in src and "LearnProjections.ipynb" in src
