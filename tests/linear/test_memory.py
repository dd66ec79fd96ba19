"""Tests for assocmem.linear.memory: the identities of seed §4-§6 and the delta rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.linear.memory import (
    DeltaRuleMemory,
    LeastSquaresMemory,
    MemoryOverflowError,
    OuterProductMemory,
    gram_matrix,
)

DT = torch.float64
ALL = (OuterProductMemory, LeastSquaresMemory, DeltaRuleMemory)


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def random_pairs(n, d_k, d_v, seed=0, unit=True):
    g = torch.Generator().manual_seed(seed)
    keys = torch.randn(n, d_k, generator=g, dtype=DT)
    if unit:
        keys = unit_rows(keys)
    values = torch.randn(n, d_v, generator=g, dtype=DT)
    return keys, values


def two_keys(theta: float) -> torch.Tensor:
    return torch.tensor([[1.0, 0.0], [math.cos(theta), math.sin(theta)]], dtype=DT)  # (2, 2)


def orthonormal_keys(n, d_k, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d_k, d_k, generator=g, dtype=DT))
    return q[:, :n].T.contiguous()  # (n, d_k) orthonormal rows


# --------------------------------------------------------------------------- basics


@pytest.mark.parametrize("cls", ALL)
def test_conventions(cls):
    mem = cls(5, 3, device="cpu")
    assert mem.S.shape == (3, 5)  # (d_v, d_k), as in the seed
    assert mem.d_k == 5 and mem.d_v == 3
    assert mem.num_parameters == 15
    assert mem.S.dtype == torch.float64
    assert "S" in dict(mem.named_buffers())
    assert mem.read(torch.ones(4, 7, 5)).shape == (4, 7, 3)
    assert mem(torch.ones(5, dtype=torch.float64)).shape == (3,)


def test_gram_matrix():
    keys, _ = random_pairs(4, 6, 2)
    G = gram_matrix(keys)
    assert G.shape == (4, 4)
    torch.testing.assert_close(G, keys @ keys.T)
    torch.testing.assert_close(torch.diagonal(G), torch.ones(4, dtype=DT))
    batched = torch.stack([keys, 2 * keys])
    assert gram_matrix(batched).shape == (2, 4, 4)
    with pytest.raises(ValueError, match=r"at least 2-D .* got shape \(6,\)"):
        gram_matrix(keys[0])


# --------------------------------------------------------------------------- seed §4-§5


def test_one_pair_returns_squared_norm_times_value():
    k = torch.tensor([[3.0, 4.0]], dtype=DT)  # ||k||^2 = 25
    v = torch.tensor([[1.0, -2.0, 0.5]], dtype=DT)
    mem = OuterProductMemory(2, 3, device="cpu").write(k, v)
    torch.testing.assert_close(mem.read(k[0]), 25.0 * v[0])
    torch.testing.assert_close(mem.S, v.T @ k)  # the outer product v k^T
    assert torch.linalg.matrix_rank(mem.S) == 1
    # a query perpendicular to k reads nothing (null space)
    torch.testing.assert_close(mem.read(torch.tensor([4.0, -3.0], dtype=DT)), torch.zeros(3, dtype=DT))


@pytest.mark.parametrize("theta", [0.3, 1.0, math.pi / 2, 2.5])
def test_two_pairs_interference(theta):
    keys = two_keys(theta)
    values = torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]], dtype=DT)
    mem = OuterProductMemory(2, 3, device="cpu").write(keys, values)
    torch.testing.assert_close(mem.read(keys[0]), values[0] + math.cos(theta) * values[1])
    torch.testing.assert_close(mem.read(keys[1]), values[1] + math.cos(theta) * values[0])


def test_writes_accumulate_and_reads_are_VG():
    keys, values = random_pairs(6, 8, 3, seed=1)
    one = OuterProductMemory(8, 3, device="cpu").write(keys, values)
    two = OuterProductMemory(8, 3, device="cpu").write(keys[:2], values[:2]).write(keys[2:], values[2:])
    torch.testing.assert_close(one.S, two.S)
    assert two.num_pairs == 6
    # all reads at once: rows of G V (the seed's V G in columns)
    torch.testing.assert_close(one.read(keys), gram_matrix(keys) @ values)
    one.reset()
    assert torch.count_nonzero(one.S) == 0 and one.num_pairs == 0


def test_exact_recall_iff_orthonormal():
    d_k, d_v = 6, 4
    _, values = random_pairs(d_k, d_k, d_v, seed=2)
    Q = orthonormal_keys(d_k, d_k, seed=3)
    torch.testing.assert_close(gram_matrix(Q), torch.eye(d_k, dtype=DT))
    mem = OuterProductMemory(d_k, d_v, device="cpu").write(Q, values)
    torch.testing.assert_close(mem.read(Q), values)
    # unit but overlapping keys: G != I and some read is wrong
    keys, _ = random_pairs(d_k, d_k, d_v, seed=4)
    mem = OuterProductMemory(d_k, d_v, device="cpu").write(keys, values)
    assert not torch.allclose(gram_matrix(keys), torch.eye(d_k, dtype=DT))
    assert (mem.read(keys) - values).abs().max() > 1e-3


# --------------------------------------------------------------------------- seed §6


def test_least_squares_exact_for_independent_overlapping_keys():
    d_k, d_v, n = 5, 3, 4
    keys, values = random_pairs(n, d_k, d_v, seed=5)
    keys[1] = unit_rows(keys[0] + 0.2 * keys[1])  # strongly overlapping with key 0
    mem = LeastSquaresMemory(d_k, d_v, device="cpu").write(keys, values)
    torch.testing.assert_close(mem.read(keys), values, rtol=1e-10, atol=1e-10)
    # S* = V G^{-1} K^T in the seed's column notation; with rows: values.T G^{-1} keys
    G = gram_matrix(keys)
    torch.testing.assert_close(mem.S, values.T @ torch.linalg.solve(G, keys), rtol=1e-10, atol=1e-10)


def test_least_squares_refits_over_all_pairs():
    keys, values = random_pairs(6, 4, 2, seed=6)
    once = LeastSquaresMemory(4, 2, device="cpu").write(keys, values)
    twice = LeastSquaresMemory(4, 2, device="cpu").write(keys[:3], values[:3]).write(keys[3:], values[3:])
    torch.testing.assert_close(once.S, twice.S)
    assert twice.num_pairs == 6 and twice.stored_keys.shape == (6, 4)
    twice.reset()
    assert twice.num_pairs == 0 and twice.stored_keys.shape == (0, 4)
    assert torch.count_nonzero(twice.S) == 0


@pytest.mark.parametrize("theta", [0.1, 0.7, math.pi / 2, 2.9])
def test_dual_basis_two_keys(theta):
    keys = two_keys(theta)
    values = torch.tensor([[1.0], [-1.0]], dtype=DT)
    mem = LeastSquaresMemory(2, 1, device="cpu").write(keys, values)
    dual = mem.dual_basis()  # (2, 2)
    torch.testing.assert_close(dual @ keys.T, torch.eye(2, dtype=DT))  # k~_i^T k_j = delta_ij
    norms = torch.linalg.vector_norm(dual, dim=1)
    torch.testing.assert_close(norms, torch.full((2,), 1 / math.sin(theta), dtype=DT))
    torch.testing.assert_close(mem.S, values.T @ dual)  # S* = sum_i v_i k~_i^T


def test_dual_basis_general_and_dependent_keys():
    keys, values = random_pairs(4, 7, 2, seed=7)
    mem = LeastSquaresMemory(7, 2, device="cpu").write(keys, values)
    dual = mem.dual_basis()
    assert dual.shape == (4, 7)
    torch.testing.assert_close(dual @ keys.T, torch.eye(4, dtype=DT))
    torch.testing.assert_close(dual, torch.linalg.solve(gram_matrix(keys), keys))  # (K G^{-1})^T
    mem.write(keys[:1] + keys[1:2], values[:1])  # a dependent fifth key
    with pytest.raises(ValueError, match=r"rank 4 < n = 5"):
        mem.dual_basis()
    too_many, vals = random_pairs(5, 3, 2, seed=8)
    with pytest.raises(ValueError, match=r"rank 3 < n = 5"):
        LeastSquaresMemory(3, 2, device="cpu").write(too_many, vals).dual_basis()


def test_pseudoinverse_case_matches_numpy_lstsq():
    n, d_k, d_v = 12, 4, 3
    keys, values = random_pairs(n, d_k, d_v, seed=9)
    mem = LeastSquaresMemory(d_k, d_v, device="cpu").write(keys, values)
    # min ||keys X - values||, X = S^T
    X, *_ = np.linalg.lstsq(keys.numpy(), values.numpy(), rcond=None)
    np.testing.assert_allclose(mem.S.numpy(), X.T, rtol=1e-10, atol=1e-12)
    # it is the minimiser: the residual is orthogonal to the keys (normal equations)
    residual = mem.read(keys) - values  # (n, d_v)
    torch.testing.assert_close(keys.T @ residual, torch.zeros(d_k, d_v, dtype=DT), atol=1e-12, rtol=0)


def test_least_squares_rank_deficient_is_minimum_norm():
    # two copies of the same key with different values: best compromise is their mean
    k = torch.tensor([[1.0, 0.0, 0.0]], dtype=DT)
    keys = torch.cat([k, k])
    values = torch.tensor([[1.0], [3.0]], dtype=DT)
    mem = LeastSquaresMemory(3, 1, device="cpu").write(keys, values)
    torch.testing.assert_close(mem.S, torch.tensor([[2.0, 0.0, 0.0]], dtype=DT))
    assert mem.key_rank() == 1


# --------------------------------------------------------------------------- delta rule


def test_delta_orthonormal_equals_additive_and_least_squares():
    d_k, d_v, n = 6, 3, 4
    Q = orthonormal_keys(n, d_k, seed=10)
    _, values = random_pairs(n, d_k, d_v, seed=11)
    S_add = OuterProductMemory(d_k, d_v, device="cpu").write(Q, values).S
    S_ls = LeastSquaresMemory(d_k, d_v, device="cpu").write(Q, values).S
    S_delta = DeltaRuleMemory(d_k, d_v, beta=1.0, device="cpu").write(Q, values).S
    torch.testing.assert_close(S_delta, S_add)
    torch.testing.assert_close(S_delta, S_ls)


def test_delta_single_step_is_the_update_rule():
    keys, values = random_pairs(3, 4, 2, seed=12)
    mem = DeltaRuleMemory(4, 2, beta=0.5, device="cpu")
    S = torch.zeros(2, 4, dtype=DT)
    for k, v in zip(keys, values):
        S = S + 0.5 * torch.outer(v - S @ k, k)
    torch.testing.assert_close(mem.write(keys, values).S, S)
    # with beta = 1 and unit keys the last written pair is recalled exactly
    mem1 = DeltaRuleMemory(4, 2, device="cpu").write(keys, values)
    torch.testing.assert_close(mem1.read(keys[-1]), values[-1])


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_delta_passes_converge_to_least_squares(beta):
    d_k, d_v, n = 8, 3, 6  # independent, overlapping unit keys
    keys, values = random_pairs(n, d_k, d_v, seed=13)
    S_star = LeastSquaresMemory(d_k, d_v, device="cpu").write(keys, values).S
    errors = []
    for passes in (1, 10, 200):
        S = DeltaRuleMemory(d_k, d_v, beta=beta, device="cpu").write(keys, values, passes=passes).S
        errors.append(float(torch.linalg.matrix_norm(S - S_star)))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-8
    # passes over one batch == the same batch written repeatedly
    a = DeltaRuleMemory(d_k, d_v, beta=beta, device="cpu").write(keys, values, passes=3)
    b = DeltaRuleMemory(d_k, d_v, beta=beta, device="cpu")
    for _ in range(3):
        b.write(keys, values)
    torch.testing.assert_close(a.S, b.S)
    assert a.num_pairs == n


def test_delta_bad_arguments():
    for beta in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"beta must be in \(0, 1\]"):
            DeltaRuleMemory(3, 2, beta=beta)
    keys, values = random_pairs(2, 3, 2)
    with pytest.raises(ValueError, match="passes must be a positive integer"):
        DeltaRuleMemory(3, 2, device="cpu").write(keys, values, passes=0)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("cls", ALL)
def test_bad_input_raises(cls):
    mem = cls(4, 3, device="cpu")
    keys, values = random_pairs(5, 4, 3)
    cases = [
        ((keys[0], values), r"keys must be 2-D .* got shape \(4,\)"),
        ((keys, values[0]), r"values must be 2-D .* got shape \(3,\)"),
        ((keys, values[:4]), r"same number of rows.*\(5, 4\).*\(4, 3\)"),
        ((keys[:, :3], values), r"d_k=4; got keys shape \(5, 3\)"),
        ((keys, values[:, :2]), r"d_v=3; got values shape \(5, 2\)"),
    ]
    for args, msg in cases:
        with pytest.raises(ValueError, match=msg):
            mem.write(*args)
    bad = keys.clone()
    bad[2, 1] = float("nan")
    with pytest.raises(ValueError, match="keys contain non-finite"):
        mem.write(bad, values)
    badv = values.clone()
    badv[0, 0] = float("inf")
    with pytest.raises(ValueError, match="values contain non-finite"):
        mem.write(keys, badv)
    with pytest.raises(ValueError, match=r"d_k=4; got shape \(2, 5\)"):
        mem.read(torch.ones(2, 5))
    with pytest.raises(ValueError, match="queries contain non-finite"):
        mem.read(torch.tensor([0.0, 1.0, float("nan"), 0.0]))
    assert mem.num_pairs == 0 and torch.count_nonzero(mem.S) == 0  # nothing half-written


@pytest.mark.parametrize("cls", ALL)
def test_require_unit_keys(cls):
    mem = cls(4, 3, device="cpu")
    keys, values = random_pairs(5, 4, 3)
    mem.write(keys * (1 + 5e-7), values, require_unit_keys=True)  # within 1e-6: accepted
    with pytest.raises(ValueError, match=r"key 3 has norm 1\.01"):
        scaled = keys.clone()
        scaled[3] *= 1.01
        mem.write(scaled, values, require_unit_keys=True)
    mem.write(1.2 * keys, values)  # the default does not check (1.2^2 < 2 keeps the delta rule stable)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_bad_dimensions(bad):
    with pytest.raises(ValueError, match="d_k must be a positive integer"):
        OuterProductMemory(bad, 2)
    with pytest.raises(ValueError, match="d_v must be a positive integer"):
        OuterProductMemory(2, bad)


def test_dtype_and_numpy_input():
    mem = OuterProductMemory(3, 2, dtype=torch.float32, device="cpu")
    mem.write(np.eye(3)[:2], np.ones((2, 2)))  # numpy float64 in, converted to float32
    assert mem.S.dtype == torch.float32
    np.testing.assert_allclose(mem.read(np.eye(3)).numpy(), [[1, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="negative|non-negative"):
        LeastSquaresMemory(3, 2, rtol=-1.0, device="cpu")


# --------------------------------------------------------------------------- stability and dtypes


def test_delta_refuses_unstable_steps_and_writes_nothing():
    keys, values = random_pairs(6, 5, 2, seed=20)
    mem = DeltaRuleMemory(5, 2, beta=1.0, device="cpu")
    with pytest.raises(ValueError, match=r"key 0 has norm 3.*beta \|\|k\|\|\^2 = 9 .*below 2.*allow_unstable"):
        mem.write(3 * keys, values)
    assert mem.num_pairs == 0 and torch.count_nonzero(mem.S) == 0
    # the first offending key is named; the others may be fine
    mixed = keys.clone()
    mixed[4] *= math.sqrt(2.0)  # beta ||k||^2 = 2: the boundary is refused too
    with pytest.raises(ValueError, match=r"key 4 has norm 1\.41421.*= 2 is not below 2.*1 of 6 keys"):
        mem.write(mixed, values)
    # the condition is on beta ||k||^2, not on ||k||: norm 1.9 with beta = 0.5 is a step of 1.805
    few, vals = keys[:4], values[:4]  # independent keys: passes converge to exact recall
    half = DeltaRuleMemory(5, 2, beta=0.5, device="cpu").write(1.9 * few, vals, passes=200)
    assert torch.isfinite(half.S).all()
    torch.testing.assert_close(half.read(1.9 * few), vals, atol=1e-8, rtol=0)


def test_delta_unstable_steps_on_request_and_overflow_is_caught():
    keys, values = random_pairs(20, 8, 4, seed=21)
    mem = DeltaRuleMemory(8, 4, device="cpu").write(3 * keys, values, allow_unstable=True)
    assert torch.isfinite(mem.S).all() and mem.S.abs().max() > 1e3  # diverging, still finite
    before = mem.S.clone()
    with pytest.raises(FloatingPointError, match="non-finite"):
        mem.write(30 * keys, values, passes=20, allow_unstable=True)
    assert torch.equal(mem.S, before) and mem.num_pairs == 20  # the failed write left no trace


def test_dtype_may_be_named():
    for name, want in (("float64", torch.float64), ("torch.float32", torch.float32), ("double", torch.float64)):
        for cls in ALL:
            assert cls(3, 2, dtype=name, device="cpu").S.dtype == want
    with pytest.raises(ValueError, match="floating-point"):
        OuterProductMemory(3, 2, dtype="int64", device="cpu")
    with pytest.raises(ValueError, match="floating-point"):
        OuterProductMemory(3, 2, dtype=torch.complex128, device="cpu")
    with pytest.raises(ValueError, match="does not name a torch dtype"):
        LeastSquaresMemory(3, 2, dtype="float65", device="cpu")
    for bad in (64, np.float64):
        with pytest.raises(TypeError, match="torch.dtype or the name of one"):
            DeltaRuleMemory(3, 2, dtype=bad, device="cpu")
    assert DeltaRuleMemory(3, 2, device="cpu").S.dtype == torch.get_default_dtype()  # None: torch's


def test_least_squares_tolerances_must_be_numbers():
    for bad in ("x", "1e-3", True, [1e-3]):
        with pytest.raises(TypeError, match="rtol must be a finite non-negative number"):
            LeastSquaresMemory(3, 2, rtol=bad, device="cpu")
        with pytest.raises(TypeError, match="atol must be a finite non-negative number"):
            LeastSquaresMemory(3, 2, atol=bad, device="cpu")
    for bad in (-1e-3, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="rtol must be a finite non-negative number"):
            LeastSquaresMemory(3, 2, rtol=bad, device="cpu")
    keys, values = random_pairs(3, 4, 2, seed=22)
    a = LeastSquaresMemory(4, 2, rtol=np.float64(1e-10), device="cpu").write(keys, values)
    b = LeastSquaresMemory(4, 2, rtol=1e-10, device="cpu").write(keys, values)
    assert torch.equal(a.S, b.S)


# --------------------------------------------------------------------------- atomic writes, dtype policy


def _state(mem):
    """Every piece of a memory's state: its buffers and its counter."""
    return {name: buf.clone() for name, buf in mem.named_buffers()}, mem.num_pairs


