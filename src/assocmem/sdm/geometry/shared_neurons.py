"""Neurons shared by a query and a pattern when ``r`` neuron addresses are drawn at random.

With ``r`` neurons at uniformly random addresses of ``{0, 1}^n`` instead of one at every address,
the number of neurons within ``d`` of both a query and a pattern ``dv`` bits away is
``Binomial(r, I(dv, d, n) / 2^n)``. :func:`expected_neurons` gives its mean ``I r / 2^n`` as an
exact rational rounded once (``r = 2^64`` and ``n = 1000`` neither overflow nor lose precision),
:func:`log_expected_neurons` its logarithm, and :func:`simulate_shared_neurons` draws the counts
with explicit neurons (addresses packed into 64-bit words, distances by XOR popcount), the
experiment of the paper's Fig. 11. Source: Bricken & Pehlevan (2021), §1, App. B.1 (Fig. 11) and
App. B.4-B.5; Kanerva (1988), Ch. 7. Chapters 30, 31 and 33.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from assocmem.sdm.geometry._common import _LOG2, _as_int, _check_distance, _check_n, _check_r
from assocmem.sdm.geometry.intersection import circle_intersection

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, Seed

__all__ = [
    "expected_neurons",
    "log_expected_neurons",
    "simulate_shared_neurons",
]


def expected_neurons(dv: int, d: int, n: int, r: float) -> float:
    """Expected number of neurons in the intersection, ``I(dv, d, n) r / 2^n``.

    With ``r`` neuron addresses drawn uniformly from ``{0, 1}^n`` the count is binomial with
    this mean. Computed exactly as a rational number and rounded once, so ``r = 2^64`` and
    ``n = 1000`` neither overflow nor lose precision.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``> 0`` (Python ints of any size, e.g. ``2**64``, or floats such as
        ``1e6``).

    Returns
    -------
    float
        The expected count (``0.0`` where ``I = 0``; values below ~1e-308 underflow, see
        :func:`log_expected_neurons`).

    Raises
    ------
    ValueError
        As :func:`circle_intersection`, or if ``r`` is not a finite positive number.

    References
    ----------
    Bricken & Pehlevan (2021), §1 and App. B.4-B.5; Kanerva (1988), Ch. 7.
    """
    fr = _check_r(r)
    value = circle_intersection(dv, d, n)
    return float(Fraction(value) * fr / (1 << int(n)))


def log_expected_neurons(dv: int, d: int, n: int, r: float) -> float:
    """Natural log of :func:`expected_neurons` (``-inf`` where ``I = 0``).

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int or float
        Number of neurons, ``> 0``.

    Returns
    -------
    float
        ``log I + log r - n log 2``.

    Raises
    ------
    ValueError
        As :func:`expected_neurons`.

    References
    ----------
    Bricken & Pehlevan (2021), §1 and App. B.4-B.5.
    """
    fr = _check_r(r)
    value = circle_intersection(dv, d, n)
    if value == 0:
        return -math.inf
    return math.log(value) + math.log(fr.numerator) - math.log(fr.denominator) - int(n) * _LOG2


_SIM_CHUNK_WORDS = 1 << 22  # uint64 words of neuron addresses drawn per chunk (32 MiB)


def simulate_shared_neurons(dv: ArrayLike, d: int, n: int, r: int, trials: int,
                            seed: Seed = 0) -> np.ndarray:
    """Count, by simulation, the neurons within Hamming distance ``d`` of a pattern and a query.

    Each trial draws ``r`` neuron addresses uniformly from ``{0, 1}^n``, a uniform query, and a
    pattern at exactly distance ``dv`` from it (the query with ``dv`` positions flipped, chosen
    uniformly), and counts the neurons within ``d`` of both. The addresses are packed into
    64-bit words and distances are XOR popcounts; only the neurons within ``d`` of the query are
    unpacked. For several ``dv`` the patterns of one trial are nested (the first ``dv`` positions
    of one random order are flipped), so the counts of one trial share their neurons and are
    correlated across ``dv``; across trials each column is i.i.d.
    ``Binomial(r, I(dv, d, n) / 2^n)``, whose mean is :func:`expected_neurons`.

    Parameters
    ----------
    dv : int or array_like of int
        Distance(s) between pattern and query, each in ``[0, n]``.
    d : int
        Read and write radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int
        Number of neurons per trial, ``>= 1``.
    trials : int
        Number of independent (neurons, query, pattern) draws, ``>= 1``.
    seed : int or numpy.random.Generator, default 0
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        int64 counts, shape ``(trials,)`` for a scalar ``dv`` or ``(trials, len(dv))``.

    Raises
    ------
    ValueError
        If ``n``, ``d`` or a ``dv`` is out of range or not an integer, or ``r`` or ``trials``
        is below 1.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.1 and Fig. 11 (``n = 100``, ``r = 10^4``, ``d = 35``);
    Kanerva (1988), Ch. 7.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    scalar = np.ndim(dv) == 0
    dvs = np.array([_check_distance(v, n, "dv") for v in np.atleast_1d(np.asarray(dv, dtype=object)).ravel()],
                   dtype=np.int64)
    r = _as_int(r, "r")
    trials = _as_int(trials, "trials")
    if r < 1:
        raise ValueError(f"r must be >= 1, got {r}")
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    rng = np.random.default_rng(seed)
    words = (n + 63) // 64
    last_mask = np.uint64((1 << (n - 64 * (words - 1))) - 1) if n % 64 else np.uint64(2**64 - 1)
    shifts = np.arange(64, dtype=np.uint64)
    counts = np.zeros((trials, dvs.size), dtype=np.int64)
    chunk = max(1, _SIM_CHUNK_WORDS // (r * words))
    for start in range(0, trials, chunk):
        b = min(chunk, trials - start)
        neurons = rng.integers(0, 2**64 - 1, size=(b, r, words), dtype=np.uint64, endpoint=True)
        query = rng.integers(0, 2**64 - 1, size=(b, 1, words), dtype=np.uint64, endpoint=True)
        neurons[..., -1] &= last_mask
        query[..., -1] &= last_mask
        order = np.argsort(rng.random((b, n)), axis=1)  # flip order of the positions, per trial
        diff = neurons ^ query  # (b, r, words): where each neuron disagrees with the query
        to_query = np.bitwise_count(diff).sum(axis=-1, dtype=np.int64)  # (b, r)
        t_idx, r_idx = np.nonzero(to_query <= d)  # neurons read by the query: (K,), (K,)
        if t_idx.size == 0:
            continue
        bits = ((diff[t_idx, r_idx][:, :, None] >> shifts) & np.uint64(1))  # (K, words, 64)
        bits = bits.reshape(t_idx.size, 64 * words)[:, :n].astype(np.int64)  # (K, n)
        flipped = np.take_along_axis(bits, order[t_idx], axis=1)  # (K, n) in flip order
        # flipping a position where the neuron agrees with the query moves it one bit further
        steps = np.cumsum(1 - 2 * flipped, axis=1)  # (K, n)
        to_pattern = to_query[t_idx, r_idx][:, None] + np.concatenate(
            [np.zeros((t_idx.size, 1), dtype=np.int64), steps], axis=1)  # (K, n + 1)
        shared = to_pattern[:, dvs] <= d  # (K, len(dvs))
        np.add.at(counts, start + t_idx, shared.astype(np.int64))
    return counts[:, 0] if scalar else counts
