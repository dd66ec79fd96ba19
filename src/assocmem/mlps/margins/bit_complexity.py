"""Bit complexity of a stored fact set: quantised parameters that keep every margin positive.

Seed 001 ("MLPs are Hebbians", App. B.2.6: Lemma B.4, Theorem B.6, Corollary B.8) rounds every
parameter of a memory to ``b`` bits and asks when ``gamma_min`` stays positive. This module holds
the uniform symmetric mid-rise quantiser with one scale per matrix, step ``Delta = 2 s / 2^b``
with ``s = max |x|`` (:func:`quantization_step`, :func:`quantize`, :func:`quantize_matrices`), and
the search for the fewest bits per parameter that keep a margin positive
(:func:`min_bits_for_positive_margin`, returning a :class:`BitSearch`). Chapter 12 (How margins
scale) uses them in its bit-complexity sweep (:mod:`assocmem.mlps.margin_sweeps`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from assocmem._checks import as_real
from assocmem._checks import as_bool
from assocmem.mlps._checks import check_finite_result
from assocmem.mlps.margins._common import _as_f64

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Sequence

__all__ = [
    "quantization_step",
    "quantize",
    "quantize_matrices",
    "BitSearch",
    "min_bits_for_positive_margin",
]


def _bits(bits) -> int:
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise ValueError(f"bits must be an integer; got {bits!r}")
    if bits < 1 or bits > 64:
        raise ValueError(f"bits must lie in [1, 64]; got {bits}")
    return int(bits)


def quantization_step(tensor: ArrayLike, bits: int) -> float:
    """Step ``Delta = 2 s / 2^b`` of the ``b``-bit uniform symmetric quantiser, ``s = max |x|``.

    Parameters
    ----------
    tensor : array-like
        The matrix to quantise (any shape, real, finite).
    bits : int
        ``1 <= b <= 64``.

    Returns
    -------
    float
        ``0.0`` for an all-zero tensor.

    Raises
    ------
    ValueError
        ``bits`` outside ``[1, 64]`` or non-integer; input that is not finite real numbers
        (float16 / bfloat16, booleans and strings refused).

    References
    ----------
    Seed 001, App. B.2.6 (Theorem B.6: rounding every coordinate to ``t`` bits).
    """
    b = _bits(bits)
    x = _as_f64(tensor, "tensor")
    s = float(x.abs().max()) if x.numel() else 0.0
    return 2.0 * s / 2.0**b


def quantize(tensor: ArrayLike, bits: int) -> torch.Tensor:
    """Uniform symmetric ``b``-bit quantiser, one scale per matrix (returned dequantised).

    The ``2^b`` levels are the mid-rise grid ``(q + 1/2) Delta`` for integer codes
    ``q in [-2^(b-1), 2^(b-1) - 1]`` with ``Delta = 2 s / 2^b`` and ``s = max |x|`` over the whole
    tensor, so the levels are symmetric about zero, span ``[-s + Delta/2, s - Delta/2]``, and
    every entry moves by at most ``Delta / 2``. Each entry maps to the level of its cell,
    ``q = clip(floor(x / Delta), -2^(b-1), 2^(b-1) - 1)``. One bit gives ``+-s/2`` (a scaled
    sign). Zero is not a level (mid-rise), which keeps all ``2^b`` codes in use.

    Parameters
    ----------
    tensor : torch.Tensor or array-like
        Real, finite, any shape (e.g. ``A``, ``G`` or ``B`` of a bilinear MLP).
    bits : int
        ``1 <= b <= 64``.

    Returns
    -------
    torch.Tensor
        Same shape; dtype and device of a floating tensor input (float64 otherwise). An all-zero
        input is returned as zeros.

    Raises
    ------
    ValueError
        ``bits < 1`` (or > 64, or not an integer), or input that is not finite real numbers
        (float16 / bfloat16, booleans and strings refused).

    References
    ----------
    Seed 001, App. B.2.6 (Theorem B.6, Corollary B.8: quantised parameters keep
    ``gamma_min > 0``).
    """
    b = _bits(bits)
    x = _as_f64(tensor, "tensor")
    is_float_tensor = isinstance(tensor, torch.Tensor) and tensor.is_floating_point()
    out_dtype = tensor.dtype if is_float_tensor else torch.float64
    device = tensor.device if isinstance(tensor, torch.Tensor) else x.device
    s = float(x.abs().max()) if x.numel() else 0.0
    if s == 0.0:
        return torch.zeros(x.shape, dtype=out_dtype, device=device)
    step = 2.0 * s / 2.0**b
    half = 2.0 ** (b - 1)
    q = torch.floor(x / step).clamp(-half, half - 1)
    return check_finite_result(((q + 0.5) * step), "the quantised tensor").to(device=device, dtype=out_dtype)


def quantize_matrices(matrices: Mapping[str, torch.Tensor] | Sequence[torch.Tensor],
                      bits: int) -> dict[str, torch.Tensor] | list[torch.Tensor]:
    """Quantise every matrix of a mapping or sequence with its own scale (:func:`quantize`).

    Parameters
    ----------
    matrices : mapping of str to tensor, or sequence of tensors
        E.g. ``{"A": A, "G": G, "B": B}``.
    bits : int

    Returns
    -------
    dict or list
        Same keys / order.

    Raises
    ------
    ValueError
        As :func:`quantize`, or a container of another kind.
    """
    if isinstance(matrices, Mapping):
        return {k: quantize(v, bits) for k, v in matrices.items()}
    if isinstance(matrices, (list, tuple)):
        return [quantize(v, bits) for v in matrices]
    raise ValueError("matrices must be a mapping of name -> tensor or a sequence of tensors")


@dataclass(frozen=True)
class BitSearch:
    """Result of :func:`min_bits_for_positive_margin`."""

    bits: int | None  # smallest b with margin > 0; None if none in the range
    margins: tuple[tuple[int, float], ...]  # (b, margin) for every b evaluated, in order
    full_precision_margin: float  # margin of the unquantised matrices


def min_bits_for_positive_margin(
    margin_fn: Callable[..., float],
    matrices: Mapping[str, torch.Tensor] | Sequence[torch.Tensor],
    *,
    min_bits: int = 1,
    max_bits: int = 32,
    scan_all: bool = False,
) -> BitSearch:
    """Smallest number of bits per parameter that keeps the margin positive.

    For ``b = min_bits, ..., max_bits`` every matrix is quantised with :func:`quantize` (its own
    scale) and ``margin_fn`` builds the margin from the quantised matrices; the first ``b`` with a
    positive margin is returned. The quantisation grids for different ``b`` are not nested, so
    positivity need not be monotone in ``b``; pass ``scan_all=True`` to evaluate every ``b`` and
    inspect :attr:`BitSearch.margins`.

    Parameters
    ----------
    margin_fn : callable
        Called as ``margin_fn(**quantised)`` for a mapping (``margin_fn(A=..., G=..., B=...)``)
        or ``margin_fn(*quantised)`` for a sequence; returns ``gamma_min`` (a float or 0-d tensor),
        e.g. the output-scale ``gamma_min(theta)`` of App. B.2.6 of the MLP rebuilt from them.
    matrices : mapping of str to tensor, or sequence of tensors
        The full-precision matrices.
    min_bits, max_bits : int
        Search range, ``1 <= min_bits <= max_bits <= 64``.
    scan_all : bool, default False
        Keep evaluating after the first positive margin.

    Returns
    -------
    BitSearch

    Raises
    ------
    ValueError
        An invalid bit range, a container of another kind, a ``scan_all`` that is not a bool,
        or a margin that is not a finite real number (a bool, a string, NaN or inf).

    References
    ----------
    Seed 001, App. B.2.6 (Lemma B.4, Theorem B.6, Corollary B.8).
    """
    lo, hi = _bits(min_bits), _bits(max_bits)
    scan_all = as_bool(scan_all, "scan_all")
    if lo > hi:
        raise ValueError(f"min_bits must be <= max_bits; got {lo} > {hi}")
    if not isinstance(matrices, (Mapping, list, tuple)):
        raise ValueError("matrices must be a mapping of name -> tensor or a sequence of tensors")

    def call(mats) -> float:
        val = margin_fn(**mats) if isinstance(mats, Mapping) else margin_fn(*mats)
        if (isinstance(val, torch.Tensor) and val.numel() == 1) or (isinstance(val, np.ndarray) and val.size == 1):
            val = val.reshape(())  # a one-element array is read as its value, as float() does
        try:
            return as_real(val, "margin_fn's margin")
        except ValueError:
            raise ValueError(f"margin_fn returned a non-finite or non-real margin {val!r}") from None

    full = call(dict(matrices) if isinstance(matrices, Mapping) else list(matrices))
    found = None
    record = []
    for b in range(lo, hi + 1):
        gm = call(quantize_matrices(matrices, b))
        record.append((b, gm))
        if gm > 0 and found is None:
            found = b
            if not scan_all:
                break
    return BitSearch(bits=found, margins=tuple(record), full_precision_margin=full)
