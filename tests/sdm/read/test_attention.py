"""Tests for assocmem.sdm.read.attention: softmax attention in SDM notation (Eq. 4), on bipolar
vectors a function of the Hamming distance, and close to the SDM read for close queries.
"""

from __future__ import annotations

import pytest
import torch

from assocmem.sdm import fit_beta
from assocmem.sdm.read.attention import attention_read, attention_weights
from assocmem.sdm.read.hamming import bipolar, pairwise_hamming
from assocmem.sdm.read.pattern_view import majority, sdm_read
from assocmem.sdm.read.patterns import flip_bits, random_binary_patterns

CPU = "cpu"


def patterns(m, n, seed=0):
    return random_binary_patterns(m, n, seed=seed, device=CPU)


def test_attention_read_matches_explicit_softmax():
    g = torch.Generator().manual_seed(3)
    q = torch.randn(4, 8, generator=g, dtype=torch.float64)
    K = torch.randn(10, 8, generator=g, dtype=torch.float64)
    V = torch.randn(10, 3, generator=g, dtype=torch.float64)
    qh, Kh = q / q.norm(dim=-1, keepdim=True), K / K.norm(dim=-1, keepdim=True)
    scores = 7.0 * qh @ Kh.T
    w = torch.exp(scores - scores.max(-1, keepdim=True).values)
    w = w / w.sum(-1, keepdim=True)
    torch.testing.assert_close(attention_weights(q, K, 7.0), w)
    torch.testing.assert_close(attention_read(q, K, V, 7.0), w @ V)
    torch.testing.assert_close(attention_read(3 * q, 0.1 * K, V, 7.0), w @ V)  # scale-free
    raw = torch.softmax(2.0 * q @ K.T, dim=-1)
    torch.testing.assert_close(attention_weights(q, K, 2.0, normalize=False), raw)
    assert attention_read(q.float(), K.float(), V.float(), 1.0).dtype == torch.float32


def test_attention_on_bipolar_vectors_depends_on_hamming_distance_only():
    n, beta = 64, 15.0
    P = patterns(50, n, seed=4)
    q = flip_bits(P[:3], 5, seed=5)
    w = attention_weights(bipolar(q), bipolar(P), beta)
    dist = pairwise_hamming(q, P).double()
    expect = torch.softmax(beta * (1 - 2 * dist / n), dim=-1)
    torch.testing.assert_close(w, expect, rtol=1e-12, atol=1e-300)


def test_bit_patterns_are_refused_not_read_as_real_vectors():
    """The cosine of two 0/1 vectors is not the bipolar cosine beta is fitted on (Eq. 5): the raw
    patterns would put far more weight on the other patterns. They are refused, naming the fix; a
    float cast is the explicit way to mean the 0/1 vectors."""
    n, d = 64, 11
    beta = fit_beta(n, d).beta
    P = patterns(32, n, seed=1)
    q = flip_bits(P[:1], 4, seed=2)  # a close query of pattern 0
    for bits in (q, q.bool()):
        with pytest.raises(ValueError, match=r"0/1 bit patterns .* Pass bipolar\(query\)"):
            attention_weights(bits, bipolar(P), beta)
    with pytest.raises(ValueError, match=r"keys holds 0/1 bit patterns"):
        attention_read(bipolar(q), P, P, beta)
    right = attention_weights(bipolar(q), bipolar(P), beta)[0, 1:].sum()  # weight off the target
    as_reals = attention_weights(q.double(), P.double(), beta)[0, 1:].sum()
    assert right < 1e-3 and as_reals > 0.1  # the second is what a silent normalisation of the bits gave


def test_attention_approximates_sdm_for_close_queries():
    # Eq. 6 in the Attention setting: a fitted beta reproduces the thresholded SDM read.
    n, d, m = 64, 11, 256
    P = patterns(m, n, seed=6)
    q = flip_bits(P[:40], 4, seed=7)
    beta = fit_beta(n, d).beta
    sdm = sdm_read(q, P, P, d, threshold=True)
    att = majority(attention_read(bipolar(q), bipolar(P), P, beta))
    assert torch.equal(sdm, att) and torch.equal(sdm, P[:40].double())


def test_attention_bad_input():
    K = torch.randn(5, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="finite"):
        attention_weights(torch.randn(4), K, float("inf"))
    with pytest.raises(ValueError, match="real"):
        attention_weights(torch.randn(4), K, "big")
    with pytest.raises(ValueError, match="zero vector"):
        attention_weights(torch.zeros(4), K, 1.0)
    with pytest.raises(ValueError, match="empty"):
        attention_weights(torch.randn(4), K[:0], 1.0)
    with pytest.raises(ValueError, match="values"):
        attention_read(torch.randn(4), K, torch.randn(4, 2), 1.0)
