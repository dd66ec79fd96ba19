"""The signal-to-noise ratio of an SDM read, exactly and by simulating explicit neurons.

App. B.4 of Bricken & Pehlevan (2021) models one bit of an SDM read as a signal (the neurons the
query shares with its target) plus cross-talk from the ``m - 1`` other patterns, treats every
shared-neuron count as an independent Poisson variable, and gets Eq. 25
(:func:`assocmem.sdm.capacity.snr`). The paper checks the formula against simulations (Fig. 16,
``n = 100``, ``r = 10^4`` neurons, ``m = 100`` patterns, ``d = 35``). This module supplies both
sides of that check:

1. :func:`read_snr_terms`: the *exact* mean and variance of the read bit for random neurons and
   random patterns, next to the terms of Eq. 25, so that each approximation of App. B.4 can be
   seen on its own.
2. :func:`simulate_read_snr`: a neuron-level simulation. Each trial draws ``r`` neuron addresses,
   ``m`` pattern addresses and their bipolar contents, writes every pattern into the neurons
   within ``d`` of its address, reads at the target's address (or ``x`` bits from it) and
   measures the read's bits against the target's content. The empirical SNR and its standard
   error are returned for a grid of radii and pattern counts that share the same draws.

The model
---------
Pattern ``mu`` has address ``a_mu`` (uniform in ``{0, 1}^n``) and content ``b_mu in {-1, +1}^n``;
pattern 0 is the target and the query lies ``x`` bits from ``a_0``. A neuron at address ``t``
stores ``sum_mu 1[|t - a_mu| <= d] b_mu``; the read sums the neurons within ``d`` of the query,
so bit ``i`` of the read is ``S_i = sum_mu I_mu b_mu,i`` with ``I_mu`` the number of neurons within
``d`` of both the query and ``a_mu``. Multiplying by the target's bit,

    z_i = S_i b_0,i = I_0 + sum_{mu >= 1} I_mu b_mu,i b_0,i,

and a bit is read correctly when ``z_i > 0``. The SNR is ``E[z] / sqrt(Var z)`` over neurons,
patterns and contents. With independent contents the cross terms vanish in expectation, so,
exactly,

    E[z] = r q(x),           Var z = r q(x) (1 - q(x)) + (m - 1) E[I_mu^2],
    E[I_mu^2] = E_dv[ r q(dv) (1 - q(dv)) + r^2 q(dv)^2 ],   dv ~ Binomial(n, 1/2),

where ``q(dv) = I(dv, d, n) / 2^n`` is the chance that one random neuron lies in both balls.
Eq. 25 replaces the binomial variances by Poisson ones (``r q`` for ``r q (1 - q)``) and the
second moment ``r^2 E[q^2]`` by ``r^2 E[q]^2 = (p^2 r)^2``, i.e. it ignores that patterns close
to the query share many more neurons than the average one. The second replacement is why the
authors call Eq. 25 an upper bound; the first works the other way and wins where cross-talk is
weak (a handful of patterns).

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. App. B.4 (Eq. 25, the SNR; Fig. 16, its check by simulation at ``n = 100``,
  ``r = 10^4``, ``m = 100``, ``d = 35``), App. B.5 (the optimal radii).
- [K93] Kanerva, P. (1993). Sparse distributed memory and related models. §3.6 (the SNR of a
  read).
- [S002] Seed 002 (a critical review of BP21): "Key results", "SNR and capacity"; claims C15
  and C16 (integer neuron counts at biologically sized ``r``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from assocmem._checks import lookup
from assocmem.sdm.geometry._common import _as_int, _check_distance, _check_n
from assocmem.sdm.geometry._common import _check_r as _geometry_check_r
from assocmem.sdm.geometry.balls import ball_size
from assocmem.sdm.geometry.intersection import circle_intersection_table

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, Seed

__all__ = [
    "FIG16",
    "SimulationPreset",
    "PRESETS",
    "get_preset",
    "ReadSNRTerms",
    "read_snr_terms",
    "SNRSimulation",
    "simulate_read_snr",
]

#: The setting of the paper's Fig. 16 (App. B.4): dimension, neurons, patterns, radius.
FIG16: dict[str, int] = {"n": 100, "r": 10**4, "m": 100, "d": 35}

_CONTENTS = ("independent", "autoassociative")


@dataclass(frozen=True)
class SimulationPreset:
    """Sizes of the chapter "Signal, noise and optimal radii"."""

    trials: int  # independent draws of neurons, patterns and contents per grid
    radii: tuple[int, ...]  # radii d for the SNR-versus-d sweep (n = 100, m = 100)
    patterns: tuple[int, ...]  # pattern counts m for the SNR-versus-m sweep (d = 35)
    cd_patterns: tuple[int, ...]  # pattern counts for d*_CD versus m (Fig. 17c), 1 <= m <= 1024


def _geometric_counts(k: int, top: int = 1024) -> tuple[int, ...]:
    return tuple(sorted({int(round(v)) for v in np.geomspace(1, top, k)}))


#: ``"quick"`` runs in the book and CI (about 5 s); ``"full"`` is for papermill
#: (``-p PRESET full``; about 7 minutes on one CPU core: 5 for the simulation, 1 for every
#: ``m`` of Fig. 17c).
PRESETS: dict[str, SimulationPreset] = {
    "quick": SimulationPreset(trials=500, radii=tuple(range(29, 44, 2)),
                              patterns=(1, 10, 30, 100),
                              cd_patterns=_geometric_counts(31)),
    "full": SimulationPreset(trials=4000, radii=tuple(range(27, 48)),
                             patterns=(1, 3, 10, 30, 100, 300),
                             cd_patterns=tuple(range(1, 1025))),
}


def get_preset(name: str) -> SimulationPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)


# ==========================================================================================
# Input checks
# ==========================================================================================


def _check_count(value, name: str, minimum: int = 1) -> int:
    v = _as_int(value, name)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def _check_r(r) -> Fraction:
    # exact, like the geometry's: ints of any size and finite reals; no booleans and no strings
    # (Fraction("100") would parse one)
    fr = _geometry_check_r(r)
    if fr < 1:
        raise ValueError(f"r must be >= 1, got {r!r}")
    return fr


def _grid(values, name: str, check) -> tuple[np.ndarray, bool]:
    scalar = np.ndim(values) == 0
    items = [check(v) for v in np.atleast_1d(np.asarray(values, dtype=object)).ravel()]
    if not items:
        raise ValueError(f"{name} must not be empty")
    return np.array(items, dtype=np.int64), scalar


# ==========================================================================================
# 1. The exact moments of a read bit and the terms of Eq. 25
# ==========================================================================================


@dataclass(frozen=True)
class ReadSNRTerms:
    """Mean and variance of one read bit ``z = S_i b_0,i``: exact, and as Eq. 25 has them.

    Attributes
    ----------
    n, r, m, d, x : int
        The setting (``x`` is the query's distance from its target).
    signal : float
        ``E[z] = E[I_0] = r q(x)``, the expected number of neurons shared with the target.
    signal_var : float
        ``Var I_0 = r q(x) (1 - q(x))`` (binomial: ``r`` independent uniform neurons).
    signal_var_eq25 : float
        Eq. 25's ``E[I_0]`` (Poisson).
    crosstalk : float
        ``E[I_mu^2]``, the exact variance of one other pattern's term ``I_mu b_mu b_0``.
    crosstalk_eq25 : float
        Eq. 25's ``E[I_mu] + E[I_mu]^2`` with ``E[I_mu] = p^2 r``.
    dispersion : float
        ``E[q^2] / E[q]^2 >= 1`` over a random pattern: how much the spread of overlaps raises
        the second moment above Eq. 25's ``(p^2 r)^2``.
    snr : float
        The exact SNR, ``signal / sqrt(signal_var + (m - 1) crosstalk)``.
    snr_eq25 : float
        Eq. 25, ``signal / sqrt(signal_var_eq25 + (m - 1) crosstalk_eq25)``.
    """

    n: int
    r: float
    m: int
    d: int
    x: int
    signal: float
    signal_var: float
    signal_var_eq25: float
    crosstalk: float
    crosstalk_eq25: float
    dispersion: float
    snr: float
    snr_eq25: float


def read_snr_terms(n: int, r: float, m: int, d: int, x: int = 0) -> ReadSNRTerms:
    """Exact moments of one SDM read bit for random neurons and patterns, beside Eq. 25.

    The model is that of :func:`simulate_read_snr` (``r`` uniform neurons, ``m`` uniform pattern
    addresses, independent uniform bipolar contents, query ``x`` bits from the target); see the
    module docstring for the derivation.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``>= 1`` (Python ints of any size, e.g. ``2**64``).
    m : int
        Number of stored patterns, ``>= 1`` (the target and ``m - 1`` others).
    d : int
        Read and write radius, ``0 <= d <= n``.
    x : int, default 0
        Distance from the query to the target, ``0 <= x <= n``.

    Returns
    -------
    ReadSNRTerms
        The exact and Eq. 25 terms and both SNRs (floats).

    Raises
    ------
    ValueError
        If ``n < 1``, ``r`` is not a finite number ``>= 1`` (booleans and strings are refused),
        ``m < 1``, or ``d`` or ``x`` is outside ``[0, n]``.

    Notes
    -----
    ``q(dv) = I(dv, d, n) / 2^n`` is computed from the exact integer intersection and rounded
    once, so ``n`` up to a few thousand and ``r = 2^64`` are fine. At ``x = 0`` and the
    Fig. 16 setting (``n = 100``, ``r = 10^4``, ``m = 100``, ``d = 35``) the two SNRs are 3.851
    (exact) and 3.862 (Eq. 25).

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4, Eq. 25; Kanerva (1993), §3.6.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    x = _check_distance(x, n, "x")
    m = _check_count(m, "m")
    fr = _check_r(r)
    rf = float(fr)
    scale = 1 << n
    table = circle_intersection_table(n, d)  # exact ints, I(0..n)
    q = np.array([float(Fraction(v, scale)) for v in table])  # (n + 1,)
    pmf = stats.binom.pmf(np.arange(n + 1), n, 0.5)  # (n + 1,) distance of a random pattern
    qx = q[x]
    p = float(Fraction(ball_size(d, n), scale))
    mean_q = float(pmf @ q)  # = p^2 up to rounding
    mean_q2 = float(pmf @ (q * q))
    signal = rf * qx
    signal_var = rf * qx * (1.0 - qx)
    crosstalk = rf * (mean_q - mean_q2) + rf * rf * mean_q2
    mu = p * p * rf
    crosstalk_eq25 = mu + mu * mu
    dispersion = mean_q2 / mean_q ** 2 if mean_q > 0 else math.nan

    def ratio(s, v):
        return s / math.sqrt(v) if v > 0 else (math.inf if s > 0 else 0.0)

    return ReadSNRTerms(
        n=n, r=rf, m=m, d=d, x=x, signal=float(signal), signal_var=float(signal_var),
        signal_var_eq25=float(signal), crosstalk=float(crosstalk),
        crosstalk_eq25=float(crosstalk_eq25), dispersion=float(dispersion),
        snr=float(ratio(signal, signal_var + (m - 1) * crosstalk)),
        snr_eq25=float(ratio(signal, signal + (m - 1) * crosstalk_eq25)),
    )


# ==========================================================================================
# 2. Simulation with explicit neurons
# ==========================================================================================


@dataclass(frozen=True)
class SNRSimulation:
    """Result of :func:`simulate_read_snr`; arrays are indexed ``[radius, pattern count]``.

    Attributes
    ----------
    n, r, x : int
        Dimension, neurons and query noise.
    d : numpy.ndarray
        Radii, shape ``(D,)``, int64.
    m : numpy.ndarray
        Pattern counts, shape ``(M,)``, int64 (patterns ``0..m-1`` of each trial's draw).
    trials : int
        Independent trials.
    contents : str
        ``"independent"`` or ``"autoassociative"``.
    snr : numpy.ndarray
        Empirical SNR ``mean(z) / std(z)`` over every bit of every trial, shape ``(D, M)``.
        Where ``z`` has no spread at all it is ``inf`` (``mean(z) > 0``) or ``0.0`` (no neuron
        was read, e.g. ``d = 0``), the convention of :func:`read_snr_terms`; never NaN.
    stderr : numpy.ndarray
        Its standard error (delta method on per-trial averages, which are i.i.d.; the bits of
        one trial share their neurons and are not independent), shape ``(D, M)``.
    mean_signal : numpy.ndarray
        Mean number of neurons shared with the target, ``mean(I_0)``, shape ``(D,)``.
    zero_weight_fraction : numpy.ndarray
        Fraction of the non-target patterns (all ``max(m) - 1`` of each trial) that share no
        neuron with the query, shape ``(D,)`` (``nan`` if ``max(m) = 1``).
    """

    n: int
    r: int
    x: int
    d: np.ndarray
    m: np.ndarray
    trials: int
    contents: str
    snr: np.ndarray
    stderr: np.ndarray
    mean_signal: np.ndarray
    zero_weight_fraction: np.ndarray


_MASK64 = np.uint64(2**64 - 1)


def _random_words(rng: np.random.Generator, shape: tuple[int, ...], n: int) -> np.ndarray:
    """Uniform binary addresses of length ``n`` packed into ``ceil(n/64)`` uint64 words."""
    words = (n + 63) // 64
    out = rng.integers(0, 2**64 - 1, size=(*shape, words), dtype=np.uint64, endpoint=True)
    if n % 64:
        out[..., -1] &= np.uint64((1 << (n % 64)) - 1)
    return out


def _unpack(words: np.ndarray, n: int) -> np.ndarray:
    """Bits of packed addresses, shape ``(..., n)``, int8.

    Bit ``j`` of an address is bit ``j % 64`` of word ``j // 64``.
    """
    shifts = np.arange(64, dtype=np.uint64)
    bits = (words[..., :, None] >> shifts) & np.uint64(1)  # (..., words, 64)
    return bits.reshape(*words.shape[:-1], -1)[..., :n].astype(np.int8)


def _pack(bits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_unpack` for a single address, ``(n,)`` 0/1 -> ``(words,)`` uint64."""
    n = bits.shape[-1]
    words = (n + 63) // 64
    padded = np.zeros(words * 64, dtype=np.uint64)
    padded[:n] = bits.astype(np.uint64)
    return (padded.reshape(words, 64) << np.arange(64, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)


def _hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.bitwise_count(a ^ b).sum(axis=-1, dtype=np.int64)


def _shared_counts(neurons: np.ndarray, query: np.ndarray, patterns: np.ndarray, n: int,
                   radii: np.ndarray) -> np.ndarray:
    """``I_mu(d)``: neurons within ``d`` of both the query and pattern ``mu``, shape ``(m, D)``.

    A neuron is shared at radius ``d`` exactly when ``max(|t - xi|, |t - a_mu|) <= d``, so one
    histogram of that maximum per pattern, cumulated over ``d``, gives every radius at once.
    """
    dq = _hamming(neurons, query[None, :])  # (r,)
    near = dq <= radii.max()
    dp = _hamming(neurons[near][:, None, :], patterns[None, :, :])  # (K, m)
    t = np.maximum(dq[near][:, None], dp)  # (K, m): smallest radius at which the neuron is shared
    m = patterns.shape[0]
    flat = (np.arange(m, dtype=np.int64)[None, :] * (n + 1) + t).ravel()
    hist = np.bincount(flat, minlength=m * (n + 1)).reshape(m, n + 1)
    return np.cumsum(hist, axis=1)[:, radii]  # (m, D)


def simulate_read_snr(n: int, r: int, m: ArrayLike, d: ArrayLike, x: int = 0, trials: int = 400,
                      seed: Seed = 0, *,
                      contents: str = "independent") -> SNRSimulation:
    """Empirical SNR of one bit of an SDM read, with explicit random neurons and patterns.

    Each trial draws ``r`` neuron addresses and ``max(m)`` pattern addresses uniformly from
    ``{0, 1}^n`` and bipolar contents for the patterns; pattern 0 is the target, and the query is
    its address with ``x`` uniformly chosen bits flipped. For every radius ``d`` and every
    pattern count ``m`` (the first ``m`` patterns of the draw are stored) the read's bits
    ``S_i = sum_mu I_mu b_mu,i`` are multiplied by the target's bits, ``z_i = S_i b_0,i``, and
    the SNR is ``mean(z) / std(z)`` over all ``n`` bits of all trials. All radii and pattern
    counts share the same draws (common random numbers), so differences between grid points are
    less noisy than the points themselves.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    r : int
        Number of neurons, ``>= 1``.
    m : int or array_like of int
        Number(s) of stored patterns, each ``>= 1``.
    d : int or array_like of int
        Read and write radius (radii), each in ``[0, n]``.
    x : int, default 0
        Query noise in bits, ``0 <= x <= n``.
    trials : int, default 400
        Independent trials, ``>= 2``.
    seed : int or numpy.random.Generator, default 0
        Seed for :func:`numpy.random.default_rng`.
    contents : {"independent", "autoassociative"}
        ``"independent"`` (default, the model of Eq. 25): contents uniform in ``{-1, +1}^n``,
        independent of the addresses. ``"autoassociative"``: each pattern's content is its own
        address in bipolar form, as in the paper's convergence experiments; the cross-talk then
        has a positive mean, because patterns close to the target share more neurons with the
        query and agree with the target on more bits.

    Returns
    -------
    SNRSimulation
        ``snr`` and ``stderr`` of shape ``(len(d), len(m))`` (scalars give length-1 axes), the
        mean target count and the fraction of zero cross-talk weights per radius.

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, an ``m < 1``, a ``d`` or ``x`` is outside ``[0, n]``,
        ``trials < 2`` or ``contents`` is unknown.

    Notes
    -----
    The per-trial averages ``A_t = mean_i z_i`` and ``B_t = mean_i z_i^2`` are i.i.d. across
    trials; the SNR is ``g(mean A, mean B) = mean A / sqrt(mean B - (mean A)^2)`` and its standard
    error is ``sqrt(grad g^T Cov(A, B) grad g / T)``. The bits of one trial are correlated (they
    share ``I_0`` and the ``I_mu``), so treating them as independent would understate the error.
    Cost per trial: ``O(r n / 64)`` for the query distances and ``O(K max(m) n / 64)`` for the
    ``K`` neurons within ``max(d)`` of the query.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.4 (Eq. 25 and Fig. 16, ``n = 100``, ``r = 10^4``,
    ``m = 100``, ``d = 35``); Kanerva (1988), Ch. 7.
    """
    n = _check_n(n)
    r = _check_count(r, "r")
    x = _check_distance(x, n, "x")
    trials = _check_count(trials, "trials", minimum=2)
    if contents not in _CONTENTS:
        raise ValueError(f"contents must be one of {_CONTENTS}, got {contents!r}")
    radii, _ = _grid(d, "d", lambda v: _check_distance(v, n, "d"))
    counts, _ = _grid(m, "m", lambda v: _check_count(v, "m"))
    m_max = int(counts.max())
    rng = np.random.default_rng(seed)
    # block boundaries: the cumulative read over patterns 0..m-1 for each requested m
    bounds = np.concatenate([[0], np.unique(counts)])
    pos = {int(v): i for i, v in enumerate(np.unique(counts))}
    A = np.empty((trials, radii.size, counts.size))
    B = np.empty_like(A)
    signal = np.empty((trials, radii.size))
    zeros = np.zeros(radii.size)
    for t in range(trials):
        neurons = _random_words(rng, (r,), n)  # (r, words)
        patterns = _random_words(rng, (m_max,), n)  # (m_max, words)
        if contents == "independent":
            signs = rng.integers(0, 2, size=(m_max, n), dtype=np.int8) * 2 - 1  # (m_max, n)
        else:
            signs = _unpack(patterns, n) * 2 - 1
        query = patterns[0].copy()
        if x:
            flip = np.zeros(n, dtype=np.int8)
            flip[rng.choice(n, size=x, replace=False)] = 1
            query ^= _pack(flip)
        shared = _shared_counts(neurons, query, patterns, n, radii)  # (m_max, D)
        signal[t] = shared[0]
        if m_max > 1:
            zeros += np.count_nonzero(shared[1:] == 0, axis=0)
        agree = (signs * signs[0]).astype(np.float64)  # (m_max, n): b_mu,i b_0,i
        # z for each block of patterns, then cumulated: exact in float64 (integers < 2^53)
        blocks = np.stack([shared[lo:hi].T.astype(np.float64) @ agree[lo:hi]
                           for lo, hi in zip(bounds[:-1], bounds[1:])])  # (blocks, D, n)
        z = np.cumsum(blocks, axis=0)  # (blocks, D, n)
        z = z[[pos[int(v)] for v in counts]]  # (M, D, n)
        A[t] = z.mean(axis=-1).T
        B[t] = (z * z).mean(axis=-1).T
    a, b = A.mean(axis=0), B.mean(axis=0)
    var = np.maximum(b - a * a, 0.0)  # >= 0 also where rounding leaves a tiny negative
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(var)
        snr = a / sd
        ga = 1.0 / sd + a * a / sd ** 3  # d snr / d a
        gb = -0.5 * a / sd ** 3  # d snr / d b
        ca = A.var(axis=0, ddof=1)
        cb = B.var(axis=0, ddof=1)
        cab = ((A - a) * (B - b)).sum(axis=0) / (trials - 1)
        stderr = np.sqrt((ga * ga * ca + 2 * ga * gb * cab + gb * gb * cb) / trials)
    # z identical on every bit of every trial (no neuron read at d = 0, or every neuron read
    # with one pattern): no noise. The convention of read_snr_terms, not 0/0 = NaN.
    flat = var == 0
    snr = np.where(flat, np.where(a > 0, np.inf, 0.0), snr)
    stderr = np.where(flat, 0.0, stderr)
    frac = zeros / (trials * (m_max - 1)) if m_max > 1 else np.full(radii.size, math.nan)
    return SNRSimulation(n=n, r=r, x=x, d=radii, m=counts, trials=trials, contents=contents,
                         snr=snr, stderr=stderr, mean_signal=signal.mean(axis=0),
                         zero_weight_fraction=frac)
