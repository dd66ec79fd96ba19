"""The circle intersection ``I(dv, d, n)`` of two Hamming balls, counted exactly.

With a neuron at every address, an SDM read weights a pattern ``dv`` bits from the query by
``I(dv, d, n)``, the number of binary addresses in the intersection of the two radius-``d`` Hamming
balls. This module counts it exactly, in Python integers, in several ways that check one another:
the paper's double sum (Eq. 2 / Eq. 12, after Jaeckel) with its summation limits clipped so that
it holds for every ``0 <= dv, d <= n`` (:func:`circle_intersection`,
:func:`log_circle_intersection`) and with the paper's literal limits, which need the convention
``C(N, K) = 0`` outside the binomial's range (:func:`circle_intersection_paper_limits`); the whole
table over ``dv`` at once (:func:`circle_intersection_table`); Kanerva's lune form
(:func:`circle_intersection_lune`), whose steps (:func:`lune_term`) vanish at every even
distance and give the staircase ``I(2k - 1) = I(2k)``; brute-force enumeration for ``n <= 20``
(:func:`circle_intersection_enumerate`); and any of these over every radius and distance
(:func:`circle_intersection_grid`). Source: Bricken & Pehlevan (2021), Eq. 2, App. B.1 (Eq. 12)
and Fig. 11; Kanerva (1988), App. B (the lune). Chapter 31 studies it; chapters 30, 32, 33 and 35
use the table.
"""

from __future__ import annotations

import math
from itertools import accumulate, repeat
from operator import add, floordiv, mul
from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_int as _as_int
from assocmem.sdm.geometry._common import (
    _binom,
    _binomial_row,
    _check_distance,
    _check_dnd,
    _check_n,
)
from assocmem.sdm.geometry.balls import ball_size

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "circle_intersection",
    "circle_intersection_table",
    "circle_intersection_lune",
    "circle_intersection_enumerate",
    "log_circle_intersection",
    "circle_intersection_paper_limits",
    "circle_intersection_grid",
    "lune_term",
]


_ENUMERATE_MAX_N = 20


# ==========================================================================================
# Eq. 2 and its fast table
# ==========================================================================================


