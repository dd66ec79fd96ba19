"""Margins on the kernel-Hebbian scale of the paper's bounds: Gram matrix, Hebbian read, gamma_min.

With the Gram matrix ``K[t, i] = K(k_t, q_i)`` of the stored keys against the queries (column ``i``
is the query of fact ``i``; ``q_i = k_i`` for clean reads), the Hebbian read is
``y_i = sum_t K[t, i] c_f(t)`` (no ``1/F``) and the margin of fact ``i`` is
``gamma_i = <y_i, v_f(i)> - max_{j != f(i)} <y_i, v_j>`` over every value row (seed 001, "MLPs are
Hebbians", App. B.4, eqs. 23-25; eq. 6). This module builds the Gram matrix from features, a kernel
or a precomputed matrix (:func:`gram_from_features`, :func:`kernel_gram`), the read
(:func:`hebbian_readout`), the per-fact margins and their minimum ``gamma_min``
(:func:`fact_margins`, :func:`gamma_min`), and the item-indexed pairwise margins
``gamma_ij = <v_i - v_j, y_i>`` (:func:`pairwise_margins`) with their signal / cross-talk split
(:func:`signal_crosstalk`, eq. 25). Chapter 10 (Facts, margins and the counting bound) uses it
directly, chapter 11 (MLPs are kernel Hebbians) through :mod:`assocmem.mlps.hebbian_theory` and
chapter 12 (How margins scale) through :mod:`assocmem.mlps.margin_sweeps`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from assocmem.dtypes import cast_checked
from assocmem.mlps._checks import check_finite_result
from assocmem.mlps.margins._common import _as_f64, _codes_table, _facts_parts, _is_array
from assocmem.mlps.margins._pairs import _pair_terms
from assocmem.mlps.margins.decoding import score_margins

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, MarginSource
    from assocmem.mlps.facts import FactSet

__all__ = [
    "gram_from_features",
    "kernel_gram",
    "hebbian_readout",
    "fact_margins",
    "gamma_min",
    "pairwise_margins",
    "signal_crosstalk",
]


def gram_from_features(features: ArrayLike,
                       query_features: ArrayLike | None = None) -> torch.Tensor:
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
        Non-2-D input, input that is not a finite real array (a NaN or infinite feature, float16
        / bfloat16, booleans or strings), mismatched feature widths, or inner products that
        overflow float64.

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
    return check_finite_result(phi @ psi.to(phi.device).T, "the Gram matrix of the features")  # (F, Q)


def kernel_gram(source: MarginSource, keys: ArrayLike,
                queries: ArrayLike | None = None) -> torch.Tensor:
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
        with a precomputed Gram, keys or queries that are not finite real arrays (float16 /
        bfloat16 refused), mismatched widths, or a kernel output of the wrong shape or with
        non-finite entries.

    References
    ----------
    Seed 001, App. B.4 (Gram matrix ``K_ti = K(k_t, k_i)``), App. A.4.2 (mixed Gram).
    """
    if _is_array(source):
        if queries is not None:
            raise ValueError("queries cannot be combined with a precomputed Gram matrix")
        return _as_f64(source, "gram", 2)
    # models see the keys in their own dtype and device (a float32 model gets float32 keys)
    if isinstance(keys, torch.Tensor):
        _as_f64(keys, "keys", 2)  # validated; the model reads them as given
        k = keys
    else:
        k = _as_f64(keys, "keys", 2)
    q = k if queries is None else queries
    if isinstance(q, torch.Tensor):
        _as_f64(q, "queries", 2)
    else:
        q = cast_checked(_as_f64(q, "queries", 2), k.dtype if k.is_floating_point() else torch.float64,
                         "queries").to(k.device)
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


def hebbian_readout(gram: ArrayLike, codes: ArrayLike) -> torch.Tensor:
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
        Non-2-D input, input that is not a finite real array (float16 / bfloat16 refused),
        ``codes`` with a row count other than ``F``, or reads that overflow float64.

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
    return check_finite_result(torch.einsum("tq,td->qd", g, c), "the Hebbian reads")  # (Q, d)


def fact_margins(source: MarginSource, facts: FactSet, *, codes: ArrayLike | None = None,
                 queries: ArrayLike | None = None) -> torch.Tensor:
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
        mapping out of range), ``V < 2``, codes of the wrong shape, queries with a Gram source,
        non-finite or float16 / bfloat16 input, or scores that overflow float64.

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
        q = cast_checked(qt, facts.keys.dtype, "queries").to(facts.keys.device)
    g = kernel_gram(source, facts.keys, q).to(keys.device)
    if g.shape[0] != g.shape[1]:
        raise ValueError(f"the Gram matrix must be square (F, F); got {tuple(g.shape)}")
    if g.shape[0] != F:
        raise ValueError(
            f"the Gram matrix must be ({F}, {F}) for F = {F} facts; got {tuple(g.shape)}"
        )
    c = _codes_table(codes, values)
    y = hebbian_readout(g, c[mapping])  # (F, d)
    s = check_finite_result(y @ values.T, "the scores <y_i, v_j>")  # (F, V)
    return score_margins(s, mapping)  # (F,)


def gamma_min(source: MarginSource, facts: FactSet, *, codes: ArrayLike | None = None,
              queries: ArrayLike | None = None) -> float:
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


def pairwise_margins(gram: ArrayLike, values: ArrayLike,
                     codes: ArrayLike | None = None) -> torch.Tensor:
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
        A non-square Gram, mismatched shapes, non-finite or float16 / bfloat16 input, or margins
        that overflow float64.

    References
    ----------
    Seed 001, App. B.4, eqs. 23-24.
    """
    g, v, c = _item_tables(gram, values, codes)
    s = check_finite_result(hebbian_readout(g, c) @ v.T, "the scores <y_i, v_j>")  # (F, F)
    out = check_finite_result(s.diagonal()[:, None] - s, "the pairwise margins")
    out.fill_diagonal_(math.inf)
    return out


def signal_crosstalk(gram: ArrayLike, values: ArrayLike,
                     codes: ArrayLike | None = None) -> tuple[torch.Tensor, torch.Tensor]:
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
