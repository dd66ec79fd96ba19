"""The readings of the Transformer sweeps' rows (assocmem.mlps.transformer_summaries): the
predictors of accuracy, the lag and its test against the spread between trainings, the noise
summary, and bad input."""

import math

import numpy as np
import pandas as pd
import pytest

from assocmem.mlps import transformer_summaries as TS


def test_bad_input_to_the_summaries():
    with pytest.raises(ValueError, match="lack the column"):
        TS.noise_summary(pd.DataFrame({"d": [8, 8], "F": [4, 4], "J": [2, 4], "noise_ceiling": [0.1, 0.0]}))
    with pytest.raises(ValueError, match="lack the column"):
        TS.usability_summary(pd.DataFrame({"method": ["a"], "transformer_accuracy": [1.0], "usable_fraction": [1.0]}))


def test_usability_summary_scores_the_margin_test_beside_both_baselines():
    frame = pd.DataFrame({"method": ["a"] * 3 + ["b"] * 2, "transformer_accuracy": [0.2, 0.6, 1.0, 0.5, 0.5],
                          "usable_fraction": [0.3, 0.6, 0.9, 0.4, 0.6], "key_agreement": [1.0, 0.9, 0.8, 1.0, 1.0],
                          "mlp_accuracy": [0.2, 0.8, 1.0, 0.5, 0.5], "identity_accuracy_heldout": [1.0, 0.75, 0.9, 1, 1],
                          "baseline_key_agreement": [0.5, 0.5, 0.5, 1.0, 1.0]})
    s = TS.usability_summary(frame).set_index(["method", "predictor"])
    assert list(s.loc["a"].index) == list(TS.PREDICTORS)
    u = s.loc[("a", "usable_fraction")]
    assert u["mad"] == pytest.approx(0.2 / 3) and u["max_abs"] == pytest.approx(0.1)
    assert u["r2"] == pytest.approx(1 - 0.02 / 0.32)
    assert u["key_agreement"] == pytest.approx(0.9) and u["n"] == 3
    mlp = s.loc[("a", "mlp_accuracy")]
    assert mlp["mad"] == pytest.approx(0.2 / 3) and mlp["r2"] == pytest.approx(1 - 0.04 / 0.32)
    assert mlp["key_agreement"] == pytest.approx(0.5)
    prod = s.loc[("a", "mlp_x_identity")]  # predictions 0.2, 0.6, 0.9: exact, exact, 0.1 off
    assert prod["mad"] == pytest.approx(0.1 / 3) and prod["r2"] == pytest.approx(1 - 0.01 / 0.32)
    assert math.isnan(s.loc[("b", "usable_fraction"), "r2"])  # accuracy does not vary


def test_noise_summary_averages_seeds_and_reports_the_failure_rate():
    frame = pd.DataFrame({"d": 8, "F": 16, "J": [2, 2, 4, 4], "noise_ceiling": [0.1, 0.3, 1.4, 1.2],
                          "noise_mean": 0.01, "noise_q50": [1e-3, 3e-3, 1e-4, 3e-4], "noise_q90": 0.02,
                          "noise_q99": 0.05, "identity_accuracy": [1.0, 1.0, 0.9, 0.95]})
    s = TS.noise_summary(frame).set_index("J")
    assert list(s.index) == [2, 4] and (s["seeds"] == 2).all()
    assert s.loc[2, "noise_ceiling"] == pytest.approx(0.2) and s.loc[4, "noise_q50"] == pytest.approx(2e-4)
    assert s.loc[2, "failure_rate"] == 0 and s.loc[4, "failure_rate"] == pytest.approx(0.075)
    assert s.loc[4, "failure_rate_max"] == pytest.approx(0.1)


def test_transformer_lag_measures_the_gain_after_the_mlp_stores_every_fact():
    rows = []
    for rep, accs in enumerate(([0.5, 0.9, 0.95, 1.0], [0.5, 1.0, 1.0, 1.0])):
        for m, mlp, acc in zip((2, 4, 8, 16), (0.5, 1.0, 1.0, 1.0), accs):
            rows.append({"method": "gd_ce", "rep": rep, "m": m, "mlp_accuracy": mlp, "transformer_accuracy": acc})
    rows.append({"method": "gd_mse", "rep": 0, "m": 2, "mlp_accuracy": 0.9, "transformer_accuracy": 0.9})
    lag = TS.transformer_lag(pd.DataFrame(rows).sample(frac=1, random_state=0))
    ce = lag[lag.method == "gd_ce"].set_index("rep")
    assert ce.m_mlp.tolist() == [4, 4] and ce.lag.tolist() == pytest.approx([0.1, 0.0])
    assert lag[lag.method == "gd_mse"].lag.isna().all()  # never stores every fact
    with pytest.raises(ValueError, match="column"):
        TS.transformer_lag(pd.DataFrame(rows), column="acc_inj_0.1")


def test_lag_test_against_the_spread_between_trainings():
    from scipy import stats

    t = TS.lag_test([0.05, 0.06, 0.04], resolution=1e-3)
    assert t["lags"] and t["n"] == 3 and t["mean"] == pytest.approx(0.05)
    assert t["threshold"] == pytest.approx(stats.t.ppf(0.95, 2) * 0.01 / np.sqrt(3))
    assert not TS.lag_test([0.0, 0.0, 0.0], resolution=1e-3)["lags"]  # no lag: below one sequence
    assert not TS.lag_test([0.1, -0.05, 0.0], resolution=1e-3)["lags"]  # a spread larger than the mean
    assert TS.lag_test([0.0, 0.0, 0.0], resolution=0.0)["threshold"] == 0.0
    for bad in ([0.1], [0.1, float("nan")]):
        with pytest.raises(ValueError, match="lags"):
            TS.lag_test(bad, resolution=0.0)
    with pytest.raises(ValueError, match="level"):
        TS.lag_test([0.1, 0.2], resolution=0.0, level=1.0)
