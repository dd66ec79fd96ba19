"""Every main module round-trips through ``state_dict`` and can be built empty (issue 29, item 3).

For each module: its ``state_dict`` (through ``torch.save`` / ``torch.load(weights_only=True)``,
as a checkpoint travels) loads into a module built without values -- on the meta device, the
torch idiom, with ``load_state_dict(saved, assign=True)``, and empty on the CPU without
``assign`` -- and the loaded module gives the same outputs and carries the same metadata
(``num_pairs`` and settings of the matrix memories, ``construction`` and ``info`` of the MLPs,
the gate, the SDM's radius). The old modules could not be built on the meta device (their
constructors read the weights' values), had no ``empty``, and lost that metadata.
"""

from __future__ import annotations

import io

import pytest
import torch

from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.hebbian_theory.rewrite import GatedMLP, gated_mlp
from assocmem.mlps.mlp.architectures import BilinearMLP, ExactK2Memory, GatedReLUMLP
from assocmem.mlps.mlp.data_dependent import data_dependent_mlp
from assocmem.mlps.mlp.hebbian import exact_k2_memory, hebbian_mlp
from assocmem.mlps.mlp.ntk import ntk_mlp
from assocmem.sdm.read import random_binary_patterns
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.sdm.trained.recall import RecallAttention, RecallConfig, make_recall_batch

D, M = 8, 24
FACTS = make_fact_set(12, D, seed=3)
RECALL = RecallConfig(n=8, m=4, vocab=6, qk="layernorm", values="l2", seed=2)
RECALL_BATCH = make_recall_batch(5, 4, 8, 6, 0.1, torch.Generator().manual_seed(0))


def _recall_empty(device):
    with torch.device(device):  # the constructor takes shapes only; the context places it
        return RecallAttention(RecallConfig(n=8, m=4, vocab=6, qk="layernorm"))


def _pairs():
    g = torch.Generator().manual_seed(0)
    keys = torch.nn.functional.normalize(torch.randn(6, D, dtype=torch.float64, generator=g), dim=-1)
    return keys, torch.randn(6, 3, dtype=torch.float64, generator=g)


def _metadata(module) -> dict:
    names = ("num_pairs", "rtol", "atol", "beta", "construction", "info", "gate", "d", "config")
    return {n: getattr(module, n) for n in names if hasattr(module, n) and not callable(getattr(module, n))}


# name: (the module, built and written; empty on a device; an input; the module's call)
CASES = {
    "outer_product": (lambda: OuterProductMemory(D, 3, device="cpu").write(*_pairs()),
                      lambda device: OuterProductMemory(D, 3, device=device), FACTS.keys, None),
    "least_squares": (lambda: LeastSquaresMemory(D, 3, rtol=1e-9, device="cpu").write(*_pairs()),
                      lambda device: LeastSquaresMemory(D, 3, device=device), FACTS.keys, None),
    "delta_rule": (lambda: DeltaRuleMemory(D, 3, beta=0.5, device="cpu").write(*_pairs()),
                   lambda device: DeltaRuleMemory(D, 3, device=device), FACTS.keys, None),
    "hebbian": (lambda: hebbian_mlp(FACTS, M, whitening="full"),
                lambda device: BilinearMLP.empty(D, M, device=device), FACTS.keys, None),
    "data_dependent": (lambda: data_dependent_mlp(FACTS, M),
                       lambda device: BilinearMLP.empty(D, M, device=device), FACTS.keys, None),
    "exact_k2": (lambda: exact_k2_memory(FACTS),
                 lambda device: ExactK2Memory.empty(12, D, device=device), FACTS.keys, None),
    "ntk": (lambda: ntk_mlp(FACTS, M),
            lambda device: GatedReLUMLP.empty(D, M, device=device), FACTS.keys, None),
    "gated": (lambda: gated_mlp(D, M, gate="silu", seed=1),
              lambda device: GatedMLP.empty(D, M, device=device), FACTS.keys, None),
    "neuron_sdm": (lambda: NeuronSDM(16, 256, 5, seed=0, device="cpu").write(
                       *(random_binary_patterns(10, 16, seed=1, device="cpu"),) * 2),
                   lambda device: NeuronSDM.empty(16, 256, 2, device=device),
                   random_binary_patterns(10, 16, seed=1, device="cpu"), lambda mem, x: mem.read(x)),
    "recall_attention": (lambda: RecallAttention(RECALL), _recall_empty, RECALL_BATCH, None),
}


