"""The capacity sweep of Part II (assocmem.mlps.capacity_sweeps): grid and presets, fact sets,
the capacity search, result rows, analysis helpers, faults, and the reproducibility of the
committed results."""

import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.__main__ import main
from assocmem.mlps.facts import make_fact_set, spike
from assocmem.mlps.margins.decoding import accuracy
from assocmem.sweeps import (
    ResultsPaths,
    UnknownNameError,
    config_to_json,
    get_sweep,
    load_results,
    point_seed,
    read_provenance,
    run_sweep,
    sweep_names,
)
from assocmem.mlps.capacity_sweeps import (
    CAPACITY_PRESETS,
    GEOMETRIES,
    METHODS,
    PAPER_ALPHAS,
    CapacityConfig,
    build_memory,
    capacity_fact_set,
    capacity_point,
    capacity_points,
    capacity_search,
    counting_lower_bound,
    fact_seed,
    gd_agreement_rules,
    growth_exponents,
    method_ratios,
    num_facts,
    spike_direction,
    weights_seed,
)

@pytest.fixture
def one_thread():
    """The stored results were computed with one torch thread per worker: use the same arithmetic."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------
# Registration, presets and grid


def test_the_sweep_is_discovered_with_its_presets():
    assert "capacity" in sweep_names()
    sw = get_sweep("capacity")
    assert set(sw.presets) == {"quick", "cpu", "paper"}
    assert sw.run_point is capacity_point and sw.points is capacity_points


def test_paper_preset_is_the_seed_grid():
    cfg = CAPACITY_PRESETS["paper"]
    assert cfg.dims == (64, 90, 128) and cfg.alphas == PAPER_ALPHAS
    assert (cfg.lo, cfg.hi, cfg.beta, cfg.gd_epochs, cfg.gd_lr) == (1, 65536, 1.5, 10000, 1e-3)
    assert cfg.notes == ()  # no deviation from the protocol
    grid = get_sweep("capacity").grid(cfg)
    assert len(grid) == (len(METHODS) - 1 + cfg.gd_trainings) * len(GEOMETRIES) * 3 * 7
    assert cfg.gd_trainings == 3
    assert {p["F"] for p in grid if p["d"] == 64} == {128, 256, 512, 1024, 2048, 3072, 4096}


def test_cpu_and_quick_presets_label_their_deviations():
    cpu, quick = CAPACITY_PRESETS["cpu"], CAPACITY_PRESETS["quick"]
    assert cpu.dims == (64,) and cpu.alphas == PAPER_ALPHAS and cpu.gd_epochs == 10000
    assert cpu.notes and "1/16" in cpu.notes[0]
    gd = [p for p in capacity_points(cpu) if p["method"] == "gd"]
    assert {p["alpha"] for p in gd} == {1 / 32, 1 / 16}
    assert sorted(p["training"] for p in gd) == [0] * 4 + [1] * 4 + [2] * 4
    assert {p["training"] for p in capacity_points(cpu) if p["method"] != "gd"} == {0}
    assert quick.dims == (32,) and "gd" not in quick.methods and "GD" in quick.notes[0]
    assert capacity_points(cpu)[0]["method"] == "gd"  # the slow points go first


@pytest.mark.parametrize("alpha, d, F", [(1 / 8, 90, 1013), (1 / 32, 90, 253), (1.0, 64, 4096), (1 / 32, 2, 1)])
def test_num_facts_rounds_half_up(alpha, d, F):
    assert num_facts(alpha, d) == F


def test_bad_configs_list_the_valid_names():
    with pytest.raises(ValueError, match="valid methods: gd, ntk"):
        CapacityConfig(dims=(8,), alphas=(0.5,), methods=("sgd",))
    with pytest.raises(ValueError, match="valid geometries: isotropic, anisotropic"):
        CapacityConfig(dims=(8,), alphas=(0.5,), geometries=("spiky",))
    with pytest.raises(ValueError, match="dims"):
        CapacityConfig(dims=(1,), alphas=(0.5,))
    with pytest.raises(ValueError, match="alphas"):
        CapacityConfig(dims=(8,), alphas=(0.0,))


def test_unknown_sweep_or_preset_lists_the_valid_ones(capsys):
    with pytest.raises(UnknownNameError, match="capacity"):
        get_sweep("capacty")
    with pytest.raises(UnknownNameError, match="valid presets: cpu, paper, quick"):
        get_sweep("capacity").config("gpu")
    assert main(["sweep", "capacity", "--preset", "gpu"]) == 2
    assert "valid presets: cpu, paper, quick" in capsys.readouterr().err
    assert main(["sweep", "capacty"]) == 2
    assert "capacity" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Fact sets


def test_fact_sets_are_shared_across_methods_and_the_spike_keeps_them_tied():
    cfg = CAPACITY_PRESETS["quick"]
    iso = capacity_fact_set(cfg, 16, 40, "isotropic")
    again = capacity_fact_set(cfg, 16, 40, "isotropic")
    assert torch.equal(iso.keys, again.keys) and torch.equal(iso.values, again.values)
    ref = make_fact_set(40, 16, tied=True, seed=fact_seed(cfg, 16, 40))
    assert torch.equal(iso.keys, ref.keys)
    aniso = capacity_fact_set(cfg, 16, 40, "anisotropic")
    u = spike_direction(cfg, 16)
    assert torch.allclose(aniso.keys, spike(iso.keys, 1.5, u), atol=0, rtol=0)
    assert torch.allclose(aniso.values, spike(iso.values, 1.5, u), atol=0, rtol=0)
    # tied: every value row is a key row (the permutation survives the spike)
    match = (aniso.values @ aniso.keys.T).argmax(dim=1)
    assert torch.allclose(aniso.values, aniso.keys[match], atol=1e-15)
    assert torch.equal(aniso.mapping, iso.mapping)
    assert fact_seed(cfg, 16, 40) != fact_seed(cfg, 16, 41)
    with pytest.raises(ValueError, match="valid geometries"):
        capacity_fact_set(cfg, 16, 40, "round")


@pytest.mark.parametrize("method", METHODS)
def test_every_memory_counts_three_m_d_parameters(method):
    facts = make_fact_set(12, 6, seed=1)
    model = build_memory(method, facts, 5, seed=2, epochs=2)
    assert model.num_parameters == 3 * 5 * 6
    assert model(facts.keys.to(next(model.parameters()).dtype)).shape == (12, 6)  # forward does not cast


@pytest.mark.parametrize("method", ["ntk", "unwhitened"])
def test_block_built_memories_equal_the_direct_ones(method):
    facts = capacity_fact_set(CAPACITY_PRESETS["quick"], 8, 37, "anisotropic")
    direct = build_memory(method, facts, 50, seed=3)
    blocks = build_memory(method, facts, 50, seed=3, block_entries=50 * 4)  # blocks of 4 facts
    queries = torch.randn(20, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for a, b in zip(direct.parameters(), blocks.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(direct(queries), blocks(queries), rtol=1e-11, atol=1e-15)


def test_build_memory_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="valid methods"):
        build_memory("hopfield", make_fact_set(4, 4), 2)
    with pytest.raises(ValueError, match="valid methods"):
        capacity_search(make_fact_set(4, 4), "hopfield")


# --------------------------------------------------------------------------------------------
# The search


@pytest.mark.parametrize("method", ["whitened", "data_dependent", "unwhitened"])
def test_search_answer_obeys_the_documented_rule(method):
    facts = make_fact_set(24, 16, seed=3)  # F well below d (d + 1) / 2, the rank of bilinear features
    res = capacity_search(facts, method, seed=4)
    assert res.found and res.accuracy == 1.0
    acc = lambda m: accuracy(build_memory(method, facts, m, seed=4), facts)  # noqa: E731
    assert acc(res.m) == 1.0 and acc(res.m + 1) == 1.0 and acc(res.m + 2) == 1.0
    assert res.m == 1 or acc(res.m - 1) < 1.0
    # every evaluation is what a fresh build at that width gives (deterministic in m)
    for m, a in res.evaluations[:4]:
        assert acc(m) == a


def test_whitened_search_stores_from_m_equal_f_at_the_latest():
    # the dual whitened readout interpolates once m >= F (if F <= d (d + 1) / 2, the dimension of
    # the quadratic forms that bilinear features span), so the answer is at most F
    facts = make_fact_set(40, 12, seed=5)
    res = capacity_search(facts, "whitened", seed=1)
    assert res.found and res.m <= 40


def test_search_target_below_one_needs_no_more_width():
    # App. A.5.3's 98 % recall threshold: the width found reaches it, its predecessor misses it,
    # and it is at most the width that stores every fact
    facts = make_fact_set(40, 12, seed=7)
    full = capacity_search(facts, "whitened", seed=2)
    part = capacity_search(facts, "whitened", seed=2, target=0.9)
    assert part.target == 0.9 and part.accuracy >= 0.9 and part.m <= full.m
    assert dict(part.evaluations).get(part.m - 1, 0.0) < 0.9


def test_gd_search_runs_and_reports_its_epochs():
    # a toy run (a large learning rate so that 200 epochs suffice); the protocol is tested elsewhere
    cfg = CapacityConfig(dims=(8,), alphas=(1 / 8,), methods=("gd",), geometries=("isotropic",), gd_epochs=200,
                         gd_lr=0.05, hi=16)
    point = capacity_points(cfg)[0]
    row = capacity_point(cfg, point, torch.device("cpu"))
    assert row["epochs"] == 200 and row["found"] and row["W"] == 3 * row["m"] * 8


def test_rows_of_a_miss_have_no_width():
    cfg = CapacityConfig(dims=(8,), alphas=(1.0,), methods=("unwhitened",), geometries=("anisotropic",), hi=8)
    point = capacity_points(cfg)[0]
    row = capacity_point(cfg, point, torch.device("cpu"))
    assert row["m"] is None and row["W"] is None and row["found"] is False and row["accuracy"] is None
    assert 0 < row["best_accuracy"] < 1 and row["beta"] == 1.5 and row["epochs"] is None
    assert row["fact_seed"] == fact_seed(cfg, 8, 64)


# --------------------------------------------------------------------------------------------
# Analysis helpers


def test_counting_lower_bound():
    assert counting_lower_bound(1024) == pytest.approx(640.0, rel=1e-15)
    assert counting_lower_bound(1024, bits=32) == pytest.approx(320.0, rel=1e-15)
    assert counting_lower_bound(256, V=16, bits=8) == pytest.approx(128.0, rel=1e-15)
    np.testing.assert_allclose(counting_lower_bound([2, 4], bits=1), [2.0, 8.0], rtol=1e-15)
    from assocmem.mlps.counting import min_parameters_bound  # the formula lives there

    F = np.array([32, 128, 1024])
    np.testing.assert_array_equal(counting_lower_bound(F), min_parameters_bound(F, F, 16))
    assert counting_lower_bound(1024) == min_parameters_bound(1024, 1024, 16)
    with pytest.raises(ValueError):
        counting_lower_bound(0)
    with pytest.raises(ValueError):
        counting_lower_bound(8, bits=0)


def _frame(Ws, method="whitened", geometry="isotropic", d=64, Fs=(128, 256, 512, 1024, 2048)):
    rows = []
    for F, W in zip(Fs, Ws):
        rows.append({"method": method, "geometry": geometry, "d": d, "alpha": F / d**2, "F": F,
                     "W": W, "found": W is not None})
    return pd.DataFrame(rows)


def test_growth_exponents_of_exact_power_laws():
    Fs = np.array([128, 256, 512, 1024, 2048])
    frame = pd.concat([_frame(list(7.0 * Fs * np.log(Fs)), method="flogf"),
                       _frame(list(0.5 * Fs**2.0), method="square"),
                       _frame([100.0, None, None, None, None], method="one")])
    g = growth_exponents(frame).set_index("method")
    assert g.loc["flogf", "excess"] == pytest.approx(0.0, abs=1e-12)
    assert g.loc["flogf", "se"] < 0.01  # F log F is nearly a power law over this range
    assert g.loc["square", "exponent"] == pytest.approx(2.0, abs=1e-12)
    assert g.loc["square", "se"] == pytest.approx(0.0, abs=1e-12)
    assert 1.0 < g.loc["flogf", "exponent_flogf"] < 1.2
    assert g.loc["one", "n"] == 1 and g.loc["one", "n_missing"] == 4 and math.isnan(g.loc["one", "exponent"])


def test_method_ratios_with_misses():
    a = _frame([1000.0, None, None], method="ntk", Fs=(128, 256, 512))
    b = _frame([100.0, 200.0, None], method="data_dependent", Fs=(128, 256, 512))
    r = method_ratios(pd.concat([a, b]), "ntk", "data_dependent", hi=100)
    assert r["bound"].tolist() == ["exact", "lower", "none"]
    assert r["ratio"].iloc[0] == pytest.approx(10.0)
    assert r["ratio"].iloc[1] == pytest.approx(3 * 100 * 64 / 200.0)
    assert math.isnan(r["ratio"].iloc[2])
    r2 = method_ratios(pd.concat([a, b]), "data_dependent", "ntk", hi=100)
    assert r2["bound"].tolist() == ["exact", "upper", "none"]


# --------------------------------------------------------------------------------------------
# Faults: a sweep killed mid-way resumes and finishes with every point exactly once


_KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    from assocmem.sweeps import run_sweep
    from assocmem.mlps.capacity_sweeps import CapacityConfig
    cfg = CapacityConfig(dims=(16,), alphas=(1 / 16, 1 / 8, 1 / 2, 1.0), methods=("whitened", "unwhitened"),
                         geometries=("anisotropic",), hi=8192)
    run_sweep("capacity", "tiny", config=cfg, results_dir=sys.argv[1], device="cpu", progress=False)
    """
)


