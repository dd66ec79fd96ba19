"""Tests for assocmem.linear.attention: forms agree, references equal naive loops, masking is causal."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.linear.attention import causal_mask, linear_attention, softmax_attention, softmax_weights
from assocmem.linear.memory import OuterProductMemory

DT = torch.float64


def qkv(batch, T, d_k, d_v, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, T, d_k, generator=g, dtype=DT)
    k = torch.randn(*batch, T, d_k, generator=g, dtype=DT)
    v = torch.randn(*batch, T, d_v, generator=g, dtype=DT)
    return q, k, v


def naive_softmax(q, k, v, causal, scale):
    """Loop over query positions, one softmax per row, for 2-D (T, d) inputs."""
    out = torch.zeros(q.shape[0], v.shape[-1], dtype=q.dtype)
    for t in range(q.shape[0]):
        last = t + 1 if causal else k.shape[0]
        scores = torch.tensor([scale * float(q[t] @ k[i]) for i in range(last)], dtype=q.dtype)
        w = torch.exp(scores - scores.max())
        w = w / w.sum()
        out[t] = sum(w[i] * v[i] for i in range(last))
    return out


def test_causal_mask():
    m = causal_mask(4, device="cpu")
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert m[2, 2] and m[3, 0] and not m[0, 1]
    assert int(m.sum()) == 10


# --------------------------------------------------------------------------- softmax


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("scale", [None, 0.5])
def test_softmax_equals_naive_loop(causal, scale):
    q, k, v = qkv((), 7, 4, 3, seed=1)
    got = softmax_attention(q, k, v, causal=causal, scale=scale)
    want = naive_softmax(q, k, v, causal, 1.0 if scale is None else scale)
    torch.testing.assert_close(got, want)


def test_softmax_batched_and_default_is_unscaled():
    q, k, v = qkv((2, 3), 5, 4, 6, seed=2)
    out = softmax_attention(q, k, v)
    assert out.shape == (2, 3, 5, 6)
    torch.testing.assert_close(out[1, 2], naive_softmax(q[1, 2], k[1, 2], v[1, 2], True, 1.0))
    scaled = softmax_attention(q, k, v, scale=1 / math.sqrt(4))
    assert not torch.allclose(out, scaled)
    # the first position sees only itself
    torch.testing.assert_close(out[..., 0, :], v[..., 0, :])


def test_softmax_is_stable_for_huge_scores():
    q, k, v = qkv((), 6, 3, 2, seed=3)
    out = softmax_attention(1e4 * q, k, v)
    assert torch.isfinite(out).all()
    # with huge scores it picks the single best visible key
    scores = (1e4 * q) @ k.T
    scores = scores.masked_fill(~causal_mask(6), float("-inf"))
    torch.testing.assert_close(out, v[scores.argmax(dim=-1)])


# --------------------------------------------------------------------------- linear attention


@pytest.mark.parametrize("T", [1, 5, 16, 17, 33])
@pytest.mark.parametrize("chunk_size", [1, 4, 16, 64])
def test_linear_attention_forms_agree(T, chunk_size):
    q, k, v = qkv((2, 3), T, 5, 4, seed=T)
    parallel = linear_attention(q, k, v, form="parallel")
    recurrent = linear_attention(q, k, v, form="recurrent")
    chunked = linear_attention(q, k, v, form="chunked", chunk_size=chunk_size)
    assert parallel.shape == (2, 3, T, 4)
    torch.testing.assert_close(recurrent, parallel, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(chunked, parallel, rtol=1e-12, atol=1e-12)


def test_linear_attention_is_the_seed_sum_and_the_memory_read():
    q, k, v = qkv((), 6, 3, 2, seed=4)
    out = linear_attention(q, k, v, form="recurrent")
    for t in range(6):
        want = sum(v[i] * float(k[i] @ q[t]) for i in range(t + 1))  # sum_{i<=t} v_i (k_i^T q_t)
        torch.testing.assert_close(out[t], want)
        mem = OuterProductMemory(3, 2, device="cpu").write(k[: t + 1], v[: t + 1])
        torch.testing.assert_close(out[t], mem.read(q[t]))  # o_t = S_t q_t


def test_linear_attention_non_causal_reads_full_state():
    q, k, v = qkv((2,), 5, 3, 4, seed=5)
    out = linear_attention(q, k, v, causal=False)
    S = torch.einsum("btv,btk->bvk", v, k)  # (B, d_v, d_k) = S_T
    torch.testing.assert_close(out, torch.einsum("bvk,btk->btv", S, q))
    # cross-attention style: fewer queries than keys
    assert linear_attention(q[:, :2], k, v, causal=False).shape == (2, 2, 4)


def test_linear_attention_empty_sequence():
    q, k, v = qkv((2,), 0, 3, 4)
    for form in ("parallel", "recurrent", "chunked"):
        assert linear_attention(q, k, v, form=form).shape == (2, 0, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda q, k, v: softmax_attention(q, k, v),
        lambda q, k, v: linear_attention(q, k, v, form="parallel"),
        lambda q, k, v: linear_attention(q, k, v, form="recurrent"),
        lambda q, k, v: linear_attention(q, k, v, form="chunked", chunk_size=3),
    ],
)
def test_causality_future_does_not_change_past(fn):
    q, k, v = qkv((2,), 10, 4, 3, seed=6)
    base = fn(q, k, v)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    t0 = 6
    q2[:, t0:] += 5.0
    k2[:, t0:] -= 3.0
    v2[:, t0:] *= -7.0
    changed = fn(q2, k2, v2)
    torch.testing.assert_close(changed[:, :t0], base[:, :t0], rtol=0, atol=1e-12)
    assert not torch.allclose(changed[:, t0:], base[:, t0:])


# --------------------------------------------------------------------------- bad input


def test_linear_attention_bad_arguments():
    q, k, v = qkv((2,), 5, 3, 4)
    with pytest.raises(ValueError, match=r"unknown form 'fast'.*'parallel', 'recurrent', 'chunked'"):
        linear_attention(q, k, v, form="fast")
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
            linear_attention(q, k, v, form="chunked", chunk_size=bad)
    with pytest.raises(ValueError, match="causal=False is only supported for form='parallel'"):
        linear_attention(q, k, v, form="recurrent", causal=False)


@pytest.mark.parametrize("fn", [softmax_attention, linear_attention])
def test_shape_mismatches_name_shapes(fn):
    q, k, v = qkv((2,), 5, 3, 4)
    with pytest.raises(ValueError, match=r"d_k.*q \(2, 5, 2\), k \(2, 5, 3\)"):
        fn(q[..., :2], k, v)
    with pytest.raises(ValueError, match=r"same leading shape.*v \(2, 4, 4\)"):
        fn(q, k, v[:, :4])
    with pytest.raises(ValueError, match=r"batch dimensions.*q \(1, 5, 3\)"):
        fn(q[:1], k, v)
    with pytest.raises(ValueError, match=r"same T.*q \(2, 4, 3\), k \(2, 5, 3\)"):
        fn(q[:, :4], k, v)
    with pytest.raises(ValueError, match=r"\(\.\.\., T, d\).*q \(3,\)"):
        fn(q[0, 0], k, v)
    with pytest.raises(ValueError, match="share a dtype"):
        fn(q.float(), k, v)


# --------------------------------------------------------------------------- softmax weights


def test_softmax_weights_are_a_causal_probability_distribution():
    q, k, _ = qkv((2,), 9, 4, 1, seed=7)
    w = softmax_weights(q, k)
    assert w.shape == (2, 9, 9)
    assert (w >= 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 9, dtype=DT), rtol=0, atol=1e-15)
    assert (w.masked_select(~causal_mask(9)) == 0).all()  # nothing from the future
    # the weights are what softmax_attention averages with
    q, k, v = qkv((2,), 9, 4, 3, seed=7)
    torch.testing.assert_close(softmax_weights(q, k, scale=0.3) @ v, softmax_attention(q, k, v, scale=0.3))


def test_score_higher_by_one_gets_e_times_the_weight():
    s = torch.tensor([0.25, 1.25, -2.0, 3.0], dtype=DT)  # exact binary fractions: 1.25 - 0.25 == 1
    q = torch.tensor([[1.0, 0.0]], dtype=DT)
    k = torch.stack([s, torch.zeros_like(s)], dim=-1)  # q^T k_i = s_i
    w = softmax_weights(q, k, causal=False)[0]
    assert abs(float(w[1] / w[0]) / math.e - 1) < 1e-14
    w = softmax_weights(q, k, causal=False, scale=0.125)[0]  # 1/sqrt(64)
    assert abs(float(w[1] / w[0]) / math.exp(0.125) - 1) < 1e-14


# --------------------------------------------------------------------------- agreement of the forms


def test_gamma():
    from assocmem.linear.attention import FLOAT64_UNIT_ROUNDOFF as u, gamma

    assert gamma(0) == 0
    assert gamma(10) == pytest.approx(10 * u, rel=1e-12)
    with pytest.raises(ValueError, match=">= 0"):
        gamma(-1)
    with pytest.raises(ValueError, match="void"):
        gamma(2**53)


def test_agreement_is_exact_on_integer_data_and_within_bound_on_gaussian():
    from assocmem.linear.attention import linear_attention_agreement

    exact = linear_attention_agreement([5, 33], [1, 4, 7], d_k=6, d_v=3, data="integer")
    assert len(exact) == 2 * 4 and set(exact.form) == {"recurrent", "chunked"}
    assert (exact.max_abs_diff == 0).all()
    gauss = linear_attention_agreement([1, 50, 300], [1, 16, 64], d_k=8, d_v=5, seed=3)
    assert (gauss.diff_over_abs_sum <= gauss.bound).all()
    assert (gauss.rel_diff < 1e-13).all()
    assert list(gauss.columns) == ["T", "form", "chunk_size", "max_abs_diff", "output_scale", "rel_diff",
                                   "diff_over_abs_sum", "bound"]
    # deterministic given the seed
    again = linear_attention_agreement([1, 50, 300], [1, 16, 64], d_k=8, d_v=5, seed=3)
    assert gauss.equals(again)


def test_agreement_bad_arguments():
    from assocmem.linear.attention import linear_attention_agreement

    with pytest.raises(ValueError, match="unknown data 'uniform'"):
        linear_attention_agreement([4], [2], data="uniform")
    with pytest.raises(ValueError, match=">= 1"):
        linear_attention_agreement([0], [2])
    with pytest.raises(ValueError, match=">= 1"):
        linear_attention_agreement([4], [0])
    with pytest.raises(ValueError, match="floating"):
        linear_attention_agreement([4], [2], dtype=torch.int64)


# --------------------------------------------------------------------------- one vector, three jobs


def test_shared_vector_scores_are_symmetric_and_self_top():
    from assocmem.linear.attention import score_asymmetry, self_top_rate

    g = torch.Generator().manual_seed(8)
    x = torch.randn(20, 6, generator=g, dtype=DT)
    x = x / x.norm(dim=-1, keepdim=True)
    x[7] = x[3]  # an exact copy ties with the token itself, and still counts
    assert self_top_rate(x, x) == 1.0
    assert score_asymmetry(x, x) < 1e-15
    Wq, Wk = (torch.randn(6, 6, generator=g, dtype=DT) for _ in range(2))
    assert self_top_rate(x @ Wq, x @ Wk) < 0.5
    assert score_asymmetry(x @ Wq, x @ Wk) > 0.5


def test_self_top_rate_small_example_and_errors():
    from assocmem.linear.attention import score_asymmetry, self_top_rate

    q = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=DT)
    k = torch.tensor([[1.0, 0.0], [2.0, 0.0]], dtype=DT)  # key 1 beats key 0 for both queries
    assert self_top_rate(q, k) == 0.5
    assert score_asymmetry(torch.zeros(3, 2), torch.zeros(3, 2)) == 0.0
    with pytest.raises(ValueError, match="same shape"):
        self_top_rate(q, k[:1])
    with pytest.raises(ValueError, match="same shape"):
        score_asymmetry(q[0], k[0])


# --------------------------------------------------------------------------- step decoders


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_kv_cache_decoder_equals_softmax_attention(batch):
    from assocmem.linear.attention import KVCacheDecoder, decode

    q, k, v = qkv(batch, 41, 5, 3, seed=9)
    dec = KVCacheDecoder(5, 3, scale=0.5, capacity=4)  # forces several doublings
    out, record = decode(dec, q, k, v)
    torch.testing.assert_close(out, softmax_attention(q, k, v, scale=0.5), rtol=1e-13, atol=1e-13)
    n = math.prod(batch)
    assert list(record.t) == list(range(1, 42))
    assert list(record.numbers_held) == [n * t * (5 + 3) for t in range(1, 42)]
    assert list(record.step_macs) == [t * (5 + 3) for t in range(1, 42)]
    assert dec.total_macs == (5 + 3) * 41 * 42 // 2
    assert dec.numbers_allocated == n * 64 * 8 and dec.numbers_held <= dec.numbers_allocated


@pytest.mark.parametrize("batch", [(), (3,)])
def test_linear_attention_decoder_equals_linear_attention(batch):
    from assocmem.linear.attention import LinearAttentionDecoder, decode

    q, k, v = qkv(batch, 30, 4, 6, seed=10)
    dec = LinearAttentionDecoder(4, 6)
    out, record = decode(dec, q, k, v)
    torch.testing.assert_close(out, linear_attention(q, k, v), rtol=1e-13, atol=1e-13)
    n = math.prod(batch)
    assert set(record.numbers_held) == {n * 4 * 6}
    assert set(record.step_macs) == {2 * 4 * 6}
    assert dec.total_macs == 2 * 4 * 6 * 30
    torch.testing.assert_close(dec.S, torch.einsum("...tv,...tk->...vk", v, k))  # S_T = sum_t v_t k_t^T


def test_decoders_reset_and_reject_bad_tokens():
    from assocmem.linear.attention import KVCacheDecoder, LinearAttentionDecoder, decode

    for cls in (KVCacheDecoder, LinearAttentionDecoder):
        dec = cls(3, 2)
        assert dec.numbers_held == 0
        x3, x2 = torch.ones(3, dtype=DT), torch.ones(2, dtype=DT)
        dec.step(x3, x3, x2)
        assert dec.t == 1
        with pytest.raises(ValueError, match=r"shape \(\.\.\., 3\)"):
            dec.step(x2, x3, x2)
        with pytest.raises(ValueError, match="batch shape changed"):
            dec.step(x3[None], x3[None], x2[None])
        with pytest.raises(ValueError, match="leading"):
            dec.step(x3[None], x3, x2)
        with pytest.raises(ValueError, match="dtype"):
            dec.step(x3.float(), x3.float(), x2.float())
        dec.reset()
        assert dec.t == 0 and dec.numbers_held == 0 and dec.total_macs == 0
        dec.step(x3[None], x3[None], x2[None])  # a new batch shape after reset is fine
        with pytest.raises(ValueError, match="positive integer"):
            cls(0, 2)
        with pytest.raises(ValueError, match="floating"):
            cls(3, 2, dtype=torch.int32)
    with pytest.raises(ValueError, match="capacity"):
        KVCacheDecoder(3, 2, capacity=0)
    out, record = decode(LinearAttentionDecoder(3, 2), *qkv((), 0, 3, 2))
    assert out.shape == (0, 2) and len(record) == 0
