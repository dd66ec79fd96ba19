"""The figures of chapter 32 (assocmem.sdm.figures.which_beta): what they draw, and bad input."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from assocmem.sdm import circle_intersection_table, fit_beta  # noqa: E402
from assocmem.sdm.figures import which_beta  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _panel(n, d):
    log_i = [math.log(v) for v in circle_intersection_table(n, d, range(2 * d + 1))]
    fits = [(fit_beta(n, d), "-", "below d"), (fit_beta(n, d, window=(0, 2 * d)), "--", "2d")]
    return n, d, log_i, fits


def test_fits_figure_draws_the_curve_the_corners_and_the_lines():
    fig = which_beta.fits_figure([_panel(64, 11), _panel(64, 5)])
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    dots, corners, below, wide = ax.lines[:4]
    assert dots.get_ydata()[0] == 0.0 and len(dots.get_xdata()) == 23
    np.testing.assert_array_equal(corners.get_xdata(), np.arange(0, 23, 2))
    fit = fit_beta(64, 11)
    slope = (below.get_ydata()[1] - below.get_ydata()[0])
    assert slope == pytest.approx(-2 * fit.beta / 64)
    assert f"{fit.beta:.1f}" in below.get_label()
    assert wide.get_linestyle() == "--"
    assert ax.get_title() == "$n$ = 64, $d$ = 11"


def test_fits_figure_refuses_bad_panels():
    with pytest.raises(ValueError, match="at least one panel"):
        which_beta.fits_figure([])
    n, d, log_i, fits = _panel(64, 5)
    with pytest.raises(ValueError, match="2d"):
        which_beta.fits_figure([(n, d, log_i[:-1], fits)])
    with pytest.raises(ValueError, match="one or two fits"):
        which_beta.fits_figure([(n, d, log_i, [])])


def _local_panel(n, d):
    from assocmem.sdm import analytic_beta
    from assocmem.sdm.exponential import local_betas

    return dict(n=n, d=d, eq21=analytic_beta(n, d), regression=fit_beta(n, d).beta,
                local={k: local_betas(n, d, k) for k, *_ in which_beta.LOCAL_FACTORS})


def test_local_beta_figure_draws_each_factor_and_the_two_betas():
    panel = _local_panel(64, 11)
    fig = which_beta.local_beta_figure([panel])
    (ax,) = fig.axes
    factors = ax.lines[: len(which_beta.LOCAL_FACTORS)]
    for line, (key, *_) in zip(factors, which_beta.LOCAL_FACTORS):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 22, 2))
        np.testing.assert_allclose(line.get_ydata(), panel["local"][key])
    eq21, regression = ax.lines[len(which_beta.LOCAL_FACTORS):]
    assert eq21.get_ydata()[0] == pytest.approx(panel["eq21"])
    assert regression.get_ydata()[0] == pytest.approx(panel["regression"])
    assert ax.get_yscale() == "log"


def test_local_beta_figure_refuses_missing_or_short_factors():
    with pytest.raises(ValueError, match="at least one panel"):
        which_beta.local_beta_figure([])
    panel = _local_panel(64, 5)
    del panel["local"]["tail"]
    with pytest.raises(ValueError, match="'tail'"):
        which_beta.local_beta_figure([panel])
    panel = _local_panel(64, 5)
    panel["local"]["binary"] = panel["local"]["binary"][:-1]
    with pytest.raises(ValueError, match="needs d = 5"):
        which_beta.local_beta_figure([panel])


def test_beta_methods_figure_draws_each_method_and_the_paper():
    radii = [5, 11]
    methods = {"a": ([30.0, 15.0], "blue", "-"), "b": ([12.0, 7.0], "green", "--")}
    fig = which_beta.beta_methods_figure(radii, methods, {5: 35.5})
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.lines] == ["a", "b", "values reported in the paper"]
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [12.0, 7.0])
    np.testing.assert_allclose(ax.lines[2].get_xydata(), [[5, 35.5]])
    assert ax.get_yscale() == "log"


def test_beta_methods_figure_refuses_mismatched_values():
    with pytest.raises(ValueError, match="at least one method"):
        which_beta.beta_methods_figure([5], {}, {})
    with pytest.raises(ValueError, match="1 values for 2 radii"):
        which_beta.beta_methods_figure([5, 11], {"a": ([1.0], "blue", "-")}, {})
