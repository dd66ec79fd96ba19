"""Private checks shared by the modules of :mod:`assocmem.sdm.projections`.

Finite real numbers (:func:`_as_float`, through :func:`assocmem._checks.as_real`), the floating
types of training and reads (:func:`_check_dtype`, the policy of :mod:`assocmem.dtypes`), image
matrices ``(N, n_base)`` with finite entries and no zero rows, float16/bfloat16 refused
(:func:`_images`), L2-normalised rows (:func:`_unit_rows`) and independent 63-bit seeds from
integer parts (:func:`_seed_int`, distinct streams per level and repeat), used by the training,
the evaluation and the experiment of the learnt-projection test of Bricken & Pehlevan (2021),
App. B.7. Nothing here is public API.
"""

from __future__ import annotations

import numpy as np
import torch

from assocmem._checks import as_real
from assocmem.dtypes import check_float_dtype
from assocmem.sdm._common import _refuse_low_precision, _unit_norm


def _as_float(value, name: str) -> float:
    try:
        return as_real(value, name)  # no booleans, strings, NaN or infinities
    except ValueError:
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from None


def _check_dtype(dtype) -> torch.dtype:
    return check_float_dtype(dtype, "dtype")  # float16/bfloat16 refused with the policy's reason


def _images(x, name: str, n_base: int | None = None) -> torch.Tensor:
    """Validate an image matrix ``(N, n_base)``: real, finite, ``N >= 1``, no zero rows."""
    if isinstance(x, torch.Tensor):
        t = _refuse_low_precision(x.detach(), name)
    else:
        try:
            arr = np.asarray(x)
        except Exception as err:  # pragma: no cover - exotic inputs
            raise ValueError(f"{name} must be an array of shape (N, n_base): {err}") from None
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
        t = _refuse_low_precision(torch.from_numpy(np.ascontiguousarray(arr)), name)
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
    return x / _unit_norm(x)  # no overflow of the norm (and rows of zeros) for huge entries


def _seed_int(*parts) -> int:
    """A 63-bit seed from integer parts (distinct streams per level, repeat, ...)."""
    return int(np.random.SeedSequence([int(p) % (2**63) for p in parts]).generate_state(2, np.uint64)[0]
               % (2**63))
