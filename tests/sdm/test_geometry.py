"""Tests for the geometry half of assocmem.sdm: Hamming-ball and cap intersections, beta fits.

Reference values quoted from the seed review of Bricken & Pehlevan (2021) are pinned with their
printed precision; the exact counts are checked against brute-force enumeration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem import sdm
from assocmem.sdm import (
    BetaFit,
    analytic_beta,
    analytic_log_intersection,
    ball_fraction,
    ball_size,
    cap_fraction,
    cap_intersection,
    cap_intersection_mc,
    circle_intersection,
    circle_intersection_continuous,
    circle_intersection_enumerate,
    circle_intersection_lune,
    circle_intersection_table,
    expected_neurons,
    fit_beta,
    largest_summand,
    largest_summand_beta,
    log_ball_fraction,
    log_cap_fraction,
    log_cap_intersection,
    log_circle_intersection,
    log_expected_neurons,
)

# ------------------------------------------------------------------------------------------
# Exact circle intersection
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 11))
def test_exact_forms_equal_enumeration_for_every_dv_and_d(n):
    for d in range(n + 1):
        counted = [circle_intersection_enumerate(dv, d, n) for dv in range(n + 1)]
        assert [circle_intersection(dv, d, n) for dv in range(n + 1)] == counted
        assert [circle_intersection_lune(dv, d, n) for dv in range(n + 1)] == counted
        assert circle_intersection_table(n, d) == counted
        assert circle_intersection_table(n, d, method="sum") == counted


def test_enumeration_spot_checks_at_larger_n():
    for dv, d, n in [(7, 5, 16), (16, 9, 16), (3, 2, 14), (11, 8, 18)]:
        assert circle_intersection(dv, d, n) == circle_intersection_enumerate(dv, d, n)


def _eq2_literal(dv, d, n, binom):
    """Eq. 2 with the paper's own summation limits."""
    total = 0
    for a in range(n - d - dv // 2, n - dv + 1):
        for c in range(max(0, n - d - a), dv - (n - d - a) + 1):
            total += binom(n - dv, a) * binom(dv, c)
    return total


def test_paper_limits_need_the_zero_convention():
    def zero_outside(m, k):
        return math.comb(m, k) if 0 <= k <= m else 0

    for n in range(1, 9):
        for d in range(n + 1):
            for dv in range(n + 1):
                assert _eq2_literal(dv, d, n, zero_outside) == circle_intersection(dv, d, n)
    with pytest.raises(ValueError):  # a = -1: math.comb refuses negative arguments
        _eq2_literal(2, 4, 4, math.comb)


@pytest.mark.parametrize("n, ds", [(64, [0, 1, 5, 11, 15, 31, 32, 33, 63, 64]),
                                   (1000, [1, 447, 451, 700])])
def test_eq2_equals_lune_form_and_table_at_n_64_and_1000(n, ds):
    step = 1 if n == 64 else 41
    for d in ds:
        table = circle_intersection_table(n, d)
        assert table == circle_intersection_table(n, d, method="sum")
        dvs = sorted(set(range(0, n + 1, step)) | {2 * d - 1, 2 * d, 2 * d + 1} & set(range(n + 1)))
        for dv in dvs:
            value = circle_intersection(dv, d, n)
            assert value == table[dv]
            if n == 64 or dv % 3 == 0:  # the lune form is O(dv) binomials; thin it at n = 1000
                assert circle_intersection_lune(dv, d, n) == value


def test_table_accepts_any_order_and_repeats():
    out = circle_intersection_table(64, 11, [22, 0, 5, 5, np.int64(3)])
    assert out == [circle_intersection(v, 11, 64) for v in (22, 0, 5, 5, 3)]
    assert all(isinstance(v, int) for v in out)
    assert circle_intersection_table(64, 11, []) == []


@pytest.mark.parametrize("n, d", [(64, 5), (64, 11), (64, 15), (1000, 447), (1000, 451)])
def test_staircase(n, d):
    table = circle_intersection_table(n, d)
    for k in range(1, n // 2 + 1):
        assert table[2 * k - 1] == table[2 * k]
    # strictly decreasing from one even distance to the next while positive
    evens = [table[v] for v in range(0, 2 * d + 1, 2)]
    assert all(a > b > 0 for a, b in zip(evens, evens[1:]))


def test_edge_cases():
    for n in (1, 7, 64, 1000):
        for d in (0, 1, n // 3, n // 2, n):
            assert circle_intersection(0, d, n) == ball_size(d, n)
        assert circle_intersection(n // 2, n, n) == 2**n  # d = n: the whole space
        assert circle_intersection(n, n, n) == 2**n
    assert circle_intersection(0, 0, 64) == 1
    assert circle_intersection(1, 0, 64) == 0
    for d in range(0, 20):
        assert circle_intersection(2 * d + 1, d, 64) == 0  # d < dv / 2
        assert circle_intersection(2 * d, d, 64) == math.comb(2 * d, d)  # only the midpoints
    assert circle_intersection(32, 15, 64) == 0  # I(n/2) = 0 at n = 64 for d < 16
    assert isinstance(circle_intersection(3, 2, 10), int)


def test_big_integers_are_exact():
    value = circle_intersection(10, 447, 1000)
    assert value.bit_length() > 900
    assert log_circle_intersection(10, 447, 1000) == pytest.approx(math.log(value), rel=1e-15)
    assert log_circle_intersection(30, 5, 64) == -math.inf


def test_ball_functions():
    assert ball_size(2, 5) == 1 + 5 + 10
    assert ball_size(5, 5) == 32
    assert ball_size(0, 1000) == 1
    assert ball_fraction(32, 64) == pytest.approx(0.5 + math.comb(64, 32) / 2**65, rel=1e-15)
    assert ball_fraction(0, 2000) == 0.0  # 2^-2000 underflows ...
    assert log_ball_fraction(0, 2000) == pytest.approx(-2000 * math.log(2))  # ... its log does not
    assert log_ball_fraction(447, 1000) == pytest.approx(math.log(ball_fraction(447, 1000)))
    # radii of the paper's experiments from their ball fractions (n = 64)
    fractions = [1e-13, 1e-9, 1e-8, 7e-6, 3.68e-4, 0.1]
    radii = [min(d for d in range(65) if ball_fraction(d, 64) >= p) for p in fractions]
    assert radii == [5, 9, 11, 15, 19, 27]
    # SNR-optimal radii of Table 1: p* = (2 m r)^(-1/3)
    p_canonical = (2 * 1e4 * 1e6) ** (-1 / 3)  # n = 1000, m = 1e4, r = 1e6
    p_attention = (2 * 1024 * 2.0**64) ** (-1 / 3)  # n = 64, m = 1024, r = 2^64
    assert p_canonical == pytest.approx(3.7e-4, rel=0.01)
    assert p_attention == pytest.approx(2.98e-8, rel=0.001)
    assert min(d for d in range(1001) if ball_fraction(d, 1000) >= p_canonical) == 447
    assert min(d for d in range(65) if ball_fraction(d, 64) >= p_attention) == 11


# ------------------------------------------------------------------------------------------
# Expected neurons and Kanerva's normal approximation
# ------------------------------------------------------------------------------------------


def test_expected_neurons_large_r_and_n():
    value = expected_neurons(5, 11, 64, 2**64)
    assert value == float(circle_intersection(5, 11, 64))  # r = 2^n: the count itself
    assert expected_neurons(0, 447, 1000, 10**6) == pytest.approx(
        1e6 * ball_fraction(447, 1000), rel=1e-14)
    assert expected_neurons(10, 447, 1000, 2**64) > 0
    assert math.isfinite(expected_neurons(0, 500, 1000, 2**64))
    assert log_expected_neurons(5, 11, 64, 2**64) == pytest.approx(math.log(value), rel=1e-14)
    assert log_expected_neurons(3, 1, 1000, 1e6) == -math.inf
    assert expected_neurons(3, 1, 1000, 1e6) == 0.0
    assert expected_neurons(0, 35, 100, np.int64(10_000)) == expected_neurons(0, 35, 100, 1e4)


def test_expected_neurons_match_a_neuron_simulation():
    """Fig. 11 setting (n = 100, d = 35), with more neurons so that counts are large."""
    rng = np.random.default_rng(11)
    n, d, r = 100, 35, 200_000
    neurons = rng.integers(0, 2, size=(r, n), dtype=np.int8)
    query = np.zeros(n, dtype=np.int8)
    to_query = neurons.sum(axis=1)
    for dv in (0, 10, 20, 30):
        pattern = query.copy()
        pattern[:dv] = 1
        to_pattern = (neurons ^ pattern).sum(axis=1)
        count = np.count_nonzero((to_query <= d) & (to_pattern <= d))
        mean = expected_neurons(dv, d, n, r)
        assert abs(count - mean) < 4 * math.sqrt(mean), (dv, count, mean)


def test_continuous_approximation():
    # the three evaluations of the bivariate-normal orthant probability agree
    dvs = np.array([0, 1, 50, 100, 300, 600, 999, 1000])
    owen = circle_intersection_continuous(dvs, 451, 1000)
    quad = circle_intersection_continuous(dvs, 451, 1000, method="quad")
    np.testing.assert_allclose(owen, quad, rtol=1e-9, atol=1e-15)
    assert owen.shape == dvs.shape
    # dv = 0 is a single normal tail, dv = n the band between two tails (here empty)
    cp = (451 - 500) / math.sqrt(250)
    assert owen[0] == pytest.approx(0.5 * math.erfc(-cp / math.sqrt(2)), rel=1e-12)
    assert owen[-1] == 0.0
    assert circle_intersection_continuous(64, 40, 64) == pytest.approx(
        math.erf((40 - 32) / math.sqrt(16) / math.sqrt(2)), rel=1e-12)
    # it approximates the exact fraction at n = 1000 (Fig. 10 setting), better with a
    # continuity correction
    for dv in (0, 100, 300):
        exact = circle_intersection(dv, 451, 1000) / 2**1000
        plain = circle_intersection_continuous(dv, 451, 1000)
        corrected = circle_intersection_continuous(dv, 451, 1000, continuity_correction=True)
        assert abs(plain / exact - 1) < 0.15
        assert abs(corrected / exact - 1) < abs(plain / exact - 1)
    # a scalar in, a float out
    assert isinstance(circle_intersection_continuous(10, 11, 64), float)


# ------------------------------------------------------------------------------------------
# Spherical caps
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(3, 1), (10, 3), (64, 11), (64, 40), (1000, 447), (1000, 100)])
def test_cap_at_rho_one_is_the_single_cap(n, d):
    assert log_cap_intersection(1.0, d, n) == pytest.approx(log_cap_fraction(d, n), rel=1e-12)
    assert cap_intersection(1.0, d, n) == pytest.approx(cap_fraction(d, n), rel=1e-12)


def test_cap_fraction_closed_forms():
    assert cap_fraction(1.5, 3) == pytest.approx(0.5, rel=1e-14)  # c = 0: a hemisphere
    # on S^2 a cap of height h = 1 - c has area fraction h / 2 (Archimedes)
    for d in (0.3, 1.0, 2.2):
        assert cap_fraction(d, 3) == pytest.approx((2 * d / 3) / 2, rel=1e-13)
    assert cap_fraction(2, 2) == 1.0 and cap_fraction(0, 5) == 0.0
    assert cap_fraction(1, 2) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "rho, d, n",
    [(0.9, 27, 64), (0.5, 24, 64), (0.2, 29, 64), (0.3, 2.5, 6), (-0.4, 40, 64),
     (-0.95, 4, 5), (0.6, 0.7, 2), (0.0, 1.5, 3), (0.95, 480, 1000)],
)
def test_cap_intersection_matches_monte_carlo(rho, d, n):
    est, se = cap_intersection_mc(rho, d, n, samples=400_000, seed=7, return_stderr=True)
    value = cap_intersection(rho, d, n)
    assert value > 0
    assert abs(est - value) <= 4 * se + 1e-12, (est, value, se)


def test_cap_intersection_independent_integral():
    """Against a plain quadrature of the other decomposition (condition on <x, u>)."""
    from scipy import integrate, special

    def direct(rho, d, n):
        c = 1 - 2 * d / n
        s = math.sqrt(1 - rho * rho)
        p = (n - 2) / 2

        def integrand(y):
            sigma = (c - rho * y) / (s * math.sqrt(1 - y * y))
            tail = 0.0 if sigma >= 1 else 1.0 if sigma <= -1 else (
                0.5 * special.betainc(p, 0.5, 1 - sigma**2) if sigma >= 0
                else 1 - 0.5 * special.betainc(p, 0.5, 1 - sigma**2))
            return (1 - y * y) ** ((n - 3) / 2) / special.beta((n - 1) / 2, 0.5) * tail

        return integrate.quad(integrand, c, 1, limit=400, epsabs=0, epsrel=1e-11,
                              points=np.linspace(c, 1, 30)[1:-1])[0]

    for rho, d, n in [(0.7, 3, 10), (0.2, 11, 64), (-0.3, 31, 64), (0.5, 447, 1000), (0.9, 1, 5)]:
        assert cap_intersection(rho, d, n) == pytest.approx(direct(rho, d, n), rel=1e-7)


def test_cap_support_and_vectorisation():
    n, d = 64, 11
    theta = math.acos(1 - 2 * d / n)
    # zero from centre angle 2 theta on, i.e. from dv = 4 d (1 - d/n) in Hamming units
    assert cap_intersection(math.cos(2 * theta) - 1e-9, d, n) == 0.0
    assert cap_intersection(math.cos(2 * theta) + 1e-6, d, n) > 0.0
    assert log_cap_intersection(-1.0, d, n) == -math.inf
    # still positive at dv = 2d, where the binary intersection has its last nonzero value
    for dd in (5, 11, 15):
        assert cap_intersection(1 - 4 * dd / 64, dd, 64) > 0
        assert circle_intersection(2 * dd + 1, dd, 64) == 0
    # decreasing in the distance, shape kept, scalar in -> float out
    rho = np.linspace(-1, 1, 201).reshape(3, 67)
    out = cap_intersection(rho, d, n)
    assert out.shape == rho.shape
    flat = out.ravel()
    assert np.all(np.diff(flat) >= 0)
    assert isinstance(cap_intersection(0.5, d, n), float)
    # log space keeps values that underflow as fractions
    deep = log_cap_intersection(0.0, 170, 1000)
    assert -1040 < deep < -1030 and cap_intersection(0.0, 170, 1000) == 0.0
    # obtuse caps (d > n/2) via inclusion-exclusion, equal to 1 at d = n
    assert cap_intersection(-1.0, 64, 64) == pytest.approx(1.0)
    assert cap_intersection(-1.0, 40, 64) == pytest.approx(1 - 2 * cap_fraction(24, 64))


def test_cap_quadrature_order_converged():
    rho = np.linspace(-1, 1, 101)
    for n, d in [(3, 1.2), (64, 11), (1000, 447), (1000, 100), (200, 150)]:
        a = log_cap_intersection(rho, d, n)
        b = log_cap_intersection(rho, d, n, order=200)
        finite = np.isfinite(b)
        np.testing.assert_array_equal(finite, np.isfinite(a))
        np.testing.assert_allclose(a[finite], b[finite], rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------------------------------
# Beta fits (Eq. 10), analytic beta (Eq. 21), largest summand
# ------------------------------------------------------------------------------------------

# n = 64: paper's betas (authors' covariance convention) and plain OLS, from the seed review
PAPER_BETAS = {5: 35.5, 9: 20.0, 11: 15.9, 15: 10.1}
OLS_BETAS = {5: 28.4, 9: 17.8, 11: 14.4, 15: 9.4}


@pytest.mark.parametrize("d", [5, 9, 11, 15])
def test_betas_reproduce_the_paper_and_ols(d):
    authors = fit_beta(64, d, convention="authors")
    ols = fit_beta(64, d)
    assert authors.beta == pytest.approx(PAPER_BETAS[d], abs=0.05)
    assert ols.beta == pytest.approx(OLS_BETAS[d], abs=0.05)
    n_pts = ols.num_points
    assert n_pts == d and ols.dvs == tuple(range(d))
    assert authors.beta == pytest.approx(ols.beta * n_pts / (n_pts - 1), rel=1e-12)
    assert authors.r2 == ols.r2


def test_beta_fit_against_numpy_polyfit():
    fit = fit_beta(64, 11, window=(2, 20))
    dvs = np.arange(2, 21)
    y = np.log([float(v) for v in circle_intersection_table(64, 11, dvs)])
    slope, intercept = np.polyfit(1 - 2 * dvs / 64, y, 1)
    assert fit.beta == pytest.approx(slope, rel=1e-10)
    assert fit.intercept == pytest.approx(intercept, rel=1e-10)
    assert isinstance(fit, BetaFit)
    with pytest.raises(Exception):
        fit.beta = 1.0  # frozen


def test_seed_r2_values_and_windows():
    r2 = {d: fit_beta(64, d).r2 for d in (5, 11, 15)}
    assert r2[5] == pytest.approx(0.89, abs=0.005)
    assert r2[11] == pytest.approx(0.97, abs=0.005)
    assert r2[15] == pytest.approx(0.98, abs=0.005)
    assert fit_beta(1000, 447).r2 == pytest.approx(0.99, abs=0.005)
    for d in (5, 11, 15):  # even distances only: the staircase corners are nearly exponential
        assert fit_beta(64, d, even_only=True).r2 >= 0.998
    # the fit window moves beta: 14.4 on dv < d but 19.3 on dv <= 2d (n = 64, d = 11)
    assert fit_beta(64, 11, window=(0, 22)).beta == pytest.approx(19.3, abs=0.05)
    # at n = 1000 the curve over dv <= 2d is not exponential (seed: R^2 ~ 0.68)
    assert fit_beta(1000, 451, window=(0, 902)).r2 == pytest.approx(0.68, abs=0.005)
    assert fit_beta(1000, 447, window=(0, 894)).r2 == pytest.approx(0.69, abs=0.005)
    # beta_Mem at d = 5 between about 28 and 33 depending on the window
    betas = [fit_beta(64, 5, window=w).beta for w in (None, (0, 5), (0, 10))]
    assert 28 <= min(betas) and max(betas) <= 33


def test_window_forms_agree():
    a = fit_beta(64, 11, window=(0, 10))
    b = fit_beta(64, 11, window=range(11))
    c = fit_beta(64, 11, window=[10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9])
    d = fit_beta(64, 11)
    assert a == b == c == d
    e = fit_beta(64, 11, window=np.arange(0, 11, 2))
    assert e == fit_beta(64, 11, even_only=True)


def test_analytic_beta_and_largest_summand():
    for d, expected in [(5, 11.4), (11, 6.9), (15, 4.5)]:
        assert analytic_beta(64, d) == pytest.approx(expected, abs=0.05)
        assert analytic_beta(64, d) < fit_beta(64, d).beta / 2  # 2-2.5x too small
    # the largest summand alone reproduces the regression slope (d = 11, even distances)
    assert largest_summand_beta(64, 11, even_only=True).beta == pytest.approx(14.8, abs=0.05)
    assert fit_beta(64, 11, even_only=True).beta == pytest.approx(14.6, abs=0.05)
    # by hand: C(64, 11) / (2 C(62, 10)) ~ 3.46 per two steps, i.e. beta ~ 20 at dv = 0
    ratio = largest_summand(0, 11, 64) / largest_summand(2, 11, 64)
    assert ratio == pytest.approx(3.46, abs=0.005)
    assert math.log(ratio) * 64 / 4 == pytest.approx(19.85, abs=0.01)
    # the largest summand is a lower bound, the paper's term for d <= n/2, and zero with I
    for n in (8, 13, 64):
        for d in range(n + 1):
            for dv in range(n + 1):
                term = largest_summand(dv, d, n)
                value = circle_intersection(dv, d, n)
                assert term <= value and (term == 0) == (value == 0)
                if 2 * d <= n and term:
                    a = n - d - dv // 2
                    assert term == math.comb(n - dv, a) * math.comb(dv, dv // 2)
    # Eq. 20 has slope beta_analytic in the cosine
    slope = analytic_log_intersection(2, 11, 64) - analytic_log_intersection(0, 11, 64)
    assert -slope * 64 / 4 == pytest.approx(analytic_beta(64, 11))


def test_cap_fit():
    fit = fit_beta(64, 11, intersection="cap")
    assert fit.r2 > 0.99
    # a pure exponential in the cosine only asymptotically; here beta is ~19.6
    assert fit.beta == pytest.approx(19.58, abs=0.05)
    rho = 1 - 2 * np.arange(11) / 64
    y = log_cap_intersection(rho, 11, 64)
    assert fit.beta == pytest.approx(np.polyfit(rho, y, 1)[0], rel=1e-10)


def test_normalised_weight_discrepancy():
    """Seed: TV distance between SDM and fitted-softmax weights, one pattern per distance."""
    x = 1 - 2 * np.arange(65) / 64
    for d, expected in [(5, 0.16), (11, 0.12), (15, 0.09)]:
        weights = np.array([float(v) for v in circle_intersection_table(64, d)])
        weights /= weights.sum()
        beta = fit_beta(64, d).beta
        soft = np.exp(beta * (x - 1))
        soft /= soft.sum()
        assert 0.5 * np.abs(weights - soft).sum() == pytest.approx(expected, abs=0.005)


# ------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------


def test_integral_numpy_and_float_arguments_accepted():
    expected = circle_intersection(3, 2, 10)
    assert circle_intersection(np.int64(3), np.int32(2), np.uint16(10)) == expected
    assert circle_intersection(3.0, 2.0, 10.0) == circle_intersection(3, 2, 10)
    assert circle_intersection(np.array(3), 2, 10) == circle_intersection(3, 2, 10)


@pytest.mark.parametrize(
    "call",
    [
        lambda: circle_intersection(-1, 2, 10),
        lambda: circle_intersection(1, -2, 10),
        lambda: circle_intersection(11, 2, 10),
        lambda: circle_intersection(1, 11, 10),
        lambda: circle_intersection(2.5, 2, 10),
        lambda: circle_intersection(2, 2.5, 10),
        lambda: circle_intersection(1, 0, 0),
        lambda: circle_intersection(True, 2, 10),
        lambda: circle_intersection("3", 2, 10),
        lambda: circle_intersection(float("nan"), 2, 10),
        lambda: circle_intersection_lune(3, 2, 0),
        lambda: circle_intersection_table(10, 2, [1, 11]),
        lambda: circle_intersection_table(10, 2, [1.5]),
        lambda: circle_intersection_table(10, 2, method="fast"),
        lambda: circle_intersection_enumerate(1, 1, 21),
        lambda: circle_intersection_continuous(-1, 2, 10),
        lambda: circle_intersection_continuous(1, 11, 10),
        lambda: circle_intersection_continuous(1, 2, 10, method="mc"),
        lambda: ball_size(-1, 10),
        lambda: ball_fraction(3, 0),
        lambda: log_ball_fraction(2.5, 10),
        lambda: expected_neurons(1, 2, 10, 0),
        lambda: expected_neurons(1, 2, 10, -5),
        lambda: expected_neurons(1, 2, 10, float("inf")),
        lambda: cap_intersection(1.01, 11, 64),
        lambda: cap_intersection(np.array([0.0, -1.5]), 11, 64),
        lambda: cap_intersection(float("nan"), 11, 64),
        lambda: cap_intersection(0.5, -1, 64),
        lambda: cap_intersection(0.5, 65, 64),
        lambda: cap_intersection(0.5, 0.5, 1),
        lambda: cap_intersection(0.5, 11, 64, order=1),
        lambda: cap_fraction(3, 1),
        lambda: cap_intersection_mc(0.5, 11, 64, samples=0),
        lambda: cap_intersection_mc(2.0, 11, 64),
        lambda: fit_beta(64, 0),  # default window dv = 0..d-1 is empty
        lambda: fit_beta(64, 1),  # a single point
        lambda: fit_beta(64, 11, window=[]),
        lambda: fit_beta(64, 11, window=(5, 3)),
        lambda: fit_beta(64, 11, window=(0, 30)),  # I = 0 beyond 2d
        lambda: fit_beta(64, 11, window=(0, 65)),
        lambda: fit_beta(64, 11, window=[1], even_only=True),
        lambda: fit_beta(64, 11, convention="numpy"),
        lambda: fit_beta(64, 11, intersection="ball"),
        lambda: fit_beta(64, 11, window=(0, 40), intersection="cap"),  # caps disjoint at dv = 40
        lambda: fit_beta(64, 70),
        lambda: analytic_beta(0, 0),
        lambda: largest_summand(3, 2.5, 10),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_module_exports():
    for name in sdm.__all__:
        assert getattr(sdm, name).__doc__, name


# ------------------------------------------------------------------------------------------
# 0-d integer arguments, and the warnings of fit_beta


def test_zero_dimensional_integers_are_accepted():
    torch = pytest.importorskip("torch")
    want = circle_intersection(3, 5, 64)
    assert circle_intersection(torch.tensor(3), 5, 64) == want
    assert circle_intersection(np.int64(3), np.int32(5), np.array(64)) == want
    assert circle_intersection(torch.tensor(3.0), torch.tensor(5), 64) == want  # integral float
    assert ball_size(torch.tensor(5), torch.tensor(64)) == ball_size(5, 64)
    assert isinstance(circle_intersection(torch.tensor(3), 5, 64), int)
    for bad, msg in ((torch.tensor(True), "boolean"), (np.array(True), "boolean"),
                     (torch.tensor(2.5), "must be an integer"), (torch.tensor([3]), "must be an integer"),
                     ("3", "must be an integer")):
        with pytest.raises(ValueError, match=msg):
            circle_intersection(bad, 5, 64)


def test_fit_beta_warns_past_half_the_space():
    with pytest.warns(UserWarning, match=r"fit_beta\(n=64, d=40\): beta = 0\.009.* n/2 = 32"):
        fit = fit_beta(64, 40)
    assert fit.beta == pytest.approx(0.00944, abs=1e-5)  # still returned, unchanged
    with pytest.warns(UserWarning, match="n/2 = 32"):
        fit_beta(64, 32, intersection="cap")
    # far past n/2 the line is poor as well, and the message gives both reasons
    with pytest.warns(UserWarning, match=r"n/2 = 32.*; and log I is far from a line.*R\^2 = 0\.456 < 0\.5"):
        fit_beta(64, 45)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        # every fit the chapters make: the paper's radii, their windows and conventions
        *[((64, d), {}) for d in (2, 3, 4, 5, 7, 9, 11, 13, 15, 19, 23, 27, 31)],
        *[((64, d), {"even_only": True}) for d in (5, 11, 15, 27, 31)],
        *[((64, d), {"intersection": "cap"}) for d in (5, 9, 11, 15, 19, 27, 31)],
        *[((64, d), {"convention": "authors"}) for d in (5, 9, 11, 15, 19, 27)],
        *[((64, d), {"window": (0, 2 * d)}) for d in (5, 11, 15)],
        ((64, 5), {"window": (0, 4)}), ((64, 5), {"window": (0, 5)}), ((64, 5), {"window": (0, 10)}),
        ((1000, 447), {}), ((1000, 451), {}), ((1000, 447), {"window": (0, 894)}),
        ((1000, 451), {"window": (0, 902)}), ((1000, 480), {}), ((8, 2), {}),
    ],
)
def test_fit_beta_is_silent_on_the_books_fits(args, kwargs):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_beta(*args, **kwargs)
