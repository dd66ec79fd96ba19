"""The figures of chapter 16 (editing facts by swapping the MLP): the non-fact perplexity ratio of
each editor, and the editors with the data-dependent fact expert.

Each function takes a table of the ``fact_editing`` sweep's best settings
(:func:`assocmem.mlps.editing_sweeps.table1_over_trainings`), draws with the house style
(:mod:`assocmem.plotting`) and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color, require_frame

__all__ = ["EDITORS", "NAME", "COLOR", "rnf_bars", "data_dependent"]

#: The editors, in the order the figures draw them.
EDITORS = ("swap", "alphaedit", "memit", "rome")
#: How the chapter names each editor.
NAME = {"swap": "MLP swapping", "alphaedit": "AlphaEdit", "memit": "MEMIT", "rome": "ROME"}
#: One house colour per editor.
COLOR = dict(zip(EDITORS, (color("blue"), color("green"), color("orange"), color("vermillion"))))


def _need(table, columns: Iterable[str], what: str) -> None:
    require_frame(table, columns, what)
    absent = sorted(set(EDITORS) - set(table.editor))
    if absent:
        raise ValueError(f"{what}: no rows of the editor(s) {absent}")


def _pick(table: pd.DataFrame, fraction: float, editor: str, col: str) -> float:
    row = table[(table.fraction.round(4) == fraction) & (table.editor == editor)]
    return float(row[col].iloc[0]) if len(row) else float("nan")


def rnf_bars(table: pd.DataFrame) -> plt.Figure:
    """Non-fact perplexity ratio of every editor at every edit fraction, with the source's.

    Mirrors the source's Figure 8 (seed 001, Sec. 5.2), whose values are Table 1's.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per editor (:data:`EDITORS`) and edit ``fraction``, with ``r_nf`` (the mean over
        the trainings), ``r_nf_min`` and ``r_nf_max`` (their range) and ``r_nf_paper`` (the
        source's value, NaN where it has none).

    Returns
    -------
    matplotlib.figure.Figure
        One axis: grouped bars of ``r_nf`` per fraction (one colour per editor, whiskers from
        the smallest to the largest training), a black mark on each bar at the source's value,
        and a dashed grey line at 1.

    Raises
    ------
    TypeError
        If ``table`` is not a DataFrame.
    ValueError
        If a column or an editor is missing.
    """
    _need(table, ["editor", "fraction", "r_nf", "r_nf_min", "r_nf_max", "r_nf_paper"],
          "rnf_bars")
    fractions = sorted(table.fraction.round(4).unique())
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for k, editor in enumerate(EDITORS):
        for j, f in enumerate(fractions):
            x = j + 0.2 * (k - 1.5)
            ours = _pick(table, f, editor, "r_nf")
            lo, hi = _pick(table, f, editor, "r_nf_min"), _pick(table, f, editor, "r_nf_max")
            src = _pick(table, f, editor, "r_nf_paper")
            ax.bar(x, ours, width=0.2, color=COLOR[editor], yerr=[[ours - lo], [hi - ours]],
                   capsize=2, label=NAME[editor] if j == 0 else None)
            if np.isfinite(src):
                ax.plot([x - 0.09, x + 0.09], [src, src], color="black", lw=1.5)
    ax.axhline(1.0, color="grey", ls="--", lw=0.8)
    ax.set_xticks(range(len(fractions)), [f"{100 * f:.0f} %" for f in fractions])
    ax.set_xlabel("edited facts")
    ax.set_ylabel("r_NF (ratio)")
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    return fig


def data_dependent(table: pd.DataFrame) -> plt.Figure:
    """Editing score and non-fact perplexity ratio of every editor against the edit fraction.

    Mirrors the source's Figure 9 (seed 001, App. A.4.5): the editors with the data-dependent
    fact expert.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per editor (:data:`EDITORS`) and edit ``fraction``, with ``score`` and ``r_nf``
        (means over the trainings).

    Returns
    -------
    matplotlib.figure.Figure
        Two stacked axes sharing the edit fraction in percent: the score of each editor (top,
        from -0.03 to 1.03) and its ``r_nf`` on a log axis with a dashed grey line at 1
        (bottom), one colour per editor.

    Raises
    ------
    TypeError
        If ``table`` is not a DataFrame.
    ValueError
        If a column or an editor is missing.
    """
    _need(table, ["editor", "fraction", "score", "r_nf"], "data_dependent")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 4.6), sharex=True)
    for editor in EDITORS:
        sub = table[table.editor == editor].sort_values("fraction")
        top.plot(100 * sub.fraction, sub.score, "o-", color=COLOR[editor], label=NAME[editor])
        bottom.plot(100 * sub.fraction, sub.r_nf, "o-", color=COLOR[editor])
    top.set_ylabel("score")
    top.set_ylim(-0.03, 1.03)
    bottom.axhline(1.0, color="grey", ls="--", lw=0.8)
    bottom.set_yscale("log")
    bottom.set_ylabel("r_NF (ratio, log scale)")
    bottom.set_xlabel("edited facts (%)")
    top.legend(fontsize=8, ncol=2, loc="lower left")
    return fig
