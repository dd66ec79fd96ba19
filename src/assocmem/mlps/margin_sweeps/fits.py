"""Analysis of the stored margin sweeps: seed means, theory-curve fits, noisy-query degradation.

Chapter 12 (How margins scale) compares each stored sweep with the margin bounds of seed 001
("MLPs are Hebbians", Sec. 4.2, App. A.3.2, A.4.2, B.8, B.10.1) by the fits the paper reports:
eq. 9 and eq. 56 to the isotropic sweeps (:func:`fit_isotropic_sweep`, with the identifiable
constants of :data:`EQ9_SPECS` and :data:`EQ56_SPECS`), the cells of Table 2 and the penalty
form eq. 10 to the spike sweeps (:func:`fit_spike_sweep`, :data:`SPIKE_FREE`,
:func:`statistics_from_frame`) and eq. 74 to the noisy sweep (:func:`fit_noisy_sweep`), each a
:class:`SweepFit` with ``R^2`` over runs and over seed means (:func:`seed_means`). Whether the
noisy degradation is linear in ``eps`` is read from a per-replicate quadratic fit
(:func:`noisy_curvature`, a :class:`Curvature`) and from the smallest constant of eq. 74 at each
radius (:func:`smallest_noisy_constant`); :func:`log2_slope` gives a change per doubling.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from assocmem.mlps import margins as M
from assocmem.mlps._checks import real_array
from assocmem.mlps.margin_sweeps.points import SPIKE_FORMS

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "SweepFit",
    "fit_isotropic_sweep",
    "fit_spike_sweep",
    "fit_statistics_sweep",
    "fit_power_baseline",
    "BaselineFit",
    "fit_noisy_sweep",
    "seed_means",
    "statistics_from_frame",
    "Curvature",
    "noisy_curvature",
    "smallest_noisy_constant",
    "log2_slope",
    "SPIKE_FREE",
    "EQ9_SPECS",
    "EQ56_SPECS",
]


def seed_means(frame: pd.DataFrame, by: str | Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Mean of ``columns`` over replicates at each value of ``by`` (sorted by ``by``).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a sweep.
    by : str or sequence of str
        The grid column(s), e.g. ``"F"``.
    columns : sequence of str
        Numeric columns to average.

    Returns
    -------
    pandas.DataFrame
        One row per value of ``by``, with the means and ``n`` (rows averaged).
    """
    keys = [by] if isinstance(by, str) else list(by)
    grouped = frame.groupby(keys, sort=True)
    out = grouped[list(columns)].mean()
    out["n"] = grouped.size()
    return out.reset_index()


@dataclass(frozen=True)
class SweepFit:
    """A theory curve fitted to every run of a sweep, with ``R^2`` on runs and on seed means."""

    fit: M.TheoryFit  # the least-squares fit (constants, callable curve); fit.r2 is over runs
    r2_runs: float  # R^2 over every run (row)
    r2_means: float  # R^2 of the seed-averaged gamma_min against the seed-averaged prediction
    n_runs: int  # rows fitted
    n_points: int  # grid values (seed means)
    vary: str  # the control column ("F", "m", "beta" or "eps")
    means: pd.DataFrame  # per value of `vary`: gamma_min and the prediction averaged over seeds
    fixed: Mapping[str, float]  # covariates held fixed along an isotropic sweep (else empty)

    @property
    def constants(self) -> Mapping[str, float]:
        """The fitted and fixed constants of the curve."""
        return self.fit.constants

    def curve(self, values: ArrayLike) -> np.ndarray:
        """The fitted curve along the varied size of an isotropic sweep (e.g. a fine grid of ``F``).

        Raises
        ------
        ValueError
            For a sweep whose covariates vary from run to run (spike and noisy sweeps: use
            ``means["predicted"]``).
        """
        if not self.fixed:
            raise ValueError("curve() is defined for isotropic sweeps only; use means['predicted']")
        return np.asarray(self.fit(**{self.vary: np.asarray(values, dtype=float), **self.fixed}))


def _sweep_fit(fit: M.TheoryFit, frame: pd.DataFrame, by: str, gamma: str, predicted, fixed=None) -> SweepFit:
    work = pd.DataFrame({by: frame[by].to_numpy(), "gamma_min": frame[gamma].to_numpy(), "predicted": predicted})
    means = seed_means(work, by, ["gamma_min", "predicted"])
    return SweepFit(
        fit=fit,
        r2_runs=M.r_squared(work["gamma_min"], work["predicted"]),
        r2_means=M.r_squared(means["gamma_min"], means["predicted"]),
        n_runs=len(work),
        n_points=len(means),
        vary=by,
        means=means,
        fixed=dict(fixed or {}),
    )


