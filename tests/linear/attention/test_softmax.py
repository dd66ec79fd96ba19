"""Tests for assocmem.linear.attention.softmax: softmax attention equals a naive loop, its weights, the mask;
and the shared shape checks of q, k, v."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.linear.attention.softmax import causal_mask, softmax_attention, softmax_weights
from tests.linear.attention._qkv import DT, qkv


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


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_scores_that_overflow_float32_are_computed_stably():
    # Before: finite q and k whose scores overflow float32 gave all-NaN rows.
    q = torch.tensor([[1e20, 0.0], [1e20, 0.0]])
    k = torch.tensor([[1e20, 0.0], [-1e20, 0.0]])  # scores +-1e40, beyond float32
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = softmax_attention(q, k, v, causal=False)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, v[[0, 0]])  # all weight on the key with score +1e40
    w = softmax_weights(q, k, causal=False)
    torch.testing.assert_close(w, torch.tensor([[1.0, 0.0], [1.0, 0.0]]))
    # equal huge scores: the weights are equal, not NaN
    torch.testing.assert_close(softmax_attention(torch.full((2, 2), 1e20), torch.full((2, 2), 1e20), v, causal=False),
                               v.mean(0).expand(2, 2))
    # scores beyond float64 itself cannot be represented: a clear error
    big = torch.full((2, 2), 1e200, dtype=DT)
    with pytest.raises(ValueError, match=r"scores scale \* q\^T k overflows torch\.float64"):
        softmax_attention(big, big, big)
    with pytest.raises(ValueError, match="scores .* overflows"):
        softmax_attention(torch.ones(1, 2, dtype=DT), torch.ones(1, 2, dtype=DT), torch.ones(1, 2, dtype=DT), scale=1e308)


def test_masked_scores_may_overflow():
    q = torch.tensor([[1.0, 0.0], [1e30, 0.0]])
    k = torch.tensor([[1e30, 0.0], [1.0, 0.0]])  # q_1 k_0 = 1e60 is visible; q_0 k_1 = 1 is masked
    v = torch.tensor([[1.0], [2.0]])
    torch.testing.assert_close(softmax_attention(q, k, v), torch.tensor([[1.0], [1.0]]))


@pytest.mark.parametrize("fn", [softmax_attention, linear_attention])
def test_non_finite_inputs_are_refused(fn):
    q, k, v = qkv((), 4, 3, 2, seed=8)
    for name, i in (("q", 0), ("k", 1), ("v", 2)):
        for bad in (float("nan"), float("inf"), -float("inf")):
            args = [q, k, v]
            args[i] = args[i].clone()
            args[i][2, 1] = bad
            with pytest.raises(ValueError, match=f"{name} contains non-finite"):
                fn(*args)


@pytest.mark.parametrize("fn", [softmax_attention, linear_attention])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_attention_is_refused(fn, dtype):
    q, k, v = (x.to(dtype) for x in qkv((), 4, 3, 2))
    with pytest.raises(ValueError, match=rf"dtype {dtype} is not supported.*float32"):
        fn(q, k, v)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), True, "2", [1.0]])
def test_scale_must_be_a_finite_real(scale):
    q, k, v = qkv((), 3, 2, 2)
    with pytest.raises(ValueError, match="scale must be"):
        softmax_attention(q, k, v, scale=scale)
    with pytest.raises(ValueError, match="scale must be"):
        softmax_weights(q, k, scale=scale)


def test_softmax_over_no_keys_is_undefined():
    q, k, v = qkv((), 3, 2, 4)
    with pytest.raises(ValueError, match="empty set of keys"):
        softmax_attention(q, k[:0], v[:0], causal=False)
    with pytest.raises(ValueError, match="empty set of keys"):
        softmax_weights(q, k[:0], causal=False)
    assert softmax_attention(q[:0], k[:0], v[:0]).shape == (0, 4)  # no queries: nothing to compute
    # linear attention over no keys is a sum over nothing: exactly zero
    assert torch.equal(linear_attention(q, k[:0], v[:0], causal=False), torch.zeros(3, 4, dtype=DT))


def test_causal_must_be_a_boolean_and_T_an_integer():
    q, k, v = qkv((), 3, 2, 2)
    with pytest.raises(ValueError, match="causal must be True or False"):
        softmax_attention(q, k, v, causal="no")
    with pytest.raises(ValueError, match="causal must be True or False"):
        linear_attention(q, k, v, causal=None)
    for bad in (2.5, True, "3"):
        with pytest.raises(ValueError, match="T must be an integer"):
            causal_mask(bad)
