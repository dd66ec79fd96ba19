"""Why the circle intersection looks exponential, and where the analytic ``beta`` goes wrong.

Bricken & Pehlevan (2021) fit the softmax inverse temperature ``beta`` to the circle intersection
by a log-linear regression (Eq. 10, :func:`assocmem.sdm.geometry.fit_beta`) and also derive an
analytic value, ``beta = (n - 2d)^2 / (4n)`` (App. B.2, Eq. 21), which is two to two and a half
times smaller than the regression in the Attention setting. This module takes the derivation of
App. B.2 apart, one approximation at a time, on the even distances ``dv = 2k`` where the
staircase ``I(2k - 1) = I(2k)`` has its corners.

Keeping only the largest summand of Eq. 2 (for ``d <= n/2``),

    L(2k) = C(n - 2k, d - k) C(2k, k) = 2^n T(2k) P(2k),

the product of a *tail factor* ``T(2k) = C(n - 2k, d - k) / 2^(n - 2k)``, the probability that a
fair ``Binomial(n - 2k)`` lands ``(n - 2d)/2`` below its mean (several standard deviations out
in the Attention setting), and a *central factor* ``P(2k) = C(2k, k) / 4^k``, the probability
that a fair ``Binomial(2k)`` lands on its mean (``~ 1/sqrt(pi k)``). App. B.2 replaces both by
Gaussians, expands ``1/(1 - dv/n)`` to first order, and freezes the prefactor
``1/sqrt(dv (n - dv))`` at ``dv = n/2``; that removes the central factor's dependence on ``dv``
altogether. Least squares is linear in the data, so the regression ``beta`` of ``log L`` is the
sum of the regression ``beta`` s of ``log T`` and ``log P``, and each approximation's share of
the gap can be read off (:func:`beta_budget`).

Contents:

1. :func:`log_terms`: the exact and approximate log factors on even distances.
2. :func:`local_betas`: the local decay rate between consecutive even distances,
   ``(n/4) log(f(2k) / f(2k + 2))``, for each factor; for the largest summand it is a closed form
   (:func:`summand_ratio`).
3. :func:`ols_difference_weights` and :func:`weighted_local_beta`: the least-squares slope on
   equally spaced points is a fixed weighted average of the consecutive differences, so the
   regression ``beta`` of the largest summand is an exact finite sum of logarithms of rational
   functions of ``n``, ``d`` and ``k``.
4. :func:`entropy_beta`: the large-deviation (entropy) rate of the tail factor at ``dv = 0``,
   ``(n/4) log(n^2 / (4 d (n - d)))``, of which Eq. 21 is the leading term.
5. :func:`beta_budget`: Eq. 21 to the paper's ``beta`` in seven steps.
6. :func:`break_distance`: where the fitted exponential first overstates ``I`` by a given factor.

Presets for the chapter are in :data:`PRESETS`.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. Eq. 2 (circle intersection), Eq. 10 (the regression), App. B.2 / Eqs. 16-21 (the
  analytic exponential), App. B.3 (continuous SDM).
- [S002] Seed 002 (a critical review of BP21): "What my recomputation of the approximation
  shows", claims C2-C4, and the open question "Is there a correct analytic beta(n, d)?".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_int, as_real, lookup
from assocmem.sdm.geometry.beta_fit import analytic_beta, fit_beta
from assocmem.sdm.geometry.intersection import circle_intersection_table

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ExponentialPreset",
    "PRESETS",
    "get_preset",
    "TERMS",
    "log_terms",
    "summand_ratio",
    "local_betas",
    "ols_difference_weights",
    "weighted_local_beta",
    "entropy_beta",
    "BetaBudget",
    "beta_budget",
    "break_distance",
]

_LOG2 = math.log(2.0)

#: The factors :func:`log_terms` evaluates, with what each is.
TERMS: dict[str, str] = {
    "binary": "log I(dv), the exact circle intersection (Eq. 2)",
    "largest_summand": "log L(dv) = log C(n - dv, d - dv/2) + log C(dv, dv/2)",
    "tail": "log T(dv) = log C(n - dv, d - dv/2) - (n - dv) log 2, the far-tail binomial pmf",
    "central": "log P(dv) = log C(dv, dv/2) - dv log 2, the central binomial pmf",
    "gaussian_tail": "Gaussian density approximation of log T(dv), exact in dv/n",
    "eq20": "log of the analytic approximation of Eq. 20 (linear in dv)",
}


# ==========================================================================================
# Presets
# ==========================================================================================


@dataclass(frozen=True)
class ExponentialPreset:
    """Sizes of the chapter "Why it looks exponential, and which beta"."""

    radii_64: tuple[int, ...]  # radii d at n = 64 for the beta-by-method comparison (3 <= d <= 31)
    radii_1000: tuple[int, ...]  # radii d at n = 1000 (the canonical setting) for the fits


#: ``"quick"`` runs in the book and CI (well under a second); ``"full"`` sweeps every radius at
#: ``n = 64`` (a few seconds; papermill ``-p PRESET full``).
PRESETS: dict[str, ExponentialPreset] = {
    "quick": ExponentialPreset(radii_64=(3, 5, 7, 9, 11, 13, 15, 19, 23, 27),
                               radii_1000=(447, 451)),
    "full": ExponentialPreset(radii_64=tuple(range(3, 32)),
                              radii_1000=(444, 447, 448, 451)),
}


def get_preset(name: str) -> ExponentialPreset:
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


def _check_nd(n, d) -> tuple[int, int]:
    n, d = as_int(n, "n"), as_int(d, "d")  # no booleans, strings or non-integral floats
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if d < 1 or 2 * d > n:
        raise ValueError(f"the largest-summand analysis needs 1 <= d <= n/2 = {n / 2}, got d = {d}")
    return n, d


def _window_pair(window) -> tuple[int, int]:
    """``(lo, hi)`` of a window given as a pair of integers (no truncation of 2.5 to 2)."""
    if isinstance(window, (str, bytes)) or not hasattr(window, "__len__") or len(window) != 2:
        raise ValueError(f"window must be a pair (lo, hi) of integers, got {window!r}")
    return as_int(window[0], "window start"), as_int(window[1], "window end")


def _even_distances(n: int, d: int, dvs) -> np.ndarray:
    """Validated even distances in ``[0, 2d]`` (default ``0, 2, ..., 2d``)."""
    if dvs is None:
        out = np.arange(0, 2 * d + 1, 2)
    else:
        if isinstance(dvs, (str, bytes)) or not hasattr(dvs, "__iter__"):
            raise ValueError(f"distances must be an iterable of integers, got {dvs!r}")
        # element by element: numpy would truncate 2.5 to 2 and read "2" as 2
        out = np.array([as_int(v, "dv") for v in np.asarray(list(dvs), dtype=object).ravel()],
                       dtype=np.int64)
    if out.size == 0:
        raise ValueError("no distances given")
    if np.any(out % 2) or np.any(out < 0) or np.any(out > 2 * d):
        raise ValueError(f"distances must be even and in [0, 2d] = [0, {2 * d}], got {out.tolist()}")
    return out


# ==========================================================================================
# 1. The factors of the largest summand
# ==========================================================================================


def log_terms(n: int, d: int, dvs: Iterable[int] | None = None) -> dict[str, np.ndarray]:
    """The exact and approximate log factors of the circle intersection on even distances.

    With ``dv = 2k`` and ``d <= n/2`` the largest summand of Eq. 2 is
    ``L = C(n - 2k, d - k) C(2k, k) = 2^n T P``, where ``T`` is the probability that a fair
    ``Binomial(n - 2k)`` equals ``d - k`` (a far-tail value: ``(n - 2d)/sqrt(n)`` standard
    deviations below the mean at ``k = 0``) and ``P`` the probability that a fair
    ``Binomial(2k)`` equals its mean ``k``. App. B.2 replaces ``T`` by the Gaussian density
    ``sqrt(2 / (pi (n - 2k))) exp(-(n - 2d)^2 / (2 (n - 2k)))``, then expands to first order in
    ``dv/n`` and freezes the prefactor, which gives Eq. 20.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 2``.
    d : int
        Radius, ``1 <= d <= n/2``.
    dvs : iterable of int, optional
        Even distances in ``[0, 2d]``. Default ``0, 2, ..., 2d``.

    Returns
    -------
    dict of str to numpy.ndarray
        float64 arrays of shape ``(len(dvs),)`` keyed by the names of :data:`TERMS`:
        ``"binary"``, ``"largest_summand"``, ``"tail"``, ``"central"``, ``"gaussian_tail"``,
        ``"eq20"``, and ``"dv"`` (the distances, int64). Exactly,
        ``largest_summand = n log 2 + tail + central``.

    Raises
    ------
    ValueError
        If ``n`` or ``d`` or a distance is not an integer (booleans, strings and values such
        as ``2.5`` are refused, never truncated), ``n < 2``, ``d`` is outside ``[1, n/2]``, or a
        distance is odd or outside ``[0, 2d]``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 2 and App. B.2 (Eqs. 16-20); seed 002, "What my recomputation
    of the approximation shows".
    """
    n, d = _check_nd(n, d)
    dv = _even_distances(n, d, dvs)
    binary = circle_intersection_table(n, d, dv.tolist())
    tail, central, gauss, eq20, summand = [], [], [], [], []
    gap2 = float((n - 2 * d) ** 2)
    for v in dv.tolist():
        k = v // 2
        log_tail_count = math.log(math.comb(n - v, d - k))
        log_central_count = math.log(math.comb(v, k))
        summand.append(log_tail_count + log_central_count)
        tail.append(log_tail_count - (n - v) * _LOG2)
        central.append(log_central_count - v * _LOG2)
        gauss.append(0.5 * math.log(2.0 / (math.pi * (n - v))) - gap2 / (2.0 * (n - v)))
        eq20.append((n + 2) * _LOG2 - math.log(math.pi * n) - gap2 / (2 * n) - gap2 / (2 * n * n) * v)
    return {
        "dv": dv,
        "binary": np.array([math.log(b) for b in binary]),
        "largest_summand": np.array(summand),
        "tail": np.array(tail),
        "central": np.array(central),
        "gaussian_tail": np.array(gauss),
        "eq20": np.array(eq20),
    }


def summand_ratio(n: int, d: int, dv: int) -> float:
    """``L(dv) / L(dv + 2)``, the exact ratio of consecutive even largest summands (closed form).

    With ``k = dv/2``,

        L(2k) / L(2k + 2) = (n - 2k)(n - 2k - 1)(k + 1) / (2 (2k + 1)(d - k)(n - d - k)).

    At ``k = 0`` it is ``C(n, d) / (2 C(n - 2, d - 1)) = n (n - 1) / (2 d (n - d))``, the
    seed's hand estimate (3.46 at ``n = 64``, ``d = 11``).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 2``.
    d : int
        Radius, ``1 <= d <= n/2``.
    dv : int
        Even distance, ``0 <= dv <= 2d - 2``.

    Returns
    -------
    float
        The ratio (``> 1`` means the summand decreases).

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is invalid, or ``dv`` is not an integer, odd or outside
        ``[0, 2d - 2]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2 (the largest summand); seed 002, "What my recomputation
    of the approximation shows" (the ratio 3.46 per two Hamming steps).
    """
    n, d = _check_nd(n, d)
    dv = as_int(dv, "dv")
    if dv % 2 or dv < 0 or dv > 2 * d - 2:
        raise ValueError(f"dv must be even and in [0, 2d - 2] = [0, {2 * d - 2}], got {dv}")
    k = dv // 2
    num = (n - 2 * k) * (n - 2 * k - 1) * (k + 1)
    den = 2 * (2 * k + 1) * (d - k) * (n - d - k)
    return num / den


def local_betas(n: int, d: int, of: str = "binary", dvs: Iterable[int] | None = None) -> np.ndarray:
    """Local ``beta`` between consecutive even distances: ``(n/4) log(f(dv) / f(dv + 2))``.

    A pure exponential ``exp(beta x)`` in the cosine ``x = 1 - 2 dv / n`` falls by ``4 beta / n``
    in log over two Hamming steps, so this is the ``beta`` a softmax would need to follow ``f``
    between ``dv`` and ``dv + 2``. Constant local ``beta`` means exactly exponential; growing
    local ``beta`` means faster than exponential.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 2``.
    d : int
        Radius, ``1 <= d <= n/2``.
    of : str
        Which factor (a key of :data:`TERMS`). For ``"largest_summand"`` the closed form of
        :func:`summand_ratio` is used.
    dvs : iterable of int, optional
        Even starting distances in ``[0, 2d - 2]``. Default ``0, 2, ..., 2d - 2``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(dvs),)``.

    Raises
    ------
    ValueError
        If ``of`` is unknown, ``n`` or ``d`` invalid, or a distance odd or outside
        ``[0, 2d - 2]``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 10 and App. B.2; seed 002, open question "Is there a correct
    analytic beta(n, d)?".
    """
    if of not in TERMS:
        raise ValueError(f"of must be one of {sorted(TERMS)}, got {of!r}")
    n, d = _check_nd(n, d)
    start = np.arange(0, 2 * d - 1, 2) if dvs is None else _even_distances(n, d, dvs)
    if np.any(start > 2 * d - 2):
        raise ValueError(f"starting distances must be <= 2d - 2 = {2 * d - 2}, got {start.tolist()}")
    if of == "largest_summand":
        return np.array([n / 4.0 * math.log(summand_ratio(n, d, v)) for v in start.tolist()])
    lo = log_terms(n, d, start)[of]
    hi = log_terms(n, d, start + 2)[of]
    return n / 4.0 * (lo - hi)


# ==========================================================================================
# 2. The regression slope as a weighted average of local slopes
# ==========================================================================================


def ols_difference_weights(num_points: int) -> np.ndarray:
    """Weights ``w_j`` with ``OLS slope = sum_j w_j (y_{j+1} - y_j) / h`` on equally spaced points.

    For ``N`` points ``x_j = x_0 + j h`` the least-squares slope is a weighted average of the
    ``N - 1`` consecutive difference quotients with the parabolic weights

        w_j = 6 (j + 1)(N - 1 - j) / ((N - 1) N (N + 1)),   j = 0, ..., N - 2,

    which are positive, symmetric and sum to one: the middle of the window counts most, its ends
    least.

    Parameters
    ----------
    num_points : int
        ``N >= 2``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(N - 1,)``.

    Raises
    ------
    ValueError
        If ``num_points`` is not an integer (a boolean, a string, ``2.5``) or is ``< 2``.

    References
    ----------
    A standard identity of least squares on a uniform grid (write the centred ``x`` as a
    telescoping sum); used here for Eq. 10 of Bricken & Pehlevan (2021).
    """
    N = as_int(num_points, "num_points")
    if N < 2:
        raise ValueError(f"num_points must be an integer >= 2, got {num_points!r}")
    j = np.arange(N - 1, dtype=float)
    return 6.0 * (j + 1.0) * (N - 1.0 - j) / ((N - 1.0) * N * (N + 1.0))


def weighted_local_beta(n: int, d: int, window: tuple[int, int] | None = None,
                        of: str = "largest_summand") -> float:
    """The regression ``beta`` of Eq. 10 on even distances, as a weighted sum of local ``beta`` s.

    On the even distances ``0, 2, ..., 2K`` of the window, the least-squares ``beta`` of
    ``log f`` on ``x = 1 - 2 dv / n`` equals ``sum_k w_k beta_loc(2k)`` with the weights of
    :func:`ols_difference_weights` and the local ``beta`` s of :func:`local_betas`. For the
    largest summand every term is the log of the rational number of :func:`summand_ratio`, so
    this is an exact closed form of the regression slope (a finite sum of logs, no fit):

        beta(n, d) = (n/4) sum_{k=0}^{K-1} w_k log[(n-2k)(n-2k-1)(k+1) / (2(2k+1)(d-k)(n-d-k))].

    Parameters
    ----------
    n : int
        Dimension, ``n >= 2``.
    d : int
        Radius, ``1 <= d <= n/2``.
    window : None or (int, int), optional
        Distances ``lo..hi``, of which the even ones are used (``lo`` even). Default
        ``0..d - 1`` (the paper's ``dv < d``).
    of : str, default "largest_summand"
        Which factor (a key of :data:`TERMS`).

    Returns
    -------
    float
        The regression ``beta`` (ordinary least squares).

    Raises
    ------
    ValueError
        If the window is not a pair of integers (``2.5`` is refused, not truncated), holds
        fewer than two even distances, starts at an odd distance or leaves ``[0, 2d]``, or
        ``of``, ``n``, ``d`` are invalid.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 10 and App. B.2; seed 002, open question "Is there a correct
    analytic beta(n, d)?".
    """
    n, d = _check_nd(n, d)
    lo, hi = (0, d - 1) if window is None else _window_pair(window)
    if lo % 2:
        raise ValueError(f"the window must start at an even distance, got {lo}")
    start = np.arange(lo, hi - 1, 2)  # the differences (2k -> 2k + 2) inside [lo, hi]
    if start.size < 1:
        raise ValueError(f"the window {lo}..{hi} holds fewer than two even distances")
    w = ols_difference_weights(start.size + 1)
    return float(w @ local_betas(n, d, of=of, dvs=start))


def entropy_beta(n: int, d: int) -> float:
    """Large-deviation ``beta`` of the tail factor at ``dv = 0``: ``-(n/4) log(1 - (1 - 2d/n)^2)``.

    The tail factor ``T(2k)`` falls by ``(n-2k)(n-2k-1) / (4 (d-k)(n-d-k))`` per two steps; for
    large ``n`` at ``k = 0`` that is ``1 / (4 delta (1 - delta))`` with ``delta = d/n``, the rate
    Stirling's formula (the binary entropy) gives. With ``g = 1 - 2 delta``,

        beta = -(n/4) log(1 - g^2) = (n/4) (g^2 + g^4/2 + g^6/3 + ...),

    and Eq. 21, ``n g^2 / 4``, is the first term: the Gaussian keeps only the quadratic part of
    the entropy, which is accurate for ``g`` small (``d`` near ``n/2``, e.g. ``n = 1000``) and
    too small far in the tail (``n = 64``). The central factor and the curvature over the fit
    window are not in this number; see :func:`beta_budget`.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 2``.
    d : int
        Radius, ``1 <= d <= n/2``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n < 2`` or ``d`` is outside ``[1, n/2]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.2 (Eq. 21, which this corrects for the far tail); seed 002,
    Limitations and Open questions ("a large-deviation (entropy) treatment of the tail
    binomial").
    """
    n, d = _check_nd(n, d)
    g = 1.0 - 2.0 * d / n
    return -(n / 4.0) * math.log1p(-g * g)


# ==========================================================================================
# 3. From Eq. 21 to the paper's beta, one approximation at a time
# ==========================================================================================


@dataclass(frozen=True)
class BetaBudget:
    """Regression ``beta`` s of successively more exact models of ``I`` (OLS, Eq. 10 window).

    Steps 1-5 use the even distances of the window, 6-7 all of them.

    Attributes
    ----------
    n, d : int
        Dimension and radius.
    eq21 : float
        1. App. B.2's ``(n - 2d)^2 / (4n)``: Gaussian tail, first order in ``dv/n``, prefactor
        frozen.
    gaussian_tail : float
        2. The Gaussian density for the tail factor without the first-order expansion.
    tail : float
        3. The exact tail factor ``T`` (the far-tail binomial).
    largest_summand : float
        4. ``T`` times the exact central factor ``P`` (the largest summand of Eq. 2).
    binary_even : float
        5. The full intersection ``I`` on even distances.
    binary : float
        6. ``I`` on all distances (the paper's fit, plain OLS).
    authors : float
        7. As 6 in the authors' convention (``x N / (N - 1)``): the paper's ``beta``.
    """

    n: int
    d: int
    eq21: float
    gaussian_tail: float
    tail: float
    largest_summand: float
    binary_even: float
    binary: float
    authors: float

    #: (attribute, what changes at this step)
    STEPS = (
        ("eq21", "1. Eq. 21"),
        ("gaussian_tail", "2. Gaussian tail, exact in dv/n"),
        ("tail", "3. exact binomial tail T"),
        ("largest_summand", "4. times central factor P"),
        ("binary_even", "5. full I, even dv"),
        ("binary", "6. full I, every dv (OLS)"),
        ("authors", "7. authors' N/(N-1)"),
    )

    def rows(self) -> list[tuple[str, float, float]]:
        """``(step, beta, change from the previous step)`` for the seven steps, in order."""
        out, prev = [], None
        for attr, label in self.STEPS:
            b = getattr(self, attr)
            out.append((label, b, 0.0 if prev is None else b - prev))
            prev = b
        return out

    def shares(self) -> dict[str, float]:
        """Fractions of the gap ``largest_summand - eq21`` due to steps 2, 3 and 4 (sum to 1)."""
        gap = self.largest_summand - self.eq21
        return {
            "first_order": (self.gaussian_tail - self.eq21) / gap,
            "far_tail": (self.tail - self.gaussian_tail) / gap,
            "central": (self.largest_summand - self.tail) / gap,
        }


def _ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    xc = x - x.mean()
    return float(xc @ (y - y.mean()) / (xc @ xc))


def beta_budget(n: int, d: int, window: tuple[int, int] | None = None) -> BetaBudget:
    """Walk from Eq. 21 to the paper's ``beta`` one approximation at a time.

    Least squares is linear in the data and ``log L = n log 2 + log T + log P``, so the
    differences between consecutive steps are exactly the contributions of the first-order
    expansion, the Gaussian tail and the dropped central factor (:meth:`BetaBudget.shares`).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 2``.
    d : int
        Radius, ``3 <= d <= n/2`` for the default window (two even distances needed).
    window : None or (int, int), optional
        Distances ``lo..hi`` (``lo`` even, ``hi <= 2d``). Default ``0..d - 1``.

    Returns
    -------
    BetaBudget

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is invalid, the window is not a pair of integers, or it holds fewer
        than two even distances.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 10 and App. B.2 (Eqs. 16-21); seed 002, "What my recomputation
    of the approximation shows" and claim C4.
    """
    n, d = _check_nd(n, d)
    lo, hi = (0, d - 1) if window is None else _window_pair(window)
    if lo % 2 or lo < 0 or hi > 2 * d:
        raise ValueError(f"window must be (even lo >= 0, hi <= 2d = {2 * d}), got {(lo, hi)}")
    even = np.arange(lo, hi + 1, 2)
    if even.size < 2:
        raise ValueError(f"the window {lo}..{hi} holds fewer than two even distances")
    t = log_terms(n, d, even)
    x = 1.0 - 2.0 * even / n
    return BetaBudget(
        n=n,
        d=d,
        eq21=analytic_beta(n, d),
        gaussian_tail=_ols_slope(x, t["gaussian_tail"]),
        tail=_ols_slope(x, t["tail"]),
        largest_summand=_ols_slope(x, t["largest_summand"]),
        binary_even=_ols_slope(x, t["binary"]),
        binary=fit_beta(n, d, window=(lo, hi)).beta,
        authors=fit_beta(n, d, window=(lo, hi), convention="authors").beta,
    )


def break_distance(n: int, d: int, factor: float = 2.0,
                   window: tuple[int, int] | Iterable[int] | None = None,
                   even_only: bool = False) -> int:
    """First distance at which the fitted exponential overstates ``I`` by more than ``factor``.

    Fits Eq. 10 on ``window`` (default ``dv < d``), extends the line to every ``dv`` in
    ``0..2d + 1`` and returns the smallest ``dv >= window end`` with
    ``log I(dv) < line(dv) - log(factor)``; ``I(2d + 1) = 0``, so the answer is at most
    ``2d + 1``. Past this distance a softmax with the fitted ``beta`` gives a pattern more than
    ``factor`` times the weight SDM gives it (relative to the window's scale).

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Radius, ``1 <= d <= n``, with ``2d + 1 <= n``.
    factor : float, default 2.0
        The tolerated overstatement, ``> 1``.
    window : as in :func:`assocmem.sdm.geometry.fit_beta`, optional
        The fit window (default ``dv < d``).
    even_only : bool, default False
        Fit on even distances only (the envelope).

    Returns
    -------
    int
        The break distance.

    Raises
    ------
    ValueError
        If ``factor`` is not a finite real number ``> 1`` (booleans and strings are refused),
        ``n`` or ``d`` is not an integer, ``2d + 1 > n``, or the fit is invalid.

    References
    ----------
    Bricken & Pehlevan (2021), §1.1 ("d(pa, xi) <= 2d") and App. B.2 ("until around dv = 20"
    for ``d = 15``); seed 002, claim C3.
    """
    n, d = as_int(n, "n"), as_int(d, "d")
    factor_f = as_real(factor, "factor")  # no booleans, strings, NaN or infinities
    if not factor_f > 1.0:
        raise ValueError(f"factor must be a number > 1, got {factor!r}")
    factor = factor_f
    if 2 * d + 1 > n:
        raise ValueError(f"need 2d + 1 <= n, got n = {n}, d = {d}")
    fit = fit_beta(n, d, window=window, even_only=even_only)
    last = max(fit.dvs)
    table = circle_intersection_table(n, d, range(0, 2 * d + 2))
    cut = math.log(factor)
    for dv in range(last, 2 * d + 2):
        line = fit.intercept + fit.beta * (1.0 - 2.0 * dv / n)
        if table[dv] == 0 or math.log(table[dv]) < line - cut:
            return dv
    return 2 * d + 1  # unreachable: I(2d + 1) = 0
