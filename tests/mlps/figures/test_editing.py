"""Tests for assocmem.mlps.figures.editing: chapter 16's figures draw what they are given."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from assocmem.mlps.figures import editing as EF  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _table():
    rows = []
    for k, editor in enumerate(EF.EDITORS):
        for f in (0.02, 0.05, 0.10):
            r_nf = 1 + 0.1 * k + f
            rows.append(dict(editor=editor, fraction=f, r_nf=r_nf, r_nf_min=r_nf - 0.01,
                             r_nf_max=r_nf + 0.02, score=1 - f * k,
                             r_nf_paper=np.nan if editor == "rome" else 1.0 + f))
    return pd.DataFrame(rows)


def test_rnf_bars_draws_a_bar_per_editor_and_fraction_and_the_source_marks():
    table = _table()
    fig = EF.rnf_bars(table)
    (ax,) = fig.axes
    bars = ax.patches
    assert len(bars) == 12
    # editors in order, fractions within: swapping's three bars first
    np.testing.assert_allclose([b.get_height() for b in bars[:3]], [1.02, 1.05, 1.10])
    np.testing.assert_allclose([b.get_x() + b.get_width() / 2 for b in bars[:3]],
                               np.arange(3) - 0.3)
    assert bars[0].get_facecolor()[:3] == pytest.approx(
        matplotlib.colors.to_rgb(EF.COLOR["swap"]))
    marks = [ln for ln in ax.get_lines() if ln.get_color() == "black"]
    assert len(marks) == 9  # no source mark for ROME (NaN)
    np.testing.assert_allclose(marks[0].get_ydata(), [1.02, 1.02])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2 %", "5 %", "10 %"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        EF.NAME[e] for e in EF.EDITORS]
    assert ax.get_ylabel() == "r_NF (ratio)"


def test_data_dependent_draws_score_and_rnf_per_editor():
    table = _table()
    fig = EF.data_dependent(table)
    top, bottom = fig.axes
    assert len(top.get_lines()) == 4
    np.testing.assert_allclose(top.get_lines()[1].get_xdata(), [2, 5, 10])
    np.testing.assert_allclose(top.get_lines()[1].get_ydata(), [0.98, 0.95, 0.90])
    np.testing.assert_allclose(bottom.get_lines()[3].get_ydata(), [1.32, 1.35, 1.40])
    assert bottom.get_yscale() == "log" and top.get_ylim() == (-0.03, 1.03)
    assert bottom.get_xlabel() == "edited facts (%)"


def test_bad_input_is_refused_clearly():
    table = _table()
    with pytest.raises(ValueError, match="lacks the column"):
        EF.rnf_bars(table.drop(columns="r_nf_paper"))
    with pytest.raises(ValueError, match="no rows of the editor"):
        EF.data_dependent(table[table.editor != "memit"])
    with pytest.raises(TypeError, match="DataFrame"):
        EF.rnf_bars(table.to_dict())
