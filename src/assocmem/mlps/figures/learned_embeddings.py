"""The figures of chapter 17: margins and capacity on a language model's own activations.

:func:`margins` draws the minimum margin against the number of facts with the fitted bounds
(source 001, App. A.5.3, Fig. 12); :func:`capacity` draws the smallest whitened MLP that recalls
98 % of the facts beside chapter 13's searches on random keys (Fig. 13); :func:`block_capacity`
draws the smallest whitened MLP at which a Transformer block on the same activations reaches 100 %
training accuracy, beside the standalone MLP (Fig. 14).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color
from assocmem.plotting import require_frame as _need

__all__ = ["DRAWS", "CAPACITY_DRAWS", "block_capacity", "capacity", "margins"]

#: The two ways of drawing fact sets from the captured pairs, and their colours.
DRAWS = (("uniform", "blue"), ("separated", "orange"))
#: The capacity figures' draws: those two and the deduplicated draw (no near-twins).
CAPACITY_DRAWS = (*DRAWS, ("deduplicated", "green"))
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
        Our searches: columns ``draw`` (a name of :data:`CAPACITY_DRAWS`; the draws present are
        drawn), ``F``, ``W`` and ``found`` (whether a width was found). Found searches are
        filled circles; the others crosses at ``top``.
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
    for draw, name in CAPACITY_DRAWS:
        c = color(name)
        g = cap_rows[cap_rows.draw == draw]
        if g.empty:
            continue
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
    _finish_capacity_axes(ax, cap_rows.F, anchor.iloc[0], top)
    return fig


def block_capacity(rows: pd.DataFrame, top: float, label: str = "book LM") -> plt.Figure:
    """Smallest whitened MLP (``W = 3 m d``) at which a Transformer block reaches 100 % training
    accuracy on language-model facts, beside the standalone MLP on the same facts.

    Parameters
    ----------
    rows : DataFrame
        One search per row: columns ``draw`` (a name of :data:`CAPACITY_DRAWS`), ``F``, ``W``,
        ``found`` (the block's search), ``W_mlp`` and ``found_mlp`` (the standalone MLP's).
        Block searches are filled circles, standalone ones open circles of the same colour;
        a search with no width is a cross (block) or a plus (standalone) at ``top``.
    top : float
        Where a search with no width is drawn, with a dotted line.
    label : str
        The name of our fact sets in the legend.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log axes (F on base 2) and a dashed ``F log F`` line through the first found
        block point (the first found standalone point when no block search found a width).
        Mirrors source 001's Fig. 14.

    Raises
    ------
    TypeError
        If ``rows`` is not a DataFrame.
    ValueError
        If a column is missing, ``top`` is not a positive finite number, a draw is unknown, or
        no search, block or standalone, found a width (nothing to anchor the F log F line on).
    """
    _need(rows, ("draw", "F", "W", "found", "W_mlp", "found_mlp"), "rows")
    if not np.isfinite(top) or top <= 0:
        raise ValueError(f"top must be a positive finite number, got {top!r}")
    known = dict(CAPACITY_DRAWS)
    unknown = sorted(set(rows.draw) - set(known))
    if unknown:
        raise ValueError(f"unknown draw(s) {unknown}; expected names from {sorted(known)}")
    anchor = rows[rows.found.astype(bool)].sort_values("F")
    if anchor.empty:  # no block point: anchor on the standalone MLP
        anchor = rows[rows.found_mlp.astype(bool)].sort_values("F").assign(W=lambda f: f.W_mlp)
    if anchor.empty:
        raise ValueError("no search found a width: nothing to anchor the F log F line on")
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for draw, name in CAPACITY_DRAWS:
        g = rows[rows.draw == draw]
        if g.empty:
            continue
        c = color(name)
        for found, W, mfc, miss, who in (("found", "W", c, "x", "block"),
                                         ("found_mlp", "W_mlp", "none", "+", "MLP alone")):
            ok = g[g[found].astype(bool)]
            ax.plot(ok.F, ok[W], "o", color=c, mfc=mfc, ms=4, label=f"{label}, {draw}: {who}")
            bad = g[~g[found].astype(bool)]
            ax.plot(bad.F, np.full(len(bad), top), miss, color=c, ms=7)
    _finish_capacity_axes(ax, rows.F, anchor.iloc[0], top)
    return fig


def _finish_capacity_axes(ax, F, anchor, top) -> None:
    """The F log F line through the ``anchor`` search (its ``F`` and ``W``) over the range of
    ``F``, the dotted line at ``top`` where failed searches are drawn, log axes, labels, legend."""
    Fg = np.geomspace(F.min(), F.max(), 50)
    scale = float(anchor.W) / (anchor.F * np.log(anchor.F))
    ax.plot(Fg, scale * Fg * np.log(Fg), "k--", lw=0.8, label="F log F")
    ax.axhline(top, color="grey", lw=0.5, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("facts F")
    ax.set_ylabel("parameters W = 3md")
    ax.legend(fontsize=7, loc="upper left")
