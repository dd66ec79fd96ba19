"""The figure helpers of chapter 3 (assocmem.linear.figures.read_error): what they draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.linear import theory  # noqa: E402
from assocmem.linear.figures import read_error  # noqa: E402
from assocmem.plotting import color  # noqa: E402

MEMS = ("additive", "least_squares")


def _curves(d_ks=(4, 8)):
    rows = [(m, d_k, n, 0.1 * n + (m == "additive"), 0.01)
            for m in MEMS for d_k in d_ks for n in (1, d_k, 2 * d_k)]
    return pd.DataFrame(rows, columns=["memory", "d_k", "n", "error", "sem"])


def _variants(d_k=4, specs=((2, "gaussian"), (16, "gaussian"), (2, "sign"))):
    rows = [(m, d_v, dist, n, 0.2 * n + i, 0.02)
            for m in MEMS for i, (d_v, dist) in enumerate(specs) for n in (1, d_k, 2 * d_k)]
    return pd.DataFrame(rows, columns=["memory", "d_v", "values", "n", "error", "sem"])


def _markers(ax):
    """(data line, label) of each errorbar, in drawing order."""
    return [(c.lines[0], c.get_label()) for c in ax.containers]


def test_by_key_dimension_draws_points_and_closed_forms():
    curves = _curves()
    fig = read_error.read_error_by_key_dimension(curves, [4, 8])
    assert len(fig.axes) == 2
    for ax, memory in zip(fig.axes, MEMS):
        assert ax.get_title() == read_error.MEMORY_TITLES[memory]
        assert ax.get_xlabel() == "stored pairs per key dimension, $n/d_k$"
        points = _markers(ax)
        assert len(points) == 2
        for i, ((line, label), d_k) in enumerate(zip(points, (4, 8))):
            sub = curves[(curves.memory == memory) & (curves.d_k == d_k)]
            np.testing.assert_allclose(np.asarray(line.get_xdata(), float), sub.n / d_k)
            np.testing.assert_allclose(np.asarray(line.get_ydata(), float), sub.error)
            assert line.get_color() == color(i) and label == f"$d_k = {d_k}$"
        # the closed forms: the first line of each key dimension's pair
        formula = read_error.MEMORIES[memory]
        theory_lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 400]
        assert len(theory_lines) == 2
        n = np.linspace(1, 8, 400)
        np.testing.assert_allclose(theory_lines[0].get_ydata(), formula(n, 4))
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sorted(legend) == sorted(["theory", "$d_k = 4$", "$d_k = 8$"])
    assert fig.axes[1].get_legend() is None
    assert read_error.MEMORIES["additive"] is theory.additive_read_error
    plt.close(fig)


def test_by_values_shifts_each_variant_and_keeps_one_theory_line():
    curves = _variants()
    specs = [(2, "gaussian"), (16, "gaussian"), (2, "sign")]
    fig = read_error.read_error_by_values(curves, 4, specs)
    assert len(fig.axes) == 2
    for ax, memory in zip(fig.axes, MEMS):
        assert ax.get_title() == f"{read_error.MEMORY_TITLES[memory]}, $d_k = 4$"
        points = _markers(ax)
        assert [ln.get_marker() for ln, _ in points] == ["o", "s", "^"]
        for i, ((line, label), (d_v, dist)) in enumerate(zip(points, specs)):
            sub = curves[(curves.memory == memory) & (curves.d_v == d_v)
                         & (curves["values"] == dist)]
            np.testing.assert_allclose(np.asarray(line.get_xdata(), float), sub.n / 4 + 0.03 * (i - 1))
            assert label == f"$d_v = {d_v}$, {dist} values"
            assert line.get_color() == color(i) and line.get_markerfacecolor() == "none"
        (th,) = [ln for ln in ax.get_lines() if ln.get_label() == "theory"]
        np.testing.assert_allclose(th.get_ydata(),
                                   read_error.MEMORIES[memory](np.linspace(1, 8, 400), 4))
    plt.close(fig)


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="DataFrame"):
        read_error.read_error_by_key_dimension(_curves().to_numpy(), [4])
    with pytest.raises(ValueError, match="lacks the column"):
        read_error.read_error_by_key_dimension(_curves().drop(columns="sem"), [4])
    with pytest.raises(ValueError, match="no rows with d_k"):
        read_error.read_error_by_key_dimension(_curves(), [4, 16])
    with pytest.raises(ValueError, match="memory"):
        read_error.read_error_by_key_dimension(_curves().query("memory == 'additive'"), [4])
    with pytest.raises(ValueError, match="at most 3"):
        read_error.read_error_by_values(_variants(), 4, [(2, "gaussian")] * 4)
    with pytest.raises(ValueError, match="d_v = 3"):
        read_error.read_error_by_values(_variants(), 4, [(3, "gaussian")])
