"""Closed forms for the read error and capacity of linear associative memories.

For ``n`` keys drawn uniformly from the unit sphere in ``R^{d_k}`` and independent mean-zero values
with ``E||v||^2 = 1``, the average squared read error ``e(n) = E||S k_j - v_j||^2`` is (seed §7)

* additive memory (``S = V K^T``): ``e_add(n) = (n - 1) / d_k``, since each of the ``n - 1``
  interfering pairs contributes ``E[(k_i^T k_j)^2] = 1/d_k`` (Kohonen 1972; Anderson 1972);
* least-squares memory (``S = V K^+``): ``e_ls(n) = 0`` for ``n <= d_k`` and ``1 - d_k/n`` beyond,
  for Gaussian values, since ``K^+ K`` projects ``R^n`` onto a ``d_k``-dimensional subspace
  (Kohonen & Ruohonen 1973).

Plus the geometry of a few keys (seed §5-§6):

* two unit keys at angle ``theta`` have dual vectors of length ``1 / sin(theta)``;
* with orthonormal values, the least-squares memory of those two keys stretches its input by at
  most ``sigma_max = 1 / sqrt(1 - |cos(theta)|)`` (the additive memory by ``sqrt(1 + |cos(theta)|)``),
  which is also the worst-case amplification of query noise;
* no ``n > d_k`` unit keys are mutually orthogonal: their largest overlap ``max |cos|`` is at least
  the Welch bound ``sqrt((n - d_k) / (d_k (n - 1)))``, and in the plane at least ``cos(pi / n)``.

Every function accepts scalars or numpy arrays (broadcast together) and returns a Python scalar for
scalar input, an ndarray otherwise. Inputs must be real numbers: strings, booleans and complex
numbers raise :class:`TypeError` (``"10"`` is not silently read as 10). Dimensions ``d_k`` and the
numbers of vectors of the coherence bounds must be whole numbers. The read-error curves accept a
real ``n >= 1``: they are then the continuous curves through the integer points, which is how the
book plots them.

References
----------
Seed "How much can a matrix remember?", §5-§7.
Welch, L. R. (1974). Lower bounds on the maximum cross correlation of signals. IEEE Trans.
Information Theory 20(3), 397-399.
Kohonen, T. (1972). Correlation matrix memories. IEEE Trans. Computers C-21(4).
Anderson, J. A. (1972). A simple neural network generating an interactive memory.
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "additive_read_error",
    "least_squares_read_error",
    "dual_vector_norm",
    "least_squares_sigma_max",
    "additive_sigma_max",
    "welch_bound",
    "planar_coherence_bound",
    "max_pairs_at_error",
]


def _scalar_or_array(x: np.ndarray, scalar: bool, kind=float):
    return kind(x) if scalar else x


def _real_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array, refusing what is not a real number (strings, booleans, complex).

    ``np.asarray("10", dtype=float)`` would quietly parse the string; a count given as text is a
    mistake, so it raises :class:`TypeError` instead.
    """
    raw = np.asarray(x)
    if raw.dtype.kind == "O" and all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                                     for v in raw.ravel().tolist()):
        raw = raw.astype(float)  # e.g. Fractions, or Python ints too large for int64
    if raw.dtype.kind not in "iuf":  # signed/unsigned integers and floats; not b, c, U, S, O, ...
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {x!r} "
                        f"(dtype {raw.dtype})")
    return raw.astype(float)


def _require_integers(arr: np.ndarray, original, name: str, what: str) -> None:
    """Raise unless every entry of the (finite) float array ``arr`` is a whole number."""
    if np.any(arr != np.floor(arr)):
        raise ValueError(f"{name} must be a whole number ({what}); got {original!r}")


def _validate_n_dk(n, d_k, *, integer_n: bool = False) -> tuple[np.ndarray, np.ndarray, bool]:
    n_arr = _real_array(n, "n")
    d_arr = _real_array(d_k, "d_k")
    if np.any(~np.isfinite(n_arr)) or np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1 (number of stored pairs); got {n!r}")
    if np.any(~np.isfinite(d_arr)) or np.any(d_arr < 1):
        raise ValueError(f"d_k must be >= 1 (key dimension); got {d_k!r}")
    if integer_n:
        _require_integers(n_arr, n, "n", "a number of keys")
    _require_integers(d_arr, d_k, "d_k", "a key dimension")
    return n_arr, d_arr, (n_arr.ndim == 0 and d_arr.ndim == 0)


