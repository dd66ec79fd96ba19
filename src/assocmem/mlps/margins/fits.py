"""Least-squares fits of the theory curves to measured margins, with non-negative constants.

Seed 001 ("MLPs are Hebbians", Sec. 4.2, App. A.3.2 and A.4.2) fits the absolute constants of
each margin bound to a sweep of measured ``gamma_min`` by least squares with non-negative
constants and reports ``R^2``. :data:`THEORY_FORMS` names every fittable curve of
:mod:`~assocmem.mlps.margins.bounds` as a :class:`TheoryForm` (its function, covariates, the
constants with their theorem values, the constants fitted by default, the equation);
:func:`fit_theory_curve` fits one by bounded trust-region least squares from a few starting
points and returns a :class:`TheoryFit` (constants, ``R^2``, RMSE, the fitted curve as a
callable); :func:`covariates_from_statistics` stacks a sweep of
:class:`~assocmem.mlps.margins.geometry.GeometryStatistics` (and, given the width, the penalties
of :mod:`~assocmem.mlps.margins.penalties`) into covariate arrays; :func:`r_squared` is the
coefficient of determination. Chapter 12 (How margins scale) uses them, directly and through the
sweep fits of :mod:`assocmem.mlps.margin_sweeps`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_int, as_real
from assocmem.mlps.margins._common import _arr
from assocmem.mlps.margins.bounds import (
    arbitrary_bound,
    arbitrary_keys_bound,
    arbitrary_values_bound,
    isotropic_bound,
    isotropic_bound_eq56,
    noisy_margin_bound,
    penalty_bound,
)
from assocmem.mlps.margins.geometry import GeometryStatistics
from assocmem.mlps.margins.penalties import penalty_statistics

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "THEORY_FORMS",
    "TheoryForm",
    "TheoryFit",
    "fit_theory_curve",
    "covariates_from_statistics",
    "r_squared",
]


def _penalty_curve(s_sig, p_key, p_val, p_align, F, m, d, *, C_s=0.5, C_x=1.0):
    return penalty_bound(s_sig, p_key, p_val, p_align, F, m, d, C_s=C_s, C_x=C_x)


@dataclass(frozen=True)
class TheoryForm:
    """One fittable theory curve: its function, covariates and constants."""

    func: Callable[..., np.ndarray]  # curve(**covariates, **constants) -> predicted gamma_min
    covariates: tuple[str, ...]  # keyword names of the per-point inputs
    constants: Mapping[str, float]  # every constant with its theorem (default) value
    default_free: tuple[str, ...]  # constants fitted unless `free` says otherwise
    reference: str  # equation / theorem in seed 001


#: The fittable theory curves: name -> (function, covariate names, constant defaults, default
#: free constants, reference). ``delta`` is a fixed constant, never fitted.
THEORY_FORMS: Mapping[str, TheoryForm] = MappingProxyType(
    {
        "isotropic": TheoryForm(
            isotropic_bound,
            ("F", "m", "d"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_s", "C_x", "C_L"),
            "eq. 9 / Cor. B.31 / Table 2 (random keys, random values)",
        ),
        "isotropic_eq56": TheoryForm(
            isotropic_bound_eq56,
            ("F", "m", "d"),
            MappingProxyType(
                {
                    "C_s": 1.0,
                    "C_1": 1.0,
                    "C_2": 1.0,
                    "C_3": 1.0,
                    "C_4": 1.0,
                    "C_L": 1.0,
                    "delta": 0.5,
                }
            ),
            ("C_s", "C_1", "C_2", "C_3", "C_4"),
            "eq. 56 (Theorem B.30)",
        ),
        "keys": TheoryForm(
            arbitrary_keys_bound,
            ("k_min_diag", "k_max_off", "e_k", "F", "d"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0, "C_v": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_s", "C_x"),
            "eq. 46 (Theorem B.28) / Table 2 (arbitrary keys, random values)",
        ),
        "values": TheoryForm(
            arbitrary_values_bound,
            ("v_min", "b_y", "e_v", "l_v", "F", "m"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0, "C_k": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_s", "C_x"),
            "eq. 51 (Theorem B.29) / Table 2 (random keys, arbitrary values)",
        ),
        "both": TheoryForm(
            arbitrary_bound,
            ("k_min_diag", "v_min", "e_k", "e_v", "kappa"),
            MappingProxyType({"C_s": 1.0, "C_x": 1.0}),
            ("C_s", "C_x"),
            "eq. 44 (Theorem B.25) / Table 2 (arbitrary keys, arbitrary values)",
        ),
        "penalty": TheoryForm(
            _penalty_curve,
            ("s_sig", "p_key", "p_val", "p_align", "F", "m", "d"),
            MappingProxyType({"C_s": 0.5, "C_x": 1.0}),
            ("C_s", "C_x"),
            "eq. 10 / Cor. B.26",
        ),
        "noisy": TheoryForm(
            noisy_margin_bound,
            ("gamma_clean", "eps", "F", "d"),
            MappingProxyType({"C_n": 1.0, "C_L": 1.0, "delta": 0.5}),
            ("C_n",),
            "eq. 74 (Cor. B.63)",
        ),
    }
)


def r_squared(observed: ArrayLike, predicted: ArrayLike) -> float:
    """Coefficient of determination ``R^2 = 1 - SS_res / SS_tot``.

    Parameters
    ----------
    observed, predicted : array-like, same shape
        At least two points.

    Returns
    -------
    float
        ``nan`` when the observations are constant (``SS_tot = 0``).

    Raises
    ------
    ValueError
        Shape mismatch, fewer than two points or non-finite input.
    """
    y = _arr(observed, "observed").ravel()
    p = _arr(predicted, "predicted").ravel()
    if y.shape != p.shape:
        raise ValueError(f"observed and predicted differ in size: {y.size} vs {p.size}")
    if y.size < 2:
        raise ValueError("R^2 needs at least two points")
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0.0:
        return math.nan
    return 1.0 - float(np.sum((y - p) ** 2)) / ss_tot


@dataclass(frozen=True)
class TheoryFit:
    """A theory curve with fitted constants.

    Call it (or :meth:`predict`) with the form's covariates as keywords to evaluate the fitted
    curve, e.g. ``fit(F=F, m=512, d=64)``.
    """

    form: str  # key of THEORY_FORMS
    constants: Mapping[str, float]  # every constant of the curve, fitted and fixed (read-only)
    free: tuple[str, ...]  # names of the fitted constants
    r2: float  # R^2 of the fit on the data it was fitted to
    rmse: float  # root-mean-square residual
    n_points: int  # number of data points
    success: bool  # the optimiser reported convergence
    curve: Callable[..., np.ndarray] = field(repr=False)  # the form with the constants bound

    def predict(self, **covariates: ArrayLike) -> np.ndarray:
        """Evaluate the fitted curve at the given covariates (see :data:`THEORY_FORMS`)."""
        missing = set(THEORY_FORMS[self.form].covariates) - set(covariates)
        if missing:
            raise ValueError(f"missing covariates for form {self.form!r}: {sorted(missing)}")
        return self.curve(**covariates)

    __call__ = predict


def covariates_from_statistics(
    stats: Sequence[GeometryStatistics], width: int | Sequence[int] | None = None
) -> dict[str, np.ndarray]:
    """Stack a sweep of :class:`GeometryStatistics` into covariate arrays for a fit.

    Parameters
    ----------
    stats : sequence of GeometryStatistics
        One per sweep point.
    width : int or sequence of int, optional
        Feature width ``m >= 1`` (scalar or one per point; integers, integral floats accepted,
        booleans refused); adds ``"m"`` and the penalty covariates ``s_sig, p_key, p_val,
        p_align``.

    Returns
    -------
    dict of str to ndarray
        Every statistic field plus ``"F"`` and ``"d"`` (and ``"m"``, penalties), shape ``(n,)``.

    Raises
    ------
    ValueError
        An empty sequence, a ``width`` that is not a positive integer (or a sequence of them) of
        the right length, or (with ``width``) a point where a penalty is undefined (``S_sig``
        needs ``d > log F``).
    """
    stats = list(stats)
    if not stats or not all(isinstance(s, GeometryStatistics) for s in stats):
        raise ValueError("stats must be a non-empty sequence of GeometryStatistics")
    out = {
        f.name: np.array([getattr(s, f.name) for s in stats], dtype=np.float64)
        for f in fields(GeometryStatistics)
    }
    out["F"] = out.pop("num_facts")
    out["d"] = out.pop("dim")
    if width is not None:
        arr = np.asarray(width, dtype=object)
        if arr.ndim == 0:
            arr = np.full(len(stats), width, dtype=object)
        if arr.shape != (len(stats),):
            raise ValueError(f"width must be a scalar or have {len(stats)} entries; got {arr.shape}")
        widths = [as_int(w, "width", minimum=1) for w in arr]
        ms = np.asarray(widths, dtype=np.float64)
        out["m"] = ms
        pens = [penalty_statistics(s, m) for s, m in zip(stats, widths)]
        for name in ("s_sig", "p_key", "p_val", "p_align"):
            out[name] = np.array([getattr(p, name) for p in pens])
    return out


def fit_theory_curve(
    form: str,
    gamma: ArrayLike,
    covariates: Mapping[str, object],
    *,
    free: Sequence[str] | None = None,
    fixed: Mapping[str, float] | None = None,
) -> TheoryFit:
    """Fit a theory curve's constants to measured margins by bounded least squares.

    Every fitted constant is constrained to ``[0, inf)`` (the theorems' constants are
    non-negative); non-fitted constants take their theorem values unless given in ``fixed``.
    The fit runs :func:`scipy.optimize.least_squares` (trust-region reflective) from a few
    starting points (several ``C_L`` when it is free) and keeps the best.

    Parameters
    ----------
    form : str
        A key of :data:`THEORY_FORMS`: ``"isotropic"`` (eq. 9), ``"isotropic_eq56"`` (eq. 56),
        ``"keys"`` (eq. 46), ``"values"`` (eq. 51), ``"both"`` (eq. 44), ``"penalty"`` (eq. 10),
        ``"noisy"`` (eq. 74).
    gamma : array-like, shape ``(n,)``
        Measured ``gamma_min`` per sweep point (``n >= 2``).
    covariates : mapping of str to array-like
        The form's covariates (e.g. ``F``, ``m``, ``d`` for ``"isotropic"``), each a scalar or
        ``(n,)``; :func:`covariates_from_statistics` builds them from a sweep of statistics.
    free : sequence of str, optional
        Constants to fit; default the form's ``default_free`` (``C_s, C_x, C_L`` for
        ``"isotropic"``, ``C_s, C_x`` for the Table 2 forms, whose ``L`` is constant along a
        fixed-``F`` spike sweep). ``delta`` cannot be fitted.
    fixed : mapping of str to float, optional
        Values for constants that are not fitted (e.g. ``{"C_L": 1.0, "delta": 0.5}``).

    Returns
    -------
    TheoryFit

    Raises
    ------
    ValueError
        An unknown form or constant, missing covariates, a constant both free and fixed, a
        ``fixed`` value that is not a finite real number (a bool or a string), fewer data points
        than free constants, or data that is not finite real numbers.

    References
    ----------
    Seed 001, Sec. 4.2 (R^2 of the theory curves), App. A.3.2 and A.4.2
    (fitted curves: ``C_s - C_x sqrt(F L / (m d))``, ``L = log(C_L F^2 / 0.5)``, non-negative
    constants by least squares).
    """
    from scipy.optimize import least_squares

    if form not in THEORY_FORMS:
        raise ValueError(f"unknown form {form!r}; choose one of {sorted(THEORY_FORMS)}")
    spec = THEORY_FORMS[form]
    y = _arr(gamma, "gamma").ravel()
    n = y.size
    missing = [c for c in spec.covariates if c not in covariates]
    if missing:
        raise ValueError(
            f"form {form!r} needs covariates {list(spec.covariates)}; missing {missing}"
        )
    cov = {}
    for name in spec.covariates:
        a = _arr(covariates[name], name)
        if a.ndim == 0:
            a = np.full(n, float(a))
        a = a.ravel()
        if a.size != n:
            raise ValueError(f"covariate {name!r} has {a.size} entries; gamma has {n}")
        cov[name] = a
    free = tuple(spec.default_free if free is None else free)
    fixed = dict(fixed or {})
    names = set(spec.constants)
    for c in (*free, *fixed):
        if c not in names:
            raise ValueError(f"unknown constant {c!r} for form {form!r}; known: {sorted(names)}")
    if "delta" in free:
        raise ValueError("delta is a fixed failure probability, not a fitted constant")
    if len(set(free)) != len(free) or set(free) & set(fixed):
        raise ValueError("each constant must be either free (once) or fixed")
    if len(free) == 0:
        raise ValueError("nothing to fit: free is empty")
    if n < max(2, len(free)):
        raise ValueError(
            f"need at least {max(2, len(free))} points to fit {len(free)} constants; got {n}"
        )
    base = {k: v for k, v in spec.constants.items() if k not in free}
    base.update({k: as_real(v, f"fixed[{k!r}]") for k, v in fixed.items()})

    def model(x):
        return np.asarray(spec.func(**cov, **base, **dict(zip(free, x))), dtype=np.float64)

    def resid(x):
        return model(x) - y

    starts = []
    x0 = np.array([max(float(spec.constants[c]), 0.0) for c in free])
    if "C_L" in free:
        for cl in (1.0, 30.0, 1e3):
            s = x0.copy()
            s[free.index("C_L")] = cl
            starts.append(s)
    else:
        starts.append(x0)
    best = None
    for s in starts:
        with np.errstate(divide="ignore"):  # scipy's trust-region step on a zero norm recovers
            res = least_squares(resid, s, bounds=(0.0, np.inf), method="trf", x_scale="jac",
                                xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=20000)
        if best is None or res.cost < best.cost:
            best = res
    fitted = dict(zip(free, (float(v) for v in best.x)))
    consts = {k: fitted.get(k, base.get(k)) for k in spec.constants}
    pred = model(best.x)
    return TheoryFit(
        form=form,
        constants=MappingProxyType(consts),
        free=free,
        r2=r_squared(y, pred),
        rmse=float(np.sqrt(np.mean((pred - y) ** 2))),
        n_points=n,
        success=bool(best.success),
        curve=functools.partial(spec.func, **consts),
    )
