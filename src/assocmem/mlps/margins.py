"""Decoding margins of fact-storing memories, the geometry that bounds them, their theory curves.

A memory ``g`` *stores* a fact set when, for every fact ``i`` and every value row ``j != f(i)``,
``<g(k_i), v_f(i)> > <g(k_i), v_j>`` (seed 001, Definition 2.1); the *margin* of fact ``i`` is the
gap between its target score and its best competitor (Definition 2.2) and ``gamma_min`` is the
smallest margin over facts. This module measures all of it.

* **Scores and accuracy** on the model's own output scale: :func:`scores`, :func:`score_margins`,
  :func:`output_margins`, :func:`accuracy`, and :func:`accuracy_from_outputs` for outputs already
  computed (e.g. from the features a construction computed anyway).
* **Margins on the kernel-Hebbian scale** used by the paper's bounds (App. B.4, eqs. 23-25): with
  the Gram matrix ``K[t, i] = K(k_t, q_i)`` of the stored keys against the queries (``q_i = k_i``
  for clean reads), the Hebbian read is ``y_i = sum_t K[t, i] c_f(t)`` (no ``1/F``) and
  ``gamma_i = <y_i, v_f(i)> - max_{j != f(i)} <y_i, v_j>`` over *every* value row:
  :func:`kernel_gram`, :func:`hebbian_readout`, :func:`fact_margins`, :func:`gamma_min`, and the
  per-pair form :func:`pairwise_margins` with its signal / cross-talk split
  (:func:`signal_crosstalk`, eq. 25).
* **Geometric summary statistics** of App. B.5 (Definitions B.9-B.15) and the truncated ones of
  eq. 34: :func:`k_min_diag`, :func:`k_max_off`, :func:`e_k`, :func:`v_min`, :func:`v_max`,
  :func:`b_y`, :func:`e_v`, :func:`l_v`, :func:`kappa`, all at once in
  :func:`geometry_statistics`; the penalties of Sec. 4.2.2 (used in Cor. B.26):
  :func:`p_key`, :func:`p_val`, :func:`p_align`, :func:`s_sig`, :func:`penalty_statistics`.
* **Theory curves** (eq. 9 / Cor. B.31, eq. 56, the four cells of Table 2, eq. 43, eq. 10 and the
  noisy-query bound eq. 74) and their least-squares **fits** with non-negative constants,
  returning a :class:`TheoryFit` with the constants, ``R^2`` and a callable.
* **Noisy queries** (App. A.4.2, B.10.1): :func:`perturb_queries`, :func:`noisy_fact_margins`
  (mixed Gram ``<phi(k_t), phi(z_i)>``), :func:`query_lipschitz`.
* **Bit complexity** (App. B.2.6): a uniform symmetric quantiser :func:`quantize` and
  :func:`min_bits_for_positive_margin`.

Conventions
-----------
Rows throughout (seed 001): keys ``(F, d)``, values ``(V, d)``, codes ``(V, d)`` with row ``j`` the
code ``c_j`` of value ``j`` (Algorithm 1; default ``c_j = v_j``), so fact ``t`` writes
``c_f(t)``. Gram matrices are ``(F, Q)`` with **column ``i`` the query**, ``gram[t, i] =
K(k_t, q_i)``; for clean reads of a symmetric kernel the orientation does not matter. Everything
is computed in float64.

The statistics of App. B.5 are written for *items* ``t = 1..F`` that each carry their own value
``v_t`` and code ``c_t`` (the paper's identity map). Given a :class:`~assocmem.mlps.facts.FactSet` we
set ``v_t = values[f(t)]`` and ``c_t = codes[f(t)]``, which is exact when ``f`` is a bijection onto
the value table (both the tied capacity tables and the untied margin tables are); other maps are
rejected there, since the competitor ``j`` of the paper is then not one item.

References
----------
Seed 001, "MLPs are Hebbians": Sec. 2.1 (Definitions 2.1, 2.2), Sec. 4 (eqs. 6-10 and the
penalty statistics of Sec. 4.2.2), App. A.3.2 (margin sweeps), A.4.2 (noisy-margin diagnostic),
B.2.6 (bit complexity), B.4 (margin setup, eqs. 23-27), B.5 (Definitions B.9-B.15), B.6-B.8
(cross-talk, signal and margin bounds, eqs. 28-56, Table 2), B.10.1 (noisy margin, eqs. 68-76).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType

import numpy as np
import torch

__all__ = [
    # scores and margins
    "scores",
    "score_margins",
    "output_margins",
    "accuracy",
    "accuracy_from_outputs",
    "gram_from_features",
    "kernel_gram",
    "hebbian_readout",
    "fact_margins",
    "gamma_min",
    "pairwise_margins",
    "signal_crosstalk",
    # geometric statistics (App. B.5) and penalties (Sec. 4.2.2)
    "k_min_diag",
    "k_max_off",
    "e_k",
    "v_min",
    "v_max",
    "b_y",
    "e_v",
    "l_v",
    "kappa",
    "GeometryStatistics",
    "geometry_statistics",
    "p_key",
    "p_val",
    "p_align",
    "s_sig",
    "PenaltyStatistics",
    "penalty_statistics",
    # theory curves and fits
    "log_term",
    "isotropic_bound",
    "isotropic_bound_eq56",
    "arbitrary_keys_bound",
    "arbitrary_values_bound",
    "arbitrary_bound",
    "absorbed_bound",
    "penalty_bound",
    "noisy_margin_bound",
    "THEORY_FORMS",
    "TheoryForm",
    "TheoryFit",
    "fit_theory_curve",
    "covariates_from_statistics",
    "r_squared",
    # noisy queries (App. A.4.2, B.10.1)
    "perturb_queries",
    "noisy_fact_margins",
    "query_lipschitz",
    # bit complexity (App. B.2.6)
    "quantization_step",
    "quantize",
    "quantize_matrices",
    "BitSearch",
    "min_bits_for_positive_margin",
]

#: Multiple of float64 machine epsilon, times the magnitudes that enter a closed-form pair
#: energy, below which that energy is rounding noise and is treated as an exact zero
#: (see :func:`geometry_statistics`).
ROUNDING_FACTOR = 8.0


# --------------------------------------------------------------------------------------------
# Input handling
# --------------------------------------------------------------------------------------------


def _as_f64(x, name: str, ndim: int | None = None) -> torch.Tensor:
    """``x`` (tensor, ndarray or nested list) as a finite float64 tensor of rank ``ndim``."""
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.dtype == torch.bool:
            raise ValueError(f"{name} must be real-valued; got dtype {x.dtype}")
        t = x.detach().to(torch.float64)
    else:
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a real array; got {type(x).__name__}") from exc
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


# --------------------------------------------------------------------------------------------
# Scores, accuracy and margins on the model's output scale (Definitions 2.1, 2.2)
# --------------------------------------------------------------------------------------------


def scores(model: Callable[[torch.Tensor], torch.Tensor], facts, *, queries=None) -> torch.Tensor:
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
        A malformed fact set, queries of the wrong shape, or a model output that is not ``(F, d)``.

    References
    ----------
    Seed 001, Definition 2.1 (eq. 1).
    """
    out, values, _ = _model_outputs(model, facts, queries)
    return out @ values.T  # (F, V)


def _model_outputs(model, facts, queries):
    """The validated parts of :func:`scores`: ``(outputs (F, d), values (V, d), mapping (F,))``."""
    keys, values, mapping = _facts_parts(facts)
    q = facts.keys if queries is None else queries
    if queries is not None:
        qt = _as_f64(queries, "queries", 2)
        if qt.shape != keys.shape:
            raise ValueError(f"queries must have shape {tuple(keys.shape)}; got {tuple(qt.shape)}")
        q = qt.to(device=facts.keys.device, dtype=facts.keys.dtype)
    with torch.no_grad():
        out = model(q)
    out = _as_f64(out, "model output", 2).to(values.device)
    if out.shape != keys.shape:
        raise ValueError(
            f"model output must have shape {tuple(keys.shape)}; got {tuple(out.shape)}"
        )
    return out, values, mapping  # (F, d), (V, d), (F,)


def score_margins(score_matrix, mapping) -> torch.Tensor:
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
        Wrong ranks or shapes, ``V < 2`` (no competitor), or a mapping out of range.

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
    return target - rivals.max(dim=1).values  # (F,)


def output_margins(model: Callable[[torch.Tensor], torch.Tensor], facts, *, queries=None):
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


def accuracy(model: Callable[[torch.Tensor], torch.Tensor], facts, *, queries=None) -> float:
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


def accuracy_from_outputs(outputs, facts) -> float:
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
            raise ValueError("score_matrix must be finite")


# --------------------------------------------------------------------------------------------
# Kernel-Hebbian margins (App. B.4)
# --------------------------------------------------------------------------------------------


def gram_from_features(features, query_features=None) -> torch.Tensor:
    """Gram matrix ``K[t, i] = <phi(k_t), phi(q_i)>`` from feature rows.

    Parameters
    ----------
    features : array-like, shape ``(F, m)``
        ``phi(k_t)`` of the stored keys, one row each.
    query_features : array-like, shape ``(Q, m)``, optional
        ``phi(q_i)`` of the queries; defaults to ``features`` (clean reads).

    Returns
    -------
    torch.Tensor, shape ``(F, Q)``, float64

    Raises
    ------
    ValueError
        Non-2-D input or mismatched feature widths.

    References
    ----------
    Seed 001, App. B.4 ("Stored items and kernel").
    """
    phi = _as_f64(features, "features", 2)
    psi = phi if query_features is None else _as_f64(query_features, "query_features", 2)
    if psi.shape[1] != phi.shape[1]:
        raise ValueError(
            f"features and query_features must share a width m; got {phi.shape[1]}, {psi.shape[1]}"
        )
    return phi @ psi.to(phi.device).T  # (F, Q)


