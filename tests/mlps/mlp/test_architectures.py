"""Tests for assocmem.mlps.mlp.architectures: the fact memories' forward passes, input checks and parameter counts."""

import importlib
import inspect
import pkgutil

import pytest
import torch

import assocmem.mlps.mlp as mlp_package
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp.architectures import bilinear_features
from assocmem.mlps.mlp.hebbian import exact_k2_memory, hebbian_mlp
from assocmem.mlps.mlp.ntk import ntk_mlp


@pytest.mark.parametrize("whitening", ["none", "diag", "full"])
def test_forward_is_features_times_readout(facts256, whitening):
    model = hebbian_mlp(facts256, 96, whitening=whitening, seed=3)
    x = torch.randn(7, 64, dtype=torch.float64)
    torch.testing.assert_close(model(x), model.features(x) @ model.B.T)
    phi = bilinear_features(facts256.keys, model.A, model.G)
    torch.testing.assert_close(phi, model.features(facts256.keys))
    assert model.A.shape == (96, 64) and model.B.shape == (64, 96)
    assert model.construction == f"hebbian-{whitening}"


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


def test_num_parameters_conventions(facts256):
    m, d = 50, 64
    for model in (hebbian_mlp(facts256, m), hebbian_mlp(facts256, m, "full"), ntk_mlp(facts256, m)):
        assert model.num_parameters == 3 * m * d
    assert sum(p.numel() for p in hebbian_mlp(facts256, m).parameters()) == 3 * m * d


def test_memories_reject_the_wrong_width_and_non_finite_input():
    fs = make_fact_set(16, 8, seed=3)
    models = [hebbian_mlp(fs, 32, seed=1), ntk_mlp(fs, 32, seed=1), exact_k2_memory(fs)]
    for model in models:
        out = model(fs.keys)
        assert out.shape == (16, 8) and torch.isfinite(out).all()
        with pytest.raises(ValueError, match=r"shape \(\.\.\., 8\); got \(16, 7\)"):
            model(fs.keys[:, :7])
        with pytest.raises(ValueError, match=r"shape \(\.\.\., 8\); got \(\)"):
            model(torch.tensor(1.0, dtype=torch.float64))
        # forward is sync-free: it does not inspect values, and a NaN gives NaN, as in torch's layers
        bad = fs.keys.clone()
        bad[2, 3] = float("nan")
        nan_rows = torch.isnan(model(bad)).any(dim=1)
        assert nan_rows[2] and not nan_rows[[0, 1, 3]].any()
        with pytest.raises(TypeError, match="torch.Tensor"):
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


#: The package and every module of it: the split keeps the original check on all of the old module's text.
MODULES = [mlp_package.__name__] + [
    f"{mlp_package.__name__}.{m.name}" for m in pkgutil.iter_modules(mlp_package.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_docstrings_cite_public_sources_only(name):
    mod = importlib.import_module(name)

    assert "REFERENCE" not in inspect.getsource(mod)


@pytest.mark.parametrize("convert, match", [
    (lambda sd: {k: (v.half() if isinstance(v, torch.Tensor) else v) for k, v in sd.items()}, "float16"),
    (lambda sd: {**sd, "B": sd["B"].float()}, "must share one dtype"),
    (lambda sd: {**sd, "G": sd["G"].long()}, "G must be float32 or float64; got dtype torch.int64"),
    (lambda sd: {**sd, "A": torch.full_like(sd["A"], float("nan"))}, "non-finite"),
])
def test_a_loaded_state_dict_is_checked_like_the_constructor(convert, match):
    from assocmem.mlps.mlp.architectures import BilinearMLP
    saved = hebbian_mlp(make_fact_set(6, 4, seed=0), 8, whitening="full").state_dict()
    fresh = BilinearMLP.empty(4, 8, device="meta")
    # with assign=True the module takes the tensors as they are: refused at the load, named
    with pytest.raises(ValueError, match=f"state dict loaded into this BilinearMLP.*{match}"):
        fresh.load_state_dict(convert(saved), assign=True)
    ok = BilinearMLP.empty(4, 8, device="meta")
    ok.load_state_dict(saved, assign=True)
    assert ok.A.dtype == torch.float64
