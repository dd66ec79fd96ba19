"""The associative-memory protocol: ``write(keys, values)``, ``read(queries)``, and what a memory costs.

Every memory in the book stores key-value pairs and answers a query with a vector in value space.
Their natural interfaces differ (a matrix is written with pairs, an MLP is built from a fact set,
an SDM writes pointers at binary addresses, a Hopfield network holds a coupling matrix);
:class:`AssociativeMemory` is the one interface that Part IV (chapter 50, "One table for every
memory") measures them through, and :mod:`assocmem.compare.adapters` fits each of them to it.

The protocol
------------
``write(keys, values)``
    Store ``n`` pairs, keys ``(n, d_k)`` and values ``(n, d_v)`` as rows. Writes accumulate:
    a second write adds pairs to those already stored (a memory that is *built* from its pairs,
    such as the least-squares matrix or an MLP construction, rebuilds from all of them).
``read(queries)``
    Answer queries ``(..., d_k)`` with outputs ``(..., d_v)``, finite, in the memory's dtype and on
    its device. Reading before any write raises :class:`MemoryNotWrittenError`.
``num_parameters``
    The parameter count ``W`` (convention below).
``num_bits``
    The storage the parameters take (convention below).

Conventions
-----------
**Parameters.** ``num_parameters`` counts every number the read depends on once the pairs are
written, whether written, fitted or drawn at random, and nothing else. So a ``d_v x d_k`` matrix
memory has ``d_v d_k`` (seed 000, §2: "a fixed number of numbers"; the least-squares memory's kept
pairs are the price of refitting, not read), a key-value cache of ``n`` pairs ``n (d_k + d_v)``, a
gated MLP of width ``m`` on ``d``-dimensional keys ``3 m d`` (its random factors included, as
seed 001, App. A.3.1, counts them), an SDM with ``r`` neurons its ``r n`` address bits, ``r d_v``
contents and ``r`` counts, a Hopfield network on ``N`` units its ``N^2`` couplings. Hyperparameters
(a radius, an inverse temperature, a seed) and the value table that the decoder compares outputs
with (shared by every memory) are not counted.

**Bits.** ``num_bits`` is the *storage* of those parameters at their type: 64 bits per float64
number, 32 per float32, 1 per binary address bit. It is the size of the memory, not the
information it holds; the information side is the harness's: ``F log2 V`` bits for ``F`` facts
over ``V`` values. Seed 001's counting bound (Theorem 2.4, :mod:`assocmem.mlps.counting`) says
a memory that can store *every* fact set of that size has ``num_bits >= F log2 V``.

**Decoding.** Outputs live in value space, whatever the memory's natural output (a matrix's
``S q``, an MLP's output, an SDM's normalised sum of contents, a Hopfield state). One rule turns
every output into a fact: :func:`decode`, the strict argmax of ``<y, v_j>`` over the rows ``v_j``
of the value table (seed 001, Definition 2.1). An output that ties, or is zero, decodes to no row.

**Devices and dtypes.** A memory lives on one device (:func:`assocmem.devices.resolve_device`) in
float32 or float64 (:mod:`assocmem.dtypes`; float16 and bfloat16 are refused); inputs are cast to
its dtype, and a finite input that overflows the cast is refused.

This module is part of the shared floor: it imports no Part.
"""

from __future__ import annotations

import abc
import math

import torch

from assocmem.devices import resolve_device
from assocmem.dtypes import cast_checked, check_float_dtype, resolve_dtype
from assocmem._checks import positive_int

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "AssociativeMemory",
    "MemoryNotWrittenError",
    "as_pairs",
    "as_queries",
    "decode",
    "storage_bits",
]


class MemoryNotWrittenError(RuntimeError):
    """A memory was read before anything was written to it."""


def storage_bits(dtype: torch.dtype) -> int:
    """Bits one number of ``dtype`` takes in storage (64 for float64, 32 for float32, 1 for bool).

    Covers the real dtypes (floating point and integer) and bool, the types a parameter of the
    book's memories is stored at.

    Raises
    ------
    ValueError
        A ``dtype`` that is not a ``torch.dtype``, or a complex or quantized dtype (a memory's
        parameters are real numbers).
    """
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype, got {dtype!r}")
    if dtype == torch.bool:
        return 1
    if dtype.is_complex:
        raise ValueError(f"storage_bits covers real and boolean dtypes; got {dtype} (a memory's parameters are real)")
    if dtype.is_floating_point:
        return torch.finfo(dtype).bits
    try:
        return torch.iinfo(dtype).bits
    except TypeError:
        raise ValueError(f"storage_bits covers real and boolean dtypes; got {dtype}") from None


def _tensor(x, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        t = x
    else:
        try:
            t = torch.as_tensor(x)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"{name} must be a real tensor or array of numbers; got {type(x).__name__}") from None
    if t.is_complex() or t.dtype == torch.bool:
        raise ValueError(f"{name} must hold real numbers; got dtype {t.dtype}")
    if t.is_floating_point():
        check_float_dtype(t.dtype, f"{name} dtype")
        if t.numel() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"{name} contain non-finite entries (nan or inf)")
    return t


