"""The sweeps on captured language-model activations (assocmem.mlps.lm_embedding_sweeps): presets,
grids, bad configs, the quick rows recomputed against the stored quick files, and the committed
cpu results against their presets."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
import torch

from assocmem.devices import torch_threads
from assocmem.mlps import lm_embedding_sweeps as S
from assocmem.mlps import margin_sweeps as MS
from assocmem.sweeps import RowsDisagree, check_spread, config_to_json, get_sweep, load_results, point_seed


@pytest.mark.parametrize("name", ["lm_pairs", "lm_margin", "lm_capacity"])
def test_registered_with_three_presets(name):
    assert {"quick", "cpu", "paper"} <= set(get_sweep(name).presets)


def test_paper_presets_are_the_sources_sizes():
    m, c = S.LM_MARGIN_PRESETS["paper"], S.LM_CAPACITY_PRESETS["paper"]
    assert m.ms == (1024,) and m.Fs[0] == 4 and m.Fs[-1] == 128 and m.reps == 5
    assert c.Fs == tuple(2 ** k for k in range(9, 15)) and c.target == 0.98
    assert m.pairs.endswith(".npz") and c.pairs == m.pairs


def test_grid_is_training_then_draw_major():
    cfg = S.LM_MARGIN_PRESETS["quick"]
    grid = S.margin_points(cfg)
    per_draw = len(cfg.ms) * len(cfg.Fs) * cfg.reps
    assert cfg.trainings == 3 and len(grid) == cfg.trainings * len(cfg.draws) * per_draw
    assert [p["draw"] for p in grid[:per_draw]] == ["uniform"] * per_draw
    assert [p["training"] for p in grid[:len(cfg.draws) * per_draw]] == [0] * (len(cfg.draws) * per_draw)


def test_widths_share_the_fact_set():
    """A replicate at one F draws the same facts at every width: the margins at the two widths
    of the quick preset come from the same fact set, so their geometry of the values agrees."""
    cfg = S.LM_MARGIN_PRESETS["quick"]
    stored = load_results("lm_margin", "quick", config=config_to_json(cfg))
    wide = stored.pivot_table(index=["training", "draw", "F", "rep"], columns="m", values="v_min")
    assert (wide.nunique(axis=1) == 1).all()


@pytest.mark.parametrize("kwargs, match", [
    ({"pairs": ""}, "pairs"),
    ({"pairs": "editing_lm:cpu"}, "editing_lm"),
    ({"Fs": ()}, "Fs"),
    ({"Fs": (8, 4)}, "increasing"),
    ({"Fs": (1, 4)}, "Fs"),
    ({"ms": (0,)}, "m"),
    ({"ms": ()}, "ms"),
    ({"ms": (64, 64)}, "increasing"),
    ({"ms": [64]}, "tuple"),
    ({"Fs": 8}, "tuple"),
    ({"pairs": "editing_lm::"}, "editing_lm"),
    ({"draws": ("normal",)}, "draws"),
    ({"draws": ()}, "draws"),
    ({"max_cosine": 1.0}, "max_cosine"),
    ({"trainings": 0}, "trainings"),
    ({"trainings": 4}, "at most the 3"),
    ({"pairs": "x.npz", "trainings": 2}, "must be 1 for pairs read from a file"),
])
def test_margin_config_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(S.LM_MARGIN_PRESETS["quick"], **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"target": 0.0}, "target"),
    ({"target": 1.5}, "target"),
    ({"lo": 10, "hi": 5}, "hi"),
    ({"reps": 0}, "reps"),
])
def test_capacity_config_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(S.LM_CAPACITY_PRESETS["quick"], **kwargs)


def test_sweep_pairs_reads_a_rewritten_file_again(tmp_path):
    from assocmem.mlps.lm_embeddings import EmbeddingPairs, save_pairs

    path = tmp_path / "p.npz"
    x = torch.randn(30, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    save_pairs(EmbeddingPairs(x, x, "a"), path)
    assert len(S.sweep_pairs(str(path))) == 30
    save_pairs(EmbeddingPairs(x[:10], x[:10], "b"), path)
    assert len(S.sweep_pairs(str(path))) == 10


def test_sweep_pairs_refuses_unknown_sources(tmp_path):
    with pytest.raises(ValueError, match="trains no"):
        S.sweep_pairs("editing_lm:quick:data_dependent")
    with pytest.raises(FileNotFoundError):
        S.sweep_pairs(str(tmp_path / "missing.npz"))
    with pytest.raises(ValueError, match="training must be 0"):
        S.sweep_pairs(str(tmp_path / "missing.npz"), training=1)
    with pytest.raises(ValueError, match="training"):
        S.sweep_pairs("editing_lm:quick:gd_mse", training=-1)


def _live(sweep, cfg, run_point, points):
    with torch_threads(1):
        rows = [{**p, **run_point(cfg, p, torch.device("cpu")), "seed": point_seed(cfg, p)} for p in points]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("name, presets, run_point, points", [
    ("lm_margin", S.LM_MARGIN_PRESETS, S.margin_point, S.margin_points),
    ("lm_capacity", S.LM_CAPACITY_PRESETS, S.capacity_point, S.capacity_points),
])
def test_quick_rows_recompute(name, presets, run_point, points):
    """Training 0 of the quick preset (the toy language model trained once per process) against
    the three stored trainings of the quick file, by the rules of :func:`agreement_rules` (argued
    in its docstring)."""
    cfg = presets["quick"]
    stored = load_results(name, "quick", config=config_to_json(cfg))
    live = _live(name, cfg, run_point, [p for p in points(cfg) if p["training"] == 0])
    summary = check_spread(live.drop(columns="training"), stored, **S.agreement_rules(name, stored),
                           what=f"live {name} quick rows")
    assert (summary["trainings"] == 3).all()


def test_agreement_rules_catch_a_changed_margin():
    stored = load_results("lm_margin", "quick", config=config_to_json(S.LM_MARGIN_PRESETS["quick"]))
    live = stored[stored.training == 0].drop(columns="training")
    check_spread(live, stored, **S.agreement_rules("lm_margin", stored))  # a stored training passes
    spread = stored.groupby(["draw", "m", "F", "rep"]).gamma_min.std().max()
    live.loc[live.index[0], "gamma_min"] += 20 * spread  # beyond any point's 99 % interval
    with pytest.raises(RowsDisagree, match="gamma_min"):
        check_spread(live, stored, **S.agreement_rules("lm_margin", stored))
    with pytest.raises(ValueError, match="sweep must be"):
        S.agreement_rules("lm", stored)


@pytest.mark.parametrize("name, presets, points", [
    ("lm_margin", S.LM_MARGIN_PRESETS, S.margin_points),
    ("lm_capacity", S.LM_CAPACITY_PRESETS, S.capacity_points),
])
def test_committed_cpu_results_match_the_preset(name, presets, points):
    cfg = presets["cpu"]
    frame = load_results(name, "cpu", config=config_to_json(cfg))
    grid = points(cfg)
    assert len(frame) == len(grid)
    for p in grid:
        match = (frame.training == p["training"]) & (frame.draw == p["draw"]) & (frame.F == p["F"]) \
            & (frame.rep == p["rep"])
        if "m" in p:
            match &= frame.m == p["m"]
        row = frame[match]
        assert len(row) == 1 and int(row.seed.iloc[0]) == point_seed(cfg, p)


def test_margin_rows_feed_the_bound_fits():
    """The stored quick rows carry what fit_statistics_sweep (eq. 44) and fit_isotropic_sweep
    (eq. 9) read; both fits are finite."""
    stored = load_results("lm_margin", "quick", config=config_to_json(S.LM_MARGIN_PRESETS["quick"]))
    rows = stored[(stored.draw == "uniform") & (stored.m == stored.m.min())]
    both = MS.fit_statistics_sweep(rows, "both", MS.SPIKE_FREE["both"], by="F")
    iso = MS.fit_isotropic_sweep(rows)
    assert both.n_points == rows.F.nunique() and iso.vary == "F"
    assert all(abs(v) < float("inf") for v in (both.r2_means, iso.r2_means))


def test_pairs_summary_on_isotropic_and_on_one_direction():
    from assocmem.mlps.lm_embeddings import EmbeddingPairs

    g = torch.Generator().manual_seed(0)
    x = torch.randn(4000, 8, generator=g, dtype=torch.float64)
    iso = S.pairs_summary(EmbeddingPairs(x, x, "iso"))
    assert 7.5 < iso["x_participation"] <= 8.0 and abs(iso["x_top"][0] - 1.0) < 0.15
    line = torch.ones(50, 8, dtype=torch.float64) * torch.arange(1, 51, dtype=torch.float64)[:, None]
    one = S.pairs_summary(EmbeddingPairs(line, line, "line"))
    assert abs(one["y_participation"] - 1.0) < 1e-9 and abs(one["y_mean_abs_cos"] - 1.0) < 1e-9


def test_pairs_rows_show_the_separated_draw_has_no_near_duplicates():
    cfg = S.LM_PAIRS_PRESETS["quick"]
    stored = load_results("lm_pairs", "quick", config=config_to_json(cfg)).set_index(["training", "draw"])
    for r in range(cfg.trainings):
        assert stored.loc[(r, "separated"), "key_nn_p90"] <= cfg.max_cosine
        assert stored.loc[(r, "separated"), "value_near_duplicate"] == 0.0
        # the uniform draw's statistics of the whole source equal the separated draw's (same pairs)
        assert stored.loc[(r, "uniform"), "x_participation"] == stored.loc[(r, "separated"), "x_participation"]
    with pytest.raises(ValueError, match="sample"):
        dataclasses.replace(cfg, sample=1)


def test_committed_cpu_rows_recompute():
    """Committed cpu rows of training 0 recomputed: the pairs summary of the uniform draw and the
    margins at the smallest and largest F (uniform draw, m = d, replicate 0). This retrains
    chapter 16's cpu base model on one thread (about a minute and a half).

    A training is a sample: on another CPU its 4000 steps end elsewhere, and in the portable
    floating-point configuration the retrained model's input participation ratio once came out
    14.7 against a stored 11.2. So the rows are checked against the spread of the three stored
    trainings (:func:`assocmem.sweeps.check_spread`, the 99 % prediction interval of one further
    training): the pairs' statistics with resolution 0 and their count ``N`` (set by the corpus
    alone) equal; the margins by :func:`agreement_rules`.
    """
    cfg_p, cfg_m = S.LM_PAIRS_PRESETS["cpu"], S.LM_MARGIN_PRESETS["cpu"]
    stored_p = load_results("lm_pairs", "cpu", config=config_to_json(cfg_p))
    stored_m = load_results("lm_margin", "cpu", config=config_to_json(cfg_m))
    m = min(cfg_m.ms)
    points = [{"training": 0, "draw": "uniform", "m": m, "F": F, "rep": 0} for F in (min(cfg_m.Fs), max(cfg_m.Fs))]
    live_p = _live("lm_pairs", cfg_p, S.pairs_point, [{"training": 0, "draw": "uniform"}])
    stats = [c for c in live_p.columns if c not in ("training", "draw", "N", "d", "seed", "wall_time_s")]
    check_spread(live_p.drop(columns="training"), stored_p, ["draw"], columns={c: 0.0 for c in stats},
                 exact=["N", "d"], ignore=["seed", "wall_time_s"], what="live cpu pairs row")
    live_m = _live("lm_margin", cfg_m, S.margin_point, points)
    check_spread(live_m.drop(columns="training"), stored_m, **S.agreement_rules("lm_margin", stored_m),
                 what="live cpu margin rows")
