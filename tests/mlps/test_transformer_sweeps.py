"""The sweeps of Part II inside the SSFR Transformer (assocmem.mlps.transformer_sweeps): presets and
grids, the usable-key test, the analysis helpers, one point of each sweep, bad input, and the
reproducibility of the committed cpu results."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margins.decoding import output_margins
from assocmem.mlps.mlp import exact_k2_memory
from assocmem.mlps import transformer_sweeps as S
from assocmem.mlps.transformer_setup import stream_seeds
from assocmem.sweeps import check_spread, config_to_json, get_sweep, load_results, point_seed, sweep_names

CPU = torch.device("cpu")


@pytest.fixture
def one_thread():
    """The stored results were computed with one torch thread: use the same arithmetic."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------
# Registration, presets and grids


def test_three_sweeps_registered_with_their_presets():
    for name in ("transformer_usability", "attention_noise", "transformer_capacity"):
        assert name in sweep_names()
        sweep = get_sweep(name)
        for preset in ("quick", "cpu", "paper"):
            sweep.config(preset)


def test_paper_presets_are_the_sources_grids():
    u = S.USABILITY_PRESETS["paper"]
    assert (u.d, u.num_facts, u.junk_vocab, u.junk_length, u.seeds) == (128, 2048, 9, 9, 4)  # App. A.2.2
    assert len(u.widths) == 16 and u.widths[0] == 16 and u.widths[-1] == 256
    n = S.NOISE_PRESETS["paper"]
    assert n.sizes == ((64, 512), (96, 1152), (128, 2048)) and n.junk_lengths == (2, 4, 8, 16) and n.seeds == 4
    c = S.TRANSFORMER_CAPACITY_PRESETS["paper"]
    assert c.d == 128 and c.num_facts == (64, 128, 256, 512, 1024, 2048, 4096, 8192)  # App. A.4.3
    assert (c.junk_length, c.junk_vocab, c.lo, c.hi, c.step, c.train_target) == (9, 9, 1, 65536, 16, 0.99)
    for cfg in (u, n, c):  # App. A.1.2
        assert (cfg.steps, cfg.batch_size, cfg.lr, cfg.weight_decay) == (4000, 1280, 2e-4, 0.1)
        assert not cfg.notes
    for presets in (S.USABILITY_PRESETS, S.NOISE_PRESETS, S.TRANSFORMER_CAPACITY_PRESETS):
        assert presets["cpu"].notes and "reduced" in presets["cpu"].notes[0]


def test_grids():
    assert S.usability_points(S.USABILITY_PRESETS["cpu"]) == [{"d": 64, "F": 512, "J": 9, "rep": r} for r in (0, 1, 2)]
    pts = S.noise_points(S.NOISE_PRESETS["cpu"])
    assert len(pts) == 2 * 4 * 3 and pts[0] == {"d": 32, "F": 128, "J": 2, "rep": 0}
    cfg = S.TRANSFORMER_CAPACITY_PRESETS["cpu"]
    pts = S.transformer_capacity_points(cfg)
    assert all(p["F"] <= cfg.gd_max_facts for p in pts if p["method"].startswith("gd"))
    assert {(p["method"], p["F"], p["rep"]) for p in pts if p["method"] == "ntk"} == {
        ("ntk", F, r) for F in cfg.num_facts for r in range(3)}


@pytest.mark.parametrize("presets", [S.USABILITY_PRESETS, S.NOISE_PRESETS, S.TRANSFORMER_CAPACITY_PRESETS])
def test_stored_presets_carry_three_trainings(presets):
    """A trained result is a sample: the stored presets train every point three times (the spread
    a rerun is checked against; README, "What is the same on every machine")."""
    for preset in ("quick", "cpu"):
        assert presets[preset].seeds >= 3, preset


def test_capacity_repetitions_are_independent_trainings():
    cfg = S.TRANSFORMER_CAPACITY_PRESETS["quick"]
    p0, p1 = (p for p in S.transformer_capacity_points(cfg)[:2])
    assert (p0["method"], p0["F"]) == (p1["method"], p1["F"]) and (p0["rep"], p1["rep"]) == (0, 1)
    a, b = S.capacity_setup(cfg, p0), S.capacity_setup(cfg, p1)
    assert not torch.equal(a["embedding"], b["embedding"]) and a["seed_train"] != b["seed_train"]


