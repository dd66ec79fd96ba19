"""Tests for assocmem.linear.attention.linear_forms: the forms agree, equal the seed's sum and the memory
read, and are causal."""

from __future__ import annotations

import pytest
import torch

from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.linear.attention.softmax import softmax_attention
from assocmem.linear.memory import OuterProductMemory
from tests.linear.attention._qkv import qkv


@pytest.fixture(autouse=True)
def _load_cap_on(monkeypatch):
    """The thread rule is opt-in (ASSOCMEM_LOAD_CAP=1); these tests exercise it turned on."""
    monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "1")


@pytest.mark.parametrize("T", [1, 5, 16, 17, 33])
@pytest.mark.parametrize("chunk_size", [1, 4, 16, 64])
def test_linear_attention_forms_agree(T, chunk_size):
    q, k, v = qkv((2, 3), T, 5, 4, seed=T)
    parallel = linear_attention(q, k, v, form="parallel")
    recurrent = linear_attention(q, k, v, form="recurrent")
    chunked = linear_attention(q, k, v, form="chunked", chunk_size=chunk_size)
    assert parallel.shape == (2, 3, T, 4)
    torch.testing.assert_close(recurrent, parallel, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(chunked, parallel, rtol=1e-12, atol=1e-12)


def test_linear_attention_is_the_seed_sum_and_the_memory_read():
    q, k, v = qkv((), 6, 3, 2, seed=4)
    out = linear_attention(q, k, v, form="recurrent")
    for t in range(6):
        want = sum(v[i] * float(k[i] @ q[t]) for i in range(t + 1))  # sum_{i<=t} v_i (k_i^T q_t)
        torch.testing.assert_close(out[t], want)
        mem = OuterProductMemory(3, 2, device="cpu").write(k[: t + 1], v[: t + 1])
        torch.testing.assert_close(out[t], mem.read(q[t]))  # o_t = S_t q_t


def test_linear_attention_non_causal_reads_full_state():
    q, k, v = qkv((2,), 5, 3, 4, seed=5)
    out = linear_attention(q, k, v, causal=False)
    S = torch.einsum("btv,btk->bvk", v, k)  # (B, d_v, d_k) = S_T
    torch.testing.assert_close(out, torch.einsum("bvk,btk->btv", S, q))
    # cross-attention style: fewer queries than keys
    assert linear_attention(q[:, :2], k, v, causal=False).shape == (2, 2, 4)


def test_linear_attention_empty_sequence():
    q, k, v = qkv((2,), 0, 3, 4)
    for form in ("parallel", "recurrent", "chunked"):
        assert linear_attention(q, k, v, form=form).shape == (2, 0, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda q, k, v: softmax_attention(q, k, v),
        lambda q, k, v: linear_attention(q, k, v, form="parallel"),
        lambda q, k, v: linear_attention(q, k, v, form="recurrent"),
        lambda q, k, v: linear_attention(q, k, v, form="chunked", chunk_size=3),
    ],
)
def test_causality_future_does_not_change_past(fn):
    q, k, v = qkv((2,), 10, 4, 3, seed=6)
    base = fn(q, k, v)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    t0 = 6
    q2[:, t0:] += 5.0
    k2[:, t0:] -= 3.0
    v2[:, t0:] *= -7.0
    changed = fn(q2, k2, v2)
    torch.testing.assert_close(changed[:, :t0], base[:, :t0], rtol=0, atol=1e-12)
    assert not torch.allclose(changed[:, t0:], base[:, t0:])


def test_linear_attention_bad_arguments():
    q, k, v = qkv((2,), 5, 3, 4)
    with pytest.raises(ValueError, match=r"unknown form 'fast'.*'parallel', 'recurrent', 'chunked'"):
        linear_attention(q, k, v, form="fast")
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
            linear_attention(q, k, v, form="chunked", chunk_size=bad)
    with pytest.raises(ValueError, match="causal=False is only supported for form='parallel'"):
        linear_attention(q, k, v, form="recurrent", causal=False)


