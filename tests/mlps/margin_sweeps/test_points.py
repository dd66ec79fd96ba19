"""The points of the margin sweeps (assocmem.mlps.margin_sweeps.points): grids, seeds, and the
isotropic, spike and noisy points against direct computations.
"""

import dataclasses

import pytest
import torch

from assocmem.mlps import margin_sweeps as MS
from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp import exact_k2_memory
from assocmem.sweeps import get_sweep, point_seed

CPU = torch.device("cpu")


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
