"""Tests for assocmem.mlps.mlp.hebbian: the sketched-K2 Hebbian MLP of Algorithm 1 and the exact-K2 memory."""

import pytest
import torch

from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins import accuracy as strict_accuracy
from assocmem.mlps.margins import accuracy_from_outputs, output_margins, score_margins
from assocmem.mlps.mlp.architectures import ExactK2Memory, bilinear_features
from assocmem.mlps.mlp.hebbian import exact_k2_memory, hebbian_mlp
from tests.mlps.mlp._helpers import accuracy


@pytest.fixture(autouse=True)
def _load_cap_on(monkeypatch):
    """The thread rule is opt-in (ASSOCMEM_LOAD_CAP=1); these tests exercise it turned on."""
    monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "1")


def test_features_sketch_the_quadratic_kernel():
    fs = make_fact_set(40, 16, tied=False, seed=1)
    model = hebbian_mlp(fs, 8192, seed=2)
    K = model.kernel(fs.keys, fs.keys)  # (F, F)
    exact = (fs.keys @ fs.keys.T) ** 2
    assert abs(K.diagonal().mean().item() - 1.0) < 0.05  # K(k, k) ~ ||k||^4 = 1
    assert (K - exact).abs().max() < 0.12  # O(m^{-1/2}) sketch error
    torch.testing.assert_close(K, model.features(fs.keys) @ model.features(fs.keys).T)


def test_return_features_gives_the_construction_features(facts256):
    for m, whitening in [(96, "none"), (200, "diag"), (200, "full"), (300, "full")]:
        model, Phi = hebbian_mlp(facts256, m, whitening, seed=3, return_features=True)
        plain = hebbian_mlp(facts256, m, whitening, seed=3)
        assert torch.equal(model.A, plain.A) and torch.equal(model.G, plain.G)
        assert torch.equal(model.B, plain.B)  # the option changes nothing about the model
        assert Phi.shape == (256, m) and Phi.dtype == torch.float64
        torch.testing.assert_close(Phi, bilinear_features(facts256.keys, model.A, model.G), rtol=0, atol=0)
        torch.testing.assert_close(Phi, model.features(facts256.keys), rtol=1e-12, atol=1e-14)
        assert Phi.data_ptr() not in {p.data_ptr() for p in model.parameters()}


@pytest.mark.parametrize("m", [40, 120, 200, 256, 400])  # from far too few units to the dual branch
def test_fused_accuracy_equals_the_unfused_path(facts256, m):
    model, Phi = hebbian_mlp(facts256, m, "full", seed=1, return_features=True)
    fused = accuracy_from_outputs(Phi @ model.B.T, facts256)
    assert fused == strict_accuracy(model, facts256)
    margins = score_margins(Phi @ model.B.T @ facts256.values.T, facts256.mapping)
    ref = output_margins(model, facts256)
    torch.testing.assert_close(margins, ref, rtol=0, atol=1e-12 * ref.abs().max().item())
    assert fused == float((ref > 0).double().mean())


def test_return_features_must_be_a_bool(facts256):
    with pytest.raises(ValueError, match="return_features"):
        hebbian_mlp(facts256, 8, return_features="yes")
    with pytest.raises(ValueError, match="return_features"):
        hebbian_mlp(facts256, 8, return_features=1)


def test_whitened_stores_256_facts_at_m_256(facts256):
    model = hebbian_mlp(facts256, 256, whitening="full", seed=0)
    assert accuracy(model, facts256) == 1.0
    assert accuracy(hebbian_mlp(facts256, 512, "full", seed=0), facts256) == 1.0  # dual branch


def test_exact_k2_memory(facts256):
    mem = exact_k2_memory(facts256)
    assert isinstance(mem, ExactK2Memory) and not hasattr(mem, "features")
    x = torch.randn(3, 64, dtype=torch.float64)
    ref = sum(facts256.targets[t] * (facts256.keys[t] @ x.T)[:, None] ** 2 for t in range(256)) / 256
    torch.testing.assert_close(mem(x), ref)
    torch.testing.assert_close(mem.kernel(x, facts256.keys), (x @ facts256.keys.T) ** 2)
    assert accuracy(mem, facts256) == 1.0
    assert mem.num_parameters == 64 * 64 * 65 // 2


def test_keys_off_the_sphere_allowed_on_request():
    fs = make_fact_set(8, 4)
    off = FactSet(1.5 * fs.keys, fs.values, fs.mapping, unit_norm=False)
    assert hebbian_mlp(off, 4, require_unit_keys=False).num_parameters == 48


