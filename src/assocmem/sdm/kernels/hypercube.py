"""The ball kernel on the hypercube ``Z_2^n`` and its Walsh spectrum (Krawtchouk transforms).

With a neuron at every address, the SDM weight of a pattern is the circle intersection
``k(xi, p) = I(d(xi, p), d, n)`` of Bricken & Pehlevan (2021), Eq. 2: the autocorrelation of
the ball indicator on the group ``Z_2^n``. A kernel that depends only on ``xi + p`` is
diagonalised by the Walsh characters, and for a function of the Hamming distance the eigenvalue
of a character of weight ``w`` is the Krawtchouk transform ``lambda(w) = sum_j k(j) K_j(w; n)``
(MacWilliams & Sloane 1977, Ch. 5 §7); for the ball kernel it is the square of the ball
indicator's transform, so the kernel is positive semidefinite (seed 002, "Connections"). This
module computes the spectrum exactly in integers (:func:`krawtchouk_matrix`,
:func:`radial_spectrum`, :func:`ball_kernel_spectrum`), checks it by brute force
(:func:`walsh_hadamard`, :func:`hamming_kernel_matrix`, :func:`ball_kernel_matrix`), and gives
the spectrum of the exponential kernel ``exp(beta (1 - 2 dv / n))`` that attention fits to it
(:func:`log_exponential_kernel_spectrum`). Used by chapter 35.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_real
from assocmem.sdm._common import _real_array
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.kernels._common import _check_d, _check_n

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "krawtchouk_matrix",
    "radial_spectrum",
    "BallKernelSpectrum",
    "ball_kernel_spectrum",
    "walsh_hadamard",
    "hamming_kernel_matrix",
    "ball_kernel_matrix",
    "log_exponential_kernel_spectrum",
]

_MATRIX_MAX_N = 12  # brute-force 2^n x 2^n matrices: at most 4096 x 4096


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x.astype(np.uint64)).astype(np.int64)


def krawtchouk_matrix(n: int) -> np.ndarray:
    """Krawtchouk polynomials ``K_j(w; n)`` for all ``0 <= j, w <= n``, exact.

    ``K_j(w; n) = sum_i (-1)^i C(w, i) C(n - w, j - i)`` is the sum of the Walsh character
    ``(-1)^{s.x}`` over the ``C(n, j)`` points ``x`` of Hamming weight ``j``, for any ``s`` of
    weight ``w``. Computed by the three-term recurrence
    ``(j + 1) K_{j+1} = (n - 2w) K_j - (n - j + 1) K_{j-1}``, ``K_0 = 1``, ``K_1 = n - 2w``,
    whose divisions are exact.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    numpy.ndarray, shape ``(n + 1, n + 1)``, dtype object (Python ints)
        ``K[j, w] = K_j(w; n)``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer ``>= 1``.

    References
    ----------
    MacWilliams & Sloane (1977), Ch. 5 §7; seed 002, "Connections" (Fourier transform on
    ``Z_2^n``).
    """
    n = _check_n(n)
    K = np.empty((n + 1, n + 1), dtype=object)
    for w in range(n + 1):
        prev, cur = 1, n - 2 * w
        K[0, w] = prev
        K[1, w] = cur
        for j in range(1, n):
            nxt = (n - 2 * w) * cur - (n - j + 1) * prev
            if nxt % (j + 1):
                raise ArithmeticError("Krawtchouk recurrence left a remainder")  # cannot happen
            prev, cur = cur, nxt // (j + 1)
            K[j + 1, w] = cur
    return K


def radial_spectrum(values: ArrayLike, n: int) -> list:
    """Eigenvalues of a Hamming-distance kernel ``K[x, y] = values[d(x, y)]`` on ``{0, 1}^n``.

    The ``2^n x 2^n`` matrix is a convolution on the group ``Z_2^n``, so the Walsh characters
    ``chi_s`` are its eigenvectors; the eigenvalue of ``chi_s`` depends only on ``w = |s|`` and is
    ``lambda(w) = sum_j values[j] K_j(w; n)``, with multiplicity ``C(n, w)``.

    Parameters
    ----------
    values : sequence of length ``n + 1``
        The kernel at each distance ``0..n``. Python ints give exact integer eigenvalues;
        otherwise ``Fraction``-exact sums rounded once to float.
    n : int
        Dimension, ``n >= 1``.

    Returns
    -------
    list, length ``n + 1``
        ``lambda(w)`` for ``w = 0..n``: ints if every value is an int, floats otherwise.

    Raises
    ------
    ValueError
        If ``values`` does not have ``n + 1`` entries or an entry is not a finite real number
        (booleans and strings are refused; with a boolean among ints the result is no longer
        silently exact).

    References
    ----------
    Seed 002, "Connections"; MacWilliams & Sloane (1977), Ch. 5.
    """
    n = _check_n(n)
    vals = list(values)
    if len(vals) != n + 1:
        raise ValueError(f"values needs one entry per distance 0..n (n + 1 = {n + 1}), got {len(vals)}")
    K = krawtchouk_matrix(n)
    exact = all(isinstance(v, Integral) and not isinstance(v, bool) for v in vals)
    if exact:
        vals = [int(v) for v in vals]
        return [sum(vals[j] * K[j, w] for j in range(n + 1)) for w in range(n + 1)]
    fr = []
    for v in vals:
        f = as_real(v, "values")  # refuses booleans, strings, NaN and infinities
        fr.append(Fraction(f))
    return [float(sum(fr[j] * K[j, w] for j in range(n + 1))) for w in range(n + 1)]


@dataclass(frozen=True)
class BallKernelSpectrum:
    """The Walsh spectrum of the ball-intersection kernel ``I(d(x, y), d, n)`` on ``{0, 1}^n``.

    Attributes
    ----------
    n, d : int
        Dimension and read/write radius.
    eigenvalues : tuple of int, length ``n + 1``
        ``lambda(w) = sum_j I(j, d, n) K_j(w; n)``, the eigenvalue of every character of weight
        ``w`` (the Krawtchouk transform of the kernel).
    ball_transform : tuple of int, length ``n + 1``
        ``b(w) = sum_{j <= d} K_j(w; n)``, the Walsh transform of the ball indicator.
    multiplicities : tuple of int, length ``n + 1``
        ``C(n, w)``; they sum to ``2^n``.
    """

    n: int
    d: int
    eigenvalues: tuple
    ball_transform: tuple
    multiplicities: tuple

    @property
    def squared_transform_equal(self) -> bool:
        """``lambda(w) == b(w)^2`` for every ``w``, in exact integers."""
        return all(lam == b * b for lam, b in zip(self.eigenvalues, self.ball_transform))

    @property
    def reflection_symmetric(self) -> bool:
        """``lambda(w) == lambda(n + 1 - w)`` for ``1 <= w <= n`` (exact).

        Follows from ``b(w) = K_d(w - 1; n - 1)`` for ``w >= 1`` and the reflection
        ``K_d(n - 1 - x; n - 1) = (-1)^d K_d(x; n - 1)``: the parity character (``w = n``) has
        the eigenvalue of the smoothest nonconstant ones (``w = 1``).
        """
        n, lam = self.n, self.eigenvalues
        return all(lam[w] == lam[n + 1 - w] for w in range(1, n + 1))

    @property
    def min_eigenvalue(self) -> int:
        """The smallest eigenvalue (exact)."""
        return min(self.eigenvalues)

    @property
    def zero_weights(self) -> list[int]:
        """The weights ``w`` whose eigenvalue is exactly 0 (the kernel matrix is singular there)."""
        return [w for w, lam in enumerate(self.eigenvalues) if lam == 0]

    @property
    def null_dimension(self) -> int:
        """Dimension of the kernel matrix's null space, ``sum C(n, w)`` over :attr:`zero_weights`."""
        return sum(self.multiplicities[w] for w in self.zero_weights)

    def normalized(self) -> np.ndarray:
        """``lambda(w) / lambda(0)`` as float64 (exact ratio, rounded once), shape ``(n + 1,)``."""
        top = self.eigenvalues[0]
        return np.array([float(Fraction(lam, top)) for lam in self.eigenvalues])

    def expanded(self) -> np.ndarray:
        """All ``2^n`` eigenvalues with multiplicity, ascending, float64 (``n <= 20``)."""
        if self.n > 20:
            raise ValueError(f"expanded() lists 2^n eigenvalues; n = {self.n} > 20 is too many")
        out = np.concatenate([np.full(m, float(lam)) for lam, m in zip(self.eigenvalues, self.multiplicities)])
        return np.sort(out)