def as_pairs(keys: ArrayLike, values: ArrayLike, d_k: int, d_v: int, dtype: torch.dtype,
             device: str | torch.device | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Checked keys ``(n, d_k)`` and values ``(n, d_v)``, cast to ``dtype`` on ``device``.

    Raises
    ------
    ValueError
        Inputs that are not real arrays (complex, boolean, strings), float16/bfloat16 inputs, a
        rank other than 2, a width other than ``d_k`` / ``d_v``, different numbers of rows, no
        rows at all, non-finite entries, or a cast that overflows ``dtype`` (the messages name the
        shapes).
    """
    k, v = _tensor(keys, "keys"), _tensor(values, "values")
    if k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"keys and values must be 2-D, (n, d_k) = (n, {d_k}) and (n, d_v) = (n, {d_v}); "
                         f"got shapes {tuple(k.shape)} and {tuple(v.shape)}")
    if k.shape[1] != d_k:
        raise ValueError(f"keys must have d_k = {d_k} columns; got shape {tuple(k.shape)}")
    if v.shape[1] != d_v:
        raise ValueError(f"values must have d_v = {d_v} columns; got shape {tuple(v.shape)}")
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"keys and values must have the same number of rows; got {tuple(k.shape)} and "
                         f"{tuple(v.shape)}")
    if k.shape[0] == 0:
        raise ValueError("a write needs at least one pair; got 0 rows")
    return (cast_checked(k.to(device), dtype, "keys"), cast_checked(v.to(device), dtype, "values"))


def as_queries(queries: ArrayLike, d_k: int, dtype: torch.dtype,
               device: str | torch.device | None) -> torch.Tensor:
    """Checked queries ``(..., d_k)``, cast to ``dtype`` on ``device``.

    Raises
    ------
    ValueError
        As :func:`as_pairs`: not real numbers, no axis or a last axis other than ``d_k``,
        non-finite entries, or a cast that overflows ``dtype``.
    """
    q = _tensor(queries, "queries")
    if q.ndim < 1 or q.shape[-1] != d_k:
        raise ValueError(f"queries must have shape (..., d_k) with d_k = {d_k}; got shape {tuple(q.shape)}")
    return cast_checked(q.to(device), dtype, "queries")


def decode(outputs: ArrayLike, values: ArrayLike) -> torch.Tensor:
    """The value row each output decodes to: the strict argmax of ``<y, v_j>``, or -1.

    Row ``i`` decodes to ``j`` when ``<y_i, v_j>`` beats every other row's score *strictly*;
    a tie for the top (a zero output ties everywhere) decodes to -1, no row. This is seed 001's
    Definition 2.1 applied to any memory's output, the one decoding rule of chapter 50.

    Parameters
    ----------
    outputs : array-like, shape ``(n, d_v)``
        Finite real outputs (computed in float64).
    values : array-like, shape ``(V, d_v)``
        The value table, ``V >= 2``.

    Returns
    -------
    torch.Tensor, shape ``(n,)``, int64, on the device of ``outputs``

    Raises
    ------
    ValueError
        Non-real or non-finite inputs, ranks other than 2, widths that differ, or ``V < 2`` (an
        argmax with no competitor decides nothing).

    References
    ----------
    Seed 001, Definition 2.1 (a fact is stored when its value row beats every other row).
    """
    y, v = _tensor(outputs, "outputs"), _tensor(values, "values")
    if y.ndim != 2 or v.ndim != 2 or y.shape[1] != v.shape[1]:
        raise ValueError(f"outputs (n, d_v) and values (V, d_v) must share d_v; got {tuple(y.shape)} and "
                         f"{tuple(v.shape)}")
    if v.shape[0] < 2:
        raise ValueError(f"decoding needs at least two value rows; got V = {v.shape[0]}")
    s = y.double() @ v.double().to(y.device).T  # (n, V)
    if s.numel() and not bool(torch.isfinite(s).all()):
        raise ValueError("the scores <y, v_j> overflow float64; rescale the outputs")
    top2 = torch.topk(s, 2, dim=1)
    best = top2.indices[:, 0]
    strict = top2.values[:, 0] > top2.values[:, 1]
    return torch.where(strict, best, torch.full_like(best, -1))


class AssociativeMemory(abc.ABC):
    """A memory of key-value pairs: the protocol that every memory of the book is measured through.

    Subclasses implement :meth:`_write` and :meth:`_read` on checked tensors, :meth:`_reset`
    (what :meth:`reset` forgets) and :attr:`num_parameters`; they may override :attr:`num_bits` when not every parameter is stored
    at the memory's dtype (binary SDM addresses take one bit). The public :meth:`write` and
    :meth:`read` check shapes, dtypes, finiteness and the order of calls, so every memory refuses
    bad input with the same messages. See the module docstring for the conventions.

    The hooks a subclass writes: ``_write(keys, values)`` receives only the new batch, ``keys``
    ``(n, d_k)`` and ``values`` ``(n, d_v)``, already checked and in the memory's dtype and on its
    device, and stores it (after earlier batches); ``_read(queries)`` receives checked
    ``(B, d_k)`` queries (only after a write) and returns ``(B, d_v)``; ``_reset()`` forgets every
    pair (the base class resets ``num_pairs``). ``self.d_k``, ``self.d_v``, ``self.dtype`` and
    ``self.device`` are set by this constructor.

    Parameters
    ----------
    d_k, d_v : int
        Key and value dimensions, ``>= 1``.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        float32 or float64.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Resolved with :func:`assocmem.devices.resolve_device` for ``dtype`` (``"auto"`` picks CUDA,
        MPS, CPU; MPS is skipped for float64, which it cannot compute in, and refused by name).

    Attributes
    ----------
    name : str
        The memory's label in chapter 50's table (a class attribute).
    num_pairs : int
        Pairs written since construction or :meth:`reset`.

    Raises
    ------
    ValueError
        Dimensions that are not positive integers, or a dtype other than float32/float64.
    """

    name: str = "memory"

    def __init__(self, d_k: int, d_v: int, *, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        self.d_k = positive_int("d_k", d_k)
        self.d_v = positive_int("d_v", d_v)
        self.dtype = check_float_dtype(dtype)
        self.device = resolve_device(device, dtype=self.dtype)
        self.num_pairs = 0

    # -- what subclasses provide ---------------------------------------------------------------
    @abc.abstractmethod
    def _write(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Store checked ``keys (n, d_k)``, ``values (n, d_v)`` (dtype and device of the memory)."""

    @abc.abstractmethod
    def _read(self, queries: torch.Tensor) -> torch.Tensor:
        """Answer checked ``queries (B, d_k)`` with ``(B, d_v)``."""

    @property
    @abc.abstractmethod
    def num_parameters(self) -> int:
        """The parameter count ``W`` (module docstring: every number the read depends on)."""

    @abc.abstractmethod
    def _reset(self) -> None:
        """Forget every pair: return the state to what construction left.

        Abstract, so that a memory cannot keep its pairs through :meth:`reset` by forgetting to
        say how to drop them; a memory whose state is nothing but :attr:`num_pairs` writes
        ``pass`` here, on purpose.
        """

    # -- the protocol ------------------------------------------------------------------------
    @property
    def num_bits(self) -> int:
        """Storage of the parameters, ``num_parameters x`` bits of the dtype (64 for float64)."""
        return self.num_parameters * storage_bits(self.dtype)

    def write(self, keys: ArrayLike, values: ArrayLike) -> "AssociativeMemory":
        """Store ``n`` key-value pairs (rows); writes accumulate. Returns ``self``.

        Parameters
        ----------
        keys : array-like, shape ``(n, d_k)``
        values : array-like, shape ``(n, d_v)``

        Raises
        ------
        ValueError
            From :func:`as_pairs` (shapes, non-finite entries, dtypes), or what the memory itself
            refuses (an adapter says what: e.g. an MLP needs unit keys and ``d_k = d_v``).
        """
        k, v = as_pairs(keys, values, self.d_k, self.d_v, self.dtype, self.device)
        self._write(k, v)
        self.num_pairs += k.shape[0]
        return self

    def read(self, queries: ArrayLike) -> torch.Tensor:
        """Outputs ``(..., d_v)`` for queries ``(..., d_k)``: finite, in the memory's dtype and device.

        Raises
        ------
        MemoryNotWrittenError
            If nothing has been written since construction or :meth:`reset`.
        ValueError
            From :func:`as_queries`.
        RuntimeError
            If the memory produced an output of the wrong shape or a non-finite output (a bug in
            the adapter, never returned silently).
        """
        if self.num_pairs == 0:
            raise MemoryNotWrittenError(f"{type(self).__name__} is empty: call write(keys, values) before read()")
        q = as_queries(queries, self.d_k, self.dtype, self.device)
        lead = q.shape[:-1]
        flat = q.reshape(-1, self.d_k)
        out = self._read(flat) if flat.shape[0] else torch.zeros(0, self.d_v, dtype=self.dtype, device=self.device)
        if tuple(out.shape) != (flat.shape[0], self.d_v):
            raise RuntimeError(f"{type(self).__name__} returned shape {tuple(out.shape)}, expected "
                               f"{(flat.shape[0], self.d_v)}")
        out = out.to(device=self.device, dtype=self.dtype)
        if out.numel() and not bool(torch.isfinite(out).all()):
            raise RuntimeError(f"{type(self).__name__} returned non-finite outputs")
        return out.reshape(*lead, self.d_v)

    def reset(self) -> "AssociativeMemory":
        """Forget every pair. Returns ``self``."""
        self._reset()
        self.num_pairs = 0
        return self

    def bits_per_parameter(self) -> float:
        """``num_bits / num_parameters``: storage bits of an average parameter (nan if none)."""
        w = self.num_parameters
        return math.nan if w == 0 else self.num_bits / w

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(d_k={self.d_k}, d_v={self.d_v}, dtype={self.dtype}, "
                f"device={self.device}, num_pairs={self.num_pairs})")
