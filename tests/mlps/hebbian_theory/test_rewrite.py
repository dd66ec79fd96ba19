"""Tests for assocmem.mlps.hebbian_theory.rewrite: Theorem 3.1 / B.1, gated MLPs and their Hebbian rewrite."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.hebbian_theory import rewrite as ht
from assocmem.mlps.mlp.architectures import BilinearMLP

F64 = torch.float64


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


def test_gated_mlp_draws_its_factors_on_the_cpu_from_the_seed():
    """A, then G, then B from one CPU generator (then moved to the device): the same MLP everywhere."""
    gen = torch.Generator().manual_seed(4)
    A, G, B = (torch.randn(*shape, generator=gen, dtype=torch.float64) for shape in ((3, 5), (3, 5), (2, 3)))
    mlp = ht.gated_mlp(5, 3, d_out=2, seed=4)
    assert torch.equal(mlp.A, A / 5**0.5) and torch.equal(mlp.G, G / 5**0.5) and torch.equal(mlp.B, B / 3**0.5)


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


def test_the_size_properties_say_what_they_count():
    # their docstrings were just "F." and "m."
    from assocmem.mlps.hebbian_theory.rewrite import HebbianRewrite

    for name, words in (("num_stored", ("stored inputs", "F")), ("width", ("hidden width", "m"))):
        doc = getattr(HebbianRewrite, name).__doc__
        assert len(doc.split()) > 5 and all(w in doc for w in words), (name, doc)
