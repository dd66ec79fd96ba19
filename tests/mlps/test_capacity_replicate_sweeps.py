"""The capacity_more sweep: replicate 0 is the capacity sweep's own fact set, others are fresh."""

import pytest
import torch

from assocmem.mlps import capacity_replicate_sweeps as R
from assocmem.mlps import capacity_sweeps as CS
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import get_sweep


def test_replicate_zero_is_the_base_fact_set_and_weights_seed():
    cfg = R.REPLICATE_PRESETS["cpu"]
    base = CS.CAPACITY_PRESETS["cpu"]
    for geometry in CS.GEOMETRIES:
        a = R.replicate_fact_set(cfg, 16, 8, geometry, 0)
        b = CS.capacity_fact_set(base, 16, 8, geometry)
        assert torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)
    point = {"method": "gd", "geometry": "isotropic", "d": 64, "alpha": 1 / 16, "F": 256}
    assert R.weights_seed(cfg, {**point, "replicate": 0}) == point_seed(base, point)
    for t in (0, 1, 2):
        assert R.weights_seed(cfg, {**point, "replicate": 0, "training": t}) == CS.weights_seed(
            base, {**point, "training": t})
    fresh = [R.weights_seed(cfg, {**point, "replicate": 1, "training": t}) for t in (0, 1, 2)]
    assert fresh[0] == point_seed(base, {**point, "replicate": 1}) and len(set(fresh)) == 3
    with pytest.raises(ValueError, match="training"):
        R.weights_seed(cfg, {**point, "replicate": 1, "training": -1})


def test_replicates_are_fresh_fact_sets_with_the_same_spike():
    cfg = R.REPLICATE_PRESETS["quick"]
    sets = [R.replicate_fact_set(cfg, 16, 8, "isotropic", r) for r in (0, 1, 2)]
    assert not torch.equal(sets[0].keys, sets[1].keys) and not torch.equal(sets[1].keys, sets[2].keys)
    again = R.replicate_fact_set(cfg, 16, 8, "isotropic", 1)
    assert torch.equal(again.keys, sets[1].keys)  # deterministic
    spiked = R.replicate_fact_set(cfg, 16, 8, "anisotropic", 1)
    assert spiked.keys.shape == (8, 16) and not torch.equal(spiked.keys, sets[1].keys)


def test_grid_of_the_cpu_preset():
    grid = R.replicate_points(R.REPLICATE_PRESETS["cpu"])
    gd = [p for p in grid if p["method"] == "gd"]
    assert {(p["alpha"], p["replicate"]) for p in gd} == {(1 / 8, 0), (1 / 32, 1), (1 / 32, 2)}
    assert len(gd) == 3 * 6 and {p["training"] for p in gd} == {0, 1, 2}
    assert grid[: len(gd)] == gd  # the slow points first
    others = [p for p in grid if p["method"] != "gd"]
    assert {p["replicate"] for p in others} == {1, 2} and max(p["alpha"] for p in others) == 1 / 4
    assert {p["training"] for p in others} == {0}
    assert len(grid) == len({tuple(sorted(p.items())) for p in grid})


def test_a_point_runs_and_the_sweep_is_registered():
    sweep = get_sweep("capacity_more")
    cfg = sweep.config("quick")
    point = R.replicate_points(cfg)[0]
    row = R.replicate_point(cfg, point, "cpu")
    assert row["found"] and row["W"] == 3 * row["m"] * point["d"] and row["epochs"] is None


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="base must be a capacity preset"):
        R.ReplicateConfig(base="huge", dims=(16,), replicates=(1,), alphas=(1 / 32,))
    with pytest.raises(ValueError, match="replicate must be >= 1"):
        R.ReplicateConfig(base="quick", dims=(16,), replicates=(0,), alphas=(1 / 32,))
    with pytest.raises(ValueError, match="unknown method"):
        R.ReplicateConfig(base="quick", dims=(16,), replicates=(1,), alphas=(1 / 32,), methods=("sgd",))
    with pytest.raises(ValueError, match="replicate must be >= 0"):
        R.replicate_fact_set(R.REPLICATE_PRESETS["quick"], 16, 8, "isotropic", -1)


def test_gd_quarter_is_gd_alone_at_a_quarter_on_the_base_fact_set():
    cfg = R.REPLICATE_PRESETS["gd_quarter"]
    grid = R.replicate_points(cfg)
    assert [p["training"] for p in grid] == [0, 1, 2]
    assert {(p["method"], p["geometry"], p["d"], p["alpha"], p["F"], p["replicate"]) for p in grid} == {
        ("gd", "isotropic", 64, 0.25, 1024, 0)}
    assert R.base_config(cfg).gd_epochs == 10000 and cfg.record_speculative
    # the same weights as the base preset would give the point
    base = CS.CAPACITY_PRESETS["cpu"]
    assert R.weights_seed(cfg, grid[1]) == CS.weights_seed(base, {k: grid[1][k] for k in (*CS.POINT_KEYS, "training")})


def test_empty_replicates_and_methods_are_allowed_an_empty_grid_is_not():
    cfg = R.ReplicateConfig(base="quick", dims=(16,), replicates=(), alphas=(), gd_alphas=(1 / 32,), methods=())
    assert {p["method"] for p in R.replicate_points(cfg)} == {"gd"}
    with pytest.raises(ValueError, match="searches nothing"):
        R.ReplicateConfig(base="quick", dims=(16,), replicates=(), alphas=(1 / 32,))
    with pytest.raises(ValueError, match="searches nothing"):
        R.ReplicateConfig(base="quick", dims=(16,), replicates=(1,), alphas=(1 / 32,), methods=("gd",))
    with pytest.raises(ValueError, match="record_speculative"):
        R.ReplicateConfig(base="quick", dims=(16,), replicates=(1,), alphas=(1 / 32,), record_speculative=1)


def test_speculative_columns_only_when_asked_and_stored_configs_unchanged():
    from dataclasses import replace

    from assocmem.sweeps.config import config_to_json

    cfg = R.REPLICATE_PRESETS["quick"]
    assert "record_speculative" not in config_to_json(cfg)
    point = R.replicate_points(cfg)[0]
    assert "speculative" not in R.replicate_point(cfg, point, "cpu")
    on = replace(cfg, record_speculative=True)
    assert config_to_json(on)["record_speculative"] is True
    row = R.replicate_point(on, point, "cpu")
    assert row["speculative"] == 0 and row["speculative_widths"] == ""


def test_a_gd_row_records_the_speculative_widths(monkeypatch):
    from assocmem.sweeps.search import SearchResult

    res = SearchResult(m=5, accuracy=1.0, evaluations=((4, 0.9), (5, 1.0), (6, 1.0), (7, 1.0)),
                       monotone_violations=(), restarts=0, lo=1, hi=64, target=1.0,
                       speculative=((3, 0.5), (8, 1.0)))
    monkeypatch.setattr(CS, "capacity_search", lambda *a, **k: res)
    cfg = R.REPLICATE_PRESETS["gd_quarter"]
    row = R.replicate_point(cfg, R.replicate_points(cfg)[0], "cpu")
    assert (row["m"], row["n_evaluations"], row["epochs"]) == (5, 4, 10000)
    assert (row["speculative"], row["speculative_widths"]) == (2, "3;8")
