"""The margin sweeps of chapter 12 (assocmem.mlps.margin_sweeps): grids, points, fits, bit counts."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp import exact_k2_memory, hebbian_mlp
from assocmem.sweeps import RowsDisagree, config_to_json, get_sweep, load_results, point_seed, run_sweep
from assocmem.mlps import margin_sweeps as MS

CPU = torch.device("cpu")


# --------------------------------------------------------------------------------------------
# Registration and grids


@pytest.mark.parametrize("name", MS.MARGIN_SWEEPS)
def test_registered_with_quick_and_stored_preset(name):
    sweep = get_sweep(name)
    stored = MS.STORED_PRESET[name]
    assert {"quick", stored} <= set(sweep.presets)
    quick = sweep.grid(sweep.config("quick"))
    full = sweep.grid(sweep.config(stored))
    # the quick grid is a subset of the stored grid: the same points, hence the same seeds
    full_keys = {tuple(sorted(p.items())) for p in full}
    assert all(tuple(sorted(p.items())) in full_keys for p in quick)
    assert len(quick) < len(full)
    assert all(point_seed(sweep.config("quick"), p) == point_seed(sweep.config(stored), p) for p in quick)


@pytest.mark.parametrize(
    "name, vary, lo, hi",
    [("margin_f_exact", "F", 32, 2048), ("margin_f_sketch", "F", 32, 512), ("margin_m_sketch", "m", 64, 1024)],
)
def test_isotropic_paper_grid_is_the_seeds(name, vary, lo, hi):
    cfg = get_sweep(name).config("paper")
    grid = get_sweep(name).grid(cfg)
    values = sorted({p[vary] for p in grid})
    assert len(grid) == 150 and len(values) == 30  # 30 log-spaced points, 5 seeds (App. A.3.2)
    assert values[0] == lo and values[-1] == hi
    ratios = np.diff(np.log(values))
    assert np.allclose(ratios, math.log(hi / lo) / 29, atol=0.05)


def test_spike_and_noisy_paper_grids():
    for on, beta_max in (("keys", 5.0), ("values", 10.0), ("both", 3.35)):
        grid = get_sweep(f"margin_spike_{on}").grid(get_sweep(f"margin_spike_{on}").config("paper"))
        betas = sorted({p["beta"] for p in grid})
        assert betas[0] == 0.0 and betas[-1] == beta_max and len(betas) == 30
    grid = get_sweep("margin_noisy").grid(get_sweep("margin_noisy").config("paper"))
    eps = sorted({p["eps"] for p in grid})
    assert len(grid) == 45 and len(eps) == 15 and eps[0] == 0.01 and eps[-1] == 2.0  # App. A.4.2


def test_bad_configs_raise():
    cfg = get_sweep("margin_f_exact").config("quick")
    with pytest.raises(ValueError, match="kernel"):
        MS.isotropic_points(dataclasses.replace(cfg, kernel="cubic"))
    with pytest.raises(ValueError, match="stride"):
        MS.isotropic_points(dataclasses.replace(cfg, stride=0))
    scfg = get_sweep("margin_spike_keys").config("quick")
    with pytest.raises(ValueError, match="on must be"):
        MS.spike_points(dataclasses.replace(scfg, on="queries"))


def test_sub_seeds_deterministic_and_distinct():
    a, b = MS.sub_seeds(123, 3), MS.sub_seeds(123, 3)
    assert a == b and len(set(a)) == 3 and all(0 <= s < 2**31 for s in a)
    assert MS.sub_seeds(124, 3) != a


# --------------------------------------------------------------------------------------------
# Points


def test_isotropic_point_matches_a_direct_computation():
    cfg = get_sweep("margin_f_exact").config("quick")
    point = {"F": 40, "rep": 1}
    row = MS.isotropic_point(cfg, point, CPU)
    facts_seed, _ = MS.sub_seeds(point_seed(cfg, point), 2)
    facts = make_fact_set(40, 32, tied=False, seed=facts_seed)
    margins = M.fact_margins(exact_k2_memory(facts), facts)
    assert row["gamma_min"] == float(margins.min())
    assert row["kernel"] == "exact" and row["m"] is None and row["d"] == 32
    assert 0.0 <= row["frac_positive"] <= 1.0 and row["gamma_mean"] >= row["gamma_min"]
    # the sketched sweep over m records F, and is reproducible
    mcfg = get_sweep("margin_m_sketch").config("quick")
    r1 = MS.isotropic_point(mcfg, {"m": 64, "rep": 0}, CPU)
    r2 = MS.isotropic_point(mcfg, {"m": 64, "rep": 0}, CPU)
    assert r1 == r2 and r1["F"] == 256


def test_spike_at_beta_zero_is_the_same_isotropic_fact_set_in_every_sweep():
    rows = [
        MS.spike_point(get_sweep(f"margin_spike_{on}").config("quick"), {"beta": 0.0, "rep": 0}, CPU)
        for on in ("keys", "values", "both")
    ]
    # equal up to the rounding of re-normalising unit rows (beta = 0 leaves them on the sphere)
    for other in rows[1:]:
        assert other.keys() == rows[0].keys()
        assert all(other[k] == pytest.approx(rows[0][k], rel=1e-12, abs=1e-12) for k in rows[0])
    # the statistics are those of the MLP's own Gram matrix
    assert rows[0]["e_k"] >= rows[0]["k_max_off"] ** 2 - 1e-12  # eq. 50
    assert 0.0 <= rows[0]["kappa"] <= 1.0


def test_spike_common_random_numbers_across_beta():
    cfg = get_sweep("margin_spike_values").config("quick")
    a = MS.spike_point(cfg, {"beta": 0.0, "rep": 0}, CPU)
    b = MS.spike_point(cfg, {"beta": 4.0, "rep": 0}, CPU)
    # spiking the values leaves the keys, hence the key statistics, unchanged
    for k in ("k_min_diag", "k_max_off", "e_k"):
        assert a[k] == b[k]
    assert b["v_min"] < a["v_min"]  # crowded values separate less


def test_noisy_point_at_zero_radius_is_clean():
    cfg = get_sweep("margin_noisy").config("quick")
    row = MS.noisy_point(cfg, {"eps": 0.0, "rep": 0}, CPU)
    assert row["gamma_min"] == row["gamma_clean"]
    assert row["lipschitz"] == 0.0
    small = MS.noisy_point(cfg, {"eps": 1e-6, "rep": 0}, CPU)
    assert small["gamma_clean"] == row["gamma_clean"]
    assert abs(small["gamma_min"] - row["gamma_clean"]) < 1e-4


def test_bits_point_fields_and_theorem_b6():
    cfg = get_sweep("margin_bits").config("quick")
    row = MS.bits_point(cfg, {"d": 32, "rep": 0}, CPU)
    assert row["F"] == 64 and row["m"] == math.ceil(32.0 * 64 * math.log(64) / 32)
    assert row["P"] == 3 * row["m"] * 32
    assert row["gamma_out"] == pytest.approx(row["gamma_kernel"] / row["F"], rel=1e-9)
    assert 1 <= row["bits_min"] <= row["bits_stable"] <= cfg.max_bits
    assert row["bits_b6"] >= row["bits_stable"]
    assert row["margin_b6_ratio"] >= 0.5  # Theorem B.6's guarantee
    assert row["dist_b6"] <= row["dist_allowed"]


def _small_mlp():
    facts = make_fact_set(24, 16, tied=False, seed=3)
    mlp = hebbian_mlp(facts, 200, seed=4)
    return facts, mlp, {"A": mlp.A.detach(), "G": mlp.G.detach(), "B": mlp.B.detach()}


def test_theorem_b6_bits_is_the_smallest_sufficient_width():
    facts, mlp, mats = _small_mlp()
    gamma0 = float(M.output_margins(mlp, facts).min())
    assert gamma0 > 0
    res = MS.theorem_b6_bits(mats, gamma0)
    assert res.bits is not None and res.dist_bound <= res.dist_allowed
    # one bit fewer does not meet the condition
    prev = MS.theorem_b6_bits(mats, gamma0, max_bits=res.bits - 1)
    assert prev.bits is None and prev.dist_bound > prev.dist_allowed
    # the constants are those of Lemma B.5 with the measured operator norms
    assert res.l_theta == pytest.approx(3 * res.op_norm**2)
    assert res.c_rng == max(float(v.abs().max()) for v in mats.values())
    # and the guarantee holds: quantising to that many bits keeps at least half the margin
    q = M.quantize_matrices(mats, res.bits)
    dist = math.sqrt(sum(float(((q[k] - mats[k]) ** 2).sum()) for k in mats))
    assert dist <= res.dist_bound
    gq = MS._output_gamma_min(facts)(**q)
    assert gq >= gamma0 / 2


def test_theorem_b6_bits_edge_cases():
    _, _, mats = _small_mlp()
    assert MS.theorem_b6_bits(mats, -1.0).bits is None
    assert MS.theorem_b6_bits(mats, 0.0).bits is None
    assert MS.theorem_b6_bits(mats, 1e-300, max_bits=8).bits is None
    with pytest.raises(ValueError):
        MS.theorem_b6_bits({}, 1.0)
    with pytest.raises(ValueError):
        MS.theorem_b6_bits(mats, 1.0, key_radius=0.0)
    with pytest.raises(ValueError):
        MS.theorem_b6_bits(mats, 1.0, max_bits=0)
    # a larger margin or a smaller key radius needs no more bits
    a = MS.theorem_b6_bits(mats, 1e-3).bits
    assert MS.theorem_b6_bits(mats, 1e-2).bits <= a
    assert MS.theorem_b6_bits(mats, 1e-3, key_radius=0.5).bits <= a


# --------------------------------------------------------------------------------------------
# Fits on synthetic sweeps with known constants


def _isotropic_frame(kernel, vary, consts, form="isotropic"):
    rows = []
    d = 32 if kernel == "exact" else 64
    values = [32, 50, 80, 128, 200, 320, 512, 800, 1280, 2048]
    for v in values:
        for rep in range(2):
            F = v if vary == "F" else 256
            m = None if kernel == "exact" else (v if vary == "m" else 512)
            m_eff = d * d if kernel == "exact" else m
            g = M.THEORY_FORMS[form].func(F=F, m=m_eff, d=d, **consts)
            other = {"m": m} if vary == "F" else {"F": F}
            rows.append({vary: v, "rep": rep, "kernel": kernel, "d": d, **other, "gamma_min": float(g)})
    return pd.DataFrame(rows)


def test_fit_isotropic_recovers_known_constants():
    consts = {"C_s": 0.55, "C_x": 2.0, "C_L": 0.5}
    fr = _isotropic_frame("sketch", "F", consts)
    fit = MS.fit_isotropic_sweep(fr, "isotropic")
    assert fit.r2_means == pytest.approx(1.0, abs=1e-10) and fit.r2_runs == pytest.approx(1.0, abs=1e-10)
    for k, v in consts.items():
        assert fit.constants[k] == pytest.approx(v, rel=1e-5)
    assert fit.vary == "F" and fit.fixed == {"m": 512.0, "d": 64.0} and fit.n_points == 10 and fit.n_runs == 20
    assert np.allclose(fit.curve([100.0, 400.0]), M.isotropic_bound([100.0, 400.0], 512, 64, **consts))
    # the exact kernel uses its feature dimension m = d^2
    fr = _isotropic_frame("exact", "F", consts)
    fit = MS.fit_isotropic_sweep(fr, "isotropic")
    assert fit.fixed["m"] == 32.0**2 and fit.r2_means == pytest.approx(1.0, abs=1e-10)


def test_fit_isotropic_eq56_along_m_and_errors():
    consts = {"C_s": 1.0, "C_1": 0.0, "C_2": 0.8, "C_3": 0.0, "C_4": 1.5}
    fr = _isotropic_frame("sketch", "m", consts, form="isotropic_eq56")
    fit = MS.fit_isotropic_sweep(fr, "isotropic_eq56")
    assert fit.vary == "m" and fit.constants["C_4"] == pytest.approx(1.5, rel=1e-5)
    assert fit.constants["C_2"] == pytest.approx(0.8, rel=1e-5) and fit.constants["C_s"] == 1.0
    assert set(fit.fit.free) == {"C_2", "C_4"}
    # along F with the exact kernel: C_2 and C_3
    consts = {"C_s": 1.0, "C_1": 0.0, "C_2": 0.6, "C_3": 2.5, "C_4": 0.0}
    fit = MS.fit_isotropic_sweep(_isotropic_frame("exact", "F", consts, form="isotropic_eq56"), "isotropic_eq56")
    assert fit.constants["C_3"] == pytest.approx(2.5, rel=1e-5) and fit.r2_runs == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(ValueError, match="form"):
        MS.fit_isotropic_sweep(fr, "keys")
    mixed = pd.concat([fr, fr.assign(kernel="exact")])
    with pytest.raises(ValueError, match="one kernel"):
        MS.fit_isotropic_sweep(mixed, "isotropic")


def _spike_frame(on):
    rng = np.random.default_rng(0)
    rows = []
    for beta in np.linspace(0, 3, 8):
        for rep in range(2):
            s = {
                "k_min_diag": 0.7 + 0.01 * rng.standard_normal(),
                "k_max_off": 0.3 + 0.1 * beta,
                "e_k": 0.6 + beta**2,
                "v_min": 0.55 - 0.1 * beta,
                "v_max": 1.5,
                "b_y": 6.0 + beta,
                "e_v": 8.0 + 10 * beta,
                "l_v": 95.0,
                "kappa": 0.35,
                "e_k_tilde": 0.6 + beta**2,
                "e_v_tilde": 7.0 + 10 * beta,
                "kappa_tilde": 0.34,
            }
            rows.append({"beta": float(beta), "rep": rep, "d": 64, "F": 128, "m": 512, **s})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("on", ["keys", "values", "both"])
@pytest.mark.parametrize("form", ["table2", "penalty"])
def test_fit_spike_recovers_its_own_curve(on, form):
    fr = _spike_frame(on)
    theory = "penalty" if form == "penalty" else MS.SPIKE_FORMS[on]
    truth = dict(M.THEORY_FORMS[theory].constants)
    truth.update({"C_s": 0.9, "C_x": 0.3})
    if form == "penalty":
        cov = M.covariates_from_statistics(MS.statistics_from_frame(fr), width=fr["m"].to_numpy())
    else:
        cov = {c: fr[c].to_numpy(dtype=float) for c in fr.columns if c not in ("beta", "rep")}
    cov = {k: cov[k] for k in M.THEORY_FORMS[theory].covariates}
    fr["gamma_min"] = M.THEORY_FORMS[theory].func(**cov, **truth)
    fit = MS.fit_spike_sweep(fr, on, form=form)
    assert fit.r2_runs == pytest.approx(1.0, abs=1e-8)
    assert fit.constants["C_x"] == pytest.approx(0.3, rel=1e-4)
    assert fit.vary == "beta" and len(fit.means) == 8
    with pytest.raises(ValueError):
        fit.curve([1.0])


def test_fit_spike_errors():
    fr = _spike_frame("keys")
    with pytest.raises(ValueError, match="on must be"):
        MS.fit_spike_sweep(fr, "queries")
    with pytest.raises(ValueError, match="form must be"):
        MS.fit_spike_sweep(fr, "keys", form="heuristic")
    fr["gamma_min"] = 0.5 - 0.1 * fr["beta"]
    assert MS.fit_spike_sweep(fr, "keys", free=("C_s", "C_x")).fit.free == ("C_s", "C_x")
    assert MS.fit_spike_sweep(fr, "keys").fit.free == ("C_s", "C_x", "C_v")


def _noisy_frame(a, b, C=None):
    rows = []
    for rep, clean in enumerate((0.2, 0.25, 0.3)):
        for eps in (0.01, 0.05, 0.1, 0.5, 1.0, 2.0):
            drop = a * eps + b * eps**2 + 0.001 * rep * eps**2
            rows.append({"eps": eps, "rep": rep, "d": 64, "F": 256, "m": 512,
                         "gamma_clean": clean, "gamma_min": clean - drop})
    return pd.DataFrame(rows)


def test_noisy_curvature_and_constant():
    cur = MS.noisy_curvature(_noisy_frame(0.3, 0.2))
    assert cur.reps == 3 and np.allclose(cur.a, 0.3, atol=1e-10)
    assert cur.b_mean == pytest.approx(0.201, abs=1e-10) and cur.b_sem == pytest.approx(0.001 / math.sqrt(3), rel=1e-6)
    # a linear degradation needs one constant at every eps
    fr = _noisy_frame(0.3, 0.0)
    L = math.log(2 * 256**2)
    need = MS.smallest_noisy_constant(fr.assign(gamma_min=fr.gamma_clean - 0.3 * fr.eps))
    assert np.allclose(need.to_numpy(), 0.3 / math.sqrt(256 * L / 64))
    fit = MS.fit_noisy_sweep(fr.assign(gamma_min=fr.gamma_clean - 0.3 * fr.eps))
    assert fit.r2_runs == pytest.approx(1.0, abs=1e-10)
    assert fit.constants["C_n"] == pytest.approx(0.3 / math.sqrt(256 * L / 64), rel=1e-6)
    with pytest.raises(ValueError, match="replicates"):
        MS.noisy_curvature(fr[fr.rep == 0])


def test_log2_slope_and_seed_means():
    assert MS.log2_slope([8, 16, 32, 64], [3, 4, 5, 6]) == pytest.approx(1.0)
    fr = pd.DataFrame({"F": [1, 1, 2, 2], "g": [1.0, 3.0, 5.0, 7.0]})
    out = MS.seed_means(fr, "F", ["g"])
    assert out["g"].tolist() == [2.0, 6.0] and out["n"].tolist() == [2, 2]


def test_agreement_rules_state_one_rule_per_column():
    stored = pd.DataFrame({"F": [1, 2], "rep": [0, 0], "gamma_min": [0.5, -3.0], "e_v": [190.0, 2.0],
                           "zero": [0.0, 0.0], "frac_positive": [1.0, 0.5], "kernel": ["exact", "exact"],
                           "bits_b6": [25, 26], "margin_b6_ratio": [1.0, 1.0], "wall_time_s": [1.0, 2.0]})
    rules = MS.agreement_rules(stored, [c for c in stored.columns if c not in ("F", "rep")])
    # a rounding tolerance relative to the power of ten at or above the column's largest |value|
    assert rules["tolerances"] == {"gamma_min": 1e-9 * 10, "e_v": 1e-9 * 1000, "zero": 1e-9,
                                   "margin_b6_ratio": MS.COLUMN_TOL["margin_b6_ratio"]}
    assert rules["max_changed"] == {"frac_positive": MS.MAX_CHANGED_ROWS}
    assert rules["exact"] == ["kernel", "bits_b6"]


def test_compare_overlap():
    stored = pd.DataFrame({"F": [1, 2, 3], "rep": [0, 0, 0], "gamma_min": [0.1, 0.2, 0.3], "kernel": ["a", "b", "c"],
                           "lipschitz": [1.0, np.nan, 2.0], "frac_positive": [1.0, 1.0, 0.5],
                           "wall_time_s": [1.0, 2.0, 3.0]})
    live = stored.iloc[[0, 2]].assign(wall_time_s=9.0)
    out = MS.compare_overlap(live, stored, ["F", "rep"])
    assert list(out["column"]) == ["gamma_min", "lipschitz", "frac_positive", "kernel"]
    assert (out["rows"] == 2).all() and (out["rows changed"] == 0).all()
    assert list(out["rule"]) == ["|diff| <= 1e-09", "|diff| <= 1e-08", "rows changed <= 1", "equal"]
    assert list(out["kind"]) == ["|diff| <= 1e-09 x scale"] * 2 + ["at most 1 row changed", "equal"]
    # float64 rounding passes, a difference beyond the column's tolerance does not
    MS.compare_overlap(live.assign(gamma_min=live.gamma_min + 1e-13), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="gamma_min"):
        MS.compare_overlap(live.assign(gamma_min=live.gamma_min + 1e-6), stored, ["F", "rep"])
    # one threshold outcome may flip, two may not
    MS.compare_overlap(live.assign(frac_positive=[0.5, 0.5]), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="frac_positive"):
        MS.compare_overlap(live.assign(frac_positive=[0.5, 1.0]), stored, ["F", "rep"])
    stray = pd.DataFrame({"F": [9], "rep": [0], "gamma_min": [0.0], "kernel": ["z"], "lipschitz": [0.0],
                          "frac_positive": [1.0], "wall_time_s": [0.0]})
    with pytest.raises(RowsDisagree, match="no stored partner"):
        MS.compare_overlap(pd.concat([live, stray]), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="kernel"):
        MS.compare_overlap(live.assign(kernel="q"), stored, ["F", "rep"])
    with pytest.raises(RowsDisagree, match="lipschitz"):
        MS.compare_overlap(live.assign(lipschitz=np.nan), stored, ["F", "rep"])


def test_live_check_against_a_stored_run(tmp_path, monkeypatch):
    run_sweep("margin_spike_keys", "quick", device="cpu", results_dir=tmp_path, progress=False)
    monkeypatch.setitem(MS.STORED_PRESET, "margin_spike_keys", "quick")
    out = MS.live_check(["margin_spike_keys"], results_dir=tmp_path)
    assert set(out["sweep"]) == {"margin_spike_keys"} and set(out["stored"]) == {"quick"}
    assert (out["rows"] == 10).all() and (out["rows changed"] == 0).all()
    # the same machine and thread count recompute the stored rows bit for bit
    assert (out.loc[out["rule"].str.startswith("|diff|"), "max |diff|"] == 0).all()
    frame = load_results("margin_spike_keys", "quick", tmp_path)
    results = [c for c in frame.columns if c not in ("beta", "rep", "wall_time_s")]
    assert sorted(out["column"]) == sorted(results)  # every result column has a rule
    threads = torch.get_num_threads()
    MS.live_check(["margin_spike_keys"], results_dir=tmp_path, num_threads=1)
    assert torch.get_num_threads() == threads  # restored
    with pytest.raises(RowsDisagree):  # other seeds, other fact sets: the check has teeth
        MS.live_check(["margin_spike_keys"], results_dir=tmp_path, seed=7)
    with pytest.raises(ValueError, match="num_threads"):
        MS.live_check(["margin_spike_keys"], results_dir=tmp_path, num_threads=0)


# --------------------------------------------------------------------------------------------
# The committed results are those of the current presets


@pytest.mark.parametrize("name", MS.MARGIN_SWEEPS)
def test_committed_results_match_the_presets(name):
    sweep = get_sweep(name)
    preset = MS.STORED_PRESET[name]
    cfg = sweep.config(preset)
    try:
        frame = load_results(name, preset, config=config_to_json(cfg))
    except FileNotFoundError:
        pytest.skip(f"results/{name}/{preset}.csv not committed")
    assert len(frame) == len(sweep.grid(cfg))
    assert np.isfinite(frame["gamma_min" if name != "margin_bits" else "gamma_kernel"]).all()


def test_docstrings_state_delta_instead_of_citing_a_private_file():
    import inspect

    src = inspect.getsource(MS)
    assert "REFERENCE" not in src
    assert "delta = 0.5" in src and "only ``C_L / delta``" in src.replace("\n    ", " ")
