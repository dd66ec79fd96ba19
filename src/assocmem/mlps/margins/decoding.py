"""Scores, accuracy and decoding margins of a memory on its own output scale.

A memory ``g`` *stores* a fact set when, for every fact ``i`` and every value row ``j != f(i)``,
``<g(k_i), v_f(i)> > <g(k_i), v_j>`` (seed 001, "MLPs are Hebbians", Sec. 2.1, Definition 2.1);
the *margin* of fact ``i`` is the gap between its target score and its best competitor
(Definition 2.2). This module computes the decoding scores ``S[i, j] = <g(q_i), v_j>``
(:func:`scores`), the per-fact margins of a score matrix or of a model (:func:`score_margins`,
:func:`output_margins`; for an unwhitened Hebbian MLP the kernel-Hebbian margin divided by ``F``)
and the strict-argmax accuracy over every value row (:func:`accuracy`, and
:func:`accuracy_from_outputs` for outputs already computed), in blocks that keep the ``(F, V)``
score matrix in cache. Chapters 10 (Facts, margins and the counting bound) and 13 (How many facts
per parameter?) use it directly, chapter 12 (How margins scale) through the bit-complexity sweep;
the capacity search of :mod:`assocmem.mlps.capacity_sweeps` measures :func:`accuracy`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from assocmem.dtypes import cast_checked
from assocmem.mlps._checks import check_finite_result, module_dtype
from assocmem.mlps.margins._common import _as_f64, _check_mapping, _facts_parts

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from assocmem.mlps.facts import FactSet

__all__ = [
    "scores",
    "score_margins",
    "output_margins",
    "accuracy",
    "accuracy_from_outputs",
]


def scores(model: Callable[[torch.Tensor], torch.Tensor], facts: FactSet, *,
           queries: ArrayLike | None = None) -> torch.Tensor:
    """Decoding scores ``S[i, j] = <model(q_i), v_j>`` against every value row.

    Parameters
    ----------
    model : callable
        Maps a batch ``(F, d)`` to outputs ``(F, d)`` (a :class:`torch.nn.Module` such as a
        ``FactMLP``). Evaluated under :func:`torch.no_grad` on ``facts.keys`` as given (its dtype
        and device); the output is cast to float64.
    facts : FactSet
        ``keys`` ``(F, d)``, ``values`` ``(V, d)``, ``mapping`` ``(F,)``.
    queries : array-like, shape ``(F, d)``, optional
        Queries to read instead of the stored keys (e.g. noisy keys).

    Returns
    -------
    torch.Tensor, shape ``(F, V)``, float64

    Raises
    ------
    ValueError
        A malformed fact set, queries of the wrong shape or not finite real numbers (float16 /
        bfloat16 refused), a model output that is not a finite ``(F, d)`` array, or scores that
        overflow float64.

    References
    ----------
    Seed 001, Definition 2.1 (eq. 1).
    """
    out, values, _ = _model_outputs(model, facts, queries)
    s = out @ values.T  # (F, V)
    if _scores_may_overflow(out, values):
        _check_finite_scores(s)
    return s


def _model_outputs(model, facts, queries):
    """The validated parts of :func:`scores`: ``(outputs (F, d), values (V, d), mapping (F,))``."""
    keys, values, mapping = _facts_parts(facts)
    q = facts.keys if queries is None else queries
    if queries is not None:
        qt = _as_f64(queries, "queries", 2)
        if qt.shape != keys.shape:
            raise ValueError(f"queries must have shape {tuple(keys.shape)}; got {tuple(qt.shape)}")
        q = cast_checked(qt, facts.keys.dtype, "queries").to(facts.keys.device)
    if isinstance(model, torch.nn.Module):  # a module computes in its own dtype and does not cast
        dt = module_dtype(model, q.dtype)
        if dt != q.dtype and dt.is_floating_point:
            q = cast_checked(q, dt, "queries")
    with torch.no_grad():
        out = model(q)
    out = _as_f64(out, "model output", 2).to(values.device)
    if out.shape != keys.shape:
        raise ValueError(
            f"model output must have shape {tuple(keys.shape)}; got {tuple(out.shape)}"
        )
    return out, values, mapping  # (F, d), (V, d), (F,)


def score_margins(score_matrix: ArrayLike, mapping: ArrayLike) -> torch.Tensor:
    """Per-fact margin ``S[i, f(i)] - max_{j != f(i)} S[i, j]`` of a score matrix.

    Parameters
    ----------
    score_matrix : array-like, shape ``(F, V)``
        Scores of every query against every value row; ``V >= 2``.
    mapping : array-like of int, shape ``(F,)``
        Target row of each fact, entries in ``[0, V)``.

    Returns
    -------
    torch.Tensor, shape ``(F,)``, float64
        Positive exactly where fact ``i`` decodes correctly with a strict inequality.

    Raises
    ------
    ValueError
        Wrong ranks or shapes, scores that are not finite real numbers (float16 / bfloat16
        refused), ``V < 2`` (no competitor), a mapping that is not an integer array or out of
        range, or margins that overflow float64 (scores near its largest value).

    References
    ----------
    Seed 001, Definition 2.2 (eq. 2), minimised over competitors.
    """
    s = _as_f64(score_matrix, "score_matrix", 2)
    f = torch.as_tensor(mapping, device=s.device)
    if f.is_floating_point() or f.is_complex() or f.dtype == torch.bool:
        raise ValueError(f"mapping must be an integer array; got {f.dtype}")
    f = f.to(torch.int64)
    F, V = s.shape
    if V < 2:
        raise ValueError(f"a margin needs at least two value rows (a competitor); got V = {V}")
    _check_mapping(f, F, V)
    rows = torch.arange(F, device=s.device)
    target = s[rows, f]  # (F,)
    rivals = s.clone()
    rivals[rows, f] = -math.inf
    return check_finite_result(target - rivals.max(dim=1).values, "the margins")  # (F,)


def output_margins(model: Callable[[torch.Tensor], torch.Tensor], facts: FactSet, *,
                   queries: ArrayLike | None = None) -> torch.Tensor:
    """Per-fact margins of a model on its own output scale (Definition 2.2).

    Parameters
    ----------
    model : callable
        As in :func:`scores`.
    facts : FactSet
    queries : array-like, shape ``(F, d)``, optional
        As in :func:`scores`.

    Returns
    -------
    torch.Tensor, shape ``(F,)``, float64
        ``<g(q_i), v_f(i)> - max_{j != f(i)} <g(q_i), v_j>``. For an unwhitened Hebbian MLP with
        readout ``B0 = C_f^T Phi / F`` this is the kernel-Hebbian margin divided by ``F``.

    Raises
    ------
    ValueError
        As :func:`scores` and :func:`score_margins`.

    References
    ----------
    Seed 001, Definition 2.2; App. B.2.6 (``gamma_min(theta)`` on the output scale).
    """
    return score_margins(scores(model, facts, queries=queries), facts.mapping)


def accuracy(model: Callable[[torch.Tensor], torch.Tensor], facts: FactSet, *,
             queries: ArrayLike | None = None) -> float:
    """Fraction of facts whose argmax over every value row is their target row.

    A fact counts as correct when its target score beats every other value row *strictly*
    (Definition 2.1), i.e. when its :func:`output_margins` entry is positive. This equals
    ``mean(argmax_j S[i, j] == f(i))`` except on exact ties, which count as errors here.

    Parameters
    ----------
    model : callable
        As in :func:`scores`.
    facts : FactSet
    queries : array-like, shape ``(F, d)``, optional

    Returns
    -------
    float
        In ``[0, 1]``; ``1.0`` means the model stores the fact set (``gamma_min > 0``).

    Raises
    ------
    ValueError
        As :func:`scores` and :func:`score_margins`.

    References
    ----------
    Seed 001, Definition 2.1 (a fact is stored when its value beats every other value row).
    """
    return _strict_accuracy(*_model_outputs(model, facts, queries))


def accuracy_from_outputs(outputs: ArrayLike, facts: FactSet) -> float:
    """:func:`accuracy` of precomputed model outputs on the stored keys: strict argmax over every value row.

    Fact ``i`` counts as correct when ``<y_i, v_f(i)> > <y_i, v_j>`` for every value row
    ``j != f(i)``, where ``y_i`` is row ``i`` of ``outputs``. With ``outputs = model(facts.keys)``
    this is :func:`accuracy`; it exists so that a construction that has the features of the
    stored keys already (``hebbian_mlp(..., return_features=True)`` gives ``Phi``) can score
    ``Phi @ model.B.T`` without a second forward pass.

    Parameters
    ----------
    outputs : array-like, shape ``(F, d)``
        Real and finite; row ``i`` is the memory's output for fact ``i`` (any float dtype; read in
        float64).
    facts : FactSet
        ``keys`` ``(F, d)``, ``values`` ``(V, d)`` with ``V >= 2``, ``mapping`` ``(F,)``.

    Returns
    -------
    float
        In ``[0, 1]``; ``1.0`` means every fact decodes (``gamma_min > 0``). Exact ties count as
        errors.

    Raises
    ------
    ValueError
        A malformed fact set; outputs that are not a finite real ``(F, d)`` array; scores that
        overflow float64; ``V < 2`` (no competitor).

    References
    ----------
    Seed 001, Definition 2.1 (eq. 1): the argmax runs over every value row.

    Examples
    --------
    >>> from assocmem.mlps.facts import make_fact_set
    >>> from assocmem.mlps.mlp import hebbian_mlp
    >>> facts = make_fact_set(128, 32, seed=0)
    >>> model, Phi = hebbian_mlp(facts, 100, "full", return_features=True)
    >>> accuracy_from_outputs(Phi @ model.B.T, facts)
    1.0
    """
    keys, values, mapping = _facts_parts(facts)
    out = _as_f64(outputs, "outputs", 2).to(values.device)
    if out.shape != keys.shape:
        raise ValueError(
            f"outputs must have shape {tuple(keys.shape)} (one row per fact, the width of the "
            f"values); got {tuple(out.shape)}"
        )
    return _strict_accuracy(out, values, mapping)


def _scores_may_overflow(outputs: torch.Tensor, values: torch.Tensor) -> bool:
    """Whether ``outputs @ values.T`` of finite ``outputs`` ``(F, d)``, ``values`` ``(V, d)`` may overflow.

    Each score is an inner product, so ``|<y_i, v_j>| <= |y_i| |v_j|`` (Cauchy-Schwarz), and every
    partial sum of the GEMM obeys the same bound up to a factor ``1 + d eps``. Below a quarter of
    the largest float64 no entry can be infinite or NaN, and the ``(F, V)`` score matrix need not be
    scanned; otherwise (or if a norm itself overflows) it must be.
    """
    if outputs.numel() == 0 or values.numel() == 0:
        return False
    bound = torch.linalg.vector_norm(outputs, dim=1).max() * torch.linalg.vector_norm(values, dim=1).max()
    return not bool(bound < torch.finfo(torch.float64).max / 4)


def _strict_accuracy(outputs: torch.Tensor, values: torch.Tensor, mapping: torch.Tensor) -> float:
    """Fraction of facts whose target score beats every other value row strictly.

    ``outputs`` ``(F, d)`` finite float64, ``values`` ``(V, d)``, ``mapping`` ``(F,)`` int64, all
    validated and on one device. The verdict is that of ``score_margins(outputs @ values.T,
    mapping) > 0`` (for finite floats ``a - b > 0`` exactly when ``a > b``), reached without the
    margins: per row, the target score is read, replaced by ``-inf``, and compared with the row
    maximum. On the CPU the scores are computed over row blocks of about 1 MiB in one reused
    workspace, so the ``(F, V)`` matrix never leaves the cache. They are scanned for non-finite
    entries (the error of :func:`score_margins`) only when :func:`_scores_may_overflow` says an
    overflow is possible.
    """
    F, V = outputs.shape[0], values.shape[0]
    scan = _scores_may_overflow(outputs, values)
    if V < 2:
        if scan:
            _check_finite_scores(outputs @ values.T)
        raise ValueError(f"a margin needs at least two value rows (a competitor); got V = {V}")
    dev = outputs.device
    rows = F if dev.type != "cpu" else max(1, min(F, max(16, _BLOCK_ELEMENTS // V)))
    work = torch.empty(rows, V, dtype=torch.float64, device=dev)  # (rows, V) workspace
    hits = torch.empty(F, dtype=torch.bool, device=dev)
    index = torch.arange(rows, device=dev)
    vt = values.T  # (d, V)
    for s in range(0, F, rows):
        e = min(s + rows, F)
        block, r, f = work[: e - s], index[: e - s], mapping[s:e]
        torch.mm(outputs[s:e], vt, out=block)  # (rows, V) scores
        if scan:
            _check_finite_scores(block)
        target = block[r, f]  # (rows,)
        block[r, f] = -math.inf
        torch.gt(target, block.amax(dim=1), out=hits[s:e])
    return float(hits.double().mean())


#: Entries of the score workspace of :func:`_strict_accuracy` (1 MiB of float64).
_BLOCK_ELEMENTS = 1 << 17


def _check_finite_scores(s: torch.Tensor) -> None:
    """The finiteness error of :func:`score_margins`, by one min/max pass (NaN propagates to both)."""
    if s.numel():
        lo, hi = torch.aminmax(s)
        if not (math.isfinite(lo.item()) and math.isfinite(hi.item())):
            raise ValueError("score_matrix must be finite: the scores <y_i, v_j> overflow float64 (largest "
                             "finite value 1.8e+308); rescale the outputs or the values")
