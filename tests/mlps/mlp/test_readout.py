"""Tests for assocmem.mlps.mlp.readout: the raw and whitened readouts of Algorithm 1 and the blocked Gram / Cholesky."""

import pytest
import torch

from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margins import accuracy as strict_accuracy
from assocmem.mlps.margins import accuracy_from_outputs
from assocmem.mlps.mlp.hebbian import hebbian_mlp
from assocmem.mlps.mlp.readout import _cholesky_lower, _gram_lower, _gram_panels, hebbian_readout
from tests.mlps.mlp._helpers import accuracy


@pytest.mark.parametrize("m", [100, 300])  # 300: the blocked Gram path (m >= 256, F >= 256)
def test_readouts_match_their_formulas(facts256, m):
    F = facts256.num_facts
    model = hebbian_mlp(facts256, m, seed=4)
    Phi, C = model.features(facts256.keys), facts256.targets
    B0 = C.T @ Phi / F
    torch.testing.assert_close(model.B, B0)
    lam = 1e-3
    Sigma = Phi.T @ Phi / F
    diag = hebbian_readout(Phi, C, "diag", lam)
    torch.testing.assert_close(diag, B0 / (Sigma.diagonal() + lam))
    primal = hebbian_readout(Phi, C, "full", lam, branch="primal")
    ref = torch.linalg.solve(Sigma + lam * torch.eye(m, dtype=torch.float64), B0.T).T
    torch.testing.assert_close(primal, ref)
    dual = hebbian_readout(Phi, C, "full", lam, branch="dual")
    ref = C.T @ torch.linalg.solve(Phi @ Phi.T + lam * torch.eye(F, dtype=torch.float64), Phi)
    torch.testing.assert_close(dual, ref)


@pytest.mark.parametrize("m", [64, 128, 129, 300, 512, 700])
def test_gram_lower_triangle_matches_the_full_product(m):
    X = torch.randn(90, m, dtype=torch.float64, generator=torch.Generator().manual_seed(m))
    S = _gram_lower(X, 0.5)
    ref = X.T @ X + 0.5 * torch.eye(m, dtype=torch.float64)
    torch.testing.assert_close(S.tril(), ref.tril(), rtol=1e-12, atol=1e-12)
    panels = _gram_panels(m)
    assert panels[0][0] == 0 and panels[-1][1] == m  # the panels tile the rows
    assert all(a[1] == b[0] for a, b in zip(panels, panels[1:]))
    if len(panels) > 1:  # the skipped upper blocks are zero, not uninitialised memory
        i, e = panels[0]
        assert torch.equal(S[i:e, e:], torch.zeros(e - i, m - e, dtype=torch.float64))


@pytest.mark.parametrize("n", [100, 256, 257, 300, 513])
def test_cholesky_lower_matches_lapack(n):
    X = torch.randn(2 * n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(n))
    S = X.T @ X + torch.eye(n, dtype=torch.float64)
    ref = torch.linalg.cholesky(S)
    L, info = _cholesky_lower(S.clone())
    assert info == 0
    torch.testing.assert_close(L, ref, rtol=1e-11, atol=1e-11)
    assert torch.equal(L, L.tril())
    # a matrix that is not positive definite: the first bad leading minor is reported as LAPACK does
    for k in (0, 63, 64, n - 1):
        bad = S.clone()
        bad[k, k] = -1.0
        _, want = torch.linalg.cholesky_ex(bad)
        assert _cholesky_lower(bad.clone())[1] == int(want) > 0


def test_whitened_readout_at_the_benchmark_size():
    fs = make_fact_set(1024, 64, tied=True, seed=0)
    model, Phi = hebbian_mlp(fs, 512, "full", return_features=True)
    assert model.info["branch"] == "primal"  # F > m: never the F x F dual system
    F, lam = 1024, 1e-6
    S = Phi.T @ Phi + F * lam * torch.eye(512, dtype=torch.float64)
    ref = torch.linalg.solve(S, Phi.T @ fs.targets).T  # (d, m)
    torch.testing.assert_close(model.B, ref, rtol=1e-9, atol=1e-9 * ref.abs().max().item())
    assert accuracy_from_outputs(Phi @ model.B.T, fs) == strict_accuracy(model, fs) == 1.0


