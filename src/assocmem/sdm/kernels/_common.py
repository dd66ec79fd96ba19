"""Private argument checks shared by the modules of :mod:`assocmem.sdm.kernels`.

The dimension ``n`` (:func:`_check_n`, optionally capped where a ``2^n x 2^n`` matrix is built),
the radius ``0 <= d <= n`` (:func:`_check_d`) and unit rows of points on the sphere
(:func:`_unit_rows`), used by the kernels on the hypercube, the random features, the zonal
kernels on the sphere and the von Mises-Fisher reading of softmax (seed 002, "Connections").
Nothing here is public API.
"""

from __future__ import annotations

import numpy as np

from assocmem._checks import as_int as _as_int
from assocmem.sdm._common import _real_array


def _check_n(n, maximum: int | None = None) -> int:
    n = _as_int(n, "n")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if maximum is not None and n > maximum:
        raise ValueError(f"n must be <= {maximum} here (a 2^n x 2^n matrix), got {n}")
    return n


def _check_d(d, n: int) -> int:
    d = _as_int(d, "d")
    if d < 0 or d > n:
        raise ValueError(f"the radius d must lie in [0, n] = [0, {n}], got {d}")
    return d


def _unit_rows(points, name="points") -> np.ndarray:
    x = _real_array(points, name)  # no booleans, strings, float16, NaN or infinities
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(f"{name} must have shape (M, n) with M >= 1, n >= 2, got {x.shape}")
    norms = np.linalg.norm(x, axis=1)
    if np.any(np.abs(norms - 1.0) > 1e-12):
        raise ValueError(f"{name} must be unit vectors (|norm - 1| <= 1e-12)")
    return x
