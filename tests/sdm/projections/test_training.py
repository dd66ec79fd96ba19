"""Tests for assocmem.sdm.projections.training: training through one softmax read lowers the
loss, is seeded, runs in float64 with an explicit beta, and rejects bad images and arguments.
"""

import math

import numpy as np
import pytest
import torch

from assocmem.sdm.projections.training import LearntProjection, train_projection


def test_training_reduces_the_loss(trained):
    assert isinstance(trained, LearntProjection)
    assert trained.weight.shape == (64, 64) and trained.initial_weight.shape == (64, 64)
    assert len(trained.losses) == 20 and len(trained.cosines) == 20
    assert all(math.isfinite(v) for v in trained.losses)
    assert trained.losses[-1] < 0.6 * trained.initial_loss
    assert trained.losses[-1] < trained.losses[0]
    assert trained.cosines[-1] > trained.initial_cosine
    assert not torch.equal(trained.weight, trained.initial_weight)
    curve = trained.curve()
    assert list(curve.columns) == ["epoch", "loss", "cosine"] and len(curve) == 21
    assert trained.config.beta == pytest.approx(15.85, abs=0.01)  # the authors' beta at d = 11
    assert trained.config.num_train == 1347 and trained.config.n_base == 64


def test_same_seed_same_projection(digits):
    x = digits[0][:200]
    a = train_projection(x, 16, d=5, epochs=3, batch_size=64, seed=7, device="cpu")
    b = train_projection(x, 16, d=5, epochs=3, batch_size=64, seed=7, device="cpu")
    c = train_projection(x, 16, d=5, epochs=3, batch_size=64, seed=8, device="cpu")
    assert torch.equal(a.weight, b.weight) and a.losses == b.losses
    assert torch.equal(a.initial_weight, b.initial_weight)
    assert not torch.equal(a.weight, c.weight)
    assert a.weight.shape == (16, 64)


def test_float64_and_explicit_beta(digits):
    x = digits[0][:100]
    p = train_projection(x, 8, d=1, beta=4.0, epochs=2, dtype=torch.float64, device="cpu")
    assert p.weight.dtype == torch.float64 and p.config.beta == 4.0
    assert p.project(x[:5]).shape == (5, 8)
    assert torch.allclose(p.project(x[:5]).norm(dim=1), torch.ones(5, dtype=torch.float64))


@pytest.mark.parametrize("images, message", [
    (np.zeros((0, 64)), "zero rows"),
    (np.ones(64), r"shape \(N, n_base\)"),
    (np.full((3, 64), np.nan), "non-finite"),
    (np.vstack([np.ones((2, 64)), [[np.inf] + [0.0] * 63]]), "non-finite"),
    (np.vstack([np.ones((2, 64)), np.zeros((1, 64))]), "all-zero image"),
    (np.array([["a"] * 4] * 2), "numeric"),
])
def test_bad_training_images(images, message):
    with pytest.raises(ValueError, match=message):
        train_projection(images, 8, d=3, epochs=1, device="cpu")


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_out=0), "n_out must be >= 1"),
    (dict(n_out=-3), "n_out must be >= 1"),
    (dict(n_out=8, d=9), "2 <= d <= n_out"),
    (dict(n_out=8, epochs=0), "epochs must be >= 1"),
    (dict(n_out=8, batch_size=0), "batch_size must be >= 1"),
    (dict(n_out=8, lr=0.0), "lr must be > 0"),
    (dict(n_out=8, beta=float("nan")), "beta must be a finite"),
    (dict(n_out=8, train_levels=(100, 10)), "lo <= hi"),
    (dict(n_out=8, train_levels=(0, 900)), "levels must lie in"),
    (dict(n_out=8, dtype=torch.float16), "dtype torch.float16 is not supported"),
])
def test_bad_training_arguments(digits, kwargs, message):
    kwargs = {"d": 3, "epochs": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        train_projection(digits[0][:20], device="cpu", **kwargs)
