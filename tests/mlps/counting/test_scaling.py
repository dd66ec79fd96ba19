"""Tests for assocmem.mlps.counting.scaling: cross-talk second moments, the capacity heuristic, power-law fits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.mlps.counting import scaling as C
from assocmem.mlps.counting.hebbian_memories import HEBBIAN_KERNELS


def test_second_moments():
    assert C.kernel_second_moment(10, "linear") == 0.1
    assert C.kernel_second_moment(10, "k2") == 3 / 120
    assert C.crosstalk_second_moment(2, 10, "linear") == pytest.approx(0.1 * 1.1)
    # Monte Carlo agrees within 4 standard errors (40 seeds; deterministic)
    for k in HEBBIAN_KERNELS:
        mean, se = C.crosstalk_second_moment_mc(24, 12, k, seeds=range(40))
        assert abs(mean - C.crosstalk_second_moment(24, 12, k)) <= 4 * se
    with pytest.raises(ValueError):
        C.crosstalk_second_moment_mc(24, 12, "linear", seeds=[0])


def test_capacity_heuristic_solves_equation():
    for k, (c, p) in C.HEURISTIC_CONSTANTS.items():
        d = np.array([8.0, 32.0, 128.0])
        F = C.capacity_heuristic(d, k)
        np.testing.assert_allclose(F * np.log(F), c * d**p, rtol=1e-12)
        assert isinstance(C.capacity_heuristic(32, k), float)
    with pytest.raises(ValueError):
        C.capacity_heuristic(0, "linear")


def test_power_law_fit_exact_and_noisy():
    x = np.array([2.0, 4.0, 8.0, 16.0])
    f = C.power_law_fit(x, 3.0 * x**2.5)
    assert f.exponent == pytest.approx(2.5, abs=1e-12)
    assert f.prefactor == pytest.approx(3.0, rel=1e-12)
    assert f.exponent_se == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    xs = np.repeat(x, 50)
    fits = [C.power_law_fit(xs, xs**2 * np.exp(0.1 * rng.standard_normal(xs.size))) for _ in range(200)]
    p = np.array([q.exponent for q in fits])
    se = np.mean([q.exponent_se for q in fits])
    assert abs(p.mean() - 2) < 4 * p.std() / math.sqrt(len(p))
    assert 0.8 < p.std() / se < 1.2  # the OLS standard error is calibrated
    with pytest.raises(ValueError):
        C.power_law_fit([1, 2], [1, 2])
    with pytest.raises(ValueError):
        C.power_law_fit([2, 2, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        C.power_law_fit([1, 2, 0], [1, 2, 3])
