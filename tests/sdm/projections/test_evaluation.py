"""Tests for assocmem.sdm.projections.evaluation: the stored and the authors' protocols (no target
stored; the nearest-stored bound), determinism, other rules, heteroassociation, input checks and
devices. Small slices of the digits.
"""

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.sdm.projections.evaluation import evaluate_projection, nearest_stored
from assocmem.sdm.projections.protocol import level_to_cosine
from assocmem.sdm.projections.training import train_projection


def test_stored_zero_perturbation_is_near_exact(trained, digits):
    _, test = digits
    f = evaluate_projection(trained, test, test, levels=(0,), device="cpu", protocol="stored")
    assert len(f) == len(test)
    assert f["target_stored"].all()
    assert np.allclose(f["nearest_bound"], 1.0)
    assert np.allclose(f["query_cosine"], 1.0)
    assert (f["nearest_index"] == np.arange(len(test))).all()
    assert f["cosine"].mean() > 0.99
    assert f["retrieved_is_nearest"].mean() > 0.95
    assert (f["steps"] <= 10).all() and (f["steps"] >= 1).all()


def test_authors_protocol_stores_no_target_and_respects_the_bound(trained, digits):
    train, test = digits
    f = evaluate_projection(trained, train, test, levels=(0, 100, 300), device="cpu", protocol="authors")
    assert len(f) == 3 * len(test)
    assert not f["target_stored"].any()
    assert (f["nearest_bound"] < 1 - 1e-6).all()
    # the stored image the state ends nearest to can never beat the nearest stored image ...
    assert (f["retrieved_cosine"] <= f["nearest_bound"] + 1e-9).all()
    # ... and a read that returns one stored image (softmax at a huge beta) cannot either; a
    # softmax blend can, which is what exceeds_bound counts
    hard = evaluate_projection(trained, train, test, levels=(0, 100, 300), beta=1e4, device="cpu")
    assert (hard["cosine"] <= hard["nearest_bound"] + 1e-5).all()
    assert not hard["exceeds_bound"].any()
    assert np.allclose(hard["max_weight"], 1.0)
    assert f["exceeds_bound"].equals(f["cosine"] > f["nearest_bound"] + 1e-6)
    # the learnt memory gets close to the bound at zero perturbation
    zero = f[f["level"] == 0]
    assert zero["cosine"].mean() > zero["nearest_bound"].mean() - 0.05


def test_evaluation_is_deterministic_and_paired(trained, digits):
    _, test = digits
    a = evaluate_projection(trained, test[:50], test[:50], levels=(100,), seed=3, device="cpu")
    b = evaluate_projection(trained, test[:50], test[:50], levels=(100,), seed=3, device="cpu")
    pd.testing.assert_frame_equal(a, b)
    # the same perturbed queries for another matrix: the query cosines agree
    c = evaluate_projection(trained.initial_weight, test[:50], test[:50], levels=(100,), seed=3,
                            d=11, device="cpu", dtype=torch.float32)
    assert np.allclose(a["query_cosine"], c["query_cosine"])
    assert np.allclose(a["query_cosine"], level_to_cosine(100))


def test_other_rules_and_heteroassociation(trained, digits):
    _, test = digits
    f = evaluate_projection(trained, test[:40], test[:40], test[:40],
                            rules=("Cont_SDM_CFit_Attention", "Cont_SDM", "Cont_Binary_SDM"),
                            levels=(0, 50), device="cpu")
    assert list(f["rule"].cat.categories) == ["Cont_SDM_CFit_Attention", "Cont_SDM", "Cont_Binary_SDM"]
    assert len(f) == 3 * 2 * 40
    assert f["beta"].notna().sum() == 2 * 40  # only the softmax rule has a beta
    assert f["cosine"].between(-1, 1).all()


