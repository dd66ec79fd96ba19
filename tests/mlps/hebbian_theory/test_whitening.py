"""Tests for assocmem.mlps.hebbian_theory.whitening: Lemma B.3, whitening minimises ||K_M||_F^2."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.mlps.hebbian_theory import whitening as ht
from assocmem.mlps.hebbian_theory.rewrite import random_unit_inputs
from assocmem.mlps.margins import e_k

F64 = torch.float64


def _phi(F=60, d=6, m=12, seed=0):
    X = random_unit_inputs(F, d, seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    A = torch.randn(m, d, generator=g, dtype=F64)
    G = torch.randn(m, d, generator=g, dtype=F64)
    return (X @ A.T) * (X @ G.T) / math.sqrt(m)


def test_kernel_energy_fast_equals_reference_and_whitened_value():
    Phi = _phi()
    F, m = Phi.shape
    sigma = ht.feature_covariance(Phi)
    Ms = ht.random_preconditioners(sigma, 3, seed=0)
    for M in Ms.values():
        for k in range(3):
            ref = ht.kernel_energy_reference(Phi, M[k])
            assert abs(float(ht.kernel_energy(sigma, M[k], F)) / ref - 1) < 1e-12
            assert abs(float((M[k] * sigma.T).sum()) - m) < 1e-10  # tr(M Sigma) = m
            assert float(torch.linalg.eigvalsh((M[k] + M[k].T) / 2)[0]) > 0  # SPD
    assert abs(ht.whitened_kernel_energy(Phi) / (F * F * m) - 1) < 1e-12


def test_key_crowding_matches_explicit_kernel():
    Phi = _phi(seed=3)
    sigma = ht.feature_covariance(Phi)
    M = ht.random_preconditioners(sigma, 2, seed=1)["wishart"]
    fast = ht.key_crowding(Phi, M, sigma)
    for k in range(2):
        assert abs(float(fast[k]) / e_k(Phi @ M[k] @ Phi.T) - 1) < 1e-10


def test_preconditioner_experiment_whitening_is_the_minimum():
    df = ht.preconditioner_experiment(_phi(seed=5), n=20, seed=0)
    assert set(df.family) == {"full", "none", "diag", "wishart", "diagonal", "partial", "perturbed"}
    assert abs(float(df.loc[df.family == "full", "ratio"].iloc[0]) - 1) < 1e-12
    assert (df.ratio >= 1 - 1e-12).all()
    assert (df.loc[df.family != "full", "ratio"] > 1).all()


def test_whitened_energy_needs_full_rank():
    Phi = _phi(F=60, d=3, m=12)  # rank <= 6 < 12
    with pytest.raises(ValueError, match="singular"):
        ht.whitened_kernel_energy(Phi)