def _committed(journal) -> int:
    if not journal.exists():
        return 0
    return max(0, len(journal.read_bytes().split(b"\n")) - 2)  # header line, then one per point


def test_a_killed_capacity_sweep_resumes_with_every_point_once(tmp_path):
    script = tmp_path / "tiny_capacity.py"
    script.write_text(_KILL_SCRIPT)
    results = tmp_path / "results"
    journal = ResultsPaths.of(results, "capacity", "tiny").journal
    env = {**os.environ, "ASSOCMEM_QUIET": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, str(script), str(results)], env=env)
    try:
        deadline = time.monotonic() + 120
        while _committed(journal) < 4:  # the four whitened points are quick; unwhitened ones are not
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "the sweep did not commit four points in time"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    before = _committed(journal)
    assert 4 <= before < 8
    cfg = CapacityConfig(dims=(16,), alphas=(1 / 16, 1 / 8, 1 / 2, 1.0), methods=("whitened", "unwhitened"),
                         geometries=("anisotropic",), hi=8192)
    run = run_sweep("capacity", "tiny", config=cfg, results_dir=results, device="cpu", progress=False)
    assert run.skipped == before and run.computed == 8 - before
    frame = load_results("capacity", "tiny", results)
    keys = list(zip(frame["method"], frame["alpha"]))
    assert len(keys) == 8 and len(set(keys)) == 8
    assert [s["status"] for s in read_provenance("capacity", "tiny", results)["sessions"]] == ["killed", "finished"]
    fresh = run_sweep("capacity", "tiny", config=cfg, persist=False, device="cpu", progress=False).frame
    pd.testing.assert_frame_equal(frame.drop(columns="wall_time_s"), fresh.drop(columns="wall_time_s"))