def _assert_state(mem, before):
    buffers, num_pairs = before
    now = dict(mem.named_buffers())
    assert now.keys() == buffers.keys()
    for name, buf in buffers.items():
        assert now[name].dtype == buf.dtype and torch.equal(now[name], buf), name
    assert mem.num_pairs == num_pairs


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, "float16", "bfloat16", "half"])
def test_low_precision_memories_are_refused_at_construction(cls, dtype):
    # Before: a float16 memory accepted writes; LeastSquaresMemory failed half-way through one
    # (torch.linalg.pinv has no float16) and kept the new pairs, so reads silently returned zeros.
    with pytest.raises(ValueError, match=r"dtype torch\.(float16|bfloat16) is not supported.*float32.*float64"):
        cls(3, 2, dtype=dtype, device="cpu")


def test_outer_product_overflow_raises_and_leaves_the_state():
    # Before: S + V K^T overflowed float32 to inf with no error.
    mem = OuterProductMemory(2, 2, dtype=torch.float32, device="cpu").write(torch.eye(2), torch.eye(2))
    before = _state(mem)
    with pytest.raises(MemoryOverflowError, match=r"overflowed .*torch\.float32.*state is unchanged"):
        mem.write(torch.tensor([[1e30, 0.0]]), torch.tensor([[1e30, 0.0]]))
    _assert_state(mem, before)
    assert issubclass(MemoryOverflowError, ValueError) and issubclass(MemoryOverflowError, FloatingPointError)


