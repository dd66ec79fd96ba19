import pytest
"""Tests for assocmem.mlps.mlp.gradient_descent: the full-batch Adam baseline."""

import torch

from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp.gradient_descent import train_mlp
from tests.mlps.mlp._helpers import accuracy


def test_train_mlp_reaches_full_accuracy_and_is_deterministic():
    fs = make_fact_set(32, 16, seed=4)
    kw = dict(epochs=400, lr=1e-2, device="cpu", stop_at_full_accuracy=True, check_every=10, seed=1,
              dtype=torch.float32)
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


# ------------------------------------------------------------------------------------------------
# train_mlps: several widths as one stack, against the one-width loop (train_mlps_reference)
#
# Tolerances. Both paths compute the same function; the stack sums in other orders (one GEMM for
# every probe's first layer, narrow probes' logits as H (V B)^T, a fused Adam step). In float64
# the rounding is ~1e-16 per operation and 150 Adam steps amplify it to ~1e-14 (measured: 2e-15
# after 300 epochs), so 1e-9 is a generous bound that a wrong gradient, schedule or stop (errors
# of order lr = 1e-3 or more) cannot meet. In float32 the same reasoning gives 1e-5 relative for
# the losses and 5e-4 absolute for weights of size ~0.1 (measured: 2e-5).

from assocmem.mlps.mlp.gradient_descent import (_losses_and_grads, _views, train_mlps,
                                                 train_mlps_reference)


def _same(fast, ref, atol):
    for a, b in zip(fast, ref):
        assert a.config == b.config
        for name in ("A", "G", "B"):
            assert torch.allclose(getattr(a, name), getattr(b, name), rtol=0, atol=atol), name
        assert a.info["epochs_run"] == b.info["epochs_run"] and a.info["stopped"] == b.info["stopped"]
        assert a.info["final_loss"] == pytest.approx(b.info["final_loss"], rel=atol, abs=atol)
        assert [e for e, _ in a.info["losses"]] == [e for e, _ in b.info["losses"]]
        assert [v for _, v in a.info["losses"]] == pytest.approx([v for _, v in b.info["losses"]], rel=atol)
        assert a.info["accuracy"] == b.info["accuracy"]


def test_train_mlps_matches_the_one_width_loop_in_float64():
    fs = make_fact_set(48, 16, tied=True, seed=3)
    kw = dict(epochs=150, lr=1e-2, dtype=torch.float64, record_every=25)
    widths, seeds = [3, 20, 5, 20], [0, 0, 1, 2]  # narrow and wide probes; one width twice, two seeds
    _same(train_mlps(fs, widths, seed=seeds, **kw), train_mlps_reference(fs, widths, seed=seeds, **kw), 1e-9)


def test_train_mlps_matches_the_one_width_loop_in_float32():
    fs = make_fact_set(48, 16, tied=True, seed=3)
    kw = dict(epochs=150, lr=1e-2, dtype=torch.float32, record_every=25)
    fast, ref = train_mlps(fs, [4, 24], **kw), train_mlps_reference(fs, [4, 24], **kw)
    for a, b in zip(fast, ref):
        assert a.A.dtype == torch.float32 and not a.A.requires_grad
        assert a.info["final_loss"] == pytest.approx(b.info["final_loss"], rel=1e-5)
        for name in ("A", "G", "B"):
            assert torch.allclose(getattr(a, name), getattr(b, name), rtol=0, atol=5e-4)


def test_train_mlps_stops_each_probe_where_train_mlp_stops():
    # tol halfway between the widest probe's losses at epochs 39 and 40 (a gap far above rounding,
    # so both paths stop it at epoch 40, after that step); the others stop later or never;
    # check_every = 7 drops stopped probes between reads
    fs = make_fact_set(40, 16, tied=True, seed=5)
    kw = dict(epochs=120, lr=1e-2, dtype=torch.float64, record_every=1)
    curve = dict(train_mlp(fs, 24, tol=0.0, **kw).info["losses"])
    assert curve[39] - curve[40] > 1e-6
    tol = (curve[39] + curve[40]) / 2
    widths = [2, 24, 10, 16]
    fast = train_mlps(fs, widths, tol=tol, check_every=7, **kw)
    ref = train_mlps_reference(fs, widths, tol=tol, **kw)
    assert ref[1].info["epochs_run"] == 40 and ref[1].info["stopped"] == "tol"
    assert ref[0].info["stopped"] == "epochs"  # the narrowest never gets there
    assert len({m.info["epochs_run"] for m in ref}) >= 3  # probes stop at different epochs
    _same(fast, ref, 1e-9)


