"""Real patterns for the associative-memory experiments: handwritten digits and MNIST.

Random patterns are what the theory assumes; real images are correlated, clustered and not
centred, and the book stores them too (App. B.7 of Bricken & Pehlevan 2021 runs its convergence
experiments on MNIST and CIFAR-10 as well as on random patterns). This module loads two image
sets as float64 pattern matrices, one image per row:

* :func:`load_digits_patterns`: scikit-learn's bundled handwritten digits (1,797 images of
  8 x 8 pixels, values 0..16, so ``n = 64``, the attention head size of the paper's
  ``n = 64`` setting), with a seeded, stratified train/test split and the preprocessing
  documented below. Works offline; needs scikit-learn (``pip install scikit-learn``).
* :func:`load_mnist`: MNIST from files the reader already has (``n = 784``). Nothing is ever
  downloaded: if the files are missing a :class:`FileNotFoundError` says where they were looked
  for. The IDX format is parsed here with numpy (:func:`read_idx`; :func:`write_idx` writes it),
  so torchvision is not needed.

Storing and querying. An autoassociative memory can only return what it stores. To test
retrieval, store a set of patterns and query with perturbed copies of *stored* patterns (e.g.
store ``train`` and query ``train``). Querying with ``test`` images asks for targets that were
never written: the authors' learnt-projection experiment (App. B.7, Figs. 30-31) does this, and
its "no generalisation" result is an artefact of it ([BP21-code]; :mod:`assocmem.sdm.projections`
runs it both ways).

Preprocessing of the digits (``preprocessing=``):

* ``"center"`` (default): subtract the per-pixel mean of the *training* images. Raw pixel
  vectors are all nonnegative, so any two have a large cosine (0.68 on average between images
  of *different* digits, 0.82 within a digit) and a sign binarisation would be meaningless;
  centred, the average cosine between different digits is -0.05 (0.42 within a digit) and
  ``1[x > 0]`` marks pixels brighter than average. Per-pixel scales are kept, so dim border
  pixels stay small. Unlike random patterns, images have close neighbours: the median cosine
  of a centred training image to its nearest other training image is 0.88 (random ``n = 64``
  patterns: about 0.4 for ``m = 1024``), so perturbed queries reach a wrong basin sooner.
* ``"standardize"``: centre, then divide each pixel by its training standard deviation (pixels
  that are constant in the training set are left at 0). Gives every pixel equal weight,
  including nearly empty border pixels, which then carry mostly noise.
* ``"scale"``: divide by 16, values in ``[0, 1]`` (not centred).
* ``"none"``: the raw values 0..16.

Continuous memories L2-normalise each row (:meth:`PatternSplit.unit`), binary ones take
``1[x > 0]`` (:meth:`PatternSplit.binary`), as App. B.7 does with its random patterns.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34, App. B.7 (MNIST and CIFAR-10 convergence, learnt projections).
- [AK98] Alpaydin, E., & Kaynak, C. (1998). Optical recognition of handwritten digits. UCI
  Machine Learning Repository (the test set that scikit-learn bundles as ``load_digits``).
- [LBBH98] LeCun, Y., Bottou, L., Bengio, Y., & Haffner, P. (1998). Gradient-based learning
  applied to document recognition. Proc. IEEE 86(11) (MNIST; the IDX file format).
- [BP21-code] The authors' code, ``github.com/TrentBrick/attention-approximates-sdm`` (commit
  ``0a5d55e``), ``LearnProjections.ipynb``, cell 2: the memory queried at test time is a copy of
  the *training* images, while the queries and their targets are *test* images
  (:mod:`assocmem.sdm.projections` gives the details).
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_bool
from assocmem._checks import as_int as _as_int

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, PathLike, Seed

__all__ = [
    "PREPROCESSING",
    "PatternSplit",
    "load_digits_patterns",
    "stratified_split",
    "read_idx",
    "write_idx",
    "MNIST_FILES",
    "find_mnist",
    "load_mnist",
]

#: Preprocessing choices of :func:`load_digits_patterns`.
PREPROCESSING = ("center", "standardize", "scale", "none")

# IDX type codes (third byte of the magic number) and their big-endian numpy types.
_IDX_TYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_IDX_CODES = {np.dtype(v).newbyteorder("="): k for k, v in _IDX_TYPES.items()}

#: The four MNIST files, by split: ``(images, labels)``, as LeCun's site and torchvision name them.
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


# ==========================================================================================
# Checks
# ==========================================================================================




def _check_fraction(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real) or not 0 < float(value) < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return float(value)


def _generator(seed) -> np.random.Generator:
    """``numpy.random.default_rng(seed)`` for a non-negative integer seed or a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    seed = _as_int(seed, "seed", minimum=0)
    return np.random.default_rng(seed)