def ball_kernel_spectrum(n: int, d: int) -> BallKernelSpectrum:
    """Exact eigenvalues of the ball-intersection kernel matrix on ``{0, 1}^n``, any ``n``.

    The kernel ``k(x, y) = I(d(x, y), d, n) = sum_z 1_B(z + x) 1_B(z + y)`` (``B`` the radius-``d``
    ball at 0, ``+`` the XOR) is the autocorrelation of ``1_B``, so its Walsh transform is the
    square of ``1_B``'s: ``lambda(w) = b(w)^2`` with ``b(w) = sum_{j <= d} K_j(w; n)``. This
    function computes ``lambda`` from the intersection table (:func:`radial_spectrum`) and ``b``
    from the Krawtchouk matrix independently, so that :attr:`BallKernelSpectrum.squared_transform_equal`
    is a check, not a tautology. All eigenvalues are ``>= 0`` (a positive semi-definite kernel);
    some can be exactly 0 (e.g. ``n = 10, d = 3`` at ``w = 3`` and ``w = 8``), so the kernel
    matrix on the whole cube need not be invertible.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    d : int
        Read/write radius, ``0 <= d <= n``.

    Returns
    -------
    BallKernelSpectrum

    Raises
    ------
    ValueError
        If ``n < 1`` or ``d`` is not an integer in ``[0, n]``.

    References
    ----------
    Seed 002, "Connections" (autocorrelation of the ball indicator, Fourier transform = squared
    transform); Bricken & Pehlevan (2021), Eq. 2.
    """
    n = _check_n(n)
    d = _check_d(d, n)
    K = krawtchouk_matrix(n)
    table = circle_intersection_table(n, d)
    lam = radial_spectrum(table, n)
    b = [sum(K[j, w] for j in range(d + 1)) for w in range(n + 1)]
    mult = [math.comb(n, w) for w in range(n + 1)]
    return BallKernelSpectrum(n=n, d=d, eigenvalues=tuple(lam), ball_transform=tuple(b),
                              multiplicities=tuple(mult))