@pytest.mark.float32_default  # written for torch's default float32 tensors
@pytest.mark.parametrize("form", ["parallel", "recurrent", "chunked"])
def test_float32_overflow_is_recomputed_or_reported(form):
    # an intermediate (the state v k^T = 1e40) overflows float32, the output (1e20 * 2) does not
    q, k, v = torch.full((2, 2), 1e-20), torch.full((2, 2), 1e20), torch.full((2, 2), 1e20)
    out = linear_attention(q, k, v, form=form, chunk_size=1)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, linear_attention(q.double(), k.double(), v.double(), form=form).float())
    # a true output beyond float32's range is an overflow, not inf
    with pytest.raises(ValueError, match=r"linear attention output .* overflows torch\.float32"):
        linear_attention(torch.full((2, 2), 1e20), torch.full((2, 2), 1e20), torch.ones(2, 2), form=form)


def test_integer_inputs_stay_exact_and_booleans_are_refused():
    x = torch.tensor([[1, 2], [3, 4]])
    assert torch.equal(linear_attention(x, x, x), linear_attention(x.double(), x.double(), x.double()).long())
    with pytest.raises(ValueError, match="must be real floating tensors"):
        linear_attention(x.bool(), x.bool(), x.bool())


@pytest.mark.parametrize("form", ["parallel", "recurrent", "chunked"])
def test_integer_overflow_raises_instead_of_wrapping(form):
    # 1000 * 1000 * 2 (d_k) summed over 3 positions is 6e9: beyond int32, which used to wrap
    x = torch.full((3, 2), 1000, dtype=torch.int32)
    with pytest.raises(ValueError, match=r"output \(\w+ form\) is beyond torch.int32's range"):
        linear_attention(x, x, x, form=form)
    # int64 inputs whose worst case is beyond int64: refused before computing (it gave 0)
    big = torch.full((3, 2), 2**40)
    with pytest.raises(ValueError, match="cannot promise the exact result in torch.int64"):
        linear_attention(big, big, big, form=form)
    small = torch.full((3, 2), 3, dtype=torch.int8)
    with pytest.raises(ValueError, match="beyond torch.int8's range"):
        linear_attention(small, small, small, form=form)
    # int8's -128 (whose abs wraps) and a state that overflows while the output fits
    y = torch.tensor([[-128], [1]], dtype=torch.int8)
    out, S = linear_attention(y, torch.ones_like(y), torch.ones_like(y), form=form, output_final_state=True)
    assert out.dtype == S.dtype == torch.int8 and out.tolist() == [[-128], [2]] and S.tolist() == [[2]]
    with pytest.raises(ValueError, match=r"final state S_T .* beyond torch.int8's range"):
        linear_attention(torch.zeros_like(y), y, y, form=form, output_final_state=True)
    # an int32 output whose worst case exceeds int32 but whose exact value fits: computed exactly
    q, k, v = (torch.tensor(r, dtype=torch.int32) for r in ([[1, 1]], [[50000, -50000]], [[50000]]))
    got = linear_attention(q, k, v, form=form)
    assert got.dtype == torch.int32 and got.tolist() == [[0]]


def test_input_checks_run_under_the_thread_cap(monkeypatch):
    # The checks' elementwise passes are parallel regions too: under load they must not run on
    # more threads than the forms (issue 19).
    import assocmem.benchmarking as bm
    import assocmem.linear.attention.linear_forms as lf

    seen = []
    checked = lf._check_qkv
    monkeypatch.setattr(lf, "_check_qkv", lambda *a, **kw: (seen.append(torch.get_num_threads()), checked(*a, **kw))[1])
    monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
    q = k = v = torch.ones(8, 4)
    n = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        linear_attention(q, k, v, "chunked")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(n)
    assert seen == [1]


# ---------------------------------------------------------------------------------------------
# [B, T, H, K] layout, initial state and final state (issue 29, item 3), against a plain loop of
# the library's convention: S_t = S_{t-1} + v_t k_t^T (S of shape (d_v, d_k)), o_t = S_t q_t.
# ---------------------------------------------------------------------------------------------