def _check_overflow(out: np.ndarray, theta, what: str) -> None:
    """Raise for a result beyond float64's range (an angle within ~1e-308 of 0 or pi)."""
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} overflows float64 for theta = {theta!r}: the angle is too close to 0 or pi "
                         "(keys this nearly parallel have dual vectors longer than 1.8e308)")


def _check_open_angle(theta) -> np.ndarray:
    th = _real_array(theta, "theta")
    if np.any(~np.isfinite(th)) or np.any(th <= 0) or np.any(th >= np.pi):
        raise ValueError(f"theta must lie in the open interval (0, pi) radians; got {theta!r}")
    return th


def additive_read_error(n: ArrayLike, d_k: ArrayLike) -> float | np.ndarray:
    """Expected read error of the additive memory, ``e_add(n) = (n - 1) / d_k``.

    Parameters
    ----------
    n : int or array-like of int
        Number of stored pairs, ``>= 1``. A non-integer ``n`` evaluates the continuous curve
        ``(n - 1) / d_k`` between the integer points (for plotting).
    d_k : int or array-like of int
        Key dimension, a whole number ``>= 1``; broadcast against ``n``.

    Returns
    -------
    float or numpy.ndarray of float64
        Mean squared read error relative to ``E||v||^2 = 1``; float for scalar inputs.

    Raises
    ------
    TypeError
        If ``n`` or ``d_k`` is not real (a string such as ``"10"``, a boolean, a complex number).
    ValueError
        If any ``n < 1`` or ``d_k < 1`` (or non-finite), or ``d_k`` is not a whole number.

    References
    ----------
    Seed §7 ("Additive memory"): ``E||S k_j - v_j||^2 = sum_{i != j} E[(k_i^T k_j)^2] = (n-1)/d_k``.
    Kohonen (1972); Anderson (1972).
    """
    n_arr, d_arr, scalar = _validate_n_dk(n, d_k)
    out = (n_arr - 1.0) / d_arr
    return _scalar_or_array(out, scalar)


def least_squares_read_error(n: ArrayLike, d_k: ArrayLike) -> float | np.ndarray:
    """Expected read error of the least-squares memory: 0 for ``n <= d_k``, else ``1 - d_k/n``.

    Valid for keys uniform on the sphere and Gaussian values with ``E||v||^2 = 1``.

    Parameters
    ----------
    n : int or array-like of int
        Number of stored pairs, ``>= 1``. A non-integer ``n`` evaluates the continuous curve
        (for plotting).
    d_k : int or array-like of int
        Key dimension, a whole number ``>= 1``; broadcast against ``n``.

    Returns
    -------
    float or numpy.ndarray of float64
        ``e_ls(n)``; float for scalar inputs.

    Raises
    ------
    TypeError
        If ``n`` or ``d_k`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``n < 1`` or ``d_k < 1`` (or non-finite), or ``d_k`` is not a whole number.

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


def dual_vector_norm(theta: ArrayLike) -> float | np.ndarray:
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
    TypeError
        If ``theta`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``theta`` is outside the open interval ``(0, pi)`` or non-finite, or so close to
        0 or pi (within about ``1e-308``) that the length overflows float64.

    References
    ----------
    Seed §6 and Figure 3. Derivation: ``G = [[1, c], [c, 1]]`` with ``c = cos(theta)``, so
    ``||k~_1||^2 = (G^{-1})_{11} = 1 / (1 - c^2)``.
    """
    th = _check_open_angle(theta)
    with np.errstate(over="ignore", divide="ignore"):
        out = 1.0 / np.sin(th)
    _check_overflow(out, theta, "1 / sin(theta)")
    return _scalar_or_array(out, th.ndim == 0)



