"""The nested draw of the Hebbian builders and the whitened capacity search that reuses work across
widths (assocmem.mlps.mlp.whitened_search), against the from-scratch constructions and the plain
reference search."""

import dataclasses

import pytest
import torch

from assocmem.mlps.capacity_sweeps import (CAPACITY_PRESETS, CapacityConfig, capacity_fact_set,
                                           capacity_point, capacity_search, num_facts,
                                           weights_seed)
from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins.decoding import accuracy
from assocmem.mlps.mlp import hebbian_mlp, hebbian_mlp_reference
from assocmem.mlps.mlp._common import NESTED_CHUNK, _nested_unit_weights
from assocmem.mlps.mlp.whitened_search import (NestedWhitenedCache, whitened_nested_search,
                                           whitened_nested_search_reference)
from assocmem.sweeps import config_to_json, smallest_width

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _f64(facts):
    return FactSet(facts.keys.to(F64), facts.values.to(F64), facts.mapping)


@pytest.fixture(scope="module")
def point():
    """A real capacity point: the quick preset's d = 32, alpha = 1/8 (F = 128), whitened, isotropic."""
    cfg = CAPACITY_PRESETS["quick"]
    d, alpha = 32, 1 / 8
    F = num_facts(alpha, d)
    facts = capacity_fact_set(cfg, d, F, "isotropic")
    seed = weights_seed(cfg, {"method": "whitened", "geometry": "isotropic", "d": d, "alpha": alpha, "F": F})
    return facts, seed


# -- the nested draw -----------------------------------------------------------------------------


def test_nested_unit_weights_are_prefixes_bit_for_bit():
    big = _nested_unit_weights(300, 16, torch.Generator().manual_seed(3))
    for m in (1, 15, 16, 17, NESTED_CHUNK, NESTED_CHUNK + 1, 200, 300):
        small = _nested_unit_weights(m, 16, torch.Generator().manual_seed(3))
        assert small[0].shape == small[1].shape == (m, 16) and small[0].dtype == F64
        assert torch.equal(small[0], big[0][:m]) and torch.equal(small[1], big[1][:m])
    assert not torch.equal(big[0][:64], big[1][:64])  # A_bar and G_bar are different draws


def test_nested_draw_gives_hebbian_mlp_the_prefix_weights():
    facts = _f64(make_fact_set(100, 16, seed=1))
    Abar, Gbar = _nested_unit_weights(250, 16, torch.Generator().manual_seed(9))
    for m in (10, 70, 250):
        model = hebbian_mlp(facts, m, "full", seed=9, draw="nested")
        ref = hebbian_mlp_reference(facts, m, seed=9, draw="nested")
        for mod in (model, ref):
            assert torch.equal(mod.A, Abar[:m] * m ** -0.25) and torch.equal(mod.G, Gbar[:m] * m ** -0.25)
        assert model.info["draw"] == "nested"


def test_default_draw_is_todays_block_draw_bit_for_bit():
    facts = _f64(make_fact_set(100, 16, seed=1))
    m = 37
    AG = torch.randn(2 * m, 16, generator=torch.Generator().manual_seed(4), dtype=F64) * m ** -0.25
    models = (hebbian_mlp(facts, m, "full", seed=4), hebbian_mlp(facts, m, "full", seed=4, draw="block"),
              hebbian_mlp_reference(facts, m, seed=4),
              hebbian_mlp_reference(facts, m, seed=4, draw="block"))
    for model in models:
        assert torch.equal(model.A, AG[:m]) and torch.equal(model.G, AG[m:])
        assert "draw" not in model.info
    plain = hebbian_mlp(facts, m, "none", seed=4)
    assert torch.equal(plain.B, hebbian_mlp(facts, m, "none", seed=4, draw="block").B)


# -- the cache against the from-scratch constructions --------------------------------------------


def test_cache_readouts_match_the_from_scratch_construction(point):
    # Both are backward-stable Cholesky solves of the same SPD system S (primal m <= F, dual m > F),
    # from Gram matrices that differ by rounding only (the cache scales the unscaled Gram block by
    # 1/m, the construction forms it from scaled features), so their relative difference is a
    # small multiple of cond(S) eps; we allow 10 max(F, m) cond(S) eps, as test_readout.py does.
    facts, seed = point
    f64 = _f64(facts)
    F = f64.num_facts
    cache = NestedWhitenedCache(facts, seed)
    ridge = 1e-6
    for m in (3, 40, 100, 17, F, 150, 64, 65, 130):  # extends, shrinks, crosses to the dual branch
        B = cache.readout(m)
        ref = hebbian_mlp(f64, m, "full", ridge, seed, draw="nested").B
        Phi = cache.features(m)
        S = (Phi.T @ Phi + F * ridge * torch.eye(m, dtype=F64) if m <= F
             else Phi @ Phi.T + ridge * torch.eye(F, dtype=F64))
        bound = 10 * max(F, m) * torch.linalg.cond(S).item() * EPS
        assert B.shape == (f64.targets.shape[1], m) and B.dtype == F64
        assert ((B - ref).norm() / ref.norm()).item() <= bound, m
    assert cache.width == 192 and cache.gram_width == F


