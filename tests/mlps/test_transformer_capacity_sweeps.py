"""Fig. 10's protocol and the App. A.4.3 counterfactuals (assocmem.mlps.transformer_capacity_sweeps):
the largest-count search, configs and bad input, the attention variants, one point of each sweep."""

import dataclasses

import pytest
import torch

from assocmem.mlps import transformer as T
from assocmem.mlps import transformer_capacity_sweeps as S
from assocmem.mlps.transformer_setup import capacity_setup, model_config, train_config
from assocmem.sweeps import get_sweep, sweep_names

TINY_FACTS = dataclasses.replace(S.FACTS_PRESETS["quick"], widths=(("whitened", 32),), seeds=1, f_hi=24)
TINY_ARCH = dataclasses.replace(S.ARCHITECTURE_PRESETS["quick"], seeds=1)


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------
# the largest-count search


@pytest.mark.parametrize("top", [1, 2, 17, 64, 99])
def test_largest_count_monotone(top):
    calls = []

    def ok(n):
        calls.append(n)
        return n <= top

    res = S.largest_count(ok, 1, 100)
    assert res.n == top and not res.censored and res.violations == ()
    assert len(calls) == len(set(calls)) == res.evaluations  # no value twice


def test_largest_count_edges():
    assert S.largest_count(lambda n: False, 3, 50).n is None  # fails at lo
    res = S.largest_count(lambda n: True, 3, 50)
    assert (res.n, res.censored) == (50, True)  # a lower bound
    assert S.largest_count(lambda n: n <= 7, 7, 7).n == 7


def test_largest_count_non_monotone_is_recorded():
    # holds up to 10, fails at 11, holds again at 12 (an isolated success above a failure)
    res = S.largest_count(lambda n: n <= 10 or n == 12, 1, 64, verify=1)
    assert res.n is not None and res.n != 11
    assert all(v > 10 for v in res.violations)
    # with verification, the reported n has a failure just above it that is verified by the next
    ok = lambda n: n <= 10 or n == 12  # noqa: E731
    assert ok(res.n) and not ok(res.n + 1) and not ok(res.n + 2)


def test_largest_count_bad_input():
    with pytest.raises(TypeError):
        S.largest_count(3, 1, 10)
    with pytest.raises(ValueError):
        S.largest_count(lambda n: True, 0, 10)
    with pytest.raises(ValueError):
        S.largest_count(lambda n: True, 10, 5)


# --------------------------------------------------------------------------------------------
# registration, presets and bad configs


def test_sweeps_registered_with_presets():
    for name in ("transformer_facts", "transformer_architecture"):
        assert name in sweep_names()
        for preset in ("quick", "cpu", "paper"):
            get_sweep(name).config(preset)


def test_paper_presets_follow_the_source():
    f = S.FACTS_PRESETS["paper"]
    assert {m for _, m in f.widths} == {44, 88, 176, 352, 704, 1408}  # App. A.5.1, Fig. 10
    assert (f.d, f.f_lo, f.f_hi, f.f_step, f.train_target) == (128, 1, 65536, 1, 0.99)
    for cfg in (f, S.ARCHITECTURE_PRESETS["paper"]):  # App. A.1.2
        assert (cfg.steps, cfg.batch_size, cfg.lr, cfg.weight_decay) == (4000, 1280, 2e-4, 0.1)
        assert not cfg.notes
    for presets in (S.FACTS_PRESETS, S.ARCHITECTURE_PRESETS):
        assert presets["cpu"].notes and "reduced" in presets["cpu"].notes[0]


def test_grids():
    pts = S.facts_points(S.FACTS_PRESETS["cpu"])
    assert pts[0]["method"] == "gd_ce" and len(pts) == 3 * len(S.FACTS_PRESETS["cpu"].widths)
    arch = S.ARCHITECTURE_PRESETS["cpu"]
    pts = S.architecture_points(arch)
    assert len(pts) == len(arch.widths) * len(arch.variants) * arch.seeds
    assert pts[0]["method"] == "gd_ce"


