"""Weights relative to the target, by distance, and the exact weight of ``m`` random far patterns.

When the query equals its target and the other ``m`` stored patterns are uniformly random binary
vectors, their distances to the query are i.i.d. ``Binomial(n, 1/2)`` and each gets its weight
relative to the target, ``rel[dv]`` (:func:`softmax_relative_weights`,
:func:`sdm_relative_weights`). The total far weight ``S / (1 + S)``, ``S = sum_i rel[dv_i]``, then
has an exact expectation, a one-dimensional Laplace-transform integral
(:func:`expected_far_weight`), which the mean-field values of
:mod:`assocmem.sdm.weights.far_patterns` bound from above; the expected contribution of each
distance (:func:`far_weight_contributions`); a sampler with common random numbers for comparing
weightings on the same patterns (:func:`sample_far_distances`, :func:`far_weight_from_distances`);
the probability that binary SDM gives every far pattern exactly zero weight
(:func:`prob_sdm_far_weight_zero`); and, for a query ``k`` bits from its target, the expected
share of the read the target gets (:func:`expected_target_share`), the first read of the
convergence experiments. Source: Bricken & Pehlevan (2021), Eqs. 1-2, Eqs. 4-6, Fig. 3, App. B.2
and App. B.7; seed 002, "Weight on far patterns" and "Convergence experiments (App. B.7)".
Chapters 34 and 36.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy import integrate, stats

from assocmem.sdm._common import _real_array
from assocmem.sdm.geometry._common import _as_int, _check_distance, _check_n
from assocmem.sdm.geometry.balls import ball_fraction
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.weights.profiles import _check_beta, _check_intersection, sdm_log_weights

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, Seed

__all__ = [
    "softmax_relative_weights",
    "sdm_relative_weights",
    "expected_far_weight",
    "far_weight_contributions",
    "sample_far_distances",
    "far_weight_from_distances",
    "prob_sdm_far_weight_zero",
    "expected_target_share",
]


def _check_count(value, name: str, minimum: int = 1) -> int:
    v = _as_int(value, name)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def _check_relative(rel, n: int | None = None) -> np.ndarray:
    """A relative-weight table indexed by distance: finite, >= 0, shape (n + 1,)."""
    arr = _real_array(rel, "rel")  # refuses booleans, strings, NaN and infinities
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"relative weights must be a 1-D array indexed by distance 0..n, got shape {arr.shape}")
    if n is not None and arr.size != n + 1:
        raise ValueError(f"relative weights must have n + 1 = {n + 1} entries, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("relative weights must be finite and >= 0")
    return arr


def softmax_relative_weights(n: int, beta: float) -> np.ndarray:
    """Softmax weight of a pattern ``dv`` bits from the query, relative to the target (``dv = 0``).

    ``exp(beta (rho - 1)) = exp(-2 beta dv / n)`` for ``dv = 0..n``.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    beta : float
        Inverse temperature, finite and ``>= 0``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n + 1,)``, indexed by distance; entry 0 is 1.

    Raises
    ------
    ValueError
        If ``n < 1`` or ``beta`` is negative, not finite, a boolean or a string.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 and Eq. 6.
    """
    n = _check_n(n)
    b = _check_beta(beta)
    if not math.isfinite(2.0 * b):  # beta > 9e307: 2 beta overflows and 0 * inf would be NaN
        out = np.zeros(n + 1)
        out[0] = 1.0
        return out
    return np.exp(-2.0 * b * np.arange(n + 1) / n)


def sdm_relative_weights(n: int, d: int, intersection: str = "binary") -> np.ndarray:
    """SDM weight of a pattern ``dv`` bits from the query, relative to the target (``dv = 0``).

    Binary: ``I(dv, d, n) / I(0, d, n)``, a ratio of exact integers rounded once; exactly 0 for
    ``dv > 2 d``. Cap: ``Ic(rho(dv)) / Ic(1)`` (continuous SDM with bipolar patterns).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1`` (``>= 2`` for the cap).
    d : int
        Radius, ``1 <= d <= n`` (at ``d = 0`` the target's own weight is 0 for the cap).
    intersection : {"binary", "cap"}
        The SDM kernel.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n + 1,)``, indexed by distance; entry 0 is 1.

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is out of range (``d = 0`` with the cap) or ``intersection`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1, Eq. 2 and App. B.3.
    """
    intersection = _check_intersection(intersection)
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    d = _check_distance(d, n, "d")
    if intersection == "binary":
        table = circle_intersection_table(n, d)
        return np.array([float(Fraction(v, table[0])) for v in table])
    if d == 0:
        raise ValueError("the cap of radius d = 0 is empty; relative weights are undefined")
    logs = sdm_log_weights(n, d, None, "cap")
    return np.exp(logs - logs[0])


def _distance_pmf(n: int) -> np.ndarray:
    """``P(dv = k) = C(n, k) / 2^n``, ``k = 0..n``: the distance of a uniformly random binary pattern."""
    return stats.binom.pmf(np.arange(n + 1), n, 0.5)


def expected_far_weight(rel: ArrayLike, m: int) -> float:
    """Exact expected total weight on ``m`` uniformly random binary patterns, query = target.

    The target gets relative weight 1 and far pattern ``i``, at distance ``dv_i`` from the query,
    gets ``x_i = rel[dv_i]``; the ``dv_i`` are i.i.d. ``Binomial(n, 1/2)``. The far weight is
    ``S / (1 + S)`` with ``S = sum_i x_i``. From ``1 / (1 + S) = int_0^inf e^{-t(1 + S)} dt``
    and independence,

        E[S / (1 + S)] = int_0^inf e^{-t} (1 - phi(t)^m) dt,   phi(t) = E[e^{-t x}],

    a one-dimensional integral, evaluated with ``1 - phi^m = -expm1(m log1p(-psi))``,
    ``psi(t) = E[1 - e^{-t x}]`` (no cancellation, so tiny weights keep their relative
    accuracy) after the substitution ``t = e^u``.

    By Jensen's inequality it lies below the mean-field value ``m E[x] / (1 + m E[x])``
    (:func:`assocmem.sdm.weights.far_patterns.far_pattern_weight_meanfield` for softmax,
    :func:`assocmem.sdm.weights.far_patterns.far_pattern_weight_sdm` for SDM).

    Parameters
    ----------
    rel : array_like of float
        Relative weights indexed by distance, shape ``(n + 1,)``, finite and ``>= 0``
        (:func:`softmax_relative_weights`, :func:`sdm_relative_weights`).
    m : int
        Number of far patterns, ``>= 1``.

    Returns
    -------
    float
        ``E[S / (1 + S)]`` in ``[0, 1)`` (relative accuracy about 1e-9).

    Raises
    ------
    ValueError
        If ``rel`` is not a finite non-negative 1-D array of length ``>= 2``, or ``m < 1``.

    References
    ----------
    Seed 002, "Weight on far patterns" (``m = 1024`` random patterns, query = target);
    Bricken & Pehlevan (2021), Fig. 3 and App. B.2.
    """
    x = _check_relative(rel)
    m = _check_count(m, "m")
    pmf = _distance_pmf(x.size - 1)
    live = x > 0
    if not np.any(live):
        return 0.0
    xs, ps = x[live], pmf[live]

    def integrand(u: float) -> float:
        t = math.exp(u)
        psi = float(np.dot(ps, -np.expm1(-t * xs)))  # 1 - phi(t); <= 1 up to rounding
        if psi >= 1.0:  # phi(t) = 0: every far pattern certainly has weight > 0
            return t * math.exp(-t)
        return t * math.exp(-t) * -math.expm1(m * math.log1p(-psi))

    # e^{-t} is below 1e-300 beyond t = 700; below t = e^-60 the integrand is ~ e^{2u} m E[x]
    val, _ = integrate.quad(integrand, -60.0, math.log(700.0), epsabs=0.0, epsrel=1e-11, limit=400)
    return float(val)


def far_weight_contributions(rel: ArrayLike, m: int) -> np.ndarray:
    """Expected far weight relative to the target, by distance: ``m P(dv) rel[dv]``.

    Shows which distances carry the far weight. The sum is ``m E[x]``, the mean total relative
    weight of the far patterns; the mean-field far weight is ``sum / (1 + sum)``.

    Parameters
    ----------
    rel : array_like of float
        Relative weights indexed by distance, shape ``(n + 1,)``.
    m : int
        Number of far patterns, ``>= 1``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n + 1,)``.

    Raises
    ------
    ValueError
        As :func:`expected_far_weight`.

    References
    ----------
    Seed 002, "Weight on far patterns"; Bricken & Pehlevan (2021), Fig. 3.
    """
    x = _check_relative(rel)
    m = _check_count(m, "m")
    return m * _distance_pmf(x.size - 1) * x


def sample_far_distances(n: int, m: int, trials: int, seed: Seed = 0) -> np.ndarray:
    """Hamming distances from a query to ``m`` uniformly random binary patterns, per trial.

    For a uniformly random pattern the distance to any fixed query is ``Binomial(n, 1/2)``,
    independently across patterns, so the distances are sampled directly. Feeding the same
    sample to :func:`far_weight_from_distances` with several weightings compares them on the
    same patterns (common random numbers).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    m : int
        Far patterns per trial, ``>= 1``.
    trials : int
        Number of trials, ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        int64, shape ``(trials, m)``.

    Raises
    ------
    ValueError
        If ``n``, ``m`` or ``trials`` is below 1 or not an integer.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (random patterns, ``n = 64``, ``m = 1024``).
    """
    n = _check_n(n)
    m = _check_count(m, "m")
    trials = _check_count(trials, "trials")
    rng = np.random.default_rng(seed)
    return rng.binomial(n, 0.5, size=(trials, m)).astype(np.int64)


def far_weight_from_distances(rel: ArrayLike, distances: ArrayLike) -> np.ndarray:
    """Total far weight ``S / (1 + S)``, ``S = sum_i rel[dv_i]``, for each trial (row).

    Parameters
    ----------
    rel : array_like of float
        Relative weights indexed by distance, shape ``(n + 1,)``.
    distances : array_like of int
        Shape ``(trials, m)``, each in ``[0, n]`` (:func:`sample_far_distances`).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(trials,)``; exactly 0.0 in a trial where every far pattern has
        relative weight 0.

    Raises
    ------
    ValueError
        If ``rel`` is invalid, ``distances`` is not 2-D, or a distance is outside ``[0, n]``.

    References
    ----------
    Seed 002, "Weight on far patterns".
    """
    x = _check_relative(rel)
    dist = np.asarray(distances)
    if dist.ndim != 2:
        raise ValueError(f"distances must have shape (trials, m), got {dist.shape}")
    if not np.issubdtype(dist.dtype, np.integer):
        raise ValueError("distances must be integers")
    if dist.size and (dist.min() < 0 or dist.max() > x.size - 1):
        raise ValueError(f"distances must lie in [0, n] = [0, {x.size - 1}]")
    s = x[dist].sum(axis=1)  # (trials,)
    return s / (1.0 + s)


def prob_sdm_far_weight_zero(n: int, d: int, m: int) -> float:
    """Probability that binary SDM gives ``m`` random far patterns exactly zero total weight.

    Pattern ``i`` gets weight 0 exactly when it lies more than ``2 d`` bits from the query, which
    happens with probability ``1 - p(2 d)`` (``p`` the ball fraction); all ``m`` do with
    ``(1 - p(2 d))^m``.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    m : int
        Number of far patterns, ``>= 1``.

    Returns
    -------
    float
        ``(1 - p(min(2 d, n)))^m``; 0.0 when ``2 d >= n``.

    Raises
    ------
    ValueError
        If ``n``, ``d`` or ``m`` is out of range.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 (``I = 0`` for ``dv > 2 d``); seed 002, "Weight on far
    patterns" ("SDM gives them exactly 0").
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    m = _check_count(m, "m")
    if 2 * d >= n:
        return 0.0
    p = ball_fraction(2 * d, n)
    return float(math.exp(m * math.log1p(-p)))


def expected_target_share(rel: ArrayLike, k: int, m: int) -> float:
    """Expected share of a normalised read that lands on the target when the query is ``k`` bits away.

    The query sits ``k`` bits from its target and the other ``m - 1`` stored patterns are
    uniformly random, so their distances to the query are i.i.d. ``Binomial(n, 1/2)``. With
    relative weights ``rel`` (entry ``dv`` = weight of a pattern ``dv`` bits away) the target gets
    ``1 / (1 + S)`` of the read, ``S = sum_i rel[dv_i] / rel[k]``, and

        E[1 / (1 + S)] = 1 - expected_far_weight(rel / rel[k], m - 1).

    This is the first read of the convergence experiments of App. B.7: the larger the share, the
    more the read points back at the target. It explains their exceptions: at ``n = 64,
    d = 5, k = 12`` the binary intersection gives the target (and almost surely everything else)
    weight 0, so the query is left unchanged, while the fitted softmax still gives the target
    most of the read; at large ``k`` the exact intersection gives the target a larger share than
    the softmax fitted to it on ``dv < d``.

    Parameters
    ----------
    rel : array_like of float
        Relative weights indexed by distance, shape ``(n + 1,)``, finite and ``>= 0``
        (:func:`softmax_relative_weights`, :func:`sdm_relative_weights`).
    k : int
        Distance of the query from its target, ``0 <= k <= n``.
    m : int
        Stored patterns including the target, ``>= 2``.

    Returns
    -------
    float
        In ``[0, 1]``; ``0.0`` when ``rel[k] = 0`` (the target gets no weight; the read is then
        empty or made of other patterns only).

    Raises
    ------
    ValueError
        If ``rel`` is not a finite non-negative 1-D array of length ``>= 2``, ``k`` is out of
        range or ``m < 2``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1, Eq. 4 and App. B.7; seed 002, "Convergence experiments
    (App. B.7)" (the named exceptions of claim C5).
    """
    x = _check_relative(rel)
    n = x.size - 1
    k = _check_distance(k, n, "k")
    m = _check_count(m, "m", minimum=2)
    if x[k] == 0:
        return 0.0
    return float(1.0 - expected_far_weight(x / x[k], m - 1))