def _path(value, name: str) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(value).__name__} {value!r}")
    return Path(os.fspath(value))


# ==========================================================================================
# Splits
# ==========================================================================================


@dataclass(frozen=True)
class PatternSplit:
    """Patterns split into a training and a test set, with the preprocessing that made them.

    Attributes
    ----------
    train, test : numpy.ndarray, shapes ``(N_train, n)`` and ``(N_test, n)``, float64
        One preprocessed image per row.
    train_labels, test_labels : numpy.ndarray, shapes ``(N_train,)`` and ``(N_test,)``, int64
    train_index, test_index : numpy.ndarray, int64
        Rows of the original data set.
    mean : numpy.ndarray, shape ``(n,)``
        What was subtracted (zeros for ``"scale"`` and ``"none"``).
    scale : numpy.ndarray, shape ``(n,)``
        What the centred values were divided by (ones unless ``"standardize"``; 16 for
        ``"scale"``).
    image_shape : tuple of int
        ``(8, 8)`` for the digits; ``row.reshape(image_shape)`` is the image.
    preprocessing : str
        One of :data:`PREPROCESSING`.
    """

    train: np.ndarray
    test: np.ndarray
    train_labels: np.ndarray
    test_labels: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    image_shape: tuple[int, ...]
    preprocessing: str

    @property
    def n(self) -> int:
        """Pattern length (pixels per image)."""
        return int(self.train.shape[1])

    def _rows(self, split: str) -> np.ndarray:
        if split == "train":
            return self.train
        if split == "test":
            return self.test
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")

    def unit(self, split: str = "train") -> np.ndarray:
        """L2-normalised rows of ``split`` (for continuous memories).

        Raises
        ------
        ValueError
            If ``split`` is unknown or a row is zero.
        """
        x = self._rows(split)
        norm = np.linalg.norm(x, axis=1, keepdims=True)
        if np.any(norm == 0):
            raise ValueError(f"the {split} set has an all-zero row, which cannot be L2-normalised")
        return x / norm

    def binary(self, split: str = "train") -> np.ndarray:
        """``1[x > 0]`` of ``split``, uint8 (for binary memories; meaningful after centring).

        Raises
        ------
        ValueError
            If ``split`` is unknown.
        """
        return (self._rows(split) > 0).astype(np.uint8)


