"""Figures of the chapter "Sparse distributed memory in one page" (Part III, chapter 30).

One function per figure; each takes the chapter's computed data, draws with the house style
(:mod:`assocmem.plotting`) and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

from typing import Mapping, Sequence, TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

from assocmem.plotting import color
from assocmem.sdm import circle_intersection_table
from assocmem.sdm.read import expected_sign_hamming

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from matplotlib.figure import Figure

__all__ = ["shared_neurons_figure", "kernels_figure", "sign_distances_figure"]

#: Pairs drawn as dots per distance in :func:`shared_neurons_figure`.
DOTS_PER_DISTANCE = 200


def _array(x, name: str, ndim: int) -> np.ndarray:
    """``x`` (array, tensor or list) as a float numpy array with ``ndim`` dimensions."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    out = np.asarray(x, dtype=float)
    if out.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {out.shape}")
    return out


def shared_neurons_figure(dvs: Sequence[int], samples: Mapping[int, object],
                          expected: Mapping[int, object], n: int, d: int, seed: int = 0) -> Figure:
    """Shared-neuron counts of random neurons against the query-pattern distance.

    Mirrors the paper's simulation check (its Fig. 11, as the review describes it) for the
    chapter's memories: one panel per neuron count ``r``.

    Parameters
    ----------
    dvs : sequence of int, length D
        The query-pattern distances sampled.
    samples : mapping r -> array of shape (D, pairs)
        Shared-neuron counts per distance and pair, for each number ``r`` of random neurons.
    expected : mapping r -> array of shape (D,)
        The expected count ``I(d_v, d, n) r / 2^n`` per distance (same keys as ``samples``).
    n, d : int
        Address length and radius (for the titles and the ``2d`` line).
    seed : int
        Seed of the sideways jitter of the dots.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per ``r`` (stacked, shared x axis): the first 200 pairs per distance as
        jittered dots, the expected counts as a step line, the mean over pairs as circles and a
        dotted vertical line at ``2d + 1/2``.

    Raises
    ------
    ValueError
        If ``samples`` is empty, its keys differ from ``expected``'s, or a shape does not match.
    """
    dvs = [int(v) for v in dvs]
    if not samples or set(samples) != set(expected):
        raise ValueError(f"samples and expected need the same non-empty keys r, got "
                         f"{sorted(samples)} and {sorted(expected)}")
    rs = list(samples)
    arrays = {r: _array(samples[r], f"samples[{r}]", 2) for r in rs}
    means = {r: _array(expected[r], f"expected[{r}]", 1) for r in rs}
    for r in rs:
        if arrays[r].shape[0] != len(dvs) or means[r].shape != (len(dvs),):
            raise ValueError(f"r = {r}: samples of shape {arrays[r].shape} and expected of shape "
                             f"{means[r].shape} do not match {len(dvs)} distances")
    pairs = arrays[rs[0]].shape[1]
    jitter = np.random.default_rng(seed).uniform(-0.25, 0.25, pairs)
    shown = min(DOTS_PER_DISTANCE, pairs)
    fig, axes = plt.subplots(len(rs), 1, figsize=(7.0, 3.2 * len(rs)), sharex=True, squeeze=False)
    axes = axes[:, 0]
    for ax, r in zip(axes, rs):
        for i, v in enumerate(dvs):
            ax.plot(v + jitter[:shown], arrays[r][i, :shown], ".", ms=2, alpha=0.25,
                    color=color("sky"), label="one pair (integer count)" if i == 0 else None)
        ax.step(dvs, means[r], where="mid", color=color("vermillion"),
                label=r"$I(d_v, d, n)\,r/2^n$")
        ax.plot(dvs, arrays[r].mean(1), "o", color=color("blue"), ms=4, label="mean over pairs")
        ax.axvline(2 * d + 0.5, color="0.5", ls=":", lw=1)
        ax.set_title(f"r = {r:,} random neurons, n = {n}, d = {d}")
        ax.set_ylabel("shared neurons (count)")
    axes[-1].set_xlabel(r"query-pattern distance $d_v$ (bits)")
    axes[-1].legend(loc="upper right", markerscale=2)
    return fig


