"""Closed forms for the read error and capacity of linear associative memories.

For ``n`` keys drawn uniformly from the unit sphere in ``R^{d_k}`` and independent mean-zero values
with ``E||v||^2 = 1``, the average squared read error ``e(n) = E||S k_j - v_j||^2`` is (seed §7)

* additive memory (``S = V K^T``): ``e_add(n) = (n - 1) / d_k``, since each of the ``n - 1``
  interfering pairs contributes ``E[(k_i^T k_j)^2] = 1/d_k`` (Kohonen 1972; Anderson 1972);
* least-squares memory (``S = V K^+``): ``e_ls(n) = 0`` for ``n <= d_k`` and ``1 - d_k/n`` beyond,
  for Gaussian values, since ``K^+ K`` projects ``R^n`` onto a ``d_k``-dimensional subspace
  (Kohonen & Ruohonen 1973).

Plus the geometry of the dual basis (seed §6): two unit keys at angle ``theta`` have dual vectors
of length ``1 / sin(theta)``.

Every function accepts scalars or numpy arrays (broadcast together) and returns a Python scalar for
scalar input, an ndarray otherwise.

References
----------
Seed "How much can a matrix remember?", §6-§7.
Kohonen, T. (1972). Correlation matrix memories. IEEE Trans. Computers C-21(4).
Anderson, J. A. (1972). A simple neural network generating an interactive memory.
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "additive_read_error",
    "least_squares_read_error",
    "dual_vector_norm",
    "max_pairs_at_error",
]


def _scalar_or_array(x: np.ndarray, scalar: bool, kind=float):
    return kind(x) if scalar else x


def _validate_n_dk(n, d_k) -> tuple[np.ndarray, np.ndarray, bool]:
    n_arr = np.asarray(n, dtype=float)
    d_arr = np.asarray(d_k, dtype=float)
    if np.any(~np.isfinite(n_arr)) or np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1 (number of stored pairs); got {n!r}")
    if np.any(~np.isfinite(d_arr)) or np.any(d_arr < 1):
        raise ValueError(f"d_k must be >= 1 (key dimension); got {d_k!r}")
    return n_arr, d_arr, (n_arr.ndim == 0 and d_arr.ndim == 0)


def additive_read_error(n, d_k):
    """Expected read error of the additive memory, ``e_add(n) = (n - 1) / d_k``.

    Parameters
    ----------
    n : int or array-like of int
        Number of stored pairs, ``>= 1``.
    d_k : int or array-like
        Key dimension, ``>= 1``; broadcast against ``n``.

    Returns
    -------
    float or numpy.ndarray of float64
        Mean squared read error relative to ``E||v||^2 = 1``; float for scalar inputs.

    Raises
    ------
    ValueError
        If any ``n < 1`` or ``d_k < 1`` (or non-finite).

    References
    ----------
    Seed §7 ("Additive memory"): ``E||S k_j - v_j||^2 = sum_{i != j} E[(k_i^T k_j)^2] = (n-1)/d_k``.
    Kohonen (1972); Anderson (1972).
    """
    n_arr, d_arr, scalar = _validate_n_dk(n, d_k)
    out = (n_arr - 1.0) / d_arr
    return _scalar_or_array(out, scalar)


def least_squares_read_error(n, d_k):
    """Expected read error of the least-squares memory: 0 for ``n <= d_k``, else ``1 - d_k/n``.

    Valid for keys uniform on the sphere and Gaussian values with ``E||v||^2 = 1``.

    Parameters
    ----------
    n : int or array-like of int
        Number of stored pairs, ``>= 1``.
    d_k : int or array-like
        Key dimension, ``>= 1``; broadcast against ``n``.

    Returns
    -------
    float or numpy.ndarray of float64
        ``e_ls(n)``; float for scalar inputs.

    Raises
    ------
    ValueError
        If any ``n < 1`` or ``d_k < 1`` (or non-finite).

    References
    ----------
    Seed §7 ("Least squares memory"): ``K^+ K`` is an orthogonal projection of rank ``d_k`` in
    ``R^n`` and keeps on average a fraction ``d_k / n`` of a random vector's squared length.
    Kohonen & Ruohonen (1973).
    """
    n_arr, d_arr, scalar = _validate_n_dk(n, d_k)
    n_b, d_b = np.broadcast_arrays(n_arr, d_arr)
    out = np.where(n_b <= d_b, 0.0, 1.0 - d_b / n_b)
    return _scalar_or_array(out, scalar)


def dual_vector_norm(theta):
    """Length of each dual vector of two unit keys at angle ``theta``: ``1 / sin(theta)``.

    Parameters
    ----------
    theta : float or array-like
        Angle between the two keys in radians, strictly inside ``(0, pi)`` (at 0 or pi the keys
        are parallel and have no dual basis).

    Returns
    -------
    float or numpy.ndarray of float64
        ``||k~_1|| = ||k~_2|| = 1 / sin(theta)``; float for scalar input.

    Raises
    ------
    ValueError
        If any ``theta`` is outside the open interval ``(0, pi)`` or non-finite.

    References
    ----------
    Seed §6 and Figure 3. Derivation: ``G = [[1, c], [c, 1]]`` with ``c = cos(theta)``, so
    ``||k~_1||^2 = (G^{-1})_{11} = 1 / (1 - c^2)``.
    """
    th = np.asarray(theta, dtype=float)
    if np.any(~np.isfinite(th)) or np.any(th <= 0) or np.any(th >= np.pi):
        raise ValueError(f"theta must lie in the open interval (0, pi) radians; got {theta!r}")
    out = 1.0 / np.sin(th)
    return _scalar_or_array(out, th.ndim == 0)


def max_pairs_at_error(eps, d_k):
    """Largest ``n`` whose additive read error ``(n - 1)/d_k`` is at most ``eps``.

    Solving ``(n - 1) / d_k <= eps`` for integer ``n >= 1`` gives ``n <= eps * d_k + 1``, so

    ``n_max = floor(eps * d_k) + 1``,

    which is the seed's "about ``eps * d_k`` pairs" made exact (the ``+1`` is the first pair,
    which has no interference). To keep exact boundary cases right despite binary rounding
    (``0.29 * 100`` is ``28.999...`` in floating point), ``eps * d_k`` is rounded up by a relative
    ``1e-12`` before the floor.

    Parameters
    ----------
    eps : float or array-like
        Tolerated mean squared read error (relative to ``E||v||^2 = 1``), ``>= 0``.
    d_k : int or array-like
        Key dimension, ``>= 1``; broadcast against ``eps``.

    Returns
    -------
    int or numpy.ndarray of int64
        ``floor(eps * d_k) + 1``; int for scalar inputs.

    Raises
    ------
    ValueError
        If any ``eps < 0`` or ``d_k < 1`` (or non-finite).

    References
    ----------
    Seed §7: "keeping the error below a fraction ``eps`` allows only about ``eps d_k`` pairs".
    """
    e = np.asarray(eps, dtype=float)
    d = np.asarray(d_k, dtype=float)
    if np.any(~np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"eps must be a finite number >= 0; got {eps!r}")
    if np.any(~np.isfinite(d)) or np.any(d < 1):
        raise ValueError(f"d_k must be >= 1 (key dimension); got {d_k!r}")
    prod = e * d
    out = (np.floor(prod * (1.0 + 1e-12)) + 1).astype(np.int64)
    return _scalar_or_array(out, e.ndim == 0 and d.ndim == 0, kind=int)