def least_squares_sigma_max(theta: ArrayLike) -> float | np.ndarray:
    """Largest singular value of the least-squares memory of two unit keys at angle ``theta``.

    With unit keys ``k_1, k_2`` at angle ``theta`` and orthonormal values ``v_1, v_2``, the memory
    ``S* = V G^{-1} K^T = V K^+`` has the singular values of ``K^+``, the reciprocals of those of
    ``K``. The squared singular values of ``K`` are the eigenvalues of ``G = [[1, c], [c, 1]]``,
    ``1 + c`` and ``1 - c`` with ``c = cos(theta)``, so

    ``sigma_max(S*) = 1 / sqrt(1 - |cos(theta)|)``,

    attained in the direction ``k_1 - k_2`` (``k_1 + k_2`` when ``cos(theta) < 0``), in which the
    two keys differ. Because ``S* k_1 = v_1`` exactly, a query ``k_1 + eps u`` with ``||u|| = 1``
    reads ``v_1 + eps S* u``: ``sigma_max`` is the worst-case amplification of query noise. It is
    never below the dual-vector length ``1 / sin(theta)`` and tends to ``sqrt(2)`` times it as
    ``theta -> 0`` (``sigma_max ~ sqrt(2) / theta``).

    Parameters
    ----------
    theta : float or array-like
        Angle between the keys in radians, in the open interval ``(0, pi)``.

    Returns
    -------
    float or numpy.ndarray of float64
        ``1 / sqrt(1 - |cos(theta)|)``; float for scalar input. Computed as
        ``1 / (sqrt(2) sin(phi / 2))`` with ``phi = min(theta, pi - theta)`` to keep full relative
        accuracy for nearly parallel keys.

    Raises
    ------
    TypeError
        If ``theta`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``theta`` is outside ``(0, pi)`` or non-finite, or so close to 0 or pi that
        ``sigma_max`` overflows float64.

    References
    ----------
    Seed §6 ("the largest stretch of a matrix, its largest singular value, is the long
    semi-axis of the ellipse"; the seed gives no formula). Kohonen & Ruohonen (1973).
    """
    th = _check_open_angle(theta)
    phi = np.minimum(th, np.pi - th)  # angle between the lines through the keys, in (0, pi/2]
    with np.errstate(over="ignore", divide="ignore"):
        out = 1.0 / (np.sqrt(2.0) * np.sin(phi / 2.0))  # 1 - |cos(theta)| = 2 sin^2(phi / 2)
    _check_overflow(out, theta, "1 / sqrt(1 - |cos(theta)|)")
    return _scalar_or_array(out, th.ndim == 0)


def additive_sigma_max(theta: ArrayLike) -> float | np.ndarray:
    """Largest singular value of the additive memory of two unit keys at angle ``theta``.

    With orthonormal values, ``S = V K^T`` has the singular values of ``K``:
    ``sqrt(1 + |cos(theta)|)``, between 1 (orthogonal keys) and ``sqrt(2)`` (parallel keys).

    Parameters
    ----------
    theta : float or array-like
        Angle between the keys in radians; any finite value (parallel keys are allowed).

    Returns
    -------
    float or numpy.ndarray of float64
        ``sqrt(1 + |cos(theta)|)``; float for scalar input.

    Raises
    ------
    TypeError
        If ``theta`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``theta`` is non-finite.

    References
    ----------
    Seed §5 (the additive memory ``S = V K^T``).
    """
    th = _real_array(theta, "theta")
    if np.any(~np.isfinite(th)):
        raise ValueError(f"theta must be finite (radians); got {theta!r}")
    out = np.sqrt(1.0 + np.abs(np.cos(th)))
    return _scalar_or_array(out, th.ndim == 0)


