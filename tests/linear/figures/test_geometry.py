"""The figure helpers of chapter 02 (assocmem.linear.figures.geometry): what they draw, and
clear errors for bad input."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from assocmem.linear.figures import geometry as figures  # noqa: E402
from assocmem.linear.geometry import circle_directions, unit_vectors_2d  # noqa: E402
from assocmem.linear.memory import LeastSquaresMemory, OuterProductMemory  # noqa: E402
from assocmem.linear.theory import least_squares_sigma_max  # noqa: E402

F64 = torch.float64


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _pair(theta=math.radians(30.0)):
    keys = unit_vectors_2d(torch.tensor([0.2, 0.2 + theta], dtype=F64))
    return keys, torch.eye(2, dtype=F64)


def _drawn(ax):
    """The lines a helper drew (key_value_planes draws the two axis lines first)."""
    return ax.lines[2:]


def _arrows(ax):
    """End points of the arrows drawn by draw_vector (annotations from the origin)."""
    return [tuple(np.round(a.xy, 12)) for a in ax.texts if hasattr(a, "xy") and a.get_text() == ""]


def test_one_pair_puts_every_read_on_the_image_line():
    k, v = unit_vectors_2d(0.3), unit_vectors_2d(2.0)
    S = OuterProductMemory(2, 2).write(k[None], v[None])
    queries = unit_vectors_2d(torch.tensor([0.3, 1.0, 0.3 + math.pi / 2], dtype=F64))
    reads = S.read(queries)
    fig = figures.one_pair(k, v, queries, reads, labels=["k", "a", "perp"])
    axk, axv = fig.axes
    null = _drawn(axk)[0].get_xydata()
    assert abs(float(np.dot(null[1], k.numpy()))) < 1e-12  # the null space is k's normal
    dots = np.array([line.get_xydata()[0] for line in _drawn(axv)[1:]])
    assert np.allclose(dots, reads.numpy())
    assert np.allclose(dots[2], 0, atol=1e-12)  # the perpendicular query reads zero
    assert [t.get_text() for t in axk.texts if t.get_text()] == ["k", "a", "perp"]
    assert axv.get_legend().get_texts()[0].get_text().startswith("image")


def test_one_pair_refuses_bad_input():
    k = unit_vectors_2d(0.3)
    q = torch.zeros(5, 2, dtype=F64)
    with pytest.raises(ValueError, match="1 to 4 queries"):
        figures.one_pair(k, k, q, q, labels=list("abcde"))
    with pytest.raises(ValueError, match="differ in length"):
        figures.one_pair(k, k, q[:2], q[:3], labels=["a", "b"])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        figures.one_pair(torch.zeros(3), k, q[:1], q[:1], labels=["a"])
    with pytest.raises(ValueError, match="nonzero"):
        figures.one_pair(torch.zeros(2), k, q[:1], q[:1], labels=["a"])


def test_two_pairs_draws_the_leak_from_v1_to_the_read():
    keys, values = _pair()
    read = OuterProductMemory(2, 2).write(keys, values).read(keys[0])
    fig = figures.two_pairs(keys, values, read)
    axk, axv = fig.axes
    leak = [a for a in axv.texts if hasattr(a, "xy") and a.get_text() == "" and a.xyann != (0, 0)]
    assert len(leak) == 1
    assert np.allclose(leak[0].xy, read.numpy()) and np.allclose(leak[0].xyann, [1, 0])
    assert len(_arrows(axk)) == 2
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        figures.two_pairs(keys[:1], values, read)


def test_least_squares_map_draws_the_ellipse_and_its_long_axis():
    keys, values = _pair()
    ls = LeastSquaresMemory(2, 2).write(keys, values)
    circle = circle_directions(64)
    fig = figures.least_squares_map(keys, ls.dual_basis(), values, circle, ls.read(circle), ls.S)
    axk, axv = fig.axes
    assert np.allclose(_drawn(axk)[0].get_xydata(), circle.numpy())
    assert np.allclose(_drawn(axv)[0].get_xydata(), ls.read(circle).numpy())
    longest = max(_arrows(axv), key=lambda p: math.hypot(*p))
    assert math.isclose(math.hypot(*longest), least_squares_sigma_max(math.radians(30.0)),
                        rel_tol=1e-12)
    assert longest[0] > 0  # pointing right
    assert axk.get_xlim() == (-3.0, 3.0)
    with pytest.raises(ValueError, match="differ in length"):
        figures.least_squares_map(keys, ls.dual_basis(), values, circle, circle[:3], ls.S)


def test_two_readings_draws_the_walk_and_both_reads():
    keys, values = _pair()
    q = unit_vectors_2d(1.0)
    ls, add = LeastSquaresMemory(2, 2).write(keys, values), OuterProductMemory(2, 2).write(keys, values)
    coords = torch.linalg.solve(keys.T, q)
    fig = figures.two_readings(keys, values, q, keys @ q, coords, ls.read(q), add.read(q))
    axk, axv = fig.axes
    walk = [line for line in axk.lines if line.get_label().startswith("walk")][0]
    assert np.allclose(walk.get_xydata()[-1], q.numpy())
    assert np.allclose(walk.get_xydata()[1], (coords[0] * keys[0]).numpy())
    ends = _arrows(axv)
    assert any(np.allclose(e, ls.read(q).numpy()) for e in ends)
    assert any(np.allclose(e, add.read(q).numpy()) for e in ends)
    with pytest.raises(ValueError, match="finite"):
        figures.two_readings(keys, values, q * float("nan"), keys @ q, coords, q, q)


def test_stretch_and_noise_plots_points_on_the_closed_forms():
    th = np.array([10.0, 50.0, 90.0])
    dual, sig = 1 / np.sin(np.radians(th)), least_squares_sigma_max(np.radians(th))
    eps = np.logspace(-3, 0, 7)
    theta = math.radians(30.0)
    fig = figures.stretch_and_noise(th, dual, sig, eps, np.full(7, 0.9), eps * 2.7, theta, 0.4)
    ax1, ax2 = fig.axes
    assert np.allclose(ax1.lines[0].get_ydata(), dual) and np.allclose(ax1.lines[2].get_ydata(), sig)
    assert ax1.get_yscale() == "log" and ax2.get_xscale() == "log"
    assert np.allclose(ax2.lines[2].get_xdata(), eps[::3])
    assert ax2.lines[3].get_xdata()[0] == 0.4  # the crossing
    assert ax2.get_title() == r"keys 30$^\circ$ apart"
    with pytest.raises(ValueError, match="shape"):
        figures.stretch_and_noise(th, dual[:2], sig, eps, eps, eps, theta, 0.4)
    with pytest.raises(ValueError, match=r"\(0, pi\)"):
        figures.stretch_and_noise(th, dual, sig, eps, eps, eps, 4.0, 0.4)
