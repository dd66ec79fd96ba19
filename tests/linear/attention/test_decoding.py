"""Tests for assocmem.linear.attention.decoding: the step decoders equal the full attentions and count
exactly what they hold and do."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.linear.attention.softmax import softmax_attention
from assocmem.linear.attention.decoding import KVCacheDecoder, LinearAttentionDecoder, decode
from tests.linear.attention._qkv import DT, qkv


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_kv_cache_decoder_equals_softmax_attention(batch):
    from assocmem.linear.attention.decoding import KVCacheDecoder, decode

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
    from assocmem.linear.attention.decoding import LinearAttentionDecoder, decode

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
    from assocmem.linear.attention.decoding import KVCacheDecoder, LinearAttentionDecoder, decode

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


def _decoder_state(dec):
    """Everything a decoder holds: counters, batch shape and the visible part of its tensors."""
    out = {name: getattr(dec, name) for name in ("t", "batch_shape", "last_step_macs", "total_macs")}
    if hasattr(dec, "_K"):
        out["K"] = None if dec._K is None else dec._K[..., : dec.t, :].clone()
        out["V"] = None if dec._V is None else dec._V[..., : dec.t, :].clone()
        out["allocated"] = dec.numbers_allocated
    else:
        out["S"] = None if dec.S is None else dec.S.clone()
    return out


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for name in a:
        if isinstance(a[name], torch.Tensor):
            assert torch.equal(a[name], b[name]), name
        else:
            assert a[name] == b[name], name


@pytest.mark.parametrize("name", ["KVCacheDecoder", "LinearAttentionDecoder"])
def test_a_failed_step_leaves_the_decoder_unchanged(name, monkeypatch):
    import assocmem.linear.attention.decoding as decoding

    cls = getattr(decoding, name)
    q, k, v = qkv((2,), 5, 3, 2, seed=11)
    for first in (True, False):  # the very first step fixes the batch shape: it must not stick either
        dec = cls(3, 2, **({"capacity": 4} if name == "KVCacheDecoder" else {}))
        if not first:
            decode(dec, q[:, :4], k[:, :4], v[:, :4])  # cache full: the next step would grow it
        before = _decoder_state(dec)
        bad = q[:, 4].clone()
        bad[0, 1] = float("nan")
        with pytest.raises(ValueError, match="q contains non-finite"):
            dec.step(bad, k[:, 4], v[:, 4])
        _assert_same(before, _decoder_state(dec))
        # An injected failure inside the computation: for the cache after its buffers have grown
        # and the new pair sits in them (in the softmax), for the state after S_t was formed
        # (in the finiteness check of S_t, the 4th call of torch.isfinite after q, k, v).
        target = "softmax" if name == "KVCacheDecoder" else "isfinite"
        real, calls = getattr(torch, target), {"n": 0}

        def injected(*args, **kwargs):
            calls["n"] += 1
            if target == "softmax" or calls["n"] == 4:
                raise RuntimeError("injected failure")
            return real(*args, **kwargs)

        monkeypatch.setattr(torch, target, injected)
        with pytest.raises(RuntimeError, match="injected"):
            dec.step(q[:, 4], k[:, 4], v[:, 4])
        monkeypatch.undo()
        _assert_same(before, _decoder_state(dec))
    # the decoder still works and agrees with the full computation
    out = dec.step(q[:, 4], k[:, 4], v[:, 4])
    full = softmax_attention(q, k, v) if name == "KVCacheDecoder" else linear_attention(q, k, v)
    torch.testing.assert_close(out, full[:, 4], rtol=1e-13, atol=1e-13)


def test_decode_is_atomic_over_the_whole_sequence(monkeypatch):
    q, k, v = (x.float() for x in qkv((), 6, 3, 2, seed=12))
    # the linear state overflows float32 at the fifth token: the first four are rolled back too
    dec = LinearAttentionDecoder(3, 2, dtype=torch.float32)
    decode(dec, q[:2], k[:2], v[:2])
    before = _decoder_state(dec)
    v_big, k_big = v.clone(), k.clone()
    v_big[4], k_big[4] = 3e38, 1e30
    with pytest.raises(ValueError, match=r"state S_t .* overflows torch\.float32"):
        decode(dec, q[2:], k_big[2:], v_big[2:])
    _assert_same(before, _decoder_state(dec))
    # the cache's huge scores are recomputed in float64: no error, finite outputs
    out, _ = decode(KVCacheDecoder(3, 2, dtype=torch.float32), q, k_big, v)
    assert torch.isfinite(out).all()
    # a failure injected at the third of four steps (after the cache has grown) rolls back all of them
    dec = KVCacheDecoder(3, 2, dtype=torch.float32, capacity=2)
    decode(dec, q[:2], k[:2], v[:2])
    before = _decoder_state(dec)
    real, calls = torch.softmax, {"n": 0}

    def injected(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("injected failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "softmax", injected)
    with pytest.raises(RuntimeError, match="injected"):
        decode(dec, q[2:], k[2:], v[2:])
    monkeypatch.undo()
    _assert_same(before, _decoder_state(dec))
    out, record = decode(dec, q[2:], k[2:], v[2:])  # and it goes on as if nothing had happened
    torch.testing.assert_close(out, softmax_attention(q, k, v)[2:])
    assert list(record.t) == [3, 4, 5, 6]


def test_decoders_refuse_what_they_cannot_compute():
    x3 = torch.ones(3, dtype=DT)
    for dtype in (torch.float16, torch.bfloat16):
        with pytest.raises(ValueError, match=r"dtype torch\.(float16|bfloat16) is not supported.*float32"):
            KVCacheDecoder(3, 2, dtype=dtype)
        with pytest.raises(ValueError, match=r"not supported"):
            LinearAttentionDecoder(3, 2, dtype=dtype)
    for bad in (True, "2", float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale must be"):
            KVCacheDecoder(3, 2, scale=bad)
    dec = KVCacheDecoder(3, 3)
    for name, args in (("q", (x3 * float("nan"), x3, x3)), ("k", (x3, x3 * float("inf"), x3)),
                       ("v", (x3, x3, x3 * float("nan")))):
        with pytest.raises(ValueError, match=f"{name} contains non-finite"):
            dec.step(*args)
    with pytest.raises(ValueError, match="must be a torch.Tensor"):
        dec.step([1.0, 1.0, 1.0], x3, x3)
    with pytest.raises(ValueError, match="decoder must be"):
        decode(None, *qkv((), 2, 3, 3))
    assert dec.t == 0 and dec.batch_shape is None


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_kv_cache_decoder_scores_that_overflow_float32():
    # Before: finite q, k whose scores overflow float32 gave an all-NaN output.
    dec = KVCacheDecoder(2, 2, dtype=torch.float32)
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    dec.step(torch.tensor([1e20, 0.0]), torch.tensor([1e20, 0.0]), v[0])
    out = dec.step(torch.tensor([1e20, 0.0]), torch.tensor([-1e20, 0.0]), v[1])  # scores +1e40, -1e40
    torch.testing.assert_close(out, v[0])
