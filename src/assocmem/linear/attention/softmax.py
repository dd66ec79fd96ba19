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

from assocmem._checks import as_int
from assocmem.linear._args import checked_result, overflow_error
from assocmem.linear.attention._common import _check_qkv, _check_scale

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
        If ``T`` is not an integer (a boolean, ``2.5`` or a string) or is negative.

    References
    ----------
    Seed §2: "the sum runs over ``i <= t``".
    """
    T = as_int(T, "T")
    if T < 0:
        raise ValueError(f"T must be non-negative; got {T}")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def _scores(a: torch.Tensor, b: torch.Tensor, scale: float, visible: torch.Tensor | None = None) -> torch.Tensor:
    """``scale * (a @ b)``, finite wherever ``visible`` (everywhere when ``None``).

    Finite inputs can still give scores beyond the dtype's range (float32 above ``3.4e38``); a
    softmax of ``inf`` scores is ``nan``. Such scores are recomputed in float64 (the softmax is
    then taken in float64 too); if even float64 overflows, the scores cannot be represented and a
    :class:`ValueError` says so.
    """
    scores = scale * (a @ b)
    ok = torch.isfinite(scores) if visible is None else torch.isfinite(scores) | ~visible
    if bool(ok.all()):
        return scores
    if scores.dtype != torch.float64:
        scores = scale * (a.double() @ b.double())
        ok = torch.isfinite(scores) if visible is None else torch.isfinite(scores) | ~visible
        if bool(ok.all()):
            return scores
    raise overflow_error("the attention scores scale * q^T k", torch.float64,
                         "rescale q, k or scale (a softmax of infinite scores is undefined)")


def _weighted_values(w: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``w @ v`` for softmax weights ``w`` (cast to ``v``'s dtype), checked for overflow.

    A convex combination of finite values is finite in exact arithmetic, but partial sums of
    values near the dtype's largest number can round past it; then it is recomputed in float64.
    """
    w = w.to(v.dtype)
    return checked_result(w @ v, "the attention output (a weighted mean of v)",
                          lambda: w.double() @ v.double(), "rescale v")


def _check_keys_exist(q: torch.Tensor, k: torch.Tensor) -> None:
    if k.shape[-2] == 0 and q.shape[-2] > 0:
        raise ValueError(
            f"softmax attention over an empty set of keys is undefined (k has T = 0 rows, q has "
            f"{q.shape[-2]}): a softmax over nothing has no weights; got k shape {tuple(k.shape)}"
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
        On mismatched shapes, dtypes or devices (the message names the shapes); a dtype other
        than float32 or float64 (float16 and bfloat16 are refused, naming the supported ones);
        a NaN or infinity in ``q``, ``k`` or ``v`` (naming which); a ``scale`` that is not a
        finite real number (a boolean or a string is refused); a ``causal`` that is not a
        boolean; an empty set of keys (``T = 0`` with ``T_q > 0``: a softmax over nothing is
        undefined); or scores ``scale * q^T k`` beyond even float64's range.

    Notes
    -----
    Numerically stable: masked scores are set to ``-inf`` and :func:`torch.softmax` subtracts
    the row maximum. Under the causal mask every row keeps its diagonal, so no row is empty.
    Scores that overflow float32 although ``q`` and ``k`` are finite are recomputed, and the
    softmax taken, in float64; the weights are then cast back.

    References
    ----------
    Seed §2. Vaswani et al. (2017), Attention is all you need.
    """
    _check_qkv(q, k, v, causal)
    scale = _check_scale(scale)
    _check_keys_exist(q, k)
    weights = _softmax_weights(q, k, causal, scale)  # (..., T_q, T)
    return _weighted_values(weights, v)  # (..., T_q, d_v)


def _softmax_weights(q, k, causal: bool, scale: float) -> torch.Tensor:
    """Row-wise softmax of the (masked, scaled) scores, in ``q``'s dtype; inputs already checked."""
    visible = causal_mask(k.shape[-2], device=q.device) if causal else None
    scores = _scores(q, k.transpose(-2, -1), scale, visible)  # (..., T_q, T), float64 if q's dtype overflowed
    if causal:
        scores = scores.masked_fill(~visible, float("-inf"))
    return torch.softmax(scores, dim=-1).to(q.dtype)  # (..., T_q, T)


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
        On mismatched shapes, dtypes or devices; a dtype other than float32 or float64; a NaN
        or infinity in ``q`` or ``k``; a ``scale`` that is not a finite real number; a
        ``causal`` that is not a boolean; an empty set of keys (``T = 0`` with ``T_q > 0``); or
        scores beyond even float64's range, as :func:`softmax_attention`.

    References
    ----------
    Seed §2 (the softmax: exponentiate, divide by the total).
    """
    # k stands in for v: only q-k compatibility is checked
    _check_qkv(q, k, k, causal, names=("q", "k", "k"))
    scale = _check_scale(scale)
    _check_keys_exist(q, k)
    return _softmax_weights(q, k, causal, scale)