def test_train_mlps_mse_matches_the_one_width_loop():
    fs = make_fact_set(24, 8, seed=1)
    kw = dict(epochs=80, lr=1e-2, loss="mse", dtype=torch.float64, record_every=10)
    _same(train_mlps(fs, [3, 12], **kw), train_mlps_reference(fs, [3, 12], **kw), 1e-9)


@pytest.mark.parametrize("loss,m", [("ce", 3), ("ce", 12), ("mse", 5)])
def test_hand_written_gradient_matches_autograd(loss, m):
    # F = V = 32, d = d_c = 8: the cross-entropy logits go through V B at m = 3 and through
    # H B^T at m = 12 (both routes), and the stack is zero-padded at the narrower probe
    fs = make_fact_set(32, 8, tied=True, seed=2)
    K, V, f = fs.keys, fs.values, fs.mapping
    P, d, d_c = 2, 8, 8
    gen = torch.Generator().manual_seed(0)
    flat = torch.randn(P * (2 * m * d + d_c * m), generator=gen, dtype=torch.float64) * 0.3
    AG, B = _views(flat, P, m, d, d_c)
    AG[0, :, m - 1], B[0, :, m - 1] = 0.0, 0.0  # probe 0 is one unit narrower (padding)
    grad = torch.zeros_like(flat)
    losses = _losses_and_grads(flat, grad, P, m, K, V, f, V[f], loss)
    x = flat.clone().requires_grad_(True)
    AGx, Bx = _views(x, P, m, d, d_c)
    total = []
    for p in range(P):
        out = ((K @ AGx[p, 0].T) * (K @ AGx[p, 1].T)) @ Bx[p].T  # (F, d_c)
        if loss == "ce":
            total.append(torch.nn.functional.cross_entropy(out @ V.T, f))
        else:
            total.append(((out - V[f]) ** 2).sum(dim=1).mean())
    torch.stack(total).sum().backward()
    assert torch.allclose(losses, torch.stack(total).detach(), rtol=1e-12, atol=0)
    assert torch.allclose(grad, x.grad, rtol=1e-10, atol=1e-13)
    gAG, gB = _views(grad, P, m, d, d_c)
    assert gAG[0, :, m - 1].abs().max() == 0 and gB[0, :, m - 1].abs().max() == 0  # padding stays zero


def test_train_mlps_rejects_bad_input():
    fs = make_fact_set(16, 8, seed=0)
    for widths in ([], (), 4, "48", [0], [3, 2.5]):
        with pytest.raises(ValueError):
            train_mlps(fs, widths, epochs=2)
    with pytest.raises(ValueError, match="one per width"):
        train_mlps(fs, [2, 3], epochs=2, seed=[1])
    with pytest.raises(ValueError, match="loss"):
        train_mlps(fs, [2], epochs=2, loss="hinge")
    with pytest.raises(ValueError):
        train_mlps(fs, [2], epochs=0)
    with pytest.raises(ValueError):
        train_mlps_reference(fs, [], epochs=2)


def test_train_mlps_reports_divergence_like_train_mlp():
    fs = make_fact_set(16, 8, seed=0)
    kw = dict(epochs=60, lr=1e20, dtype=torch.float32, check_every=7)  # NaN at epoch 2 on both paths
    with pytest.raises(ValueError, match="diverged"):
        train_mlp(fs, 4, **{k: v for k, v in kw.items() if k != "check_every"})
    with pytest.raises(ValueError, match="diverged"):
        train_mlps(fs, [2, 4], **kw)
