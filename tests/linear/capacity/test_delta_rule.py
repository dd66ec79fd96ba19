"""Tests for assocmem.linear.capacity.delta_rule: the least-squares state, the delta rule's pass map and limit."""

from __future__ import annotations

import pytest
import torch

from assocmem.linear.capacity.delta_rule import delta_limit, delta_pass_map, least_squares_state
from assocmem.linear.capacity.read_error import sample_pairs
from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory


CPU = "cpu"


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


def test_orthonormal_keys_delta_equals_additive():
    Q, _ = torch.linalg.qr(torch.randn(1, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    keys = Q.transpose(-2, -1)[:, :5, :]  # 5 orthonormal rows
    values = torch.randn(1, 5, 3, dtype=torch.float64)
    M, C = delta_pass_map(keys, values, 1.0)
    torch.testing.assert_close(C[0], values[0].T @ keys[0], atol=1e-12, rtol=0)
    torch.testing.assert_close(C, least_squares_state(keys, values), atol=1e-12, rtol=0)
