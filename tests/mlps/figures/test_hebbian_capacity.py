"""The figure helpers of chapter 10 (assocmem.mlps.figures.hebbian_capacity): what they draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps import counting as C  # noqa: E402
from assocmem.mlps.figures import hebbian_capacity as H  # noqa: E402
from assocmem.plotting import color  # noqa: E402

FS = [4, 8, 16, 32]


def _mean():
    rows = [(k, F, 1.0 - F / 64, 0.9 - F / 8 * (1 + (k == "linear")), 0.95 - F / 100)
            for k in ("linear", "k2") for F in FS]
    return pd.DataFrame(rows, columns=["kernel", "F", "accuracy", "gamma_min", "gamma_median"])


def _cap():
    rows = [(k, d, s, 10 * d + s, 0.1 + 0.01 * s) for k in ("linear", "k2") for d in (8, 16, 32)
            for s in range(2)]
    return pd.DataFrame(rows, columns=["kernel", "d", "seed", "capacity", "constant"])


def _by_label(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def test_accuracy_and_margins_draws_each_kernel():
    mean = _mean()
    fig = H.accuracy_and_margins(mean, 8)
    acc, mar = fig.axes
    for c, (k, name) in enumerate(H.KERNEL_LABELS.items()):
        sub = mean[mean.kernel == k]
        line = _by_label(acc, name)
        np.testing.assert_allclose(line.get_ydata(), sub.accuracy)
        assert line.get_color() == color(c)
        np.testing.assert_allclose(_by_label(mar, f"{name}: $\\gamma_{{\\min}}$").get_ydata(),
                                   sub.gamma_min)
        dotted = _by_label(mar, f"{name}: median $\\gamma_i$")
        assert dotted.get_linestyle() == ":"
        np.testing.assert_allclose(dotted.get_ydata(), sub.gamma_median)
    for ax in fig.axes:
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "number of stored facts $F$"
        assert sorted(t.get_text() for t in ax.texts) == ["$F = d$", "$F = d^2$"]
    assert mar.get_ylim() == pytest.approx((1.1 * min(mean.gamma_min.min(), -1.0), 1.05))
    assert acc.get_ylabel() == "accuracy (fraction of facts decoded)"
    plt.close(fig)


def test_capacity_against_width_draws_points_heuristics_and_constants():
    cap = _cap()
    fig = H.capacity_against_width(cap)
    raw, scaled = fig.axes
    assert raw.get_xscale() == raw.get_yscale() == "log"
    assert len(raw.collections) == len(scaled.collections) == 2  # one scatter per kernel
    for c, (k, coll) in enumerate(zip(H.KERNEL_LABELS, raw.collections)):
        sub = cap[cap.kernel == k]
        np.testing.assert_allclose(coll.get_offsets(), np.c_[sub.d, sub.capacity])
        const, p = C.HEURISTIC_CONSTANTS[k]
        heuristic = _by_label(raw, f"$F\\,\\ln F = d^{p}/{round(1 / const)}$")
        np.testing.assert_allclose(heuristic.get_ydata(),
                                   C.capacity_heuristic(heuristic.get_xdata(), k))
        dashed = _by_label(scaled, f"heuristic $1/{round(1 / const)}$")
        assert dashed.get_ydata()[0] == pytest.approx(const)
        np.testing.assert_allclose(scaled.collections[c].get_offsets()[:, 1], sub.constant)
    part1 = _by_label(raw, "$F = d$ (Part I's scale)")
    np.testing.assert_allclose(part1.get_xdata(), part1.get_ydata())
    assert raw.get_xlim() == pytest.approx((6, 48))
    assert scaled.get_ylim() == pytest.approx((0, 0.25))
    plt.close(fig)


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="DataFrame"):
        H.accuracy_and_margins(_mean().to_numpy(), 8)
    with pytest.raises(ValueError, match="lacks the column"):
        H.accuracy_and_margins(_mean().drop(columns="gamma_median"), 8)
    with pytest.raises(ValueError, match="positive"):
        H.accuracy_and_margins(_mean(), 0)
    with pytest.raises(ValueError, match="unknown kernel"):
        H.capacity_against_width(_cap().replace({"kernel": {"k2": "k3"}}))
    with pytest.raises(ValueError, match="lacks the column"):
        H.capacity_against_width(_cap().drop(columns="constant"))
