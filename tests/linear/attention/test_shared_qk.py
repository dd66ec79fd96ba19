"""Tests for assocmem.linear.attention.shared_qk: one vector for query and key gives symmetric scores."""

from __future__ import annotations

import pytest
import torch

from tests.linear.attention._qkv import DT


def test_shared_vector_scores_are_symmetric_and_self_top():
    from assocmem.linear.attention.shared_qk import score_asymmetry, self_top_rate

    g = torch.Generator().manual_seed(8)
    x = torch.randn(20, 6, generator=g, dtype=DT)
    x = x / x.norm(dim=-1, keepdim=True)
    x[7] = x[3]  # an exact copy ties with the token itself, and still counts
    assert self_top_rate(x, x) == 1.0
    assert score_asymmetry(x, x) < 1e-15
    Wq, Wk = (torch.randn(6, 6, generator=g, dtype=DT) for _ in range(2))
    assert self_top_rate(x @ Wq, x @ Wk) < 0.5
    assert score_asymmetry(x @ Wq, x @ Wk) > 0.5


def test_self_top_rate_small_example_and_errors():
    from assocmem.linear.attention.shared_qk import score_asymmetry, self_top_rate

    q = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=DT)
    k = torch.tensor([[1.0, 0.0], [2.0, 0.0]], dtype=DT)  # key 1 beats key 0 for both queries
    assert self_top_rate(q, k) == 0.5
    assert score_asymmetry(torch.zeros(3, 2), torch.zeros(3, 2)) == 0.0
    with pytest.raises(ValueError, match="same shape"):
        self_top_rate(q, k[:1])
    with pytest.raises(ValueError, match="same shape"):
        score_asymmetry(q[0], k[0])
