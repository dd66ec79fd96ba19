"""The figures of the chapter *How margins scale* (seed 001, Sec. 4.2, App. A.3.2, A.4.2, B.2.6),
one function per figure.

Each function takes the stored sweep frames of :mod:`assocmem.mlps.margin_sweeps` and the fits the
chapter made of them, draws with the house style and returns the
:class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from assocmem.mlps.margin_sweeps import seed_means
from assocmem.plotting import color
from assocmem.plotting import require_frame as _need

if TYPE_CHECKING:
    from assocmem.mlps.margin_sweeps.fits import SweepFit
    from matplotlib.figure import Figure

__all__ = ["isotropic_margins", "spike_margins", "noisy_margins", "bits_per_parameter"]

_TICKS = (32, 64, 128, 256, 512, 1024, 2048)




def _three_panels():
    fig, grid = plt.subplots(2, 2, figsize=(8.0, 6.8), layout="constrained")
    grid.flat[3].axis("off")  # three panels on a 2 x 2 grid
    return fig, grid.flat[:3]


def _check_panels(titles, frames, fits, forms):
    if len(titles) != 3:
        raise ValueError(f"titles must name three sweeps, got {len(titles)}")
    for key in titles:
        if key not in frames:
            raise ValueError(f"no frame for {key!r}")
        for form in forms:
            if (key, form) not in fits:
                raise ValueError(f"no {form!r} fit for {key!r}")


def isotropic_margins(frames: dict, fits: dict, titles: dict) -> Figure:
    """Smallest margin against ``F`` or ``m`` for the isotropic sweeps, with the eq. 9 and 56 fits.

    Mirrors the source's Fig. 2b and Fig. 4 (App. A.3.2).

    Parameters
    ----------
    frames : dict of str to pandas.DataFrame
        The stored runs of each sweep (columns ``gamma_min`` and the varied control).
    fits : dict of (str, str) to SweepFit
        :func:`assocmem.mlps.margin_sweeps.fit_isotropic_sweep` of each sweep with the forms
        ``"isotropic"`` (eq. 9) and ``"isotropic_eq56"`` (eq. 56); each has ``vary`` (``"F"`` or
        ``"m"``), ``means`` (seed means), ``curve`` and ``r2_means``.
    titles : dict of str to str
        The three sweeps to draw, in order, with the title of each panel.

    Returns
    -------
    matplotlib.figure.Figure
        Three axes (a fourth, empty, is hidden), log x: per panel the runs (grey dots), the seed
        means (blue dots), the eq. 9 fit (orange) and the eq. 56 fit (green, dashed), a line at 0.

    Raises
    ------
    ValueError
        If there are not three sweeps, or a frame or fit is missing.
    """
    _check_panels(titles, frames, fits, ("isotropic", "isotropic_eq56"))
    fig, axes = _three_panels()
    for ax, (n, title) in zip(axes, titles.items()):
        fr, f9, f56 = frames[n], fits[(n, "isotropic")], fits[(n, "isotropic_eq56")]
        x = f9.vary
        _need(fr, [x, "gamma_min"], f"frames[{n!r}]")
        ax.plot(fr[x], fr["gamma_min"], ".", color="0.6", ms=3, label="one run")
        ax.plot(f9.means[x], f9.means["gamma_min"], "o", color=color("blue"), ms=4,
                label="mean of 5 runs")
        grid = np.geomspace(fr[x].min(), fr[x].max(), 200)
        ax.plot(grid, f9.curve(grid), color=color("orange"),
                label=f"eq. 9 fit, $R^2$ = {f9.r2_means:.3f}")
        ax.plot(grid, f56.curve(grid), "--", color=color("green"),
                label=f"eq. 56 fit, $R^2$ = {f56.r2_means:.3f}")
        ax.axhline(0, color="black", lw=0.8)
        ax.set(xscale="log", title=title, ylabel=r"$\gamma_{\min}$ (kernel-Hebbian scale)",
               xlabel="number of facts $F$" if x == "F" else "hidden width $m$")
        ticks = [t for t in _TICKS if fr[x].min() <= t <= fr[x].max()]
        ax.set_xticks(ticks, labels=[str(t) for t in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.legend(fontsize=8, loc="lower left" if x == "F" else "lower right")
    return fig


def spike_margins(frames: dict, fits: dict, bounds: dict, titles: dict) -> Figure:
    """Smallest margin against the spike strength, with the Table 2 and eq. 10 fits and eq. 44.

    Mirrors the source's Fig. 5 (a: keys, b: values, c: both).

    Parameters
    ----------
    frames : dict of str to pandas.DataFrame
        The stored runs of each spike sweep, keyed ``"keys"``, ``"values"``, ``"both"`` (columns
        ``beta`` and ``gamma_min``).
    fits : dict of (str, str) to SweepFit
        :func:`assocmem.mlps.margin_sweeps.fit_spike_sweep` of each sweep with the forms
        ``"table2"`` and ``"penalty"`` (eq. 10); ``means`` has ``beta``, ``gamma_min`` and
        ``predicted``.
    bounds : dict of str to pandas.DataFrame
        Per sweep, eq. 44 with constants 1 in every run (columns ``beta``, ``bound``); drawn as
        its mean over the runs at each ``beta``.
    titles : dict of str to str
        The three sweeps to draw, in order, with the title of each panel.

    Returns
    -------
    matplotlib.figure.Figure
        Three axes (a fourth, empty, is hidden): per panel the runs (grey dots), the seed means
        (blue dots), the Table 2 fit (orange), the eq. 10 fit (green, dashed) and eq. 44
        (vermillion, dotted), with the y range set by the runs' margins.

    Raises
    ------
    ValueError
        If there are not three sweeps, or a frame, fit or bound is missing.
    """
    _check_panels(titles, frames, fits, ("table2", "penalty"))
    fig, axes = _three_panels()
    for ax, (on, title) in zip(axes, titles.items()):
        fr, f2, f10 = frames[on], fits[(on, "table2")], fits[(on, "penalty")]
        _need(fr, ["beta", "gamma_min"], f"frames[{on!r}]")
        if on not in bounds:
            raise ValueError(f"no eq. 44 bound for {on!r}")
        _need(bounds[on], ["beta", "bound"], f"bounds[{on!r}]")
        det = seed_means(bounds[on], "beta", ["bound"])
        ax.plot(fr["beta"], fr["gamma_min"], ".", color="0.6", ms=3, label="one run")
        ax.plot(f2.means["beta"], f2.means["gamma_min"], "o", color=color("blue"), ms=4,
                label="mean of 5 runs")
        ax.plot(f2.means["beta"], f2.means["predicted"], color=color("orange"),
                label=f"Table 2 fit, $R^2$ = {f2.r2_means:.3f}")
        ax.plot(f10.means["beta"], f10.means["predicted"], "--", color=color("green"),
                label=f"eq. 10 fit, $R^2$ = {f10.r2_means:.3f}")
        ax.plot(det["beta"], det["bound"], ":", color=color("vermillion"),
                label="eq. 44, constants 1")
        # the eq. 44 line runs on below
        ax.set_ylim(fr["gamma_min"].min() - 0.15, fr["gamma_min"].max() + 0.15)
        ax.axhline(0, color="black", lw=0.8)
        ax.set(title=title, xlabel=r"spike strength $\beta$",
               ylabel=r"$\gamma_{\min}$ (kernel-Hebbian scale)")
        ax.legend(fontsize=8, loc="lower left")
    return fig


def noisy_margins(noisy: pd.DataFrame, fit: SweepFit, b_mean: float) -> Figure:
    """Noisy queries: the margin against ``eps`` with the eq. 74 fit, and the loss, log-log.

    Mirrors the source's Fig. 6 (App. A.4.2).

    Parameters
    ----------
    noisy : pandas.DataFrame
        The stored runs of ``margin_noisy``: columns ``rep``, ``eps``, ``gamma_min`` (noisy
        margin) and ``gamma_clean`` (the run's clean margin).
    fit : SweepFit
        :func:`assocmem.mlps.margin_sweeps.fit_noisy_sweep` (``means`` with ``eps`` and
        ``predicted``, ``r2_means``).
    b_mean : float
        The mean quadratic coefficient of the loss over the runs, drawn as ``b eps^2``.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes, log x. Left: each run's margin against ``eps`` with a dotted line at its clean
        margin, and the fit (dashed). Right, log-log: each run's positive losses, a line of slope
        1 through the mean loss at the smallest ``eps`` (dotted) and ``b eps^2`` (dashed).

    Raises
    ------
    ValueError
        If a column is missing or ``b_mean`` is not finite.
    """
    _need(noisy, ["rep", "eps", "gamma_min", "gamma_clean"], "noisy")
    if not np.isfinite(b_mean):
        raise ValueError(f"b_mean must be finite, got {b_mean!r}")
    drop = noisy.assign(drop=noisy.gamma_clean - noisy.gamma_min)
    fig, (ax, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.6), layout="constrained")
    for rep, g in noisy.groupby("rep"):
        ax.plot(g["eps"], g["gamma_min"], "o-", ms=3, lw=1, color=color(rep), label=f"run {rep}")
        ax.axhline(g["gamma_clean"].iloc[0], color=color(rep), lw=0.8, ls=":")
    ax.plot(fit.means["eps"], fit.means["predicted"], "--", color="black",
            label=f"eq. 74 fit (linear), $R^2$ = {fit.r2_means:.2f}")
    ax.axhline(0, color="black", lw=0.8)
    ax.set(xscale="log", xlabel=r"noise radius $\varepsilon$",
           ylabel=r"$\gamma_{\min}$ (kernel-Hebbian scale)",
           title="noisy margin (dotted: clean margin)")
    ax.legend(fontsize=8, loc="lower left")
    for rep, g in drop.groupby("rep"):
        pos = g[g["drop"] > 0]
        ax1.plot(pos["eps"], pos["drop"], "o-", ms=3, lw=1, color=color(rep), label=f"run {rep}")
    e = np.geomspace(0.01, 2.0, 100)
    first = drop[(drop["eps"] == drop["eps"].min()) & (drop["drop"] > 0)]
    small = first["drop"].mean() / drop["eps"].min()
    ax1.plot(e, small * e, ":", color="0.4", label=r"slope 1 ($\propto \varepsilon$)")
    ax1.plot(e, b_mean * e**2, "--", color="0.2", label=rf"${b_mean:.2f}\,\varepsilon^2$")
    ax1.set(xscale="log", yscale="log", xlabel=r"noise radius $\varepsilon$",
            ylabel=r"loss $\gamma_{\min}(k) - \gamma_{\min}(\tilde k)$", title="the loss, log-log")
    ax1.legend(fontsize=8, loc="upper left")
    return fig


def bits_per_parameter(bits: pd.DataFrame, means: pd.DataFrame) -> Figure:
    """Bits per parameter needed to keep every fact, measured and as Theorem B.6's count.

    Mirrors no figure of the source (which runs no bit experiment); it shows the check of
    Theorem B.6 and Corollary B.8.

    Parameters
    ----------
    bits : pandas.DataFrame
        The stored runs of ``margin_bits``: columns ``F``, ``rep`` (0-4) and ``bits_min``.
    means : pandas.DataFrame
        Their means per ``d``: columns ``d``, ``F``, ``bits_min`` and ``bits_b6``.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, log x (``F``): the runs' ``bits_min`` (grey dots, jittered in ``F`` by run),
        the mean ``bits_min`` (blue) and the mean ``bits_b6`` (orange) with each point labelled
        by its ``d``; y from 0 to 36.

    Raises
    ------
    ValueError
        If a column is missing.
    """
    _need(bits, ["F", "rep", "bits_min"], "bits")
    _need(means, ["d", "F", "bits_min", "bits_b6"], "means")
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    jitter = {r: 1.0 + 0.025 * (r - 2) for r in range(5)}
    ax.plot(bits["F"] * bits["rep"].map(jitter), bits["bits_min"], ".", color="0.55", ms=5,
            label="smallest $b$ with every fact stored (one run)")
    ax.plot(means["F"], means["bits_min"], "o-", color=color("blue"), label="mean of 5 runs")
    ax.plot(means["F"], means["bits_b6"], "s-", color=color("orange"),
            label="Theorem B.6, constants measured")
    for r in means.itertuples():
        ax.annotate(f"d={r.d}", (r.F, r.bits_b6), textcoords="offset points", xytext=(0, 6),
                    ha="center", fontsize=8)
    ax.set(xscale="log", ylim=(0, 36),
           xlabel=r"number of facts $F = d^2/16$ (width $m = \lceil 32 F\ln F / d\rceil$)",
           ylabel="bits per parameter")
    ax.legend(fontsize=8, loc="center right")
    return fig
