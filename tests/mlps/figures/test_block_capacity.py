"""Tests for assocmem.mlps.figures.block_capacity: chapter 15's figures draw what they are given."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.figures import block_capacity as BC  # noqa: E402
from assocmem.plotting import color  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_swap_per_key_draws_two_bar_groups_and_markers():
    shares = {"A": [1.0, 0.5, 1.0], "B swapped": np.array([1.0, 1.0, 0.0]),
              "B unswapped": [0.0, 0.0, 0.125]}
    fig = BC.swap_per_key(shares)
    (ax,) = fig.axes
    bars = ax.patches
    assert len(bars) == 6  # two groups of three keys
    assert [b.get_height() for b in bars[:3]] == [100, 50, 100]
    np.testing.assert_allclose([b.get_x() + b.get_width() / 2 for b in bars[:3]],
                               np.arange(3) - 0.27)
    (markers,) = ax.get_lines()
    np.testing.assert_allclose(markers.get_ydata(), [0, 0, 12.5])
    np.testing.assert_allclose(markers.get_xdata(), np.arange(3) + 0.27)
    assert markers.get_marker() == "v" and markers.get_color() == color("vermillion")
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == sorted(shares)
    assert ax.get_xlabel() == "key" and ax.get_ylabel() == "contexts right (%)"


def test_swap_per_key_refuses_bad_input():
    with pytest.raises(ValueError, match="three entries"):
        BC.swap_per_key({"A": [1.0], "B": [1.0]})
    with pytest.raises(ValueError, match="one length"):
        BC.swap_per_key({"A": [1.0], "B": [1.0, 0.0], "C": [0.0]})
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        BC.swap_per_key({"A": [100.0], "B": [1.0], "C": [0.0]})


def _widths():
    rows = []
    for method in ("ntk", "data_dependent"):
        for F in (64, 128):
            for rep in (0, 1, 2):
                found = not (method == "ntk" and F == 128 and rep == 2)
                m = (40 if method == "ntk" else 16) * F // 64 + 4 * rep
                rows.append(dict(
                    method=method, d=16, F=F, rep=rep,
                    W_adaptive=3 * m * 16 if found else np.nan, found_adaptive=found,
                    W_train=3 * m * 8, found_train=True, m_alone=m // 2,
                    W_alone=3 * (m // 2) * 16,
                    violations_adaptive=1 if rep == 1 else 0, violations_train=0,
                    violations_alone=0,
                ))
    return pd.DataFrame(rows)


def test_capacity_draws_medians_trainings_misses_and_bounds():
    widths = _widths()
    fig = BC.capacity(widths, ["ntk", "data_dependent"], hi=256, d=16, junk_length=4)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    med = lines["NTK, fact-adaptive 100 %"]
    # at F = 128 one training found no width: the median of 3 counts it above the cap
    np.testing.assert_allclose(med.get_xdata(), [64, 128])
    np.testing.assert_allclose(med.get_ydata(), [3 * 44 * 16, 3 * 84 * 16])
    assert med.get_linestyle() == "-" and med.get_color() == BC.COLOR["ntk"]
    assert lines["data-dependent, training 99 %"].get_linestyle() == "--"
    fit = lines[r"$\propto F\log F$, fitted to the data-dependent MLP alone"]
    assert fit.get_linestyle() == ":"
    assert "counting bound, $b = 16$" in lines
    misses = [ln for ln in ax.get_lines() if ln.get_marker() == "^" and len(ln.get_xdata())]
    # the first method's fact-adaptive misses sit at the cap 3 hi d, the others above it
    assert len(misses) == 1 and misses[0].get_ydata()[0] == 3 * 256 * 16
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_ylabel() == "MLP parameters $W = 3md$"
    assert "3 trainings" in ax.get_title()


def test_capacity_refuses_bad_input():
    with pytest.raises(ValueError, match="unknown method"):
        BC.capacity(_widths(), ["hebbian"], hi=256, d=16, junk_length=4)
    with pytest.raises(ValueError, match="lacks the column"):
        BC.capacity(_widths().drop(columns="W_alone"), ["ntk"], hi=256, d=16, junk_length=4)


def test_ce_vs_mse_draws_both_losses_alone_and_inside():
    rows = pd.DataFrame([dict(method=meth, m=m, rep=r, mlp_accuracy=min(1.0, m / 32),
                              transformer_accuracy=min(1.0, m / 32) - 0.01 * r)
                         for meth in ("gd_ce", "gd_mse") for m in (8, 16, 32)
                         for r in (0, 1)])
    fig = BC.ce_vs_mse(rows)
    (ax,) = fig.axes
    ce_tf, ce_alone, mse_tf, mse_alone = ax.get_lines()
    np.testing.assert_allclose(ce_tf.get_ydata(), [24.5, 49.5, 99.5])
    np.testing.assert_allclose(ce_alone.get_ydata(), [25, 50, 100])
    assert ce_alone.get_linestyle() == ":" and mse_tf.get_marker() == "s"
    assert mse_alone.get_label() == "GD (MSE), MLP alone"
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="no rows of"):
        BC.ce_vs_mse(rows[rows.method == "gd_ce"])
