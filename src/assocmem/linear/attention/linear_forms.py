"""Unnormalised causal linear attention and its three equal forms: parallel, recurrent, chunked.

The softmax replaced by the plain dot product and the normaliser dropped (seed §3; Katharopoulos
et al. 2020, §3.2, without feature map or denominator): ``o_t = sum_{i<=t} v_i (k_i^T q_t) = S_t q_t``
with ``S_t = sum_{i<=t} v_i k_i^T`` of shape ``(d_v, d_k)``. :func:`linear_attention` computes it in
any of :data:`LINEAR_ATTENTION_FORMS`, which compute the same thing and are tested equal:

- ``"parallel"``: ``(Q K^T ∘ M) V`` with the causal mask ``M`` (quadratic in ``T``);
- ``"recurrent"``: the reference loop carrying ``S_t`` (the seed's recurrent network);
- ``"chunked"``: causal-masked ``(Q K^T) V`` inside each chunk plus ``Q`` times the state carried
  over from earlier chunks (the form fast kernels use; Yang et al. 2024, §2).

Every form also runs in flash-linear-attention's ``[B, T, H, K]`` layout (``layout="BTHK"``),
continues from a carried state (``initial_state``) and returns the final one
(``output_final_state=True``), so a long sequence can be processed in pieces.

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
from assocmem._checks import as_bool
from assocmem.linear.attention._common import _check_finite, _check_qkv
from assocmem.linear.attention.softmax import causal_mask

__all__ = [
    "linear_attention",
    "LINEAR_ATTENTION_FORMS",
    "LINEAR_ATTENTION_LAYOUTS",
]

#: The forms accepted by :func:`linear_attention`.
LINEAR_ATTENTION_FORMS = ("parallel", "recurrent", "chunked")
#: The tensor layouts accepted by :func:`linear_attention`: ``(..., T, d)`` (time second-to-last,
#: any leading axes) and flash-linear-attention's ``[B, T, H, d]``.
LINEAR_ATTENTION_LAYOUTS = ("...TK", "BTHK")


def _linear_attention_parallel(q, k, v, causal: bool, S0):
    """``(Q K^T ∘ M) V`` (plus ``Q S_0^T``): the quadratic form; returns ``(out, None)`` (the final
    state is summed by the caller only when asked for)."""
    scores = q @ k.transpose(-2, -1)  # (..., T_q, T)
    if causal:
        scores = scores.tril_()  # the causal mask M: zero out i > t (in place, no (T, T) mask built)
    out = scores @ v  # (..., T_q, d_v)
    if S0 is not None:
        out = out + torch.einsum("...tk,...vk->...tv", q, S0)  # every query also reads S_0
    return out, None


def _linear_attention_recurrent(q, k, v, S0):
    """Reference loop: ``S_t = S_{t-1} + v_t k_t^T``, ``o_t = S_t q_t`` with ``S`` as ``(d_v, d_k)``,
    from ``S_0`` (zero when ``None``); returns ``(out, S_T)``."""
    *batch, T, d_k = k.shape
    d_v = v.shape[-1]
    S = q.new_zeros(*batch, d_v, d_k) if S0 is None else S0.clone()  # (..., d_v, d_k)
    outputs = []
    for t in range(T):
        S = S + torch.einsum("...v,...k->...vk", v[..., t, :], k[..., t, :])  # write v_t k_t^T
        outputs.append(torch.einsum("...vk,...k->...v", S, q[..., t, :]))  # read S_t q_t
    if not outputs:
        return q.new_zeros(*batch, 0, d_v), S
    return torch.stack(outputs, dim=-2), S  # (..., T, d_v), (..., d_v, d_k)


def _linear_attention_chunked(q, k, v, chunk_size: int, S0):
    """Intra-chunk causal ``(Q K^T ∘ M) V`` plus inter-chunk ``Q S^T`` from the carried state (which
    starts at ``S_0``, zero when ``None``); returns ``(out, S_T)``."""
    *batch, T, d_k = k.shape
    d_v = v.shape[-1]
    # state of all earlier chunks, (..., d_v, d_k)
    S = q.new_zeros(*batch, d_v, d_k) if S0 is None else S0.clone()
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
        return q.new_zeros(*batch, 0, d_v), S
    return torch.cat(outputs, dim=-2), S  # (..., T, d_v), (..., d_v, d_k)


def _check_layout(layout, q, k, v) -> None:
    """``layout`` is one of :data:`LINEAR_ATTENTION_LAYOUTS`; ``"BTHK"`` needs 4-D tensors."""
    if layout not in LINEAR_ATTENTION_LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {LINEAR_ATTENTION_LAYOUTS}")
    if layout == "BTHK":
        for name, x in (("q", q), ("k", k), ("v", v)):
            if not isinstance(x, torch.Tensor) or x.ndim != 4:
                shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
                raise ValueError(f"layout='BTHK' needs 4-D q, k, v of shape [B, T, H, K] "
                                 f"([B, T, H, V] for v); got {name} {shape}")


def _check_initial_state(S0, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """``S0`` of shape ``(..., d_v, d_k)`` (the batch axes of ``k``), dtype and device of ``q``,
    finite (the inputs are checked already)."""
    if not isinstance(S0, torch.Tensor):
        raise ValueError(f"initial_state must be a torch.Tensor or None; got {type(S0).__name__}")
    want = (*k.shape[:-2], v.shape[-1], k.shape[-1])
    if tuple(S0.shape) != want:
        raise ValueError(f"initial_state must have shape (..., d_v, d_k) = {want} (the seed's S, "
                         f"values by keys; the transpose of flash-linear-attention's state); got "
                         f"{tuple(S0.shape)}")
    if S0.dtype != q.dtype or S0.device != q.device:
        raise ValueError(f"initial_state must have q's dtype and device ({q.dtype} on {q.device}); "
                         f"got {S0.dtype} on {S0.device}")
    _check_finite([("initial_state", S0)])


def _max_abs(x: torch.Tensor) -> int:
    """``max |x|`` of an integer tensor as a Python int (exact; ``abs`` would wrap at int8's -128)."""
    if x.numel() == 0:
        return 0
    return max(-int(x.min()), int(x.max()))


def _integer_dtype_for(q, k, v, S0) -> torch.dtype:
    """The integer dtype in which every intermediate of the forms is exact, or a ValueError.

    Every entry the forms compute (a score ``k_i^T q_t``, a partial state ``S_0 + sum v_i k_i^T``,
    an output ``S_t q_t`` or one of their partial sums) is at most, in absolute value,
    ``B = d_k max|q| (max|S_0| + T max|k| max|v|)`` (or ``d_k max|q| max|k|`` or the state bound,
    when larger). ``B`` is computed in Python integers (exact). If ``B`` fits the inputs' dtype,
    that dtype; else int64 if ``B`` fits it (the result is range-checked before the cast back);
    else an error: integer arithmetic would wrap.
    """
    dtype = q.dtype
    T, d_k = k.shape[-2], k.shape[-1]
    mq, mk, mv = _max_abs(q), _max_abs(k), _max_abs(v)
    state = (0 if S0 is None else _max_abs(S0)) + T * mk * mv
    bound = max(d_k * mq * mk, state, d_k * mq * state)
    if bound <= torch.iinfo(dtype).max:
        return dtype
    if bound <= torch.iinfo(torch.int64).max:
        return torch.int64
    raise ValueError(
        f"integer linear attention cannot promise the exact result in {dtype}: the worst-case entry "
        f"d_k max|q| (max|S_0| + T max|k| max|v|) = {bound:.3g} exceeds torch.int64's largest value "
        f"{torch.iinfo(torch.int64).max:.3g}, so the integer sums could wrap; pass smaller integers, or "
        "floating tensors (float64 rounds but does not wrap)"
    )


def _integer_cast_back(x: torch.Tensor, dtype: torch.dtype, what: str) -> torch.Tensor:
    """``x`` (exact, int64) cast to ``dtype`` if every entry fits it; else a ValueError."""
    if x.dtype == dtype:
        return x
    info = torch.iinfo(dtype)
    if x.numel() and (int(x.min()) < info.min or int(x.max()) > info.max):
        raise ValueError(
            f"{what} is beyond {dtype}'s range [{info.min}, {info.max}] (exact entries in "
            f"[{int(x.min())}, {int(x.max())}]); pass a wider integer dtype (torch.int64) or "
            "floating tensors"
        )
    return x.to(dtype)


def linear_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    form: str = "parallel",
    chunk_size: int = 64,
    causal: bool = True,
    *,
    layout: str = "...TK",
    initial_state: torch.Tensor | None = None,
    output_final_state: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Unnormalised linear attention, ``o_t = S_t q_t`` with ``S_t = S_0 + sum_{i<=t} v_i k_i^T``.

    Equivalently ``o_t = S_0 q_t + sum_{i<=t} v_i (k_i^T q_t)``: softmax attention with ``exp``
    replaced by the identity and no normaliser (seed §3), continuing from a state ``S_0`` (zero by
    default). There is no feature map and no ``1/sqrt(d_k)``. The state follows the seed: ``S``
    has shape ``(d_v, d_k)`` (values by keys) and is read as ``S q``; flash-linear-attention stores
    its transpose ``(d_k, d_v)``, so pass ``state.transpose(-1, -2)`` between the two.

    Because the recurrence only adds to ``S``, a sequence can be cut anywhere: running
    ``[0, T_1)`` with ``output_final_state=True`` and then ``[T_1, T)`` with that state as
    ``initial_state`` gives the outputs and final state of ``[0, T)`` (up to rounding).

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T, d_k)``, or ``[B, T, H, d_k]`` with ``layout="BTHK"``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``, or ``[B, T, H, d_k]``
        Keys.
    v : torch.Tensor, shape ``(..., T, d_v)``, or ``[B, T, H, d_v]``
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
    layout : {"...TK", "BTHK"}, keyword-only, default "...TK"
        ``"...TK"``: time on the second-to-last axis, features last, any leading batch or head
        axes (``(T, d)`` for one sequence; ``[B, H, T, K]``, flash-linear-attention's
        ``head_first=True``). ``"BTHK"``: 4-D ``[B, T, H, K]`` tensors (flash-linear-attention's
        default), heads computed independently; the output is ``[B, T, H, d_v]``.
    initial_state : torch.Tensor or None, keyword-only, shape ``(..., d_v, d_k)``
        ``S_0``, the state carried over from an earlier part of the sequence; ``[B, H, d_v, d_k]``
        with ``layout="BTHK"``. Same dtype and device as ``q``. ``None`` is the zero state.
    output_final_state : bool, keyword-only, default False
        Also return ``S_T = S_0 + sum_i v_i k_i^T``, shape ``(..., d_v, d_k)`` (``[B, H, d_v,
        d_k]`` with ``layout="BTHK"``), a new tensor. With ``causal=False`` it is the state that
        every query read.

    Returns
    -------
    torch.Tensor, shape ``(..., T, d_v)`` (``[B, T, H, d_v]`` with ``layout="BTHK"``)
        The three forms agree up to rounding. Over an empty set of keys (``T = 0``) the sum
        is empty, so every output is ``S_0 q_t`` (zero by default). Integer inputs give the exact
        integer result in their dtype: the worst-case entry ``d_k max|q| (max|S_0| + T max|k|
        max|v|)`` is bounded first (exactly, in Python integers) and, when it exceeds the dtype,
        the forms run in int64 and the result is range-checked before the cast back; a result
        outside the dtype, or a bound beyond int64, raises (integer sums never wrap silently).
    tuple of two torch.Tensor
        ``(output, final_state)`` when ``output_final_state`` is True.

    Raises
    ------
    ValueError
        For an unknown ``form`` or ``layout`` (the message lists the allowed ones),
        ``chunk_size < 1``, ``causal=False`` with a non-parallel form, a ``causal`` or
        ``output_final_state`` that is not a boolean, mismatched shapes, dtypes or devices
        (named; ``layout="BTHK"`` needs 4-D tensors; ``initial_state`` must have the state's
        shape and ``q``'s dtype and device), a dtype other than float32, float64 or an integer
        type (float16 and bfloat16 are refused, naming the supported dtypes), a NaN or infinity
        in ``q``, ``k``, ``v`` or ``initial_state`` (naming which), or an output or returned
        state beyond the dtype's range (for integer inputs: an exact result outside the
        dtype, or a worst-case bound beyond int64, which could wrap). A float32 result that
        overflows only in an intermediate sum is recomputed in float64 and cast back; one whose
        true value is beyond float32's range raises.

    References
    ----------
    Seed §3 ("Removing the softmax"). Katharopoulos et al. (2020), Transformers are RNNs, §3.2
    (without the feature map and normaliser). Chunkwise form as in Yang et al. (2024), Gated
    linear attention transformers with hardware-efficient training, §2. The ``[B, T, H, K]``
    layout and the ``initial_state`` / ``output_final_state`` arguments follow the interface of
    flash-linear-attention (Yang & Zhang, github.com/fla-org/flash-linear-attention), with the
    seed's state orientation and no query scaling.
    """
    if form not in LINEAR_ATTENTION_FORMS:
        raise ValueError(f"unknown form {form!r}; expected one of {LINEAR_ATTENTION_FORMS}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1; got {chunk_size!r}")
    chunk_size = int(chunk_size)
    output_final_state = as_bool(output_final_state, "output_final_state")
    _check_layout(layout, q, k, v)
    if layout == "BTHK":  # [B, T, H, d] -> [B, H, T, d]: the heads become batch axes
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def run(q, k, v, S0):
        if form == "parallel":
            out, S = _linear_attention_parallel(q, k, v, causal, S0)
            if output_final_state:  # S_T = S_0 + V^T K, summed once
                S = torch.einsum("...tv,...tk->...vk", v, k)
                S = S if S0 is None else S0 + S
            return out, S
        if form == "recurrent":
            return _linear_attention_recurrent(q, k, v, S0)
        return _linear_attention_chunked(q, k, v, chunk_size, S0)

    def run64(part):
        S0 = None if initial_state is None else initial_state.double()
        return lambda: run(q.double(), k.double(), v.double(), S0)[part]

    with load_capped_threads():  # the input checks too: their elementwise passes are parallel regions
        _check_qkv(q, k, v, causal, integers=True)
        if not causal and form != "parallel":
            raise ValueError(
                f"causal=False is only supported for form='parallel'; got form={form!r} "
                "(the recurrent and chunked forms are causal by construction)"
            )
        if initial_state is not None:
            _check_initial_state(initial_state, q, k, v)
        dtype = q.dtype
        if not dtype.is_floating_point and q.device.type != "meta":  # integers: exact or an error
            wide = _integer_dtype_for(q, k, v, initial_state)
            if wide != dtype:
                S0 = None if initial_state is None else initial_state.to(wide)
                out, S = run(q.to(wide), k.to(wide), v.to(wide), S0)
                out = _integer_cast_back(out, dtype, f"the linear attention output ({form} form)")
                if layout == "BTHK":
                    out = out.transpose(1, 2)
                if not output_final_state:
                    return out
                return out, _integer_cast_back(S, dtype, f"the final state S_T ({form} form)")
        out, S = run(q, k, v, initial_state)
        out = checked_result(out, f"the linear attention output ({form} form)", run64(0),
                             "rescale q, k or v")
        if layout == "BTHK":
            out = out.transpose(1, 2)  # [B, H, T, d_v] -> [B, T, H, d_v]
        if not output_final_state:
            return out
        S = checked_result(S, f"the final state S_T ({form} form)", run64(1),
                           "rescale k, v or the initial state")
        return out, S
