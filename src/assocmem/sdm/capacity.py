"""Signal-to-noise ratio, capacity, critical distance and optimal radii of SDM.

Bricken & Pehlevan (2021) identify the read/write radius ``d`` of Kanerva's sparse distributed
memory (SDM) with the inverse temperature ``beta`` of softmax attention and ask which ``d`` (and
hence which ``beta``) is optimal for random patterns. App. B.4 gives a signal-to-noise model of a
read; App. B.5 optimises it three ways (Table 1). This module implements that model exactly, in
log arithmetic, so the canonical setting (``n = 1000``, ``r = 10^6`` neurons, ``m = 10^4``
patterns) and the Attention setting (``n = 64``, ``r = 2^64``, ``m = 1024``) need neither
``2^n`` nor ``r`` as a float:

1. :func:`snr` (Eq. 25), :func:`capacity` (Eqs. 26-27; exported as :data:`memory_capacity` so
   that a star import does not shadow this submodule) and the z-score of a retrieval target
   (:func:`retrieval_z`).
2. Kanerva's convergence model: the expected distance after one read
   (:func:`read_distance_map`), its literal iteration (:func:`read_trajectory`) and the critical
   distance (:func:`critical_distance`, :func:`critical_distance_analysis`).
3. The optima of Table 1: :func:`optimal_radius`, :func:`table1` and the continuous optima
   :func:`snr_optimal_fraction`, :func:`memory_optimal_fraction`, :func:`radius_for_fraction`.
4. How much weight far (random) patterns get when the query equals its target: softmax
   (:func:`far_pattern_weight`, :func:`far_pattern_weight_meanfield`,
   :func:`far_pattern_weight_mc`) against SDM (:func:`far_pattern_weight_sdm`,
   :func:`far_pattern_weight_sdm_mc`).

The model (App. B.4)
--------------------
Patterns are random, stored autoassociatively with bipolar (``+-1``) contents in ``r`` neurons
at uniformly random addresses, each written to and read from every neuron within Hamming
distance ``d``. Reading at a query ``xi`` that lies ``x`` bits from its target gives, at each bit,
the sum ``S = sum_mu I_mu b_mu`` over the stored patterns, where ``I_mu`` is the number of neurons
in the intersection of the read ball and the write ball of pattern ``mu`` and ``b_mu`` its bit.
With the counts Poisson and independent,

* signal ``E[I*] = I(x, d, n) r / 2^n`` (the expected neurons shared with the target; with
  ``x = 0`` this is ``p r``, ``p`` the ball fraction), variance ``E[I*]``;
* noise from each of the other ``m - 1`` patterns, mean 0 and variance
  ``E[I_mu^2] = E[I_mu] + E[I_mu]^2``.

So ``SNR = E[I*] / sqrt(E[I*] + (m - 1) (E[I_mu] + E[I_mu]^2))`` (Eq. 25). For the mean overlap with
a random pattern we use ``E[I_mu] = p^2 r`` (``mean_overlap="random"``, the default): averaged
over a uniformly random pattern the intersection is exactly ``|B| p``, i.e. ``p^2 2^n``
addresses. The alternative ``mean_overlap="orthogonal"`` evaluates the intersection at the
orthogonal distance ``floor(n/2)`` (all other patterns exactly orthogonal, App. B.4's
assumption); it vanishes at ``n = 64`` for ``d < 16`` and is offered only to show that.

Numbers that do and do not reproduce
------------------------------------
With the defaults, :func:`table1` gives ``d* = 447, 444, 448`` (SNR, memory, critical distance)
in the canonical setting and ``d* = 11, 5, 15`` in the Attention setting, the values of Table 1.
The choices each entry depends on are recorded in :func:`optimal_radius`; in short, the SNR
entries need the paper's continuous optimum (the integer maximum of Eq. 25 is at 446 in the
canonical setting), and the Attention critical-distance optimum is a tie (``d = 15`` and ``16``
share the largest critical distance, 24 bits) broken towards the smaller radius.

References
----------
.. [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
   NeurIPS 34. App. B.4 (Eq. 25, signal-to-noise ratio; Eqs. 26-27, memory capacity), App. B.5
   (Table 1, optimal radii; Fig. 17, critical distance), Eq. 10 (the beta regression), Fig. 3 and
   App. B.2 (weights of far patterns).
.. [K88] Kanerva, P. (1988). Sparse Distributed Memory. MIT Press. Ch. 7 (reading from a noisy
   address: the expected distance after one read, iterated reading and the critical distance,
   Fig. 7.3).
.. [K93] Kanerva, P. (1993). Sparse distributed memory and related models. In M. H. Hassoun
   (Ed.), Associative Neural Memories: Theory and Implementation. Oxford University Press.
   §3.6 (the signal-to-noise ratio of a read and its optimal activation probability
   ``p = (2 m r)^(-1/3)``). The critical distance is in the book [K88], not here.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from scipy import optimize, special, stats

from assocmem.sdm.geometry import (
    _check_distance,
    _check_n,
    _check_r,
    circle_intersection_table,
    fit_beta,
)

__all__ = [
    # settings and criteria
    "SDMSetting",
    "CANONICAL",
    "ATTENTION",
    "CRITERIA",
    # Eq. 25-27
    "mean_random_overlap",
    "snr",
    "memory_capacity",  # = capacity; the bare name would shadow this submodule on re-export
    "retrieval_z",
    # critical distance
    "read_distance_map",
    "read_trajectory",
    "CriticalDistance",
    "critical_distance_analysis",
    "critical_distance",
    # optima
    "snr_optimal_fraction",
    "memory_optimal_fraction",
    "radius_for_fraction",
    "OptimalRadius",
    "optimal_radius",
    "table1",
    # far patterns
    "far_pattern_weight",
    "far_pattern_weight_meanfield",
    "far_pattern_weight_mc",
    "far_pattern_weight_sdm",
    "far_pattern_weight_sdm_mc",
]

_LOG2 = math.log(2.0)
_LOG_FLOAT_MAX = math.log(np.finfo(float).max)

CRITERIA = ("snr", "memory", "critical_distance")
_MEAN_OVERLAPS = ("random", "orthogonal")
_PATTERN_KINDS = ("bipolar", "gaussian")


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
# 0. Validation and exact helpers
# ==========================================================================================


def _check_count(value, name: str, minimum: int = 1) -> int:
    """An integer count ``>= minimum`` (ints, numpy integers, integral floats)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got the boolean {value!r}")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, Integral):
        v = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def _check_neurons(r) -> Fraction:
    """``r`` as an exact Fraction, ``>= 1``."""
    fr = _check_r(r)
    if fr < 1:
        raise ValueError(f"r (the number of neurons) must be >= 1, got {r!r}")
    return fr


