"""Tests of assocmem.mlps.hebbian_theory: Theorem 3.1, Lemmas B.2, B.3 and B.34 of seed 001."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.mlps import hebbian_theory as ht
from assocmem.mlps.margins import e_k
from assocmem.mlps.mlp import BilinearMLP

F64 = torch.float64


# ------------------------------------------------------------------ presets


def test_presets_and_unknown_name():
    assert set(ht.PRESETS) >= {"quick", "full"}
    for p in ht.PRESETS.values():
        assert p.m <= p.F and p.m <= p.d * (p.d + 1) // 2
        assert p.precond_m <= p.precond_F and p.precond_m <= p.precond_d * (p.precond_d + 1) // 2
        assert p.welch_F > max(p.welch_ms)
    with pytest.raises(ValueError, match="quick"):
        ht.get_preset("nope")


# ------------------------------------------------------------------ Theorem 3.1


@pytest.mark.parametrize("gate", sorted(ht.GATES))
def test_gated_mlp_shapes_and_parameters(gate):
    mlp = ht.gated_mlp(5, 7, d_out=3, gate=gate, seed=1)
    x = torch.randn(4, 5, dtype=F64)
    assert mlp(x).shape == (4, 3) and mlp.features(x).shape == (4, 7)
    assert mlp.num_parameters == 2 * 7 * 5 + 3 * 7
    assert torch.equal(mlp(x), mlp.features(x) @ mlp.B.T)


def test_gated_mlp_identity_gate_is_the_bilinear_mlp():
    mlp = ht.gated_mlp(6, 9, gate="identity", seed=3)
    ref = BilinearMLP(mlp.A.data.clone(), mlp.G.data.clone(), mlp.B.data.clone())
    x = torch.randn(11, 6, dtype=F64)
    torch.testing.assert_close(mlp(x), ref(x), rtol=0, atol=1e-14)


def test_gated_mlp_rejects_bad_input():
    with pytest.raises(ValueError, match="gate"):
        ht.gated_mlp(3, 4, gate="tanh")
    with pytest.raises(ValueError):
        ht.gated_mlp(0, 4)
    with pytest.raises(ValueError):
        ht.GatedMLP(torch.zeros(3, 2), torch.zeros(3, 3), torch.zeros(2, 3))


@pytest.mark.parametrize("gate", sorted(ht.GATES))
def test_theorem_b1_holds_everywhere_when_sigma_is_invertible(gate):
    X = ht.random_unit_inputs(80, 8, seed=0)
    Z = ht.random_unit_inputs(30, 8, seed=1)
    mlp = ht.gated_mlp(8, 20, gate=gate, seed=2)
    rw = ht.hebbian_rewrite(mlp, X)
    err = ht.rewrite_errors(mlp, rw, Z)
    tol = ht.rewrite_tolerance(rw)
    assert 0 < tol < 1e-9
    assert err["stored"] <= tol and err["fresh"] <= tol
    # the codes are y_t / F and the kernel is phi^T Sigma^{-1} phi
    torch.testing.assert_close(rw.codes, mlp(X) / 80)
    phi_x, phi_z = mlp.features(X[:3]), mlp.features(Z[:4])
    explicit = phi_x @ torch.linalg.solve(rw.sigma, phi_z.T)
    torch.testing.assert_close(rw.kernel(X[:3], Z[:4]), explicit, rtol=1e-10, atol=1e-12)
    # the readout is never read: a rewrite from features and outputs alone gives the same H
    rw2 = ht.hebbian_rewrite(lambda x: mlp(x), X, features=mlp.features)
    torch.testing.assert_close(rw2(Z), rw(Z), rtol=0, atol=1e-14)


def test_pinv_equals_solve_when_invertible():
    X = ht.random_unit_inputs(60, 6, seed=4)
    Z = ht.random_unit_inputs(10, 6, seed=5)
    mlp = ht.gated_mlp(6, 15, gate="relu", seed=6)
    a, b = ht.hebbian_rewrite(mlp, X), ht.hebbian_rewrite(mlp, X, inverse="pinv")
    torch.testing.assert_close(a(Z), b(Z), rtol=1e-10, atol=1e-12)


def test_singular_sigma_raises_and_pinv_is_exact_on_stored_inputs():
    X = ht.random_unit_inputs(20, 6, seed=0)
    Z = ht.random_unit_inputs(20, 6, seed=1)
    mlp = ht.gated_mlp(6, 40, gate="silu", seed=2)  # m > F
    with pytest.raises(ValueError, match="singular"):
        ht.hebbian_rewrite(mlp, X)
    rw = ht.hebbian_rewrite(mlp, X, inverse="pinv")
    err = ht.rewrite_errors(mlp, rw, Z)
    assert rw.rank == 20
    assert err["stored"] < 1e-12
    assert err["fresh"] > 1e-2  # B has a component outside the span of the stored features


def test_bilinear_gate_is_singular_beyond_quadratic_forms():
    X = ht.random_unit_inputs(100, 4, seed=0)  # d(d+1)/2 = 10
    Z = ht.random_unit_inputs(30, 4, seed=1)
    mlp = ht.gated_mlp(4, 16, gate="identity", seed=2)
    with pytest.raises(ValueError, match="d\\(d\\+1\\)/2"):
        ht.hebbian_rewrite(mlp, X)
    rw = ht.hebbian_rewrite(mlp, X, inverse="pinv")
    assert rw.rank == 10
    err = ht.rewrite_errors(mlp, rw, Z)
    assert err["stored"] < 1e-12 and err["fresh"] < 1e-12  # the stored features span the feature range


def test_hebbian_rewrite_rejects_bad_input():
    mlp = ht.gated_mlp(3, 2, seed=0)
    X = ht.random_unit_inputs(10, 3)
    with pytest.raises(ValueError, match="inverse"):
        ht.hebbian_rewrite(mlp, X, inverse="lstsq")
    with pytest.raises(ValueError, match="features"):
        ht.hebbian_rewrite(lambda x: x, X)
    with pytest.raises(ValueError, match="2-D"):
        ht.hebbian_rewrite(mlp, X[0])


def test_theorem31_study_small():
    df = ht.theorem31_study(d=10, m=16, F=40, queries=20, seed=0)  # F < d(d+1)/2
    assert list(df.case.unique()) == ["theorem", "m > F, random B", "m > F, Algorithm 1 B0", "m > d(d+1)/2, bilinear"]
    th = df[df.case == "theorem"]
    assert len(th) == 3
    assert (th.err_fresh <= th.tol).all() and (th.err_stored <= th.tol).all()
    assert (th.err_ls_memory <= th.tol).all() and (th.err_hebbian_step <= th.tol).all()
    rnd = df[df.case == "m > F, random B"]
    assert (rnd.err_stored <= rnd.tol).all() and (rnd.err_fresh > 1e-2).all()
    for case in ("m > F, Algorithm 1 B0", "m > d(d+1)/2, bilinear"):
        row = df[df.case == case].iloc[0]
        assert row.err_fresh <= row.tol and row.err_stored <= row.tol
    with pytest.raises(ValueError):
        ht.theorem31_study(d=4, m=16, F=40, queries=5)


# ------------------------------------------------------------------ Lemma B.2


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


# ------------------------------------------------------------------ Lemma B.3


def _phi(F=60, d=6, m=12, seed=0):
    X = ht.random_unit_inputs(F, d, seed=seed)
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


# ------------------------------------------------------------------ Lemma B.34


def test_welch_frobenius_bound_on_random_kernels():
    for fam, K in ht.random_rank_m_kernels(30, 6, 2, seed=0):
        w = ht.welch_frobenius_bound(K, 6)
        assert w.ratio >= 1 - 1e-12, fam
        assert w.e_col >= w.e_col_bound - 1e-9 * w.frobenius_sq, fam
    with pytest.raises(ValueError, match="rank"):
        ht.welch_frobenius_bound(torch.eye(5, dtype=F64), 3)
    with pytest.raises(ValueError):
        ht.welch_frobenius_bound(torch.ones(3, 4, dtype=F64))


@pytest.mark.parametrize("F,m", [(10, 4), (9, 5), (32, 7)])
def test_harmonic_frame_is_a_unit_norm_tight_frame(F, m):
    H = ht.harmonic_frame(F, m)
    assert H.shape == (F, m)
    torch.testing.assert_close(H.norm(dim=1), torch.ones(F, dtype=F64))
    torch.testing.assert_close(H.T @ H, (F / m) * torch.eye(m, dtype=F64))
    w = ht.welch_frobenius_bound(H @ H.T, m)
    assert abs(w.ratio - 1) < 1e-12
    with pytest.raises(ValueError):
        ht.harmonic_frame(4, 4)


@pytest.mark.parametrize("m", [2, 3, 8])
def test_simplex_etf_attains_welch(m):
    S = ht.simplex_etf(m)
    K = S @ S.T
    off = K[~torch.eye(m + 1, dtype=torch.bool)]
    torch.testing.assert_close(off, torch.full_like(off, -1.0 / m))
    w = ht.welch_frobenius_bound(K, m)
    assert abs(w.ratio - 1) < 1e-12
    assert abs(w.max_offdiag_sq / w.welch_bound - 1) < 1e-12


def test_welch_study_columns():
    df = ht.welch_study(20, (4, 8), n=1, seed=0)
    assert {"harmonic frame", "simplex ETF", "gaussian"} <= set(df.family)
    assert (df.ratio >= 1 - df.tol).all()
    tight = df[df.family.isin(["harmonic frame", "simplex ETF"])]
    assert ((tight.ratio - 1).abs() <= tight.tol).all()
