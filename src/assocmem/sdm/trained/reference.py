"""A trained model's ``beta`` and recall curve against SDM's random-pattern predictions.

Two comparisons of seed 002 (the review of Bricken & Pehlevan 2021):

* **Claim C7.** Learned QK-norm inverse temperatures lie between the critical-distance- and
  SNR-optimal ``beta``. :func:`reference_betas` computes the three optima of App. B.5 (critical
  distance, SNR, memory) for a given dimension ``n`` and pattern count ``m`` with the book's own
  functions (:func:`assocmem.sdm.capacity.optimal_radius`, which fits ``beta`` by the log-linear
  regression of Eq. 10), so that a model's ``beta`` is compared at its own head dimension and
  context length. :func:`between` is the test.
* **The open question.** Does recall accuracy fall with the number ``m`` of stored pairs along
  the shape of the capacity formula? Eq. 25 gives a read's signal-to-noise ratio
  ``SNR(m) = s / sqrt(s + (m - 1) sigma^2)`` and Eq. 26 inverts it for the ``m`` at which the SNR
  equals a retrieval z-score. A bit is read correctly with probability ``Phi(SNR)``, whose
  chance level (``SNR = 0``) is 1/2; for a readout over ``vocab`` tokens we map the excess over
  chance, ``2 Phi(SNR) - 1``, onto the excess over ``1 / vocab``. The accuracy curve of that
  model is then the two-constant family
  ``floor + (1 - floor) (2 Phi(a / sqrt(1 + b (m - 1))) - 1)`` (``a = sqrt(s)``,
  ``b = sigma^2 / s``), :func:`eq26_accuracy`. :func:`fit_accuracy_curves` fits it by binomial
  maximum likelihood beside a free logistic in ``log m`` with as many constants
  (:func:`logistic_accuracy`), both above the chance floor ``1 / vocab``; with equal numbers of
  constants the log-likelihood difference is the likelihood ratio (and the AIC difference / 2).

Chapter 37.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import optimize, special

from assocmem._checks import as_int, as_real, holds_bool_or_str
from assocmem.sdm.capacity import optimal_radius

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "CRITERIA_NAMES",
    "reference_betas",
    "between",
    "eq26_accuracy",
    "logistic_accuracy",
    "CurveFit",
    "fit_accuracy_curves",
]

#: Criteria of App. B.5 and their short names (as in chapter 33).
CRITERIA_NAMES = {"critical_distance": "CD", "snr": "SNR", "memory": "Mem"}


def reference_betas(n: int, m: int, r: int | None = None) -> pd.DataFrame:
    """The CD-, SNR- and memory-optimal radius and ``beta`` for dimension ``n`` and ``m`` patterns.

    Parameters
    ----------
    n : int
        Dimension (the head dimension of the model compared), ``n >= 2``.
    m : int
        Stored patterns (the model's context pairs), ``m >= 1``.
    r : int, optional
        Neurons; default ``2**n``, a neuron at every address (the paper's Attention setting).

    Returns
    -------
    pandas.DataFrame
        Index ``criterion`` (``"CD"``, ``"SNR"``, ``"Mem"``); columns ``d`` (the optimal radius),
        ``beta_ols`` (least-squares slope of Eq. 10 over ``dv < d``) and ``beta_authors`` (the
        authors' convention, ``beta_ols d / (d - 1)``).

    Raises
    ------
    ValueError
        If ``n`` or ``m`` is not an integer (Python or numpy; floats and bools are refused) or
        is below its minimum, if ``r`` is invalid (as
        :func:`assocmem.sdm.capacity.optimal_radius` raises), or if ``n`` is too small for the
        regression of Eq. 10: some optimal radius ``d >= n / 2`` or some ``beta`` not finite
        and positive (e.g. ``n = 3``).
    """
    for name, value in (("n", n), ("m", m)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    n = as_int(n, "n", minimum=2)
    m = as_int(m, "m", minimum=1)
    r = 2**n if r is None else r
    rows = []
    with np.errstate(all="ignore"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for crit, short in CRITERIA_NAMES.items():
            o = optimal_radius(n, r, m, crit)
            rows.append(dict(criterion=short, d=int(o.d), beta_ols=float(o.beta_ols),
                             beta_authors=float(o.beta_authors)))
    out = pd.DataFrame(rows).set_index("criterion")
    betas = out[["beta_ols", "beta_authors"]].to_numpy()
    bad = ~(np.isfinite(betas).all(axis=1) & (betas > 0).all(axis=1)) | (2 * out["d"] >= n)
    if bad.any():
        names = ", ".join(out.index[bad.to_numpy()])
        raise ValueError(f"n = {n} is too small: the optimal radius of {names} is at or past "
                         f"n/2 or leaves too few distances for the regression of Eq. 10 (beta "
                         f"not finite and positive); use a larger n")
    for w in caught:  # a valid result: pass on any warning the computation raised
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out


def between(value: float, lo: float, hi: float) -> bool:
    """Whether ``lo <= value <= hi`` (the ends in either order); ``ValueError`` if any is NaN."""
    v, a, b = (as_real(x, name) for x, name in ((value, "value"), (lo, "lo"), (hi, "hi")))
    return min(a, b) <= v <= max(a, b)


def _refuse_bool(x, name: str) -> None:
    """Booleans and strings anywhere in ``x`` refused (``[True, 2]`` is an int array, ``["1"]`` parses)."""
    if isinstance(x, (bool, np.bool_, str, bytes)) or holds_bool_or_str(x) or np.asarray(x).dtype == bool:
        raise ValueError(f"{name} must hold numbers, not booleans or strings")
    if np.asarray(x).dtype.kind in "USO" and not all(isinstance(v, Real) for v in np.asarray(x).flat):
        raise ValueError(f"{name} must hold numbers, got dtype {np.asarray(x).dtype}")


def _m_array(m) -> np.ndarray:
    _refuse_bool(m, "m")
    arr = np.asarray(m, dtype=float)
    if arr.ndim > 1 or not np.all(np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError("m must be a finite number or 1-d array of numbers >= 1")
    return arr


def _floor(floor) -> float:
    return as_real(floor, "floor", minimum=0.0, maximum=1.0 - 1e-12)


def eq26_accuracy(m: ArrayLike, a: float, b: float, floor: float = 0.0) -> np.ndarray:
    """``floor + (1 - floor) (2 Phi(a / sqrt(1 + b (m - 1))) - 1)``: the curve of Eqs. 25-26.

    ``a`` is the SNR of a read with one stored pattern and ``b`` the noise variance each further
    pattern adds, relative to the signal (``a > 0``, ``b >= 0``). Returns an array shaped as
    ``m``. ``ValueError`` for ``m < 1``, boolean or non-finite input, ``a <= 0``, ``b < 0`` or a
    floor outside ``[0, 1)``.
    """
    mm = _m_array(m)
    a = as_real(a, "a", minimum=0.0, strict_min=True)
    b = as_real(b, "b", minimum=0.0)
    f = _floor(floor)
    return f + (1 - f) * (2 * special.ndtr(a / np.sqrt(1 + b * (mm - 1))) - 1)


def logistic_accuracy(m: ArrayLike, slope: float, midpoint: float,
                      floor: float = 0.0) -> np.ndarray:
    """``floor + (1 - floor) / (1 + exp(slope (ln m - midpoint)))``: a free logistic in ``ln m``.

    ``ValueError`` for ``m < 1``, non-finite input or a floor outside ``[0, 1)``.
    """
    mm = _m_array(m)
    s = as_real(slope, "slope")
    t = as_real(midpoint, "midpoint")
    f = _floor(floor)
    return f + (1 - f) * special.expit(-s * (np.log(mm) - t))


@dataclass(frozen=True)
class CurveFit:
    """A binomial maximum-likelihood fit of an accuracy curve.

    ``family`` (``"eq26"`` or ``"logistic"``), ``params`` (``(a, b)`` or ``(slope,
    midpoint)``), ``loglik`` (nats, binomial, constants dropped), ``r2`` (of the fitted
    accuracies against the observed ones, unweighted; NaN when the observed accuracies do not
    vary) and ``floor``.
    """

    family: str
    params: tuple
    loglik: float
    r2: float
    floor: float

    def predict(self, m: ArrayLike) -> np.ndarray:
        """The fitted accuracy at ``m`` (array shaped as ``m``)."""
        fn = eq26_accuracy if self.family == "eq26" else logistic_accuracy
        return fn(m, *self.params, floor=self.floor)


def _loglik(p: np.ndarray, k: np.ndarray, n: np.ndarray) -> float:
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(np.sum(k * np.log(p) + (n - k) * np.log1p(-p)))


def fit_accuracy_curves(m: ArrayLike, correct: ArrayLike, total: ArrayLike,
                        floor: float = 0.0) -> dict[str, CurveFit]:
    """Fit :func:`eq26_accuracy` and :func:`logistic_accuracy` to recall counts.

    Parameters
    ----------
    m : array_like, shape (K,)
        Stored pairs at each point, ``>= 1``, at least three distinct values.
    correct, total : array_like of int, shape (K,)
        Correct answers and queries at each point, ``0 <= correct <= total``, ``total >= 1``.
    floor : float
        Chance accuracy (``1 / vocab``), in ``[0, 1)``.

    Returns
    -------
    dict
        ``{"eq26": CurveFit, "logistic": CurveFit}``. Each is the best of several starts of a
        Nelder-Mead search over unconstrained parameters (``log a``, ``log b`` for Eq. 26).

    Raises
    ------
    ValueError
        If the arrays differ in shape, are not 1-d, hold booleans or fewer than three distinct
        ``m``, a count is out of range, or every answer is correct (or every one wrong).
    """
    mm = _m_array(m)
    _refuse_bool(correct, "correct")
    _refuse_bool(total, "total")
    k = np.asarray(correct, dtype=float)
    n = np.asarray(total, dtype=float)
    if mm.ndim != 1 or k.shape != mm.shape or n.shape != mm.shape:
        raise ValueError(f"m, correct and total must be 1-d of one length; got shapes "
                         f"{mm.shape}, {k.shape}, {n.shape}")
    if len(np.unique(mm)) < 3:
        raise ValueError("need at least three distinct m to fit two constants")
    if (not np.all(np.isfinite(k)) or np.any(n < 1) or np.any(k < 0) or np.any(k > n)
            or np.any(k != np.round(k)) or np.any(n != np.round(n))):
        raise ValueError("counts must be integers with 0 <= correct <= total and total >= 1")
    if np.all(k == n) or np.all(k == 0):
        raise ValueError("every query is answered correctly (or every one wrongly): the "
                         "maximum-likelihood curve is at its boundary and its constants are "
                         "not determined")
    f = _floor(floor)
    acc = k / n

    def r2(pred):
        ss = float(np.sum((acc - acc.mean()) ** 2))
        return float(1 - np.sum((acc - pred) ** 2) / ss) if ss > 0 else float("nan")

    fits = {}
    specs = {
        "eq26": (lambda th: eq26_accuracy(mm, np.exp(th[0]), np.exp(th[1]), f),
                 [(np.log(a0), np.log(b0)) for a0 in (1.0, 3.0, 10.0) for b0 in (1e-3, 1e-1, 1.0)],
                 lambda th: (float(np.exp(th[0])), float(np.exp(th[1])))),
        "logistic": (lambda th: logistic_accuracy(mm, th[0], th[1], f),
                     [(s0, t0) for s0 in (0.5, 2.0) for t0 in np.log([4.0, 64.0, 1024.0])],
                     lambda th: (float(th[0]), float(th[1]))),
    }
    for family, (curve, starts, params) in specs.items():
        best = None
        for x0 in starts:
            res = optimize.minimize(lambda th: -_loglik(curve(th), k, n), np.asarray(x0, float),
                                    method="Nelder-Mead",
                                    options=dict(xatol=1e-10, fatol=1e-10, maxiter=4000))
            if best is None or res.fun < best.fun:
                best = res
        pred = curve(best.x)
        fits[family] = CurveFit(family, params(best.x), -float(best.fun), r2(pred), f)
    return fits
