"""The SSFR Transformer: shapes, causal masking, fast path against the full forward, the swap, the oracle."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.margins.decoding import accuracy
from assocmem.mlps.mlp import hebbian_mlp
from assocmem.mlps.transformer import (
    IdentityMLP,
    SSFRTask,
    SSFRTransformer,
    TransformerConfig,
    embedding_table,
    fact_adaptive_accuracy,
    fact_map,
    fact_set,
    ssfr_accuracy,
    ssfr_batch,
    attention_noise,
)
from tests.mlps.transformer._helpers import F64, copy_the_key, tiny


def batch(task, n=6, seed=0):
    return ssfr_batch(task, torch.arange(task.num_facts), n, torch.Generator().manual_seed(seed))


def test_shapes_and_unit_rows():
    task, _, model = tiny()
    b = batch(task)
    assert model(b.tokens).shape == (6, task.num_facts)
    u = model.mlp_input(b.tokens)
    assert u.shape == (6, 16)
    assert torch.allclose(torch.linalg.vector_norm(u, dim=1), torch.ones(6, dtype=F64), atol=1e-14)
    a = model.attention_weights(b.tokens)
    assert a.shape == (6, task.seq_len) and torch.allclose(a.sum(1), torch.ones(6, dtype=F64), atol=1e-14)
    assert model.attention_pattern(b.tokens).shape == (6, task.seq_len, task.seq_len)
    assert model.attention_outputs(b.tokens).shape == (6, task.seq_len, 16)
    logits = model(b.tokens)
    assert float(logits.detach().abs().max()) <= 1 + 1e-12  # cosines


def test_changing_a_later_token_never_changes_an_earlier_position():
    task, _, model = tiny()
    toks = batch(task, 4).tokens
    out = model.attention_outputs(toks)
    pattern = model.attention_pattern(toks)
    assert bool((pattern.triu(1) == 0).all())
    for s in range(task.seq_len):
        other = toks.clone()
        other[:, s] = (other[:, s] + 1) % task.vocab_size
        changed = model.attention_outputs(other)
        assert torch.equal(changed[:, :s], out[:, :s]), f"position < {s} changed"
        assert not torch.allclose(changed[:, s], out[:, s])


def test_the_query_output_depends_on_every_earlier_token():
    task, _, model = tiny()
    toks = batch(task, 4).tokens
    o = model.query_attention_output(toks)
    for t in range(task.seq_len - 1):
        other = toks.clone()
        other[:, t] = task.num_facts + (other[:, t] - task.num_facts + 1) % task.junk_vocab if t != task.key_position \
            else (other[:, t] + 1) % task.num_facts
        diff = (model.query_attention_output(other) - o).abs().amax(dim=1)
        assert bool((diff > 1e-8).all()), f"the query output ignores position {t}"


@pytest.mark.parametrize("cfg", [{}, {"attention_residual": True}, {"freeze_value_output": False}])
def test_the_query_only_path_equals_the_full_causal_forward(cfg):
    task, _, model = tiny(**cfg)
    if not cfg.get("freeze_value_output", True):
        with torch.no_grad():  # make W_V, W_O non-trivial
            g = torch.Generator().manual_seed(9)
            model.attention.W_V.add_(0.3 * torch.randn(16, 16, generator=g, dtype=F64))
            model.attention.W_O.add_(0.3 * torch.randn(16, 16, generator=g, dtype=F64))
    toks = batch(task, 8).tokens
    full_a = model.attention_pattern(toks)[:, -1]
    full_o = model.attention_outputs(toks)[:, -1]
    assert torch.allclose(model.attention_weights(toks), full_a, rtol=0, atol=1e-14)
    assert torch.allclose(model.query_attention_output(toks), full_o, rtol=0, atol=1e-12)


def test_parameters_init_and_devices():
    task, _, model = tiny()
    assert [tuple(p.shape) for p in model.attention_parameters()] == [(16, 16), (16, 16)]
    assert torch.equal(model.attention.W_V, torch.eye(16, dtype=F64))
    _, _, free = tiny(freeze_value_output=False)
    assert len(free.attention_parameters()) == 4
    _, _, again = tiny()
    assert torch.equal(model.attention.W_Q, again.attention.W_Q)  # seeded
    assert model.device.type == "cpu" and model.num_mlp_parameters == 0
    assert IdentityMLP().num_parameters == 0
    assert not any(b.requires_grad for b in model.buffers())


def test_the_swap_shares_the_attention_and_changes_no_weight():
    task, E, model = tiny(d=16, F=8)
    f_b = fact_map(task, 5)
    mlp_b = hebbian_mlp(fact_set(E, task, f_b), 64, "full")
    before = {k: v.clone() for k, v in model.attention.state_dict().items() if isinstance(v, torch.Tensor)}
    swapped = model.with_mlp(mlp_b)
    assert swapped.attention is model.attention
    assert all(p.data_ptr() == q.data_ptr() for p, q in zip(swapped.attention_parameters(),
                                                            model.attention_parameters()))
    fact_adaptive_accuracy(model, mlp_b, f_b, 2, 0)
    after = model.attention.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert isinstance(model.mlp, IdentityMLP) and swapped.mlp is mlp_b
    assert not any(p.requires_grad for p in mlp_b.parameters())
    assert swapped.num_mlp_parameters == 3 * 64 * 16


def test_a_perfect_mlp_behind_a_key_copying_attention_is_always_right():
    # vocab = 8 + 3 + 1 = 12 <= d = 16: W_Q, W_K set by hand make the attention a one-hot on the key
    task, E, model = tiny(d=16, F=8, VJ=3, J=3)
    f = fact_map(task, 1)
    mlp = hebbian_mlp(fact_set(E, task, f), 200, "full")
    assert accuracy(mlp, fact_set(E, task, f)) == 1.0  # the MLP alone stores every fact
    copy_the_key(model)
    swapped = model.with_mlp(mlp)
    a = swapped.attention_weights(batch(task, 20).tokens)
    assert float((a[:, task.key_position] - 1).detach().abs().max()) < 1e-12
    assert ssfr_accuracy(swapped, task, f, contexts_per_key=16, seed=0) == 1.0
    noise = attention_noise(swapped, task, contexts_per_key=16, seed=0)
    assert float(noise.max()) < 1e-14  # 0 to float64 rounding: u is the key itself


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_float32_model_with_a_float64_mlp():
    task = SSFRTask(8, 3, 3)
    E = embedding_table(task, 16, seed=0)
    mlp = hebbian_mlp(fact_set(E, task, fact_map(task, 0)), 32, "full")
    model = SSFRTransformer(TransformerConfig(d=16, device="cpu"), E, mlp, task=task)
    out = model(batch(task).tokens)
    assert out.dtype == torch.float32 and model.embedding.dtype == torch.float32


@pytest.mark.gpu
def test_cuda_matches_cpu():
    task = SSFRTask(8, 3, 3)
    E = embedding_table(task, 16, seed=0)
    cpu = SSFRTransformer(TransformerConfig(d=16, dtype=F64, device="cpu"), E, task=task)
    gpu = SSFRTransformer(TransformerConfig(d=16, dtype=F64, device="cuda"), E, task=task)
    toks = batch(task).tokens
    assert torch.allclose(gpu(toks).cpu(), cpu(toks), atol=1e-12)


def test_a_refused_mlp_is_left_as_the_caller_gave_it():
    """Validate first, then freeze and move: a wrong-sized MLP keeps its requires_grad and mode."""
    task, E, _ = tiny()
    for wrong in (torch.nn.Linear(16, 5, dtype=F64), torch.nn.Linear(7, 16, dtype=F64),
                  torch.nn.Sequential(torch.nn.Linear(16, 16, dtype=F64), torch.nn.Linear(3, 16, dtype=F64))):
        wrong.train()
        with pytest.raises(ValueError, match="must map R\\^d -> R\\^d"):
            SSFRTransformer(TransformerConfig(d=16, dtype=F64, device="cpu"), E, wrong, task=task)
        assert all(p.requires_grad for p in wrong.parameters()) and wrong.training
    _, _, model = tiny()
    wrong = torch.nn.Linear(16, 5, dtype=F64)
    with pytest.raises(ValueError, match="must map R\\^d -> R\\^d"):
        model.with_mlp(wrong)
    assert all(p.requires_grad for p in wrong.parameters())
    right = torch.nn.Linear(16, 16, dtype=F64)
    SSFRTransformer(TransformerConfig(d=16, dtype=F64, device="cpu"), E, right, task=task)
    assert not any(p.requires_grad for p in right.parameters()) and right.training  # frozen once accepted
