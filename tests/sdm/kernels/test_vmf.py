"""Tests for assocmem.sdm.kernels.vmf: the von Mises-Fisher normaliser (against scipy and closed
forms), the density integrates to one, responsibilities equal softmax, and unnormalised keys.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from assocmem.sdm import attention_weights, bipolar, flip_bits, random_binary_patterns
from assocmem.sdm.kernels.sphere import random_unit_vectors
from assocmem.sdm.kernels.vmf import (
    attention_as_vmf_mixture,
    vmf_log_density,
    vmf_log_normalizer,
    vmf_responsibilities,
)

CPU = "cpu"


def test_vmf_normalizer_against_scipy_and_closed_form():
    x = random_unit_vectors(5, 7, seed=0)
    for kappa in (0.5, 10.0, 300.0):
        ours = vmf_log_density(x, x[0], kappa)
        assert np.allclose(ours, stats.vonmises_fisher(x[0], kappa).logpdf(x), atol=1e-10, rtol=1e-12)
    # kappa = 0: the uniform density, 1 / area(S^6) = Gamma(7/2) / (2 pi^(7/2))
    uniform = math.lgamma(3.5) - math.log(2) - 3.5 * math.log(math.pi)
    assert np.allclose(vmf_log_density(x, x[0], 0.0), uniform, atol=1e-14, rtol=0)
    # n = 3: C(kappa) = kappa / (4 pi sinh kappa)
    k = 2.5
    assert math.isclose(float(vmf_log_normalizer(3, k)), math.log(k / (4 * math.pi * math.sinh(k))), rel_tol=1e-13)


def test_vmf_density_integrates_to_one_on_s2():
    kappa = 3.0
    # on S^2 with mu = e_z: integral over t = cos(theta) of 2 pi C exp(kappa t)
    C = math.exp(float(vmf_log_normalizer(3, kappa)))
    total, _ = integrate.quad(lambda t: 2 * math.pi * C * math.exp(kappa * t), -1, 1)
    assert math.isclose(total, 1.0, rel_tol=1e-12)


@pytest.mark.parametrize("method", ["explicit", "scipy"])
def test_vmf_responsibilities_equal_softmax(method):
    n, m, beta = 32, 20, 9.4
    P = random_binary_patterns(m, n, seed=1, device=CPU)
    K = bipolar(P)
    q = bipolar(flip_bits(P[:6], 5, seed=2))
    soft = attention_weights(q, K, beta).numpy()
    resp = vmf_responsibilities(q.numpy(), K.numpy(), beta, method=method)
    assert np.max(np.abs(resp - soft)) <= 1e-12


def test_unnormalised_keys_need_unequal_weights():
    n, m, beta = 16, 10, 5.0
    rng = np.random.default_rng(0)
    K = rng.standard_normal((m, n))
    q = random_unit_vectors(4, n, seed=3)
    soft = attention_weights(torch.tensor(q), torch.tensor(K), beta, normalize=False).numpy()
    dirs, kappa, lw = attention_as_vmf_mixture(K, beta)
    assert np.max(np.abs(vmf_responsibilities(q, dirs, kappa, lw) - soft)) <= 1e-12
    assert np.max(np.abs(vmf_responsibilities(q, dirs, kappa) - soft)) > 1e-3


def test_vmf_input_checks():
    with pytest.raises(ValueError):
        vmf_responsibilities(np.ones((1, 3)), np.eye(3), 1.0)  # non-unit query
    with pytest.raises(ValueError):
        vmf_responsibilities(np.eye(3)[:1], np.eye(3), 1.0, method="nope")
    with pytest.raises(ValueError):
        vmf_log_normalizer(3, -1.0)