def test_cache_features_and_weights_are_the_nested_prefixes(point):
    facts, seed = point
    cache = NestedWhitenedCache(facts, seed)
    Phi_big = cache.features(200)
    Abar, Gbar = cache.unit_weights(50)
    assert torch.equal(Abar, _nested_unit_weights(50, 32, torch.Generator().manual_seed(seed))[0])
    _, Phi = hebbian_mlp(_f64(facts), 50, "full", seed=seed, draw="nested", return_features=True)
    torch.testing.assert_close(cache.features(50), Phi, rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(cache.features(50) * 50 ** 0.5, Phi_big[:, :50] * 200 ** 0.5,
                               rtol=1e-15, atol=0)


def test_cache_accuracy_equals_the_reference_at_every_width(point):
    facts, seed = point
    f64 = _f64(facts)
    cache = NestedWhitenedCache(facts, seed)
    widths = [*range(160, 0, -1)]  # the largest first: every smaller width from leading blocks
    got = [cache.accuracy(m) for m in widths]
    want = [accuracy(hebbian_mlp_reference(f64, m, seed=seed, draw="nested"), f64) for m in widths]
    assert got == want
    assert 0 < min(got) < 1 == max(got)  # the range covers misses and successes


# -- the search ----------------------------------------------------------------------------------


def test_search_matches_its_reference_and_the_from_scratch_search(point):
    facts, seed = point
    fast = whitened_nested_search(facts, seed)
    ref = whitened_nested_search_reference(facts, seed)
    f64 = _f64(facts)
    scratch = smallest_width(lambda m: accuracy(hebbian_mlp(f64, m, "full", seed=seed, draw="nested"), f64))
    assert fast.found and fast.m == ref.m == scratch.m
    assert fast.evaluations == ref.evaluations == scratch.evaluations
    via = capacity_search(facts, "whitened", seed, draw="nested")
    assert via.m == fast.m and via.evaluations == fast.evaluations


def test_search_options_reach_smallest_width(point):
    facts, seed = point
    a = whitened_nested_search(facts, seed, lo=20, hi=90, verify=0, target=0.9)
    b = whitened_nested_search_reference(facts, seed, lo=20, hi=90, verify=0, target=0.9)
    assert a.evaluations == b.evaluations and a.lo == 20 and a.hi == 90 and a.target == 0.9


def test_default_capacity_search_is_unchanged(point):
    facts, seed = point
    plain = capacity_search(facts, "whitened", seed)
    assert plain.evaluations == capacity_search(facts, "whitened", seed, draw="block").evaluations


def test_config_field_is_opt_in_and_left_out_of_the_stored_config():
    for name, cfg in CAPACITY_PRESETS.items():
        assert cfg.whitened_draw == "block"
        assert "whitened_draw" not in config_to_json(cfg), name
    nested = dataclasses.replace(CAPACITY_PRESETS["quick"], whitened_draw="nested")
    assert config_to_json(nested)["whitened_draw"] == "nested"


def test_capacity_point_uses_the_config_draw(point):
    facts, seed = point
    cfg = dataclasses.replace(CAPACITY_PRESETS["quick"], whitened_draw="nested")
    pt = {"method": "whitened", "geometry": "isotropic", "d": 32, "alpha": 1 / 8, "F": 128, "training": 0}
    row = capacity_point(cfg, pt, torch.device("cpu"))
    assert row["m"] == whitened_nested_search(facts, seed).m
    other = capacity_point(cfg, {**pt, "method": "unwhitened"}, torch.device("cpu"))  # block draw there
    assert other["found"] in (True, False)


# -- bad input -----------------------------------------------------------------------------------


def test_bad_input_gives_clear_errors(point):
    facts, seed = point
    with pytest.raises(ValueError, match="draw must be one of"):
        hebbian_mlp(facts, 10, "full", draw="prefix")
    with pytest.raises(ValueError, match="draw must be one of"):
        hebbian_mlp_reference(facts, 10, draw=None)
    with pytest.raises(ValueError, match="draw must be one of"):
        capacity_search(facts, "whitened", seed, draw="Nested")
    with pytest.raises(ValueError, match="'whitened' only"):
        capacity_search(facts, "ntk", seed, draw="nested")
    with pytest.raises(ValueError, match="whitened_draw must be one of"):
        CapacityConfig(dims=(8,), alphas=(0.5,), whitened_draw="nest")
    with pytest.raises(ValueError, match="FactSet"):
        NestedWhitenedCache(facts.keys, seed)
    with pytest.raises(ValueError, match="ridge"):
        NestedWhitenedCache(facts, seed, ridge=-1.0)
    with pytest.raises(ValueError):
        NestedWhitenedCache(facts, 1.5)
    off = FactSet(facts.keys * 2, facts.values, facts.mapping, unit_norm=False)
    with pytest.raises(ValueError, match="unit sphere"):
        NestedWhitenedCache(off, seed)
    cache = NestedWhitenedCache(facts, seed)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="m"):
            cache.readout(bad)
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        whitened_nested_search(facts, seed, lo=10, hi=5)
    with pytest.raises(ValueError, match="positive ridge"):
        whitened_nested_search_reference(facts, seed, ridge=0.0)


def test_zero_ridge_singular_system_raises():
    # d = 3: the quadratic features have rank <= d (d + 1) / 2 = 6, so m = 20 <= F is singular
    facts = make_fact_set(40, 3, seed=0)
    with pytest.raises(ValueError, match="singular"):
        NestedWhitenedCache(facts, 0, ridge=0.0).readout(20)
