"""Tensor and array checks shared by the modules of Part II (private).

Every public function of :mod:`assocmem.mlps` that takes a tensor reads it through
:func:`float_tensor` (arrays of sizes and statistics through :func:`real_array`), so that one
malformed argument raises the same :class:`ValueError` wherever it enters: a ``torch.Tensor``
(not a list), real, in the library's dtype policy (:mod:`assocmem.dtypes`: float32 or float64
computed, float16 / bfloat16 refused with the reason, integer and boolean tensors cast to
float64), of the stated rank, and finite. Non-finite *input* is refused before any work;
:func:`check_finite_result` reports a non-finite *result* of finite input as the overflow it is,
naming the computation. Scalars go through :func:`assocmem._checks.as_real` and
:func:`assocmem._checks.as_int`, flags through :func:`assocmem._checks.as_bool`. Used by the
facts, constructions, margins, counting and theory modules (chapters 10-13)."""

from __future__ import annotations

import numpy as np
import torch

from assocmem.dtypes import cast_checked, check_float_dtype

_F64 = torch.float64


def float_tensor(x, name: str, ndim: int | None = None, *, min_rows: int | None = None) -> torch.Tensor:
    """``x`` as a finite real tensor in the dtype policy, or a :class:`ValueError` naming ``name``.

    Floating tensors keep their dtype (float32 or float64; float16 and bfloat16 are refused by
    :func:`assocmem.dtypes.check_float_dtype`); integer and boolean tensors are cast to float64.
    A tensor on the meta device (shape only, no values) passes the value check: modules built on
    it are filled later by ``load_state_dict(..., assign=True)``.

    Raises
    ------
    ValueError
        Not a tensor; complex; float16/bfloat16; the wrong rank; fewer than ``min_rows`` rows;
        a NaN or infinite entry.
    """
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if x.is_complex():
        raise ValueError(f"{name} must be real; got dtype {x.dtype}")
    if x.is_floating_point():
        check_float_dtype(x.dtype, f"{name} dtype")
    else:
        x = x.to(_F64)
    if ndim is not None and x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got shape {tuple(x.shape)}")
    if min_rows is not None and x.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row{'s' if min_rows != 1 else ''}; "
                         f"got shape {tuple(x.shape)}")
    if not x.is_meta and not all_finite(x):  # a meta tensor has a shape and no values to check
        raise ValueError(f"{name} contains non-finite entries (nan or inf)")
    return x


def batch_input(x, d: int, name: str = "x", dtype: torch.dtype | None = None) -> torch.Tensor:
    """Validate a batch of inputs ``(..., d)`` to a memory: a real tensor of width ``d``, finite.

    float16 / bfloat16 inputs are refused (:mod:`assocmem.dtypes`); with ``dtype`` the input is
    cast to it, and a cast that overflows (float64 entries beyond float32's range) is reported as
    such (:func:`assocmem.dtypes.cast_checked`). Integer and boolean inputs are accepted (they
    are cast when ``dtype`` is given).

    Raises
    ------
    ValueError
        Not a tensor, the wrong width, complex, float16 / bfloat16, non-finite, or an
        overflowing cast.
    """
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of shape (..., d) with d = {d}; got "
                         f"{type(x).__name__}")
    if x.dim() < 1 or x.shape[-1] != d:
        raise ValueError(f"{name} must have shape (..., d) with d = {d} (the input width of this "
                         f"memory); got shape {tuple(x.shape)}")
    if x.is_complex():
        raise ValueError(f"{name} must be real; got dtype {x.dtype}")
    if x.is_floating_point():
        check_float_dtype(x.dtype, f"{name} dtype")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains non-finite entries (nan or inf)")
    return x if dtype is None else cast_checked(x, dtype, name)


