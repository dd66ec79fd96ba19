"""Tests for assocmem.sdm.kernels.hypercube: Krawtchouk polynomials, the Walsh-Hadamard
transform, the exact spectrum of the ball kernel on Z_2^n (checked by brute force), and the
spectrum of the exponential kernel. Exact identities are checked for equality.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm import circle_intersection
from assocmem.sdm.kernels.hypercube import (
    ball_kernel_matrix,
    ball_kernel_spectrum,
    hamming_kernel_matrix,
    krawtchouk_matrix,
    log_exponential_kernel_spectrum,
    radial_spectrum,
    walsh_hadamard,
)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 16])
def test_krawtchouk_matches_definition(n):
    K = krawtchouk_matrix(n)
    for j in range(n + 1):
        for w in range(n + 1):
            direct = sum((-1) ** i * math.comb(w, i) * math.comb(n - w, j - i) for i in range(j + 1))
            assert K[j, w] == direct


def test_krawtchouk_orthogonality():
    # sum_w C(n, w) K_j(w) K_k(w) = 2^n C(n, j) delta_jk
    n = 11
    K = krawtchouk_matrix(n)
    for j in range(n + 1):
        for k in range(n + 1):
            s = sum(math.comb(n, w) * K[j, w] * K[k, w] for w in range(n + 1))
            assert s == ((1 << n) * math.comb(n, j) if j == k else 0)


def test_walsh_hadamard_against_definition_and_inverse():
    rng = np.random.default_rng(0)
    n = 6
    f = rng.standard_normal(1 << n)
    idx = np.arange(1 << n)
    H = (-1.0) ** np.array([[bin(s & x).count("1") for x in idx] for s in idx])
    assert np.allclose(walsh_hadamard(f), H @ f, atol=1e-12, rtol=0)
    assert np.allclose(walsh_hadamard(walsh_hadamard(f)) / (1 << n), f, atol=1e-12, rtol=0)
    two = np.stack([f, 2 * f])
    assert np.allclose(walsh_hadamard(two)[1], 2 * walsh_hadamard(f))
    with pytest.raises(ValueError):
        walsh_hadamard(np.ones(6))


@pytest.mark.parametrize("n", range(1, 15))
def test_ball_spectrum_is_squared_transform_for_every_radius(n):
    for d in range(n + 1):
        spec = ball_kernel_spectrum(n, d)
        assert spec.squared_transform_equal
        assert spec.min_eigenvalue >= 0
        assert spec.reflection_symmetric
        assert sum(spec.multiplicities) == 1 << n
        # trace: sum of eigenvalues with multiplicity = 2^n I(0)
        assert sum(l * m for l, m in zip(spec.eigenvalues, spec.multiplicities)) == (1 << n) * spec_ball(n, d)


def spec_ball(n, d):
    return circle_intersection(0, d, n)


def test_ball_spectrum_large_n_exact():
    spec = ball_kernel_spectrum(64, 11)
    assert spec.squared_transform_equal
    assert spec.reflection_symmetric
    assert all(isinstance(v, int) for v in spec.eigenvalues)
    # lambda(0) = (ball size)^2: the constant character sums the kernel row
    assert spec.eigenvalues[0] == circle_intersection(0, 11, 64) ** 2


def test_ball_spectrum_has_exact_zeros():
    spec = ball_kernel_spectrum(10, 3)
    assert spec.zero_weights == [3, 8]
    assert spec.null_dimension == math.comb(10, 3) + math.comb(10, 8)
    assert ball_kernel_spectrum(3, 1).zero_weights == [2]


def test_sum_of_krawtchouk_identity():
    # sum_{j <= d} K_j(w; n) = K_d(w - 1; n - 1) for w >= 1 (MacWilliams & Sloane)
    n = 13
    K, K1 = krawtchouk_matrix(n), krawtchouk_matrix(n - 1)
    for d in range(n):
        b = ball_kernel_spectrum(n, d).ball_transform
        for w in range(1, n + 1):
            assert b[w] == K1[d, w - 1]


@pytest.mark.parametrize("n,d", [(6, 2), (8, 3), (9, 4), (10, 3)])
def test_brute_force_eigenvalues_match(n, d):
    spec = ball_kernel_spectrum(n, d)
    K = ball_kernel_matrix(n, d)
    ev = np.linalg.eigvalsh(K)
    tol = K.shape[0] * np.finfo(float).eps * float(spec.eigenvalues[0])
    assert np.max(np.abs(ev - spec.expanded())) <= tol
    assert np.max(np.abs(np.sort(walsh_hadamard(K[0])) - spec.expanded())) <= tol


def test_radial_spectrum_exact_and_float():
    n = 7
    vals = [3, 0, 1, 0, 0, 2, 0, 5]
    K = hamming_kernel_matrix(n, vals)
    lam = radial_spectrum(vals, n)
    assert all(isinstance(v, int) for v in lam)
    ev = np.sort(np.concatenate([np.full(math.comb(n, w), lam[w]) for w in range(n + 1)]))
    assert np.allclose(np.linalg.eigvalsh(K), ev, atol=1e-9)
    lamf = radial_spectrum([float(v) for v in vals], n)
    assert lamf == [float(v) for v in lam]
    with pytest.raises(ValueError):
        radial_spectrum([1, 2], n)


def test_exponential_spectrum_closed_form():
    n, beta = 8, 3.7
    vals = [math.exp(beta * (1 - 2 * j / n)) for j in range(n + 1)]
    lam = radial_spectrum(vals, n)
    logs = log_exponential_kernel_spectrum(n, beta)
    assert np.allclose(np.log(lam), logs, atol=1e-12, rtol=0)
    assert np.allclose(np.diff(logs), math.log(math.tanh(beta / n)))
    with pytest.raises(ValueError):
        log_exponential_kernel_spectrum(n, 0.0)


def test_matrix_size_guard():
    with pytest.raises(ValueError):
        ball_kernel_matrix(13, 2)
    with pytest.raises(ValueError):
        ball_kernel_spectrum(5, 6)
