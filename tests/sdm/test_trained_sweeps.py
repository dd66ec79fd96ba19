"""Tests of the trained_recall sweep (assocmem.sdm.trained_sweeps)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from assocmem.sdm.trained_sweeps import (TRAINED_PRESETS, TrainedSweepConfig, TrainedVariant,
                                         trained_point, trained_points)
from assocmem.sweeps import get_sweep

TINY = TrainedSweepConfig(
    variants=(TrainedVariant("qknorm", curve=True), TrainedVariant("ln", qk="layernorm"),
              TrainedVariant("dot", qk="none", noises=(0.1, 0.3))),
    replicates=(0, 1), n=16, m=4, vocab=4, steps=10, batch=4, m_grid=(2, 4, 8),
    eval_queries=20, probe_queries=10)


def test_the_sweep_is_registered_with_its_presets():
    sweep = get_sweep("trained_recall")
    assert set(TRAINED_PRESETS) == {"quick", "cpu", "paper"}
    assert sweep.config("cpu") is TRAINED_PRESETS["cpu"]
    assert len(trained_points(TRAINED_PRESETS["cpu"])) == 21


def test_points_cover_every_variant_noise_and_replicate():
    pts = trained_points(TINY)
    assert len(pts) == 2 * (1 + 1 + 2)
    assert {"variant": "dot", "noise": 0.3, "replicate": 1} in pts


def test_a_curve_point_has_a_row_per_m_and_the_others_one_row():
    rows = trained_point(TINY, {"variant": "qknorm", "noise": 0.2, "replicate": 0}, "cpu")
    assert [r["m"] for r in rows] == [2, 4, 8]
    assert all(r["queries"] == 20 and 0 <= r["accuracy"] <= 1 for r in rows)
    assert rows[0]["beta"] == rows[2]["beta"] and np.isfinite(rows[0]["beta"])
    # QK-norm: the slope on the projected cosine is the learned beta
    assert abs(rows[0]["fitted_beta_proj"] - rows[0]["beta"]) < 1e-9
    assert np.isnan(rows[0]["sphere_cv_q"])
    ln = trained_point(TINY, {"variant": "ln", "noise": 0.2, "replicate": 1}, "cpu")
    assert len(ln) == 1 and ln[0]["m"] == 4 and np.isfinite(ln[0]["sphere_cv_q"])
    dot = trained_point(TINY, {"variant": "dot", "noise": 0.1, "replicate": 0}, "cpu")
    assert np.isnan(dot[0]["beta"]) and np.isfinite(dot[0]["max_input"])


def test_a_point_is_deterministic():
    p = {"variant": "qknorm", "noise": 0.2, "replicate": 1}
    a, b = pd.DataFrame(trained_point(TINY, p, "cpu")), pd.DataFrame(trained_point(TINY, p, "cpu"))
    assert a.equals(b)  # NaN in the same places counts as equal


@pytest.mark.parametrize("kwargs, match", [
    (dict(variants=()), "variants need distinct labels"),
    (dict(variants=(TrainedVariant("a"), TrainedVariant("a"))), "variants need distinct labels"),
    (dict(replicates=()), "replicates must not be empty"),
    (dict(m_grid=(0,)), "m_grid entry must be >= 1"),
])
def test_bad_configs_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(TINY, **kwargs)


# The rerun rules (chapter 37's live rerun)


def test_the_rerun_rules_accept_a_stored_replicate_and_refuse_a_shifted_one():
    from assocmem.sdm.trained_sweeps import agreement_rules
    from assocmem.sweeps import RowsDisagree, check_spread, load_results

    stored = load_results("trained_recall", "quick")
    rules = agreement_rules(TRAINED_PRESETS["quick"])
    assert rules["training"] == "replicate" and "replicate" not in rules["keys"]
    assert rules["columns"]["accuracy"] == pytest.approx(1 / 300)
    replicate0 = stored[stored.replicate == 0].drop(columns="replicate")
    out = check_spread(replicate0, stored, **rules)  # one of the stored trainings: inside
    assert (out["rows outside"] == 0).all()
    shifted = replicate0.assign(pearson=replicate0.pearson - 0.05)  # far beyond its spread
    with pytest.raises(RowsDisagree, match="pearson"):
        check_spread(shifted, stored, **rules)
    with pytest.raises(RowsDisagree, match="n of"):  # a setting must be equal
        check_spread(replicate0.assign(n=32), stored, **rules)


def test_the_rerun_rules_need_the_sweeps_config():
    from assocmem.sdm.trained_sweeps import agreement_rules

    with pytest.raises(TypeError, match="TrainedSweepConfig"):
        agreement_rules("quick")
