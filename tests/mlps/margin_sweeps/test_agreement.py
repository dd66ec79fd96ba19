"""The live-against-stored check of the margin sweeps (assocmem.mlps.margin_sweeps.agreement): one
rule per result column, the overlap comparison, and a live run against a stored one.
"""

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.mlps import margin_sweeps as MS
from assocmem.sweeps import RowsDisagree, load_results, run_sweep


def test_agreement_rules_state_one_rule_per_column():
    stored = pd.DataFrame({"F": [1, 2], "rep": [0, 0], "gamma_min": [0.5, -3.0], "e_v": [190.0, 2.0],
                           "zero": [0.0, 0.0], "frac_positive": [1.0, 0.5], "kernel": ["exact", "exact"],
                           "bits_b6": [25, 26], "margin_b6_ratio": [1.0, 1.0], "wall_time_s": [1.0, 2.0]})
    rules = MS.agreement_rules(stored, [c for c in stored.columns if c not in ("F", "rep")])
    # a rounding tolerance relative to the power of ten at or above the column's largest |value|
    assert rules["tolerances"] == {"gamma_min": 1e-9 * 10, "e_v": 1e-9 * 1000, "zero": 1e-9,
                                   "margin_b6_ratio": MS.COLUMN_TOL["margin_b6_ratio"]}
    assert rules["max_changed"] == {"frac_positive": MS.MAX_CHANGED_ROWS}
    assert rules["exact"] == ["kernel", "bits_b6"]


def test_compare_overlap():
    stored = pd.DataFrame({"F": [1, 2, 3], "rep": [0, 0, 0], "gamma_min": [0.1, 0.2, 0.3], "kernel": ["a", "b", "c"],
                           "lipschitz": [1.0, np.nan, 2.0], "frac_positive": [1.0, 1.0, 0.5],
                           "wall_time_s": [1.0, 2.0, 3.0]})
    live = stored.iloc[[0, 2]].assign(wall_time_s=9.0)
    out = MS.compare_overlap(live, stored, ["F", "rep"])
    assert list(out["column"]) == ["gamma_min", "lipschitz", "frac_positive", "kernel"]
    assert (out["rows"] == 2).all() and (out["rows changed"] == 0).all()
    assert list(out["rule"]) == ["|diff| <= 1e-09", "|diff| <= 1e-08", "rows changed <= 1", "equal"]
    assert list(out["kind"]) == ["|diff| <= 1e-09 x scale"] * 2 + ["at most 1 row changed", "equal"]
    # float64 rounding passes, a difference beyond the column's tolerance does not
    MS.compare_overlap(live.assign(gamma_min=live.gamma_min + 1e-13), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="gamma_min"):
        MS.compare_overlap(live.assign(gamma_min=live.gamma_min + 1e-6), stored, ["F", "rep"])
    # one threshold outcome may flip, two may not
    MS.compare_overlap(live.assign(frac_positive=[0.5, 0.5]), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="frac_positive"):
        MS.compare_overlap(live.assign(frac_positive=[0.5, 1.0]), stored, ["F", "rep"])
    stray = pd.DataFrame({"F": [9], "rep": [0], "gamma_min": [0.0], "kernel": ["z"], "lipschitz": [0.0],
                          "frac_positive": [1.0], "wall_time_s": [0.0]})
    with pytest.raises(RowsDisagree, match="no stored partner"):
        MS.compare_overlap(pd.concat([live, stray]), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="kernel"):
        MS.compare_overlap(live.assign(kernel="q"), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="lipschitz"):
        MS.compare_overlap(live.assign(lipschitz=np.nan), stored, ["F", "rep"])


def test_live_check_against_a_stored_run(tmp_path, monkeypatch):
    run_sweep("margin_spike_keys", "quick", device="cpu", results_dir=tmp_path, progress=False)
    monkeypatch.setitem(MS.STORED_PRESET, "margin_spike_keys", "quick")
    out = MS.live_check(["margin_spike_keys"], results_dir=tmp_path)
    assert set(out["sweep"]) == {"margin_spike_keys"} and set(out["stored"]) == {"quick"}
    assert (out["rows"] == 10).all() and (out["rows changed"] == 0).all()
    # the same machine recomputes the stored rows to rounding: the load-aware thread rule may
    # pick another thread count on a busy machine, and a sum in another order moves the last
    # digits of these order-one float64 columns (1e-12 is far above that, far below a change)
    assert (out.loc[out["rule"].str.startswith("|diff|"), "max |diff|"] <= 1e-12).all()
    frame = load_results("margin_spike_keys", "quick", tmp_path)
    results = [c for c in frame.columns if c not in ("beta", "rep", "wall_time_s")]
    assert sorted(out["column"]) == sorted(results)  # every result column has a rule
    threads = torch.get_num_threads()
    MS.live_check(["margin_spike_keys"], results_dir=tmp_path, num_threads=1)
    assert torch.get_num_threads() == threads  # restored
    with pytest.raises(RowsDisagree):  # other seeds, other fact sets: the check has teeth
        MS.live_check(["margin_spike_keys"], results_dir=tmp_path, seed=7)
    with pytest.raises(ValueError, match="num_threads"):
        MS.live_check(["margin_spike_keys"], results_dir=tmp_path, num_threads=0)
