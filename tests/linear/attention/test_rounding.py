"""Tests for assocmem.linear.attention.rounding: Higham's gamma and the agreement of the forms."""

from __future__ import annotations

import pytest
import torch


def test_gamma():
    from assocmem.linear.attention.rounding import FLOAT64_UNIT_ROUNDOFF as u, gamma

    assert gamma(0) == 0
    assert gamma(10) == pytest.approx(10 * u, rel=1e-12)
    with pytest.raises(ValueError, match=">= 0"):
        gamma(-1)
    with pytest.raises(ValueError, match="void"):
        gamma(2**53)


def test_agreement_is_exact_on_integer_data_and_within_bound_on_gaussian():
    from assocmem.linear.attention.rounding import linear_attention_agreement

    exact = linear_attention_agreement([5, 33], [1, 4, 7], d_k=6, d_v=3, data="integer")
    assert len(exact) == 2 * 4 and set(exact.form) == {"recurrent", "chunked"}
    assert (exact.max_abs_diff == 0).all()
    gauss = linear_attention_agreement([1, 50, 300], [1, 16, 64], d_k=8, d_v=5, seed=3)
    assert (gauss.diff_over_abs_sum <= gauss.bound).all()
    assert (gauss.rel_diff < 1e-13).all()
    assert list(gauss.columns) == ["T", "form", "chunk_size", "max_abs_diff", "output_scale", "rel_diff",
                                   "diff_over_abs_sum", "bound"]
    # deterministic given the seed
    again = linear_attention_agreement([1, 50, 300], [1, 16, 64], d_k=8, d_v=5, seed=3)
    assert gauss.equals(again)


def test_agreement_bad_arguments():
    from assocmem.linear.attention.rounding import linear_attention_agreement

    with pytest.raises(ValueError, match="unknown data 'uniform'"):
        linear_attention_agreement([4], [2], data="uniform")
    with pytest.raises(ValueError, match=">= 1"):
        linear_attention_agreement([0], [2])
    with pytest.raises(ValueError, match=">= 1"):
        linear_attention_agreement([4], [0])
    with pytest.raises(ValueError, match="floating"):
        linear_attention_agreement([4], [2], dtype=torch.int64)