def kernel_gram(source, keys, queries=None) -> torch.Tensor:
    """The Gram matrix ``K[t, i] = K(k_t, q_i)`` of a kernel memory.

    Parameters
    ----------
    source : array-like or model
        Either a Gram matrix ``(F, Q)`` already (returned as float64; ``queries`` must then be
        None), or a model exposing ``features(x) -> (..., m)`` (kernel ``phi(x) . phi(z)``) or
        ``kernel(x, z) -> (n_x, n_z)``. ``features`` wins when both exist.
    keys : array-like, shape ``(F, d)``
        Stored keys ``k_t``.
    queries : array-like, shape ``(Q, d)``, optional
        Queries ``q_i``; defaults to ``keys``. With noisy queries this is the mixed Gram
        ``<phi(k_t), phi(z_i)>`` of App. A.4.2.

    Returns
    -------
    torch.Tensor, shape ``(F, Q)``, float64

    Raises
    ------
    ValueError
        A source that is neither an array nor a model with ``features``/``kernel``, queries given
        with a precomputed Gram, mismatched widths, or a kernel output of the wrong shape.

    References
    ----------
    Seed 001, App. B.4 (Gram matrix ``K_ti = K(k_t, k_i)``), App. A.4.2 (mixed Gram).
    """
    if _is_array(source):
        if queries is not None:
            raise ValueError("queries cannot be combined with a precomputed Gram matrix")
        return _as_f64(source, "gram", 2)
    # models see the keys in their own dtype and device (a float32 model gets float32 keys)
    k = keys if isinstance(keys, torch.Tensor) else _as_f64(keys, "keys", 2)
    if k.dim() != 2:
        raise ValueError(f"keys must be 2-D (F, d); got shape {tuple(k.shape)}")
    q = k if queries is None else queries
    if not isinstance(q, torch.Tensor):
        q = _as_f64(q, "queries", 2).to(device=k.device, dtype=k.dtype)
    if q.dim() != 2 or q.shape[1] != k.shape[1]:
        raise ValueError(f"queries must have shape (Q, {k.shape[1]}); got {tuple(q.shape)}")
    with torch.no_grad():
        if callable(getattr(source, "features", None)):
            phi_k = source.features(k)  # (F, m)
            phi_q = phi_k if queries is None else source.features(q)  # (Q, m)
            return gram_from_features(phi_k, phi_q)
        if callable(getattr(source, "kernel", None)):
            g = _as_f64(source.kernel(k, q), "kernel output", 2)
            if g.shape != (k.shape[0], q.shape[0]):
                raise ValueError(
                    f"kernel(keys, queries) must have shape ({k.shape[0]}, {q.shape[0]}); got "
                    f"{tuple(g.shape)}"
                )
            return g
    raise ValueError(
        "source must be a Gram matrix or a model exposing features(x) or kernel(x, z); got "
        f"{type(source).__name__}"
    )


def hebbian_readout(gram, codes) -> torch.Tensor:
    """Kernel-Hebbian reads ``y_i = sum_t K[t, i] c_t`` (no ``1/F``).

    Parameters
    ----------
    gram : array-like, shape ``(F, Q)``
        ``K[t, i] = K(k_t, q_i)``.
    codes : array-like, shape ``(F, d)``
        The code written by each stored item, ``c_f(t)`` (the rows of ``C_f``).

    Returns
    -------
    torch.Tensor, shape ``(Q, d)``, float64

    Raises
    ------
    ValueError
        Non-2-D input or ``codes`` with a row count other than ``F``.

    References
    ----------
    Seed 001, App. B.4, eq. 23.
    """
    g = _as_f64(gram, "gram", 2)
    c = _as_f64(codes, "codes", 2).to(g.device)
    if c.shape[0] != g.shape[0]:
        raise ValueError(
            f"codes must have {g.shape[0]} rows (one per stored item); got {c.shape[0]}"
        )
    return torch.einsum("tq,td->qd", g, c)  # (Q, d)


def fact_margins(source, facts, *, codes=None, queries=None) -> torch.Tensor:
    """Per-fact margins on the kernel-Hebbian scale the paper's bounds use.

    ``y_i = sum_t K(k_t, q_i) c_f(t)`` and ``gamma_i = <y_i, v_f(i)> - max_{j != f(i)} <y_i, v_j>``
    over every value row (no ``1/F``; ``q_i = k_i`` unless ``queries`` are given).

    Parameters
    ----------
    source : array-like or model
        A square Gram matrix ``(F, F)`` with ``gram[t, i] = K(k_t, q_i)`` (column ``i`` is the
        query of fact ``i``; build one from features with :func:`gram_from_features`), or a model
        exposing ``features`` or ``kernel`` (see :func:`kernel_gram`).
    facts : FactSet
        ``keys`` ``(F, d)``, ``values`` ``(V, d)`` with ``V >= 2``, ``mapping`` ``(F,)``.
    codes : array-like, shape ``(V, d)``, optional
        Code table, row ``j`` the code ``c_j`` written for value ``j`` (Algorithm 1); default the
        value table, ``c_j = v_j``.
    queries : array-like, shape ``(F, d)``, optional
        Per-fact queries (e.g. noisy keys); only with a model source.

    Returns
    -------
    torch.Tensor, shape ``(F,)``, float64

    Raises
    ------
    ValueError
        A non-square Gram or one whose size is not ``F``, a malformed fact set (shape mismatch,
        mapping out of range), ``V < 2``, codes of the wrong shape, or queries with a Gram source.

    References
    ----------
    Seed 001, App. B.4, eqs. 23-24 (the pairwise margin ``gamma_ij = <v_i - v_j, y_i>`` minimised
    over competitors) and eq. 6 (margins on the kernel-Hebbian scale of the bounds, no ``1/F``).
    """
    keys, values, mapping = _facts_parts(facts)
    F = keys.shape[0]
    q = None
    if queries is not None:
        qt = _as_f64(queries, "queries", 2)
        if qt.shape != keys.shape:
            raise ValueError(f"queries must have shape {tuple(keys.shape)}; got {tuple(qt.shape)}")
        q = qt.to(device=facts.keys.device, dtype=facts.keys.dtype)
    g = kernel_gram(source, facts.keys, q).to(keys.device)
    if g.shape[0] != g.shape[1]:
        raise ValueError(f"the Gram matrix must be square (F, F); got {tuple(g.shape)}")
    if g.shape[0] != F:
        raise ValueError(
            f"the Gram matrix must be ({F}, {F}) for F = {F} facts; got {tuple(g.shape)}"
        )
    c = _codes_table(codes, values)
    y = hebbian_readout(g, c[mapping])  # (F, d)
    return score_margins(y @ values.T, mapping)  # (F,)


def gamma_min(source, facts, *, codes=None, queries=None) -> float:
    """Minimum kernel-Hebbian margin ``gamma_min = min_i gamma_i`` (see :func:`fact_margins`).

    Parameters
    ----------
    source, facts, codes, queries
        As in :func:`fact_margins`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`fact_margins`.

    References
    ----------
    Seed 001, Definition 2.2; App. B.4 (``gamma_min := min_{i != j} gamma_ij``).
    """
    return float(fact_margins(source, facts, codes=codes, queries=queries).min())


def _item_tables(gram, values, codes) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Validated (gram (F, F), per-item values (F, d), per-item codes (F, d))."""
    g = _as_f64(gram, "gram", 2)
    if g.shape[0] != g.shape[1]:
        raise ValueError(f"the Gram matrix must be square (F, F); got {tuple(g.shape)}")
    v = _as_f64(values, "values", 2).to(g.device)
    c = v if codes is None else _as_f64(codes, "codes", 2).to(g.device)
    if v.shape[0] != g.shape[0]:
        raise ValueError(
            f"values must have one row per stored item, ({g.shape[0]}, d); got {tuple(v.shape)}"
        )
    if c.shape != v.shape:
        raise ValueError(
            f"codes must have the shape of values {tuple(v.shape)}; got {tuple(c.shape)}"
        )
    return g, v, c


def pairwise_margins(gram, values, codes=None) -> torch.Tensor:
    """Pairwise margins ``gamma_ij = <v_i - v_j, y_i>`` of the paper's item-indexed setup.

    Parameters
    ----------
    gram : array-like, shape ``(F, F)``
        ``K[t, i] = K(k_t, k_i)``.
    values : array-like, shape ``(F, d)``
        Value ``v_t`` of item ``t`` (for a FactSet with a bijective map: ``values[mapping]``).
    codes : array-like, shape ``(F, d)``, optional
        Code ``c_t`` of item ``t``; default ``values``.

    Returns
    -------
    torch.Tensor, shape ``(F, F)``, float64
        Entry ``[i, j]`` is ``gamma_ij``; the diagonal (no competitor) is ``+inf``.

    Raises
    ------
    ValueError
        A non-square Gram or mismatched shapes.

    References
    ----------
    Seed 001, App. B.4, eqs. 23-24.
    """
    g, v, c = _item_tables(gram, values, codes)
    s = hebbian_readout(g, c) @ v.T  # (F, F): s[i, j] = <y_i, v_j>
    out = s.diagonal()[:, None] - s
    out.fill_diagonal_(math.inf)
    return out


def signal_crosstalk(gram, values, codes=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Signal and cross-talk parts of ``gamma_ij`` (eq. 25; competitor kept in the cross-talk).

    ``signal_ij = K_ii <v_i - v_j, c_i>`` and ``crosstalk_ij = sum_{t != i} K_ti <v_i - v_j, c_t>``,
    so that ``gamma_ij = signal_ij + crosstalk_ij``.

    Parameters
    ----------
    gram, values, codes
        As in :func:`pairwise_margins`.

    Returns
    -------
    (torch.Tensor, torch.Tensor), each of shape ``(F, F)``, float64
        Diagonals are zero.

    Raises
    ------
    ValueError
        As :func:`pairwise_margins`.

    References
    ----------
    Seed 001, eq. 6 and App. B.4, eq. 25.
    """
    g, v, c = _item_tables(gram, values, codes)
    t = _pair_terms(g, v, c)
    signal = g.diagonal()[:, None] * t["a"]
    signal.fill_diagonal_(0.0)
    cross = t["z"].clone()
    cross.fill_diagonal_(0.0)
    return signal, cross


# --------------------------------------------------------------------------------------------
# Geometric summary statistics (App. B.5) and the truncated ones (eq. 34)
# --------------------------------------------------------------------------------------------


