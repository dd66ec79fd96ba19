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

import numbers

import torch

from assocmem.linear.attention._common import _check_qkv

__all__ = [
    "KVCacheDecoder",
    "LinearAttentionDecoder",
    "decode",
]


class _Decoder:
    """Shared bookkeeping of the step-by-step decoders."""

    def __init__(self, d_k: int, d_v: int, dtype: torch.dtype, device) -> None:
        for name, d in (("d_k", d_k), ("d_v", d_v)):
            if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
                raise ValueError(f"{name} must be a positive integer; got {d!r}")
        if not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point dtype; got {dtype}")
        self.d_k, self.d_v, self.dtype = int(d_k), int(d_v), dtype
        self.device = torch.device(device) if device is not None else torch.device("cpu")
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
        shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        if q.ndim < 1 or q.shape[-1] != self.d_k or k.shape[-1] != self.d_k or v.shape[-1] != self.d_v:
            raise ValueError(f"expected q, k of shape (..., {self.d_k}) and v of shape (..., {self.d_v}); got {shapes}")
        if not (q.shape[:-1] == k.shape[:-1] == v.shape[:-1]):
            raise ValueError(f"q, k, v must share their leading (batch) shape; got {shapes}")
        if self.batch_shape is not None and q.shape[:-1] != self.batch_shape:
            raise ValueError(f"batch shape changed from {self.batch_shape} to {tuple(q.shape[:-1])}; call reset()")
        if not (q.dtype == k.dtype == v.dtype == self.dtype):
            raise ValueError(f"q, k, v must have the decoder's dtype {self.dtype}; got {q.dtype}, {k.dtype}, {v.dtype}")

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
            On wrong trailing dimensions, mismatched or changed batch shapes, or a wrong dtype.
        """
        self._check_token(q, k, v)
        if self.batch_shape is None:
            self.batch_shape = tuple(q.shape[:-1])
            self._allocate()
        out = self._step(q, k, v)
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
    dtype : torch.dtype, default float64
    device : str or torch.device, default "cpu"
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
        If ``d_k``, ``d_v`` or ``capacity`` is not a positive integer, or ``dtype`` is not floating.

    Examples
    --------
    >>> dec = KVCacheDecoder(4, 3)
    >>> o = dec.step(torch.ones(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64),
    ...              torch.ones(3, dtype=torch.float64))
    >>> dec.numbers_held  # one token: d_k + d_v
    7

    References
    ----------
    Seed §2 ("This store is the key-value cache, and it grows with t"). Vaswani et al. (2017).
    """

    def __init__(self, d_k: int, d_v: int, *, scale: float | None = None, dtype: torch.dtype = torch.float64,
                 device: str | torch.device = "cpu", capacity: int = 64) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 1:
            raise ValueError(f"capacity must be a positive integer; got {capacity!r}")
        self.capacity0 = int(capacity)
        self.scale = 1.0 if scale is None else float(scale)
        super().__init__(d_k, d_v, dtype, device)

    def _reset_state(self) -> None:
        self._K = self._V = None

    def _allocate(self, capacity: int | None = None) -> None:
        cap = self.capacity0 if capacity is None else capacity
        K = torch.empty(*self.batch_shape, cap, self.d_k, dtype=self.dtype, device=self.device)  # (..., cap, d_k)
        V = torch.empty(*self.batch_shape, cap, self.d_v, dtype=self.dtype, device=self.device)  # (..., cap, d_v)
        if self._K is not None:
            K[..., : self.t, :] = self._K[..., : self.t, :]
            V[..., : self.t, :] = self._V[..., : self.t, :]
        self._K, self._V = K, V

    def _step(self, q, k, v):
        t = self.t
        if t == self._K.shape[-2]:
            self._allocate(2 * t)  # full: double the buffers
        self._K[..., t, :] = k
        self._V[..., t, :] = v
        K, V = self._K[..., : t + 1, :], self._V[..., : t + 1, :]  # (..., t+1, d_k), (..., t+1, d_v)
        scores = (K @ q.unsqueeze(-1)).squeeze(-1)  # k_i^T q_t for i <= t, (..., t+1)
        w = torch.softmax(self.scale * scores, dim=-1)  # (..., t+1)
        self.last_step_macs = (t + 1) * (self.d_k + self.d_v)
        return (w.unsqueeze(-2) @ V).squeeze(-2)  # sum_i w_i v_i, (..., d_v)

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
    dtype : torch.dtype, default float64
    device : str or torch.device, default "cpu"

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
        If ``d_k`` or ``d_v`` is not a positive integer, or ``dtype`` is not floating.

    References
    ----------
    Seed §3 ("S_t is updated by adding one term per step"). Katharopoulos et al. (2020) §3.4;
    Schlag, Irie & Schmidhuber (2021) (fast weights); Kohonen (1972), Anderson (1972)
    (correlation matrix memory).
    """

    def __init__(self, d_k: int, d_v: int, *, dtype: torch.dtype = torch.float64,
                 device: str | torch.device = "cpu") -> None:
        super().__init__(d_k, d_v, dtype, device)

    def _reset_state(self) -> None:
        self.S = None

    def _allocate(self) -> None:
        self.S = torch.zeros(*self.batch_shape, self.d_v, self.d_k, dtype=self.dtype, device=self.device)

    def _step(self, q, k, v):
        self.S += v.unsqueeze(-1) * k.unsqueeze(-2)  # write v_t k_t^T, (..., d_v, d_k)
        self.last_step_macs = 2 * self.d_v * self.d_k
        return (self.S @ q.unsqueeze(-1)).squeeze(-1)  # read S_t q_t, (..., d_v)

    @property
    def numbers_held(self) -> int:
        """Entries of the state, ``d_v d_k`` per sequence, whatever ``t``."""
        return 0 if self.S is None else self.S.numel()


def decode(decoder: _Decoder, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
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
        On shape or dtype mismatches (from :meth:`step`).
    """
    import pandas as pd

    _check_qkv(q, k, v, causal=True)
    outs, rows = [], []
    for t in range(k.shape[-2]):
        outs.append(decoder.step(q[..., t, :], k[..., t, :], v[..., t, :]))
        rows.append({"t": decoder.t, "numbers_held": decoder.numbers_held, "step_macs": decoder.last_step_macs})
    out = torch.stack(outs, dim=-2) if outs else q.new_zeros(*q.shape[:-2], 0, v.shape[-1])
    return out, pd.DataFrame(rows, columns=["t", "numbers_held", "step_macs"])
