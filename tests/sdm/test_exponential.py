"""Tests for assocmem.sdm.exponential: local betas, the OLS-weight identity and the beta budget.

The exact identities (closed-form ratio, weighted sum of local slopes, additivity of the budget)
are checked to float64 rounding; the seed's hand numbers (3.46 per two steps, beta ~ 20 at
dv = 0, 5 standard deviations) are pinned at the precision the seed prints them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm import analytic_beta, circle_intersection_table, fit_beta, largest_summand
from assocmem.sdm.exponential import (
    PRESETS,
    TERMS,
    BetaBudget,
    beta_budget,
    break_distance,
    entropy_beta,
    get_preset,
    local_betas,
    log_terms,
    ols_difference_weights,
    summand_ratio,
    weighted_local_beta,
)

CASES = [(64, 3), (64, 5), (64, 9), (64, 11), (64, 15), (64, 27), (64, 31), (100, 35), (1000, 447),
         (1000, 451)]


# ------------------------------------------------------------------------------------------
# The factors
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d", CASES)
def test_log_terms_factorise_the_largest_summand(n, d):
    t = log_terms(n, d)
    assert t["dv"].tolist() == list(range(0, 2 * d + 1, 2))
    np.testing.assert_allclose(t["largest_summand"], n * math.log(2) + t["tail"] + t["central"],
                               rtol=0, atol=1e-9 * n)
    exact = [math.log(largest_summand(v, d, n)) for v in t["dv"].tolist()]
    np.testing.assert_allclose(t["largest_summand"], exact, rtol=1e-13)
    binary = [math.log(v) for v in circle_intersection_table(n, d, t["dv"].tolist())]
    np.testing.assert_allclose(t["binary"], binary, rtol=1e-13)
    assert np.all(t["binary"] >= t["largest_summand"] - 1e-12)  # one summand is a lower bound


def test_log_terms_gaussian_pieces_match_eq20_and_eq21():
    n, d = 64, 11
    t = log_terms(n, d, [0, 4])
    # Eq. 20 is linear in dv with slope -(n - 2d)^2 / (2 n^2); in x = 1 - 2dv/n that is Eq. 21
    slope_dv = (t["eq20"][1] - t["eq20"][0]) / 4
    assert slope_dv * (-n / 2) == pytest.approx(analytic_beta(n, d), rel=1e-12)
    # the Gaussian density at the tail point: sqrt(2/(pi m)) exp(-2 (j - m/2)^2 / m)
    m, j = n, d
    assert t["gaussian_tail"][0] == pytest.approx(
        math.log(math.sqrt(2 / (math.pi * m)) * math.exp(-2 * (j - m / 2) ** 2 / m)), rel=1e-12)


def test_central_factor_is_the_central_binomial_probability():
    t = log_terms(64, 11, [0, 2, 10])
    assert t["central"][0] == 0.0
    assert math.exp(t["central"][1]) == pytest.approx(0.5, rel=1e-14)
    assert math.exp(t["central"][2]) == pytest.approx(math.comb(10, 5) / 2**10, rel=1e-14)


# ------------------------------------------------------------------------------------------
# Local betas and the closed-form ratio
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d", CASES)
def test_summand_ratio_is_exact(n, d):
    for dv in range(0, 2 * d - 1, 2):
        exact = largest_summand(dv, d, n) / largest_summand(dv + 2, d, n)
        assert summand_ratio(n, d, dv) == pytest.approx(exact, rel=1e-13)


def test_seed_hand_ratio_and_beta_at_dv0():
    # seed 002: C(64, 11) / (2 C(62, 10)) ~ 3.46 per two Hamming steps, beta ~ 20 at dv = 0
    r = summand_ratio(64, 11, 0)
    assert r == pytest.approx(math.comb(64, 11) / (2 * math.comb(62, 10)), rel=1e-14)
    assert round(r, 2) == 3.46
    assert round(local_betas(64, 11, "largest_summand", [0])[0]) == 20


@pytest.mark.parametrize("of", sorted(TERMS))
def test_local_betas_closed_form_agrees_with_differences(of):
    n, d = 64, 11
    lb = local_betas(n, d, of=of)
    assert lb.shape == (d,)
    t = log_terms(n, d)
    np.testing.assert_allclose(lb, n / 4 * (t[of][:-1] - t[of][1:]), rtol=1e-11, atol=1e-11)


def test_eq20_local_beta_is_constant_and_equals_eq21():
    np.testing.assert_allclose(local_betas(64, 15, "eq20"), analytic_beta(64, 15), rtol=1e-12)


# ------------------------------------------------------------------------------------------
# The OLS weights and the weighted local beta
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("N", [2, 3, 6, 17, 224])
def test_ols_difference_weights_reproduce_the_least_squares_slope(N):
    w = ols_difference_weights(N)
    assert w.shape == (N - 1,)
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(w, w[::-1], rtol=1e-14)
    assert np.all(w > 0)
    rng = np.random.default_rng(0)
    y = rng.standard_normal(N)
    x = 3.0 + 0.5 * np.arange(N)
    assert w @ np.diff(y) / 0.5 == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("n,d", [c for c in CASES if c[1] >= 3])
def test_weighted_local_beta_equals_the_regression(n, d):
    assert weighted_local_beta(n, d) == pytest.approx(
        fit_beta(n, d, even_only=True, intersection="largest_summand").beta, rel=1e-12)
    assert weighted_local_beta(n, d, of="binary") == pytest.approx(
        fit_beta(n, d, even_only=True).beta, rel=1e-12)


def test_weighted_local_beta_other_windows():
    assert weighted_local_beta(64, 11, window=(0, 22), of="binary") == pytest.approx(
        fit_beta(64, 11, window=(0, 22), even_only=True).beta, rel=1e-12)
    assert weighted_local_beta(64, 11, window=(4, 15)) == pytest.approx(
        fit_beta(64, 11, window=(4, 15), even_only=True, intersection="largest_summand").beta,
        rel=1e-12)


# ------------------------------------------------------------------------------------------
# Entropy beta
# ------------------------------------------------------------------------------------------


def test_entropy_beta_closed_forms_and_limits():
    n, d = 64, 11
    assert entropy_beta(n, d) == pytest.approx(n / 4 * math.log(n * n / (4 * d * (n - d))), rel=1e-14)
    for n, d in CASES:
        assert entropy_beta(n, d) >= analytic_beta(n, d)  # Eq. 21 is the first term of a positive series
    # near d = n/2 the Gaussian is exact to leading order
    assert entropy_beta(10_000, 4_990) / analytic_beta(10_000, 4_990) == pytest.approx(1.0, abs=1e-4)
    # for large n at fixed d/n the exact tail rate at dv = 0 approaches the entropy rate
    n, d = 200_000, 40_000
    tail_rate = local_betas(n, d, "tail", [0])[0]
    assert tail_rate == pytest.approx(entropy_beta(n, d), rel=1e-4)


# ------------------------------------------------------------------------------------------
# The budget
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d", [(64, 5), (64, 11), (64, 15), (1000, 447)])
def test_beta_budget_matches_the_library_fits(n, d):
    b = beta_budget(n, d)
    assert isinstance(b, BetaBudget)
    assert b.eq21 == analytic_beta(n, d)
    assert b.largest_summand == pytest.approx(
        fit_beta(n, d, even_only=True, intersection="largest_summand").beta, rel=1e-12)
    assert b.binary_even == pytest.approx(fit_beta(n, d, even_only=True).beta, rel=1e-12)
    assert b.binary == fit_beta(n, d).beta
    assert b.authors == fit_beta(n, d, convention="authors").beta
    shares = b.shares()
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)
    rows = b.rows()
    assert len(rows) == 7 and rows[0][2] == 0.0
    assert sum(r[2] for r in rows) == pytest.approx(b.authors - b.eq21, abs=1e-12)


def test_beta_budget_reproduces_the_paper_betas():
    # the paper's betas 35.5, 20.0, 15.9, 10.1 at n = 64, d = 5, 9, 11, 15 (authors' convention)
    for d, paper in [(5, 35.5), (9, 20.0), (11, 15.9), (15, 10.1)]:
        assert round(beta_budget(64, d).authors, 1) == paper


def test_far_tail_share_shrinks_with_n():
    assert beta_budget(64, 5).shares()["far_tail"] > 0.5
    assert beta_budget(64, 11).shares()["far_tail"] < 0.5
    assert beta_budget(1000, 447).shares()["far_tail"] < 0.05


# ------------------------------------------------------------------------------------------
# Break distance
# ------------------------------------------------------------------------------------------


def test_break_distance_values_and_bounds():
    assert break_distance(64, 15) == 19  # the paper's App. B.2 says "until around dv = 20"
    for n, d in [(64, 5), (64, 11), (64, 15), (1000, 447)]:
        b = break_distance(n, d)
        assert d - 1 <= b <= 2 * d + 1
    assert break_distance(64, 11, factor=1e300) == 23  # only I = 0 breaks it
    assert break_distance(64, 15, factor=4.0) >= break_distance(64, 15, factor=2.0)


# ------------------------------------------------------------------------------------------
# Errors and presets
# ------------------------------------------------------------------------------------------


def test_errors():
    with pytest.raises(ValueError):
        log_terms(64, 40)  # d > n/2
    with pytest.raises(ValueError):
        log_terms(64, 11, [1])  # odd distance
    with pytest.raises(ValueError):
        log_terms(64, 11, [24])  # beyond 2d
    with pytest.raises(ValueError):
        log_terms(64, 0)
    with pytest.raises(ValueError):
        log_terms(64.5, 11)
    with pytest.raises(ValueError):
        summand_ratio(64, 11, 22)
    with pytest.raises(ValueError):
        summand_ratio(64, 11, 3)
    with pytest.raises(ValueError):
        local_betas(64, 11, of="nope")
    with pytest.raises(ValueError):
        local_betas(64, 11, dvs=[22])
    with pytest.raises(ValueError):
        ols_difference_weights(1)
    with pytest.raises(ValueError):
        weighted_local_beta(64, 11, window=(1, 10))
    with pytest.raises(ValueError):
        weighted_local_beta(64, 11, window=(0, 1))
    with pytest.raises(ValueError):
        beta_budget(64, 2)  # dv < 2 holds one even distance
    with pytest.raises(ValueError):
        break_distance(64, 11, factor=1.0)
    with pytest.raises(ValueError):
        break_distance(64, 32)


def test_presets():
    assert set(PRESETS) == {"quick", "full"}
    assert get_preset("quick") is PRESETS["quick"]
    for p in PRESETS.values():
        assert all(3 <= d <= 31 for d in p.radii_64)
    with pytest.raises(ValueError, match="quick"):
        get_preset("huge")
