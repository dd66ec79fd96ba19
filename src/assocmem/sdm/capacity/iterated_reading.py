"""Kanerva's iterated-reading model of SDM and its critical distance.

A read from a query ``x`` bits from its target returns a word whose bits are wrong independently
with probability ``Phi(-SNR(x))`` (the SNR of Eq. 25 at query noise ``x``), so the expected
distance after one read is ``f(x) = n Phi(-SNR(x))`` (:func:`read_distance_map`). Taking the
read-out as the next query and reading again iterates ``x <- f(x)`` (:func:`read_trajectory`
does so literally); since ``f`` is nondecreasing the iteration runs to the nearest fixed point, and
the critical distance is the largest starting distance from which it converges to the target
(:func:`critical_distance`; :func:`critical_distance_analysis` returns a
:class:`CriticalDistance` with the attractor, the crossing of ``f(x) = x`` and the map), computed
exactly from the fixed points of ``f``. Source: Kanerva (1988), Ch. 7 (Fig. 7.3); Bricken &
Pehlevan (2021), App. B.4-B.5 (Table 1, Fig. 17). Chapter 33.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from assocmem._checks import as_real
from assocmem.sdm.capacity._common import (
    _check_count,
    _check_mean_overlap,
    _check_neurons,
    _log_fraction,
)
from assocmem.sdm.capacity.signal_noise import _log_mu, _log_noise, _log_target, _snr_from_logs
from assocmem.sdm.geometry._common import _check_distance, _check_n

__all__ = [
    "read_distance_map",
    "read_trajectory",
    "CriticalDistance",
    "critical_distance_analysis",
    "critical_distance",
]


def read_distance_map(n: int, r: float, m: int, d: int, *,
                      mean_overlap: str = "random") -> np.ndarray:
    """Expected distance to the target after one read, for every query distance ``x = 0..n``.

    The read's bits are independent with error probability ``P(x) = Phi(-SNR(x))``, the SNR of
    Eq. 25 at query noise ``x`` (:func:`snr`); the expected Hamming distance between the read-out
    and the target is ``f(x) = n P(x)``. ``f`` is nondecreasing in ``x`` (the shared-neuron count
    ``I(x, d, n)`` falls with ``x``), ``f(x) = n/2`` for ``x > 2 d`` (no shared neurons) and
    ``f(0)`` is the error of an exact cue.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1``.
    m : int
        Number of stored patterns, ``>= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed, see :func:`mean_random_overlap`.

    Returns
    -------
    numpy.ndarray
        ``f(0), ..., f(n)``, floats in ``[0, n/2]``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``m < 1``, ``d`` is outside ``[0, n]`` or ``mean_overlap`` is
        unknown.

    References
    ----------
    Kanerva (1988), Ch. 7 (the new distance after a read from a noisy address, Fig. 7.3);
    Bricken & Pehlevan (2021), App. B.4 (Eq. 25) and App. B.5 (Fig. 17a reproduces Fig. 7.3).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    m = _check_count(m, "m")
    log_r = _log_fraction(_check_neurons(r))
    return _distance_map(n, log_r, m, d, _check_mean_overlap(mean_overlap))


def _distance_map(n: int, log_r: float, m: int, d: int, mean_overlap: str) -> np.ndarray:
    log_noise = _log_noise(m, _log_mu(n, d, log_r, mean_overlap))
    log_s = _log_target(n, d, range(n + 1), log_r)
    return n * stats.norm.sf(_snr_from_logs(log_s, log_noise))


def _round_half_up(values: np.ndarray) -> np.ndarray:
    return np.floor(values + 0.5).astype(np.int64)


def read_trajectory(n: int, r: float, m: int, d: int, x0: int, steps: int = 100, *,
                    round_distance: bool = False,
                    mean_overlap: str = "random", tol: float = 1e-12) -> list[float]:
    """Iterate the expected distance ``x <- f(x)`` from ``x0`` (literal iterated reading).

    Parameters
    ----------
    n, r, m, d
        As in :func:`read_distance_map`.
    x0 : int
        Starting distance between the query and the target, ``0 <= x0 <= n``.
    steps : int, default 100
        Maximum number of reads, ``>= 1``.
    round_distance : bool, default False
        ``False``: iterate the real-valued map, ``f`` linearly interpolated between integer
        distances. ``True``: round the expected distance to the nearest integer (halves up) after
        every read, so the iteration stays on integers.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed.
    tol : float, default 1e-12
        Stop once a read moves the distance by at most ``tol``.

    Returns
    -------
    list of float
        ``[x0, x1, ...]``, the distances after each read, ending at (or near) a fixed point.

    Raises
    ------
    ValueError
        If an argument is out of range (see :func:`read_distance_map`) or ``steps < 1``.

    References
    ----------
    Kanerva (1988), Ch. 7 (iterated reading converges to the target from within the critical
    distance and diverges from beyond it).
    """
    n = _check_n(n)
    x0 = _check_distance(x0, n, "x0")
    steps = _check_count(steps, "steps")
    f = read_distance_map(n, r, m, d, mean_overlap=mean_overlap)
    xs = np.arange(n + 1, dtype=float)
    path = [float(x0)]
    x = float(x0)
    for _ in range(steps):
        y = float(np.interp(x, xs, f))
        if round_distance:
            y = float(math.floor(y + 0.5))
        path.append(y)
        if abs(y - x) <= tol:
            break
        x = y
    return path


