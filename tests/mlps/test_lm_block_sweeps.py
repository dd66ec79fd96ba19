"""Fig. 14's block on language-model embeddings (assocmem.mlps.lm_block_sweeps): the untied
read-out, the trained value/output maps, the point's draw, a small search, bad configs, and the
committed cpu results against their preset."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch.nn import functional as Fn

from assocmem.mlps import lm_block_sweeps as B
from assocmem.mlps.lm_embeddings import EmbeddingPairs, save_pairs
from assocmem.mlps.transformer import (SSFRTask, SSFRTransformer, TrainConfig, TransformerConfig, build_mlp,
                                       fact_set, identity_map, ssfr_batch, train_attention)
from assocmem.sweeps import RowsDisagree, check_spread, config_to_json, get_sweep, load_results, point_seed


def _pairs_file(tmp_path, n=600, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.randn(n, d, generator=g, dtype=torch.float64)
    path = tmp_path / "pairs.npz"
    save_pairs(EmbeddingPairs(x, y, "random"), path)
    return str(path)


def _small(path, **kw):
    base = dict(pairs=path, Fs=(8, 16), junk_vocab=3, junk_length=3, steps=60, batch_size=32, lr=3e-3, hi=128,
                contexts_per_key=1)
    return B.LMBlockConfig(**{**base, **kw})


def _table(task, d, seed=0):
    g = torch.Generator().manual_seed(seed)
    return Fn.normalize(torch.randn(task.vocab_size, d, generator=g, dtype=torch.float64), dim=1)


def test_registered_with_its_presets():
    assert {"quick", "cpu"} <= set(get_sweep("lm_block_capacity").presets)
    cpu = B.LM_BLOCK_PRESETS["cpu"]
    assert cpu.attention_residual and cpu.train_value_output and cpu.target == 1.0 and cpu.trainings >= 3


def test_untied_readout_uses_the_output_table():
    """With the output table equal to the input table's fact rows the block is the tied SSFR
    Transformer; with another table the logits are cosines with that table's rows."""
    task, d = SSFRTask(num_facts=6, junk_vocab=2, junk_length=2), 8
    E = _table(task, d)
    mlp = build_mlp("whitened", fact_set(E, task, identity_map(task)), 32, 0)
    cfg = TransformerConfig(d=d, attention_residual=True, freeze_value_output=False, dtype=torch.float64,
                            device="cpu")
    tokens = ssfr_batch(task, identity_map(task), 10, torch.Generator().manual_seed(1)).tokens
    tied = SSFRTransformer(cfg, E, mlp, task=task, seed=3)
    same = B.UntiedSSFRTransformer(cfg, E, E[:6], mlp, task=task, seed=3)
    torch.testing.assert_close(same(tokens), tied(tokens))
    Y = _table(task, d, seed=5)[:6]
    other = B.UntiedSSFRTransformer(cfg, E, Y, mlp, task=task, seed=3)
    y = Fn.normalize(mlp(tied.mlp_input(tokens)), dim=1)
    torch.testing.assert_close(other(tokens), y @ Y.T)
    assert not torch.allclose(other(tokens), tied(tokens))
    swapped = other.with_mlp(None)
    assert swapped.attention is other.attention and torch.equal(swapped.output_embedding, other.output_embedding)


def test_value_and_output_maps_train():
    task, d = SSFRTask(num_facts=6, junk_vocab=2, junk_length=2), 8
    E = _table(task, d)
    cfg = TransformerConfig(d=d, attention_residual=True, freeze_value_output=False, dtype=torch.float64,
                            device="cpu")
    model = B.UntiedSSFRTransformer(cfg, E, _table(task, d, 2)[:6], None, task=task)
    before = model.attention.W_V.detach().clone()
    train_attention(model, task, identity_map(task), TrainConfig(steps=5, batch_size=8, lr=1e-2))
    assert not torch.equal(model.attention.W_V, before)


@pytest.mark.parametrize("Y, match", [
    (torch.zeros(5, 8, dtype=torch.float64), "shape"),
    (torch.zeros(6, 8, dtype=torch.int64), "floating"),
    (torch.full((6, 8), float("nan"), dtype=torch.float64), "finite"),
    ("table", "shape"),
])
def test_untied_refuses_a_bad_output_table(Y, match):
    task, d = SSFRTask(num_facts=6, junk_vocab=2, junk_length=2), 8
    cfg = TransformerConfig(d=d, dtype=torch.float64, device="cpu")
    with pytest.raises(ValueError, match=match):
        B.UntiedSSFRTransformer(cfg, _table(task, d), Y, None, task=task)


