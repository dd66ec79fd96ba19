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
from assocmem.sweeps import config_to_json, get_sweep, load_results, point_seed


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
    assert [(p["expert"], p["training"]) for p in S.fact_editing_points(cfg)] == [
        (e, r) for e, _ in cfg.experts for r in range(cfg.trainings)]


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


def test_one_quick_point_recomputes_within_the_stored_trainings():
    """Training 0 of the GD (squared-error) point of the quick preset (a tiny base model and every
    editor) against the three stored trainings of results/fact_editing/quick.csv. The chapter
    reruns the whole preset.

    The rule (:func:`assocmem.mlps.editing_sweeps.rerun_agreement`): every value inside the 99 %
    prediction interval of one further training, from the stored trainings' mean and standard
    deviation, widened by one prompt's share. A training is a sample: on another CPU (another
    SIMD width or BLAS kernel) the same seed's training ends elsewhere, by up to 0.02 in an
    accuracy and 0.02 in a residual loss in our AVX2 configuration, while the stored trainings
    of one point differ by up to 0.35 in an accuracy; a digit-level check would fail there.
    """
    cfg = S.FACT_EDITING_PRESETS["quick"]
    point = next(p for p in S.fact_editing_points(cfg) if p["expert"] == "gd_mse" and p["training"] == 0)
    with torch_threads(1):
        rows = S.fact_editing_point(cfg, point, torch.device("cpu"))
    live = pd.DataFrame([{**point, **r, "seed": point_seed(cfg, point)} for r in rows])
    stored = load_results("fact_editing", "quick", config=config_to_json(cfg))
    stored = stored[stored.expert == "gd_mse"]
    assert len(stored) == cfg.trainings * len(live)
    summary = S.rerun_agreement(live, stored, cfg, what="live quick rows")
    assert set(summary["rows of"]) == {"edits", "base"} and (summary["trainings"] >= 3).all()


def test_rerun_agreement_fails_on_a_changed_result():
    """The same rule refuses a rerun whose ROME scores are off by 1.5 (a wrong editor), and a
    rerun of a point with fewer than three stored trainings."""
    from assocmem.sweeps import RowsDisagree

    cfg = S.FACT_EDITING_PRESETS["quick"]
    stored = load_results("fact_editing", "quick", config=config_to_json(cfg))
    live = stored[stored.training == 0].copy()
    S.rerun_agreement(live, stored, cfg)  # a stored training lies within its own spread
    bad = live.copy()
    rome = bad.editor == "rome"
    bad.loc[rome, "score"] = bad.loc[rome, "score"] - 1.5
    with pytest.raises(RowsDisagree, match="score"):
        S.rerun_agreement(bad, stored, cfg)
    with pytest.raises(RowsDisagree, match="stored training"):
        S.rerun_agreement(live, stored[stored.training < 2], cfg)


@pytest.mark.parametrize("preset", ["cpu", "cpu_dd"])
def test_committed_cpu_results_match_the_preset(preset):
    cfg = S.FACT_EDITING_PRESETS[preset]
    frame = load_results("fact_editing", preset, config=config_to_json(cfg))
    grid = S.fact_editing_points(cfg)
    cols = ["expert", "m", "training"]
    assert sorted(map(str, frame[cols].drop_duplicates().to_dict("records"))) == sorted(
        str({c: p[c] for c in cols}) for p in grid)
    for p in grid:
        got = frame.loc[(frame.expert == p["expert"]) & (frame.m == p["m"]) & (frame.training == p["training"]), "seed"]
        assert (got == point_seed(cfg, p)).all()
    edited = frame[frame.expert.isin(S.EDIT_EXPERTS)]
    per = len(S.editor_settings(cfg)) + 1  # every setting and the swap, per fraction
    n_edited = sum(e in S.EDIT_EXPERTS for e, _ in cfg.experts)
    assert n_edited and len(edited) == n_edited * cfg.trainings * (1 + per * len(cfg.fractions))
    best = S.best_rows(frame)
    assert set(best.groupby(["expert", "fraction"]).editor.apply(frozenset)) <= {
        frozenset({"swap", "rome", "memit", "alphaedit"}), frozenset({"swap", "rome", "memit"}),
        frozenset({"swap", "memit", "alphaedit"}), frozenset({"swap", "memit"})}