def stratified_split(labels: ArrayLike, test_fraction: float = 0.25,
                     seed: Seed = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded stratified split of row indices: each class split in the same proportion.

    Parameters
    ----------
    labels : array_like, shape ``(N,)``
        Class of each row.
    test_fraction : float, default 0.25
        Share of each class sent to the test set (rounded per class, at least one row of
        every class with two or more rows stays in each set).
    seed : int or numpy.random.Generator, default 0
        A non-negative integer (not a bool or a non-integral float) or a Generator.

    Returns
    -------
    train_index, test_index : numpy.ndarray, int64
        Sorted, disjoint, together every row.

    Raises
    ------
    ValueError
        If ``labels`` is not 1-D or holds NaN (a NaN label matches no class, so its rows would
        silently never be held out), ``test_fraction`` is not in ``(0, 1)``, or ``seed`` is not
        a non-negative integer or a Generator.
    """
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {y.shape}")
    if y.dtype.kind in "fc" and np.isnan(y).any():
        raise ValueError(f"labels must not contain NaN; {int(np.isnan(y).sum())} of {y.size} are NaN")
    frac = _check_fraction(test_fraction, "test_fraction")
    rng = _generator(seed)
    test = []
    for cls in np.unique(y):
        rows = np.flatnonzero(y == cls)
        k = int(round(frac * rows.size))
        if rows.size >= 2:
            k = min(max(k, 1), rows.size - 1)
        test.append(rng.permutation(rows)[:k])
    test_index = np.sort(np.concatenate(test)).astype(np.int64) if test else np.zeros(0, np.int64)
    mask = np.ones(y.size, dtype=bool)
    mask[test_index] = False
    return np.flatnonzero(mask).astype(np.int64), test_index


def _preprocess(train: np.ndarray, test: np.ndarray, preprocessing: str, full_scale: float):
    n = train.shape[1]
    mean, scale = np.zeros(n), np.ones(n)
    if preprocessing in ("center", "standardize"):
        mean = train.mean(axis=0)
    if preprocessing == "standardize":
        sd = train.std(axis=0)
        scale = np.where(sd > 0, sd, 1.0)
    elif preprocessing == "scale":
        scale = np.full(n, full_scale)
    elif preprocessing not in ("center", "none"):
        raise ValueError(f"preprocessing must be one of {PREPROCESSING}, got {preprocessing!r}")
    return (train - mean) / scale, (test - mean) / scale, mean, scale


def load_digits_patterns(test_fraction: float = 0.25, seed: Seed = 0,
                         preprocessing: str = "center") -> PatternSplit:
    """scikit-learn's handwritten digits as ``n = 64`` patterns, split and preprocessed.

    Parameters
    ----------
    test_fraction : float, default 0.25
        Share of each digit class held out (:func:`stratified_split`).
    seed : int or numpy.random.Generator, default 0
        Seed of the split.
    preprocessing : {"center", "standardize", "scale", "none"}, default "center"
        See the module docstring. Statistics come from the training rows only.

    Returns
    -------
    PatternSplit
        1,797 images in all (1,347 train and 450 test with the defaults), float64,
        ``image_shape = (8, 8)``.

    Raises
    ------
    ImportError
        If scikit-learn is not installed (the message says how to install it).
    ValueError
        If ``test_fraction`` is not in ``(0, 1)``, ``seed`` is not a non-negative integer or a
        Generator, or ``preprocessing`` is unknown.

    References
    ----------
    Alpaydin & Kaynak (1998); scikit-learn ``sklearn.datasets.load_digits`` (bundled, offline).
    """
    if not isinstance(preprocessing, str) or preprocessing not in PREPROCESSING:
        raise ValueError(f"preprocessing must be one of {PREPROCESSING}, got {preprocessing!r}")
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("load_digits_patterns needs scikit-learn: pip install scikit-learn") from err
    bunch = load_digits()
    x = np.asarray(bunch.data, dtype=np.float64)  # (1797, 64), values 0..16
    y = np.asarray(bunch.target, dtype=np.int64)
    train_index, test_index = stratified_split(y, test_fraction, seed)
    train, test, mean, scale = _preprocess(x[train_index], x[test_index], preprocessing, 16.0)
    return PatternSplit(train=train, test=test, train_labels=y[train_index], test_labels=y[test_index],
                        train_index=train_index, test_index=test_index, mean=mean, scale=scale,
                        image_shape=(8, 8), preprocessing=preprocessing)


# ==========================================================================================
# IDX files
# ==========================================================================================


def _open(path: Path):
    with open(path, "rb") as fh:
        head = fh.read(2)
    return gzip.open(path, "rb") if head == b"\x1f\x8b" else open(path, "rb")


def read_idx(path: PathLike) -> np.ndarray:
    """Read an IDX file (the format of the MNIST files), plain or gzip-compressed.

    The format: two zero bytes, a type code (``0x08`` uint8, ``0x09`` int8, ``0x0B`` int16,
    ``0x0C`` int32, ``0x0D`` float32, ``0x0E`` float64), the number of dimensions ``k``, then ``k``
    big-endian uint32 sizes and the data in row-major order, big-endian.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip compression is detected from its first bytes.

    Returns
    -------
    numpy.ndarray
        Shaped as the header says, in native byte order.

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike.
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the header is malformed, the type code unknown, the data shorter or longer than the
        header says, or the file starts like gzip but is not valid gzip data.

    References
    ----------
    LeCun, Cortes & Burges, "The MNIST database" (the IDX format description).
    """
    path = _path(path, "path")
    if not path.is_file():
        raise FileNotFoundError(f"no IDX file at {path}")
    try:
        with _open(path) as fh:
            raw = fh.read()
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ValueError(f"{path} is not an IDX file: it starts like gzip but cannot be decompressed ({exc})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path} is not an IDX file (bad magic number {raw[:4]!r})")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02X}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: truncated IDX header")
    shape = tuple(int(v) for v in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = _IDX_TYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(f"{path}: the header promises {expected} data bytes for shape {shape}, "
                         f"the file holds {len(raw) - header}")
    data = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def write_idx(path: PathLike, array: ArrayLike, compress: bool | None = None) -> Path:
    """Write an array as an IDX file (the inverse of :func:`read_idx`).

    Parameters
    ----------
    path : str or os.PathLike
        Destination; parent directories are created.
    array : array_like
        Data of type uint8, int8, int16, int32, float32 or float64, at most 255 dimensions.
    compress : bool, optional
        gzip the file; default: if the name ends in ``.gz``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TypeError
        If ``path`` is not a str or os.PathLike.
    ValueError
        If the dtype has no IDX code, the array has more than 255 dimensions or a dimension of
        ``2**32`` or more (the header stores sizes as uint32), or ``compress`` is not a bool or
        None.
    OSError
        If the file cannot be written (its parent cannot be created, say).
    """
    path = _path(path, "path")
    if compress is not None:
        compress = as_bool(compress, "compress")
    arr = np.asarray(array)
    key = arr.dtype.newbyteorder("=")
    if key not in _IDX_CODES:
        raise ValueError(f"IDX cannot hold dtype {arr.dtype}; use one of "
                         f"{sorted(str(np.dtype(d)) for d in _IDX_CODES)}")
    if arr.ndim > 255:
        raise ValueError("IDX holds at most 255 dimensions")
    if any(size >= 2**32 for size in arr.shape):
        raise ValueError(f"IDX stores each dimension as a uint32; shape {arr.shape} has one of 2**32 or more")
    code = _IDX_CODES[key]
    payload = (bytes([0, 0, code, arr.ndim]) + np.asarray(arr.shape, dtype=">u4").tobytes()
               + np.ascontiguousarray(arr, dtype=_IDX_TYPES[code]).tobytes())
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress is None:
        compress = path.suffix == ".gz"
    if compress:
        with gzip.open(path, "wb") as fh:
            fh.write(payload)
    else:
        path.write_bytes(payload)
    return path


# ==========================================================================================
# MNIST
# ==========================================================================================


def _candidates(root: Path) -> list[Path]:
    return [root, root / "MNIST" / "raw", root / "raw", root / "mnist"]


def find_mnist(root: PathLike, split: str = "train") -> tuple[Path, Path]:
    """Locate the MNIST image and label files of a split under ``root``.

    Looks in ``root``, ``root/MNIST/raw`` (torchvision's layout), ``root/raw`` and
    ``root/mnist`` for the files of :data:`MNIST_FILES`, uncompressed or with ``.gz``.

    Parameters
    ----------
    root : str or os.PathLike
    split : {"train", "test"}

    Returns
    -------
    images, labels : pathlib.Path

    Raises
    ------
    TypeError
        If ``root`` is not a str or os.PathLike.
    ValueError
        If ``split`` is unknown.
    FileNotFoundError
        If a file is missing; the message lists where it was looked for. Nothing is
        downloaded.
    """
    if not isinstance(split, str) or split not in MNIST_FILES:
        raise ValueError(f"split must be one of {sorted(MNIST_FILES)}, got {split!r}")
    root = _path(root, "root").expanduser()
    found = []
    for name in MNIST_FILES[split]:
        hit = None
        for folder in _candidates(root):
            for candidate in (folder / name, folder / (name + ".gz")):
                if candidate.is_file():
                    hit = candidate
                    break
            if hit is not None:
                break
        if hit is None:
            places = ", ".join(str(f) for f in _candidates(root))
            raise FileNotFoundError(
                f"MNIST file {name!r} (or {name}.gz) not found in any of: {places}. assocmem never "
                f"downloads data: copy the four MNIST IDX files there (torchvision's "
                f"'MNIST/raw' folder works as is).")
        found.append(hit)
    return found[0], found[1]


def load_mnist(root: PathLike, split: str = "train", *, flatten: bool = True, scale: bool = True,
               limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images and labels from local IDX files (never downloads).

    Parameters
    ----------
    root : str or os.PathLike
        Folder holding the files (see :func:`find_mnist` for the layouts searched).
    split : {"train", "test"}, default "train"
    flatten : bool, default True
        Return ``(N, rows * cols)`` patterns (``n = 784``) rather than ``(N, rows, cols)``.
    scale : bool, default True
        float64 in ``[0, 1]`` (pixel / 255); ``False`` keeps the uint8 pixels.
    limit : int, optional
        Keep only the first ``limit`` images.

    Returns
    -------
    images : numpy.ndarray
        ``(N, 784)`` (or ``(N, 28, 28)``), float64 or uint8.
    labels : numpy.ndarray, shape ``(N,)``, int64

    Raises
    ------
    FileNotFoundError
        If the files are not there (the message lists the folders searched).
    ValueError
        If ``split`` or ``limit`` is invalid, ``flatten`` or ``scale`` is not a bool, or the
        files are malformed: images not 3-D uint8, labels not 1-D uint8, or different counts.
    TypeError
        If ``root`` is not a str or os.PathLike.

    References
    ----------
    LeCun et al. (1998); Bricken & Pehlevan (2021), App. B.7 (MNIST convergence).
    """
    flatten, scale = as_bool(flatten, "flatten"), as_bool(scale, "scale")
    if limit is not None:
        limit = _as_int(limit, "limit", minimum=0)
    images_path, labels_path = find_mnist(root, split)
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3 or images.dtype != np.uint8:
        raise ValueError(f"{images_path}: expected a 3-D uint8 image array, got {images.ndim}-D "
                         f"{images.dtype}")
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise ValueError(f"{labels_path}: expected a 1-D uint8 label array, got {labels.ndim}-D "
                         f"{labels.dtype}")
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{images.shape[0]} images but {labels.shape[0]} labels in the {split} split")
    if limit is not None:
        images, labels = images[:limit], labels[:limit]
    if flatten:
        images = images.reshape(images.shape[0], -1)
    out = images.astype(np.float64) / 255.0 if scale else images.copy()
    return out, labels.astype(np.int64)
