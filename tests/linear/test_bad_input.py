"""Bad and edge-case input to Part I's public functions (assocmem.linear), written from their contracts.

In the style of numpy's and scipy's edge-case tests: each row is a call, the error it must raise
and a ``match=`` that names the argument and what was wrong; a second table holds edge cases whose
right answer is a value. Nothing here may return ``nan``, ``inf`` or a half-updated object.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.linear import geometry, theory, timing
from assocmem.linear.attention import (
    KVCacheDecoder,
    LinearAttentionDecoder,
    causal_mask,
    decode,
    gamma,
    linear_attention,
    linear_attention_agreement,
    score_asymmetry,
    self_top_rate,
    softmax_attention,
    softmax_weights,
)
from assocmem.linear.capacity import (
    batched_read_errors,
    delta_convergence,
    delta_limit,
    delta_limit_curve,
    delta_pass_map,
    least_squares_state,
    max_pairs_at_error_mc,
    n_grid,
    read_error_curve,
    read_error_mc,
    sample_pairs,
)
from assocmem.linear.memory import (
    DeltaRuleMemory,
    LeastSquaresMemory,
    MemoryOverflowError,
    OuterProductMemory,
    gram_matrix,
)

CPU = "cpu"
F64, F32 = torch.float64, torch.float32
NAN, INF = float("nan"), float("inf")


def t(*rows, dtype=F64):
    return torch.tensor(rows, dtype=dtype)


def qkv(T=3, d=2, dtype=F64):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(T, d, generator=g, dtype=dtype) for _ in range(3))


def _with(x, index, value):
    x = x.clone()
    x[index] = value
    return x


Q, K, V = qkv()
PAIRS = sample_pairs(3, 4, 2, trials=2, device=CPU)  # keys (2, 3, 4), values (2, 3, 2)
E2 = torch.eye(2, dtype=F64)


def _op(dtype=F64):
    return OuterProductMemory(2, 2, dtype=dtype, device=CPU)


def _written_f32():
    return OuterProductMemory(2, 1, dtype=F32, device=CPU).write(t([1e19, 1e19], dtype=F32), t([1e19], dtype=F32))


# (callable, args, kwargs, error, match): every match names the argument and what is wrong.
ERRORS = [
    # ---- memories: construction (dtype policy, sizes, beta, tolerances)
    (OuterProductMemory, (2, 2), {"dtype": torch.float16}, ValueError,
     r"dtype torch\.float16 is not supported.*torch\.float32 or torch\.float64"),
    (LeastSquaresMemory, (2, 2), {"dtype": torch.bfloat16}, ValueError, r"dtype torch\.bfloat16 is not supported"),
    (DeltaRuleMemory, (2, 2), {"dtype": "float16"}, ValueError, r"dtype torch\.float16 is not supported"),
    (OuterProductMemory, (2, 2), {"dtype": torch.int32}, ValueError, "dtype must be a floating-point dtype"),
    (OuterProductMemory, (-1, 2), {}, ValueError, "d_k must be a positive integer"),
    (OuterProductMemory, (2, 0), {}, ValueError, "d_v must be a positive integer"),
    (DeltaRuleMemory, (2, 2, True), {}, ValueError, "beta must be a real number, got True"),
    (DeltaRuleMemory, (2, 2, "0.5"), {}, ValueError, "beta must be a real number, got '0.5'"),
    (DeltaRuleMemory, (2, 2, NAN), {}, ValueError, r"beta must be in \(0, 1\]"),
    (DeltaRuleMemory, (2, 2, 0.0), {}, ValueError, r"beta must be in \(0, 1\]"),
    (LeastSquaresMemory, (2, 2), {"rtol": np.True_}, TypeError, "rtol must be a finite non-negative number"),
    (LeastSquaresMemory, (2, 2), {"atol": -1e-3}, ValueError, "atol must be a finite non-negative number"),
    # ---- memories: writes and reads
    (lambda: _op().write(t(1.0, 0.0), t([1.0, 0.0])), (), {}, ValueError, r"keys must be 2-D .* got shape \(2,\)"),
    (lambda: _op().write("keys", t([1.0, 0.0])), (), {}, ValueError, "keys must be a real tensor or array-like"),
    (lambda: _op().write(t([1.0, 0.0]), torch.tensor([[1j, 0]])), (), {}, ValueError, "values must be real"),
    (lambda: _op().write(t([NAN, 0.0]), t([1.0, 0.0])), (), {}, ValueError, "keys contain non-finite"),
    (lambda: _op(F32).write(t([1e300, 0.0]), t([1.0, 0.0])), (), {}, ValueError, r"keys overflows torch\.float32"),
    (lambda: _op(F32).write(t([1e30, 0.0], dtype=F32), t([1e30, 0.0], dtype=F32)), (), {}, MemoryOverflowError,
     r"outer-product state .* overflowed .*torch\.float32"),
    (lambda: _op().write(E2, E2, require_unit_keys="no"), (), {}, ValueError, "require_unit_keys must be True or False"),
    (lambda: _op().write(2 * E2, E2, require_unit_keys=True), (), {}, ValueError, r"key 0 has norm 2"),
    (lambda: DeltaRuleMemory(2, 2, device=CPU).write(E2, E2, passes=1.5), (), {}, ValueError,
     "passes must be a positive integer"),
    (lambda: DeltaRuleMemory(2, 2, device=CPU).write(E2, E2, allow_unstable="yes"), (), {}, ValueError,
     "allow_unstable must be True or False"),
    (lambda: DeltaRuleMemory(2, 2, device=CPU).write(2 * E2, E2), (), {}, ValueError, r"beta \|\|k\|\|\^2 = 4"),
    (lambda: _op().read(t(INF, 0.0)), (), {}, ValueError, "queries contain non-finite"),
    (lambda: _op().read(t(1.0, 0.0, 0.0)), (), {}, ValueError, r"queries must have shape \(\.\.\., d_k\)"),
    (lambda: _written_f32().read(t(1e19, 1e19, dtype=F32)), (), {}, ValueError, r"read S q overflows torch\.float32"),
    (lambda: LeastSquaresMemory(2, 2, device=CPU).half().write(E2, E2), (), {}, ValueError,
     r"state dtype .* torch\.float16 is not supported"),
    (gram_matrix, (torch.ones(3),), {}, ValueError, r"keys must be at least 2-D .* got shape \(3,\)"),
    (gram_matrix, (torch.ones(2, 2, dtype=torch.float16),), {}, ValueError, r"keys dtype torch\.float16"),
    # ---- softmax and linear attention
    (softmax_attention, (_with(Q, (0, 0), NAN), K, V), {}, ValueError, "q contains non-finite"),
    (softmax_attention, (Q, _with(K, (1, 1), INF), V), {}, ValueError, "k contains non-finite"),
    (softmax_attention, (Q, K, _with(V, (2, 0), NAN)), {}, ValueError, "v contains non-finite"),
    (softmax_attention, (Q, K, V), {"scale": True}, ValueError, "scale must be a real number"),
    (softmax_attention, (Q, K, V), {"scale": NAN}, ValueError, "scale must be finite"),
    (softmax_attention, (Q, K, V), {"scale": "0.5"}, ValueError, "scale must be a real number"),
    (softmax_attention, (Q, K[:0], V[:0]), {"causal": False}, ValueError, "empty set of keys is undefined"),
    (softmax_weights, (Q, K[:0]), {"causal": False}, ValueError, "empty set of keys is undefined"),
    (softmax_attention, (Q.half(), K.half(), V.half()), {}, ValueError, r"dtype torch\.float16 is not supported"),
    (softmax_attention, (Q.long(), K.long(), V.long()), {}, ValueError, r"must be real floating tensors"),
    (softmax_attention, (Q.tolist(), K, V), {}, ValueError, "q must be a torch.Tensor"),
    (softmax_attention, (Q, K, V), {"causal": "yes"}, ValueError, "causal must be True or False"),
    (softmax_attention, (t([1e200, 0.0]), t([1e200, 0.0]), t([1.0])), {}, ValueError,
     r"scores scale \* q\^T k overflows torch\.float64"),
    (linear_attention, (Q, _with(K, (0, 0), NAN), V), {}, ValueError, "k contains non-finite"),
    (linear_attention, (Q.bfloat16(), K.bfloat16(), V.bfloat16()), {}, ValueError, r"torch\.bfloat16 is not supported"),
    (linear_attention, (Q, K, V), {"chunk_size": 2.0, "form": "chunked"}, ValueError, "chunk_size must be an integer"),
    (linear_attention, (torch.full((2, 2), 1e20, dtype=F32), torch.full((2, 2), 1e20, dtype=F32), torch.ones(2, 2, dtype=F32)), {}, ValueError,
     r"linear attention output .* overflows torch\.float32"),
    (causal_mask, (2.5,), {}, ValueError, "T must be an integer, got 2.5"),
    (causal_mask, (-1,), {}, ValueError, "T must be non-negative"),
    (gamma, (True,), {}, ValueError, "n must be an integer, got the boolean True"),
    (gamma, (3, NAN), {}, ValueError, "u must be finite"),
    (linear_attention_agreement, ([4], [2]), {"dtype": torch.float16}, ValueError, r"dtype torch\.float16 is not supported"),
    (linear_attention_agreement, ([2.5], [2]), {}, ValueError, "T_values entry must be an integer"),
    (self_top_rate, (Q[:0], K[:0]), {}, ValueError, "self_top_rate needs at least one position"),
    (self_top_rate, (_with(Q, (0, 0), NAN), K), {}, ValueError, "q contains non-finite"),
    (score_asymmetry, (Q.half(), K.half()), {}, ValueError, r"torch\.float16 is not supported"),
    # ---- decoders
    (KVCacheDecoder, (2, 2), {"dtype": torch.float16}, ValueError, r"dtype torch\.float16 is not supported"),
    (KVCacheDecoder, (2, 2), {"scale": True}, ValueError, "scale must be a real number"),
    (KVCacheDecoder, (2, 2), {"capacity": 2.0}, ValueError, "capacity must be a positive integer"),
    (LinearAttentionDecoder, (2, 2), {"dtype": "float64"}, ValueError, "dtype must be a torch dtype"),
    (LinearAttentionDecoder, (2, 2), {"device": "tpu"}, ValueError, "unknown device 'tpu'"),
    (lambda: KVCacheDecoder(2, 2).step(Q[0], _with(K[0], 0, NAN), V[0]), (), {}, ValueError, "k contains non-finite"),
    (lambda: LinearAttentionDecoder(2, 2).step(Q[0], K[0], V[0].float()), (), {}, ValueError, "decoder's dtype"),
    (lambda: LinearAttentionDecoder(2, 2).step(Q[0], t(1e200, 1e200), t(1e200, 1e200)), (), {}, ValueError,
     r"state S_t .* overflows torch\.float64"),
    (decode, ("decoder", Q, K, V), {}, ValueError, "decoder must be a KVCacheDecoder or a LinearAttentionDecoder"),
    # ---- geometry
    (geometry.unit_vectors_2d, (True,), {}, ValueError, "angles must be real numbers, got the boolean"),
    (geometry.unit_vectors_2d, ("0.5",), {}, ValueError, "angles must be a real number or an array"),
    (geometry.unit_vectors_2d, (1e300,), {"dtype": F32}, ValueError, r"angles overflows torch\.float32"),
    (geometry.circle_directions, (4,), {"dtype": torch.bfloat16}, ValueError, r"dtype torch\.bfloat16 is not supported"),
    (geometry.coherence, (torch.ones(2, 2, dtype=torch.float16),), {}, ValueError, r"keys dtype torch\.float16"),
    (geometry.additive_weights, (t([1e20, 0.0], dtype=F32), t(1e20, 0.0, dtype=F32)), {}, ValueError,
     r"weights k_i\^T q overflows torch\.float32"),
    (geometry.key_coordinates, (E2, t(1.0, 1.0)), {"rtol": True}, ValueError, "rtol must be a real number"),
    (geometry.keys_with_gram, (E2,), {"rtol": -1.0}, ValueError, "rtol must be >= 0"),
    (geometry.noisy_read_errors, (E2, t(1.0, 0.0), t(1.0, 0.0), True, E2), {}, ValueError,
     "eps must be real numbers, got the boolean"),
    (geometry.least_squares_from_moments, (E2, t([1.0, 1.0], [0.0, 1.0])), {}, ValueError,
     "key_moment must be symmetric"),
    # ---- theory
    (theory.dual_vector_norm, (1e-320,), {}, ValueError, r"1 / sin\(theta\) overflows float64"),
    (theory.least_squares_sigma_max, (1e-320,), {}, ValueError, r"overflows float64 for theta"),
    (theory.max_pairs_at_error, (1e300, 10), {}, ValueError, "eps \\* d_k is too large for a count"),
    (theory.additive_read_error, (True, 4), {}, TypeError, "n must be a real number"),
    # ---- capacity
    (sample_pairs, (3, 4, 2, 2), {"dtype": torch.float16, "device": CPU}, ValueError, r"dtype torch\.float16"),
    (sample_pairs, (3, 4, 2, 2), {"seed": 1.5, "device": CPU}, ValueError, "seed must be an integer"),
    (batched_read_errors, ("additive", PAIRS[0][:, :0], PAIRS[1][:, :0]), {}, ValueError, r"no pairs \(n = 0"),
    (batched_read_errors, ("additive", _with(PAIRS[0], (0, 0, 0), NAN), PAIRS[1]), {}, ValueError,
     "keys contain non-finite"),
    (batched_read_errors, ("delta", *PAIRS), {"beta": True}, ValueError, "beta must be a real number"),
    (batched_read_errors, ("additive", PAIRS[0].half(), PAIRS[1].half()), {}, ValueError, r"torch\.float16 is not"),
    (least_squares_state, (PAIRS[0], PAIRS[1].float()), {}, ValueError, "keys and values must share a dtype"),
    (delta_pass_map, (PAIRS[0].tolist(), PAIRS[1]), {}, ValueError, "keys must be a torch.Tensor"),
    (delta_limit, PAIRS, {"rtol": -1.0}, ValueError, "rtol must be >= 0"),
    (read_error_mc, ("additive", 3, 4), {"trials": 2, "dtype": torch.int64, "device": CPU}, ValueError,
     "dtype must be a floating-point dtype"),
    (read_error_curve, ("additive", [2], "16"), {"device": CPU}, ValueError, "d_k must be an integer >= 1"),
    (n_grid, (8, [True]), {}, ValueError, "ratios entry must be a real number"),
    (max_pairs_at_error_mc, ("0.1", 4), {}, ValueError, "eps must be a real number"),
    (delta_convergence, (4, 2), {"betas": (False,), "passes": 1, "trials": 2, "device": CPU}, ValueError,
     "beta must be a real number"),
    (delta_limit_curve, (["0.5"], 4, 2), {"trials": 2, "device": CPU}, ValueError, "beta must be a real number"),
    # ---- timing
    (timing.loglog_slope, ([2.0, 2.0], [1.0, 3.0]), {}, ValueError, "x must take at least two different values"),
    (timing.loglog_slope, ([1.0, 2.0], [1.0, NAN]), {}, ValueError, "x and y must be finite"),
    (timing.loglog_slope, ([1.0, 2.0], ["1", "2"]), {}, ValueError, "y must be an iterable of real numbers"),
    (timing.time_attention_vs_T, ([8],), {"dtype": "float16"}, ValueError, r"dtype torch\.float16 is not supported"),
    (timing.time_attention_vs_T, ([8],), {"min_run_time": -1}, ValueError, "min_run_time must be > 0"),
    (timing.time_decoding, ("3",), {}, ValueError, "T must be an integer"),
]


def _id(row):
    fn = row[0]
    return getattr(fn, "__name__", "call").replace("<lambda>", "call") + ":" + row[4][:30]


@pytest.mark.parametrize("fn, args, kwargs, error, match", ERRORS, ids=[_id(r) for r in ERRORS])
def test_bad_input_raises_a_clear_error(fn, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        fn(*args, **kwargs)


def _softmax_huge():
    q = t([1e20, 0.0], [1e20, 0.0], dtype=F32)
    k = t([1e20, 0.0], [-1e20, 0.0], dtype=F32)
    return softmax_attention(q, k, t([1.0, 2.0], [3.0, 4.0], dtype=F32), causal=False)


def _kv_huge():
    dec = KVCacheDecoder(2, 1, dtype=F32)
    dec.step(t(1e20, 0.0, dtype=F32), t(1e20, 0.0, dtype=F32), t(1.0, dtype=F32))
    return dec.step(t(1e20, 0.0, dtype=F32), t(-1e20, 0.0, dtype=F32), t(5.0, dtype=F32))


def _coherence(scale):
    return float(geometry.coherence(t([scale, 0.0], [scale, scale])))


# (callable, expected): edge cases whose contract is a value, not an error.
VALUES = [
    (_softmax_huge, t([1.0, 2.0], [1.0, 2.0], dtype=F32)),  # scores +-1e40: all weight on the first key
    (_kv_huge, t(1.0, dtype=F32)),
    (lambda: softmax_attention(Q[:0], K[:0], V[:0]).shape, (0, 2)),  # no queries, nothing to compute
    (lambda: linear_attention(Q, K[:0], V[:0], causal=False), torch.zeros(3, 2, dtype=F64)),  # sum over nothing
    (lambda: linear_attention(torch.full((2, 2), 1e-20, dtype=F32), torch.full((2, 2), 1e20, dtype=F32),
                      torch.full((2, 2), 1e20, dtype=F32),
                              form="recurrent"), t([2e20, 2e20], [4e20, 4e20], dtype=F32)),  # state 1e40 overflows
    (lambda: _written_f32().read(t(1e19, -1e19, dtype=F32)), t(0.0, dtype=F32)),  # products inf, read 0
    (lambda: _coherence(1e200), 1 / math.sqrt(2)),  # norms of 1e200 keys overflow; cosines do not
    (lambda: _coherence(1e-200), 1 / math.sqrt(2)),
    (lambda: score_asymmetry(t([1e20, 0.0], [0.0, 1e20], dtype=F32), t([1e20, 1e20], [0.0, 1e20], dtype=F32)),
     score_asymmetry(t([1.0, 0.0], [0.0, 1.0]), t([1.0, 1.0], [0.0, 1.0]))),
    (lambda: geometry.keys_with_gram(1e300 * E2), 1e150 * E2),
    (lambda: DeltaRuleMemory(2, 2, beta=np.float32(0.5), device=CPU).beta, 0.5),
    (lambda: LeastSquaresMemory(2, 2, rtol=torch.tensor(1e-10), device=CPU).rtol, 1e-10),
]


@pytest.mark.parametrize("fn, expected", VALUES, ids=[f"value{i}" for i in range(len(VALUES))])
def test_edge_cases_return_the_right_value(fn, expected):
    got = fn()
    if isinstance(expected, torch.Tensor):
        assert got.dtype == expected.dtype and torch.isfinite(got).all()
        torch.testing.assert_close(got, expected, rtol=1e-6, atol=0)
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-12)
    else:
        assert got == expected


@pytest.mark.parametrize("cls", [OuterProductMemory, LeastSquaresMemory, DeltaRuleMemory])
def test_every_failed_write_leaves_the_memory_as_it_was(cls):
    kwargs = {"rtol": 0.0} if cls is LeastSquaresMemory else {}  # keep 1e-20 singular values: S* = 1e50
    mem = cls(2, 2, dtype=F32, device=CPU, **kwargs).write(t([1.0, 0.0], dtype=F32), t([1.0, 2.0], dtype=F32))
    S, n = mem.S.clone(), mem.num_pairs
    stored = [b.clone() for name, b in mem.named_buffers() if name != "S"]
    overflowing_key = 1e-20 if cls is LeastSquaresMemory else 1e30
    for keys, values in ((t([NAN, 0.0]), t([1.0, 0.0])), (t([1e300, 0.0]), t([1.0, 0.0])),
                         (t([0.0, overflowing_key], dtype=F32), t([1e30, 0.0], dtype=F32)), ("k", "v")):
        with pytest.raises(ValueError):
            mem.write(keys, values, **({"allow_unstable": True} if cls is DeltaRuleMemory else {}))
        assert torch.equal(mem.S, S) and mem.num_pairs == n
        assert all(torch.equal(a, b) for a, b in zip(stored, [b for nm, b in mem.named_buffers() if nm != "S"]))
