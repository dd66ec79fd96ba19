"""The figure helper of chapter 13 (assocmem.mlps.figures.parameter_cost): what it draws."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.capacity_sweeps import counting_lower_bound  # noqa: E402
from assocmem.mlps.figures import parameter_cost  # noqa: E402
from assocmem.plotting import color  # noqa: E402

D, HI = 8, 64
FS = [8, 16, 32]


def _points():
    rows = []
    for geometry in ("isotropic", "anisotropic"):
        for F in FS:
            rows.append(("data_dependent", geometry, F, 3 * D * F, True))
            rows.append(("gd", geometry, F, 3 * D * (F // 8), True))
            # NTK finds no width at the largest load
            rows.append(("ntk", geometry, F, 3 * D * 4 * F, F < 32))
    return pd.DataFrame(rows, columns=["method", "geometry", "F", "W", "found"])


def _trainings():
    rows = [("gd", g, D, F, 3 * D * (F // 8 + s)) for g in ("isotropic", "anisotropic")
            for F in FS for s in (0, 1, 2)]
    rows.append(("gd", "isotropic", 2 * D, 8, 1))  # another d: ignored
    return pd.DataFrame(rows, columns=["method", "geometry", "d", "F", "W"])


@pytest.fixture
def fig():
    f = parameter_cost.cost_against_facts(_points(), _trainings(), d=D, hi=HI, beta=1.5,
                                          methods=("gd", "ntk", "data_dependent"))
    yield f
    plt.close(f)


def _line(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def test_two_log_log_panels_one_per_geometry(fig):
    assert len(fig.axes) == 2
    iso, ani = fig.axes
    assert iso.get_title() == f"isotropic, $d = {D}$"
    assert ani.get_title() == f"anisotropic, spike $\\beta = 1.5$, $d = {D}$"
    for ax in fig.axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert ax.get_xlabel() == "facts $F$"
    assert iso.get_ylabel() == "parameters $W = 3md$ to store every fact"


def test_each_method_is_drawn_through_its_found_points(fig):
    pts = _points()
    for ax, geometry in zip(fig.axes, ("isotropic", "anisotropic")):
        for method, label in (("gd", "GD"), ("ntk", "NTK"), ("data_dependent", "data-dependent")):
            line = _line(ax, label)
            want = pts[(pts.method == method) & (pts.geometry == geometry) & pts.found]
            np.testing.assert_array_equal(line.get_xdata(), want.F)
            np.testing.assert_array_equal(line.get_ydata(), want.W)
            assert line.get_color() == color(parameter_cost.METHOD_COLORS[method])


def test_missing_searches_are_triangles_above_the_cap(fig):
    ax = fig.axes[0]
    triangles = [ln for ln in ax.get_lines() if ln.get_marker() == "^" and len(ln.get_xdata())]
    assert len(triangles) == 1  # only NTK misses, at F = 32
    (tri,) = triangles
    np.testing.assert_array_equal(tri.get_xdata(), [32])
    k = 1  # NTK is the second method drawn
    assert tri.get_ydata()[0] == pytest.approx(3 * HI * D * 1.45**k)
    assert any(np.allclose(ln.get_ydata(), 3 * HI * D) for ln in ax.get_lines()
               if len(ln.get_ydata()) == 2)  # the cap line


def test_reference_lines_and_gd_bars(fig):
    ax = fig.axes[0]
    ref = _line(ax, r"$\propto F\log F$")
    x, y = ref.get_xdata(), ref.get_ydata()
    assert x[0] == 8 and x[-1] == 32 and y[0] == pytest.approx(3 * D * 8)
    bound = _line(ax, "counting bound (Thm 2.4), $b = 16$")
    np.testing.assert_allclose(bound.get_ydata(), counting_lower_bound(x, bits=16))
    (bars,) = ax.collections  # GD, lowest to highest training, at d = D only
    segments = bars.get_segments()
    assert len(segments) == len(FS)
    np.testing.assert_allclose([s[:, 1] for s in segments],
                               [[3 * D * (F // 8), 3 * D * (F // 8 + 2)] for F in FS])
    assert len(fig.legends) == 1


def test_bad_input_is_refused_with_a_clear_error():
    pts = _points()
    with pytest.raises(ValueError, match="lacks the column"):
        parameter_cost.cost_against_facts(pts.drop(columns="found"), None, d=D, hi=HI, beta=1.5)
    with pytest.raises(TypeError, match="DataFrame"):
        parameter_cost.cost_against_facts(pts.to_numpy(), None, d=D, hi=HI, beta=1.5)
    with pytest.raises(ValueError, match="unknown method"):
        parameter_cost.cost_against_facts(pts, None, d=D, hi=HI, beta=1.5, methods=("sgd",))
    with pytest.raises(ValueError, match="anchor"):
        parameter_cost.cost_against_facts(pts[pts.method != "data_dependent"], None, d=D, hi=HI,
                                          beta=1.5)
    with pytest.raises(ValueError, match="positive"):
        parameter_cost.cost_against_facts(pts, None, d=0, hi=HI, beta=1.5)
