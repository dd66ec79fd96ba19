"""The figures of chapter 02, "The geometry of stored pairs" (seed 000, sections 4-6).

One function per figure. Each takes the vectors the chapter has computed (torch tensors or
arrays, in the plane: ``d_k = d_v = 2``), draws them with the house style
(:func:`assocmem.plotting.key_value_planes`, :func:`assocmem.plotting.draw_vector`) and returns
the :class:`matplotlib.figure.Figure`; the chapter shows it with ``plt.show()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import torch

from assocmem.linear.theory import least_squares_sigma_max
from assocmem.plotting import color, draw_vector, key_value_planes

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from matplotlib.figure import Figure

__all__ = ["least_squares_map", "one_pair", "stretch_and_noise", "two_pairs", "two_readings"]

#: Colours of the queries of :func:`one_pair`, in order.
QUERY_COLOURS = ("blue", "green", "purple", "vermillion")
#: Colours of the first and second pair.
PAIR_COLOURS = ("blue", "vermillion")


def _np(x, name: str, shape: tuple[int | None, ...]) -> np.ndarray:
    """``x`` as a float array of the given shape (None: any length), or a clear ValueError."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers; got {type(x).__name__}") from None
    if arr.ndim != len(shape) or any(s is not None and a != s for a, s in zip(arr.shape, shape)):
        dims = ["n" if s is None else str(s) for s in shape]
        want = f"({dims[0]},)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"
        raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    return arr


def _line(ax, direction: np.ndarray, label: str) -> None:
    """A dotted line through the origin along ``direction``, 1.3 unit lengths each way."""
    u = direction / np.linalg.norm(direction)
    ends = 1.3 * np.stack([-u, u])
    ax.plot(ends[:, 0], ends[:, 1], ls=":", color="0.5", lw=1.0, label=label)


def one_pair(key: ArrayLike, value: ArrayLike, queries: ArrayLike, reads: ArrayLike,
             labels: Sequence[str]) -> Figure:
    """One stored pair ``S = v k^T`` read with a few queries (the chapter's Figure "one pair").

    Parameters
    ----------
    key, value : tensor or array, shape (2,)
        The stored key (the first query is usually the key itself) and value.
    queries : tensor or array, shape (m, 2)
        At most four queries, drawn as arrows on the left in the colours :data:`QUERY_COLOURS`.
    reads : tensor or array, shape (m, 2)
        Their reads ``S q``, drawn as dots of the same colours on the right; the first is
        labelled ``S k``.
    labels : sequence of str, length m
        The queries' labels (maths text).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: left, the queries and the dotted null space ``k^perp``; right, the value
        (dashed), the dotted image line through ``v`` and one dot per read. Mirrors the
        source's section 4 picture of a rank-one map.

    Raises
    ------
    ValueError
        On a shape mismatch, more than four queries or a zero key or value.
    """
    k, v = _np(key, "key", (2,)), _np(value, "value", (2,))
    q, r = _np(queries, "queries", (None, 2)), _np(reads, "reads", (None, 2))
    if len(q) != len(r) or len(q) != len(labels):
        raise ValueError(f"queries, reads and labels differ in length: {len(q)}, {len(r)}, "
                         f"{len(labels)}")
    if not 1 <= len(q) <= len(QUERY_COLOURS):
        raise ValueError(f"one_pair draws 1 to {len(QUERY_COLOURS)} queries; got {len(q)}")
    if not (np.linalg.norm(k) > 0 and np.linalg.norm(v) > 0):
        raise ValueError("key and value must be nonzero")
    fig, (axk, axv) = key_value_planes(lim=1.35)
    _line(axk, np.array([-k[1], k[0]]), r"null space $\mathbf{k}^\perp$")
    _line(axv, v, r"image: the line through $\mathbf{v}$")
    for i, (name, qi, ri) in enumerate(zip(labels, q, r)):
        c = QUERY_COLOURS[i]
        draw_vector(axk, qi, name, c=c, lw=2.4 if i == 0 else 1.4)
        axv.plot(*ri, "o", color=color(c), ms=6)
    draw_vector(axv, v, r"$\mathbf{v}$", c="orange", ls="--", lw=1.2, offset=(-0.3, -0.05))
    axv.text(r[0, 0] + 0.1, r[0, 1] - 0.02, r"$S\mathbf{k}$", color=color("blue"))
    axk.legend(loc="lower left", fontsize=8)
    axv.legend(loc="lower left", fontsize=8)
    return fig


