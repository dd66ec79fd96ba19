"""Figures of the chapter on facts per parameter (chapter 13): what each memory pays in parameters.

One function per figure; each takes the stored capacity searches and returns the Figure.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.mlps.capacity_sweeps import counting_lower_bound
from assocmem.plotting import color
from assocmem.plotting import require_frame as _require

if TYPE_CHECKING:
    from collections.abc import Sequence
    from matplotlib.figure import Figure

__all__ = ["METHOD_LABELS", "METHOD_COLORS", "cost_against_facts"]

#: How the figures name the methods of the capacity sweep.
METHOD_LABELS = {"gd": "GD", "ntk": "NTK", "unwhitened": "unwhitened", "whitened": "whitened",
                 "data_dependent": "data-dependent"}
#: One colour per method, the same in every figure of the chapter.
METHOD_COLORS = {"gd": "black", "ntk": "vermillion", "unwhitened": "orange", "whitened": "blue",
                 "data_dependent": "green"}
_POINT_COLUMNS = ("method", "geometry", "F", "W", "found")
_TRAINING_COLUMNS = ("method", "geometry", "d", "F", "W")
GEOMETRIES = ("isotropic", "anisotropic")




def cost_against_facts(points: pd.DataFrame, trainings: pd.DataFrame | None, *, d: int, hi: int,
                       beta: float, methods: Sequence[str] | None = None, bits: int = 16) -> Figure:
    """Parameter count ``W = 3 m* d`` of each method against the number of facts (Fig. 2c, Fig. 11).

    Two log-log panels sharing the vertical axis, isotropic keys and values (left) and the rank-1
    spike (right), as the source's Figure 2c and Figure 11 show them. In each panel: one line per
    method through the points where its search found a width; for GD a vertical bar from its
    lowest to its highest training; open triangles above a grey cap line at ``3 hi d`` (one row
    per method) where the search found no width up to ``hi``; a dashed ``F log F`` line through
    the data-dependent construction's first isotropic point; the counting bound of Theorem 2.4
    at ``bits`` bits per parameter (dotted); and a dash-dotted vertical line at
    ``F = d (d + 1) / 2``, the dimension of the quadratic forms.

    Parameters
    ----------
    points : pandas.DataFrame
        One row per (method, geometry, F) at width ``d``, with columns ``method``, ``geometry``
        (``"isotropic"`` or ``"anisotropic"``), ``F``, ``W`` and ``found``; GD's row is the one
        the line goes through (its median training).
    trainings : pandas.DataFrame or None
        Every GD training (columns ``method``, ``geometry``, ``d``, ``F``, ``W``), for the bars;
        rows of other methods or another ``d`` are ignored. None: no bars.
    d : int
        The embedding width of the points.
    hi : int
        The largest width the search tried (the cap line is at ``3 hi d``).
    beta : float
        The spike's strength, named in the right panel's title.
    methods : sequence of str, optional
        The methods to draw, in this order (keys of :data:`METHOD_LABELS`); by default those of
        ``points`` in the order of :data:`METHOD_LABELS`.
    bits : int, default 16
        Bits per parameter of the counting bound.

    Returns
    -------
    matplotlib.figure.Figure
        Its two axes are ``fig.axes[0]`` (isotropic) and ``fig.axes[1]`` (anisotropic).

    Raises
    ------
    TypeError
        If ``points`` (or ``trainings``) is not a DataFrame.
    ValueError
        If a column is missing, a method is unknown, ``d`` or ``hi`` is not positive, or
        ``points`` has no found isotropic data-dependent point to anchor the ``F log F`` line.
    """
    _require(points, _POINT_COLUMNS, "points")
    if trainings is not None:
        _require(trainings, _TRAINING_COLUMNS, "trainings")
    if not (d >= 1 and hi >= 1):
        raise ValueError(f"d and hi must be positive, got d={d!r}, hi={hi!r}")
    if methods is None:
        methods = [m for m in METHOD_LABELS if m in set(points.method)]
    unknown = [m for m in methods if m not in METHOD_LABELS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(METHOD_LABELS)}")
    anchors = points[(points.method == "data_dependent") & (points.geometry == "isotropic")
                     & points.found.astype(bool)].sort_values("F")
    if anchors.empty:
        raise ValueError("points has no found isotropic data_dependent point to anchor the F log F "
                         "line")
    anchor = anchors.iloc[0]
    F_grid = np.array(sorted(points.F.unique()), dtype=float)
    F_line = np.geomspace(F_grid.min(), F_grid.max(), 100)
    flogf = anchor.W * F_line * np.log(F_line) / (anchor.F * math.log(anchor.F))
    w_cap = 3 * hi * d
    rank = d * (d + 1) / 2

    fig, axes = plt.subplots(1, 2, figsize=(8, 4.0), sharey=True)
    for ax, geometry in zip(axes, GEOMETRIES):
        for k, method in enumerate(methods):
            c = color(METHOD_COLORS[method])
            g = points[(points.method == method) & (points.geometry == geometry)].sort_values("F")
            ok = g[g.found.astype(bool)]
            ax.plot(ok.F, ok.W, "o-", color=c, label=METHOD_LABELS[method])
            if method == "gd" and trainings is not None:  # lowest to highest training
                runs = trainings[(trainings.method == "gd") & (trainings.geometry == geometry)
                                 & (trainings.d == d)]
                span = runs.groupby("F").W.agg(["min", "max"])
                ax.vlines(span.index, span["min"], span["max"], color=c, lw=2.5)
            miss = g[~g.found.astype(bool)]  # no width up to hi: above the cap, a row per method
            ax.plot(miss.F, np.full(len(miss), w_cap * 1.45**k), "^", color=c, mfc="none", ms=7)
        ax.plot(F_line, flogf, "--", color="0.45", lw=1.2, label=r"$\propto F\log F$")
        ax.plot(F_line, counting_lower_bound(F_line, bits=bits), ":", color="0.2", lw=1.4,
                label=f"counting bound (Thm 2.4), $b = {bits}$")
        ax.plot([], [], "^", color="0.4", mfc="none", ms=7,
                label=f"no width $m \\leq {hi}$ stores the set")
        ax.axhline(w_cap, color="0.75", lw=0.8)
        ax.axvline(rank, color="0.6", lw=0.8, ls="-.")
        ax.text(rank * 0.93, 150, "$d(d+1)/2$", rotation=90, ha="right", va="bottom", fontsize=8,
                color="0.4")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("facts $F$")
        spike = "" if geometry == "isotropic" else rf", spike $\beta = {beta}$"
        ax.set_title(f"{geometry}{spike}, $d = {d}$")
    axes[0].set_ylabel("parameters $W = 3md$ to store every fact")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, -0.1))
    return fig
