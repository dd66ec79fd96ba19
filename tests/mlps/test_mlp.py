"""Tests for assocmem.mlps.mlp: Hebbian (sketched, whitened, exact-K2), data-dependent, NTK and GD MLPs."""

import pytest
import torch

from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins import accuracy as strict_accuracy
from assocmem.mlps.margins import accuracy_from_outputs, output_margins, score_margins
from assocmem.mlps.mlp import (
    BilinearMLP,
    ExactK2Memory,
    GatedReLUMLP,
    bilinear_features,
    data_dependent_mlp,
    exact_k2_memory,
    hebbian_mlp,
    hebbian_readout,
    ntk_mlp,
    solve_factor,
    solve_factor_reference,
    train_mlp,
)
from assocmem.mlps.mlp import _cholesky_lower, _gram_lower, _gram_panels


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # Small GEMMs: one thread is fastest and immune to oversubscription on a shared machine.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def accuracy(model, facts) -> float:
    """Fraction of facts i with argmax_j <MLP(k_i), v_j> == mapping[i], over every value row."""
    with torch.no_grad():
        s = model(facts.keys).to(torch.float64) @ facts.values.T  # (F, V)
    return (s.argmax(dim=1) == facts.mapping).double().mean().item()


@pytest.fixture(scope="module")
def facts256():
    return make_fact_set(256, 64, tied=True, seed=0)


# ---------------------------------------------------------------------------------------------
# sketched-K2 Hebbian construction (Algorithm 1)


def test_features_sketch_the_quadratic_kernel():
    fs = make_fact_set(40, 16, tied=False, seed=1)
    model = hebbian_mlp(fs, 8192, seed=2)
    K = model.kernel(fs.keys, fs.keys)  # (F, F)
    exact = (fs.keys @ fs.keys.T) ** 2
    assert abs(K.diagonal().mean().item() - 1.0) < 0.05  # K(k, k) ~ ||k||^4 = 1
    assert (K - exact).abs().max() < 0.12  # O(m^{-1/2}) sketch error
    torch.testing.assert_close(K, model.features(fs.keys) @ model.features(fs.keys).T)


@pytest.mark.parametrize("whitening", ["none", "diag", "full"])
def test_forward_is_features_times_readout(facts256, whitening):
    model = hebbian_mlp(facts256, 96, whitening=whitening, seed=3)
    x = torch.randn(7, 64, dtype=torch.float64)
    torch.testing.assert_close(model(x), model.features(x) @ model.B.T)
    phi = bilinear_features(facts256.keys, model.A, model.G)
    torch.testing.assert_close(phi, model.features(facts256.keys))
    assert model.A.shape == (96, 64) and model.B.shape == (64, 96)
    assert model.construction == f"hebbian-{whitening}"


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


def test_return_features_gives_the_construction_features(facts256):
    for m, whitening in [(96, "none"), (200, "diag"), (200, "full"), (300, "full")]:
        model, Phi = hebbian_mlp(facts256, m, whitening, seed=3, return_features=True)
        plain = hebbian_mlp(facts256, m, whitening, seed=3)
        assert torch.equal(model.A, plain.A) and torch.equal(model.G, plain.G)
        assert torch.equal(model.B, plain.B)  # the option changes nothing about the model
        assert Phi.shape == (256, m) and Phi.dtype == torch.float64
        torch.testing.assert_close(Phi, bilinear_features(facts256.keys, model.A, model.G), rtol=0, atol=0)
        torch.testing.assert_close(Phi, model.features(facts256.keys), rtol=1e-12, atol=1e-14)
        assert Phi.data_ptr() not in {p.data_ptr() for p in model.parameters()}


@pytest.mark.parametrize("m", [40, 120, 200, 256, 400])  # from far too few units to the dual branch
def test_fused_accuracy_equals_the_unfused_path(facts256, m):
    model, Phi = hebbian_mlp(facts256, m, "full", seed=1, return_features=True)
    fused = accuracy_from_outputs(Phi @ model.B.T, facts256)
    assert fused == strict_accuracy(model, facts256)
    margins = score_margins(Phi @ model.B.T @ facts256.values.T, facts256.mapping)
    ref = output_margins(model, facts256)
    torch.testing.assert_close(margins, ref, rtol=0, atol=1e-12 * ref.abs().max().item())
    assert fused == float((ref > 0).double().mean())


