"""Tests for assocmem.mlps.counting.bound: Theorem 2.4's count exactly, its real-valued form and its inverse."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from assocmem.mlps.counting import bound as C


def test_num_fact_sets_small_cases_by_enumeration():
    import itertools

    for F, V in [(0, 3), (1, 1), (2, 3), (3, 2), (3, 3)]:
        maps = list(itertools.product(range(V), repeat=F))
        assert C.num_fact_sets(F, V) == len(maps)
        inj = [m for m in maps if len(set(m)) == len(m)]
        if F <= V:
            assert C.num_fact_sets(F, V, injective=True) == len(inj)


def test_log2_count_matches_exact():
    for F, V in [(10, 7), (1024, 1024), (1000, 1000), (5, 2)]:
        assert math.isclose(C.log2_num_fact_sets(F, V), math.log2(C.num_fact_sets(F, V)), rel_tol=1e-12)
        if F > V:
            continue
        exact = C.num_fact_sets(F, V, injective=True)
        assert math.isclose(C.log2_num_fact_sets(F, V, injective=True), math.log2(exact), rel_tol=1e-10)


def test_min_parameters_is_smallest_w():
    for F, V, b in [(1024, 1024, 16), (1000, 1000, 16), (7, 3, 1), (7, 3, 5), (64, 100, 8), (3, 1, 4)]:
        N = C.num_fact_sets(F, V)
        W = C.min_parameters(F, V, b)
        assert 2 ** (b * W) >= N
        if W > 0:
            assert 2 ** (b * (W - 1)) < N
        assert W == C.min_parameters(F, V, b, method="float")
        assert W == math.ceil(C.min_parameters_bound(F, V, b) - 1e-12) or W == math.ceil(
            math.ceil(F * math.log2(V)) / b
        )


def test_min_parameters_worked_number():
    # F = V = 1024: F log2 V = 10240 bits exactly
    assert C.min_parameters(1024, 1024, 16) == 640
    assert C.min_parameters(1024, 1024, 1) == 10240
    assert C.min_parameters_bound(1024, 1024, 16) == 640.0
    assert C.min_parameters(1, 1, 8) == 0  # a single fact set needs nothing


def test_min_parameters_bound_on_arrays_matches_the_scalars():
    V = np.array([[3], [10], [1024]])  # broadcasts against F to (3, 4)
    for F, injective in [(np.array([0, 1, 64, 1024]), False), (np.array([0, 1, 2, 3]), True)]:
        got = C.min_parameters_bound(F, V, 16, injective=injective)
        assert isinstance(got, np.ndarray) and got.shape == (3, 4) and got.dtype == np.float64
        want = [[C.min_parameters_bound(int(f), int(v), 16, injective=injective) for f in F] for v in V[:, 0]]
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    # the plain formula is bit-for-bit the scalar one
    np.testing.assert_array_equal(C.min_parameters_bound([1024, 256], [1024, 16], [16, 8]), [640.0, 128.0])
    # lists, pandas Series and real-valued lines of F work; bits broadcast too
    line = np.geomspace(2.0, 100.0, 7)
    np.testing.assert_allclose(C.min_parameters_bound(line, line, 2.0), line * np.log2(line) / 2, rtol=1e-15)
    np.testing.assert_allclose(C.min_parameters_bound(pd.Series([4, 8]), 4, [1, 2]), [8.0, 8.0])
    assert C.min_parameters_bound(np.array(1024), 1024, 16) == 640.0  # 0-d arrays: a NumPy scalar
    # scalars keep their type and their checks
    assert type(C.min_parameters_bound(1024, 1024, 16)) is float
    assert type(C.min_parameters_bound(np.int64(1024), 1024, 16)) is float
    with pytest.raises(ValueError, match="num_keys"):
        C.min_parameters_bound(3.5, 4, 1)


def test_min_parameters_bound_bad_arrays():
    with pytest.raises(ValueError, match="num_keys must be >= 0"):
        C.min_parameters_bound([3, -1], 4, 1)
    with pytest.raises(ValueError, match="num_values must be >= 1"):
        C.min_parameters_bound([3, 1], [4, 0], 1)
    with pytest.raises(ValueError, match="bits must be positive"):
        C.min_parameters_bound([3, 1], 4, [1, 0])
    with pytest.raises(ValueError, match="bits must be positive"):
        C.min_parameters_bound([3, 1], 4, -2.0)
    with pytest.raises(ValueError, match="injective"):
        C.min_parameters_bound([3, 5], 4, 1, injective=True)
    with pytest.raises(ValueError, match="finite"):
        C.min_parameters_bound([3, np.nan], 4, 1)
    with pytest.raises(ValueError, match="finite"):
        C.min_parameters_bound([3, 1], [4, np.inf], 1)
    with pytest.raises(ValueError, match="real numbers"):
        C.min_parameters_bound([True, False], 4, 1)
    with pytest.raises(ValueError, match="real numbers"):
        C.min_parameters_bound(["3"], 4, 1)
    with pytest.raises(ValueError, match="broadcast"):
        C.min_parameters_bound([1, 2, 3], [4, 5], 1)


def test_min_parameters_injective_is_smaller():
    full = C.min_parameters(256, 256, 1)
    perm = C.min_parameters(256, 256, 1, injective=True)
    assert perm < full
    assert perm == (math.factorial(256) - 1).bit_length()


@pytest.mark.parametrize("W, b", [(100, 8), (640, 16), (4096, 16), (1, 1), (0, 4)])
def test_max_facts_inverts_min_parameters(W, b):
    F = C.max_facts(W, b)
    if F >= 1:
        assert C.min_parameters(F, F, b) <= W
    assert C.min_parameters(F + 1, F + 1, b) > W
    Fv = C.max_facts(W, b, num_values=1024)
    assert C.min_parameters(Fv, 1024, b) <= W < C.min_parameters(Fv + 1, 1024, b)


def test_max_facts_injective_capped():
    assert C.max_facts(10**6, 8, num_values=50, injective=True) == 50
    F = C.max_facts(2000, 8, injective=True)
    assert C.min_parameters(F, F, 8, injective=True) <= 2000 < C.min_parameters(F + 1, F + 1, 8, injective=True)
    assert F >= C.max_facts(2000, 8)


def test_counting_bad_input():
    with pytest.raises(ValueError):
        C.num_fact_sets(-1, 3)
    with pytest.raises(ValueError):
        C.num_fact_sets(3, 0)
    with pytest.raises(ValueError):
        C.num_fact_sets(4, 3, injective=True)
    with pytest.raises(ValueError):
        C.min_parameters(3, 3, 0)
    with pytest.raises(ValueError):
        C.min_parameters(3, 3, 8, method="nope")
    with pytest.raises(ValueError):
        C.min_parameters_bound(3, 3, 0.0)
    with pytest.raises(ValueError):
        C.max_facts(10, 8, num_values=1)
    with pytest.raises(ValueError):
        C.num_fact_sets(10**8, 10**8)  # beyond the exact limit
    with pytest.raises(ValueError):
        C.min_parameters(True, 3, 8)
