"""SDM's read weights against a fitted softmax's, one pattern at every distance.

A normalised SDM read (Eq. 1) weights a pattern ``dv`` bits from the query by ``I(dv, d, n)``
(the circle intersection, Eq. 2, or the cap intersection of continuous SDM, Eq. 9), softmax
attention over unit vectors by ``exp(beta rho)`` with ``rho = 1 - 2 dv / n`` the cosine of the
bipolar images (Eq. 5) and ``beta`` fitted to ``log I`` (Eq. 10). With one pattern at each
distance ``0..n``, the view of the paper's Fig. 3, this module gives the two normalised profiles
(:func:`sdm_weight_profile`, :func:`softmax_weight_profile`, from :func:`sdm_log_weights` and
:func:`cosine_of_distance`; :data:`INTERSECTIONS` names the kernels), their total-variation
distance (:func:`total_variation`), a comparison that splits it by distance band and measures the
local disagreement of the un-normalised shapes (:func:`compare_weights`,
:class:`WeightComparison`), and the total variation as a function of ``beta`` with the ``beta``
that minimises it (:func:`tv_of_beta`, :func:`tv_optimal_beta`). Source: Bricken & Pehlevan
(2021), Eqs. 1-6, Eq. 9, Eq. 10, Fig. 3 and App. B.3; seed 002, "What my recomputation of the
approximation shows" (the normalised-weight discrepancy). Chapter 34.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize, special

from assocmem._checks import as_real
from assocmem.sdm._common import _real_array
from assocmem.sdm.geometry._common import _check_distance, _check_n
from assocmem.sdm.geometry.beta_fit import fit_beta
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.geometry.spherical_caps import log_cap_intersection

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
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
]


INTERSECTIONS = ("binary", "cap")


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
    b = as_real(beta, "beta")  # refuses booleans, strings, NaN and infinities
    if b < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
    return b


# ==========================================================================================
# Weight profiles
# ==========================================================================================


def cosine_of_distance(dv: ArrayLike, n: int) -> np.ndarray:
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


def sdm_log_weights(n: int, d: int, dvs: ArrayLike | None = None,
                    intersection: str = "binary") -> np.ndarray:
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


def sdm_weight_profile(n: int, d: int, dvs: ArrayLike | None = None,
                       intersection: str = "binary") -> np.ndarray:
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


def softmax_weight_profile(n: int, beta: float, dvs: ArrayLike | None = None) -> np.ndarray:
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
        If ``n`` or a distance is out of range, or ``beta`` is negative, not finite, a boolean
        or a string.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 and Eq. 6 (softmax attention with unit vectors).
    """
    b = _check_beta(beta)
    return _normalise_logs(b * cosine_of_distance(_distances(_check_n(n), dvs), n))


# ==========================================================================================
# Total variation
# ==========================================================================================


def total_variation(p: ArrayLike, q: ArrayLike) -> float:
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
        If the shapes differ, the vectors are empty, an entry is negative, not finite, a
        boolean or a string, or a vector does not sum to 1.

    References
    ----------
    Seed 002, "What my recomputation of the approximation shows" (normalised-weight discrepancy).
    """
    a, b = _real_array(p, "p"), _real_array(q, "q")  # no booleans, strings, NaN or inf
    if a.shape != b.shape:
        raise ValueError(f"p and q must have the same shape, got {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("p and q are empty; a probability vector needs at least one entry")
    for name, v in (("p", a), ("q", b)):
        if np.any(v < 0):
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


def compare_weights(n: int, d: int, beta: float | str = "ols", intersection: str = "binary",
                    dvs: ArrayLike | None = None) -> WeightComparison:
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
        If an argument is out of range, ``beta`` is neither a finite number ``>= 0`` (booleans
        are refused) nor a known rule, or every SDM weight is 0.

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


def tv_of_beta(n: int, d: int, betas: ArrayLike, intersection: str = "binary",
               dvs: ArrayLike | None = None) -> np.ndarray:
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
        As :func:`compare_weights`, or if a ``beta`` is negative, not finite, a boolean or a
        string.
    """
    intersection = _check_intersection(intersection)
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    dv = _distances(n, dvs)
    w = sdm_weight_profile(n, d, dv, intersection)
    rho = cosine_of_distance(dv, n)
    out = []
    for beta in np.atleast_1d(_real_array(betas, "betas")):
        s = _normalise_logs(_check_beta(beta) * rho)
        out.append(0.5 * np.abs(w - s).sum())
    return np.array(out)


def tv_optimal_beta(n: int, d: int, intersection: str = "binary", dvs: ArrayLike | None = None,
                    bounds: tuple[float, float] = (0.5, 200.0)) -> tuple[float, float]:
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
        As :func:`compare_weights`, or for invalid ``bounds`` (not a pair of finite real numbers
        with ``0 < lo < hi``).

    References
    ----------
    Compare Bricken & Pehlevan (2021), Eq. 10, which fits ``beta`` to ``log I`` rather than to
    the normalised weights.
    """
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (lo, hi) with 0 < lo < hi < inf, got {bounds!r}")
    lo, hi = as_real(bounds[0], "bounds[0]"), as_real(bounds[1], "bounds[1]")
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
