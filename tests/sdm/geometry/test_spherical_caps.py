"""Tests for assocmem.sdm.geometry.spherical_caps: single caps and the intersection of two caps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm.geometry.intersection import circle_intersection
from assocmem.sdm.geometry.spherical_caps import (
    cap_fraction,
    cap_intersection,
    cap_intersection_mc,
    log_cap_fraction,
    log_cap_intersection,
)


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
# Bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
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
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
