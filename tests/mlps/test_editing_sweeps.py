"""The fact-editing sweep (assocmem.mlps.editing_sweeps): presets, grids, the quick rows against
the stored quick file, and the committed cpu results against the preset."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest
import torch

from assocmem.devices import torch_threads
from assocmem.mlps import editing_sweeps as S
from assocmem.mlps.editing import HELDOUT_TEMPLATES, TRAIN_TEMPLATES
from assocmem.sweeps import check_rows, config_to_json, get_sweep, load_results, point_seed

EDIT_OUT = ["efficacy", "paraphrase", "specificity", "score", "unseen", "failed", "best"]
BASE_OUT = ["mlp_accuracy", "lm_accuracy", "lm_accuracy_all", "lm_accuracy_unseen"]
CONTINUOUS = ["r_nf", "residual_loss_max", "train_loss"]
SETTINGS = ["n_edits", "steps", "lr", "clip_norm", "rwd", "early_stop", "lam", "rel_tol", "seed"]


def test_registered_with_three_presets():
    sweep = get_sweep("fact_editing")
    assert {"quick", "cpu", "paper"} <= set(sweep.presets)


def test_paper_preset_is_the_sources_setup():
    p = S.FACT_EDITING_PRESETS["paper"]
    assert (p.num_facts, p.d, p.batch_size, p.lm_steps, p.lr, p.weight_decay) == (16384, 256, 32, 18 * 8192,
                                                                                  2e-4, 0.1)
    assert dict(p.experts) == {"gd_mse": 512, "data_dependent": 1024, "gd_ce": 512}
    assert p.fractions == (0.02, 0.05, 0.10) and (p.expert_epochs, p.expert_lr) == (10000, 1e-3)
    assert p.residual_lr == 0.05 and p.rome_weight_decay == (1.5e-3,) and p.rome_early_stopping_loss == 5e-2
    assert 150.0 in p.memit_lam and 0.75 in p.memit_clip_norm and {25, 100} <= set(p.memit_steps)
    assert {10, 100} <= set(p.rome_steps) and 100 in p.alphaedit_steps


def test_editor_grid_is_the_cartesian_product():
    cfg = S.FACT_EDITING_PRESETS["cpu"]
    settings = S.editor_settings(cfg)
    count = pd.Series([s["editor"] for s in settings]).value_counts().to_dict()
    assert count == {"rome": len(cfg.rome_steps) * len(cfg.rome_weight_decay),
                     "memit": len(cfg.memit_steps) * len(cfg.memit_lam) * len(cfg.memit_clip_norm),
                     "alphaedit": len(cfg.alphaedit_steps) * len(cfg.alphaedit_rel_tol)
                     * len(cfg.alphaedit_clip_norm)}
    assert all(math.isnan(s["lam"]) for s in settings if s["editor"] != "memit")
    assert [p["expert"] for p in S.fact_editing_points(cfg)] == [e for e, _ in cfg.experts]


@pytest.mark.parametrize("kwargs, match", [
    ({"num_facts": 10}, "num_facts"),
    ({"d": 33}, "even"),
    ({"experts": (("ntk", 8),)}, "experts must be"),
    ({"experts": ()}, "at least one"),
    ({"fractions": (0.7,)}, "fraction"),
    ({"memit_lam": ()}, "must not be empty"),
    ({"rome_steps": (0,)}, "rome_steps"),
    ({"dtype": "float16"}, "dtype"),
])
def test_config_refuses_bad_fields(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(S.FACT_EDITING_PRESETS["quick"], **kwargs)


def test_point_base_model_refuses_points_outside_the_config():
    cfg = S.FACT_EDITING_PRESETS["quick"]
    with pytest.raises(ValueError, match="point must be one of"):
        S.point_base_model(cfg, {"expert": "gd_mse", "m": 999})
    with pytest.raises(ValueError, match="FactEditingConfig"):
        S.point_base_model({"num_facts": 64}, {"expert": "gd_mse", "m": 32})


def test_one_quick_point_recomputes_the_stored_quick_rows():
    """The GD (squared-error) point of the quick preset (a tiny base model and every editor)
    against results/fact_editing/quick.csv. The chapter reruns the whole preset.

    Tolerances (the chapter's, where they are argued). The stored run and this one use one
    thread, so on the same kind of CPU every value is recomputed bit for bit. On another CPU a
    BLAS may sum in another order and training amplifies it (in the portable configuration of
    ``make nbval-portable`` the final training loss moved by about 1e-4, residual losses by up
    to 5e-3): continuous columns, of order one, within 1e-2 (the same trained model, not the
    same rounding); each accuracy column may change in one row (a near-tie flips one prompt);
    the base model's accuracies, repeated on every row of a point, are compared on its own row.
    """
    cfg = S.FACT_EDITING_PRESETS["quick"]
    point = next(p for p in S.fact_editing_points(cfg) if p["expert"] == "gd_mse")
    with torch_threads(1):
        rows = S.fact_editing_point(cfg, point, torch.device("cpu"))
    live = pd.DataFrame([{**point, **r, "seed": point_seed(cfg, point)} for r in rows])
    stored = load_results("fact_editing", "quick", config=config_to_json(cfg))
    stored = stored[stored.expert == "gd_mse"]
    assert len(stored) == len(live)
    keys = ["expert", "m", "editor", "fraction", "steps", "lam", "rel_tol"]
    settings = [c for c in SETTINGS if c not in keys]
    is_base, stored_base = live.editor == "base", stored.editor == "base"
    check_rows(live[~is_base], stored[~stored_base], keys, tolerances={c: 1e-2 for c in CONTINUOUS},
               max_changed={c: 1 for c in EDIT_OUT}, exact=settings, ignore=["wall_time_s", *BASE_OUT],
               what="live quick edit rows")
    _check_base_rows(cfg, live[is_base], stored[stored_base], keys, "live quick base rows")


def _check_base_rows(cfg, live, stored, keys, what):
    """The base model's rows, live against stored: the training loss within 1e-2 and each
    accuracy within two prompts (tolerances argued in the quick test's docstring)."""
    F, n_train = cfg.num_facts, len(TRAIN_TEMPLATES)
    prompts = {"mlp_accuracy": F, "lm_accuracy": F, "lm_accuracy_all": F * n_train,
               "lm_accuracy_unseen": F * len(HELDOUT_TEMPLATES)}
    check_rows(live, stored, keys,
               tolerances={"train_loss": 1e-2, **{c: 2.5 / n for c, n in prompts.items()}},
               exact=[c for c in SETTINGS if c not in keys],
               ignore=["wall_time_s", *EDIT_OUT, "r_nf", "residual_loss_max"], what=what)


def test_committed_cpu_results_match_the_preset():
    cfg = S.FACT_EDITING_PRESETS["cpu"]
    frame = load_results("fact_editing", "cpu", config=config_to_json(cfg))
    grid = S.fact_editing_points(cfg)
    assert sorted(map(str, frame[["expert", "m"]].drop_duplicates().to_dict("records"))) == sorted(
        str({"expert": p["expert"], "m": p["m"]}) for p in grid)
    for p in grid:
        got = frame.loc[(frame.expert == p["expert"]) & (frame.m == p["m"]), "seed"]
        assert (got == point_seed(cfg, p)).all()
    edited = frame[frame.expert.isin(S.EDIT_EXPERTS)]
    per = len(S.editor_settings(cfg)) + 1  # every setting and the swap, per fraction
    assert len(edited) == len(S.EDIT_EXPERTS) * (1 + per * len(cfg.fractions))
    best = S.best_rows(frame)
    assert set(best.groupby(["expert", "fraction"]).editor.apply(frozenset)) <= {
        frozenset({"swap", "rome", "memit", "alphaedit"}), frozenset({"swap", "rome", "memit"}),
        frozenset({"swap", "memit", "alphaedit"}), frozenset({"swap", "memit"})}


def test_one_committed_cpu_point_reproduces():
    """The cross-entropy expert's point of the committed ``cpu`` preset (base model only: the
    GD-trained expert inside the 4000-step language model, behind the chapter's CE-against-MSE
    row), recomputed from scratch against results/fact_editing/cpu.csv, with the tolerances of
    the quick test above (argued there): the training loss within 1e-2, each accuracy within
    two prompts."""
    cfg = S.FACT_EDITING_PRESETS["cpu"]
    point = next(p for p in S.fact_editing_points(cfg) if p["expert"] == "gd_ce")
    with torch_threads(1):
        rows = S.fact_editing_point(cfg, point, torch.device("cpu"))
    live = pd.DataFrame([{**point, **r, "seed": point_seed(cfg, point)} for r in rows])
    stored = load_results("fact_editing", "cpu", config=config_to_json(cfg))
    stored = stored[stored.expert == "gd_ce"]
    assert len(stored) == len(live) == 1
    keys = ["expert", "m", "editor", "fraction", "steps", "lam", "rel_tol"]
    _check_base_rows(cfg, live, stored, keys, "live cpu gd_ce base row")
