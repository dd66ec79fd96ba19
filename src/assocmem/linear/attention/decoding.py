"""Decoding one token at a time: a key-value cache against the recurrent state, with exact costs.

Seed §2-§3 contrasts what the two attentions must keep to produce the next token. Causal softmax
attention needs every earlier pair, so :class:`KVCacheDecoder` holds ``t (d_k + d_v)`` numbers
after ``t`` tokens and does ``t (d_k + d_v)`` multiply-accumulates at step ``t`` (the key-value
cache; Vaswani et al. 2017). Causal linear attention needs only its state ``S_t``, so
:class:`LinearAttentionDecoder` holds ``d_v d_k`` numbers and does ``2 d_v d_k``
multiply-accumulates per step whatever ``t`` (Katharopoulos et al. 2020, §3.4; Schlag et al. 2021).
Both count what they hold and do exactly; :func:`decode` feeds a whole sequence through one and
records those counts per step. Chapter 01 ("From attention to a matrix") checks the counts;
:mod:`assocmem.linear.timing` times the decoders.

References
----------
Seed 000 ("How much can a matrix remember?"), §2-§3.
Vaswani, A., et al. (2017). Attention is all you need. NeurIPS.
Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs: fast
autoregressive transformers with linear attention. ICML.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Kohonen, T. (1972). Correlation matrix memories; Anderson, J. A. (1972). A simple neural network
generating an interactive memory.
"""

from __future__ import annotations

import torch

from assocmem._checks import positive_int
from assocmem.devices import resolve_device
from assocmem.dtypes import cast_checked, check_float_dtype, resolve_dtype
from assocmem.linear._args import overflow_error
from assocmem.linear.attention._common import _check_finite, _check_qkv, _check_scale
from assocmem.linear.attention.softmax import _scores, _weighted_values

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "KVCacheDecoder",
    "LinearAttentionDecoder",
    "decode",
]


def _same_device(a: torch.device, b: torch.device) -> bool:
    """Same device, where an index of ``None`` ("the current one") matches any index."""
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