def test_a_cast_that_overflows_is_reported_as_overflow_not_as_non_finite():
    mem = OuterProductMemory(2, 2, dtype=torch.float32, device="cpu")
    big = torch.tensor([[1e300, 0.0]], dtype=torch.float64)  # finite, beyond float32
    with pytest.raises(ValueError, match=r"keys overflows torch\.float32"):
        mem.write(big, torch.ones(1, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"values overflows torch\.float32"):
        mem.write(torch.ones(1, 2, dtype=torch.float64), big)
    with pytest.raises(ValueError, match=r"queries overflows torch\.float32"):
        mem.read(big[0])
    assert mem.num_pairs == 0 and torch.count_nonzero(mem.S) == 0


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_a_read_that_overflows_float32_is_recomputed_or_refused():
    mem = OuterProductMemory(2, 1, dtype=torch.float32, device="cpu").write(torch.tensor([[1e19, 1e19]]),
                                                                           torch.tensor([[1e19]]))
    # q = (1e19, -1e19): the float32 products are inf, the true read is 0
    torch.testing.assert_close(mem.read(torch.tensor([1e19, -1e19])), torch.zeros(1))
    with pytest.raises(ValueError, match=r"the read S q overflows torch\.float32"):
        mem.read(torch.tensor([1e19, 1e19]))  # the true read, 2e57, is beyond float32


def test_least_squares_write_is_atomic_when_the_pseudoinverse_fails(monkeypatch):
    keys, values = random_pairs(3, 4, 2, seed=30)
    mem = LeastSquaresMemory(4, 2, device="cpu").write(keys[:2], values[:2])
    before = _state(mem)

    def broken(*args, **kwargs):
        raise RuntimeError("injected failure in torch.linalg.pinv")

    monkeypatch.setattr(torch.linalg, "pinv", broken)
    with pytest.raises(RuntimeError, match="injected"):
        mem.write(keys[2:], values[2:])
    _assert_state(mem, before)  # no half-written stored_keys, S or num_pairs
    monkeypatch.undo()
    torch.testing.assert_close(mem.read(keys[:2]), values[:2], rtol=1e-10, atol=1e-10)


def test_least_squares_write_is_atomic_on_overflow():
    mem = LeastSquaresMemory(2, 1, rtol=0.0, dtype=torch.float32, device="cpu").write(torch.eye(2)[:1], torch.ones(1, 1))
    before = _state(mem)
    with pytest.raises(MemoryOverflowError, match="least-squares state"):
        mem.write(torch.tensor([[0.0, 1e-20]]), torch.tensor([[1e30]]))  # S = 1e50 on the second key
    _assert_state(mem, before)


def test_outer_product_write_is_atomic_on_bad_input():
    keys, values = random_pairs(3, 4, 2, seed=31)
    mem = OuterProductMemory(4, 2, device="cpu").write(keys, values)
    before = _state(mem)
    bad = values.clone()
    bad[2, 1] = float("nan")
    for args, kwargs in (((keys, bad), {}), ((keys, values), {"require_unit_keys": "yes"}),
                         ((keys * 2, values), {"require_unit_keys": True}), ((keys, values[:2]), {})):
        with pytest.raises(ValueError):
            mem.write(*args, **kwargs)
        _assert_state(mem, before)


def test_delta_write_is_atomic_when_a_step_fails(monkeypatch):
    keys, values = random_pairs(4, 5, 2, seed=32)
    mem = DeltaRuleMemory(5, 2, beta=0.5, device="cpu").write(keys[:2], values[:2])
    before = _state(mem)
    calls = {"n": 0}
    outer = torch.outer

    def fails_on_the_third_step(a, b):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("injected failure in the third delta step")
        return outer(a, b)

    monkeypatch.setattr(torch, "outer", fails_on_the_third_step)
    with pytest.raises(RuntimeError, match="injected"):
        mem.write(keys, values)
    _assert_state(mem, before)


def test_beta_must_be_a_real_number_not_a_boolean_or_string():
    for bad in (True, False, "0.5", b"1", None, [0.5]):
        with pytest.raises(ValueError, match="beta must be"):
            DeltaRuleMemory(3, 2, beta=bad, device="cpu")
    assert DeltaRuleMemory(3, 2, beta=np.float32(0.5), device="cpu").beta == 0.5
    assert DeltaRuleMemory(3, 2, beta=torch.tensor(0.25), device="cpu").beta == 0.25


def test_huge_finite_keys_are_named_with_their_norm():
    mem = DeltaRuleMemory(2, 1, device="cpu")
    with pytest.raises(ValueError, match=r"key 0 has norm 1e\+200"):
        mem.write(torch.tensor([[1e200, 0.0]], dtype=DT), torch.ones(1, 1, dtype=DT))
    with pytest.raises(ValueError, match=r"key 0 has norm 1e\+200"):
        OuterProductMemory(2, 1, device="cpu").write(torch.tensor([[1e200, 0.0]], dtype=DT), torch.ones(1, 1),
                                                    require_unit_keys=True)


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_gram_matrix_dtype_policy_and_overflow():
    with pytest.raises(ValueError, match=r"keys dtype torch\.float16 is not supported"):
        gram_matrix(torch.ones(2, 3, dtype=torch.float16))
    with pytest.raises(ValueError, match="keys contain non-finite"):
        gram_matrix(torch.tensor([[float("inf"), 0.0]]))
    with pytest.raises(ValueError, match=r"Gram matrix .* overflows torch\.float32"):
        gram_matrix(torch.full((2, 3), 1e20))
    assert gram_matrix(torch.ones(2, 3, dtype=torch.int64)).tolist() == [[3, 3], [3, 3]]  # integers stay exact


def _written_pair(cls=OuterProductMemory):
    g = torch.Generator().manual_seed(0)
    keys = torch.nn.functional.normalize(torch.randn(5, 4, dtype=torch.float64, generator=g), dim=-1)
    return cls(4, 3, device="cpu").write(keys, torch.randn(5, 3, dtype=torch.float64, generator=g)), keys


@pytest.mark.parametrize("cls", [OuterProductMemory, LeastSquaresMemory, DeltaRuleMemory])
def test_a_non_finite_state_is_named_on_load_and_on_read(cls):
    mem, keys = _written_pair(cls)
    state = mem.state_dict()
    state["S"][0, 0] = math.nan
    with pytest.raises(ValueError, match="loaded into this .*Memory.*stored state S has non-finite entries"):
        cls(4, 3, device="cpu").load_state_dict(state)
    # a state edited by hand: the read names the state, not an overflow of finite inputs
    mem.S[0, 0] = math.nan
    with pytest.raises(ValueError, match="stored state S has non-finite entries") as info:
        mem.read(keys)
    assert "overflow" not in str(info.value)


def test_a_least_squares_state_with_inconsistent_pairs_is_refused_on_load():
    mem, _ = _written_pair(LeastSquaresMemory)
    state = mem.state_dict()
    state["stored_keys"] = state["stored_keys"][:2]
    with pytest.raises(ValueError, match="2 key rows and 5 value rows"):
        LeastSquaresMemory(4, 3, device="cpu").load_state_dict(state)
    state = mem.state_dict()
    state["_extra_state"] = dict(state["_extra_state"], num_pairs=99)
    with pytest.raises(ValueError, match="num_pairs = 99 disagrees with the 5 stored pairs"):
        LeastSquaresMemory(4, 3, device="cpu").load_state_dict(state)
    state = mem.state_dict()
    state["stored_values"] = state["stored_values"].float()
    with pytest.raises(ValueError, match="stored_values must have S's dtype"):
        LeastSquaresMemory(4, 3, device="meta").load_state_dict(state, assign=True)
    # the consistent state still loads and writes on
    fresh = LeastSquaresMemory(4, 3, device="cpu")
    fresh.load_state_dict(mem.state_dict())
    assert fresh.write(torch.eye(4, dtype=torch.float64)[:1], torch.ones(1, 3, dtype=torch.float64)).num_pairs == 6


@pytest.mark.parametrize("cls", [OuterProductMemory, LeastSquaresMemory, DeltaRuleMemory])
def test_meta_tensors_get_a_clear_error_not_an_item_error(cls):
    mem = cls(4, 3, device="cpu")
    with pytest.raises(ValueError, match="keys are on the meta device"):
        mem.write(torch.empty(2, 4, device="meta"), torch.empty(2, 3, device="meta"))
    with pytest.raises(ValueError, match="queries are on the meta device"):
        mem.read(torch.empty(2, 4, device="meta"))
    empty = cls(4, 3, device="meta")  # allowed: the empty module a state dict is loaded into
    for call in (lambda: empty.read(torch.ones(4)), lambda: empty.write(torch.ones(1, 4), torch.ones(1, 3))):
        with pytest.raises(ValueError, match=f"cannot (read|write) a {cls.__name__} on the meta device"):
            call()
    assert empty(torch.empty(2, 4, device="meta", dtype=torch.float64)).shape == (2, 3)  # shapes only