def test_setup_draws_every_token_from_the_pairs(tmp_path):
    path = _pairs_file(tmp_path)
    cfg = _small(path)
    pairs = torch.nn.functional.normalize(torch.from_numpy(__import__("numpy").load(path)["inputs"]), dim=1)
    for draw in ("uniform", "deduplicated"):
        s = B.block_setup(cfg, {"training": 0, "draw": draw, "F": 16})
        E, Y, facts = s["embedding"], s["output_embedding"], s["facts"]
        assert E.shape == (s["task"].vocab_size, 16) and Y.shape == (16, 16)
        assert torch.equal(facts.keys, E[:16]) and torch.equal(facts.values, Y)
        # every input row is a captured input, each used once
        best = (E @ pairs.T).amax(dim=1)
        assert torch.allclose(best, torch.ones_like(best))
        assert len({tuple(r.tolist()) for r in E}) == len(E)
    again = B.block_setup(cfg, {"training": 0, "draw": "uniform", "F": 16})
    assert torch.equal(again["embedding"], B.block_setup(cfg, {"training": 0, "draw": "uniform", "F": 16})["embedding"])


def test_small_search_finds_a_width(tmp_path):
    cfg = _small(_pairs_file(tmp_path), Fs=(8,), draws=("deduplicated",))
    row = B.block_point(cfg, {"training": 0, "draw": "deduplicated", "F": 8}, "cpu")
    assert row["found"] and row["accuracy"] == 1.0 and row["W"] == 3 * row["m"] * 16
    assert row["m"] % cfg.step == 0 and row["n_trained"] >= 2
    assert row["found_mlp"] and row["key_twin_share"] == 0.0


