"""Private input checks shared by the modules of :mod:`assocmem.sdm.read`.

The radius of a read or write (:func:`_check_radius`, ``0 <= d <= n``), real tensors with finite
entries (:func:`_real`) and the shapes of a stored memory (:func:`_check_memory`: addresses
``(m, n)`` with ``m >= 1``, pointers ``(m, n_p)``), used by the distances, the perturbations, the
pattern view (Eq. 1 of Bricken & Pehlevan 2021), attention (Eq. 4) and the neuron view. Nothing
here is public API; the modules import these names so that the rules live in one place.
"""

from __future__ import annotations

import torch

from assocmem.sdm._common import _as_int, _as_tensor


def _check_radius(d, n: int) -> int:
    d = _as_int(d, "d")
    if d < 0 or d > n:
        raise ValueError(f"the radius d must lie in [0, n] = [0, {n}], got {d}")
    return d


def _real(x, name: str, min_ndim: int = 1) -> torch.Tensor:
    """``x`` as a floating tensor (float64 unless already floating) with finite entries.

    float16/bfloat16 are refused (:func:`assocmem.sdm._common._as_tensor`, the dtype policy).
    """
    x = _as_tensor(x, name)
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(x.shape)}")
    if x.is_complex():
        raise ValueError(f"{name} must be real, got a complex tensor")
    if not x.is_floating_point():
        x = x.to(torch.float64)
    if x.numel() and not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} must have finite entries")
    return x


def _check_memory(addresses: torch.Tensor, pointers: torch.Tensor | None, n: int,
                  names=("addresses", "pointers")) -> None:
    a, p = names
    if addresses.ndim != 2:
        raise ValueError(f"{a} must have shape (m, n), got {tuple(addresses.shape)}")
    if addresses.shape[0] == 0:
        raise ValueError(f"the memory is empty: {a} has m = 0 rows")
    if addresses.shape[1] != n:
        raise ValueError(f"{a} have n = {addresses.shape[1]} bits but the query has n = {n}")
    if pointers is not None:
        if pointers.ndim != 2:
            raise ValueError(f"{p} must have shape (m, n_p), got {tuple(pointers.shape)}")
        if pointers.shape[0] != addresses.shape[0]:
            raise ValueError(f"{a} and {p} must have the same number of rows m, got "
                             f"{addresses.shape[0]} and {pointers.shape[0]}")
