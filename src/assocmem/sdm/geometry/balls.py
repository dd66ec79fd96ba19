"""Hamming balls: the binary addresses within Hamming distance ``d`` of a point of ``{0, 1}^n``.

A neuron of Kanerva's sparse distributed memory is written or read when its address lies in the
Hamming ball of radius ``d`` around the pattern or the query. The ball holds
``|B_d| = sum_{i <= d} C(n, i)`` addresses, a fraction ``p = |B_d| / 2^n`` of the space; ``p`` is
the radius parameter of the paper's signal-to-noise analysis and ``|B_d| = I(0, d, n)`` is the
weight of a pattern at the query. :func:`ball_size` counts it exactly (a Python integer:
``2^1000`` fits in no float), :func:`ball_fraction` and :func:`log_ball_fraction` give ``p`` and
``log p``. Source: Kanerva (1988), Ch. 1 and App. B; Bricken & Pehlevan (2021), §1 and App. B.5
(``p`` as the radius parameter). Chapters 34 and 36 use it directly, the other modules of
:mod:`assocmem.sdm` through the circle intersection.
"""

from __future__ import annotations

import math

from assocmem.sdm.geometry._common import _LOG2, _binomial_row, _check_distance, _check_n

__all__ = [
    "ball_size",
    "ball_fraction",
    "log_ball_fraction",
]


def ball_size(d: int, n: int) -> int:
    """Number of binary addresses within Hamming distance ``d`` of a point of ``{0, 1}^n``.

    Parameters
    ----------
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    int
        ``sum_{i <= d} C(n, i)``, exact. Equals ``I(0, d, n)``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``d`` is outside ``[0, n]`` or not an integer.

    References
    ----------
    Kanerva (1988), Ch. 1 and App. B; Bricken & Pehlevan (2021), §1 (the fraction ``p``).
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    if 2 * d >= n:  # sum the shorter tail
        return (1 << n) - sum(_binomial_row(n, n - d - 1)) if d < n else 1 << n
    return sum(_binomial_row(n, d))


def ball_fraction(d: int, n: int) -> float:
    """Fraction ``p`` of ``{0, 1}^n`` inside a Hamming ball of radius ``d``.

    Parameters
    ----------
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    float
        ``ball_size(d, n) / 2^n``, correctly rounded (exact integer division, so no overflow
        for ``n >= 1024``; values below the smallest float underflow to ``0.0``; use
        :func:`log_ball_fraction` there).

    Raises
    ------
    ValueError
        As :func:`ball_size`.

    References
    ----------
    Bricken & Pehlevan (2021), §1 and App. B.5 (``p`` as the radius parameter); Kanerva (1988).
    """
    n = _check_n(n)
    return ball_size(d, n) / (1 << n)


def log_ball_fraction(d: int, n: int) -> float:
    """Natural log of :func:`ball_fraction`, finite for every ``0 <= d <= n``.

    Parameters
    ----------
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    float
        ``log(ball_size(d, n)) - n log 2``.

    Raises
    ------
    ValueError
        As :func:`ball_size`.

    References
    ----------
    Kanerva (1988); Bricken & Pehlevan (2021), §1.
    """
    n = _check_n(n)
    return math.log(ball_size(d, n)) - n * _LOG2
