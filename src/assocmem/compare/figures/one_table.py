"""The figure of chapter 50: every memory's capacity against its parameter count.

:func:`capacity_against_parameters` draws, for the isotropic and the spiked fact sets, each
memory's capacity F* against its parameters W, with source 001's counting bound (Thm. 2.4) at 64
and at 1 bit per parameter and the budget of the chapter's table.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.compare.adapters import MEMORIES, MEMORY_INFO
from assocmem.compare.harness import GEOMETRIES
from assocmem.plotting import color, require_frame

__all__ = ["MARKERS", "PART_COLOURS", "capacity_against_parameters", "memory_style"]

#: The marker of each Part: circles Part I, squares Part II, triangles Part III.
MARKERS = {"I": "o", "II": "s", "III": "^"}
#: One colour per memory within its Part: colour and marker together name the memory.
PART_COLOURS = ("blue", "orange", "green", "vermillion", "purple")
_COLUMNS = ("memory", "geometry", "W", "F_star", "censored")


def memory_style(name: str) -> tuple[str, str]:
    """The marker and colour of memory ``name`` (a key of ``MEMORY_INFO``).

    Raises
    ------
    KeyError
        If ``name`` is not a memory of the comparison.
    """
    if name not in MEMORY_INFO:
        raise KeyError(f"{name!r} is not a memory of the comparison; the memories are {MEMORIES}")
    part = MEMORY_INFO[name].part
    k = [m for m in MEMORIES if MEMORY_INFO[m].part == part].index(name)
    return MARKERS[part], color(PART_COLOURS[k % len(PART_COLOURS)])


def capacity_against_parameters(stored: pd.DataFrame, trainings: pd.DataFrame, d: int,
                                F_max: int, budget: float, spike_beta: float) -> plt.Figure:
    """Capacity F* against parameters W for every memory, isotropic (top) and spiked (bottom).

    Parameters
    ----------
    stored : DataFrame
        One row per memory, geometry and size (a trained memory's median training), with
        columns ``memory`` (a key of ``MEMORY_INFO``), ``geometry`` (``"isotropic"`` or
        ``"anisotropic"``), ``W``, ``F_star`` and ``censored`` (the search reached ``F_max``
        without a failure). A memory with a size knob is a line through its sizes; a cache
        (``grows_with_pairs``) its diagonal W = 2dF up to F*, ending in a marker (open where
        censored).
    trainings : DataFrame
        Every training of the trained memories (same columns): a vertical bar from the lowest
        to the highest F* of each trained memory's width.
    d : int
        The key and value width (a cache of n pairs has W = 2dn).
    F_max : int
        The largest F searched (the range of the counting-bound curves).
    budget : float
        The parameter budget of the chapter's table, a vertical grey line.
    spike_beta : float
        The spike's strength, named in the bottom panel's title.

    Returns
    -------
    matplotlib.figure.Figure
        Two stacked axes sharing log axes (W; F* on base 2), each with one line or marker per
        memory present, the two counting-bound curves F log2 F / bits (bits 64 and 1) and the
        budget line; the legend is the figure's, below the panels. Mirrors no source figure:
        the book's own comparison.

    Raises
    ------
    TypeError
        If ``stored`` or ``trainings`` is not a DataFrame.
    ValueError
        If a column is missing, ``stored`` names a memory that is not in ``MEMORY_INFO``,
        ``d`` or ``F_max`` is below 2, or ``budget`` is not positive.
    """
    for what, frame in (("stored", stored), ("trainings", trainings)):
        require_frame(frame, _COLUMNS, what)
    unknown = sorted(set(stored.memory) - set(MEMORIES))
    if unknown:
        raise ValueError(f"stored names memories that are not in the comparison: {unknown}")
    if int(d) < 2 or int(F_max) < 2:
        raise ValueError(f"d and F_max must be at least 2, got d = {d}, F_max = {F_max}")
    if not budget > 0:
        raise ValueError(f"budget must be positive, got {budget!r}")
    F_line = np.geomspace(2, F_max, 200)
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 10.0), sharex=True, sharey=True)
    for ax, geometry in zip(axes, GEOMETRIES):
        rows_g = stored[stored.geometry == geometry]
        for name in MEMORIES:
            g = rows_g[rows_g.memory == name].sort_values("W")
            if g.empty:
                continue
            marker, c = memory_style(name)
            label = MEMORY_INFO[name].label
            if MEMORY_INFO[name].grows_with_pairs:  # a cache: its diagonal W = 2dF
                top = int(g.F_star.iloc[0])
                ax.plot([2 * 2 * d, top * 2 * d], [2, top], "-", color=c, lw=1.2)
                ax.plot(top * 2 * d, top, marker, color=c,
                        mfc="none" if bool(g.censored.iloc[0]) else c, label=label)
            else:
                ax.plot(g.W, g.F_star, "-" + marker, color=c, lw=1.2, ms=5, label=label,
                        mfc=c)
            if MEMORY_INFO[name].trained:  # a bar from the lowest to the highest training
                runs = trainings[(trainings.geometry == geometry) & (trainings.memory == name)]
                span = runs.groupby("W").F_star.agg(["min", "max"])
                ax.vlines(span.index, span["min"], span["max"], color=c, lw=2.5)
        for bits, lstyle in ((64, ":"), (1, "-.")):
            ax.plot(F_line * np.log2(F_line) / bits, F_line, lstyle, color="0.3", lw=1.3,
                    label=f"counting bound, {bits} bit{'s' if bits > 1 else ''} per parameter")
        ax.axvline(budget, color="0.75", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log", base=2)
        ax.set_ylabel("facts at 100 % recall, $F^\\star$")
        ax.set_title(geometry + ("" if geometry == "isotropic" else rf", spike $\beta = {spike_beta}$")
                     + f", $d = {d}$")
    axes[1].set_xlabel("parameters $W$")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return fig
