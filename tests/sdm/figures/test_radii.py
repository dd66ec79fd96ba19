"""The figure helpers of chapter 33 (assocmem.sdm.figures.radii): what they draw, and bad input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.sdm.figures import radii  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _snr_data():
    ds = np.arange(30, 41)
    by_radius = pd.DataFrame({"eq25": ds * 1.0, "orthogonal": ds * 2.0, "exact": ds * 0.5},
                             index=ds)
    index = pd.MultiIndex.from_product([[33, 35], [10, 100]], names=["d", "m"])
    grid = pd.DataFrame({"simulated": [1.0, 2.0, 3.0, 4.0], "stderr": [0.1] * 4}, index=index)
    ms = np.array([1, 10, 100])
    by_patterns = {35: pd.DataFrame({"eq25": [3.0, 2.0, 1.0], "exact": [3.0, 2.0, 0.5]},
                                    index=ms),
                   39: pd.DataFrame({"eq25": [4.0, 3.0, 2.0], "exact": [4.0, 2.0, 1.0]},
                                    index=ms)}
    return by_radius, grid, by_patterns


def test_snr_figure_draws_the_curves_and_the_points():
    by_radius, grid, by_patterns = _snr_data()
    fig = radii.snr_figure(by_radius, grid, by_patterns, n=100, m=100, d_snr=36, trials=7)
    top, bottom = fig.axes
    lines = top.get_lines()
    np.testing.assert_array_equal(lines[0].get_ydata(), by_radius.eq25)
    np.testing.assert_array_equal(lines[1].get_ydata(), by_radius.orthogonal)
    np.testing.assert_array_equal(lines[2].get_ydata(), by_radius.exact)
    # the simulated points at m = 100: (33, 2.0) and (35, 4.0), then the d* marker
    np.testing.assert_array_equal(lines[3].get_xdata(), [33, 35])
    np.testing.assert_array_equal(lines[3].get_ydata(), [2.0, 4.0])
    assert [list(ln.get_xdata()) for ln in lines].count([36, 36]) == 1
    assert "7 trials" in top.get_legend_handles_labels()[1][-1]
    assert top.get_title() == "$n$ = 100, $r$ = $10^4$, $m$ = 100"
    # bottom: two curves per radius, the simulated points only for d = 35
    curves = [ln for ln in bottom.get_lines() if ln.get_linestyle() != "None"]
    assert len(curves) == 4
    np.testing.assert_array_equal(curves[1].get_ydata(), [3.0, 2.0, 0.5])
    points = [ln for ln in bottom.get_lines() if ln.get_linestyle() == "None"]
    np.testing.assert_array_equal(points[0].get_ydata(), [3.0, 4.0])
    assert bottom.get_xscale() == "log"


def test_snr_figure_refuses_bad_input():
    by_radius, grid, by_patterns = _snr_data()
    with pytest.raises(ValueError, match="orthogonal"):
        radii.snr_figure(by_radius.drop(columns="orthogonal"), grid, by_patterns, n=100,
                         m=100, d_snr=36, trials=7)
    with pytest.raises(TypeError, match="DataFrame"):
        radii.snr_figure(by_radius, grid.to_numpy(), by_patterns, n=100, m=100, d_snr=36,
                         trials=7)
    with pytest.raises(ValueError, match="one or two radii"):
        radii.snr_figure(by_radius, grid, {}, n=100, m=100, d_snr=36, trials=7)


def _criteria_data():
    curves = {
        "canonical": dict(d=[1, 2, 3], snr=[1.0, 2.0, 1.0], memory=[5.0, 6.0, 0.0],
                          critical_distance=[3.0, 4.0, 2.0]),
        "attention": dict(d=[4, 5], snr=[1.0, 3.0], memory=[7.0, 8.0],
                          critical_distance=[1.0, -1.0]),
    }
    optimum = {(s, c): 2 for s in curves for c in ("snr", "memory", "critical_distance")}
    return curves, optimum, {"canonical": 1000, "attention": 64}


def test_criteria_figure_draws_one_curve_and_one_optimum_per_axes():
    curves, optimum, n = _criteria_data()
    fig = radii.criteria_figure(curves, optimum, n)
    assert len(fig.axes) == 6
    axes = np.array(fig.axes).reshape(3, 2)
    for ax in fig.axes:
        assert len(ax.get_lines()) == 2  # the curve and the dashed optimum
    # non-positive values are left out (NaN): capacity 0 and a missing critical distance
    np.testing.assert_array_equal(axes[1, 0].get_lines()[0].get_ydata(), [5.0, 6.0, np.nan])
    np.testing.assert_array_equal(axes[2, 1].get_lines()[0].get_ydata(), [1.0, np.nan])
    assert axes[1, 0].get_yscale() == "log" and axes[0, 1].get_yscale() == "log"
    assert axes[0, 0].get_yscale() == "linear"
    assert axes[0, 0].get_title() == "canonical: $n$ = 1000"
    assert axes[2, 0].get_ylabel() == "critical distance (bits)"
    assert axes[0, 0].get_legend_handles_labels()[1] == ["$d^\\ast$ = 2"]


def test_criteria_figure_refuses_bad_input():
    curves, optimum, n = _criteria_data()
    del curves["canonical"]["memory"]
    with pytest.raises(ValueError, match="lacks"):
        radii.criteria_figure(curves, optimum, n)
    curves, optimum, n = _criteria_data()
    curves["attention"]["snr"] = [1.0]
    with pytest.raises(ValueError, match="one value per radius"):
        radii.criteria_figure(curves, optimum, n)
    curves, optimum, n = _criteria_data()
    with pytest.raises(ValueError, match="optimum"):
        radii.criteria_figure(curves, {}, n)


def _cd():
    return pd.DataFrame({"smallest": [20, 15], "crossing": [21, 16], "tie_lo": [10, 15],
                         "tie_hi": [40, 16], "cd": [64.0, 24.0]},
                        index=pd.Index([16, 1024], name="m"))


def test_cd_optimum_figure_draws_both_tie_breaks_and_the_band():
    fig = radii.cd_optimum_figure(_cd(), band=(16, 22), m_max=512)
    top, bottom = fig.axes
    lines = top.get_lines()
    np.testing.assert_array_equal(lines[0].get_ydata(), [20, 15])
    np.testing.assert_array_equal(lines[1].get_ydata(), [21, 16])
    assert lines[2].get_xdata()[0] == 512
    ties = top.collections[0].get_segments()  # clipped at 30
    assert [tuple(s[:, 1]) for s in ties] == [(10, 30), (15, 16)]
    assert "paper: 16 to 22 ($m \\leq 512$)" in top.get_legend_handles_labels()[1]
    np.testing.assert_array_equal(bottom.get_lines()[0].get_ydata(), [64.0, 24.0])
    assert top.get_xscale() == "log"


def test_cd_optimum_figure_refuses_bad_input():
    with pytest.raises(ValueError, match="tie_hi"):
        radii.cd_optimum_figure(_cd().drop(columns="tie_hi"))
    with pytest.raises(ValueError, match="lo < hi"):
        radii.cd_optimum_figure(_cd(), band=(22, 16))
    with pytest.raises(ValueError, match="empty"):
        radii.cd_optimum_figure(_cd().iloc[:0])


def _betas():
    return pd.DataFrame({"d": [15, 11, 5], "beta_ols": [9.4, 14.4, 28.4],
                         "beta_authors": [10.1, 15.9, 35.5]}, index=["CD", "SNR", "Mem"])


BAND = dict(count=90, lo=10.31, hi=24.85, mean=15.65, median=15.11)


def test_learnt_band_figure_draws_the_optima_against_the_band():
    fig = radii.learnt_band_figure(_betas(), BAND, [29.0, 31.0], extra=(7, 22.0))
    (ax,) = fig.axes
    xy = [(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in ax.get_lines()]
    assert (15.11, 0) in [(x, 0) for x, _ in xy[:1]]  # the median line first
    assert xy[1][0] == 15.65  # then the mean
    markers = xy[2:8]  # least squares on row 1, the authors' convention on row 0
    assert markers == [(9.4, 1), (10.1, 0), (14.4, 1), (15.9, 0), (28.4, 1), (35.5, 0)]
    np.testing.assert_array_equal(ax.get_lines()[8].get_xdata(), [29.0, 38])  # the bar
    assert xy[9] == (22.0, 1)  # the extra radius
    assert ax.patches[0].get_x() == pytest.approx(10.31)  # the band, as a span
    assert "90 heads" in ax.get_legend_handles_labels()[1][0]
    assert [t.get_text() for t in ax.texts][-1] == "$d$ = 7"


def test_learnt_band_figure_refuses_bad_input():
    with pytest.raises(ValueError, match="Mem"):
        radii.learnt_band_figure(_betas().drop(index="Mem"), BAND, [29.0])
    with pytest.raises(ValueError, match="lo < hi"):
        radii.learnt_band_figure(_betas(), {**BAND, "lo": 30.0}, [29.0])
    with pytest.raises(ValueError, match="near"):
        radii.learnt_band_figure(_betas(), BAND, [])
