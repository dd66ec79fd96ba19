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
