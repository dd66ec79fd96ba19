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

import dataclasses
import io

import pytest
import torch

from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory
from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, kaiming_embedding
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.hebbian_theory.rewrite import GatedMLP, gated_mlp
from assocmem.mlps.mlp.architectures import BilinearMLP, ExactK2Memory, GatedReLUMLP
from assocmem.mlps.mlp.data_dependent import data_dependent_mlp
from assocmem.mlps.mlp.hebbian import exact_k2_memory, hebbian_mlp
from assocmem.mlps.mlp.ntk import ntk_mlp
from assocmem.mlps.transformer.model import CausalAttention, IdentityMLP, SSFRTransformer, TransformerConfig
from assocmem.mlps.transformer.ssfr import SSFRTask, embedding_table
from assocmem.sdm.read import random_binary_patterns
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.sdm.trained.recall import RecallAttention, RecallConfig, make_recall_batch

D, M = 8, 24
FACTS = make_fact_set(12, D, seed=3)
RECALL = RecallConfig(n=8, m=4, vocab=6, qk="layernorm", values="l2", seed=2)
RECALL_BATCH = make_recall_batch(5, 4, 8, 6, 0.1, torch.Generator().manual_seed(0))

TASK = SSFRTask(8, 3, 3)
SSFR_CONFIG = TransformerConfig(d=16, dtype=torch.float32, device="cpu", attention_residual=True,
                                freeze_value_output=False)
TOKENS = torch.cat([torch.randint(0, 11, (5, TASK.seq_len - 1), generator=torch.Generator().manual_seed(4)),
                    torch.full((5, 1), TASK.query_token)], dim=1)  # SSFR sequences, Q last
LM_CONFIG = EditingLMConfig(vocab_size=20, d=8, qk_hidden=6, aux_rank=2, router_hidden=4, rope_base=500.0,
                            norm_eps=1e-5, dtype=torch.float64)
LM_TOKENS = torch.randint(0, 20, (3, 7), generator=torch.Generator().manual_seed(1))


def _bilinear(d, m, seed=0):
    g = torch.Generator().manual_seed(seed)
    A, G, B = (torch.randn(*shape, generator=g, dtype=torch.float64) for shape in ((m, d), (m, d), (d, m)))
    return BilinearMLP(A, G, B, construction="test")


def _attention():
    attention = CausalAttention(16, False, 0.3, torch.Generator().manual_seed(2), torch.float64)
    with torch.no_grad():  # not the identity, so that a load which skipped W_V, W_O would show
        attention.W_V.add_(0.1 * attention.W_Q)
    return attention


def _ssfr():
    return SSFRTransformer(SSFR_CONFIG, embedding_table(TASK, 16, seed=0), _bilinear(16, 5), task=TASK, seed=3)


def _ssfr_empty(device):  # the saved dtype (a load without assign keeps the receiver's); the saved config and task replace the rest
    return SSFRTransformer.empty(TransformerConfig(d=16, dtype=torch.float32), TASK, BilinearMLP.empty(16, 5, device=device),
                                 device=device)


def _lm():
    return EditingLM(LM_CONFIG, kaiming_embedding(20, 8, dtype=torch.float64), _bilinear(8, 5), seed=1)


def _lm_empty(device):  # norm_eps and rope_base from the defaults: the saved ones replace them
    config = EditingLMConfig(vocab_size=20, d=8, qk_hidden=6, aux_rank=2, router_hidden=4, dtype=torch.float64)
    return EditingLM.empty(config, BilinearMLP.empty(8, 5, device=device), device=device)


def _recall_empty(device):
    with torch.device(device):  # the constructor takes shapes only; the context places it
        return RecallAttention(RecallConfig(n=8, m=4, vocab=6, qk="layernorm"))


def _pairs():
    g = torch.Generator().manual_seed(0)
    keys = torch.nn.functional.normalize(torch.randn(6, D, dtype=torch.float64, generator=g), dim=-1)
    return keys, torch.randn(6, 3, dtype=torch.float64, generator=g)


def _metadata(module) -> dict:
    names = ("num_pairs", "rtol", "atol", "beta", "construction", "info", "gate", "d", "config", "task",
             "frozen_identity")
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
    "causal_attention": (_attention, lambda device: CausalAttention.empty(16, dtype=torch.float64, device=device),
                         torch.randn(3, 5, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(5)),
                         lambda mem, h: torch.cat([mem.full(h)[0][:, -1], mem.at_last(h)[0]])),
    "identity_mlp": (IdentityMLP, lambda device: IdentityMLP().to(device), FACTS.keys, None),
    "ssfr_transformer": (_ssfr, _ssfr_empty, TOKENS, None),
    "editing_lm": (_lm, _lm_empty, LM_TOKENS, None),
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