def real_array(x, name: str) -> np.ndarray:
    """``x`` (a number, a sequence, an ndarray, a pandas Series or a tensor) as a finite float64 ndarray.

    Real numbers only: booleans (Python, NumPy, or arrays of them), strings, complex numbers,
    float16 / bfloat16 tensors and non-finite entries are refused with a :class:`ValueError`
    naming ``name``. For the size and statistic arguments of the theory curves and fits, which
    broadcast scalars and arrays alike.

    Raises
    ------
    ValueError
        ``"<name> must hold real numbers; got dtype bool"``, ``"<name> must be finite"``.
    """
    if isinstance(x, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a real number or an array of them; got {x!r}")
    if isinstance(x, torch.Tensor):
        x = float_tensor(x, name).detach().cpu().numpy()  # dtype policy, finite
    elif isinstance(x, (list, tuple)) and holds_bool_or_str(x):  # np.asarray([True, 2]) is int
        raise ValueError(f"{name} must hold real numbers; got a boolean or a string in {x!r}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):  # ragged nested sequences
        raise ValueError(f"{name} must be a real number or an array of them; got {type(x).__name__}") from None
    if a.dtype.kind not in "iufO" or (
            a.dtype.kind == "O" and any(isinstance(v, (bool, np.bool_, str, bytes)) for v in a.flat)):
        raise ValueError(f"{name} must hold real numbers; got dtype {a.dtype}")
    try:
        a = a.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold real numbers; got dtype {a.dtype}") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def holds_bool_or_str(seq) -> bool:
    """Whether a (nested) list or tuple holds a bool or a string anywhere."""
    for v in seq:
        if isinstance(v, (bool, np.bool_, str, bytes)):
            return True
        if isinstance(v, (list, tuple)) and holds_bool_or_str(v):
            return True
    return False


def all_finite(x: torch.Tensor) -> bool:
    """Whether every entry of ``x`` is finite.

    Inf and NaN survive any addition, so a finite sum proves every entry finite in one reduction;
    only a sum that overflowed from finite entries needs the elementwise test.
    """
    with torch.no_grad():
        t = x.detach()
        if t.numel() == 0:
            return True
        return bool(torch.isfinite(t.sum())) or bool(torch.isfinite(t).all())


def check_finite_result(x: torch.Tensor, what: str) -> torch.Tensor:
    """``x`` if finite; else a :class:`ValueError` saying that ``what`` overflowed ``x.dtype``.

    Call it on the result of a computation whose inputs were checked finite: a non-finite entry
    can then only come from an overflow of the dtype's range.

    Raises
    ------
    ValueError
        ``"<what> overflows torch.float64 (largest finite value 1.8e+308); rescale the inputs"``.
    """
    if not all_finite(x):
        big = torch.finfo(x.dtype).max if x.is_floating_point() else float("nan")
        raise ValueError(f"{what} overflows {x.dtype} (largest finite value {big:.2g}); rescale the inputs"
                         + ("" if x.dtype == _F64 else " or use torch.float64"))
    return x


def probe_map(module: torch.nn.Module, d: int, what: str, *, dtype: torch.dtype, device) -> None:
    """Check that ``module`` maps a ``(2, d)`` input to a ``(2, d)`` output, without changing it.

    The probe runs on ``device`` in ``dtype`` under ``torch.no_grad()`` with the module in eval
    mode (restored afterwards), so that neither its parameters, its gradients flags, its buffers
    (batch-norm statistics) nor its training mode change: a constructor can refuse a module before
    freezing or moving it.

    Raises
    ------
    ValueError
        ``"<what> must map R^d -> R^d with d = 8; it fails on a (2, 8) torch.float64 input: ..."``
        or ``"... a (2, 8) input gave (2, 5)"``.
    """
    probe = torch.eye(2, d, dtype=dtype, device=device)
    was = module.training
    try:
        module.eval()
        with torch.no_grad():
            out = module(probe)
    except (ValueError, RuntimeError, TypeError, IndexError) as exc:
        raise ValueError(f"{what} must map R^d -> R^d with d = {d}; it fails on a (2, {d}) {dtype} input: "
                         f"{exc}") from None
    finally:
        module.train(was)
    if not isinstance(out, torch.Tensor) or out.shape != (2, d):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"{what} must map R^d -> R^d with d = {d}: a (2, {d}) input gave {shape}")


def module_dtype(module: torch.nn.Module, default: torch.dtype = torch.float64) -> torch.dtype:
    """The dtype of ``module``'s first floating-point parameter or buffer (``default`` if none)."""
    for t in (*module.parameters(), *module.buffers()):
        if t.is_floating_point():
            return t.dtype
    return default


def module_device(module: torch.nn.Module, default):
    """The device of ``module``'s first parameter or buffer (``default`` if it has none)."""
    for t in (*module.parameters(), *module.buffers()):
        return t.device
    return default
