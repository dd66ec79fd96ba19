"""Tests for assocmem.mlps.hebbian_theory.sketch: Lemma B.2, the bilinear sketch of K2."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.mlps.hebbian_theory import sketch as ht

F64 = torch.float64


def test_the_pair_is_drawn_on_the_cpu_and_then_moved():
    """One seed, one draw on every device: the CPU generator draws, the result moves (here to the
    meta device, which stands for a GPU; a generator made on it would fail)."""
    x, z = ht.pair_with_overlap(7, 0.5, seed=3, device=torch.device("meta"))
    assert x.device.type == "meta" and z.device.type == "meta" and x.shape == (7,)
    # on the CPU: exactly the draw of a CPU generator seeded with the seed (the book's numbers)
    q, _ = torch.linalg.qr(torch.randn(7, 2, generator=torch.Generator().manual_seed(3), dtype=F64))
    x, z = ht.pair_with_overlap(7, 0.5, seed=3)
    assert torch.equal(x, q[:, 0]) and torch.equal(z, 0.5 * q[:, 0] + math.sqrt(0.75) * q[:, 1])


def test_pair_with_overlap():
    for rho in (-1.0, -0.3, 0.0, 0.5, 1.0):
        x, z = ht.pair_with_overlap(7, rho, seed=3)
        assert abs(float(x.norm()) - 1) < 1e-14 and abs(float(z.norm()) - 1) < 1e-14
        assert abs(float(x @ z) - rho) < 1e-14
    with pytest.raises(ValueError):
        ht.pair_with_overlap(5, 1.5)
    x, z = ht.overlap_pairs(6, [0.1, 0.9], seed=0)
    assert x.shape == (2, 6)
    torch.testing.assert_close((x * z).sum(1), torch.tensor([0.1, 0.9], dtype=F64))


def test_sketch_kernel_matches_feature_inner_product():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, generator=g, dtype=F64)
    z = torch.randn(3, 5, generator=g, dtype=F64)
    A = torch.randn(11, 5, generator=g, dtype=F64)
    G = torch.randn(11, 5, generator=g, dtype=F64)
    gx = (x @ A.T) * (x @ G.T) / math.sqrt(11)
    gz = (z @ A.T) * (z @ G.T) / math.sqrt(11)
    torch.testing.assert_close(ht.sketch_kernel(x, z, A, G), (gx * gz).sum(1))
    # batched draws
    Ab, Gb = torch.stack([A, G]), torch.stack([G, A])
    assert ht.sketch_kernel(x, z, Ab, Gb).shape == (2, 3)


def test_sketch_variance_closed_form_and_monte_carlo():
    x, z = ht.overlap_pairs(4, [0.0, 1.0, 0.5], seed=1)
    v = ht.sketch_variance(x, z)
    torch.testing.assert_close(v[:2], torch.tensor([1.0, 8.0], dtype=F64))
    assert abs(float(v[2]) - ((1 + 0.5) ** 2 - 0.0625)) < 1e-12
    # Monte Carlo with m = 1 summand per draw
    g = torch.Generator().manual_seed(2)
    n = 200_000
    A = torch.randn(n, 1, 4, generator=g, dtype=F64)
    G = torch.randn(n, 1, 4, generator=g, dtype=F64)
    K = ht.sketch_kernel(x, z, A, G)  # (n, 3)
    var = K.var(0)
    assert torch.all((var / v - 1).abs() < 0.1)  # 8th-moment noise: generous but meaningful


def test_sketch_error_is_unbiased_and_shrinks():
    x, z = ht.overlap_pairs(6, [0.0, 0.6, 1.0], seed=0)
    se = ht.sketch_error(x, z, ms=(8, 64, 512), draws=300, seed=1)
    assert se.mean.shape == (3, 3) and se.rms.shape == (3,)
    assert np.abs(se.bias_z()).max() < 4.5
    fit = ht.loglog_fit(se.ms, se.rms, se.se_log_rms)
    assert abs(fit.slope + 0.5) < 5 * fit.slope_se
    assert np.all(np.abs(np.log(se.rms / se.predicted_rms)) < 5 * se.se_log_rms)
    assert len(se.frame()) == 9
    with pytest.raises(ValueError, match="draws"):
        ht.sketch_error(x, z, ms=(4,), draws=1)
    with pytest.raises(ValueError):
        ht.sketch_error(x, z[:2], ms=(4,), draws=3)


def test_loglog_fit_exact_power_law_and_se():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    fit = ht.loglog_fit(x, 3 * x**-0.5, np.full(4, 0.1))
    assert abs(fit.slope + 0.5) < 1e-12 and abs(fit.intercept - math.log(3)) < 1e-12
    u = np.log(x)
    assert abs(fit.slope_se - 0.1 / math.sqrt(((u - u.mean()) ** 2).sum())) < 1e-12
    with pytest.raises(ValueError):
        ht.loglog_fit([1.0, 1.0], [1.0, 2.0], [0.1, 0.1])


def test_bonferroni_z():
    assert abs(ht.bonferroni_z(1, 0.05) - 1.959964) < 1e-5
    assert ht.bonferroni_z(45) > ht.bonferroni_z(1)
    with pytest.raises(ValueError):
        ht.bonferroni_z(3, alpha=0)
