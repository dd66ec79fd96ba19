"""The ``memory_table`` sweep: its grid, one point, the presets and their bad settings."""

import dataclasses

import pytest

from assocmem.compare import table_sweeps as T
from assocmem.compare.adapters import MEMORIES
from assocmem.sweeps import get_sweep


def test_registered_with_presets():
    sweep = get_sweep("memory_table")
    assert set(sweep.presets) >= {"quick", "cpu", "paper"}
    assert "mlp_gd" not in T.TABLE_PRESETS["quick"].memories
    assert set(T.TABLE_PRESETS["cpu"].memories) == set(MEMORIES)


def test_grid_has_one_point_per_memory_size_and_geometry():
    cfg = T.TABLE_PRESETS["cpu"]
    grid = T.table_points(cfg)
    per = {m: sum(p["memory"] == m for p in grid) for m in MEMORIES}
    assert per["outer_product"] == 2 and per["mlp_whitened"] == 2 * len(cfg.mlp_widths)
    assert per["mlp_gd"] == 2 * len(cfg.gd_widths) * cfg.gd_trainings and per["binary_sdm"] == 2 * len(cfg.sdm_neurons)
    assert all(p["size"] is None for p in grid if p["memory"] == "hopfield")


def test_one_point_measures_every_column():
    cfg = dataclasses.replace(T.TABLE_PRESETS["quick"], d=8, F_max=32, time_facts=4, noise=(0.0, 0.5))
    row = T.table_point(cfg, {"memory": "least_squares", "geometry": "isotropic", "size": None, "training": 0},
                        "cpu")
    assert row["W"] == 64 and row["num_bits"] == 64 * 64 and row["F_star"] >= 8 and not row["censored"]
    assert row["F_eps"] >= 8  # exact up to d_k = 8 (seed 000 §6); e_ls(9) = 1/9 is near the 0.1 allowed
    assert row[T.noise_column(0.0)] == 1.0 and 0.0 <= row[T.noise_column(0.5)] <= 1.0
    assert row["clean_at_time_facts"] == 1.0 and row["write_s"] >= 0
    # the fixed load is d // 2 = 4 facts, within least squares' exact range: clean and eps = 0 recall all
    assert T.noise_load(cfg) == 4 and row["load_clean"] == 1.0 and row[T.noise_column(0.0, at_load=True)] == 1.0
    assert 0.0 <= row[T.noise_column(0.5, at_load=True)] <= 1.0
    cache = T.table_point(cfg, {"memory": "modern_hopfield", "geometry": "anisotropic", "size": None,
                                 "training": 0}, "cpu")
    assert cache["W"] == cache["F_star"] * 16 and cache["grows_with_pairs"]


@pytest.mark.parametrize("change, match", [
    ({"memories": ("lstm",)}, "unknown memories"),
    ({"geometries": ("cubic",)}, "unknown geometries"),
    ({"d": 1}, "d"),
    ({"F_max": 1}, "F_max"),
    ({"mlp_widths": (0,)}, "mlp_widths"),
    ({"time_facts": 10**6}, "exceeds F_max"),
    ({"read_error_eps": -1.0}, "read_error_eps"),
    ({"noise": (-0.1,)}, "noise"),
    ({"spike_beta": -2.0}, "spike_beta"),
    ({"seed": 1.5}, "seed"),
    ({"noise_load": 1}, "noise_load"),
    ({"noise_load": 2.5}, "noise_load"),
    ({"noise_load": 10**6}, "noise_load = 1000000 exceeds F_max"),
])
def test_bad_settings(change, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(T.TABLE_PRESETS["quick"], **change)


def test_noise_column_names():
    assert T.noise_column(0.1) == "noise_0.1" and T.noise_column(1) == "noise_1"
    assert T.noise_column(0.5, at_load=True) == "load_noise_0.5"
    assert T.noise_load(T.TABLE_PRESETS["cpu"]) == 16 and T.noise_load(T.TABLE_PRESETS["quick"]) == 8


def test_sdm_neurons_sit_just_below_the_budgets():
    for d in (16, 32, 64):
        for k, r in enumerate(T.sdm_neurons(d, 4)):
            W = r * (2 * d + 1)
            assert W <= (2 * d) ** 2 * 4**k < (r + 4**k) * (2 * d + 1)
    with pytest.raises(ValueError, match="count"):
        T.sdm_neurons(8, 0)


def test_gd_points_carry_their_trainings():
    cfg = T.TABLE_PRESETS["cpu"]
    grid = T.table_points(cfg)
    gd = [p for p in grid if p["memory"] == "mlp_gd"]
    assert cfg.gd_trainings == 3 and sorted({p["training"] for p in gd}) == [0, 1, 2]
    assert all(p["training"] == 0 for p in grid if p["memory"] != "mlp_gd")
    with pytest.raises(ValueError, match="gd_trainings"):
        dataclasses.replace(cfg, gd_trainings=0)


def _frame(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["memory", "geometry", "size", "training", "F_star"])


def test_median_training_keeps_one_trainings_whole_row():
    f = _frame([("outer_product", "isotropic", None, 0, 30),
                ("mlp_gd", "isotropic", 4, 0, 27), ("mlp_gd", "isotropic", 4, 1, 20),
                ("mlp_gd", "isotropic", 4, 2, 31), ("mlp_gd", "isotropic", 8, 0, 66),
                ("mlp_gd", "isotropic", 8, 1, 66), ("mlp_gd", "isotropic", 8, 2, 60)])
    med = T.median_training(f)
    assert list(med.memory) == ["outer_product", "mlp_gd", "mlp_gd"]
    assert med.F_star.tolist() == [30, 27, 66] and med.training.tolist() == [0, 0, 0]
    views = T.training_views(f)
    assert sorted(views) == [0, 1, 2] and views[1].F_star.tolist() == [30, 20, 66]
    assert "training" not in views[0] and len(views[2]) == 3
    with pytest.raises(ValueError, match="trainings"):
        T.training_views(f.iloc[:-1])
    with pytest.raises(ValueError, match="missing columns"):
        T.median_training(f.drop(columns="training"))


def test_a_committed_gd_point_reruns_within_the_spread_of_its_trainings():
    """One committed cpu GD point (the fastest, about 20 s), retrained here: on another CPU or
    kernel configuration it is another training, so it is checked against the spread of the
    three stored trainings (check_spread), never against one of them."""
    from assocmem.sweeps import RowsDisagree, check_spread, load_results

    cfg = T.TABLE_PRESETS["cpu"]
    stored = load_results("memory_table", "cpu")
    rules = T.gd_agreement_rules(cfg)
    point = {"memory": "mlp_gd", "geometry": "anisotropic", "size": 4, "training": 0}
    row = {**point, **T.table_point(cfg, point, "cpu"), "seed": 0, "wall_time_s": 0.0}
    import pandas as pd

    live = pd.DataFrame([row]).drop(columns="training")
    gd = stored[stored.memory == "mlp_gd"]
    out = check_spread(live, gd, **rules, what="a retrained GD point")
    assert (out["trainings"] >= 3).all() and (out["rows outside"] == 0).all()
    with pytest.raises(RowsDisagree, match="F_star"):
        # three trainings of 23 to 31 facts allow about 47 either way (t with 2 df): 100 is out
        check_spread(live.assign(F_star=live.F_star + 100), gd, **rules)
