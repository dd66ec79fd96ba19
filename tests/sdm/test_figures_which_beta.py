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
