"""Tests for assocmem.sdm.weights.profiles: SDM against fitted-softmax weight profiles.

Exact identities (normalisation, band decomposition) are checked to float64 rounding; the review's
printed numbers (TV 0.16 / 0.12 / 0.09) at half a unit of their last digit.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from assocmem.sdm.geometry.beta_fit import fit_beta
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.geometry.spherical_caps import log_cap_intersection
from assocmem.sdm.weights.profiles import (
    WeightComparison,
    compare_weights,
    cosine_of_distance,
    sdm_log_weights,
    sdm_weight_profile,
    softmax_weight_profile,
    total_variation,
    tv_of_beta,
    tv_optimal_beta,
)


N = 64


# ------------------------------------------------------------------------------------------
# Profiles
# ------------------------------------------------------------------------------------------


def test_cosine_of_distance():
    np.testing.assert_array_equal(cosine_of_distance([0, 16, 32, 64], 64), [1.0, 0.5, 0.0, -1.0])
    assert cosine_of_distance(3, 4).shape == (1,)
    with pytest.raises(ValueError):
        cosine_of_distance(65, 64)
    with pytest.raises(ValueError):
        cosine_of_distance(1.5, 64)


@pytest.mark.parametrize("d", [0, 5, 11, 15, 32, 64])
def test_binary_profile_is_the_normalised_exact_table(d):
    w = sdm_weight_profile(N, d)
    table = circle_intersection_table(N, d)
    total = sum(table)
    assert w.shape == (N + 1,)
    np.testing.assert_array_equal(w, [float(Fraction(v, total)) for v in table])
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.all(w[2 * d + 1:] == 0.0)


def test_binary_profile_on_a_subset_of_distances():
    dvs = [0, 2, 7, 30]
    w = sdm_weight_profile(N, 15, dvs)
    table = circle_intersection_table(N, 15, dvs)
    np.testing.assert_allclose(w, np.array(table, dtype=float) / sum(table), rtol=1e-15)
    with pytest.raises(ValueError, match="zero"):
        sdm_weight_profile(N, 5, [20, 30])
    with pytest.raises(ValueError, match="empty"):
        sdm_weight_profile(N, 5, [])


def test_cap_profile_matches_log_cap_intersection_and_reaches_past_2d():
    d = 11
    w = sdm_weight_profile(N, d, intersection="cap")
    logs = log_cap_intersection(1 - 2 * np.arange(N + 1) / N, d, N)
    np.testing.assert_allclose(w, np.exp(logs) / np.exp(logs).sum(), rtol=1e-12)
    assert w[2 * d + 2] > 0  # the binary count is already 0 there
    np.testing.assert_allclose(sdm_log_weights(N, d, [0, 2 * d + 2], "cap"), logs[[0, 2 * d + 2]], rtol=1e-14)


def test_softmax_profile():
    beta = 9.4
    rho = 1 - 2 * np.arange(N + 1) / N
    e = np.exp(beta * rho)
    np.testing.assert_allclose(softmax_weight_profile(N, beta), e / e.sum(), rtol=1e-13)
    np.testing.assert_allclose(softmax_weight_profile(N, 0.0), np.full(N + 1, 1 / (N + 1)), rtol=1e-14)
    assert softmax_weight_profile(N, 1e4).sum() == pytest.approx(1.0)  # no overflow
    with pytest.raises(ValueError):
        softmax_weight_profile(N, -1.0)
    with pytest.raises(ValueError):
        softmax_weight_profile(N, float("nan"))


def test_unknown_intersection_raises():
    with pytest.raises(ValueError, match="intersection"):
        sdm_weight_profile(N, 5, intersection="sphere")


# ------------------------------------------------------------------------------------------
# Total variation
# ------------------------------------------------------------------------------------------


def test_total_variation_properties():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])
    assert total_variation(p, q) == 0.5
    assert total_variation(q, p) == 0.5
    assert total_variation(p, p) == 0.0
    assert total_variation([1, 0], [0, 1]) == 1.0
    with pytest.raises(ValueError, match="shape"):
        total_variation([1.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="non-negative"):
        total_variation([1.5, -0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="sum to 1"):
        total_variation([0.5, 0.4], [0.5, 0.5])


@pytest.mark.parametrize("d,seed", [(5, 0.16), (11, 0.12), (15, 0.09)])
def test_review_tv_values_reproduce(d, seed):
    c = compare_weights(N, d)  # beta by OLS on dv < d, one pattern at every distance 0..64
    assert c.beta == pytest.approx(fit_beta(N, d).beta, rel=1e-15)
    assert c.beta_rule == "ols"
    assert abs(c.tv - seed) <= 0.005  # the review prints two decimals


@pytest.mark.parametrize("d,ours", [(5, 0.1130), (11, 0.1106), (15, 0.0839)])
def test_tv_with_the_authors_beta(d, ours):
    c = compare_weights(N, d, beta="authors")
    assert c.beta == pytest.approx(fit_beta(N, d, convention="authors").beta, rel=1e-15)
    assert c.tv == pytest.approx(ours, abs=5e-5)


@pytest.mark.parametrize("d", [5, 11, 15])
@pytest.mark.parametrize("intersection", ["binary", "cap"])
def test_tv_parts_add_up_and_are_local(d, intersection):
    c = compare_weights(N, d, intersection=intersection)
    parts = c.tv_parts()
    assert set(parts) == {"local", "middle", "far"}
    assert sum(parts.values()) == pytest.approx(c.tv, abs=1e-15)
    assert parts["local"] > 0.9 * c.tv  # the disagreement sits at the nearest distances


def test_comparison_with_a_given_beta_and_bad_rules():
    c = compare_weights(N, 11, beta=14.0, dvs=range(0, 23))
    assert isinstance(c, WeightComparison)
    assert (c.beta, c.beta_rule) == (14.0, "given")
    assert c.dvs.tolist() == list(range(23))
    with pytest.raises(ValueError, match="ols"):
        compare_weights(N, 11, beta="median")
    with pytest.raises(ValueError):
        compare_weights(N, 11, beta=-3.0)


def test_log_ratio_and_local_window():
    c = compare_weights(N, 11)
    r = c.log_ratio()
    assert r[0] == 0.0
    assert np.all(np.isneginf(r[2 * 11 + 1:]))
    rel_sdm = np.array([math.log(Fraction(v, circle_intersection_table(N, 11)[0]))
                        for v in circle_intersection_table(N, 11, range(11))])
    expected = rel_sdm + 2 * c.beta * np.arange(11) / N
    assert c.max_local_log_ratio() == pytest.approx(np.abs(expected).max(), rel=1e-12)
    far_only = compare_weights(N, 11, dvs=[12, 14])
    with pytest.raises(ValueError, match="below"):
        far_only.max_local_log_ratio()


def test_tv_of_beta_matches_compare_weights():
    betas = [3.0, 14.41160476036902, 40.0]
    tv = tv_of_beta(N, 11, betas)
    for b, t in zip(betas, tv):
        assert t == pytest.approx(compare_weights(N, 11, beta=b).tv, abs=1e-15)


@pytest.mark.parametrize("intersection", ["binary", "cap"])
@pytest.mark.parametrize("d", [5, 11, 15])
def test_tv_optimal_beta_is_a_minimum(d, intersection):
    beta, tv = tv_optimal_beta(N, d, intersection=intersection)
    assert tv == pytest.approx(float(tv_of_beta(N, d, [beta], intersection)[0]), abs=1e-15)
    for rule in ("ols", "authors"):
        assert tv <= compare_weights(N, d, beta=rule, intersection=intersection).tv + 1e-15
    near = tv_of_beta(N, d, [beta * 0.99, beta * 1.01], intersection)
    assert np.all(near >= tv - 1e-12)
    grid = tv_of_beta(N, d, np.geomspace(0.5, 200, 2000), intersection)
    assert tv <= grid.min() + 1e-9


def test_tv_optimal_beta_bounds():
    with pytest.raises(ValueError, match="bounds"):
        tv_optimal_beta(N, 11, bounds=(0.0, 10.0))
