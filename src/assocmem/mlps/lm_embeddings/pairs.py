"""Captured MLP input/output pairs of a language model, and fact sets drawn from them.

A language model's MLP block at one layer sees an input ``x`` (the hidden state after the norm in
front of the MLP) and writes an output ``y`` (before the residual add). Seed 001 (App. A.5.3)
records ``N`` such pairs, one per token of a text stream, and builds a fact set of size ``F`` by
drawing ``F`` pairs uniformly, with ``x_i`` as the key and ``y_i`` as the value under the
identity map. :class:`EmbeddingPairs` holds the captured pairs (whatever model they came from:
:mod:`~assocmem.mlps.lm_embeddings.hf` for Hugging Face models such as Qwen3,
:mod:`~assocmem.mlps.lm_embeddings.editing_lm` for the book's own language model);
:func:`save_pairs` and :func:`load_pairs` store them as ``.npz`` (how a reader with real Qwen3
activations hands them to chapter 17); :func:`sample_fact_set` draws a fact set.

Scale. The seed does not say how it scales the captured vectors before the construction. The
constructions of Part II (Algorithm 1 and its whitened form) are stated for unit keys, and the
decoding compares an output with every value row by an inner product, so
:func:`sample_fact_set` projects keys and values onto the unit sphere (our choice, stated in
chapter 17). Directions, and so the anisotropy that the experiment is about, are kept.

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.5.3 ("LM embeddings").
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from assocmem._checks import as_int, as_real, seed_int
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.mlps._checks import float_tensor
from assocmem.mlps.facts import FactSet

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import PathLike

__all__ = ["EmbeddingPairs", "save_pairs", "load_pairs", "sample_fact_set"]


@dataclass(frozen=True)
class EmbeddingPairs:
    """``N`` captured pairs ``(x_i, y_i)``: an MLP block's input and output, one row per token.

    Parameters
    ----------
    inputs : torch.Tensor, shape ``(N, d_in)``, float32 or float64
        The MLP inputs ``x_i``.
    outputs : torch.Tensor, shape ``(N, d_out)``, same dtype and device as ``inputs``
        The MLP outputs ``y_i`` (before any residual add).
    source : str
        Where the pairs came from (model, layer, text), for provenance.

    Raises
    ------
    ValueError
        Not 2-D floating tensors (integer and boolean tensors are refused), different numbers of
        rows, ``N = 0`` or a zero width, non-finite entries, a dtype other than float32/float64,
        different dtypes or devices, or a ``source`` that is not a non-empty string. Tensors that
        require grad are stored detached.
    """

    inputs: torch.Tensor
    outputs: torch.Tensor
    source: str

    def __post_init__(self) -> None:
        for name, z in (("inputs", self.inputs), ("outputs", self.outputs)):
            if isinstance(z, torch.Tensor) and not z.is_floating_point():
                raise ValueError(f"{name} must be a float32 or float64 tensor; got dtype {z.dtype}")
        x = float_tensor(self.inputs, "inputs", ndim=2, min_rows=1)
        y = float_tensor(self.outputs, "outputs", ndim=2, min_rows=1)
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"inputs and outputs must have the same number of rows; got {x.shape[0]} and {y.shape[0]}")
        if x.shape[1] == 0 or y.shape[1] == 0:
            raise ValueError(f"inputs and outputs need a non-zero width; got {tuple(x.shape)}, {tuple(y.shape)}")
        if x.dtype != y.dtype or x.device != y.device:
            raise ValueError(f"inputs and outputs must share dtype and device; got {x.dtype} on {x.device} "
                             f"and {y.dtype} on {y.device}")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"source must be a non-empty string; got {self.source!r}")
        object.__setattr__(self, "inputs", x.detach())
        object.__setattr__(self, "outputs", y.detach())

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    @property
    def d_in(self) -> int:
        """Width of the inputs."""
        return int(self.inputs.shape[1])

    @property
    def d_out(self) -> int:
        """Width of the outputs."""
        return int(self.outputs.shape[1])


def save_pairs(pairs: EmbeddingPairs, path: PathLike) -> Path:
    """Write ``pairs`` to ``path`` as ``.npz`` (``inputs``, ``outputs``, ``source``), at their dtype.

    Returns
    -------
    pathlib.Path
        The file written (numpy adds ``.npz`` when ``path`` lacks it).

    Raises
    ------
    ValueError
        ``pairs`` is not an :class:`EmbeddingPairs`, ``path`` (with or without the added
        ``.npz``) is a folder, or a part of its folder is a file.
    """
    if not isinstance(pairs, EmbeddingPairs):
        raise ValueError(f"pairs must be EmbeddingPairs; got {type(pairs).__name__}")
    path = Path(path)
    if path.is_dir():  # before the suffix: "out" naming a folder must not become a sibling "out.npz"
        raise ValueError(f"{path} is a folder; give a file name")
    if path.suffix.lower() != ".npz":
        path = path.with_name(path.name + ".npz")
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ValueError(f"cannot write {path}: a part of its folder {path.parent} is a file, not a folder") from None
    np.savez(path, inputs=pairs.inputs.detach().cpu().numpy(), outputs=pairs.outputs.detach().cpu().numpy(),
             source=np.array(pairs.source))
    return path


def load_pairs(path: PathLike, max_pairs: int | None = None) -> EmbeddingPairs:
    """Read pairs written by :func:`save_pairs` (or any ``.npz`` with ``inputs`` and ``outputs``).

    Parameters
    ----------
    path : str or pathlib.Path
    max_pairs : int, optional
        Keep the first ``max_pairs`` rows.

    Returns
    -------
    EmbeddingPairs
        On the CPU, at the stored dtype (float32 or float64).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file that is not a ``.npz`` (or a truncated or corrupt one), one without ``inputs``
        and ``outputs`` arrays or with a ``source`` that is not one string, arrays :class:`EmbeddingPairs` refuses, or a
        ``max_pairs`` that is not an integer ``>= 1``.
    """
    stop = None if max_pairs is None else as_int(max_pairs, "max_pairs", minimum=1)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no captured pairs at {path} (write them with save_pairs)")
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a .npz of captured pairs, or it is truncated or corrupt ({err})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"{path} is a single .npy array, not a .npz of captured pairs")
    with data:
        missing = {"inputs", "outputs"} - set(data.files)
        if missing:
            raise ValueError(f"{path} lacks the arrays {sorted(missing)}")
        try:
            x, y = np.asarray(data["inputs"])[:stop], np.asarray(data["outputs"])[:stop]
            raw = np.asarray(data["source"]) if "source" in data.files else None
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
            raise ValueError(f"{path} is truncated or corrupt: its arrays cannot be read ({err})") from None
        source = path.name
        if raw is not None:
            if raw.ndim != 0:
                raise ValueError(f"{path}: 'source' must be one string; got an array of shape {raw.shape}")
            source = str(raw)
    return EmbeddingPairs(torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(np.ascontiguousarray(y)), source)


def sample_fact_set(pairs: EmbeddingPairs, num_facts: int, seed: int = 0, *,
                    max_cosine: float | None = None, dtype: torch.dtype | None = None) -> FactSet:
    """``F`` pairs drawn uniformly without replacement, as a unit-norm fact set (App. A.5.3).

    Key ``i`` is ``x_i / ||x_i||``, value row ``i`` is ``y_i / ||y_i||``, and the map is the
    identity (fact ``i`` decodes to value row ``i``).

    With ``max_cosine`` set, the draw is *separated*: the pairs are visited in a seeded random
    order and a pair is kept only when its key's cosine with every key kept so far, and its
    value's cosine with every value kept so far, are at most ``max_cosine``; the first ``F`` kept
    form the fact set. This is not the seed's protocol (which draws uniformly); it removes the
    near-duplicate pairs that a small templated corpus produces (chapter 17 shows why that
    matters).

    Parameters
    ----------
    pairs : EmbeddingPairs
        Captured pairs with ``d_in == d_out``.
    num_facts : int
        ``F``, in ``[1, N]``.
    seed : int, default 0
        Seeds the draw (``numpy.random.default_rng``).
    max_cosine : float, optional
        In ``(-1, 1)``: the largest cosine allowed between two kept keys or two kept values
        (``None``: a uniform draw).
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).

    Returns
    -------
    FactSet
        ``keys`` ``(F, d)``, ``values`` ``(F, d)``, ``mapping = arange(F)``, on the pairs' device.

    Raises
    ------
    ValueError
        ``F`` outside ``[1, N]``, ``d_in != d_out``, a drawn row that is zero, a dtype other than
        float32/float64, a
        ``max_cosine`` outside ``(-1, 1)``, fewer than ``F`` pairs that satisfy it, or a bad
        seed or dtype.
    """
    dtype = resolve_dtype(dtype)
    if not isinstance(pairs, EmbeddingPairs):
        raise ValueError(f"pairs must be EmbeddingPairs; got {type(pairs).__name__}")
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be torch.float32 or torch.float64; got {dtype!r}")
    check_float_dtype(dtype, "dtype")
    F = as_int(num_facts, "num_facts", minimum=1)
    if F > len(pairs):
        raise ValueError(f"num_facts = {F} exceeds the {len(pairs)} captured pairs")
    if pairs.d_in != pairs.d_out:
        raise ValueError(f"keys and values must have one width; got d_in = {pairs.d_in}, d_out = {pairs.d_out}")
    rng = np.random.default_rng(seed_int(seed))
    if max_cosine is None:
        rows = np.sort(rng.choice(len(pairs), size=F, replace=False))
        keys, values = _unit_rows(pairs, rows, dtype)
    else:
        limit = as_real(max_cosine, "max_cosine", minimum=-1.0, maximum=1.0)
        if not -1.0 < limit < 1.0:
            raise ValueError(f"max_cosine must lie in (-1, 1); got {max_cosine}")
        keys, values = _separated(pairs, F, rng.permutation(len(pairs)), limit, dtype)
    return FactSet(keys, values, torch.arange(F, device=keys.device))


def _unit_rows(pairs: EmbeddingPairs, rows: np.ndarray, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The captured rows ``rows`` (indices), inputs and outputs each scaled to unit norm."""
    index = torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(pairs.inputs.device)
    out = []
    for name, z in (("input", pairs.inputs), ("output", pairs.outputs)):
        z = z.index_select(0, index).to(dtype)
        # scale each row by its largest entry first: no overflow for huge rows, no underflow for tiny ones
        peak = z.abs().amax(dim=1, keepdim=True)
        zero = torch.nonzero(peak[:, 0] == 0)
        if zero.numel():
            raise ValueError(f"captured {name} row {int(rows[int(zero[0])])} is zero: it has no direction")
        z = z / peak
        out.append(z / torch.linalg.vector_norm(z, dim=1, keepdim=True))
    return out[0], out[1]


