"""Tests for assocmem.linear.geometry: identities of the two readings, key construction, noise reads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.linear.geometry import (
    additive_weights,
    circle_directions,
    coherence,
    key_coordinates,
    keys_with_gram,
    least_squares_from_moments,
    noisy_read_errors,
    unit_vectors_2d,
)
from assocmem.linear.memory import LeastSquaresMemory, OuterProductMemory, gram_matrix
from assocmem.linear.theory import least_squares_sigma_max, planar_coherence_bound


def _unit_keys(n, d, seed=0):
    g = torch.Generator().manual_seed(seed)
    k = torch.randn(n, d, generator=g, dtype=torch.float64)
    return k / k.norm(dim=1, keepdim=True)


def test_unit_vectors_and_circle():
    u = unit_vectors_2d([0.0, math.pi / 2])
    torch.testing.assert_close(u, torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64), atol=1e-16, rtol=0)
    assert unit_vectors_2d(torch.zeros(4, 3)).shape == (4, 3, 2)
    assert unit_vectors_2d(1.0, dtype=torch.float32).dtype == torch.float32
    c = circle_directions(8)
    assert c.shape == (8, 2) and c.dtype == torch.float64
    torch.testing.assert_close(c.norm(dim=1), torch.ones(8, dtype=torch.float64))
    torch.testing.assert_close(c.sum(0), torch.zeros(2, dtype=torch.float64), atol=1e-15, rtol=0)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            circle_directions(bad)
    with pytest.raises(ValueError, match="non-finite"):
        unit_vectors_2d([float("nan")])
    with pytest.raises(ValueError, match="floating"):
        unit_vectors_2d(0.0, dtype=torch.int64)


def test_coherence():
    # orthonormal keys have coherence 0; the Mercedes star has 1/2; scale does not matter
    assert float(coherence(torch.eye(3, dtype=torch.float64))) == 0.0
    star = unit_vectors_2d([0.0, 2 * math.pi / 3, 4 * math.pi / 3])
    assert float(coherence(3.0 * star)) == pytest.approx(0.5, abs=1e-15)
    # batched, and never below the planar bound
    g = torch.Generator().manual_seed(1)
    triples = unit_vectors_2d(torch.rand(5000, 3, generator=g, dtype=torch.float64) * 2 * math.pi)
    mu = coherence(triples)
    assert mu.shape == (5000,)
    assert float(mu.min()) >= planar_coherence_bound(3) - 1e-12
    with pytest.raises(ValueError, match="at least two keys"):
        coherence(torch.ones(1, 2))
    with pytest.raises(ValueError, match="zero length"):
        coherence(torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="at least 2-D"):
        coherence(torch.ones(3))


def test_two_readings_reconstruct_the_reads():
    d_k, d_v, n = 6, 4, 4
    keys = _unit_keys(n, d_k)
    g = torch.Generator().manual_seed(2)
    values = torch.randn(n, d_v, generator=g, dtype=torch.float64)
    q = torch.randn(7, d_k, generator=g, dtype=torch.float64)
    add = OuterProductMemory(d_k, d_v, device="cpu").write(keys, values)
    ls = LeastSquaresMemory(d_k, d_v, device="cpu").write(keys, values)
    # S q = sum_i (k_i^T q) v_i and S* q = sum_i c_i v_i
    torch.testing.assert_close(add.read(q), additive_weights(keys, q) @ values, atol=1e-13, rtol=0)
    torch.testing.assert_close(ls.read(q), key_coordinates(keys, q) @ values, atol=1e-13, rtol=0)
    # a query in the span is rebuilt from its coordinates: q = sum_i c_i k_i
    coeffs = torch.randn(3, n, generator=g, dtype=torch.float64)
    q_span = coeffs @ keys
    torch.testing.assert_close(key_coordinates(keys, q_span), coeffs, atol=1e-13, rtol=0)
    # the coordinates are the dual-vector dot products
    torch.testing.assert_close(key_coordinates(keys, q), q @ ls.dual_basis().T, atol=1e-13, rtol=0)
    # orthonormal keys: the two readings agree
    Q, _ = torch.linalg.qr(torch.randn(d_k, n, generator=g, dtype=torch.float64))
    torch.testing.assert_close(key_coordinates(Q.T, q), additive_weights(Q.T, q), atol=1e-13, rtol=0)


def test_key_coordinates_bad_input():
    keys = torch.tensor([[1.0, 0.0], [2.0, 0.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="linearly dependent"):
        key_coordinates(keys, torch.ones(2))
    with pytest.raises(ValueError, match=r"queries must have shape \(\.\.\., d_k\)"):
        key_coordinates(torch.eye(2), torch.ones(3))
    with pytest.raises(ValueError, match="keys must be 2-D"):
        additive_weights(torch.ones(2, 2, 2), torch.ones(2))


def test_keys_with_gram():
    # the 4-cycle Gram matrix with overlaps 1/2 has rank 3
    A = torch.tensor([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=torch.float64)
    G = torch.eye(4, dtype=torch.float64) + 0.5 * A
    keys = keys_with_gram(G)
    assert keys.shape == (4, 3)
    torch.testing.assert_close(gram_matrix(keys), G, atol=1e-14, rtol=0)
    keys2 = _unit_keys(3, 5)
    torch.testing.assert_close(gram_matrix(keys_with_gram(gram_matrix(keys2))), gram_matrix(keys2), atol=1e-14, rtol=0)
    with pytest.raises(ValueError, match="square"):
        keys_with_gram(torch.ones(2, 3))
    with pytest.raises(ValueError, match="symmetric"):
        keys_with_gram(torch.tensor([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="positive semidefinite"):
        keys_with_gram(torch.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="zero"):
        keys_with_gram(torch.zeros(2, 2))


@pytest.mark.parametrize("theta", [math.pi / 12, math.pi / 6, math.pi / 2, 2.5])
def test_noise_amplification_is_sigma_max(theta):
    keys = unit_vectors_2d([0.0, theta])
    values = torch.eye(2, dtype=torch.float64)
    ls = LeastSquaresMemory(2, 2, device="cpu").write(keys, values)
    m = 4000
    for eps in (1e-3, 0.3):
        err = noisy_read_errors(ls.S, keys[0], values[0], eps, circle_directions(m))
        assert err.shape == (m,)
        amp = float(err.max()) / eps
        sigma = least_squares_sigma_max(theta)
        # grid bound: relative shortfall at most (pi/m)^2 / 2; plus rounding
        assert sigma * (1 - (math.pi / m) ** 2 / 2) - 1e-12 <= amp <= sigma * (1 + 1e-12)
    # vector eps gives one row per noise size; eps = 0 reads exactly
    errs = noisy_read_errors(ls.S, keys[0], values[0], torch.tensor([0.0, 0.1]), circle_directions(16))
    assert errs.shape == (2, 16) and float(errs[0].max()) < 1e-14


def test_noisy_read_errors_additive_has_interference_floor():
    theta = math.pi / 6
    keys = unit_vectors_2d([0.0, theta])
    values = torch.eye(2, dtype=torch.float64)
    add = OuterProductMemory(2, 2, device="cpu").write(keys, values)
    err0 = noisy_read_errors(add.S, keys[0], values[0], 0.0, circle_directions(8))
    torch.testing.assert_close(err0, torch.full((8,), math.cos(theta), dtype=torch.float64), atol=1e-15, rtol=0)


def test_noisy_read_errors_bad_input():
    S = torch.eye(2, dtype=torch.float64)
    u = circle_directions(4)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        noisy_read_errors(S, torch.ones(2), torch.ones(2), -0.1, u)
    with pytest.raises(ValueError, match="key must have shape"):
        noisy_read_errors(S, torch.ones(3), torch.ones(2), 0.1, u)
    with pytest.raises(ValueError, match="value must have shape"):
        noisy_read_errors(S, torch.ones(2), torch.ones(3), 0.1, u)
    with pytest.raises(ValueError, match="directions must have shape"):
        noisy_read_errors(S, torch.ones(2), torch.ones(2), 0.1, torch.ones(4, 3))
    with pytest.raises(ValueError, match="S must be 2-D"):
        noisy_read_errors(torch.ones(2), torch.ones(2), torch.ones(2), 0.1, u)


@pytest.mark.parametrize("n", [2, 5, 12])
def test_least_squares_from_moments_equals_pinv_memory(n):
    d_k, d_v = 5, 3
    keys = _unit_keys(n, d_k, seed=n)
    g = torch.Generator().manual_seed(10 + n)
    values = torch.randn(n, d_v, generator=g, dtype=torch.float64)
    add = OuterProductMemory(d_k, d_v, device="cpu").write(keys, values)
    key_moment = keys.T @ keys  # sum_i k_i k_i^T, (d_k, d_k)
    ls = LeastSquaresMemory(d_k, d_v, device="cpu").write(keys, values)
    torch.testing.assert_close(least_squares_from_moments(add.S, key_moment), ls.S, atol=1e-12, rtol=0)


def test_least_squares_from_moments_bad_input():
    with pytest.raises(ValueError, match="key_moment must have shape"):
        least_squares_from_moments(torch.ones(2, 3), torch.eye(2))
    with pytest.raises(ValueError, match="state must be 2-D"):
        least_squares_from_moments(torch.ones(3), torch.eye(3))


def test_sigma_max_of_sampled_ellipse_and_numpy_agree():
    theta = 0.2
    keys = unit_vectors_2d([0.0, theta])
    ls = LeastSquaresMemory(2, 2, device="cpu").write(keys, torch.eye(2, dtype=torch.float64))
    ellipse = circle_directions(10000) @ ls.S.T
    assert float(ellipse.norm(dim=1).max()) == pytest.approx(np.linalg.norm(ls.S.numpy(), 2), rel=1e-6)
