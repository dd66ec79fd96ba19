"""The ``convergence`` sweep: grid, per-level summaries equal the full experiment's, presets."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.sdm import convergence as conv
from assocmem.sweeps import get_sweep, run_sweep
from assocmem.sdm.convergence_sweeps import (CONVERGENCE_PRESETS, ConvergenceSweepConfig,
                                                convergence_point, convergence_points)

TINY = ConvergenceSweepConfig(settings=(
    conv.ConvergenceSetting(16, 32, (3, 5), (0, 3), 12, 2, 2, r=2**16),
    conv.ConvergenceSetting(64, 40, (11,), (0, 6), 10, 1, 2, algorithms=conv.CONTINUOUS_ALGORITHMS,
                            name="digits", data="digits"),
))


def test_registered_with_the_library_presets():
    sweep = get_sweep("convergence")
    assert set(sweep.presets) == set(conv.PRESETS)
    for name, preset in conv.PRESETS.items():
        assert CONVERGENCE_PRESETS[name].settings == preset.settings


def test_grid_is_setting_by_level():
    grid = convergence_points(TINY)
    assert grid == [{"setting": "n=16", "level": 0}, {"setting": "n=16", "level": 3},
                    {"setting": "digits", "level": 0}, {"setting": "digits", "level": 6}]


def test_point_summary_equals_the_full_experiment():
    """One level at a time reproduces the rows of a run over every level (keyed streams)."""
    st = TINY.settings[0]
    full = conv.convergence_experiment(n=st.n, m=st.m, radii=st.radii, levels=st.levels,
                                       num_queries=st.num_queries, num_datasets=st.num_datasets,
                                       num_repeats=st.num_repeats, r=st.r, seed=TINY.seed,
                                       dtype=getattr(torch, TINY.dtype), show_progress=False)
    rows = pd.DataFrame(convergence_point(TINY, {"setting": "n=16", "level": 3}, torch.device("cpu")))
    assert len(rows) == len(conv.ALGORITHMS) * len(st.radii)
    sub = full[full["level"] == 3]
    # The two runs draw the same patterns and queries (keyed streams) but batch them differently
    # (one level against all levels), so the float32 reads may round differently and the
    # iteration carries the difference to the final state. A final cosine is then known to a few
    # hundred float32 units in the last place (u = 6e-8): COS_TOL. The retrieval outcome is a
    # threshold on that cosine; every final cosine of this setting lies far from the threshold
    # (checked here), so no rounding can flip an outcome and the fractions agree exactly.
    COS_TOL = 1e-5
    assert (sub["cosine"] - TINY.threshold).abs().min() > COS_TOL
    for rec in rows.to_dict("records"):
        cos = sub[(sub["algorithm"] == rec["algorithm"]) & (sub["d"] == rec["d"])]["cosine"]
        assert rec["count"] == len(cos) == st.convergences_per_level
        assert rec["mean_cosine"] == pytest.approx(cos.mean(), abs=COS_TOL)
        assert rec["retrieved"] == pytest.approx((cos > TINY.threshold).mean(), abs=1e-12)
    # the paired difference against Binary_SDM is what agreement() reports
    agree = conv.agreement(sub, reference="Binary_SDM")
    for rec in agree.to_dict("records"):
        row = rows[(rows["algorithm"] == rec["algorithm"]) & (rows["d"] == rec["d"])].iloc[0]
        assert row["diff_Binary_SDM"] == pytest.approx(rec["mean_diff"], abs=2 * COS_TOL)
        assert row["agree_Binary_SDM"] == pytest.approx(rec["outcome_agreement"], abs=1e-12)
    own = rows[rows["algorithm"] == "Binary_SDM"]
    assert own["diff_Binary_SDM"].isna().all()


def test_digits_point_has_no_binary_reference():
    rows = pd.DataFrame(convergence_point(TINY, {"setting": "digits", "level": 0}, torch.device("cpu")))
    assert set(rows["algorithm"]) == set(conv.CONTINUOUS_ALGORITHMS)
    assert rows["diff_Binary_SDM"].isna().all()
    cont = rows[rows["algorithm"] == "Cont_SDM_CFit_Attention"].iloc[0]
    assert math.isfinite(cont["diff_Cont_SDM"])
    # zero perturbation: a stored image read from itself comes back (all five rules)
    assert (rows["mean_cosine"] > 0.9).all()


def test_run_sweep_in_memory(tmp_path):
    run = run_sweep("convergence", "quick", device="cpu", persist=False, results_dir=tmp_path)
    frame = run.frame
    assert set(frame["setting"]) == {"n=64", "digits"}
    assert np.all((frame["mean_cosine"] >= -1) & (frame["mean_cosine"] <= 1 + 1e-9))


@pytest.mark.parametrize("bad", [dict(dtype="float16"), dict(references=("nope",))])
def test_bad_config(bad):
    with pytest.raises(ValueError):
        ConvergenceSweepConfig(settings=TINY.settings, **bad)


def test_duplicate_labels_rejected():
    with pytest.raises(ValueError, match="distinct"):
        ConvergenceSweepConfig(settings=(TINY.settings[0], TINY.settings[0]))


def test_unknown_data_source():
    with pytest.raises(ValueError, match="data"):
        conv.ConvergenceSetting(16, 32, (3,), (0,), 4, 1, 1, data="cifar")


def _tiny_frame():
    rows = []
    for k in (0, 3):
        for r in convergence_point(TINY, {"setting": "n=16", "level": k}, torch.device("cpu")):
            rows.append({"setting": "n=16", "level": k, **r})
    return pd.DataFrame(rows)


def test_pair_gaps_and_worst_gaps():
    from assocmem.sdm.convergence_sweeps import C5_PAIRS, pair_gaps, worst_gaps
    frame = _tiny_frame()
    gaps = pair_gaps(frame)
    assert set(gaps["algorithm"]) == {a for a, _ in C5_PAIRS}
    assert len(gaps) == len(C5_PAIRS) * 2 * 2  # pairs x radii x levels
    assert (gaps["ci_low"] <= gaps["gap"]).all() and (gaps["gap"] <= gaps["ci_high"]).all()
    one = gaps.iloc[0]
    src = frame[(frame["algorithm"] == one["algorithm"]) & (frame["d"] == one["d"]) & (frame["level"] == one["level"])]
    assert one["gap"] == src[f"diff_{one['reference']}"].iloc[0]
    worst = worst_gaps(gaps, tolerance=0.05)
    assert len(worst) == len(C5_PAIRS) * 2
    assert (worst["close"] == (worst["levels_outside"] == 0)).all()
    assert (worst["max_abs_gap"] >= 0).all()
    with pytest.raises(ValueError, match="tolerance"):
        worst_gaps(gaps, 0.0)
    with pytest.raises(ValueError, match="comparison"):
        pair_gaps(frame, pairs=[("Cont_SDM", "Cont_SDM_NeuronLimit")])


def test_config_takes_one_rule_by_name():
    cfg = ConvergenceSweepConfig(settings=TINY.settings, algorithms="Binary_SDM", references="Cont_SDM")
    assert cfg.algorithms == ("Binary_SDM",) and cfg.references == ("Cont_SDM",)
    with pytest.raises(ValueError, match="unknown algorithm 'Binary_SDMX'"):
        ConvergenceSweepConfig(settings=TINY.settings, algorithms="Binary_SDMX")


def test_docstrings_cite_public_sources_only():
    import inspect

    from assocmem.sdm import convergence_sweeps

    src = inspect.getsource(convergence_sweeps)
    assert "shared/REFERENCE" not in src and "TrentBrick/attention-approximates-sdm" in src
