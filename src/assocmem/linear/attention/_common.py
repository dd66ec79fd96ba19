"""Shape and dtype checks of queries, keys and values shared by the modules of
:mod:`assocmem.linear.attention`: tensors ``(..., T, d)``, ``q`` and ``k`` sharing ``d_k``, ``k`` and
``v`` sharing ``(..., T)``, one dtype; the messages name the offending shapes.
"""

from __future__ import annotations

import torch


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
