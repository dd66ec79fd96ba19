"""The figures of chapter 15 (how many facts fit in a Transformer block): the MLP swap, the
capacity of blocks against the number of facts, and cross-entropy against squared error.

Each function takes the computed data, draws with the house style (:mod:`assocmem.plotting`)
and returns the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from assocmem.plotting import color, require_frame

__all__ = ["LABEL", "COLOR", "swap_per_key", "capacity", "ce_vs_mse"]

#: How the chapter names each MLP method of the sweeps.
LABEL = {
    "gd_ce": "GD (cross-entropy)",
    "gd_mse": "GD (MSE)",
    "ntk": "NTK",
    "unwhitened": "unwhitened",
    "whitened": "whitened",
    "data_dependent": "data-dependent",
}
#: One house colour per method.
COLOR = {
    "gd_ce": color("black"),
    "gd_mse": color("purple"),
    "ntk": color("vermillion"),
    "unwhitened": color("orange"),
    "whitened": color("blue"),
    "data_dependent": color("green"),
}


def _need(rows, columns: Iterable[str], what: str) -> None:
    require_frame(rows, columns, what)
    if rows.empty:
        raise ValueError(f"{what}: no rows to draw")


def swap_per_key(shares: Mapping[str, Sequence[float]]) -> plt.Figure:
    """Per key, the share of contexts a block answers right, before and after an MLP swap.

    Illustrates the fact-adaptive protocol of the source (seed 001, App. A.4.3), which has no
    figure of its own.

    Parameters
    ----------
    shares : mapping of str to sequence of float
        Exactly three entries, label to one share in [0, 1] per key (all of one length): the
        training facts with their MLP, the fresh facts after the swap, and the fresh facts
        without the swap. Tensors and arrays are accepted.

    Returns
    -------
    matplotlib.figure.Figure
        One axis: the first two entries as grouped bars (blue, green) and the third as
        triangles (vermillion, so that a share of 0 stays visible), in percent against the key.

    Raises
    ------
    ValueError
        If ``shares`` does not have three entries of one length, or a share is outside [0, 1].
    """
    if not isinstance(shares, Mapping) or len(shares) != 3:
        raise ValueError("swap_per_key: give three entries (A with MLP_A, B after the swap, "
                         "B without the swap)")
    values = {k: np.asarray(v, dtype=float).ravel() for k, v in shares.items()}
    lengths = {len(v) for v in values.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError(f"swap_per_key: the entries must have one share per key, of one "
                         f"length; got lengths {[len(v) for v in values.values()]}")
    if any(((v < 0) | (v > 1)).any() for v in values.values()):
        raise ValueError("swap_per_key: shares must lie in [0, 1]")
    n = lengths.pop()
    fig, ax = plt.subplots(figsize=(7, 3.3))
    for k, (label, per_key) in enumerate(values.items()):
        x = np.arange(n) + 0.27 * (k - 1)
        c = color(["blue", "green", "vermillion"][k])
        if k < 2:
            ax.bar(x, 100 * per_key, width=0.27, label=label, color=c)
        else:  # markers, so that a share of 0 % stays visible
            ax.plot(x, 100 * per_key, "v", ms=5, label=label, color=c, clip_on=False)
    ax.set_xlabel("key")
    ax.set_ylabel("contexts right (%)")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    return fig


def _censored_median(w) -> float:
    """Median over the trainings, a search without a width counting as above the cap."""
    return float(np.median(w.fillna(np.inf)))


def capacity(widths: pd.DataFrame, methods: Sequence[str], *, hi: int, d: int,
             junk_length: int, bits: int = 16) -> plt.Figure:
    """Smallest MLP, in parameters, against the number of facts: block and MLP alone.

    Mirrors the source's Figure 1c / 3b (fact-adaptive criterion) with Figure 10's training
    criterion (seed 001, Sec. 5.1, App. A.4.3, A.5.1).

    Parameters
    ----------
    widths : pandas.DataFrame
        One row per method, ``F`` and training ``rep``, with the parameters ``W_adaptive``,
        ``W_train`` and ``W_alone`` (NaN where the search found no width), ``found_adaptive``
        and ``found_train`` (bools), and the misses above each answer ``violations_adaptive``,
        ``violations_train`` and ``violations_alone``.
    methods : sequence of str
        The methods to draw, keys of :data:`LABEL`.
    hi : int
        The search's largest width; searches that found none are drawn as triangles above the
        cap ``3 hi d``.
    d : int
        The model dimension.
    junk_length : int
        J (= V_J), for the title.
    bits : int, default 16
        Bits per parameter of the counting bound drawn beside.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log axis: per method and criterion, a line through the median over the
        trainings (solid: fact-adaptive; dashed: training) and a dot per training that found a
        width; crosses for the MLP alone; grey squares around widths with misses above them;
        triangles above a grey cap line for searches without a width; a dotted F log F line
        fitted (least squares in log W) to the data-dependent MLP's standalone widths, when
        there are any; and the dash-dotted counting bound.

    Raises
    ------
    TypeError
        If ``widths`` is not a DataFrame.
    ValueError
        If a column is missing, there are no rows, or a method is not in :data:`LABEL`.
    """
    from assocmem.mlps import capacity_sweeps as CS

    _need(widths, ["method", "F", "rep", "W_adaptive", "W_train", "W_alone",
                   "found_adaptive", "found_train", "violations_adaptive",
                   "violations_train", "violations_alone", "m_alone"], "capacity")
    unknown = sorted(set(methods) - set(LABEL))
    if unknown:
        raise ValueError(f"capacity: unknown method(s) {unknown}; known: {sorted(LABEL)}")
    Fs = np.array(sorted(widths.F.unique()), dtype=float)
    F_line = np.geomspace(Fs.min(), Fs.max(), 50)
    w_cap = 3 * hi * d
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    for k, method in enumerate(methods):
        g = widths[widths.method == method].sort_values(["F", "rep"])
        for crit, ls, mfc, dx in (("adaptive", "-", None, 0.96),
                                  ("train", "--", "none", 1.04)):
            med = g.groupby("F")[f"W_{crit}"].agg(_censored_median)
            med = med[np.isfinite(med)]
            what = "fact-adaptive 100 %" if crit == "adaptive" else "training 99 %"
            ax.plot(med.index, med, ls, color=COLOR[method], label=f"{LABEL[method]}, {what}")
            found = g[f"found_{crit}"].astype(bool)
            ax.plot(g.F[found] * dx, g[f"W_{crit}"][found], "o", color=COLOR[method],
                    mfc=mfc, ms=5)
            loose = g[found & (g[f"violations_{crit}"] > 0)]
            ax.plot(loose.F * dx, loose[f"W_{crit}"], "s", color="0.3", mfc="none", ms=10)
            miss = g[~found]
            ax.plot(miss.F * dx, np.full(len(miss), w_cap * 1.3 ** (2 * k + (crit == "train"))),
                    "^", color=COLOR[method], mfc="none" if crit == "train" else COLOR[method],
                    ms=7)
        ax.plot(g.F, g.W_alone, "x", color=COLOR[method], ms=6)
        loose = g[g.violations_alone > 0]
        ax.plot(loose.F, loose.W_alone, "s", color="0.3", mfc="none", ms=10)
    dd_alone = widths[(widths.method == "data_dependent") & widths.m_alone.notna()]
    # least squares in log W of c F log F over the data-dependent MLP's standalone widths
    if len(dd_alone):
        c_fit = np.exp(np.mean(np.log(dd_alone.W_alone / (dd_alone.F * np.log(dd_alone.F)))))
        ax.plot(F_line, c_fit * F_line * np.log(F_line), ":", color="0.4",
                label=r"$\propto F\log F$, fitted to the data-dependent MLP alone")
    ax.plot(F_line, CS.counting_lower_bound(F_line, bits=bits), "-.", color="0.2", lw=1,
            label=f"counting bound, $b = {bits}$")
    ax.axhline(w_cap, color="0.75", lw=0.8)
    ax.plot([], [], "x", color="0.4", ms=7, label="MLP alone, 100 % on $A$")
    ax.plot([], [], "s", color="0.3", mfc="none", ms=10, label="misses above: not a threshold")
    ax.plot([], [], "^", color="0.4", ms=7, label=f"no width up to $m$ = {hi}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("facts $F$")
    ax.set_ylabel("MLP parameters $W = 3md$")
    ax.set_title(f"Transformer block capacity, $d = {d}$, $J = V_J = {junk_length}$, "
                 f"{widths.rep.nunique()} trainings")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    return fig


def ce_vs_mse(rows: pd.DataFrame) -> plt.Figure:
    """Accuracy of the cross-entropy and MSE GD MLPs alone and inside the block, against width.

    Sets the source's App. A.4.5 remark (seed 001: cross-entropy about 90 % inside a
    Transformer, squared error about 100 %) in the pretrained-attention block; the source has no
    figure for it.

    Parameters
    ----------
    rows : pandas.DataFrame
        The ``transformer_usability`` rows: ``method`` (``"gd_ce"`` and ``"gd_mse"``), ``m``,
        ``mlp_accuracy`` and ``transformer_accuracy`` (fractions), one row per width and
        training.

    Returns
    -------
    matplotlib.figure.Figure
        One axis against ``m`` on a log-2 axis: per loss, the mean over the trainings of the
        accuracy inside the Transformer (solid) and alone (dotted, open markers), in percent.

    Raises
    ------
    TypeError
        If ``rows`` is not a DataFrame.
    ValueError
        If a column is missing, there are no rows, or either method has no rows.
    """
    _need(rows, ["method", "m", "mlp_accuracy", "transformer_accuracy"], "ce_vs_mse")
    absent = sorted({"gd_ce", "gd_mse"} - set(rows.method))
    if absent:
        raise ValueError(f"ce_vs_mse: no rows of {absent}")
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for method, mk in (("gd_ce", "o"), ("gd_mse", "s")):
        g = (rows[rows.method == method]
             .groupby("m")[["mlp_accuracy", "transformer_accuracy"]].mean())
        ax.plot(g.index, 100 * g.transformer_accuracy, mk + "-", color=COLOR[method],
                label=f"{LABEL[method]}, Transformer")
        ax.plot(g.index, 100 * g.mlp_accuracy, mk + ":", color=COLOR[method], mfc="none",
                label=f"{LABEL[method]}, MLP alone")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("MLP hidden width $m$")
    ax.set_ylabel("accuracy (%)")
    ax.legend(fontsize=8, loc="lower right")
    return fig
