"""Tests for assocmem.sdm.capacity.iterated_reading: the distance after a read, critical distance.

The fixed-point analysis is checked against literal iteration of the expected distance.
"""

from __future__ import annotations

import numpy as np
import pytest

from assocmem.sdm.capacity.iterated_reading import (
    CriticalDistance,
    critical_distance,
    critical_distance_analysis,
    read_distance_map,
    read_trajectory,
)
from assocmem.sdm.capacity.optimal_radii import CANONICAL, optimal_radius


CAN = (CANONICAL.n, CANONICAL.r, CANONICAL.m)


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
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: critical_distance(64, 2**64, 0, 15),
        lambda: critical_distance(64, 2**64, 1024, 65),
        lambda: critical_distance(64, 2**64, 1024, 15, tolerance=-1),
        lambda: read_trajectory(64, 2**64, 1024, 15, 70),
        lambda: read_trajectory(64, 2**64, 1024, 15, 5, steps=0),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
