"""The signal-to-noise ratio of an SDM read (Eq. 25) and the memory capacity it allows (Eqs. 26-27).

Reading at a query ``x`` bits from its target, each bit of the read is the sum over stored patterns
of the neurons shared with each pattern times its bit. With the counts Poisson and independent
(App. B.4), the signal is ``E[I*] = I(x, d, n) r / 2^n`` and each of the ``m - 1`` other patterns
adds noise of variance ``E[I_mu] + E[I_mu]^2``, so ``SNR = E[I*] / sqrt(E[I*] + (m - 1)(E[I_mu] +
E[I_mu]^2))`` (:func:`snr`, with the mean overlap of :func:`mean_random_overlap`). Solving for
``m`` at a required z-score gives the capacity (:func:`capacity`, exported as
:data:`memory_capacity`), and :func:`retrieval_z` turns a retrieval probability per bit or per
pattern into that z-score. Everything is computed in logs of exact integers, so the canonical
(``n = 1000``, ``r = 10^6``) and Attention (``n = 64``, ``r = 2^64``) settings need neither ``2^n``
nor ``r`` as a float. Source: Bricken & Pehlevan (2021), App. B.4 (Eqs. 25-27, Fig. 16);
Kanerva (1993), §3.6. Chapter 33.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from assocmem._checks import as_real
from assocmem.sdm.capacity._common import (
    _LOG2,
    _check_count,
    _check_mean_overlap,
    _check_neurons,
    _check_z,
    _log_ball_fractions,
    _log_fraction,
)
from assocmem.sdm.geometry._common import _check_distance, _check_n
from assocmem.sdm.geometry.intersection import circle_intersection_table

__all__ = [
    "mean_random_overlap",
    "snr",
    "memory_capacity",
    "retrieval_z",
]


_LOG_FLOAT_MAX = math.log(np.finfo(float).max)


def _check_probability(value, name: str) -> float:
    f = as_real(value, name)  # refuses booleans, strings, NaN and infinities
    if not (0.0 < f < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return f


# ==========================================================================================
# The terms of Eq. 25, in logs
# ==========================================================================================


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
# Eqs. 25-27: signal-to-noise ratio and memory capacity
# ==========================================================================================


def mean_random_overlap(n: int, r: float, d: int, *, mean_overlap: str = "random") -> float:
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


def snr(n: int, r: float, m: int, d: int, x: int = 0, *, mean_overlap: str = "random") -> float:
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


def capacity(n: int, r: float, d: int, z: float, x: int = 0, *,
             mean_overlap: str = "random") -> float:
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
        If ``n < 1``, ``r < 1``, ``d`` or ``x`` is outside ``[0, n]``, ``z`` is not a finite
        real number ``> 0`` (booleans and strings are refused), or ``mean_overlap`` is unknown.

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


def retrieval_z(probability: float, n: int | None = None) -> float:
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
        If ``probability`` is not a real number in ``(0, 1)`` (booleans and strings are
        refused) or ``n < 1``.

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