def _pair_terms(g: torch.Tensor, v: torch.Tensor, c: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every pairwise quantity of App. B.5-B.6 in closed form, indexed ``[i, j]``.

    With ``P[a, t] = <v_a, c_t>`` the value-difference inner products are
    ``Y^{(ij)}_t = <v_i - v_j, c_t> = P[i, t] - P[j, t]``; sums over ``t`` expand into matrix
    products, and the excluded terms ``t = i`` and ``t = j`` are ``a_ij = P[i, i] - P[j, i]`` and
    ``b_ij = P[i, j] - P[j, j]``. Energies obtained by subtraction carry a rounding error of order
    ``eps * F * (n_i + n_j)`` (``n_a = sum_t P[a, t]^2``); below ``ROUNDING_FACTOR`` times that
    they are set to exactly 0. Tested against direct loops in tests/test_margins.py.
    """
    F = g.shape[0]
    eps = torch.finfo(torch.float64).eps
    P = v @ c.T  # (F, F): P[a, t] = <v_a, c_t>
    n2 = (P * P).sum(1)  # (F,)  sum_t P[a, t]^2
    r1 = P.sum(1)  # (F,)  sum_t P[a, t]
    dP = P.diagonal()  # (F,)  P[a, a]
    a = dP[:, None] - P.T  # (F, F) <v_i - v_j, c_i>
    b = P - dP[None, :]  # (F, F) <v_i - v_j, c_j>
    full2 = torch.cdist(P, P, p=2.0, compute_mode="donot_use_mm_for_euclid_dist") ** 2
    full1 = r1[:, None] - r1[None, :]  # sum_t <v_i - v_j, c_t>
    v_floor = ROUNDING_FACTOR * F * eps * (n2[:, None] + n2[None, :])
    e_v_ij = full2 - a * a  # sum_{t != i} <v_i - v_j, c_t>^2          (Def. B.13, B.15)
    e_v_tilde = e_v_ij - b * b  # sum_{t not in {i, j}} (...)^2         (eq. 32)
    e_v_ij = torch.where(e_v_ij <= v_floor, torch.zeros_like(e_v_ij), e_v_ij)
    e_v_tilde = torch.where(e_v_tilde <= v_floor, torch.zeros_like(e_v_tilde), e_v_tilde)
    if F == 2:
        e_v_tilde = torch.zeros_like(e_v_tilde)  # empty sum
    sum_y = full1 - a - b  # <1, Y^{(ij)}>                              (Def. B.12)
    # kernel side: column i of the Gram is the query of item i
    off = g.masked_fill(torch.eye(F, dtype=torch.bool, device=g.device), 0.0)
    e_k_i = (off * off).sum(0)  # (F,) sum_{t != i} K_ti^2, no subtraction   (Def. B.10)
    e_k_tilde = e_k_i[:, None] - g.T * g.T  # sum_{t not in {i, j}} K_ti^2   (eq. 32)
    k_floor = ROUNDING_FACTOR * eps * e_k_i[:, None]
    e_k_tilde = torch.where(e_k_tilde <= k_floor, torch.zeros_like(e_k_tilde), e_k_tilde)
    if F == 2:
        e_k_tilde = torch.zeros_like(e_k_tilde)
    Q = P @ g  # (F, F): Q[a, i] = sum_t P[a, t] K_ti
    dg = g.diagonal()
    z = Q.diagonal()[:, None] - Q.T - dg[:, None] * a  # sum_{t != i} K_ti <v_i - v_j, c_t>
    z_tilde = z - g.T * b  # sum_{t not in {i,j}} K_ti <v_i - v_j, c_t>  (eq. 30)
    return {
        "P": P,
        "a": a,
        "b": b,
        "e_v_ij": e_v_ij,
        "e_v_tilde": e_v_tilde,
        "sum_y": sum_y,
        "e_k_i": e_k_i,
        "e_k_tilde": e_k_tilde,
        "z": z,
        "z_tilde": z_tilde,
    }


def _l_v_from_terms(t: dict[str, torch.Tensor]) -> float:
    """``L_v`` from the pair terms: ``||Y^{(ij)}||_1`` is the L1 distance between rows ``i`` and
    ``j`` of ``P`` minus the two excluded terms, ``||Y^{(ij)}||_2^2 = E~_v(i, j)``."""
    P = t["P"]
    F = P.shape[0]
    l1 = (torch.cdist(P, P, p=1.0) - t["a"].abs() - t["b"].abs()).clamp_min(0.0)
    l2 = t["e_v_tilde"]
    safe = torch.where(l2 > 0, l2, torch.ones_like(l2))
    ratio = torch.where(l2 > 0, l1 * l1 / safe, torch.ones_like(l2))
    ratio = ratio.clamp(1.0, max(F - 2, 1))  # the range of Definition B.14 (Cauchy-Schwarz)
    return float(ratio[_offdiag_mask(F, P.device)].max())


def _ratio(num: torch.Tensor, den2: torch.Tensor) -> torch.Tensor:
    """``|num| / sqrt(den2)``, and 0 where ``den2 == 0`` (the convention of eq. 33)."""
    den = den2.sqrt()
    safe = torch.where(den > 0, den, torch.ones_like(den))
    return torch.where(den > 0, num.abs() / safe, torch.zeros_like(den))


def _offdiag_mask(F: int, device) -> torch.Tensor:
    return ~torch.eye(F, dtype=torch.bool, device=device)


def _need_pairs(F: int, what: str) -> None:
    if F < 2:
        raise ValueError(f"{what} is defined over pairs i != j and needs F >= 2 items; got F = {F}")


def k_min_diag(gram) -> float:
    """``K_min^diag = min_i K_ii``, the smallest kernel self-similarity.

    Parameters
    ----------
    gram : array-like, shape ``(F, F)``
        ``K_ti = K(k_t, k_i)``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A non-square or non-finite Gram.

    References
    ----------
    Seed 001, App. B.5, Definition B.9.
    """
    g = _square_gram(gram)
    return float(g.diagonal().min())


def k_max_off(gram) -> float:
    """``K_max^off = max_{i != j} |K_ij|``, the largest off-diagonal kernel entry in magnitude.

    Parameters
    ----------
    gram : array-like, shape ``(F, F)``, ``F >= 2``

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A non-square Gram or ``F < 2``.

    References
    ----------
    Seed 001, App. B.5, Definition B.9.
    """
    g = _square_gram(gram)
    _need_pairs(g.shape[0], "K_max^off")
    return float(g.abs()[_offdiag_mask(g.shape[0], g.device)].max())


def e_k(gram) -> float:
    """``E_K = max_i sum_{t != i} K_ti^2``, the worst off-diagonal kernel-column energy.

    Parameters
    ----------
    gram : array-like, shape ``(F, F)``
        Column ``i`` holds ``K(k_t, k_i)`` for the query of item ``i``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A non-square Gram.

    References
    ----------
    Seed 001, App. B.5, Definition B.10 (also eq. 15 and Sec. 4.2.2, ``E_K = max_i ||K_i||^2``).
    """
    g = _square_gram(gram)
    off = g.masked_fill(torch.eye(g.shape[0], dtype=torch.bool, device=g.device), 0.0)
    return float((off * off).sum(0).max())  # (F,) column energies without the diagonal


def _square_gram(gram) -> torch.Tensor:
    g = _as_f64(gram, "gram", 2)
    if g.shape[0] != g.shape[1]:
        raise ValueError(f"the Gram matrix must be square (F, F); got {tuple(g.shape)}")
    return g


def _values_codes(values, codes) -> tuple[torch.Tensor, torch.Tensor]:
    v = _as_f64(values, "values", 2)
    c = v if codes is None else _as_f64(codes, "codes", 2).to(v.device)
    if c.shape != v.shape:
        raise ValueError(
            f"codes must have the shape of values {tuple(v.shape)}; got {tuple(c.shape)}"
        )
    return v, c


def v_min(values) -> float:
    """``V_min = min_{i != j} <v_i - v_j, v_i>``, the signal-side value separability floor.

    Parameters
    ----------
    values : array-like, shape ``(F, d)``, ``F >= 2``
        Value ``v_t`` of each stored item.

    Returns
    -------
    float
        ``1 - max_{i != j} <v_i, v_j>`` for unit values (then ``>= 0``, eq. 40).

    Raises
    ------
    ValueError
        Non-2-D values or ``F < 2``.

    References
    ----------
    Seed 001, App. B.5, Definition B.11; eq. 39.
    """
    v = _as_f64(values, "values", 2)
    _need_pairs(v.shape[0], "V_min")
    w = v @ v.T
    vij = w.diagonal()[:, None] - w  # <v_i, v_i> - <v_j, v_i>
    return float(vij[_offdiag_mask(v.shape[0], v.device)].min())


def v_max(values) -> float:
    """``V_max = max_{i != j} |<v_i - v_j, v_j>|``, the cross-talk-side value interaction ceiling.

    Parameters
    ----------
    values : array-like, shape ``(F, d)``, ``F >= 2``

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Non-2-D values or ``F < 2``.

    References
    ----------
    Seed 001, App. B.5, Definition B.11; eq. 39 (``B_ij``).
    """
    v = _as_f64(values, "values", 2)
    _need_pairs(v.shape[0], "V_max")
    w = v @ v.T
    bij = w - w.diagonal()[None, :]  # <v_i, v_j> - <v_j, v_j>
    return float(bij.abs()[_offdiag_mask(v.shape[0], v.device)].max())


def b_y(values, codes=None) -> float:
    """``B_Y = max_{i != j} |sum_{t not in {i, j}} <v_i - v_j, c_t>|``, mean competitor alignment.

    Parameters
    ----------
    values : array-like, shape ``(F, d)``, ``F >= 2``
        Value ``v_t`` of each stored item.
    codes : array-like, shape ``(F, d)``, optional
        Code ``c_t`` of each item; default ``values``.

    Returns
    -------
    float
        ``0`` when ``F = 2`` (empty sum).

    Raises
    ------
    ValueError
        Mismatched shapes or ``F < 2``.

    References
    ----------
    Seed 001, App. B.5, Definition B.12 (``max_{i != j} |<1, Y^{(ij)}>|``, eq. 29).
    """
    v, c = _values_codes(values, codes)
    _need_pairs(v.shape[0], "B_Y")
    t = _pair_terms(torch.zeros(v.shape[0], v.shape[0], dtype=torch.float64, device=v.device), v, c)
    return float(t["sum_y"].abs()[_offdiag_mask(v.shape[0], v.device)].max())


def e_v(values, codes=None) -> float:
    """``E_v = max_i max_{j != i} sum_{t != i} <v_i - v_j, c_t>^2``, value-difference energy.

    The sum keeps the competitor ``t = j`` (the untruncated statistic; compare eq. 34's
    ``E~_v`` over ``t not in {i, j}``).

    Parameters
    ----------
    values : array-like, shape ``(F, d)``, ``F >= 2``
    codes : array-like, shape ``(F, d)``, optional
        Default ``values``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Mismatched shapes or ``F < 2``.

    References
    ----------
    Seed 001, App. B.5, Definition B.13.
    """
    v, c = _values_codes(values, codes)
    _need_pairs(v.shape[0], "E_v")
    t = _pair_terms(torch.zeros(v.shape[0], v.shape[0], dtype=torch.float64, device=v.device), v, c)
    return float(t["e_v_ij"][_offdiag_mask(v.shape[0], v.device)].max())


def l_v(values, codes=None) -> float:
    """``L_v = max_{i != j} ||Y^{(ij)}||_1^2 / ||Y^{(ij)}||_2^2``, the value sparsity.

    ``Y^{(ij)} = (<v_i - v_j, c_t>)_{t not in {i, j}}`` (eq. 29). ``L_v`` lies in ``[1, F - 2]``:
    1 when one coordinate carries all the energy, ``F - 2`` when it is spread evenly. A zero
    ``Y^{(ij)}`` (or ``F = 2``) contributes 1, the convention of the proof of Theorem B.29;
    ``||Y^{(ij)}||_2^2`` at rounding level counts as zero (see :func:`geometry_statistics`).

    Parameters
    ----------
    values : array-like, shape ``(F, d)``, ``F >= 2``
    codes : array-like, shape ``(F, d)``, optional
        Default ``values``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Mismatched shapes or ``F < 2``.

    Notes
    -----
    ``O(F^2 (F + d))`` time and ``O(F^2)`` memory: the L1 norms come from
    :func:`torch.cdist` with ``p = 1`` between the rows of ``P[a, t] = <v_a, c_t>``.

    References
    ----------
    Seed 001, App. B.5, Definition B.14.
    """
    v, c = _values_codes(values, codes)
    _need_pairs(v.shape[0], "L_v")
    zeros = torch.zeros(v.shape[0], v.shape[0], dtype=torch.float64, device=v.device)
    return _l_v_from_terms(_pair_terms(zeros, v, c))


def kappa(gram, values, codes=None) -> float:
    """Coupling factor ``kappa = max_i max_{j != i} kappa^{ij}``.

    ``kappa^{ij} = |sum_{t != i} K_ti <v_i - v_j, c_t>| / (sqrt(E_K(i)) sqrt(E_v(i, j)))`` with
    ``E_K(i) = sum_{t != i} K_ti^2`` and ``E_v(i, j) = sum_{t != i} <v_i - v_j, c_t>^2``: the cosine
    between the off-diagonal kernel column of ``i`` and the value-interference vector of ``(i, j)``.
    A pair with a zero energy contributes 0 (the convention of eq. 33).

    Parameters
    ----------
    gram : array-like, shape ``(F, F)``
        ``K_ti = K(k_t, k_i)``.
    values : array-like, shape ``(F, d)``
    codes : array-like, shape ``(F, d)``, optional
        Default ``values``.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        A non-square Gram, mismatched shapes, or ``F < 2``.

    References
    ----------
    Seed 001, App. B.5, Definition B.15 (and Sec. 4.2.2, ``max |cos angle(K_i, V_ij)|``).
    """
    g, v, c = _item_tables(gram, values, codes)
    _need_pairs(g.shape[0], "kappa")
    t = _pair_terms(g, v, c)
    k = _ratio(t["z"], t["e_k_i"][:, None] * t["e_v_ij"]).clamp(max=1.0)
    return float(k[_offdiag_mask(g.shape[0], g.device)].max())


@dataclass(frozen=True)
class GeometryStatistics:
    """The geometric summary statistics of App. B.5 (and the truncated ones of eq. 34).

    Every field is a Python float except the sizes.
    """

    num_facts: int  # F, number of stored items
    dim: int  # d, embedding width
    k_min_diag: float  # K_min^diag = min_i K_ii                                  (Def. B.9)
    k_max_off: float  # K_max^off = max_{i != j} |K_ij|                           (Def. B.9)
    e_k: float  # E_K = max_i sum_{t != i} K_ti^2                                  (Def. B.10)
    v_min: float  # V_min = min_{i != j} <v_i - v_j, v_i>                          (Def. B.11)
    v_max: float  # V_max = max_{i != j} |<v_i - v_j, v_j>|                        (Def. B.11)
    b_y: float  # B_Y = max_{i != j} |sum_{t not in {i,j}} <v_i - v_j, c_t>|      (Def. B.12)
    e_v: float  # E_v = max_i max_{j != i} sum_{t != i} <v_i - v_j, c_t>^2         (Def. B.13)
    l_v: float  # L_v = max_{i != j} ||Y^(ij)||_1^2 / ||Y^(ij)||_2^2             (Def. B.14)
    kappa: float  # max_{i, j != i} kappa^{ij}                                      (Def. B.15)
    e_k_tilde: float  # E~_K = max_{i != j} sum_{t not in {i,j}} K_ti^2             (eq. 34)
    e_v_tilde: float  # E~_v = max_{i != j} sum_{t not in {i,j}} <v_i - v_j, c_t>^2 (eq. 34)
    kappa_tilde: float  # max_{i != j} |<X^(ij), Y^(ij)>| / (||X^(ij)|| ||Y^(ij)||)  (eq. 33-34)

    def as_dict(self) -> dict[str, float]:
        """The fields as a plain dict (for tables)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def geometry_statistics(
    source,
    facts_or_values,
    *,
    codes=None,
) -> GeometryStatistics:
    """Every geometric summary statistic of App. B.5 in one pass.

    Parameters
    ----------
    source : array-like or model
        A square Gram ``(F, F)``, ``gram[t, i] = K(k_t, k_i)``, or a model exposing ``features`` or
        ``kernel`` (then ``facts_or_values`` must be a FactSet, whose keys are used).
    facts_or_values : FactSet or array-like of shape ``(F, d)``
        A fact set whose map is a bijection onto its value table (``V = F``; the item values are
        ``v_t = values[f(t)]``), or the item values directly.
    codes : array-like, optional
        With a FactSet: the code table ``(V, d)`` (item codes ``c_t = codes[f(t)]``). With item
        values: the item codes ``(F, d)``. Default: the values (``c_t = v_t``, the paper's
        default in App. B.4).

    Returns
    -------
    GeometryStatistics

    Raises
    ------
    ValueError
        A non-square Gram, a Gram whose size differs from ``F``, shape mismatches, ``F < 2``, a
        model source without a FactSet, or a FactSet whose map is not a bijection onto ``V = F``
        value rows.

    Notes
    -----
    The pair sums are evaluated in closed form from ``P[a, t] = <v_a, c_t>`` and the Gram (see
    the source of ``_pair_terms``), in ``O(F^2 (F + d))`` time and ``O(F^2)`` memory. A value-side
    energy below ``ROUNDING_FACTOR * F * eps * (n_i + n_j)`` (``n_a = sum_t P[a, t]^2``, ``eps`` the
    float64 epsilon) or a truncated kernel energy below ``ROUNDING_FACTOR * eps * E_K(i)`` is
    rounding noise of the subtraction that produced it and is set to exactly 0, so that a
    vanishing ``Y^{(ij)}`` (orthonormal values, say) gets the conventions ``kappa~ = 0`` and
    ``L_v = 1`` instead of a ratio of two rounding errors.

    References
    ----------
    Seed 001, App. B.5, Definitions B.9-B.15; App. B.6, eqs. 32-34 (truncated statistics).
    """
    if hasattr(facts_or_values, "mapping"):
        keys, values, mapping = _facts_parts(facts_or_values)
        F, V = keys.shape[0], values.shape[0]
        if V != F or torch.unique(mapping).numel() != F:
            raise ValueError(
                "the statistics of App. B.5 need one distinct value row per stored item: the map "
                f"must be a bijection onto V = F rows (got F = {F}, V = {V}, "
                f"{torch.unique(mapping).numel()} distinct targets)"
            )
        v = values[mapping]  # (F, d) item values
        c = _codes_table(codes, values)[mapping]  # (F, d) item codes
        g = kernel_gram(source, facts_or_values.keys)
    else:
        if not _is_array(source):
            raise ValueError("a model source needs a FactSet (its keys give the Gram matrix)")
        g, v, c = _item_tables(source, facts_or_values, codes)
    g, v, c = _item_tables(g, v, c)
    F = g.shape[0]
    _need_pairs(F, "the geometric statistics")
    off = _offdiag_mask(F, g.device)
    t = _pair_terms(g, v, c)
    w = v @ v.T
    vij = w.diagonal()[:, None] - w  # <v_i - v_j, v_i>
    bij = w - w.diagonal()[None, :]  # <v_i - v_j, v_j>
    kap = _ratio(t["z"], t["e_k_i"][:, None] * t["e_v_ij"]).clamp(max=1.0)
    kap_t = _ratio(t["z_tilde"], t["e_k_tilde"] * t["e_v_tilde"]).clamp(max=1.0)
    return GeometryStatistics(
        num_facts=F,
        dim=v.shape[1],
        k_min_diag=float(g.diagonal().min()),
        k_max_off=float(g.abs()[off].max()),
        e_k=float(t["e_k_i"].max()),
        v_min=float(vij[off].min()),
        v_max=float(bij.abs()[off].max()),
        b_y=float(t["sum_y"].abs()[off].max()),
        e_v=float(t["e_v_ij"][off].max()),
        l_v=_l_v_from_terms(t),
        kappa=float(kap[off].max()),
        e_k_tilde=float(t["e_k_tilde"][off].max()),
        e_v_tilde=float(t["e_v_tilde"][off].max()),
        kappa_tilde=float(kap_t[off].max()),
    )


# --------------------------------------------------------------------------------------------
# Penalty statistics (Sec. 4.2.2; used in Corollaries B.26-B.27)
# --------------------------------------------------------------------------------------------


def _pos_number(name: str, x, minimum: float = 0.0, strict: bool = True) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {x!r}")
    x = float(x)
    if not math.isfinite(x) or (x <= minimum if strict else x < minimum):
        op = ">" if strict else ">="
        raise ValueError(f"{name} must be finite and {op} {minimum:g}; got {x!r}")
    return x


def p_key(e_k_value: float, num_facts: int, width: int) -> float:
    """Key-crowding penalty ``P_key = sqrt(E_K) / sqrt(F / m)``.

    Parameters
    ----------
    e_k_value : float
        ``E_K`` (Definition B.10), ``>= 0``.
    num_facts : int
        ``F >= 1``.
    width : int
        Feature width ``m >= 1`` (the isotropic baseline of ``sqrt(E_K)`` is ``sqrt(F / m)``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Negative ``E_K`` or non-positive ``F`` or ``m``.

    References
    ----------
    Seed 001, Sec. 4.2.2 (Theorem 4.3, "key crowding penalty"); Corollary B.26.
    """
    e = _pos_number("E_K", e_k_value, strict=False)
    F = _pos_number("num_facts", num_facts)
    m = _pos_number("width", width)
    return math.sqrt(e) / math.sqrt(F / m)


def p_val(e_v_value: float, num_facts: int, dim: int) -> float:
    """Value-crowding penalty ``P_val = sqrt(E_v) / sqrt(F / d)``.

    Parameters
    ----------
    e_v_value : float
        ``E_v`` (Definition B.13), ``>= 0``.
    num_facts : int
        ``F >= 1``.
    dim : int
        Embedding width ``d >= 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Negative ``E_v`` or non-positive ``F`` or ``d``.

    References
    ----------
    Seed 001, Sec. 4.2.2 ("value crowding penalty"); Corollary B.26.
    """
    e = _pos_number("E_v", e_v_value, strict=False)
    F = _pos_number("num_facts", num_facts)
    d = _pos_number("dim", dim)
    return math.sqrt(e) / math.sqrt(F / d)


def p_align(kappa_value: float, num_facts: int) -> float:
    """Key-value alignment penalty ``P_align = kappa / sqrt(log(F) / F)``.

    Parameters
    ----------
    kappa_value : float
        ``kappa`` (Definition B.15), in ``[0, 1]``.
    num_facts : int
        ``F >= 2`` (``log 1 = 0`` leaves the baseline undefined).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``kappa`` outside ``[0, 1]`` or ``F < 2``.

    References
    ----------
    Seed 001, Sec. 4.2.2 ("key-value alignment penalty"); Corollary B.26.
    """
    k = _pos_number("kappa", kappa_value, strict=False)
    if k > 1.0 + 1e-12:
        raise ValueError(f"kappa must lie in [0, 1]; got {k!r}")
    F = _pos_number("num_facts", num_facts)
    if F < 2:
        raise ValueError(f"P_align needs F >= 2; got {num_facts!r}")
    return k / math.sqrt(math.log(F) / F)


def s_sig(k_min_diag_value: float, v_min_value: float, num_facts: int, dim: int) -> float:
    """Signal strength ``S_sig = K_min^diag V_min / (1 - sqrt(log(F) / d))``.

    Parameters
    ----------
    k_min_diag_value : float
        ``K_min^diag`` (Definition B.9).
    v_min_value : float
        ``V_min`` (Definition B.11).
    num_facts : int
        ``F >= 1``.
    dim : int
        ``d``, with ``d > log F`` so that the baseline ``1 - sqrt(log(F)/d)`` is positive
        (Corollary B.26 assumes ``d >= 4 log F``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Non-finite statistics, ``F < 1``, or ``d <= log F``.

    References
    ----------
    Seed 001, Sec. 4.2.2 ("signal strength"); Corollary B.26 (``K_min^diag V_min = (1 -
    sqrt(log(F)/d)) S_sig``).
    """
    kd = float(k_min_diag_value)
    vm = float(v_min_value)
    if not (math.isfinite(kd) and math.isfinite(vm)):
        raise ValueError("K_min^diag and V_min must be finite")
    F = _pos_number("num_facts", num_facts)
    d = _pos_number("dim", dim)
    base = 1.0 - math.sqrt(math.log(F) / d)
    if base <= 0:
        raise ValueError(f"S_sig needs d > log F; got d = {d:g}, log F = {math.log(F):.3g}")
    return kd * vm / base


@dataclass(frozen=True)
class PenaltyStatistics:
    """The four embedding-geometric statistics of Theorem 4.3 / Corollary B.26."""

    p_key: float  # sqrt(E_K) / sqrt(F/m), key crowding
    p_val: float  # sqrt(E_v) / sqrt(F/d), value crowding
    p_align: float  # kappa / sqrt(log F / F), key-value alignment
    s_sig: float  # K_min^diag V_min / (1 - sqrt(log F / d)), signal strength


def penalty_statistics(stats: GeometryStatistics, width: int) -> PenaltyStatistics:
    """The penalties ``P_key, P_val, P_align, S_sig`` from a :class:`GeometryStatistics`.

    By construction ``P_key P_val P_align sqrt(F log F / (m d)) = sqrt(E_K) sqrt(E_v) kappa``
    exactly (proof of Corollary B.26).

    Parameters
    ----------
    stats : GeometryStatistics
    width : int
        Feature width ``m`` of the memory.

    Returns
    -------
    PenaltyStatistics

    Raises
    ------
    ValueError
        As :func:`p_key`, :func:`p_val`, :func:`p_align`, :func:`s_sig`.

    References
    ----------
    Seed 001, Sec. 4.2.2; Corollary B.26.
    """
    F, d = stats.num_facts, stats.dim
    return PenaltyStatistics(
        p_key=p_key(stats.e_k, F, width),
        p_val=p_val(stats.e_v, F, d),
        p_align=p_align(stats.kappa, F),
        s_sig=s_sig(stats.k_min_diag, stats.v_min, F, d),
    )


# --------------------------------------------------------------------------------------------
# Theory curves (eq. 9, eq. 56, Table 2, eq. 43, eq. 10, eq. 74)
# --------------------------------------------------------------------------------------------


def _arr(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def _out(x: np.ndarray):
    return float(x) if np.ndim(x) == 0 else x


def _positive_arr(x, name: str) -> np.ndarray:
    a = _arr(x, name)
    if np.any(a <= 0):
        raise ValueError(f"{name} must be positive")
    return a


def log_term(F, C_L: float = 1.0, delta: float = 0.5):
    """The logarithm ``L = log(C_L F^2 / delta)`` of the margin bounds, floored at 0.

    Parameters
    ----------
    F : array-like
        Number of facts, ``> 0``.
    C_L : float, default 1.0
        The absolute constant ``C_0`` of the theorems, ``>= 0``.
    delta : float, default 0.5
        Failure probability in ``(0, 1)``; the book fixes 0.5 for the fitted curves (a convention:
        with ``C_L`` fitted, only ``C_L / delta`` is identified).

    Returns
    -------
    float or ndarray
        ``log(max(C_L F^2 / delta, 1))``: the floor keeps ``L >= 0`` (and the square roots real)
        for any non-negative ``C_L``.

    Raises
    ------
    ValueError
        Non-positive ``F``, negative ``C_L`` or ``delta`` outside ``(0, 1)``.

    References
    ----------
    Seed 001, Theorems B.17-B.30 (``L := log(C_0 F^2 / delta)``).
    """
    F = _positive_arr(F, "F")
    if not (C_L >= 0 and math.isfinite(C_L)):
        raise ValueError(f"C_L must be finite and >= 0; got {C_L!r}")
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}")
    return _out(np.log(np.maximum(C_L * F * F / delta, 1.0)))


def isotropic_bound(F, m, d, *, C_s=1.0, C_x=1.0, C_L=1.0, delta=0.5):
    """Isotropic margin curve ``C_s - C_x sqrt(F L / (m d))``, ``L = log(C_L F^2 / delta)``.

    Parameters
    ----------
    F, m, d : array-like
        Facts, feature width and embedding width (broadcast together; all ``> 0``).
    C_s : float, default 1.0
        Signal level (1 in the theorem; fitted because the empirical ``gamma_min`` at small ``F``
        sits near 0.5).
    C_x : float, default 1.0
        Cross-talk constant ``C``.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-positive sizes or invalid constants.

    References
    ----------
    Seed 001, eq. 9 (Theorem 4.1), Corollary B.31, Table 2 (random keys, random values), in the
    form fitted in Sec. 4.2.
    """
    m_, d_ = _positive_arr(m, "m"), _positive_arr(d, "d")
    L = np.asarray(log_term(F, C_L, delta))
    F_ = _arr(F, "F")
    return _out(C_s - C_x * np.sqrt(F_ * L / (m_ * d_)))


def isotropic_bound_eq56(
    F, m, d, *, C_s=1.0, C_1=1.0, C_2=1.0, C_3=1.0, C_4=1.0, C_L=1.0, delta=0.5
):
    """Full isotropic bound of Theorem B.30 with a signal level ``C_s``.

    ``C_s - C_1 sqrt(L/m) - C_2 sqrt(L/(d-1)) - C_3 sqrt(L) sqrt(F/d^3)
    - C_4 sqrt(L) sqrt(F/(m d))``; the theorem has ``C_s = 1`` and ``eps_v = C_2 sqrt(L/(d-1))``.

    Parameters
    ----------
    F, m, d : array-like
        Broadcast together; ``F, m > 0`` and ``d > 1``.
    C_s, C_1, C_2, C_3, C_4 : float
        Signal level and the four absolute constants of eq. 56.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-positive sizes, ``d <= 1``, or invalid constants.

    Notes
    -----
    Along a sweep of one size the terms that do not involve it are constant and only their sum
    is identifiable; fit such a sweep with ``free`` restricted accordingly.

    References
    ----------
    Seed 001, App. B.8.4, eq. 56 (Theorem B.30).
    """
    F_, m_, d_ = _positive_arr(F, "F"), _positive_arr(m, "m"), _arr(d, "d")
    if np.any(d_ <= 1):
        raise ValueError("d must be > 1 in eq. 56 (it divides by d - 1)")
    L = np.asarray(log_term(F_, C_L, delta))
    sL = np.sqrt(L)
    out = (
        C_s
        - C_1 * np.sqrt(L / m_)
        - C_2 * np.sqrt(L / (d_ - 1))
        - C_3 * sL * np.sqrt(F_ / d_**3)
        - C_4 * sL * np.sqrt(F_ / (m_ * d_))
    )
    return _out(out)


def arbitrary_keys_bound(
    k_min_diag, k_max_off, e_k, F, d, *, C_s=1.0, C_x=1.0, C_v=1.0, C_L=1.0, delta=0.5
):
    """Margin curve for arbitrary keys and isotropic values (Table 2, eq. 46).

    ``C_s [K_min^diag (1 - eps_v) - K_max^off] - C_x sqrt(E_K) sqrt(L / d)`` with
    ``eps_v = C_v sqrt(L / (d - 1))``; the theorem has ``C_s = 1``.

    Parameters
    ----------
    k_min_diag, k_max_off, e_k : array-like
        ``K_min^diag``, ``K_max^off`` (Def. B.9) and ``E_K`` (Def. B.10 / eq. 45) per point.
    F, d : array-like
        Facts and embedding width (``d > 1``).
    C_s, C_x, C_v : float
        Signal level, cross-talk constant ``C`` and the constant of ``eps_v``.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-finite statistics, negative ``E_K``, ``d <= 1`` or invalid constants.

    References
    ----------
    Seed 001, App. B.8.2, Theorem B.28, eq. 46; Table 2 (arbitrary keys, random values);
    App. A.3.2 (key-spike sweep).
    """
    kd, ko, ek = _arr(k_min_diag, "k_min_diag"), _arr(k_max_off, "k_max_off"), _arr(e_k, "e_k")
    if np.any(ek < 0):
        raise ValueError("e_k must be >= 0")
    d_ = _arr(d, "d")
    if np.any(d_ <= 1):
        raise ValueError("d must be > 1 (eps_v divides by d - 1)")
    L = np.asarray(log_term(F, C_L, delta))
    eps_v = C_v * np.sqrt(L / (d_ - 1))
    return _out(C_s * (kd * (1 - eps_v) - ko) - C_x * np.sqrt(ek) * np.sqrt(L / d_))


def arbitrary_values_bound(
    v_min, b_y, e_v, l_v, F, m, *, C_s=1.0, C_x=1.0, C_k=1.0, C_L=1.0, delta=0.5
):
    """Margin curve for isotropic keys and arbitrary values (Table 2, eq. 51).

    ``C_s (1 - eps_k) V_min - C_x (B_Y + sqrt(E_v) sqrt(L_v)) sqrt(L / m)`` with
    ``eps_k = C_k sqrt(L / m)``. Eq. 51 writes ``sigma sqrt(L)`` for the last factor; Table 2
    uses ``sqrt(L / m)`` since ``sigma ~ 1/sqrt(m)`` under ``m <= d^2 / L``.

    Parameters
    ----------
    v_min, b_y, e_v, l_v : array-like
        ``V_min`` (Def. B.11), ``B_Y`` (Def. B.12), ``E_v`` (Def. B.13), ``L_v`` (Def. B.14).
    F, m : array-like
        Facts and feature width.
    C_s, C_x, C_k : float
        Signal level, cross-talk constant and the constant of ``eps_k``.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-finite or negative statistics, non-positive ``m`` or invalid constants.

    References
    ----------
    Seed 001, App. B.8.3, Theorem B.29, eq. 51; Table 2 (random keys, arbitrary values);
    App. A.3.2 (value-spike sweep).
    """
    vm, by = _arr(v_min, "v_min"), _arr(b_y, "b_y")
    ev, lv = _arr(e_v, "e_v"), _arr(l_v, "l_v")
    if np.any(ev < 0) or np.any(lv < 0) or np.any(by < 0):
        raise ValueError("b_y, e_v and l_v must be >= 0")
    m_ = _positive_arr(m, "m")
    L = np.asarray(log_term(F, C_L, delta))
    r = np.sqrt(L / m_)
    return _out(C_s * (1 - C_k * r) * vm - C_x * (by + np.sqrt(ev) * np.sqrt(lv)) * r)


def arbitrary_bound(k_min_diag, v_min, e_k, e_v, kappa, *, C_s=1.0, C_x=1.0):
    """Deterministic margin bound for arbitrary keys and values (Table 2, eq. 44).

    ``C_s K_min^diag V_min - C_x sqrt(E_K) sqrt(E_v) kappa``. With ``C_s = C_x = 1`` this is
    Theorem B.25's eq. 44 and holds for every Gram and value set with ``V_ij >= 0`` (eq. 40) and
    ``K_ii >= 0``: ``gamma_min`` is never below it.

    Parameters
    ----------
    k_min_diag, v_min, e_k, e_v, kappa : array-like
        Definitions B.9, B.11, B.10, B.13, B.15.
    C_s, C_x : float
        Fitted signal and cross-talk constants (1 and 1 in the theorem).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-finite or negative energies.

    References
    ----------
    Seed 001, App. B.8.1, Theorem B.25, eq. 44; Table 2 (arbitrary keys, arbitrary values);
    App. A.3.2 (both-spike sweep).
    """
    kd, vm = _arr(k_min_diag, "k_min_diag"), _arr(v_min, "v_min")
    ek, ev, ka = _arr(e_k, "e_k"), _arr(e_v, "e_v"), _arr(kappa, "kappa")
    if np.any(ek < 0) or np.any(ev < 0) or np.any(ka < 0):
        raise ValueError("e_k, e_v and kappa must be >= 0")
    return _out(C_s * kd * vm - C_x * np.sqrt(ek) * np.sqrt(ev) * ka)


def absorbed_bound(k_min_diag, k_max_off, v_min, v_max, e_k_tilde, e_v_tilde, kappa_tilde):
    """Deterministic margin bound with the competitor absorbed into the signal (eq. 43).

    ``K_min^diag V_min - K_max^off V_max - sqrt(E~_K) sqrt(E~_v) kappa~``; holds for every Gram
    and value set under eq. 40.

    Parameters
    ----------
    k_min_diag, k_max_off, v_min, v_max : array-like
        Definitions B.9 and B.11.
    e_k_tilde, e_v_tilde, kappa_tilde : array-like
        The truncated statistics of eq. 34 (fields of :class:`GeometryStatistics`).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-finite or negative energies.

    References
    ----------
    Seed 001, App. B.8.1, Theorem B.25, eq. 43 (with Theorems B.16 and B.21).
    """
    kd, ko, vm, vx = (_arr(x, "statistic") for x in (k_min_diag, k_max_off, v_min, v_max))
    ek, ev, ka = (_arr(x, "statistic") for x in (e_k_tilde, e_v_tilde, kappa_tilde))
    if np.any(ek < 0) or np.any(ev < 0) or np.any(ka < 0):
        raise ValueError("e_k_tilde, e_v_tilde and kappa_tilde must be >= 0")
    return _out(kd * vm - ko * vx - np.sqrt(ek) * np.sqrt(ev) * ka)


def penalty_bound(s_sig, p_key, p_val, p_align, F, m, d, *, C_s=0.5, C_x=1.0):
    """Penalty form of the general margin bound (eq. 10, Corollary B.26).

    ``C_s S_sig - C_x P_key P_val P_align sqrt(F log F / (m d))``; Corollary B.26 proves it with
    ``C_s = 1/2`` and ``C_x = 1`` when ``d >= 4 log F``.

    Parameters
    ----------
    s_sig, p_key, p_val, p_align : array-like
        The penalty statistics (:class:`PenaltyStatistics`).
    F, m, d : array-like
        Facts (``>= 2``), feature width, embedding width.
    C_s, C_x : float
        Signal and cross-talk constants.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-finite statistics or invalid sizes.

    References
    ----------
    Seed 001, eq. 10 (Theorem 4.3) and Corollary B.26.
    """
    ss, pk, pv, pa = (_arr(x, "statistic") for x in (s_sig, p_key, p_val, p_align))
    F_, m_, d_ = _positive_arr(F, "F"), _positive_arr(m, "m"), _positive_arr(d, "d")
    if np.any(F_ < 2):
        raise ValueError("F must be >= 2")
    return _out(C_s * ss - C_x * pk * pv * pa * np.sqrt(F_ * np.log(F_) / (m_ * d_)))


def noisy_margin_bound(gamma_clean, eps, F, d, *, C_n=1.0, C_L=1.0, delta=0.5):
    """Noisy-query margin curve ``gamma_min(k) - C_n eps sqrt(F L / d)`` (eq. 74).

    ``C_n`` stands for ``C_2 L_bil``, the absolute constant times the query-Lipschitz constant of
    the kernel (eq. 69; estimate ``L_bil`` with :func:`query_lipschitz`).

    Parameters
    ----------
    gamma_clean : array-like
        Clean minimum margin ``gamma_min(k)``.
    eps : array-like
        Noise radius ``||k~_i - k_i|| <= eps`` (eq. 68), ``>= 0``.
    F, d : array-like
        Facts and embedding width.
    C_n : float, default 1.0
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Negative ``eps``, non-positive sizes or invalid constants.

    References
    ----------
    Seed 001, App. B.10.1, Theorem B.62 and Corollary B.63 (eq. 74); App. A.4.2.
    """
    g0, e = _arr(gamma_clean, "gamma_clean"), _arr(eps, "eps")
    if np.any(e < 0):
        raise ValueError("eps must be >= 0")
    d_ = _positive_arr(d, "d")
    L = np.asarray(log_term(F, C_L, delta))
    return _out(g0 - C_n * e * np.sqrt(_arr(F, "F") * L / d_))


def _penalty_curve(s_sig, p_key, p_val, p_align, F, m, d, *, C_s=0.5, C_x=1.0):
    return penalty_bound(s_sig, p_key, p_val, p_align, F, m, d, C_s=C_s, C_x=C_x)


@dataclass(frozen=True)
class TheoryForm:
    """One fittable theory curve: its function, covariates and constants."""

    func: Callable[..., np.ndarray]  # curve(**covariates, **constants) -> predicted gamma_min
    covariates: tuple[str, ...]  # keyword names of the per-point inputs
    constants: Mapping[str, float]  # every constant with its theorem (default) value
    default_free: tuple[str, ...]  # constants fitted unless `free` says otherwise
    reference: str  # equation / theorem in seed 001


#: The fittable theory curves: name -> (function, covariate names, constant defaults, default
#: free constants, reference). ``delta`` is a fixed constant, never fitted.
THEORY_FORMS: Mapping[str, TheoryForm] = MappingProxyType(
    {
        "isotropic": TheoryForm(
            isotropic_bound,
            ("F", "m", "d"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_s", "C_x", "C_L"),
            "eq. 9 / Cor. B.31 / Table 2 (random keys, random values)",
        ),
        "isotropic_eq56": TheoryForm(
            isotropic_bound_eq56,
            ("F", "m", "d"),
            MappingProxyType(
                {
                    "C_s": 1.0,
                    "C_1": 1.0,
                    "C_2": 1.0,
                    "C_3": 1.0,
                    "C_4": 1.0,
                    "C_L": 1.0,
                    "delta": 0.5,
                }
            ),
            ("C_s", "C_1", "C_2", "C_3", "C_4"),
            "eq. 56 (Theorem B.30)",
        ),
        "keys": TheoryForm(
            arbitrary_keys_bound,
            ("k_min_diag", "k_max_off", "e_k", "F", "d"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0, "C_v": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_s", "C_x"),
            "eq. 46 (Theorem B.28) / Table 2 (arbitrary keys, random values)",
        ),
        "values": TheoryForm(
            arbitrary_values_bound,
            ("v_min", "b_y", "e_v", "l_v", "F", "m"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0, "C_k": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_s", "C_x"),
            "eq. 51 (Theorem B.29) / Table 2 (random keys, arbitrary values)",
        ),
        "both": TheoryForm(
            arbitrary_bound,
            ("k_min_diag", "v_min", "e_k", "e_v", "kappa"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0}),
            ("C_s", "C_x"),
            "eq. 44 (Theorem B.25) / Table 2 (arbitrary keys, arbitrary values)",
        ),
        "penalty": TheoryForm(
            _penalty_curve,
            ("s_sig", "p_key", "p_val", "p_align", "F", "m", "d"),
            MappingProxyType({"C_s": 0.5, "C_x": 1.0}),
            ("C_s", "C_x"),
            "eq. 10 / Cor. B.26",
        ),
        "noisy": TheoryForm(
            noisy_margin_bound,
            ("gamma_clean", "eps", "F", "d"),
            MappingProxyType({"C_n": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_n",),
            "eq. 74 (Cor. B.63)",
        ),
    }
)


def r_squared(observed, predicted) -> float:
    """Coefficient of determination ``R^2 = 1 - SS_res / SS_tot``.

    Parameters
    ----------
    observed, predicted : array-like, same shape
        At least two points.

    Returns
    -------
    float
        ``nan`` when the observations are constant (``SS_tot = 0``).

    Raises
    ------
    ValueError
        Shape mismatch, fewer than two points or non-finite input.
    """
    y = _arr(observed, "observed").ravel()
    p = _arr(predicted, "predicted").ravel()
    if y.shape != p.shape:
        raise ValueError(f"observed and predicted differ in size: {y.size} vs {p.size}")
    if y.size < 2:
        raise ValueError("R^2 needs at least two points")
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0.0:
        return math.nan
    return 1.0 - float(np.sum((y - p) ** 2)) / ss_tot


@dataclass(frozen=True)
class TheoryFit:
    """A theory curve with fitted constants.

    Call it (or :meth:`predict`) with the form's covariates as keywords to evaluate the fitted
    curve, e.g. ``fit(F=F, m=512, d=64)``.
    """

    form: str  # key of THEORY_FORMS
    constants: Mapping[str, float]  # every constant of the curve, fitted and fixed (read-only)
    free: tuple[str, ...]  # names of the fitted constants
    r2: float  # R^2 of the fit on the data it was fitted to
    rmse: float  # root-mean-square residual
    n_points: int  # number of data points
    success: bool  # the optimiser reported convergence
    curve: Callable[..., np.ndarray] = field(repr=False)  # the form with the constants bound

    def predict(self, **covariates):
        """Evaluate the fitted curve at the given covariates (see :data:`THEORY_FORMS`)."""
        missing = set(THEORY_FORMS[self.form].covariates) - set(covariates)
        if missing:
            raise ValueError(f"missing covariates for form {self.form!r}: {sorted(missing)}")
        return self.curve(**covariates)

    __call__ = predict


def covariates_from_statistics(
    stats: Sequence[GeometryStatistics], width=None
) -> dict[str, np.ndarray]:
    """Stack a sweep of :class:`GeometryStatistics` into covariate arrays for a fit.

    Parameters
    ----------
    stats : sequence of GeometryStatistics
        One per sweep point.
    width : int or sequence of int, optional
        Feature width ``m`` (scalar or one per point); adds ``"m"`` and the penalty covariates
        ``s_sig, p_key, p_val, p_align``.

    Returns
    -------
    dict of str to ndarray
        Every statistic field plus ``"F"`` and ``"d"`` (and ``"m"``, penalties), shape ``(n,)``.

    Raises
    ------
    ValueError
        An empty sequence, a ``width`` sequence of the wrong length, or (with ``width``) a point
        where a penalty is undefined (``S_sig`` needs ``d > log F``).
    """
    stats = list(stats)
    if not stats or not all(isinstance(s, GeometryStatistics) for s in stats):
        raise ValueError("stats must be a non-empty sequence of GeometryStatistics")
    out = {
        f.name: np.array([getattr(s, f.name) for s in stats], dtype=np.float64)
        for f in fields(GeometryStatistics)
    }
    out["F"] = out.pop("num_facts")
    out["d"] = out.pop("dim")
    if width is not None:
        ms = np.asarray(width, dtype=np.float64)
        if ms.ndim == 0:
            ms = np.full(len(stats), float(ms))
        if ms.shape != (len(stats),):
            raise ValueError(f"width must be a scalar or have {len(stats)} entries; got {ms.shape}")
        out["m"] = ms
        pens = [penalty_statistics(s, int(m)) for s, m in zip(stats, ms)]
        for name in ("s_sig", "p_key", "p_val", "p_align"):
            out[name] = np.array([getattr(p, name) for p in pens])
    return out


def fit_theory_curve(
    form: str,
    gamma,
    covariates: Mapping[str, object],
    *,
    free: Sequence[str] | None = None,
    fixed: Mapping[str, float] | None = None,
) -> TheoryFit:
    """Fit a theory curve's constants to measured margins by bounded least squares.

    Every fitted constant is constrained to ``[0, inf)`` (the theorems' constants are
    non-negative); non-fitted constants take their theorem values unless given in ``fixed``.
    The fit runs :func:`scipy.optimize.least_squares` (trust-region reflective) from a few
    starting points (several ``C_L`` when it is free) and keeps the best.

    Parameters
    ----------
    form : str
        A key of :data:`THEORY_FORMS`: ``"isotropic"`` (eq. 9), ``"isotropic_eq56"`` (eq. 56),
        ``"keys"`` (eq. 46), ``"values"`` (eq. 51), ``"both"`` (eq. 44), ``"penalty"`` (eq. 10),
        ``"noisy"`` (eq. 74).
    gamma : array-like, shape ``(n,)``
        Measured ``gamma_min`` per sweep point (``n >= 2``).
    covariates : mapping of str to array-like
        The form's covariates (e.g. ``F``, ``m``, ``d`` for ``"isotropic"``), each a scalar or
        ``(n,)``; :func:`covariates_from_statistics` builds them from a sweep of statistics.
    free : sequence of str, optional
        Constants to fit; default the form's ``default_free`` (``C_s, C_x, C_L`` for
        ``"isotropic"``, ``C_s, C_x`` for the Table 2 forms, whose ``L`` is constant along a
        fixed-``F`` spike sweep). ``delta`` cannot be fitted.
    fixed : mapping of str to float, optional
        Values for constants that are not fitted (e.g. ``{"C_L": 1.0, "delta": 0.5}``).

    Returns
    -------
    TheoryFit

    Raises
    ------
    ValueError
        An unknown form or constant, missing covariates, a constant both free and fixed,
        fewer data points than free constants, or non-finite data.

    References
    ----------
    Seed 001, Sec. 4.2 (R^2 of the theory curves), App. A.3.2 and A.4.2
    (fitted curves: ``C_s - C_x sqrt(F L / (m d))``, ``L = log(C_L F^2 / 0.5)``, non-negative
    constants by least squares).
    """
    from scipy.optimize import least_squares

    if form not in THEORY_FORMS:
        raise ValueError(f"unknown form {form!r}; choose one of {sorted(THEORY_FORMS)}")
    spec = THEORY_FORMS[form]
    y = _arr(gamma, "gamma").ravel()
    n = y.size
    missing = [c for c in spec.covariates if c not in covariates]
    if missing:
        raise ValueError(
            f"form {form!r} needs covariates {list(spec.covariates)}; missing {missing}"
        )
    cov = {}
    for name in spec.covariates:
        a = _arr(covariates[name], name)
        if a.ndim == 0:
            a = np.full(n, float(a))
        a = a.ravel()
        if a.size != n:
            raise ValueError(f"covariate {name!r} has {a.size} entries; gamma has {n}")
        cov[name] = a
    free = tuple(spec.default_free if free is None else free)
    fixed = dict(fixed or {})
    names = set(spec.constants)
    for c in (*free, *fixed):
        if c not in names:
            raise ValueError(f"unknown constant {c!r} for form {form!r}; known: {sorted(names)}")
    if "delta" in free:
        raise ValueError("delta is a fixed failure probability, not a fitted constant")
    if len(set(free)) != len(free) or set(free) & set(fixed):
        raise ValueError("each constant must be either free (once) or fixed")
    if len(free) == 0:
        raise ValueError("nothing to fit: free is empty")
    if n < max(2, len(free)):
        raise ValueError(
            f"need at least {max(2, len(free))} points to fit {len(free)} constants; got {n}"
        )
    base = {k: v for k, v in spec.constants.items() if k not in free}
    base.update({k: float(v) for k, v in fixed.items()})

    def model(x):
        return np.asarray(spec.func(**cov, **base, **dict(zip(free, x))), dtype=np.float64)

    def resid(x):
        return model(x) - y

    starts = []
    x0 = np.array([max(float(spec.constants[c]), 0.0) for c in free])
    if "C_L" in free:
        for cl in (1.0, 30.0, 1e3):
            s = x0.copy()
            s[free.index("C_L")] = cl
            starts.append(s)
    else:
        starts.append(x0)
    best = None
    for s in starts:
        res = least_squares(
            resid,
            s,
            bounds=(0.0, np.inf),
            method="trf",
            x_scale="jac",
            xtol=1e-12,
            ftol=1e-12,
            gtol=1e-12,
            max_nfev=20000,
        )
        if best is None or res.cost < best.cost:
            best = res
    fitted = dict(zip(free, (float(v) for v in best.x)))
    consts = {k: fitted.get(k, base.get(k)) for k in spec.constants}
    pred = model(best.x)
    return TheoryFit(
        form=form,
        constants=MappingProxyType(consts),
        free=free,
        r2=r_squared(y, pred),
        rmse=float(np.sqrt(np.mean((pred - y) ** 2))),
        n_points=n,
        success=bool(best.success),
        curve=functools.partial(spec.func, **consts),
    )


# --------------------------------------------------------------------------------------------
# Noisy queries (App. A.4.2, B.10.1)
# --------------------------------------------------------------------------------------------


def perturb_queries(keys, eps: float, *, seed: int = 0, directions=None) -> torch.Tensor:
    """Noisy keys ``k~_i = k_i + eps u_i`` with ``u_i`` uniform on the unit sphere.

    Parameters
    ----------
    keys : array-like, shape ``(F, d)``
        Stored keys (returned dtype/device follow a tensor input; float64 otherwise).
    eps : float
        Noise radius ``>= 0`` (App. A.4.2 sweeps 0.01 to 2).
    seed : int, default 0
        Seed of the directions (drawn on the CPU in float64, so a seed gives the same noise on
        every device).
    directions : array-like, shape ``(F, d)``, optional
        Use these directions instead of random ones; each row is normalised to the unit sphere.

    Returns
    -------
    torch.Tensor, shape ``(F, d)``
        Not renormalised (as in App. A.4.2); ``||k~_i - k_i|| = eps``.

    Raises
    ------
    ValueError
        Negative or non-finite ``eps``, a non-integer seed, or directions of the wrong shape or
        with a zero row.

    References
    ----------
    Seed 001, App. A.4.2; App. B.10.1, eq. 68.
    """
    k = keys if isinstance(keys, torch.Tensor) else _as_f64(keys, "keys", 2)
    if k.dim() != 2:
        raise ValueError(f"keys must be 2-D (F, d); got shape {tuple(k.shape)}")
    e = _pos_number("eps", eps, strict=False)
    if directions is None:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer; got {seed!r}")
        gen = torch.Generator(device="cpu").manual_seed(int(seed))
        u = torch.randn(k.shape, generator=gen, dtype=torch.float64)  # (F, d)
    else:
        u = _as_f64(directions, "directions", 2)
        if u.shape != k.shape:
            raise ValueError(f"directions must have shape {tuple(k.shape)}; got {tuple(u.shape)}")
    norms = torch.linalg.vector_norm(u, dim=-1, keepdim=True)
    if (norms == 0).any():
        raise ValueError("directions must have non-zero rows")
    u = (u / norms).to(device=k.device)
    out = k.to(torch.float64) + e * u
    return out.to(k.dtype) if k.is_floating_point() else out


def noisy_fact_margins(model, facts, eps: float, *, seed: int = 0, directions=None, codes=None):
    """Per-fact kernel-Hebbian margins under noisy queries (the mixed Gram of App. A.4.2).

    Reads ``y_i = sum_t <phi(k_t), phi(k~_i)> c_f(t)`` with ``k~_i = k_i + eps u_i`` (stored keys on
    the memory side, noisy keys on the query side) and returns ``gamma_i(k~_i)``.

    Parameters
    ----------
    model : object
        Exposes ``features`` or ``kernel`` (see :func:`kernel_gram`).
    facts : FactSet
    eps : float
        Noise radius ``>= 0``; ``eps = 0`` gives :func:`fact_margins`.
    seed : int, default 0
        Seed of the noise directions.
    directions : array-like, shape ``(F, d)``, optional
        Fixed directions (normalised), e.g. to reuse one draw across an ``eps`` sweep.
    codes : array-like, shape ``(V, d)``, optional
        Code table (default the values).

    Returns
    -------
    torch.Tensor, shape ``(F,)``, float64

    Raises
    ------
    ValueError
        As :func:`perturb_queries` and :func:`fact_margins`; a Gram-matrix source (the mixed Gram
        needs the model).

    References
    ----------
    Seed 001, App. A.4.2 (noisy-margin diagnostic); App. B.10.1 (``gamma_min(k~)``).
    """
    if _is_array(model):
        raise ValueError(
            "noisy margins need a model exposing features or kernel, not a Gram matrix"
        )
    q = perturb_queries(facts.keys, eps, seed=seed, directions=directions)
    return fact_margins(model, facts, codes=codes, queries=q)


def query_lipschitz(model, facts, queries) -> float:
    """Empirical query-Lipschitz constant of a kernel on stored keys (eq. 69).

    ``max_{t, i} |K(k_t, q_i) - K(k_t, k_i)| / ||q_i - k_i||`` over the facts whose query moved.

    Parameters
    ----------
    model : object
        Exposes ``features`` or ``kernel``.
    facts : FactSet
    queries : array-like, shape ``(F, d)``
        Perturbed queries ``q_i`` (e.g. from :func:`perturb_queries`).

    Returns
    -------
    float
        ``0.0`` when no query moved.

    Raises
    ------
    ValueError
        Queries of the wrong shape or a source without features/kernel.

    References
    ----------
    Seed 001, App. B.10.1, eq. 69 (``L_k``) and Corollary B.63 (``L_bil``).
    """
    keys, _, _ = _facts_parts(facts)
    q = _as_f64(queries, "queries", 2).to(keys.device)
    if q.shape != keys.shape:
        raise ValueError(f"queries must have shape {tuple(keys.shape)}; got {tuple(q.shape)}")
    clean = kernel_gram(model, facts.keys)  # (F, F)
    noisy = kernel_gram(model, facts.keys, q.to(dtype=facts.keys.dtype))  # (F, F)
    dist = torch.linalg.vector_norm(q - keys, dim=-1)  # (F,)
    moved = dist > 0
    if not moved.any():
        return 0.0
    ratio = (noisy - clean).abs()[:, moved] / dist[moved][None, :]
    return float(ratio.max())


# --------------------------------------------------------------------------------------------
# Bit complexity (App. B.2.6)
# --------------------------------------------------------------------------------------------


def _bits(bits) -> int:
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise ValueError(f"bits must be an integer; got {bits!r}")
    if bits < 1 or bits > 64:
        raise ValueError(f"bits must lie in [1, 64]; got {bits}")
    return int(bits)


def quantization_step(tensor, bits: int) -> float:
    """Step ``Delta = 2 s / 2^b`` of the ``b``-bit uniform symmetric quantiser, ``s = max |x|``.

    Parameters
    ----------
    tensor : array-like
        The matrix to quantise (any shape, real, finite).
    bits : int
        ``1 <= b <= 64``.

    Returns
    -------
    float
        ``0.0`` for an all-zero tensor.

    Raises
    ------
    ValueError
        ``bits`` outside ``[1, 64]`` or non-integer; non-finite input.

    References
    ----------
    Seed 001, App. B.2.6 (Theorem B.6: rounding every coordinate to ``t`` bits).
    """
    b = _bits(bits)
    x = _as_f64(tensor, "tensor")
    s = float(x.abs().max()) if x.numel() else 0.0
    return 2.0 * s / 2.0**b


def quantize(tensor, bits: int) -> torch.Tensor:
    """Uniform symmetric ``b``-bit quantiser, one scale per matrix (returned dequantised).

    The ``2^b`` levels are the mid-rise grid ``(q + 1/2) Delta`` for integer codes
    ``q in [-2^(b-1), 2^(b-1) - 1]`` with ``Delta = 2 s / 2^b`` and ``s = max |x|`` over the whole
    tensor, so the levels are symmetric about zero, span ``[-s + Delta/2, s - Delta/2]``, and
    every entry moves by at most ``Delta / 2``. Each entry maps to the level of its cell,
    ``q = clip(floor(x / Delta), -2^(b-1), 2^(b-1) - 1)``. One bit gives ``+-s/2`` (a scaled
    sign). Zero is not a level (mid-rise), which keeps all ``2^b`` codes in use.

    Parameters
    ----------
    tensor : torch.Tensor or array-like
        Real, finite, any shape (e.g. ``A``, ``G`` or ``B`` of a bilinear MLP).
    bits : int
        ``1 <= b <= 64``.

    Returns
    -------
    torch.Tensor
        Same shape; dtype and device of a floating tensor input (float64 otherwise). An all-zero
        input is returned as zeros.

    Raises
    ------
    ValueError
        ``bits < 1`` (or > 64, or not an integer), or non-finite input.

    References
    ----------
    Seed 001, App. B.2.6 (Theorem B.6, Corollary B.8: quantised parameters keep
    ``gamma_min > 0``).
    """
    b = _bits(bits)
    x = _as_f64(tensor, "tensor")
    is_float_tensor = isinstance(tensor, torch.Tensor) and tensor.is_floating_point()
    out_dtype = tensor.dtype if is_float_tensor else torch.float64
    device = tensor.device if isinstance(tensor, torch.Tensor) else x.device
    s = float(x.abs().max()) if x.numel() else 0.0
    if s == 0.0:
        return torch.zeros(x.shape, dtype=out_dtype, device=device)
    step = 2.0 * s / 2.0**b
    half = 2.0 ** (b - 1)
    q = torch.floor(x / step).clamp(-half, half - 1)
    return ((q + 0.5) * step).to(device=device, dtype=out_dtype)


def quantize_matrices(matrices, bits: int):
    """Quantise every matrix of a mapping or sequence with its own scale (:func:`quantize`).

    Parameters
    ----------
    matrices : mapping of str to tensor, or sequence of tensors
        E.g. ``{"A": A, "G": G, "B": B}``.
    bits : int

    Returns
    -------
    dict or list
        Same keys / order.

    Raises
    ------
    ValueError
        As :func:`quantize`, or a container of another kind.
    """
    if isinstance(matrices, Mapping):
        return {k: quantize(v, bits) for k, v in matrices.items()}
    if isinstance(matrices, (list, tuple)):
        return [quantize(v, bits) for v in matrices]
    raise ValueError("matrices must be a mapping of name -> tensor or a sequence of tensors")


@dataclass(frozen=True)
class BitSearch:
    """Result of :func:`min_bits_for_positive_margin`."""

    bits: int | None  # smallest b with margin > 0; None if none in the range
    margins: tuple[tuple[int, float], ...]  # (b, margin) for every b evaluated, in order
    full_precision_margin: float  # margin of the unquantised matrices


def min_bits_for_positive_margin(
    margin_fn: Callable[..., float],
    matrices,
    *,
    min_bits: int = 1,
    max_bits: int = 32,
    scan_all: bool = False,
) -> BitSearch:
    """Smallest number of bits per parameter that keeps the margin positive.

    For ``b = min_bits, ..., max_bits`` every matrix is quantised with :func:`quantize` (its own
    scale) and ``margin_fn`` builds the margin from the quantised matrices; the first ``b`` with a
    positive margin is returned. The quantisation grids for different ``b`` are not nested, so
    positivity need not be monotone in ``b``; pass ``scan_all=True`` to evaluate every ``b`` and
    inspect :attr:`BitSearch.margins`.

    Parameters
    ----------
    margin_fn : callable
        Called as ``margin_fn(**quantised)`` for a mapping (``margin_fn(A=..., G=..., B=...)``)
        or ``margin_fn(*quantised)`` for a sequence; returns ``gamma_min`` (a float or 0-d tensor),
        e.g. the output-scale ``gamma_min(theta)`` of App. B.2.6 of the MLP rebuilt from them.
    matrices : mapping of str to tensor, or sequence of tensors
        The full-precision matrices.
    min_bits, max_bits : int
        Search range, ``1 <= min_bits <= max_bits <= 64``.
    scan_all : bool, default False
        Keep evaluating after the first positive margin.

    Returns
    -------
    BitSearch

    Raises
    ------
    ValueError
        An invalid bit range, a container of another kind, or a margin that is not a finite
        number.

    References
    ----------
    Seed 001, App. B.2.6 (Lemma B.4, Theorem B.6, Corollary B.8).
    """
    lo, hi = _bits(min_bits), _bits(max_bits)
    if lo > hi:
        raise ValueError(f"min_bits must be <= max_bits; got {lo} > {hi}")
    if not isinstance(matrices, (Mapping, list, tuple)):
        raise ValueError("matrices must be a mapping of name -> tensor or a sequence of tensors")

    def call(mats) -> float:
        val = margin_fn(**mats) if isinstance(mats, Mapping) else margin_fn(*mats)
        val = float(val)
        if not math.isfinite(val):
            raise ValueError(f"margin_fn returned a non-finite margin {val!r}")
        return val

    full = call(dict(matrices) if isinstance(matrices, Mapping) else list(matrices))
    found = None
    record = []
    for b in range(lo, hi + 1):
        gm = call(quantize_matrices(matrices, b))
        record.append((b, gm))
        if gm > 0 and found is None:
            found = b
            if not scan_all:
                break
    return BitSearch(bits=found, margins=tuple(record), full_precision_margin=full)
