"""Tests for assocmem.linear.capacity: Monte Carlo read error against the seed's closed forms."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.linear.capacity import (
    batched_read_errors,
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


# --------------------------------------------------------------------------- chapter 03 additions
from assocmem.linear.capacity import (  # noqa: E402
    PRESETS,
    delta_convergence,
    delta_limit,
    delta_limit_curve,
    delta_pass_map,
    get_preset,
    least_squares_state,
    max_pairs_at_error_mc,
    n_grid,
)
from assocmem.linear.theory import max_pairs_at_error  # noqa: E402


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


def test_least_squares_state_matches_memory_class():
    keys, values = sample_pairs(10, 6, 3, trials=2, seed=9, device=CPU)
    S = least_squares_state(keys, values)
    assert S.shape == (2, 3, 6)
    for b in range(2):
        want = LeastSquaresMemory(6, 3, device=CPU).write(keys[b], values[b]).S
        torch.testing.assert_close(S[b], want)


@pytest.mark.parametrize("beta", [1.0, 0.3])
def test_delta_pass_map_is_one_sweep_from_any_state(beta):
    keys, values = sample_pairs(9, 5, 3, trials=2, seed=10, device=CPU)
    M, C = delta_pass_map(keys, values, beta)
    assert M.shape == (2, 5, 5) and C.shape == (2, 3, 5)
    S0 = torch.randn(2, 3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for b in range(2):
        mem = DeltaRuleMemory(5, 3, beta=beta, device=CPU)
        mem.S = S0[b].clone()
        mem.write(keys[b], values[b])
        torch.testing.assert_close(S0[b] @ M[b] + C[b], mem.S)
    # M is the product of the relaxed projections, in order
    P = torch.eye(5, dtype=torch.float64)
    for k in keys[0]:
        P = P @ (torch.eye(5, dtype=torch.float64) - beta * torch.outer(k, k))
    torch.testing.assert_close(M[0], P)


def test_many_passes_fast_path_matches_direct_sweeps():
    keys, values = sample_pairs(11, 4, 2, trials=3, seed=11, device=CPU)
    got = batched_read_errors("delta", keys, values, passes=7, beta=0.3)
    for b in range(3):
        mem = DeltaRuleMemory(4, 2, beta=0.3, device=CPU).write(keys[b], values[b], passes=7)
        want = ((mem.read(keys[b]) - values[b]) ** 2).sum(-1).mean()
        torch.testing.assert_close(got[b], want)


@pytest.mark.parametrize("beta", [1.0, 0.1])
def test_delta_limit_is_least_squares_for_independent_keys(beta):
    keys, values = sample_pairs(6, 10, 3, trials=4, seed=12, device=CPU)
    S_inf = delta_limit(keys, values, beta)
    torch.testing.assert_close(S_inf, least_squares_state(keys, values), atol=1e-10, rtol=0)


def test_delta_limit_is_the_fixed_point_of_the_sweep_and_the_limit_of_passes():
    keys, values = sample_pairs(20, 6, 3, trials=3, seed=13, device=CPU)
    beta = 0.5
    M, C = delta_pass_map(keys, values, beta)
    S_inf = delta_limit(keys, values, beta)
    torch.testing.assert_close(S_inf @ M + C, S_inf, atol=1e-12, rtol=0)
    S = torch.zeros_like(C)
    for _ in range(2000):
        S = S @ M + C
    torch.testing.assert_close(S, S_inf, atol=1e-10, rtol=0)
    # n > d_k: the limit is not the least-squares memory, and it reads worse
    S_star = least_squares_state(keys, values)
    assert float(torch.linalg.matrix_norm(S_inf - S_star).min()) > 1e-3


def test_delta_limit_with_dependent_keys_in_a_subspace():
    keys, values = sample_pairs(3, 6, 2, trials=1, seed=14, device=CPU)
    keys = torch.cat([keys, keys[:, :1]], dim=1)  # a repeated key (n = 4 < d_k, rank 3)
    values = torch.cat([values, -values[:, :1]], dim=1)  # with a different value: inconsistent
    M, C = delta_pass_map(keys, values, 0.5)
    S_inf = delta_limit(keys, values, 0.5)
    assert torch.isfinite(S_inf).all()
    torch.testing.assert_close(S_inf @ M + C, S_inf, atol=1e-12, rtol=0)


def test_delta_limit_distance_is_order_beta_and_excess_order_beta_squared():
    df = delta_limit_curve([0.02, 0.01], 24, 8, trials=50, seed=15, device=CPU)
    ratio_d = df.distance.iloc[0] / df.distance.iloc[1]
    ratio_e = df.excess.iloc[0] / df.excess.iloc[1]
    assert 1.8 < ratio_d < 2.2 and 3.6 < ratio_e < 4.4
    assert (df.excess > 0).all()


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


def test_orthonormal_keys_delta_equals_additive():
    Q, _ = torch.linalg.qr(torch.randn(1, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    keys = Q.transpose(-2, -1)[:, :5, :]  # 5 orthonormal rows
    values = torch.randn(1, 5, 3, dtype=torch.float64)
    M, C = delta_pass_map(keys, values, 1.0)
    torch.testing.assert_close(C[0], values[0].T @ keys[0], atol=1e-12, rtol=0)
    torch.testing.assert_close(C, least_squares_state(keys, values), atol=1e-12, rtol=0)


@pytest.mark.parametrize("d_k", [16, 32])
def test_max_pairs_at_error_mc_matches_exact_rule(d_k):
    res = max_pairs_at_error_mc(0.1, d_k, trials=3000, seed=17, device=CPU)
    assert res.decisive and res.n_max == max_pairs_at_error(0.1, d_k)
    assert list(res.scan.columns) == ["n", "error", "sem", "lower", "upper"]
    assert list(res.scan.n) == list(range(1, res.n_max + 2))


def test_max_pairs_at_error_mc_refuses_an_undecidable_boundary():
    # eps = 2/16: the error at n = 3 is exactly eps, so no number of trials can decide it
    res = max_pairs_at_error_mc(2 / 16, 16, trials=500, seed=18, device=CPU)
    assert res.n_max == 3 and not res.decisive
    with pytest.raises(ValueError, match="eps must be a positive"):
        max_pairs_at_error_mc(0.0, 16)
    with pytest.raises(ValueError, match="z must be"):
        max_pairs_at_error_mc(0.1, 16, z=-1)


def test_delta_convergence_tables():
    res = delta_convergence(12, 6, betas=(1.0, 0.2, "1/p"), passes=30, trials=20, seed=19, device=CPU)
    c = res.curve
    assert list(c.columns) == ["schedule", "passes", "error", "sem", "distance", "distance_sem"]
    assert len(c) == 3 * 30 and set(c.schedule) == {"1", "0.2", "1/p"}
    assert list(res.limit.schedule) == ["1", "0.2"]  # limits only for constant steps
    small = c[c.schedule == "0.2"]
    assert small.distance.iloc[-1] < small.distance.iloc[0]
    lim = res.limit.set_index("schedule")
    assert abs(small.distance.iloc[-1] - lim.distance["0.2"]) < 0.05
    # the first sweep with beta = 1 is the same under both schedules that start at 1
    first = c[c.passes == 1].set_index("schedule").error
    assert first["1"] == pytest.approx(first["1/p"], rel=1e-12)
    assert res.least_squares.mean == pytest.approx(1 - 6 / 12, abs=0.1)
    # n <= d_k: every schedule heads for exact recall; beta = 1 gets there
    exact = delta_convergence(4, 8, betas=(1.0,), passes=300, trials=5, seed=20, device=CPU)
    assert exact.curve.error.iloc[-1] < 1e-10 and exact.limit.distance.iloc[0] < 1e-10


def test_delta_bad_schedules():
    with pytest.raises(ValueError, match="unknown beta schedule 'cosine'"):
        delta_convergence(4, 4, betas=("cosine",), passes=1, trials=2, device=CPU)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
        delta_limit_curve([0.0], 4, 4, trials=2, device=CPU)
    keys, values = sample_pairs(3, 4, 2, trials=1, device=CPU)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
        delta_pass_map(keys, values, 2.0)
    with pytest.raises(ValueError, match=r"keys \(1, 3, 4\), values \(1, 2, 2\)"):
        delta_limit(keys, values[:, :2], 1.0)


def test_n_grid():
    assert n_grid(16, [0.5, 1, 2, 1.0]) == [1, 8, 16, 17, 32]
    with pytest.raises(ValueError, match="ratios must be positive"):
        n_grid(16, [0, 1])


def test_presets():
    assert set(PRESETS) == {"quick", "full"}
    q = get_preset("quick")
    assert q.d_ks == (16, 32, 64) and q.trials == 200
    with pytest.raises(ValueError, match=r"unknown preset 'paper'; valid presets: \['full', 'quick'\]"):
        get_preset("paper")
