"""Random queries, keys and values for the attention tests."""

from __future__ import annotations

import torch


DT = torch.float64


def qkv(batch, T, d_k, d_v, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, T, d_k, generator=g, dtype=DT)
    k = torch.randn(*batch, T, d_k, generator=g, dtype=DT)
    v = torch.randn(*batch, T, d_v, generator=g, dtype=DT)
    return q, k, v
