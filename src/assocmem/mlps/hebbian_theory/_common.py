"""Float64 argument checks, seeded generators and unit rows shared by the checks of :mod:`assocmem.mlps.hebbian_theory`.

Private helpers used by the Theorem 3.1, Lemma B.2, B.3 and B.34 modules (``_f64`` converts and
validates a tensor argument, ``_generator`` seeds a generator on a device, ``_F64`` and the float64
machine epsilon ``_EPS``), and :func:`unit_rows` (rows scaled to unit norm), which the Theorem 3.1
and Lemma B.34 modules use; :func:`unit_rows` is public and re-exported by the package. Chapter 11
("MLPs are kernel Hebbians").
"""

from __future__ import annotations

import numpy as np
import torch

from assocmem._checks import seed_int as _seed

__all__ = [
    "unit_rows",
]


_F64 = torch.float64
_EPS = float(torch.finfo(_F64).eps)


def _f64(x, name: str, ndim: int | None = None, device=None) -> torch.Tensor:
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x, dtype=np.float64))
    t = t.to(dtype=_F64, device=device if device is not None else t.device)
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} has non-finite entries")
    return t


def _generator(seed: int, device: torch.device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(_seed(seed))
    return g


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit Euclidean norm."""
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
