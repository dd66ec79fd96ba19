"""Sparse distributed memory (SDM): the geometry behind "attention approximates SDM".

In Kanerva's sparse distributed memory a pattern written at address ``p`` and read from address
``xi`` meets in the neurons (hard locations) that lie within Hamming radius ``d`` of both. With
neurons at every address, the read-out weight of the pattern is the number of binary addresses in
the intersection of two radius-``d`` Hamming balls whose centres are ``dv`` apart,
``I(dv, d, n)``. Bricken & Pehlevan (2021) show that this count falls off roughly exponentially
in ``dv`` and hence that a normalised SDM read is close to softmax attention with unit-norm
vectors and a fitted inverse temperature ``beta``. This module holds the geometry:

1. Hamming balls: :func:`ball_size`, :func:`ball_fraction`, :func:`log_ball_fraction`.
2. The circle intersection ``I(dv, d, n)``: the paper's double sum (Eq. 2 / Eq. 12) with its
   summation limits generalised to every ``0 <= dv, d <= n`` (:func:`circle_intersection`), a
   fast exact table (:func:`circle_intersection_table`), Kanerva's lune form
   (:func:`circle_intersection_lune`), brute-force enumeration for small ``n``
   (:func:`circle_intersection_enumerate`) and Kanerva's normal approximation
   (:func:`circle_intersection_continuous`).
3. Expected neuron counts ``I r / 2^n`` for ``r`` random neurons (:func:`expected_neurons`).
4. Continuous SDM on the unit sphere: the area fraction of the intersection of two
   hyperspherical caps (:func:`cap_intersection`, after Lee & Kim 2014), its single-cap
   counterpart (:func:`cap_fraction`) and a Monte Carlo check (:func:`cap_intersection_mc`).
5. The exponential approximation: the log-linear ``beta`` fit of Eq. 10 (:func:`fit_beta`), the
   analytic ``beta`` of Eq. 21 (:func:`analytic_beta`) and the single-largest-summand
   approximation of Eq. 2 that Eq. 21 is derived from (:func:`largest_summand`,
   :func:`largest_summand_beta`).

Signal-to-noise ratios, optimal radii and read rules build on these and live in the sibling
modules of :mod:`assocmem.sdm`.

Conventions. Hamming arguments (``n``, ``d``, ``dv``) are integers: Python ints, numpy integers,
integral floats such as ``3.0``, or 0-d numpy arrays or torch tensors holding one
(``torch.tensor(3)``); anything else raises :class:`ValueError`. Exact counts are
Python integers (``2^1000`` does not fit in a float64 or an int64). Cosines and the spherical
radius are floats. The binary-to-sphere dictionary is the bipolar map ``x -> (2x - 1)/sqrt(n)``,
under which Hamming distance ``dv`` is the cosine ``rho = 1 - 2 dv / n`` and radius ``d`` is the
threshold cosine ``c = 1 - 2 d / n``.

References
----------
.. [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
   NeurIPS 34. Eq. 1 (SDM read), Eq. 2 / Eq. 12 (circle intersection), Eq. 3 (exponential
   approximation), Eq. 5 (binary-to-sphere map), Eq. 9 and App. B.3 / Eq. 22 (continuous SDM),
   Eq. 10 (beta regression), App. B.2 / Eqs. 16-21 (analytic exponential bound).
.. [K88] Kanerva, P. (1988). Sparse Distributed Memory. MIT Press. Ch. 7 and App. B
   (intersection of two circles, the lune, the normal approximation).
.. [LK14] Lee, Y., & Kim, W. C. (2014). Concise formulas for the surface area of the
   intersection of two hyperspherical caps. KAIST Technical Report (the intersection as twice
   an integral of ``sin^{n-2}`` times a regularised incomplete beta function).
.. [Li11] Li, S. (2011). Concise formulas for the area and volume of a hyperspherical cap.
   Asian Journal of Mathematics and Statistics 4(1), 66-70 (the single cap).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate, repeat
from numbers import Integral, Real
from operator import add, floordiv, mul
from typing import Iterable

import numpy as np
from scipy import special, stats

from assocmem._checks import as_int as _as_int

__all__ = [
    # Hamming balls
    "ball_size",
    "ball_fraction",
    "log_ball_fraction",
    # circle intersection
    "circle_intersection",
    "circle_intersection_table",
    "circle_intersection_lune",
    "circle_intersection_enumerate",
    "circle_intersection_continuous",
    "log_circle_intersection",
    # neuron counts
    "expected_neurons",
    "log_expected_neurons",
    # spherical caps
    "cap_fraction",
    "log_cap_fraction",
    "cap_intersection",
    "log_cap_intersection",
    "cap_intersection_mc",
    # exponential approximation
    "BetaFit",
    "fit_beta",
    "analytic_beta",
    "analytic_log_intersection",
    "largest_summand",
    "largest_summand_beta",
]

_LOG2 = math.log(2.0)
_ENUMERATE_MAX_N = 20

#: :func:`fit_beta` warns when the line explains less than this fraction of the variance of
#: ``log I`` over the fit window. Not 0.9: the staircase ``I(2k - 1) = I(2k)`` alone keeps the
#: paper's own fits below that at small radii (``R^2 = 0.887`` at ``n = 64``, ``d = 5``;
#: ``0.75`` at ``d = 3``), and a fit on ``dv <= 2d`` at ``n = 1000`` has ``R^2 = 0.68``; those
#: are the cases the book studies, not mistakes.
POOR_FIT_R2 = 0.5


# ==========================================================================================
# 0. Input validation
# ==========================================================================================




def _check_n(n, minimum: int = 1) -> int:
    n = _as_int(n, "n")
    if n < minimum:
        raise ValueError(f"n must be >= {minimum}, got {n}")
    return n


def _check_distance(value, n: int, name: str) -> int:
    v = _as_int(value, name)
    if v < 0 or v > n:
        raise ValueError(f"{name} must lie in [0, n] = [0, {n}], got {v}")
    return v


def _check_dnd(dv, d, n) -> tuple[int, int, int]:
    n = _check_n(n)
    return _check_distance(dv, n, "dv"), _check_distance(d, n, "d"), n


def _check_rho(rho) -> tuple[np.ndarray, bool]:
    arr = np.asarray(rho, dtype=float)
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr < -1.0) or np.any(arr > 1.0)):
        bad = arr[~(np.isfinite(arr) & (arr >= -1.0) & (arr <= 1.0))].ravel()[0]
        raise ValueError(f"rho is a cosine and must lie in [-1, 1], got {bad!r}")
    return arr, arr.ndim == 0


def _check_real_radius(d, n: int) -> float:
    try:
        f = float(d)
    except (TypeError, ValueError):
        raise ValueError(f"d must be a real number in [0, n], got {d!r}") from None
    if not math.isfinite(f) or f < 0 or f > n:
        raise ValueError(f"d must lie in [0, n] = [0, {n}], got {d!r}")
    return f


# ==========================================================================================
# 1. Binomial helpers (exact integers)
# ==========================================================================================


def _binom(m: int, k: int) -> int:
    """``C(m, k)`` with the convention ``C(m, k) = 0`` outside ``0 <= k <= m``."""
    if k < 0 or m < 0 or k > m:
        return 0
    return math.comb(m, k)


def _binomial_row(m: int, kmax: int | None = None) -> list[int]:
    """``[C(m, 0), ..., C(m, kmax)]`` (``kmax`` defaults to ``m``) by the multiplicative rule."""
    kmax = m if kmax is None else min(kmax, m)
    row = [1] * (kmax + 1)
    c = 1
    for k in range(kmax):
        c = c * (m - k) // (k + 1)
        row[k + 1] = c
    return row


# ==========================================================================================
# 2. Hamming balls
# ==========================================================================================


def ball_size(d, n) -> int:
    """Number of binary addresses within Hamming distance ``d`` of a point of ``{0, 1}^n``.

    Parameters
    ----------
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    int
        ``sum_{i <= d} C(n, i)``, exact. Equals ``I(0, d, n)``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``d`` is outside ``[0, n]`` or not an integer.

    References
    ----------
    Kanerva (1988), Ch. 1 and App. B; Bricken & Pehlevan (2021), §1 (the fraction ``p``).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    if 2 * d >= n:  # sum the shorter tail
        return (1 << n) - sum(_binomial_row(n, n - d - 1)) if d < n else 1 << n
    return sum(_binomial_row(n, d))


