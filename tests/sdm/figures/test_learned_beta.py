"""The figures of chapter 37 (assocmem.sdm.figures.learned_beta): what they draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from assocmem.sdm.figures import learned_beta as figs
from assocmem.sdm.trained import fit_accuracy_curves


def _runs():
    return pd.DataFrame({
        "variant": ["qknorm"] * 4 + ["qknorm_beta30"] * 2,
        "noise": [0.1, 0.1, 0.2, 0.2, 0.2, 0.2],
        "beta_late": [24.0, 25.0, 18.0, 19.0, 20.0, 21.0],
    })


def _ref():
    return pd.DataFrame({"beta_ols": [6.0, 13.3, 30.0], "d": [15, 11, 5]},
                        index=["CD", "SNR", "Mem"])


def test_learned_beta_strip_draws_one_strip_per_group_and_the_optima():
    fig = figs.learned_beta_strip(_runs(), _ref(), 64, 32)
    (ax,) = fig.axes
    lines = ax.get_lines()
    strips, optima = lines[:3], lines[3:]
    np.testing.assert_allclose(strips[0].get_xdata(), [24.0, 25.0])
    np.testing.assert_allclose(strips[0].get_ydata(), [0, 0])
    np.testing.assert_allclose(strips[2].get_ydata(), [2, 2])
    assert strips[2].get_marker() == "s"  # the start at 30
    assert [float(ln.get_xdata()[0]) for ln in optima] == [6.0, 13.3, 30.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "qknorm, ε = 0.1", "qknorm, ε = 0.2", "qknorm_beta30, ε = 0.2"]
    assert ax.get_xlabel() == "inverse temperature β"
    assert len(ax.patches) == 1  # the band
    plt.close(fig)


def test_learned_beta_strip_refuses_bad_input():
    with pytest.raises(ValueError, match="beta_late"):
        figs.learned_beta_strip(_runs().drop(columns="beta_late"), _ref(), 64, 32)
    with pytest.raises(ValueError, match="Mem"):
        figs.learned_beta_strip(_runs(), _ref().drop(index="Mem"), 64, 32)
    with pytest.raises(ValueError, match="increasing"):
        figs.learned_beta_strip(_runs(), _ref(), 64, 32, band=(25, 10))
    with pytest.raises(TypeError, match="DataFrame"):
        figs.learned_beta_strip({"a": 1}, _ref(), 64, 32)


def _pooled():
    m = np.array([2, 8, 32, 128, 512])
    rows = []
    for noise, scale in ((0.1, 0.02), (0.3, 0.08)):
        acc = 1 - scale * np.log2(m)
        rows += [{"noise": noise, "m": int(x), "correct": int(round(1000 * a)),
                  "queries": 1000} for x, a in zip(m, acc)]
    return pd.DataFrame(rows)


def test_recall_against_m_draws_data_and_two_curves_per_noise():
    pooled = _pooled()
    fits = {x: fit_accuracy_curves(g.m, g.correct, g.queries, floor=1 / 64)
            for x, g in pooled.groupby("noise")}
    fig = figs.recall_against_m(pooled, fits, 32)
    (ax,) = fig.axes
    lines = ax.get_lines()
    # per noise: dots, Eq. 26, logistic; then the training length and two legend stubs
    assert len(lines) == 2 * 3 + 3
    dots = lines[0]
    np.testing.assert_allclose(dots.get_xdata(), [2, 8, 32, 128, 512])
    np.testing.assert_allclose(dots.get_ydata(),
                               pooled[pooled.noise == 0.1].correct / 1000)
    mm = lines[1].get_xdata()
    np.testing.assert_allclose(lines[1].get_ydata(), fits[0.1]["eq26"].predict(mm))
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "recall accuracy"
    plt.close(fig)


def test_recall_against_m_refuses_missing_fits():
    with pytest.raises(ValueError, match="no fits"):
        figs.recall_against_m(_pooled(), {}, 32)
