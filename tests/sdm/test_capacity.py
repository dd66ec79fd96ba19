"""Tests for assocmem.sdm.capacity: SNR (Eq. 25), capacity (Eqs. 26-27), critical distance,
the optimal radii of Table 1 and the weight of far patterns.

Seed values (the review of Bricken & Pehlevan 2021) are pinned with their printed precision.
Where our model does not reproduce a seed value exactly, the test pins our value and says so.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from assocmem.sdm import ball_fraction, ball_size, circle_intersection_table
from assocmem.sdm.capacity import (
    ATTENTION,
    CANONICAL,
    CRITERIA,
    CriticalDistance,
    OptimalRadius,
    SDMSetting,
    capacity,
    critical_distance,
    critical_distance_analysis,
    far_pattern_weight,
    far_pattern_weight_mc,
    far_pattern_weight_meanfield,
    far_pattern_weight_sdm,
    far_pattern_weight_sdm_mc,
    mean_random_overlap,
    memory_capacity,
    memory_optimal_fraction,
    optimal_radius,
    radius_for_fraction,
    read_distance_map,
    read_trajectory,
    retrieval_z,
    snr,
    snr_optimal_fraction,
    table1,
)

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


def test_exports():
    import importlib

    module = importlib.import_module("assocmem.sdm.capacity")
    assert memory_capacity is capacity
    assert "capacity" not in module.__all__  # a star import must not shadow the submodule
    for name in module.__all__:
        assert hasattr(module, name)


def test_settings_are_the_papers():
    assert CANONICAL == SDMSetting("canonical", 1000, 10**6, 10**4)
    assert ATTENTION == SDMSetting("attention", 64, 2**64, 1024)
    assert CRITERIA == ("snr", "memory", "critical_distance")


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
# Critical distance: the fixed-point analysis agrees with literal iteration
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, r, m, d", [
    (1000, 10**6, 10**4, 448),
    (1000, 10**6, 10**4, 451),
    (64, 2**64, 1024, 15),
    (64, 2**64, 1024, 11),
    (100, 10**4, 100, 38),
    (100, 10**4, 300, 38),
])
@pytest.mark.parametrize("round_distance", [False, True])
def test_critical_distance_agrees_with_iterated_reads(n, r, m, d, round_distance):
    res = critical_distance_analysis(n, r, m, d, round_distance=round_distance)
    assert isinstance(res, CriticalDistance)
    cd = res.critical_distance
    assert cd == critical_distance(n, r, m, d, round_distance=round_distance)
    assert 0 <= cd < n
    inside = read_trajectory(n, r, m, d, cd, steps=5000, round_distance=round_distance)
    outside = read_trajectory(n, r, m, d, cd + 1, steps=5000, round_distance=round_distance)
    assert inside[-1] <= 0.5 < outside[-1]
    assert res.crossing is not None and cd < res.crossing <= cd + 1


def test_read_distance_map_shape_and_limits():
    f = read_distance_map(64, 2**64, 1024, 15)
    assert f.shape == (65,)
    assert np.all(np.diff(f) >= 0)  # nondecreasing
    assert np.all(f[31:] == 32.0)  # beyond 2d: half the bits wrong
    assert f[0] < 1e-12
    assert np.array_equal(f[1::2][:15], f[2::2][:15])  # the staircase I(2k-1) = I(2k)


def test_critical_distance_edge_cases():
    # heavy load: not even the exact cue converges
    res = critical_distance_analysis(64, 2**64, 1024, 30)
    assert res.critical_distance == -1 and res.crossing is None and res.attractor > 0.5
    # a single pattern read with 2d >= n/2: every start converges
    assert critical_distance(64, 2**64, 1, 17) == 64
    # tolerance 0 is unattainable when f(0) > 0
    assert critical_distance(1000, 10**6, 10**4, 448, tolerance=0.0) == -1
    with pytest.raises(ValueError, match="no radius"):
        optimal_radius(*CAN, "critical_distance", tolerance=0.0)


# ------------------------------------------------------------------------------------------
# Weight on far patterns
# ------------------------------------------------------------------------------------------


def test_far_pattern_weight_seed_values():
    m = 1024
    assert far_pattern_weight(14.4, m) == pytest.approx(6e-4, abs=0.5e-4)  # seed: ~6e-4
    assert far_pattern_weight(14.4, m) == pytest.approx(5.7044e-4, rel=1e-4)
    # seed: "~0.07" at beta ~ 9.4; the formula gives 0.078 (0.0755 at the OLS beta 9.436)
    assert far_pattern_weight(9.4, m) == pytest.approx(0.0781, abs=1e-4)
    assert far_pattern_weight(9.436, m) == pytest.approx(0.0755, abs=1e-4)
    assert far_pattern_weight(9.4, m) > 0.075  # not 0.07 to two decimals


def test_far_pattern_weight_closed_form_and_broadcasting():
    beta = np.array([0.0, 5.0, 20.0])
    out = far_pattern_weight(beta, 10, cos=0.25)
    expected = 10 * np.exp(-beta * 0.75) / (1 + 10 * np.exp(-beta * 0.75))
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert far_pattern_weight(3.0, 7, cos=1.0) == pytest.approx(7 / 8)
    assert 0.0 <= far_pattern_weight(1e4, 1024) < 1e-300  # underflows cleanly, no nan


def test_far_pattern_weight_meanfield_is_the_exact_average():
    n, beta, m = 64, 9.436, 1024
    # bipolar: cos = (n - 2k)/n with k ~ Binomial(n, 1/2)
    mean_b = sum(math.comb(n, k) / 2**n * math.exp(beta * ((n - 2 * k) / n - 1))
                 for k in range(n + 1))
    assert far_pattern_weight_meanfield(beta, m, n) == pytest.approx(m * mean_b / (1 + m * mean_b),
                                                                     rel=1e-12)
    # sphere: density of cos proportional to (1 - t^2)^((n - 3)/2)
    dens = lambda t: (1 - t * t) ** ((n - 3) / 2)  # noqa: E731
    norm_, _ = integrate.quad(dens, -1, 1)
    num, _ = integrate.quad(lambda t: dens(t) * math.exp(beta * (t - 1)), -1, 1, epsabs=0,
                            epsrel=1e-12)
    mean_g = num / norm_
    assert far_pattern_weight_meanfield(beta, m, n, patterns="gaussian") == pytest.approx(
        m * mean_g / (1 + m * mean_g), rel=1e-9)
    # random patterns roughly double (beta_CD) or quintuple (beta_SNR) the orthogonal weight
    assert far_pattern_weight_meanfield(9.436, m, n) == pytest.approx(0.1404, abs=5e-4)
    assert far_pattern_weight_meanfield(14.41, m, n) == pytest.approx(2.81e-3, abs=0.02e-3)
    assert far_pattern_weight_meanfield(0.0, m, n) == pytest.approx(m / (m + 1))


@pytest.mark.parametrize("patterns", ["bipolar", "gaussian"])
@pytest.mark.parametrize("beta", [9.436, 14.41])
def test_far_pattern_weight_mc_matches_meanfield(patterns, beta):
    mean, err = far_pattern_weight_mc(beta, 1024, 64, trials=96, seed=3, patterns=patterns,
                                      return_stderr=True)
    expected = far_pattern_weight_meanfield(beta, 1024, 64, patterns=patterns)
    assert abs(mean - expected) < 5 * err + 0.01 * expected
    # and it is far from the orthogonal closed form
    assert mean > 1.5 * far_pattern_weight(beta, 1024)


def test_far_pattern_weight_mc_is_deterministic():
    a = far_pattern_weight_mc(9.4, 256, 64, trials=10, seed=7)
    b = far_pattern_weight_mc(9.4, 256, 64, trials=10, seed=7)
    assert a == b
    assert far_pattern_weight_mc(9.4, 256, 64, trials=10, seed=8) != a


def test_far_pattern_weight_sdm():
    m = 1024
    # mean field m p / (1 + m p): E[I(dv)] / I(0) = p exactly for a random pattern
    for d in (5, 11, 15):
        p = ball_fraction(d, 64)
        assert far_pattern_weight_sdm(64, d, m) == pytest.approx(m * p / (1 + m * p), rel=1e-12)
    # d = 5: every random pattern lies beyond 2d = 10 in practice -> exactly 0
    assert far_pattern_weight_sdm_mc(64, 5, m, trials=32, seed=0) == 0.0
    # d = 15: 35 % of random patterns lie within 2d = 30, so SDM's far weight is not 0
    mean, err = far_pattern_weight_sdm_mc(64, 15, m, trials=64, seed=1, return_stderr=True)
    assert abs(mean - far_pattern_weight_sdm(64, 15, m)) < 5 * err + 1e-3
    assert 0.01 < mean < far_pattern_weight(9.436, m)
    # a tiny space where everything is within 2d: weight of 3 copies of the whole space
    assert far_pattern_weight_sdm_mc(4, 4, 3, trials=5, seed=0) == pytest.approx(0.75)


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
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
    lambda: snr_optimal_fraction(0.5, 10),
    lambda: snr_optimal_fraction(100, 0),
    lambda: memory_optimal_fraction(100, 0.0),
    lambda: radius_for_fraction(64, 0.0),
    lambda: radius_for_fraction(64, 1.5),
    lambda: critical_distance(64, 2**64, 0, 15),
    lambda: critical_distance(64, 2**64, 1024, 65),
    lambda: critical_distance(64, 2**64, 1024, 15, tolerance=-1),
    lambda: read_trajectory(64, 2**64, 1024, 15, 70),
    lambda: read_trajectory(64, 2**64, 1024, 15, 5, steps=0),
    lambda: optimal_radius(0, 100, 10),
    lambda: optimal_radius(64, 0.1, 10),
    lambda: optimal_radius(64, 100, 0),
    lambda: optimal_radius(64, 2**64, 1024, "memory", z=0),
    lambda: optimal_radius(64, 2**64, 1024, "memory", z=-2.0),
    lambda: optimal_radius(64, 2**64, 1024, "memory", retrieval=1.0),
    lambda: optimal_radius(64, 2**64, 1024, "snr", method="newton"),
    lambda: optimal_radius(64, 2**64, 1024, "critical_distance", method="continuous"),
    lambda: optimal_radius(64, 2**64, 1024, "critical_distance", tie_break="largest"),
    lambda: far_pattern_weight(-1.0, 10),
    lambda: far_pattern_weight(math.inf, 10),
    lambda: far_pattern_weight(1.0, 0),
    lambda: far_pattern_weight(1.0, 10, cos=1.5),
    lambda: far_pattern_weight_meanfield(1.0, 10, 1),
    lambda: far_pattern_weight_meanfield(1.0, 10, 64, patterns="uniform"),
    lambda: far_pattern_weight_mc(1.0, 10, 64, trials=0),
    lambda: far_pattern_weight_mc(1.0, 0, 64),
    lambda: far_pattern_weight_sdm(64, 65, 10),
    lambda: far_pattern_weight_sdm(64, 5, 0),
    lambda: far_pattern_weight_sdm_mc(64, 5, 10, trials=0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_criterion_lists_the_valid_ones():
    with pytest.raises(ValueError) as info:
        optimal_radius(64, 2**64, 1024, "capacity")
    message = str(info.value)
    for name in CRITERIA:
        assert name in message


def test_accepted_number_types():
    # numpy integers, integral floats, float r and huge Python ints all work
    a = snr(np.int64(64), 2.0**64, np.int32(1024), 11.0)
    b = snr(64, 2**64, 1024, 11)
    assert a == pytest.approx(b, rel=1e-12)
    assert optimal_radius(64, 2**64, 1024, "snr").r == 2**64