def two_pairs(keys: ArrayLike, values: ArrayLike, read: ArrayLike) -> Figure:
    """Two pairs in one additive memory, and the read of the first key.

    Parameters
    ----------
    keys, values : tensor or array, shape (2, 2)
        Rows ``k_1, k_2`` (unit keys) and ``v_1, v_2``.
    read : tensor or array, shape (2,)
        ``S k_1 = v_1 + cos(theta) v_2``.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: left, the keys and the angle theta; right, the values, a dashed step from
        ``v_1`` to the read (the leak ``cos(theta) v_2``) and the read in black. Mirrors the
        source's section 5 two-pair interference.

    Raises
    ------
    ValueError
        If a shape is wrong.
    """
    K, V = _np(keys, "keys", (2, 2)), _np(values, "values", (2, 2))
    s = _np(read, "read", (2,))
    fig, (axk, axv) = key_value_planes(lim=1.6)
    for i, c in enumerate(PAIR_COLOURS):
        draw_vector(axk, K[i], rf"$\mathbf{{k}}_{i + 1}$", c=c)
    draw_vector(axv, V[0], r"$\mathbf{v}_1$", c="blue")
    draw_vector(axv, V[1], r"$\mathbf{v}_2$", c="vermillion", offset=(-0.3, 0.05))
    axv.annotate("", xy=s, xytext=V[0],
                 arrowprops=dict(arrowstyle="-|>", color=color("vermillion"), lw=1.4, ls="--"))
    axv.text(V[0, 0] + 0.06, V[0, 1] + 0.35, r"$\cos\theta\,\mathbf{v}_2$",
             color=color("vermillion"))
    draw_vector(axv, s, r"$S\mathbf{k}_1$", c="black", offset=(-0.2, 0.1))
    axk.text(0.35, 0.2, r"$\theta$", fontsize=12)
    return fig


def least_squares_map(keys: ArrayLike, duals: ArrayLike, values: ArrayLike, circle: ArrayLike,
                      ellipse: ArrayLike, S: ArrayLike) -> Figure:
    """The least-squares memory of two pairs: dual vectors, and the image of the unit circle.

    Parameters
    ----------
    keys, duals, values : tensor or array, shape (2, 2)
        Rows: the keys, their dual vectors, the values.
    circle : tensor or array, shape (m, 2)
        Unit queries around the circle; ``ellipse`` (m, 2) their reads ``S* q``.
    S : tensor or array, shape (2, 2)
        The memory, whose largest singular direction is drawn as the long semi-axis.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels (8 x 4 inches, limits +-3): left, the circle, the keys (solid) and duals
        (dashed); right, the values, the green ellipse and a black arrow of length sigma_max
        along the long axis, pointing right. Mirrors the source's Figure 3.

    Raises
    ------
    ValueError
        If a shape is wrong or circle and ellipse differ in length.
    """
    K, D = _np(keys, "keys", (2, 2)), _np(duals, "duals", (2, 2))
    V, M = _np(values, "values", (2, 2)), _np(S, "S", (2, 2))
    c, e = _np(circle, "circle", (None, 2)), _np(ellipse, "ellipse", (None, 2))
    if len(c) != len(e):
        raise ValueError(f"circle and ellipse differ in length: {len(c)} and {len(e)}")
    U, sig, _ = np.linalg.svd(M)
    long_axis = sig[0] * U[:, 0] * np.sign(U[0, 0])  # pointing right
    fig, (axk, axv) = key_value_planes(lim=3.0, figsize=(8.0, 4.0))
    axk.plot(c[:, 0], c[:, 1], color="0.6", lw=1.0, label="unit queries")
    for i, col in enumerate(PAIR_COLOURS):
        draw_vector(axk, K[i], rf"$\mathbf{{k}}_{i + 1}$", c=col)
        draw_vector(axk, D[i], rf"$\tilde{{\mathbf{{k}}}}_{i + 1}$", c=col, ls="--", lw=1.4)
        draw_vector(axv, V[i], rf"$\mathbf{{v}}_{i + 1}$", c=col)
    axv.plot(e[:, 0], e[:, 1], color=color("green"), lw=1.4,
             label=r"$S^\star\mathbf{q}$ for $\|\mathbf{q}\| = 1$")
    draw_vector(axv, long_axis, c="black", lw=1.2)
    axv.text(0.55 * long_axis[0] + 0.05, 0.55 * long_axis[1] + 0.15, r"$\sigma_{\max}$",
             fontsize=11)
    axk.legend(loc="lower left", fontsize=8)
    axv.legend(loc="lower left", fontsize=8)
    return fig


