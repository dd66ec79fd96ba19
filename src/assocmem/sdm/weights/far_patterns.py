"""The weight softmax and SDM give far patterns when the query equals its target.

How much of a normalised read goes to ``m`` far (random) patterns when the query is its target
decides whether a fitted softmax can stand in for SDM (the paper's Fig. 3). For softmax with
unit vectors: the closed form for exactly orthogonal patterns, ``m e^{-beta(1 - cos)} / (1 +
m e^{-beta(1 - cos)})`` (:func:`far_pattern_weight`), its mean-field version for random bipolar or
Gaussian patterns, which are only approximately orthogonal (:func:`far_pattern_weight_meanfield`),
and a Monte Carlo over explicit vectors (:func:`far_pattern_weight_mc`); for binary SDM: the
mean-field weight ``m p / (1 + m p)`` with ``p`` the ball fraction (:func:`far_pattern_weight_sdm`)
and a Monte Carlo with the exact intersection, which is exactly zero whenever every far pattern
lies beyond ``2 d`` (:func:`far_pattern_weight_sdm_mc`). The exact expectations these
approximate are in :mod:`assocmem.sdm.weights.relative_weights`. Source: Bricken & Pehlevan
(2021), Eq. 1, Eq. 2, Fig. 3, App. B.2 and App. B.7 (random patterns at ``n = 64``); seed 002,
"Weight on far patterns". Chapter 34.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from assocmem._checks import as_real
from assocmem.sdm._common import _log_bessel_ive, _real_array
from assocmem.sdm.capacity._common import _LOG2, _check_count, _log_ball_fractions
from assocmem.sdm.geometry._common import _check_distance, _check_n
from assocmem.sdm.geometry.intersection import circle_intersection_table

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, Seed

__all__ = [
    "far_pattern_weight",
    "far_pattern_weight_meanfield",
    "far_pattern_weight_mc",
    "far_pattern_weight_sdm",
    "far_pattern_weight_sdm_mc",
]


_PATTERN_KINDS = ("bipolar", "gaussian")


def _check_beta(beta) -> np.ndarray:
    arr = _real_array(beta, "beta")  # refuses booleans, strings, NaN and infinities
    if arr.size and np.any(arr < 0):
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    return arr


def _check_scalar_beta(beta) -> float:
    b = as_real(beta, "beta")
    if b < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    return b


def _check_pattern_kind(patterns) -> str:
    if patterns not in _PATTERN_KINDS:
        raise ValueError(f"patterns must be one of {_PATTERN_KINDS}, got {patterns!r}")
    return patterns


def far_pattern_weight(beta: ArrayLike, m: int, cos: ArrayLike = 0.0) -> float | np.ndarray:
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
        If ``beta`` is negative, not finite, a boolean or a string, ``m < 1``, or ``cos`` is
        outside ``[-1, 1]`` or not a finite real number.

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
    c = _real_array(cos, "cos")
    if c.size and np.any(np.abs(c) > 1.0):
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    with np.errstate(over="ignore"):  # beta (1 - cos) = inf (beta > 9e307) gives weight 0
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
            + float(_log_bessel_ive(nu, beta)))


def far_pattern_weight_meanfield(beta: float, m: int, n: int, *,
                                 patterns: str = "bipolar") -> float:
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
        If ``beta`` is negative or not a finite real number (booleans and strings are
        refused), ``m < 1``, ``n < 2`` or ``patterns`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), Fig. 3, App. B.2; the von Mises-Fisher normaliser for the sphere.
    """
    b = _check_scalar_beta(beta)
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


def far_pattern_weight_mc(beta: float, m: int, n: int = 64, trials: int = 200, seed: Seed = 0, *,
                          patterns: str = "bipolar", return_stderr: bool = False,
                          chunk: int = 64) -> float | tuple[float, float]:
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
        If ``beta`` is negative or not a finite real number (booleans and strings are
        refused), ``m``, ``trials`` or ``chunk`` is ``< 1``, ``n < 2`` or ``patterns`` is unknown.

    References
    ----------
    Bricken & Pehlevan (2021), Fig. 3, App. B.2 and App. B.7 (random patterns at ``n = 64``).
    """
    b = _check_scalar_beta(beta)
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


def far_pattern_weight_sdm(n: int, d: int, m: int) -> float:
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


def far_pattern_weight_sdm_mc(n: int, d: int, m: int, trials: int = 200, seed: Seed = 0, *,
                              return_stderr: bool = False, chunk: int = 64) -> float | tuple[float,
                              float]:
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
