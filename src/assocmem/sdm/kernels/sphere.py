"""Zonal kernels on the sphere: the cap intersection and the exponential kernel as Gram matrices.

Continuous SDM (Bricken & Pehlevan 2021, App. B.3) weights a pattern by the fraction ``Ic`` of
the sphere in the intersection of two caps, a function of the cosine ``x^T y``; attention
weights it by ``exp(beta x^T y)`` (Eq. 6). Both are zonal kernels on ``S^{n-1}``: the source
(seed 002, "Connections") reads the cap intersection as a positive-definite zonal kernel, and
``exp(beta x^T y)`` is one by the Schur product theorem. This module builds their Gram
matrices on points (:func:`random_unit_vectors`, :func:`cap_kernel_gram`,
:func:`exponential_kernel_gram`) and bounds how far below zero a computed eigenvalue of a
positive semidefinite matrix may fall through rounding alone (:func:`psd_tolerance`), so that
a negative eigenvalue can be told from rounding. Used by chapter 35.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.sdm._common import _real_array
from assocmem.sdm.geometry.spherical_caps import cap_fraction, cap_intersection
from assocmem.sdm.kernels._common import _unit_rows

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, Seed

__all__ = [
    "random_unit_vectors",
    "cap_kernel_gram",
    "exponential_kernel_gram",
    "psd_tolerance",
]


def random_unit_vectors(m: int, n: int, seed: Seed = 0) -> np.ndarray:
    """``m`` points drawn uniformly on ``S^{n-1}`` (normalised Gaussians), float64 ``(m, n)``.

    Raises
    ------
    ValueError
        If ``m < 1`` or ``n < 2``.
    """
    m, n = _as_int(m, "m"), _as_int(n, "n")
    if m < 1 or n < 2:
        raise ValueError(f"need m >= 1 points on S^(n-1) with n >= 2, got m = {m}, n = {n}")
    x = np.random.default_rng(seed).standard_normal((m, n))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def cap_kernel_gram(points: ArrayLike, d: float) -> np.ndarray:
    """Gram matrix of the cap-intersection kernel, ``G[i, j] = Ic(x_i^T x_j; d, n)``.

    ``Ic(rho)`` is the fraction of ``S^{n-1}`` inside both caps of threshold cosine
    ``c = 1 - 2d/n`` around two centres at cosine ``rho`` (continuous SDM, App. B.3). It is
    ``int 1[z^T x >= c] 1[z^T y >= c] dsigma(z)``, the inner product of two cap indicators in
    ``L^2(S^{n-1})``, so every such Gram matrix is positive semi-definite (a zonal kernel).
    Evaluated with :func:`assocmem.sdm.cap_intersection` on the upper triangle.

    Parameters
    ----------
    points : array_like, shape ``(M, n)``
        Unit vectors, ``n >= 2``.
    d : float
        Hamming-equivalent radius in ``[0, n]``.

    Returns
    -------
    numpy.ndarray, shape ``(M, M)``, float64, symmetric, diagonal ``cap_fraction(d, n)``

    Raises
    ------
    ValueError
        If the points are not unit rows or ``d`` is out of range.

    References
    ----------
    Seed 002, "Connections" (the cap intersection as a zonal positive-definite kernel);
    Bricken & Pehlevan (2021), App. B.3; Lee & Kim (2014).
    """
    x = _unit_rows(points)
    M, n = x.shape
    iu = np.triu_indices(M, k=1)
    rho = np.clip(np.einsum("ik,ik->i", x[iu[0]], x[iu[1]]), -1.0, 1.0)
    G = np.zeros((M, M))
    if rho.size:
        G[iu] = cap_intersection(rho, d, n)
    G = G + G.T
    np.fill_diagonal(G, cap_fraction(d, n))
    return G


def exponential_kernel_gram(points: ArrayLike, beta: float) -> np.ndarray:
    """Gram matrix ``G[i, j] = exp(beta x_i^T x_j)`` of unit vectors.

    ``exp(beta t) = sum_k beta^k t^k / k!`` has nonnegative coefficients and each ``(x^T y)^k``
    is a positive semi-definite kernel (Schur product theorem), so ``G`` is PSD; it is the
    unnormalised von Mises-Fisher density of concentration ``beta``.

    Parameters
    ----------
    points : array_like, shape ``(M, n)``
        Unit vectors.
    beta : float
        Concentration, finite.

    Returns
    -------
    numpy.ndarray, shape ``(M, M)``, float64

    Raises
    ------
    ValueError
        If the points are not unit rows, ``beta`` is not a finite real number (booleans and
        strings are refused), or ``exp(beta x_i^T x_j)`` overflows float64 (``|beta| > ~709``).

    References
    ----------
    Seed 002, "Connections"; Bricken & Pehlevan (2021), Eq. 6.
    """
    x = _unit_rows(points)
    b = as_real(beta, "beta")  # refuses booleans, strings, NaN and infinities
    with np.errstate(over="ignore"):
        G = np.exp(b * np.clip(x @ x.T, -1.0, 1.0))
    if not np.all(np.isfinite(G)):
        raise ValueError(f"beta = {b!r} is too large: exp(beta x_i^T x_j) overflows float64 "
                         f"(|beta| must stay below about 709 where |x_i^T x_j| = 1)")
    return G


def psd_tolerance(gram: ArrayLike,
                  entry_rel_error: float = float(np.finfo(np.float64).eps)) -> float:
    """How far below 0 a computed eigenvalue of a PSD matrix may fall through rounding alone.

    Let every computed entry carry a relative error at most ``e`` (from the kernel's
    evaluation), ``|E_ij| <= e max|G|``. By Weyl's inequality the eigenvalues move by at most
    ``||E||_2 <= ||E||_F <= M e max|G|``. A backward-stable symmetric eigensolver adds at most
    ``p(M) u ||G||_2`` with ``||G||_2 <= M max|G|``; taking ``p(M) = M`` (a conservative choice),
    the total is below ``M^2 (e + u) max|G_ij|``, which we return.

    Parameters
    ----------
    gram : array_like, shape ``(M, M)``
        The Gram matrix.
    entry_rel_error : float, default float64 epsilon
        Relative accuracy of each entry (``1e-12`` for :func:`cap_kernel_gram`, the accuracy
        :func:`assocmem.sdm.cap_intersection` documents).

    Returns
    -------
    float
        A nonnegative tolerance: ``min eig >= -tol`` for a PSD kernel.

    Raises
    ------
    ValueError
        If ``gram`` is not a nonempty square matrix of finite real numbers, or
        ``entry_rel_error`` is negative or not a finite real number.

    References
    ----------
    Higham (2002), §2 (backward stability); Weyl's inequality for symmetric perturbations.
    """
    G = _real_array(gram, "gram")  # no booleans, strings, NaN or infinities
    if G.ndim != 2 or G.shape[0] != G.shape[1] or G.shape[0] < 1:
        raise ValueError(f"gram must be a square (M, M) matrix with M >= 1, got shape {G.shape}")
    e = as_real(entry_rel_error, "entry_rel_error", minimum=0.0)
    M = G.shape[0]
    u = float(np.finfo(np.float64).eps) / 2
    return float(M * M * (e + u) * np.abs(G).max())
