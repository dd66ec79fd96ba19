"""Softmax attention in the seed's conventions, with its causal mask and its weights.

``o_t = sum_{i<=t} softmax_i(q_t^T k_i) v_i`` (Vaswani et al. 2017, §3.2), *without* the
``1/sqrt(d_k)`` scaling by default, as in the seed (§2): :func:`softmax_attention` computes it,
:func:`softmax_weights` returns the weights it averages the values with, and :func:`causal_mask`
is the mask ``i <= t`` that makes it causal (also used by the chunked form of linear attention).
Tensors are ``(..., T, d)``: time on the second-to-last axis, features last, any leading batch or
head axes. Chapter 01 ("From attention to a matrix") uses it.

References
----------
Seed 000 ("How much can a matrix remember?"), §2.
Vaswani, A., et al. (2017). Attention is all you need. NeurIPS.
"""

from __future__ import annotations

import torch

from assocmem.linear.attention._common import _check_qkv

__all__ = [
    "causal_mask",
    "softmax_attention",
    "softmax_weights",
]


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
    weights = _softmax_weights(q, k, causal, scale)  # (..., T_q, T)
    return weights @ v  # (..., T_q, d_v)


def _softmax_weights(q, k, causal: bool, scale: float | None) -> torch.Tensor:
    """Row-wise softmax of the (masked, scaled) scores; no input checks."""
    scale = 1.0 if scale is None else float(scale)
    scores = scale * (q @ k.transpose(-2, -1))  # (..., T_q, T)
    if causal:
        T = k.shape[-2]
        scores = scores.masked_fill(~causal_mask(T, device=scores.device), float("-inf"))
    return torch.softmax(scores, dim=-1)  # (..., T_q, T)


def softmax_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    causal: bool = True,
    scale: float | None = None,
) -> torch.Tensor:
    """The attention weights ``w_{t,i} = exp(s_{t,i}) / sum_{j<=t} exp(s_{t,j})``, ``s = scale q_t^T k_i``.

    These are the weights :func:`softmax_attention` averages the values with; masked entries
    (``i > t`` when ``causal``) are exactly zero.

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T_q, d_k)``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``
        Keys, same dtype and batch dimensions as ``q``.
    causal : bool, default True
        If True, row ``t`` has weight only on ``i <= t`` (requires ``T_q == T``).
    scale : float or None, default None
        Multiplier of the scores; ``None`` means 1 (the seed's convention).

    Returns
    -------
    torch.Tensor, shape ``(..., T_q, T)``
        Nonnegative; each row sums to one up to rounding.

    Raises
    ------
    ValueError
        On mismatched shapes or dtypes.

    References
    ----------
    Seed §2 (the softmax: exponentiate, divide by the total).
    """
    _check_qkv(q, k, k, causal)  # k stands in for v: only q-k compatibility is checked
    return _softmax_weights(q, k, causal, scale)