FORMS = ["parallel", "recurrent", "chunked"]


def _loop(q, k, v, S0=None):
    """Per-step recurrence on [B, T, H, d] tensors; returns ([B, T, H, d_v], [B, H, d_v, d_k])."""
    B, T, H, d_k = k.shape
    d_v = v.shape[-1]
    S = torch.zeros(B, H, d_v, d_k, dtype=q.dtype) if S0 is None else S0.clone()
    out = torch.zeros(B, T, H, d_v, dtype=q.dtype)
    for b in range(B):
        for h in range(H):
            for t in range(T):
                S[b, h] += torch.outer(v[b, t, h], k[b, t, h])
                out[b, t, h] = S[b, h] @ q[b, t, h]
    return out, S


def _bthk(B, T, H, d_k, d_v, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(B, T, H, d_k, generator=g, dtype=torch.float64) for _ in range(2))
    return q, k, torch.randn(B, T, H, d_v, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("form", FORMS)
def test_bthk_layout_with_states_equals_the_per_step_loop(form):
    q, k, v = _bthk(2, 7, 3, 4, 5, seed=1)
    S0 = torch.randn(2, 3, 5, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    want_out, want_S = _loop(q, k, v, S0)
    out, S = linear_attention(q, k, v, form=form, chunk_size=3, layout="BTHK", initial_state=S0,
                              output_final_state=True)
    assert out.shape == (2, 7, 3, 5) and S.shape == (2, 3, 5, 4)
    torch.testing.assert_close(out, want_out, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(S, want_S, rtol=1e-12, atol=1e-12)
    out0, S_zero = linear_attention(q, k, v, form=form, layout="BTHK", output_final_state=True)
    torch.testing.assert_close(out0, _loop(q, k, v)[0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(S_zero, _loop(q, k, v)[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", FORMS)
def test_bthk_is_the_heads_first_layout_transposed(form):
    q, k, v = _bthk(2, 6, 3, 4, 2, seed=3)
    heads_first = linear_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), form=form)
    out = linear_attention(q, k, v, form=form, layout="BTHK")
    torch.testing.assert_close(out, heads_first.transpose(1, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("layout", ["...TK", "BTHK"])
@pytest.mark.parametrize("T1", [0, 1, 5, 11])
def test_a_sequence_cut_in_two_with_the_carried_state_equals_the_whole(form, layout, T1):
    q, k, v = _bthk(2, 11, 3, 4, 5, seed=T1)
    if layout == "...TK":  # the same data heads first: [B, H, T, d]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    t_axis = 1 if layout == "BTHK" else 2
    first, second = ([x.narrow(t_axis, *span) for x in (q, k, v)] for span in ((0, T1), (T1, 11 - T1)))
    kw = dict(form=form, chunk_size=4, layout=layout, output_final_state=True)
    whole, S_whole = linear_attention(q, k, v, **kw)
    out1, S1 = linear_attention(*first, **kw)
    out2, S2 = linear_attention(*second, initial_state=S1, **kw)
    torch.testing.assert_close(torch.cat([out1, out2], dim=t_axis), whole, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(S2, S_whole, rtol=1e-12, atol=1e-12)


def test_two_d_call_is_unchanged_and_states_work_there_too():
    q, k, v = qkv((), 9, 3, 2, seed=8)
    out = linear_attention(q, k, v)
    assert isinstance(out, torch.Tensor) and out.shape == (9, 2)  # no tuple unless asked for
    _, S = linear_attention(q, k, v, form="chunked", chunk_size=2, output_final_state=True)
    torch.testing.assert_close(S, v.T @ k)  # S_T = sum_i v_i k_i^T, (d_v, d_k)
    S0 = torch.ones(2, 3, dtype=q.dtype)
    torch.testing.assert_close(linear_attention(q, k, v, initial_state=S0), out + q @ S0.T)


def test_non_causal_reads_the_initial_plus_written_state():
    q, k, v = qkv((2,), 5, 3, 4, seed=9)
    S0 = torch.randn(2, 4, 3, dtype=q.dtype)
    out, S = linear_attention(q[:, :2], k, v, causal=False, initial_state=S0, output_final_state=True)
    torch.testing.assert_close(S, S0 + torch.einsum("btv,btk->bvk", v, k))
    torch.testing.assert_close(out, torch.einsum("bvk,btk->btv", S, q[:, :2]))


def test_the_returned_state_is_a_new_tensor_and_integers_stay_exact():
    x = torch.arange(6).reshape(3, 2)
    S0 = torch.ones(2, 2, dtype=x.dtype)
    for form in FORMS:
        out, S = linear_attention(x[:0], x[:0], x[:0], form=form, initial_state=S0, output_final_state=True)
        assert out.shape == (0, 2) and torch.equal(S, S0) and S.data_ptr() != S0.data_ptr()
        out, S = linear_attention(x, x, x, form=form, initial_state=S0, output_final_state=True)
        assert out.dtype == S.dtype == torch.int64 and torch.equal(S, S0 + x.T @ x)


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_layout_and_state_arguments_are_checked():
    q, k, v = _bthk(1, 4, 2, 3, 5, seed=0)
    with pytest.raises(ValueError, match=r"unknown layout 'bhtk'.*'\.\.\.TK', 'BTHK'"):
        linear_attention(q, k, v, layout="bhtk")
    with pytest.raises(ValueError, match=r"layout='BTHK' needs 4-D .* got q \(4, 2, 3\)"):
        linear_attention(q[0], k[0], v[0], layout="BTHK")
    with pytest.raises(ValueError, match=r"initial_state must have shape \(\.\.\., d_v, d_k\) = \(1, 2, 5, 3\)"):
        linear_attention(q, k, v, layout="BTHK", initial_state=torch.zeros(1, 2, 3, 5, dtype=q.dtype))
    with pytest.raises(ValueError, match="initial_state must have q's dtype"):
        linear_attention(q, k, v, layout="BTHK", initial_state=torch.zeros(1, 2, 5, 3))
    with pytest.raises(ValueError, match="initial_state contains non-finite"):
        linear_attention(q, k, v, layout="BTHK", initial_state=torch.full((1, 2, 5, 3), float("nan"),
                                                                          dtype=q.dtype))
    with pytest.raises(ValueError, match="initial_state must be a torch.Tensor"):
        linear_attention(q, k, v, layout="BTHK", initial_state=[[0.0]])
    with pytest.raises(ValueError, match="output_final_state"):
        linear_attention(q, k, v, layout="BTHK", output_final_state="yes")


@pytest.mark.float32_default  # written for torch's default float32 tensors
@pytest.mark.parametrize("form", FORMS)
def test_a_final_state_beyond_float32_is_reported(form):
    # the output 1e-20 * 1e20 * 1e20 * 2 = 2e20 fits float32; the state v k^T = 1e40 does not
    q, k, v = torch.full((2, 2), 1e-20), torch.full((2, 2), 1e20), torch.full((2, 2), 1e20)
    assert linear_attention(q, k, v, form=form).dtype == torch.float32
    with pytest.raises(ValueError, match=r"final state S_T .* overflows torch\.float32"):
        linear_attention(q, k, v, form=form, output_final_state=True)


@pytest.mark.parametrize("form", ["parallel", "recurrent", "chunked"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_meta_tensors_get_shapes_only(form, dtype):
    # shape inference on the meta device: the value checks are skipped, the shapes still checked
    q = torch.empty(2, 5, 3, device="meta", dtype=dtype)
    v = torch.empty(2, 5, 4, device="meta", dtype=dtype)
    S0 = torch.empty(2, 4, 3, device="meta", dtype=dtype)
    out, S = linear_attention(q, q, v, form=form, initial_state=S0, output_final_state=True)
    assert out.is_meta and out.shape == (2, 5, 4) and S.shape == (2, 4, 3)
    with pytest.raises(ValueError, match="k and v must have the same leading shape"):
        linear_attention(q, q, v[:, :4], form=form)
