"""Figures of the chapter "Why it looks exponential, and which beta" (Part III, chapter 32).

One function per figure; each takes the chapter's computed data, draws with the house style
(:mod:`assocmem.plotting`) and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

from typing import Mapping, Sequence, TYPE_CHECKING

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from assocmem.plotting import color

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["fits_figure", "local_beta_figure", "beta_methods_figure", "LOCAL_FACTORS"]


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


def fits_figure(panels: Sequence[tuple]) -> Figure:
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


#: The factors :func:`local_beta_figure` draws, in order: (key, marker or line style, colour,
#: label). The keys are :func:`assocmem.sdm.exponential.local_betas`'s ``what``.
LOCAL_FACTORS = (
    ("binary", "o", "0.3", r"full intersection $I$"),
    ("largest_summand", "-", "blue", r"largest summand $L = 2^n T P$"),
    ("tail", "-", "orange", r"tail factor $T$, exact binomial"),
    ("gaussian_tail", "--", "green", r"tail factor $T$, Gaussian"),
)


def local_beta_figure(panels: Sequence[dict]) -> Figure:
    """Local beta of each factor of the intersection between consecutive even distances.

    The paper has no such figure; it takes App. B.2's derivation (Eqs. 16-21) apart.

    Parameters
    ----------
    panels : sequence of dict
        One per setting, with keys ``n``, ``d`` (int), ``local`` (a mapping from each key of
        :data:`LOCAL_FACTORS` to the local betas of the steps ``d_v -> d_v + 2`` for
        ``d_v = 0, 2, ..., 2d - 2``, shape ``(d,)``), ``eq21`` and ``regression`` (float, drawn
        as horizontal lines), and optionally ``yticks`` (the log axis' ticks).

    Returns
    -------
    matplotlib.figure.Figure
        Stacked log-scale panels: each factor's local beta at the step midpoints ``d_v + 1``,
        the two horizontal lines, and the fit window ``d_v < d`` shaded. The legend is on the
        first panel.

    Raises
    ------
    ValueError
        If there is no panel, a factor is missing or has not ``d`` values.
    """
    if not panels:
        raise ValueError("local_beta_figure needs at least one panel")
    for p in panels:
        for key, *_ in LOCAL_FACTORS:
            if key not in p["local"]:
                raise ValueError(f"n = {p['n']}, d = {p['d']}: no local betas for {key!r}")
            if np.shape(p["local"][key]) != (p["d"],):
                raise ValueError(f"n = {p['n']}, d = {p['d']}: {key!r} needs d = {p['d']} "
                                 f"values, got shape {np.shape(p['local'][key])}")
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.0, 4.0 * len(panels)), squeeze=False)
    axes = axes[:, 0]
    for ax, p in zip(axes, panels):
        n, d = p["n"], p["d"]
        mid = np.arange(0, 2 * d - 1, 2) + 1  # each local beta belongs to the step dv -> dv + 2
        for key, style, c, label in LOCAL_FACTORS:
            ax.plot(mid, p["local"][key], style, ms=3, label=label,
                    color=c if c.startswith("0.") else color(c))
        ax.axhline(p["eq21"], color=color("vermillion"), ls=":", label=r"Eq. 21")
        ax.axhline(p["regression"], color=color("purple"), ls="-.", lw=1.2,
                   label=r"regression on $d_v < d$")
        ax.axvspan(0, d - 1, color="0.92", zorder=0)
        ax.set_yscale("log")
        if p.get("yticks") is not None:
            ax.set_yticks(p["yticks"])
        ax.yaxis.set_major_formatter(mticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(mticker.NullFormatter())
        ax.set_title(f"$n$ = {n}, $d$ = {d}  (shaded: fit window $d_v < d$)")
        ax.set_xlabel(r"Hamming distance $d_v$ (bits)")
        ax.set_ylabel(r"local $\beta$ (dimensionless)")
    axes[0].legend(fontsize=8, loc="upper center")
    fig.tight_layout()
    return fig


def beta_methods_figure(radii: Sequence[int], methods: Mapping[str, tuple],
                        paper: Mapping[int, float]) -> Figure:
    """The fitted beta against the radius by several methods, with the paper's values.

    Mirrors the paper's figure of fitted betas at n = 64 (not in the review) and adds this
    book's other methods.

    Parameters
    ----------
    radii : sequence of int, length R
        The radii.
    methods : mapping name -> (values, colour, line style)
        ``values`` has length R; ``colour`` is a house colour name.
    paper : mapping radius -> beta
        The paper's reported values (open squares).

    Returns
    -------
    matplotlib.figure.Figure
        One log-scale axes: one line with markers per method and the paper's values.

    Raises
    ------
    ValueError
        If there is no method or a method's values do not match the radii.
    """
    radii = np.asarray(radii)
    if not methods:
        raise ValueError("beta_methods_figure needs at least one method")
    for name, (vals, _, _) in methods.items():
        if len(vals) != radii.size:
            raise ValueError(f"{name!r}: {len(vals)} values for {radii.size} radii")
    fig, ax = plt.subplots(figsize=(7.0, 5.0))
    for name, (vals, c, ls) in methods.items():
        ax.plot(radii, vals, ls, marker="o", ms=3.5, color=color(c), label=name)
    ax.plot(list(paper), list(paper.values()), "s", ms=9, mfc="none",
            mec=color("vermillion"), mew=1.5, label="values reported in the paper")
    ax.set_yscale("log")
    ax.set_xlabel(r"read/write radius $d$ (bits), $n$ = 64")
    ax.set_ylabel(r"fitted $\beta$ (inverse temperature), window $d_v < d$")
    ax.legend(fontsize=8)
    return fig