# --------------------------------------------------------------------------------------------
# The usable-key test


def test_sphere_perturbations_lie_on_the_sphere_at_the_given_chord():
    keys = make_fact_set(10, 6, seed=1).keys
    eps = torch.linspace(0.0, 2.0, 10, dtype=torch.float64)
    q = S.sphere_perturbations(keys, eps, draws=3, seed=4)
    assert q.shape == (3, 10, 6)
    torch.testing.assert_close(q.norm(dim=-1), torch.ones(3, 10, dtype=torch.float64), rtol=0, atol=1e-14)
    torch.testing.assert_close((q - keys).norm(dim=-1), eps.expand(3, 10), rtol=0, atol=1e-14)
    torch.testing.assert_close(q[:, 0], keys[0].expand(3, 6), rtol=0, atol=0)  # eps = 0: the key itself
    torch.testing.assert_close(q[:, -1], -keys[-1].expand(3, 6), rtol=0, atol=1e-14)  # eps = 2: antipode
    assert torch.equal(q, S.sphere_perturbations(keys, eps, draws=3, seed=4))


def test_usable_keys_without_noise_are_the_stored_keys():
    facts = make_fact_set(40, 6, seed=2)  # F > d(d+1)/2 = 21: the exact-K2 memory misses some facts
    mlp = exact_k2_memory(facts)
    margins = output_margins(mlp, facts)
    assert (margins > 0).any() and (margins <= 0).any()
    usable, drop = S.usable_keys(mlp, facts, torch.zeros(40, dtype=torch.float64), draws=2, seed=0)
    assert torch.equal(usable, margins > 0)
    torch.testing.assert_close(drop, torch.zeros(40, dtype=torch.float64), rtol=0, atol=1e-12)
    # more noise never makes a key usable in this draw's directions... but it removes some
    big, _ = S.usable_keys(mlp, facts, torch.full((40,), 1.5, dtype=torch.float64), draws=4, seed=0)
    assert big.sum() < usable.sum()


def test_bad_input_to_the_helpers():
    keys = make_fact_set(4, 3).keys
    with pytest.raises(ValueError, match="eps must have shape"):
        S.sphere_perturbations(keys, torch.zeros(3), 1, 0)
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        S.sphere_perturbations(keys, torch.full((4,), 2.5), 1, 0)
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        S.sphere_perturbations(keys, torch.tensor([0.1, math.nan, 0.1, 0.1]), 1, 0)
    with pytest.raises(ValueError, match="draws"):
        S.sphere_perturbations(keys, torch.zeros(4), 0, 0)
    with pytest.raises(ValueError, match="shape"):
        S.sphere_perturbations(keys[:, :1], torch.zeros(4), 1, 0)


@pytest.mark.parametrize("make, kwargs, match", [
    (S.UsabilityConfig, {"junk_length": -1}, "junk_length"),
    (S.UsabilityConfig, {"widths": (4, 2)}, "increasing"),
    (S.UsabilityConfig, {"widths": ()}, "widths"),
    (S.UsabilityConfig, {"methods": ("ntk",)}, "valid methods"),
    (S.UsabilityConfig, {"num_facts": 1}, "num_facts"),
    (S.UsabilityConfig, {"lr": 0.0}, "lr"),
    (S.UsabilityConfig, {"dtype": "float16"}, "dtype"),
    (S.UsabilityConfig, {"noise_draws": 0}, "noise_draws"),
    (S.NoiseConfig, {"junk_lengths": (0, 2)}, "junk length"),
    (S.NoiseConfig, {"sizes": ((8,),)}, "pairs"),
    (S.NoiseConfig, {"sizes": ()}, "sizes"),
    (S.NoiseConfig, {"steps": 0}, "steps"),
    (S.TransformerCapacityConfig, {"methods": ("hopfield",)}, "valid methods"),
    (S.TransformerCapacityConfig, {"hi": 4, "step": 8}, "hi"),
    (S.TransformerCapacityConfig, {"train_target": 1.5}, "train_target"),
    (S.TransformerCapacityConfig, {"train_target": True}, "train_target"),
    (S.TransformerCapacityConfig, {"num_facts": ()}, "num_facts"),
    (S.TransformerCapacityConfig, {"seed": 1.5}, "seed"),
])
def test_configs_refuse_bad_fields(make, kwargs, match):
    base = {S.UsabilityConfig: dict(d=8, num_facts=8, junk_vocab=2, junk_length=2, widths=(2, 4)),
            S.NoiseConfig: dict(sizes=((8, 8),)),
            S.TransformerCapacityConfig: dict(d=8, num_facts=(8,))}[make]
    with pytest.raises(ValueError, match=match):
        make(**{**base, **kwargs})


