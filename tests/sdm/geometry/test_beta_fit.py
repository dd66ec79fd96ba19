"""Tests for assocmem.sdm.geometry.beta_fit: fitted beta (Eq. 10), analytic beta (Eq. 21).

Reference values quoted from the seed review of Bricken & Pehlevan (2021) are pinned with their
printed precision.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm.geometry.beta_fit import (
    BetaFit,
    analytic_beta,
    analytic_log_intersection,
    fit_beta,
    largest_summand,
    largest_summand_beta,
)
from assocmem.sdm.geometry.intersection import circle_intersection, circle_intersection_table
from assocmem.sdm.geometry.spherical_caps import log_cap_intersection


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
# Bad input and the warnings of fit_beta
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
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
