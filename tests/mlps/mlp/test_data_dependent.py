"""Tests for assocmem.mlps.mlp.data_dependent: the factor least squares of eqs. 17-18 and the data-dependent MLP."""

import pytest
import torch

from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp.architectures import BilinearMLP
from assocmem.mlps.mlp.data_dependent import data_dependent_mlp, solve_factor, solve_factor_reference
from assocmem.mlps.mlp.hebbian import hebbian_mlp
from assocmem.mlps.mlp.readout import hebbian_readout
from tests.mlps.mlp._helpers import accuracy


def test_whitening_helps_and_data_dependent_needs_far_fewer_units(facts256):
    # REFERENCE scale (d = 64, tied, F = 256): unwhitened ~257, whitened ~131, data-dependent ~45-48.
    assert accuracy(hebbian_mlp(facts256, 200, "none"), facts256) < 1.0
    assert accuracy(hebbian_mlp(facts256, 112, "full"), facts256) < 1.0
    assert accuracy(hebbian_mlp(facts256, 112, "full"), facts256) > accuracy(
        hebbian_mlp(facts256, 112, "none"), facts256
    )
    dd = data_dependent_mlp(facts256, 64, seed=0)
    assert accuracy(dd, facts256) == 1.0
    assert dd.num_parameters < 0.6 * hebbian_mlp(facts256, 112, "full").num_parameters


@pytest.mark.parametrize("score", [False, True])
def test_factor_solver_matches_dense_least_squares(score):
    fs = make_fact_set(14, 4, tied=False, seed=2)
    m, d = 6, 4  # 24 unknowns, 56 equations: a unique least-squares solution
    gen = torch.Generator().manual_seed(0)
    Y = torch.randn(m, d, generator=gen, dtype=torch.float64)
    W = torch.randn(d, m, generator=gen, dtype=torch.float64)
    C = fs.targets
    if score:
        metric = fs.values.T @ fs.values
        ref = solve_factor_reference(fs.keys, Y, W, C, fs.values, fs.mapping)
    else:
        metric = None
        ref = solve_factor_reference(fs.keys, Y, W, C)
    X, info = solve_factor(fs.keys, Y, W, C, metric=metric, tol=1e-12, max_iter=2000)
    assert info["converged"]
    torch.testing.assert_close(X, ref, rtol=1e-6, atol=1e-8)


def test_the_dense_reference_builds_its_system_beside_the_keys():
    """The one-hot targets are made on the keys' device, not the default one (meta here, standing
    for a device other than the inputs'): the same solution as outside the context."""
    fs = make_fact_set(10, 3, tied=False, seed=1)
    gen = torch.Generator().manual_seed(2)
    Y = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    W = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    ref = solve_factor_reference(fs.keys, Y, W, fs.targets, fs.values, fs.mapping)
    with torch.device("meta"):
        X = solve_factor_reference(fs.keys, Y, W, fs.targets, fs.values, fs.mapping)
    assert X.device == fs.keys.device and torch.equal(X, ref)


def test_data_dependent_structure_and_info(facts256):
    model = data_dependent_mlp(facts256, 40, seed=3)
    assert isinstance(model, BilinearMLP) and model.construction == "data-dependent"
    x = torch.randn(5, 64, dtype=torch.float64)
    torch.testing.assert_close(model(x), model.features(x) @ model.B.T)
    # the readout is the full whitened readout of the fitted features
    Phi = model.features(facts256.keys)
    torch.testing.assert_close(model.B, hebbian_readout(Phi, facts256.targets, "full", 1e-6))
    for key in ("solve_G", "solve_A"):
        assert model.info[key]["converged"] and model.info[key]["iterations"] >= 1
    assert model.num_parameters == 3 * 40 * 64


def test_data_dependent_score_objective_stores(facts256):
    assert accuracy(data_dependent_mlp(facts256, 64, objective="score"), facts256) == 1.0


def test_data_dependent_errors_name_the_caller_arguments(facts256):
    with pytest.raises(ValueError, match=r"^cg_tol must be"):
        data_dependent_mlp(facts256, 8, cg_tol=-1)
    with pytest.raises(ValueError, match=r"^cg_tol must be"):
        data_dependent_mlp(facts256, 8, cg_tol=float("nan"))
    with pytest.raises(ValueError, match=r"^cg_max_iter must be a positive integer"):
        data_dependent_mlp(facts256, 8, cg_max_iter=0)
    with pytest.raises(ValueError, match=r"^ridge must be"):
        data_dependent_mlp(facts256, 8, ridge=-1.0)


def test_reference_construction_agrees_when_both_solves_converge():
    # Both solve the same two SPD normal-equation systems by CG (rank-1 vs Jacobi
    # preconditioner). Stopped at relative residual 1e-11, each iterate is within
    # cond * 1e-11 of the exact solution; 1e-6 allows a condition number up to ~5e4 (the
    # Jacobi-preconditioned operator here needs ~150 iterations, i.e. cond ~ 1e3-1e4).
    from assocmem.mlps.mlp.data_dependent import data_dependent_mlp_reference

    facts = make_fact_set(128, 16, tied=True, seed=2)
    fast = data_dependent_mlp(facts, 40, seed=1, cg_tol=1e-11, cg_max_iter=5000)
    ref = data_dependent_mlp_reference(facts, 40, seed=1, cg_tol=1e-11, cg_max_iter=5000)
    for a, b in ((fast.G, ref.G), (fast.A, ref.A), (fast.B, ref.B)):
        assert ((a - b).norm() / b.norm()).item() <= 1e-6
    assert accuracy(fast, facts) == accuracy(ref, facts)


def test_reference_construction_at_the_default_tolerance_and_bad_input(facts256):
    from assocmem.mlps.mlp.data_dependent import data_dependent_mlp_reference

    ref = data_dependent_mlp_reference(facts256, 64)
    assert ref.info["iterations_G"] >= 1 and ref.info["iterations_A"] >= 1
    assert accuracy(ref, facts256) == accuracy(data_dependent_mlp(facts256, 64), facts256) == 1.0
    with pytest.raises(ValueError):
        data_dependent_mlp_reference(facts256, 64, cg_max_iter=0)
    with pytest.raises(ValueError, match="positive ridge"):
        data_dependent_mlp_reference(facts256, 8, ridge=0.0)