def welch_bound(n: ArrayLike, d_k: ArrayLike) -> float | np.ndarray:
    """Smallest possible largest overlap of ``n`` unit vectors in ``R^{d_k}`` (Welch, 1974).

    For any unit keys ``k_1, ..., k_n`` in ``R^{d_k}``,

    ``max_{i != j} |k_i^T k_j| >= sqrt((n - d_k) / (d_k (n - 1)))``  for ``n > d_k``,

    and 0 for ``n <= d_k`` (orthonormal keys exist). Proof: ``G`` has trace ``n`` and rank at most
    ``d_k``, so ``||G||_F^2 >= n^2 / d_k`` (Cauchy-Schwarz on its eigenvalues); the diagonal
    contributes ``n`` and the ``n (n - 1)`` off-diagonal entries the rest. Equality holds for
    equiangular tight frames, e.g. three keys at 120 degrees in the plane (bound ``1/2``).

    Parameters
    ----------
    n : int or array-like of int
        Number of keys, a whole number ``>= 1``.
    d_k : int or array-like of int
        Key dimension, a whole number ``>= 1``; broadcast against ``n``.

    Returns
    -------
    float or numpy.ndarray of float64
        The bound; float for scalar inputs.

    Raises
    ------
    TypeError
        If ``n`` or ``d_k`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``n < 1`` or ``d_k < 1`` (or non-finite), or either is not a whole number.

    References
    ----------
    Welch, L. R. (1974), IEEE Trans. Information Theory 20(3). Seed §5 ("at most ``d_k`` vectors
    are mutually perpendicular").
    """
    n_arr, d_arr, scalar = _validate_n_dk(n, d_k, integer_n=True)
    n_b, d_b = np.broadcast_arrays(n_arr, d_arr)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sq = (n_b - d_b) / (d_b * (n_b - 1.0))
    out = np.where(n_b <= d_b, 0.0, np.sqrt(np.where(n_b <= d_b, 0.0, sq)))
    return _scalar_or_array(out, scalar)


def planar_coherence_bound(n: ArrayLike) -> float | np.ndarray:
    """Smallest possible largest overlap ``max_{i != j} |cos|`` of ``n`` unit vectors in the plane.

    ``|cos|`` between two unit vectors depends only on the lines through them. ``n`` lines through
    the origin cut the half-turn into ``n`` gaps that sum to ``pi``, so the smallest gap is at most
    ``pi / n`` and the two lines bounding it have ``|cos| >= cos(pi / n)``. Equally spaced lines
    attain it. For ``n = 3`` the bound is ``1/2``: any third key in the plane overlaps one of the
    first two by at least half.

    Parameters
    ----------
    n : int or array-like of int
        Number of unit vectors, a whole number ``>= 1``.

    Returns
    -------
    float or numpy.ndarray of float64
        ``cos(pi / n)`` for ``n >= 3``, exactly 0 for ``n <= 2``; float for scalar input.

    Raises
    ------
    TypeError
        If ``n`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``n < 1`` or non-finite, or ``n`` is not a whole number.

    References
    ----------
    Seed §5 ("in the plane a third key always overlaps the first two").
    """
    n_arr = _real_array(n, "n")
    if np.any(~np.isfinite(n_arr)) or np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1 (number of vectors); got {n!r}")
    _require_integers(n_arr, n, "n", "a number of vectors")
    out = np.where(n_arr <= 2, 0.0, np.cos(np.pi / np.maximum(n_arr, 1.0)))
    return _scalar_or_array(out, n_arr.ndim == 0)

def max_pairs_at_error(eps: ArrayLike, d_k: ArrayLike) -> int | np.ndarray:
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
    d_k : int or array-like of int
        Key dimension, a whole number ``>= 1``; broadcast against ``eps``.

    Returns
    -------
    int or numpy.ndarray of int64
        ``floor(eps * d_k) + 1``; int for scalar inputs.

    Raises
    ------
    TypeError
        If ``eps`` or ``d_k`` is not real (a string, a boolean, a complex number).
    ValueError
        If any ``eps < 0`` or ``d_k < 1`` (or non-finite), ``d_k`` is not a whole number, or
        the count exceeds what an int64 holds.

    References
    ----------
    Seed §7: "keeping the error below a fraction ``eps`` allows only about ``eps d_k`` pairs".
    """
    e = _real_array(eps, "eps")
    d = _real_array(d_k, "d_k")
    if np.any(~np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"eps must be a finite number >= 0; got {eps!r}")
    if np.any(~np.isfinite(d)) or np.any(d < 1):
        raise ValueError(f"d_k must be >= 1 (key dimension); got {d_k!r}")
    _require_integers(d, d_k, "d_k", "a key dimension")
    prod = e * d
    count = np.floor(prod * (1.0 + 1e-12)) + 1
    if np.any(count >= 2.0**63):
        raise ValueError(f"eps * d_k is too large for a count of pairs (an int64 holds at most 2^63 - 1); "
                         f"got eps={eps!r}, d_k={d_k!r}")
    out = count.astype(np.int64)
    return _scalar_or_array(out, e.ndim == 0 and d.ndim == 0, kind=int)