# --------------------------------------------------------------------------------------------
# The committed results


def test_committed_cpu_results_match_the_preset():
    cfg = CAPACITY_PRESETS["cpu"]
    frame = load_results("capacity", "cpu", config=config_to_json(cfg))
    grid = capacity_points(cfg)
    assert len(frame) == len(grid)
    assert frame[["method", "geometry", "d", "F", "training"]].to_dict("records") == [
        {k: p[k] for k in ("method", "geometry", "d", "F", "training")} for p in grid
    ]
    found = frame["found"].astype(bool)
    assert (frame.loc[found, "W"] == 3 * frame.loc[found, "m"] * frame.loc[found, "d"]).all()
    assert frame.loc[~found, "m"].isna().all()
    assert (frame["seed"] == [point_seed(cfg, p) for p in grid]).all()
    assert (frame["weights_seed"] == [weights_seed(cfg, p) for p in grid]).all()


def test_reproducibility_two_sampled_committed_rows(one_thread):
    """Recompute two rows of the committed cpu results (sampled among cheap closed forms) and get
    the same width, evaluations and violations."""
    cfg = CAPACITY_PRESETS["cpu"]
    frame = load_results("capacity", "cpu", config=config_to_json(cfg))
    cheap = frame[frame["method"].isin(["whitened", "data_dependent"]) & (frame["F"] <= 1024)]
    picks = cheap.sample(n=2, random_state=np.random.RandomState(2026)).to_dict("records")
    assert len({(r["method"], r["geometry"], r["F"]) for r in picks}) == 2
    for row in picks:
        point = {k: row[k] for k in ("method", "geometry", "d", "alpha", "F", "training")}
        point = {**point, "d": int(point["d"]), "F": int(point["F"]), "alpha": float(point["alpha"]),
                 "training": int(point["training"])}
        assert point in capacity_points(cfg)
        new = capacity_point(cfg, point, torch.device("cpu"))
        assert new["m"] == int(row["m"]) and new["W"] == int(row["W"])
        assert new["n_evaluations"] == row["n_evaluations"]
        assert new["monotone_violations"] == row["monotone_violations"]
        print(f"recomputed {point}: m = {new['m']}")