# --------------------------------------------------------------------------------------------
# One point of each sweep, at toy scale


def test_one_point_of_each_sweep(one_thread):
    u = dataclasses.replace(S.USABILITY_PRESETS["quick"], widths=(2, 8))
    rows = S.usability_point(u, S.usability_points(u)[0], CPU)
    assert [r["m"] for r in rows] == [2, 8] and all(r["W"] == 3 * r["m"] * u.d for r in rows)
    for r in rows:
        assert 0 <= r["usable_fraction"] <= 1 and 0 <= r["transformer_accuracy"] <= 1
        assert r["mlp_accuracy"] == 1.0 or r["mlp_min_margin"] <= 0
        assert r["noise_ceiling"] >= r["noise_mean"] >= 0
        assert 0 <= r["baseline_key_agreement"] <= 1 and 0 <= r["identity_accuracy_heldout"] <= 1
        assert 0 <= r["usable_differs_from_stored"] <= u.num_facts and r["drop_max"] >= r["drop_median"]
    n = S.NOISE_PRESETS["quick"]
    row = S.noise_point(n, S.noise_points(n)[0], CPU)
    assert row["V_J"] == 2 and row["noise_ceiling"] >= row["noise_q99"] >= row["noise_q50"] >= 0
    c = dataclasses.replace(S.TRANSFORMER_CAPACITY_PRESETS["quick"], num_facts=(16,), methods=("whitened",))
    row = S.transformer_capacity_point(c, S.transformer_capacity_points(c)[0], CPU)
    assert row["n_trained"] <= row["n_adaptive"] + row["n_train"]
    if row["found_adaptive"]:
        assert row["m_adaptive"] % c.step == 0 and row["W_adaptive"] == 3 * row["m_adaptive"] * c.d


# --------------------------------------------------------------------------------------------
# The committed results


POINT_KEYS = {"transformer_usability": ["d", "F", "J", "rep"], "attention_noise": ["d", "F", "J", "rep"],
              "transformer_capacity": ["method", "d", "F", "rep"]}


@pytest.mark.parametrize("name", sorted(POINT_KEYS))
def test_committed_cpu_results_match_the_preset(name):
    sweep = get_sweep(name)
    cfg = sweep.config("cpu")
    frame = load_results(name, "cpu", config=config_to_json(cfg))
    grid = sweep.points(cfg)
    keys = POINT_KEYS[name]
    stored = frame[keys].drop_duplicates().to_dict("records")
    assert sorted(map(str, stored)) == sorted(str({k: p[k] for k in keys}) for p in grid)
    for p in grid:
        got = frame.loc[(frame[keys] == pd.Series({k: p[k] for k in keys})).all(axis=1), "seed"]
        assert (got == point_seed(cfg, p)).all()


