"""Unnormalised causal linear attention and its three equal forms: parallel, recurrent, chunked.

The softmax replaced by the plain dot product and the normaliser dropped (seed §3; Katharopoulos
et al. 2020, §3.2, without feature map or denominator): ``o_t = sum_{i<=t} v_i (k_i^T q_t) = S_t q_t``
with ``S_t = sum_{i<=t} v_i k_i^T`` of shape ``(d_v, d_k)``. :func:`linear_attention` computes it in
any of :data:`LINEAR_ATTENTION_FORMS`, which compute the same thing and are tested equal:

- ``"parallel"``: ``(Q K^T ∘ M) V`` with the causal mask ``M`` (quadratic in ``T``);
- ``"recurrent"``: the reference loop carrying ``S_t`` (the seed's recurrent network);
- ``"chunked"``: causal-masked ``(Q K^T) V`` inside each chunk plus ``Q`` times the state carried
  over from earlier chunks (the form fast kernels use; Yang et al. 2024, §2).

The recurrent form is the reference the others are tested against and benchmarked beside
(``benchmarks/bench_ratios.py``). Every form runs with torch's threads capped at the cores other
processes leave free (:func:`assocmem.benchmarking.load_capped_threads`).

Libraries such as flash-linear-attention store the state as ``(d_k, d_v)`` (the transpose of the
seed's ``S``) and scale queries by ``1/sqrt(d_k)``; we follow the seed. Chapter 01 ("From attention
to a matrix") uses it; Part III reads neuron-view SDM as linear attention with it.

References
----------
Seed 000 ("How much can a matrix remember?"), §3.
Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs: fast
autoregressive transformers with linear attention. ICML.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Kohonen, T. (1972). Correlation matrix memories; Anderson, J. A. (1972). A simple neural network
generating an interactive memory.
Yang, S., et al. (2024). Gated linear attention transformers with hardware-efficient training. ICML
(the chunkwise form).
"""

from __future__ import annotations

import numbers

import torch

from assocmem.benchmarking import load_capped_threads
from assocmem.linear._args import checked_result
from assocmem.linear.attention._common import _check_qkv
from assocmem.linear.attention.softmax import causal_mask

__all__ = [
    "linear_attention",
    "LINEAR_ATTENTION_FORMS",
]

#: The forms accepted by :func:`linear_attention`.
LINEAR_ATTENTION_FORMS = ("parallel", "recurrent", "chunked")


def _linear_attention_parallel(q, k, v, causal: bool) -> torch.Tensor:
    """``(Q K^T ∘ M) V``: the quadratic form."""
    scores = q @ k.transpose(-2, -1)  # (..., T_q, T)
    if causal:
        scores = scores.tril_()  # the causal mask M: zero out i > t (in place, no (T, T) mask built)
    return scores @ v  # (..., T_q, d_v)


def _linear_attention_recurrent(q, k, v) -> torch.Tensor:
    """Reference loop: ``S_t = S_{t-1} + v_t k_t^T``, ``o_t = S_t q_t`` with ``S`` as ``(d_v, d_k)``."""
    *batch, T, d_k = k.shape
    d_v = v.shape[-1]
    S = q.new_zeros(*batch, d_v, d_k)  # (..., d_v, d_k)
    outputs = []
    for t in range(T):
        S = S + torch.einsum("...v,...k->...vk", v[..., t, :], k[..., t, :])  # write v_t k_t^T
        outputs.append(torch.einsum("...vk,...k->...v", S, q[..., t, :]))  # read S_t q_t
    if not outputs:
        return q.new_zeros(*batch, 0, d_v)
    return torch.stack(outputs, dim=-2)  # (..., T, d_v)


def _linear_attention_chunked(q, k, v, chunk_size: int) -> torch.Tensor:
    """Intra-chunk causal ``(Q K^T ∘ M) V`` plus inter-chunk ``Q S^T`` from the carried state."""
    *batch, T, d_k = k.shape
    d_v = v.shape[-1]
    S = q.new_zeros(*batch, d_v, d_k)  # state of all earlier chunks, (..., d_v, d_k)
    mask = causal_mask(min(chunk_size, T), device=q.device)  # (C, C)
    outputs = []
    for start in range(0, T, chunk_size):
        stop = min(start + chunk_size, T)
        c = stop - start
        qc, kc, vc = q[..., start:stop, :], k[..., start:stop, :], v[..., start:stop, :]  # (..., c, d)
        intra = ((qc @ kc.transpose(-2, -1)) * mask[:c, :c]) @ vc  # (..., c, d_v)
        inter = torch.einsum("...ck,...vk->...cv", qc, S)  # S_prev q_t for each t, (..., c, d_v)
        outputs.append(intra + inter)
        S = S + torch.einsum("...cv,...ck->...vk", vc, kc)  # add this chunk's V_c^T K_c
    if not outputs:
        return q.new_zeros(*batch, 0, d_v)
    return torch.cat(outputs, dim=-2)  # (..., T, d_v)


