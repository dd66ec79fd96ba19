"""assocmem.sweeps.spread: a live rerun of a trained result against the spread of stored trainings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assocmem.sweeps import RowsDisagree, check_spread, prediction_half_width, training_spread

# two points, three trainings each: acc spreads at point a, agrees at point b
STORED = pd.DataFrame({
    "p": ["a", "a", "a", "b", "b", "b"],
    "training": [0, 1, 2, 0, 1, 2],
    "acc": [0.80, 0.84, 0.82, 1.0, 1.0, 1.0],
    "loss": [0.5, 0.6, 0.7, 0.1, 0.1, 0.1],
    "n": [10, 10, 10, 20, 20, 20],
    "seed": [1, 2, 3, 4, 5, 6],
})
RULES = {"columns": {"acc": 0.01, "loss": 0.0}, "exact": ["n"], "ignore": ["seed"]}


def _live(changes=None, stored=STORED):
    changes = changes or {}
    live = stored[stored.training == 0].copy()
    for (p, col), v in changes.items():
        live.loc[live.p == p, col] = v
    return live.drop(columns="training")


def test_prediction_half_width_is_the_t_interval():
    got = prediction_half_width(3, 0.02, 0.01)
    assert math.isclose(got, stats.t.ppf(0.995, 2) * 0.02 * math.sqrt(4 / 3), rel_tol=1e-12)
    assert prediction_half_width(3, 0.0) == 0.0
    pooled = prediction_half_width(3, 0.02, 0.01, df=40)
    assert math.isclose(pooled, stats.t.ppf(0.995, 40) * 0.02 * math.sqrt(4 / 3), rel_tol=1e-12)
    with pytest.raises(ValueError, match="df must be"):
        prediction_half_width(3, 0.1, df=0)
    with pytest.raises(ValueError, match="n must be"):
        prediction_half_width(1, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        prediction_half_width(3, 0.1, 1.0)


def test_the_rule_misses_a_fresh_training_of_every_point_with_probability_below_alpha():
    """check_spread's rule, vectorised: 20 points of 3 normal trainings each, a fresh one of each."""
    rng = np.random.default_rng(0)
    reps, points, n, alpha = 20_000, 20, 3, 0.05
    x = rng.standard_normal((reps, points, n + 1))
    s = x[..., :n].std(-1, ddof=1)
    pooled = np.sqrt((s**2).mean(-1, keepdims=True))
    a = alpha / points  # Bonferroni
    own = stats.t.ppf(1 - a / 2, n - 1) * s
    floor = stats.t.ppf(1 - a / 2, points * (n - 1)) * pooled
    half = np.maximum(own, floor) * math.sqrt(1 + 1 / n)
    miss = np.mean((np.abs(x[..., n] - x[..., :n].mean(-1)) > half).any(-1))
    # conservative: Bonferroni, and two intervals joined (0.002 here; standard error 0.0003)
    assert 0.0005 < miss < alpha / 5


def test_a_point_that_spreads_more_than_the_others_keeps_its_own_degrees_of_freedom():
    # point a spreads (sd 0.02), point b agrees: a's own sd is quantiled with n - 1 = 2 df, not
    # the pooled 4 (which would be too narrow for it); the points are checked with 2 values
    own = prediction_half_width(3, 0.02, 0.01 / 2) + 0.01
    assert own > prediction_half_width(3, 0.02, 0.01 / 2, df=4) + 0.01
    check_spread(_live({("a", "acc"): 0.82 + own * 0.99}), STORED, ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="acc of p=a"):
        check_spread(_live({("a", "acc"): 0.82 + own * 1.01}), STORED, ["p"], **RULES)


def test_points_that_repeat_one_trainings_values_do_not_narrow_the_interval():
    # two keys that carry the same measurement (one model's statistics under two draws) pool to
    # 4 df from 2 trainings' worth of information; the own interval (2 df) still holds
    twin = STORED.assign(acc=np.tile([0.80, 0.84, 0.82], 2))
    own = prediction_half_width(3, 0.02, 0.01 / 2) + 0.01
    check_spread(_live({("a", "acc"): 0.82 + own * 0.99}, twin), twin, ["p"], **RULES)


def test_the_interval_misses_a_fresh_normal_draw_with_probability_alpha():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200_000, 4))
    half = np.array([prediction_half_width(3, s, 0.05) for s in x[:, :3].std(1, ddof=1)])
    miss = np.mean(np.abs(x[:, 3] - x[:, :3].mean(1)) > half)
    assert abs(miss - 0.05) < 0.003  # 200,000 draws: standard error 0.0005


# acc pooled over the two points: (2 * 0.02**2 + 0) / 4 degrees of freedom
ACC_POOLED = math.sqrt(2 * 0.02**2 / 4)


def test_a_rerun_inside_the_spread_passes_and_reports_the_interval():
    out = check_spread(_live({("a", "acc"): 0.86}), STORED, ["p"], **RULES)
    row = out.set_index("column").loc["acc"]
    assert row["rows outside"] == 0 and row["trainings"] == 3
    assert math.isclose(row["max |live - mean|"], 0.04, rel_tol=1e-9)
    assert math.isclose(row["pooled sd"], ACC_POOLED, rel_tol=1e-9)
    # the smallest half-width is point b's: the pooled floor, Bonferroni over 2 values, 4 df
    floor = prediction_half_width(3, ACC_POOLED, 0.01 / 2, df=4) + 0.01
    assert math.isclose(row["smallest half-width"], floor, rel_tol=1e-9)


