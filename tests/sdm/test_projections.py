"""Tests for assocmem.sdm.projections: the learnt key projection of App. B.7 and its two
evaluations (the authors' protocol, with no target stored, and the stored protocols).

One projection is trained on the digits for 20 epochs (about a second) and shared; everything
else uses small slices. One CPU thread throughout."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.sdm.projections import (
    AUTHORS_BASE_DIM,
    AUTHORS_TEST_LEVELS,
    PROJECTION_PRESETS,
    PROTOCOLS,
    TRAIN_RULE,
    LearntProjection,
    cosine_to_level,
    digits_images,
    evaluate_projection,
    level_to_cosine,
    nearest_stored,
    projection_experiment,
    run_projection_preset,
    summarize_projection,
    train_projection,
)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


@pytest.fixture(scope="module")
def digits():
    return digits_images(seed=0)


@pytest.fixture(scope="module")
def trained(digits):
    train, _ = digits
    return train_projection(train, 64, d=11, epochs=20, seed=0, device="cpu")


# ------------------------------------------------------------------------------------------
# units


def test_levels_are_the_authors_mnist_cosines():
    assert level_to_cosine(0) == 1.0
    assert level_to_cosine(300) == pytest.approx(1 - 600 / 784)
    assert np.allclose(level_to_cosine(np.array(AUTHORS_TEST_LEVELS)),
                       1 - 2 * np.array(AUTHORS_TEST_LEVELS) / AUTHORS_BASE_DIM)
    assert cosine_to_level(level_to_cosine(123.5)) == pytest.approx(123.5)
    assert level_to_cosine(50, base_dim=1024) == pytest.approx(1 - 100 / 1024)
    with pytest.raises(ValueError, match="levels must lie in"):
        level_to_cosine(785)
    with pytest.raises(ValueError, match="cosines must lie in"):
        cosine_to_level(1.5)


# ------------------------------------------------------------------------------------------
# training


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


# ------------------------------------------------------------------------------------------
# evaluation


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


# ------------------------------------------------------------------------------------------
# the experiment


def test_projection_experiment_protocols(trained, digits):
    train, test = digits
    ex = projection_experiment(train[:300], test[:60], "all", d=11, levels=(0, 200),
                               projections={(11, 0): trained}, num_train_queries=40, seed=0,
                               device="cpu")
    f = ex.frame
    assert list(f["protocol"].cat.categories) == list(PROTOCOLS)
    assert list(f["projection"].cat.categories) == ["learnt", "random", "identity"]
    assert not f.loc[f["protocol"] == "authors", "target_stored"].any()
    assert f.loc[f["protocol"] != "authors", "target_stored"].all()
    counts = f.groupby(["protocol", "projection"], observed=True).size()
    assert counts[("authors", "learnt")] == 2 * 60 and counts[("stored_train", "identity")] == 2 * 40
    assert set(ex.bounds["protocol"]) == set(PROTOCOLS)
    assert ex.bounds.set_index("protocol").loc["authors", "stored"] == 0.0
    assert ex.bounds.set_index("protocol").loc["stored_all", "memory"] == 360
    s = ex.summary
    assert {"cosine", "nearest_bound", "retrieved", "exceeds_bound", "retrieved_is_nearest"} <= set(s.columns)
    assert len(s) == 4 * 3 * 2
    assert ex.projections[(11, 0)] is trained and ex.seconds["train"] == 0.0
    assert summarize_projection(f).equals(s)


def test_projection_experiment_trains_and_skips_identity_when_compressing(digits):
    train, test = digits
    # d = 9 is past n_out / 2 = 8, where the fitted beta means little: fit_beta says so
    with pytest.warns(UserWarning, match=r"fit_beta\(n=16, d=9\).*n/2 = 8"):
        ex = projection_experiment(train[:150], test[:20], ("authors", "stored"), d=(5, 9), n_out=16,
                                   epochs=2, levels=(0,), device="cpu", seed=1)
    assert list(ex.frame["projection"].cat.categories) == ["learnt", "random"]
    assert sorted(ex.projections) == [(5, 0), (9, 0)]
    assert set(ex.training["d"]) == {5, 9} and len(ex.training) == 2 * 3
    assert ex.config["n_out"] == 16 and ex.config["baselines"] == ["random"]


def test_presets_exist_and_unknown_preset_is_rejected():
    assert {"quick", "cpu"} <= set(PROJECTION_PRESETS)
    assert PROJECTION_PRESETS["quick"].rules == (TRAIN_RULE,)
    with pytest.raises(ValueError, match="expected one of .*'cpu'.*'quick'"):
        run_projection_preset("paper")


# ------------------------------------------------------------------------------------------
# bad input


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
    (dict(n_out=8, dtype=torch.float16), "dtype must be"),
])
def test_bad_training_arguments(digits, kwargs, message):
    kwargs = {"d": 3, "epochs": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        train_projection(digits[0][:20], device="cpu", **kwargs)


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


def test_bad_experiment_arguments(digits):
    train, test = digits
    with pytest.raises(ValueError, match="unknown protocol 'test'"):
        projection_experiment(train[:50], test[:10], "test", epochs=1, device="cpu")
    with pytest.raises(ValueError, match="unknown baseline"):
        projection_experiment(train[:50], test[:10], baselines=("pca",), epochs=1, device="cpu")
    with pytest.raises(ValueError, match="n_base = 32 pixels but 64"):
        projection_experiment(train[:50], test[:10, :32], epochs=1, device="cpu")
    with pytest.raises(ValueError, match="n_out must be >= 1"):
        projection_experiment(train[:50], test[:10], n_out=0, epochs=1, device="cpu")
    with pytest.raises(ValueError, match="num_train_queries must lie in"):
        projection_experiment(train[:50], test[:10], num_train_queries=51, epochs=1, device="cpu")


# ------------------------------------------------------------------------------------------
# devices


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


def test_docstrings_cite_public_sources_only():
    import inspect

    from assocmem.sdm import projections

    src = inspect.getsource(projections)
    assert "REFERENCE" not in src and "[REF]" not in src
    assert "TrentBrick/attention-approximates-sdm" in src and "[BP21-code]" in src
