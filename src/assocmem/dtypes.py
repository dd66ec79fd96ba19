"""The dtype policy of the library, stated once.

Every memory, construction and analysis in ``assocmem`` computes in **float32 or float64**:

- **float64** is the default wherever conditioning matters (least-squares and whitened
  constructions, margins, the exact checks of the chapters).
- **float32** is accepted where a family documents it (attention, matrix memories, SDM reads,
  gradient-descent training) and is what a GPU run usually wants.
- **float16 and bfloat16 are refused** with a :class:`ValueError` that names the supported
  dtypes. Their range (float16 overflows above 65504) and their 8 to 11 bits of mantissa turn
  the sums of a memory into silent overflow or rounding noise; a reader who has such tensors casts
  them with ``.float()`` and gets the float32 result.
- Integer and boolean tensors are accepted where a family reads patterns (binary SDM patterns as
  ``uint8`` or ``bool``); elsewhere they are cast to the family's float dtype.

A cast that turns finite input into ``inf`` (float64 values beyond float32's range, say) is
reported as an overflow (:func:`cast_checked`), never as "non-finite input".
"""

from __future__ import annotations

import torch

__all__ = ["FLOAT_DTYPES", "LOW_PRECISION", "cast_checked", "check_float_dtype"]

#: The floating dtypes the library computes in.
FLOAT_DTYPES = (torch.float32, torch.float64)
#: Floating dtypes the library refuses.
LOW_PRECISION = (torch.float16, torch.bfloat16)


def check_float_dtype(dtype, name: str = "dtype") -> torch.dtype:
    """``dtype`` if it is float32 or float64; else a :class:`ValueError` naming what is supported.

    Raises
    ------
    ValueError
        For float16/bfloat16 (with the reason), any other dtype, or a non-dtype.
    """
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"{name} must be a torch dtype (torch.float32 or torch.float64), got {dtype!r}")
    if dtype in LOW_PRECISION:
        raise ValueError(f"{name} {dtype} is not supported: the library computes in torch.float32 or "
                         "torch.float64 (float16/bfloat16 overflow and lose the sums); cast with .float()")
    if dtype not in FLOAT_DTYPES:
        raise ValueError(f"{name} must be torch.float32 or torch.float64, got {dtype}")
    return dtype


def cast_checked(x: torch.Tensor, dtype: torch.dtype, name: str) -> torch.Tensor:
    """``x`` cast to ``dtype``, or a :class:`ValueError` when the cast overflows.

    ``x`` must already be finite (check that first, with its own message); a finite entry that
    becomes ``±inf`` in ``dtype`` is reported as an overflow of ``dtype``'s range.

    Raises
    ------
    ValueError
        ``"<name> overflows torch.float32 (largest finite value 3.4e+38)"``.
    """
    out = x.to(dtype)
    if out.dtype != x.dtype and out.is_floating_point() and not bool(torch.isfinite(out).all()):
        raise ValueError(f"{name} overflows {dtype} (largest finite value {torch.finfo(dtype).max:.2g}); "
                         "rescale it or use torch.float64")
    return out
