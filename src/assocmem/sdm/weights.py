"""How close are SDM's read weights to a fitted softmax? Profiles, total variation, far patterns.

Bricken & Pehlevan (2021) argue that a normalised SDM read (Eq. 1) and softmax attention over
unit vectors (Eq. 4) weight the stored patterns alike: pattern ``mu`` at Hamming distance
``dv_mu`` from the query gets

* in SDM, ``I(dv_mu, d, n) / sum_nu I(dv_nu, d, n)`` with ``I`` the circle intersection (Eq. 2),
  or the cap intersection ``Ic`` in continuous SDM (Eq. 9, App. B.3);
* in attention, ``exp(beta rho_mu) / sum_nu exp(beta rho_nu)`` with ``rho = 1 - 2 dv / n`` the
  cosine of the bipolar images (Eq. 5) and ``beta`` fitted to ``log I`` (Eq. 10).

This module measures how far apart the two weightings are, in the two settings of the review of
the paper (seed 002, "What my recomputation of the approximation shows"):

1. **One pattern at every distance** ``0..n`` (the view of the paper's Fig. 3). The normalised
   profiles (:func:`sdm_weight_profile`, :func:`softmax_weight_profile`), their total-variation
   distance (:func:`total_variation`), a comparison object that splits it by distance band and
   measures the local disagreement of the un-normalised shapes (:func:`compare_weights`,
   :class:`WeightComparison`), and the ``beta`` that minimises it (:func:`tv_optimal_beta`).
2. **Many random far patterns, query equal to its target.** The weight relative to the target
   at each distance (:func:`softmax_relative_weights`, :func:`sdm_relative_weights`), the exact
   expected total far weight for ``m`` uniformly random binary patterns
   (:func:`expected_far_weight`, a one-dimensional integral), a sampler with common random
   numbers for both weightings (:func:`sample_far_distances`, :func:`far_weight_from_distances`),
   the expected contribution of each distance (:func:`far_weight_contributions`), and the
   probability that SDM gives the far patterns exactly zero weight
   (:func:`prob_sdm_far_weight_zero`).

The closed form ``m e^{-beta} / (1 + m e^{-beta})`` for exactly orthogonal patterns, its mean-field
version for random ones and the vector-level simulations live in :mod:`assocmem.sdm.capacity`
(``far_pattern_weight*``); this module adds the exact expectation they approximate.

Conventions. Distances are integers in ``[0, n]``; weights are float64 numpy arrays indexed by
distance (``[dv]``, shape ``(n + 1,)``) unless a set of distances ``dvs`` is given. Binary
intersections are exact Python integers until they are normalised (one rounding per weight).

References
----------
.. [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
   NeurIPS 34. Eq. 1 (SDM read), Eq. 2 (circle intersection), Eqs. 4-6 (attention, the
   binary-to-sphere map, the approximation), Eq. 9 and App. B.3 (continuous SDM), Eq. 10 (the
   beta regression), Fig. 3 and App. B.2 (weights of far patterns), App. B.7 (convergence).
.. [S002] Seed 002, a critical review of [BP21]: "What my recomputation of the approximation
   shows" (normalised-weight discrepancy, weight on far patterns) and claims C5, C16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy import integrate, optimize, special, stats

from assocmem._checks import lookup
from assocmem.sdm.geometry import (
    _as_int,
    _check_distance,
    _check_n,
    ball_fraction,
    circle_intersection_table,
    fit_beta,
    log_cap_intersection,
)

__all__ = [
    # presets
    "WeightsPreset",
    "PRESETS",
    "get_preset",
    # one pattern per distance
    "INTERSECTIONS",
    "cosine_of_distance",
    "sdm_log_weights",
    "sdm_weight_profile",
    "softmax_weight_profile",
    "total_variation",
    "WeightComparison",
    "compare_weights",
    "tv_of_beta",
    "tv_optimal_beta",
    # far patterns
    "softmax_relative_weights",
    "sdm_relative_weights",
    "expected_far_weight",
    "far_weight_contributions",
    "sample_far_distances",
    "far_weight_from_distances",
    "prob_sdm_far_weight_zero",
    "expected_target_share",
]

INTERSECTIONS = ("binary", "cap")


# ==========================================================================================
# Presets
# ==========================================================================================


@dataclass(frozen=True)
class WeightsPreset:
    """Sizes of the chapter "How close is attention to SDM?"."""

    trials: int  # Monte Carlo trials for the headline far weights (query = target, m patterns)
    sweep_trials: int  # trials per point of the far-weight sweeps over beta (common random numbers)
    sweep_betas: tuple[float, ...]  # inverse temperatures of the simulated points in the sweep
    radii: tuple[int, ...]  # radii d at n = 64 whose SDM far weight is plotted against its beta


#: ``"quick"`` runs in the book and CI (a few seconds); ``"full"`` uses ten times the trials and a
#: finer sweep (papermill ``-p PRESET full``; a minute on a laptop).
PRESETS: dict[str, WeightsPreset] = {
    "quick": WeightsPreset(trials=400, sweep_trials=200,
                           sweep_betas=(4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 20.0, 24.0, 28.0),
                           radii=tuple(range(4, 21))),
    "full": WeightsPreset(trials=4000, sweep_trials=2000,
                          sweep_betas=tuple(float(b) for b in range(3, 31)),
                          radii=tuple(range(3, 24))),
}


def get_preset(name: str) -> WeightsPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)


# ==========================================================================================
# Checks
# ==========================================================================================


def _check_intersection(intersection: str) -> str:
    if intersection not in INTERSECTIONS:
        raise ValueError(f"intersection must be one of {INTERSECTIONS}, got {intersection!r}")
    return intersection


def _distances(n: int, dvs) -> np.ndarray:
    """The distances ``dvs`` (default ``0..n``) as an int64 array, each checked to lie in [0, n]."""
    if dvs is None:
        return np.arange(n + 1, dtype=np.int64)
    items = np.asarray(list(np.atleast_1d(np.asarray(dvs, dtype=object)).ravel()), dtype=object)
    if items.size == 0:
        raise ValueError("dvs is empty")
    return np.array([_check_distance(v, n, "dv") for v in items], dtype=np.int64)


def _check_beta(beta) -> float:
    try:
        b = float(beta)
    except (TypeError, ValueError):
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}") from None
    if not math.isfinite(b) or b < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
    return b


def _check_count(value, name: str, minimum: int = 1) -> int:
    v = _as_int(value, name)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def _check_relative(rel, n: int | None = None) -> np.ndarray:
    """A relative-weight table indexed by distance: finite, >= 0, shape (n + 1,)."""
    arr = np.asarray(rel, dtype=float)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"relative weights must be a 1-D array indexed by distance 0..n, got shape {arr.shape}")
    if n is not None and arr.size != n + 1:
        raise ValueError(f"relative weights must have n + 1 = {n + 1} entries, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("relative weights must be finite and >= 0")
    return arr


# ==========================================================================================
# 1. One pattern at every distance
# ==========================================================================================


def cosine_of_distance(dv, n) -> np.ndarray:
    """Cosine ``rho = 1 - 2 dv / n`` of the bipolar images of two binary vectors ``dv`` apart.

    Parameters
    ----------
    dv : int or array_like of int
        Hamming distance(s), each in ``[0, n]``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(dv),)`` (a 1-element array for a scalar).

    Raises
    ------
    ValueError
        If ``n < 1`` or a distance is not an integer in ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 5 (``d(a, b) = (n/2)(1 - <a^, b^>)`` for bipolar images).
    """
    n = _check_n(n)
    return 1.0 - 2.0 * _distances(n, dv).astype(float) / n


def sdm_log_weights(n, d, dvs=None, intersection: str = "binary") -> np.ndarray:
    """Natural log of SDM's un-normalised read weight at each distance (``-inf`` where it is 0).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1`` (``>= 2`` for the cap).
    d : int
        Read and write radius, ``0 <= d <= n``.
    dvs : array_like of int, optional
        Distances between query and pattern (default ``0..n``).
    intersection : {"binary", "cap"}
        ``"binary"``: ``log I(dv, d, n)``, the exact circle intersection (Eq. 2).
        ``"cap"``: ``log Ic(rho)``, the spherical cap intersection at ``rho = 1 - 2 dv / n``
        (continuous SDM, App. B.3, as an area fraction).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(dvs),)``.

    Raises
    ------
    ValueError
        If ``n``, ``d`` or a distance is out of range, or ``intersection`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2, Eq. 9 and App. B.3.
    """
    intersection = _check_intersection(intersection)
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    d = _check_distance(d, n, "d")
    dv = _distances(n, dvs)
    if intersection == "binary":
        table = circle_intersection_table(n, d, dv.tolist())
        return np.array([math.log(v) if v > 0 else -math.inf for v in table])
    return np.atleast_1d(np.asarray(log_cap_intersection(1.0 - 2.0 * dv / n, d, n), dtype=float))


def _normalise_logs(logw: np.ndarray) -> np.ndarray:
    """``exp(logw) / sum exp(logw)`` computed stably (``-inf`` entries give 0)."""
    if not np.any(np.isfinite(logw)):
        raise ValueError("every weight is zero; nothing to normalise")
    return np.exp(logw - special.logsumexp(logw))


def sdm_weight_profile(n, d, dvs=None, intersection: str = "binary") -> np.ndarray:
    """Normalised SDM read weights with one pattern at each distance in ``dvs``.

    ``w(dv) = I(dv, d, n) / sum_{dv' in dvs} I(dv', d, n)`` (binary: the ratio of exact integers,
    rounded once) or the same with the cap intersection.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1`` (``>= 2`` for the cap).
    d : int
        Radius, ``0 <= d <= n``.
    dvs : array_like of int, optional
        Distances of the patterns from the query, one pattern each (default ``0..n``).
    intersection : {"binary", "cap"}
        Which intersection weights the patterns, see :func:`sdm_log_weights`.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(dvs),)``, non-negative, summing to 1.

    Raises
    ------
    ValueError
        As :func:`sdm_log_weights`, or if every weight is zero (all ``dv > 2 d``, binary).

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 and Eqs. 6-9 (the normalised weights), Fig. 3.
    """
    intersection = _check_intersection(intersection)
    if intersection == "cap":
        return _normalise_logs(sdm_log_weights(n, d, dvs, "cap"))
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    table = circle_intersection_table(n, d, _distances(n, dvs).tolist())
    total = sum(table)
    if total == 0:
        raise ValueError("every weight is zero; nothing to normalise")
    return np.array([float(Fraction(v, total)) for v in table])


def softmax_weight_profile(n, beta, dvs=None) -> np.ndarray:
    """Normalised softmax weights ``exp(beta rho) / sum exp(beta rho)``, one pattern per distance.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    beta : float
        Inverse temperature, finite and ``>= 0``.
    dvs : array_like of int, optional
        Distances of the patterns from the query (default ``0..n``); ``rho = 1 - 2 dv / n``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(dvs),)``, positive, summing to 1.

    Raises
    ------
    ValueError
        If ``n`` or a distance is out of range, or ``beta`` is negative or not finite.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 and Eq. 6 (softmax attention with unit vectors).
    """
    b = _check_beta(beta)
    return _normalise_logs(b * cosine_of_distance(_distances(_check_n(n), dvs), n))


def total_variation(p, q) -> float:
    """Total-variation distance ``(1/2) sum_i |p_i - q_i|`` of two weight vectors.

    Parameters
    ----------
    p, q : array_like
        Probability vectors of the same shape (non-negative, each summing to 1 within 1e-9).

    Returns
    -------
    float
        In ``[0, 1]``: the largest difference, over sets of patterns, of the total weight the two
        assign to the set.

    Raises
    ------
    ValueError
        If the shapes differ, an entry is negative or not finite, or a vector does not sum to 1.

    References
    ----------
    Seed 002, "What my recomputation of the approximation shows" (normalised-weight discrepancy).
    """
    a, b = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"p and q must have the same shape, got {a.shape} and {b.shape}")
    for name, v in (("p", a), ("q", b)):
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError(f"{name} must be finite and non-negative")
        if abs(float(v.sum()) - 1.0) > 1e-9:
            raise ValueError(f"{name} must sum to 1, sums to {float(v.sum())!r}")
    return float(0.5 * np.abs(a - b).sum())


def _resolve_beta(n: int, d: int, beta, intersection: str) -> tuple[float, str]:
    if isinstance(beta, str):
        if beta not in ("ols", "authors"):
            raise ValueError(f"beta must be a number, 'ols' or 'authors', got {beta!r}")
        return fit_beta(n, d, convention=beta, intersection=intersection).beta, beta
    return _check_beta(beta), "given"


@dataclass(frozen=True)
class WeightComparison:
    """Normalised SDM and softmax weights for one pattern at each distance ``dvs``.

    Attributes
    ----------
    n, d : int
        Dimension and radius.
    beta : float
        The softmax inverse temperature.
    beta_rule : str
        ``"ols"`` or ``"authors"`` (fitted by Eq. 10 on ``dv < d`` in that convention) or
        ``"given"``.
    intersection : str
        ``"binary"`` or ``"cap"``.
    dvs : numpy.ndarray
        int64, shape ``(K,)``: the distances, one pattern each.
    sdm, softmax : numpy.ndarray
        float64, shape ``(K,)``: the two normalised weight vectors.
    """

    n: int
    d: int
    beta: float
    beta_rule: str
    intersection: str
    dvs: np.ndarray = field(repr=False)
    sdm: np.ndarray = field(repr=False)
    softmax: np.ndarray = field(repr=False)

    @property
    def tv(self) -> float:
        """Total-variation distance between the two weight vectors."""
        return total_variation(self.sdm, self.softmax)

    def tv_parts(self) -> dict[str, float]:
        """The total variation split by distance band; the three parts add up to :attr:`tv`.

        Returns
        -------
        dict
            ``"local"``: patterns with ``dv < d`` (the fit window of Eq. 10); ``"middle"``:
            ``d <= dv <= 2 d``; ``"far"``: ``dv > 2 d``, where the binary intersection is 0.
        """
        half = 0.5 * np.abs(self.sdm - self.softmax)
        bands = {"local": self.dvs < self.d,
                 "middle": (self.dvs >= self.d) & (self.dvs <= 2 * self.d),
                 "far": self.dvs > 2 * self.d}
        return {k: float(half[m].sum()) for k, m in bands.items()}

    def log_ratio(self) -> np.ndarray:
        """``ln(w_sdm(dv) / w_sdm(dv_0)) - ln(w_att(dv) / w_att(dv_0))``, ``dv_0`` the first distance.

        The disagreement of the two un-normalised shapes relative to the first pattern (the
        target when ``dvs`` starts at 0); independent of the normalisation. ``-inf`` where SDM's
        weight is 0.
        """
        with np.errstate(divide="ignore"):
            ls, la = np.log(self.sdm), np.log(self.softmax)
        return (ls - ls[0]) - (la - la[0])

    def max_local_log_ratio(self) -> float:
        """``max |log_ratio|`` over the fit window ``dv < d`` (0 if the window holds one distance).

        Raises
        ------
        ValueError
            If no distance in ``dvs`` lies below ``d``.
        """
        inside = self.dvs < self.d
        if not np.any(inside):
            raise ValueError(f"no distance below d = {self.d} among dvs")
        return float(np.abs(self.log_ratio()[inside]).max())


def compare_weights(n, d, beta="ols", intersection: str = "binary", dvs=None) -> WeightComparison:
    """Normalised SDM weights against softmax weights, one pattern at each distance.

    Parameters
    ----------
    n : int
        Dimension (``n = 64`` in the Attention setting).
    d : int
        Read and write radius, ``0 <= d <= n``.
    beta : float or {"ols", "authors"}, default "ols"
        The softmax inverse temperature, or how to fit it to ``log I`` on ``dv = 0..d-1``
        (Eq. 10; ``"authors"`` is the paper's ``N/(N-1)`` convention, see
        :func:`assocmem.sdm.geometry.fit_beta`). The fit uses the same intersection as the SDM
        weights.
    intersection : {"binary", "cap"}
        The SDM kernel, see :func:`sdm_log_weights`.
    dvs : array_like of int, optional
        Distances, one pattern each (default ``0..n``, the review's setting).

    Returns
    -------
    WeightComparison

    Raises
    ------
    ValueError
        If an argument is out of range, ``beta`` is neither a number nor a known rule, or every
        SDM weight is 0.

    References
    ----------
    Bricken & Pehlevan (2021), Eqs. 6-10 and Fig. 3; seed 002, "What my recomputation of the
    approximation shows" (TV distance 0.16 / 0.12 / 0.09 for d = 5 / 11 / 15 at n = 64).
    """
    intersection = _check_intersection(intersection)
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    d = _check_distance(d, n, "d")
    dv = _distances(n, dvs)
    b, rule = _resolve_beta(n, d, beta, intersection)
    return WeightComparison(n=n, d=d, beta=b, beta_rule=rule, intersection=intersection, dvs=dv,
                            sdm=sdm_weight_profile(n, d, dv, intersection),
                            softmax=softmax_weight_profile(n, b, dv))


def tv_of_beta(n, d, betas, intersection: str = "binary", dvs=None) -> np.ndarray:
    """Total variation between SDM weights and softmax weights for each ``beta`` in ``betas``.

    Parameters
    ----------
    n, d : int
        Dimension and radius.
    betas : array_like of float
        Inverse temperatures, each finite and ``>= 0``.
    intersection : {"binary", "cap"}
        The SDM kernel.
    dvs : array_like of int, optional
        Distances, one pattern each (default ``0..n``).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(betas),)``.

    Raises
    ------
    ValueError
        As :func:`compare_weights`.
    """
    intersection = _check_intersection(intersection)
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    dv = _distances(n, dvs)
    w = sdm_weight_profile(n, d, dv, intersection)
    rho = cosine_of_distance(dv, n)
    out = []
    for beta in np.atleast_1d(np.asarray(betas, dtype=float)):
        s = _normalise_logs(_check_beta(beta) * rho)
        out.append(0.5 * np.abs(w - s).sum())
    return np.array(out)


def tv_optimal_beta(n, d, intersection: str = "binary", dvs=None, bounds=(0.5, 200.0)) -> tuple[float, float]:
    """The ``beta`` whose softmax is closest to SDM's weights in total variation.

    A log-spaced grid of 400 points over ``bounds`` locates the minimum, then a bounded scalar
    search refines it between the neighbouring grid points (the total variation is piecewise
    smooth in ``beta``, with kinks where the two profiles cross).

    Parameters
    ----------
    n, d : int
        Dimension and radius.
    intersection : {"binary", "cap"}
        The SDM kernel.
    dvs : array_like of int, optional
        Distances, one pattern each (default ``0..n``).
    bounds : (float, float), default (0.5, 200)
        Search interval, ``0 < lo < hi``.

    Returns
    -------
    beta : float
        The minimiser (to about 1e-6 relative).
    tv : float
        The smallest total variation.

    Raises
    ------
    ValueError
        As :func:`compare_weights`, or for invalid ``bounds``.

    References
    ----------
    Compare Bricken & Pehlevan (2021), Eq. 10, which fits ``beta`` to ``log I`` rather than to
    the normalised weights.
    """
    lo, hi = (float(bounds[0]), float(bounds[1]))
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"bounds must satisfy 0 < lo < hi < inf, got {bounds!r}")
    grid = np.geomspace(lo, hi, 400)
    tv = tv_of_beta(n, d, grid, intersection, dvs)
    i = int(np.argmin(tv))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda x: float(tv_of_beta(n, d, [x], intersection, dvs)[0]),
                                   bounds=(a, b), method="bounded", options={"xatol": 1e-9 * b})
    if res.fun <= tv[i]:
        return float(res.x), float(res.fun)
    return float(grid[i]), float(tv[i])


# ==========================================================================================
# 2. Far patterns: query equal to its target, m uniformly random binary patterns
# ==========================================================================================


def softmax_relative_weights(n, beta) -> np.ndarray:
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
        If ``n < 1`` or ``beta`` is negative or not finite.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 and Eq. 6.
    """
    n = _check_n(n)
    b = _check_beta(beta)
    return np.exp(-2.0 * b * np.arange(n + 1) / n)


def sdm_relative_weights(n, d, intersection: str = "binary") -> np.ndarray:
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


def expected_far_weight(rel, m) -> float:
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
    (:func:`assocmem.sdm.capacity.far_pattern_weight_meanfield` for softmax,
    :func:`assocmem.sdm.capacity.far_pattern_weight_sdm` for SDM).

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


def far_weight_contributions(rel, m) -> np.ndarray:
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


def sample_far_distances(n, m, trials, seed=0) -> np.ndarray:
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


def far_weight_from_distances(rel, distances) -> np.ndarray:
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


def prob_sdm_far_weight_zero(n, d, m) -> float:
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


def expected_target_share(rel, k, m) -> float:
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
