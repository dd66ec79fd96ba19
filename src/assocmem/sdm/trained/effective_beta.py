"""Effective ``beta`` of attention heads: the maximum-input heuristic against a fitted slope.

Bricken & Pehlevan (2021, App. A.2) give GPT-2, which does not L2-normalise queries and keys,
an "effective beta" per head: the largest softmax input observed over a set of prompts. Seed 002
(claim C8) notes that this is a maximum, not a fitted temperature. Two readings of a head's
``beta`` are computed here from the same forward pass:

* :func:`max_softmax_input` — the App. A.2 heuristic: the largest score ``s_ij`` per head
  (over queries and the keys each may see);
* :func:`log_linear_beta` — the paper's own method for ``beta`` (Eq. 10, a log-linear
  regression of the weight on a similarity ``x``) applied to the head's weights: within each
  query, ``log w_ij = c_i + beta x_ij``; the pooled within-query least-squares slope over all
  queries is the fitted ``beta`` and its ``R^2`` says how well one temperature describes the
  head. With ``x`` the cosine of the projected query and key in a QK-norm head the slope is the
  learned ``beta`` exactly; with ``x = 1 - 2 dv / n`` (the Hamming distance of the inputs) it is
  Eq. 10's variable.

For a Hugging Face GPT-2 (:mod:`transformers`), :func:`gpt2_attention_inputs` captures each
layer's queries and keys with a forward hook on ``attn.c_attn`` and rebuilds the causal scores
``q k^T / sqrt(d_head)``; :func:`gpt2_effective_betas` tabulates both readings per layer and
head, with ``x`` the query-key cosine. :func:`load_gpt2` loads named weights from the local cache
only (nothing is downloaded). Source: seed 002, claim C8 and "Corrections" (the ``[3, 71]``,
mostly ``[3, 12]``, of App. A.2, Fig. 5). Chapter 37.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from assocmem.sdm.trained._common import real_array

if TYPE_CHECKING:
    from transformers import GPT2LMHeadModel

    from assocmem._typing import ArrayLike

__all__ = [
    "max_softmax_input",
    "log_linear_beta",
    "gpt2_attention_inputs",
    "gpt2_effective_betas",
    "load_gpt2",
]


def _scores_array(scores, name: str = "scores") -> np.ndarray:
    arr = real_array(scores, name)
    if arr.ndim < 2:
        raise ValueError(f"{name} must have at least 2 dims (..., queries or heads, keys); "
                         f"got shape {arr.shape}")
    return arr


def _mask_array(mask, shape) -> np.ndarray:
    if mask is None:
        return np.ones(shape, dtype=bool)
    if isinstance(mask, torch.Tensor):
        mask = mask.detach().cpu().numpy()
    if np.asarray(mask).dtype != bool:
        raise ValueError(f"mask must be boolean, got dtype {np.asarray(mask).dtype}")
    mk = np.broadcast_to(np.asarray(mask, dtype=bool), shape) if np.ndim(mask) else None
    if mk is None or mk.shape != shape:
        raise ValueError(f"mask must broadcast to the scores' shape {shape}")
    return mk


def max_softmax_input(scores: ArrayLike, mask: ArrayLike | None = None) -> np.ndarray:
    """The App. A.2 heuristic: the largest softmax input, over all but the head axis.

    Parameters
    ----------
    scores : array_like or torch.Tensor, shape (..., H, K) or (B, H, Q, K)
        Softmax inputs with the head axis at position ``-2`` for 3-d input ``(B, H, K)``
        (one query per batch row) or ``1`` for 4-d input ``(B, H, Q, K)``.
    mask : array_like of bool, optional
        ``True`` where a score is a real softmax input (e.g. the causal mask); masked entries
        are ignored. Must be boolean and broadcast to ``scores``.

    Returns
    -------
    numpy.ndarray, shape (H,)
        Per head, the largest unmasked score (float64).

    Raises
    ------
    ValueError
        If ``scores`` has fewer than 3 or more than 4 dims or an empty axis, is complex or
        boolean, holds NaN or an infinity where unmasked, ``mask`` is not boolean, or some head
        has no unmasked score.
    """
    s = _scores_array(scores)
    if s.ndim not in (3, 4):
        raise ValueError(f"scores must be (B, H, K) or (B, H, Q, K); got shape {s.shape}")
    if s.size == 0:
        raise ValueError(f"scores must not have an empty axis; got shape {s.shape}")
    mk = _mask_array(mask, s.shape)
    if np.isnan(s[mk]).any():
        raise ValueError("scores hold NaN")
    if np.isinf(s[mk]).any():
        raise ValueError("scores hold an infinity where unmasked (mask it out instead)")
    heads = s.shape[1]
    moved = np.moveaxis(np.where(mk, s, -np.inf), 1, 0).reshape(heads, -1)
    out = moved.max(axis=1)
    if np.isneginf(out).any():
        raise ValueError("some head has no unmasked score")
    return out


def log_linear_beta(scores: ArrayLike, x: ArrayLike, mask: ArrayLike | None = None) -> tuple[float,
                    float]:
    """Fit ``log w_ij = c_i + beta x_ij`` within each query (Eq. 10 applied to a head).

    Since ``log softmax(s)_ij = s_ij - logsumexp_j s_ij``, the within-query regression of the
    log weight equals that of the score; ``scores`` are used directly.

    Parameters
    ----------
    scores, x : array_like or torch.Tensor, shape (Q, K)
        Softmax inputs of one head and the similarity each is regressed on (same shape), one
        row per query.
    mask : array_like of bool, shape (Q, K), optional
        Entries to use (default all); a query needs at least two.

    Returns
    -------
    (beta, r2) : tuple of float
        The pooled within-query least-squares slope and the fraction of the within-query
        variance of the scores it explains.

    Raises
    ------
    ValueError
        If the shapes differ or are not 2-d, the input is not finite, or ``x`` does not vary
        within any query.
    """
    s = _scores_array(scores)
    xs = _scores_array(x, "x")
    if s.ndim != 2 or xs.shape != s.shape:
        raise ValueError(f"scores and x must be 2-d of one shape; got {s.shape} and {xs.shape}")
    mk = _mask_array(mask, s.shape)
    if not (np.isfinite(s[mk]).all() and np.isfinite(xs[mk]).all()):
        raise ValueError("scores and x must be finite where used")
    cnt = mk.sum(axis=1, keepdims=True)
    use = (cnt[:, 0] >= 2)
    s, xs, mk, cnt = s[use], xs[use], mk[use], cnt[use]
    sm = np.where(mk, s, 0).sum(axis=1, keepdims=True) / np.maximum(cnt, 1)
    xm = np.where(mk, xs, 0).sum(axis=1, keepdims=True) / np.maximum(cnt, 1)
    ds, dx = np.where(mk, s - sm, 0.0), np.where(mk, xs - xm, 0.0)
    sxx = float((dx * dx).sum())
    if not sxx > 0:
        raise ValueError("x does not vary within any query: the slope is undefined")
    beta = float((dx * ds).sum() / sxx)
    sst = float((ds * ds).sum())
    r2 = float(1 - ((ds - beta * dx) ** 2).sum() / sst) if sst > 0 else 1.0
    return beta, r2


def _check_gpt2(model):
    tr = getattr(model, "transformer", model)
    blocks = getattr(tr, "h", None)
    cfg = getattr(model, "config", None)
    if blocks is None or cfg is None or not hasattr(cfg, "n_head"):
        raise TypeError("model must be a transformers GPT2Model or GPT2LMHeadModel; got "
                        f"{type(model).__name__}")
    return tr, blocks, cfg


@torch.no_grad()
def gpt2_attention_inputs(model: torch.nn.Module, input_ids: torch.Tensor) -> list[dict]:
    """Each layer's causal softmax inputs and query-key cosines in a Hugging Face GPT-2.

    Parameters
    ----------
    model : transformers.GPT2Model or GPT2LMHeadModel
        Any GPT-2 (pretrained or built from a ``GPT2Config``); run in eval mode, unchanged.
    input_ids : torch.Tensor of int, shape (B, T)
        Token ids in ``[0, vocab_size)``.

    Returns
    -------
    list of dict, one per layer
        ``scores`` and ``cosines`` ``(B, H, T, T)`` float64 and ``mask`` ``(T, T)`` bool (numpy
        arrays, whatever the model's device: the ids are moved to it, the activations back), the
        causal mask (``True`` where key ``j <= i``). The scores are the softmax inputs as the
        model computes them under its config: ``q k^T``, divided by ``sqrt(d_head)`` when
        ``scale_attn_weights`` (the default) and by ``layer + 1`` when
        ``scale_attn_by_inverse_layer_idx``.

    Raises
    ------
    TypeError
        If ``model`` is not a GPT-2 or ``input_ids`` is not an integer tensor.
    ValueError
        If ``input_ids`` is not 2-d, is empty, or holds ids outside the vocabulary or a
        sequence longer than ``n_positions``.
    """
    tr, blocks, cfg = _check_gpt2(model)
    if not isinstance(input_ids, torch.Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
        raise TypeError("input_ids must be an int64 or int32 torch.Tensor")
    if input_ids.ndim != 2 or input_ids.numel() == 0:
        raise ValueError(f"input_ids must be (B, T) and non-empty; got shape {tuple(input_ids.shape)}")
    if int(input_ids.min()) < 0 or int(input_ids.max()) >= cfg.vocab_size:
        raise ValueError(f"input_ids must lie in [0, {cfg.vocab_size})")
    if input_ids.shape[1] > cfg.n_positions:
        raise ValueError(f"sequence length {input_ids.shape[1]} exceeds n_positions = "
                         f"{cfg.n_positions}")
    h = cfg.n_head
    dh = cfg.n_embd // h
    captured = []

    def hook(_module, _inputs, output):
        captured.append(output.detach())

    handles = [blk.attn.c_attn.register_forward_hook(hook) for blk in blocks]
    was_training = model.training
    device = next(iter(model.parameters()), input_ids).device  # the ids go where the weights are
    try:
        model.eval()
        model(input_ids.to(device))
    finally:
        for hd in handles:
            hd.remove()
        model.train(was_training)
    b, t = input_ids.shape
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    by_dim = bool(getattr(cfg, "scale_attn_weights", True))
    by_layer = bool(getattr(cfg, "scale_attn_by_inverse_layer_idx", False))
    out = []
    for layer, qkv in enumerate(captured):
        # (B, T, 3 n_embd) on the CPU in float64: numpy arrays are made from CPU tensors only
        q, k, _ = qkv.cpu().double().split(cfg.n_embd, dim=-1)
        q = q.view(b, t, h, dh).transpose(1, 2)
        k = k.view(b, t, h, dh).transpose(1, 2)
        dots = q @ k.transpose(-1, -2)
        norms = q.norm(dim=-1, keepdim=True) * k.norm(dim=-1).unsqueeze(-2)
        scores = dots / dh**0.5 if by_dim else dots  # the model's own scaling (its config's flags)
        if by_layer:
            scores = scores / float(layer + 1)
        out.append(dict(scores=scores.numpy(),
                        cosines=(dots / norms.clamp_min(1e-300)).numpy(), mask=mask.numpy()))
    return out


def gpt2_effective_betas(model: torch.nn.Module, input_ids: torch.Tensor) -> pd.DataFrame:
    """Per layer and head of a GPT-2: the App. A.2 heuristic and the fitted log-linear slope.

    Returns
    -------
    pandas.DataFrame
        Columns ``layer``, ``head``, ``max_input`` (:func:`max_softmax_input` over the causal
        scores), ``fitted_beta`` and ``fit_r2`` (:func:`log_linear_beta` of the scores on the
        query-key cosine, over queries with at least two visible keys).

    Raises
    ------
    ValueError
        If the sequences are shorter than 3 tokens (a slope fitted within queries that see at
        most two keys fits exactly, ``R^2 = 1``, and says nothing), and as
        :func:`gpt2_attention_inputs`.
    TypeError
        As :func:`gpt2_attention_inputs`.
    """
    if isinstance(input_ids, torch.Tensor) and input_ids.ndim == 2 and input_ids.shape[1] < 3:
        raise ValueError(f"input_ids must hold sequences of at least 3 tokens; got length "
                         f"{input_ids.shape[1]}")
    rows = []
    for layer, d in enumerate(gpt2_attention_inputs(model, input_ids)):
        s, x, mk = d["scores"], d["cosines"], d["mask"]
        mx = max_softmax_input(s, mask=mk)
        b, h, t, _ = s.shape
        for head in range(h):
            sh = s[:, head].reshape(b * t, t)
            xh = x[:, head].reshape(b * t, t)
            beta, r2 = log_linear_beta(sh, xh, mask=np.tile(mk, (b, 1)))
            rows.append(dict(layer=layer, head=head, max_input=float(mx[head]),
                             fitted_beta=beta, fit_r2=r2))
    return pd.DataFrame(rows)


def load_gpt2(name: str) -> GPT2LMHeadModel:
    """Load a pretrained GPT-2 (``transformers.GPT2LMHeadModel``) from the local cache only.

    Raises
    ------
    ValueError
        If ``name`` is not a non-empty string.
    OSError
        If the weights are not in the local cache (nothing is downloaded).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel.from_pretrained(name, local_files_only=True).eval()
