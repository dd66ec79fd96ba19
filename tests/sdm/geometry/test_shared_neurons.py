"""Tests for assocmem.sdm.geometry.shared_neurons: expected shared neurons and their simulation.

The neuron simulation of Fig. 11 is checked against exact identities and binomial standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm.geometry.balls import ball_fraction
from assocmem.sdm.geometry.intersection import circle_intersection
from assocmem.sdm.geometry.shared_neurons import (
    expected_neurons,
    log_expected_neurons,
    simulate_shared_neurons,
)


# ------------------------------------------------------------------------------------------
# Expected neurons
# ------------------------------------------------------------------------------------------


def test_expected_neurons_large_r_and_n():
    value = expected_neurons(5, 11, 64, 2**64)
    assert value == float(circle_intersection(5, 11, 64))  # r = 2^n: the count itself
    assert expected_neurons(0, 447, 1000, 10**6) == pytest.approx(
        1e6 * ball_fraction(447, 1000), rel=1e-14)
    assert expected_neurons(10, 447, 1000, 2**64) > 0
    assert math.isfinite(expected_neurons(0, 500, 1000, 2**64))
    assert log_expected_neurons(5, 11, 64, 2**64) == pytest.approx(math.log(value), rel=1e-14)
    assert log_expected_neurons(3, 1, 1000, 1e6) == -math.inf
    assert expected_neurons(3, 1, 1000, 1e6) == 0.0
    assert expected_neurons(0, 35, 100, np.int64(10_000)) == expected_neurons(0, 35, 100, 1e4)


def test_expected_neurons_match_a_neuron_simulation():
    """Fig. 11 setting (n = 100, d = 35), with more neurons so that counts are large."""
    rng = np.random.default_rng(11)
    n, d, r = 100, 35, 200_000
    neurons = rng.integers(0, 2, size=(r, n), dtype=np.int8)
    query = np.zeros(n, dtype=np.int8)
    to_query = neurons.sum(axis=1)
    for dv in (0, 10, 20, 30):
        pattern = query.copy()
        pattern[:dv] = 1
        to_pattern = (neurons ^ pattern).sum(axis=1)
        count = np.count_nonzero((to_query <= d) & (to_pattern <= d))
        mean = expected_neurons(dv, d, n, r)
        assert abs(count - mean) < 4 * math.sqrt(mean), (dv, count, mean)


@pytest.mark.parametrize(
    "call",
    [
        lambda: expected_neurons(1, 2, 10, 0),
        lambda: expected_neurons(1, 2, 10, -5),
        lambda: expected_neurons(1, 2, 10, float("inf")),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# ------------------------------------------------------------------------------------------
# The neuron simulation (Fig. 11)
# ------------------------------------------------------------------------------------------


def test_simulation_shapes_dtypes_and_determinism():
    counts = simulate_shared_neurons([0, 3, 7], 5, 20, 100, 8, seed=1)
    assert counts.shape == (8, 3)
    assert counts.dtype == np.int64
    assert (counts == simulate_shared_neurons([0, 3, 7], 5, 20, 100, 8, seed=1)).all()
    assert not (counts == simulate_shared_neurons([0, 3, 7], 5, 20, 100, 8, seed=2)).all()
    single = simulate_shared_neurons(3, 5, 20, 100, 8, seed=1)
    assert single.shape == (8,)
    assert (simulate_shared_neurons(np.int64(3), 5.0, 20, 100, 2, seed=np.random.default_rng(0))
            >= 0).all()


def test_simulation_deterministic_limits():
    # d = n: every neuron is within reach of both centres
    assert (simulate_shared_neurons([0, 10, 70], 70, 70, 50, 4) == 50).all()
    # dv > 2d: no address is within d of both (triangle inequality), across word boundaries
    for n, d in [(10, 2), (64, 20), (100, 35), (130, 60)]:
        counts = simulate_shared_neurons(list(range(2 * d + 1, n + 1)), d, n, 2000, 5, seed=3)
        assert (counts == 0).all()
    # counts never exceed the count at dv = 0 by more than the neurons near the query
    counts = simulate_shared_neurons(list(range(0, 71)), 35, 100, 5000, 10, seed=4)
    assert (counts <= counts[:, :1]).all()


@pytest.mark.parametrize("n, d, r, trials", [(6, 2, 50, 4000), (70, 25, 2000, 400), (100, 35, 10_000, 400)])
def test_simulated_means_match_expected_neurons(n, d, r, trials):
    dvs = list(range(0, min(n, 2 * d) + 1, max(1, d // 4)))
    counts = simulate_shared_neurons(dvs, d, n, r, trials, seed=7)
    for k, dv in enumerate(dvs):
        p = circle_intersection(dv, d, n) / 2**n
        mean = expected_neurons(dv, d, n, r)
        se = math.sqrt(r * p * (1 - p) / trials)
        # counts are Binomial(r, p): the mean of `trials` of them is within 5 standard errors
        assert abs(counts[:, k].mean() - mean) <= 5 * se + 1e-12, (dv, counts[:, k].mean(), mean)
        # and their spread is binomial (loose: 30% on the variance with these sample sizes)
        if r * p > 5:
            assert counts[:, k].var(ddof=1) == pytest.approx(r * p * (1 - p), rel=0.3)


def test_simulation_small_n_distribution_is_binomial():
    # n = 4, d = 1, dv = 2: I = 2 of 16 addresses, so each count is Binomial(r, 1/8)
    counts = simulate_shared_neurons(2, 1, 4, 40, 20_000, seed=11)
    assert circle_intersection(2, 1, 4) == 2
    hist = np.bincount(counts, minlength=41) / counts.size
    pmf = np.array([math.comb(40, k) * (1 / 8) ** k * (7 / 8) ** (40 - k) for k in range(41)])
    assert np.abs(hist - pmf).max() < 0.01


def test_simulation_bad_input():
    with pytest.raises(ValueError):
        simulate_shared_neurons(0, 1, 4, 0, 10)
    with pytest.raises(ValueError):
        simulate_shared_neurons(0, 1, 4, 10, 0)
    with pytest.raises(ValueError):
        simulate_shared_neurons(5, 1, 4, 10, 10)
    with pytest.raises(ValueError):
        simulate_shared_neurons([0, 1.5], 1, 4, 10, 10)
    with pytest.raises(ValueError):
        simulate_shared_neurons(0, 5, 4, 10, 10)
