"""Argument and result checks shared by the modules of :mod:`assocmem.linear` (private).

The delta-rule step ``beta``, optional tolerances, real tensors and floating dtypes, boolean flags, norms that neither overflow nor
underflow, and the last check of a computed result: a finite input whose result leaves the range
of its dtype is recomputed in float64 when that helps, and reported as an overflow when it does
not, never returned as ``inf`` or ``nan``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from assocmem._checks import as_real
from assocmem.dtypes import cast_checked, check_float_dtype

__all__ = ["check_beta", "optional_tolerance", "stable_norms", "checked_result", "overflow_error",
           "real_tensor", "floating_dtype"]


def check_beta(beta) -> float:
    """``beta`` as a float in ``(0, 1]``.

    Raises
    ------
    ValueError
        ``"beta must be in (0, 1]; got 1.5"`` for a number outside the interval (or NaN), or
        ``"beta must be a real number, got True"`` for a boolean, a string or another non-number.
    """
    if isinstance(beta, float) and math.isnan(beta):
        raise ValueError(f"beta must be in (0, 1]; got {beta!r}")
    b = as_real(beta, "beta", finite=False)
    if not 0.0 < b <= 1.0:
        raise ValueError(f"beta must be in (0, 1]; got {beta!r}")
    return b


def optional_tolerance(value, name: str) -> float | None:
    """``None``, or ``value`` as a finite float ``>= 0`` (:func:`assocmem._checks.as_real`).

    Raises
    ------
    ValueError
        Naming ``name`` for a boolean, a string, NaN, an infinity or a negative number.
    """
    return None if value is None else as_real(value, name, minimum=0.0)


def stable_norms(x: torch.Tensor, dim: int = -1, keepdim: bool = False) -> torch.Tensor:
    """Euclidean norms along ``dim`` that do not overflow or underflow for finite ``x``.

    Each slice is scaled by the power of two nearest its largest entry before the norm and scaled
    back after; multiplying by a power of two is exact, so wherever the plain norm is finite and
    not subnormal the result is the same, bit for bit.
    """
    amax = x.abs().amax(dim=dim, keepdim=True)
    _, e = torch.frexp(amax)
    e = e.clamp(min=math.frexp(torch.finfo(x.dtype).tiny)[1] + 1)
    scale = torch.ldexp(torch.ones_like(amax), -e)  # 2^-e, finite for every e kept
    norms = torch.linalg.vector_norm(x * scale, dim=dim, keepdim=True) / scale
    return norms if keepdim else norms.squeeze(dim)


def overflow_error(what: str, dtype: torch.dtype, hint: str = "rescale the inputs") -> ValueError:
    """The :class:`ValueError` for a result of finite input that leaves ``dtype``'s range."""
    return ValueError(f"{what} overflows {dtype} (largest finite value {torch.finfo(dtype).max:.2g}) although "
                      f"the inputs are finite; {hint}")


def checked_result(out: torch.Tensor, what: str, recompute=None, hint: str = "rescale the inputs") -> torch.Tensor:
    """``out`` if it is finite; else the float64 ``recompute()`` cast back, or an overflow error.

    ``out`` is the result of a computation on finite inputs, so a non-finite entry is an overflow
    (of the result or of an intermediate). ``recompute`` redoes the computation in float64; if that
    is finite, it is cast back to ``out``'s dtype with :func:`assocmem.dtypes.cast_checked` (which
    raises when the true result is beyond the dtype's range).

    Raises
    ------
    ValueError
        ``"<what> overflows torch.float32 (largest finite value 3.4e+38) ..."``.
    """
    if not out.is_floating_point() or out.is_meta or bool(torch.isfinite(out).all()):
        return out  # (a meta tensor has a shape and no values to check)
    if recompute is not None and out.dtype != torch.float64:
        out64 = recompute()
        if bool(torch.isfinite(out64).all()):
            return cast_checked(out64, out.dtype, what)
    raise overflow_error(what, out.dtype, hint)


def check_loaded_state(module, incompatible_keys) -> None:
    """``load_state_dict``'s post hook of the matrix memories: a ValueError naming the state dict
    when what it loaded is not a state the memory could hold (the module's ``_check_loaded``)."""
    try:
        module._check_loaded()
    except ValueError as err:
        raise ValueError(f"the state dict loaded into this {type(module).__name__} is not a usable one: "
                         f"{err}") from None


def real_tensor(x, name: str) -> torch.Tensor:
    """``x`` as a real tensor (not yet cast); strings and other non-arrays raise a ValueError."""
    try:
        x = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"{name} must be a real tensor or array-like of numbers; got {type(x).__name__} "
                         f"{x!r:.80}") from None
    if x.is_complex():
        raise ValueError(f"{name} must be real; got dtype {x.dtype}")
    return x


def floating_dtype(dtype) -> torch.dtype:
    """Resolve ``dtype`` (a ``torch.dtype`` or its name, e.g. ``"float64"``) to float32 or float64."""
    if isinstance(dtype, str):
        resolved = getattr(torch, dtype.removeprefix("torch."), None)
        if not isinstance(resolved, torch.dtype):
            raise ValueError(
                f"dtype {dtype!r} does not name a torch dtype; pass e.g. torch.float64 or 'float64'"
            )
        dtype = resolved
    if not isinstance(dtype, torch.dtype):
        raise TypeError(
            "dtype must be a torch.dtype or the name of one (e.g. torch.float64 or 'float64'); "
            f"got {type(dtype).__name__} {dtype!r}"
        )
    if not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point dtype; got {dtype}")
    return check_float_dtype(dtype)  # float16/bfloat16 (and float8) refused, naming float32/float64
