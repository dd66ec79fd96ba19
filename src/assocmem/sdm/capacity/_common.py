"""Input validation and exact ball sizes of the SNR model of SDM (private).

The signal-to-noise model of App. B.4 of Bricken & Pehlevan (2021) is evaluated in logs of exact
integers, so that neither ``2^n`` nor ``r = 2^64`` is ever a float. These helpers read its
arguments and hold its exact ingredients, so that one malformed argument raises the same
:class:`ValueError` in every module of :mod:`assocmem.sdm.capacity` and in
:mod:`assocmem.sdm.weights.far_patterns`: ``_check_count`` (an integer count such as ``m``),
``_check_neurons`` (``r >= 1`` as an exact :class:`~fractions.Fraction`) with ``_log_fraction``,
``_check_z`` (a positive z-score), ``_check_mean_overlap`` (how the mean overlap with a random
pattern is computed), and ``_ball_sizes`` / ``_log_ball_fractions`` (the exact ball sizes
``|B_0|, ..., |B_n|`` and ``log p(d)`` for every radius, cached per ``n``). Source: Bricken &
Pehlevan (2021), App. B.4-B.5; Kanerva (1993), §3.6. Chapters 33 and 34 reach them only through
the public functions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
import numpy as np

from assocmem._checks import as_int, as_real
from assocmem.sdm.geometry._common import _check_r


_LOG2 = math.log(2.0)


_MEAN_OVERLAPS = ("random", "orthogonal")


def _check_count(value, name: str, minimum: int = 1) -> int:
    """An integer count ``>= minimum`` (:func:`assocmem._checks.as_int`: ints, numpy integers,
    integral floats, 0-d arrays and tensors; no booleans)."""
    return as_int(value, name, minimum=minimum)


def _check_neurons(r) -> Fraction:
    """``r`` as an exact Fraction, ``>= 1``."""
    fr = _check_r(r)
    if fr < 1:
        raise ValueError(f"r (the number of neurons) must be >= 1, got {r!r}")
    return fr


def _log_fraction(fr: Fraction) -> float:
    return math.log(fr.numerator) - math.log(fr.denominator)


def _check_z(z) -> float:
    zf = as_real(z, "z")  # refuses booleans, strings, NaN and infinities
    if zf <= 0:
        raise ValueError(f"z must be a finite number > 0, got {z!r}")
    return zf


def _check_mean_overlap(mean_overlap) -> str:
    if mean_overlap not in _MEAN_OVERLAPS:
        raise ValueError(f"mean_overlap must be one of {_MEAN_OVERLAPS}, got {mean_overlap!r}")
    return mean_overlap


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