def test_training_zero_keeps_the_seed_of_the_point_and_trainings_are_independent():
    cfg = CAPACITY_PRESETS["cpu"]
    point = {"method": "gd", "geometry": "isotropic", "d": 64, "alpha": 1 / 32, "F": 128}
    seeds = [weights_seed(cfg, {**point, "training": t}) for t in range(3)]
    assert seeds[0] == weights_seed(cfg, point) == point_seed(cfg, point)
    assert len(set(seeds)) == 3
    with pytest.raises(ValueError, match="training"):
        weights_seed(cfg, {**point, "training": -1})
    with pytest.raises(ValueError, match="training"):
        weights_seed(cfg, {**point, "training": 1.5})
    with pytest.raises(TypeError, match="CapacityConfig"):
        gd_agreement_rules("cpu")


def test_committed_gd_rows_store_three_trainings_and_a_rerun_is_checked_against_their_spread(one_thread):
    """One committed GD search recomputed (the cheapest stored training) lies within the spread
    of its point's three trainings; the same row moved by four widths does not."""
    from assocmem.sweeps import RowsDisagree, check_spread

    cfg = CAPACITY_PRESETS["cpu"]
    frame = load_results("capacity", "cpu", config=config_to_json(cfg))
    gd = frame[frame.method == "gd"]
    assert (gd.groupby(["geometry", "F"]).training.nunique() == 3).all()
    row = gd.loc[gd.wall_time_s.idxmin()]
    point = {"method": "gd", "geometry": row.geometry, "d": int(row.d), "alpha": float(row.alpha),
             "F": int(row.F), "training": int(row.training)}
    new = {**point, **capacity_point(cfg, point, torch.device("cpu"))}
    live = pd.DataFrame([new]).drop(columns="training")
    rules = gd_agreement_rules(cfg)
    check_spread(live, frame[frame.method == "gd"], what="recomputed GD search", **rules)
    worse = live.assign(m=live.m + 4, W=live.W + 4 * 3 * live.d)
    with pytest.raises(RowsDisagree):
        check_spread(worse, frame[frame.method == "gd"], what="shifted GD search", **rules)


