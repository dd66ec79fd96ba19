"""Input handling of the margin modules: validated float64 tensors, fact-set parts, scalars.

Every public function of :mod:`assocmem.mlps.margins` reads its inputs through these private
helpers, so that one malformed argument raises the same ``ValueError`` wherever it enters:
``_as_f64`` (a finite real float64 tensor of a given rank), ``_facts_parts`` (the keys ``(F, d)``,
values ``(V, d)`` and mapping ``(F,)`` of a :class:`~assocmem.mlps.facts.FactSet`, checked
against each other with ``_check_mapping``), ``_codes_table`` (the code table ``(V, d)`` of
Algorithm 1, default the values), ``_is_array`` (an array rather than a model), ``_pos_number``
(a finite real scalar above a bound, through :func:`assocmem._checks.as_real`), ``_arr`` (a
finite float64 ndarray of real numbers for the theory curves), and ``_finite_stat`` (a
statistic of finite input that overflowed is reported as an overflow). Conventions of seed 001
("MLPs are Hebbians", Sec. 2.1, App. B.4): rows throughout, everything in float64. Chapters 10-13 reach them only through the public functions.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from assocmem._checks import as_real
from assocmem.dtypes import check_float_dtype
from assocmem.mlps._checks import holds_bool_or_str, real_array


def _as_f64(x, name: str, ndim: int | None = None) -> torch.Tensor:
    """``x`` (tensor, ndarray or nested list) as a finite float64 tensor of rank ``ndim``.

    Real numbers only: booleans, complex numbers and strings are refused, and so are float16 /
    bfloat16 tensors and float16 arrays (the dtype policy of :mod:`assocmem.dtypes`); integer
    input is read as float64.
    """
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.dtype == torch.bool:
            raise ValueError(f"{name} must be real-valued; got dtype {x.dtype}")
        if x.is_floating_point():
            check_float_dtype(x.dtype, f"{name} dtype")
        t = x.detach().to(torch.float64)
    else:
        if isinstance(x, (list, tuple)) and holds_bool_or_str(x):  # np.asarray([True, 2.0]) is float
            raise ValueError(f"{name} must be a real array (no booleans or strings); got {x!r}")
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError):  # ragged nested lists
            raise ValueError(f"{name} must be a real array; got {type(x).__name__}") from None
        if arr.dtype == np.float16:
            check_float_dtype(torch.float16, f"{name} dtype")
        bad = arr.dtype.kind not in "iufO" or (
            arr.dtype.kind == "O" and any(isinstance(v, (bool, np.bool_, str, bytes)) for v in arr.flat))
        try:
            if bad:
                raise TypeError
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real array (no booleans or strings); got "
                             f"{type(x).__name__} of dtype {arr.dtype}") from None
        t = torch.from_numpy(arr.copy())
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got shape {tuple(t.shape)}")
    # Inf and NaN survive any addition, so a finite sum proves every entry finite in one cheap
    # reduction; only a sum that overflowed from finite entries needs the elementwise test.
    if not bool(torch.isfinite(t.sum())) and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must be finite")
    return t


def _facts_parts(facts) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(keys (F, d), values (V, d), mapping (F,)) of a fact set, validated, float64 / int64."""
    for attr in ("keys", "values", "mapping"):
        if not hasattr(facts, attr):
            raise ValueError(
                f"facts must be a FactSet (with keys, values, mapping); got {type(facts).__name__}"
            )
    keys = _as_f64(facts.keys, "facts.keys", 2)
    values = _as_f64(facts.values, "facts.values", 2).to(keys.device)
    mapping = torch.as_tensor(facts.mapping)
    if mapping.is_floating_point() or mapping.is_complex() or mapping.dtype == torch.bool:
        raise ValueError(f"facts.mapping must be an integer tensor; got {mapping.dtype}")
    mapping = mapping.to(device=keys.device, dtype=torch.int64)
    _check_mapping(mapping, keys.shape[0], values.shape[0])
    if keys.shape[1] != values.shape[1]:
        raise ValueError(
            f"keys and values must share a width d; got {keys.shape[1]} and {values.shape[1]}"
        )
    return keys, values, mapping


def _check_mapping(mapping: torch.Tensor, num_facts: int, num_values: int) -> None:
    if mapping.dim() != 1 or mapping.shape[0] != num_facts:
        raise ValueError(f"mapping must have shape ({num_facts},); got {tuple(mapping.shape)}")
    if num_facts and (int(mapping.min()) < 0 or int(mapping.max()) >= num_values):
        raise ValueError(
            f"mapping entries must lie in [0, V) = [0, {num_values}); got range "
            f"[{int(mapping.min())}, {int(mapping.max())}]"
        )


def _codes_table(codes, values: torch.Tensor) -> torch.Tensor:
    """The code table ``(V, d)``; defaults to the value table."""
    if codes is None:
        return values
    c = _as_f64(codes, "codes", 2).to(values.device)
    if c.shape != values.shape:
        raise ValueError(
            f"codes must have the shape of the value table {tuple(values.shape)} (row j is the "
            f"code of value j); got {tuple(c.shape)}"
        )
    return c


def _is_array(x) -> bool:
    return isinstance(x, (torch.Tensor, np.ndarray, list, tuple))


def _pos_number(name: str, x, minimum: float = 0.0, strict: bool = True) -> float:
    """``x`` as a finite float above ``minimum`` (:func:`assocmem._checks.as_real`: bools, strings refused)."""
    return as_real(x, name, minimum=minimum, strict_min=strict)


def _arr(x, name: str) -> np.ndarray:
    """``x`` as a finite float64 ndarray of real numbers (:func:`assocmem.mlps._checks.real_array`)."""
    return real_array(x, name)


def _finite_stat(value, what: str) -> float:
    """``float(value)``, or a :class:`ValueError` when a statistic of finite input overflowed."""
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{what} overflows float64 (largest finite value 1.8e+308); rescale the inputs")
    return out
