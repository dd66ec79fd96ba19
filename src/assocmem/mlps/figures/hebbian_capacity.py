"""Figures of the chapter on facts, margins and the counting bound (chapter 10): how many random
facts the two Hebbian memories of eq. 5 decode.

One function per figure; each takes the computed frame and returns the Figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.mlps import counting as C
from assocmem.plotting import color, require_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["KERNEL_LABELS", "accuracy_and_margins", "capacity_against_width"]

#: How the figures name the two Hebbian kernels (colour ``i`` of the house cycle, in this order).
KERNEL_LABELS = {"linear": "linear, eq. 5", "k2": "quadratic kernel $K_2$"}


def _check(frame, columns, name):
    require_frame(frame, columns, name)
    unknown = sorted(set(frame.kernel) - set(KERNEL_LABELS))
    if unknown:
        raise ValueError(f"{name} has unknown kernel(s) {unknown}; known: {list(KERNEL_LABELS)}")


def accuracy_and_margins(mean: pd.DataFrame, d: int) -> Figure:
    """Accuracy and margins of the Hebbian memories as the number of facts grows (Defs. 2.1-2.2).

    Left: the fraction of facts decoded against ``F``, one line per kernel. Right: the smallest
    margin (solid, markers) and the median margin (dotted) against ``F``, with the zero line and a
    vertical range that shows every smallest margin (at least down to -1). Both panels have a
    log2 ``F`` axis with dashed lines at ``F = d`` and ``F = d^2``.

    Parameters
    ----------
    mean : pandas.DataFrame
        One row per (kernel, F): columns ``kernel`` (``"linear"``, ``"k2"``), ``F``, ``accuracy``,
        ``gamma_min`` and ``gamma_median`` (means over seeds).
    d : int
        The embedding width (for the lines at ``d`` and ``d^2``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``mean`` is not a DataFrame.
    ValueError
        If a column is missing, a kernel is unknown, or ``d`` is not positive.
    """
    _check(mean, ("kernel", "F", "accuracy", "gamma_min", "gamma_median"), "mean")
    if not d >= 1:
        raise ValueError(f"d must be positive, got {d!r}")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for c, (k, name) in enumerate(KERNEL_LABELS.items()):
        sub = mean[mean.kernel == k]
        axes[0].plot(sub.F, sub.accuracy, "o-", color=color(c), label=name)
        axes[1].plot(sub.F, sub.gamma_min, "o-", color=color(c),
                     label=f"{name}: $\\gamma_{{\\min}}$")
        axes[1].plot(sub.F, sub.gamma_median, ":", color=color(c),
                     label=f"{name}: median $\\gamma_i$")
    for ax in axes:
        ax.set_xscale("log", base=2)
        for x, lab in ((d, "$F = d$"), (d**2, "$F = d^2$")):
            ax.axvline(x, color="0.5", ls="--", lw=0.8)
            ax.text(x, 1.02, lab, transform=ax.get_xaxis_transform(), ha="center", fontsize=8)
        ax.set_xlabel("number of stored facts $F$")
    axes[0].set_ylabel("accuracy (fraction of facts decoded)")
    axes[1].axhline(0, color="black", lw=0.8)
    axes[1].set_ylabel(r"margin (kernel-Hebbian scale)")
    axes[1].set_ylim(1.1 * min(float(mean.gamma_min.min()), -1.0), 1.05)  # every margin in view
    axes[0].legend()
    axes[1].legend(fontsize=8, loc="lower left")
    return fig


def capacity_against_width(cap: pd.DataFrame) -> Figure:
    """Capacity of the Hebbian memories against ``d``, raw and rescaled as ``F ln F / d^p``.

    Left (log-log): one dot per seed for the largest ``F`` stored, the heuristic capacity
    ``F ln F = c d^p`` of :data:`assocmem.mlps.counting.HEURISTIC_CONSTANTS` as a solid line per
    kernel, and ``F = d`` (Part I's scale) dotted. Right (log ``d``): ``F ln F / d^p`` per seed
    with the heuristic constant ``c`` dashed, vertical range 0 to 0.25. Both from ``d = 6`` to
    1.5 times the largest ``d``.

    Parameters
    ----------
    cap : pandas.DataFrame
        One row per (kernel, d, seed): columns ``kernel``, ``d``, ``capacity`` and ``constant``
        (``F ln F / d^p`` at capacity).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``cap`` is not a DataFrame.
    ValueError
        If a column is missing or a kernel is unknown.
    """
    _check(cap, ("kernel", "d", "capacity", "constant"), "cap")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    d_hi = 1.5 * cap.d.max()
    dd = np.geomspace(6, d_hi, 200)
    for c, (k, name) in enumerate(KERNEL_LABELS.items()):
        sub = cap[cap.kernel == k]
        const, p = C.HEURISTIC_CONSTANTS[k]
        axes[0].scatter(sub.d, sub.capacity, s=16, color=color(c), label=f"{name}: measured")
        axes[0].plot(dd, C.capacity_heuristic(dd, k), color=color(c), lw=1,
                     label=f"$F\\,\\ln F = d^{p}/{round(1 / const)}$")
        axes[1].scatter(sub.d, sub.constant, s=16, color=color(c),
                        label=f"{name}: $F\\,\\ln F / d^{p}$")
        axes[1].axhline(const, color=color(c), lw=1, ls="--",
                        label=f"heuristic $1/{round(1 / const)}$")
    axes[0].plot(dd, dd, color="0.4", ls=":", label="$F = d$ (Part I's scale)")
    axes[0].set(xscale="log", yscale="log", xlabel="embedding width $d$",
                ylabel="largest $F$ stored (facts)", xlim=(6, d_hi))
    axes[1].set(xscale="log", xlabel="embedding width $d$",
                ylabel=r"$F\,\ln F\,/\,d^{p}$ at capacity", ylim=(0, 0.25), xlim=(6, d_hi))
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8, loc="upper right")
    return fig
