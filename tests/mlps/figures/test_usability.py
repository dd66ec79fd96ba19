"""Tests for assocmem.mlps.figures.usability: chapter 14's figures draw what they are given."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.figures import usability as FIG  # noqa: E402
from assocmem.plotting import color  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _usability_rows():
    rows = []
    for rep in (0, 1):
        for k, m in enumerate((8, 16, 32)):
            rows.append(dict(
                m=m, rep=rep, mlp_accuracy=[0.5, 1.0, 1.0][k],
                transformer_accuracy=[0.4, 0.9, 1.0][k] - 0.1 * rep,
                mlp_min_margin_unit=[-0.1, 0.05, 0.2][k],
                usable_fraction=[0.45, 0.85, 1.0][k],
                identity_accuracy_heldout=1.0 - 0.05 * rep,
                margin_q10=0.1 * k, margin_q50=0.2 * k, margin_q90=0.3 * k,
                margin_median_wrong=[-0.2, 0.01, np.nan][k],
            ))
    return pd.DataFrame(rows)


def test_accuracy_vs_width_draws_means_and_trainings():
    rows = _usability_rows()
    fig = FIG.accuracy_vs_width(rows, title="a title")
    left, right = fig.axes
    mlp, tf, *dots = left.get_lines()
    np.testing.assert_allclose(mlp.get_xdata(), [8, 16, 32])
    np.testing.assert_allclose(mlp.get_ydata(), [50, 100, 100])
    np.testing.assert_allclose(tf.get_ydata(), [35, 85, 95])  # means over the two trainings
    assert len(dots) == len(rows)  # one dot per training and width
    assert [t.get_text() for t in left.get_legend().get_texts()] == [
        "MLP alone", "Transformer (attention + MLP)"]
    margin, zero = right.get_lines()
    np.testing.assert_allclose(margin.get_ydata(), [-0.1, 0.05, 0.2])
    assert list(zero.get_ydata()) == [0, 0]
    assert left.get_xscale() == right.get_xscale() == "log"
    assert left.get_xlabel() == "MLP hidden width $m$" and left.get_ylabel() == "accuracy (%)"
    assert fig._suptitle.get_text() == "a title"


def test_predictors_draws_three_predictors_and_the_margin_band():
    rows = _usability_rows()
    fig = FIG.predictors(rows)
    left, right = fig.axes
    usable, alone, product, equality = left.get_lines()
    np.testing.assert_allclose(usable.get_xdata(), 100 * rows.usable_fraction)
    np.testing.assert_allclose(alone.get_xdata(), 100 * rows.mlp_accuracy)
    np.testing.assert_allclose(product.get_xdata(),
                               100 * rows.mlp_accuracy * rows.identity_accuracy_heldout)
    for line in (usable, alone, product):
        np.testing.assert_allclose(line.get_ydata(), 100 * rows.transformer_accuracy)
    assert [usable.get_marker(), alone.get_marker(), product.get_marker()] == ["o", "s", "^"]
    assert equality.get_linestyle() == ":"
    median, wrong, zero = right.get_lines()
    np.testing.assert_allclose(median.get_ydata(), [0, 0.2, 0.4])
    np.testing.assert_allclose(wrong.get_ydata(), [-0.2, 0.01, np.nan])
    assert len(right.collections) == 1  # the 10-90 % band
    assert right.get_ylabel() == "margin, unit scale"


def test_attention_noise_draws_one_colour_per_size():
    raw = pd.DataFrame([dict(d=d, F=d * 4, J=J, rep=r, noise_ceiling=0.1 * J + 0.01 * r,
                             identity_accuracy=1.0 if J < 16 else 0.9)
                        for d in (32, 64) for J in (2, 4, 8, 16) for r in (0, 1)])
    means = raw.groupby(["d", "F", "J"], as_index=False).mean(numeric_only=True)
    means = means.assign(noise_q50=1e-3, noise_q90=1e-2, noise_q99=0.1,
                         failure_rate=1 - means.identity_accuracy)
    fig = FIG.attention_noise(raw, means)
    assert len(fig.axes) == 4 and not fig.axes[3].axison
    ceiling = fig.axes[0]
    lines = ceiling.get_lines()
    # per size: the trainings' dots and the mean line; then the sqrt(2) line
    assert len(lines) == 5
    np.testing.assert_allclose(lines[1].get_ydata(), means[means.d == 32].noise_ceiling)
    assert lines[1].get_color() == color("blue") and lines[3].get_color() == color("vermillion")
    assert lines[4].get_ydata()[0] == pytest.approx(math.sqrt(2))
    assert len(fig.axes[1].get_lines()) == 6 and fig.axes[1].get_yscale() == "log"
    np.testing.assert_allclose(fig.axes[2].get_lines()[0].get_ydata(), [0, 0, 0, 10])


def test_bad_input_is_refused_clearly():
    rows = _usability_rows()
    with pytest.raises(ValueError, match="lacks the column"):
        FIG.accuracy_vs_width(rows.drop(columns="transformer_accuracy"))
    with pytest.raises(ValueError, match="no rows"):
        FIG.predictors(rows.iloc[:0])
    with pytest.raises(TypeError, match="DataFrame"):
        FIG.attention_noise(rows.to_dict(), rows)
