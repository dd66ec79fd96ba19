"""assocmem.sweeps.check_rows: live rows against stored rows, each column by a stated rule."""

import math

import numpy as np
import pandas as pd
import pytest

from assocmem.sweeps import RowsDisagree, check_rows

STORED = pd.DataFrame({"k": [1, 2, 3, 4], "x": [0.1, 0.2, np.nan, 0.4], "m": [3, 4, 5, 6],
                       "label": ["a", "b", "c", "d"], "wall_time_s": [1.0, 2.0, 3.0, 4.0]})


def _live(changes=None):
    live = STORED.iloc[:3].copy()
    for (col, row), value in (changes or {}).items():
        live.loc[row, col] = value
    return live


def test_agreeing_rows_pass_and_the_summary_names_every_rule():
    live = _live({("x", 0): 0.1 + 1e-14, ("wall_time_s", 1): 99.0})
    out = check_rows(live, STORED, ["k"], tolerances={"x": 1e-12}, exact=["m", "label"])
    assert list(out["column"]) == ["x", "m", "label"]
    assert out.loc[0, "rows"] == 3 and 0 < out.loc[0, "max |diff|"] < 1e-12
    assert math.isnan(out.loc[2, "max |diff|"])  # a label has no numeric difference


def test_a_continuous_column_beyond_its_tolerance_raises():
    with pytest.raises(RowsDisagree, match=r"x: \|diff\| <= 1e-12 broken \(1 row"):
        check_rows(_live({("x", 1): 0.2 + 1e-9}), STORED, ["k"], tolerances={"x": 1e-12},
                   exact=["m", "label"])


def test_nan_on_one_side_only_is_a_difference():
    with pytest.raises(RowsDisagree, match="x"):
        check_rows(_live({("x", 2): 0.3}), STORED, ["k"], tolerances={"x": 1.0}, exact=["m", "label"])


def test_discrete_flips_within_their_bound_pass_and_beyond_it_raise():
    live = _live({("m", 0): 9})
    out = check_rows(live, STORED, ["k"], tolerances={"x": 0.0}, max_changed={"m": 1}, exact=["label"])
    assert out.set_index("column").loc["m", "rows changed"] == 1
    with pytest.raises(RowsDisagree, match="rows changed <= 0"):
        check_rows(live, STORED, ["k"], tolerances={"x": 0.0}, max_changed={"m": 0}, exact=["label"])
    with pytest.raises(RowsDisagree, match="label: equal broken"):
        check_rows(_live({("label", 1): "z"}), STORED, ["k"], tolerances={"x": 0.0}, exact=["m", "label"])


def test_a_live_row_without_a_stored_partner_raises():
    live = pd.concat([_live(), pd.DataFrame({"k": [9], "x": [0.0], "m": [1], "label": ["q"], "wall_time_s": [0.0]})])
    with pytest.raises(RowsDisagree, match="1 live row"):
        check_rows(live, STORED, ["k"], tolerances={"x": 1.0}, exact=["m", "label"])


def test_every_result_column_needs_exactly_one_rule():
    with pytest.raises(ValueError, match=r"\['label'\] have no stated rule"):
        check_rows(_live(), STORED, ["k"], tolerances={"x": 1.0}, exact=["m"])
    with pytest.raises(ValueError, match="more than one rule"):
        check_rows(_live(), STORED, ["k"], tolerances={"x": 1.0, "m": 0.0}, exact=["m", "label"])
    with pytest.raises(ValueError, match="key column"):
        check_rows(_live(), STORED, ["nope"], exact=["x", "m", "label"])
    with pytest.raises(ValueError, match="tolerance of 'x'"):
        check_rows(_live(), STORED, ["k"], tolerances={"x": -1.0}, exact=["m", "label"])
    with pytest.raises(ValueError, match="max_changed of 'm'"):
        check_rows(_live(), STORED, ["k"], tolerances={"x": 1.0}, max_changed={"m": True}, exact=["label"])


def test_missing_text_on_both_sides_is_equal_and_on_one_side_is_a_change():
    stored = STORED.assign(note=[None, "x", None, "y"])
    out = check_rows(stored.iloc[:3], stored, ["k"], tolerances={"x": 0.0}, exact=["m", "label", "note"])
    assert out.set_index("column").loc["note", "rows changed"] == 0
    with pytest.raises(RowsDisagree, match="note"):
        check_rows(stored.iloc[:3].assign(note=["z", "x", None]), stored, ["k"], tolerances={"x": 0.0},
                   exact=["m", "label", "note"])