#: Which constants of eq. 56 are fitted along each isotropic sweep. The signal is kept at the
#: theorem's 1 (eq. 56 has no signal constant; its value-coherence term eps_v = C_2 sqrt(L/(d-1))
#: is what brings the small-F margin down to about 0.5). Along an F-sweep C_1 sqrt(L/m) and C_2
#: sqrt(L/(d-1)) are both proportional to sqrt(L), and C_3 sqrt(L F/d^3) and C_4 sqrt(L F/(m d))
#: both to sqrt(L F), so one of each pair is fitted and the other fixed at 0: C_2, and C_3 for the
#: exact kernel (which has no sketch, C_1 = C_4 = 0) or C_4 for the sketch. Along an m-sweep L is
#: constant: C_1 and C_4 both multiply 1/sqrt(m) (C_4 is fitted), and the C_2 and C_3 terms are
#: one constant (C_2 is fitted).
EQ56_SPECS = {
    ("sketch", "F"): (("C_2", "C_4"), {"C_s": 1.0, "C_1": 0.0, "C_3": 0.0}),
    ("exact", "F"): (("C_2", "C_3"), {"C_s": 1.0, "C_1": 0.0, "C_4": 0.0}),
    ("sketch", "m"): (("C_2", "C_4"), {"C_s": 1.0, "C_1": 0.0, "C_3": 0.0}),
}
#: Constants fitted for eq. 9 in its fitted form C_s - C_x sqrt(F L / (m d)), L = log(C_L F^2 /
#: delta) with delta = 0.5 (the theorems hold for any delta in (0, 1); with C_L fitted only
#: C_L / delta is identifiable, so delta only rescales the reported C_L): all three along F;
#: along m, L is constant and C_L cannot be told from C_x.
EQ9_SPECS = {
    ("sketch", "F"): (("C_s", "C_x", "C_L"), {}),
    ("exact", "F"): (("C_s", "C_x", "C_L"), {}),
    ("sketch", "m"): (("C_s", "C_x"), {"C_L": 1.0}),
}


def fit_isotropic_sweep(frame: pd.DataFrame, form: str = "isotropic") -> SweepFit:
    """Fit eq. 9 (``"isotropic"``) or eq. 56 (``"isotropic_eq56"``) to an isotropic sweep.

    The sweep's kernel and varied size are read from its rows (columns ``kernel``, ``F``, ``m``,
    ``d``). For the exact kernel the width is its feature dimension ``m = d^2``
    (``K_2(x, z) = <x (x) x, z (x) z>``), which turns eq. 9's cross-talk term into eq. 56's
    ``C_3 sqrt(L F / d^3)``. Which constants are fitted is fixed by :data:`EQ9_SPECS` (eq. 9 in
    the fitted form ``C_s - C_x sqrt(F L / (m d))``) and :data:`EQ56_SPECS` (eq. 56 with its
    signal 1 and one constant per identifiable term). ``delta = 0.5`` throughout, a fixed
    convention: Theorems 4.1 and B.30 hold for every failure probability ``delta`` in ``(0, 1)``
    through ``L = log(C_0 F^2 / delta)``; where ``C_L`` is fitted (eq. 9) only ``C_L / delta``
    is identifiable, so ``delta`` changes the reported ``C_L`` and not the fitted curve.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_f_exact``, ``margin_f_sketch`` or ``margin_m_sketch``.
    form : {"isotropic", "isotropic_eq56"}

    Returns
    -------
    SweepFit

    Raises
    ------
    ValueError
        An unknown form, mixed kernels, or a frame without the needed columns.

    References
    ----------
    Seed 001, eq. 9 (Theorem 4.1, Cor. B.31), eq. 56 (Theorem B.30), App. A.3.2.
    """
    if form not in ("isotropic", "isotropic_eq56"):
        raise ValueError(f"form must be 'isotropic' or 'isotropic_eq56'; got {form!r}")
    kernels = set(frame["kernel"])
    if len(kernels) != 1:
        raise ValueError(f"one kernel per fit; got {sorted(kernels)}")
    kernel = kernels.pop()
    vary = "F" if frame["F"].nunique() > 1 else "m"
    d = frame["d"].to_numpy(dtype=float)
    m = d * d if kernel == "exact" else frame["m"].to_numpy(dtype=float)
    cov = {"F": frame["F"].to_numpy(dtype=float), "m": m, "d": d}
    free, fixed = (EQ9_SPECS if form == "isotropic" else EQ56_SPECS)[(kernel, vary)]
    fit = M.fit_theory_curve(form, frame["gamma_min"].to_numpy(), cov, free=free, fixed=fixed)
    held = {k: float(v[0]) for k, v in cov.items() if k != vary}
    return _sweep_fit(fit, frame, vary, "gamma_min", fit(**cov), fixed=held)


