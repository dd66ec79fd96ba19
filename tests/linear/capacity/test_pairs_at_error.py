"""Tests for assocmem.linear.capacity.pairs_at_error: the ``eps d_k`` rule measured, decisively or not."""

from __future__ import annotations

import pytest

from assocmem.linear.capacity.pairs_at_error import max_pairs_at_error_mc
from assocmem.linear.theory import max_pairs_at_error


CPU = "cpu"


@pytest.mark.parametrize("d_k", [16, 32])
def test_max_pairs_at_error_mc_matches_exact_rule(d_k):
    res = max_pairs_at_error_mc(0.1, d_k, trials=3000, seed=17, device=CPU)
    assert res.decisive and res.n_max == max_pairs_at_error(0.1, d_k)
    assert list(res.scan.columns) == ["n", "error", "sem", "lower", "upper"]
    assert list(res.scan.n) == list(range(1, res.n_max + 2))


def test_max_pairs_at_error_mc_refuses_an_undecidable_boundary():
    # eps = 2/16: the error at n = 3 is exactly eps, so no number of trials can decide it
    res = max_pairs_at_error_mc(2 / 16, 16, trials=500, seed=18, device=CPU)
    assert res.n_max == 3 and not res.decisive
    with pytest.raises(ValueError, match="eps must be a positive"):
        max_pairs_at_error_mc(0.0, 16)
    with pytest.raises(ValueError, match="z must be"):
        max_pairs_at_error_mc(0.1, 16, z=-1)