@pytest.mark.parametrize("m", [100, 300])  # primal and dual branch (F = 256)
def test_reference_construction_agrees_with_the_fast_one(facts256, m):
    # Same weights bit for bit (one seeded draw); readouts equal up to cond(S) * rounding (the
    # readout test bounds that); here: relative difference <= 1e-8 (cond(S) ~ 1e5 at this size
    # with ridge 1e-6, times eps ~ 2e-16, times a factor 100 for the differing summation orders)
    # and the same strict accuracy.
    from assocmem.mlps.mlp.hebbian import hebbian_mlp_reference

    fast = hebbian_mlp(facts256, m, "full", seed=3)
    ref = hebbian_mlp_reference(facts256, m, seed=3)
    assert torch.equal(fast.A, ref.A) and torch.equal(fast.G, ref.G)
    assert ((fast.B - ref.B).norm() / ref.B.norm()).item() <= 1e-8
    assert strict_accuracy(fast, facts256) == strict_accuracy(ref, facts256)


def test_reference_construction_rejects_bad_input(facts256):
    from assocmem.mlps.mlp.hebbian import hebbian_mlp_reference

    with pytest.raises(ValueError):
        hebbian_mlp_reference(facts256, 0)
    with pytest.raises(ValueError, match="positive ridge"):
        hebbian_mlp_reference(facts256, 10, ridge=0.0)
    with pytest.raises(ValueError, match="FactSet"):
        hebbian_mlp_reference("facts", 10)


def test_construction_under_a_thread_cap_gives_the_same_memory(facts256, monkeypatch):
    # The load rule may run the construction on fewer threads; the memory must not depend on it
    # beyond rounding (threads split BLAS reductions differently).
    import assocmem.benchmarking as bm

    n = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
        capped = hebbian_mlp(facts256, 200, "full")
        assert torch.get_num_threads() == 2  # restored after the call
        monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "0")
        free = hebbian_mlp(facts256, 200, "full")
    finally:
        torch.set_num_threads(n)
    assert ((capped.B - free.B).norm() / free.B.norm()).item() <= 1e-8


@pytest.mark.parametrize("module, build", [("hebbian", "hebbian_mlp"), ("data_dependent", "data_dependent_mlp")])
def test_input_checks_run_under_the_thread_cap(module, build, monkeypatch):
    # The checks' elementwise passes are parallel regions too: under load they must not run on
    # more threads than the construction (issue 19).
    import importlib

    import assocmem.benchmarking as bm

    mod = importlib.import_module(f"assocmem.mlps.mlp.{module}")
    seen = []
    checked = mod._checked_facts
    monkeypatch.setattr(mod, "_checked_facts", lambda *a: (seen.append(torch.get_num_threads()), checked(*a))[1])
    monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
    n = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        getattr(mod, build)(make_fact_set(64, 16, seed=0), 8)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(n)
    assert seen == [1]


def test_one_name_per_concept_as_seed_001_spells_it():
    """Algorithm 1's readout mode is ``whitening`` in {none, diag, full}; the constructions of App.
    A.1.1 are one set of method names wherever a method is taken; the comparison's memories are
    ``mlp_<method>``; and each name builds the module its documentation says."""
    from assocmem.compare.adapters import MEMORIES, MLP_METHODS, make_memory
    from assocmem.mlps import capacity_sweeps as CS
    from assocmem.mlps.mlp.readout import WHITENINGS
    from assocmem.mlps.transformer import insertion

    assert WHITENINGS == ("none", "diag", "full")
    assert MLP_METHODS == CS.METHODS and {"unwhitened", "whitened", "data_dependent"} <= set(CS.METHODS)
    assert set(insertion.METHODS) - {"gd_ce", "gd_mse"} == set(CS.METHODS) - {"gd"}
    assert {n for n in MEMORIES if n.startswith("mlp_")} == {f"mlp_{m}" for m in CS.METHODS}
    facts = make_fact_set(24, 8, seed=1)
    for method, mode in (("unwhitened", "none"), ("whitened", "full")):
        built = CS.build_memory(method, facts, 16, seed=2)
        assert built.construction == f"hebbian-{mode}"
        assert torch.equal(built.B, hebbian_mlp(facts, 16, whitening=mode, seed=2).B)
    memory = make_memory("mlp_whitened", 8, 16, seed=2).write(facts.keys, facts.targets)
    assert torch.equal(memory.model.B, hebbian_mlp(facts, 16, whitening="full", seed=2).B)


@pytest.mark.parametrize("name, mode", [("whitened", "full"), ("unwhitened", "none")])
def test_a_construction_name_given_as_the_mode_is_told_the_mode(name, mode):
    from assocmem.mlps.mlp.readout import hebbian_readout

    facts = make_fact_set(6, 4, seed=0)
    message = f"got '{name}' .*construction of seed 001.*whitening='{mode}'"
    with pytest.raises(ValueError, match=message):
        hebbian_mlp(facts, 4, whitening=name)
    with pytest.raises(ValueError, match=message):
        hebbian_readout(torch.ones(3, 2, dtype=torch.float64), torch.ones(3, 2, dtype=torch.float64), name)
    with pytest.raises(ValueError, match=r"one of \('none', 'diag', 'full'\); got 'ful'$"):
        hebbian_mlp(facts, 4, whitening="ful")