def linear_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    form: str = "parallel",
    chunk_size: int = 64,
    causal: bool = True,
) -> torch.Tensor:
    """Unnormalised linear attention, ``o_t = S_t q_t`` with ``S_t = sum_{i<=t} v_i k_i^T``.

    Equivalently ``o_t = sum_{i<=t} v_i (k_i^T q_t)``: softmax attention with ``exp`` replaced by
    the identity and no normaliser (seed §3). There is no feature map and no ``1/sqrt(d_k)``.

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T, d_k)``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``
        Keys.
    v : torch.Tensor, shape ``(..., T, d_v)``
        Values. ``q``, ``k``, ``v`` share dtype and batch dimensions.
    form : {"parallel", "recurrent", "chunked"}, default "parallel"
        ``"parallel"``: ``(Q K^T ∘ M) V``, memory ``O(T^2)``.
        ``"recurrent"``: loop over ``t`` carrying ``S_t`` of shape ``(..., d_v, d_k)``; the
        readable reference.
        ``"chunked"``: within each chunk of ``chunk_size`` positions the causal-masked
        ``(Q_c K_c^T) V_c``, plus ``Q_c`` read against the state of all earlier chunks, which is
        then updated by ``V_c^T K_c``. ``T`` need not be a multiple of ``chunk_size``.
    chunk_size : int, default 64
        Chunk length for ``form="chunked"`` (must be >= 1 whatever the form).
    causal : bool, default True
        If False, every query reads the full state ``S_T`` (only ``form="parallel"``; the
        query count ``T_q`` may then differ from ``T``).

    Returns
    -------
    torch.Tensor, shape ``(..., T, d_v)``
        The three forms agree up to rounding. Over an empty set of keys (``T = 0``) the sum
        ``S_T`` is the zero matrix, so every output is zero. Integer inputs give the exact
        integer result.

    Raises
    ------
    ValueError
        For an unknown ``form`` (the message lists the allowed ones), ``chunk_size < 1``,
        ``causal=False`` with a non-parallel form, a ``causal`` that is not a boolean,
        mismatched shapes, dtypes or devices (named), a dtype other than float32, float64 or
        an integer type (float16 and bfloat16 are refused, naming the supported dtypes), a NaN
        or infinity in ``q``, ``k`` or ``v`` (naming which), or an output beyond the dtype's
        range. A float32 output that overflows only in an intermediate sum is recomputed in
        float64 and cast back; one whose true value is beyond float32's range raises.

    References
    ----------
    Seed §3 ("Removing the softmax"). Katharopoulos et al. (2020), Transformers are RNNs, §3.2
    (without the feature map and normaliser). Chunkwise form as in Yang et al. (2024), Gated
    linear attention transformers with hardware-efficient training, §2.
    """
    if form not in LINEAR_ATTENTION_FORMS:
        raise ValueError(f"unknown form {form!r}; expected one of {LINEAR_ATTENTION_FORMS}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1; got {chunk_size!r}")
    chunk_size = int(chunk_size)

    def run(q, k, v):
        if form == "parallel":
            return _linear_attention_parallel(q, k, v, causal)
        if form == "recurrent":
            return _linear_attention_recurrent(q, k, v)
        return _linear_attention_chunked(q, k, v, chunk_size)

    with load_capped_threads():  # the input checks too: their elementwise passes are parallel regions
        _check_qkv(q, k, v, causal, integers=True)
        if not causal and form != "parallel":
            raise ValueError(
                f"causal=False is only supported for form='parallel'; got form={form!r} "
                "(the recurrent and chunked forms are causal by construction)"
            )
        return checked_result(run(q, k, v), f"the linear attention output ({form} form)",
                              lambda: run(q.double(), k.double(), v.double()), "rescale q, k or v")
