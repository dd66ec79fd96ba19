"""The optimal radii of SDM (App. B.5, Table 1) and the softmax ``beta`` they imply.

App. B.5 of Bricken & Pehlevan (2021) optimises the read radius ``d`` three ways: for the
signal-to-noise ratio of an exact cue (Eq. 25), for the memory capacity at a z-score (Eq. 26) and
for the critical distance of iterated reading (Kanerva 1988, Ch. 7), in Kanerva's canonical
setting (:data:`CANONICAL`: ``n = 1000``, ``r = 10^6``, ``m = 10^4``) and the Attention setting
(:data:`ATTENTION`: ``n = 64``, ``r = 2^64``, ``m = 1024``), and reads each optimum as a softmax
``beta`` through the fit of Eq. 10. :func:`optimal_radius` returns one optimum with its ties and
betas (an :class:`OptimalRadius`), :func:`table1` the whole of Table 1 (:class:`SDMSetting`,
:data:`CRITERIA`), and :func:`snr_optimal_fraction`, :func:`memory_optimal_fraction` and
:func:`radius_for_fraction` the continuous optima of the ball fraction and the radius that
reaches one. Source: Bricken & Pehlevan (2021), App. B.4-B.5 (Table 1, Fig. 7, Fig. 17);
Kanerva (1993), §3.6 (the SNR optimum ``p = (2 m r)^(-1/3)``). Chapter 33.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize, stats

from assocmem._checks import as_real
from assocmem.sdm.capacity._common import (
    _LOG2,
    _ball_sizes,
    _check_count,
    _check_mean_overlap,
    _check_neurons,
    _check_z,
    _log_ball_fractions,
    _log_fraction,
)
from assocmem.sdm.capacity.iterated_reading import (
    _check_tolerance,
    _critical_from_map,
    _distance_map,
)
from assocmem.sdm.capacity.signal_noise import (
    _capacity_from_logs,
    _log_mu,
    _log_noise,
    _snr_from_logs,
    retrieval_z,
)
from assocmem.sdm.geometry._common import _check_n
from assocmem.sdm.geometry.beta_fit import fit_beta

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = [
    "SDMSetting",
    "CANONICAL",
    "ATTENTION",
    "CRITERIA",
    "snr_optimal_fraction",
    "memory_optimal_fraction",
    "radius_for_fraction",
    "OptimalRadius",
    "optimal_radius",
    "table1",
]


# ==========================================================================================
# The settings and criteria of Table 1
# ==========================================================================================


#: The optimality criteria of Table 1 (App. B.5): signal-to-noise ratio, memory capacity,
#: critical distance.
CRITERIA = ("snr", "memory", "critical_distance")


@dataclass(frozen=True)
class SDMSetting:
    """A parameter setting of Table 1.

    Attributes
    ----------
    name : str
        ``"canonical"`` or ``"attention"`` for the two settings of the paper.
    n : int
        Address (and pattern) dimension.
    r : int
        Number of neurons.
    m : int
        Number of stored patterns.
    """

    name: str
    n: int
    r: int
    m: int


#: Kanerva's canonical SDM: n = 1000, r = 10^6 neurons, m = 10^4 patterns (App. B.5).
CANONICAL = SDMSetting("canonical", 1000, 10**6, 10**4)
#: The Attention setting: head dimension 64, every address a neuron, GPT-2 context (App. B.5).
ATTENTION = SDMSetting("attention", 64, 2**64, 1024)


# ==========================================================================================
# Continuous optima of the ball fraction
# ==========================================================================================


def snr_optimal_fraction(r: float, m: int) -> float:
    """The ball fraction that maximises Eq. 25 at ``x = 0``: ``p* = (2 m r)^(-1/3)``.

    With ``E[I*] = p r`` and ``E[I_mu] = p^2 r``, ``SNR^2 = p r / (1 + m p + m r p^3)`` (for
    ``m - 1 ~ m``), whose derivative in ``p`` vanishes at ``2 m r p^3 = 1``.

    Parameters
    ----------
    r : int or float
        Number of neurons, ``>= 1``.
    m : int
        Number of stored patterns, ``>= 1``.

    Returns
    -------
    float
        ``(2 m r)^(-1/3)``, e.g. ``3.68e-4`` (canonical) and ``2.98e-8`` (Attention).

    Raises
    ------
    ValueError
        If ``r < 1`` or ``m < 1``.

    References
    ----------
    Kanerva (1993), §3.6; Bricken & Pehlevan (2021), App. B.5 and Table 1.
    """
    log_r = _log_fraction(_check_neurons(r))
    m = _check_count(m, "m")
    return math.exp(-(_LOG2 + math.log(m) + log_r) / 3.0)


def memory_optimal_fraction(r: float, z: float) -> float:
    """The ball fraction that maximises the capacity of Eq. 26, treated as continuous in ``p``.

    With ``E[I*] = p r`` and ``E[I_mu] = p^2 r`` the capacity is
    ``(r/z^2 - 1/p) / (1 + r p^2) + 1``; its derivative vanishes where
    ``2 r^2 p^3 - 3 r z^2 p^2 - z^2 = 0``, which has exactly one positive root. With
    ``p = (z^2/r) t`` the cubic is ``2 t^3 - 3 t^2 = r / z^4``, solved here by bracketing
    (the authors' notebook uses the equivalent Cardano closed form).

    Parameters
    ----------
    r : int or float
        Number of neurons, ``>= 1``.
    z : float
        Required SNR, ``> 0``.

    Returns
    -------
    float
        The optimal fraction ``p`` (it does not depend on ``m``), e.g. ``2.18e-4`` for
        ``r = 10^6``, ``z = 4.264`` and ``2.67e-13`` for ``r = 2^64``, ``z = 3.603``.

    Raises
    ------
    ValueError
        If ``r < 1`` or ``z <= 0``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4 (Eq. 26) and App. B.5 (memory-capacity optimum).
    """
    log_r = _log_fraction(_check_neurons(r))
    return math.exp(_log_memory_optimal_fraction(log_r, _check_z(z)))


def _log_memory_optimal_fraction(log_r: float, z: float) -> float:
    log_k = log_r - 4.0 * math.log(z)
    if log_k > 600.0:  # K astronomically large: t = (K/2)^(1/3) + 1/2 + O(K^(-1/3))
        c = (log_k - _LOG2) / 3.0
        log_t = c + math.log1p(0.5 * math.exp(-c))
    else:
        k = math.exp(log_k)
        hi = 1.5 + (k / 2.0) ** (1.0 / 3.0) + 1.0
        t = optimize.brentq(lambda t: t * t * (2.0 * t - 3.0) - k, 1.5, hi, xtol=1e-14,
                            rtol=4 * np.finfo(float).eps, maxiter=500)
        log_t = math.log(t)
    return 2.0 * math.log(z) + log_t - log_r


def radius_for_fraction(n: int, p: float | Fraction) -> int:
    """Smallest radius whose ball holds at least a fraction ``p`` of ``{0, 1}^n``.

    The binomial quantile ``min{d : sum_{i<=d} C(n, i) / 2^n >= p}`` (the authors'
    ``binom.ppf(p, n, 1/2)``), decided in exact rational arithmetic.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    p : float or fractions.Fraction
        Target fraction in ``(0, 1]``.

    Returns
    -------
    int
        The radius ``d`` in ``[0, n]``.

    Raises
    ------
    ValueError
        If ``n < 1`` or ``p`` is not a real number in ``(0, 1]`` (booleans and strings are
        refused).

    References
    ----------
    Bricken & Pehlevan (2021), App. B.5 (d* from p*); Kanerva (1988), Ch. 1.
    """
    n = _check_n(n)
    # exact: a Fraction stays one, an int or float becomes the exact rational of its value;
    # booleans, strings ("1/2" would parse), NaN and infinities are refused
    fp = p if isinstance(p, Fraction) else Fraction(as_real(p, "p"))
    if not (0 < fp <= 1):
        raise ValueError(f"p must lie in (0, 1], got {p!r}")
    sizes = _ball_sizes(n)
    target = fp * (1 << n)
    return next(d for d, size in enumerate(sizes) if size >= target)


def _snr_optimal_radius_exact(n: int, fr: Fraction, m: int) -> int:
    """Smallest ``d`` with ``p(d) >= (2 m r)^(-1/3)``, i.e. ``|B_d|^3 2 m r >= 2^(3n)``, exactly."""
    sizes = _ball_sizes(n)
    lhs_scale = 2 * m * fr.numerator
    rhs = (1 << (3 * n)) * fr.denominator
    return next((d for d, size in enumerate(sizes) if size ** 3 * lhs_scale >= rhs), n)


# ==========================================================================================
# Optimal radii (App. B.5, Table 1)
# ==========================================================================================


@dataclass(frozen=True)
class OptimalRadius:
    """An optimal radius of Table 1 and the softmax ``beta`` it implies.

    Attributes
    ----------
    criterion : str
        ``"snr"``, ``"memory"`` or ``"critical_distance"``.
    n, r, m : int
        The setting (``m`` does not enter the memory criterion).
    d : int
        The optimal radius ``d*``.
    p : float
        Ball fraction at ``d*``.
    p_star : float or None
        The continuous optimum fraction the radius was derived from (``method="continuous"``),
        else ``None``.
    value : float
        The criterion at ``d*``: the SNR (Eq. 25, ``x = 0``), the capacity (Eq. 26) or the
        critical distance in bits.
    method : str
        ``"continuous"`` (optimise ``p`` then take the smallest ``d`` with fraction ``>= p*``) or
        ``"integer"`` (maximise over integer ``d``).
    ties : tuple of int
        Every radius attaining the optimal value (integer search; ``(d,)`` otherwise).
    z : float or None
        The z-score used by the memory criterion.
    beta_ols : float
        The ``beta`` fitted to ``I(dv, d*, n)`` by Eq. 10, ordinary least squares over
        ``dv < d*`` (``nan`` if ``d* < 2``).
    beta_authors : float
        The same fit in the authors' convention (``beta_ols N / (N - 1)``).
    """

    criterion: str
    n: int
    r: int | float
    m: int
    d: int
    p: float
    p_star: float | None
    value: float
    method: str
    ties: tuple[int, ...]
    z: float | None
    beta_ols: float
    beta_authors: float


def _betas(n: int, d: int) -> tuple[float, float]:
    try:
        return (fit_beta(n, d).beta, fit_beta(n, d, convention="authors").beta)
    except ValueError:
        return (math.nan, math.nan)


def _argmax_with_ties(values: dict[int, float]) -> tuple[int, tuple[int, ...]]:
    best = max(values.values())
    ties = tuple(sorted(d for d, v in values.items() if v == best))
    return ties[0], ties


def optimal_radius(n: int, r: float, m: int, criterion: str = "snr", *, method: str | None = None,
                   z: float | None = None, retrieval: float = 0.99, tolerance: float = 0.5,
                   round_distance: bool = False, tie_break: str = "smallest",
                   mean_overlap: str = "random") -> OptimalRadius:
    """The radius ``d*`` that optimises one of the three criteria of App. B.5 (Table 1).

    * ``"snr"``: maximise the SNR of an exact-cue read (Eq. 25). Default
      ``method="continuous"``: ``p* = (2 m r)^(-1/3)`` and ``d*`` the smallest radius with ball
      fraction ``>= p*`` (the paper's procedure; canonical 447, Attention 11).
      ``method="integer"`` maximises Eq. 25 over integer ``d`` (canonical 446, Attention 11).
    * ``"memory"``: maximise the capacity of Eq. 26 at z-score ``z``. Default
      ``method="integer"`` maximises over integer ``d``; ``method="continuous"`` takes the
      continuous optimum of :func:`memory_optimal_fraction` and the smallest ``d`` reaching it
      (the authors' notebook). ``z`` defaults to :func:`retrieval_z` of 99 % whole-pattern
      retrieval. Both methods give 444 (canonical) and 5 (Attention) at 99 %; with the authors'
      actual setting (50 % whole-pattern, ``z = 3.198`` at ``n = 1000``) the continuous method still
      gives 444 but the integer maximum moves to 443.
    * ``"critical_distance"``: maximise :func:`critical_distance` over integer ``d``
      (``method="integer"`` only). Radii whose exact cue does not converge are skipped, exactly
      (:func:`critical_distance` is ``-1`` there). Ties are broken by ``tie_break``:
      ``"smallest"`` (default: the smallest radius, the fewest neurons read) or ``"crossing"``
      (the largest real-valued crossing of ``f(x) = x``). With the defaults: canonical 448
      (critical distance 172 bits, no tie), Attention 15 (24 bits, tied with 16;
      ``"crossing"`` picks 16, ``round_distance=True`` gives 11 at 22 bits, tied with 12-18).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1``.
    m : int
        Number of stored patterns, ``>= 1``.
    criterion : {"snr", "memory", "critical_distance"}
        What to optimise.
    method : {"continuous", "integer"}, optional
        See above; defaults per criterion (``"continuous"`` for ``"snr"``, ``"integer"`` else).
    z : float, optional
        z-score for ``"memory"`` (``> 0``); overrides ``retrieval``.
    retrieval : float, default 0.99
        Whole-pattern retrieval probability that sets ``z`` for ``"memory"`` when ``z`` is
        ``None`` (per-bit probability ``retrieval^(1/n)``).
    tolerance : float, default 0.5
        Convergence tolerance for ``"critical_distance"``, in bits.
    round_distance : bool, default False
        Round distances after each read (``"critical_distance"``).
    tie_break : {"smallest", "crossing"}
        Tie-breaking for ``"critical_distance"``.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed (integer searches and the reported ``value``).

    Returns
    -------
    OptimalRadius
        ``d``, ``p``, ``p_star``, ``value``, ``ties``, ``z`` and the Eq. 10 betas at ``d*``
        (OLS and the authors' convention).

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``m < 1``, ``z <= 0``, ``retrieval`` is not in ``(0, 1)``, or
        ``criterion``, ``method``, ``tie_break`` or ``mean_overlap`` is unknown (the message lists
        the valid values).

    Notes
    -----
    Reproduction of the paper's numbers (review of App. B.5). Table 1 is reproduced with the
    defaults. The betas at the Attention optima are 9.44 / 10.11 (``d = 15``, OLS / authors),
    14.41 / 15.85 (``d = 11``) and 28.39 / 35.48 (``d = 5``; Fig. 7 gives 35.5). Fig. 17c
    (``d*_CD`` from 16 to 22 for ``m <= 512`` in the Attention setting) is reproduced only in part:
    over ``m = 1, 2, 4, ..., 512`` the ``"crossing"`` tie-break gives 16-20, inside that range,
    but the default tie-break (which gives the paper's 15 at ``m = 1024``) gives 14 at
    ``m = 512``; the optimum is flat (several radii share the best critical distance) for many
    ``m``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4-B.5, Eqs. 25-27, Table 1, Fig. 7 (beta_Mem = 35.5 in the
    authors' convention) and Fig. 17 (critical distance); Kanerva (1993), §3.6 (SNR optimum);
    Kanerva (1988), Ch. 7 (critical distance).
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    n = _check_n(n)
    fr = _check_neurons(r)
    log_r = _log_fraction(fr)
    m = _check_count(m, "m")
    mean_overlap = _check_mean_overlap(mean_overlap)
    default_method = "continuous" if criterion == "snr" else "integer"
    method = default_method if method is None else method
    valid_methods = ("integer",) if criterion == "critical_distance" else ("continuous", "integer")
    if method not in valid_methods:
        raise ValueError(f"method for criterion {criterion!r} must be one of {valid_methods}, "
                         f"got {method!r}")
    if tie_break not in ("smallest", "crossing"):
        raise ValueError(f"tie_break must be one of ('smallest', 'crossing'), got {tie_break!r}")
    log_p = _log_ball_fractions(n)

    @lru_cache(maxsize=None)
    def noise_at(d: int) -> float:
        return _log_noise(m, _log_mu(n, d, log_r, mean_overlap))

    z_used = None
    p_star = None

    if criterion == "snr":
        def snr_at(d: int) -> float:
            return float(_snr_from_logs(log_p[d] + log_r, noise_at(d)))

        if method == "continuous":
            p_star = math.exp(-(_LOG2 + math.log(m) + log_r) / 3.0)
            d_best = _snr_optimal_radius_exact(n, fr, m)
            ties = (d_best,)
        else:
            d_best, ties = _argmax_with_ties({d: snr_at(d) for d in range(n + 1)})
        value = snr_at(d_best)

    elif criterion == "memory":
        z_used = _check_z(z) if z is not None else retrieval_z(retrieval, n)

        def cap_at(d: int) -> float:
            return _capacity_from_logs(float(log_p[d] + log_r),
                                       _log_mu(n, d, log_r, mean_overlap), z_used)

        if method == "continuous":
            p_star = math.exp(_log_memory_optimal_fraction(log_r, z_used))
            d_best = radius_for_fraction(n, min(p_star, 1.0)) if p_star > 0 else 0
            ties = (d_best,)
        else:
            d_best, ties = _argmax_with_ties({d: cap_at(d) for d in range(n + 1)})
        value = cap_at(d_best)

    else:
        tolerance = _check_tolerance(tolerance)
        results = {}
        for d in range(n + 1):
            # exact prefilter: the limit from x0 = 0 is >= f(0) (>= round(f(0)) when rounding)
            f0 = n * float(stats.norm.sf(_snr_from_logs(log_p[d] + log_r, noise_at(d))))
            first = math.floor(f0 + 0.5) if round_distance else f0
            if first > tolerance:
                continue
            f = _distance_map(n, log_r, m, d, mean_overlap)
            results[d] = _critical_from_map(f, tolerance, bool(round_distance))
        if not results:
            raise ValueError(f"no radius lets an exact cue converge (n = {n}, r = {r!r}, m = {m}, "
                             f"tolerance = {tolerance})")
        d_best, ties = _argmax_with_ties({d: float(v.critical_distance)
                                          for d, v in results.items()})
        if tie_break == "crossing" and len(ties) > 1:
            d_best = max(ties, key=lambda d: (results[d].crossing or -math.inf, -d))
        value = float(results[d_best].critical_distance)

    p = math.exp(float(log_p[d_best]))
    beta_ols, beta_authors = _betas(n, d_best)
    return OptimalRadius(criterion=criterion, n=n, r=r, m=m, d=int(d_best), p=p, p_star=p_star,
                         value=float(value), method=method, ties=tuple(int(t) for t in ties),
                         z=z_used, beta_ols=beta_ols, beta_authors=beta_authors)


def table1(settings: Iterable[SDMSetting] = (CANONICAL, ATTENTION),
           criteria: Iterable[str] = CRITERIA, **kwargs: Any) -> list[OptimalRadius]:
    """Recompute Table 1 of Bricken & Pehlevan (2021): every criterion in every setting.

    Parameters
    ----------
    settings : iterable of SDMSetting, default (CANONICAL, ATTENTION)
        The settings (rows of Table 1).
    criteria : iterable of str, default ("snr", "memory", "critical_distance")
        The criteria (columns).
    **kwargs
        Passed to :func:`optimal_radius` (``method`` only if it suits every criterion).

    Returns
    -------
    list of OptimalRadius
        One entry per setting and criterion, settings outermost.

    Raises
    ------
    ValueError
        As :func:`optimal_radius`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.5, Table 1.
    """
    return [optimal_radius(s.n, s.r, s.m, c, **kwargs) for s in settings for c in criteria]
