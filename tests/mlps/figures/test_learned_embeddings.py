"""Chapter 17's figure helpers draw what they are given, and refuse malformed input."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.figures import learned_embeddings as LF  # noqa: E402

FS = [4, 8, 16]


def _margin_data(widths=(8, 32), trainings=(0, 1)):
    rows = pd.DataFrame([{"draw": draw, "m": m, "F": F, "gamma_min": 1.0 - 0.1 * F + rep}
                         for draw, _ in LF.DRAWS for m in widths for F in FS for rep in (0, 1)])
    means = {(t, draw, m, bound): pd.DataFrame({"F": FS, "gamma_min": [0.5, 0.2, -0.1],
                                                "predicted": [0.4 + t, 0.1, -0.2]})
             for t in trainings for draw, _ in LF.DRAWS for m in widths
             for bound in ("eq. 44", "eq. 9")}
    return rows, means


def test_margins_draws_one_panel_per_width_with_every_fit():
    rows, means = _margin_data()
    fig = LF.margins(rows, means, [8, 32], [0, 1])
    try:
        axes = fig.axes
        assert len(axes) == 2
        assert [ax.get_title() for ax in axes] == ["m = 8", "m = 32"]
        assert axes[0].get_ylabel() == "minimum margin" and axes[1].get_xlabel() == "facts F"
        # per panel: 2 draws x 2 trainings x (2 fitted curves + 1 line of means) + the zero line
        assert len(axes[0].lines) == 2 * 2 * 3 + 1
        assert len(axes[0].collections) == 2  # one scatter of runs per draw
        np.testing.assert_allclose(axes[0].lines[0].get_ydata(), [0.4, 0.1, -0.2])
        np.testing.assert_allclose(axes[0].lines[2].get_ydata(), [0.5, 0.2, -0.1])
        legend = [t.get_text() for t in axes[0].get_legend().get_texts()]
        assert legend == ["uniform", "separated"]
        assert axes[0].get_xscale() == "log"
    finally:
        plt.close(fig)


def test_margins_refuses_a_missing_fit_or_column():
    rows, means = _margin_data()
    del means[1, "separated", 32, "eq. 9"]
    with pytest.raises(ValueError, match="lacks the fit"):
        LF.margins(rows, means, [8, 32], [0, 1])
    rows, means = _margin_data()
    with pytest.raises(ValueError, match="gamma_min"):
        LF.margins(rows.drop(columns="gamma_min"), means, [8, 32], [0, 1])
    with pytest.raises(ValueError, match="at least one width"):
        LF.margins(rows, means, [], [0])
    with pytest.raises(TypeError, match="DataFrame"):
        LF.margins(rows.to_dict(), means, [8], [0])


def _capacity_data():
    cap = pd.DataFrame({"draw": ["uniform", "uniform", "separated", "separated"],
                        "F": [128, 256, 128, 256], "W": [1e4, np.nan, 2e4, 4e4],
                        "found": [True, False, True, True]})
    ref = pd.DataFrame({"geometry": ["isotropic", "isotropic", "anisotropic"],
                        "F": [128, 256, 128], "W": [5e3, 1.2e4, 6e3],
                        "found": [True, True, False]})
    return cap, ref


def test_capacity_draws_searches_misses_and_the_f_log_f_line():
    cap, ref = _capacity_data()
    fig = LF.capacity(cap, ref, top=1e6, label="toy")
    try:
        (ax,) = fig.axes
        lines = {ln.get_label(): ln for ln in ax.lines}
        np.testing.assert_allclose(lines["toy, uniform"].get_ydata(), [1e4])
        np.testing.assert_allclose(lines["toy, separated"].get_xdata(), [128, 256])
        np.testing.assert_allclose(lines["chapter 13, isotropic"].get_ydata(), [5e3, 1.2e4])
        # the uniform miss is a cross at the top; the F log F line passes through 5e3 at F = 128
        crosses = [ln for ln in ax.lines if ln.get_marker() == "x"]
        np.testing.assert_allclose(crosses[0].get_ydata(), [1e6])
        flogf = lines["F log F"]
        assert flogf.get_ydata()[0] == pytest.approx(5e3)
        assert ax.get_xlabel() == "facts F" and ax.get_ylabel() == "parameters W = 3md"
        assert ax.get_yscale() == "log"
    finally:
        plt.close(fig)


def test_capacity_refuses_bad_input():
    cap, ref = _capacity_data()
    with pytest.raises(ValueError, match="found"):
        LF.capacity(cap.drop(columns="found"), ref, top=1e6)
    with pytest.raises(ValueError, match="top"):
        LF.capacity(cap, ref, top=-1.0)
    with pytest.raises(ValueError, match="anchor"):
        LF.capacity(cap.assign(found=False), ref.iloc[0:0], top=1e6)


def test_capacity_draws_the_deduplicated_draw_when_present():
    cap, ref = _capacity_data()
    extra = pd.DataFrame({"draw": ["deduplicated"], "F": [256], "W": [3e4], "found": [True]})
    fig = LF.capacity(pd.concat([cap, extra], ignore_index=True), ref, top=1e6, label="toy")
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[0].lines}
        np.testing.assert_allclose(lines["toy, deduplicated"].get_ydata(), [3e4])
    finally:
        plt.close(fig)
    fig = LF.capacity(cap, ref, top=1e6, label="toy")
    try:
        assert "toy, deduplicated" not in {ln.get_label() for ln in fig.axes[0].lines}
    finally:
        plt.close(fig)


def _block_data():
    return pd.DataFrame({"draw": ["uniform", "uniform", "deduplicated", "deduplicated"],
                         "F": [32, 64, 32, 64], "W": [np.nan, np.nan, 6e3, 1.4e4],
                         "found": [False, False, True, True], "W_mlp": [5e3, np.nan, 4e3, 9e3],
                         "found_mlp": [True, False, True, True]})


def test_block_capacity_draws_block_and_standalone_searches():
    fig = LF.block_capacity(_block_data(), top=1e6, label="toy")
    try:
        (ax,) = fig.axes
        lines = {ln.get_label(): ln for ln in ax.lines}
        np.testing.assert_allclose(lines["toy, deduplicated: block"].get_ydata(), [6e3, 1.4e4])
        np.testing.assert_allclose(lines["toy, deduplicated: MLP alone"].get_ydata(), [4e3, 9e3])
        np.testing.assert_allclose(lines["toy, uniform: MLP alone"].get_ydata(), [5e3])
        crosses = [ln for ln in ax.lines if ln.get_marker() == "x" and len(ln.get_xdata())]
        np.testing.assert_allclose(crosses[0].get_xdata(), [32, 64])
        np.testing.assert_allclose(crosses[0].get_ydata(), [1e6, 1e6])
        assert lines["F log F"].get_ydata()[0] == pytest.approx(6e3)
        assert ax.get_yscale() == "log" and ax.get_ylabel() == "parameters W = 3md"
    finally:
        plt.close(fig)


def test_block_capacity_refuses_bad_input():
    rows = _block_data()
    with pytest.raises(ValueError, match="W_mlp"):
        LF.block_capacity(rows.drop(columns="W_mlp"), top=1e6)
    with pytest.raises(ValueError, match="top"):
        LF.block_capacity(rows, top=0.0)
    with pytest.raises(ValueError, match="unknown draw"):
        LF.block_capacity(rows.assign(draw="other"), top=1e6)
    with pytest.raises(ValueError, match="anchor"):
        LF.block_capacity(rows.assign(found=False, found_mlp=False), top=1e6)


def test_block_capacity_anchors_on_the_standalone_mlp_when_no_block_point_is_found():
    fig = LF.block_capacity(_block_data().assign(found=False), top=1e6, label="toy")
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[0].lines}
        assert lines["F log F"].get_ydata()[0] == pytest.approx(5e3)  # uniform F = 32, alone
        assert len(lines["toy, deduplicated: block"].get_xdata()) == 0
    finally:
        plt.close(fig)
