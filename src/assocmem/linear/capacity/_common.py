"""Argument checks shared by the modules of :mod:`assocmem.linear.capacity`.

Sizes that must be positive integers, a delta-rule step ``beta`` in ``(0, 1]``, and a batch of pair
sets whose keys ``(B, n, d_k)`` and values ``(B, n, d_v)`` match (one float32/float64 dtype, one
device, finite entries); the messages name the argument and the shapes.
"""

from __future__ import annotations

import numpy as np
import torch

from assocmem.dtypes import check_float_dtype
from assocmem.linear._args import check_beta


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_beta(beta) -> float:
    """``beta`` in ``(0, 1]``; a boolean or a string is refused, not read as a number."""
    return check_beta(beta)


def _check_batch(keys: torch.Tensor, values: torch.Tensor) -> None:
    """Tensors ``(B, n, d_k)`` and ``(B, n, d_v)``, one float32/float64 dtype, one device, finite."""
    for name, x in (("keys", keys), ("values", values)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if keys.ndim != 3 or values.ndim != 3 or keys.shape[:2] != values.shape[:2]:
        raise ValueError(
            "keys and values must be (B, n, d_k) and (B, n, d_v) with matching B and n; got "
            f"keys {tuple(keys.shape)}, values {tuple(values.shape)}"
        )
    if keys.dtype != values.dtype or keys.device != values.device:
        raise ValueError(f"keys and values must share a dtype and a device; got {keys.dtype} on {keys.device} "
                         f"and {values.dtype} on {values.device}")
    if not keys.is_floating_point():
        raise ValueError(f"keys and values must be float32 or float64 tensors; got dtype {keys.dtype}")
    check_float_dtype(keys.dtype, "keys and values dtype")  # float16/bfloat16 refused, with the reason
    for name, x in (("keys", keys), ("values", values)):
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} contain non-finite entries (nan or inf)")