@pytest.mark.parametrize("bad", [
    {"widths": ()}, {"widths": (("nope", 4),)}, {"widths": (("ntk", 0),)}, {"widths": ("ntk",)},
    {"f_hi": 8, "f_lo": 16}, {"gd_f_hi": 1}, {"f_step": 0}, {"train_target": 1.5},
    {"dtype": "float16"}, {"steps": 0},
])
def test_facts_config_bad(bad):
    with pytest.raises(ValueError):
        dataclasses.replace(S.FACTS_PRESETS["quick"], **bad)


@pytest.mark.parametrize("bad", [{"variants": ()}, {"variants": ("source", "nope")}, {"num_facts": 1},
                                 {"widths": (("nope", 4),)}, {"lr": 0.0}])
def test_architecture_config_bad(bad):
    with pytest.raises(ValueError):
        dataclasses.replace(S.ARCHITECTURE_PRESETS["quick"], **bad)


# --------------------------------------------------------------------------------------------
# the attention variants


def _setup():
    cfg = TINY_ARCH
    point = {"method": "data_dependent", "d": cfg.d, "F": cfg.num_facts, "m": 32, "rep": 0}
    setup = capacity_setup(cfg, point)
    mlp = T.build_mlp("data_dependent", setup["facts_a"], 32, setup["seed_mlp_a"])
    return cfg, setup, mlp


def test_variant_flags():
    cfg, setup, mlp = _setup()
    mcfg, tcfg = model_config(cfg, cfg.d, "cpu"), train_config(cfg, setup["seed_train"])
    for name, (residual, value, output) in S.VARIANTS.items():
        model = S.variant_model(setup["task"], setup["embedding"], mlp, name, mcfg, tcfg)
        assert model.config.attention_residual is residual
        assert model.attention.W_V.requires_grad is value and model.attention.W_O.requires_grad is output
        assert len(model.attention_parameters()) == 2 + value + output
    with pytest.raises(ValueError, match="unknown variant"):
        S.variant_model(setup["task"], setup["embedding"], mlp, "both", mcfg, tcfg)


def test_source_variant_is_inserted_mlp(one_thread):
    cfg, setup, mlp = _setup()
    mcfg, tcfg = model_config(cfg, cfg.d, "cpu"), train_config(cfg, setup["seed_train"])
    ours = S.variant_model(setup["task"], setup["embedding"], mlp, "source", mcfg, tcfg)
    T.train_attention(ours, setup["task"], setup["map_a"], tcfg)
    ref = T.inserted_mlp(setup["task"], setup["embedding"], mlp, setup["map_a"], mcfg, tcfg)
    for p, q in zip(ours.attention.parameters(), ref.attention.parameters()):
        assert torch.equal(p, q)


