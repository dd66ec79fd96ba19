"""Tests for assocmem.sdm.read.hamming: Hamming distances, the bipolar map of Eq. 5 (exact, and bit
for bit when sqrt(n) is a power of two), and what sign binarisation does to distances.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.sdm.read.hamming import (
    bipolar,
    expected_sign_hamming,
    hamming_distance,
    pairwise_hamming,
    sign_binarize,
    sign_hamming_correlation,
    sphere_hamming,
)
from assocmem.sdm.read.patterns import random_binary_patterns, rotate_to_cosine

CPU = "cpu"


def patterns(m, n, seed=0):
    return random_binary_patterns(m, n, seed=seed, device=CPU)


def test_hamming_distance_small_example_and_dtypes():
    a = torch.tensor([0, 1, 1, 0, 1])
    b = torch.tensor([1, 1, 0, 0, 0])
    assert hamming_distance(a, b).item() == 3
    assert hamming_distance(a.bool(), b.double()).item() == 3
    assert hamming_distance(a.tolist(), b.numpy()).item() == 3
    assert hamming_distance(a, b).dtype == torch.int64


def test_hamming_distance_broadcasts_and_matches_pairwise():
    x, y = patterns(7, 13, seed=1), patterns(5, 13, seed=2)
    broadcast = hamming_distance(x[:, None, :], y[None, :, :])  # (7, 5)
    assert broadcast.shape == (7, 5)
    assert torch.equal(broadcast, pairwise_hamming(x, y))
    loop = torch.tensor([[int((x[i] != y[j]).sum()) for j in range(5)] for i in range(7)])
    assert torch.equal(broadcast, loop)
    # leading axes on the query side
    assert torch.equal(pairwise_hamming(x.reshape(7, 1, 13), y), broadcast[:, None, :])


@pytest.mark.parametrize("n", [1, 5, 16, 63, 64, 100, 256, 1000])
def test_bipolar_identity_holds(n):
    x, y = patterns(200, n, seed=3), patterns(200, n, seed=4)
    d = hamming_distance(x, y).double()
    s, t = bipolar(x, normalize=False), bipolar(y, normalize=False)
    assert torch.equal((n - (s * t).sum(-1)) / 2, d)  # integer arithmetic: exact for every n
    xh, yh = bipolar(x), bipolar(y)
    assert torch.allclose(torch.linalg.vector_norm(xh, dim=-1), torch.ones(200, dtype=torch.float64))
    cos_form = n / 2 * (1 - (xh * yh).sum(-1))
    assert torch.allclose(cos_form, d, rtol=0, atol=n * 4e-16)
    assert torch.allclose(sphere_hamming(xh, yh), d, rtol=0, atol=n * 4e-16)


@pytest.mark.parametrize("n", [4, 16, 64, 256, 1024])
def test_bipolar_identity_is_bit_exact_when_sqrt_n_is_a_power_of_two(n):
    x, y = patterns(300, n, seed=5), patterns(300, n, seed=6)
    xh, yh = bipolar(x), bipolar(y)
    assert torch.equal((n - n * (xh * yh).sum(-1)) / 2, hamming_distance(x, y).double())


def test_sphere_hamming_is_scale_invariant_and_rejects_zero():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(10, 8, generator=g, dtype=torch.float64), torch.randn(10, 8, generator=g, dtype=torch.float64)
    torch.testing.assert_close(sphere_hamming(3 * x, 0.5 * y), sphere_hamming(x, y))
    torch.testing.assert_close(sphere_hamming(x, x), torch.zeros(10, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(sphere_hamming(x, -x), torch.full((10,), 8.0, dtype=torch.float64))
    with pytest.raises(ValueError, match="nonzero"):
        sphere_hamming(torch.zeros(8), x[0])
    with pytest.raises(ValueError, match="last axis"):
        sphere_hamming(x, y[:, :7])


def test_sign_binarize():
    x = torch.tensor([[-1.0, 0.0, 2.0, 1e-300]], dtype=torch.float64)
    assert torch.equal(sign_binarize(x), torch.tensor([[0, 0, 1, 1]], dtype=torch.uint8))
    with pytest.raises(ValueError, match="finite"):
        sign_binarize(torch.tensor([float("nan")]))


def test_expected_sign_hamming_endpoints_and_mc():
    torch.testing.assert_close(expected_sign_hamming([1.0, 0.0, -1.0], 64),
                               torch.tensor([0.0, 32.0, 64.0], dtype=torch.float64))
    n, N = 32, 20_000
    g = torch.Generator().manual_seed(7)
    u = torch.randn(N, n, generator=g, dtype=torch.float64)
    c = torch.rand(N, generator=g, dtype=torch.float64) * 2 - 1
    v = rotate_to_cosine(u, c, seed=8)
    H = hamming_distance(sign_binarize(u), sign_binarize(v)).double()
    resid = H - expected_sign_hamming(c, n)
    assert abs(resid.mean()) <= 4 * resid.std() / math.sqrt(N)
    with pytest.raises(ValueError):
        expected_sign_hamming(1.5, 8)
    with pytest.raises(ValueError):
        expected_sign_hamming(0.5, 0)


def test_sign_hamming_correlation_closed_form_and_mc():
    assert sign_hamming_correlation(1) == pytest.approx(1.0, abs=1e-15)
    assert sign_hamming_correlation(2) == pytest.approx(8 / math.pi**2, rel=1e-14)
    assert sign_hamming_correlation(10**6) == pytest.approx(2 / math.pi, rel=1e-5)
    vals = [sign_hamming_correlation(n) for n in range(1, 200)]
    assert all(a > b for a, b in zip(vals, vals[1:]))
    n, N = 64, 40_000
    g = torch.Generator().manual_seed(9)
    u, v = (torch.randn(N, n, generator=g, dtype=torch.float64) for _ in range(2))
    D = sphere_hamming(u, v)
    H = hamming_distance(sign_binarize(u), sign_binarize(v)).double()
    terms = (H - n / 2) * (D - n / 2) / (n / 4)  # known means and variances: an unbiased estimate
    se = terms.std() / math.sqrt(N)
    assert abs(terms.mean() - sign_hamming_correlation(n)) <= 4 * se
