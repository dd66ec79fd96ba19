"""Figures of the chapter "Why it looks exponential, and which beta" (Part III, chapter 32).

One function per figure; each takes the chapter's computed data, draws with the house style
(:mod:`assocmem.plotting`) and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from assocmem.plotting import color

__all__ = ["fits_figure"]


def _draw_fits(ax, n: int, d: int, log_i: np.ndarray, fits) -> None:
    dv = np.arange(log_i.size)
    y0 = log_i[0]
    ax.plot(dv, log_i - y0, ".", color="0.55", ms=3, label=r"$\ln I$, every $d_v$")
    every = max(1, d // 25)  # at n = 1000 every 18th corner, so the markers stay apart
    ax.plot(dv[::2][::every], log_i[::2][::every] - y0, "o", color=color("blue"), ms=3.5,
            mfc="none", label="even $d_v$ (corners)")
    for (fit, style, name), c in zip(fits, ("vermillion", "green")):
        line = fit.intercept + fit.beta * (1 - 2 * dv / n) - y0
        ax.plot(dv, line, style, color=color(c),
                label=f"{name}: $\\beta$ = {fit.beta:.1f}, $R^2$ = {fit.r2:.2f}")
    for x, txt in [(d, "$d$"), (2 * d, "$2d$")]:
        ax.axvline(x, color="0.7", lw=0.8, ls=":")
        ax.text(x, 0.98, txt + " ", transform=ax.get_xaxis_transform(), ha="right", va="top",
                fontsize=9, color="0.4")
    ax.set_title(f"$n$ = {n}, $d$ = {d}")
    ax.set_xlabel(r"Hamming distance $d_v$ (bits)")
    ax.set_ylabel(r"$\ln I(d_v) - \ln I(0)$ (nats)")
    ax.legend(fontsize=7.5, loc="lower left")


def fits_figure(panels: Sequence[tuple]):
    """The log intersection against distance with fitted lines, one panel per setting.

    Mirrors the paper's log-linear fits of the circle intersection (its Figs. 12-14, as the
    review recomputes them).

    Parameters
    ----------
    panels : sequence of (n, d, log_i, fits)
        ``log_i`` is ``ln I(d_v, d, n)`` at ``d_v = 0 .. 2d`` (shape ``(2d + 1,)``); ``fits`` is a
        sequence of one or two ``(fit, style, label)``, where ``fit`` has ``beta``,
        ``intercept`` and ``r2`` (:func:`assocmem.sdm.fit_beta`) and ``style`` is a matplotlib
        line style.

    Returns
    -------
    matplotlib.figure.Figure
        Stacked panels: ``ln I - ln I(0)`` at every distance (dots), the even distances (open
        circles), each fitted line ``a + beta (1 - 2 d_v / n) - ln I(0)``, and dotted lines at
        ``d`` and ``2d``.

    Raises
    ------
    ValueError
        If there is no panel, ``log_i`` does not have ``2d + 1`` entries, or a panel has not one
        or two fits.
    """
    if not panels:
        raise ValueError("fits_figure needs at least one panel")
    checked = []
    for n, d, log_i, fits in panels:
        log_i = np.asarray(log_i, dtype=float)
        if log_i.shape != (2 * d + 1,):
            raise ValueError(f"n = {n}, d = {d}: log_i must have 2d + 1 = {2 * d + 1} entries, "
                             f"got shape {log_i.shape}")
        if not 1 <= len(fits) <= 2:
            raise ValueError(f"n = {n}, d = {d}: one or two fits per panel, got {len(fits)}")
        checked.append((n, d, log_i, fits))
    fig, axes = plt.subplots(len(checked), 1, figsize=(7.0, 3.8 * len(checked)), squeeze=False)
    for ax, (n, d, log_i, fits) in zip(axes[:, 0], checked):
        _draw_fits(ax, n, d, log_i, fits)
    fig.tight_layout()
    return fig
