"""Input validation and exact binomials of the SDM geometry (private).

Every Hamming argument of :mod:`assocmem.sdm.geometry`, and of the modules built on it
(:mod:`~assocmem.sdm.capacity`, :mod:`~assocmem.sdm.weights`, :mod:`~assocmem.sdm.simulation`,
:mod:`~assocmem.sdm.convergence`), is read through these helpers, so that one malformed argument
raises the same :class:`ValueError` wherever it enters: ``_check_n`` (the dimension),
``_check_distance`` (an integer in ``[0, n]``), ``_check_dnd`` (distance, radius and dimension
together), ``_check_real_radius`` (a real radius for the continuous forms, read by
:func:`assocmem._checks.as_real`: no booleans, strings, NaN or infinities) and ``_check_r`` (a
positive number of neurons as an exact :class:`~fractions.Fraction`); integers are read by
:func:`assocmem._checks.as_int` (Python and numpy integers, integral floats, 0-d arrays and
tensors). ``_binom`` (with ``C(m, k) = 0`` outside ``0 <= k <= m``) and ``_binomial_row`` give exact
binomial coefficients for the counts of Eq. 2. Conventions of Bricken & Pehlevan (2021), Eq. 2,
and Kanerva (1988), App. B; chapters 30-36 reach these helpers only through the public functions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real as _as_real


_LOG2 = math.log(2.0)


# ==========================================================================================
# Input validation
# ==========================================================================================


def _check_n(n, minimum: int = 1) -> int:
    n = _as_int(n, "n")
    if n < minimum:
        raise ValueError(f"n must be >= {minimum}, got {n}")
    return n


def _check_distance(value, n: int, name: str) -> int:
    v = _as_int(value, name)
    if v < 0 or v > n:
        raise ValueError(f"{name} must lie in [0, n] = [0, {n}], got {v}")
    return v


def _check_dnd(dv, d, n) -> tuple[int, int, int]:
    n = _check_n(n)
    return _check_distance(dv, n, "dv"), _check_distance(d, n, "d"), n


def _check_real_radius(d, n: int) -> float:
    f = _as_real(d, "d")  # refuses booleans, strings, NaN and infinities
    if f < 0 or f > n:
        raise ValueError(f"d must lie in [0, n] = [0, {n}], got {d!r}")
    return f


def _check_r(r) -> Fraction:
    if isinstance(r, (bool, np.bool_)):
        raise ValueError(f"r must be a positive number of neurons, got {r!r}")
    if isinstance(r, np.generic) or (getattr(r, "ndim", None) == 0 and callable(getattr(r, "item", None))):
        r = r.item()  # numpy scalars, 0-d arrays and 0-d tensors
        if isinstance(r, bool):
            raise ValueError(f"r must be a positive number of neurons, got {r!r}")
    if isinstance(r, Integral):
        fr = Fraction(int(r))
    elif isinstance(r, Real) and math.isfinite(float(r)):
        fr = Fraction(float(r))
    else:
        raise ValueError(f"r must be a finite positive number of neurons, got {r!r}")
    if fr <= 0:
        raise ValueError(f"r must be positive, got {r!r}")
    return fr


# ==========================================================================================
# Binomial helpers (exact integers)
# ==========================================================================================


def _binom(m: int, k: int) -> int:
    """``C(m, k)`` with the convention ``C(m, k) = 0`` outside ``0 <= k <= m``."""
    if k < 0 or m < 0 or k > m:
        return 0
    return math.comb(m, k)


def _binomial_row(m: int, kmax: int | None = None) -> list[int]:
    """``[C(m, 0), ..., C(m, kmax)]`` (``kmax`` defaults to ``m``) by the multiplicative rule."""
    kmax = m if kmax is None else min(kmax, m)
    row = [1] * (kmax + 1)
    c = 1
    for k in range(kmax):
        c = c * (m - k) // (k + 1)
        row[k + 1] = c
    return row