def kernels_figure(n: int, d: int, beta: float, target_distances: ArrayLike,
                   other_distances: ArrayLike) -> Figure:
    """The SDM weight and the attention weight against distance, and where the patterns sit.

    Mirrors the paper's comparison of the circle intersection with the exponential of Eq. 6
    (its Fig. 3), at one radius.

    Parameters
    ----------
    n, d : int
        Address length and radius.
    beta : float
        The fitted inverse temperature of the exponential.
    target_distances, other_distances : array of shape (N,) and (M,)
        Query-pattern Hamming distances of the queries' targets and of all other pairs.

    Returns
    -------
    matplotlib.figure.Figure
        Top: ``I(d_v, d, n) / I(0, d, n)`` (steps) and ``exp(-2 beta d_v / n)`` on a log scale
        over ``d_v = 0 .. n/2``, with a dotted line at ``2d``. Bottom: log-count histograms of
        the two sets of distances, with a dotted line at ``2d``.

    Raises
    ------
    ValueError
        If ``d`` is not in ``0 .. n`` or ``beta`` is not a positive finite number.
    """
    if not 0 <= d <= n:
        raise ValueError(f"radius d = {d} must lie in 0 .. n = {n}")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be a positive finite number, got {beta!r}")
    targets = _array(target_distances, "target_distances", 1)
    others = _array(other_distances, "other_distances", 1)
    dv_axis = np.arange(0, n // 2 + 1)
    inter = np.array(circle_intersection_table(n, d, dv_axis), dtype=float)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7.0, 6.4))
    ax.semilogy(dv_axis, np.where(inter > 0, inter / inter[0], np.nan), drawstyle="steps-mid",
                color=color("vermillion"), label=r"SDM: $I(d_v, d, n)/I(0, d, n)$")
    ax.semilogy(dv_axis, np.exp(-2 * beta * dv_axis / n), color=color("blue"),
                label=rf"attention: $e^{{\beta(\cos - 1)}}$, $\beta$ = {beta:.1f}")
    ax.axvline(2 * d, color="0.5", ls=":", lw=1)
    ax.set_xlabel(r"query-pattern distance $d_v$ (bits)")
    ax.set_ylabel("weight relative to $d_v = 0$")
    ax.set_title(f"n = {n}, d = {d}")
    ax.legend(loc="upper right")
    bins = np.arange(-0.5, n + 1)
    bx.hist(others, bins=bins, color=color("sky"), label="other patterns")
    bx.hist(targets, bins=bins, color=color("orange"), label="targets")
    bx.axvline(2 * d, color="0.5", ls=":", lw=1, label="$2d$")
    bx.set_yscale("log")
    bx.set_xlabel(r"query-pattern distance $d_v$ (bits)")
    bx.set_ylabel("query-pattern pairs (count)")
    bx.legend(loc="upper left")
    return fig


def sign_distances_figure(D: ArrayLike, H: ArrayLike, D_close: ArrayLike, H_close: ArrayLike,
                          n: int, d: int, show: int = 3000,
                          seed: int = 0) -> Figure:
    """Hamming distance of the signs against the distance Eq. 5 assigns.

    The paper has no such figure (App. B.7 states the distances stay approximately equal).

    Parameters
    ----------
    D, H : array of shape (N,)
        For independent pairs: ``(n/2)(1 - cos)`` and the Hamming distance of their signs.
    D_close, H_close : array of shape (M,)
        The same for pairs built at chosen cosines.
    n, d : int
        Vector length and the read radius (the shaded band ``distance < d``).
    show : int
        Pairs drawn from each set (the first ``show``).
    seed : int
        Seed of the vertical jitter of the independent pairs.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: two scatter clouds, the dashed diagonal, the curve ``n theta / pi`` and the
        shaded band below ``d``.

    Raises
    ------
    ValueError
        If a pair of arrays differs in length, or ``show`` is not positive.
    """
    D, H = _array(D, "D", 1), _array(H, "H", 1)
    D_close, H_close = _array(D_close, "D_close", 1), _array(H_close, "H_close", 1)
    if D.shape != H.shape or D_close.shape != H_close.shape:
        raise ValueError(f"D, H ({D.shape}, {H.shape}) and D_close, H_close ({D_close.shape}, "
                         f"{H_close.shape}) must match in pairs")
    if show < 1:
        raise ValueError(f"show must be positive, got {show}")
    jitter = np.random.default_rng(seed).uniform(-0.2, 0.2, show)[: len(H[:show])]
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    ax.plot(D[:show], H[:show] + jitter, ".", ms=2, alpha=0.3, color=color("sky"),
            label="independent Gaussian pairs")
    ax.plot(D_close[:show], H_close[:show], ".", ms=2, alpha=0.3, color=color("orange"),
            label="pairs at a chosen cosine in [0, 1]")
    grid = np.linspace(0, n / 2 + 10, 200)
    ax.plot(grid, grid, color="0.3", lw=1.2, ls="--", label="equal distances (Eq. 5)")
    ax.plot(grid, np.asarray(expected_sign_hamming(1 - 2 * grid / n, n)),
            color=color("vermillion"), label=r"$n\theta/\pi$, the mean sign distance")
    ax.axvspan(0, d, color="0.9", zorder=0, label=f"distance < d = {d} (where a read looks)")
    ax.set_xlabel(r"continuous distance $\frac{n}{2}(1 - \cos)$ (bits)")
    ax.set_ylabel("Hamming distance of the signs (bits)")
    ax.set_title(f"n = {n}")
    ax.set_xlim(0, n / 2 + 10)
    ax.set_ylim(0, n / 2 + 14)
    ax.legend(loc="lower right", fontsize=8, markerscale=4)
    return fig
