"""Argument checks and the seeded Gaussian draw shared by the constructions of :mod:`assocmem.mlps.mlp`.

Private: the constructions (:mod:`~assocmem.mlps.mlp.hebbian`, :mod:`~assocmem.mlps.mlp.data_dependent`,
:mod:`~assocmem.mlps.mlp.ntk`, :mod:`~assocmem.mlps.mlp.gradient_descent`) and the readout of
:mod:`~assocmem.mlps.mlp.readout` validate their arguments here: a fact set re-checked at the point
of use (keys on the unit sphere where the construction's scale ``K(k, k) ~ 1`` assumes it), a
finite non-negative real named in the message (through :func:`assocmem._checks.as_real`, which
refuses booleans and strings), and the iid ``N(0, 1)`` float64 draw of the random factors: one
block, or the nested draw (:data:`DRAWS`; 64-row chunks, so that a width's unit weights are the
first rows of every larger width's).
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


#: Draws of the unit weights ``A_bar, G_bar`` (the ``draw`` keyword of the Hebbian builders).
DRAWS = ("block", "nested")
#: Rows of ``A_bar`` (and of ``G_bar``) per chunk of the nested draw.
NESTED_CHUNK = 64


def _check_draw(draw) -> str:
    """``draw`` checked to be one of :data:`DRAWS`."""
    if not isinstance(draw, str) or draw not in DRAWS:
        raise ValueError(f"draw must be one of {DRAWS}; got {draw!r}")
    return draw


def _nested_chunk(gen: torch.Generator, cols: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The next chunk of the nested draw: ``(A_bar rows, G_bar rows)``, each ``(NESTED_CHUNK, cols)``.

    One ``torch.randn(2, NESTED_CHUNK, cols)`` float64 call on ``gen`` (CPU): its first half are
    the chunk's rows of ``A_bar``, its second half those of ``G_bar``. Every chunk is the same
    size, so chunk ``j`` is a function of the seed and ``j`` alone.
    """
    both = torch.randn(2, NESTED_CHUNK, cols, generator=gen, dtype=_F64)
    return both[0], both[1]


def _nested_unit_weights(m: int, cols: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``A_bar, G_bar`` ``(m, cols)`` float64 of the nested draw from a freshly seeded ``gen``.

    ``ceil(m / NESTED_CHUNK)`` chunks (:func:`_nested_chunk`) stacked, cut to ``m`` rows: the
    result at width ``m`` is, bit for bit, the first ``m`` rows of the result at any larger width.
    """
    chunks = [_nested_chunk(gen, cols) for _ in range(-(-m // NESTED_CHUNK))]
    A = torch.cat([a for a, _ in chunks])[:m]
    G = torch.cat([g for _, g in chunks])[:m]
    return A, G


def _tracks_grad(*tensors: torch.Tensor) -> bool:
    """Whether autograd records operations on any of ``tensors`` (then no ``out=`` / in-place tricks)."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
