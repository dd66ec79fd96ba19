"""Tests of assocmem.mlps.editing.model: shapes, causal masking, RoPE, the experts and swapping."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, check_lm_tokens, kaiming_embedding, rope
from assocmem.mlps.mlp import BilinearMLP

F64 = torch.float64
V, D = 20, 8
CFG = EditingLMConfig(vocab_size=V, d=D, qk_hidden=6, aux_rank=2, router_hidden=4, dtype=F64)
E = kaiming_embedding(V, D, seed=0, dtype=F64)


def _expert(seed=0, d=D, m=5):
    g = torch.Generator().manual_seed(seed)
    return BilinearMLP(torch.randn(m, d, generator=g, dtype=F64), torch.randn(m, d, generator=g, dtype=F64),
                       torch.randn(d, m, generator=g, dtype=F64), construction="test")


MODEL = EditingLM(CFG, E, _expert(), seed=0)
TOKENS = torch.randint(0, V, (3, 7), generator=torch.Generator().manual_seed(1))


def test_shapes_and_dtypes():
    logits = MODEL(TOKENS)
    assert logits.shape == (3, 7, V) and logits.dtype == F64
    x, a = MODEL.attention(TOKENS)
    assert x.shape == (3, 7, D) and a.shape == (3, 7, 7)
    assert torch.allclose(a.sum(-1), torch.ones(3, 7, dtype=F64), atol=1e-14)
    alpha = MODEL.router(x)
    assert alpha.shape == (3, 7, 1) and bool(((alpha > 0) & (alpha < 1)).all())
    xt = MODEL.expert_input(x)
    assert torch.allclose(xt.norm(dim=-1), torch.ones(3, 7, dtype=F64), atol=1e-14)


def test_causal_mask():
    x, a = MODEL.attention(TOKENS)
    assert float(a.detach().triu(1).abs().max()) == 0.0
    changed = TOKENS.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % V
    before, after = MODEL(TOKENS), MODEL(changed)
    assert torch.equal(before[:, :4], after[:, :4])  # positions 0..3 never see tokens 4..
    assert not torch.allclose(before[:, 4:], after[:, 4:])


def test_rope_relative_positions():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(1, 1, D, generator=g, dtype=F64), torch.randn(1, 1, D, generator=g, dtype=F64)
    seq_q, seq_k = q.expand(1, 9, D).contiguous(), k.expand(1, 9, D).contiguous()
    rq, rk = rope(seq_q), rope(seq_k)
    dots = {(t, s): float(rq[0, t] @ rk[0, s]) for t in range(9) for s in range(9)}
    assert math.isclose(dots[(5, 2)], dots[(8, 5)], abs_tol=1e-12)  # same offset 3
    assert math.isclose(dots[(4, 4)], float(q[0, 0] @ k[0, 0]), abs_tol=1e-12)  # offset 0: no change
    assert torch.allclose(rope(seq_q).norm(dim=-1), seq_q.norm(dim=-1), atol=1e-12)  # a rotation


def test_feed_forward_is_the_two_expert_mixture():
    x, _ = MODEL.attention(TOKENS)
    alpha = MODEL.router(x)
    fact = MODEL.fact_expert(x / x.norm(dim=-1, keepdim=True))
    aux = x @ MODEL.aux_U.weight.T @ MODEL.aux_V.weight.T  # x U V
    assert torch.allclose(MODEL.feed_forward(x), alpha * fact + (1 - alpha) * aux, atol=1e-12)


def test_frozen_pieces_and_trainable_ones():
    names = {n for n, p in MODEL.named_parameters() if p.requires_grad}
    assert not any(n.startswith("fact_expert") for n in names)
    assert "embedding" in dict(MODEL.named_buffers())
    assert {id(p) for p in MODEL.trainable_parameters()} == {id(p) for p in MODEL.parameters() if p.requires_grad}
    MODEL(TOKENS).sum().backward()
    assert MODEL.query.W1.weight.grad is not None and MODEL.aux_U.weight.grad is not None
    assert all(p.grad is None for p in MODEL.fact_expert.parameters())
    MODEL.zero_grad(set_to_none=True)


def test_swap_shares_everything_but_the_expert():
    other = _expert(seed=5)
    swapped = MODEL.with_fact_expert(other)
    assert swapped.query is MODEL.query and swapped.router_in is MODEL.router_in
    assert swapped.embedding.data_ptr() == MODEL.embedding.data_ptr()
    assert swapped.fact_expert is other and MODEL.fact_expert is not other
    x, _ = MODEL.attention(TOKENS)
    assert torch.equal(swapped.attention(TOKENS)[0], x)
    assert not torch.allclose(swapped(TOKENS), MODEL(TOKENS))
    # swapping the same expert back gives the same logits
    assert torch.equal(MODEL.with_fact_expert(MODEL.fact_expert)(TOKENS), MODEL(TOKENS))


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_expert_keeps_its_dtype_in_a_float32_model():
    cfg = EditingLMConfig(vocab_size=V, d=D, qk_hidden=6, aux_rank=2, router_hidden=4)
    expert = _expert()
    m = EditingLM(cfg, E, expert)
    assert expert.B.dtype == F64 and m.query.W1.weight.dtype == torch.float32
    assert m(TOKENS).dtype == torch.float32


def test_kaiming_embedding():
    T = kaiming_embedding(1000, 16, seed=3)
    assert T.shape == (1000, 16) and float(T.abs().max()) <= math.sqrt(6 / 16)
    assert torch.equal(T, kaiming_embedding(1000, 16, seed=3))


@pytest.mark.parametrize("call, match", [
    (lambda: EditingLMConfig(vocab_size=1), "vocab_size must be >= 2"),
    (lambda: EditingLMConfig(vocab_size=5, d=7), "d must be even"),
    (lambda: EditingLMConfig(vocab_size=5, aux_rank=0), "aux_rank must be >= 1"),
    (lambda: EditingLMConfig(vocab_size=5, rope_base=0.0), "rope_base must be > 0"),
    (lambda: EditingLMConfig(vocab_size=5, dtype=torch.float16), "float16"),
    (lambda: EditingLM(CFG, E[:5], _expert()), "embedding must be a tensor of shape"),
    (lambda: EditingLM(CFG, E * math.nan, _expert()), "non-finite"),
    (lambda: EditingLM(CFG, E, _expert(d=6)), "fact expert must map"),
    (lambda: EditingLM(CFG, E, "mlp"), "must be a torch.nn.Module"),
    (lambda: EditingLM(CFG, E, _expert(), seed=1.5), "seed must be an integer"),
    (lambda: MODEL(TOKENS.float()), "integer tensor"),
    (lambda: MODEL(TOKENS[0]), "shape \\(B, T\\)"),
    (lambda: MODEL(TOKENS + V), "must lie in"),
    (lambda: check_lm_tokens([[1]], V), "must be a torch.Tensor"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_refused_expert_is_left_as_the_caller_gave_it():
    """Validate every argument first, then freeze: a refused expert keeps its requires_grad flags."""
    for wrong, args, match in ((_expert(d=D + 1), {}, "must map R\\^d -> R\\^d"),
                               (torch.nn.Linear(D, 3, dtype=F64), {}, "must map R\\^d -> R\\^d"),
                               (_expert(), {"seed": 1.5}, "seed must be an integer"),
                               (_expert(), {"seed": True}, "seed must be an integer")):
        wrong.requires_grad_(True)
        with pytest.raises(ValueError, match=match):
            EditingLM(CFG, E, wrong, **args)
        assert all(p.requires_grad for p in wrong.parameters())
    wrong = torch.nn.Linear(D, 3, dtype=F64)
    with pytest.raises(ValueError, match="must map R\\^d -> R\\^d"):
        MODEL.with_fact_expert(wrong)
    assert all(p.requires_grad for p in wrong.parameters())
