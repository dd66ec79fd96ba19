"""Tests for assocmem.mlps.hebbian_theory.welch: Lemma B.34 (Welch / Frobenius) and tight frames."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.hebbian_theory import welch as ht

F64 = torch.float64


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
