"""Fig. 13 on deduplicated language-model facts (assocmem.mlps.lm_dedup_sweeps): the draws'
limits, the fact sets shared with lm_capacity, bad configs, and the committed cpu results against
their preset (the near-twin statistics: tests/mlps/lm_embeddings/test_twins.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from assocmem.mlps import lm_dedup_sweeps as D
from assocmem.mlps import lm_embedding_sweeps as S
from assocmem.mlps.lm_embeddings import EmbeddingPairs, save_pairs
from assocmem.sweeps import RowsDisagree, check_spread, config_to_json, get_sweep, load_results, point_seed


def _twinned_pairs(path, n=400, d=16, twins=100, seed=0):
    """Random pairs in which the first ``twins`` rows have an exact copy (key and value) with a
    tiny perturbation: cosine within 1e-8 of 1."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.randn(n, d, generator=g, dtype=torch.float64)
    x[n - twins:] = x[:twins] + 1e-5 * torch.randn(twins, d, generator=g, dtype=torch.float64)
    y[n - twins:] = y[:twins] + 1e-5 * torch.randn(twins, d, generator=g, dtype=torch.float64)
    save_pairs(EmbeddingPairs(x, y, "planted twins"), path)
    return str(path)


def test_registered_with_its_presets():
    assert {"quick", "cpu"} <= set(get_sweep("lm_dedup").presets)
    cpu, cap = D.LM_DEDUP_PRESETS["cpu"], S.LM_CAPACITY_PRESETS["cpu"]
    # the cpu preset draws lm_capacity's cpu fact sets: same source, grid, limits and seed
    for name in ("pairs", "Fs", "reps", "max_cosine", "target", "lo", "hi", "verify", "trainings", "seed"):
        assert getattr(cpu, name) == getattr(cap, name), name
    assert cpu.search_draws == ("deduplicated",) and cpu.twin_gap == 1e-4


def test_draw_limits():
    cfg = D.LM_DEDUP_PRESETS["cpu"]
    assert D.draw_limit(cfg, "uniform") is None
    assert D.draw_limit(cfg, "separated") == cfg.max_cosine
    assert D.draw_limit(cfg, "deduplicated") == pytest.approx(1 - 1e-4)
    with pytest.raises(ValueError, match="draw"):
        D.draw_limit(cfg, "other")


@pytest.mark.parametrize("kwargs, match", [
    ({"draws": ("uniform", "uniform")}, "draws"),
    ({"draws": ("spread",)}, "draws"),
    ({"draws": ()}, "draws"),
    ({"search_draws": ("separated",), "draws": ("uniform",)}, "among draws"),
    ({"twin_gap": 0}, "twin_gap"),
    ({"twin_gap": 1.0}, "twin_gap"),
    ({"max_cosine": 1.0}, "max_cosine"),
    ({"target": 0.0}, "target"),
    ({"hi": 0}, "hi"),
    ({"Fs": (8, 4)}, "increasing"),
    ({"pairs": "x.npz", "trainings": 2}, "must be 1 for pairs read from a file"),
])
def test_config_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(D.LM_DEDUP_PRESETS["quick"], **kwargs)


def test_rows_on_planted_twins(tmp_path):
    """The uniform draw finds the planted twins, the deduplicated one none; a searched row is the
    row lm_capacity computes for the same point (same fact set, same search), and an unsearched
    row has empty search columns."""
    path = _twinned_pairs(tmp_path / "twins.npz")
    cfg = D.LMDedupConfig(pairs=path, Fs=(32, 96), search_draws=("separated", "deduplicated"), hi=4096)
    rows = {(p["draw"], p["F"]): D.dedup_point(cfg, p, "cpu") for p in D.dedup_points(cfg)}
    # 200 of 400 rows are twins: a uniform draw of 96 keeps both halves of several pairs
    assert rows["uniform", 96]["key_twin_share"] > 0.05
    assert rows["uniform", 96]["m"] is None and rows["uniform", 96]["searched"] is False
    for F in cfg.Fs:
        assert rows["deduplicated", F]["key_twin_share"] == 0.0
        assert rows["deduplicated", F]["value_twin_share"] == 0.0
        assert rows["deduplicated", F]["found"]
    cap = S.LMCapacityConfig(pairs=path, Fs=cfg.Fs, hi=4096)
    for F in cfg.Fs:
        point = {"training": 0, "draw": "separated", "F": F, "rep": 0}
        assert point_seed(cap, {"draw": "separated", "F": F, "rep": 0}) == \
            point_seed(cfg, {"draw": "separated", "F": F, "rep": 0})
        theirs = S.capacity_point(cap, point, "cpu")
        ours = rows["separated", F]
        for name in ("m", "W", "found", "accuracy", "best_accuracy", "n_evaluations"):
            assert ours[name] == theirs[name], name


def test_committed_cpu_results_match_the_preset():
    cfg = D.LM_DEDUP_PRESETS["cpu"]
    frame = load_results("lm_dedup", "cpu", config=config_to_json(cfg))
    grid = D.dedup_points(cfg)
    assert len(frame) == len(grid)
    for p in grid:
        row = frame[(frame.training == p["training"]) & (frame.draw == p["draw"]) & (frame.F == p["F"])
                    & (frame.rep == p["rep"])]
        assert len(row) == 1 and int(row.seed.iloc[0]) == point_seed(cfg, p)
        assert bool(row.searched.iloc[0]) == (p["draw"] in cfg.search_draws)
    dedup = frame[frame.draw == "deduplicated"]
    assert np.all(dedup.key_twin_share == 0.0) and np.all(dedup.value_twin_share == 0.0)


def test_committed_quick_results_match_the_preset():
    cfg = D.LM_DEDUP_PRESETS["quick"]
    frame = load_results("lm_dedup", "quick", config=config_to_json(cfg))
    assert cfg.trainings >= 3 and len(frame) == len(D.dedup_points(cfg))
    assert set(frame.training) == set(range(cfg.trainings))


def test_agreement_rules_pass_a_stored_training_and_fail_a_moved_one():
    stored = load_results("lm_dedup", "quick")
    rules = D.agreement_rules(stored)
    assert rules["keys"] == ["draw", "F", "rep"] and {"searched", "max_cosine"} <= set(rules["exact"])
    assert rules["columns"]["key_twin_share"] == pytest.approx(1 / stored.F.min())
    assert rules["columns"]["m"] == 1.0  # lm_capacity's search step
    live = stored[stored.training == 0].drop(columns="training").reset_index(drop=True)
    out = check_spread(live, stored, **rules)
    assert (out["rows outside"] == 0).all() and set(out.column) == set(rules["columns"])
    with pytest.raises(RowsDisagree, match="key_nn_median"):
        check_spread(live.assign(key_nn_median=live.key_nn_median - 0.5), stored, **rules)
    with pytest.raises(RowsDisagree, match="searched"):
        check_spread(live.assign(searched=~live.searched.astype(bool)), stored, **rules)


def test_agreement_rules_refuse_bad_input():
    stored = load_results("lm_dedup", "quick")
    with pytest.raises(ValueError, match="key_twin_share"):
        D.agreement_rules(stored.drop(columns="key_twin_share"))
    with pytest.raises(TypeError, match="DataFrame"):
        D.agreement_rules(stored.to_dict("records"))
