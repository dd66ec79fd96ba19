"""Tests for assocmem.sdm.kernels.sphere: the cap-intersection and exponential Gram matrices are
positive semidefinite to rounding, and the rounding tolerance detects an indefinite matrix.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.sdm.kernels.sphere import (
    cap_kernel_gram,
    exponential_kernel_gram,
    psd_tolerance,
    random_unit_vectors,
)


def test_cap_gram_is_psd_and_matches_kernel():
    X = random_unit_vectors(40, 6, seed=1)
    G = cap_kernel_gram(X, 1.5)
    assert np.allclose(G, G.T)
    ev = np.linalg.eigvalsh(G)
    assert ev[0] >= -psd_tolerance(G, 1e-12)
    from assocmem.sdm import cap_fraction, cap_intersection
    assert G[0, 0] == cap_fraction(1.5, 6)
    assert math.isclose(G[0, 1], float(cap_intersection(float(X[0] @ X[1]), 1.5, 6)), rel_tol=1e-12)


def test_exponential_gram_psd():
    X = random_unit_vectors(50, 5, seed=2)
    G = exponential_kernel_gram(X, 4.0)
    assert np.linalg.eigvalsh(G)[0] >= -psd_tolerance(G)
    with pytest.raises(ValueError):
        exponential_kernel_gram(X * 2, 1.0)


def test_psd_tolerance_detects_indefinite():
    G = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3, -1
    assert np.linalg.eigvalsh(G)[0] < -psd_tolerance(G)
