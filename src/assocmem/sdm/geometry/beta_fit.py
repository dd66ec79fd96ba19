"""The exponential approximation of the circle intersection: the softmax beta, fitted and derived.

Bricken & Pehlevan (2021) approximate ``I(dv, d, n)`` by ``exp(beta x)`` in the cosine
``x = 1 - 2 dv / n`` of the bipolar images, which makes a normalised SDM read a softmax with
inverse temperature ``beta``. :func:`fit_beta` fits it by the log-linear regression of Eq. 10 (to
the binary intersection, the cap intersection or the largest summand; ordinary least squares or
the authors' convention), returning a :class:`BetaFit` and warning when the line explains less
than :data:`POOR_FIT_R2` of the variance; :func:`analytic_beta` is the closed form of Eq. 21 and
:func:`analytic_log_intersection` the bound of Eq. 20 behind it, derived from the single largest
summand of Eq. 2 (:func:`largest_summand`, fitted by :func:`largest_summand_beta`). Source:
Bricken & Pehlevan (2021), Eqs. 3, 6 and 10, App. B.2 (Eqs. 16-21) and App. B.3. Chapter 32
studies it; chapters 30 and 33-36 use the fitted ``beta``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from assocmem.sdm.geometry._common import _LOG2, _check_distance, _check_dnd, _check_n
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.geometry.spherical_caps import log_cap_intersection

__all__ = [
    "BetaFit",
    "fit_beta",
    "analytic_beta",
    "analytic_log_intersection",
    "largest_summand",
    "largest_summand_beta",
]


#: :func:`fit_beta` warns when the line explains less than this fraction of the variance of
#: ``log I`` over the fit window. Not 0.9: the staircase ``I(2k - 1) = I(2k)`` alone keeps the
#: paper's own fits below that at small radii (``R^2 = 0.887`` at ``n = 64``, ``d = 5``;
#: ``0.75`` at ``d = 3``), and a fit on ``dv <= 2d`` at ``n = 1000`` has ``R^2 = 0.68``; those
#: are the cases the book studies, not mistakes.
POOR_FIT_R2 = 0.5


@dataclass(frozen=True)
class BetaFit:
    """Result of a log-linear fit ``log I(dv) ~ intercept + beta * x``, ``x = 1 - 2 dv / n``.

    Attributes
    ----------
    beta : float
        Slope in the cosine ``x`` (the softmax inverse temperature); ``-n/2`` times the slope in
        ``dv``.
    intercept : float
        ``log I`` of the fitted line at ``x = 0`` (through the centroid of the points).
    r2 : float
        Coefficient of determination of the least-squares line (the squared correlation of
        ``x`` and ``log I``); the same for both conventions.
    num_points : int
        Number of distances in the fit.
    dvs : tuple of int
        The distances used, ascending.
    """

    beta: float
    intercept: float
    r2: float
    num_points: int
    dvs: tuple[int, ...]


def _fit_window(n: int, d: int, window, even_only: bool) -> list[int]:
    if window is None:
        dvs = list(range(0, d))
    elif isinstance(window, tuple) and len(window) == 2:
        lo = _check_distance(window[0], n, "window start")
        hi = _check_distance(window[1], n, "window end")
        if hi < lo:
            raise ValueError(f"window (lo, hi) needs lo <= hi, got {window!r}")
        dvs = list(range(lo, hi + 1))
    else:
        if isinstance(window, (str, bytes)) or not isinstance(window, Iterable):
            raise ValueError(
                f"window must be None, a (lo, hi) tuple or an iterable of dv, got {window!r}"
            )
        items = np.asarray(list(window), dtype=object).ravel()
        dvs = sorted({_check_distance(v, n, "dv") for v in items})
    if even_only:
        dvs = [v for v in dvs if v % 2 == 0]
    if not dvs:
        raise ValueError(f"the fit window is empty (n = {n}, d = {d}, window = {window!r}, "
                         f"even_only = {even_only})")
    if len(dvs) < 2:
        raise ValueError(f"a line needs at least two distances, the window gives {dvs}")
    return dvs


def fit_beta(n: int, d: int, window: tuple[int, int] | Iterable[int] | None = None,
             even_only: bool = False, convention: str = "ols",
             intersection: str = "binary") -> BetaFit:
    """Fit ``beta`` by the log-linear regression of Eq. 10: ``log I(dv) ~ a + beta x``.

    ``x = 1 - 2 dv / n`` is the cosine between unit-norm bipolar images of two binary vectors
    ``dv`` apart, so ``exp(beta x)`` is the softmax weight that mimics the intersection.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1`` (``>= 2`` for ``intersection="cap"``).
    d : int
        Radius, ``0 <= d <= n``.
    window : None, (int, int) or iterable of int, optional
        Distances to fit. ``None`` (default): ``dv = 0, ..., d - 1`` (the paper's
        ``d(pa, xi) < d``). A tuple ``(lo, hi)`` of length two: ``dv = lo, ..., hi`` inclusive.
        Any other iterable (list, range, array): those distances.
    even_only : bool, default False
        Keep only even ``dv`` (the staircase ``I(2k - 1) = I(2k)`` makes the binary curve an
        envelope of steps; even distances sit on its corners).
    convention : {"ols", "authors"}
        ``"ols"``: the ordinary least-squares slope. ``"authors"``: the slope as the authors'
        code computes it, a sample covariance (divided by ``N - 1``) over a population variance
        (divided by ``N``), i.e. ``beta_ols * N / (N - 1)``; this reproduces the paper's
        ``beta`` values (35.5, 20.0, 15.9, 10.1 at ``n = 64``, ``d = 5, 9, 11, 15``). The
        intercept is the line through the centroid with that slope.
    intersection : {"binary", "cap", "largest_summand"}
        What to fit: the exact Hamming intersection :func:`circle_intersection` (default), the
        spherical cap intersection :func:`cap_intersection` at ``rho = 1 - 2 dv / n`` (continuous
        SDM), or the single largest summand of Eq. 2 (:func:`largest_summand`).

    Returns
    -------
    BetaFit
        ``beta``, ``intercept``, ``r2``, ``num_points`` and ``dvs``.

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is invalid, the window is empty, has fewer than two distances, or
        contains a distance where the intersection is 0 (``log 0``), or ``convention`` or
        ``intersection`` is unknown.

    Warns
    -----
    UserWarning
        When the fitted ``beta`` is not a meaningful inverse temperature, saying why: the radius
        is at or past half the space (``2 d >= n``), where ``I(dv)`` barely decays and
        ``beta`` is close to 0 (``fit_beta(64, 40)`` gives ``beta = 0.009``); or the line is a
        poor fit, ``r2 <`` :data:`POOR_FIT_R2` (0.5). The result is returned either way.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 10 (the regression), Eq. 3 and Eq. 6 (the exponential
    approximation), App. B.3 (the cap version), App. B.2 (the largest summand).
    """
    if convention not in ("ols", "authors"):
        raise ValueError(f"convention must be 'ols' or 'authors', got {convention!r}")
    if intersection not in ("binary", "cap", "largest_summand"):
        raise ValueError(
            f"intersection must be 'binary', 'cap' or 'largest_summand', got {intersection!r}"
        )
    n = _check_n(n, minimum=2 if intersection == "cap" else 1)
    d = _check_distance(d, n, "d")
    dvs = _fit_window(n, d, window, even_only)
    if intersection == "binary":
        y = np.array([math.log(v) if v > 0 else -math.inf
                      for v in circle_intersection_table(n, d, dvs)])
    elif intersection == "largest_summand":
        y = np.array([math.log(v) if v > 0 else -math.inf
                      for v in (largest_summand(v, d, n) for v in dvs)])
    else:
        y = np.asarray(log_cap_intersection(1.0 - 2.0 * np.array(dvs, dtype=float) / n, d, n))
    if not np.all(np.isfinite(y)):
        zero = [v for v, yy in zip(dvs, y) if not np.isfinite(yy)]
        raise ValueError(f"the {intersection} intersection is 0 at dv = {zero} (n = {n}, d = {d}); "
                         "log-linear fit impossible, choose a window inside dv <= 2d")
    x = 1.0 - 2.0 * np.array(dvs, dtype=float) / n
    num = len(dvs)
    xc, yc = x - x.mean(), y - y.mean()
    sxx, syy, sxy = float(xc @ xc), float(yc @ yc), float(xc @ yc)
    beta = sxy / sxx
    r2 = 1.0 if syy == 0.0 else sxy * sxy / (sxx * syy)
    if convention == "authors":
        beta *= num / (num - 1)
    intercept = float(y.mean() - beta * x.mean())
    reasons = []
    if 2 * d >= n:
        reasons.append(f"the radius d = {d} is at or past n/2 = {n / 2:g}, where the intersection "
                       "barely decays with dv, so exp(beta x) is nearly flat; the exponential "
                       "approximation of Eq. 10 is meant for d < n/2")
    if r2 < POOR_FIT_R2:
        reasons.append(f"log I is far from a line over dv = {dvs[0]}..{dvs[-1]} ({num} points): "
                       f"R^2 = {r2:.3f} < {POOR_FIT_R2}")
    if reasons:
        warnings.warn(f"fit_beta(n={n}, d={d}): beta = {beta:.4g} is not a meaningful inverse "
                      "temperature: " + "; and ".join(reasons), UserWarning, stacklevel=2)
    return BetaFit(beta=float(beta), intercept=intercept, r2=float(r2), num_points=num,
                   dvs=tuple(int(v) for v in dvs))


def analytic_beta(n: int, d: int) -> float:
    """The analytic ``beta`` of Eq. 21, ``(n - 2 d)^2 / (4 n)``.

    App. B.2 keeps only the largest summand of Eq. 2 (``a = n - d - floor(dv/2)``,
    ``c = floor(dv/2)``), replaces each binomial coefficient by a Gaussian density, sets
    ``floor(dv/2) ~ dv/2``, expands ``1/(1 - dv/n)`` to first order (``dv << n``) and bounds the
    prefactor by its value at ``dv = n/2``. The result, Eq. 20,
    ``I >~ 2^{n+2}/(pi n) exp(-(n - 2d)^2/(2n)) exp(-(n - 2d)^2/(2 n^2) dv)``, is linear in ``dv``
    in the exponent; in the cosine ``x = 1 - 2 dv/n`` its slope is this ``beta``. In the
    Attention setting the Gaussian sits several standard deviations into the binomial tail and
    the value is 2-2.5 times smaller than the regression ``beta`` of :func:`fit_beta` (e.g.
    6.9 versus 14.4 at ``n = 64``, ``d = 11``).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.

    Returns
    -------
    float
        ``(n - 2 d)^2 / (4 n)``.

    Raises
    ------
    ValueError
        If ``n < 1`` or ``d`` is not an integer in ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2, Eqs. 16-21.
    """
    n = _check_n(n)
    d = _check_distance(d, n, "d")
    return (n - 2 * d) ** 2 / (4.0 * n)


def analytic_log_intersection(dv: int, d: int, n: int) -> float:
    """Natural log of the analytic lower bound of Eq. 20.

    ``log I >~ log(2^{n+2} / (pi n)) - (n - 2 d)^2 / (2 n) - (n - 2 d)^2 / (2 n^2) dv``; the
    paper restricts it to ``dv < 0.1 n``.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    float
        The log of the approximate intersection.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2, Eq. 20.
    """
    dv, d, n = _check_dnd(dv, d, n)
    gap2 = float((n - 2 * d) ** 2)
    return (n + 2) * _LOG2 - math.log(math.pi * n) - gap2 / (2 * n) - gap2 / (2 * n * n) * dv


def largest_summand(dv: int, d: int, n: int) -> int:
    """The single largest summand of Eq. 2, the term App. B.2 approximates ``I`` by.

    Every admissible ``a`` admits ``c = floor(dv/2)``, where ``C(dv, c)`` is largest, so the
    largest summand is ``C(dv, floor(dv/2)) max_a C(n - dv, a)`` over
    ``a >= n - d - floor(dv/2)``. For ``d <= n/2`` the maximum is at the lower limit, and the
    term is the paper's ``C(n - dv, n - d - floor(dv/2)) C(dv, floor(dv/2))``; for larger ``d``
    the central binomial ``C(n - dv, floor((n - dv)/2))`` is admissible and larger. A lower
    bound on ``I``, zero exactly where ``I`` is.

    Parameters
    ----------
    dv : int
        Distance between the centres, ``0 <= dv <= n``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    int
        The largest summand, exact.

    Raises
    ------
    ValueError
        As :func:`circle_intersection`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2 (Eqs. 16-17) and Eq. 2.
    """
    dv, d, n = _check_dnd(dv, d, n)
    m = n - dv
    a_lo = max(0, n - d - dv // 2)
    if a_lo > m:
        return 0
    a_best = max(a_lo, m // 2)
    return math.comb(m, a_best) * math.comb(dv, dv // 2)


def largest_summand_beta(n: int, d: int, window: tuple[int, int] | Iterable[int] | None = None,
                         even_only: bool = False,
                         convention: str = "ols") -> BetaFit:
    """Fit ``beta`` (Eq. 10) to the single largest summand of Eq. 2 instead of ``I``.

    Shows where the analytic ``beta`` of Eq. 21 loses its accuracy: the largest summand alone
    reproduces the regression slope of the full intersection (e.g. at ``n = 64``, ``d = 11`` on
    even distances), so the error of Eq. 21 comes from its Gaussian approximation of far-tail
    binomials, not from dropping the other summands.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``0 <= d <= n``.
    window : None, (int, int) or iterable of int, optional
        As in :func:`fit_beta` (default ``dv = 0, ..., d - 1``).
    even_only : bool, default False
        Keep only even distances.
    convention : {"ols", "authors"}
        As in :func:`fit_beta`.

    Returns
    -------
    BetaFit
        The fit of ``log largest_summand(dv)`` on ``x = 1 - 2 dv / n``.

    Raises
    ------
    ValueError
        As :func:`fit_beta`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2 and Eq. 10.
    """
    return fit_beta(n, d, window=window, even_only=even_only, convention=convention,
                    intersection="largest_summand")
