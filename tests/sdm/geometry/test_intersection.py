"""Tests for assocmem.sdm.geometry.intersection: the exact circle intersection in every form.

Eq. 2 (with clipped and with the paper's literal limits), the table, the lune form and its steps
are checked against brute-force enumeration and exact identities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm.geometry.balls import ball_size
from assocmem.sdm.geometry.intersection import (
    circle_intersection,
    circle_intersection_enumerate,
    circle_intersection_grid,
    circle_intersection_lune,
    circle_intersection_paper_limits,
    circle_intersection_table,
    log_circle_intersection,
    lune_term,
)


# ------------------------------------------------------------------------------------------
# Exact circle intersection
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 11))
def test_exact_forms_equal_enumeration_for_every_dv_and_d(n):
    for d in range(n + 1):
        counted = [circle_intersection_enumerate(dv, d, n) for dv in range(n + 1)]
        assert [circle_intersection(dv, d, n) for dv in range(n + 1)] == counted
        assert [circle_intersection_lune(dv, d, n) for dv in range(n + 1)] == counted
        assert circle_intersection_table(n, d) == counted
        assert circle_intersection_table(n, d, method="sum") == counted


def test_enumeration_spot_checks_at_larger_n():
    for dv, d, n in [(7, 5, 16), (16, 9, 16), (3, 2, 14), (11, 8, 18)]:
        assert circle_intersection(dv, d, n) == circle_intersection_enumerate(dv, d, n)


def _eq2_literal(dv, d, n, binom):
    """Eq. 2 with the paper's own summation limits."""
    total = 0
    for a in range(n - d - dv // 2, n - dv + 1):
        for c in range(max(0, n - d - a), dv - (n - d - a) + 1):
            total += binom(n - dv, a) * binom(dv, c)
    return total


def test_paper_limits_need_the_zero_convention():
    def zero_outside(m, k):
        return math.comb(m, k) if 0 <= k <= m else 0

    for n in range(1, 9):
        for d in range(n + 1):
            for dv in range(n + 1):
                assert _eq2_literal(dv, d, n, zero_outside) == circle_intersection(dv, d, n)
    with pytest.raises(ValueError):  # a = -1: math.comb refuses negative arguments
        _eq2_literal(2, 4, 4, math.comb)


@pytest.mark.parametrize("n, ds", [(64, [0, 1, 5, 11, 15, 31, 32, 33, 63, 64]),
                                   (1000, [1, 447, 451, 700])])
def test_eq2_equals_lune_form_and_table_at_n_64_and_1000(n, ds):
    step = 1 if n == 64 else 41
    for d in ds:
        table = circle_intersection_table(n, d)
        assert table == circle_intersection_table(n, d, method="sum")
        dvs = sorted(set(range(0, n + 1, step)) | {2 * d - 1, 2 * d, 2 * d + 1} & set(range(n + 1)))
        for dv in dvs:
            value = circle_intersection(dv, d, n)
            assert value == table[dv]
            if n == 64 or dv % 3 == 0:  # the lune form is O(dv) binomials; thin it at n = 1000
                assert circle_intersection_lune(dv, d, n) == value


def test_table_accepts_any_order_and_repeats():
    out = circle_intersection_table(64, 11, [22, 0, 5, 5, np.int64(3)])
    assert out == [circle_intersection(v, 11, 64) for v in (22, 0, 5, 5, 3)]
    assert all(isinstance(v, int) for v in out)
    assert circle_intersection_table(64, 11, []) == []


@pytest.mark.parametrize("n, d", [(64, 5), (64, 11), (64, 15), (1000, 447), (1000, 451)])
def test_staircase(n, d):
    table = circle_intersection_table(n, d)
    for k in range(1, n // 2 + 1):
        assert table[2 * k - 1] == table[2 * k]
    # strictly decreasing from one even distance to the next while positive
    evens = [table[v] for v in range(0, 2 * d + 1, 2)]
    assert all(a > b > 0 for a, b in zip(evens, evens[1:]))


def test_edge_cases():
    for n in (1, 7, 64, 1000):
        for d in (0, 1, n // 3, n // 2, n):
            assert circle_intersection(0, d, n) == ball_size(d, n)
        assert circle_intersection(n // 2, n, n) == 2**n  # d = n: the whole space
        assert circle_intersection(n, n, n) == 2**n
    assert circle_intersection(0, 0, 64) == 1
    assert circle_intersection(1, 0, 64) == 0
    for d in range(0, 20):
        assert circle_intersection(2 * d + 1, d, 64) == 0  # d < dv / 2
        assert circle_intersection(2 * d, d, 64) == math.comb(2 * d, d)  # only the midpoints
    assert circle_intersection(32, 15, 64) == 0  # I(n/2) = 0 at n = 64 for d < 16
    assert isinstance(circle_intersection(3, 2, 10), int)


def test_big_integers_are_exact():
    value = circle_intersection(10, 447, 1000)
    assert value.bit_length() > 900
    assert log_circle_intersection(10, 447, 1000) == pytest.approx(math.log(value), rel=1e-15)
    assert log_circle_intersection(30, 5, 64) == -math.inf


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
# Bad input and 0-d integer arguments
# ------------------------------------------------------------------------------------------


def test_integral_numpy_and_float_arguments_accepted():
    expected = circle_intersection(3, 2, 10)
    assert circle_intersection(np.int64(3), np.int32(2), np.uint16(10)) == expected
    assert circle_intersection(3.0, 2.0, 10.0) == circle_intersection(3, 2, 10)
    assert circle_intersection(np.array(3), 2, 10) == circle_intersection(3, 2, 10)


@pytest.mark.parametrize(
    "call",
    [
        lambda: circle_intersection(-1, 2, 10),
        lambda: circle_intersection(1, -2, 10),
        lambda: circle_intersection(11, 2, 10),
        lambda: circle_intersection(1, 11, 10),
        lambda: circle_intersection(2.5, 2, 10),
        lambda: circle_intersection(2, 2.5, 10),
        lambda: circle_intersection(1, 0, 0),
        lambda: circle_intersection(True, 2, 10),
        lambda: circle_intersection("3", 2, 10),
        lambda: circle_intersection(float("nan"), 2, 10),
        lambda: circle_intersection_lune(3, 2, 0),
        lambda: circle_intersection_table(10, 2, [1, 11]),
        lambda: circle_intersection_table(10, 2, [1.5]),
        lambda: circle_intersection_table(10, 2, method="fast"),
        lambda: circle_intersection_enumerate(1, 1, 21),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_zero_dimensional_integers_are_accepted():
    torch = pytest.importorskip("torch")
    want = circle_intersection(3, 5, 64)
    assert circle_intersection(torch.tensor(3), 5, 64) == want
    assert circle_intersection(np.int64(3), np.int32(5), np.array(64)) == want
    assert circle_intersection(torch.tensor(3.0), torch.tensor(5), 64) == want  # integral float
    assert ball_size(torch.tensor(5), torch.tensor(64)) == ball_size(5, 64)
    assert isinstance(circle_intersection(torch.tensor(3), 5, 64), int)
    for bad, msg in ((torch.tensor(True), "boolean"), (np.array(True), "boolean"),
                     (torch.tensor(2.5), "must be an integer"), (torch.tensor([3]), "must be an integer"),
                     ("3", "must be an integer")):
        with pytest.raises(ValueError, match=msg):
            circle_intersection(bad, 5, 64)
