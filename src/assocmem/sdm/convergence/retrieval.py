"""Iterated retrieval: read each query again and again until it stops changing (App. B.7).

The convergence experiments of Bricken & Pehlevan (2021), App. B.7, iterate a read rule from a
perturbed query for at most 100 reads and stop when a read changes no bit (binary rules) or
moves no component by more than ``0.05`` (continuous rules); the authors' ``convergence_loop``
stops the whole batch, :func:`converge` stops each query at its own first unchanged read (the
same final states for the deterministic rules) and returns a :class:`ConvergenceResult` with the
states, the reads per query and whether the stopping rule fired. The metric of App. B.7, the
cosine of the final state to its target (``1 - 2 H / n`` for binary states), is
:func:`cosine_to_target`. Used by the experiment of chapter 36.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.sdm._common import _unit_norm
from assocmem.sdm.convergence._common import _as_tensor
from assocmem.sdm.convergence.read_rules import PreparedPatterns, ReadRule

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "ConvergenceResult",
    "converge",
    "cosine_to_target",
]


@dataclass
class ConvergenceResult:
    """What :func:`converge` returns.

    Attributes
    ----------
    states : torch.Tensor, shape ``(B, n)``
        Final states (0/1 floats or unit vectors), on the rule's device.
    steps : torch.Tensor, shape ``(B,)``, int64
        Reads applied to each query. A query that stops was read once more than it moved (the
        read that changed nothing counts).
    stopped : torch.Tensor, shape ``(B,)``, bool
        The stopping rule fired within ``max_steps`` reads.
    zero_weights : torch.Tensor, shape ``(B,)``, bool
        The last read had all weights zero, so it left the query unchanged.
    """

    states: torch.Tensor
    steps: torch.Tensor
    stopped: torch.Tensor
    zero_weights: torch.Tensor

    def cosine_to(self, targets: ArrayLike, space: str) -> torch.Tensor:
        """Cosine of each final state to its target (:func:`cosine_to_target`)."""
        return cosine_to_target(self.states, targets, space)


def cosine_to_target(states: ArrayLike, targets: ArrayLike, space: str) -> torch.Tensor:
    """The App. B.7 metric: cosine between each state and its target.

    Parameters
    ----------
    states, targets : torch.Tensor, shape ``(B, n)``
        Binary (0/1) or real vectors, paired by row.
    space : {"binary", "continuous"}
        ``"binary"``: ``1 - 2 H / n`` with ``H`` the Hamming distance (the cosine of the
        bipolar images, the authors' ``hamm_to_cosine``). ``"continuous"``: the cosine.

    Returns
    -------
    torch.Tensor, shape ``(B,)``, float64

    Raises
    ------
    ValueError
        On shape mismatch, ``n = 0``, an unknown ``space``, float16/bfloat16 input, entries other
        than 0 and 1 (``"binary"``), or non-finite entries or zero vectors (``"continuous"``,
        whose cosine would be NaN).
    """
    if space not in ("binary", "continuous"):
        raise ValueError(f"space must be 'binary' or 'continuous', got {space!r}")
    s, t = _as_tensor(states, "states"), _as_tensor(targets, "targets")
    t = t.to(s.device)
    if s.shape != t.shape or s.ndim != 2 or s.shape[1] < 1:
        raise ValueError(f"states and targets must both have shape (B, n) with n >= 1, got "
                         f"{tuple(s.shape)} and {tuple(t.shape)}")
    n = s.shape[1]
    s, t = s.to(torch.float64), t.to(torch.float64)
    if space == "binary":
        for name, x in (("states", s), ("targets", t)):
            if x.numel() and not bool(((x == 0) | (x == 1)).all()):
                raise ValueError(f"{name} must be binary (entries 0 or 1) for space='binary'")
        h = (s != t).sum(-1).to(torch.float64)
        return 1.0 - 2.0 * h / n
    for name, x in (("states", s), ("targets", t)):
        if x.numel() and not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} must have finite entries")
    ns, nt = _unit_norm(s).squeeze(-1), _unit_norm(t).squeeze(-1)
    if bool((ns == 0).any()) or bool((nt == 0).any()):
        raise ValueError("states and targets must be nonzero for space='continuous' (the cosine of "
                         "a zero vector is undefined)")
    return (s * t).sum(-1) / (ns * nt)


def converge(rule: ReadRule, queries: ArrayLike, patterns: ArrayLike | PreparedPatterns,
             max_steps: int = 100, tol: float = 0.05) -> ConvergenceResult:
    """Read each query repeatedly until it stops changing (App. B.7).

    Each step reads every still-active query once. A binary query stops when a read changes no
    bit; a continuous query stops when no component of its (unit-norm) state moves by more than
    ``tol``. Stopped queries are not read again; the others run for at most ``max_steps`` reads.
    A read whose weights are all zero leaves the query unchanged, so such a query stops at once
    (binary rules) or after that read (continuous rules).

    Parameters
    ----------
    rule : ReadRule
        The read rule (:func:`make_read_rule`).
    queries : torch.Tensor or array_like, shape ``(B, n)``
        Initial queries (binary or real, as the rule expects; continuous ones are normalised).
    patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``
        Stored patterns.
    max_steps : int, default 100
        Most reads per query, ``>= 0``.
    tol : float, default 0.05
        Continuous stopping tolerance on each component, ``>= 0`` (ignored by binary rules).

    Returns
    -------
    ConvergenceResult
        ``states``, ``steps``, ``stopped``, ``zero_weights``.

    Raises
    ------
    ValueError
        As :meth:`ReadRule.read`, or if ``max_steps < 0`` or ``tol`` is negative or not finite.

    Notes
    -----
    The authors iterate the whole batch until no query in it changes (``convergence_loop``).
    For deterministic rules the final states are the same; for the neuron-limited rules, whose
    counts are redrawn at every read, stopping per query ends each query at its first unchanged
    read.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (at most 100 steps; tolerance 0.05); the authors'
    ``convergence_loop`` in ``Implementations_Associative_Memory.py`` ([BP21-code]).
    """
    if not isinstance(rule, ReadRule):
        raise ValueError(f"rule must be a ReadRule (see make_read_rule), got {type(rule).__name__}")
    max_steps = _as_int(max_steps, "max_steps")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    try:
        tol = as_real(tol, "tol")  # no booleans, strings, NaN or infinities
    except ValueError:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}") from None
    if tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    prep = rule.prepare(patterns)
    x = rule.prepare_queries(queries).clone()
    b = x.shape[0]
    dev = x.device
    steps = torch.zeros(b, dtype=torch.int64, device=dev)
    zero = torch.zeros(b, dtype=torch.bool, device=dev)
    active = torch.arange(b, device=dev)
    for _ in range(max_steps):
        if active.numel() == 0:
            break
        old = x.index_select(0, active)
        new, emp = rule.step(old, prep)
        if rule.is_binary:
            changed = (new != old).any(-1)
        else:
            changed = ((new - old).abs() > tol).any(-1)
        x.index_copy_(0, active, new)
        steps.index_add_(0, active, torch.ones_like(active))
        zero.index_copy_(0, active, emp)
        active = active[changed]
    stopped = torch.ones(b, dtype=torch.bool, device=dev)
    stopped[active] = False
    return ConvergenceResult(states=x, steps=steps, stopped=stopped, zero_weights=zero)
