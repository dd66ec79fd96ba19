"""Tests for assocmem.sdm.capacity.optimal_radii: the settings, the continuous optima and Table 1.

Seed values (the review of Bricken & Pehlevan 2021) are pinned with their printed precision.
Where our model does not reproduce a seed value exactly, the test pins our value and says so.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats

from assocmem.sdm.capacity.optimal_radii import (
    ATTENTION,
    CANONICAL,
    CRITERIA,
    OptimalRadius,
    SDMSetting,
    memory_optimal_fraction,
    optimal_radius,
    radius_for_fraction,
    snr_optimal_fraction,
    table1,
)
from assocmem.sdm.capacity.signal_noise import capacity, retrieval_z, snr
from assocmem.sdm.geometry.balls import ball_fraction, ball_size


CAN = (CANONICAL.n, CANONICAL.r, CANONICAL.m)
ATT = (ATTENTION.n, ATTENTION.r, ATTENTION.m)


@pytest.fixture(scope="module")
def table():
    """Table 1 with the defaults, keyed by (setting name, criterion)."""
    rows = table1()
    names = [s.name for s in (CANONICAL, ATTENTION) for _ in CRITERIA]
    return {(name, row.criterion): row for name, row in zip(names, rows)}


# ------------------------------------------------------------------------------------------
# Settings
# ------------------------------------------------------------------------------------------


def test_settings_are_the_papers():
    assert CANONICAL == SDMSetting("canonical", 1000, 10**6, 10**4)
    assert ATTENTION == SDMSetting("attention", 64, 2**64, 1024)
    assert CRITERIA == ("snr", "memory", "critical_distance")


# ------------------------------------------------------------------------------------------
# Continuous optima
# ------------------------------------------------------------------------------------------


def test_snr_optimal_fraction_seed_values():
    assert snr_optimal_fraction(10**6, 10**4) == pytest.approx(3.7e-4, abs=0.05e-4)
    assert snr_optimal_fraction(10**6, 10**4) == pytest.approx(2e10 ** (-1 / 3), rel=1e-12)
    assert snr_optimal_fraction(2**64, 1024) == pytest.approx(2.0**-25, rel=1e-12)  # 2.98e-8
    assert f"{snr_optimal_fraction(2**64, 1024):.2e}" == "2.98e-08"


def test_snr_optimal_fraction_maximises_the_continuous_snr():
    r, m = 10**6, 10**4

    def snr_p(p):  # Eq. 25 with m - 1 ~ m, as in the derivation
        return p * r / math.sqrt(p * r + m * (p * p * r + (p * p * r) ** 2))

    p = snr_optimal_fraction(r, m)
    assert snr_p(p) > snr_p(p * 1.01) and snr_p(p) > snr_p(p / 1.01)


def test_memory_optimal_fraction_matches_the_authors_notebook_and_the_capacity_maximum():
    # Optimal_d.ipynb: z = norm.ppf(0.5 ** (1/64)), r = 2^64 -> p = 1.979930592478041e-13 -> d = 5
    assert memory_optimal_fraction(2**64, 2.298313131383402) == pytest.approx(
        1.979930592478041e-13, rel=1e-9)
    r, z = 10**6, 4.2638
    p = memory_optimal_fraction(r, z)

    def cap(p):
        return (r / z**2 - 1 / p) / (1 + r * p * p) + 1

    assert cap(p) > cap(p * 1.01) and cap(p) > cap(p / 1.01)
    assert math.isfinite(memory_optimal_fraction(2**3000, 3.0))


def test_radius_for_fraction_is_the_binomial_quantile():
    for n in (64, 1000):
        for p in (1e-13, 2.98e-8, 3.68e-4, 0.01, 0.5):
            assert radius_for_fraction(n, p) == int(stats.binom.ppf(p, n, 0.5))
    # exact at the boundary: the fraction of ball d itself gives d
    assert radius_for_fraction(64, Fraction(ball_size(11, 64), 2**64)) == 11
    assert radius_for_fraction(64, 1.0) == 64


# ------------------------------------------------------------------------------------------
# Table 1
# ------------------------------------------------------------------------------------------


def test_table1_snr_optima(table):
    can, att = table["canonical", "snr"], table["attention", "snr"]
    assert isinstance(can, OptimalRadius)
    assert (can.d, att.d) == (447, 11)
    assert can.p_star == pytest.approx(3.7e-4, abs=0.05e-4)
    assert att.p_star == pytest.approx(2.98e-8, abs=0.005e-8)
    for row in (can, att):  # d* is the smallest radius with ball fraction >= p*
        assert ball_fraction(row.d - 1, row.n) < row.p_star <= ball_fraction(row.d, row.n)
        assert row.p == pytest.approx(ball_fraction(row.d, row.n), rel=1e-12)
        assert row.value == pytest.approx(snr(row.n, row.r, row.m, row.d), rel=1e-12)


def test_snr_integer_maximum_differs_in_the_canonical_setting():
    # Eq. 25 maximised over integer d peaks one radius lower than the continuous recipe
    assert optimal_radius(*CAN, "snr", method="integer").d == 446
    assert optimal_radius(*ATT, "snr", method="integer").d == 11


def test_table1_memory_optima(table):
    can, att = table["canonical", "memory"], table["attention", "memory"]
    assert (can.d, att.d) == (444, 5)
    assert can.z == pytest.approx(retrieval_z(0.99, 1000), rel=1e-12)
    assert can.value == pytest.approx(capacity(1000, 10**6, 444, can.z), rel=1e-12)
    # the authors' continuous recipe agrees at 99 %
    assert optimal_radius(*CAN, "memory", method="continuous").d == 444
    assert optimal_radius(*ATT, "memory", method="continuous").d == 5


def test_memory_optimum_with_the_authors_z():
    # The notebook's actual setting (whole-pattern probability 0.5): the continuous recipe gives
    # the paper's 444, the integer maximum 443; the Attention optimum is 5 either way.
    assert optimal_radius(*CAN, "memory", retrieval=0.5, method="continuous").d == 444
    assert optimal_radius(*CAN, "memory", retrieval=0.5).d == 443
    assert optimal_radius(*ATT, "memory", retrieval=0.5).d == 5
    assert optimal_radius(*ATT, "memory", retrieval=0.5, method="continuous").d == 5


def test_table1_critical_distance_optima(table):
    can, att = table["canonical", "critical_distance"], table["attention", "critical_distance"]
    assert (can.d, can.value, can.ties) == (448, 172.0, (448,))
    # Attention: d = 15 and 16 tie at 24 bits; the default tie-break (smallest radius) gives 15
    assert (att.d, att.value, att.ties) == (15, 24.0, (15, 16))


def test_critical_distance_model_variants():
    # other tie-breaks / rounding: documented, not the seed's 15
    assert optimal_radius(*ATT, "critical_distance", tie_break="crossing").d == 16
    rounded = optimal_radius(*ATT, "critical_distance", round_distance=True)
    assert rounded.d == 11 and rounded.ties[:4] == (11, 12, 13, 14)
    # the canonical optimum is robust to both
    assert optimal_radius(*CAN, "critical_distance", tie_break="crossing").d == 448
    assert optimal_radius(*CAN, "critical_distance", round_distance=True).d == 448


def test_critical_distance_optimum_for_small_m():
    # Fig. 17c: for m <= 512, d*_CD ranges from 16 to 22. Our model: 16-20 with the crossing
    # tie-break over m = 1, 2, 4, ..., 512 (inside the seed's range), but the smallest-radius
    # tie-break that gives 15 at m = 1024 gives 14 at m = 512.
    ms = [2**k for k in range(10)]
    crossing = [optimal_radius(64, 2**64, m, "critical_distance", tie_break="crossing").d
                for m in ms]
    assert crossing == [16, 17, 17, 18, 18, 19, 20, 20, 18, 16]
    assert all(16 <= d <= 22 for d in crossing)
    assert optimal_radius(64, 2**64, 512, "critical_distance").d == 14


def test_betas_at_the_optima(table):
    att = {c: table["attention", c] for c in CRITERIA}
    # review (OLS, window dv < d): beta_CD ~ 9.4, beta_SNR ~ 14.4, beta_Mem ~ 28-33
    assert att["critical_distance"].beta_ols == pytest.approx(9.4, abs=0.05)
    assert att["snr"].beta_ols == pytest.approx(14.4, abs=0.05)
    assert 28.0 <= att["memory"].beta_ols <= 33.0
    # paper, authors' convention: beta_Mem = 35.5 (Fig. 7), 15.9 (d = 11), 10.1 (d = 15)
    assert att["memory"].beta_authors == pytest.approx(35.5, abs=0.05)
    assert att["snr"].beta_authors == pytest.approx(15.9, abs=0.05)
    assert att["critical_distance"].beta_authors == pytest.approx(10.1, abs=0.05)
    for c in CRITERIA:  # the canonical betas exist and are ordered by radius
        assert math.isfinite(table["canonical", c].beta_ols)
    assert (table["canonical", "memory"].beta_ols > table["canonical", "snr"].beta_ols
            > table["canonical", "critical_distance"].beta_ols)


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: snr_optimal_fraction(0.5, 10),
        lambda: snr_optimal_fraction(100, 0),
        lambda: memory_optimal_fraction(100, 0.0),
        lambda: radius_for_fraction(64, 0.0),
        lambda: radius_for_fraction(64, 1.5),
        lambda: optimal_radius(0, 100, 10),
        lambda: optimal_radius(64, 0.1, 10),
        lambda: optimal_radius(64, 100, 0),
        lambda: optimal_radius(64, 2**64, 1024, "memory", z=0),
        lambda: optimal_radius(64, 2**64, 1024, "memory", z=-2.0),
        lambda: optimal_radius(64, 2**64, 1024, "memory", retrieval=1.0),
        lambda: optimal_radius(64, 2**64, 1024, "snr", method="newton"),
        lambda: optimal_radius(64, 2**64, 1024, "critical_distance", method="continuous"),
        lambda: optimal_radius(64, 2**64, 1024, "critical_distance", tie_break="largest"),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_criterion_lists_the_valid_ones():
    with pytest.raises(ValueError) as info:
        optimal_radius(64, 2**64, 1024, "capacity")
    message = str(info.value)
    for name in CRITERIA:
        assert name in message