def test_primal_and_dual_branches_agree():
    fs = make_fact_set(128, 32, seed=5)
    F = fs.num_facts
    for m in (64, 128, 200):  # m < F, m = F, m > F: both branches apply everywhere
        primal = hebbian_mlp(fs, m, "full", ridge=1e-4, seed=6, branch="primal")
        dual = hebbian_mlp(fs, m, "full", ridge=F * 1e-4, seed=6, branch="dual")
        # push-through identity: B0 (Sigma + lam I)^-1 == C^T (Phi Phi^T + F lam I)^-1 Phi
        torch.testing.assert_close(primal.B, dual.B, rtol=1e-7, atol=1e-9)
    # with the paper's ridge 1e-6 in both (so the effective ridges differ by F), both branches
    # interpolate at m = F and decode every fact identically
    a = hebbian_mlp(fs, F, "full", seed=6, branch="primal")
    b = hebbian_mlp(fs, F, "full", seed=6, branch="dual")
    assert accuracy(a, fs) == accuracy(b, fs) == 1.0
    sa, sb = a(fs.keys) @ fs.values.T, b(fs.keys) @ fs.values.T
    assert torch.equal(sa.argmax(dim=1), sb.argmax(dim=1))
    assert hebbian_mlp(fs, 200, "full", seed=6).info["branch"] == "dual"
    assert hebbian_mlp(fs, 128, "full", seed=6).info["branch"] == "primal"


def test_singular_systems_without_ridge_raise():
    fs = make_fact_set(64, 4, seed=0)  # features live in d(d+1)/2 = 10 dimensions
    with pytest.raises(ValueError, match="singular"):
        hebbian_mlp(fs, 20, "full", ridge=0.0)  # primal, m = 20 > rank 10
    with pytest.raises(ValueError, match="singular"):
        hebbian_mlp(fs, 80, "full", ridge=0.0)  # dual, F = 64 > rank 10
    with pytest.raises(ValueError, match="singular"):
        hebbian_mlp(fs, 8, "full", ridge=0.0, branch="dual")
    assert hebbian_mlp(fs, 8, "full", ridge=0.0).B.isfinite().all()  # full rank: fine
    big = make_fact_set(400, 8, seed=0)  # rank <= 36: the blocked Cholesky (n > 256) must notice
    with pytest.raises(ValueError, match="singular"):
        hebbian_mlp(big, 300, "full", ridge=0.0)  # primal, 300 x 300
    with pytest.raises(ValueError, match="singular"):
        hebbian_mlp(big, 40, "full", ridge=0.0, branch="dual")  # dual, 400 x 400
    assert hebbian_mlp(fs, 80, "full").B.isfinite().all()  # the default ridge regularises
    Phi = torch.randn(10, 3, dtype=torch.float64)
    Phi[:, 1] = 0.0
    with pytest.raises(ValueError, match="zero feature"):
        hebbian_readout(Phi, torch.randn(10, 2, dtype=torch.float64), "diag", 0.0)


def test_whitened_readout_stays_differentiable():
    # the blocked Gram / Cholesky paths fall back to differentiable ops under autograd
    Phi = torch.randn(400, 300, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    C = torch.randn(400, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    plain = hebbian_readout(Phi, C, "full", 1e-3)
    Phi.requires_grad_(True)
    B = hebbian_readout(Phi, C, "full", 1e-3)
    torch.testing.assert_close(B.detach(), plain, rtol=1e-10, atol=1e-12)
    B.square().sum().backward()
    assert Phi.grad is not None and torch.isfinite(Phi.grad).all()


@pytest.mark.parametrize("F, m", [(300, 120), (80, 150)])  # primal (m <= F) and dual (m > F)
def test_reference_readout_agrees_with_the_fast_one(F, m):
    # hebbian_readout_reference: whole Gram matrix and one LU solve of the normal equations. Both
    # are backward-stable solves of the same SPD system, so their relative difference is bounded
    # by a small multiple of cond(S) * eps; we allow 10 m cond(S) eps (cond(S) computed here).
    from assocmem.mlps.mlp.readout import hebbian_readout_reference

    g = torch.Generator().manual_seed(1)
    Phi = torch.randn(F, m, generator=g, dtype=torch.float64)
    C = torch.randn(F, 16, generator=g, dtype=torch.float64)
    ridge = 1e-3
    fast = hebbian_readout(Phi, C, "full", ridge)
    ref = hebbian_readout_reference(Phi, C, ridge)
    S = Phi.T @ Phi + F * ridge * torch.eye(m, dtype=torch.float64) if m <= F else \
        Phi @ Phi.T + ridge * torch.eye(F, dtype=torch.float64)
    bound = 10 * max(F, m) * torch.linalg.cond(S).item() * torch.finfo(torch.float64).eps
    assert ((fast - ref).norm() / ref.norm()).item() <= bound


def test_reference_readout_rejects_bad_input():
    from assocmem.mlps.mlp.readout import hebbian_readout_reference

    Phi, C = torch.randn(10, 4, dtype=torch.float64), torch.randn(10, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="positive ridge"):
        hebbian_readout_reference(Phi, C, 0.0)
    with pytest.raises(ValueError, match="need Phi"):
        hebbian_readout_reference(Phi, C[:5])
    with pytest.raises(ValueError):
        hebbian_readout_reference(Phi.clone().fill_(float("nan")), C)