def two_readings(keys: ArrayLike, values: ArrayLike, query: ArrayLike, drops: ArrayLike,
                 coords: ArrayLike, read_ls: ArrayLike, read_add: ArrayLike) -> Figure:
    """One query read by the least-squares and by the additive memory.

    Parameters
    ----------
    keys, values : tensor or array, shape (2, 2)
        Rows: the keys and the values.
    query : tensor or array, shape (2,)
        The query q.
    drops, coords : tensor or array, shape (2,)
        ``k_i^T q`` (perpendicular drops) and the coordinates c with ``q = c_1 k_1 + c_2 k_2``.
    read_ls, read_add : tensor or array, shape (2,)
        ``S* q`` and ``S q``.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: left, the keys, the dotted drops with square feet, the green walk
        ``c_1 k_1 + c_2 k_2`` and the query; right, the values and the two reads (green: least
        squares, black: additive). Mirrors the source's section 6 second reading.

    Raises
    ------
    ValueError
        If a shape is wrong.
    """
    K, V = _np(keys, "keys", (2, 2)), _np(values, "values", (2, 2))
    q = _np(query, "query", (2,))
    w, cc = _np(drops, "drops", (2,)), _np(coords, "coords", (2,))
    r_ls, r_add = _np(read_ls, "read_ls", (2,)), _np(read_add, "read_add", (2,))
    fig, (axk, axv) = key_value_planes(lim=1.7)
    for i, c in enumerate(PAIR_COLOURS):
        draw_vector(axk, K[i], rf"$\mathbf{{k}}_{i + 1}$", c=c, offset=(0.06, -0.12))
        foot = w[i] * K[i]
        axk.plot([foot[0], q[0]], [foot[1], q[1]], ls=":", color=color(c), lw=1.0)
        axk.plot(*foot, "s", color=color(c), ms=4)
    leg1 = cc[0] * K[0]
    axk.plot([0, leg1[0], q[0]], [0, leg1[1], q[1]], color=color("green"), lw=1.6,
             label=r"walk: $c_1\mathbf{k}_1 + c_2\mathbf{k}_2$")
    axk.plot([], [], ":s", color="0.4", ms=4,
             label=r"perpendicular drops $\mathbf{k}_i^\top\mathbf{q}$")
    draw_vector(axk, q, r"$\mathbf{q}$", c="black")
    for i, c in enumerate(PAIR_COLOURS):
        draw_vector(axv, V[i], rf"$\mathbf{{v}}_{i + 1}$", c=c, lw=1.0)
    draw_vector(axv, r_ls, r"$S^\star\mathbf{q}$", c="green")
    draw_vector(axv, r_add, r"$S\mathbf{q}$", c="black", offset=(0.06, 0.02))
    axk.legend(loc="lower left", fontsize=8)
    return fig


