"""The figure helpers of chapter 34 (assocmem.sdm.figures.closeness): what they draw, and bad input."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from assocmem.sdm.figures import closeness  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _comparison(n, scale, beta):
    sdm = np.linspace(1.0, 0.0, n + 1) / 10
    return SimpleNamespace(sdm=sdm, softmax=scale * sdm + 1e-6, beta=beta, tv=0.1 * scale)


def test_one_each_figure_draws_bars_and_two_softmax_lines_per_axes():
    comps = {2: ("Mem", _comparison(16, 0.5, 3.0), _comparison(16, 0.7, 3.5)),
             4: ("CD", _comparison(16, 0.6, 2.0), _comparison(16, 0.8, 2.5))}
    fig = closeness.one_each_figure(comps)
    assert len(fig.axes) == 4
    left, right = fig.axes[0], fig.axes[1]
    assert len(left.patches) == 13 and len(right.patches) == 17  # 0..12 and 0..n
    np.testing.assert_allclose([p.get_height() for p in left.patches],
                               comps[2][1].sdm[:13])
    np.testing.assert_allclose(left.get_lines()[0].get_ydata(), comps[2][1].softmax[:13])
    np.testing.assert_allclose(left.get_lines()[1].get_ydata(), comps[2][2].softmax[:13])
    assert right.get_yscale() == "log"
    assert right.get_lines()[2].get_xdata()[0] == 4  # 2d
    assert left.get_title() == r"$d$ = 2 ($\beta_{\mathrm{Mem}}$), TV = 0.050"
    assert right.get_title() == "all 17, log scale"
    assert fig.axes[2].get_title().startswith("$d$ = 4")
    assert fig.axes[3].get_xlabel() == r"distance to the query $d_\mu$ (bits)"


def test_one_each_figure_refuses_bad_input():
    with pytest.raises(ValueError, match="non-empty"):
        closeness.one_each_figure({})
    with pytest.raises(ValueError, match="name, least-squares"):
        closeness.one_each_figure({2: ("Mem", _comparison(16, 0.5, 3.0))})
    short = _comparison(16, 0.5, 3.0)
    short.softmax = short.softmax[:5]
    with pytest.raises(ValueError, match="same distances"):
        closeness.one_each_figure({2: ("Mem", _comparison(16, 0.5, 3.0), short)})


def _tv_data():
    betas = np.array([1.0, 10.0, 100.0])
    curves, at_rule, at_best = {}, {}, {}
    for d in (5, 11):
        for kind in ("binary", "cap"):
            curves[d, kind] = [0.3, 0.1 * (d / 5), 0.4]
            at_rule[d, kind, "ols"] = (8.0, 0.2)
            at_rule[d, kind, "authors"] = (9.0, 0.15)
            at_best[d, kind] = (12.0, 0.1)
    return betas, curves, at_rule, at_best


def test_tv_beta_figure_draws_every_curve_with_its_markers():
    betas, curves, at_rule, at_best = _tv_data()
    fig = closeness.tv_beta_figure(betas, curves, at_rule, at_best)
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert len(lines) == 4 * 4 + 3  # curve, two rule markers and a star each; the legend keys
    np.testing.assert_allclose(lines[4].get_ydata(), curves[5, "cap"])
    assert lines[4].get_linestyle() == "--" and lines[0].get_linestyle() == "-"
    assert lines[0].get_color() == lines[4].get_color() != lines[8].get_color()
    assert lines[5].get_markerfacecolor() == "white"  # the cap's markers are open
    assert (lines[3].get_marker(), lines[3].get_xdata()[0]) == ("*", 12.0)
    labels = ax.get_legend_handles_labels()[1]
    assert labels[0] == "d = 5, circle intersection" and labels[-1] == r"TV-optimal $\beta$"
    assert ax.get_xscale() == "log"


def test_tv_beta_figure_refuses_bad_input():
    betas, curves, at_rule, at_best = _tv_data()
    curves[5, "binary"] = [0.1]
    with pytest.raises(ValueError, match="values for 3 betas"):
        closeness.tv_beta_figure(betas, curves, at_rule, at_best)
    betas, curves, at_rule, at_best = _tv_data()
    with pytest.raises(ValueError, match="star"):
        closeness.tv_beta_figure(betas, curves, at_rule, {})
    betas, curves, at_rule, at_best = _tv_data()
    for d in (15, 20):
        curves[d, "binary"] = [0.1] * 3
        at_rule[d, "binary", "ols"] = at_rule[d, "binary", "authors"] = (1.0, 0.1)
        at_best[d, "binary"] = (1.0, 0.1)
    with pytest.raises(ValueError, match="at most three"):
        closeness.tv_beta_figure(betas, curves, at_rule, at_best)


def _far_data():
    by_beta = dict(beta=[2.0, 4.0, 8.0], orthogonal=[0.5, 0.1, 0.01],
                   random=[0.6, 0.2, 0.05], sim_beta=[4.0], simulated=[(0.2, 0.01)],
                   sdm_beta=[3.0, 9.0], sdm=[1e-3, 1e-6],
                   sdm_simulated=np.array([[1e-3, 1e-4], [0.0, 0.0]]))
    ms = [1, 10, 100]
    by_m = {(15, "CD"): dict(orthogonal=[1e-4, 1e-3, 1e-2], random=[2e-4, 2e-3, 2e-2],
                             sdm=[1e-6, 1e-5, 1e-4])}
    return by_beta, {"CD": 9.4, "SNR": 14.4}, ms, by_m


def test_far_weight_figure_draws_both_panels():
    by_beta, markers, ms, by_m = _far_data()
    fig = closeness.far_weight_figure(by_beta, markers, ms, by_m, m=1024, trials=11)
    top, bottom = fig.axes
    lines = top.get_lines()
    np.testing.assert_allclose(lines[0].get_ydata(), by_beta["orthogonal"])
    np.testing.assert_allclose(lines[1].get_ydata(), by_beta["random"])
    labels = top.get_legend_handles_labels()[1]
    assert "softmax, simulated (11 trials, ±1 s.e.)" in labels
    sdm_points = [ln for ln in lines if ln.get_marker() == "s"]
    np.testing.assert_allclose(sdm_points[0].get_xdata(), [3.0])  # only the positive mean
    assert [t.get_text() for t in top.texts] == [r" $\beta_{\mathrm{CD}}$",
                                                 r" $\beta_{\mathrm{SNR}}$"]
    assert top.get_ylabel() == "total weight on $m$ = 1024 far patterns"
    curves = bottom.get_lines()
    assert len(curves) == 3 + 1  # three curves and the line at m
    np.testing.assert_allclose(curves[2].get_ydata(), by_m[15, "CD"]["sdm"])
    assert curves[3].get_xdata()[0] == 1024
    assert bottom.get_xscale() == "log" and bottom.get_yscale() == "log"


def test_far_weight_figure_refuses_bad_input():
    by_beta, markers, ms, by_m = _far_data()
    with pytest.raises(ValueError, match="lacks"):
        closeness.far_weight_figure({k: v for k, v in by_beta.items() if k != "sdm"},
                                    markers, ms, by_m, trials=1)
    bad = {**by_beta, "simulated": [0.2]}
    with pytest.raises(ValueError, match="shape"):
        closeness.far_weight_figure(bad, markers, ms, by_m, trials=1)
    with pytest.raises(ValueError, match="one value per m"):
        closeness.far_weight_figure(by_beta, markers, [1, 2], by_m, trials=1)
    three = {(d, "X"): by_m[15, "CD"] for d in (1, 2, 3)}
    with pytest.raises(ValueError, match="at most 2"):
        closeness.far_weight_figure(by_beta, markers, ms, three, trials=1)


def test_contributions_figure_draws_one_panel_per_radius():
    n = 8
    count = np.full(n + 1, 2.0)
    soft = np.linspace(1.0, 0.1, n + 1)
    sdm = np.where(np.arange(n + 1) <= 4, 0.5, 0.0)
    panels = {2: dict(name="SNR", beta=14.41, softmax=soft, sdm=sdm),
              3: dict(name="CD", beta=9.44, softmax=soft, sdm=sdm)}
    fig = closeness.contributions_figure(count, panels, m=1024)
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    assert len(ax.patches) == n + 1
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), soft)
    np.testing.assert_allclose(ax.get_lines()[1].get_xdata(), [0, 1, 2, 3, 4])  # sdm > 0
    assert ax.get_lines()[2].get_xdata()[0] == 4 and ax.get_lines()[3].get_xdata()[0] == 4.0
    assert ax.get_title() == "d = 2, m = 1024"
    assert r"$\beta_{\mathrm{SNR}}$ = 14.41" in ax.get_legend_handles_labels()[1][0]
    assert fig.axes[1].get_lines()[2].get_xdata()[0] == 6  # 2d at d = 3


def test_contributions_figure_refuses_bad_input():
    count = np.ones(9)
    with pytest.raises(ValueError, match="non-empty"):
        closeness.contributions_figure(count, {})
    with pytest.raises(ValueError, match="lacks"):
        closeness.contributions_figure(count, {2: dict(name="SNR", beta=1.0)})
    with pytest.raises(ValueError, match="one value per distance"):
        closeness.contributions_figure(
            count, {2: dict(name="SNR", beta=1.0, softmax=np.ones(5), sdm=np.ones(9))})