def ball_fraction(d, n) -> float:
    """Fraction ``p`` of ``{0, 1}^n`` inside a Hamming ball of radius ``d``.

    Parameters
    ----------
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    float
        ``ball_size(d, n) / 2^n``, correctly rounded (exact integer division, so no overflow
        for ``n >= 1024``; values below the smallest float underflow to ``0.0``; use
        :func:`log_ball_fraction` there).

    Raises
    ------
    ValueError
        As :func:`ball_size`.

    References
    ----------
    Bricken & Pehlevan (2021), §1 and App. B.5 (``p`` as the radius parameter); Kanerva (1988).
    """
    n = _check_n(n)
    return ball_size(d, n) / (1 << n)


def log_ball_fraction(d, n) -> float:
    """Natural log of :func:`ball_fraction`, finite for every ``0 <= d <= n``.

    Parameters
    ----------
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    float
        ``log(ball_size(d, n)) - n log 2``.

    Raises
    ------
    ValueError
        As :func:`ball_size`.

    References
    ----------
    Kanerva (1988); Bricken & Pehlevan (2021), §1.
    """
    n = _check_n(n)
    return math.log(ball_size(d, n)) - n * _LOG2


# ==========================================================================================
# 3. The circle intersection I(dv, d, n)
# ==========================================================================================


def circle_intersection(dv, d, n) -> int:
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


def log_circle_intersection(dv, d, n) -> float:
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


def circle_intersection_table(n, d, dvs=None, *, method: str = "recurrence") -> list[int]:
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


def circle_intersection_lune(dv, d, n) -> int:
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


def circle_intersection_enumerate(dv, d, n) -> int:
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


def circle_intersection_continuous(dv, d, n, *, continuity_correction: bool = False,
                                   method: str = "owens_t"):
    """Kanerva's normal approximation of the intersection fraction ``I(dv, d, n) / 2^n``.

    For a uniformly random address ``x``, the distances ``X = d(x, xi)`` and ``Y = d(x, p)``
    are ``X = U + V`` and ``Y = U + dv - V`` with ``U ~ Bin(n - dv, 1/2)`` (the positions where
    the centres agree) and ``V ~ Bin(dv, 1/2)`` independent. Each is a sum of ``n`` fair
    ``+-1/2`` steps about ``n/2``: mean ``n/2``, variance ``n/4``, covariance
    ``(n - 2 dv)/4``. Replacing ``(X, Y)`` by the bivariate normal with these moments,

        I / 2^n ~= P(Z1 <= c_p, Z2 <= c_p) = Phi_2(c_p, c_p; rho),
        c_p = (d - n/2) / sqrt(n/4),  rho = 1 - 2 dv / n,
                = int_{-inf}^{c_p} phi(z) Phi((c_p - rho z) / sqrt(1 - rho^2)) dz,

    which is Kanerva's integral. For equal limits it has the closed form
    ``Phi(c_p) - 2 T(c_p, sqrt((1 - rho)/(1 + rho)))`` with Owen's ``T`` function; at
    ``rho = -1`` it is ``max(0, 2 Phi(c_p) - 1)``.

    Parameters
    ----------
    dv : float or array_like
        Distance(s) between the centres, in ``[0, n]`` (real values allowed: this is a continuous
        approximation).
    d : float
        Radius in ``[0, n]`` (real allowed).
    n : int
        Dimension, ``n >= 1``.
    continuity_correction : bool, default False
        Use ``d + 1/2`` in ``c_p`` (not in Kanerva's formula; usually closer to the exact count).
    method : {"owens_t", "quad"}
        ``"owens_t"`` (default, vectorised, absolute accuracy ~1e-16) or ``"quad"``
        (``scipy.integrate.quad`` of the 1-D integral per value, relative accuracy also in the
        far tail).

    Returns
    -------
    float or numpy.ndarray
        The approximate fraction, a float for scalar ``dv``, else an array shaped like ``dv``.
        Multiply by ``r`` for the expected number of neurons.

    Raises
    ------
    ValueError
        If ``n < 1``, ``dv`` or ``d`` is outside ``[0, n]``, or ``method`` is unknown.

    References
    ----------
    Kanerva (1988), Ch. 7 and App. B (the normal approximation with
    ``c_p = (d - n/2)/sqrt(n/4)``); Bricken & Pehlevan (2021), App. B.1 and Fig. 10.
    """
    n = _check_n(n)
    dr = _check_real_radius(d, n)
    dv_arr = np.asarray(dv, dtype=float)
    if dv_arr.size and (not np.all(np.isfinite(dv_arr)) or dv_arr.min() < 0 or dv_arr.max() > n):
        raise ValueError(f"dv must lie in [0, n] = [0, {n}], got {dv!r}")
    scalar = dv_arr.ndim == 0
    h = ((dr + (0.5 if continuity_correction else 0.0)) - n / 2) / math.sqrt(n / 4)
    rho = 1.0 - 2.0 * np.atleast_1d(dv_arr) / n
    if method == "owens_t":
        out = np.empty_like(rho)
        anti = rho <= -1.0
        out[anti] = max(0.0, 2.0 * special.ndtr(h) - 1.0)
        r = rho[~anti]
        out[~anti] = special.ndtr(h) - 2.0 * special.owens_t(h, np.sqrt((1.0 - r) / (1.0 + r)))
        out = np.clip(out, 0.0, 1.0)
    elif method == "quad":
        from scipy import integrate

        out = np.empty_like(rho)
        for i, r in enumerate(rho):
            if r >= 1.0:
                out[i] = special.ndtr(h)
            elif r <= -1.0:
                out[i] = max(0.0, 2.0 * special.ndtr(h) - 1.0)
            else:
                s = math.sqrt(1.0 - r * r)
                f = lambda z: stats.norm.pdf(z) * special.ndtr((h - r * z) / s)  # noqa: E731
                out[i] = integrate.quad(f, -np.inf, h, epsabs=0.0, epsrel=1e-12, limit=200)[0]
    else:
        raise ValueError(f"method must be 'owens_t' or 'quad', got {method!r}")
    return float(out[0]) if scalar else out.reshape(dv_arr.shape)