def test_the_transformers_settings_travel():
    """The settings that change the forward but are no tensor: a loaded model that kept its own
    would give other outputs (the attention residual, W_V and W_O in use, RoPE's base, the norms'
    eps), or train other weights (W_V, W_O)."""
    fresh = _ssfr_empty("cpu")
    fresh.load_state_dict(_ssfr().state_dict())
    assert fresh.config.attention_residual and not fresh.attention.frozen_identity
    assert fresh.attention.W_V.requires_grad and fresh.attention_parameters()[2] is fresh.attention.W_V
    assert fresh.config.dtype == torch.float32 and fresh._mlp_dtype == torch.float64
    swapped = fresh.with_mlp(None)  # the loaded config builds a model where the loaded one lives
    assert swapped.device == fresh.device and swapped(TOKENS).shape == (5, TASK.num_facts)
    frozen = CausalAttention.empty(4, False)
    frozen.load_state_dict(CausalAttention.empty(4, True).state_dict())
    assert frozen.frozen_identity and not frozen.W_V.requires_grad and not frozen.W_O.requires_grad
    lm = _lm_empty("cpu")
    lm.load_state_dict(_lm().state_dict())
    assert lm.config == LM_CONFIG and lm.attn_norm.eps == lm.out_norm.eps == lm.query.norm.eps == 1e-5


def test_the_transformers_load_into_float32_and_report_it():
    """Without ``assign`` the tensors are copied into the empty model's dtype; its config says so."""
    lm = EditingLM.empty(dataclasses.replace(LM_CONFIG, dtype=torch.float32), BilinearMLP.empty(8, 5))
    lm.load_state_dict(_lm().state_dict())
    assert lm.config.dtype == torch.float32 and lm(LM_TOKENS).dtype == torch.float32
    torch.testing.assert_close(lm(LM_TOKENS), _lm()(LM_TOKENS).float(), rtol=1e-4, atol=1e-4)
    ssfr = SSFRTransformer.empty(dataclasses.replace(SSFR_CONFIG, dtype=torch.float64), TASK,
                                 BilinearMLP.empty(16, 5))
    ssfr.load_state_dict(_ssfr().state_dict())
    assert ssfr.config.dtype == torch.float64 and ssfr(TOKENS).dtype == torch.float64


def test_empty_transformers_draw_nothing_and_follow_the_device_context():
    state = torch.random.get_rng_state()
    _lm_empty("cpu"), _ssfr_empty("cpu"), CausalAttention.empty(4)
    assert torch.equal(torch.random.get_rng_state(), state)
    with torch.device("meta"):
        models = (_lm_empty(None), _ssfr_empty(None), CausalAttention.empty(4))
    assert all(t.is_meta for m in models for t in m.state_dict().values() if isinstance(t, torch.Tensor))
    assert CausalAttention.empty(4).W_Q.dtype == torch.get_default_dtype()


@pytest.mark.parametrize("make, record, match", [
    (lambda: CausalAttention.empty(4), {"frozen_identity": 1}, "frozen_identity"),
    (lambda: CausalAttention.empty(4), {}, "frozen_identity"),
    (_ssfr, {"config": {"d": 16}}, "'config': dict, 'task': dict"),
    (_ssfr, {"config": {"d": 16, "bad": 1}, "task": {"num_facts": 8, "junk_vocab": 3, "junk_length": 3}},
     "not valid"),
    (_ssfr, {"config": {"d": 12}, "task": {"num_facts": 8, "junk_vocab": 3, "junk_length": 3}}, "d = 12"),
    (_lm, {"config": {"vocab_size": 20, "d": 8, "qk_hidden": 5, "aux_rank": 2, "router_hidden": 4}},
     "differs from this one in qk_hidden"),
    (_lm, {"config": {"vocab_size": 20, "nope": 1}}, "not an EditingLMConfig"),
    (_lm, {"cfg": {}}, "'config': dict"),
])
def test_a_bad_transformer_record_is_refused(make, record, match):
    module = make()
    state = module.state_dict()
    state["_extra_state"] = record
    with pytest.raises(ValueError, match=match):
        module.load_state_dict(state)


def test_empty_transformers_check_their_arguments():
    with pytest.raises(ValueError, match="TransformerConfig"):
        SSFRTransformer.empty({"d": 16}, TASK)
    with pytest.raises(ValueError, match="SSFRTask"):
        SSFRTransformer.empty(TransformerConfig(d=16), (8, 3, 3))
    with pytest.raises(ValueError, match="torch.nn.Module"):
        SSFRTransformer.empty(TransformerConfig(d=16), TASK, lambda x: x)
    with pytest.raises(ValueError, match="EditingLMConfig"):
        EditingLM.empty(TransformerConfig(d=16), IdentityMLP())
    with pytest.raises(ValueError, match="torch.nn.Module"):
        EditingLM.empty(LM_CONFIG, None)
    with pytest.raises(ValueError, match="d must be"):
        CausalAttention.empty(0)
    with pytest.raises(ValueError, match="float"):
        CausalAttention.empty(4, dtype=torch.float16)
