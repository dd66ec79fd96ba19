"""Figures of chapter 36 (convergence of the eight read rules of the paper's App. B.7).

Three figures, each drawn from data the chapter computes:

- :func:`convergence_panels`: mean final cosine against the perturbation, one panel per radius,
  one line per read rule (the paper's Figs. 22-29 for random patterns);
- :func:`target_share_panels`: the target's expected share of the first read under binary SDM
  and under its fitted softmax, one panel per exception;
- :func:`projection_panels`: the learnt-projection experiment under four storage protocols.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd

from assocmem.plotting import color
from assocmem.plotting import require_frame as _require

if TYPE_CHECKING:
    from collections.abc import Sequence
    from matplotlib.figure import Figure

__all__ = ["RULE_STYLE", "convergence_panels", "target_share_panels", "projection_panels",
           "PROTOCOLS"]

#: Colour, line style and marker of each of the eight rules (the authors' names), in the order
#: the legend lists them.
RULE_STYLE = {
    "Binary_SDM": (color("black"), "-", "o"),
    "Binary_SDM_NeuronLimit": (color("sky"), ":", "x"),
    "Binary_SDM_BFit_Attention": (color("vermillion"), "--", "s"),
    "Cont_SDM": (color("blue"), "-", "^"),
    "Cont_SDM_NeuronLimit": (color("purple"), ":", "+"),
    "Cont_Binary_SDM": (color("green"), "-", "v"),
    "Cont_SDM_BFit_Attention": (color("orange"), "--", "D"),
    "Cont_SDM_CFit_Attention": ("#7a5c00", "-.", "P"),
}

#: The storage protocols of the learnt-projection experiment and their colours.
PROTOCOLS = {
    "authors": color("vermillion"),
    "stored": color("blue"),
    "stored_all": color("green"),
    "stored_train": color("black"),
}




def convergence_panels(frame: pd.DataFrame, setting: str, title: str) -> Figure:
    """Mean final cosine against the perturbation level, one panel per radius.

    Parameters
    ----------
    frame : pandas.DataFrame
        Summary rows of the ``convergence`` sweep, with columns ``setting``, ``d``,
        ``algorithm``, ``level`` and ``mean_cosine`` (one row per setting, radius, rule and
        level).
    setting : str
        The setting to draw (``"n=64"``); its radii give the panels, two per row.
    title : str
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        One axis per radius (titled ``"d = ..."``; an odd count leaves one empty axis), one line
        per rule of :data:`RULE_STYLE` present, with the legend below the panels. Mirrors the
        paper's convergence figures for random patterns (App. B.7).

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    ValueError
        If a column is missing or no row has ``setting``.
    """
    _require(frame, ["setting", "d", "algorithm", "level", "mean_cosine"], "frame")
    sub = frame[frame["setting"] == setting]
    if sub.empty:
        raise ValueError(f"no rows of setting {setting!r}; settings: "
                         f"{sorted(frame['setting'].unique())}")
    radii = sorted(sub["d"].unique())
    rows = (len(radii) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(7.5, 2.5 * rows + 1.2), sharex=True,
                             sharey=True, squeeze=False)
    for ax, d in zip(axes.flat, radii):
        for a, (c, ls, mk) in RULE_STYLE.items():
            s = sub[(sub["d"] == d) & (sub["algorithm"] == a)].sort_values("level")
            if s.empty:
                continue
            ax.plot(s["level"], s["mean_cosine"], ls=ls, marker=mk, ms=4, color=c, label=a)
        ax.set_title(f"d = {d}", fontsize=10)
        ax.set_ylim(-0.05, 1.05)
    for ax in axes[-1]:
        ax.set_xlabel("perturbation k (bits)")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean final cosine")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=8,
               bbox_to_anchor=(0.5, 0.0))
    return fig


def target_share_panels(shares: pd.DataFrame, cases: Sequence[tuple[str, int, int]]) -> Figure:
    """The target's expected share of the first read against the query-target distance.

    Parameters
    ----------
    shares : pandas.DataFrame
        Columns ``setting``, ``d``, ``k``, ``SDM`` and ``softmax``: the exact expected share
        under binary SDM and under the softmax fitted to it, per distance ``k``.
    cases : sequence of (setting, n, d)
        The panels, top to bottom (the chapter's three exceptions).

    Returns
    -------
    matplotlib.figure.Figure
        One log-scale axis per case, titled ``"n = ..., d = ..."``, with two lines: SDM (black,
        circles) and softmax (vermillion, squares).

    Raises
    ------
    TypeError
        If ``shares`` is not a DataFrame.
    ValueError
        If a column is missing, ``cases`` is empty, or a case has no rows.
    """
    _require(shares, ["setting", "d", "k", "SDM", "softmax"], "shares")
    cases = list(cases)
    if not cases:
        raise ValueError("cases must name at least one (setting, n, d)")
    fig, axes = plt.subplots(len(cases), 1, figsize=(7.0, 2.8 * len(cases)), squeeze=False)
    axes = axes[:, 0]
    for ax, (setting, n, d) in zip(axes, cases):
        s = shares[(shares["setting"] == setting) & (shares["d"] == d)]
        if s.empty:
            raise ValueError(f"no shares for setting {setting!r}, d = {d}")
        ax.plot(s["k"], s["SDM"], "-o", color=color("black"), label="binary SDM, $I(k, d, n)$")
        ax.plot(s["k"], s["softmax"], "--s", color=color("vermillion"),
                label=r"softmax, fitted $\beta$")
        ax.set_yscale("log")
        ax.set_ylim(1e-3, 1.5)
        ax.set_title(f"n = {n}, d = {d}", fontsize=10)
        ax.set_ylabel("target's share")
    axes[-1].set_xlabel("query-target distance k (bits)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def projection_panels(summary: pd.DataFrame, bound: float) -> Figure:
    """Mean final cosine against the query's cosine, learnt projection above, none below.

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary of :func:`assocmem.sdm.projections.run_projection_preset`, with columns
        ``protocol``, ``projection`` (``"learnt"`` or ``"identity"``), ``query_cosine``,
        ``cosine`` and ``cosine_sem``.
    bound : float
        The authors' ceiling: the mean cosine of a test image to its nearest training image
        (drawn as a dotted line in both panels).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes (titled ``"learnt projection"`` and ``"identity projection"``), each with one
        error-bar line per protocol of :data:`PROTOCOLS` (two standard errors) and the ceiling.
        Mirrors the paper's Figs. 30-31 (App. B.7).

    Raises
    ------
    TypeError
        If ``summary`` is not a DataFrame.
    ValueError
        If a column is missing.
    """
    _require(summary, ["protocol", "projection", "query_cosine", "cosine", "cosine_sem"],
             "summary")
    fig, axes = plt.subplots(2, 1, figsize=(7.0, 7.6), sharex=True, sharey=True)
    for ax, which in zip(axes, ["learnt", "identity"]):
        for protocol, c in PROTOCOLS.items():
            s = summary[(summary["protocol"] == protocol)
                        & (summary["projection"] == which)].sort_values("query_cosine")
            ax.errorbar(s["query_cosine"], s["cosine"], yerr=2 * s["cosine_sem"], marker="o",
                        ms=4, color=c, label=protocol, capsize=2)
        ax.axhline(bound, color=color("vermillion"), ls=":", lw=1,
                   label="nearest stored image (authors)")
        ax.set_title(f"{which} projection")
        ax.set_ylabel("mean final cosine to target")
    axes[1].set_xlabel("cosine of the perturbed query to its target")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig
