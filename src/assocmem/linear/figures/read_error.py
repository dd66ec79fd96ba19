"""Figures of the chapter on how much a matrix remembers (chapter 3): read error of random keys.

One function per figure; each takes the frame of :func:`assocmem.linear.capacity.read_error_curve`
(columns ``memory``, ``n``, ``error``, ``sem`` and the grouping columns) and returns the Figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.linear import theory
from assocmem.plotting import color, require_frame

if TYPE_CHECKING:
    from collections.abc import Sequence
    from matplotlib.figure import Figure

__all__ = ["MEMORIES", "MEMORY_TITLES", "read_error_by_key_dimension", "read_error_by_values"]

#: The two memories, in the order of the panels, with their closed-form read errors.
MEMORIES = {"additive": theory.additive_read_error,
            "least_squares": theory.least_squares_read_error}
#: Panel titles of the two memories.
MEMORY_TITLES = {"additive": "additive memory $S = VK^\\top$",
                 "least_squares": "least-squares memory $S^\\star = VK^+$"}
_XLABEL = "stored pairs per key dimension, $n/d_k$"


def _check(curves, columns):
    require_frame(curves, ("memory", "n", "error", "sem", *columns), "curves")
    absent = [m for m in MEMORIES if m not in set(curves.memory)]
    if absent:
        raise ValueError(f"curves has no rows of the memory {absent}; both panels need them")


def read_error_by_key_dimension(curves: pd.DataFrame, d_ks: Sequence[int]) -> Figure:
    """Read error against ``n / d_k`` for several key dimensions, both memories (source Sec. 7).

    Two panels, the additive memory (left) and the least-squares memory (right). For each key
    dimension (colour ``i`` of the house cycle): the Monte Carlo means with one standard error as
    markers and the closed form (``(n - 1)/d_k``, ``max(0, 1 - d_k/n)``) as a thin line from
    ``n = 1`` to the largest ``n``; a dashed line at the size of the signal (1), a dotted one at
    ``n = d_k``, and one legend entry per key dimension plus "theory" on the left panel.

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns ``memory`` (``"additive"``, ``"least_squares"``), ``d_k``, ``n``, ``error`` and
        ``sem``, one row per point.
    d_ks : sequence of int
        The key dimensions to draw, in colour order.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``curves`` is not a DataFrame.
    ValueError
        If a column or a memory is missing, or a key dimension has no rows.
    """
    _check(curves, ("d_k",))
    absent = [d for d in d_ks if d not in set(curves.d_k)]
    if absent:
        raise ValueError(f"curves has no rows with d_k in {absent}")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    for ax, (memory, formula) in zip(axes, MEMORIES.items()):
        for i, d_k in enumerate(d_ks):
            sub = curves[(curves.memory == memory) & (curves.d_k == d_k)]
            n = np.linspace(1, sub.n.max(), 400)
            ax.plot(n / d_k, formula(n, d_k), color=color(i), lw=1)
            ax.errorbar(sub.n / d_k, sub.error, yerr=sub["sem"], fmt="o", color=color(i),
                        label=f"$d_k = {d_k}$")
        ax.axhline(1, color="0.5", ls="--", lw=0.8)
        ax.axvline(1, color="0.5", ls=":", lw=0.8)
        ax.set(title=MEMORY_TITLES[memory], xlabel=_XLABEL,
               ylabel="mean squared read error $e(n)$ (units of $E\\|v\\|^2$)")
    axes[0].plot([], [], color="0.3", lw=1, label="theory")
    axes[0].legend()
    return fig


def read_error_by_values(curves: pd.DataFrame, d_k: int,
                         variants: Sequence[tuple[int, str]]) -> Figure:
    """Read error for several value dimensions and distributions at one key dimension.

    Two panels as in :func:`read_error_by_key_dimension`: the closed form as a grey line and, for
    each variant ``(d_v, distribution)`` (colour ``i``, markers o, s, ^ in turn, hollow), the
    Monte Carlo means with one standard error, shifted sideways by ``0.03 (i - 1)`` so that the
    sets do not hide each other; the legend on the left panel.

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns ``memory``, ``d_v``, ``values`` (the value distribution's name), ``n``,
        ``error`` and ``sem``.
    d_k : int
        The key dimension of every row.
    variants : sequence of (int, str)
        The ``(d_v, distribution)`` pairs to draw, at most three.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``curves`` is not a DataFrame.
    ValueError
        If a column or a memory is missing, there are more than three variants, or a variant
        has no rows.
    """
    _check(curves, ("d_v", "values"))
    markers = ["o", "s", "^"]
    if len(variants) > len(markers):
        raise ValueError(f"at most {len(markers)} variants, got {len(variants)}")
    for d_v, dist in variants:
        if not ((curves.d_v == d_v) & (curves["values"] == dist)).any():
            raise ValueError(f"curves has no rows with d_v = {d_v} and {dist} values")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for ax, (memory, formula) in zip(axes, MEMORIES.items()):
        n = np.linspace(1, curves.n.max(), 400)
        ax.plot(n / d_k, formula(n, d_k), color="0.3", lw=1, label="theory")
        for i, ((d_v, dist), marker) in enumerate(zip(variants, markers)):
            sub = curves[(curves.memory == memory) & (curves.d_v == d_v)
                         & (curves["values"] == dist)]
            ax.errorbar(sub.n / d_k + 0.03 * (i - 1), sub.error, yerr=sub["sem"], fmt=marker,
                        mfc="none", color=color(i), label=f"$d_v = {d_v}$, {dist} values")
        ax.set(title=f"{MEMORY_TITLES[memory]}, $d_k = {d_k}$", xlabel=_XLABEL,
               ylabel="mean squared read error $e(n)$")
    axes[0].legend()
    return fig
