"""Figures of chapter 35 (SDM as a kernel memory).

- :func:`ball_kernel_spectra`: the ball kernel's spectrum by brute force against the Krawtchouk
  values, and the normalised spectra at n = 64 against the fitted exponential kernels';
- :func:`feature_counts`: binary random features, their Monte Carlo mean against the exact
  expected count, and the integer counts of one memory;
- :func:`hopfield_against_sdm`: Hopfield against the two SDM families (retrieval and one-step
  agreement), the test of claim C9.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color
from assocmem.plotting import require_frame as _require

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Sequence
    from matplotlib.figure import Figure

__all__ = ["ball_kernel_spectra", "feature_counts", "hopfield_against_sdm", "MEMORY_STYLE"]

#: Style (format, colour) and legend label of each memory in :func:`hopfield_against_sdm`.
#: The labels are matplotlib mathtext.
#:
#: :meta hide-value:
MEMORY_STYLE = {
    "Hopfield": ("o-", "vermillion", "Hopfield, sign$(PP^\\top\\xi)$"),
    "SDM, neuron at every address": ("s-", "blue", "SDM, $r = 2^n$, $d$ = 11"),
    "SDM, d_write = 0, neurons = patterns": (
        "^--", "green", "SDM, $d_{write}$ = 0, neurons = patterns, $d_r$ = 22"),
}

_RADIUS_COLOURS = {5: "blue", 11: "orange", 15: "green"}




def ball_kernel_spectra(char_weight: ArrayLike, char_lambda: ArrayLike, krawtchouk: ArrayLike,
                        n: int, d: int, zero_weights: Sequence[int],
                        curves: Sequence[tuple[int, str, ArrayLike, ArrayLike, float]]) -> Figure:
    """The ball kernel's spectrum: every Walsh character (top) and the n = 64 spectra (bottom).

    Parameters
    ----------
    char_weight : array, shape (2**n,)
        The x position of each Walsh character: its Hamming weight (jittered by the caller).
    char_lambda : array, shape (2**n,)
        Its eigenvalue, ``K chi_s / chi_s`` (brute force).
    krawtchouk : array, shape (n + 1,)
        The eigenvalue ``b(w)^2`` at each weight ``w`` (drawn as red bars).
    n, d : int
        The brute-force dimension and radius (for the title).
    zero_weights : sequence of int
        The weights whose eigenvalue is exactly zero (for the title).
    curves : sequence of (d, name, ball, log_exp, beta)
        For each radius at n = 64: its optimum's name, the ball kernel's normalised spectrum
        ``lambda(w) / lambda(0)`` (shape (65,)), the log-spectrum of the fitted exponential
        kernel (shape (65,), normalised here) and its beta.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: top, a scatter of the characters and the Krawtchouk bars (symlog); bottom,
        one solid (ball) and one dashed (exponential) line per radius (log scale). The review's
        "Connections" statement that the transform is the squared ball transform.

    Raises
    ------
    ValueError
        If the character arrays differ in length or ``krawtchouk`` is not ``n + 1`` long.
    """
    char_weight, char_lambda = np.asarray(char_weight), np.asarray(char_lambda)
    if char_weight.shape != char_lambda.shape:
        raise ValueError(f"char_weight {char_weight.shape} and char_lambda "
                         f"{char_lambda.shape} must have one shape")
    if len(krawtchouk) != n + 1:
        raise ValueError(f"krawtchouk must have n + 1 = {n + 1} values, got {len(krawtchouk)}")
    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(7.0, 9.0))
    ax0.scatter(char_weight, char_lambda, s=6, color=color("sky"), alpha=0.6,
                label=fr"$K\chi_s / \chi_s$, all {len(char_lambda)} characters (brute force)")
    ax0.plot(range(n + 1), krawtchouk, "_", ms=22, mew=2.2, color=color("vermillion"),
             label=r"$b(w)^2$ (Krawtchouk)")
    ax0.set_xlabel(r"Hamming weight $w$ of the character $s$")
    ax0.set_yscale("symlog", linthresh=1.0)
    ax0.set_ylim(-0.3, 1e5)
    ax0.set_ylabel(r"eigenvalue $\lambda$ (neurons$^2$, symlog)")
    ax0.set_title(fr"$n$ = {n}, $d$ = {d}: zeros at $w$ = {zero_weights}")
    ax0.legend(fontsize=8)
    for rd, name, ball, log_exp, beta in curves:
        c = color(_RADIUS_COLOURS.get(rd, "black"))
        w = np.arange(len(ball))
        ax1.semilogy(w, ball, "-", color=c, label=rf"ball kernel, $d$ = {rd}")
        log_exp = np.asarray(log_exp, dtype=float)
        ax1.semilogy(w, np.exp(log_exp - log_exp[0]), "--", color=c,
                     label=rf"$e^{{\beta\rho}}$, $\beta_{{\mathrm{{{name}}}}}$ = {beta:.1f}")
    ax1.set_ylim(1e-40, 2)
    ax1.set_xlabel(r"Hamming weight $w$ of the character")
    ax1.set_ylabel(r"eigenvalue / largest eigenvalue, $\lambda(w)/\lambda(0)$")
    ax1.set_title(r"$n$ = 64 (the Attention setting)")
    ax1.legend(fontsize=7.5, ncol=2, loc="lower left")
    fig.tight_layout()
    return fig


def feature_counts(mc: pd.DataFrame, dvs: Sequence[int], sample: ArrayLike, n: int, d: int, r: int,
                   draws: int,
                   jitter: ArrayLike) -> Figure:
    """Binary random features: Monte Carlo mean (top) and one memory's integer counts (bottom).

    Parameters
    ----------
    mc : pandas.DataFrame
        :func:`assocmem.sdm.kernels.feature_kernel_mc`'s frame: columns ``dv``, ``mean``,
        ``binomial_se`` and ``exact`` (the expected count ``I r / 2^n``).
    dvs : sequence of int, length D
        The distances of ``sample``'s rows.
    sample : array, shape (D, pairs)
        Shared-neuron counts of one fixed memory for pairs at each distance.
    n, d, r, draws : int
        Dimension, radius, neurons and neuron draws (for titles and labels).
    jitter : array, shape (D, pairs)
        Horizontal jitter of the counts.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: top, error bars (2 binomial SE) of the mean where the exact count is positive,
        and the exact curve (log scale); bottom, the jittered counts and the expected count.

    Raises
    ------
    ValueError
        If a column is missing, or ``sample``, ``dvs`` and ``jitter`` do not fit together.
    """
    _require(mc, ["dv", "mean", "binomial_se", "exact"], "mc")
    sample, jitter = np.asarray(sample), np.asarray(jitter)
    if sample.ndim != 2 or sample.shape[0] != len(dvs) or jitter.shape != sample.shape:
        raise ValueError(f"sample must be (len(dvs), pairs) = ({len(dvs)}, ...) and jitter "
                         f"its shape; got {sample.shape} and {jitter.shape}")
    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(7.0, 8.4))
    pos = mc.exact > 0
    ax0.errorbar(mc.dv[pos], mc["mean"][pos], yerr=2 * mc.binomial_se[pos], fmt="o", ms=4,
                 capsize=2, color=color("blue"),
                 label=rf"Monte Carlo mean $\pm$ 2 SE ({draws} neuron draws)")
    ax0.plot(mc.dv[pos], mc.exact[pos], "-", color=color("vermillion"),
             label=r"$I(d_v, d, n)\, r / 2^n$ (exact)")
    ax0.set_yscale("log")
    ax0.set_xlabel(r"distance between query and pattern $d_v$ (bits)")
    ax0.set_ylabel(r"shared neurons $\phi(\xi)^\top\phi(p)$")
    ax0.set_title(fr"$n$ = {n}, $d$ = {d}, $r$ = {r}")
    ax0.legend(fontsize=8)
    ax1.scatter(np.array(dvs)[:, None] + jitter, sample, s=7, alpha=0.5, color=color("sky"),
                label="one memory: pairs at each distance")
    ax1.plot(mc.dv, mc.exact, "-", color=color("vermillion"), label="expected count")
    ax1.set_xlabel(r"distance between query and pattern $d_v$ (bits)")
    ax1.set_ylabel("shared neurons (weight in the read)")
    ax1.set_yticks(range(0, int(sample.max()) + 2, 2))
    ax1.set_title(fr"integer weights at $r$ = {r}")
    ax1.legend(fontsize=8)
    fig.tight_layout()
    return fig


def hopfield_against_sdm(retr: pd.DataFrame, agree: pd.DataFrame, n: int) -> Figure:
    """Hopfield against the two SDM families: retrieval at m = 4 and 24, agreement at m = 4.

    Parameters
    ----------
    retr : pandas.DataFrame
        :func:`assocmem.sdm.kernels.compare_retrieval` rows for m = 4 and 24: columns ``m``,
        ``memory`` (the keys of :data:`MEMORY_STYLE`), ``flips``, ``success`` and
        ``success_se``.
    agree : pandas.DataFrame
        :func:`assocmem.sdm.kernels.one_step_agreement` rows: columns ``family`` (an SDM
        memory of :data:`MEMORY_STYLE`), ``queries``, ``radius`` and ``agreement``; the query
        sets ``"near (8 bits from a pattern)"`` and ``"random"`` are drawn.
    n : int
        The dimension (for titles).

    Returns
    -------
    matplotlib.figure.Figure
        Three axes: retrieval success (2 SE error bars) against flipped bits at m = 4 and 24,
        one line per memory; then one-step agreement with Hopfield against the radius, one line
        per (SDM family, query set). Tests the paper's App. B.6 (claim C9).

    Raises
    ------
    ValueError
        If a column is missing.
    """
    _require(retr, ["m", "memory", "flips", "success", "success_se"], "retr")
    _require(agree, ["family", "queries", "radius", "agreement"], "agree")
    fig, axes = plt.subplots(3, 1, figsize=(7.0, 11.0))
    for ax, m in zip(axes[:2], (4, 24)):
        for name, (style, c, label) in MEMORY_STYLE.items():
            r_ = retr[(retr.m == m) & (retr.memory == name)]
            ax.errorbar(r_.flips, r_.success, yerr=2 * r_.success_se, fmt=style, ms=4,
                        capsize=2, color=color(c), label=label)
        ax.set_title(rf"$m$ = {m} patterns, $n$ = {n}")
        ax.set_xlabel("bits flipped in the query")
        ax.set_ylabel("retrieval success (fraction, ± 2 SE)")
        ax.set_ylim(-0.05, 1.05)
    axes[0].legend(fontsize=7.5, loc="lower left")
    pairs = [(f, q) for f in MEMORY_STYLE if f != "Hopfield"
             for q in ("near (8 bits from a pattern)", "random")]
    for (fam, qs), c in zip(pairs, ("blue", "sky", "green", "orange")):
        a = agree[(agree.family == fam) & (agree.queries == qs)]
        axes[2].plot(a.radius, a.agreement, "-", color=color(c),
                     label=("$r = 2^n$" if "every" in fam else "neurons = patterns")
                     + f", {qs.split(' ')[0]}")
    axes[2].set_xlabel(r"SDM radius $d$ (or read radius $d_r$)")
    axes[2].set_ylabel("one-step agreement with Hopfield")
    axes[2].set_title("$m$ = 4: no radius agrees everywhere")
    axes[2].legend(fontsize=7.5)
    fig.tight_layout()
    return fig
