"""Tests for assocmem.sdm.weights.far_patterns: the weight softmax and SDM give far patterns.

Seed values (the review of Bricken & Pehlevan 2021) are pinned with their printed precision.
Where our model does not reproduce a seed value exactly, the test pins our value and says so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from assocmem.sdm.geometry.balls import ball_fraction
from assocmem.sdm.weights.far_patterns import (
    far_pattern_weight,
    far_pattern_weight_mc,
    far_pattern_weight_meanfield,
    far_pattern_weight_sdm,
    far_pattern_weight_sdm_mc,
)


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


@pytest.mark.parametrize(
    "call",
    [
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
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