def test_reference_search_finds_the_fast_searchs_width():
    # Where accuracy is monotone along both searches' evaluations, plain bisection with the plain
    # construction and the galloping search with the fast one report the same width.
    from assocmem.mlps.capacity_sweeps import capacity_search_reference

    facts = make_fact_set(64, 16, tied=True, seed=0)
    fast = capacity_search(facts, "whitened", 5, hi=4096)
    ref = capacity_search_reference(facts, "whitened", 5, hi=4096)
    assert fast.monotone and ref.monotone
    assert ref.m == fast.m is not None
    with pytest.raises(ValueError, match="reference search covers"):
        capacity_search_reference(facts, "ntk")


def test_batched_gd_search_finds_the_one_width_loops_width():
    # GD trains two or three widths as one stack (train_mlps, speculative widths); the reference
    # trains one width at a time (train_mlp) along smallest_width. Same path and width; the
    # accuracies agree to within one fact (float32 rounding in other summation orders could in
    # principle move a near-tie; measured: equal)
    from assocmem.mlps.capacity_sweeps import capacity_search_reference

    facts = make_fact_set(24, 8, tied=True, seed=1)
    ref = capacity_search_reference(facts, "gd", 3, hi=64, epochs=150, lr=0.05)
    for batch in (2, 3):
        fast = capacity_search(facts, "gd", 3, hi=64, epochs=150, lr=0.05, batch=batch)
        assert fast.m == ref.m is not None
        assert [m for m, _ in fast.evaluations] == [m for m, _ in ref.evaluations]
        assert np.allclose([a for _, a in fast.evaluations], [a for _, a in ref.evaluations], atol=1 / 24)


def test_the_sweep_says_its_answer_depends_on_lo():
    # overriding lo (--set lo=100) changed reported widths with no violation recorded: the
    # answer is an upper bound that depends on where the search starts, and the sweep says so
    from assocmem.mlps.capacity_sweeps import CapacityConfig
    from assocmem.sweeps import get_sweep
    from assocmem.sweeps.search import smallest_width

    description = get_sweep("capacity").description
    assert "upper bound" in description and "lo" in description
    assert "upper bound" in CapacityConfig.__doc__ and "``lo``" in CapacityConfig.__doc__
    # the mechanism: non-monotone accuracy (widths 8-10 store everything, 11-19 do not); each
    # start sees one window, neither records a violation, and the answers differ
    accuracy = lambda m: float(8 <= m <= 10 or m >= 20)  # noqa: E731
    at_1 = smallest_width(accuracy, lo=1, hi=64, target=1.0, verify=2)
    at_11 = smallest_width(accuracy, lo=11, hi=64, target=1.0, verify=2)
    assert (at_1.m, at_11.m) == (8, 20) and not at_1.monotone_violations and not at_11.monotone_violations
