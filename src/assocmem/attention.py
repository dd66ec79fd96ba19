"""Softmax attention and unnormalised causal linear attention, in the seed's conventions.

* :func:`softmax_attention`: ``o_t = sum_{i<=t} softmax_i(q_t^T k_i) v_i`` (Vaswani et al. 2017),
  *without* the ``1/sqrt(d_k)`` scaling by default, as in the seed (§2).
* :func:`linear_attention`: the softmax replaced by the plain dot product and the normaliser
  dropped (seed §3; Katharopoulos et al. 2020 without feature map or denominator):
  ``o_t = sum_{i<=t} v_i (k_i^T q_t) = S_t q_t`` with ``S_t = sum_{i<=t} v_i k_i^T`` of shape
  ``(d_v, d_k)``. Three forms compute the same thing and are tested equal:

  - ``"parallel"``: ``(Q K^T ∘ M) V`` with the causal mask ``M`` (quadratic in ``T``);
  - ``"recurrent"``: the reference loop carrying ``S_t`` (the seed's recurrent network);
  - ``"chunked"``: causal-masked ``(Q K^T) V`` inside each chunk plus ``Q`` times the state carried
    over from earlier chunks (the form fast kernels use).

Tensors are ``(..., T, d)``: time on the second-to-last axis, features last, any leading batch or
head axes. Libraries such as flash-linear-attention store the state as ``(d_k, d_v)`` (the
transpose of the seed's ``S``) and scale queries by ``1/sqrt(d_k)``; we follow the seed.

References
----------
Vaswani, A., et al. (2017). Attention is all you need. NeurIPS.
Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs: fast
autoregressive transformers with linear attention. ICML.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
"""

from __future__ import annotations

import numbers

import torch

__all__ = ["causal_mask", "softmax_attention", "linear_attention", "LINEAR_ATTENTION_FORMS"]

#: The forms accepted by :func:`linear_attention`.
LINEAR_ATTENTION_FORMS = ("parallel", "recurrent", "chunked")


def causal_mask(T: int, device: str | torch.device | None = None) -> torch.Tensor:
    """Lower-triangular boolean mask ``M[t, i] = (i <= t)``.

    Parameters
    ----------
    T : int
        Sequence length.
    device : str, torch.device or None
        Device of the mask (``None``: torch's default device).

    Returns
    -------
    torch.Tensor, shape ``(T, T)``, dtype bool
        True where query position ``t`` may see key position ``i``.

    Raises
    ------
    ValueError
        If ``T`` is negative.

    References
    ----------
    Seed §2: "the sum runs over ``i <= t``".
    """
    if T < 0:
        raise ValueError(f"T must be non-negative; got {T}")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    """Shared shape checks; messages name the offending shapes."""
    shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
        if x.ndim < 2:
            raise ValueError(f"q, k, v must have shape (..., T, d); got {shapes}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share the key dimension d_k (last axis); got {shapes}")
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"k and v must have the same leading shape (..., T); got {shapes}")
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q, k, v must have the same batch dimensions (...); got {shapes}")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal attention needs as many queries as keys (same T); got {shapes}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(
            f"q, k, v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype} ({shapes})"
        )


def softmax_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = True,
    scale: float | None = None,
) -> torch.Tensor:
    """Softmax attention, ``o_t = sum_i softmax_i(scale * q_t^T k_i) v_i``.

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T_q, d_k)``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``
        Keys.
    v : torch.Tensor, shape ``(..., T, d_v)``
        Values. ``q``, ``k``, ``v`` share dtype and batch dimensions.
    causal : bool, default True
        If True, position ``t`` attends only to ``i <= t`` (requires ``T_q == T``).
    scale : float or None, default None
        Multiplier of the scores. ``None`` means 1, following the seed, which omits the
        ``1/sqrt(d_k)`` that libraries (and Vaswani et al.) use by default; pass
        ``scale=d_k ** -0.5`` to get theirs.

    Returns
    -------
    torch.Tensor, shape ``(..., T_q, d_v)``

    Raises
    ------
    ValueError
        On mismatched shapes or dtypes (the message names the shapes).

    Notes
    -----
    Numerically stable: masked scores are set to ``-inf`` and :func:`torch.softmax` subtracts
    the row maximum. Under the causal mask every row keeps its diagonal, so no row is empty.

    References
    ----------
    Seed §2. Vaswani et al. (2017), Attention is all you need.
    """
    _check_qkv(q, k, v, causal)
    scale = 1.0 if scale is None else float(scale)
    scores = scale * (q @ k.transpose(-2, -1))  # (..., T_q, T)
    if causal:
        T = k.shape[-2]
        scores = scores.masked_fill(~causal_mask(T, device=scores.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T)
    return weights @ v  # (..., T_q, d_v)


def _linear_attention_parallel(q, k, v, causal: bool) -> torch.Tensor:
    """``(Q K^T ∘ M) V``: the quadratic form."""
    scores = q @ k.transpose(-2, -1)  # (..., T_q, T)
    if causal:
        scores = scores * causal_mask(k.shape[-2], device=scores.device)  # zero out i > t
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
        The three forms agree up to rounding.

    Raises
    ------
    ValueError
        For an unknown ``form`` (the message lists the allowed ones), ``chunk_size < 1``,
        ``causal=False`` with a non-parallel form, or mismatched shapes/dtypes (named).

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
    if not causal and form != "parallel":
        raise ValueError(
            f"causal=False is only supported for form='parallel'; got form={form!r} "
            "(the recurrent and chunked forms are causal by construction)"
        )
    _check_qkv(q, k, v, causal)
    chunk_size = int(chunk_size)
    if form == "parallel":
        return _linear_attention_parallel(q, k, v, causal)
    if form == "recurrent":
        return _linear_attention_recurrent(q, k, v)
    return _linear_attention_chunked(q, k, v, chunk_size)
