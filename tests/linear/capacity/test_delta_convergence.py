"""Tests for assocmem.linear.capacity.delta_convergence: repeated passes and the limit against ``S*``."""

from __future__ import annotations

import pytest

from assocmem.linear.capacity.delta_convergence import delta_convergence, delta_limit_curve
from assocmem.linear.capacity.delta_rule import delta_limit, delta_pass_map
from assocmem.linear.capacity.read_error import sample_pairs


CPU = "cpu"


def test_delta_limit_distance_is_order_beta_and_excess_order_beta_squared():
    df = delta_limit_curve([0.02, 0.01], 24, 8, trials=50, seed=15, device=CPU)
    ratio_d = df.distance.iloc[0] / df.distance.iloc[1]
    ratio_e = df.excess.iloc[0] / df.excess.iloc[1]
    assert 1.8 < ratio_d < 2.2 and 3.6 < ratio_e < 4.4
    assert (df.excess > 0).all()


def test_delta_convergence_tables():
    res = delta_convergence(12, 6, betas=(1.0, 0.2, "1/p"), passes=30, trials=20, seed=19, device=CPU)
    c = res.curve
    assert list(c.columns) == ["schedule", "passes", "error", "sem", "distance", "distance_sem"]
    assert len(c) == 3 * 30 and set(c.schedule) == {"1", "0.2", "1/p"}
    assert list(res.limit.schedule) == ["1", "0.2"]  # limits only for constant steps
    small = c[c.schedule == "0.2"]
    assert small.distance.iloc[-1] < small.distance.iloc[0]
    lim = res.limit.set_index("schedule")
    assert abs(small.distance.iloc[-1] - lim.distance["0.2"]) < 0.05
    # the first sweep with beta = 1 is the same under both schedules that start at 1
    first = c[c.passes == 1].set_index("schedule").error
    assert first["1"] == pytest.approx(first["1/p"], rel=1e-12)
    assert res.least_squares.mean == pytest.approx(1 - 6 / 12, abs=0.1)
    # n <= d_k: every schedule heads for exact recall; beta = 1 gets there
    exact = delta_convergence(4, 8, betas=(1.0,), passes=300, trials=5, seed=20, device=CPU)
    assert exact.curve.error.iloc[-1] < 1e-10 and exact.limit.distance.iloc[0] < 1e-10


def test_delta_bad_schedules():
    with pytest.raises(ValueError, match="unknown beta schedule 'cosine'"):
        delta_convergence(4, 4, betas=("cosine",), passes=1, trials=2, device=CPU)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
        delta_limit_curve([0.0], 4, 4, trials=2, device=CPU)
    keys, values = sample_pairs(3, 4, 2, trials=1, device=CPU)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
        delta_pass_map(keys, values, 2.0)
    with pytest.raises(ValueError, match=r"keys \(1, 3, 4\), values \(1, 2, 2\)"):
        delta_limit(keys, values[:, :2], 1.0)
