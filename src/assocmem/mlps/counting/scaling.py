"""How the capacity of a Hebbian memory scales with the width: cross-talk moments, a heuristic, power-law fits.

The margin of fact ``i`` against a rival ``j`` is a signal minus the cross-talk ``z_ij`` of the
other stored facts (seed 001, Sec. 4, eq. 6). For untied random facts on the sphere its second
moment is exact (:func:`kernel_second_moment`, :func:`crosstalk_second_moment`, checked by Monte
Carlo in :func:`crosstalk_second_moment_mc`): about ``2 F / d^2`` for the linear kernel and
``6 F / d^3`` for ``K_2``. An extreme-value argument on the ``F^2`` margins then gives the
heuristic capacity ``F ln F = c d^p`` (:data:`HEURISTIC_CONSTANTS`, :func:`capacity_heuristic`:
``d^2 / 8`` linear, ``d^3 / 24`` for ``K_2``), against which measured capacities are compared by a
least-squares power law (:func:`power_law_fit`). Used by chapter 10 ("Facts, margins and the
counting bound").

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 4 (eq. 6, signal
and cross-talk), App. B.4 (eq. 25).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from assocmem._checks import seed_int
from assocmem.mlps._checks import real_array
from assocmem.mlps.counting.bound import _count
from assocmem.mlps.counting.hebbian_memories import _check_kernel, hebbian_gram
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margins import signal_crosstalk

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Iterable

__all__ = [
    "kernel_second_moment",
    "crosstalk_second_moment",
    "crosstalk_second_moment_mc",
    "HEURISTIC_CONSTANTS",
    "capacity_heuristic",
    "PowerLawFit",
    "power_law_fit",
]


def kernel_second_moment(d: int, kernel: str = "linear") -> float:
    """``mu = E[K(k, k')^2]`` for independent keys uniform on the unit sphere ``S^{d-1}``.

    ``<k, k'>`` is distributed as one coordinate of a uniform unit vector, so
    ``E<k, k'>^2 = 1/d`` and ``E<k, k'>^4 = 3 / (d (d + 2))``.

    Parameters
    ----------
    d : int
        ``d >= 1``.
    kernel : {"linear", "k2"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad ``d`` or kernel.
    """
    d = _count("d", d, 1)
    return 1.0 / d if _check_kernel(kernel) == "linear" else 3.0 / (d * (d + 2))


def crosstalk_second_moment(num_facts: int, d: int, kernel: str = "linear") -> float:
    """Exact ``E[z_ij^2]`` of the cross-talk of eq. 6 for untied random facts.

    For an untied table (keys and values independent and uniform on ``S^{d-1}``, identity map)
    and a pair ``i != j``, the cross-talk ``z_ij = sum_{t != i} K(k_t, k_i) <v_i - v_j, v_t>``
    (competitor ``t = j`` included, as in eq. 6) has

        E[z_ij^2] = mu * (2 (F - 2) / d + 1 + 1/d),    mu = E[K(k, k')^2]

    (:func:`kernel_second_moment`): each of the ``F - 2`` bystanders ``t`` contributes
    ``mu E<u, v_t>^2 = mu |u|^2 / d`` with ``E|u|^2 = E|v_i - v_j|^2 = 2``, the competitor
    contributes ``mu E(1 - <v_i, v_j>)^2 = mu (1 + 1/d)``, and every cross term has a factor
    ``<u, v_t>`` of mean zero.

    Parameters
    ----------
    num_facts : int
        ``F >= 2``.
    d : int
    kernel : {"linear", "k2"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad sizes or kernel.

    References
    ----------
    Seed 001, eq. 6 (signal and cross-talk); App. B.4, eq. 25.
    """
    F = _count("num_facts", num_facts, 2)
    d = _count("d", d, 1)
    return kernel_second_moment(d, kernel) * (2.0 * (F - 2) / d + 1.0 + 1.0 / d)


def crosstalk_second_moment_mc(num_facts: int, d: int, kernel: str = "linear",
                               seeds: Iterable[int] = range(20)) -> tuple[float, float]:
    """Monte Carlo ``E[z_ij^2]`` over all pairs ``i != j`` of untied fact sets, with its standard error.

    Each seed draws ``make_fact_set(F, d, tied=False, seed=s)`` and averages ``z_ij^2`` over the
    ``F (F - 1)`` pairs, with ``z`` from :func:`assocmem.mlps.margins.signal_crosstalk`; the pairs of
    one draw are dependent, so the standard error is taken across seeds.

    Returns
    -------
    (float, float)
        Mean over seeds, and its standard error (``std / sqrt(n_seeds)``).

    Raises
    ------
    ValueError
        Fewer than two seeds, a seed that is not an integer, or bad sizes.
    """
    seeds = [seed_int(s) for s in seeds]
    if len(seeds) < 2:
        raise ValueError("need at least two seeds for a standard error")
    F = _count("num_facts", num_facts, 2)
    per_seed = []
    for s in seeds:
        facts = make_fact_set(F, d, tied=False, seed=s)
        _, z = signal_crosstalk(hebbian_gram(facts.keys, kernel), facts.targets)  # (F, F)
        per_seed.append(float((z**2).sum()) / (F * (F - 1)))  # diagonal of z is zero
    x = torch.tensor(per_seed, dtype=torch.float64)
    return float(x.mean()), float(x.std() / math.sqrt(len(seeds)))


#: The extreme-value heuristic ``F ln F = c d^p`` for the capacity, as ``kernel: (c, p)``.
HEURISTIC_CONSTANTS = {"linear": (1.0 / 8.0, 2), "k2": (1.0 / 24.0, 3)}


def capacity_heuristic(d: ArrayLike, kernel: str = "linear") -> float | np.ndarray:
    """Heuristic capacity: the ``F`` solving ``F ln F = c d^p`` (:data:`HEURISTIC_CONSTANTS`).

    To leading order for ``F >> d`` the cross-talk variance is ``2 mu F / d``
    (:func:`crosstalk_second_moment`: ``2F/d^2`` linear, ``6F/d^3`` for ``K_2``); the smallest of
    about ``F^2`` margins of mean 1 then reaches zero when ``sigma sqrt(2 ln F^2) = 1``, i.e.
    ``4 sigma^2 ln F = 1``: ``F ln F = d^2/8`` (linear) and ``F ln F = d^3/24`` (``K_2``). A
    heuristic (Gaussian tails, independent pairs, ``O(1/d)`` terms dropped), not a bound.

    Parameters
    ----------
    d : float or array-like
        Embedding width(s).
    kernel : {"linear", "k2"}

    Returns
    -------
    float or numpy.ndarray
        ``F`` with ``F ln F = c d^p`` (``F = X / W(X)`` with ``W`` the Lambert function, solved by
        Newton's method on ``u = ln F``).

    Raises
    ------
    ValueError
        An unknown kernel, or a ``d`` that is not a positive finite real number (or an array of
        them; booleans and strings refused).
    """
    c, p = HEURISTIC_CONSTANTS[_check_kernel(kernel)]
    dd = real_array(d, "d")
    if np.any(dd <= 0):
        raise ValueError("d must be positive")
    X = c * dd**p
    u = np.log1p(X)  # start: u e^u = X has its root below log(1 + X)
    for _ in range(60):
        u = u - (u * np.exp(u) - X) / (np.exp(u) * (1.0 + u))
    out = np.exp(u)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class PowerLawFit:
    """Least-squares fit ``log y = log a + p log x`` (see :func:`power_law_fit`)."""

    exponent: float  # p
    exponent_se: float  # its standard error (ordinary least squares, residual variance)
    prefactor: float  # a
    n: int  # number of points


def power_law_fit(x: ArrayLike, y: ArrayLike) -> PowerLawFit:
    """Fit ``y = a x^p`` by ordinary least squares on ``(log x, log y)``.

    Parameters
    ----------
    x, y : array-like of positive numbers, same length ``n >= 3``
        Repeated ``x`` (several seeds per width) are allowed; the standard error of ``p`` is the
        textbook OLS one, ``sqrt(s^2 / sum (log x - mean)^2)`` with ``s^2`` the residual variance
        on ``n - 2`` degrees of freedom.

    Returns
    -------
    PowerLawFit

    Raises
    ------
    ValueError
        Fewer than three points, non-positive or non-finite values, booleans or strings, or a
        single distinct ``x``.
    """
    xa, ya = real_array(x, "x"), real_array(y, "y")
    if xa.shape != ya.shape or xa.ndim != 1 or xa.size < 3:
        raise ValueError("x and y must be 1-D of the same length >= 3")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(ya)) and np.all(xa > 0) and np.all(ya > 0)):
        raise ValueError("x and y must be positive and finite")
    lx, ly = np.log(xa), np.log(ya)
    sxx = float(((lx - lx.mean()) ** 2).sum())
    if sxx == 0:
        raise ValueError("x needs at least two distinct values")
    p = float(((lx - lx.mean()) * (ly - ly.mean())).sum() / sxx)
    a = float(ly.mean() - p * lx.mean())
    resid = ly - (a + p * lx)
    s2 = float((resid**2).sum() / (lx.size - 2))
    return PowerLawFit(exponent=p, exponent_se=math.sqrt(s2 / sxx), prefactor=math.exp(a), n=int(lx.size))