def walsh_hadamard(f: ArrayLike) -> np.ndarray:
    """Unnormalised fast Walsh-Hadamard transform along the last axis.

    ``F[..., s] = sum_x f[..., x] (-1)^{popcount(s & x)}`` for ``x, s`` in ``0..2^n - 1``
    (bit ``i`` of the index is coordinate ``i``), in ``n 2^n`` additions. The eigenvalues of a
    convolution matrix ``K[x, y] = k(x XOR y)`` are ``walsh_hadamard(k)``.

    Parameters
    ----------
    f : array_like, shape ``(..., 2^n)``
        Real values; computed in float64.

    Returns
    -------
    numpy.ndarray, shape ``(..., 2^n)``, float64

    Raises
    ------
    ValueError
        If the last axis is not a power of two, or an entry is not a finite real number
        (booleans, strings, NaN and infinities are refused).

    References
    ----------
    Seed 002, "Connections" (the Fourier transform on ``Z_2^n``).
    """
    f = np.array(_real_array(f, "f"), dtype=np.float64)
    size = f.shape[-1] if f.ndim else 0
    if size < 1 or size & (size - 1):
        raise ValueError(f"the last axis must have length 2^n, got {size}")
    lead = f.shape[:-1]
    h = 1
    while h < size:
        g = f.reshape(*lead, size // (2 * h), 2, h)
        a, b = g[..., 0, :], g[..., 1, :]
        f = np.stack([a + b, a - b], axis=-2).reshape(*lead, size)
        h *= 2
    return f


def hamming_kernel_matrix(n: int, values: ArrayLike) -> np.ndarray:
    """The ``2^n x 2^n`` matrix ``K[x, y] = values[d(x, y)]`` by brute force (``n <= 12``).

    Parameters
    ----------
    n : int
        Dimension, ``1 <= n <= 12``.
    values : array_like, shape ``(n + 1,)``
        The kernel at each Hamming distance.

    Returns
    -------
    numpy.ndarray, shape ``(2^n, 2^n)``, float64
        Index ``x`` is the address whose bit ``i`` is bit ``i`` of ``x``.

    Raises
    ------
    ValueError
        If ``n`` is outside ``[1, 12]``, ``values`` has the wrong length, or an entry is not a
        finite real number (booleans, strings, NaN and infinities are refused).
    """
    n = _check_n(n, maximum=_MATRIX_MAX_N)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"values must be a sequence of n + 1 = {n + 1} numbers, got {values!r}")
    vals = np.array([as_real(v, "values") for v in values], dtype=np.float64)
    if vals.shape != (n + 1,):
        raise ValueError(f"values needs n + 1 = {n + 1} entries, got {vals.shape[0]}")
    idx = np.arange(1 << n, dtype=np.uint64)
    dist = _popcount(idx[:, None] ^ idx[None, :])  # (2^n, 2^n)
    return vals[dist]


