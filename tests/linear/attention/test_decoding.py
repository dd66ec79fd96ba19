"""Tests for assocmem.linear.attention.decoding: the step decoders equal the full attentions and count
exactly what they hold and do."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.linear.attention.softmax import softmax_attention
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
