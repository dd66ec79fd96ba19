"""Private helpers shared by the modules of :mod:`assocmem.sdm` (reads, kernels, weights, rules).

Input validation (:func:`_as_int`, :func:`_as_real`, :func:`_as_tensor`, :func:`_binary`,
:func:`_real_array`, :func:`_unit_norm`, :func:`_torch_seed`), a Bessel function that does not
underflow (:func:`_log_bessel_ive`), seeded generators
(:func:`_generator`), the majority threshold on a tensor (:func:`_majority`, the body of the
public :func:`assocmem.sdm.read.majority`) and the last step of every SDM read
(:func:`_finish_read`: normalise, threshold, handle queries that activate no neuron). Nothing here
is public API; the modules import these names so that the rules live in one place.

References
----------
Bricken & Pehlevan (2021), "Attention Approximates Sparse Distributed Memory", Eq. 1 (the read
and its majority threshold ``g``); Kanerva (1988), *Sparse Distributed Memory*, Ch. 7.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import special

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real as _as_real
from assocmem.devices import check_cpu_generator
from assocmem.dtypes import LOW_PRECISION, check_float_dtype


def _refuse_low_precision(x: torch.Tensor, name: str) -> torch.Tensor:
    """``x``, or the dtype policy's :class:`ValueError` if it is float16 or bfloat16."""
    if x.dtype in LOW_PRECISION:
        check_float_dtype(x.dtype, f"{name} dtype")  # raises, naming float32 and float64
    return x


def _as_tensor(x, name: str) -> torch.Tensor:
    """``x`` itself if it is a tensor, else :func:`torch.as_tensor` of it (a ValueError if impossible).

    float16 and bfloat16 are refused (:mod:`assocmem.dtypes`), as are strings.
    """
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}")
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x)
        except (TypeError, ValueError, RuntimeError) as err:
            raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}") from err
    return _refuse_low_precision(x, name)


def _real_array(value, name: str, *, finite: bool = True) -> np.ndarray:
    """``value`` (a real number or an array-like of them) as a float64 numpy array.

    The array counterpart of :func:`assocmem._checks.as_real`: refuses booleans and strings (also
    inside lists, where numpy would silently turn ``True`` into ``1.0`` and ``"3"`` into ``3.0``),
    complex numbers, float16/bfloat16 tensors, NaN always and infinities unless ``finite=False``.
    """
    if isinstance(value, torch.Tensor):
        _refuse_low_precision(value, name)
        if value.dtype == torch.bool or value.is_complex():
            raise ValueError(f"{name} must hold real numbers, got a tensor of dtype {value.dtype}")
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray) and value.dtype != object:
        arr = value
    else:
        try:
            obj = np.asarray(value, dtype=object)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name} must be a real number or an array of them, got {value!r}") from err
        if obj.ndim == 0:
            return np.asarray(_as_real(obj.item(), name, finite=finite), dtype=np.float64)
        flat = [_as_real(v, name, finite=finite) for v in obj.ravel()]
        return np.asarray(flat, dtype=np.float64).reshape(obj.shape)
    if arr.dtype == np.float16:
        check_float_dtype(torch.float16, f"{name} dtype")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got an array of dtype {arr.dtype}")
    out = arr.astype(np.float64)
    if out.size and (np.isnan(out).any() or (finite and np.isinf(out).any())):
        raise ValueError(f"{name} must be {'finite' if finite else 'a number'}, got a non-finite entry")
    return out


def _unit_norm(x: torch.Tensor) -> torch.Tensor:
    """``|x|_2`` along the last axis (keepdim), exact in range where the plain norm overflows.

    ``torch.linalg.vector_norm`` squares the entries, so float32 rows with entries above about
    ``1.8e19`` (float64: ``1.3e154``) get an infinite norm and would normalise to zero. Such rows
    are rescaled by their largest entry first; every other row keeps the plain norm bit for bit.
    """
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    bad = ~torch.isfinite(norm)
    if x.numel() and bool(bad.any()) and bool(torch.isfinite(x).all()):
        scale = x.abs().amax(-1, keepdim=True)
        safe = torch.where(scale > 0, scale, torch.ones_like(scale))
        rescaled = torch.linalg.vector_norm(x / safe, dim=-1, keepdim=True) * safe
        norm = torch.where(bad, rescaled, norm)
    return norm


