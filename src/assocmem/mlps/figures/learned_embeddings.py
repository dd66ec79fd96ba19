"""The figures of chapter 17: margins and capacity on a language model's own activations.

:func:`margins` draws the minimum margin against the number of facts with the fitted bounds
(source 001, App. A.5.3, Fig. 12); :func:`capacity` draws the smallest whitened MLP that recalls
98 % of the facts beside chapter 13's searches on random keys (Fig. 13).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color
from assocmem.plotting import require_frame as _need

__all__ = ["DRAWS", "capacity", "margins"]

#: The two ways of drawing fact sets from the captured pairs, and their colours.
DRAWS = (("uniform", "blue"), ("separated", "orange"))
_BOUNDS = (("eq. 44", "-"), ("eq. 9", "--"))




def margins(margin_rows: pd.DataFrame, means: Mapping[tuple, pd.DataFrame],
            widths: Sequence[int], trainings: Sequence) -> plt.Figure:
    """Minimum margin against F, one panel per width, with eq. 44 and eq. 9 fitted.

    Parameters
    ----------
    margin_rows : DataFrame
        One row per run, with columns ``draw`` (``"uniform"`` or ``"separated"``), ``m``, ``F``
        and ``gamma_min`` (the run's minimum margin): drawn as faint dots.
    means : mapping
        ``(training, draw, m, bound) -> DataFrame`` for ``bound`` in ``"eq. 44"`` and
        ``"eq. 9"``, each frame with columns ``F``, ``gamma_min`` (the seed means) and
        ``predicted`` (the fitted bound at each F). The fitted curves are drawn solid (eq. 44)
        and dashed (eq. 9); the seed means of the eq. 44 frame as markers.
    widths : sequence of int
        The widths m, one panel each, left to right.
    trainings : sequence
        The trainings of the language model; one curve of each bound per training.

    Returns
    -------
    matplotlib.figure.Figure
        ``len(widths)`` axes, log-2 F axis, a grey line at zero, panel titles ``"m = ..."``,
        a legend naming the draws in the first panel. Mirrors source 001's Fig. 12.

    Raises
    ------
    TypeError
        If ``margin_rows`` or a frame of ``means`` is not a DataFrame.
    ValueError
        If a column is missing, ``widths`` or ``trainings`` is empty, or ``means`` lacks a
        (training, draw, width, bound) the figure needs (the message names it).
    """
    _need(margin_rows, ("draw", "m", "F", "gamma_min"), "margin_rows")
    widths, trainings = list(widths), list(trainings)
    if not widths or not trainings:
        raise ValueError(f"need at least one width and one training, got {widths} and {trainings}")
    for t in trainings:
        for draw, _ in DRAWS:
            for m in widths:
                for bound, _ in _BOUNDS:
                    key = (t, draw, m, bound)
                    if key not in means:
                        raise ValueError(f"means lacks the fit {key}")
                    _need(means[key], ("F", "gamma_min", "predicted"), f"means[{key}]")
    fig, axes = plt.subplots(1, len(widths), figsize=(8.5, 3.4), squeeze=False)
    axes = axes[0]
    for ax, m in zip(axes, widths):
        for draw, name in DRAWS:
            c = color(name)
            g = margin_rows[(margin_rows.draw == draw) & (margin_rows.m == m)]
            ax.scatter(g.F, g.gamma_min, s=6, color=c, alpha=0.25)
            for t in trainings:
                for bound, ls in _BOUNDS:
                    fit = means[t, draw, m, bound]
                    ax.plot(fit.F, fit.predicted, ls, color=c, lw=0.9)
                fit = means[t, draw, m, "eq. 44"]
                ax.plot(fit.F, fit.gamma_min, "o", color=c, ms=3,
                        label=draw if t == trainings[0] else None)
        ax.set_xscale("log", base=2)
        ax.axhline(0.0, color="grey", lw=0.6)
        ax.set_title(f"m = {m}")
        ax.set_xlabel("facts F")
    axes[0].set_ylabel("minimum margin")
    axes[0].legend(fontsize=8)
    return fig


def capacity(cap_rows: pd.DataFrame, reference: pd.DataFrame, top: float,
             label: str = "book LM") -> plt.Figure:
    """Smallest whitened MLP recalling 98 % of F facts, beside chapter 13's searches.

    Parameters
    ----------
    cap_rows : DataFrame
        Our searches: columns ``draw`` (``"uniform"``/``"separated"``), ``F``, ``W`` and
        ``found`` (whether a width was found). Found searches are filled circles; the others
        crosses at ``top``.
    reference : DataFrame
        Chapter 13's whitened searches on random keys: columns ``geometry``
        (``"isotropic"``/``"anisotropic"``), ``F``, ``W``, ``found``; open squares
        (isotropic) and triangles (anisotropic) in black, plusses at ``top`` where none was
        found. May be empty.
    top : float
        Where a search with no width is drawn (above the largest width searched), with a dotted
        line.
    label : str
        The name of our fact sets in the legend.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log axes (F on base 2) with the searches and a dashed ``F log F`` line through
        the first found isotropic reference point (our first found point if there is none).
        Mirrors source 001's Fig. 13.

    Raises
    ------
    TypeError
        If ``cap_rows`` or ``reference`` is not a DataFrame.
    ValueError
        If a column is missing, ``top`` is not a positive finite number, or no search at all
        found a width (nothing to anchor the F log F line on).
    """
    _need(cap_rows, ("draw", "F", "W", "found"), "cap_rows")
    _need(reference, ("geometry", "F", "W", "found"), "reference")
    if not np.isfinite(top) or top <= 0:
        raise ValueError(f"top must be a positive finite number, got {top!r}")
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for draw, name in DRAWS:
        c = color(name)
        g = cap_rows[cap_rows.draw == draw]
        ok = g[g.found.astype(bool)]
        ax.plot(ok.F, ok.W, "o", color=c, ms=4, label=f"{label}, {draw}")
        miss = g[~g.found.astype(bool)]
        ax.plot(miss.F, np.full(len(miss), top), "x", color=c, ms=7)
    for geometry, mk in (("isotropic", "s"), ("anisotropic", "^")):
        g = reference[reference.geometry == geometry]
        ok = g[g.found.astype(bool)]
        ax.plot(ok.F, ok.W, mk, color=color("black"), ms=4, mfc="none",
                label=f"chapter 13, {geometry}")
        miss = g[~g.found.astype(bool)]
        ax.plot(miss.F, np.full(len(miss), top), "+", color=color("black"), ms=8)
    anchor = reference[reference.geometry == "isotropic"] if len(reference) else cap_rows
    anchor = anchor[anchor.found.astype(bool)].sort_values("F")
    if anchor.empty:
        plt.close(fig)
        raise ValueError("no search found a width: nothing to anchor the F log F line on")
    anchor = anchor.iloc[0]
    Fg = np.geomspace(cap_rows.F.min(), cap_rows.F.max(), 50)
    scale = float(anchor.W) / (anchor.F * np.log(anchor.F))
    ax.plot(Fg, scale * Fg * np.log(Fg), "k--", lw=0.8, label="F log F")
    ax.axhline(top, color="grey", lw=0.5, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("facts F")
    ax.set_ylabel("parameters W = 3md")
    ax.legend(fontsize=7, loc="upper left")
    return fig