def circle_intersection(dv: int, d: int, n: int) -> int:
    """Exact number of addresses within Hamming distance ``d`` of two points ``dv`` apart.

    Eq. 2 of Bricken & Pehlevan (2021) (Eq. 12, after Jaeckel): split the ``n`` positions into
    the ``n - dv`` where query and pattern agree and the ``dv`` where they differ. An address
    agreeing with both centres in ``a`` of the first group and with the query in ``c`` of the
    second lies at distance ``n - a - c`` from the query and ``n - dv - a + c`` from the pattern,
    so

        I = sum_a sum_c C(n - dv, a) C(dv, c),
        a from max(0, n - d - floor(dv/2)) to n - dv,
        c from max(0, n - d - a) to min(dv, dv - (n - d - a)).

    The paper's limits ``a >= n - d - floor(dv/2)`` and ``c <= dv - (n - d - a)`` leave the
    ranges of the binomials when ``d + floor(dv/2) > n`` (negative ``a``) or ``a > n - d``
    (``c > dv``). Read with ``C(N, K) = 0`` outside ``0 <= K <= N`` the literal sum is still
    exact; with a binomial that is undefined there (``math.comb`` raises for ``K < 0``, array
    look-ups index out of range) it fails, e.g. at ``n = 4, d = 4, dv = 2``. The clipped limits
    above need no convention and hold for every ``0 <= dv, d <= n``. The inner sum is a
    difference of prefix sums of the row ``C(dv, .)``, so the cost is ``O(n)`` big-integer
    operations.

    Parameters
    ----------
    dv : int
        Hamming distance between the two centres (query and pattern), ``0 <= dv <= n``.
    d : int
        Read and write radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    int
        ``I(dv, d, n)``, exact. ``I(0, d, n) = ball_size(d, n)``, ``I(dv, n, n) = 2^n`` and
        ``I = 0`` for ``dv > 2 d``; ``I(2k - 1) = I(2k)`` (the staircase, see
        :func:`circle_intersection_lune`).

    Raises
    ------
    ValueError
        If ``n < 1``, or ``dv`` or ``d`` is not an integer in ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 and App. B.1 (Eq. 12); Kanerva (1988), App. B.
    """
    dv, d, n = _check_dnd(dv, d, n)
    m = n - dv
    a_lo = max(0, n - d - dv // 2)
    if a_lo > m:
        return 0
    prefix = [0, *accumulate(_binomial_row(dv))]  # prefix[k] = sum_{c < k} C(dv, c)
    total = 0
    binom = math.comb(m, a_lo)
    for a in range(a_lo, m + 1):
        excess = n - d - a  # disagreements with the query still allowed to come from the dv part
        lo = max(0, excess)
        hi = min(dv, dv - excess)
        total += binom * (prefix[hi + 1] - prefix[lo])
        binom = binom * (m - a) // (a + 1)
    return total


def log_circle_intersection(dv: int, d: int, n: int) -> float:
    """Natural log of :func:`circle_intersection` (``-inf`` where ``I = 0``).

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    float
        ``log I(dv, d, n)``; finite for any ``n`` (Python's ``math.log`` takes big integers).

    Raises
    ------
    ValueError
        As :func:`circle_intersection`.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 and Eq. 10 (the regression is on ``log I``).
    """
    value = circle_intersection(dv, d, n)
    return math.log(value) if value > 0 else -math.inf


def _table_recurrence(n: int, d: int, max_dv: int) -> list[int]:
    """``I(0..max_dv)`` by telescoping the first difference of Eq. 2 in ``dv``.

    Moving the pattern one bit further from the query (``j - 1 -> j``) loses the addresses at
    distance exactly ``d`` from the old pattern and gains those at distance exactly ``d`` from the
    new one; the two sets cancel except when ``j`` is odd, where the loss exceeds the gain by
    ``C(j - 1, (j - 1)/2) C(n - j, d - (j - 1)/2)``. Summing from ``I(0) = ball_size`` gives the
    whole table with ``O(n)`` big-integer operations; this is Kanerva's lune form.
    """
    out = [0] * (max_dv + 1)
    value = ball_size(d, n)
    out[0] = value
    central = 1  # C(2k, k)
    for j in range(1, max_dv + 1):
        if j % 2 == 1:
            k = (j - 1) // 2
            if k > 0:
                central = central * 2 * (2 * k - 1) // k
            value -= central * _binom(n - j, d - k)
        out[j] = value
    return out


def _table_sum(n: int, d: int, max_dv: int) -> list[int]:
    """``I(0..max_dv)`` by Eq. 2 at every ``dv``, sharing binomial rows between the ``dv``.

    With ``b = n - dv - a`` (positions where the address disagrees with both centres) and
    ``h = d - b``, the inner sum of Eq. 2 is ``S_dv(h) = sum_{c = dv - h}^{h} C(dv, c)``, which is
    ``2^dv`` for ``h >= dv``, ``2 F_dv(h) - 2^dv`` for ``dv/2 <= h < dv`` and 0 below, where
    ``F_dv`` is the cumulative row. Both ``F_dv`` (Pascal's rule on cumulative rows, ascending
    ``dv``) and ``C(n - dv, .)`` (``C(m, b) = C(m + 1, b) (m + 1 - b)/(m + 1)``, descending ``m``)
    are updated in place, truncated to the entries still needed, with C-level ``map`` loops.
    """
    out = [0] * (max_dv + 1)
    top = min(max_dv, 2 * d)
    row_m = _binomial_row(n, d)  # C(n - dv, b) for b <= min(d, n - dv), current dv = 0
    cum_v = [1] * (d + 1)  # F_dv(h) for h <= d, current dv = 0: all ones
    for dv in range(top + 1):
        m = n - dv
        if dv > 0:
            # C(m, b) from C(m + 1, b); only b <= min(m, d - ceil(dv / 2)) is needed from here on
            keep = min(m, d - (dv + 1) // 2) + 1
            row_m = list(
                map(floordiv, map(mul, row_m[:keep], range(m + 1, m + 1 - keep, -1)), repeat(m + 1))
            )
            # F_dv(h) = F_{dv-1}(h) + F_{dv-1}(h - 1), with F(-1) = 0
            cum_v = list(map(add, cum_v, [0, *cum_v[:-1]]))
        full = 1 << dv
        total = 0
        # b <= d - dv: the whole dv row counts (h >= dv)
        b_full = min(d - dv, m)
        if b_full >= 0:
            total += full * sum(row_m[: b_full + 1])
        # d - dv < b <= d - ceil(dv/2): the symmetric central part of the dv row
        b0 = max(0, d - dv + 1)
        b1 = min(m, d - (dv + 1) // 2)
        if b0 <= b1:
            seg_m = row_m[b0 : b1 + 1]
            seg_f = cum_v[d - b1 : d - b0 + 1][::-1]  # F_dv(d - b) for b = b0..b1
            total += 2 * sum(map(mul, seg_m, seg_f)) - full * sum(seg_m)
        out[dv] = total
    return out


def circle_intersection_table(n: int, d: int, dvs: Iterable[int] | None = None, *,
                              method: str = "recurrence") -> list[int]:
    """Exact ``I(dv, d, n)`` for many ``dv`` at once.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    dvs : iterable of int, optional
        Distances to evaluate, each in ``[0, n]``, in any order and with repeats. Default: every
        distance ``0, 1, ..., n``.
    method : {"recurrence", "sum"}
        ``"recurrence"`` (default) telescopes the exact first difference of Eq. 2 in ``dv``
        (``I(j - 1) - I(j)`` is zero for even ``j`` and ``C(j - 1, (j - 1)/2) C(n - j,
        d - (j - 1)/2)`` for odd ``j``), ``O(n)`` big-integer operations for the whole table.
        ``"sum"`` evaluates the double sum of Eq. 2 at every ``dv`` with binomial rows and
        prefix sums shared between the ``dv`` (``O(n d)`` operations, an independent check).
        Both are exact and agree.

    Returns
    -------
    list of int
        ``[I(dv, d, n) for dv in dvs]`` as Python integers.

    Raises
    ------
    ValueError
        If ``n < 1``, ``d`` or any ``dv`` is not an integer in ``[0, n]``, or ``method`` is
        unknown.

    Notes
    -----
    At ``n = 1000, d = 447`` the table ``dv = 0..2d`` takes about a millisecond with
    ``"recurrence"`` and tens of milliseconds with ``"sum"`` (see
    ``benchmarks/bench_sdm_geometry.py``); the authors' floating-point implementation of
    Eq. 2 takes seconds.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 / Eq. 12; Kanerva (1988), App. B (the lune).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    if dvs is None:
        wanted = list(range(n + 1))
    else:
        wanted = [_check_distance(v, n, "dv") for v in np.asarray(list(dvs), dtype=object).ravel()]
    if not wanted:
        return []
    max_dv = max(wanted)
    if method == "recurrence":
        table = _table_recurrence(n, d, max_dv)
    elif method == "sum":
        table = _table_sum(n, d, max_dv)
    else:
        raise ValueError(f"method must be 'recurrence' or 'sum', got {method!r}")
    return [table[v] for v in wanted]


# ==========================================================================================
# Kanerva's lune form and brute-force enumeration
# ==========================================================================================


def circle_intersection_lune(dv: int, d: int, n: int) -> int:
    """Kanerva's lune form of the circle intersection.

    ``I(dv, d, n) = sum_{i <= d} C(n, i) - sum_{odd j <= dv} C(j - 1, (j - 1)/2)
    C(n - j, d - (j - 1)/2)``: the ball minus the lune, built up one bit of separation at a
    time. Only odd ``j`` contribute, hence the staircase ``I(2k - 1) = I(2k)``.

    Range of validity: the form is exact for every ``0 <= dv, d <= n`` provided the binomial is
    read as ``C(N, K) = 0`` outside ``0 <= K <= N`` (this implementation does). Read literally
    with a binomial that is only defined for ``0 <= K <= N`` (``math.comb`` raises for
    ``K < 0``), it is usable only up to ``dv <= 2 d + 2``: the term ``j = 2d + 3`` has
    ``K = -1``. For ``dv > 2 d`` the subtracted sum telescopes to exactly the ball size, so
    ``I = 0``. The terms with ``d - (j - 1)/2 > n - j`` (large ``d``) vanish as well, which
    gives ``I(dv, n, n) = 2^n``.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    int
        ``I(dv, d, n)``, exact.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`.

    References
    ----------
    Kanerva (1988), App. B (the lune); Bricken & Pehlevan (2021), App. B.1 (Fig. 11 checks
    Eq. 2 against it).
    """
    dv, d, n = _check_dnd(dv, d, n)
    lune = 0
    for j in range(1, dv + 1, 2):
        k = (j - 1) // 2
        lune += _binom(j - 1, k) * _binom(n - j, d - k)
    return ball_size(d, n) - lune


def _popcount(x: np.ndarray) -> np.ndarray:
    """Number of set bits of each entry of a uint32 array."""
    x = x.astype(np.uint32, copy=True)
    x = x - ((x >> 1) & np.uint32(0x55555555))
    x = (x & np.uint32(0x33333333)) + ((x >> 2) & np.uint32(0x33333333))
    x = (x + (x >> 4)) & np.uint32(0x0F0F0F0F)
    return ((x * np.uint32(0x01010101)) & np.uint32(0xFFFFFFFF)) >> 24


def circle_intersection_enumerate(dv: int, d: int, n: int) -> int:
    """Circle intersection by brute force over all ``2^n`` addresses (``n <= 20``).

    Takes the query ``0...0`` and the pattern with its first ``dv`` bits set and counts the
    addresses within Hamming distance ``d`` of both. The reference against which the closed forms
    are tested.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``1 <= n <= 20``.

    Returns
    -------
    int
        ``I(dv, d, n)``, counted.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`, or if ``n > 20`` (more than about a million addresses).

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1-2 (definition of the intersection); Kanerva (1988), Ch. 7.
    """
    dv, d, n = _check_dnd(dv, d, n)
    if n > _ENUMERATE_MAX_N:
        raise ValueError(f"enumeration is limited to n <= {_ENUMERATE_MAX_N}, got n = {n}")
    addresses = np.arange(1 << n, dtype=np.uint32)
    pattern = np.uint32((1 << dv) - 1)
    to_query = _popcount(addresses)
    to_pattern = _popcount(addresses ^ pattern)
    return int(np.count_nonzero((to_query <= d) & (to_pattern <= d)))


# ==========================================================================================
# The paper's literal limits, grids of every form, lune terms
# ==========================================================================================


def circle_intersection_paper_limits(dv: int, d: int, n: int, *, binomial: str = "zero") -> int:
    """Eq. 2 evaluated literally, with the paper's own summation limits.

    ``I = sum_{a = n - d - floor(dv/2)}^{n - dv} sum_{c = max(0, n - d - a)}^{dv - (n - d - a)}
    C(n - dv, a) C(dv, c)``. Two of these limits can leave the range of their binomial:
    the lower limit of ``a`` is negative when ``d + floor(dv/2) > n``, and the upper limit of
    ``c`` exceeds ``dv`` whenever ``a > n - d``. :func:`circle_intersection` clips both; this
    function keeps them, so that the effect of the binomial convention can be seen.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    binomial : {"zero", "math"}
        ``"zero"``: ``C(N, K) = 0`` outside ``0 <= K <= N`` (the sum is then exact for every
        ``dv, d``). ``"math"``: Python's :func:`math.comb`, which returns 0 for ``K > N`` but
        refuses ``K < 0``; the sum then fails exactly where ``d + floor(dv/2) > n``.

    Returns
    -------
    int
        The literal double sum, exact.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`; for an unknown ``binomial``; and, with
        ``binomial="math"``, when the sum reaches a negative ``a`` (``d + floor(dv/2) > n``).

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 and App. B.1 (Eq. 12); seed 002, "Key results".
    """
    dv, d, n = _check_dnd(dv, d, n)
    if binomial == "zero":
        comb = _binom
    elif binomial == "math":
        comb = math.comb
    else:
        raise ValueError(f"binomial must be 'zero' or 'math', got {binomial!r}")
    m = n - dv
    total = 0
    for a in range(n - d - dv // 2, m + 1):
        excess = n - d - a
        for c in range(max(0, excess), dv - excess + 1):
            try:
                total += comb(m, a) * comb(dv, c)
            except ValueError as err:
                raise ValueError(
                    f"Eq. 2 with the paper's limits evaluates C({m}, {a}) at (dv, d, n) = "
                    f"({dv}, {d}, {n}): the lower limit n - d - floor(dv/2) = "
                    f"{n - d - dv // 2} is negative, and math.comb refuses it ({err})"
                ) from None
    return total


_GRID_METHODS = ("eq2", "paper", "lune", "table", "enumerate")


def circle_intersection_grid(n: int, method: str = "eq2") -> np.ndarray:
    """``I(dv, d, n)`` for every radius and every distance, by one of the exact forms.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1`` (``n <= 20`` for ``method="enumerate"``).
    method : {"eq2", "paper", "lune", "table", "enumerate"}
        ``"eq2"``: :func:`circle_intersection` (Eq. 2 with clipped limits). ``"paper"``:
        :func:`circle_intersection_paper_limits` with ``C = 0`` outside its range.
        ``"lune"``: :func:`circle_intersection_lune` (Kanerva). ``"table"``:
        :func:`circle_intersection_table` (the lune differences summed over ``dv``).
        ``"enumerate"``: :func:`circle_intersection_enumerate` (brute force).

    Returns
    -------
    numpy.ndarray
        Shape ``(n + 1, n + 1)``, dtype ``object`` (Python ints), indexed ``[d, dv]``.

    Raises
    ------
    ValueError
        If ``n`` is invalid, ``method`` is unknown, or ``n > 20`` with ``"enumerate"``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 and Fig. 11; Kanerva (1988), App. B.
    """
    n = _check_n(n)
    if method not in _GRID_METHODS:
        raise ValueError(f"method must be one of {_GRID_METHODS}, got {method!r}")
    if method == "enumerate" and n > _ENUMERATE_MAX_N:
        raise ValueError(f"enumeration is limited to n <= {_ENUMERATE_MAX_N}, got n = {n}")
    out = np.empty((n + 1, n + 1), dtype=object)
    for d in range(n + 1):
        if method == "table":
            out[d, :] = circle_intersection_table(n, d)
            continue
        if method == "enumerate":
            addresses = np.arange(1 << n, dtype=np.uint32)
            to_query = _popcount(addresses)
            near_query = to_query <= d
            for dv in range(n + 1):
                to_pattern = _popcount(addresses ^ np.uint32((1 << dv) - 1))
                out[d, dv] = int(np.count_nonzero(near_query & (to_pattern <= d)))
            continue
        form = {"eq2": circle_intersection, "paper": circle_intersection_paper_limits,
                "lune": circle_intersection_lune}[method]
        for dv in range(n + 1):
            out[d, dv] = form(dv, d, n)
    return out


def lune_term(j: int, d: int, n: int) -> int:
    """The step ``I(j - 1, d, n) - I(j, d, n)``: what moving the pattern one bit further loses.

    Move the pattern ``p`` from distance ``j - 1`` to ``j`` of the query by flipping one bit
    ``i`` on which the two agreed. The addresses lost are those within ``d`` of the query at
    distance exactly ``d`` from ``p`` with bit ``i`` equal to ``p_i``; flipping bit ``i`` maps the
    ones still within ``d - 1`` of the query onto the addresses gained, so the net loss is the
    number of addresses at distance exactly ``d`` from both the query and ``p``, with bit ``i``
    matching both. Distances from one address to two points ``j - 1`` apart have the parity of
    ``j - 1``, so such addresses exist only for odd ``j``: they split the ``j - 1`` differing bits
    evenly and mismatch ``d - (j - 1)/2`` of the other ``n - j`` free bits,

        I(j - 1) - I(j) = C(j - 1, (j - 1)/2) C(n - j, d - (j - 1)/2)   (j odd),   0   (j even),

    Kanerva's lune term, with ``C = 0`` outside its range. Even ``j`` give the staircase
    ``I(2k - 1) = I(2k)``.

    Parameters
    ----------
    j : int
        The new distance, ``1 <= j <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    int
        The exact decrement, ``>= 0``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``d`` is not in ``[0, n]`` or ``j`` is not in ``[1, n]``.

    References
    ----------
    Kanerva (1988), App. B (the lune); seed 002, "What my recomputation of the approximation
    shows" (the staircase).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    j = _as_int(j, "j")
    if j < 1 or j > n:
        raise ValueError(f"j must lie in [1, n] = [1, {n}], got {j}")
    if j % 2 == 0:
        return 0
    k = (j - 1) // 2
    return _binom(j - 1, k) * _binom(n - j, d - k)
