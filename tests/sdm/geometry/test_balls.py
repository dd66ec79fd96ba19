"""Tests for assocmem.sdm.geometry.balls: exact Hamming-ball sizes and fractions."""

from __future__ import annotations

import math

import pytest

from assocmem.sdm.geometry.balls import ball_fraction, ball_size, log_ball_fraction


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
# Bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: ball_size(-1, 10),
        lambda: ball_fraction(3, 0),
        lambda: log_ball_fraction(2.5, 10),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