@dataclass(frozen=True)
class CriticalDistance:
    """Result of :func:`critical_distance_analysis`.

    Attributes
    ----------
    critical_distance : int
        Largest integer starting distance from which iterated reading converges to within
        ``tolerance`` of the target; ``-1`` if not even an exact cue (``x0 = 0``) does.
    attractor : float
        Where iterated reading from ``x0 = 0`` ends (the target's attractor, ``>= f(0)``).
    crossing : float or None
        The boundary of the target's basin. Real-valued map: the smallest fixed point of ``f``
        above ``tolerance``, the unstable crossing of ``f(x) = x`` (Kanerva's critical distance
        as a real number, in ``(critical_distance, critical_distance + 1]``). Rounded map: the
        smallest integer start above ``tolerance`` that a read does not move down (normally
        ``critical_distance + 1``). ``None`` when ``critical_distance`` is ``-1`` or ``n``.
    new_distance : tuple of float
        The map ``f(0..n)`` (:func:`read_distance_map`), or its rounded values when
        ``round_distance``.
    tolerance : float
        The convergence tolerance used, in bits.
    round_distance : bool
        Whether distances were rounded after every read.
    """

    critical_distance: int
    attractor: float
    crossing: float | None
    new_distance: tuple[float, ...]
    tolerance: float
    round_distance: bool


def _zeros_piecewise_linear(h: np.ndarray) -> list[float]:
    """Zeros of the piecewise-linear interpolation of ``h`` over ``0..len(h) - 1``, ascending."""
    zeros = []
    for k in range(len(h)):
        if h[k] == 0.0:
            zeros.append(float(k))
        elif k + 1 < len(h) and h[k] * h[k + 1] < 0.0:
            zeros.append(k + float(h[k] / (h[k] - h[k + 1])))
    return zeros


