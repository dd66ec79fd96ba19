"""Tests for assocmem.sdm.geometry.normal_approximation: Kanerva's normal approximation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm.geometry.intersection import circle_intersection
from assocmem.sdm.geometry.normal_approximation import circle_intersection_continuous


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
# Bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: circle_intersection_continuous(-1, 2, 10),
        lambda: circle_intersection_continuous(1, 11, 10),
        lambda: circle_intersection_continuous(1, 2, 10, method="mc"),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