def ball_kernel_matrix(n: int, d: int) -> np.ndarray:
    """``K[x, y] = I(d(x, y), d, n)`` on all of ``{0, 1}^n`` (``n <= 12``), float64 (exact integers).

    The Gram matrix of the ball features ``phi(x) = 1_B(. + x)`` over every address: the
    shared-neuron counts of an SDM with a neuron at every address.

    Parameters
    ----------
    n : int
        Dimension, ``1 <= n <= 12``.
    d : int
        Radius, ``0 <= d <= n``.

    Returns
    -------
    numpy.ndarray, shape ``(2^n, 2^n)``, float64

    Raises
    ------
    ValueError
        If ``n`` is outside ``[1, 12]`` or ``d`` outside ``[0, n]``.
    """
    n = _check_n(n, maximum=_MATRIX_MAX_N)
    d = _check_d(d, n)
    return hamming_kernel_matrix(n, circle_intersection_table(n, d))


def log_exponential_kernel_spectrum(n: int, beta: float) -> np.ndarray:
    """Log-eigenvalues of ``K[x, y] = exp(beta (1 - 2 d(x, y) / n))`` on ``{0, 1}^n``.

    With bipolar unit vectors ``exp(beta rho) = prod_i exp(beta s_i t_i / n)``, a product of
    ``2 x 2`` kernels with eigenvalues ``2 cosh(beta/n)`` (constant character) and
    ``2 sinh(beta/n)``, so ``lambda(w) = (2 cosh(beta/n))^{n - w} (2 sinh(beta/n))^w``: positive
    for ``beta > 0`` and geometric in ``w`` with ratio ``tanh(beta / n)``.

    Parameters
    ----------
    n : int
        Dimension, ``n >= 1``.
    beta : float
        Inverse temperature, ``> 0``.

    Returns
    -------
    numpy.ndarray, shape ``(n + 1,)``, float64
        ``log lambda(w)`` for ``w = 0..n``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``beta`` is not a finite positive number (booleans and strings are
        refused), or ``beta / n`` underflows to 0.

    References
    ----------
    Seed 002, "Connections" (``exp(beta x^T y)`` is positive definite); Bricken & Pehlevan (2021),
    Eq. 6.
    """
    n = _check_n(n)
    b = as_real(beta, "beta")  # refuses booleans, strings, NaN and infinities
    if not b > 0:
        raise ValueError(f"beta must be a finite positive number, got {beta!r}")
    t = b / n
    if t == 0.0:
        raise ValueError(f"beta = {b!r} is too small: beta / n underflows to 0 and log(2 sinh(beta/n)) "
                         "is -inf")
    w = np.arange(n + 1, dtype=np.float64)
    log_c = math.log(2.0) + t + math.log1p(math.exp(-2 * t)) - math.log(2.0)  # log(2 cosh t)
    log_s = math.log(2.0) + t + math.log(-math.expm1(-2 * t)) - math.log(2.0)  # log(2 sinh t)
    return (n - w) * log_c + w * log_s