def _limits_real(f: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Limit of ``x <- f(x)`` (``f`` interpolated, nondecreasing) from every integer start.

    Returns the limits and the fixed points (zeros of ``f(x) - x``), ascending.
    """
    h = f - np.arange(len(f), dtype=float)
    zeros = _zeros_piecewise_linear(h)  # nonempty: h(0) = f(0) >= 0 > f(n) - n = h(n)
    out = np.empty(len(f))
    for x0 in range(len(f)):
        if h[x0] <= 0.0:  # moves down (or stays): to the largest fixed point <= x0
            out[x0] = zeros[bisect.bisect_right(zeros, float(x0)) - 1]
        else:  # moves up: to the smallest fixed point > x0
            out[x0] = zeros[bisect.bisect_right(zeros, float(x0))]
    return out, zeros


def _limits_rounded(g: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Limit of ``x <- g(x)`` (integer map, nondecreasing) from every integer start.

    Returns the limits and the fixed points of ``g``, ascending.
    """
    size = len(g)
    out = np.full(size, -1, dtype=np.int64)
    for x0 in range(size):
        path, x = [], x0
        while out[x] < 0 and g[x] != x:
            path.append(x)
            x = int(g[x])
        limit = out[x] if out[x] >= 0 else x  # a nondecreasing map has no cycles but fixed points
        out[x] = limit
        for y in path:
            out[y] = limit
    fixed = [float(x) for x in range(size) if g[x] == x]
    return out.astype(float), fixed


def _critical_from_map(f: np.ndarray, tolerance: float, round_distance: bool) -> CriticalDistance:
    if round_distance:
        values = _round_half_up(f)
        limits, fixed = _limits_rounded(values)
        stored = tuple(float(v) for v in values)
    else:
        limits, fixed = _limits_real(f)
        stored = tuple(float(v) for v in f)
    attractor = float(limits[0])
    if attractor > tolerance:
        return CriticalDistance(-1, attractor, None, stored, tolerance, round_distance)
    ok = limits <= tolerance  # an interval [0, cd]: the limits are nondecreasing in x0
    cd = len(f) - 1 if ok.all() else int(np.argmin(ok)) - 1
    if round_distance:  # the first start above tolerance that a read does not move down
        crossing = next((float(x) for x in range(len(f)) if x > tolerance and values[x] >= x),
                        None)
    else:  # the unstable fixed point that bounds the target's basin
        crossing = next((z for z in fixed if z > tolerance), None)
    return CriticalDistance(cd, attractor, crossing, stored, tolerance, round_distance)


def _check_tolerance(tolerance) -> float:
    t = as_real(tolerance, "tolerance")  # refuses booleans, strings, NaN and infinities
    if t < 0:
        raise ValueError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    return t


def critical_distance_analysis(n: int, r: float, m: int, d: int, *, tolerance: float = 0.5,
                               round_distance: bool = False,
                               mean_overlap: str = "random") -> CriticalDistance:
    """Critical distance of SDM with its attractor, crossing and new-distance map.

    The model (Kanerva 1988, Ch. 7, in the SNR of Eq. 25): a read from a query ``x`` bits from
    its target returns a word whose bits are wrong independently with probability
    ``P(x) = Phi(-SNR(x))``, where ``SNR(x) = E[I*(x)] / sqrt(E[I*(x)] + (m - 1)(E[I_mu] +
    E[I_mu]^2))`` and ``E[I*(x)] = I(x, d, n) r / 2^n``. The read-out is taken as the new query,
    at the expected distance ``f(x) = n P(x)``; reading is iterated, ``x_{t+1} = f(x_t)``. Because
    ``f`` is nondecreasing, the iteration from ``x0`` moves monotonically to the nearest fixed
    point of ``f`` in the direction of ``f(x0) - x0``; the limits are computed exactly from the
    fixed points of ``f`` (linearly interpolated between integer distances) rather than by
    running the iteration, which is what :func:`read_trajectory` does literally. A start
    *converges* if its limit is within ``tolerance`` bits of the target, and the critical
    distance is the largest integer start that converges. Since ``f`` is monotone, the
    converging starts form an interval ``[0, critical_distance]``.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1``.
    m : int
        Number of stored patterns, ``>= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    tolerance : float, default 0.5
        Convergence threshold in bits: the limit must be ``<= tolerance`` (by default, less than
        half a bit wrong in expectation).
    round_distance : bool, default False
        Round the expected distance to the nearest integer (halves up) after every read, so the
        iteration runs on integer distances. This is a stricter criterion (a read must lower
        the distance by at least half a bit) and gives smaller critical distances.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed, see :func:`mean_random_overlap`.

    Returns
    -------
    CriticalDistance
        ``critical_distance`` (``-1`` if not even an exact cue converges), ``attractor``,
        ``crossing``, ``new_distance``, ``tolerance``, ``round_distance``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``m < 1``, ``d`` is outside ``[0, n]``, ``tolerance`` is not
        a finite real number ``>= 0`` (booleans and strings are refused) or ``mean_overlap`` is
        unknown.

    Notes
    -----
    Because ``I(2k - 1) = I(2k)`` (the staircase of the circle intersection), ``f`` is flat on
    each pair ``(2k - 1, 2k)`` and the critical distance is usually even. ``f <= n/2`` everywhere
    (an uninformed read is wrong in half its bits), so a start beyond ``n/2`` first jumps to
    about ``n/2``; when every ``x <= n/2`` moves towards the target the critical distance is
    ``n`` (e.g. a single stored pattern with ``2 d >= n/2``). In the Attention setting ``f``
    jumps to ``n/2 = 32`` just beyond ``x = 2 d``, so critical distances are 20-30 bits and
    neighbouring radii often tie (``d = 15`` and ``16`` at ``m = 1024``).

    References
    ----------
    Kanerva (1988), Ch. 7 (critical distance, Fig. 7.3); Bricken & Pehlevan (2021), App. B.5
    (Table 1 and Fig. 17).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    m = _check_count(m, "m")
    tolerance = _check_tolerance(tolerance)
    log_r = _log_fraction(_check_neurons(r))
    f = _distance_map(n, log_r, m, d, _check_mean_overlap(mean_overlap))
    return _critical_from_map(f, tolerance, bool(round_distance))


def critical_distance(n: int, r: float, m: int, d: int, *, tolerance: float = 0.5,
                      round_distance: bool = False,
                      mean_overlap: str = "random") -> int:
    """Largest query-target distance from which iterated reads converge to the target.

    See :func:`critical_distance_analysis` for the model; this returns its
    ``critical_distance``.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1``.
    m : int
        Number of stored patterns, ``>= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    tolerance : float, default 0.5
        Convergence threshold in bits.
    round_distance : bool, default False
        Round the expected distance after every read.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed.

    Returns
    -------
    int
        The critical distance in bits (``-1`` if not even an exact cue converges).

    Raises
    ------
    ValueError
        As :func:`critical_distance_analysis`.

    References
    ----------
    Kanerva (1988), Ch. 7; Bricken & Pehlevan (2021), App. B.5, Table 1, Fig. 17.
    """
    return critical_distance_analysis(n, r, m, d, tolerance=tolerance,
                                      round_distance=round_distance,
                                      mean_overlap=mean_overlap).critical_distance
