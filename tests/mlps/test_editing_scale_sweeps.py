"""The fact-editing scale sweep (assocmem.mlps.editing_scale_sweeps): presets against the
source's ratios, bad configs, the points' seeds against fact_editing's, and the committed
results against their presets."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
import torch

from assocmem.devices import torch_threads
from assocmem.mlps import editing_scale_sweeps as SC
from assocmem.mlps import editing_sweeps as S
from assocmem.mlps.editing.swapping import num_edits
from assocmem.sweeps import config_to_json, get_sweep, load_results, point_seed


def test_registered_presets():
    assert {"quick", "room", "rome328", "lm8k", "lm16k", "paper"} <= set(get_sweep("editing_scale").presets)


def test_room_preset_has_the_sources_room_per_edit():
    """Seed 001: 1638 edits (10 % of 16,384) into h = 512, 3 h d / F = 24 parameters per fact;
    the room preset keeps the cpu preset's facts."""
    room, paper = SC.EDITING_SCALE_PRESETS["room"], S.FACT_EDITING_PRESETS["paper"]
    h_src = dict(paper.experts)["gd_mse"]
    src_per_unit = num_edits(paper.num_facts, 0.10) / h_src
    assert round(src_per_unit, 1) == 3.2
    assert round(num_edits(room.num_facts, 0.10) / room.m, 1) == round(src_per_unit, 1)
    assert 3 * room.m * room.d / room.num_facts == 3 * h_src * paper.d / paper.num_facts == 24
    assert room.num_facts == S.FACT_EDITING_PRESETS["cpu"].num_facts
    assert room.moments == ("corpus",) and set(room.editors) == set(SC.EDITORS)
    assert room.trainings >= 3
    fc = room.fact_config()  # the narrowed grid replaces the cpu preset's
    assert fc.memit_lam == dict(room.grids)["memit_lam"] and fc.rome_steps == (10,)
    assert fc.residual_lr == S.FACT_EDITING_PRESETS["cpu"].residual_lr


def test_rome_and_lm_presets_are_the_cpu_model():
    cpu = S.FACT_EDITING_PRESETS["cpu"]
    rome = SC.EDITING_SCALE_PRESETS["rome328"]
    assert num_edits(rome.num_facts, rome.fractions[0]) == 328 == num_edits(16384, 0.02)
    assert rome.editors == ("rome",)
    assert ("gd_mse", 128) in cpu.experts
    for name, times in (("lm8k", 2), ("lm16k", 4)):
        lm = SC.EDITING_SCALE_PRESETS[name]
        fc = lm.fact_config()
        assert fc == dataclasses.replace(cpu, lm_steps=times * cpu.lm_steps,
                                         experts=(("gd_mse", 128),), notes=())
        assert lm.editors == ("swap",) and lm.trainings >= 3
        # the same seeds as the cpu preset's points
        for p in SC.editing_scale_points(lm):
            assert S._point_streams(fc, p) == S._point_streams(cpu, p)


