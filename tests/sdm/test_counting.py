"""Tests for the counting half of assocmem.sdm.geometry (chapter 31, "Counting shared neurons").

The paper's literal limits of Eq. 2, the grids of every exact form, the lune steps behind the
staircase, and the neuron simulation of Fig. 11 are checked against brute-force enumeration,
exact identities and binomial standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem import sdm
from assocmem.sdm import (
    circle_intersection,
    circle_intersection_enumerate,
    circle_intersection_grid,
    circle_intersection_paper_limits,
    circle_intersection_table,
    expected_neurons,
    lune_term,
    simulate_shared_neurons,
)


def test_new_names_are_exported():
    for name in ("circle_intersection_paper_limits", "circle_intersection_grid", "lune_term",
                 "simulate_shared_neurons"):
        assert name in sdm.__all__
        assert name in sdm.geometry.__all__


# ------------------------------------------------------------------------------------------
# Eq. 2 with the paper's limits
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 11))
def test_paper_limits_with_zero_convention_are_exact(n):
    for d in range(n + 1):
        for dv in range(n + 1):
            assert circle_intersection_paper_limits(dv, d, n) == circle_intersection(dv, d, n)


@pytest.mark.parametrize("n", range(1, 13))
def test_math_comb_fails_exactly_where_the_lower_limit_is_negative(n):
    for d in range(n + 1):
        for dv in range(n + 1):
            if d + dv // 2 > n:
                with pytest.raises(ValueError, match="negative"):
                    circle_intersection_paper_limits(dv, d, n, binomial="math")
            else:
                assert (circle_intersection_paper_limits(dv, d, n, binomial="math")
                        == circle_intersection(dv, d, n))


def test_paper_limits_at_the_papers_settings_need_no_convention():
    # the paper's radii are all below n/2, where the lower limit of a is never negative
    for n, d in [(64, 5), (64, 11), (64, 15), (100, 35)]:
        for dv in range(0, n + 1, 3):
            assert (circle_intersection_paper_limits(dv, d, n, binomial="math")
                    == circle_intersection(dv, d, n))


def test_paper_limits_bad_input():
    with pytest.raises(ValueError, match="binomial"):
        circle_intersection_paper_limits(1, 1, 4, binomial="scipy")
    with pytest.raises(ValueError):
        circle_intersection_paper_limits(5, 1, 4)
    with pytest.raises(ValueError):
        circle_intersection_paper_limits(1, 1.5, 4)


# ------------------------------------------------------------------------------------------
# Grids of the exact forms
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12])
def test_grids_of_every_form_agree_with_enumeration(n):
    reference = circle_intersection_grid(n, "enumerate")
    assert reference.shape == (n + 1, n + 1)
    assert reference.dtype == object
    assert all(isinstance(v, int) for v in reference.ravel())
    for d in range(n + 1):
        for dv in range(n + 1):
            assert reference[d, dv] == circle_intersection_enumerate(dv, d, n)
    for method in ("eq2", "paper", "lune", "table"):
        assert (circle_intersection_grid(n, method) == reference).all(), method


def test_grid_bad_input():
    with pytest.raises(ValueError, match="method"):
        circle_intersection_grid(4, "monte carlo")
    with pytest.raises(ValueError, match="n <= 20"):
        circle_intersection_grid(21, "enumerate")
    with pytest.raises(ValueError):
        circle_intersection_grid(0)


def test_grid_big_n_is_exact_integers():
    grid = circle_intersection_grid(64, "lune")
    assert grid[11, 0] == sum(math.comb(64, i) for i in range(12))
    assert grid[64, 64] == 2**64  # beyond int64
    assert (grid == circle_intersection_grid(64, "table")).all()


# ------------------------------------------------------------------------------------------
# Lune terms and the staircase
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 16, 64])
def test_lune_terms_are_the_successive_differences(n):
    for d in range(n + 1):
        table = circle_intersection_table(n, d, method="sum")
        for j in range(1, n + 1):
            assert table[j - 1] - table[j] == lune_term(j, d, n)


@pytest.mark.parametrize("n, d", [(64, 5), (64, 11), (64, 15), (1000, 447), (1000, 451)])
def test_lune_terms_vanish_at_even_steps_and_are_positive_at_odd_steps_up_to_2d_plus_1(n, d):
    for j in range(1, n + 1):
        term = lune_term(j, d, n)
        if j % 2 == 0 or j > 2 * d + 1:
            assert term == 0
        else:
            assert term > 0
    table = circle_intersection_table(n, d, method="sum")
    assert sum(lune_term(j, d, n) for j in range(1, n + 1)) == table[0]  # everything is lost by 2d + 1


def test_lune_term_counts_equidistant_addresses_by_enumeration():
    # the loss from dv = j - 1 to j is the number of addresses at distance exactly d from both
    # centres with the moved bit matching both (enumeration over {0,1}^n)
    n = 10
    addresses = np.arange(1 << n, dtype=np.int64)
    weight = np.array([bin(x).count("1") for x in range(1 << n)])
    for d in range(n + 1):
        for j in range(1, n + 1):
            pattern = (1 << (j - 1)) - 1  # first j - 1 bits set; the moved bit is bit j - 1
            to_pattern = np.array([bin(x ^ pattern).count("1") for x in range(1 << n)])
            moved_bit_zero = ((addresses >> (j - 1)) & 1) == 0
            count = np.count_nonzero((weight == d) & (to_pattern == d) & moved_bit_zero)
            assert count == lune_term(j, d, n)


def test_lune_term_bad_input():
    for j in (0, 65, 2.5):
        with pytest.raises(ValueError):
            lune_term(j, 5, 64)
    with pytest.raises(ValueError):
        lune_term(1, 65, 64)


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