# ==========================================================================================
# 4. Expected neuron counts
# ==========================================================================================


def _check_r(r) -> Fraction:
    if isinstance(r, (bool, np.bool_)):
        raise ValueError(f"r must be a positive number of neurons, got {r!r}")
    if isinstance(r, np.generic):
        r = r.item()
    if isinstance(r, Integral):
        fr = Fraction(int(r))
    elif isinstance(r, Real) and math.isfinite(float(r)):
        fr = Fraction(float(r))
    else:
        raise ValueError(f"r must be a finite positive number of neurons, got {r!r}")
    if fr <= 0:
        raise ValueError(f"r must be positive, got {r!r}")
    return fr


def expected_neurons(dv, d, n, r) -> float:
    """Expected number of neurons in the intersection, ``I(dv, d, n) r / 2^n``.

    With ``r`` neuron addresses drawn uniformly from ``{0, 1}^n`` the count is binomial with
    this mean. Computed exactly as a rational number and rounded once, so ``r = 2^64`` and
    ``n = 1000`` neither overflow nor lose precision.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``> 0`` (Python ints of any size, e.g. ``2**64``, or floats such as
        ``1e6``).

    Returns
    -------
    float
        The expected count (``0.0`` where ``I = 0``; values below ~1e-308 underflow, see
        :func:`log_expected_neurons`).

    Raises
    ------
    ValueError
        As :func:`circle_intersection`, or if ``r`` is not a finite positive number.

    References
    ----------
    Bricken & Pehlevan (2021), §1 and App. B.4-B.5; Kanerva (1988), Ch. 7.
    """
    fr = _check_r(r)
    value = circle_intersection(dv, d, n)
    return float(Fraction(value) * fr / (1 << int(n)))


def log_expected_neurons(dv, d, n, r) -> float:
    """Natural log of :func:`expected_neurons` (``-inf`` where ``I = 0``).

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``> 0``.

    Returns
    -------
    float
        ``log I + log r - n log 2``.

    Raises
    ------
    ValueError
        As :func:`expected_neurons`.

    References
    ----------
    Bricken & Pehlevan (2021), §1 and App. B.4-B.5.
    """
    fr = _check_r(r)
    value = circle_intersection(dv, d, n)
    if value == 0:
        return -math.inf
    return math.log(value) + math.log(fr.numerator) - math.log(fr.denominator) - int(n) * _LOG2


# ==========================================================================================
# 5. Continuous SDM: hyperspherical caps
# ==========================================================================================
#
# On S^{n-1} a cap of Hamming-equivalent radius d is {x : <x, u> >= c}, c = 1 - 2 d / n, with
# half-angle theta = arccos c. The polar angle phi of a uniform point has density
# sin^{n-2}(phi) / B((n-1)/2, 1/2) on [0, pi]. For two caps with centres at angle t the
# intersection splits along the bisecting hyperplane; on each side one of the two constraints
# is implied by the other, so the intersection is twice {phi <= theta} cut by a hyperplane
# through the origin at angle t/2 from the axis. At polar angle phi the cut keeps the part of
# the (n-2)-sphere of radius sin(phi) on one side of a hyperplane at signed offset
# s = tan(t/2) / tan(phi), i.e. a cap of S^{n-2} of area fraction (1/2) I_{1-s^2}((n-2)/2, 1/2)
# (s >= 0). Hence (Lee & Kim 2014)
#
#   Ic(t) = 2 int_{t/2}^{theta} sin^{n-2}(phi) / B((n-1)/2, 1/2)
#                                * (1/2) I_{x(phi)}((n-2)/2, 1/2) dphi,
#   x(phi) = 1 - tan^2(t/2) / tan^2(phi) = sin(phi - t/2) sin(phi + t/2) / (cos^2(t/2) sin^2 phi),
#
# for theta <= pi/2, and Ic = 0 for t >= 2 theta. For theta > pi/2 the caps are complements of
# caps of half-angle pi - theta around the antipodes and inclusion-exclusion gives
# Ic(theta, t) = 1 - 2 F(pi - theta) + Ic(pi - theta, t), F the single-cap fraction.

# Gauss-Legendre nodes and weights on [0, 1], cached by order.
_GL_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _gauss_legendre01(order: int) -> tuple[np.ndarray, np.ndarray]:
    if order not in _GL_CACHE:
        x, w = np.polynomial.legendre.leggauss(order)
        _GL_CACHE[order] = ((x + 1.0) / 2.0, w / 2.0)
    return _GL_CACHE[order]