_STAT_COLUMNS = tuple(f.name for f in fields(M.GeometryStatistics) if f.name not in ("num_facts", "dim"))


#: Constants fitted for each Table 2 cell along a spike sweep: every absolute constant the data
#: can identify. F is fixed, so L is constant and C_L is redundant. Keys (eq. 46): the signal
#: coefficients of K_min^diag, C_s (1 - C_v sqrt(L/(d-1))), and of K_max^off, C_s, differ only
#: through C_v, so C_s, C_v and C_x are all identifiable. Values (eq. 51): C_s (1 - C_k
#: sqrt(L/m)) is one number, so C_k stays at 1. Both (eq. 44) and the penalty form (eq. 10): C_s
#: and C_x.
SPIKE_FREE = {
    "keys": ("C_s", "C_x", "C_v"),
    "values": ("C_s", "C_x"),
    "both": ("C_s", "C_x"),
    "penalty": ("C_s", "C_x"),
}


def statistics_from_frame(frame: pd.DataFrame) -> list[M.GeometryStatistics]:
    """The :class:`~assocmem.mlps.margins.GeometryStatistics` of every row of a spike sweep."""
    return [
        M.GeometryStatistics(num_facts=int(r["F"]), dim=int(r["d"]), **{c: float(r[c]) for c in _STAT_COLUMNS})
        for _, r in frame.iterrows()
    ]


def fit_spike_sweep(frame: pd.DataFrame, on: str, form: str = "table2", *,
                    free: Sequence[str] | None = None) -> SweepFit:
    """Fit a margin bound to a spike sweep's measured ``gamma_min``.

    ``form="table2"`` fits the Table 2 cell of the sweep: ``on="keys"``, eq. 46 (arbitrary keys,
    isotropic values); ``"values"``, eq. 51 (isotropic keys, arbitrary values); ``"both"``,
    eq. 44 (arbitrary keys and values). ``form="penalty"`` fits the general bound of Theorem 4.3,
    eq. 10, ``C_s S_sig - C_x P_key P_val P_align sqrt(F log F / (m d))``, which covers all three.
    The covariates are each run's own statistics; the fitted (non-negative) constants are those
    of :data:`SPIKE_FREE`, every other constant keeps its theorem value.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_spike_<on>`` (the statistics columns of :func:`spike_point`).
    on : {"keys", "values", "both"}
    form : {"table2", "penalty"}, default "table2"
    free : sequence of str, optional
        Constants to fit instead of :data:`SPIKE_FREE` (e.g. ``("C_s", "C_x")`` for the key cell).

    Returns
    -------
    SweepFit
        ``means`` is indexed by ``beta``.

    Raises
    ------
    ValueError
        An unknown ``on`` or ``form``, or missing columns.

    References
    ----------
    Seed 001, Sec. 4.2.2 (eq. 10), Table 2, eqs. 44, 46, 51; App. A.3.2 (Figure 5, ``R^2 >= 0.95``).
    """
    if on not in SPIKE_FORMS:
        raise ValueError(f"on must be one of {sorted(SPIKE_FORMS)}; got {on!r}")
    if form not in ("table2", "penalty"):
        raise ValueError(f"form must be 'table2' or 'penalty'; got {form!r}")
    if form == "penalty":
        theory, default = "penalty", SPIKE_FREE["penalty"]
    else:
        theory, default = SPIKE_FORMS[on], SPIKE_FREE[on]
    return fit_statistics_sweep(frame, theory, default if free is None else free, by="beta")


