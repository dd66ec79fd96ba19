"""The figures of chapter 34 (how close is attention to SDM?), one function per figure.

Each function takes data the chapter has computed (SDM's and softmax's normalised weights, the
total-variation distance between them as a function of beta, the weight the target loses to far
patterns), draws it with the house style (:mod:`assocmem.plotting`) and returns the
:class:`matplotlib.figure.Figure`. Nothing is computed here beyond what drawing needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from assocmem.plotting import color, use_style

__all__ = ["one_each_figure", "tv_beta_figure", "far_weight_figure", "contributions_figure"]

_RADIUS_COLOURS = ("blue", "orange", "green")


def _check_mapping(x, name: str, at_most: int | None = None) -> None:
    if not isinstance(x, Mapping) or not x:
        raise ValueError(f"{name} must be a non-empty mapping, got {type(x).__name__}")
    if at_most is not None and len(x) > at_most:
        raise ValueError(f"{name} holds {len(x)} radii; the figure draws at most {at_most}")


def one_each_figure(comparisons: Mapping[int, tuple]) -> plt.Figure:
    """SDM's and softmax's weights with one pattern at every distance (the paper's Fig. 3).

    Parameters
    ----------
    comparisons : mapping of int to (str, comparison, comparison)
        For each radius d (a row of the figure), the optimum's name (``"Mem"``, ``"SNR"``,
        ``"CD"``) and two weight comparisons (:func:`assocmem.sdm.weights.compare_weights`), with
        the least-squares beta and with the authors' beta. Each has ``sdm`` and ``softmax`` (the
        normalised weights of the patterns at distance 0..n, arrays of length n + 1), ``beta``
        and ``tv``; the SDM weights are those of the first.

    Returns
    -------
    matplotlib.figure.Figure
        A (number of radii) x 2 grid. Left, the distances 0..12 on a linear scale; right, all
        n + 1 on a log scale with a dotted line at 2d. Each axes has SDM's weights as bars and the
        two softmax weightings as lines.

    Raises
    ------
    ValueError
        If ``comparisons`` is empty, an entry is not a triple, or a comparison's SDM and softmax
        weights differ in length.
    """
    _check_mapping(comparisons, "comparisons")
    for d, entry in comparisons.items():
        if not isinstance(entry, tuple) or len(entry) != 3:
            raise ValueError(f"comparisons[{d}] must be (name, least-squares, authors'), "
                             f"got {entry!r}")
        for c in entry[1:]:
            if len(c.sdm) != len(c.softmax) or len(c.sdm) != len(entry[1].sdm):
                raise ValueError(f"comparisons[{d}]: the SDM and softmax weights must cover "
                                 "the same distances")
    use_style()
    rows = len(comparisons)
    fig, axes = plt.subplots(rows, 2, figsize=(7.5, 3.0 * rows), sharex="col",
                             squeeze=False)
    for j, (d, (name, ols_c, auth_c)) in enumerate(comparisons.items()):
        n = len(ols_c.sdm) - 1
        dv = np.arange(n + 1)
        for i, (ax, top) in enumerate(zip(axes[j, :], (12, n))):
            k = dv <= top
            ax.bar(dv[k], ols_c.sdm[k], width=0.8, color=color("sky"),
                   label="SDM (circle intersection)")
            ax.plot(dv[k], ols_c.softmax[k], "o-", ms=3, color=color("vermillion"),
                    label=rf"softmax, least-squares $\beta$ = {ols_c.beta:.1f}")
            ax.plot(dv[k], auth_c.softmax[k], "s--", ms=3, mfc="none", color=color("black"),
                    label=rf"softmax, authors' $\beta$ = {auth_c.beta:.1f}")
            if i == 1:
                ax.set_yscale("log")
                ax.set_ylim(1e-14, 1.5)
                ax.axvline(2 * d, color="0.6", lw=0.8, ls=":")
                ax.text(2 * d + 1, 1e-12, "$2d$", color="0.4", fontsize=9)
                ax.set_title(f"all {n + 1}, log scale", fontsize=10)
            else:
                ax.set_title(
                    rf"$d$ = {d} ($\beta_{{\mathrm{{{name}}}}}$), TV = {ols_c.tv:.3f}",
                    fontsize=10,
                )
                ax.set_xticks(range(0, 13, 2))
                ax.set_ylabel("normalised weight")
                if j == 0:
                    ax.legend(fontsize=7, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel(r"distance to the query $d_\mu$ (bits)")
    return fig


def tv_beta_figure(
    betas: Sequence[float],
    curves: Mapping[tuple[int, str], Sequence[float]],
    at_rule: Mapping[tuple[int, str, str], tuple[float, float]],
    at_best: Mapping[tuple[int, str], tuple[float, float]],
) -> plt.Figure:
    """The TV distance between SDM's and softmax's weights against beta.

    Parameters
    ----------
    betas : sequence of float
        The grid of beta (log x axis).
    curves : mapping of (d, intersection) to sequence of float
        The TV at each beta of the grid, for each radius (at most three, coloured blue, orange,
        green in the order they first appear) and intersection (``"binary"``: the circle, a
        solid line; ``"cap"``: the cap, dashed).
    at_rule : mapping of (d, intersection, rule) to (beta, tv)
        The point of each beta rule (``"ols"``: circles, ``"authors"``: squares); filled for the
        circle intersection, open for the cap.
    at_best : mapping of (d, intersection) to (beta, tv)
        The TV-optimal beta and its TV, a star.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: one line per curve, one marker per rule and curve, one star per curve, and
        three legend-only entries for the marker kinds.

    Raises
    ------
    ValueError
        If a curve's length differs from the grid, a curve lacks its markers or star, or the
        curves hold more than three radii.
    """
    _check_mapping(curves, "curves")
    radii = list(dict.fromkeys(d for d, _ in curves))
    if len(radii) > len(_RADIUS_COLOURS):
        raise ValueError(f"curves hold {len(radii)} radii; the figure colours at most three")
    betas = np.asarray(betas, dtype=float)
    for key, tv in curves.items():
        if len(tv) != len(betas):
            raise ValueError(f"curves[{key}] has {len(tv)} values for {len(betas)} betas")
        if key not in at_best or any((*key, r) not in at_rule for r in ("ols", "authors")):
            raise ValueError(f"curve {key} lacks its rule markers or its TV-optimal star")
    use_style()
    fig, ax = plt.subplots(figsize=(7.0, 6.2))
    for (d, kind), tv in curves.items():
        c = color(_RADIUS_COLOURS[radii.index(d)])
        fill = "white" if kind == "cap" else c
        ax.plot(betas, tv, "--" if kind == "cap" else "-", color=c,
                label=f"d = {d}, {'cap' if kind == 'cap' else 'circle'} intersection")
        for rule, mk in (("ols", "o"), ("authors", "s")):
            b, t = at_rule[d, kind, rule]
            ax.plot(b, t, mk, color=c, mfc=fill, ms=6)
        b, t = at_best[d, kind]
        ax.plot(b, t, "*", color=c, ms=11, mfc=fill)
    ax.plot([], [], "ko", label=r"least-squares $\beta$ (Eq. 10)")
    ax.plot([], [], "ks", label=r"authors' $\beta$")
    ax.plot([], [], "k*", ms=10, label=r"TV-optimal $\beta$")
    ax.set_xscale("log")
    ax.set_ylim(0, 0.5)
    ax.set_xlabel(r"softmax inverse temperature $\beta$")
    ax.set_ylabel("TV distance to normalised SDM weights")
    ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    return fig


_BY_BETA = ("beta", "orthogonal", "random", "sim_beta", "simulated", "sdm_beta", "sdm",
            "sdm_simulated")
_BY_M = ("orthogonal", "random", "sdm")


def far_weight_figure(
    by_beta: Mapping[str, object],
    markers: Mapping[str, float],
    ms: Sequence[int],
    by_m: Mapping[tuple[int, str], Mapping[str, Sequence[float]]],
    *,
    m: int = 1024,
    trials: int,
) -> plt.Figure:
    """The weight the target loses to far patterns, against beta and against their number.

    Parameters
    ----------
    by_beta : mapping
        The top panel, at ``m`` far patterns: ``"beta"`` (a grid) with ``"orthogonal"`` (the
        closed form for patterns at n/2, dotted) and ``"random"`` (the exact expectation for
        random patterns, red); ``"sim_beta"`` with ``"simulated"`` (an array of shape
        ``(len(sim_beta), 2)``: mean and standard error, red points); ``"sdm_beta"`` (the
        least-squares beta of each radius) with ``"sdm"`` (SDM's exact expectation, blue) and
        ``"sdm_simulated"`` (shape ``(len(sdm_beta), 2)``; only the positive means are drawn,
        as open squares).
    markers : mapping of str to float
        Named betas (``"CD"``: 9.4...), dashed vertical lines labelled beta_name.
    ms : sequence of int
        The numbers of far patterns of the bottom panel (log-log).
    by_m : mapping of (d, name) to mapping
        For each radius (at most two, coloured green and orange) and its optimum's name, the
        curves ``"orthogonal"`` (dotted), ``"random"`` (solid) and ``"sdm"`` (dashed) over ``ms``.
    m : int, default 1024
        The number of far patterns of the top panel (a vertical line in the bottom one).
    trials : int
        The number of simulated trials (legend).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes, both with a log y axis: the top one with the curves, points and markers above,
        the bottom one with three curves per radius.

    Raises
    ------
    ValueError
        If a key is missing, a curve's length differs from its grid, a simulated array is not
        of shape (k, 2), or ``by_m`` holds no radius or more than two.
    """
    missing = [k for k in _BY_BETA if k not in by_beta]
    if missing:
        raise ValueError(f"by_beta lacks {missing}")
    for grid, keys in (("beta", ("orthogonal", "random")), ("sdm_beta", ("sdm",))):
        for key in keys:
            if len(by_beta[key]) != len(by_beta[grid]):
                raise ValueError(f"by_beta[{key!r}] needs one value per entry of {grid!r}")
    for grid, key in (("sim_beta", "simulated"), ("sdm_beta", "sdm_simulated")):
        if np.shape(by_beta[key]) != (len(by_beta[grid]), 2):
            raise ValueError(f"by_beta[{key!r}] must have shape (len({grid}), 2): mean and "
                             f"standard error, got {np.shape(by_beta[key])}")
    _check_mapping(by_m, "by_m", at_most=2)
    for key, curves in by_m.items():
        if any(k not in curves or len(curves[k]) != len(ms) for k in _BY_M):
            raise ValueError(f"by_m[{key}] needs {_BY_M}, each with one value per m")
    use_style()
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7.0, 9.4))
    ax.plot(by_beta["beta"], by_beta["orthogonal"], color=color("black"), ls=":",
            label=r"softmax, orthogonal: $me^{-\beta}/(1+me^{-\beta})$")
    ax.plot(by_beta["beta"], by_beta["random"], color=color("vermillion"),
            label="softmax, random patterns (exact expectation)")
    sim = np.asarray(by_beta["simulated"], dtype=float)
    ax.errorbar(by_beta["sim_beta"], sim[:, 0], yerr=sim[:, 1], fmt="o", ms=4,
                color=color("vermillion"), capsize=2,
                label=f"softmax, simulated ({trials} trials, ±1 s.e.)")
    rb = np.asarray(by_beta["sdm_beta"], dtype=float)
    ax.plot(rb, by_beta["sdm"], "-", color=color("blue"),
            label=r"SDM at the radius $d$ with this $\beta$ (exact)")
    sim_sdm = np.asarray(by_beta["sdm_simulated"], dtype=float)
    ok = sim_sdm[:, 0] > 0
    ax.errorbar(rb[ok], sim_sdm[ok, 0], yerr=sim_sdm[ok, 1], fmt="s", ms=4,
                color=color("blue"), capsize=2, mfc="white",
                label="SDM, simulated (same patterns)")
    for name, beta in markers.items():
        ax.axvline(beta, color="0.7", lw=0.8, ls="--")
        ax.text(beta, 2e-12, rf" $\beta_{{\mathrm{{{name}}}}}$", color="0.35", fontsize=9)
    ax.set_yscale("log")
    ax.set_ylim(1e-12, 1.5)
    ax.set_xlabel(r"inverse temperature $\beta$ (SDM: least-squares $\beta$ of its radius)")
    ax.set_ylabel(rf"total weight on $m$ = {m} far patterns")
    ax.legend(fontsize=7.5, loc="upper right")

    for ((d, name), curves), c in zip(by_m.items(), ("green", "orange")):
        bx.plot(ms, curves["orthogonal"], ":", color=color(c),
                label=rf"softmax, orthogonal, $\beta_{{\mathrm{{{name}}}}}$")
        bx.plot(ms, curves["random"], "-", color=color(c),
                label=rf"softmax, random, $\beta_{{\mathrm{{{name}}}}}$")
        bx.plot(ms, curves["sdm"], "--", color=color(c), label=f"SDM, random, d = {d}")
    bx.axvline(m, color="0.7", lw=0.8)
    bx.set_xscale("log")
    bx.set_yscale("log")
    bx.set_ylim(1e-7, 1.5)
    bx.set_xlabel(r"number of far patterns $m$")
    bx.set_ylabel("total weight on the far patterns")
    bx.legend(fontsize=7.5, loc="lower right")
    fig.tight_layout()
    return fig


def contributions_figure(
    count: Sequence[float], panels: Mapping[int, Mapping[str, object]], *, m: int = 1024
) -> plt.Figure:
    """The expected contribution of each distance to the far weight, one panel per radius.

    Parameters
    ----------
    count : sequence of float
        The expected number of the ``m`` patterns at each distance 0..n (grey bars).
    panels : mapping of int to mapping
        For each radius d (a panel, top to bottom): ``"name"`` (the optimum), ``"beta"`` (its
        beta), ``"softmax"`` and ``"sdm"`` (the expected contribution of each distance relative
        to the target's weight, arrays of length n + 1; SDM's zero entries are left out).
    m : int, default 1024
        The number of far patterns (titles).

    Returns
    -------
    matplotlib.figure.Figure
        One axes per panel, sharing the x axis, log y axis: the bars, two lines (softmax, SDM)
        and dotted and dashed vertical lines at 2d and n/2.

    Raises
    ------
    ValueError
        If ``panels`` is empty, a panel lacks a key, or an array's length differs from
        ``count``'s.
    """
    _check_mapping(panels, "panels")
    count = np.asarray(count, dtype=float)
    for d, p in panels.items():
        lacking = [k for k in ("name", "beta", "softmax", "sdm") if k not in p]
        if lacking:
            raise ValueError(f"panels[{d}] lacks {lacking}")
        if len(p["softmax"]) != len(count) or len(p["sdm"]) != len(count):
            raise ValueError(f"panels[{d}]: softmax and sdm need one value per distance, as "
                             "count has")
    use_style()
    n = len(count) - 1
    k = np.arange(n + 1)
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.0, 4.2 * len(panels)), sharex=True,
                             squeeze=False)
    for ax, (d, p) in zip(axes[:, 0], panels.items()):
        soft, sdm = np.asarray(p["softmax"]), np.asarray(p["sdm"])
        ax.bar(k, count, width=0.8, color="0.85",
               label="expected number of patterns at this distance")
        ax.plot(k, soft, "o-", ms=3, color=color("vermillion"),
                label=rf"softmax, $\beta_{{\mathrm{{{p['name']}}}}}$ = {p['beta']:.2f}")
        ax.plot(k[sdm > 0], sdm[sdm > 0], "s-", ms=3, color=color("blue"),
                label=f"SDM, d = {d}")
        ax.axvline(2 * d, color="0.5", lw=0.8, ls=":")
        ax.axvline(n / 2, color="0.5", lw=0.8, ls="--")
        ax.text(2 * d, 3e2, "$2d$ ", ha="right", color="0.35", fontsize=9)
        ax.text(n / 2, 3e2, " $n/2$", color="0.35", fontsize=9)
        ax.set_yscale("log")
        ax.set_ylim(1e-9, 1e3)
        ax.set_ylabel("weight relative to the target\n(grey: number of patterns)")
        ax.set_title(f"d = {d}, m = {m}")
        ax.legend(fontsize=7.5, loc="upper left")
    axes[-1, 0].set_xlabel(r"Hamming distance of a far pattern to the query $k$ (bits)")
    return fig
