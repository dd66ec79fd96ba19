"""The penalty statistics of the general margin bound: key and value crowding, alignment, signal.

Theorem 4.3 of seed 001 ("MLPs are Hebbians", Sec. 4.2.2; proved as Corollary B.26) writes the
cross-talk scale ``sqrt(E_K) sqrt(E_v) kappa`` of the general bound as a product of penalties, each
a geometric statistic over its isotropic baseline: the key-crowding penalty
``P_key = sqrt(E_K) / sqrt(F / m)`` (:func:`p_key`), the value-crowding penalty
``P_val = sqrt(E_v) / sqrt(F / d)`` (:func:`p_val`), the key-value alignment penalty
``P_align = kappa / sqrt(log(F) / F)`` (:func:`p_align`), and the signal strength
``S_sig = K_min^diag V_min / (1 - sqrt(log(F) / d))`` (:func:`s_sig`).
:func:`penalty_statistics` computes all four from a
:class:`~assocmem.mlps.margins.geometry.GeometryStatistics` into a :class:`PenaltyStatistics`.
Chapter 12 (How margins scale) fits the penalty form of the bound (eq. 10) with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assocmem._checks import as_real
from assocmem.mlps.margins._common import _pos_number
from assocmem.mlps.margins.geometry import GeometryStatistics

__all__ = [
    "p_key",
    "p_val",
    "p_align",
    "s_sig",
    "PenaltyStatistics",
    "penalty_statistics",
]


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
        An ``E_K`` that is negative, or non-positive ``F`` or ``m``; any argument that is not a
        finite real number (booleans and strings are refused).

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
        An ``E_v`` that is negative, or non-positive ``F`` or ``d``; any argument that is not a
        finite real number (booleans and strings are refused).

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
        ``kappa`` outside ``[0, 1]`` or ``F < 2``; any argument that is not a finite real number
        (booleans and strings are refused).

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
        Statistics that are not finite real numbers (booleans and strings refused), ``F < 1``,
        or ``d <= log F``.

    References
    ----------
    Seed 001, Sec. 4.2.2 ("signal strength"); Corollary B.26 (``K_min^diag V_min = (1 -
    sqrt(log(F)/d)) S_sig``).
    """
    kd = as_real(k_min_diag_value, "K_min^diag")
    vm = as_real(v_min_value, "V_min")
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