def fit_statistics_sweep(frame: pd.DataFrame, theory: str, free: Sequence[str], by: str) -> SweepFit:
    """Fit a margin bound whose covariates are each run's own geometric statistics.

    The general step behind :func:`fit_spike_sweep`, for any sweep whose rows carry the columns
    of :func:`~assocmem.mlps.margin_sweeps.points.statistics_row` (the spike sweeps, varying
    ``beta``; the sweeps on captured language-model activations, varying ``F``).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with ``gamma_min``, ``F``, ``m``, ``d`` and the statistics columns.
    theory : str
        A key of :data:`assocmem.mlps.margins.THEORY_FORMS`: ``"keys"`` (eq. 46), ``"values"``
        (eq. 51), ``"both"`` (eq. 44, arbitrary keys and values) or ``"penalty"`` (eq. 10).
    free : sequence of str
        The constants to fit (non-negative); the others keep their theorem values.
    by : str
        The column that varies along the sweep (the seed means are taken over it).

    Returns
    -------
    SweepFit

    Raises
    ------
    ValueError
        An unknown theory form, missing columns, or constants the form does not have.

    References
    ----------
    Seed 001, Table 2, eqs. 10, 44, 46, 51; App. A.3.2 and A.5.3 (Figure 12, ``R^2 >= 0.95``).
    """
    if theory not in M.THEORY_FORMS:
        raise ValueError(f"theory must be one of {sorted(M.THEORY_FORMS)}; got {theory!r}")
    missing = {"gamma_min", by, *_STAT_COLUMNS, "F", "m", "d"} - set(frame.columns)
    if missing:
        raise ValueError(f"the frame lacks the columns {sorted(missing)}")
    if theory == "penalty":
        cov = M.covariates_from_statistics(statistics_from_frame(frame), width=frame["m"].to_numpy())
    else:
        cov = {c: frame[c].to_numpy(dtype=float) for c in (*_STAT_COLUMNS, "F", "m", "d")}
    cov = {k: np.asarray(cov[k], dtype=float) for k in M.THEORY_FORMS[theory].covariates}
    fit = M.fit_theory_curve(theory, frame["gamma_min"].to_numpy(), cov, free=tuple(free))
    return _sweep_fit(fit, frame, by, "gamma_min", fit(**cov))


@dataclass(frozen=True)
class BaselineFit:
    """A geometry-free curve ``gamma = a - b x^c`` fitted to a sweep (:func:`fit_power_baseline`)."""

    a: float
    b: float  # >= 0
    c: float  # in [0, 4]
    r2_runs: float  # R^2 over every run
    r2_means: float  # R^2 of the seed means against the curve at each value of the control
    means: pd.DataFrame  # per value of the control: gamma_min and the curve, averaged over seeds


def fit_power_baseline(frame: pd.DataFrame, by: str = "F") -> BaselineFit:
    """Least-squares fit of ``gamma_min = a - b x^c`` (three constants, no theory) along ``by``.

    A baseline for the theory fits: eq. 9 also has three constants, and a bound "tracks" the
    margin in a sense that means something only if it fits better than a curve that knows
    nothing of the keys, the values or the width (chapter 17). Fitted to every run by
    :func:`scipy.optimize.curve_fit` (trust region, ``b >= 0``, ``0 <= c <= 4``), started from
    ``a`` the mean margin at the smallest ``x``, ``b = 0.01``, ``c = 1``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with ``gamma_min`` and the column ``by`` (positive values).
    by : str, default "F"

    Returns
    -------
    BaselineFit

    Raises
    ------
    ValueError
        Missing columns, non-positive or non-finite ``by``, non-finite margins, or fewer than
        four runs (three constants need more).
    """
    from scipy.optimize import curve_fit

    for col in (by, "gamma_min"):
        if col not in frame.columns:
            raise ValueError(f"the frame lacks the column {col!r}")
    x = real_array(frame[by].to_numpy(dtype=float), by)
    y = real_array(frame["gamma_min"].to_numpy(dtype=float), "gamma_min")
    if np.any(x <= 0):
        raise ValueError(f"{by} must be positive")
    if x.size < 4:
        raise ValueError(f"a three-constant fit needs at least four runs; got {x.size}")

    def curve(x, a, b, c):
        return a - b * x ** c

    start = (float(y[x == x.min()].mean()), 0.01, 1.0)
    # scipy's trust-region step divides by a zero norm on flat stretches and recovers; its
    # RuntimeWarning says nothing about the fit, which is judged by its R^2
    with np.errstate(divide="ignore"):
        (a, b, c), _ = curve_fit(curve, x, y, p0=start, bounds=([-np.inf, 0.0, 0.0], [np.inf, np.inf, 4.0]),
                                 method="trf", maxfev=20000)
    pred = curve(x, a, b, c)
    work = pd.DataFrame({by: x, "gamma_min": y, "predicted": pred})
    means = seed_means(work, by, ["gamma_min", "predicted"])
    return BaselineFit(a=float(a), b=float(b), c=float(c), r2_runs=M.r_squared(y, pred),
                       r2_means=M.r_squared(means["gamma_min"], means["predicted"]), means=means)


