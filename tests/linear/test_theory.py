"""Tests for assocmem.linear.theory: closed forms at known points, vectorisation, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.linear.theory import (
    additive_read_error,
    additive_sigma_max,
    dual_vector_norm,
    least_squares_read_error,
    least_squares_sigma_max,
    max_pairs_at_error,
    planar_coherence_bound,
    welch_bound,
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


def _two_key_memories(theta):
    """Additive and least-squares memories of unit keys at angle theta with values e_1, e_2."""
    K = np.array([[1.0, np.cos(theta)], [0.0, np.sin(theta)]])  # keys as columns (d_k, n)
    V = np.eye(2)  # orthonormal values as columns
    return V @ K.T, V @ np.linalg.pinv(K)


@pytest.mark.parametrize("theta", [1e-3, 0.1, math.pi / 6, math.pi / 2, 2.0, math.pi - 1e-3])
def test_sigma_max_matches_svd(theta):
    S_add, S_ls = _two_key_memories(theta)
    assert least_squares_sigma_max(theta) == pytest.approx(np.linalg.svd(S_ls, compute_uv=False)[0], rel=1e-9)
    assert additive_sigma_max(theta) == pytest.approx(np.linalg.svd(S_add, compute_uv=False)[0], rel=1e-12)
    c = math.cos(theta)
    assert least_squares_sigma_max(theta) == pytest.approx(1 / math.sqrt(1 - abs(c)), rel=1e-6)


def test_sigma_max_known_points_and_relations():
    assert least_squares_sigma_max(math.pi / 2) == pytest.approx(1.0, rel=1e-15)
    assert least_squares_sigma_max(math.pi / 3) == pytest.approx(math.sqrt(2), rel=1e-15)
    assert additive_sigma_max(0.0) == pytest.approx(math.sqrt(2))
    assert additive_sigma_max(math.pi / 2) == pytest.approx(1.0)
    th = np.linspace(1e-4, math.pi - 1e-4, 999)
    lsm, dual = least_squares_sigma_max(th), dual_vector_norm(th)
    assert isinstance(lsm, np.ndarray)
    # never below the dual length, and at most sqrt(2) times it (the ratio is sqrt(2) cos(phi/2))
    assert np.all(lsm >= dual * (1 - 1e-14)) and np.all(lsm <= math.sqrt(2) * dual)
    assert lsm[0] / dual[0] == pytest.approx(math.sqrt(2), rel=1e-8)
    # symmetric under theta -> pi - theta (|cos| only); pi - theta carries an absolute rounding
    # of about 4e-16, i.e. a relative 4e-12 at theta = 1e-4
    np.testing.assert_allclose(least_squares_sigma_max(math.pi - th), lsm, rtol=1e-10)


def test_welch_bound():
    assert welch_bound(3, 2) == pytest.approx(0.5, rel=1e-15)  # Mercedes frame
    assert welch_bound(2, 2) == 0.0 and welch_bound(1, 5) == 0.0 and welch_bound(5, 5) == 0.0
    np.testing.assert_allclose(welch_bound(np.array([4, 6]), 3), [math.sqrt(1 / 9), math.sqrt(3 / 15)])
    # the simplex: d_k + 1 equiangular unit vectors in R^{d_k} have |cos| = 1/d_k = Welch bound
    for d in (2, 3, 7):
        assert welch_bound(d + 1, d) == pytest.approx(1 / d, rel=1e-14)
    # the bound holds for random keys
    rng = np.random.default_rng(0)
    for n, d in [(5, 3), (10, 4), (3, 2)]:
        K = rng.standard_normal((200, n, d))
        K /= np.linalg.norm(K, axis=-1, keepdims=True)
        G = np.abs(K @ K.transpose(0, 2, 1)) - np.eye(n)
        assert G.max(axis=(1, 2)).min() >= welch_bound(n, d) - 1e-12


def test_planar_coherence_bound():
    assert planar_coherence_bound(1) == 0.0 and planar_coherence_bound(2) == 0.0
    assert planar_coherence_bound(3) == pytest.approx(0.5, rel=1e-15)
    assert planar_coherence_bound(4) == pytest.approx(math.sqrt(0.5))
    np.testing.assert_allclose(planar_coherence_bound(np.array([3, 6])), [0.5, math.cos(math.pi / 6)])
    # the plane bound is at least the Welch bound in d = 2, equal for n = 3
    ns = np.arange(3, 40)
    assert np.all(planar_coherence_bound(ns) >= welch_bound(ns, 2) - 1e-15)
    # equally spaced lines attain it
    for n in (3, 5, 8):
        a = np.pi * np.arange(n) / n
        u = np.stack([np.cos(a), np.sin(a)], axis=1)
        off = np.abs(u @ u.T)[~np.eye(n, dtype=bool)]
        assert off.max() == pytest.approx(planar_coherence_bound(n), rel=1e-12)


def test_geometry_bad_input():
    for theta in (0.0, math.pi, -1.0, float("nan")):
        with pytest.raises(ValueError, match=r"open interval \(0, pi\)"):
            least_squares_sigma_max(theta)
    with pytest.raises(ValueError, match="finite"):
        additive_sigma_max(float("inf"))
    with pytest.raises(ValueError, match="n must be >= 1"):
        welch_bound(0, 2)
    with pytest.raises(ValueError, match="d_k must be >= 1"):
        welch_bound(3, 0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        planar_coherence_bound(0)


def test_non_real_input_raises_type_error():
    for fn in (additive_read_error, least_squares_read_error, welch_bound):
        for n, d_k in (("10", 4), (10, "4"), (True, 4), (3, False), (1 + 2j, 4), (np.array(["3"]), 4)):
            with pytest.raises(TypeError, match="must be a real number"):
                fn(n, d_k)
    for fn, args in ((dual_vector_norm, ("1.0",)), (least_squares_sigma_max, (True,)),
                     (additive_sigma_max, ("0.5",)), (planar_coherence_bound, ("3",)),
                     (max_pairs_at_error, ("0.1", 16)), (max_pairs_at_error, (0.1, "16"))):
        with pytest.raises(TypeError, match="must be a real number"):
            fn(*args)


def test_whole_numbers_where_a_count_or_a_dimension_is_meant():
    for fn in (additive_read_error, least_squares_read_error, welch_bound):
        with pytest.raises(ValueError, match="d_k must be a whole number"):
            fn(8, 4.5)
        with pytest.raises(ValueError, match="d_k must be a whole number"):
            fn(8, np.array([4.0, 4.5]))
    with pytest.raises(ValueError, match="n must be a whole number"):
        welch_bound(3.5, 2)
    with pytest.raises(ValueError, match="n must be a whole number"):
        planar_coherence_bound(np.array([3, 2.5]))
    with pytest.raises(ValueError, match="d_k must be a whole number"):
        max_pairs_at_error(0.1, 7.5)
    # integral floats and integer arrays of any kind are whole numbers
    assert additive_read_error(9.0, 4.0) == 2.0 and welch_bound(np.uint8(3), 2.0) == pytest.approx(0.5)
    assert additive_read_error(2**70, 4) == pytest.approx((2.0**70 - 1) / 4)  # beyond int64
    # the read-error curves take a real n: the continuous curve through the integer points
    np.testing.assert_allclose(additive_read_error(np.array([1.0, 2.5, 5.0]), 4), [0.0, 0.375, 1.0])
    np.testing.assert_allclose(least_squares_read_error(np.array([2.0, 6.0, 7.5]), 6), [0.0, 0.0, 0.2])
