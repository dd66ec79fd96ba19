"""Tests for assocmem.sdm.weights.relative_weights: relative weights and the exact far weight.

The Laplace-transform expectation is checked against brute force at small m and against the
mean-field values; Monte Carlo against the exact expectation at four standard errors.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from assocmem.sdm.geometry.balls import ball_fraction
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.weights.far_patterns import (
    far_pattern_weight_mc,
    far_pattern_weight_meanfield,
    far_pattern_weight_sdm,
    far_pattern_weight_sdm_mc,
)
from assocmem.sdm.weights.profiles import cosine_of_distance
from assocmem.sdm.weights.relative_weights import (
    expected_far_weight,
    far_weight_contributions,
    far_weight_from_distances,
    prob_sdm_far_weight_zero,
    sample_far_distances,
    sdm_relative_weights,
    softmax_relative_weights,
)


N = 64


# ------------------------------------------------------------------------------------------
# Relative weights and the exact far weight
# ------------------------------------------------------------------------------------------


def test_relative_weights():
    x = softmax_relative_weights(N, 9.4)
    assert x[0] == 1.0
    np.testing.assert_allclose(x, np.exp(9.4 * (cosine_of_distance(np.arange(N + 1), N) - 1)), rtol=1e-13)
    s = sdm_relative_weights(N, 11)
    table = circle_intersection_table(N, 11)
    np.testing.assert_array_equal(s, [float(Fraction(v, table[0])) for v in table])
    assert np.all(s[23:] == 0.0) and s[22] > 0
    c = sdm_relative_weights(N, 11, "cap")
    assert c[0] == 1.0 and np.all(c[:37] > 0) and c[23] > 0  # cap support: dv < 4 d (1 - d/n) = 36.4
    with pytest.raises(ValueError, match="empty"):
        sdm_relative_weights(N, 0, "cap")


def _brute_force_expectation(x: np.ndarray, m: int) -> float:
    """E[S/(1+S)] by summing over every m-tuple of distances (small n and m only)."""
    n = x.size - 1
    pmf = stats.binom.pmf(np.arange(n + 1), n, 0.5)
    total = 0.0
    for combo in itertools.product(range(n + 1), repeat=m):
        s = sum(x[k] for k in combo)
        total += float(np.prod(pmf[list(combo)])) * s / (1 + s)
    return total


@pytest.mark.parametrize("m", [1, 2, 3])
def test_expected_far_weight_against_brute_force(m):
    n = 8
    for x in (softmax_relative_weights(n, 3.0), sdm_relative_weights(n, 2)):
        assert expected_far_weight(x, m) == pytest.approx(_brute_force_expectation(x, m), rel=1e-9)


def test_expected_far_weight_constant_and_zero():
    for c, m in [(0.5, 1), (1e-3, 1024), (2.0, 7)]:
        assert expected_far_weight(np.full(N + 1, c), m) == pytest.approx(m * c / (1 + m * c), rel=1e-9)
    assert expected_far_weight(np.zeros(N + 1), 1024) == 0.0
    with pytest.raises(ValueError):
        expected_far_weight(np.array([1.0, -0.1, 0.0]), 3)
    with pytest.raises(ValueError):
        expected_far_weight(np.ones(5), 0)
    with pytest.raises(ValueError):
        expected_far_weight(np.ones((2, 3)), 3)


@pytest.mark.parametrize("beta", [4.0, 9.436391128079615, 14.41160476036902, 28.4])
def test_expected_far_weight_below_and_near_mean_field_softmax(beta):
    exact = expected_far_weight(softmax_relative_weights(N, beta), 1024)
    mf = far_pattern_weight_meanfield(beta, 1024, N)
    assert exact <= mf  # Jensen: S/(1+S) is concave
    assert exact == pytest.approx(mf, rel=2e-3)


@pytest.mark.parametrize("d", [5, 11, 15])
def test_expected_far_weight_below_and_near_mean_field_sdm(d):
    exact = expected_far_weight(sdm_relative_weights(N, d), 1024)
    mf = far_pattern_weight_sdm(N, d, 1024)
    assert exact <= mf
    assert exact == pytest.approx(mf, rel=2e-3)


def test_review_numbers_for_random_patterns():
    # the library author's mean-field numbers, here from the exact expectation
    assert expected_far_weight(softmax_relative_weights(N, 9.436391128079615), 1024) == pytest.approx(0.1404, abs=5e-5)
    assert expected_far_weight(softmax_relative_weights(N, 14.41160476036902), 1024) == pytest.approx(2.812e-3, abs=5e-7)
    assert expected_far_weight(sdm_relative_weights(N, 15), 1024) == pytest.approx(0.01231, abs=5e-6)
    assert expected_far_weight(sdm_relative_weights(N, 11), 1024) == pytest.approx(5.149e-5, abs=5e-8)
    assert expected_far_weight(sdm_relative_weights(N, 5), 1024) == pytest.approx(4.6075e-10, rel=1e-4)


@pytest.mark.parametrize("rel", [("softmax", 9.436391128079615), ("softmax", 14.41160476036902),
                                 ("sdm", 15), ("sdm", 11)])
def test_sampled_far_weight_agrees_with_exact_expectation(rel):
    kind, value = rel
    x = softmax_relative_weights(N, value) if kind == "softmax" else sdm_relative_weights(N, value)
    dist = sample_far_distances(N, 1024, 2000, seed=3)
    w = far_weight_from_distances(x, dist)
    se = w.std(ddof=1) / math.sqrt(w.size)
    assert abs(w.mean() - expected_far_weight(x, 1024)) <= 4 * se


def test_vector_level_simulations_agree_with_exact_expectation():
    beta = 9.436391128079615
    mean, se = far_pattern_weight_mc(beta, 1024, N, trials=400, seed=1, return_stderr=True)
    assert abs(mean - expected_far_weight(softmax_relative_weights(N, beta), 1024)) <= 4 * se
    mean, se = far_pattern_weight_sdm_mc(N, 15, 1024, trials=400, seed=1, return_stderr=True)
    assert abs(mean - expected_far_weight(sdm_relative_weights(N, 15), 1024)) <= 4 * se


def test_far_weight_contributions_sum_to_the_mean_field_totals():
    beta, m = 14.4, 1024
    c = far_weight_contributions(softmax_relative_weights(N, beta), m)
    assert c.shape == (N + 1,)
    assert c.sum() == pytest.approx(m * math.exp(-beta) * math.cosh(beta / N) ** N, rel=1e-12)
    s = far_weight_contributions(sdm_relative_weights(N, 11), m).sum()
    assert s == pytest.approx(m * ball_fraction(11, N), rel=1e-12)  # E[I(dv)] / I(0) = p exactly
    mf = s / (1 + s)
    assert mf == pytest.approx(far_pattern_weight_sdm(N, 11, m), rel=1e-12)


def test_sample_far_distances():
    a = sample_far_distances(N, 100, 50, seed=7)
    assert a.shape == (50, 100) and a.dtype == np.int64
    np.testing.assert_array_equal(a, sample_far_distances(N, 100, 50, seed=7))
    assert a.min() >= 0 and a.max() <= N
    assert abs(a.mean() - N / 2) < 4 * math.sqrt(N / 4) / math.sqrt(a.size)
    with pytest.raises(ValueError):
        sample_far_distances(N, 0, 5)
    with pytest.raises(ValueError):
        sample_far_distances(N, 5, 0)


def test_far_weight_from_distances():
    x = sdm_relative_weights(N, 5)
    dist = np.array([[32, 40, 11], [10, 32, 32]])
    w = far_weight_from_distances(x, dist)
    assert w[0] == 0.0  # all beyond 2d = 10: exactly zero
    assert w[1] == pytest.approx(x[10] / (1 + x[10]), rel=1e-15)
    with pytest.raises(ValueError, match="shape"):
        far_weight_from_distances(x, np.array([1, 2]))
    with pytest.raises(ValueError, match="lie in"):
        far_weight_from_distances(x, np.array([[65]]))
    with pytest.raises(ValueError, match="integers"):
        far_weight_from_distances(x, np.array([[1.5]]))


def test_prob_sdm_far_weight_zero():
    p10 = ball_fraction(10, N)
    assert prob_sdm_far_weight_zero(N, 5, 1024) == pytest.approx((1 - p10) ** 1024, rel=1e-12)
    assert 1 - prob_sdm_far_weight_zero(N, 5, 1024) == pytest.approx(1024 * p10, rel=1e-3)
    assert prob_sdm_far_weight_zero(N, 15, 1024) < 1e-100
    assert prob_sdm_far_weight_zero(N, 32, 1) == 0.0
    dist = sample_far_distances(N, 1024, 4000, seed=0)
    frac = np.mean(far_weight_from_distances(sdm_relative_weights(N, 11), dist) == 0.0)
    p = prob_sdm_far_weight_zero(N, 11, 1024)
    assert abs(frac - p) <= 4 * math.sqrt(p * (1 - p) / 4000) + 1 / 4000


# ------------------------------------------------------------------------------------------
# expected_target_share
# ------------------------------------------------------------------------------------------


def test_target_share_at_zero_distance_is_one_minus_far_weight():
    from assocmem.sdm.weights.relative_weights import expected_far_weight, expected_target_share, softmax_relative_weights
    rel = softmax_relative_weights(64, 10.0)
    assert expected_target_share(rel, 0, 1024) == pytest.approx(1 - expected_far_weight(rel, 1023), rel=1e-12)


def test_target_share_matches_simulation():
    from assocmem.sdm.weights.relative_weights import expected_target_share, softmax_relative_weights
    n, m, k, beta = 64, 256, 8, 12.0
    rel = softmax_relative_weights(n, beta)
    rng = np.random.default_rng(0)
    dv = rng.binomial(n, 0.5, size=(20000, m - 1))
    share = 1.0 / (1.0 + (rel[dv] / rel[k]).sum(axis=1))
    se = share.std(ddof=1) / np.sqrt(share.size)
    assert abs(expected_target_share(rel, k, m) - share.mean()) < 5 * se


def test_target_share_zero_when_target_outside_intersection():
    from assocmem.sdm.weights.relative_weights import expected_target_share, sdm_relative_weights
    rel = sdm_relative_weights(64, 5)
    assert expected_target_share(rel, 12, 1024) == 0.0  # 12 > 2 d: the balls do not meet
    assert 0.99 < expected_target_share(rel, 4, 1024) <= 1.0


def test_target_share_sdm_beats_fitted_softmax_at_large_k():
    """The d = 447 exception of App. B.7: the exact intersection favours the target more."""
    from assocmem.sdm.geometry.beta_fit import fit_beta
    from assocmem.sdm.weights.relative_weights import expected_target_share, sdm_relative_weights, softmax_relative_weights
    n, d, k = 1000, 447, 375
    beta = fit_beta(n, d, convention="authors").beta
    s_sdm = expected_target_share(sdm_relative_weights(n, d), k, 1024)
    s_att = expected_target_share(softmax_relative_weights(n, beta), k, 1024)
    assert s_sdm > 2 * s_att > 0


@pytest.mark.parametrize("bad", [dict(k=-1), dict(k=65), dict(m=1), dict(rel=[1.0, -0.5])])
def test_target_share_bad_input(bad):
    from assocmem.sdm.weights.relative_weights import expected_target_share, softmax_relative_weights
    args = dict(rel=softmax_relative_weights(64, 5.0), k=3, m=16)
    args.update(bad)
    with pytest.raises(ValueError):
        expected_target_share(**args)