def _checkpoint(module) -> dict:
    buffer = io.BytesIO()
    torch.save(module.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def _call(case, module, x):
    call = CASES[case][3]
    return module(x) if call is None else call(module, x)


@pytest.mark.parametrize("case", CASES)
def test_meta_built_module_loads_a_checkpoint_with_assign(case):
    build, empty, x, _ = CASES[case]
    saved = build()
    fresh = empty("meta")
    assert all(t.is_meta for t in fresh.state_dict().values() if isinstance(t, torch.Tensor))
    fresh.load_state_dict(_checkpoint(saved), assign=True)
    assert not any(t.is_meta for t in fresh.state_dict().values() if isinstance(t, torch.Tensor))
    assert torch.equal(_call(case, fresh, x), _call(case, saved, x))
    assert _metadata(fresh) == _metadata(saved)


@pytest.mark.parametrize("case", CASES)
def test_empty_cpu_module_loads_a_checkpoint(case):
    build, empty, x, _ = CASES[case]
    saved = build()
    fresh = empty("cpu")
    fresh.load_state_dict(_checkpoint(saved))
    assert torch.equal(_call(case, fresh, x), _call(case, saved, x))
    assert _metadata(fresh) == _metadata(saved)


@pytest.mark.parametrize("cls, args", [(BilinearMLP, (D, M)), (ExactK2Memory, (12, D)),
                                       (GatedReLUMLP, (D, M)), (GatedMLP, (D, M))])
def test_empty_follows_the_torch_device_context(cls, args):
    with torch.device("meta"):
        module = cls.empty(*args)
    assert all(t.is_meta for t in module.state_dict().values() if isinstance(t, torch.Tensor))
    assert NeuronSDM.empty(4, 8, 1, device="meta").neuron_addresses.is_meta


def test_the_metadata_travels():
    mlp = hebbian_mlp(FACTS, M, whitening="full", seed=5)
    fresh = BilinearMLP.empty(D, M, device="meta")
    fresh.load_state_dict(mlp.state_dict(), assign=True)
    assert fresh.construction == "hebbian-full" and fresh.info["whitening"] == "full"
    assert fresh.info["seed"] == 5 and fresh.info is not mlp.info  # a copy, not the same dict
    ls = LeastSquaresMemory(D, 3, rtol=1e-9, device="cpu")
    other = LeastSquaresMemory(D, 3, rtol=0.5, device="cpu")
    other.load_state_dict(ls.state_dict())
    assert other.rtol == 1e-9  # the saved settings replace the fresh memory's
    delta = DeltaRuleMemory(D, 3, beta=1.0, device="cpu")
    delta.load_state_dict(DeltaRuleMemory(D, 3, beta=0.25, device="cpu").state_dict())
    assert delta.beta == 0.25
    silu = GatedMLP.empty(D, M)
    silu.load_state_dict(gated_mlp(D, M, gate="silu").state_dict())
    assert silu.gate == "silu"
    recall = _recall_empty("cpu")
    recall.load_state_dict(RecallAttention(RECALL).state_dict())
    assert recall.config == RECALL  # the saved values rule and seed, not the fresh model's
    sdm = NeuronSDM(16, 64, 3, device="cpu")
    sdm.load_state_dict(NeuronSDM(16, 64, 7, device="cpu").state_dict())
    assert sdm.d == 7 and sdm.storage is None


def test_a_written_sdm_loads_an_unwritten_one_and_forgets():
    P = random_binary_patterns(5, 16, seed=2, device="cpu")
    written = NeuronSDM(16, 64, 5, device="cpu").write(P, P)
    written.load_state_dict(NeuronSDM(16, 64, 5, device="cpu").state_dict())
    assert written.storage is None and float(written.counts.sum()) == 0.0


def test_an_old_record_without_settings_still_loads():
    mem = DeltaRuleMemory(D, 3, beta=0.5, device="cpu")
    state = mem.state_dict()
    state["_extra_state"] = {"num_pairs": 2}
    mem.load_state_dict(state)
    assert mem.num_pairs == 2 and mem.beta == 0.5


@pytest.mark.parametrize("module, record, match", [
    (BilinearMLP.empty(2, 3), {"construction": 1, "info": {}}, "construction"),
    (BilinearMLP.empty(2, 3), {"info": {}}, "construction"),
    (GatedReLUMLP.empty(2, 3), {"info": []}, "info"),
    (GatedMLP.empty(2, 3), {"gate": "tanh"}, "gate"),
    (NeuronSDM.empty(4, 8, 1), {"d": 9}, "d"),
    (DeltaRuleMemory(2, 3, device="cpu"), {"num_pairs": 0, "beta": 2.0}, "beta"),
    (OuterProductMemory(2, 3, device="cpu"), {"num_pairs": 0, "beta": 0.5}, "num_pairs"),
    (RecallAttention(RecallConfig(n=4, m=2, vocab=3)), {"config": {"n": 4, "bad": 1}}, "not a RecallConfig"),
    (RecallAttention(RecallConfig(n=4, m=2, vocab=3)), {"config": {"n": 4, "m": 2, "vocab": 3, "heads": 2}},
     "differs from this one in heads"),
])
def test_a_bad_record_is_refused(module, record, match):
    state = module.state_dict()
    state["_extra_state"] = record
    with pytest.raises(ValueError, match=match):
        module.load_state_dict(state)


def test_empty_checks_its_sizes_and_dtype():
    with pytest.raises(ValueError, match="m must be a positive integer"):
        BilinearMLP.empty(4, 0)
    with pytest.raises(ValueError, match="F must be a positive integer"):
        ExactK2Memory.empty(0, 4)
    with pytest.raises(ValueError, match="float16"):
        GatedReLUMLP.empty(4, 2, dtype=torch.float16)
    with pytest.raises(ValueError, match="r >= 1"):
        NeuronSDM.empty(4, 0, 1)
    assert BilinearMLP.empty(4, 2, 3, dtype=torch.float32).B.shape == (3, 2)
