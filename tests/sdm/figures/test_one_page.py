"""The figures of chapter 30 (assocmem.sdm.figures.one_page): what they draw, and bad input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from assocmem.sdm import circle_intersection_table  # noqa: E402
from assocmem.sdm.figures import one_page  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_shared_neurons_figure_draws_one_panel_per_r():
    dvs = [0, 1, 2, 3]
    rng = np.random.default_rng(0)
    samples = {8: rng.integers(0, 5, (4, 10)), 64: rng.integers(0, 50, (4, 10))}
    expected = {8: np.array([4.0, 2, 2, 0]), 64: np.array([40.0, 20, 20, 0])}
    fig = one_page.shared_neurons_figure(dvs, samples, expected, n=6, d=1)
    axes = fig.axes
    assert len(axes) == 2
    for ax, r in zip(axes, (8, 64)):
        # one dot line per distance, the step line and the means
        assert len(ax.lines) == len(dvs) + 2 + 1  # + the vertical 2d line
        means = ax.lines[len(dvs) + 1]
        np.testing.assert_allclose(means.get_ydata(), samples[r].mean(1))
        np.testing.assert_allclose(ax.lines[len(dvs)].get_ydata(), expected[r])
        assert f"r = {r:,}" in ax.get_title()
    assert axes[1].get_xlabel().startswith("query-pattern distance")


def test_shared_neurons_figure_refuses_mismatched_input():
    with pytest.raises(ValueError, match="same non-empty keys"):
        one_page.shared_neurons_figure([0], {1: np.zeros((1, 2))}, {2: np.zeros(1)}, 4, 1)
    with pytest.raises(ValueError, match="do not match"):
        one_page.shared_neurons_figure([0, 1], {1: np.zeros((3, 2))}, {1: np.zeros(2)}, 4, 1)


def test_kernels_figure_draws_both_kernels_and_the_histograms():
    n, d, beta = 16, 3, 5.0
    fig = one_page.kernels_figure(n, d, beta, np.array([1, 2]), np.array([7, 8, 8, 9]))
    ax, bx = fig.axes
    sdm, att = ax.lines[:2]
    inter = np.array(circle_intersection_table(n, d, range(n // 2 + 1)), dtype=float)
    np.testing.assert_allclose(sdm.get_ydata()[: 2 * d + 1], (inter / inter[0])[: 2 * d + 1])
    np.testing.assert_allclose(att.get_ydata(), np.exp(-2 * beta * np.arange(n // 2 + 1) / n))
    heights = [sum(p.get_height() for p in c) for c in bx.containers]
    assert heights == [4, 2]  # other patterns, then targets
    assert bx.get_yscale() == "log"


def test_kernels_figure_refuses_bad_input():
    with pytest.raises(ValueError, match="radius"):
        one_page.kernels_figure(8, 9, 2.0, [1], [2])
    with pytest.raises(ValueError, match="beta"):
        one_page.kernels_figure(8, 2, -1.0, [1], [2])


def test_sign_distances_figure_draws_the_clouds_and_the_curves():
    D, H = np.array([30.0, 32, 34]), np.array([31.0, 33, 30])
    Dc, Hc = np.array([1.0, 4.0]), np.array([3.0, 8.0])
    fig = one_page.sign_distances_figure(D, H, Dc, Hc, n=64, d=11, show=2)
    (ax,) = fig.axes
    assert len(ax.lines) == 4
    np.testing.assert_allclose(ax.lines[0].get_xdata(), D[:2])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), Hc)
    curve = ax.lines[3]
    assert curve.get_ydata()[0] == pytest.approx(0.0)
    assert "signs" in ax.get_ylabel()


def test_sign_distances_figure_refuses_bad_input():
    with pytest.raises(ValueError, match="must match"):
        one_page.sign_distances_figure([1.0], [1.0, 2.0], [1.0], [1.0], 64, 11)
    with pytest.raises(ValueError, match="show"):
        one_page.sign_distances_figure([1.0], [1.0], [1.0], [1.0], 64, 11, show=0)
