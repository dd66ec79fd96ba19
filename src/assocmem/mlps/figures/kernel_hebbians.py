"""The figures of the chapter *MLPs are kernel Hebbians* (seed 001, Thm 3.1 and Lemmas B.2, B.3,
B.34), one function per figure.

Each function takes what the chapter computed (the frames of :mod:`assocmem.mlps.hebbian_theory`),
draws with the house style and returns the :class:`matplotlib.figure.Figure`. None of them computes
anything the chapter's tables do not show.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from assocmem.plotting import color
from assocmem.plotting import require_frame as _need

if TYPE_CHECKING:
    from assocmem.mlps.hebbian_theory.sketch import LogLogFit, SketchErrors
    from collections.abc import Sequence
    from matplotlib.figure import Figure

__all__ = ["theorem31_errors", "sketch_error", "whitening_energy", "welch_bound"]

_THEOREM_CASE = "theorem"
_BEYOND_CASE = "m > F, random B"
_WELCH_MARKERS = {"gaussian": "o", "unit rows": "s", "anisotropic": "^", "bilinear": "D",
                  "low rank": "v"}
_TIGHT = (("harmonic frame", "*"), ("simplex ETF", "P"))
_PRECONDITIONER_FAMILIES = ["wishart", "diagonal", "partial", "perturbed"]




def theorem31_errors(study: pd.DataFrame, m: int, F: int) -> Figure:
    """Grouped bars of the Hebbian rewrite's relative error against the MLP, per gate.

    Mirrors no figure of the source; it shows the check of Theorem 3.1 (Thm B.1).

    Parameters
    ----------
    study : pandas.DataFrame
        The frame of :func:`assocmem.mlps.hebbian_theory.theorem31_study`: one row per gate and
        case, with columns ``gate``, ``case``, ``err_stored``, ``err_fresh`` and ``tol``. Uses the
        cases ``"theorem"`` (m <= F) and ``"m > F, random B"``, one row per gate in each.
    m, F : int
        The theorem case's width and number of stored inputs (the wide case has ``m = 2F``).

    Returns
    -------
    matplotlib.figure.Figure
        One axes, log y: four bars per gate (theorem case stored and fresh, wide case stored and
        fresh) and a dashed tolerance segment over the first three bars of each gate.

    Raises
    ------
    ValueError
        If a column or one of the two cases is missing, or the cases do not list the same gates.
    """
    _need(study, ["gate", "case", "err_stored", "err_fresh", "tol"], "study")
    theorem = study[study.case == _THEOREM_CASE].set_index("gate")
    beyond = study[study.case == _BEYOND_CASE].set_index("gate")
    if theorem.empty or beyond.empty:
        raise ValueError(f"study needs the cases {_THEOREM_CASE!r} and {_BEYOND_CASE!r}")
    gates = list(theorem.index)
    if sorted(gates) != sorted(beyond.index):
        raise ValueError("the two cases must list the same gates")
    bars = [
        (theorem.err_stored, f"$m$ = {m} $\\leq F$ = {F}, $\\hat\\Sigma^{{-1}}$: stored inputs",
         color("blue")),
        (theorem.err_fresh, f"$m$ = {m} $\\leq F$ = {F}, $\\hat\\Sigma^{{-1}}$: fresh queries",
         color("sky")),
        (beyond.err_stored, f"$m$ = {2 * F} $> F$, $\\hat\\Sigma^+$: stored inputs",
         color("orange")),
        (beyond.err_fresh, f"$m$ = {2 * F} $> F$, $\\hat\\Sigma^+$: fresh queries",
         color("vermillion")),
    ]
    fig, ax = plt.subplots(figsize=(7.2, 4.0))
    x = np.arange(len(gates))
    w = 0.2
    for j, (vals, label, c) in enumerate(bars):
        ax.bar(x + (j - 1.5) * w, [vals[g] for g in gates], w, color=c, label=label)
    for i, g in enumerate(gates):
        for j, tol in ((0, theorem.tol[g]), (1, theorem.tol[g]), (2, beyond.tol[g])):
            label = "rounding tolerance $(3m + F)\\,\\varepsilon\\,\\kappa$" if i + j == 0 else None
            ax.hlines(tol, i + (j - 2) * w, i + (j - 1) * w, color="black", lw=1.2, ls="--",
                      label=label)
    ax.set_yscale("log")
    ax.set_ylim(1e-17, 1e6)
    ax.set_xticks(x, [f"gate $\\sigma$ = {g}" for g in gates])
    ax.set_ylabel(r"$\max|H(\mathbf{z}) - \mathrm{MLP}(\mathbf{z})|\, /\, \max|\mathrm{MLP}|$")
    ax.set_title("Theorem 3.1: the whitened Hebbian rewrite of random gated MLPs")
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    return fig


def sketch_error(sk: SketchErrors, fit: LogLogFit, rhos: Sequence[float], draws: int) -> Figure:
    """The bilinear sketch ``K_m`` of ``K_2``: its mean per width and overlap, and its RMS error.

    Mirrors no figure of the source; it shows the checks of Lemma B.2 and of the ``m^(-1/2)``
    rate of App. B.2.2.

    Parameters
    ----------
    sk : SketchErrors
        The result of :func:`assocmem.mlps.hebbian_theory.sketch_error`: ``ms`` (n_m,), ``mean``
        and ``mean_se`` (n_m, n_rho), ``rms``, ``se_log_rms`` and ``predicted_rms`` (n_m,).
    fit : LogLogFit
        :func:`assocmem.mlps.hebbian_theory.loglog_fit` of ``rms`` against ``ms`` (``slope``,
        ``slope_se``, ``intercept``).
    rhos : sequence of float
        The overlaps of the pairs, one per column of ``sk.mean``.
    draws : int
        Draws per width (for the legend).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes. Left: one error-bar series per overlap (mean +- 2 SE against m) and a dashed
        line at rho^2 each. Right: the measured RMS with +- 2 SE bars, the fitted power law and
        the exact (Isserlis) curve, dashed.

    Raises
    ------
    ValueError
        If the number of overlaps does not match the columns of ``sk.mean``.
    """
    rhos = [float(r) for r in rhos]
    mean = np.asarray(sk.mean)
    if mean.ndim != 2 or mean.shape[1] != len(rhos):
        raise ValueError(f"sk.mean has shape {mean.shape}; expected (n_m, {len(rhos)}) for "
                         f"{len(rhos)} overlaps")
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8, 3.6))
    fig.subplots_adjust(wspace=0.4)
    for b, rho in enumerate(rhos):
        c = color(b)
        ax0.errorbar(sk.ms * (1 + 0.04 * (b - 2)), mean[:, b], yerr=2 * sk.mean_se[:, b], fmt="o",
                     ms=3.5, color=c, capsize=2, label=rf"$\rho$ = {rho:g}")
        ax0.axhline(rho**2, color=c, ls="--", lw=1.0)
    ax0.set_xscale("log", base=2)
    ax0.set_xlabel("feature width $m$")
    ax0.set_ylabel(r"mean of $K_m(\mathbf{x}, \mathbf{z})$ over draws ($\pm 2$ SE)")
    ax0.set_title("unbiased: $\\mathbb{E}\\,K_m = \\rho^2$\n(dashed) at every $m$")
    ax0.legend(fontsize=8, ncol=2)
    ax1.errorbar(sk.ms, sk.rms, yerr=2 * sk.rms * sk.se_log_rms, fmt="o", color=color("blue"),
                 capsize=2, label=f"measured ({draws} draws per $m$)")
    mm = np.geomspace(sk.ms[0], sk.ms[-1], 100)
    ax1.plot(mm, math.exp(fit.intercept) * mm**fit.slope, color=color("blue"), lw=1.2,
             label=f"fit: slope {fit.slope:.3f} $\\pm$ {fit.slope_se:.3f}")
    ax1.plot(sk.ms, sk.predicted_rms, "--", color=color("vermillion"),
             label="exact (Isserlis), slope $-1/2$")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xlabel("feature width $m$")
    ax1.set_ylabel(r"RMS error $\sqrt{\mathbb{E}(K_m - \rho^2)^2}$, pooled over pairs")
    ax1.set_title(r"the sketch error shrinks like $m^{-1/2}$")
    ax1.legend(fontsize=8)
    return fig


def whitening_energy(pre: pd.DataFrame) -> Figure:
    """Frobenius energy and ``E_K`` of random preconditioners relative to full whitening.

    Mirrors no figure of the source; it shows the check of Lemma B.3 (App. B.2.4, eq. 15).

    Parameters
    ----------
    pre : pandas.DataFrame
        The frame of :func:`assocmem.mlps.hebbian_theory.preconditioner_experiment`: columns
        ``family``, ``ratio`` (``||K_M||_F^2`` over full whitening's) and ``e_k_ratio`` (``E_K``
        over full whitening's); one row each for the families ``"none"`` and ``"diag"``, and
        the random families ``wishart``, ``diagonal``, ``partial``, ``perturbed``.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes. Left: a log-x histogram of ``ratio`` per random family, with vertical lines at
        1 (full whitening), no whitening and diagonal whitening. Right: ``e_k_ratio`` against
        ``ratio - 1`` per random family, zoomed to 0.96-1.12, with a line at 1.

    Raises
    ------
    ValueError
        If a column, the ``none`` or ``diag`` row, or every random row is missing.
    """
    _need(pre, ["family", "ratio", "e_k_ratio"], "pre")
    ref = pre.set_index("family")
    if not {"none", "diag"} <= set(ref.index):
        raise ValueError("pre needs the reference rows 'none' and 'diag'")
    rand = pre[~pre.family.isin(["full", "none", "diag"])]
    if rand.empty:
        raise ValueError("pre has no random preconditioners")
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8, 3.6))
    fig.subplots_adjust(wspace=0.4)
    bins0 = np.geomspace(1.0, max(2.0, float(rand.ratio.max())) * 1.05, 45)
    for k, fam in enumerate(_PRECONDITIONER_FAMILIES):
        sel = rand[rand.family == fam]
        ax0.hist(sel.ratio, bins=bins0, histtype="stepfilled", alpha=0.55, color=color(k),
                 label=fam)
        ax1.scatter(sel.ratio - 1, sel.e_k_ratio, s=9, alpha=0.6, color=color(k))
    ax0.axvline(1.0, color="black", lw=2, label=r"full whitening $M = \hat\Sigma^{-1}$")
    ax0.axvline(ref.loc["none", "ratio"], color="black", ls="--", lw=1.2,
                label="no whitening $M = I$")
    ax0.axvline(ref.loc["diag", "ratio"], color="black", ls=":", lw=1.5,
                label=r"diagonal $M = \mathrm{diag}(\hat\Sigma)^{-1}$")
    ax0.set_xscale("log")
    ax0.set_xlabel(r"$\|K_M\|_F^2 \,/\, \|K_{\hat\Sigma^{-1}}\|_F^2$")
    ax0.set_ylabel("number of random preconditioners")
    ax0.set_title("Lemma B.3: nothing beats\nwhitening on $\\|K_M\\|_F^2$")
    ax0.legend(fontsize=7.5)
    ax1.axhline(1.0, color="black", lw=1.5, label="full whitening's $E_K$")
    ax1.set_xscale("log")
    ax1.set_ylim(0.96, 1.12)
    ax1.set_xlabel(r"excess energy $\|K_M\|_F^2 / \|K_{\hat\Sigma^{-1}}\|_F^2 - 1$")
    ax1.set_ylabel(r"$E_K(K_M) \,/\, E_K(K_{\hat\Sigma^{-1}})$ (zoom near 1)")
    ax1.set_title("... but some $M$ near it\nbeat it on $E_K$ itself")
    ax1.text(0.98, 0.04,
             f"off the top: no whitening ({ref.loc['none', 'e_k_ratio']:.1f}x),\n"
             f"diagonal whitening ({ref.loc['diag', 'e_k_ratio']:.1f}x), Wishart and most "
             "random diagonal M",
             transform=ax1.transAxes, ha="right", va="bottom", fontsize=7.5)
    ax1.legend(fontsize=7.5, loc="upper left")
    return fig


def welch_bound(welch: pd.DataFrame, white_bound: float, white_frobenius_sq: float) -> Figure:
    """Rank-``m`` kernels against the Welch/Frobenius bound of Lemma B.34.

    Mirrors no figure of the source; it shows the checks of Lemma B.34 (App. B.8.6) and of
    Welch's bound.

    Parameters
    ----------
    welch : pandas.DataFrame
        The frame of :func:`assocmem.mlps.hebbian_theory.welch_study`: columns ``family``,
        ``bound`` (``tr(K)^2 / m``), ``frobenius_sq``, ``ratio`` and ``coherence_ratio``; the
        random families ``gaussian``, ``unit rows``, ``anisotropic``, ``bilinear``, ``low rank``
        and the tight frames ``harmonic frame`` and ``simplex ETF``.
    white_bound, white_frobenius_sq : float
        ``tr(K)^2 / m`` and ``||K||_F^2`` of the whitened bilinear kernel of Lemma B.3.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes. Left: ``frobenius_sq`` against ``bound`` (log-log), one scatter per family,
        the whitened kernel as one more point, and the dashed line of equality. Right:
        ``coherence_ratio`` against ``ratio``, one scatter per family, dashed lines at 1.

    Raises
    ------
    ValueError
        If a column is missing or the whitened kernel's values are not positive and finite.
    """
    _need(welch, ["family", "bound", "frobenius_sq", "ratio", "coherence_ratio"], "welch")
    for name, v in (("white_bound", white_bound), ("white_frobenius_sq", white_frobenius_sq)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be positive and finite, got {v!r}")
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8, 3.8))
    fig.subplots_adjust(wspace=0.4)
    for k, (fam, mk) in enumerate(_WELCH_MARKERS.items()):
        sel = welch[welch.family == fam]
        ax0.scatter(sel.bound, sel.frobenius_sq, s=14, marker=mk, color=color(k), alpha=0.7,
                    label=f"random: {fam}")
        ax1.scatter(sel.ratio, sel.coherence_ratio, s=14, marker=mk, color=color(k), alpha=0.7)
    for fam, mk in _TIGHT:
        sel = welch[welch.family == fam]
        ax0.scatter(sel.bound, sel.frobenius_sq, s=70, marker=mk, color=color("black"),
                    label=f"tight: {fam}", zorder=3)
        ax1.scatter(sel.ratio, sel.coherence_ratio, s=70, marker=mk, color=color("black"),
                    zorder=3)
    ax0.scatter([white_bound], [white_frobenius_sq], s=70, marker="X", color=color("black"),
                zorder=3, label="whitened bilinear kernel (Lemma B.3)")
    lo, hi = 0.5 * float(welch.bound.min()), 2 * float(welch.frobenius_sq.max())
    ax0.plot([lo, hi], [lo, hi], color="0.4", lw=1, ls="--",
             label=r"equality $\|K\|_F^2 = (\mathrm{tr}\,K)^2/m$")
    ax0.set_xscale("log")
    ax0.set_yscale("log")
    ax0.set_xlabel(r"$(\mathrm{tr}\,K)^2 / m$")
    ax0.set_ylabel(r"$\|K\|_F^2$")
    ax0.set_title("Lemma B.34: every rank-$m$\nkernel lies above the line")
    ax0.legend(fontsize=7, loc="upper left")
    ax1.axhline(1, color="0.4", lw=1, ls="--")
    ax1.axvline(1, color="0.4", lw=1, ls="--")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xticks([1, 2, 5], ["1", "2", "5"])
    ax1.xaxis.set_minor_formatter(NullFormatter())
    ax1.set_xlabel(r"$\|K\|_F^2 \,/\, ((\mathrm{tr}\,K)^2/m)$  (Lemma B.34 ratio)")
    ax1.set_ylabel(r"$\max_{i \neq j} K_{ij}^2/(K_{ii}K_{jj})$ / Welch bound")
    ax1.set_title("tight is not equiangular")
    return fig
