"""Argument checks and the seeded Gaussian draw shared by the constructions of :mod:`assocmem.mlps.mlp`.

Private: the constructions (:mod:`~assocmem.mlps.mlp.hebbian`, :mod:`~assocmem.mlps.mlp.data_dependent`,
:mod:`~assocmem.mlps.mlp.ntk`, :mod:`~assocmem.mlps.mlp.gradient_descent`) and the readout of
:mod:`~assocmem.mlps.mlp.readout` validate their arguments here: a fact set re-checked at the point
of use (keys on the unit sphere where the construction's scale ``K(k, k) ~ 1`` assumes it), a
finite non-negative real named in the message (through :func:`assocmem._checks.as_real`, which
refuses booleans and strings), and the iid ``N(0, 1)`` float64 draw of the random factors.
``_tracks_grad`` tells the blocked CPU paths of the features
(:mod:`~assocmem.mlps.mlp.architectures`) and of the Gram / Cholesky linear algebra
(:mod:`~assocmem.mlps.mlp.readout`) when autograd records an operation, so that they fall back to
plain differentiable ones. Used through those modules by chapters 10-13.
"""

from __future__ import annotations

import torch

from assocmem._checks import as_real
from assocmem.mlps.facts import UNIT_NORM_TOL, FactSet

_F64 = torch.float64


def _nonneg_float(name: str, value) -> float:
    """``value`` as a finite float ``>= 0`` (:func:`assocmem._checks.as_real`: bools and strings refused)."""
    return as_real(value, name, minimum=0.0)


def _checked_facts(facts, require_unit_keys: bool) -> FactSet:
    """Re-validate a fact set (its tensors may have been edited in place since construction)."""
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be an assocmem.mlps.facts.FactSet; got {type(facts).__name__}")
    # FactSet.__post_init__ checks shapes, F >= 1, finiteness and the map's range.
    facts = FactSet(facts.keys, facts.values, facts.mapping, unit_norm=False)
    if require_unit_keys:
        err = (torch.linalg.vector_norm(facts.keys.to(_F64), dim=-1) - 1.0).abs().max().item()
        if err > UNIT_NORM_TOL:
            raise ValueError(
                "this construction assumes keys on the unit sphere (so that K(k, k) ~ 1); the worst "
                f"key norm is off by {err:.3g}. Normalise the keys or pass require_unit_keys=False."
            )
    return facts


def _gaussian(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(rows, cols, generator=gen, dtype=_F64)


def _tracks_grad(*tensors: torch.Tensor) -> bool:
    """Whether autograd records operations on any of ``tensors`` (then no ``out=`` / in-place tricks)."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