def _log_fraction(fr: Fraction) -> float:
    return math.log(fr.numerator) - math.log(fr.denominator)


def _check_z(z) -> float:
    try:
        zf = float(z)
    except (TypeError, ValueError):
        raise ValueError(f"z must be a positive real number, got {z!r}") from None
    if not math.isfinite(zf) or zf <= 0:
        raise ValueError(f"z must be a finite number > 0, got {z!r}")
    return zf


def _check_probability(value, name: str) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a probability in (0, 1), got {value!r}") from None
    if not (0.0 < f < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return f


def _check_mean_overlap(mean_overlap) -> str:
    if mean_overlap not in _MEAN_OVERLAPS:
        raise ValueError(f"mean_overlap must be one of {_MEAN_OVERLAPS}, got {mean_overlap!r}")
    return mean_overlap


def _check_beta(beta) -> np.ndarray:
    arr = np.asarray(beta, dtype=float)
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr < 0)):
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    return arr


def _check_pattern_kind(patterns) -> str:
    if patterns not in _PATTERN_KINDS:
        raise ValueError(f"patterns must be one of {_PATTERN_KINDS}, got {patterns!r}")
    return patterns


@lru_cache(maxsize=16)
def _ball_sizes(n: int) -> tuple[int, ...]:
    """``(|B_0|, ..., |B_n|)``, exact ball sizes for every radius (cumulative binomial row)."""
    sizes = []
    c, total = 1, 0
    for k in range(n + 1):
        total += c
        sizes.append(total)
        c = c * (n - k) // (k + 1)
    return tuple(sizes)


