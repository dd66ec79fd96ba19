"""Tests for assocmem.sdm.capacity.signal_noise: SNR (Eq. 25), capacity (Eqs. 26-27), z-scores.

Seed values (the review of Bricken & Pehlevan 2021) are pinned with their printed precision.
Where our model does not reproduce a seed value exactly, the test pins our value and says so.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from assocmem.sdm.capacity.optimal_radii import ATTENTION, CANONICAL, optimal_radius
from assocmem.sdm.capacity.signal_noise import capacity, mean_random_overlap, retrieval_z, snr
from assocmem.sdm.geometry.balls import ball_fraction, ball_size
from assocmem.sdm.geometry.intersection import circle_intersection_table


CAN = (CANONICAL.n, CANONICAL.r, CANONICAL.m)
ATT = (ATTENTION.n, ATTENTION.r, ATTENTION.m)


# ------------------------------------------------------------------------------------------
# Eq. 25: signal-to-noise ratio
# ------------------------------------------------------------------------------------------


def _snr_exact(n, r, m, d, x):
    """Eq. 25 in exact rationals, one square root at the end."""
    s = Fraction(circle_intersection_table(n, d, [x])[0] * r, 2**n)
    p = Fraction(ball_size(d, n), 2**n)
    mu = p * p * r
    var = s + (m - 1) * (mu + mu * mu)
    return float(s) / math.sqrt(var) if s else 0.0


@pytest.mark.parametrize("x", [0, 1, 2, 5, 9, 14, 15])
def test_snr_equals_exact_rational_evaluation(x):
    n, r, m, d = 20, 1000, 50, 7
    assert snr(n, r, m, d, x) == pytest.approx(_snr_exact(n, r, m, d, x), rel=1e-12)


def test_snr_in_the_big_settings_is_finite_and_exact():
    # canonical: p ~ 4.45e-4 at d = 447; attention: r = 2^64 never becomes a float count
    assert snr(*CAN, 447) == pytest.approx(_snr_exact(*CAN, 447, 0), rel=1e-12)
    assert snr(*ATT, 11) == pytest.approx(_snr_exact(*ATT, 11, 0), rel=1e-12)
    assert math.isfinite(snr(1000, 2**64, 1024, 30))  # p = 2^-1000-ish scale, no underflow crash
    assert snr(1000, 10**6, 10**4, 0) > 0.0


def test_snr_limits():
    n, r, m, d = 64, 2**64, 1024, 11
    assert snr(n, r, m, d, x=2 * d + 1) == 0.0  # balls do not meet
    # a lone pattern: SNR = sqrt(E[I*]) = sqrt(p r)
    assert snr(n, r, 1, d) == pytest.approx(math.sqrt(ball_fraction(d, n) * r), rel=1e-12)
    # SNR falls as the query moves away from the target
    values = [snr(n, r, m, d, x) for x in range(0, 2 * d + 2)]
    assert all(a >= b for a, b in zip(values, values[1:]))


def test_mean_random_overlap_is_the_exact_average_over_random_patterns():
    # E_dv[I(dv, d, n)] over dv ~ Binomial(n, 1/2) is exactly |B|^2 / 2^n, i.e. p^2 r per neuron
    n, d, r = 24, 9, 10**5
    table = circle_intersection_table(n, d)
    avg = sum(Fraction(math.comb(n, k), 2**n) * table[k] for k in range(n + 1))
    assert avg == Fraction(ball_size(d, n) ** 2, 2**n)
    p = ball_fraction(d, n)
    assert mean_random_overlap(n, r, d) == pytest.approx(p * p * r, rel=1e-12)


def test_orthogonal_overlap_vanishes_at_n64_below_d16():
    for d in (5, 11, 15):
        assert mean_random_overlap(64, 2**64, d, mean_overlap="orthogonal") == 0.0
    assert mean_random_overlap(64, 2**64, 16, mean_overlap="orthogonal") > 0.0
    expected = circle_intersection_table(64, 16, [32])[0]  # r = 2^n: one neuron per address
    assert mean_random_overlap(64, 2**64, 16, mean_overlap="orthogonal") == pytest.approx(
        expected, rel=1e-13)


# ------------------------------------------------------------------------------------------
# Eqs. 26-27: capacity and z-scores
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("setting, d", [(CAN, 444), (CAN, 448), (ATT, 5), (ATT, 11), (ATT, 15)])
def test_capacity_inverts_eq25(setting, d):
    n, r, m = setting
    z = snr(n, r, m, d)
    # z carries the margin over one pattern in its last digits (E[I*]/z^2 - 1 ~ 5e-10 at d = 5)
    assert capacity(n, r, d, z) == pytest.approx(m, rel=1e-5)


def test_capacity_formula_and_edge_cases():
    n, r, d, z = CAN[0], CAN[1], 444, 2.5
    p = ball_fraction(d, n)
    s, mu = p * r, p * p * r
    assert capacity(n, r, d, z) == pytest.approx((s * s / z**2 - s) / (mu + mu * mu) + 1, rel=1e-10)
    # below E[I*] = z^2 not even one pattern reaches the SNR
    assert capacity(64, 2**64, 0, 3.0) < 1.0  # E[I*] = 1 < z^2 = 9
    # no noise term at all: unbounded capacity
    assert capacity(64, 2**64, 11, 3.0, mean_overlap="orthogonal") == math.inf
    # huge r and n do not overflow
    assert math.isfinite(capacity(1000, 2**64, 300, 3.0))


def test_retrieval_z():
    assert retrieval_z(0.975) == pytest.approx(1.959963984540054, rel=1e-12)
    assert retrieval_z(0.99, n=1000) == pytest.approx(stats.norm.ppf(0.99 ** (1 / 1000)), rel=1e-6)
    assert retrieval_z(0.99, n=1000) == pytest.approx(4.2638, abs=1e-4)
    assert retrieval_z(0.99, n=64) == pytest.approx(3.6034, abs=1e-4)
    # the authors' notebook: whole-pattern probability 0.5 at n = 64
    assert retrieval_z(0.5, n=64) == pytest.approx(2.298313131383402, rel=1e-9)


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: snr(0, 100, 10, 0),
        lambda: snr(64, 0.5, 10, 5),
        lambda: snr(64, 0, 10, 5),
        lambda: snr(64, 100, 0, 5),
        lambda: snr(64, 100, 10, -1),
        lambda: snr(64, 100, 10, 65),
        lambda: snr(64, 100, 10, 5, x=65),
        lambda: snr(64, 100, 10.5, 5),
        lambda: snr(64, 100, True, 5),
        lambda: snr(64, 100, 10, 5, mean_overlap="median"),
        lambda: capacity(64, 2**64, 5, 0),
        lambda: capacity(64, 2**64, 5, -1.0),
        lambda: capacity(64, 2**64, 5, float("nan")),
        lambda: capacity(64, 2**64, 70, 2.0),
        lambda: capacity(64, 0.9, 5, 2.0),
        lambda: retrieval_z(0.0),
        lambda: retrieval_z(1.0),
        lambda: retrieval_z(0.99, n=0),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_accepted_number_types():
    # numpy integers, integral floats, float r and huge Python ints all work
    a = snr(np.int64(64), 2.0**64, np.int32(1024), 11.0)
    b = snr(64, 2**64, 1024, 11)
    assert a == pytest.approx(b, rel=1e-12)
    assert optimal_radius(64, 2**64, 1024, "snr").r == 2**64
