"""Tests of assocmem.mlps.editing.editors: ROME, MEMIT and AlphaEdit on tiny linear memories."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.mlps.editing.editors import (
    alphaedit_edit,
    key_covariance,
    memit_edit,
    nullspace_projector,
    rome_edit,
)

F64 = torch.float64


def _randn(*shape, seed=0):
    return torch.randn(*shape, dtype=F64, generator=torch.Generator().manual_seed(seed))


W0 = _randn(3, 5, seed=0)  # (d_out, d_in)
PRESERVED = _randn(40, 5, seed=1)  # (N, d_in): full rank
C_FULL = key_covariance(PRESERVED)


# ------------------------------------------------------------------ covariance and projector

def test_key_covariance_is_mean_outer_product():
    K = _randn(7, 4, seed=2)
    C = key_covariance(K)
    ref = sum(torch.outer(k, k) for k in K) / 7
    assert C.dtype == F64 and torch.allclose(C, ref, atol=1e-14)
    assert torch.equal(C, C.T)


def test_projector_kills_span_of_preserved_keys():
    # preserved keys span the first 3 coordinates of R^5 (after a rotation)
    Q, _ = torch.linalg.qr(_randn(5, 5, seed=3))
    Kp = _randn(30, 3, seed=4) @ Q[:, :3].T  # (30, 5)
    P = nullspace_projector(key_covariance(Kp), rel_tol=1e-8)
    assert torch.allclose(P, Q[:, 3:] @ Q[:, 3:].T, atol=1e-12)
    assert float((Kp @ P).abs().max()) < 1e-12
    assert torch.allclose(P @ P, P, atol=1e-12)


def test_projector_threshold_is_relative_to_the_spectrum():
    C = torch.diag(torch.tensor([100.0, 10.0, 0.5, 1e-3], dtype=F64))
    P = nullspace_projector(C, rel_tol=1e-2)  # keeps eigenvalues <= 1: the last two
    assert torch.allclose(P, torch.diag(torch.tensor([0.0, 0, 1, 1], dtype=F64)))
    P_scaled = nullspace_projector(1e6 * C, rel_tol=1e-2)  # same directions at any scale
    assert torch.allclose(P, P_scaled)


def test_projector_zero_raises():
    with pytest.raises(ValueError, match="projector is zero"):
        nullspace_projector(C_FULL, rel_tol=1e-12)
    with pytest.raises(ValueError, match="C is zero"):
        nullspace_projector(torch.zeros(3, 3, dtype=F64))


# ------------------------------------------------------------------ ROME

def test_rome_single_edit_inserts_and_preserves_C_orthogonal_keys():
    k = _randn(1, 5, seed=5)
    v = _randn(1, 3, seed=6)
    W1 = rome_edit(W0, k, v, C_FULL)
    assert torch.allclose(W1 @ k[0], v[0], atol=1e-12)
    # keys k' with k'^T C^{-1} k = 0: the orthogonal complement of u = C^{-1} k
    u = torch.linalg.solve(C_FULL, k[0])
    B = torch.linalg.svd(u[None, :])[2][1:]  # (4, 5): rows orthogonal to u
    assert float((B @ u).abs().max()) < 1e-12
    assert torch.allclose(B @ W1.T, B @ W0.T, atol=1e-12)
    # the update is rank one and W0 is untouched
    assert int(torch.linalg.matrix_rank(W1 - W0)) == 1
    assert torch.equal(W0, _randn(3, 5, seed=0))


def test_rome_is_sequential():
    K = _randn(3, 5, seed=7)
    V = _randn(3, 3, seed=8)
    W = rome_edit(W0, K, V, C_FULL)
    ref = W0.clone()
    for i in range(3):
        ref = rome_edit(ref, K[i:i + 1], V[i:i + 1], C_FULL)
    assert torch.allclose(W, ref, atol=1e-12)
    assert torch.allclose(W @ K[-1], V[-1], atol=1e-12)  # the last edit is exact


def test_rome_singular_covariance_needs_ridge():
    Cs = key_covariance(_randn(2, 5, seed=9))  # rank 2 < 5
    k, v = _randn(1, 5, seed=5), _randn(1, 3, seed=6)
    with pytest.raises(ValueError, match="singular.*pass ridge > 0"):
        rome_edit(W0, k, v, Cs)
    W1 = rome_edit(W0, k, v, Cs, ridge=1e-3)
    assert torch.allclose(W1 @ k[0], v[0], atol=1e-10)


def test_rome_zero_key_raises():
    with pytest.raises(ValueError, match="edited key 0 is zero"):
        rome_edit(W0, torch.zeros(1, 5, dtype=F64), _randn(1, 3), C_FULL)


# ------------------------------------------------------------------ MEMIT

def test_memit_hits_every_target_as_lam_goes_to_zero():
    K, V = _randn(3, 5, seed=10), _randn(3, 3, seed=11)
    errs = [float((memit_edit(W0, K, V, C_FULL, lam=lam) @ K.T - V.T).abs().max()) for lam in (1e-2, 1e-5, 1e-8)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-6
    # square full-rank keys: lam = 0 is exact
    Ks, Vs = _randn(5, 5, seed=12), _randn(5, 3, seed=13)
    assert torch.allclose(memit_edit(W0, Ks, Vs, C_FULL, lam=0.0) @ Ks.T, Vs.T, atol=1e-10)


def test_memit_solves_its_normal_equations():
    K, V = _randn(4, 5, seed=14), _randn(4, 3, seed=15)
    lam = 2.5
    W1 = memit_edit(W0, K, V, C_FULL, lam=lam)
    delta = W1 - W0
    grad = (W1 @ K.T - V.T) @ K + lam * delta @ C_FULL  # d/dDelta of the MEMIT objective / 2
    assert float(grad.abs().max()) < 1e-12
    # the formula as written
    R = V.T - W0 @ K.T
    ref = R @ K @ torch.linalg.inv(lam * C_FULL + K.T @ K)
    assert torch.allclose(delta, ref, atol=1e-12)


def test_memit_large_lam_preserves():
    K, V = _randn(2, 5, seed=16), _randn(2, 3, seed=17)
    assert torch.allclose(memit_edit(W0, K, V, C_FULL, lam=1e12), W0, atol=1e-9)


def test_memit_singular_system_raises():
    K, V = _randn(2, 5, seed=16), _randn(2, 3, seed=17)
    with pytest.raises(ValueError, match="lam C \\+ K K\\^T is singular"):
        memit_edit(W0, K, V, C_FULL, lam=0.0)


# ------------------------------------------------------------------ AlphaEdit

def _split_space(seed=18):
    """Preserved keys in a 3-dim subspace of R^5, edited keys in its 2-dim complement."""
    Q, _ = torch.linalg.qr(_randn(5, 5, seed=seed))
    Kp = _randn(30, 3, seed=seed + 1) @ Q[:, :3].T
    Ka = _randn(2, 2, seed=seed + 2) @ Q[:, 3:].T
    return Kp, Ka


def test_alphaedit_preserved_keys_exactly_unchanged():
    Kp, _ = _split_space()
    P = nullspace_projector(key_covariance(Kp), rel_tol=1e-6)
    Ka, Va = _randn(3, 5, seed=21), _randn(3, 3, seed=22)  # arbitrary edited keys
    W1 = alphaedit_edit(W0, Ka, Va, P)
    assert float((W1 @ Kp.T - W0 @ Kp.T).abs().max()) < 1e-12


def test_alphaedit_edits_targets_in_the_null_space():
    Kp, Ka = _split_space()
    P = nullspace_projector(key_covariance(Kp), rel_tol=1e-6)
    Va = _randn(2, 3, seed=23)
    R = Va.T - W0 @ Ka.T
    for alpha in (1.0, 1e-3):
        W1 = alphaedit_edit(W0, Ka, Va, P, alpha=alpha)
        left = Va.T - W1 @ Ka.T
        expected = R @ (alpha * torch.linalg.inv(Ka @ Ka.T + alpha * torch.eye(2, dtype=F64)))
        assert torch.allclose(left, expected, atol=1e-12)
    W1 = alphaedit_edit(W0, Ka, Va, P, alpha=1e-10)
    assert torch.allclose(W1 @ Ka.T, Va.T, atol=1e-8)
    assert float((W1 @ Kp.T - W0 @ Kp.T).abs().max()) < 1e-12


def test_alphaedit_matches_formula():
    P = nullspace_projector(C_FULL, rel_tol=0.5)
    K, V = _randn(3, 5, seed=24), _randn(3, 3, seed=25)
    R = V.T - W0 @ K.T
    ref = R @ K @ P @ torch.linalg.inv(K.T @ K @ P + torch.eye(5, dtype=F64))
    assert torch.allclose(alphaedit_edit(W0, K, V, P) - W0, ref, atol=1e-12)


def test_alphaedit_refuses_zero_or_bad_projector():
    K, V = _randn(1, 5), _randn(1, 3)
    with pytest.raises(ValueError, match="P is zero"):
        alphaedit_edit(W0, K, V, torch.zeros(5, 5, dtype=F64))
    with pytest.raises(ValueError, match="idempotent"):
        alphaedit_edit(W0, K, V, 2 * torch.eye(5, dtype=F64))


# ------------------------------------------------------------------ bad input, shared

K1, V1 = _randn(1, 5, seed=30), _randn(1, 3, seed=31)
P_OK = nullspace_projector(C_FULL, rel_tol=0.5)
NAN = math.nan


def _nan(x):
    y = x.clone()
    y.view(-1)[0] = NAN
    return y


@pytest.mark.parametrize("call, match", [
    (lambda: rome_edit(W0[0], K1, V1, C_FULL), "W must be 2-D"),
    (lambda: rome_edit(_nan(W0), K1, V1, C_FULL), "W contains non-finite"),
    (lambda: rome_edit(W0, _randn(1, 4), V1, C_FULL), "keys must have shape"),
    (lambda: rome_edit(W0, K1, _randn(2, 3), C_FULL), "targets must have shape"),
    (lambda: rome_edit(W0, _nan(K1), V1, C_FULL), "keys contains non-finite"),
    (lambda: rome_edit(W0, K1, _nan(V1), C_FULL), "targets contains non-finite"),
    (lambda: rome_edit(W0, K1, V1, C_FULL[:4, :4]), "C must have shape"),
    (lambda: rome_edit(W0, K1, V1, _randn(5, 5)), "C must be symmetric"),
    (lambda: rome_edit(W0, K1, V1, -C_FULL), "positive semidefinite"),
    (lambda: rome_edit(W0, K1, V1, C_FULL, ridge=-1.0), "ridge must be >= 0"),
    (lambda: rome_edit(W0, torch.zeros(0, 5, dtype=F64), torch.zeros(0, 3, dtype=F64), C_FULL), "at least 1 row"),
    (lambda: memit_edit(W0, K1, V1, C_FULL, lam=-1.0), "lam must be >= 0"),
    (lambda: memit_edit(W0, K1, V1, C_FULL, lam=NAN), "lam must be finite"),
    (lambda: memit_edit(W0, K1, V1, _nan(C_FULL), lam=1.0), "C contains non-finite"),
    (lambda: alphaedit_edit(W0, K1, V1, P_OK, alpha=0.0), "alpha must be > 0"),
    (lambda: alphaedit_edit(W0, K1, V1, P_OK[:4, :4]), "P must have shape"),
    (lambda: alphaedit_edit(W0, K1, V1, _nan(P_OK)), "P contains non-finite"),
    (lambda: nullspace_projector(C_FULL, rel_tol=1.0), "rel_tol must be in"),
    (lambda: nullspace_projector(C_FULL, rel_tol=True), "rel_tol must be a real"),
    (lambda: nullspace_projector(_randn(3, 4)), "square"),
    (lambda: key_covariance(_randn(5)), "keys must be 2-D"),
    (lambda: key_covariance([[1.0, 2.0]]), "must be a torch.Tensor"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_float32_input_is_solved_in_float64():
    W1 = memit_edit(W0.float(), K1.float(), V1.float(), C_FULL.float(), lam=1.0)
    assert W1.dtype == F64
