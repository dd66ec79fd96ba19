"""Figures of chapter 37 (trained models: learned beta and recall against context length).

- :func:`learned_beta_strip`: the learned inverse temperature of each trained QK-norm model
  against SDM's optima and the QK-norm band the paper quotes (its Fig. 4 setting);
- :func:`recall_against_m`: recall accuracy against the number of stored pairs, with the fitted
  Eq. 26 curve and a free logistic (the review's open question).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color
from assocmem.plotting import require_frame as _require

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["learned_beta_strip", "recall_against_m"]

#: The optima drawn as vertical lines, with their colours.
OPTIMA = (("CD", "green"), ("SNR", "blue"), ("Mem", "vermillion"))




def learned_beta_strip(runs: pd.DataFrame, ref: pd.DataFrame, n: int, m: int,
                       band: tuple[float, float] = (10, 25)) -> Figure:
    """Learned beta per trained model, one strip per (variant, noise), against SDM's optima.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per trained model, with columns ``variant``, ``noise`` and ``beta_late`` (the
        learned beta). A variant whose name ends in ``beta30`` (started at 30) is drawn with
        grey squares, the others with coloured circles.
    ref : pandas.DataFrame
        :func:`assocmem.sdm.trained.reference_betas` at the models' ``n`` and ``m``: indexed by
        ``"CD"``, ``"SNR"`` and ``"Mem"``, with columns ``beta_ols`` and ``d``.
    n, m : int
        The models' dimension and training context length (for the legend).
    band : (float, float)
        The QK-norm band the paper quotes, shaded.

    Returns
    -------
    matplotlib.figure.Figure
        One axis: one strip of points per (variant, noise) in the order of ``groupby``
        (y = 0, 1, ...), three dashed vertical lines at the optima's ``beta_ols`` and the shaded
        band. Mirrors the comparison of the paper's Fig. 4.

    Raises
    ------
    TypeError
        If ``runs`` or ``ref`` is not a DataFrame.
    ValueError
        If a column or an optimum is missing, or ``band`` is not increasing.
    """
    _require(runs, ["variant", "noise", "beta_late"], "runs")
    _require(ref, ["beta_ols", "d"], "ref")
    missing = [c for c, _ in OPTIMA if c not in ref.index]
    if missing:
        raise ValueError(f"ref lacks the optimum/optima {missing}")
    lo, hi = band
    if not lo < hi:
        raise ValueError(f"band must be increasing, got {band}")
    fig, ax = plt.subplots(figsize=(8.5, 3.2))
    ax.axvspan(lo, hi, color=color("sky"), alpha=0.25, lw=0,
               label="QK-norm band quoted by the paper (third party)")
    ylabels = []
    for y, ((variant, noise), grp) in enumerate(runs.groupby(["variant", "noise"])):
        marker, c = ("s", "0.35") if variant.endswith("beta30") else ("o", color(y))
        ax.plot(grp.beta_late, np.full(len(grp), y), marker, ms=7, mfc="none", mew=1.6,
                color=c)
        ylabels.append(f"{variant}, ε = {noise:.1f}")
    for crit, c in OPTIMA:
        ax.axvline(ref.loc[crit, "beta_ols"], color=color(c), lw=1.4, ls="--",
                   label=rf"$\beta_{{\mathrm{{{crit}}}}}$ (d = {int(ref.loc[crit, 'd'])}), "
                         f"n = {n}, m = {m}")
    ax.set_yticks(range(len(ylabels)), ylabels)
    ax.set_ylim(-0.7, len(ylabels) + 1.2)
    ax.set_xlabel("inverse temperature β")
    ax.legend(fontsize=9, loc="upper left", ncol=2)
    return fig


def recall_against_m(pooled: pd.DataFrame, fits: dict, m_train: int, m_max: int = 1024) -> Figure:
    """Recall accuracy against the number of stored pairs, with two fitted curves per noise.

    Parameters
    ----------
    pooled : pandas.DataFrame
        Recall counts pooled over replicates: columns ``noise``, ``m``, ``correct`` and
        ``queries``.
    fits : dict
        For each noise level of ``pooled``, the result of
        :func:`assocmem.sdm.trained.fit_accuracy_curves`: ``{"eq26": CurveFit, "logistic":
        CurveFit}``.
    m_train : int
        The training context length (a dotted vertical line).
    m_max : int
        The largest m of the fitted curves (drawn from 2 to it on a log axis).

    Returns
    -------
    matplotlib.figure.Figure
        One axis (log base 2 in m): per noise level, the observed accuracies (dots), the Eq. 26
        curve (solid) and the logistic (dashed), in one colour; two grey legend entries name
        the curve styles.

    Raises
    ------
    TypeError
        If ``pooled`` is not a DataFrame.
    ValueError
        If a column is missing or a noise level has no fits.
    """
    _require(pooled, ["noise", "m", "correct", "queries"], "pooled")
    absent = [x for x in pooled["noise"].unique() if x not in fits]
    if absent:
        raise ValueError(f"no fits for the noise level(s) {absent}")
    fig, ax = plt.subplots(figsize=(7.5, 4))
    mm = np.geomspace(2, m_max, 200)
    for k, (noise, grp) in enumerate(pooled.groupby("noise")):
        ax.plot(grp.m, grp.correct / grp.queries, "o", ms=5, color=color(k),
                label=f"ε = {noise:.1f}")
        ax.plot(mm, fits[noise]["eq26"].predict(mm), "-", lw=1.3, color=color(k))
        ax.plot(mm, fits[noise]["logistic"].predict(mm), "--", lw=1.1, color=color(k))
    ax.axvline(m_train, color="0.5", lw=0.8, ls=":")
    ax.plot([], [], "-", color="0.3", label="Eqs. 25-26, two free constants")
    ax.plot([], [], "--", color="0.3", label="logistic in ln m")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("stored pairs m")
    ax.set_ylabel("recall accuracy")
    ax.legend(fontsize=8)
    return fig