def test_whitened_readout_at_the_benchmark_size():
    fs = make_fact_set(1024, 64, tied=True, seed=0)
    model, Phi = hebbian_mlp(fs, 512, "full", return_features=True)
    assert model.info["branch"] == "primal"  # F > m: never the F x F dual system
    F, lam = 1024, 1e-6
    S = Phi.T @ Phi + F * lam * torch.eye(512, dtype=torch.float64)
    ref = torch.linalg.solve(S, Phi.T @ fs.targets).T  # (d, m)
    torch.testing.assert_close(model.B, ref, rtol=1e-9, atol=1e-9 * ref.abs().max().item())
    assert accuracy_from_outputs(Phi @ model.B.T, fs) == strict_accuracy(model, fs) == 1.0


def test_features_blocked_and_single_gemm_paths_agree():
    K = torch.randn(700, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    A, G = torch.randn(2, 300, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    blocked = bilinear_features(K, A, G)  # CPU, no autograd: row blocks, contiguous result
    assert blocked.is_contiguous()
    A.requires_grad_(True)
    single = bilinear_features(K, A, G)  # inputs that require grad: the single-GEMM path
    # The two paths call GEMM on differently shaped operands, so BLAS may sum the length-d dot
    # products in another order (another kernel, another thread split). Each dot product then
    # moves by at most gamma_d * sum_i |k_i a_i| (gamma_d = d u / (1 - d u), Higham, Thm 3.5),
    # and the product of the two branches by at most the sum of both perturbations plus one
    # rounding of the product.
    d, u = K.shape[1], torch.finfo(torch.float64).eps / 2
    gamma = d * u / (1 - d * u)
    absA, absG = (K.abs() @ A.detach().abs().T), (K.abs() @ G.abs().T)  # (F, m) each
    za, zg = K @ A.detach().T, K @ G.T
    bound = gamma * (absA * zg.abs() + absG * za.abs() + gamma * absA * absG) + u * (za * zg).abs()
    assert bool(((single.detach() - blocked).abs() <= 2 * bound).all())  # 2: the reference's own rounding


def test_return_features_must_be_a_bool(facts256):
    with pytest.raises(ValueError, match="return_features"):
        hebbian_mlp(facts256, 8, return_features="yes")
    with pytest.raises(ValueError, match="return_features"):
        hebbian_mlp(facts256, 8, return_features=1)


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


def test_whitened_stores_256_facts_at_m_256(facts256):
    model = hebbian_mlp(facts256, 256, whitening="full", seed=0)
    assert accuracy(model, facts256) == 1.0
    assert accuracy(hebbian_mlp(facts256, 512, "full", seed=0), facts256) == 1.0  # dual branch


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


def test_constructions_are_seeded(facts256):
    a, b = hebbian_mlp(facts256, 32, seed=9), hebbian_mlp(facts256, 32, seed=9)
    assert torch.equal(a.A, b.A) and torch.equal(a.B, b.B)
    assert not torch.equal(a.A, hebbian_mlp(facts256, 32, seed=10).A)
    c, e = data_dependent_mlp(facts256, 24, seed=1), data_dependent_mlp(facts256, 24, seed=1)
    assert torch.equal(c.A, e.A) and torch.equal(c.B, e.B)


# ---------------------------------------------------------------------------------------------
# data-dependent construction (eqs. 17-18)


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


# ---------------------------------------------------------------------------------------------
# exact K2, NTK, GD


def test_exact_k2_memory(facts256):
    mem = exact_k2_memory(facts256)
    assert isinstance(mem, ExactK2Memory) and not hasattr(mem, "features")
    x = torch.randn(3, 64, dtype=torch.float64)
    ref = sum(facts256.targets[t] * (facts256.keys[t] @ x.T)[:, None] ** 2 for t in range(256)) / 256
    torch.testing.assert_close(mem(x), ref)
    torch.testing.assert_close(mem.kernel(x, facts256.keys), (x @ facts256.keys.T) ** 2)
    assert accuracy(mem, facts256) == 1.0
    assert mem.num_parameters == 64 * 64 * 65 // 2


def test_ntk_construction_matches_appendix_b3():
    fs = make_fact_set(64, 32, seed=1)
    m = 128
    model = ntk_mlp(fs, m, seed=2)
    assert isinstance(model, GatedReLUMLP)
    torch.testing.assert_close(model.P.norm(dim=0), torch.ones(m, dtype=torch.float64))
    # W_up, row by row: u_r = (1/m) sum_i (w_r . k_i)(c_f(i) . p_r) k_i
    K, C = fs.keys, fs.targets
    u = torch.stack([
        sum((model.W_gate[r] @ K[i]) * (C[i] @ model.P[:, r]) * K[i] for i in range(64)) / m
        for r in range(0, m, 17)
    ])
    torch.testing.assert_close(model.W_up[::17], u)
    x = torch.randn(4, 32, dtype=torch.float64)
    ref = (torch.relu(x @ model.W_gate.T) * (x @ model.W_up.T)) @ model.P.T
    torch.testing.assert_close(model(x), ref)
    assert model.num_parameters == 3 * m * 32
    assert accuracy(ntk_mlp(fs, 2048, seed=2), fs) == 1.0
    assert accuracy(ntk_mlp(fs, 32, seed=2), fs) < 1.0


def test_train_mlp_reaches_full_accuracy_and_is_deterministic():
    fs = make_fact_set(32, 16, seed=4)
    kw = dict(epochs=400, lr=1e-2, device="cpu", stop_at_full_accuracy=True, check_every=10, seed=1)
    model = train_mlp(fs, 32, **kw)
    assert model.info["stopped"] == "accuracy" and model.info["accuracy"] == 1.0
    assert accuracy(model, fs) == 1.0  # float32 model queried with float64 keys
    assert model.A.dtype == torch.float32 and not model.A.requires_grad
    assert model.num_parameters == 3 * 32 * 16
    again = train_mlp(fs, 32, **kw)
    assert torch.equal(model.B, again.B) and model.info["epochs_run"] == again.info["epochs_run"]


def test_train_mlp_mse_and_tolerance_stop():
    fs = make_fact_set(16, 8, seed=0)
    mse = train_mlp(fs, 16, epochs=200, lr=1e-2, loss="mse", device="cpu")
    assert mse.info["final_loss"] < mse.info["losses"][0][1]
    early = train_mlp(fs, 16, epochs=200, device="cpu", tol=100.0)
    assert early.info["stopped"] == "tol" and early.info["epochs_run"] == 1


# ---------------------------------------------------------------------------------------------
# parameter counts and bad input


def test_num_parameters_conventions(facts256):
    m, d = 50, 64
    for model in (hebbian_mlp(facts256, m), hebbian_mlp(facts256, m, "full"), ntk_mlp(facts256, m)):
        assert model.num_parameters == 3 * m * d
    assert sum(p.numel() for p in hebbian_mlp(facts256, m).parameters()) == 3 * m * d


CONSTRUCTIONS = [
    lambda fs, m: hebbian_mlp(fs, m),
    lambda fs, m: hebbian_mlp(fs, m, "full"),
    lambda fs, m: data_dependent_mlp(fs, m),
    lambda fs, m: ntk_mlp(fs, m),
    lambda fs, m: train_mlp(fs, m, epochs=1, device="cpu"),
]


@pytest.mark.parametrize("build", CONSTRUCTIONS)
@pytest.mark.parametrize("m", [0, -3, 2.5, True])
def test_bad_width_raises(build, m):
    with pytest.raises(ValueError, match="m must be a positive integer"):
        build(make_fact_set(8, 4), m)


@pytest.mark.parametrize("build", CONSTRUCTIONS[:4] + [lambda fs, m: exact_k2_memory(fs)])
def test_keys_off_the_sphere_raise(build):
    fs = make_fact_set(8, 4)
    off = FactSet(1.5 * fs.keys, fs.values, fs.mapping, unit_norm=False)
    with pytest.raises(ValueError, match="unit sphere"):
        build(off, 4)


def test_keys_off_the_sphere_allowed_on_request():
    fs = make_fact_set(8, 4)
    off = FactSet(1.5 * fs.keys, fs.values, fs.mapping, unit_norm=False)
    assert hebbian_mlp(off, 4, require_unit_keys=False).num_parameters == 48


def test_empty_fact_set_and_bad_map_raise():
    with pytest.raises(ValueError):
        make_fact_set(0, 4)
    fs = make_fact_set(8, 4)
    with pytest.raises(ValueError, match="at least one fact"):
        FactSet(fs.keys[:0], fs.values, fs.mapping[:0])
    with pytest.raises(ValueError, match=r"\[0, V\)"):
        FactSet(fs.keys, fs.values, fs.mapping + 1)
    # a map edited in place after construction is caught by the constructions
    bad = make_fact_set(8, 4)
    bad.mapping[0] = 99
    for build in CONSTRUCTIONS:
        with pytest.raises(ValueError, match=r"\[0, V\)"):
            build(bad, 4)
    with pytest.raises(ValueError, match="FactSet"):
        hebbian_mlp((fs.keys, fs.values, fs.mapping), 4)


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


def test_other_bad_arguments_raise(facts256):
    with pytest.raises(ValueError, match="whitening"):
        hebbian_mlp(facts256, 8, "zca")
    with pytest.raises(ValueError, match="ridge"):
        hebbian_mlp(facts256, 8, "full", ridge=-1.0)
    with pytest.raises(ValueError, match="branch"):
        hebbian_mlp(facts256, 8, "full", branch="both")
    with pytest.raises(ValueError, match="objective"):
        data_dependent_mlp(facts256, 8, objective="logits")
    with pytest.raises(ValueError, match="loss"):
        train_mlp(facts256, 8, loss="hinge", device="cpu")
    with pytest.raises(ValueError, match="lr"):
        train_mlp(facts256, 8, lr=0.0, device="cpu")


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


# ---------------------------------------------------------------------------------------------
# input checks of the fact memories and argument names in messages


def test_memories_reject_the_wrong_width_and_non_finite_input():
    fs = make_fact_set(16, 8, seed=3)
    models = [hebbian_mlp(fs, 32, seed=1), ntk_mlp(fs, 32, seed=1), exact_k2_memory(fs)]
    for model in models:
        out = model(fs.keys)
        assert out.shape == (16, 8) and torch.isfinite(out).all()
        with pytest.raises(ValueError, match=r"shape \(\.\.\., d\) with d = 8.*got shape \(16, 7\)"):
            model(fs.keys[:, :7])
        with pytest.raises(ValueError, match=r"d = 8.*got shape \(\)"):
            model(torch.tensor(1.0))
        bad = fs.keys.clone()
        bad[2, 3] = float("nan")
        with pytest.raises(ValueError, match="non-finite"):
            model(bad)
        bad[2, 3] = float("inf")
        with pytest.raises(ValueError, match="non-finite"):
            model(bad)
        with pytest.raises(ValueError, match="torch.Tensor"):
            model(fs.keys.numpy())
    bil = models[0]
    with pytest.raises(ValueError, match="d = 8"):
        bil.features(torch.ones(3, 9, dtype=torch.float64))
    with pytest.raises(ValueError, match="non-finite"):
        bil.kernel(fs.keys, torch.full((2, 8), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="z must have shape"):
        models[2].kernel(fs.keys, torch.ones(2, 5, dtype=torch.float64))


def test_input_checks_do_not_change_outputs(facts256):
    model = hebbian_mlp(facts256, 64, "full", seed=2)
    q = facts256.keys[:5]
    want = ((q @ model.A.T) * (q @ model.G.T)) @ model.B.T
    assert torch.equal(model(q), want)  # bit for bit: the check only reads the input


def test_data_dependent_errors_name_the_caller_arguments(facts256):
    with pytest.raises(ValueError, match=r"^cg_tol must be"):
        data_dependent_mlp(facts256, 8, cg_tol=-1)
    with pytest.raises(ValueError, match=r"^cg_tol must be"):
        data_dependent_mlp(facts256, 8, cg_tol=float("nan"))
    with pytest.raises(ValueError, match=r"^cg_max_iter must be a positive integer"):
        data_dependent_mlp(facts256, 8, cg_max_iter=0)
    with pytest.raises(ValueError, match=r"^ridge must be"):
        data_dependent_mlp(facts256, 8, ridge=-1.0)


def test_docstrings_cite_public_sources_only():
    import inspect

    import assocmem.mlps.mlp as mod

    assert "REFERENCE" not in inspect.getsource(mod)