@pytest.mark.parametrize("kwargs, match", [
    ({"base_preset": "huge"}, "base_preset"),
    ({"num_facts": 10}, "num_facts"),
    ({"d": 33}, "even"),
    ({"m": 0}, "m"),
    ({"fractions": ()}, "fractions"),
    ({"fractions": (0.6,)}, "fraction"),
    ({"editors": ("swap", "swap")}, "editors"),
    ({"editors": ("ft",)}, "editors"),
    ({"editors": ()}, "editors"),
    ({"moments": ("oracle",)}, "moments"),
    ({"editors": ("rome",), "moments": ()}, "moments must be given"),
    ({"editors": ("swap",), "moments": ("corpus",)}, "moments must be given"),
    ({"grids": (("lr", (1.0,)),)}, "grids"),
    ({"grids": (("memit_lam", (1.0,)), ("memit_lam", (2.0,)))}, "grids"),
    ({"grids": (("memit_lam", ()),)}, "memit_lam"),
])
def test_config_refuses_bad_fields(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(SC.EDITING_SCALE_PRESETS["quick"], **kwargs)


def test_point_at_fact_editings_scale_is_its_point():
    """At the quick preset's own scale, a swap-only point trains fact_editing's quick model from
    its seeds and swaps the same edits: the rows equal fact_editing's on this machine."""
    q = S.FACT_EDITING_PRESETS["quick"]
    cfg = SC.EditingScaleConfig(num_facts=q.num_facts, d=q.d, m=dict(q.experts)["gd_mse"],
                                lm_steps=q.lm_steps, fractions=q.fractions, editors=("swap",),
                                moments=(), base_preset="quick", trainings=1)
    point = SC.editing_scale_points(cfg)[0]
    with torch_threads(1):
        ours = pd.DataFrame(SC.editing_scale_point(cfg, point, torch.device("cpu")))
        theirs = pd.DataFrame(S.fact_editing_point(q, point, torch.device("cpu")))
    theirs = theirs[theirs.editor.isin(["base", "swap"])].reset_index(drop=True)
    assert list(ours.editor) == list(theirs.editor) == ["base", "swap", "swap"]
    assert set(ours.moment) == {"none"}
    cols = ["fraction", "n_edits", "efficacy", "specificity", "score", "r_nf", "lm_accuracy"]
    pd.testing.assert_frame_equal(ours[cols], theirs[cols])


def test_quick_point_runs_every_editor_with_each_moment():
    cfg = SC.EDITING_SCALE_PRESETS["quick"]
    with torch_threads(1):
        rows = pd.DataFrame(SC.editing_scale_point(cfg, SC.editing_scale_points(cfg)[0],
                                                   torch.device("cpu")))
    n_set = len(S.editor_settings(cfg.fact_config()))
    per_fraction = 1 + n_set * len(cfg.moments)
    assert len(rows) == 1 + per_fraction * len(cfg.fractions)
    weight = rows[~rows.editor.isin(["base", "swap"])]
    assert set(weight.moment) == {"facts", "corpus"}
    best = weight[weight.best.astype(bool)]
    # at most one best setting per editor, fraction and moment, each with its r_NF
    assert not best.duplicated(["editor", "fraction", "moment"]).any()
    assert best.r_nf.notna().all() and (rows[rows.editor == "swap"].r_nf > 0).all()


@pytest.mark.parametrize("preset, finished", [("rome328", True), ("room", True), ("lm8k", True),
                                              ("room_memit", True), ("room_memit_low", True)])
def test_committed_results_match_the_preset(preset, finished):
    """The committed rows: the preset's config, seeds and row counts (an unfinished preset: its
    stored trainings, which resume per point)."""
    cfg = SC.EDITING_SCALE_PRESETS[preset]
    frame = load_results("editing_scale", preset, config=config_to_json(cfg), allow_partial=not finished)
    grid = SC.editing_scale_points(cfg)
    stored = sorted(frame.training.unique())
    assert stored and set(stored) <= {p["training"] for p in grid}
    if finished:
        assert stored == [p["training"] for p in grid]
    for p in grid:
        assert (frame.loc[frame.training == p["training"], "seed"] == point_seed(cfg, p)).all()
    fc = cfg.fact_config()
    n_set = sum(s["editor"] in cfg.editors for s in S.editor_settings(fc))
    per_fraction = ("swap" in cfg.editors) + n_set * len(cfg.moments)
    assert len(frame) == len(stored) * (1 + per_fraction * len(cfg.fractions))
    base = frame[frame.editor == "base"]
    assert (base.lm_accuracy_all > 0.5).all()  # a trained model, not a broken one


def _grid_rows(lams, scores, failed=None, seed=7, r_best=None):
    rows = [{"training": 0, "seed": seed, "editor": "base", "fraction": 0.0, "moment": "none", "lam": float("nan"),
             "score": float("nan"), "failed": False, "best": False, "r_nf": float("nan")}]
    best = max(range(len(lams)), key=lambda i: (scores[i], -i))
    for i, (lam, s) in enumerate(zip(lams, scores)):
        rows.append({"training": 0, "seed": seed, "editor": "memit", "fraction": 0.1, "moment": "corpus",
                     "lam": lam, "score": s, "failed": bool(failed and failed[i]), "best": i == best,
                     "r_nf": 1.5 if i == best else float("nan")})
    return pd.DataFrame(rows)


def test_an_extra_grid_is_joined_and_its_best_picked_over_the_union():
    room = _grid_rows([1.5, 5.0], [0.30, 0.20])
    extra = _grid_rows([0.05, 0.5], [0.10, 0.40])
    out = SC.with_extra_grid(room, extra)
    memit = out[out.editor == "memit"]
    assert len(memit) == 4 and memit.best.sum() == 1
    assert memit[memit.best].lam.item() == 0.5 and memit[memit.best].r_nf.notna().all()
    # a tie goes to the smaller lambda, as one grid in increasing lambda would pick; failures never win
    tie = SC.with_extra_grid(room, _grid_rows([0.05, 0.5], [0.30, 0.9], failed=[False, True]))
    assert tie[tie.editor.eq("memit") & tie.best].lam.item() == 0.05


def test_an_extra_grid_on_other_base_models_or_a_bad_editor_is_refused():
    with pytest.raises(ValueError, match="same trainings"):
        SC.with_extra_grid(_grid_rows([1.5], [0.3]), _grid_rows([0.5], [0.4], seed=8))
    with pytest.raises(ValueError, match="editor must be one of"):
        SC.with_extra_grid(_grid_rows([1.5], [0.3]), _grid_rows([0.5], [0.4]), editor="swap")
