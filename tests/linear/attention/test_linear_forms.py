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
