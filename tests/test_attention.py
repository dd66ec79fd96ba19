"""Tests for assocmem.attention: forms agree, references equal naive loops, masking is causal."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.attention import causal_mask, linear_attention, softmax_attention
from assocmem.memory import OuterProductMemory

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