@lru_cache(maxsize=16)
def _log_ball_fractions(n: int) -> np.ndarray:
    """``log p(d)`` for ``d = 0..n`` (read-only array)."""
    out = np.array([math.log(b) for b in _ball_sizes(n)]) - n * _LOG2
    out.setflags(write=False)
    return out


def _log_mu(n: int, d: int, log_r: float, mean_overlap: str) -> float:
    """log of the mean overlap ``E[I_mu]`` (``-inf`` if it is 0)."""
    if mean_overlap == "random":
        return 2.0 * float(_log_ball_fractions(n)[d]) + log_r
    value = circle_intersection_table(n, d, [n // 2])[0]
    return math.log(value) + log_r - n * _LOG2 if value > 0 else -math.inf


def _log_noise(m: int, log_mu: float) -> float:
    """``log((m - 1)(mu + mu^2))`` (``-inf`` if ``m = 1`` or ``mu = 0``)."""
    if m == 1 or log_mu == -math.inf:
        return -math.inf
    return math.log(m - 1) + log_mu + float(np.logaddexp(0.0, log_mu))


def _snr_from_logs(log_s, log_noise: float):
    """``s / sqrt(s + noise)`` from ``log s`` (array or scalar; ``-inf`` gives 0)."""
    log_s = np.asarray(log_s, dtype=float)
    with np.errstate(invalid="ignore"):
        log_var = np.logaddexp(log_s, log_noise)
        out = np.where(np.isneginf(log_s), 0.0, np.exp(log_s - 0.5 * log_var))
    return out


def _log_target(n: int, d: int, xs, log_r: float) -> np.ndarray:
    """``log E[I*(x)] = log I(x, d, n) + log r - n log 2`` for the distances ``xs``."""
    table = circle_intersection_table(n, d, xs)
    return np.array([math.log(v) + log_r - n * _LOG2 if v > 0 else -math.inf for v in table])


# ==========================================================================================
# 1. Eq. 25-27: signal-to-noise ratio and memory capacity
# ==========================================================================================


def mean_random_overlap(n, r, d, *, mean_overlap: str = "random") -> float:
    """Expected number of neurons shared by the read ball and a random pattern's write ball.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1`` (Python ints of any size, e.g. ``2**64``).
    d : int
        Read and write radius, ``0 <= d <= n``.
    mean_overlap : {"random", "orthogonal"}
        ``"random"`` (default): ``E[I_mu] = p^2 r`` with ``p`` the ball fraction, the exact mean
        over a uniformly random pattern (the average of ``I(dv, d, n)`` over
        ``dv ~ Binomial(n, 1/2)`` is ``|B_d|^2 / 2^n``). ``"orthogonal"``: the overlap at the
        orthogonal distance, ``I(floor(n/2), d, n) r / 2^n`` (App. B.4 places every other
        pattern at ``n/2``); it is 0 whenever ``2 d < floor(n/2)``.

    Returns
    -------
    float
        ``E[I_mu]`` (values below ~1e-308 underflow to 0).

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``d`` is outside ``[0, n]`` or ``mean_overlap`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4 (Eq. 25); Kanerva (1993), §3.6.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    log_r = _log_fraction(_check_neurons(r))
    return math.exp(_log_mu(n, d, log_r, _check_mean_overlap(mean_overlap)))


def snr(n, r, m, d, x=0, *, mean_overlap: str = "random") -> float:
    """Signal-to-noise ratio of one bit of an SDM read (Eq. 25).

    ``SNR = E[I*] / sqrt(E[I*] + (m - 1)(E[I_mu] + E[I_mu]^2))`` with ``E[I*] = I(x, d, n) r / 2^n``
    the expected number of neurons shared by the query and its target ``x`` bits away (``p r`` at
    ``x = 0``) and ``E[I_mu]`` the mean overlap with a random pattern
    (:func:`mean_random_overlap`). All arithmetic is in logs of exact integers, so neither
    ``2^n`` nor ``r`` is ever a float.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1``.
    m : int
        Number of stored patterns, ``>= 1`` (the target and ``m - 1`` others).
    d : int
        Read and write radius, ``0 <= d <= n``.
    x : int, default 0
        Hamming distance between the query and its target (query noise), ``0 <= x <= n``.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed, see :func:`mean_random_overlap`.

    Returns
    -------
    float
        The SNR (0 where the query and target balls do not meet, ``x > 2 d``).

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``m < 1``, ``d`` or ``x`` is outside ``[0, n]``, or
        ``mean_overlap`` is unknown.

    Notes
    -----
    The variance treats the counts as independent Poisson variables, as App. B.4 does; the
    authors note this underestimates the variance, so the SNR is an upper bound. Maximised over
    the ball fraction ``p`` (at ``x = 0``) it peaks at ``p* = (2 m r)^(-1/3)``
    (:func:`snr_optimal_fraction`).

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4, Eq. 25 and Fig. 16; Kanerva (1993), §3.6 (the SNR of a
    read and its optimum).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    x = _check_distance(x, n, "x")
    m = _check_count(m, "m")
    log_r = _log_fraction(_check_neurons(r))
    log_noise = _log_noise(m, _log_mu(n, d, log_r, _check_mean_overlap(mean_overlap)))
    return float(_snr_from_logs(_log_target(n, d, [x], log_r)[0], log_noise))


def capacity(n, r, d, z, x=0, *, mean_overlap: str = "random") -> float:
    """Number of patterns storable at a target SNR ``z`` (Eqs. 26-27).

    Setting Eq. 25 equal to ``z`` and solving for ``m`` gives
    ``m = (E[I*]^2 / z^2 - E[I*]) / (E[I_mu] + E[I_mu]^2) + 1``. Evaluated as
    ``1 + (E[I*]/z^2 - 1) E[I*] / (E[I_mu](1 + E[I_mu]))`` in logs, so ``r = 2^64`` or tiny ball
    fractions do not overflow.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1``.
    d : int
        Read and write radius, ``0 <= d <= n``.
    z : float
        Required SNR (a z-score), ``> 0``; :func:`retrieval_z` converts a retrieval probability.
    x : int, default 0
        Query noise (distance from query to target) at which the SNR is required.
    mean_overlap : {"random", "orthogonal"}
        How ``E[I_mu]`` is computed, see :func:`mean_random_overlap`.

    Returns
    -------
    float
        The capacity ``m``, a real number. Values ``< 1`` mean that even a lone pattern misses
        the target SNR (``E[I*] < z^2``); it is ``-inf``/``inf`` where it exceeds the float range
        or the noise term is 0.

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``d`` or ``x`` is outside ``[0, n]``, ``z <= 0``, or
        ``mean_overlap`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4, Eqs. 26-27 (the capacity at a z-score) and App. B.5.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    x = _check_distance(x, n, "x")
    z = _check_z(z)
    log_r = _log_fraction(_check_neurons(r))
    log_mu = _log_mu(n, d, log_r, _check_mean_overlap(mean_overlap))
    log_s = float(_log_target(n, d, [x], log_r)[0])
    return _capacity_from_logs(log_s, log_mu, z)


#: Alias of :func:`capacity` under which the package re-exports it: ``from .capacity import *``
#: in ``assocmem.sdm`` would otherwise bind the name ``capacity`` to the function and hide this
#: submodule (``import assocmem.sdm.capacity as m`` would then give the function).
memory_capacity = capacity


def _capacity_from_logs(log_s: float, log_mu: float, z: float) -> float:
    if log_s == -math.inf:
        return -math.inf
    # A = E[I*]/z^2 - 1 with its sign and log magnitude
    t = log_s - 2.0 * math.log(z)  # log(E[I*]/z^2)
    if t == 0.0:
        return 1.0
    if t > 0:
        sign, log_a = 1.0, t + math.log1p(-math.exp(-t))
    else:
        sign, log_a = -1.0, math.log1p(-math.exp(t))
    if log_mu == -math.inf:
        return sign * math.inf
    log_excess = log_a + log_s - log_mu - float(np.logaddexp(0.0, log_mu))
    if log_excess > _LOG_FLOAT_MAX:
        return sign * math.inf
    return 1.0 + sign * math.exp(log_excess)


def retrieval_z(probability, n=None) -> float:
    """z-score of a retrieval target: per bit, or for a whole ``n``-bit pattern.

    A bit is read correctly when the read sum has the sign of the stored bit, which with a
    Gaussian sum happens with probability ``Phi(SNR)``; a target probability ``q`` per bit
    therefore needs ``SNR >= z = Phi^{-1}(q)``. For a whole pattern with independent bit errors,
    ``q = P^(1/n)``.

    Parameters
    ----------
    probability : float
        Target retrieval probability in ``(0, 1)``: of the whole pattern if ``n`` is given, else
        of one bit.
    n : int, optional
        Pattern length; if given, ``probability`` is for the whole pattern.

    Returns
    -------
    float
        ``z = Phi^{-1}(q)``, computed as ``norm.isf(-expm1(log(P)/n))`` so that
        ``q = 0.99^(1/1000)`` keeps full precision. Negative if ``q < 1/2``.

    Raises
    ------
    ValueError
        If ``probability`` is not in ``(0, 1)`` or ``n < 1``.

    Notes
    -----
    Our default for the memory-capacity optimum is 99 % whole-pattern retrieval,
    ``z = 4.264`` at ``n = 1000`` and ``3.603`` at ``n = 64``. The authors' notebook states the same
    intent in a comment but sets the probability to 0.5 (``z = 3.198`` and ``2.298``); see
    :func:`optimal_radius` for what each choice gives.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4-B.5 (capacity at a z-score); Kanerva (1988), Ch. 7.
    """
    q = _check_probability(probability, "probability")
    if n is None:
        return float(stats.norm.isf(1.0 - q))
    n = _check_n(n)
    return float(stats.norm.isf(-math.expm1(math.log(q) / n)))


# ==========================================================================================
# 2. Critical distance: Kanerva's iterated-reading model
# ==========================================================================================


def read_distance_map(n, r, m, d, *, mean_overlap: str = "random") -> np.ndarray:
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


def read_trajectory(n, r, m, d, x0, steps: int = 100, *, round_distance: bool = False,
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
    try:
        t = float(tolerance)
    except (TypeError, ValueError):
        raise ValueError(f"tolerance must be a real number >= 0, got {tolerance!r}") from None
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    return t


def critical_distance_analysis(n, r, m, d, *, tolerance: float = 0.5,
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
        If ``n < 1``, ``r < 1``, ``m < 1``, ``d`` is outside ``[0, n]``, ``tolerance < 0`` or
        ``mean_overlap`` is unknown.

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


def critical_distance(n, r, m, d, *, tolerance: float = 0.5, round_distance: bool = False,
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


# ==========================================================================================
# 3. Optimal radii (App. B.5, Table 1)
# ==========================================================================================


def snr_optimal_fraction(r, m) -> float:
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


def memory_optimal_fraction(r, z) -> float:
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


def radius_for_fraction(n, p) -> int:
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
        If ``n < 1`` or ``p`` is not in ``(0, 1]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.5 (d* from p*); Kanerva (1988), Ch. 1.
    """
    n = _check_n(n)
    try:
        fp = Fraction(p)
    except (TypeError, ValueError):
        raise ValueError(f"p must be a fraction in (0, 1], got {p!r}") from None
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


def optimal_radius(n, r, m, criterion: str = "snr", *, method: str | None = None,
                   z=None, retrieval: float = 0.99, tolerance: float = 0.5,
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


def table1(settings=(CANONICAL, ATTENTION), criteria=CRITERIA, **kwargs) -> list[OptimalRadius]:
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


# ==========================================================================================
# 4. Weight on far patterns: softmax versus SDM
# ==========================================================================================


def far_pattern_weight(beta, m, cos=0.0):
    """Total softmax weight on ``m`` far patterns when the query equals its target.

    With unit vectors and weights ``exp(beta cos)``, the target (``cos = 1``) and ``m`` far
    patterns at cosine ``cos`` share the weight, and the far ones get
    ``m e^{-beta(1 - cos)} / (1 + m e^{-beta(1 - cos)})`` (evaluated as
    ``expit(log m - beta(1 - cos))``). With ``cos = 0`` (exactly orthogonal) this is the review's
    ``m e^{-beta} / (1 + m e^{-beta})``.

    Parameters
    ----------
    beta : float or array_like
        Inverse temperature(s), finite and ``>= 0``.
    m : int
        Number of far (non-target) patterns, ``>= 1``. With ``M`` stored patterns in all, the
        target's competitors number ``M - 1``.
    cos : float or array_like, default 0.0
        Their cosine with the query, in ``[-1, 1]``.

    Returns
    -------
    float or numpy.ndarray
        The far weight in ``[0, 1)``; broadcast over ``beta`` and ``cos``.

    Raises
    ------
    ValueError
        If ``beta`` is negative or not finite, ``m < 1`` or ``cos`` is outside ``[-1, 1]``.

    Notes
    -----
    ``m = 1024``: 5.7e-4 at ``beta = 14.4`` (beta_SNR), 0.078 at ``beta = 9.4`` and 0.0755 at
    ``beta = 9.436`` (the OLS beta_CD at ``d = 15``); the review's "~0.07" is 0.078 rounded down.
    Random patterns are not exactly orthogonal; see :func:`far_pattern_weight_meanfield`.

    References
    ----------
    Bricken & Pehlevan (2021), Fig. 3 and App. B.2 (the normalised weights of far patterns).
    """
    b = _check_beta(beta)
    m = _check_count(m, "m")
    c = np.asarray(cos, dtype=float)
    if c.size and (not np.all(np.isfinite(c)) or np.any(np.abs(c) > 1.0)):
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    out = special.expit(math.log(m) - b * (1.0 - c))
    return float(out) if np.ndim(out) == 0 else out


def _log_mean_exp_cos(beta: float, n: int, patterns: str) -> float:
    """``log E[exp(beta (cos - 1))]`` for the cosine of a random pattern with a fixed unit query."""
    if beta == 0.0:
        return 0.0
    if patterns == "bipolar":  # cos = mean of n independent +-1 signs
        x = beta / n
        log_cosh = x + math.log1p(math.exp(-2.0 * x)) - _LOG2
        return n * log_cosh - beta
    nu = n / 2.0 - 1.0  # uniform on S^{n-1}: E e^{beta cos} = Gamma(n/2) (beta/2)^{-nu} I_nu(beta)
    return (special.gammaln(n / 2.0) - nu * math.log(beta / 2.0)
            + math.log(special.ive(nu, beta)))


def far_pattern_weight_meanfield(beta, m, n, *, patterns: str = "bipolar") -> float:
    """Far weight with the cosine of each far pattern averaged over random patterns.

    Random patterns are only approximately orthogonal: their cosine with the query has standard
    deviation ``1/sqrt(n)``, and ``exp(beta cos)`` weights the closer ones up. Replacing
    ``e^{-beta}`` in :func:`far_pattern_weight` by ``E[e^{beta(cos - 1)}]`` gives
    ``m E / (1 + m E)``, the weight of the mean total (a first-order approximation of the
    mean weight, accurate when ``m`` is large):

    * ``"bipolar"`` (entries ``+-1/sqrt(n)``): ``E = e^{-beta} cosh(beta/n)^n``;
    * ``"gaussian"`` (normalised Gaussian, uniform on the sphere):
      ``E = e^{-beta} Gamma(n/2) (beta/2)^{1 - n/2} I_{n/2 - 1}(beta)``.

    Parameters
    ----------
    beta : float
        Inverse temperature, finite and ``>= 0``.
    m : int
        Number of far patterns, ``>= 1``.
    n : int
        Dimension, ``n >= 2``.
    patterns : {"bipolar", "gaussian"}
        The distribution of the random patterns.

    Returns
    -------
    float
        The mean-field far weight. At ``n = 64``, ``m = 1024`` (bipolar) it is 0.140 at
        ``beta = 9.436`` and 2.8e-3 at ``beta = 14.41``, about 1.9 and 5 times the orthogonal values
        of :func:`far_pattern_weight` (0.0755 and 5.6e-4): the factor ``cosh(beta/n)^n`` is 2.0 and
        5.0. :func:`far_pattern_weight_mc` agrees to within its standard error.

    Raises
    ------
    ValueError
        If ``beta`` is negative or not finite, ``m < 1``, ``n < 2`` or ``patterns`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), Fig. 3, App. B.2; the von Mises-Fisher normaliser for the sphere.
    """
    b = float(_check_beta(beta))
    m = _check_count(m, "m")
    n = _check_n(n, minimum=2)
    patterns = _check_pattern_kind(patterns)
    return float(special.expit(math.log(m) + _log_mean_exp_cos(b, n, patterns)))


def _check_trials(trials) -> int:
    return _check_count(trials, "trials")


def _random_unit(rng: np.random.Generator, shape: tuple[int, ...], n: int, patterns: str):
    if patterns == "bipolar":
        return (rng.integers(0, 2, size=(*shape, n), dtype=np.int8) * 2 - 1) / math.sqrt(n)
    g = rng.standard_normal((*shape, n))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def _mean_and_stderr(samples: np.ndarray, return_stderr: bool):
    mean = float(samples.mean())
    if not return_stderr:
        return mean
    err = float(samples.std(ddof=1) / math.sqrt(samples.size)) if samples.size > 1 else math.nan
    return mean, err


def far_pattern_weight_mc(beta, m, n: int = 64, trials: int = 200, seed=0, *,
                          patterns: str = "bipolar", return_stderr: bool = False,
                          chunk: int = 64):
    """Monte Carlo far weight: softmax over a target and ``m`` random patterns, query = target.

    Each trial draws a unit target (also the query) and ``m`` random unit patterns, computes
    the softmax weights ``exp(beta cos)`` and records the total weight off the target,
    ``S / (1 + S)`` with ``S = sum_i exp(beta (cos_i - 1))``.

    Parameters
    ----------
    beta : float
        Inverse temperature, finite and ``>= 0``.
    m : int
        Number of far patterns, ``>= 1``.
    n : int, default 64
        Dimension, ``n >= 2``.
    trials : int, default 200
        Number of independent trials, ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        Seed for ``numpy.random.default_rng``.
    patterns : {"bipolar", "gaussian"}
        ``"bipolar"``: entries ``+-1/sqrt(n)`` uniformly; ``"gaussian"``: normalised Gaussian.
    return_stderr : bool, default False
        Also return the standard error of the mean over trials.
    chunk : int, default 64
        Trials drawn at once (memory ``chunk * m * n`` numbers).

    Returns
    -------
    mean : float
        Mean far weight over the trials.
    stderr : float
        Only if ``return_stderr``.

    Raises
    ------
    ValueError
        If ``beta`` is negative or not finite, ``m``, ``trials`` or ``chunk`` is ``< 1``,
        ``n < 2`` or ``patterns`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), Fig. 3, App. B.2 and App. B.7 (random patterns at ``n = 64``).
    """
    b = float(_check_beta(beta))
    m = _check_count(m, "m")
    n = _check_n(n, minimum=2)
    trials = _check_trials(trials)
    chunk = _check_count(chunk, "chunk")
    patterns = _check_pattern_kind(patterns)
    rng = np.random.default_rng(seed)
    out = np.empty(trials)
    done = 0
    while done < trials:
        k = min(chunk, trials - done)
        target = _random_unit(rng, (k,), n, patterns)
        others = _random_unit(rng, (k, m), n, patterns)
        cos = np.matmul(others, target[:, :, None])[:, :, 0]
        log_s = special.logsumexp(b * (cos - 1.0), axis=1)
        out[done:done + k] = special.expit(log_s)
        done += k
    return _mean_and_stderr(out, return_stderr)


def far_pattern_weight_sdm(n, d, m) -> float:
    """SDM far weight (mean field): ``m p / (1 + m p)`` with ``p`` the ball fraction.

    SDM weights a pattern ``dv`` bits from the query by ``I(dv, d, n)``, the target by
    ``I(0) = |B_d|``. Averaged over a random pattern, ``E[I(dv)] = |B_d| p`` exactly, so the mean
    total far weight relative to the target is ``m p``, and this is the weight of that mean total.
    It is not exactly 0: a random pattern lies within ``2 d`` of the query with probability
    ``p(2 d)`` (0.354 at ``n = 64``, ``d = 15``; 0.0084 at ``d = 11``; 1.0e-8 at ``d = 5``), and
    those patterns get small but nonzero weight: with ``m = 1024`` the far weight is 0.0123 at
    ``d = 15``, 5.1e-5 at ``d = 11`` and 4.6e-10 at ``d = 5``.

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
        ``m p / (1 + m p)``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``d`` is outside ``[0, n]`` or ``m < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 and Fig. 3 (SDM gives far patterns weight 0 beyond ``2 d``).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    m = _check_count(m, "m")
    return float(special.expit(math.log(m) + float(_log_ball_fractions(n)[d])))


def far_pattern_weight_sdm_mc(n, d, m, trials: int = 200, seed=0, *,
                              return_stderr: bool = False, chunk: int = 64):
    """Monte Carlo SDM far weight with the exact intersection, query = target.

    Each trial draws a binary query (the target) and ``m`` random binary patterns, takes their
    Hamming distances ``dv_i`` and records ``sum_i I(dv_i) / (I(0) + sum_i I(dv_i))`` with the
    exact circle intersection ``I(., d, n)`` (Eq. 2). The weight is exactly 0.0 in every trial in
    which all far patterns lie beyond ``2 d``.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    m : int
        Number of far patterns, ``>= 1``.
    trials : int, default 200
        Number of trials, ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        Seed for ``numpy.random.default_rng``.
    return_stderr : bool, default False
        Also return the standard error of the mean.
    chunk : int, default 64
        Trials drawn at once.

    Returns
    -------
    mean : float
        Mean far weight.
    stderr : float
        Only if ``return_stderr``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``d`` is outside ``[0, n]``, or ``m``, ``trials`` or ``chunk`` is ``< 1``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1, Eq. 2 and Fig. 3.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    m = _check_count(m, "m")
    trials = _check_trials(trials)
    chunk = _check_count(chunk, "chunk")
    table = circle_intersection_table(n, d)
    # weights relative to the target, exact ratios rounded once
    rel = np.array([float(Fraction(v, table[0])) for v in table])
    rng = np.random.default_rng(seed)
    out = np.empty(trials)
    done = 0
    while done < trials:
        k = min(chunk, trials - done)
        query = rng.integers(0, 2, size=(k, 1, n), dtype=np.int8)
        others = rng.integers(0, 2, size=(k, m, n), dtype=np.int8)
        dist = np.count_nonzero(others != query, axis=2)
        s = rel[dist].sum(axis=1)
        out[done:done + k] = s / (1.0 + s)
        done += k
    return _mean_and_stderr(out, return_stderr)