def test_a_rerun_outside_the_spread_raises():
    half = prediction_half_width(3, 0.02, 0.01 / 2) + 0.01  # point a's own interval
    check_spread(_live({("a", "acc"): 0.82 + half * 0.99}), STORED, ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="acc of p=a"):
        check_spread(_live({("a", "acc"): 0.82 + half * 1.01}), STORED, ["p"], **RULES)


def test_trainings_that_agree_get_the_columns_pooled_spread():
    # point b's three trainings agree exactly; a fourth may still land where point a's spread
    # says trainings land (the CI case: three trainings within 3e-5 of 1, a rerun at 0.9907)
    floor = prediction_half_width(3, ACC_POOLED, 0.01 / 2, df=4) + 0.01
    check_spread(_live({("b", "acc"): 1.0 - 0.99 * floor}), STORED, ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="acc of p=b"):
        check_spread(_live({("b", "acc"): 1.0 - 1.01 * floor}), STORED, ["p"], **RULES)


def test_bonferroni_over_the_checked_values():
    one = _live({("a", "acc"): 0.86})[lambda f: f.p == "a"]
    wide = prediction_half_width(3, 0.02, 0.01 / 2) + 0.01  # point a's own interval, 2 df
    narrow = prediction_half_width(3, 0.02, 0.01) + 0.01
    assert narrow < wide
    x = 0.82 + (narrow + wide) / 2
    check_spread(_live({("a", "acc"): x}), STORED, ["p"], **RULES)  # two values checked
    with pytest.raises(RowsDisagree, match="acc of p=a"):
        check_spread(one.assign(acc=x), STORED, ["p"], **RULES)  # one value checked


def test_a_column_every_training_agrees_on_leaves_only_the_resolution():
    stored = STORED.assign(acc=[0.8] * 3 + [1.0] * 3, loss=[0.1] * 6)
    check_spread(_live({("b", "acc"): 0.99}, stored), stored, ["p"], **RULES)  # one resolution step
    with pytest.raises(RowsDisagree, match="acc of p=b"):
        check_spread(_live({("b", "acc"): 0.98}, stored), stored, ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="loss of p=b"):
        check_spread(_live({("b", "loss"): 0.1 + 1e-9}, stored), stored, ["p"], **RULES)


def test_exact_columns_nan_and_inf():
    with pytest.raises(RowsDisagree, match="n of p=a"):
        check_spread(_live({("a", "n"): 11}), STORED, ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="loss of p=a"):
        check_spread(_live({("a", "loss"): float("nan")}), STORED, ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="loss of p=a"):
        check_spread(_live({("a", "loss"): float("inf")}), STORED, ["p"], **RULES)
    stored = STORED.assign(loss=[0.5, float("nan"), 0.7, 0.1, 0.1, 0.1])
    check_spread(_live({("a", "loss"): float("nan")}), stored, ["p"], **RULES)
    stored = STORED.assign(loss=[float("inf")] * 3 + [0.1] * 3)
    check_spread(_live({("a", "loss"): float("inf")}), stored, ["p"], **RULES)


def test_too_few_trainings_or_an_unknown_point_raise():
    with pytest.raises(RowsDisagree, match="2 stored training"):
        check_spread(_live(), STORED[STORED.training < 2], ["p"], **RULES)
    with pytest.raises(RowsDisagree, match="no stored trainings"):
        check_spread(_live().assign(p=["a", "c"]), STORED, ["p"], **RULES)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"columns": {"acc": -1.0, "loss": 0.0}}, ValueError, "resolution"),
    ({"columns": {"acc": 0.01}}, ValueError, "named by no rule"),
    ({"columns": [("acc", 0.0)]}, TypeError, "mapping"),
    ({"min_trainings": 1}, ValueError, "min_trainings"),
    ({"alpha": 0.0}, ValueError, "alpha"),
    ({"exact": ["n", "acc"]}, ValueError, "named twice"),
])
def test_bad_rules_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        check_spread(_live(), STORED, ["p"], **{**RULES, **kwargs})


def test_a_stored_point_with_a_training_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        check_spread(_live(), pd.concat([STORED, STORED.iloc[:1]]), ["p"], **RULES)


def test_training_spread_summarises_each_point():
    out = training_spread(STORED, "p", ["acc", "loss"]).set_index(["p", "column"])
    assert out.loc[("a", "acc"), "trainings"] == 3
    assert math.isclose(out.loc[("a", "acc"), "sd"], 0.02, rel_tol=1e-9)
    assert (out.loc[("b", "acc"), "min"], out.loc[("b", "acc"), "max"]) == (1.0, 1.0)


def test_leave_one_training_out_counts_what_a_fresh_training_would_fail():
    from assocmem.sweeps import leave_one_training_out

    rules = {"columns": {"acc": 0.0, "loss": 0.0}, "exact": ["n"], "ignore": ["seed"]}
    out = leave_one_training_out(STORED, ["p"], **rules).set_index("column")
    assert out.loc["acc", "values"] == 6 and out.loc["loss", "values"] == 6
    assert out.loc["acc", "outside"] == 0  # acc of b: 1.0 everywhere, inside the pooled floor
    # a fourth training far from the others is caught when it is the one left out
    far = pd.concat([STORED, STORED[STORED.training == 0].assign(training=3, acc=[9.0, 9.0],
                                                                 seed=[7, 8])])
    out = leave_one_training_out(far, ["p"], **rules).set_index("column")
    assert out.loc["acc", "outside"] >= 2 and out.loc["acc", "worst ratio"] > 1
    with pytest.raises(ValueError, match="three trainings"):
        leave_one_training_out(STORED[STORED.training < 2], ["p"], **rules)