def stretch_and_noise(thetas_deg: ArrayLike, dual_lengths: ArrayLike, sigma_max: ArrayLike,
                      eps: ArrayLike, worst_add: ArrayLike, worst_ls: ArrayLike,
                      theta: float, eps_star: float) -> Figure:
    """Stretch of the least-squares memory against the key angle, and its noise amplification.

    Parameters
    ----------
    thetas_deg, dual_lengths, sigma_max : array, shape (a,)
        Angles between two unit keys (degrees), the measured dual length and largest singular
        value of S* at each; drawn as points on the closed forms ``1/sin(theta)`` and
        ``1/sqrt(1 - |cos(theta)|)`` (left panel, log y).
    eps, worst_add, worst_ls : tensor or array, shape (e,)
        Query-noise sizes and the worst read errors of the additive and the least-squares
        memory (right panel, log-log; every third least-squares point drawn).
    theta : float
        Angle between the keys of the right panel, in radians (its line
        ``eps sigma_max(theta)`` and title).
    eps_star : float
        The noise size where the two memories' worst errors cross (dashed vertical line).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes; mirrors the source's section 6 statement that a query slightly off k_1 is read
        far from v_1 (the source gives no plot of it).

    Raises
    ------
    ValueError
        If array lengths disagree or ``theta`` is not in (0, pi).
    """
    th = _np(thetas_deg, "thetas_deg", (None,))
    dual = _np(dual_lengths, "dual_lengths", (len(th),))
    sig = _np(sigma_max, "sigma_max", (len(th),))
    e = _np(eps, "eps", (None,))
    w_add = _np(worst_add, "worst_add", (len(e),))
    w_ls = _np(worst_ls, "worst_ls", (len(e),))
    if not 0 < theta < np.pi:
        raise ValueError(f"theta must be an angle in (0, pi) radians; got {theta!r}")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.0, 3.4))
    th_fine = np.radians(np.linspace(1.5, 178.5, 400))
    ax1.semilogy(th, dual, "o", color=color("blue"), ms=3.5,
                 label=r"$\|\tilde{\mathbf{k}}_1\|$ measured")
    ax1.semilogy(np.degrees(th_fine), 1 / np.sin(th_fine), color=color("blue"), lw=1.2,
                 label=r"$1/\sin\theta$")
    ax1.semilogy(th, sig, "s", color=color("vermillion"), ms=3.5,
                 label=r"$\sigma_{\max}(S^\star)$ measured")
    ax1.semilogy(np.degrees(th_fine), least_squares_sigma_max(th_fine), color=color("vermillion"),
                 lw=1.2, label=r"$1/\sqrt{1-|\cos\theta|}$")
    ax1.set_xlabel(r"angle between the keys $\theta$ (degrees)")
    ax1.set_ylabel("length, stretch factor (dimensionless)")
    ax1.set_xticks([0, 45, 90, 135, 180])
    ax1.legend(fontsize=8)
    ax2.loglog(e, w_add, color=color("black"), label="additive $S$, measured")
    ax2.loglog(e, e * least_squares_sigma_max(theta), color=color("green"), lw=1.2,
               label=r"$\varepsilon\,\sigma_{\max}(S^\star)$")
    ax2.loglog(e[::3], w_ls[::3], "o", color=color("green"), ms=3.5,
               label=r"least squares $S^\star$, measured")
    ax2.axvline(eps_star, color="0.5", lw=0.8, ls="--")
    ax2.text(eps_star * 0.8, 2e-3, r"$\varepsilon^\star$", ha="right", color="0.4")
    ax2.set_xlabel(r"query noise $\varepsilon = \|\mathbf{q} - \mathbf{k}_1\|$")
    ax2.set_ylabel(r"worst read error $\|S\mathbf{q} - \mathbf{v}_1\|$ (value units)")
    ax2.set_title(rf"keys {np.degrees(theta):.0f}$^\circ$ apart", fontsize=10)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig
