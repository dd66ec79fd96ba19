"""Shape, dtype and value checks of queries, keys and values shared by the modules of
:mod:`assocmem.linear.attention`: tensors ``(..., T, d)``, ``q`` and ``k`` sharing ``d_k``, ``k`` and
``v`` sharing ``(..., T)``, one dtype (float32 or float64; the linear forms also take integers),
finite entries, a boolean ``causal`` and a real ``scale``; the messages name the offending
argument or shapes.
"""

from __future__ import annotations

import torch

from assocmem._checks import as_real
from assocmem.dtypes import check_float_dtype
from assocmem._checks import as_bool


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, *,
               integers: bool = False, names: tuple[str, str, str] = ("q", "k", "v")) -> None:
    """Shared checks; messages name the offending shapes, dtype or tensor.

    ``integers``: accept integer tensors (exact integer arithmetic, the linear forms); float16,
    bfloat16, booleans and complex numbers are refused always. ``names`` are the tensors' names
    in the messages (``softmax_weights`` has no ``v``).
    """
    as_bool(causal, "causal")
    for name, x in zip(names, (q, k, v)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
    for x in (q, k, v):
        if x.ndim < 2:
            raise ValueError(f"q, k, v must have shape (..., T, d); got {shapes}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share the key dimension d_k (last axis); got {shapes}")
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"k and v must have the same leading shape (..., T); got {shapes}")
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q, k, v must have the same batch dimensions (...); got {shapes}")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal attention needs as many queries as keys (same T); got {shapes}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(
            f"q, k, v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype} ({shapes})"
        )
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v must be on one device; got {q.device}, {k.device}, {v.device}")
    dtype, listed = q.dtype, ", ".join(dict.fromkeys(names))
    if integers and not dtype.is_floating_point and not dtype.is_complex and dtype != torch.bool:
        return  # integer tensors: exact arithmetic, nothing can be non-finite
    if not dtype.is_floating_point or dtype.is_complex:
        allowed = "torch.float32 or torch.float64" + (" (or an integer dtype)" if integers else "")
        raise ValueError(f"{listed} must be real floating tensors ({allowed}); got dtype {dtype}")
    check_float_dtype(dtype, f"{listed} dtype")  # float16/bfloat16 refused, with the reason
    _check_finite(zip(names, (q, k, v)))


def _check_finite(named) -> None:
    """Raise naming the first tensor of ``(name, tensor)`` pairs with a NaN or an infinity (a
    tensor on the meta device has a shape and no values: nothing to check)."""
    for name, x in named:
        if x.is_floating_point() and not x.is_meta and not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} contains non-finite entries (nan or inf)")


def _check_scale(scale) -> float:
    """``scale`` as a finite float (``None`` is 1, the seed's convention)."""
    return 1.0 if scale is None else as_real(scale, "scale")