def _separated(pairs: EmbeddingPairs, F: int, order: np.ndarray, limit: float, dtype,
               chunk: int = 1024) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``F`` pairs of ``order`` whose key and value keep cosine ``<= limit`` with those kept."""
    d = pairs.d_in
    keys = torch.empty(F, d, dtype=dtype, device=pairs.inputs.device)
    values = torch.empty_like(keys)
    n = 0
    for lo in range(0, len(order), chunk):
        x, y = _unit_rows(pairs, order[lo: lo + chunk], dtype)
        # cosines with everything kept before this chunk, in one product each
        ok = torch.ones(x.shape[0], dtype=torch.bool, device=x.device)
        if n:
            ok &= (x @ keys[:n].T).amax(dim=1) <= limit
            ok &= (y @ values[:n].T).amax(dim=1) <= limit
        n0 = n
        for i in torch.nonzero(ok)[:, 0].tolist():
            # and with what this chunk has kept so far
            if n > n0 and ((keys[n0:n] @ x[i]).amax() > limit or (values[n0:n] @ y[i]).amax() > limit):
                continue
            keys[n], values[n] = x[i], y[i]
            n += 1
            if n == F:
                return keys, values
    raise ValueError(f"only {n} of the {len(pairs)} captured pairs keep cosines <= {limit}; "
                     f"num_facts = {F} cannot be drawn")
