"""Tests for assocmem.sdm.read.patterns: seeded random binary patterns, exact bit flips, and
rotations to a prescribed cosine along a uniformly random orthogonal direction.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.sdm.read.hamming import hamming_distance
from assocmem.sdm.read.patterns import flip_bits, random_binary_patterns, rotate_to_cosine

CPU = "cpu"


def patterns(m, n, seed=0):
    return random_binary_patterns(m, n, seed=seed, device=CPU)


def test_rotate_to_cosine_is_exact_and_orthogonal_part_is_random():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(50, 16, generator=g, dtype=torch.float64)
    c = torch.linspace(-1, 1, 50, dtype=torch.float64)
    y = rotate_to_cosine(x, c, seed=2)
    cos = (torch.nn.functional.normalize(x, dim=-1) * y).sum(-1)
    torch.testing.assert_close(cos, c, atol=1e-14, rtol=0)
    torch.testing.assert_close(torch.linalg.vector_norm(y, dim=-1), torch.ones(50, dtype=torch.float64))
    y2 = rotate_to_cosine(x, 0.5, seed=2)
    assert y2.shape == x.shape
    with pytest.raises(ValueError):
        rotate_to_cosine(x, 1.2)
    with pytest.raises(ValueError, match="n >= 2"):
        rotate_to_cosine(torch.ones(3, 1), 0.5)


def test_random_binary_patterns_are_seeded_fair_bits():
    a, b = patterns(2000, 50, seed=11), patterns(2000, 50, seed=11)
    assert torch.equal(a, b) and a.dtype == torch.uint8 and a.shape == (2000, 50)
    assert not torch.equal(a, patterns(2000, 50, seed=12))
    mean = a.double().mean().item()
    assert abs(mean - 0.5) <= 4 * 0.5 / math.sqrt(a.numel())
    assert patterns(0, 5).shape == (0, 5)
    with pytest.raises(ValueError):
        random_binary_patterns(-1, 5)
    with pytest.raises(ValueError):
        random_binary_patterns(3, 0)


@pytest.mark.parametrize("k", [0, 1, 7, 20])
def test_flip_bits_flips_exactly_k(k):
    x = patterns(100, 20, seed=3)
    y = flip_bits(x, k, seed=4)
    assert torch.equal(hamming_distance(x, y), torch.full((100,), k))
    assert y.dtype == x.dtype
    with pytest.raises(ValueError):
        flip_bits(x, 21)