def fit_noisy_sweep(frame: pd.DataFrame) -> SweepFit:
    """Fit eq. 74, ``gamma(eps) = gamma_clean - C eps sqrt(F L / d)``, to the noisy sweep.

    Each run's own clean margin is the intercept; ``C = C_2 L_bil`` is the one fitted constant
    (``L = log(F^2 / 0.5)``, ``C_L = 1``).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_noisy``.

    Returns
    -------
    SweepFit
        ``means`` is indexed by ``eps``.

    References
    ----------
    Seed 001, App. A.4.2 (Figure 6); App. B.10.1, eq. 74.
    """
    cov = {
        "gamma_clean": frame["gamma_clean"].to_numpy(dtype=float),
        "eps": frame["eps"].to_numpy(dtype=float),
        "F": frame["F"].to_numpy(dtype=float),
        "d": frame["d"].to_numpy(dtype=float),
    }
    fit = M.fit_theory_curve("noisy", frame["gamma_min"].to_numpy(), cov)
    return _sweep_fit(fit, frame, "eps", "gamma_min", fit(**cov))


@dataclass(frozen=True)
class Curvature:
    """Per-replicate fit of the noisy-query degradation ``gamma_clean - gamma_min = a eps + b eps^2``."""

    a: np.ndarray  # (reps,) linear coefficients
    b: np.ndarray  # (reps,) quadratic coefficients
    b_mean: float  # mean of b over replicates
    b_sem: float  # its standard error, std(b, ddof=1) / sqrt(reps)
    reps: int  # replicates


def noisy_curvature(frame: pd.DataFrame) -> Curvature:
    """Least-squares ``a`` and ``b`` of ``gamma_clean - gamma_min(eps) = a eps + b eps^2`` per replicate.

    A degradation linear in ``eps`` (App. A.4.2) has ``b = 0``. No intercept: the degradation
    vanishes at ``eps = 0`` by construction.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_noisy`` (columns ``rep, eps, gamma_clean, gamma_min``).

    Returns
    -------
    Curvature

    Raises
    ------
    ValueError
        Fewer than two replicates (no standard error) or fewer than two radii per replicate.
    """
    a, b = [], []
    for _, g in frame.groupby("rep", sort=True):
        eps = g["eps"].to_numpy(dtype=float)
        if eps.size < 2:
            raise ValueError("need at least two radii per replicate")
        X = np.column_stack([eps, eps**2])  # (n, 2)
        coef, *_ = np.linalg.lstsq(X, (g["gamma_clean"] - g["gamma_min"]).to_numpy(dtype=float), rcond=None)
        a.append(coef[0])
        b.append(coef[1])
    if len(b) < 2:
        raise ValueError("need at least two replicates for a standard error")
    b_arr = np.asarray(b)
    return Curvature(np.asarray(a), b_arr, float(b_arr.mean()), float(b_arr.std(ddof=1) / math.sqrt(len(b))), len(b))


def smallest_noisy_constant(frame: pd.DataFrame, C_L: float = 1.0, delta: float = 0.5) -> pd.Series:
    """Per ``eps``, the smallest ``C`` with ``gamma_min(eps) >= gamma_clean - C eps sqrt(F L / d)`` on every run.

    Eq. 74 holds with one constant ``C = C_2 L_bil`` for all ``eps`` only if this series is
    bounded by it; a constant that grows with ``eps`` means the degradation is not linear.

    Returns
    -------
    pandas.Series
        Indexed by ``eps`` (sorted); ``max(0, gamma_clean - gamma_min) / (eps sqrt(F L / d))``
        maximised over replicates.
    """
    F, d, eps = (frame[c].to_numpy(dtype=float) for c in ("F", "d", "eps"))
    L = np.asarray(M.log_term(F, C_L, delta))
    scale = eps * np.sqrt(F * L / d)
    need = np.maximum(0.0, (frame["gamma_clean"] - frame["gamma_min"]).to_numpy(dtype=float)) / scale
    return pd.Series(need, index=frame["eps"].to_numpy()).groupby(level=0).max().sort_index()


def log2_slope(x: ArrayLike, y: ArrayLike) -> float:
    """Least-squares slope of ``y`` against ``log2(x)``: the change in ``y`` per doubling of ``x``.

    Raises
    ------
    ValueError
        ``x`` and ``y`` that are not 1-D arrays of finite real numbers of one length (booleans,
        strings, None and NaN refused), a non-positive ``x``, or fewer than two distinct ``x``.
    """
    x, y = real_array(x, "x"), real_array(y, "y")
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D of one length; got shapes {x.shape}, {y.shape}")
    if np.any(x <= 0):
        raise ValueError("x must be positive (its log2 is taken)")
    if np.unique(x).size < 2:
        raise ValueError("x needs at least two distinct values for a slope")
    return float(np.polyfit(np.log2(x), y, 1)[0])
