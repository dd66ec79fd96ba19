"""Chapter 50's figure helper draws what it is given, and refuses malformed input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.compare.figures import one_table as OT  # noqa: E402


def _rows():
    rows = []
    for geometry in ("isotropic", "anisotropic"):
        rows.append({"memory": "outer_product", "geometry": geometry, "W": 256, "F_star": 5,
                     "censored": False, "training": 0})
        for W, F in ((96, 3), (192, 8)):
            rows.append({"memory": "mlp_whitened", "geometry": geometry, "W": W, "F_star": F,
                         "censored": False, "training": 0})
        rows.append({"memory": "softmax_cache", "geometry": geometry, "W": 2 * 8 * 64,
                     "F_star": 64, "censored": True, "training": 0})
        for t, F in enumerate((4, 6, 7)):
            rows.append({"memory": "mlp_gd", "geometry": geometry, "W": 96, "F_star": F,
                         "censored": False, "training": t})
    return pd.DataFrame(rows)


def test_draws_every_memory_the_bounds_and_the_budget():
    every = _rows()
    median = every[(every.memory != "mlp_gd") | (every.training == 1)]
    fig = OT.capacity_against_parameters(median, every, d=8, F_max=64, budget=256,
                                         spike_beta=1.5)
    try:
        top, bottom = fig.axes
        assert top.get_title() == "isotropic, $d = 8$"
        assert bottom.get_title() == r"anisotropic, spike $\beta = 1.5$, $d = 8$"
        lines = {ln.get_label(): ln for ln in top.lines}
        np.testing.assert_allclose(lines["whitened MLP"].get_xdata(), [96, 192])
        np.testing.assert_allclose(lines["whitened MLP"].get_ydata(), [3, 8])
        np.testing.assert_allclose(lines["GD MLP"].get_ydata(), [6])
        # the cache's end marker is open (censored) at W = 2 d F*
        cache = lines["softmax KV cache"]
        assert cache.get_mfc() == "none" and cache.get_xdata()[0] == 2 * 8 * 64
        bound = lines["counting bound, 64 bits per parameter"]
        F = bound.get_ydata()
        np.testing.assert_allclose(bound.get_xdata(), F * np.log2(F) / 64)
        assert "counting bound, 1 bit per parameter" in lines
        # the budget line and GD's bar from its lowest to its highest training
        assert any(np.allclose(ln.get_xdata(), [256, 256]) for ln in top.lines)
        (bar,) = top.collections
        np.testing.assert_allclose(bar.get_segments()[0][:, 1], [4, 7])
        assert bottom.get_xlabel() == "parameters $W$"
        assert len(fig.legends) == 1
    finally:
        plt.close(fig)


def test_memory_style_gives_each_memory_of_a_part_its_own_colour():
    marks = [OT.memory_style(m) for m in ("outer_product", "least_squares", "mlp_gd")]
    assert marks[0][0] == "o" and marks[2][0] == "s" and marks[0][1] != marks[1][1]
    with pytest.raises(KeyError, match="not a memory"):
        OT.memory_style("abacus")


def test_refuses_bad_input():
    every = _rows()
    with pytest.raises(ValueError, match="censored"):
        OT.capacity_against_parameters(every.drop(columns="censored"), every, 8, 64, 256, 1.5)
    with pytest.raises(ValueError, match="abacus"):
        OT.capacity_against_parameters(every.assign(memory="abacus"), every, 8, 64, 256, 1.5)
    with pytest.raises(ValueError, match="budget"):
        OT.capacity_against_parameters(every, every, 8, 64, 0, 1.5)
    with pytest.raises(TypeError, match="DataFrame"):
        OT.capacity_against_parameters(every.to_dict(), every, 8, 64, 256, 1.5)
