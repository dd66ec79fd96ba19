"""Figures of the chapter "Counting shared neurons" (Part III, chapter 31).

One function per figure; each takes the chapter's computed data, draws with the house style
(:mod:`assocmem.plotting`) and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence, TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

from assocmem.plotting import color

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from matplotlib.figure import Figure

__all__ = ["intersection_map_figure", "simulation_figure", "kanerva_figure", "staircase_figure"]


def _vector(x, name: str) -> np.ndarray:
    out = np.asarray(x, dtype=float)
    if out.ndim != 1 or out.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {out.shape}")
    return out


def _tex_count(r: int) -> str:
    """``r`` in TeX: ``10^{k}`` for a power of ten, else the integer."""
    k = round(math.log10(r)) if r > 0 else 0
    return f"10^{{{k}}}" if r > 0 and 10**k == r else str(r)


def _log10(values, name: str) -> list[float]:
    """log10 of exact (possibly huge) positive integers; NaN for zero."""
    out = []
    for v in values:
        if v < 0:
            raise ValueError(f"{name} must hold counts >= 0, got {v}")
        out.append(math.log10(v) if v > 0 else math.nan)
    return out


def intersection_map_figure(grid: ArrayLike) -> Figure:
    """The exact circle intersection ``log10 I(d_v, d, n)`` over every radius and distance.

    Parameters
    ----------
    grid : array of shape (n + 1, n + 1)
        Exact counts (Python ints allowed), indexed ``[d, d_v]``.

    Returns
    -------
    matplotlib.figure.Figure
        A heat map of ``log10 I`` (blank where ``I = 0``) with a colour bar, the stepped edge of
        ``I > 0`` (``d_v <= 2d``) and hatched cells where the paper's lower limit of ``a``,
        ``n - d - floor(d_v / 2)``, is negative. The paper has no such figure.

    Raises
    ------
    ValueError
        If ``grid`` is not square or holds a negative count.
    """
    grid = np.asarray(grid, dtype=object)
    if grid.ndim != 2 or grid.shape[0] != grid.shape[1] or grid.shape[0] < 2:
        raise ValueError(f"grid must be a square (n + 1, n + 1) array, got shape {grid.shape}")
    n = grid.shape[0] - 1
    log_grid = np.array([_log10(row, "grid") for row in grid])
    fig, ax = plt.subplots(figsize=(7.0, 5.4))
    im = ax.imshow(log_grid, origin="lower", cmap="viridis", aspect="equal")
    fig.colorbar(im, ax=ax, label=r"$\log_{10} I(d_v, d, n)$ (addresses)")
    # the boundary of I > 0 runs along cell edges: dv = 2d is the last nonzero cell
    edge = [(0.5, -0.5)]
    for d in range(n // 2 + 1):
        edge += [(2 * d + 0.5, d + 0.5), (min(2 * d + 2.5, n + 0.5), d + 0.5)]
    ax.plot(*zip(*edge), color=color("vermillion"), lw=1.5,
            label=r"edge of $I > 0$ ($d_v \leq 2d$)")
    for d in range(n + 1):
        for dv in range(n + 1):
            if d + dv // 2 > n:  # the paper's lower limit of a is negative
                ax.add_patch(plt.Rectangle((dv - 0.5, d - 0.5), 1, 1, fill=False,
                                           hatch="///", lw=0, color="0.25"))
    ax.plot([], [], " ", label=r"hatched: paper's lower limit of $a$ < 0")
    ax.set_xticks(range(0, n + 1, 2))
    ax.set_yticks(range(0, n + 1, 2))
    ax.set_xlabel(r"distance between query and pattern $d_v$ (bits)")
    ax.set_ylabel(r"read/write radius $d$ (bits)")
    ax.set_title(f"Exact circle intersection, n = {n} (blank: I = 0)")
    ax.grid(False)
    ax.legend(loc="lower right", fontsize=8, frameon=True)
    return fig


def simulation_figure(dvs: ArrayLike, counts: ArrayLike, expected: ArrayLike, z: ArrayLike, n: int,
                      r: int, d: int) -> Figure:
    """Simulated shared neurons against Eq. 2, the paper's Fig. 11 check.

    Parameters
    ----------
    dvs : array of shape (D,)
        Query-pattern distances.
    counts : array of shape (trials, D)
        Shared-neuron counts per trial and distance.
    expected : array of shape (D,)
        ``I r / 2^n`` per distance.
    z : array of shape (D,)
        (simulated mean - expected) / standard error per distance.
    n, r, d : int
        The setting, for the title.

    Returns
    -------
    matplotlib.figure.Figure
        Top: the expected counts (line) and the simulated means with two-standard-error bars.
        Bottom: ``z`` per distance over the grey band ``[-4, 4]``.

    Raises
    ------
    ValueError
        If the shapes do not agree or fewer than two trials are given.
    """
    dvs, expected, z = _vector(dvs, "dvs"), _vector(expected, "expected"), _vector(z, "z")
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[0] < 2 or counts.shape[1] != dvs.size \
            or expected.size != dvs.size or z.size != dvs.size:
        raise ValueError(f"counts {counts.shape} must be (trials >= 2, {dvs.size}) and expected "
                         f"{expected.shape}, z {z.shape} must have {dvs.size} entries")
    trials = counts.shape[0]
    fig, (ax, az) = plt.subplots(2, 1, figsize=(7.0, 6.4), sharex=True)
    ax.plot(dvs, expected, color=color("blue"), label=r"Eq. 2: $I\,r/2^n$")
    ax.errorbar(dvs, counts.mean(axis=0), yerr=2 * counts.std(axis=0, ddof=1) / math.sqrt(trials),
                fmt="o", ms=3, color=color("orange"), ecolor=color("orange"),
                label=f"simulated mean, $\\pm 2$ SE ({trials} draws)")
    ax.set_ylabel("shared neurons (count)")
    ax.set_title(rf"$n = {n}$, $r = {_tex_count(r)}$, $d = {d}$")
    ax.legend()
    az.axhspan(-4, 4, color="0.88", label="tolerance: 4 SE")
    az.plot(dvs, z, "o", ms=3, color=color("orange"), label="(simulated - Eq. 2) / SE")
    az.axhline(0, color=color("blue"), lw=1)
    az.set_xlabel(r"distance between query and pattern $d_v$ (bits)")
    az.set_ylabel("standardised difference (SE)")
    az.set_ylim(-5, 5)
    az.legend(loc="lower left")
    return fig


def kanerva_figure(dvs: ArrayLike, exact: ArrayLike, normal: ArrayLike, corrected: ArrayLike,
                   n: int, d: int, r: int, up_to: int = 700) -> Figure:
    """Kanerva's continuous approximation against the exact count (the paper's Fig. 10 setting).

    Parameters
    ----------
    dvs : array of shape (D,)
        Integer distances.
    exact, normal, corrected : array of shape (D,)
        Expected shared neurons: exact (``I r / 2^n``), Kanerva's normal approximation, and the
        approximation with the radius ``d + 1/2``.
    n, d, r : int
        The setting, for the title.
    up_to : int
        Largest distance drawn.

    Returns
    -------
    matplotlib.figure.Figure
        Top: the three counts on a log scale. Bottom: the two approximations' ratios to the
        exact count, each split into an even-distance and an odd-distance line, and 1.

    Raises
    ------
    ValueError
        If the arrays differ in length.
    """
    dvs = _vector(dvs, "dvs")
    exact, normal = _vector(exact, "exact"), _vector(normal, "normal")
    corrected = _vector(corrected, "corrected")
    if not exact.size == normal.size == corrected.size == dvs.size:
        raise ValueError("dvs, exact, normal and corrected must have the same length")
    show = dvs <= up_to
    fig, (ax, ar) = plt.subplots(2, 1, figsize=(7.0, 6.8), sharex=True)
    ax.semilogy(dvs[show], exact[show], color=color("blue"), label=r"exact, $I\,r/2^n$")
    ax.semilogy(dvs[show], normal[show], "--", color=color("vermillion"),
                label="continuous (Kanerva)")
    ax.semilogy(dvs[show], corrected[show], ":", color=color("green"),
                label=r"continuous, $d + 1/2$")
    ax.set_ylabel("expected shared neurons (count)")
    ax.set_title(rf"$n = {n}$, $d = {d}$, $r = {_tex_count(r)}$")
    ax.legend()
    even, odd = show & (dvs % 2 == 0), show & (dvs % 2 == 1)
    for ratio, c, name in [(normal / exact, "vermillion", "continuous (Kanerva)"),
                           (corrected / exact, "green", r"continuous, $d + 1/2$")]:
        ar.plot(dvs[even], ratio[even], color=color(c), label=f"{name} / exact, even $d_v$")
        ar.plot(dvs[odd], ratio[odd], color=color(c), alpha=0.4, lw=1.0,
                label=f"{name} / exact, odd $d_v$")
    ar.axhline(1, color=color("blue"), lw=1)
    ar.set_xlabel(r"distance between query and pattern $d_v$ (bits)")
    ar.set_ylabel("ratio to the exact count")
    ar.set_ylim(0.8, 1.4)
    ar.legend(loc="upper left", fontsize=8)
    return fig


def staircase_figure(top: Mapping[int, Sequence[int]], bottom: Mapping[int, Sequence[int]],
                     n_top: int = 64, n_bottom: int = 1000) -> Figure:
    """The staircase: ``log10 I(d_v, d, n)`` at consecutive distances, one curve per radius.

    Parameters
    ----------
    top, bottom : mapping d -> sequence of int
        Exact counts ``I(0..D-1, d, n)`` per radius for the top panel (``n_top``) and the
        bottom panel (``n_bottom``).
    n_top, n_bottom : int
        The address lengths of the two panels (titles).

    Returns
    -------
    matplotlib.figure.Figure
        Two stacked panels, one line with a marker per distance for each radius.

    Raises
    ------
    ValueError
        If a panel has no radius or a count is negative.
    """
    if not top or not bottom:
        raise ValueError("each panel needs at least one radius")
    fig, (a64, a1k) = plt.subplots(2, 1, figsize=(7.0, 6.8))
    for i, (d, counts) in enumerate(top.items()):
        a64.plot(range(len(counts)), _log10(counts, "top"), "o-", ms=3, color=color(i),
                 label=f"d = {d}")
    a64.set_title(rf"$n = {n_top}$: every $d_v$ up to $2d$")
    for i, (d, counts) in enumerate(bottom.items()):
        a1k.plot(range(len(counts)), _log10(counts, "bottom"), "o-", ms=3,
                 color=color(i + 3), label=f"d = {d}")
    longest = max(len(c) for c in bottom.values()) - 1
    a1k.set_title(rf"$n = {n_bottom}$: the first {longest} bits")
    for a in (a64, a1k):
        a.set_xlabel(r"distance between query and pattern $d_v$ (bits)")
        a.set_ylabel(r"$\log_{10} I(d_v, d, n)$ (addresses)")
        a.legend()
    fig.tight_layout()
    return fig