def _log_betainc(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """``log I_x(a, b)`` for an array ``x`` in ``[0, 1]``, accurate where ``I_x`` underflows.

    Uses ``scipy.special.betainc`` where its value is a normal float and otherwise the series
    ``I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * 2F1(a + b, 1; a + 1; x)`` in log space (that
    only happens for ``x`` well below 1, where the series converges geometrically).
    """
    x = np.asarray(x, dtype=float)
    value = special.betainc(a, b, x)
    with np.errstate(divide="ignore"):
        out = np.log(value)
    small = (value < 1e-280) & (x > 0.0)
    if np.any(small):
        xs = x[small]
        term = np.ones_like(xs)
        total = np.ones_like(xs)
        for k in range(100_000):
            term = term * (a + b + k) / (a + 1.0 + k) * xs
            total = total + term
            if np.all(term < 1e-17 * total):
                break
        out[small] = (
            a * np.log(xs) + b * np.log1p(-xs) - math.log(a) - special.betaln(a, b) + np.log(total)
        )
    return out


def _log_cap_fraction_theta(theta: float, n: int) -> float:
    """Log area fraction of a cap of half-angle ``theta`` on ``S^{n-1}`` (``n >= 2``)."""
    if theta <= 0.0:
        return -math.inf
    if theta >= math.pi:
        return 0.0
    if n == 2:
        return math.log(theta / math.pi)
    sin2 = math.sin(theta) ** 2
    half_ibeta = float(_log_betainc((n - 1) / 2.0, 0.5, np.array([sin2]))[0]) - _LOG2
    if theta <= math.pi / 2:
        return half_ibeta
    return math.log1p(-math.exp(half_ibeta))


def _theta_from_d(d: float, n: int) -> float:
    c = 1.0 - 2.0 * d / n
    return math.acos(min(1.0, max(-1.0, c)))


def _log_cap_intersection_acute(t: np.ndarray, theta: float, n: int, order: int) -> np.ndarray:
    """Log intersection fraction of two caps of half-angle ``theta <= pi/2``, ``n >= 3``.

    Quadrature: the log-integrand ``g(phi)`` is concave and increasing on ``[t/2, theta]``, so
    with ``tau = theta - phi`` it lies below ``g(theta) - g'(theta) tau - s^2 tau^2 / 2``, where
    ``s^2 = (n - 2) / sin^2(theta)`` bounds the curvature of the ``sin^{n-2}`` factor. The part
    of the interval where that bound is below ``g(theta) - 45`` is dropped (relative
    contribution below ``e^{-40}``); on the rest the integrand varies by at most ``e^{45}`` and a
    fixed-order Gauss-Legendre rule is accurate. When the kept window reaches the lower end
    ``t/2``, where the integrand behaves like ``(phi - t/2)^{(n-2)/2}``, the substitution
    ``phi = t/2 + (theta - t/2) w^2`` makes it a polynomial in ``w``.
    """
    out = np.full(t.shape, -np.inf)
    a = t / 2.0
    live = a < theta
    if not np.any(live):
        return out
    a = a[live]
    length = theta - a
    p = (n - 2) / 2.0
    log_norm = special.betaln((n - 1) / 2.0, 0.5)
    sin_t, cos_t = math.sin(theta), math.cos(theta)

    # slope of g at theta: (n - 2) cot(theta) + d/dphi log I_x(phi), x = 1 - tan^2(a) cot^2(phi)
    tan_a2 = np.tan(a) ** 2
    x_top = np.clip(1.0 - tan_a2 * (cos_t / sin_t) ** 2, 0.0, 1.0)
    slope = np.full(a.shape, (n - 2) * cos_t / sin_t)
    moving = (tan_a2 > 0.0) & (x_top > 0.0) & (x_top < 1.0)
    if np.any(moving):
        xm = x_top[moving]
        log_dI = (
            (p - 1.0) * np.log(xm) - 0.5 * np.log1p(-xm) - special.betaln(p, 0.5)
            - _log_betainc(p, 0.5, xm)
        )
        slope[moving] += np.exp(log_dI) * 2.0 * tan_a2[moving] * cos_t / sin_t**3
    slope = np.maximum(slope, 0.0)
    curv = (n - 2) / sin_t**2
    budget = 45.0
    window = 2.0 * budget / (slope + np.sqrt(slope**2 + 2.0 * curv * budget))
    reach = window >= length  # the kept window covers all of [a, theta]

    w_nodes, w_weights = _gauss_legendre01(order)
    u, wt = w_nodes[None, :], np.log(w_weights)[None, :]
    # linear map on [theta - window, theta] or square map on [a, theta]
    span = np.where(reach, length, window)[:, None]
    phi_lin = theta - span * u
    log_jac_lin = np.log(span) + np.zeros_like(u)
    phi_sq = a[:, None] + length[:, None] * u**2
    with np.errstate(divide="ignore"):
        log_jac_sq = np.log(2.0 * length[:, None] * u)
    phi = np.where(reach[:, None], phi_sq, phi_lin)
    log_jac = np.where(reach[:, None], log_jac_sq, log_jac_lin)
    phi = np.clip(phi, a[:, None], theta)
    sin_phi = np.sin(phi)
    x = np.sin(phi - a[:, None]) * np.sin(phi + a[:, None]) / (np.cos(a)[:, None] ** 2 * sin_phi**2)
    x = np.clip(x, 0.0, 1.0)
    log_f = (n - 2) * np.log(sin_phi) + _log_betainc(p, 0.5, x) - _LOG2 - log_norm
    out[live] = special.logsumexp(log_f + log_jac + wt, axis=1) + _LOG2
    return out


def _log_cap_intersection_t(t: np.ndarray, d: float, n: int, order: int) -> np.ndarray:
    """Log intersection fraction for centre angles ``t`` (array), radius ``d``, ``n >= 2``."""
    theta = _theta_from_d(d, n)
    if n == 2:  # arcs on the circle: overlap 2 theta - t, plus the wrap-around when theta > pi/2
        overlap = np.maximum(0.0, 2 * theta - t) + np.maximum(0.0, 2 * theta - (2 * math.pi - t))
        with np.errstate(divide="ignore"):
            return np.log(np.minimum(overlap / (2 * math.pi), 1.0))
    if theta <= 0.0:
        return np.full(t.shape, -np.inf)
    if theta <= math.pi / 2:
        return _log_cap_intersection_acute(t, theta, n, order)
    # obtuse caps: inclusion-exclusion with the complementary acute caps at the antipodes
    theta_c = math.pi - theta
    if theta_c <= 0.0:
        return np.zeros(t.shape)
    log_band = math.log1p(-2.0 * math.exp(_log_cap_fraction_theta(theta_c, n)))
    rest = _log_cap_intersection_acute(t, theta_c, n, order)
    return np.logaddexp(log_band, rest)


def _default_order(order) -> int:
    if order is None:
        return 40
    order = _as_int(order, "order")
    if order < 2:
        raise ValueError(f"order must be >= 2, got {order}")
    return order


def cap_fraction(d, n) -> float:
    """Fraction of the unit sphere ``S^{n-1}`` in a cap of threshold cosine ``c = 1 - 2 d / n``.

    Parameters
    ----------
    d : float
        Hamming-equivalent radius in ``[0, n]`` (real allowed).
    n : int
        Ambient dimension, ``n >= 2``.

    Returns
    -------
    float
        ``(1/2) I_{1 - c^2}((n - 1)/2, 1/2)`` for ``c >= 0`` and one minus that for ``c < 0``
        (``I`` the regularised incomplete beta function). Equals :func:`cap_intersection` at
        ``rho = 1``.

    Raises
    ------
    ValueError
        If ``n < 2`` or ``d`` is outside ``[0, n]``.

    References
    ----------
    Li (2011) / Lee & Kim (2014), the area of a hyperspherical cap; Bricken & Pehlevan (2021),
    App. B.3.
    """
    return math.exp(log_cap_fraction(d, n))


def log_cap_fraction(d, n) -> float:
    """Natural log of :func:`cap_fraction`, accurate where the fraction underflows.

    Parameters
    ----------
    d : float
        Hamming-equivalent radius in ``[0, n]``.
    n : int
        Ambient dimension, ``n >= 2``.

    Returns
    -------
    float
        ``log`` of the cap's area fraction (``-inf`` at ``d = 0``).

    Raises
    ------
    ValueError
        If ``n < 2`` or ``d`` is outside ``[0, n]``.

    References
    ----------
    Li (2011) / Lee & Kim (2014); Bricken & Pehlevan (2021), App. B.3.
    """
    n = _check_n(n, minimum=2)
    dr = _check_real_radius(d, n)
    return _log_cap_fraction_theta(_theta_from_d(dr, n), n)


def log_cap_intersection(rho, d, n, *, order=None):
    """Natural log of :func:`cap_intersection`, computed in log space throughout.

    Parameters
    ----------
    rho : float or array_like
        Cosine(s) between the two cap centres, in ``[-1, 1]``; any shape.
    d : float
        Hamming-equivalent radius in ``[0, n]``: threshold cosine ``c = 1 - 2 d / n``.
    n : int
        Ambient dimension, ``n >= 2``.
    order : int, optional
        Gauss-Legendre order of the quadrature (default 40).

    Returns
    -------
    float or numpy.ndarray
        ``log Ic``; ``-inf`` where the caps do not overlap. A float for scalar ``rho``, else an
        array shaped like ``rho``.

    Raises
    ------
    ValueError
        If ``rho`` is outside ``[-1, 1]``, ``d`` outside ``[0, n]``, ``n < 2`` or ``order < 2``.

    Notes
    -----
    The authors' implementation adds ``2`` where it means ``log 2`` when it doubles the
    integral in log space, so its log-counts are too large by ``2 - log 2`` (counts inflated by
    ``e^2 / 2``). The factor is common to every pattern, so it cancels in normalised read
    weights and does not change a fitted ``beta``; it only shows in absolute counts.

    References
    ----------
    Lee & Kim (2014), intersection of two hyperspherical caps; Bricken & Pehlevan (2021),
    App. B.3 (Eq. 22) and Eq. 9.
    """
    n = _check_n(n, minimum=2)
    dr = _check_real_radius(d, n)
    order = _default_order(order)
    arr, scalar = _check_rho(rho)
    t = np.arccos(np.atleast_1d(arr).ravel())
    out = _log_cap_intersection_t(t, dr, n, order)
    return float(out[0]) if scalar else out.reshape(arr.shape)


def cap_intersection(rho, d, n, *, order=None):
    """Fraction of ``S^{n-1}`` inside two caps of threshold cosine ``c = 1 - 2 d / n``.

    The continuous-SDM read weight of a pattern at cosine ``rho`` to the query (Bricken &
    Pehlevan 2021, App. B.3). Following Lee & Kim (2014), for half-angle
    ``theta = arccos c <= pi/2`` and centre angle ``t = arccos rho``,

        Ic = int_{t/2}^{theta} sin^{n-2}(phi) / B((n-1)/2, 1/2)
                 * I_{1 - tan^2(t/2)/tan^2(phi)}((n - 2)/2, 1/2) dphi,

    twice the integral of the polar density times half a regularised incomplete beta, and
    ``Ic = 0`` for ``t >= 2 theta``. For ``theta > pi/2`` inclusion-exclusion with the
    complementary caps gives ``Ic = 1 - 2 F(pi - theta) + Ic(pi - theta)``. Unlike the binary
    intersection, ``Ic`` is still positive at ``rho = 1 - 4 d / n`` (the cosine of ``dv = 2d``)
    whenever ``d < n/2``; it vanishes only from ``dv = 4 d (1 - d/n)``.

    The integral is evaluated in log space with a fixed-order Gauss-Legendre rule after an
    exponential change of variable adapted to the decay of the integrand at ``theta``,
    vectorised over all ``rho`` at once (``log Ic`` agrees with a 40-digit reference to about
    ``1e-12`` relative for ``3 <= n <= 1000`` with the default order; see the tests).

    Parameters
    ----------
    rho : float or array_like
        Cosine(s) between the two cap centres, in ``[-1, 1]``; any shape.
    d : float
        Hamming-equivalent radius in ``[0, n]`` (real allowed); ``c = 1 - 2 d / n``.
    n : int
        Ambient dimension, ``n >= 2`` (``n = 2`` uses the exact arc-overlap formula).
    order : int, optional
        Gauss-Legendre order (default 40).

    Returns
    -------
    float or numpy.ndarray
        The area fraction, a float for scalar ``rho``, else an array shaped like ``rho``. At
        ``rho = 1`` it equals :func:`cap_fraction`. Values below ~1e-308 underflow to 0; use
        :func:`log_cap_intersection`.

    Raises
    ------
    ValueError
        If ``rho`` is outside ``[-1, 1]``, ``d`` outside ``[0, n]``, ``n < 2`` or ``order < 2``.

    Notes
    -----
    See :func:`log_cap_intersection` for the ``2`` versus ``log 2`` slip in the authors' code.

    References
    ----------
    Lee & Kim (2014), Concise formulas for the surface area of the intersection of two
    hyperspherical caps; Li (2011), Concise formulas for the area and volume of a hyperspherical
    cap; Bricken & Pehlevan (2021), App. B.3, Eq. 9 and Eq. 22.
    """
    out = log_cap_intersection(rho, d, n, order=order)
    return math.exp(out) if isinstance(out, float) else np.exp(out)


def cap_intersection_mc(rho, d, n, samples: int = 100_000, seed=0, *, return_stderr: bool = False):
    """Monte Carlo estimate of :func:`cap_intersection`.

    Draws ``samples`` uniform points on ``S^{n-1}``; only their coordinates in the plane of the
    two centres matter, and these are sampled exactly as ``(g1, g2) / sqrt(g1^2 + g2^2 + q)``
    with ``g1, g2`` standard normal and ``q ~ chi^2_{n-2}``. The same points serve every
    ``rho`` (common random numbers).

    Parameters
    ----------
    rho : float or array_like
        Cosine(s) between the centres, in ``[-1, 1]``.
    d : float
        Hamming-equivalent radius in ``[0, n]``.
    n : int
        Ambient dimension, ``n >= 2``.
    samples : int, default 100000
        Number of random points, ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        Seed for ``numpy.random.default_rng``.
    return_stderr : bool, default False
        Also return the binomial standard error ``sqrt(p (1 - p) / samples)``.

    Returns
    -------
    estimate : float or numpy.ndarray
        Fraction of the points inside both caps, shaped like ``rho``.
    stderr : float or numpy.ndarray
        Only if ``return_stderr``.

    Raises
    ------
    ValueError
        If ``rho``, ``d`` or ``n`` is out of range or ``samples < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.3; Lee & Kim (2014) (the closed form being checked).
    """
    n = _check_n(n, minimum=2)
    dr = _check_real_radius(d, n)
    samples = _as_int(samples, "samples")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    arr, scalar = _check_rho(rho)
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((2, samples))
    rest = rng.chisquare(n - 2, samples) if n > 2 else np.zeros(samples)
    norm = np.sqrt(g[0] ** 2 + g[1] ** 2 + rest)
    u1, u2 = g[0] / norm, g[1] / norm
    c = 1.0 - 2.0 * dr / n
    in_first = u1 >= c
    flat = np.atleast_1d(arr).ravel()
    est = np.empty(flat.shape)
    for i, r in enumerate(flat):
        est[i] = np.count_nonzero(in_first & (r * u1 + math.sqrt(max(0.0, 1.0 - r * r)) * u2 >= c))
    est /= samples
    err = np.sqrt(est * (1.0 - est) / samples)
    if scalar:
        return (float(est[0]), float(err[0])) if return_stderr else float(est[0])
    est, err = est.reshape(arr.shape), err.reshape(arr.shape)
    return (est, err) if return_stderr else est


# ==========================================================================================
# 6. The exponential approximation: beta fits (Eq. 10), analytic beta (Eq. 21)
# ==========================================================================================


@dataclass(frozen=True)
class BetaFit:
    """Result of a log-linear fit ``log I(dv) ~ intercept + beta * x``, ``x = 1 - 2 dv / n``.

    Attributes
    ----------
    beta : float
        Slope in the cosine ``x`` (the softmax inverse temperature); ``-n/2`` times the slope in
        ``dv``.
    intercept : float
        ``log I`` of the fitted line at ``x = 0`` (through the centroid of the points).
    r2 : float
        Coefficient of determination of the least-squares line (the squared correlation of
        ``x`` and ``log I``); the same for both conventions.
    num_points : int
        Number of distances in the fit.
    dvs : tuple of int
        The distances used, ascending.
    """

    beta: float
    intercept: float
    r2: float
    num_points: int
    dvs: tuple[int, ...]


def _fit_window(n: int, d: int, window, even_only: bool) -> list[int]:
    if window is None:
        dvs = list(range(0, d))
    elif isinstance(window, tuple) and len(window) == 2:
        lo = _check_distance(window[0], n, "window start")
        hi = _check_distance(window[1], n, "window end")
        if hi < lo:
            raise ValueError(f"window (lo, hi) needs lo <= hi, got {window!r}")
        dvs = list(range(lo, hi + 1))
    else:
        if isinstance(window, (str, bytes)) or not isinstance(window, Iterable):
            raise ValueError(
                f"window must be None, a (lo, hi) tuple or an iterable of dv, got {window!r}"
            )
        items = np.asarray(list(window), dtype=object).ravel()
        dvs = sorted({_check_distance(v, n, "dv") for v in items})
    if even_only:
        dvs = [v for v in dvs if v % 2 == 0]
    if not dvs:
        raise ValueError(f"the fit window is empty (n = {n}, d = {d}, window = {window!r}, "
                         f"even_only = {even_only})")
    if len(dvs) < 2:
        raise ValueError(f"a line needs at least two distances, the window gives {dvs}")
    return dvs


def fit_beta(n, d, window=None, even_only: bool = False, convention: str = "ols",
             intersection: str = "binary") -> BetaFit:
    """Fit ``beta`` by the log-linear regression of Eq. 10: ``log I(dv) ~ a + beta x``.

    ``x = 1 - 2 dv / n`` is the cosine between unit-norm bipolar images of two binary vectors
    ``dv`` apart, so ``exp(beta x)`` is the softmax weight that mimics the intersection.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1`` (``>= 2`` for ``intersection="cap"``).
    d : int
        Radius, ``0 <= d <= n``.
    window : None, (int, int) or iterable of int, optional
        Distances to fit. ``None`` (default): ``dv = 0, ..., d - 1`` (the paper's
        ``d(pa, xi) < d``). A tuple ``(lo, hi)`` of length two: ``dv = lo, ..., hi`` inclusive.
        Any other iterable (list, range, array): those distances.
    even_only : bool, default False
        Keep only even ``dv`` (the staircase ``I(2k - 1) = I(2k)`` makes the binary curve an
        envelope of steps; even distances sit on its corners).
    convention : {"ols", "authors"}
        ``"ols"``: the ordinary least-squares slope. ``"authors"``: the slope as the authors'
        code computes it, a sample covariance (divided by ``N - 1``) over a population variance
        (divided by ``N``), i.e. ``beta_ols * N / (N - 1)``; this reproduces the paper's
        ``beta`` values (35.5, 20.0, 15.9, 10.1 at ``n = 64``, ``d = 5, 9, 11, 15``). The
        intercept is the line through the centroid with that slope.
    intersection : {"binary", "cap", "largest_summand"}
        What to fit: the exact Hamming intersection :func:`circle_intersection` (default), the
        spherical cap intersection :func:`cap_intersection` at ``rho = 1 - 2 dv / n`` (continuous
        SDM), or the single largest summand of Eq. 2 (:func:`largest_summand`).

    Returns
    -------
    BetaFit
        ``beta``, ``intercept``, ``r2``, ``num_points`` and ``dvs``.

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is invalid, the window is empty, has fewer than two distances, or
        contains a distance where the intersection is 0 (``log 0``), or ``convention`` or
        ``intersection`` is unknown.

    Warns
    -----
    UserWarning
        When the fitted ``beta`` is not a meaningful inverse temperature, saying why: the radius
        is at or past half the space (``2 d >= n``), where ``I(dv)`` barely decays and
        ``beta`` is close to 0 (``fit_beta(64, 40)`` gives ``beta = 0.009``); or the line is a
        poor fit, ``r2 <`` :data:`POOR_FIT_R2` (0.5). The result is returned either way.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 10 (the regression), Eq. 3 and Eq. 6 (the exponential
    approximation), App. B.3 (the cap version), App. B.2 (the largest summand).
    """
    if convention not in ("ols", "authors"):
        raise ValueError(f"convention must be 'ols' or 'authors', got {convention!r}")
    if intersection not in ("binary", "cap", "largest_summand"):
        raise ValueError(
            f"intersection must be 'binary', 'cap' or 'largest_summand', got {intersection!r}"
        )
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    d = _check_distance(d, n, "d")
    dvs = _fit_window(n, d, window, even_only)
    if intersection == "binary":
        y = np.array([math.log(v) if v > 0 else -math.inf
                      for v in circle_intersection_table(n, d, dvs)])
    elif intersection == "largest_summand":
        y = np.array([math.log(v) if v > 0 else -math.inf
                      for v in (largest_summand(v, d, n) for v in dvs)])
    else:
        y = np.asarray(log_cap_intersection(1.0 - 2.0 * np.array(dvs, dtype=float) / n, d, n))
    if not np.all(np.isfinite(y)):
        zero = [v for v, yy in zip(dvs, y) if not np.isfinite(yy)]
        raise ValueError(f"the {intersection} intersection is 0 at dv = {zero} (n = {n}, d = {d}); "
                         "log-linear fit impossible, choose a window inside dv <= 2d")
    x = 1.0 - 2.0 * np.array(dvs, dtype=float) / n
    num = len(dvs)
    xc, yc = x - x.mean(), y - y.mean()
    sxx, syy, sxy = float(xc @ xc), float(yc @ yc), float(xc @ yc)
    beta = sxy / sxx
    r2 = 1.0 if syy == 0.0 else sxy * sxy / (sxx * syy)
    if convention == "authors":
        beta *= num / (num - 1)
    intercept = float(y.mean() - beta * x.mean())
    reasons = []
    if 2 * d >= n:
        reasons.append(f"the radius d = {d} is at or past n/2 = {n / 2:g}, where the intersection "
                       "barely decays with dv, so exp(beta x) is nearly flat; the exponential "
                       "approximation of Eq. 10 is meant for d < n/2")
    if r2 < POOR_FIT_R2:
        reasons.append(f"log I is far from a line over dv = {dvs[0]}..{dvs[-1]} ({num} points): "
                       f"R^2 = {r2:.3f} < {POOR_FIT_R2}")
    if reasons:
        warnings.warn(f"fit_beta(n={n}, d={d}): beta = {beta:.4g} is not a meaningful inverse "
                      "temperature: " + "; and ".join(reasons), UserWarning, stacklevel=2)
    return BetaFit(beta=float(beta), intercept=intercept, r2=float(r2), num_points=num,
                   dvs=tuple(int(v) for v in dvs))


def analytic_beta(n, d) -> float:
    """The analytic ``beta`` of Eq. 21, ``(n - 2 d)^2 / (4 n)``.

    App. B.2 keeps only the largest summand of Eq. 2 (``a = n - d - floor(dv/2)``,
    ``c = floor(dv/2)``), replaces each binomial coefficient by a Gaussian density, sets
    ``floor(dv/2) ~ dv/2``, expands ``1/(1 - dv/n)`` to first order (``dv << n``) and bounds the
    prefactor by its value at ``dv = n/2``. The result, Eq. 20,
    ``I >~ 2^{n+2}/(pi n) exp(-(n - 2d)^2/(2n)) exp(-(n - 2d)^2/(2 n^2) dv)``, is linear in ``dv``
    in the exponent; in the cosine ``x = 1 - 2 dv/n`` its slope is this ``beta``. In the
    Attention setting the Gaussian sits several standard deviations into the binomial tail and
    the value is 2-2.5 times smaller than the regression ``beta`` of :func:`fit_beta` (e.g.
    6.9 versus 14.4 at ``n = 64``, ``d = 11``).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.

    Returns
    -------
    float
        ``(n - 2 d)^2 / (4 n)``.

    Raises
    ------
    ValueError
        If ``n < 1`` or ``d`` is not an integer in ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2, Eqs. 16-21.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    return (n - 2 * d) ** 2 / (4.0 * n)


def analytic_log_intersection(dv, d, n) -> float:
    """Natural log of the analytic lower bound of Eq. 20.

    ``log I >~ log(2^{n+2} / (pi n)) - (n - 2 d)^2 / (2 n) - (n - 2 d)^2 / (2 n^2) dv``; the
    paper restricts it to ``dv < 0.1 n``.

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
        The log of the approximate intersection.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2, Eq. 20.
    """
    dv, d, n = _check_dnd(dv, d, n)
    gap2 = float((n - 2 * d) ** 2)
    return (n + 2) * _LOG2 - math.log(math.pi * n) - gap2 / (2 * n) - gap2 / (2 * n * n) * dv


def largest_summand(dv, d, n) -> int:
    """The single largest summand of Eq. 2, the term App. B.2 approximates ``I`` by.

    Every admissible ``a`` admits ``c = floor(dv/2)``, where ``C(dv, c)`` is largest, so the
    largest summand is ``C(dv, floor(dv/2)) max_a C(n - dv, a)`` over
    ``a >= n - d - floor(dv/2)``. For ``d <= n/2`` the maximum is at the lower limit, and the
    term is the paper's ``C(n - dv, n - d - floor(dv/2)) C(dv, floor(dv/2))``; for larger ``d``
    the central binomial ``C(n - dv, floor((n - dv)/2))`` is admissible and larger. A lower
    bound on ``I``, zero exactly where ``I`` is.

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
        The largest summand, exact.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2 (Eqs. 16-17) and Eq. 2.
    """
    dv, d, n = _check_dnd(dv, d, n)
    m = n - dv
    a_lo = max(0, n - d - dv // 2)
    if a_lo > m:
        return 0
    a_best = max(a_lo, m // 2)
    return math.comb(m, a_best) * math.comb(dv, dv // 2)


def largest_summand_beta(n, d, window=None, even_only: bool = False,
                         convention: str = "ols") -> BetaFit:
    """Fit ``beta`` (Eq. 10) to the single largest summand of Eq. 2 instead of ``I``.

    Shows where the analytic ``beta`` of Eq. 21 loses its accuracy: the largest summand alone
    reproduces the regression slope of the full intersection (e.g. at ``n = 64``, ``d = 11`` on
    even distances), so the error of Eq. 21 comes from its Gaussian approximation of far-tail
    binomials, not from dropping the other summands.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    window : None, (int, int) or iterable of int, optional
        As in :func:`fit_beta` (default ``dv = 0, ..., d - 1``).
    even_only : bool, default False
        Keep only even distances.
    convention : {"ols", "authors"}
        As in :func:`fit_beta`.

    Returns
    -------
    BetaFit
        The fit of ``log largest_summand(dv)`` on ``x = 1 - 2 dv / n``.

    Raises
    ------
    ValueError
        As :func:`fit_beta`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2 and Eq. 10.
    """
    return fit_beta(n, d, window=window, even_only=even_only, convention=convention,
                    intersection="largest_summand")


# ==========================================================================================
# 7. Counting shared neurons: the paper's literal limits, grids, lune terms, a simulation
# ==========================================================================================


def circle_intersection_paper_limits(dv, d, n, *, binomial: str = "zero") -> int:
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


def circle_intersection_grid(n, method: str = "eq2") -> np.ndarray:
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


def lune_term(j, d, n) -> int:
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


_SIM_CHUNK_WORDS = 1 << 22  # uint64 words of neuron addresses drawn per chunk (32 MiB)


def simulate_shared_neurons(dv, d, n, r, trials, seed=0) -> np.ndarray:
    """Count, by simulation, the neurons within Hamming distance ``d`` of a pattern and a query.

    Each trial draws ``r`` neuron addresses uniformly from ``{0, 1}^n``, a uniform query, and a
    pattern at exactly distance ``dv`` from it (the query with ``dv`` positions flipped, chosen
    uniformly), and counts the neurons within ``d`` of both. The addresses are packed into
    64-bit words and distances are XOR popcounts; only the neurons within ``d`` of the query are
    unpacked. For several ``dv`` the patterns of one trial are nested (the first ``dv`` positions
    of one random order are flipped), so the counts of one trial share their neurons and are
    correlated across ``dv``; across trials each column is i.i.d.
    ``Binomial(r, I(dv, d, n) / 2^n)``, whose mean is :func:`expected_neurons`.

    Parameters
    ----------
    dv : int or array_like of int
        Distance(s) between pattern and query, each in ``[0, n]``.
    d : int
        Read and write radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int
        Number of neurons per trial, ``>= 1``.
    trials : int
        Number of independent (neurons, query, pattern) draws, ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        int64 counts, shape ``(trials,)`` for a scalar ``dv`` or ``(trials, len(dv))``.

    Raises
    ------
    ValueError
        If ``n``, ``d`` or a ``dv`` is out of range or not an integer, or ``r`` or ``trials``
        is below 1.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.1 and Fig. 11 (``n = 100``, ``r = 10^4``, ``d = 35``);
    Kanerva (1988), Ch. 7.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    scalar = np.ndim(dv) == 0
    dvs = np.array([_check_distance(v, n, "dv") for v in np.atleast_1d(np.asarray(dv, dtype=object)).ravel()],
                   dtype=np.int64)
    r = _as_int(r, "r")
    trials = _as_int(trials, "trials")
    if r < 1:
        raise ValueError(f"r must be >= 1, got {r}")
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    rng = np.random.default_rng(seed)
    words = (n + 63) // 64
    last_mask = np.uint64((1 << (n - 64 * (words - 1))) - 1) if n % 64 else np.uint64(2**64 - 1)
    shifts = np.arange(64, dtype=np.uint64)
    counts = np.zeros((trials, dvs.size), dtype=np.int64)
    chunk = max(1, _SIM_CHUNK_WORDS // (r * words))
    for start in range(0, trials, chunk):
        b = min(chunk, trials - start)
        neurons = rng.integers(0, 2**64 - 1, size=(b, r, words), dtype=np.uint64, endpoint=True)
        query = rng.integers(0, 2**64 - 1, size=(b, 1, words), dtype=np.uint64, endpoint=True)
        neurons[..., -1] &= last_mask
        query[..., -1] &= last_mask
        order = np.argsort(rng.random((b, n)), axis=1)  # flip order of the positions, per trial
        diff = neurons ^ query  # (b, r, words): where each neuron disagrees with the query
        to_query = np.bitwise_count(diff).sum(axis=-1, dtype=np.int64)  # (b, r)
        t_idx, r_idx = np.nonzero(to_query <= d)  # neurons read by the query: (K,), (K,)
        if t_idx.size == 0:
            continue
        bits = ((diff[t_idx, r_idx][:, :, None] >> shifts) & np.uint64(1))  # (K, words, 64)
        bits = bits.reshape(t_idx.size, 64 * words)[:, :n].astype(np.int64)  # (K, n)
        flipped = np.take_along_axis(bits, order[t_idx], axis=1)  # (K, n) in flip order
        # flipping a position where the neuron agrees with the query moves it one bit further
        steps = np.cumsum(1 - 2 * flipped, axis=1)  # (K, n)
        to_pattern = to_query[t_idx, r_idx][:, None] + np.concatenate(
            [np.zeros((t_idx.size, 1), dtype=np.int64), steps], axis=1)  # (K, n + 1)
        shared = to_pattern[:, dvs] <= d  # (K, len(dvs))
        np.add.at(counts, start + t_idx, shared.astype(np.int64))
    return counts[:, 0] if scalar else counts


__all__ += [
    "circle_intersection_paper_limits",
    "circle_intersection_grid",
    "lune_term",
    "simulate_shared_neurons",
]
