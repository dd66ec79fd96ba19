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


def _one(live, stored, **rules):
    frame = lambda v: pd.DataFrame({"k": list(range(len(v))), "x": v})  # noqa: E731
    return check_rows(frame(live), frame(stored), ["k"], **(rules or {"tolerances": {"x": 1e-9}}))


def test_the_same_infinity_on_both_sides_is_equal():
    out = _one([math.inf, -math.inf, 1.0], [math.inf, -math.inf, 1.0])
    assert out.loc[0, "max |diff|"] == 0.0 and out.loc[0, "rows changed"] == 0
    out = _one([math.inf, -math.inf], [math.inf, -math.inf], exact=["x"])
    assert out.loc[0, "rows changed"] == 0


@pytest.mark.parametrize("live, stored", [(math.inf, 5.0), (5.0, math.inf), (-math.inf, 5.0),
                                          (math.inf, -math.inf), (-math.inf, math.inf)])
def test_an_infinity_lies_within_no_finite_tolerance(live, stored):
    with pytest.raises(RowsDisagree, match=r"x: \|diff\| <= 1e\+300 broken \(1 row\(s\) changed, max \|diff\| inf: "
                                           r"1 row\(s\) with an infinity against a finite value or the opposite"):
        _one([1.0, live], [1.0, stored], tolerances={"x": 1e300})
    with pytest.raises(RowsDisagree, match="x: equal broken"):
        _one([1.0, live], [1.0, stored], exact=["x"])
    out = _one([1.0, live], [1.0, stored], max_changed={"x": 1})
    assert out.loc[0, "max |diff|"] == math.inf and out.loc[0, "rows changed"] == 1


def test_a_difference_that_overflows_is_infinite_not_zero():
    with pytest.raises(RowsDisagree, match=r"max \|diff\| inf: 1 row\(s\) with a difference that overflows float64"):
        _one([0.0, 1e308], [0.0, -1e308], tolerances={"x": 1e-9})
    out = _one([0.0, 1e308], [0.0, -1e308], max_changed={"x": 1})
    assert out.loc[0, "max |diff|"] == math.inf and out.loc[0, "rows changed"] == 1


def test_max_diff_is_the_largest_finite_difference_and_nan_on_one_side_is_infinite():
    out = _one([1.0, 2.0, math.inf, np.nan], [1.5, 2.0, math.inf, np.nan], tolerances={"x": 0.5})
    assert out.loc[0, "max |diff|"] == 0.5 and out.loc[0, "rows changed"] == 0
    with pytest.raises(RowsDisagree, match=r"max \|diff\| inf: 1 row\(s\) with NaN on one side only"):
        _one([1.0, np.nan], [1.0, math.inf])
    out = _one([1.0, np.nan], [1.0, 2.0], max_changed={"x": 1})
    assert out.loc[0, "max |diff|"] == math.inf


def test_integer_columns_are_compared_without_rounding_and_missing_integers_work():
    with pytest.raises(RowsDisagree, match=r"x: equal broken \(1 row\(s\) changed, max \|diff\| 1\)"):
        _one([2**53 + 1], [2**53], exact=["x"])
    big = np.iinfo(np.int64)
    out = _one(np.array([big.max], dtype=np.int64), np.array([big.min], dtype=np.int64), max_changed={"x": 1})
    assert out.loc[0, "max |diff|"] == 2.0**64
    nullable = pd.array([1, None], dtype="Int64")
    out = _one(nullable, nullable, exact=["x"])
    assert out.loc[0, "rows changed"] == 0
