"""Private checks shared by the modules of :mod:`assocmem.sdm.projections`.

Finite real numbers (:func:`_as_float`), the floating types of training and reads
(:func:`_check_dtype`), image matrices ``(N, n_base)`` with finite entries and no zero rows
(:func:`_images`), L2-normalised rows (:func:`_unit_rows`) and independent 63-bit seeds from
integer parts (:func:`_seed_int`, distinct streams per level and repeat), used by the training,
the evaluation and the experiment of the learnt-projection test of Bricken & Pehlevan (2021),
App. B.7. Nothing here is public API.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import torch


def _as_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def _check_dtype(dtype) -> torch.dtype:
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
    return dtype


def _images(x, name: str, n_base: int | None = None) -> torch.Tensor:
    """Validate an image matrix ``(N, n_base)``: real, finite, ``N >= 1``, no zero rows."""
    if isinstance(x, torch.Tensor):
        t = x.detach()
    else:
        try:
            arr = np.asarray(x)
        except Exception as err:  # pragma: no cover - exotic inputs
            raise ValueError(f"{name} must be an array of shape (N, n_base): {err}") from None
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.is_complex():
        raise ValueError(f"{name} must be real, got a complex array")
    if t.ndim != 2:
        raise ValueError(f"{name} must have shape (N, n_base) with one image per row, got shape "
                         f"{tuple(t.shape)}")
    if t.shape[0] == 0:
        raise ValueError(f"{name} has zero rows; at least one image is needed")
    if t.shape[1] == 0:
        raise ValueError(f"{name} has zero columns (n_base = 0)")
    if n_base is not None and t.shape[1] != n_base:
        raise ValueError(f"{name} have n_base = {t.shape[1]} pixels but {n_base} were expected "
                         f"(the projection's input dimension)")
    t = t.to(torch.float64)
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} has non-finite values (NaN or inf)")
    if bool((torch.linalg.vector_norm(t, dim=1) == 0).any()):
        raise ValueError(f"{name} has an all-zero image, which has no direction to perturb or "
                         f"project")
    return t


def _unit_rows(x: torch.Tensor) -> torch.Tensor:
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def _seed_int(*parts) -> int:
    """A 63-bit seed from integer parts (distinct streams per level, repeat, ...)."""
    return int(np.random.SeedSequence([int(p) % (2**63) for p in parts]).generate_state(2, np.uint64)[0]
               % (2**63))