@pytest.mark.parametrize("kwargs, match", [
    ({"draws": ("separated",)}, "draws"),
    ({"draws": ()}, "draws"),
    ({"twin_gap": 0}, "twin_gap"),
    ({"target": 1.5}, "target"),
    ({"steps": 0}, "steps"),
    ({"hi": 2, "step": 4}, "hi"),
    ({"dtype": "float16"}, "dtype"),
    ({"attention_residual": "yes"}, "attention_residual"),
    ({"Fs": (4, 4)}, "increasing"),
    ({"trainings": 2}, "must be 1 for pairs read from a file"),
])
def test_config_refuses(kwargs, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        _small(str(tmp_path / "p.npz"), **kwargs)


def test_committed_cpu_results_match_the_preset():
    cfg = B.LM_BLOCK_PRESETS["cpu"]
    frame = load_results("lm_block_capacity", "cpu", config=config_to_json(cfg))
    grid = B.block_points(cfg)
    assert len(frame) == len(grid)
    for p in grid:
        row = frame[(frame.training == p["training"]) & (frame.draw == p["draw"]) & (frame.F == p["F"])]
        assert len(row) == 1 and int(row.seed.iloc[0]) == point_seed(cfg, p)
    found = frame[frame.found.astype(bool)]
    assert (found.accuracy == 1.0).all() and (found.W == 3 * found.m * found.d).all()
    assert (frame[frame.draw == "deduplicated"].key_twin_share == 0.0).all()


def test_recipe_runs_on_a_block_preset(tmp_path, monkeypatch):
    monkeypatch.setitem(B.LM_BLOCK_PRESETS, "test", _small(_pairs_file(tmp_path), draws=("deduplicated",)))
    cfg = B.LMBlockRecipeConfig(block="test", F=8, m=64, steps=(5, 40), seeds=2)
    assert B.recipe_points(cfg) == [{"rep": 0, "steps": 5}, {"rep": 0, "steps": 40},
                                    {"rep": 1, "steps": 5}, {"rep": 1, "steps": 40}]
    short, long = (B.recipe_point(cfg, p, "cpu") for p in B.recipe_points(cfg)[:2])
    assert short["mlp_accuracy"] == long["mlp_accuracy"] == 1.0
    assert 0.0 <= short["noise_mean"] <= short["noise_max"] <= 2.0
    # training longer brings the MLP's input closer to the key
    assert long["noise_mean"] < short["noise_mean"]
    assert long["accuracy"] >= short["accuracy"]


@pytest.mark.parametrize("kwargs, match", [
    ({"block": "nope"}, "block"),
    ({"F": 7}, "F must be one of"),
    ({"draw": "uniform"}, "draw"),
    ({"steps": (10, 5)}, "increasing"),
    ({"steps": ()}, "steps"),
    ({"m": 0}, "m"),
    ({"seeds": 0}, "seeds"),
])
def test_recipe_config_refuses(kwargs, match):
    base = dict(block="quick", F=16, m=64, steps=(50, 100), seeds=2)
    with pytest.raises(ValueError, match=match):
        B.LMBlockRecipeConfig(**{**base, **kwargs})


def test_committed_recipe_results_match_the_preset():
    cfg = B.LM_BLOCK_RECIPE_PRESETS["cpu"]
    frame = load_results("lm_block_recipe", "cpu", config=config_to_json(cfg))
    assert len(frame) == len(B.recipe_points(cfg)) == cfg.seeds * len(cfg.steps)
    for p in B.recipe_points(cfg):
        row = frame[(frame.rep == p["rep"]) & (frame.steps == p["steps"])]
        assert len(row) == 1 and int(row.seed.iloc[0]) == point_seed(cfg, p)
    assert (frame.mlp_accuracy == 1.0).all() and (frame.noise_max <= 2.0).all()


@pytest.mark.parametrize("name, presets", [("lm_block_capacity", B.LM_BLOCK_PRESETS),
                                           ("lm_block_recipe", B.LM_BLOCK_RECIPE_PRESETS)])
def test_committed_quick_results_have_three_trainings(name, presets):
    cfg = presets["quick"]
    frame = load_results(name, "quick", config=config_to_json(cfg))
    assert len(frame) == len(get_sweep(name).points(cfg))
    training = "training" if name == "lm_block_capacity" else "rep"
    assert frame[training].nunique() == 3


@pytest.mark.parametrize("name", ["lm_block_capacity", "lm_block_recipe"])
def test_agreement_rules_pass_a_stored_training(name):
    stored = load_results(name, "quick")
    rules = B.agreement_rules(name, stored, get_sweep(name).config("quick"))
    t = rules["training"]
    out = check_spread(stored[stored[t] == 0].drop(columns=t), stored, **rules)
    assert (out["rows outside"] == 0).all() and set(out.column) == set(rules["columns"])


def test_block_rules_resolutions_and_a_moved_width():
    stored = load_results("lm_block_capacity", "quick")
    cfg = B.LM_BLOCK_PRESETS["quick"]
    rules = B.agreement_rules("lm_block_capacity", stored, cfg)
    q, F, d = rules["columns"], stored.F.min(), stored.d.max()
    assert q["m"] == cfg.step and q["W"] == 3 * d * cfg.step and q["m_mlp"] == 1.0
    assert q["accuracy"] == pytest.approx(1 / (F * cfg.contexts_per_key))
    assert {"key_nn_median", "key_twin_share"} <= set(rules["ignore"])  # the LM's, not compared
    live = stored[stored.training == 0].drop(columns="training").reset_index(drop=True)
    live.loc[0, "m"] += 100 * cfg.step
    with pytest.raises(RowsDisagree, match="m"):
        check_spread(live, stored, **rules)


def test_recipe_rules_fail_a_moved_noise():
    stored = load_results("lm_block_recipe", "quick")
    rules = B.agreement_rules("lm_block_recipe", stored, B.LM_BLOCK_RECIPE_PRESETS["quick"])
    assert rules["training"] == "rep" and rules["keys"] == ["steps"]
    live = stored[stored.rep == 0].drop(columns="rep")
    with pytest.raises(RowsDisagree, match="noise_max"):
        check_spread(live.assign(noise_max=live.noise_max + 1.0), stored, **rules)


def test_agreement_rules_refuse_bad_input():
    stored = load_results("lm_block_recipe", "quick")
    cfg = B.LM_BLOCK_RECIPE_PRESETS["quick"]
    with pytest.raises(ValueError, match="sweep must be"):
        B.agreement_rules("lm_block", stored, cfg)
    with pytest.raises(TypeError, match="LMBlockConfig"):
        B.agreement_rules("lm_block_capacity", stored, cfg)
    with pytest.raises(TypeError, match="DataFrame"):
        B.agreement_rules("lm_block_recipe", stored.to_dict("records"), cfg)
    with pytest.raises(ValueError, match="lack"):
        B.agreement_rules("lm_block_recipe", stored.drop(columns="noise_max"), cfg)
