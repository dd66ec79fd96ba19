"""The geometric summary statistics of the margin bounds (App. B.5) and their truncations (eq. 34).

The deterministic margin bounds of seed 001 ("MLPs are Hebbians", App. B.6-B.8) see the Gram
matrix and the values only through a few numbers (App. B.5): the kernel's smallest
self-similarity ``K_min^diag`` and largest off-diagonal entry ``K_max^off`` (Definition B.9), its
worst off-diagonal column energy ``E_K`` (B.10), the value separability ``V_min`` and interaction
``V_max`` (B.11), the competitor alignment ``B_Y`` (B.12), the value-difference energy ``E_v``
(B.13), the value sparsity ``L_v`` (B.14) and the key-value coupling ``kappa`` (B.15), plus the
truncated ``E~_K``, ``E~_v`` and ``kappa~`` of eqs. 32-34. Each has its function
(:func:`k_min_diag`, :func:`k_max_off`, :func:`e_k`, :func:`v_min`, :func:`v_max`, :func:`b_y`,
:func:`e_v`, :func:`l_v`, :func:`kappa`); :func:`geometry_statistics` computes all of them in one
pass into a :class:`GeometryStatistics`. They are written for items ``t = 1..F`` that each carry
their own value ``v_t`` and code ``c_t``; from a :class:`~assocmem.mlps.facts.FactSet` they take
``v_t = values[f(t)]`` and ``c_t = codes[f(t)]``, which needs ``f`` to be a bijection onto the
value table. Chapter 12 (How margins scale) measures them along the spike sweeps of App. A.3.2
(:mod:`assocmem.mlps.margin_sweeps`) and fits the bounds of Table 2 with them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import torch

from assocmem.mlps.margins._common import _as_f64, _codes_table, _facts_parts, _finite_stat, _is_array
from assocmem.mlps.margins._pairs import _pair_terms
from assocmem.mlps.margins.kernel_margins import _item_tables, kernel_gram

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, MarginSource
    from assocmem.mlps.facts import FactSet

__all__ = [
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
]


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
    return _finite_stat(ratio[_offdiag_mask(F, P.device)].max(), "L_v")


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


def k_min_diag(gram: ArrayLike) -> float:
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
        A non-square or non-finite Gram; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.9.
    """
    g = _square_gram(gram)
    return _finite_stat(g.diagonal().min(), "K_min^diag")


def k_max_off(gram: ArrayLike) -> float:
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
        A non-square Gram or ``F < 2``; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.9.
    """
    g = _square_gram(gram)
    _need_pairs(g.shape[0], "K_max^off")
    return _finite_stat(g.abs()[_offdiag_mask(g.shape[0], g.device)].max(), "K_max^off")


def e_k(gram: ArrayLike) -> float:
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
        A non-square Gram; input that is not finite real numbers (float16 / bfloat16 refused); or a
        statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.10 (also eq. 15 and Sec. 4.2.2, ``E_K = max_i ||K_i||^2``).
    """
    g = _square_gram(gram)
    off = g.masked_fill(torch.eye(g.shape[0], dtype=torch.bool, device=g.device), 0.0)
    return _finite_stat((off * off).sum(0).max(), "E_K")  # (F,) column energies without the diagonal


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


def v_min(values: ArrayLike) -> float:
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
        Non-2-D values or ``F < 2``; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.11; eq. 39.
    """
    v = _as_f64(values, "values", 2)
    _need_pairs(v.shape[0], "V_min")
    w = v @ v.T
    vij = w.diagonal()[:, None] - w  # <v_i, v_i> - <v_j, v_i>
    return _finite_stat(vij[_offdiag_mask(v.shape[0], v.device)].min(), "V_min")


def v_max(values: ArrayLike) -> float:
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
        Non-2-D values or ``F < 2``; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.11; eq. 39 (``B_ij``).
    """
    v = _as_f64(values, "values", 2)
    _need_pairs(v.shape[0], "V_max")
    w = v @ v.T
    bij = w - w.diagonal()[None, :]  # <v_i, v_j> - <v_j, v_j>
    return _finite_stat(bij.abs()[_offdiag_mask(v.shape[0], v.device)].max(), "V_max")


def b_y(values: ArrayLike, codes: ArrayLike | None = None) -> float:
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
        Mismatched shapes or ``F < 2``; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.12 (``max_{i != j} |<1, Y^{(ij)}>|``, eq. 29).
    """
    v, c = _values_codes(values, codes)
    _need_pairs(v.shape[0], "B_Y")
    t = _pair_terms(torch.zeros(v.shape[0], v.shape[0], dtype=torch.float64, device=v.device), v, c)
    return _finite_stat(t["sum_y"].abs()[_offdiag_mask(v.shape[0], v.device)].max(), "B_Y")


def e_v(values: ArrayLike, codes: ArrayLike | None = None) -> float:
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
        Mismatched shapes or ``F < 2``; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.13.
    """
    v, c = _values_codes(values, codes)
    _need_pairs(v.shape[0], "E_v")
    t = _pair_terms(torch.zeros(v.shape[0], v.shape[0], dtype=torch.float64, device=v.device), v, c)
    return _finite_stat(t["e_v_ij"][_offdiag_mask(v.shape[0], v.device)].max(), "E_v")


def l_v(values: ArrayLike, codes: ArrayLike | None = None) -> float:
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
        Mismatched shapes or ``F < 2``; input that is not finite real numbers (float16 / bfloat16
        refused); or a statistic that overflows float64.

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


def kappa(gram: ArrayLike, values: ArrayLike, codes: ArrayLike | None = None) -> float:
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
        A non-square Gram, mismatched shapes, or ``F < 2``; input that is not finite real numbers
        (float16 / bfloat16 refused); or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.5, Definition B.15 (and Sec. 4.2.2, ``max |cos angle(K_i, V_ij)|``).
    """
    g, v, c = _item_tables(gram, values, codes)
    _need_pairs(g.shape[0], "kappa")
    t = _pair_terms(g, v, c)
    k = _ratio(t["z"], t["e_k_i"][:, None] * t["e_v_ij"]).clamp(max=1.0)
    return _finite_stat(k[_offdiag_mask(g.shape[0], g.device)].max(), "kappa")


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
    source: MarginSource,
    facts_or_values: FactSet | ArrayLike,
    *,
    codes: ArrayLike | None = None,
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
        value rows; input that is not finite real numbers (float16 / bfloat16 refused); or a
        statistic that overflows float64.

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
        k_min_diag=_finite_stat(g.diagonal().min(), "K_min^diag"),
        k_max_off=_finite_stat(g.abs()[off].max(), "K_max^off"),
        e_k=_finite_stat(t["e_k_i"].max(), "E_K"),
        v_min=_finite_stat(vij[off].min(), "V_min"),
        v_max=_finite_stat(bij.abs()[off].max(), "V_max"),
        b_y=_finite_stat(t["sum_y"].abs()[off].max(), "B_Y"),
        e_v=_finite_stat(t["e_v_ij"][off].max(), "E_v"),
        l_v=_l_v_from_terms(t),
        kappa=_finite_stat(kap[off].max(), "kappa"),
        e_k_tilde=_finite_stat(t["e_k_tilde"][off].max(), "E~_K"),
        e_v_tilde=_finite_stat(t["e_v_tilde"][off].max(), "E~_v"),
        kappa_tilde=_finite_stat(kap_t[off].max(), "kappa~"),
    )