class _Decoder:
    """Shared bookkeeping of the step-by-step decoders.

    Every step is atomic: :meth:`step` checks the token, computes the output and the new state
    without touching the decoder, and only then assigns; if anything raises, the decoder is
    exactly as it was.
    """

    def __init__(self, d_k: int, d_v: int, dtype: torch.dtype, device) -> None:
        self.d_k, self.d_v = positive_int("d_k", d_k), positive_int("d_v", d_v)
        if isinstance(dtype, torch.dtype) and not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point dtype (torch.float32 or torch.float64); got {dtype}")
        self.dtype = check_float_dtype(dtype)  # float16/bfloat16 refused, naming the supported dtypes
        self.device = torch.device("cpu") if device is None else resolve_device(device, dtype=self.dtype)
        self.reset()

    def reset(self):
        """Forget every token seen; the decoder is as new."""
        self.t = 0  # tokens consumed so far
        self.batch_shape: tuple[int, ...] | None = None
        self.last_step_macs = 0  # multiply-accumulates of the latest step, per sequence
        self.total_macs = 0  # multiply-accumulates since reset, per sequence
        self._reset_state()
        return self

    def _check_token(self, q, k, v) -> None:
        for name, x in (("q", q), ("k", k), ("v", v)):
            if not isinstance(x, torch.Tensor):
                raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
        shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        if (min(q.ndim, k.ndim, v.ndim) < 1 or q.shape[-1] != self.d_k or k.shape[-1] != self.d_k
                or v.shape[-1] != self.d_v):
            raise ValueError(f"expected q, k of shape (..., {self.d_k}) and v of shape (..., {self.d_v}); got {shapes}")
        if not (q.shape[:-1] == k.shape[:-1] == v.shape[:-1]):
            raise ValueError(f"q, k, v must share their leading (batch) shape; got {shapes}")
        if self.batch_shape is not None and q.shape[:-1] != self.batch_shape:
            raise ValueError(f"batch shape changed from {self.batch_shape} to {tuple(q.shape[:-1])}; call reset()")
        if not (q.dtype == k.dtype == v.dtype == self.dtype):
            raise ValueError(f"q, k, v must have the decoder's dtype {self.dtype}; got {q.dtype}, {k.dtype}, {v.dtype}")
        for x in (q, k, v):
            if not _same_device(x.device, self.device):
                raise ValueError(f"q, k, v must be on the decoder's device {self.device}; got "
                                 f"{q.device}, {k.device}, {v.device}")
        _check_finite((("q", q), ("k", k), ("v", v)))

    def step(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Consume token ``t``'s query, key and value; return its output ``o_t``.

        Parameters
        ----------
        q, k : torch.Tensor, shape ``(..., d_k)``
        v : torch.Tensor, shape ``(..., d_v)``
            One token (any leading batch or head dimensions, fixed between resets), in the
            decoder's dtype and on its device.

        Returns
        -------
        torch.Tensor, shape ``(..., d_v)``

        Raises
        ------
        ValueError
            On a non-tensor, wrong trailing dimensions, mismatched or changed batch shapes, a
            wrong dtype or device, a NaN or infinity in ``q``, ``k`` or ``v`` (naming which),
            or a state or output beyond the dtype's range. The decoder is then exactly as it
            was before the call (same ``t``, counts and state).
        """
        self._check_token(q, k, v)
        batch_shape = tuple(q.shape[:-1]) if self.batch_shape is None else self.batch_shape
        out, updates = self._step(q, k, v, batch_shape)  # computes; changes nothing visible
        # Commit: plain assignments that cannot fail.
        self.batch_shape = batch_shape
        for name, value in updates.items():
            setattr(self, name, value)
        self.t += 1
        self.total_macs += self.last_step_macs
        return out

    @property
    def numbers_held(self) -> int:
        """How many numbers the decoder must keep to produce the next output (all batch entries)."""
        raise NotImplementedError


class KVCacheDecoder(_Decoder):
    """Causal softmax attention, one token at a time, with a key-value cache.

    Step ``t`` (counting from 1) appends ``(k_t, v_t)`` to the cache and returns
    ``o_t = sum_{i<=t} softmax_i(scale q_t^T k_i) v_i``. The query sits inside every exponential
    and in the normaliser, so nothing can be summed ahead of time: every pair is kept (seed §2).

    Parameters
    ----------
    d_k, d_v : int
        Key and value dimensions.
    scale : float or None, default None
        Multiplier of the scores; ``None`` is 1, as in the seed.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        float32 or float64 (float16 and bfloat16 are refused).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    capacity : int, default 64
        Initial number of cache slots; the buffers double when full (amortised O(1) appends), as
        a serving system that preallocates would.

    Attributes
    ----------
    t : int
        Tokens consumed.
    last_step_macs, total_macs : int
        Multiply-accumulates per sequence in the latest step and since reset: ``t d_k`` for the
        scores and ``t d_v`` for the weighted sum of values at step ``t``. The ``O(t)``
        exponentials and divisions are not counted.

    Raises
    ------
    ValueError
        If ``d_k``, ``d_v`` or ``capacity`` is not a positive integer, ``scale`` is not a finite
        real number (a boolean or a string is refused), ``dtype`` is not float32 or float64
        (float16 and bfloat16 are refused, naming the supported dtypes), or ``device`` names no
        device.

    Examples
    --------
    >>> dec = KVCacheDecoder(4, 3)
    >>> key = torch.ones(4, dtype=torch.float64)
    >>> o = dec.step(key, key, torch.ones(3, dtype=torch.float64))  # query, key, value
    >>> dec.numbers_held  # one token: d_k + d_v
    7

    References
    ----------
    Seed §2 ("This store is the key-value cache, and it grows with t"). Vaswani et al. (2017).
    """

    def __init__(self, d_k: int, d_v: int, *, scale: float | None = None, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None, capacity: int = 64) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        self.capacity0 = positive_int("capacity", capacity)
        self.scale = _check_scale(scale)
        super().__init__(d_k, d_v, dtype, device)

    def _reset_state(self) -> None:
        self._K = self._V = None

    def _buffers(self, batch_shape, cap: int) -> tuple[torch.Tensor, torch.Tensor]:
        """New cache buffers of ``cap`` slots holding a copy of the first ``t`` cached pairs."""
        K = torch.empty(*batch_shape, cap, self.d_k, dtype=self.dtype, device=self.device)  # (..., cap, d_k)
        V = torch.empty(*batch_shape, cap, self.d_v, dtype=self.dtype, device=self.device)  # (..., cap, d_v)
        if self._K is not None:
            K[..., : self.t, :] = self._K[..., : self.t, :]
            V[..., : self.t, :] = self._V[..., : self.t, :]
        return K, V

    def _step(self, q, k, v, batch_shape):
        t = self.t
        K, V = self._K, self._V
        if K is None:
            K, V = self._buffers(batch_shape, self.capacity0)
        elif t == K.shape[-2]:
            K, V = self._buffers(batch_shape, 2 * t)  # full: double the buffers (kept only on success)
        # Slot t is a spare slot until the step commits t + 1: the cached state, the first t
        # slots, is not touched if anything below raises.
        K[..., t, :] = k
        V[..., t, :] = v
        Kt, Vt = K[..., : t + 1, :], V[..., : t + 1, :]  # (..., t+1, d_k), (..., t+1, d_v)
        scores = _scores(Kt, q.unsqueeze(-1), self.scale).squeeze(-1)  # scale k_i^T q_t, i <= t, (..., t+1)
        w = torch.softmax(scores, dim=-1)  # (..., t+1); float64 if the scores overflowed the dtype
        out = _weighted_values(w.unsqueeze(-2), Vt).squeeze(-2)  # sum_i w_i v_i, (..., d_v)
        return out, {"_K": K, "_V": V, "last_step_macs": (t + 1) * (self.d_k + self.d_v)}

    @property
    def numbers_held(self) -> int:
        """Entries of the cached keys and values, ``t (d_k + d_v)`` per sequence (not the spare slots)."""
        if self._K is None:
            return 0
        return self._K[..., : self.t, :].numel() + self._V[..., : self.t, :].numel()

    @property
    def numbers_allocated(self) -> int:
        """Entries of the cache buffers including unused slots (at most twice :attr:`numbers_held`)."""
        return 0 if self._K is None else self._K.numel() + self._V.numel()


class LinearAttentionDecoder(_Decoder):
    """Causal linear attention, one token at a time: the recurrent state ``S_t = S_{t-1} + v_t k_t^T``.

    Step ``t`` writes ``v_t k_t^T`` into ``S`` (shape ``(..., d_v, d_k)``) and returns
    ``o_t = S_t q_t``, equal to ``linear_attention(q, k, v)[..., t - 1, :]``. The pair is then
    discarded: the state is all the decoder keeps (seed §3).

    Parameters
    ----------
    d_k, d_v : int
        Key and value dimensions.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        float32 or float64 (float16 and bfloat16 are refused).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Attributes
    ----------
    t : int
        Tokens consumed.
    S : torch.Tensor or None, shape ``(..., d_v, d_k)``
        The state (``None`` before the first token, whose shape fixes the batch dimensions).
    last_step_macs, total_macs : int
        Multiply-accumulates per sequence: ``d_v d_k`` to write the outer product and ``d_v d_k``
        to read ``S q``, whatever ``t``.

    Raises
    ------
    ValueError
        If ``d_k`` or ``d_v`` is not a positive integer, ``dtype`` is not float32 or float64
        (float16 and bfloat16 are refused, naming the supported dtypes), or ``device`` names no
        device.

    References
    ----------
    Seed §3 ("S_t is updated by adding one term per step"). Katharopoulos et al. (2020) §3.4;
    Schlag, Irie & Schmidhuber (2021) (fast weights); Kohonen (1972), Anderson (1972)
    (correlation matrix memory).
    """

    def __init__(self, d_k: int, d_v: int, *, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype, device)

    def _reset_state(self) -> None:
        self.S = None

    def _step(self, q, k, v, batch_shape):
        S = self.S
        if S is None:
            S = torch.zeros(*batch_shape, self.d_v, self.d_k, dtype=self.dtype, device=self.device)
        S = S + v.unsqueeze(-1) * k.unsqueeze(-2)  # write v_t k_t^T into a new tensor, (..., d_v, d_k)
        if not bool(torch.isfinite(S).all()):
            raise overflow_error("the state S_t = S_{t-1} + v_t k_t^T", self.dtype,
                                 "rescale k or v (the decoder is unchanged)")
        out = (S @ q.unsqueeze(-1)).squeeze(-1)  # read S_t q_t, (..., d_v)
        if not bool(torch.isfinite(out).all()):  # only the product overflowed: redo it in float64
            if self.dtype == torch.float64:
                raise overflow_error("the output S_t q_t", self.dtype, "rescale q (the decoder is unchanged)")
            out = cast_checked((S.double() @ q.double().unsqueeze(-1)).squeeze(-1), self.dtype, "the output S_t q_t")
        return out, {"S": S, "last_step_macs": 2 * self.d_v * self.d_k}

    @property
    def numbers_held(self) -> int:
        """Entries of the state, ``d_v d_k`` per sequence, whatever ``t``."""
        return 0 if self.S is None else self.S.numel()


def decode(decoder: _Decoder, q: torch.Tensor, k: torch.Tensor,
           v: torch.Tensor) -> tuple[torch.Tensor, pd.DataFrame]:
    """Feed a whole sequence through a step decoder, one token at a time, and record its costs.

    Parameters
    ----------
    decoder : KVCacheDecoder or LinearAttentionDecoder
        Used as is (call ``reset()`` first for a fresh start).
    q, k : torch.Tensor, shape ``(..., T, d_k)``
    v : torch.Tensor, shape ``(..., T, d_v)``

    Returns
    -------
    outputs : torch.Tensor, shape ``(..., T, d_v)``
        ``o_1, ..., o_T``.
    record : pandas.DataFrame
        One row per step with columns ``t`` (tokens consumed, 1..T), ``numbers_held`` (after the
        step, all batch entries) and ``step_macs`` (per sequence).

    Raises
    ------
    ValueError
        If ``decoder`` is not one of the step decoders; on shape, dtype or device mismatches, a
        NaN or infinity in ``q``, ``k`` or ``v``, or an overflow (from :meth:`step`). The whole
        sequence is atomic: if any step raises, the decoder is restored to its state before
        the call.
    """
    import pandas as pd

    if not isinstance(decoder, _Decoder):
        raise ValueError(f"decoder must be a KVCacheDecoder or a LinearAttentionDecoder; got {type(decoder).__name__}")
    _check_qkv(q, k, v, causal=True)
    snapshot = dict(vars(decoder))  # steps never modify the committed tensors in place
    outs, rows = [], []
    try:
        for t in range(k.shape[-2]):
            outs.append(decoder.step(q[..., t, :], k[..., t, :], v[..., t, :]))
            rows.append({"t": decoder.t, "numbers_held": decoder.numbers_held, "step_macs": decoder.last_step_macs})
    except BaseException:
        vars(decoder).clear()
        vars(decoder).update(snapshot)
        raise
    out = torch.stack(outs, dim=-2) if outs else q.new_zeros(*q.shape[:-2], 0, v.shape[-1])
    return out, pd.DataFrame(rows, columns=["t", "numbers_held", "step_macs"])