def test_one_committed_cpu_point_reproduces():
    """Training 0 of the cross-entropy expert's point of the committed ``cpu`` preset (base model
    only: the GD-trained expert inside the 4000-step language model, behind the chapter's
    CE-against-MSE row), recomputed from scratch against the three stored trainings of
    results/fact_editing/cpu.csv by the rule of the quick test above (argued there)."""
    cfg = S.FACT_EDITING_PRESETS["cpu"]
    point = next(p for p in S.fact_editing_points(cfg) if p["expert"] == "gd_ce" and p["training"] == 0)
    with torch_threads(1):
        rows = S.fact_editing_point(cfg, point, torch.device("cpu"))
    live = pd.DataFrame([{**point, **r, "seed": point_seed(cfg, point)} for r in rows])
    stored = load_results("fact_editing", "cpu", config=config_to_json(cfg))
    stored = stored[stored.expert == "gd_ce"]
    assert len(stored) == cfg.trainings == 3 and len(live) == 1
    S.rerun_agreement(live, stored, cfg, what="live cpu gd_ce base row")


def test_fact_editing_calibration_runs_on_the_stored_quick_rows():
    out = S.leave_one_training_out(load_results("fact_editing", "quick"),
                                    get_sweep("fact_editing").config("quick"))
    assert set(out["rows of"]) == {"edits", "base"}
    assert (out["values"] > 0).all() and (out["outside"] <= out["values"]).all()


def test_editing_moments_presets_point_at_fact_editing_points():
    sweep = get_sweep("editing_moments")
    assert {"quick", "cpu", "paper"} <= set(sweep.presets)
    for name, cfg in S.EDITING_MOMENTS_PRESETS.items():
        base = S.FACT_EDITING_PRESETS[cfg.base_preset]
        assert set(cfg.experts) <= set(base.experts) and cfg.trainings <= base.trainings
    with pytest.raises(ValueError, match="base_preset"):
        S.EditingMomentsConfig(base_preset="huge", experts=(("gd_mse", 32),))
    with pytest.raises(ValueError, match="edited experts"):
        S.EditingMomentsConfig(base_preset="quick", experts=(("gd_ce", 32),))
    with pytest.raises(ValueError, match="trainings"):
        S.EditingMomentsConfig(base_preset="quick", experts=(("gd_mse", 32),), trainings=4)


def test_editing_moments_rows_edit_the_fact_editing_model_with_the_corpus_moment():
    """The stored quick rows: the same base models as fact_editing's quick point (identical
    accuracies, the same seeds) and every editor setting once per fraction, all with the
    corpus moment; with_moments labels the two sweeps' rows apart."""
    cfg = S.EDITING_MOMENTS_PRESETS["quick"]
    mom = load_results("editing_moments", "quick", config=config_to_json(cfg))
    ed = load_results("fact_editing", "quick")
    ed = ed[ed.expert == "gd_mse"]
    base_cols = ["training", "mlp_accuracy", "lm_accuracy", "lm_accuracy_all"]
    a = mom[mom.editor == "base"][base_cols].sort_values("training").reset_index(drop=True)
    b = ed[ed.editor == "base"][base_cols].sort_values("training").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, atol=0.05)  # one sample: the same model up to rounding
    base_cfg = S.FACT_EDITING_PRESETS["quick"]
    per = len(S.editor_settings(base_cfg)) * len(base_cfg.fractions)
    assert len(mom) == cfg.trainings * (1 + per) and set(mom.moment) == {"corpus"}
    both = S.with_moments(ed, mom)
    assert set(both.moment) == {"none", "facts", "corpus"}
    assert set(S.best_rows(both, "corpus").editor) <= {"swap", "rome", "memit", "alphaedit"}
    assert set(S.best_rows(both, "corpus").moment) <= {"none", "corpus"}
    with pytest.raises(ValueError, match="moment"):
        S.best_rows(both, "oracle")


def test_committed_editing_moments_cpu_results_match_the_preset():
    cfg = S.EDITING_MOMENTS_PRESETS["cpu"]
    frame = load_results("editing_moments", "cpu", config=config_to_json(cfg))
    base_cfg = S.FACT_EDITING_PRESETS[cfg.base_preset]
    per = len(S.editor_settings(base_cfg)) * len(base_cfg.fractions)
    assert len(frame) == len(cfg.experts) * cfg.trainings * (1 + per)