def _log_bessel_ive(v: float, x) -> np.ndarray:
    """``log(I_v(x) e^{-x})`` for ``v >= 0``, ``x > 0`` (arrays), finite where scipy's is not.

    ``log(scipy.special.ive(v, x))`` wherever the scaled Bessel function is a normal float (bit
    for bit what callers computed before). Elsewhere: where it underflows (large ``v``, small
    ``x``, e.g. ``v = 499``, ``x = 10``) the series ``I_v(x) = (x/2)^v / Gamma(v + 1)
    0F1(; v + 1; x^2 / 4)`` in log space; where scipy returns NaN (``x`` above about ``1.1e9``)
    or the series overflows, Debye's uniform expansion with ``s = sqrt(v^2 + x^2)``,
    ``p = v / s``: ``log I_v(x) = s + v log(x / (v + s)) - log(2 pi s) / 2
    + log(1 + (3 - 5 p^2) / (24 s) + (81 - 462 p^2 + 385 p^4) / (1152 s^2))``, whose next term
    is ``O(s^-3)``.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        scaled = np.asarray(special.ive(v, x), dtype=np.float64)
        ok = np.isfinite(scaled) & (scaled >= np.finfo(np.float64).tiny)
    out = np.log(np.where(ok, scaled, 1.0))
    if np.all(ok):
        return out
    out = np.array(out, dtype=np.float64)
    xs = x[~ok]
    s = np.hypot(v, xs)
    p2 = (v / s) ** 2
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        correction = (3.0 - 5.0 * p2) / (24.0 * s) + (81.0 - 462.0 * p2 + 385.0 * p2 * p2) / (1152.0 * s * s)
        debye = (v * v / (s + xs) + v * np.log(xs / (v + s)) - 0.5 * (np.log(2.0 * np.pi) + np.log(s))
                 + np.log1p(correction))
        small = s < 1e6  # the series is exact to rounding there and needs no asymptotics
        series = np.full(xs.shape, np.nan)
        if np.any(small):
            xq = xs[small]
            series[small] = (v * np.log(xq / 2.0) - special.gammaln(v + 1.0)
                             + np.log(special.hyp0f1(v + 1.0, (xq / 2.0) ** 2)) - xq)
    out[~ok] = np.where(np.isfinite(series), series, debye)
    return out


def _binary(x, name: str, min_ndim: int = 1) -> torch.Tensor:
    """``x`` as a tensor after checking that every entry is 0 or 1 (bool becomes uint8)."""
    x = _as_tensor(x, name)
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(x.shape)}")
    if x.dtype == torch.bool:
        return x.to(torch.uint8)
    if x.is_complex():
        raise ValueError(f"{name} must be binary (entries 0 or 1), got a complex tensor")
    if x.numel() and not bool(((x == 0) | (x == 1)).all()):
        bad = x[~((x == 0) | (x == 1))].flatten()[0].item()
        raise ValueError(f"{name} must be binary (entries 0 or 1), found {bad!r}")
    return x


_SEED_MIN, _SEED_MAX = -(2**63), 2**64 - 1  # what torch.Generator.manual_seed accepts


def _torch_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int that :meth:`torch.Generator.manual_seed` accepts (a ValueError if not)."""
    s = _as_int(seed, name)
    if not _SEED_MIN <= s <= _SEED_MAX:
        raise ValueError(f"{name} must lie in [-2^63, 2^64 - 1] (a torch generator seed), got {s}")
    return s


def _generator(seed) -> torch.Generator:
    """A CPU generator from an int seed, or the generator itself if it is a CPU one.

    The draws of :mod:`assocmem.sdm` happen on the CPU and then move to the target device, so a
    generator of another device is refused (:func:`assocmem.devices.check_cpu_generator`).
    """
    if isinstance(seed, torch.Generator):
        return check_cpu_generator(seed)
    return torch.Generator().manual_seed(_torch_seed(seed))


def _majority(x: torch.Tensor) -> torch.Tensor:
    """Element-wise ``1.0`` where ``x > 1/2``, ``0.0`` elsewhere, NaN kept (``x`` float64)."""
    return torch.where(torch.isnan(x), x, (x > 0.5).to(torch.float64))


def _finish_read(num: torch.Tensor, den: torch.Tensor, query: torch.Tensor, threshold: bool,
                 empty: str) -> torch.Tensor:
    """``num / den`` with the majority threshold and the policy for ``den = 0``, computed in
    float64 and returned in :func:`_read_dtype` of the query."""
    empty_rows = den == 0  # (..., 1)
    if bool(empty_rows.any()):
        if empty == "raise":
            k = int(empty_rows.sum())
            raise ValueError(f"{k} quer{'y' if k == 1 else 'ies'} share no neuron with any stored "
                             "pattern (all weights are zero): the read is undefined")
        if empty == "query" and num.shape[-1] != query.shape[-1]:
            raise ValueError(f"empty='query' returns the query, which needs pointers of the query's "
                             f"size n = {query.shape[-1]}, got n_p = {num.shape[-1]}")
    out = num / torch.where(empty_rows, torch.ones_like(den), den)  # (..., n_p)
    if threshold:
        out = _majority(out.to(torch.float64))
    if empty == "query":
        out = torch.where(empty_rows, query.to(torch.float64), out)
    else:
        out = out.masked_fill(empty_rows, float("nan"))
    return out.to(_read_dtype(query))


def _read_dtype(x: torch.Tensor) -> torch.dtype:
    """The dtype a read or map of binary ``x`` returns: ``x``'s own if it is floating point (a
    float32 model's patterns give float32), else torch's default dtype (bool and integer
    patterns carry none). The arithmetic before it is float64 (exact counts)."""
    return x.dtype if x.is_floating_point() else torch.get_default_dtype()
