"""Tests for assocmem.linear.capacity.read_error: Monte Carlo read error against the seed's closed forms."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.linear.capacity.read_error import (
    batched_read_errors,
    n_grid,
    read_error_curve,
    read_error_mc,
    sample_pairs,
)
from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory
from assocmem.linear.theory import additive_read_error, least_squares_read_error


CPU = "cpu"


def test_sample_pairs_model():
    keys, values = sample_pairs(50, 8, 4, trials=40, seed=1, device=CPU)
    assert keys.shape == (40, 50, 8) and values.shape == (40, 50, 4)
    assert keys.dtype == torch.float64
    torch.testing.assert_close(torch.linalg.vector_norm(keys, dim=-1), torch.ones(40, 50, dtype=torch.float64))
    assert abs(float((values**2).sum(-1).mean()) - 1.0) < 0.05  # E||v||^2 = 1
    again, _ = sample_pairs(50, 8, 4, trials=40, seed=1, device=CPU)
    assert torch.equal(keys, again)


@pytest.mark.parametrize(
    "memory, cls, kwargs",
    [
        ("additive", OuterProductMemory, {}),
        ("least_squares", LeastSquaresMemory, {}),
        ("delta", DeltaRuleMemory, {"beta": 0.7}),
    ],
)
def test_batched_kernels_match_memory_classes(memory, cls, kwargs):
    keys, values = sample_pairs(12, 6, 3, trials=3, seed=2, device=CPU)
    passes = 2 if memory == "delta" else 1
    got = batched_read_errors(memory, keys, values, passes=passes, beta=kwargs.get("beta", 1.0))
    for b in range(3):
        mem = cls(6, 3, device=CPU, **kwargs)
        if memory == "delta":
            mem.write(keys[b], values[b], passes=passes)
        else:
            mem.write(keys[b], values[b])
        want = ((mem.read(keys[b]) - values[b]) ** 2).sum(-1).mean()
        torch.testing.assert_close(got[b], want)


@pytest.mark.parametrize("n, d_k", [(9, 16), (24, 16), (40, 32)])
def test_additive_mc_matches_theory(n, d_k):
    est = read_error_mc("additive", n, d_k, d_v=8, trials=400, seed=3, device=CPU)
    assert abs(est.mean - additive_read_error(n, d_k)) < 4 * est.sem
    assert est.sem < 0.05 * additive_read_error(n, d_k)


@pytest.mark.parametrize("n, d_k", [(24, 16), (64, 32), (128, 32)])
def test_least_squares_mc_matches_theory(n, d_k):
    est = read_error_mc("least_squares", n, d_k, d_v=8, trials=400, seed=4, device=CPU)
    assert abs(est.mean - least_squares_read_error(n, d_k)) < 4 * est.sem


def test_exact_regimes():
    assert read_error_mc("additive", 1, 16, trials=10, device=CPU).mean < 1e-28
    assert read_error_mc("least_squares", 16, 16, trials=50, device=CPU).mean < 1e-20
    assert read_error_mc("delta", 1, 16, trials=10, device=CPU).mean < 1e-28
    # delta rule: many passes over independent keys reach the least-squares optimum (zero)
    assert read_error_mc("delta", 8, 16, trials=20, passes=100, device=CPU).mean < 1e-10
    # one pass with beta = 1 is no worse than additive on average
    delta = read_error_mc("delta", 12, 16, trials=200, seed=5, device=CPU)
    add = read_error_mc("additive", 12, 16, trials=200, seed=5, device=CPU)
    assert delta.mean < add.mean


def test_read_error_curve_is_tidy():
    df = read_error_curve(["additive", "least_squares"], [1, 8, 32], [8, 16], trials=20, seed=0, device=CPU)
    assert list(df.columns) == ["memory", "d_k", "n", "error", "sem", "trials"]
    assert len(df) == 2 * 2 * 3
    assert set(df.memory) == {"additive", "least_squares"} and set(df.d_k) == {8, 16}
    assert (df.trials == 20).all()
    assert list(df.memory[:6]) == ["additive"] * 6 and list(df.n[:3]) == [1, 8, 32]
    assert list(df.d_k[:6]) == [8, 8, 8, 16, 16, 16]
    # common random numbers: the same point is reproducible, and memories share pairs
    again = read_error_curve("additive", [8], 16, trials=20, seed=0, device=CPU)
    row = df[(df.memory == "additive") & (df.d_k == 16) & (df.n == 8)]
    assert float(row.error.iloc[0]) == float(again.error.iloc[0])
    ls = df[df.memory == "least_squares"]
    assert (ls[ls.n <= ls.d_k].error < 1e-20).all()


def test_single_trial_sem_is_nan():
    est = read_error_mc("additive", 4, 8, trials=1, device=CPU)
    assert math.isnan(est.sem) and est.mean >= 0


def test_bad_input():
    with pytest.raises(ValueError, match=r"unknown memory 'hebb'.*'additive', 'least_squares', 'delta'"):
        read_error_mc("hebb", 4, 8)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        read_error_mc("additive", 0, 8)
    with pytest.raises(ValueError, match="trials must be an integer >= 1"):
        read_error_mc("additive", 4, 8, trials=0)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
        read_error_mc("delta", 4, 8, beta=1.5, device=CPU)
    with pytest.raises(ValueError, match="passes must be an integer >= 1"):
        read_error_mc("delta", 4, 8, passes=0, device=CPU)
    with pytest.raises(ValueError, match=r"keys \(2, 3, 4\), values \(2, 5, 4\)"):
        batched_read_errors("additive", torch.ones(2, 3, 4), torch.ones(2, 5, 4))
    with pytest.raises(ValueError, match="unknown memory"):
        read_error_curve(["additive", "nope"], [1], 4)


def test_least_squares_kernel_rank_deficient_fallback():
    keys, values = sample_pairs(6, 4, 2, trials=2, seed=6, device=CPU)
    keys[1, 3] = keys[1, 0]  # trial 1 has a repeated key: rank 4 still, but now test n < d_k too
    small_k, small_v = keys[:, :3, :].clone(), values[:, :3, :].clone()
    small_k[0, 2] = small_k[0, 1]  # rank 2 < n = 3 < d_k: QR diagonal vanishes, pinv fallback
    for K, V in ((keys, values), (small_k, small_v)):
        got = batched_read_errors("least_squares", K, V)
        for b in range(2):
            mem = LeastSquaresMemory(4, 2, device=CPU).write(K[b], V[b])
            want = ((mem.read(K[b]) - V[b]) ** 2).sum(-1).mean()
            torch.testing.assert_close(got[b], want, atol=1e-12, rtol=1e-10)
    # duplicated key with different values: error is the spread around their mean
    assert float(batched_read_errors("least_squares", small_k, small_v)[0]) > 1e-3


def test_sign_values_and_shared_keys():
    keys_g, values_g = sample_pairs(20, 8, 5, trials=3, seed=7, device=CPU)
    keys_s, values_s = sample_pairs(20, 8, 5, trials=3, seed=7, device=CPU, value_dist="sign")
    assert torch.equal(keys_g, keys_s)  # keys do not depend on the value distribution
    torch.testing.assert_close((values_s**2).sum(-1), torch.ones(3, 20, dtype=torch.float64))
    assert set(torch.unique(values_s * math.sqrt(5)).tolist()) == {-1.0, 1.0}
    with pytest.raises(ValueError, match=r"unknown value_dist 'uniform'.*'gaussian', 'sign'"):
        sample_pairs(2, 2, 2, 1, value_dist="uniform")


@pytest.mark.parametrize("n, d_k", [(24, 16), (64, 16)])
def test_least_squares_theory_holds_for_sign_values(n, d_k):
    # the trace argument needs only uncorrelated, equal-variance value coordinates
    est = read_error_mc("least_squares", n, d_k, d_v=2, trials=400, seed=8, device=CPU, value_dist="sign")
    assert abs(est.mean - least_squares_read_error(n, d_k)) < 4 * est.sem


def test_many_passes_fast_path_matches_direct_sweeps():
    keys, values = sample_pairs(11, 4, 2, trials=3, seed=11, device=CPU)
    got = batched_read_errors("delta", keys, values, passes=7, beta=0.3)
    for b in range(3):
        mem = DeltaRuleMemory(4, 2, beta=0.3, device=CPU).write(keys[b], values[b], passes=7)
        want = ((mem.read(keys[b]) - values[b]) ** 2).sum(-1).mean()
        torch.testing.assert_close(got[b], want)


def test_beta_one_limit_cycle_misses_least_squares():
    keys, values = sample_pairs(32, 16, 16, trials=100, seed=16, device=CPU)
    e_delta = batched_read_errors("delta_limit", keys, values, beta=1.0).mean()
    e_ls = batched_read_errors("least_squares", keys, values).mean()
    assert float(e_ls) == pytest.approx(0.5, abs=0.03)
    assert float(e_delta) > 0.9  # about 1, worse than twice the least-squares error
    assert float(batched_read_errors("delta_limit", keys, values, beta=0.05).mean() - e_ls) < 1e-3


def test_delta_limit_memory_kind_in_curves():
    df = read_error_curve(["least_squares", "delta_limit"], [4, 12], 8, trials=10, beta=0.5, device=CPU)
    small = df[df.n == 4].set_index("memory").error
    assert small["delta_limit"] < 1e-20 and small["least_squares"] < 1e-20


def test_n_grid():
    assert n_grid(16, [0.5, 1, 2, 1.0]) == [1, 8, 16, 17, 32]
    with pytest.raises(ValueError, match="ratios must be positive"):
        n_grid(16, [0, 1])
