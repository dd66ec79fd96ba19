"""Tests for assocmem.theory: closed forms at known points, vectorisation, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.theory import (
    additive_read_error,
    dual_vector_norm,
    least_squares_read_error,
    max_pairs_at_error,
)


def test_additive_read_error_known_points():
    assert additive_read_error(1, 16) == 0.0
    assert additive_read_error(17, 16) == 1.0  # interference reaches the signal at n = d_k + 1
    assert additive_read_error(5, 8) == 0.5
    assert isinstance(additive_read_error(3, 4), float)
    out = additive_read_error(np.array([1, 2, 33, 65]), 32)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [0.0, 1 / 32, 1.0, 2.0])


def test_least_squares_read_error_known_points():
    assert least_squares_read_error(1, 16) == 0.0
    assert least_squares_read_error(16, 16) == 0.0  # exact up to exactly d_k pairs
    assert least_squares_read_error(32, 16) == 0.5  # half the signal at n = 2 d_k
    assert least_squares_read_error(64, 16) == 0.75
    np.testing.assert_allclose(
        least_squares_read_error(np.arange(1, 9), 4), [0, 0, 0, 0, 0.2, 1 / 3, 3 / 7, 0.5]
    )
    # broadcasting over d_k as well
    np.testing.assert_allclose(least_squares_read_error(8, np.array([4, 8, 16])), [0.5, 0, 0])
    # never above the additive error
    ns = np.arange(1, 200)
    assert np.all(least_squares_read_error(ns, 32) <= additive_read_error(ns, 32))


def test_dual_vector_norm():
    assert dual_vector_norm(math.pi / 2) == pytest.approx(1.0)
    assert dual_vector_norm(math.pi / 6) == pytest.approx(2.0)
    assert dual_vector_norm(5 * math.pi / 6) == pytest.approx(2.0)
    np.testing.assert_allclose(dual_vector_norm(np.array([math.pi / 4, math.pi / 2])), [math.sqrt(2), 1.0])


def test_max_pairs_at_error():
    assert max_pairs_at_error(0.0, 64) == 1  # one pair is always exact
    assert max_pairs_at_error(0.1, 64) == 7  # (7-1)/64 = 0.094 <= 0.1 < 7/64
    assert max_pairs_at_error(1.0, 16) == 17
    assert max_pairs_at_error(0.29, 100) == 30  # exact boundary despite 0.29*100 = 28.999...
    assert isinstance(max_pairs_at_error(0.5, 8), int)
    eps = np.linspace(0, 2, 41)
    for d_k in (7, 16, 100):
        n = max_pairs_at_error(eps, d_k)
        assert np.all(additive_read_error(n, d_k) <= eps + 1e-12)
        assert np.all(additive_read_error(n + 1, d_k) > eps)


@pytest.mark.parametrize("fn", [additive_read_error, least_squares_read_error])
def test_read_error_bad_input(fn):
    with pytest.raises(ValueError, match="n must be >= 1"):
        fn(0, 16)
    with pytest.raises(ValueError, match="n must be >= 1"):
        fn(np.array([3, 0, 2]), 16)
    with pytest.raises(ValueError, match="d_k must be >= 1"):
        fn(3, 0)


def test_other_bad_input():
    for theta in (0.0, math.pi, -1.0, 4.0, float("nan")):
        with pytest.raises(ValueError, match=r"open interval \(0, pi\)"):
            dual_vector_norm(theta)
    with pytest.raises(ValueError, match="eps must be"):
        max_pairs_at_error(-0.1, 16)
    with pytest.raises(ValueError, match="d_k must be >= 1"):
        max_pairs_at_error(0.1, 0)
