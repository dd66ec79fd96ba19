"""The figures of chapter 33 (signal, noise and optimal radii), one function per figure.

Each function takes data the chapter has computed (the SNR of a read, the three optimality
criteria against the radius, the critical-distance optimum against the number of patterns, the
beta of each optimum), draws it with the house style (:mod:`assocmem.plotting`) and returns the
:class:`matplotlib.figure.Figure`. Nothing is computed here beyond what drawing needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color, use_style, require_frame

__all__ = ["snr_figure", "criteria_figure", "cd_optimum_figure", "learnt_band_figure"]


def _need_columns(frame, columns, name: str) -> None:
    require_frame(frame, columns, name)
    if frame.empty:
        raise ValueError(f"{name} is empty: there is nothing to draw")


def snr_figure(
    radius_curves: pd.DataFrame,
    simulated: pd.DataFrame,
    pattern_curves: Mapping[int, pd.DataFrame],
    *,
    n: int,
    m: int,
    d_snr: int,
    trials: int,
    r_label: str = "$10^4$",
) -> plt.Figure:
    """The SNR of one read bit against the radius and the number of patterns (the paper's Fig. 16).

    Parameters
    ----------
    radius_curves : DataFrame
        Indexed by the radius d (bits), with the columns ``"eq25"`` (Eq. 25), ``"orthogonal"``
        (Eq. 25 with every other pattern at n/2) and ``"exact"`` (exact moments), at ``m``
        patterns. Drawn as three curves in the top panel.
    simulated : DataFrame
        Indexed by ``(d, m)``, with the columns ``"simulated"`` (the simulated SNR) and
        ``"stderr"`` (its standard error). The rows at ``m`` are drawn in the top panel, the rows
        of each radius in ``pattern_curves`` in the bottom one, as points with two standard errors.
    pattern_curves : mapping of int to DataFrame
        For each radius d (at most two, coloured blue and green), a frame indexed by the number of
        patterns with the columns ``"eq25"`` and ``"exact"``; the bottom panel, log x axis.
    n, m : int
        The address length and the number of patterns of the top panel (its title).
    d_snr : int
        The SNR-optimal radius, marked by a dotted vertical line.
    trials : int
        The number of simulated trials (legend).
    r_label : str, default "$10^4$"
        The number of neurons as the title shows it.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the top one has four lines (Eq. 25, orthogonal, exact, the d* marker) and the
        simulated points; the bottom one two lines per radius.

    Raises
    ------
    TypeError, ValueError
        If a frame is not a DataFrame, lacks a column or is empty, or ``pattern_curves`` holds
        no radius or more than two.
    """
    _need_columns(radius_curves, ["eq25", "orthogonal", "exact"], "radius_curves")
    _need_columns(simulated, ["simulated", "stderr"], "simulated")
    if not isinstance(pattern_curves, Mapping) or not 1 <= len(pattern_curves) <= 2:
        raise ValueError("pattern_curves must map one or two radii to frames of eq25 and exact")
    for d, curve in pattern_curves.items():
        _need_columns(curve, ["eq25", "exact"], f"pattern_curves[{d}]")
    use_style()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7.0, 8.0))
    dense = radius_curves.index.to_numpy()
    ax1.plot(dense, radius_curves.eq25, color=color("vermillion"), label="Eq. 25")
    ax1.plot(dense, radius_curves.orthogonal, ":", color=color("orange"),
             label="Eq. 25, others at $n/2$")
    ax1.plot(dense, radius_curves.exact, "--", color=color("black"), label="exact moments")
    at_m = simulated.xs(m, level="m")
    ax1.errorbar(at_m.index, at_m.simulated, yerr=2 * at_m.stderr, fmt="o", ms=4,
                 color=color("blue"), capsize=2,
                 label=f"simulation ($\\pm$2 SE, {trials} trials)")
    ax1.axvline(d_snr, color="0.6", lw=0.8, ls=":")
    ax1.text(d_snr, 0.98, r" $d^\ast$ (SNR)", transform=ax1.get_xaxis_transform(),
             va="top", fontsize=8, color="0.4")
    ax1.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax1.set_xlabel("read/write radius $d$ (bits)")
    ax1.set_ylabel("SNR of one read bit (mean / s.d. of $z$)")
    ax1.set_title(f"$n$ = {n}, $r$ = {r_label}, $m$ = {m}")
    ax1.legend(fontsize=8, loc="upper left")

    radii_simulated = set(simulated.index.get_level_values("d"))
    for (d, curve), c in zip(pattern_curves.items(), ("blue", "green")):
        ms = curve.index.to_numpy()
        ax2.plot(ms, curve.eq25, color=color(c), label=f"Eq. 25, $d$ = {d}")
        ax2.plot(ms, curve.exact, "--", color=color(c), label=f"exact, $d$ = {d}")
        if d in radii_simulated:
            pts = simulated.xs(d, level="d")
            ax2.errorbar(pts.index, pts.simulated, yerr=2 * pts.stderr, fmt="o", ms=4,
                         color=color(c), capsize=2)
    ax2.set_xscale("log")
    ax2.set_xlabel("number of stored patterns $m$")
    ax2.set_ylabel("SNR of one read bit")
    ax2.set_title("points: simulation ($\\pm$2 SE)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


_CRITERIA = ("snr", "memory", "critical_distance")
_CRITERION_LABELS = ("SNR (Eq. 25)", "capacity (Eq. 26), patterns", "critical distance (bits)")


def criteria_figure(
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    optimum: Mapping[tuple[str, str], int],
    n: Mapping[str, int],
) -> plt.Figure:
    """The three optimality criteria against the radius in two settings (the paper's Table 1).

    Parameters
    ----------
    curves : mapping of str to mapping
        For each setting (a column of the figure, in order; ``"canonical"``, ``"attention"``), a
        mapping with ``"d"`` (the radii, bits) and one sequence per criterion, ``"snr"`` (Eq. 25),
        ``"memory"`` (Eq. 26, patterns) and ``"critical_distance"`` (bits), each as long as
        ``"d"``. Values <= 0 (no capacity, no critical distance) are left out of the curve.
    optimum : mapping of (setting, criterion) to int
        The tabulated optimal radius, drawn as a dashed vertical line with a legend entry.
    n : mapping of str to int
        The address length of each setting (column titles).

    Returns
    -------
    matplotlib.figure.Figure
        A 3 x (number of settings) grid; each axes has one curve and one dashed line. Capacity,
        and the SNR of the attention setting, are on log axes.

    Raises
    ------
    ValueError
        If a setting lacks a criterion, a curve's length differs from its radii, or an optimum
        or an ``n`` is missing.
    """
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError("curves must map at least one setting to its radii and criteria")
    for name, entry in curves.items():
        missing = [k for k in ("d", *_CRITERIA) if k not in entry]
        if missing:
            raise ValueError(f"curves[{name!r}] lacks {missing}")
        if any(len(entry[c]) != len(entry["d"]) for c in _CRITERIA):
            raise ValueError(f"curves[{name!r}]: every criterion needs one value per radius")
        absent = [c for c in _CRITERIA if (name, c) not in optimum]
        if absent or name not in n:
            raise ValueError(f"setting {name!r} lacks an optimum ({absent}) or its n")
    use_style()
    fig, axes = plt.subplots(3, len(curves), figsize=(7.5, 8.4), sharex="col", squeeze=False)
    for col, (name, entry) in enumerate(curves.items()):
        ds = np.asarray(entry["d"])
        for row, crit in enumerate(_CRITERIA):
            ax = axes[row, col]
            v = np.asarray(entry[crit], dtype=float)
            ax.plot(ds, np.where(v > 0, v, np.nan), "o-", ms=3, color=color(row))
            d_star = optimum[name, crit]
            ax.axvline(d_star, color="0.4", lw=0.9, ls="--", label=f"$d^\\ast$ = {d_star}")
            if crit == "memory" or (crit == "snr" and name == "attention"):
                ax.set_yscale("log")
            if col == 0:
                ax.set_ylabel(_CRITERION_LABELS[row])
            ax.legend(fontsize=8, loc="lower right" if crit == "critical_distance" else "best")
            if row == 2:
                ax.set_xlabel("read/write radius $d$ (bits)")
        axes[0, col].set_title(f"{name}: $n$ = {n[name]}")
    fig.subplots_adjust(hspace=0.2, wspace=0.3)
    return fig


def cd_optimum_figure(
    cd: pd.DataFrame, band: tuple[float, float] = (16, 22), m_max: int = 512
) -> plt.Figure:
    """The critical-distance optimum against the number of patterns (the paper's Fig. 17c).

    Parameters
    ----------
    cd : DataFrame
        Indexed by the number of stored patterns m, with the columns ``"smallest"`` and
        ``"crossing"`` (the optimal radius under the two tie-breaks, bits), ``"tie_lo"`` and
        ``"tie_hi"`` (the smallest and largest tied radius) and ``"cd"`` (the critical distance
        reached, bits).
    band : (float, float), default (16, 22)
        The paper's range of the optimum, shaded.
    m_max : int, default 512
        The largest m the paper's range covers, a dotted vertical line.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes sharing a log2 x axis: the top one has the two tie-breaks' optima (two lines),
        the tied radii (vertical bars, clipped at 30) and the band; the bottom one the critical
        distance (one line).

    Raises
    ------
    TypeError, ValueError
        If ``cd`` is not a DataFrame, lacks a column or is empty, or ``band`` is not ``lo < hi``.
    """
    _need_columns(cd, ["smallest", "crossing", "tie_lo", "tie_hi", "cd"], "cd")
    lo, hi = band
    if not lo < hi:
        raise ValueError(f"band must be (lo, hi) with lo < hi, got {band!r}")
    use_style()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7.0, 7.6), sharex=True)
    ax1.axhspan(lo, hi, color=color("yellow"), alpha=0.35, lw=0,
                label=f"paper: {lo} to {hi} ($m \\leq {m_max}$)")
    ax1.vlines(cd.index, cd.tie_lo, np.minimum(cd.tie_hi, 30), color="0.75", lw=3,
               label="all tied radii (clipped at 30)")
    ax1.plot(cd.index, cd.smallest, "o-", ms=3.5, color=color("blue"),
             label="ties to the smaller radius (default)")
    ax1.plot(cd.index, cd.crossing, "s--", ms=3.5, mfc="none", color=color("vermillion"),
             label="ties by the crossing")
    ax1.axvline(m_max, color="0.5", lw=0.8, ls=":")
    ax1.set_xscale("log", base=2)
    ax1.set_ylim(10, 31)
    ax1.set_ylabel(r"$d^\ast_{\mathrm{CD}}$ (bits), $n$ = 64, $r = 2^{64}$")
    ax1.legend(fontsize=7.5, loc="upper left")
    ax2.plot(cd.index, cd.cd, "o-", ms=3.5, color=color("green"))
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("number of stored patterns $m$")
    ax2.set_ylabel("critical distance at $d^\\ast$ (bits)")
    return fig


def learnt_band_figure(
    betas: pd.DataFrame,
    band: Mapping[str, float],
    near: Sequence[float],
    extra: tuple[int, float] | None = None,
) -> plt.Figure:
    """The beta of each optimum in both conventions against the learnt QK-norm band (Fig. 4).

    Parameters
    ----------
    betas : DataFrame
        Indexed by ``"CD"``, ``"SNR"`` and ``"Mem"``, with the columns ``"d"`` (the optimal
        radius), ``"beta_ols"`` (least squares, circles on the upper row) and
        ``"beta_authors"`` (the authors' convention, squares on the lower row).
    band : mapping
        The learnt band: ``"lo"``, ``"hi"`` (shaded), ``"median"`` (dashed), ``"mean"``
        (dotted) and ``"count"`` (legend).
    near : sequence of float
        The least-squares beta of the radii within 1% of the best capacity, a faint bar from its
        smallest value to the right edge of the axes (38).
    extra : (int, float), optional
        One more radius and its least-squares beta, an open circle labelled ``d = ...``.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: the shaded band, two vertical lines (median, mean), six markers (one per
        optimum and convention), the bar and the optional open circle.

    Raises
    ------
    TypeError, ValueError
        If ``betas`` is not a DataFrame, lacks a column or an optimum, ``band`` lacks a key or
        has ``lo >= hi``, or ``near`` is empty.
    """
    _need_columns(betas, ["d", "beta_ols", "beta_authors"], "betas")
    absent = [c for c in ("CD", "SNR", "Mem") if c not in betas.index]
    if absent:
        raise ValueError(f"betas lacks the optimum/optima {absent}")
    lacking = [k for k in ("lo", "hi", "median", "mean", "count") if k not in band]
    if lacking or not band.get("lo", 1) < band.get("hi", 0):
        raise ValueError(f"band needs lo < hi, median, mean and count; lacking {lacking}")
    if len(near) == 0:
        raise ValueError("near must hold at least one beta")
    use_style()
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    ax.axvspan(band["lo"], band["hi"], color=color("sky"), alpha=0.3, lw=0,
               label=f"learnt QK-norm $\\beta$ ({band['count']} heads, range)")
    ax.axvline(band["median"], color=color("sky"), lw=1.5, ls="--", label="learnt median")
    ax.axvline(band["mean"], color=color("sky"), lw=1.5, ls=":", label="learnt mean")
    for crit, c in (("CD", "green"), ("SNR", "blue"), ("Mem", "vermillion")):
        ax.plot(betas.loc[crit, "beta_ols"], 1, "o", ms=8, color=color(c))
        ax.plot(betas.loc[crit, "beta_authors"], 0, "s", ms=8, mfc="none", mew=1.6,
                color=color(c))
        ax.annotate(
            f"$\\beta_{{\\mathrm{{{crit}}}}}$ ($d$ = {int(betas.loc[crit, 'd'])})",
            (betas.loc[crit, "beta_ols"], 1), xytext=(0, 9), textcoords="offset points",
            ha="center", fontsize=9,
        )
    ax.plot([min(near), 38], [1, 1], "-", lw=6, alpha=0.25, color=color("vermillion"),
            solid_capstyle="butt", label="Mem: radii within 1% of the best capacity")
    if extra is not None:
        d, beta = extra
        ax.plot(beta, 1, "o", ms=6, mfc="none", color=color("vermillion"))
        ax.annotate(f"$d$ = {d}", (beta, 1), xytext=(0, -14), textcoords="offset points",
                    ha="center", fontsize=8)
    ax.set_yticks([0, 1], ["authors' convention", "least squares"])
    ax.set_ylim(-0.6, 2.3)
    ax.set_xlim(7, 38)
    ax.set_xlabel(r"inverse temperature $\beta$ ($n$ = 64, Attention setting)")
    ax.grid(axis="y", visible=False)
    ax.legend(fontsize=7.5, loc="upper center", ncol=2)
    return fig
