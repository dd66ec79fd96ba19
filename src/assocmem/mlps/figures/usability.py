"""The figures of chapter 14 (margins inside a Transformer): usability of inserted MLPs and the
attention's noise, drawn from the stored ``transformer_usability`` and ``attention_noise`` rows.

Each function takes the sweep's rows (a :class:`pandas.DataFrame`), draws with the house style
(:mod:`assocmem.plotting`) and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import matplotlib.pyplot as plt
import pandas as pd

from assocmem.plotting import color, require_frame

__all__ = ["accuracy_vs_width", "predictors", "attention_noise"]


def _need(rows, columns: Iterable[str], what: str) -> None:
    require_frame(rows, columns, what)
    if rows.empty:
        raise ValueError(f"{what}: no rows to draw")


def accuracy_vs_width(rows: pd.DataFrame, title: str = "") -> plt.Figure:
    """Accuracy of an MLP alone and inside the Transformer, and its smallest margin, against width.

    Mirrors the source's Figure 2a (seed 001, Sec. 3.2): GD MLPs inserted into a pretrained,
    frozen attention.

    Parameters
    ----------
    rows : pandas.DataFrame
        One row per hidden width and training of one MLP method, with the columns ``m`` (hidden
        width), ``rep`` (training), ``mlp_accuracy`` and ``transformer_accuracy`` (fractions) and
        ``mlp_min_margin_unit`` (the smallest margin on the unit scale).
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels against ``m`` on a log-2 axis. Left: the means over the trainings of the MLP's
        accuracy (black, circles) and the Transformer's (vermillion, squares), in percent, with
        each training's Transformer accuracy as a dot. Right: the mean smallest margin (blue) and
        a grey line at zero.

    Raises
    ------
    TypeError
        If ``rows`` is not a DataFrame.
    ValueError
        If a column is missing or there are no rows.
    """
    _need(rows, ["m", "rep", "mlp_accuracy", "transformer_accuracy", "mlp_min_margin_unit"],
          "accuracy_vs_width")
    by_m = (rows.groupby("m")
            .agg(mlp=("mlp_accuracy", "mean"), margin=("mlp_min_margin_unit", "mean"),
                 tf=("transformer_accuracy", "mean"))
            .reset_index())
    fig, ax = plt.subplots(1, 2, figsize=(8, 3.4))
    ax[0].plot(by_m.m, 100 * by_m.mlp, "o-", color=color("black"), label="MLP alone")
    ax[0].plot(by_m.m, 100 * by_m.tf, "s-", color=color("vermillion"),
               label="Transformer (attention + MLP)")
    for _, r in rows.iterrows():
        ax[0].plot(r.m, 100 * r.transformer_accuracy, ".", color=color("vermillion"), alpha=0.5)
    ax[0].set_ylabel("accuracy (%)")
    ax[0].legend(loc="lower right")
    ax[1].plot(by_m.m, by_m.margin, "o-", color=color("blue"))
    ax[1].axhline(0, color="0.5", lw=0.8)
    ax[1].set_ylabel(r"smallest margin $\gamma_{\min}$, unit scale")
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xlabel("MLP hidden width $m$")
    if title:
        fig.suptitle(title)
    return fig


#: The three predictors of :func:`predictors`: column or product, marker, colour, label.
_PREDICTORS = {
    "usable_fraction": ("o", "blue", "usable keys (margins + noise)"),
    "mlp_accuracy": ("s", "orange", "MLP accuracy alone"),
    "mlp_x_identity": ("^", "green", "MLP x attention accuracy"),
}


def predictors(rows: pd.DataFrame) -> plt.Figure:
    """Three predictions of the Transformer's accuracy, and the per-key margins against width.

    Mirrors the source's Figure 7 (seed 001, Sec. 5.1, App. A.4.4), with two margin-free
    baselines beside its usable-key fraction.

    Parameters
    ----------
    rows : pandas.DataFrame
        One row per hidden width and training of one MLP method, with the columns ``m``,
        ``transformer_accuracy``, ``usable_fraction``, ``mlp_accuracy``,
        ``identity_accuracy_heldout`` (fractions), and the per-key margin statistics
        ``margin_q10``, ``margin_q50``, ``margin_q90`` and ``margin_median_wrong`` (unit scale;
        NaN where no key is wrong).

    Returns
    -------
    matplotlib.figure.Figure
        Left: the measured Transformer accuracy (percent) against each predictor (usable-key
        fraction, blue circles; MLP accuracy, orange squares; MLP accuracy times the attention's
        held-out identity accuracy, green triangles), with a dotted equality line. Right, against
        ``m`` on a log-2 axis: the 10-90 % band of per-key margins (means over trainings), their
        median (blue line), the median margin of the keys the Transformer misses (vermillion
        crosses), and a grey line at zero.

    Raises
    ------
    TypeError
        If ``rows`` is not a DataFrame.
    ValueError
        If a column is missing or there are no rows.
    """
    _need(rows, ["m", "transformer_accuracy", "usable_fraction", "mlp_accuracy",
                 "identity_accuracy_heldout", "margin_q10", "margin_q50", "margin_q90",
                 "margin_median_wrong"], "predictors")
    fig, ax = plt.subplots(1, 2, figsize=(8, 3.5))
    preds = {"usable_fraction": rows.usable_fraction, "mlp_accuracy": rows.mlp_accuracy,
             "mlp_x_identity": rows.mlp_accuracy * rows.identity_accuracy_heldout}
    for name, (mk, col, label) in _PREDICTORS.items():
        ax[0].plot(100 * preds[name], 100 * rows.transformer_accuracy, mk, mfc="none",
                   color=color(col), label=label)
    lo = 100 * min(rows.usable_fraction.min(), rows.transformer_accuracy.min()) - 2
    ax[0].plot([lo, 100], [lo, 100], ":", color="0.4", lw=1, label="equality")
    ax[0].set_xlabel("predicted accuracy (%)")
    ax[0].set_ylabel("Transformer accuracy (%)")
    ax[0].set_title("GD MLP, cross-entropy")
    ax[0].legend(loc="lower right", fontsize=8)
    g = (rows.groupby("m")
         .agg(q10=("margin_q10", "mean"), q50=("margin_q50", "mean"),
              q90=("margin_q90", "mean"), wrong=("margin_median_wrong", "mean"))
         .reset_index())
    ax[1].fill_between(g.m, g.q10, g.q90, color=color("sky"), alpha=0.4,
                       label="per-key margins, 10-90 %")
    ax[1].plot(g.m, g.q50, "-", color=color("blue"), label="median")
    ax[1].plot(g.m, g.wrong, "x", color=color("vermillion"),
               label="median of keys the Transformer misses")
    ax[1].axhline(0, color="0.5", lw=0.8)
    ax[1].set_xscale("log", base=2)
    ax[1].set_xlabel("MLP hidden width $m$")
    ax[1].set_ylabel("margin, unit scale")
    ax[1].legend(loc="upper left", fontsize=8)
    return fig


def attention_noise(rows: pd.DataFrame, means: pd.DataFrame) -> plt.Figure:
    """The attention's noise ceiling, deviation quantiles and failure rate against junk length.

    Mirrors the source's Figure 3a (seed 001, Def. 5.1, Sec. 5.1), with quantiles and the failure
    rate beside the ceiling.

    Parameters
    ----------
    rows : pandas.DataFrame
        The ``attention_noise`` rows, one per model size, junk length and training, with the
        columns ``d``, ``F``, ``J``, ``noise_ceiling`` and ``identity_accuracy``.
    means : pandas.DataFrame
        Their means over the trainings, one row per ``(d, F, J)``, with ``noise_ceiling``,
        ``noise_q50``, ``noise_q90``, ``noise_q99`` and ``failure_rate``
        (:func:`assocmem.mlps.transformer_summaries.noise_summary`).

    Returns
    -------
    matplotlib.figure.Figure
        Three panels on a 2 x 2 grid (the fourth switched off), each against ``J`` on a log-2 axis,
        one colour per model size: the ceiling (mean line and one dot per training, with a dotted
        line at sqrt 2), the median, 90 % and 99 % deviation quantiles (log axis), and the failure
        rate in percent (mean line, one dot per training).

    Raises
    ------
    TypeError
        If ``rows`` or ``means`` is not a DataFrame.
    ValueError
        If a column is missing or there are no rows.
    """
    _need(rows, ["d", "F", "J", "noise_ceiling", "identity_accuracy"], "attention_noise rows")
    _need(means, ["d", "F", "J", "noise_ceiling", "noise_q50", "noise_q90", "noise_q99",
                  "failure_rate"], "attention_noise means")
    fig, grid = plt.subplots(2, 2, figsize=(8, 6.6))
    ax = grid.flat[:3]
    grid.flat[3].axis("off")  # three panels on a 2 x 2 grid
    for k, ((d, F), g) in enumerate(means.groupby(["d", "F"])):
        c = color(["blue", "vermillion", "green"][k % 3])
        raw = rows[(rows.d == d) & (rows.F == F)]
        ax[0].plot(raw.J, raw.noise_ceiling, ".", color=c, alpha=0.5)
        ax[0].plot(g.J, g.noise_ceiling, "o-", color=c, label=f"d = {d}, F = {F}")
        for col, ls, lab in (("noise_q50", ":", "median"), ("noise_q90", "--", "90 %"),
                             ("noise_q99", "-", "99 %")):
            ax[1].plot(g.J, g[col], ls, marker="o", ms=3, color=c, label=f"{lab}, d = {d}")
        ax[2].plot(g.J, 100 * g.failure_rate, "o-", color=c, label=f"d = {d}, F = {F}")
        ax[2].plot(raw.J, 100 * (1 - raw.identity_accuracy), ".", color=c, alpha=0.5)
    ax[0].axhline(math.sqrt(2), color="0.5", lw=0.8, ls=":")
    ax[0].set_title("noise ceiling (max over keys and contexts)")
    ax[0].set_ylabel(r"$\Vert \mathbf{u} - \mathbf{k}_i \Vert_2$")
    ax[1].set_yscale("log")
    ax[1].set_title("deviation quantiles over contexts")
    ax[2].set_title("failure rate (% of contexts)")
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xlabel("junk length $J$ (= junk vocabulary $V_J$)")
        a.legend(fontsize=7)
    fig.subplots_adjust(hspace=0.45, wspace=0.3)
    return fig