def test_nearest_stored(digits):
    train, test = digits
    idx, cos, stored = nearest_stored(train, np.vstack([test[:5], train[:3]]), device="cpu")
    assert list(stored) == [False] * 5 + [True] * 3
    assert list(idx[5:]) == [0, 1, 2] and np.allclose(cos[5:], 1.0)
    brute = (test[:5] / np.linalg.norm(test[:5], axis=1, keepdims=True)) @ \
        (train / np.linalg.norm(train, axis=1, keepdims=True)).T
    assert np.allclose(cos[:5], brute.max(1)) and (idx[:5] == brute.argmax(1)).all()


def test_bad_evaluation_inputs(trained, digits):
    train, test = digits
    with pytest.raises(ValueError, match="n_base = 63 pixels but 64 were expected"):
        evaluate_projection(trained, train[:, :63], test, device="cpu")
    with pytest.raises(ValueError, match="n_base = 10 pixels"):
        evaluate_projection(trained, train, test[:, :10], device="cpu")
    with pytest.raises(ValueError, match="paired by row"):
        evaluate_projection(trained, train, test[:5], test[:4], device="cpu")
    with pytest.raises(ValueError, match="zero rows"):
        evaluate_projection(trained, train[:0], test, device="cpu")
    bad = test[:3].copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        evaluate_projection(trained, train, bad, device="cpu")
    with pytest.raises(ValueError, match="binary rule"):
        evaluate_projection(trained, train, test[:3], rules=("Binary_SDM",), device="cpu")
    with pytest.raises(ValueError, match="unknown|valid"):
        evaluate_projection(trained, train, test[:3], rules=("No_Such_Rule",), device="cpu")
    with pytest.raises(ValueError, match="levels must lie in"):
        evaluate_projection(trained, train, test[:3], levels=(-1,), device="cpu")
    with pytest.raises(ValueError, match="max_steps must be >= 1"):
        evaluate_projection(trained, train, test[:3], max_steps=0, device="cpu")
    with pytest.raises(ValueError, match="tol must be >= 0"):
        evaluate_projection(trained, train, test[:3], tol=-0.1, device="cpu")
    with pytest.raises(ValueError, match=r"shape \(n_out, n_base\)"):
        evaluate_projection(np.ones((0, 64)), train, test[:3], device="cpu")
    with pytest.raises(ValueError, match="LearntProjection or an"):
        evaluate_projection("identity", train, test[:3], device="cpu")
    with pytest.raises(ValueError, match="n_base = 8 pixels but 64"):
        trained.project(np.ones((2, 8)))


def test_device_auto(digits):
    x = digits[0][:120]
    cpu = train_projection(x, 8, d=3, epochs=2, seed=2, device="cpu")
    auto = train_projection(x, 8, d=3, epochs=2, seed=2, device="auto")
    assert auto.weight.device.type == "cpu"  # stored on the CPU wherever it was trained
    assert torch.equal(cpu.initial_weight, auto.initial_weight)
    assert torch.allclose(cpu.weight, auto.weight, atol=1e-4)
    f = evaluate_projection(auto, x, x[:10], levels=(0, 50), device="auto")
    g = evaluate_projection(cpu, x, x[:10], levels=(0, 50), device="cpu")
    assert np.allclose(f["query_cosine"], g["query_cosine"])
    assert np.allclose(f["cosine"], g["cosine"], atol=1e-3)


@pytest.mark.gpu
def test_cuda_matches_cpu(digits):
    train, test = digits
    cpu = train_projection(train[:200], 16, d=5, epochs=2, seed=4, device="cpu")
    gpu = train_projection(train[:200], 16, d=5, epochs=2, seed=4, device="cuda")
    assert torch.allclose(cpu.weight, gpu.weight, atol=1e-3)
    f = evaluate_projection(cpu, train[:200], test[:30], levels=(0, 100), device="cpu")
    g = evaluate_projection(cpu, train[:200], test[:30], levels=(0, 100), device="cuda")
    assert np.allclose(f["cosine"], g["cosine"], atol=1e-4)