def test_value_and_output_train_alike(one_thread):
    """At the query position W_V and W_O enter only as the product W_O W_V (both start at I), so
    training one or the other gives the same map: the two counterfactuals are one."""
    cfg, setup, mlp = _setup()
    mcfg, tcfg = model_config(cfg, cfg.d, "cpu"), train_config(cfg, setup["seed_train"])
    maps = []
    for name in ("value", "output"):
        model = S.variant_model(setup["task"], setup["embedding"], mlp, name, mcfg, tcfg)
        T.train_attention(model, setup["task"], setup["map_a"], tcfg)
        maps.append((model.attention.W_O @ model.attention.W_V).detach())
    assert not torch.allclose(maps[0], torch.eye(cfg.d, dtype=maps[0].dtype))  # it did train
    torch.testing.assert_close(maps[0], maps[1], rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------------
# one point of each sweep


def test_facts_point(one_thread):
    point = S.facts_points(TINY_FACTS)[0]
    row = S.facts_point(TINY_FACTS, point, torch.device("cpu"))
    step = TINY_FACTS.f_step
    for name in ("adaptive", "train"):
        F = row[f"F_{name}"]
        assert F != F or (F % step == 0 and TINY_FACTS.f_lo <= F <= TINY_FACTS.f_hi)
    evaluated = [e.split(":") for e in row["evaluated"].split(";")]
    assert len(evaluated) == row["n_trained"]
    acc = {int(F): (float(a), float(t)) for F, a, t in evaluated}
    if row["F_adaptive"] == row["F_adaptive"]:  # the answer met the criterion where evaluated
        assert acc[int(row["F_adaptive"])][0] >= 1.0
    if row["F_train"] == row["F_train"]:
        assert acc[int(row["F_train"])][1] >= TINY_FACTS.train_target
    if row["F_train"] == row["F_train"] and row["F_adaptive"] == row["F_adaptive"]:
        assert row["ratio"] == pytest.approx(row["F_train"] / row["F_adaptive"])
    assert row["W"] == 3 * point["m"] * point["d"]


def test_architecture_point(one_thread):
    pts = S.architecture_points(TINY_ARCH)
    rows = {p["variant"]: S.architecture_point(TINY_ARCH, p, torch.device("cpu")) for p in pts}
    assert rows["source"]["vo_drift"] == 0.0 and rows["residual"]["vo_drift"] == 0.0
    assert rows["value"]["vo_drift"] > 0
    assert rows["value"]["adaptive_accuracy"] == rows["output"]["adaptive_accuracy"]
    for r in rows.values():
        for k in ("train_accuracy", "adaptive_accuracy", "unswapped_accuracy", "mlp_accuracy"):
            assert 0.0 <= r[k] <= 1.0


# --------------------------------------------------------------------------------------------
# analysis


def test_ratio_bounds():
    import math

    import pandas as pd

    rows = pd.DataFrame({
        "F_train": [64.0, 64.0, 1024.0, 32.0, float("nan")],
        "F_adaptive": [32.0, 64.0, 32.0, float("nan"), float("nan")],
        "censored_train": [False, False, True, False, False],
        "censored_adaptive": [False, False, False, False, False],
    })
    out = S.ratio_bounds(rows, f_lo=16, f_step=16)
    assert out.ratio_lo[0] == pytest.approx(64 / 47) and out.ratio_hi[0] == pytest.approx(79 / 32)
    assert out.ratio_lo[1] == pytest.approx(64 / 79) and out.ratio_hi[1] == pytest.approx(79 / 64)
    assert out.ratio_lo[2] == pytest.approx(1024 / 47) and math.isinf(out.ratio_hi[2])  # censored
    assert out.ratio_lo[3] == pytest.approx(32 / 15) and math.isinf(out.ratio_hi[3])  # adaptive < 16
    assert math.isnan(out.ratio_lo[4]) or out.ratio_lo[4] == 0.0
    with pytest.raises(ValueError, match="lack"):
        S.ratio_bounds(rows.drop(columns="F_train"), 16, 16)
    with pytest.raises(ValueError):
        S.ratio_bounds(rows, 0, 16)


def test_architecture_summary():
    import pandas as pd

    rows = pd.DataFrame({
        "method": ["gd_ce"] * 4, "m": [16] * 4, "variant": ["source", "source", "value", "value"],
        "rep": [0, 1, 0, 1], "train_accuracy": [1.0, 1.0, 1.0, 0.9],
        "adaptive_accuracy": [1.0, 0.9, 0.5, 0.8],
    })
    out = S.architecture_summary(rows).set_index("variant")
    assert out.loc["source", "drop_mean"] == 0.0 and out.loc["source", "adaptive_full"] == 1
    assert out.loc["value", "drop_mean"] == pytest.approx(0.3)
    assert out.loc["value", "drop_sd"] == pytest.approx(pd.Series([0.5, 0.1]).std())
    assert out.loc["value", "adaptive_accuracy_min"] == 0.5 and out.loc["value", "trainings"] == 2
    with pytest.raises(ValueError, match="source"):
        S.architecture_summary(rows[rows.variant == "value"])
    with pytest.raises(ValueError, match="lack"):
        S.architecture_summary(rows.drop(columns="rep"))
