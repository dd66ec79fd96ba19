"""The dtype policy of the library, stated once.

The library follows torch: ``dtype=None`` (the default of every public signature) means
``torch.get_default_dtype()`` (:func:`resolve_dtype`), ``device=None`` means
``torch.get_default_device()`` (:func:`assocmem.devices.resolve_device`), modules compute in their
parameters' dtype and do not cast their callers' tensors, and no function changes torch's global
state. A script that wants float64 throughout says so once, ``torch.set_default_dtype(
torch.float64)`` (the book's chapters do, in their setup cell), or passes ``dtype=`` per call.

Every memory, construction and analysis in ``assocmem`` computes in **float32 or float64**:

- **float64** is what conditioning needs (least-squares and whitened constructions, margins, the
  exact checks of the chapters). A construction that needs it whatever was asked for (a
  Cholesky factor, a least-squares solve, an exact table) computes in float64 inside and returns
  the requested dtype; its docstring says so.
- **float32** is torch's default and works end to end (a memory or an MLP construction inside a
  float32 ``nn.Sequential``); it is what a GPU run usually wants.
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

import contextlib

import torch

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["FLOAT_DTYPES", "LOW_PRECISION", "cast_checked", "check_float_dtype", "default_dtype", "resolve_dtype"]

#: The floating dtypes the library computes in.
FLOAT_DTYPES = (torch.float32, torch.float64)
#: Floating dtypes the library refuses.
LOW_PRECISION = (torch.float16, torch.bfloat16)


def check_float_dtype(dtype: object, name: str = "dtype") -> torch.dtype:
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


def resolve_dtype(dtype: torch.dtype | None = None, name: str = "dtype") -> torch.dtype:
    """The dtype a call computes in: ``None`` is ``torch.get_default_dtype()``, as in torch.

    The one place the library turns its ``dtype=None`` defaults into a dtype: a public function
    whose ``dtype`` defaults to ``None`` calls it first, then checks the result as it always did
    (:func:`check_float_dtype`, or its own rule where it also takes a dtype's name), so an
    explicit bad dtype gets the function's own message.

    Parameters
    ----------
    dtype : torch.dtype, str or None
        ``None`` follows torch's default dtype (float32 unless the caller's process set another
        with :func:`torch.set_default_dtype`); anything else is returned as it is.
    name : str, default "dtype"
        The argument's name in the caller, for the message.

    Returns
    -------
    torch.dtype, or ``dtype`` unchanged
        ``torch.float32`` or ``torch.float64`` for ``None``.

    Raises
    ------
    ValueError
        If ``dtype`` is ``None`` and torch's default dtype is neither float32 nor float64 (as
        :func:`check_float_dtype`: float16/bfloat16 are refused with the reason).
    """
    if dtype is None:
        return check_float_dtype(torch.get_default_dtype(), f"torch's default dtype (for {name}=None)")
    return dtype


@contextlib.contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    """Run a block with ``torch.set_default_dtype(dtype)``, then restore the previous default.

    For scripts, tests and the sweep engine (which runs each point of the book's sweeps under
    float64, the dtype their committed results were made in); the library's own functions never
    set torch's default. Restored on exit, also when the block raises.

    Raises
    ------
    ValueError
        If ``dtype`` is not float32 or float64 (:func:`check_float_dtype`).

    Examples
    --------
    >>> with default_dtype(torch.float64):
    ...     torch.zeros(1).dtype
    torch.float64
    """
    check_float_dtype(dtype)
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)
