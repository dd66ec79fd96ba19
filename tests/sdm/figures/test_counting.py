"""The figures of chapter 31 (assocmem.sdm.figures.counting): what they draw, and bad input."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from assocmem.sdm import circle_intersection_grid, circle_intersection_table  # noqa: E402
from assocmem.sdm.figures import counting  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_intersection_map_draws_log_counts_edge_and_hatching():
    n = 6
    grid = circle_intersection_grid(n, "eq2")
    fig = counting.intersection_map_figure(grid)
    ax = fig.axes[0]
    image = ax.images[0].get_array()
    assert image.shape == (n + 1, n + 1)
    assert image[2, 0] == pytest.approx(math.log10(grid[2, 0]))
    assert np.ma.is_masked(image[1, 4]) or np.isnan(image[1, 4])  # dv > 2d: blank
    hatched = sum(1 for d in range(n + 1) for dv in range(n + 1) if d + dv // 2 > n)
    assert len(ax.patches) == hatched
    assert "n = 6" in ax.get_title()
    assert len(fig.axes) == 2  # and the colour bar


def test_intersection_map_refuses_a_non_square_grid():
    with pytest.raises(ValueError, match="square"):
        counting.intersection_map_figure(np.ones((3, 4), dtype=int))


def test_simulation_figure_draws_means_and_z():
    dvs = np.arange(3)
    counts = np.array([[4, 2, 0], [6, 2, 0]])
    expected = np.array([5.0, 2.0, 0.0])
    z = np.array([0.1, 0.0, 0.0])
    fig = counting.simulation_figure(dvs, counts, expected, z, n=100, r=10**4, d=1)
    ax, az = fig.axes
    np.testing.assert_allclose(ax.lines[0].get_ydata(), expected)
    np.testing.assert_allclose(az.lines[0].get_ydata(), z)
    assert "10^{4}" in ax.get_title()
    assert az.get_ylim() == (-5, 5)


def test_simulation_figure_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="trials"):
        counting.simulation_figure([0, 1], np.zeros((1, 2)), [0, 0], [0, 0], 4, 2, 1)


def test_kanerva_figure_splits_ratios_by_parity():
    dvs = np.arange(6)
    exact = np.array([10.0, 8, 8, 6, 6, 4])
    fig = counting.kanerva_figure(dvs, exact, 0.9 * exact, 1.01 * exact, 1000, 451, 10**6,
                                  up_to=4)
    ax, ar = fig.axes
    assert len(ax.lines) == 3
    np.testing.assert_allclose(ax.lines[0].get_xdata(), np.arange(5))
    assert len(ar.lines) == 5  # two ratios x (even, odd) + the line at 1
    np.testing.assert_allclose(ar.lines[0].get_xdata(), [0, 2, 4])
    np.testing.assert_allclose(ar.lines[0].get_ydata(), 0.9)


def test_kanerva_figure_refuses_unequal_lengths():
    with pytest.raises(ValueError, match="same length"):
        counting.kanerva_figure([0, 1], [1.0, 1.0], [1.0], [1.0, 1.0], 10, 2, 100)


def test_staircase_figure_draws_one_curve_per_radius():
    top = {d: circle_intersection_table(64, d, range(2 * d + 1)) for d in (5, 11)}
    bottom = {447: circle_intersection_table(1000, 447, range(5))}
    fig = counting.staircase_figure(top, bottom)
    a64, a1k = fig.axes
    assert len(a64.lines) == 2 and len(a1k.lines) == 1
    y = a64.lines[0].get_ydata()
    assert y[1] == pytest.approx(y[2])  # the staircase: I(1) = I(2)
    assert "first 4 bits" in a1k.get_title()


def test_staircase_figure_refuses_an_empty_panel():
    with pytest.raises(ValueError, match="at least one radius"):
        counting.staircase_figure({}, {1: [1]})
