"""Tests of the value-norm, LayerNorm and mixture computations (assocmem.sdm.trained.value_norms)."""

import math

import numpy as np
import pytest

from assocmem.sdm.trained.value_norms import (beta_spread, duplicate_key_read, sphere_distance,
                                              weight_contribution)


def test_equal_value_norms_make_weight_and_contribution_agree():
    w = np.random.default_rng(0).dirichlet(np.ones(6), size=50)
    out = weight_contribution(w, np.full_like(w, 2.5))
    assert abs(out["pearson"] - 1) < 1e-12 and out["top_mismatch"] == 0 and out["norm_cv"] == 0
    assert out["entries"] == 300


def test_a_large_norm_on_a_small_weight_changes_the_top_contributor():
    w = np.array([[0.6, 0.3, 0.1]])
    v = np.array([[1.0, 1.0, 10.0]])
    assert weight_contribution(w, v)["top_mismatch"] == 1.0
    with pytest.raises(ValueError, match="each row of weights must sum to 1"):
        weight_contribution(w * 2, v)


def test_sphere_distance_is_zero_on_a_sphere():
    out = sphere_distance(np.full(10, 4.0), 16)
    assert out["mean"] == 1.0 and out["cv"] == 0.0
    out = sphere_distance([2.0, 6.0], 16)
    assert out["min"] == 0.5 and out["max"] == 1.5 and abs(out["cv"] - 0.5) < 1e-12


def test_beta_spread_is_beta_on_the_sqrt_d_sphere():
    q = np.full(5, 4.0)
    k = np.full((5, 3), 4.0)
    np.testing.assert_allclose(beta_spread(7.0, q, k, 16), [7.0, 7.0, 7.0])
    assert beta_spread(1.0, [4.0, 8.0], [[4.0], [4.0]], 16, quantiles=(1.0,))[0] == 2.0


@pytest.mark.parametrize("beta", [0.0, 1.0, 50.0])
def test_one_head_reading_a_duplicated_key_returns_the_value_frequencies(beta):
    np.testing.assert_allclose(duplicate_key_read([2, 1], beta), [2 / 3, 1 / 3], atol=1e-12)
    np.testing.assert_allclose(duplicate_key_read([1, 0, 3], beta, n=8), [0.25, 0, 0.75],
                               atol=1e-12)


@pytest.mark.parametrize("scale", [2.0**660, 1e200, 1e300, 1e-300, 2.0**-1060, 1e-320])
def test_sphere_distance_is_scale_free_at_the_ends_of_float64(scale):
    norms = np.array([1.0, 2.0, 3.0, 4.0]) * 2.0**-2  # exact in every scaling by a power of two
    ref = sphere_distance(norms, 4)
    out = sphere_distance(norms * scale, 4)
    assert math.isfinite(out["cv"]) and out["cv"] == pytest.approx(ref["cv"], rel=1e-3 if scale < 1e-307 else 1e-13)
    for key in ("mean", "sd", "min", "max"):
        assert out[key] == pytest.approx(ref[key] * scale, rel=1e-3 if scale < 1e-307 else 1e-13)


def test_beta_spread_computes_large_and_small_products_instead_of_nan():
    rng = np.random.default_rng(0)
    q, k = rng.uniform(1, 2, 5), rng.uniform(1, 2, (5, 7))
    ref = beta_spread(3.0, q, k, 16, quantiles=(0.0, 0.05, 0.5, 0.95, 1.0))
    # beta |q| overflows (2^1100) though the product is 2^100 times the reference
    big = beta_spread(3.0 * 2.0**900, q * 2.0**200, k * 2.0**-1000, 16, quantiles=(0.0, 0.05, 0.5, 0.95, 1.0))
    np.testing.assert_allclose(big, ref * 2.0**100, rtol=1e-14)
    # beta |q| underflows (2^-1100) though the product is 2^-100 times the reference
    small = beta_spread(3.0 * 2.0**-900, q * 2.0**-200, k * 2.0**1000, 16, quantiles=(0.0, 0.5, 1.0))
    np.testing.assert_allclose(small, ref[[0, 2, 4]] * 2.0**-100, rtol=1e-14)
    with pytest.raises(ValueError, match="overflow float64 at the 0.05 quantile"):
        beta_spread(3.0, q * 1e200, k * 1e200, 16)


@pytest.mark.parametrize("quantiles, match", [(0.5, r"a sequence of numbers .* got 0\.5"), ("0.5", "a sequence"),
                                              ((), "non-empty"), ((0.5, 1.5), "quantile must be <= 1"),
                                              ((True,), "quantile must be a real number")])
def test_beta_spread_refuses_quantiles_that_are_not_a_sequence_of_probabilities(quantiles, match):
    with pytest.raises(ValueError, match=match):
        beta_spread(3.0, np.ones(2), np.ones((2, 3)), 4, quantiles=quantiles)