def test_reproducibility_one_sampled_committed_noise_point(one_thread):
    """Recompute one sampled row of the committed ``attention_noise`` cpu results (a d = 32 point:
    one attention pretraining, a few seconds) and check it against the spread of the point's
    stored trainings.

    The row comes out of 600 AdamW steps. On the CPU that stored it, with one thread and float64,
    it is recomputed to rounding; on another CPU (another SIMD width or BLAS kernel) the sums run
    in another order and the training ends elsewhere, as far as a training from another seed may.
    So the row is checked by :func:`assocmem.sweeps.check_spread` with the chapter's rules
    (:func:`assocmem.mlps.transformer_rerun.agreement_rules`: the 99 % prediction interval of one
    further training around the three stored repetitions of the point), never against one
    training's digits.
    """
    from assocmem.mlps.transformer_rerun import agreement_rules

    cfg = S.NOISE_PRESETS["cpu"]
    frame = load_results("attention_noise", "cpu", config=config_to_json(cfg))
    small = frame[frame["d"] == 32]
    row = small.sample(n=1, random_state=np.random.RandomState(2026)).iloc[0]
    point = {k: int(row[k]) for k in ("d", "F", "J", "rep")}
    live = pd.DataFrame([{k: v for k, v in point.items() if k != "rep"} | S.noise_point(cfg, point, CPU)])
    live = live[[c for c in frame.columns if c in live.columns]]
    check_spread(live, frame, **agreement_rules("attention_noise", frame), what=f"recomputed {point}")
    print(f"recomputed {point}: ceiling {float(live.noise_ceiling.iloc[0]):.4f}")


def test_reproducibility_one_committed_capacity_point(one_thread):
    """Recompute training 0 of one committed ``transformer_capacity`` quick point (the whitened
    construction at F = 16: nine attention trainings, about a second) and check it against the
    point's three stored trainings.

    A capacity search is a sample: every width it tries trains an attention, and on another CPU
    the training sums in another order, so one flipped sequence can send the search down another
    path. The row is therefore checked against the spread of the stored trainings
    (:func:`assocmem.sweeps.check_spread` by
    :func:`assocmem.mlps.transformer_rerun.agreement_rules`), never against one training's
    digits. (On the machine that stored the results it is recomputed exactly: the seed of
    training 0 does not depend on how many trainings a run has.)
    """
    from assocmem.mlps.transformer_rerun import agreement_rules
    from assocmem.sweeps import check_spread

    cfg = S.TRANSFORMER_CAPACITY_PRESETS["quick"]
    stored = load_results("transformer_capacity", "quick", config=config_to_json(cfg))
    point = {"method": "whitened", "d": cfg.d, "F": 16, "rep": 0}
    one = dataclasses.replace(cfg, seeds=1)
    assert point_seed(one, point) == point_seed(cfg, point)
    new = S.transformer_capacity_point(cfg, point, CPU)
    live = pd.DataFrame([{**{k: v for k, v in point.items() if k != "rep"}, **new,
                          "seed": point_seed(cfg, point), "wall_time_s": 0.0}])
    summary = check_spread(live, stored, **agreement_rules("transformer_capacity", stored, config=cfg),
                           what="recomputed transformer_capacity point")
    assert (summary["rows outside"] == 0).all()


def test_usable_keys_are_judged_on_held_out_contexts(one_thread, monkeypatch):
    """The usable-key test's noise comes from contexts the Transformer is not scored on: the seeds
    passed to ``attention_noise`` and ``ssfr_correct`` differ, and the held-out stream extends the
    point's streams without changing the first six (the embeddings, maps, MLPs, training, scoring)."""
    from assocmem.mlps import transformer as T

    seen = {"noise": [], "correct": []}
    real_noise, real_correct = T.attention_noise, T.ssfr_correct
    monkeypatch.setattr(T, "attention_noise", lambda *a: seen["noise"].append(a[3]) or real_noise(*a))
    monkeypatch.setattr(T, "ssfr_correct", lambda *a: seen["correct"].append(a[4]) or real_correct(*a))
    u = dataclasses.replace(S.USABILITY_PRESETS["quick"], widths=(4,), steps=5)
    S.usability_point(u, S.usability_points(u)[0], CPU)
    streams = stream_seeds(point_seed(u, S.usability_points(u)[0]), 7)
    scored, held = streams[4], streams[6]
    assert seen["correct"] == [scored] and seen["noise"] == [held, scored]  # eps from held; losses from scored


