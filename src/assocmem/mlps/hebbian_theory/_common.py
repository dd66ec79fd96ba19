"""Float64 argument checks, seeded generators and unit rows shared by the checks of :mod:`assocmem.mlps.hebbian_theory`.

Private helpers used by the Theorem 3.1, Lemma B.2, B.3 and B.34 modules (``_f64`` converts and
validates a tensor argument, ``_generator`` seeds a CPU generator and ``_randn`` draws from it on
the CPU before moving the draw to its device, ``_F64`` and the float64
machine epsilon ``_EPS``), and :func:`unit_rows` (rows scaled to unit norm), which the Theorem 3.1
and Lemma B.34 modules use; :func:`unit_rows` is public and re-exported by the package. Chapter 11
("MLPs are kernel Hebbians").
"""

from __future__ import annotations

import torch

from assocmem._checks import seed_int as _seed
from assocmem.mlps._checks import float_tensor, real_array

__all__ = [
    "unit_rows",
]


_F64 = torch.float64
_EPS = float(torch.finfo(_F64).eps)


def _f64(x, name: str, ndim: int | None = None, device=None) -> torch.Tensor:
    """``x`` as a finite float64 tensor of rank ``ndim`` (float16 / bfloat16, booleans in arrays,
    strings and complex numbers refused; :mod:`assocmem.mlps._checks`)."""
    if isinstance(x, torch.Tensor):
        t = float_tensor(x, name, ndim)
    else:
        t = torch.from_numpy(real_array(x, name))
        if ndim is not None and t.dim() != ndim:
            raise ValueError(f"{name} must be {ndim}-D; got shape {tuple(t.shape)}")
    return t.to(dtype=_F64, device=device if device is not None else t.device)


def _generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed``: every draw of the package happens on the CPU."""
    return torch.Generator(device="cpu").manual_seed(_seed(seed))


def _randn(*shape: int, generator: torch.Generator, device) -> torch.Tensor:
    """Standard normal float64 draws of ``shape`` on the CPU from ``generator``, moved to ``device``.

    A seed gives the same numbers on every device (a generator per device would draw others on
    CUDA), and on the CPU the draw is the one ``torch.randn`` makes there.
    """
    return torch.randn(*shape, generator=generator, dtype=_F64).to(device)


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit Euclidean norm.

    Raises
    ------
    ValueError
        ``x`` that is not a finite real tensor (float16 / bfloat16 refused), a zero row, or a
        row whose norm overflows its dtype.
    """
    x = float_tensor(x, "x")
    n = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    if not bool(torch.isfinite(n).all()):
        raise ValueError(f"the norm of a row of x overflows {x.dtype}; rescale it")
    if bool((n == 0).any()):
        raise ValueError("x has a zero row, which has no direction to scale to unit norm")
    return x / n
