"""The figures of chapter 01, "From attention to a matrix" (seed 000, sections 1-3).

One function per figure. Each takes data the chapter has computed, draws it with the house style
and returns the :class:`matplotlib.figure.Figure`; the chapter shows it with ``plt.show()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import LogLocator, NullFormatter, NullLocator, ScalarFormatter

from assocmem.linear.attention import gamma
from assocmem.plotting import color, label_machine_dependent, require_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["agreement_of_forms", "decoding_cost", "score_maps", "time_against_length"]

_METHOD_NAMES = {
    "softmax": "softmax attention",
    "parallel": "linear, parallel",
    "recurrent": "linear, recurrent",
}
_DECODER_NAMES = {
    "kv_cache": "softmax with key-value cache",
    "recurrent": "linear attention state",
}


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    require_frame(frame, columns, name)


def score_maps(one_vector: torch.Tensor, separate: torch.Tensor) -> Figure:
    """Heat maps of two score matrices, side by side, with each query's best key circled.

    Parameters
    ----------
    one_vector : torch.Tensor, shape (T, T)
        Scores ``x_t^T x_i`` of one vector per token (left panel).
    separate : torch.Tensor, shape (T, T)
        Scores ``q_t^T k_i`` with separate query and key maps (right panel).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes (plus their colour bars); each heat map is symmetric in colour about zero and
        carries one circle per row at the row's largest score. Mirrors the failure the source
        describes in section 1 (it has no figure of it).

    Raises
    ------
    ValueError
        If a matrix is not square or the two differ in shape.
    """
    mats = [torch.as_tensor(one_vector), torch.as_tensor(separate)]
    for name, A in zip(("one_vector", "separate"), mats):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"{name} must be a square (T, T) score matrix; got shape {tuple(A.shape)}")
    if mats[0].shape != mats[1].shape:
        raise ValueError(f"the score matrices differ in shape: {tuple(mats[0].shape)} and "
                         f"{tuple(mats[1].shape)}")
    T = mats[0].shape[0]
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.7), layout="constrained")
    titles = (r"one vector: $x_t^\top x_i$", r"separate maps: $q_t^\top k_i$")
    for ax, title, A in zip(axes, titles, mats):
        top = float(A.abs().max())
        im = ax.imshow(A.numpy(), cmap="RdBu_r", vmin=-top, vmax=top)
        best = A.argmax(dim=1).numpy()
        ax.plot(best, np.arange(T), "o", ms=3.5, mfc="none", mec="black",
                label="best key of each query")
        ax.set(title=title, xlabel="key position $i$", ylabel="query position $t$")
        ax.grid(False)
        fig.colorbar(im, ax=ax, shrink=0.85, label="score (dimensionless)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center")
    return fig


def agreement_of_forms(agree: pd.DataFrame, d_k: int) -> Figure:
    """Difference of each form of linear attention from the parallel form, against T.

    Parameters
    ----------
    agree : pandas.DataFrame
        The frame of :func:`assocmem.linear.attention.linear_attention_agreement`, with columns
        ``form``, ``chunk_size``, ``T`` and ``diff_over_abs_sum``, one row per (T, form, chunk).
    d_k : int
        Key dimension, for the rounding bound ``2 gamma_{T d_k + 2}``.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log axis: one line per (form, chunk size), exact zeros drawn on a floor line
        at ``u / 8``, the dashed bound and the dotted unit roundoff ``u = 2^-53``.

    Raises
    ------
    ValueError
        If a column is missing or ``d_k`` is not a positive integer.
    """
    _require_columns(agree, ("form", "chunk_size", "T", "diff_over_abs_sum"), "agree")
    if int(d_k) != d_k or d_k < 1:
        raise ValueError(f"d_k must be a positive integer; got {d_k!r}")
    u = torch.finfo(torch.float64).eps / 2
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    floor = u / 8  # exact zeros are drawn on this line
    for i, (key, rows) in enumerate(agree.groupby(["form", "chunk_size"], sort=False)):
        label = "recurrent" if key[0] == "recurrent" else f"chunked, C = {key[1]}"
        ax.plot(rows["T"], rows.diff_over_abs_sum.clip(lower=floor), "o-", color=color(i),
                label=label, alpha=0.85)
    Ts = np.array(sorted(agree["T"].unique()))
    ax.plot(Ts, [2 * gamma(int(t) * d_k + 2) for t in Ts], "k--",
            label=r"bound $2\gamma_{T d_k + 2}$")
    ax.axhline(u, color="0.5", lw=1, ls=":", label="unit roundoff $u = 2^{-53}$")
    ax.axhline(floor, color="0.8", lw=0.8)
    ax.text(Ts[-1], floor * 1.3, "exactly 0", ha="right", va="bottom", fontsize=8, color="0.4")
    ax.set(xscale="log", yscale="log", xlabel="sequence length $T$ (tokens)",
           ylabel=r"max $|o - o_{\mathrm{parallel}}|$ / sum of $|$terms$|$")
    ax.legend(fontsize=8, ncol=2)
    return fig


def time_against_length(times: pd.DataFrame, slopes: Mapping[str, float],
                        chunk_size: int) -> Figure:
    """Wall-clock time of a whole sequence against its length, one line per method.

    Parameters
    ----------
    times : pandas.DataFrame
        The frame of :func:`assocmem.linear.timing.time_attention_vs_T`: columns ``method``
        (``softmax``, ``parallel``, ``recurrent``, ``chunked``), ``T`` and ``seconds``.
    slopes : mapping of str to float
        The fitted exponent p of time ~ T^p of every method, shown in the legend.
    chunk_size : int
        Chunk size of the chunked form, for its label.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log axis, time in ms against T, tick labels at the measured lengths and the
        machine-dependent label.

    Raises
    ------
    ValueError
        If a column is missing or a method has no slope.
    """
    _require_columns(times, ("method", "T", "seconds"), "times")
    missing = sorted(set(times.method) - set(slopes))
    if missing:
        raise ValueError(f"slopes has no exponent for the method(s) {missing}")
    names = {**_METHOD_NAMES, "chunked": f"linear, chunked (C = {chunk_size})"}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, (m, r) in enumerate(times.groupby("method", sort=False)):
        ax.plot(r["T"], 1e3 * r.seconds, "o-", color=color(i),
                label=f"{names.get(m, m)}: $p$ = {slopes[m]:.2f}")
    ax.set(xscale="log", yscale="log", xlabel="sequence length $T$ (tokens)",
           ylabel="time per sequence (ms)",
           title=r"fitted exponent $p$ of time $\propto T^p$ (three longest $T$)")
    lengths = sorted(times["T"].unique())
    ax.set_xticks(lengths, [str(t) for t in lengths], minor=False)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.legend(fontsize=8, loc="upper left")
    label_machine_dependent(ax)
    return fig


def decoding_cost(rec_kv: pd.DataFrame, rec_state: pd.DataFrame, per_token: pd.DataFrame,
                  t_memory: float, heads: int, dtype: str) -> Figure:
    """Numbers held (counted) and time per token (measured) of the two decoders.

    Parameters
    ----------
    rec_kv, rec_state : pandas.DataFrame
        The records of :func:`assocmem.linear.attention.decode` for the key-value cache and the
        recurrent state: columns ``t`` and ``numbers_held``.
    per_token : pandas.DataFrame
        The frame of :func:`assocmem.linear.timing.time_decoding`: columns ``decoder``,
        ``t_lo``, ``t_mid`` and ``us_per_token``; rows from the second token on are drawn.
    t_memory : float
        The length at which the cache holds as many numbers as the state (marked).
    heads : int
        Heads decoded together, and ``dtype`` their float type, for the right panel's title.

    Returns
    -------
    matplotlib.figure.Figure
        Two log-log axes: left, numbers held against t with a dotted line at ``t_memory``;
        right, microseconds per token with the machine-dependent label.

    Raises
    ------
    ValueError
        If a column is missing or ``t_memory`` is not positive.
    """
    _require_columns(rec_kv, ("t", "numbers_held"), "rec_kv")
    _require_columns(rec_state, ("t", "numbers_held"), "rec_state")
    _require_columns(per_token, ("decoder", "t_lo", "t_mid", "us_per_token"), "per_token")
    if not t_memory > 0:
        raise ValueError(f"t_memory must be positive; got {t_memory!r}")
    state_size = float(rec_state.numbers_held.iloc[0])
    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(8.0, 3.4))
    ax_mem.plot(rec_kv.t, rec_kv.numbers_held, color=color(0),
                label="key-value cache: $t(d_k + d_v)$")
    ax_mem.plot(rec_state.t, rec_state.numbers_held, color=color(1),
                label="recurrent state: $d_v d_k$")
    ax_mem.axvline(t_memory, color="0.5", ls=":", lw=1)
    ax_mem.annotate(f"equal at t = {t_memory:.0f}", (t_memory, state_size), xytext=(8, 25),
                    textcoords="offset points", fontsize=8, color="0.3")
    ax_mem.set(xscale="log", yscale="log", xlabel="tokens seen $t$",
               ylabel="numbers held per head (exact)", title="memory (counted)")
    ax_mem.legend(fontsize=8, loc="upper left")
    shown = per_token[per_token.t_lo >= 2]
    for i, (name, r) in enumerate(shown.groupby("decoder", sort=False)):
        ax_time.plot(r.t_mid, r.us_per_token, "o-", color=color(i),
                     label=_DECODER_NAMES.get(name, name))
    ax_time.set(xscale="log", yscale="log", xlabel="tokens seen $t$",
                ylabel=r"time per token ($\mu$s)", title=f"time ({heads} heads, {dtype})")
    ax_time.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax_time.yaxis.set_major_formatter(ScalarFormatter())
    ax_time.set_ylim(bottom=0.6 * per_token.us_per_token.min())
    ax_time.yaxis.set_minor_formatter(NullFormatter())
    ax_time.legend(fontsize=8, loc="upper left")
    label_machine_dependent(ax_time)
    return fig