def test_the_usable_key_test_runs_before_the_swap_moves_the_mlp(one_thread, monkeypatch):
    """with_mlp moves the MLP it is given to the model's device in place, while the facts stay on
    the CPU: the usable-key test must have run by then. Stand-in for a GPU: once the swapped model
    is scored, the MLP is moved to the meta device, as the swap would have moved it to CUDA."""
    from assocmem.mlps import transformer as T

    real_correct = T.ssfr_correct

    def correct_then_move(model, *args):
        out = real_correct(model, *args)
        model.mlp.to("meta")
        return out

    tested_on = []  # where the MLP's weights were when the usable-key test read it
    real_usable = S.usable_keys

    def usable_keys(mlp, facts, *args):
        tested_on.append((next(mlp.parameters()).device, facts.keys.device))
        return real_usable(mlp, facts, *args)

    monkeypatch.setattr(T, "ssfr_correct", correct_then_move)
    monkeypatch.setattr(S, "usable_keys", usable_keys)
    u = dataclasses.replace(S.USABILITY_PRESETS["quick"], widths=(4,), steps=5)
    rows = S.usability_point(u, S.usability_points(u)[0], CPU)
    assert [r["m"] for r in rows] == [4] and 0 <= rows[0]["usable_fraction"] <= 1
    assert tested_on == [(CPU, CPU)]  # (a CPU matmul with meta weights returns garbage, not an error)


def test_usable_keys_refuses_an_mlp_on_another_device():
    facts = make_fact_set(6, 4, tied=False, seed=0)
    mlp = torch.nn.Linear(4, 4, dtype=torch.float64).to("meta")
    with pytest.raises(ValueError, match="the MLP's weights are on meta but the facts are on cpu"):
        S.usable_keys(mlp, facts, torch.zeros(6, dtype=torch.float64), 2, 0)


# --------------------------------------------------------------------------------------------
# The source's attention recipe, the lag test and injected noise (issue 28)


def test_recipe_presets_use_the_sources_attention_optimiser_at_the_cpu_scale():
    for presets in (S.USABILITY_PRESETS, S.NOISE_PRESETS):
        r, c = presets["recipe"], presets["cpu"]
        assert (r.steps, r.batch_size, r.lr, r.weight_decay) == (4000, 1280, 2e-4, 0.1)  # App. A.1.2
        assert r.seeds >= 3 and r.dtype == "float64" and "recipe" in r.notes[0]
    u, c = S.USABILITY_PRESETS["recipe"], S.USABILITY_PRESETS["cpu"]
    # only the attention's optimiser differs from the short recipe
    same = dataclasses.replace(u, steps=c.steps, batch_size=c.batch_size, lr=c.lr, notes=c.notes)
    assert same == c
    pts = S.noise_points(S.NOISE_PRESETS["recipe"])
    assert pts[0] == {"d": 64, "F": 512, "J": 2, "rep": 0} and {p["J"] for p in pts} == {2, 16}


def test_injection_columns_and_config_checks():
    assert S.injection_columns(0.05) == ("acc_inj_0.05", "usable_inj_0.05")
    base = S.USABILITY_PRESETS["quick"]
    for bad in ((0.2, 0.1), (0.0,), (2.5,)):
        with pytest.raises(ValueError, match="injected"):
            dataclasses.replace(base, injected_noise=bad)


def test_a_usability_point_with_injected_noise(one_thread):
    """Injected noise costs accuracy, never gains it on average at a large chord; the theorem's
    threshold is positive exactly where the MLP stores every fact."""
    u = dataclasses.replace(S.USABILITY_PRESETS["quick"], widths=(2, 16), injected_noise=(0.01, 1.0))
    rows = S.usability_point(u, S.usability_points(u)[0], CPU)
    for r in rows:
        assert 0 <= r["acc_inj_0.01"] <= 1 and 0 <= r["usable_inj_1"] <= r["usable_inj_0.01"]
        assert r["usable_inj_1"] <= r["survive_inj_1"] <= 1
        assert r["acc_inj_1"] < r["transformer_accuracy"]
        assert (r["thm_eps"] > 0) == (r["mlp_min_margin"] > 0)
        assert r["lipschitz_max"] > 0 and 0 <= r["value_coherence"] <= 1
    wide = rows[-1]
    assert wide["mlp_min_margin"] > 0 and wide["thm_lost"] == 0
