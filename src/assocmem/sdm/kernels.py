"""SDM as a kernel memory: the ball kernel, binary random features, vMF posteriors and Hopfield.

The source (a critical review of Bricken & Pehlevan 2021, section "Connections") restates the
SDM-attention correspondence in the language of kernels. This module makes each statement
computable:

1. **The ball kernel on** ``Z_2^n``. With a neuron at every address the weight of a pattern is
   ``k(xi, p) = I(d(xi, p), d, n) = sum_x 1[d(x, xi) <= d] 1[d(x, p) <= d]``, the
   autocorrelation of the ball indicator on the group ``Z_2^n``. A kernel that depends only on
   ``xi + p`` is diagonalised by the Walsh characters ``chi_s(x) = (-1)^{s.x}``; for a function of
   the Hamming weight the eigenvalue of ``chi_s`` depends only on ``w = |s|`` and is the
   Krawtchouk transform ``lambda(w) = sum_j k(j) K_j(w; n)``. For the ball kernel it equals the
   square of the ball indicator's transform ``b(w) = sum_{j <= d} K_j(w; n)``, hence
   ``lambda >= 0``: :func:`krawtchouk_matrix`, :func:`radial_spectrum`,
   :func:`ball_kernel_spectrum`, :func:`walsh_hadamard`, and the brute-force matrices
   :func:`hamming_kernel_matrix`, :func:`ball_kernel_matrix`. The exponential kernel
   ``exp(beta rho)``, ``rho = 1 - 2 dv / n``, on the same cube: :func:`log_exponential_kernel_spectrum`.
2. **Zonal kernels on the sphere**: the cap intersection ``Ic(x^T y)`` and ``exp(beta x^T y)``
   as Gram matrices of points (:func:`random_unit_vectors`, :func:`cap_kernel_gram`,
   :func:`exponential_kernel_gram`, :func:`psd_tolerance`).
3. **Binary random features**: ``phi_tau(x) = 1[d(x, x_tau) <= d]`` for ``r`` neurons
   (:func:`binary_random_features`); neuron-view SDM as linear attention with that feature map
   (:func:`sdm_as_linear_attention`); the Monte Carlo test of ``E[phi(xi)^T phi(p)] = I r / 2^n``
   (:func:`shared_feature_counts`, :func:`feature_kernel_mc`); the neurons needed for a given
   weight precision (:func:`neurons_for_precision`).
4. **Softmax as a von Mises-Fisher posterior**: :func:`vmf_log_normalizer`,
   :func:`vmf_log_density`, :func:`vmf_responsibilities`, and the mixture that reproduces softmax
   with unnormalised keys (:func:`attention_as_vmf_mixture`).
5. **Hopfield as a special case (App. B.6)**: :func:`hopfield_field`, :func:`hopfield_update`,
   App. B.6's chain of changes literally (:func:`app_b6_field`), Hopfield as a pattern-view SDM
   over a mirrored memory (:func:`hopfield_field_as_sdm`), the parameter setting that stays inside
   SDM (:func:`keeler_sdm_read`), and side-by-side experiments (:func:`iterate_reads`,
   :func:`compare_retrieval`, :func:`one_step_agreement`, :func:`unanimity_violations`).

Conventions follow :mod:`assocmem.sdm.read`: binary tensors hold 0/1, patterns are rows
(``(m, n)``), the bipolar image of ``x`` is ``2x - 1``. Exact spectra are Python integers.

References
----------
.. [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
   NeurIPS 34. Eq. 1 (SDM read), Eq. 2 (circle intersection), Eq. 4/6 (attention), App. B.3
   (continuous SDM), App. B.6 (Hopfield as a special case), §6 (softmax "with no additional
   computational cost").
.. [S002] Seed 002 (the critical review), "Connections" (the kernel statements, linear attention
   with a binary feature map, the vMF reading) and claims C9, C16.
.. [KVPF20] Katharopoulos, A., et al. (2020). Transformers are RNNs. ICML (normalised linear
   attention ``phi(q)^T S / phi(q)^T z``).
.. [C21] Choromanski, K., et al. (2021). Rethinking attention with Performers. ICLR (positive
   random features for the softmax kernel).
.. [MS77] MacWilliams, F. J., & Sloane, N. J. A. (1977). The Theory of Error-Correcting Codes,
   Ch. 5 §7 (Krawtchouk polynomials, the three-term recurrence).
.. [K88a] Keeler, J. D. (1988). Comparison between Kanerva's SDM and Hopfield-type neural
   networks. Cognitive Science 12(3).
.. [H82] Hopfield, J. J. (1982). Neural networks and physical systems with emergent collective
   computational abilities. PNAS 79(8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Callable

import numpy as np
import pandas as pd
import torch
from scipy import special, stats

from assocmem._checks import as_int as _as_int, lookup
from assocmem.linear.attention import linear_attention
from assocmem.sdm.geometry import cap_fraction, cap_intersection, circle_intersection, circle_intersection_table
from assocmem.sdm._common import _binary, _finish_read, _generator
from assocmem.sdm.read import (
    NeuronSDM,
    bipolar,
    flip_bits,
    pairwise_hamming,
    random_binary_patterns,
    sdm_read,
    sdm_weights,
)

__all__ = [
    # presets
    "KernelPreset",
    "PRESETS",
    "get_preset",
    # 1. the ball kernel on Z_2^n
    "krawtchouk_matrix",
    "radial_spectrum",
    "BallKernelSpectrum",
    "ball_kernel_spectrum",
    "walsh_hadamard",
    "hamming_kernel_matrix",
    "ball_kernel_matrix",
    "log_exponential_kernel_spectrum",
    # 2. zonal kernels on the sphere
    "random_unit_vectors",
    "cap_kernel_gram",
    "exponential_kernel_gram",
    "psd_tolerance",
    # 3. binary random features
    "binary_random_features",
    "sdm_as_linear_attention",
    "shared_feature_counts",
    "feature_kernel_mc",
    "neurons_for_precision",
    # 4. von Mises-Fisher
    "vmf_log_normalizer",
    "vmf_log_density",
    "vmf_responsibilities",
    "attention_as_vmf_mixture",
    # 5. Hopfield
    "sign_keep",
    "hopfield_field",
    "hopfield_update",
    "app_b6_field",
    "hopfield_field_as_sdm",
    "keeler_sdm_read",
    "iterate_reads",
    "compare_retrieval",
    "one_step_agreement",
    "unanimity_violations",
]

_MATRIX_MAX_N = 12  # brute-force 2^n x 2^n matrices: at most 4096 x 4096
_MC_CHUNK = 50  # neuron draws processed together in shared_feature_counts


# ==========================================================================================
# 0. Presets and validation
# ==========================================================================================


@dataclass(frozen=True)
class KernelPreset:
    """Sizes of the experiments of the chapter "SDM as a kernel memory"."""

    spectrum_max_n: int  # Krawtchouk identity checked for every (n, d) with n <= this
    brute_n: int  # brute-force 2^n x 2^n eigendecomposition at this n
    sphere_points: int  # points in the cap / exponential Gram matrices
    mc_draws: int  # independent neuron draws in the E[phi^T phi] Monte Carlo
    mc_r: int  # neurons per draw in that Monte Carlo
    hopfield_queries: int  # queries per perturbation level in the retrieval experiment
    agreement_queries: int  # queries in the one-step agreement scan


#: ``"quick"`` runs in the book and CI (seconds); ``"full"`` for papermill runs.
PRESETS: dict[str, KernelPreset] = {
    "quick": KernelPreset(spectrum_max_n=20, brute_n=10, sphere_points=120, mc_draws=400, mc_r=1000,
                          hopfield_queries=100, agreement_queries=400),
    "full": KernelPreset(spectrum_max_n=64, brute_n=10, sphere_points=400, mc_draws=4000, mc_r=1000,
                         hopfield_queries=1000, agreement_queries=4000),
}


def get_preset(name: str) -> KernelPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)




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


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x.astype(np.uint64)).astype(np.int64)


# ==========================================================================================
# 1. The ball kernel on Z_2^n
# ==========================================================================================


def krawtchouk_matrix(n) -> np.ndarray:
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


def radial_spectrum(values, n) -> list:
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
        If ``values`` does not have ``n + 1`` entries or an entry is not finite.

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
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"values must be finite, got {v!r}")
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


def ball_kernel_spectrum(n, d) -> BallKernelSpectrum:
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


def walsh_hadamard(f) -> np.ndarray:
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
        If the last axis is not a power of two.

    References
    ----------
    Seed 002, "Connections" (the Fourier transform on ``Z_2^n``).
    """
    f = np.array(f, dtype=np.float64)
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


def hamming_kernel_matrix(n, values) -> np.ndarray:
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
        If ``n`` is outside ``[1, 12]`` or ``values`` has the wrong length.
    """
    n = _check_n(n, maximum=_MATRIX_MAX_N)
    vals = np.array([float(v) for v in values], dtype=np.float64)
    if vals.shape != (n + 1,):
        raise ValueError(f"values needs n + 1 = {n + 1} entries, got {vals.shape[0]}")
    idx = np.arange(1 << n, dtype=np.uint64)
    dist = _popcount(idx[:, None] ^ idx[None, :])  # (2^n, 2^n)
    return vals[dist]


def ball_kernel_matrix(n, d) -> np.ndarray:
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


def log_exponential_kernel_spectrum(n, beta) -> np.ndarray:
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
        If ``n < 1`` or ``beta`` is not a finite positive number.

    References
    ----------
    Seed 002, "Connections" (``exp(beta x^T y)`` is positive definite); Bricken & Pehlevan (2021),
    Eq. 6.
    """
    n = _check_n(n)
    b = float(beta)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"beta must be a finite positive number, got {beta!r}")
    t = b / n
    w = np.arange(n + 1, dtype=np.float64)
    log_c = math.log(2.0) + t + math.log1p(math.exp(-2 * t)) - math.log(2.0)  # log(2 cosh t)
    log_s = math.log(2.0) + t + math.log(-math.expm1(-2 * t)) - math.log(2.0)  # log(2 sinh t)
    return (n - w) * log_c + w * log_s


# ==========================================================================================
# 2. Zonal kernels on the sphere
# ==========================================================================================


def random_unit_vectors(m, n, seed=0) -> np.ndarray:
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


def _unit_rows(points, name="points") -> np.ndarray:
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(f"{name} must have shape (M, n) with M >= 1, n >= 2, got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite")
    norms = np.linalg.norm(x, axis=1)
    if np.any(np.abs(norms - 1.0) > 1e-12):
        raise ValueError(f"{name} must be unit vectors (|norm - 1| <= 1e-12)")
    return x


def cap_kernel_gram(points, d) -> np.ndarray:
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


def exponential_kernel_gram(points, beta) -> np.ndarray:
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
        If the points are not unit rows or ``beta`` is not finite.

    References
    ----------
    Seed 002, "Connections"; Bricken & Pehlevan (2021), Eq. 6.
    """
    x = _unit_rows(points)
    b = float(beta)
    if not math.isfinite(b):
        raise ValueError(f"beta must be finite, got {beta!r}")
    return np.exp(b * np.clip(x @ x.T, -1.0, 1.0))


def psd_tolerance(gram, entry_rel_error: float = float(np.finfo(np.float64).eps)) -> float:
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

    References
    ----------
    Higham (2002), §2 (backward stability); Weyl's inequality for symmetric perturbations.
    """
    G = np.asarray(gram, dtype=np.float64)
    M = G.shape[0]
    u = float(np.finfo(np.float64).eps) / 2
    return float(M * M * (float(entry_rel_error) + u) * np.abs(G).max())


# ==========================================================================================
# 3. Binary random features and linear attention
# ==========================================================================================


def binary_random_features(x, neuron_addresses, d) -> torch.Tensor:
    """The SDM feature map ``phi_tau(x) = 1[d(x, x_tau) <= d]`` for ``r`` neurons.

    Parameters
    ----------
    x : torch.Tensor or array_like, shape ``(..., n)``
        Binary addresses.
    neuron_addresses : torch.Tensor or array_like, shape ``(r, n)``
        Binary neuron addresses (random for SDM; all ``2^n`` for the exhaustive memory).
    d : int
        Radius, ``0 <= d <= n``.

    Returns
    -------
    torch.Tensor, shape ``(..., r)``, float64, entries 0.0 or 1.0, on ``x``'s device

    Raises
    ------
    ValueError
        On non-binary entries, mismatched ``n`` or ``d`` outside ``[0, n]``.

    References
    ----------
    Seed 002, "Connections" (binary random features); Bricken & Pehlevan (2021), §1; Kanerva
    (1988), Ch. 7.
    """
    x = _binary(x, "x")
    n = x.shape[-1]
    d = _check_d(d, n)
    return (pairwise_hamming(x, neuron_addresses) <= d).to(torch.float64)  # (..., r)


def sdm_as_linear_attention(query, addresses, pointers, neuron_addresses, d, d_read=None,
                            threshold: bool = False, empty: str = "nan") -> torch.Tensor:
    """Neuron-view SDM computed as normalised linear attention with the binary feature map.

    Keys ``phi_w(p_a^mu)``, values ``p_p^mu``, query ``phi_r(xi)``:

        xi_new = g( phi_r(xi)^T S / phi_r(xi)^T z ),  S = sum_mu phi_w(p_a^mu) p_p^mu^T,
                                                     z = sum_mu phi_w(p_a^mu),

    the normalised linear attention of Katharopoulos et al. (2020). ``S`` is the neurons' storage
    (``NeuronSDM.storage``) and ``z`` their counters. The numerator and the normaliser are both
    computed with :func:`assocmem.linear.attention.linear_attention` (non-causal, parallel form), the
    normaliser as linear attention with all-ones values.

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary read addresses.
    addresses : torch.Tensor or array_like, shape ``(m, n)``
        Binary pattern addresses (the keys before the feature map), ``m >= 1``.
    pointers : torch.Tensor or array_like, shape ``(m, n_p)``
        Pointers (the values).
    neuron_addresses : torch.Tensor or array_like, shape ``(r, n)``
        Binary neuron addresses.
    d : int
        Write radius (and read radius unless ``d_read`` is given), ``0 <= d <= n``.
    d_read : int, optional
        A separate read radius (App. B.6 sets the write radius to 0). Default ``d``.
    threshold : bool, default False
        Apply the majority threshold ``g``.
    empty : {"nan", "query", "raise"}, default "nan"
        For a query sharing no neuron with any pattern, as in :func:`assocmem.sdm.sdm_read`.

    Returns
    -------
    torch.Tensor, shape ``(..., n_p)``, float64
        With integer pointers, equal bit for bit to :meth:`assocmem.sdm.NeuronSDM.read` on the
        same neurons (every sum is of integers below ``2^53``).

    Raises
    ------
    ValueError
        On non-binary addresses, mismatched shapes, radii outside ``[0, n]``, an unknown
        ``empty``, or an empty row with ``empty="raise"``.

    References
    ----------
    Seed 002, "Neuron-view SDM is linear attention with a fixed binary feature map";
    Katharopoulos et al. (2020), Eq. 6; Bricken & Pehlevan (2021), Eq. 1.
    """
    query = _binary(query, "query")
    addresses = _binary(addresses, "addresses").to(query.device)
    neurons = _binary(neuron_addresses, "neuron_addresses").to(query.device)
    pointers = torch.as_tensor(pointers).to(device=query.device, dtype=torch.float64)
    n = query.shape[-1]
    if addresses.ndim != 2 or addresses.shape[1] != n or addresses.shape[0] < 1:
        raise ValueError(f"addresses must have shape (m, n) = (m, {n}) with m >= 1, got {tuple(addresses.shape)}")
    if neurons.ndim != 2 or neurons.shape[1] != n or neurons.shape[0] < 1:
        raise ValueError(f"neuron_addresses must have shape (r, n) = (r, {n}), got {tuple(neurons.shape)}")
    if pointers.ndim != 2 or pointers.shape[0] != addresses.shape[0]:
        raise ValueError(f"pointers must have shape (m, n_p) with m = {addresses.shape[0]}, got "
                         f"{tuple(pointers.shape)}")
    d = _check_d(d, n)
    d_read = d if d_read is None else _check_d(d_read, n)
    lead = query.shape[:-1]
    q = binary_random_features(query.reshape(-1, n), neurons, d_read)  # (Q, r)
    k = binary_random_features(addresses, neurons, d)  # (m, r)
    num = linear_attention(q, k, pointers, causal=False)  # (Q, n_p) = phi(xi)^T S
    den = linear_attention(q, k, torch.ones_like(pointers[:, :1]), causal=False)  # (Q, 1) = phi(xi)^T z
    num, den = num.reshape(*lead, -1), den.reshape(*lead, 1)
    return _finish_read(num, den, query, threshold, empty)


def shared_feature_counts(dvs, d, n, r, draws, seed=0) -> np.ndarray:
    """``phi(xi)^T phi(p)`` for fresh random neurons, a fresh query and patterns at given distances.

    Each draw samples ``r`` neuron addresses uniformly from ``{0, 1}^n``, a uniform query ``xi``
    and, for each ``dv``, a pattern at distance exactly ``dv`` from it (the first ``dv`` positions
    of one random order flipped, so the patterns of one draw are nested), and counts the neurons
    within ``d`` of both, ``phi(xi)^T phi(p)`` with ``phi`` the feature map of
    :func:`binary_random_features` (evaluated in batch through the bipolar identity
    ``s(x)^T s(x_tau) = n - 2 d(x, x_tau)``). Given ``xi`` and ``p``, each neuron is in both balls
    with probability ``I(dv, d, n) / 2^n``, so every column is i.i.d. ``Binomial(r, I / 2^n)``
    across draws, with mean ``I r / 2^n``; columns of one draw share neurons and are correlated.

    Parameters
    ----------
    dvs : iterable of int
        Distances in ``[0, n]``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int
        Neurons per draw, ``>= 1``.
    draws : int
        Independent neuron draws, ``>= 1``.
    seed : int, default 0
        Seed of the CPU ``torch.Generator``.

    Returns
    -------
    numpy.ndarray, shape ``(draws, len(dvs))``, int64

    Raises
    ------
    ValueError
        If a size is out of range.

    References
    ----------
    Seed 002, "Connections" (``E[phi(xi)^T phi(p)] = I r / 2^n``); Bricken & Pehlevan (2021),
    §1 and Fig. 11.
    """
    n = _check_n(n)
    d = _check_d(d, n)
    dv_list = [_check_d(v, n) for v in dvs]
    r, draws = _as_int(r, "r"), _as_int(draws, "draws")
    if not dv_list or r < 1 or draws < 1:
        raise ValueError(f"need at least one distance, r >= 1 and draws >= 1; got {len(dv_list)}, {r}, {draws}")
    gen = _generator(seed)
    dv_t = torch.tensor(dv_list, dtype=torch.int64)  # (D,)
    out = []
    for start in range(0, draws, _MC_CHUNK):
        b = min(_MC_CHUNK, draws - start)
        neurons = torch.randint(0, 2, (b, r, n), generator=gen, dtype=torch.uint8)  # (b, r, n)
        xi = torch.randint(0, 2, (b, 1, n), generator=gen, dtype=torch.uint8)  # (b, 1, n)
        # a pattern at distance dv flips the first dv positions of a random order (nested in dv)
        rank = torch.rand(b, n, generator=gen, dtype=torch.float64).argsort(-1).argsort(-1)  # (b, n)
        flip = (rank[:, None, :] < dv_t[None, :, None]).to(torch.uint8)  # (b, D, n)
        ps = xi ^ flip  # (b, D, n)
        s_neur = 2.0 * neurons.to(torch.float64) - 1.0  # (b, r, n)
        # phi_tau(x) = 1[d(x, x_tau) <= d]  <=>  s(x)^T s(x_tau) >= n - 2d  (exact in float64)
        f_xi = ((2.0 * xi.to(torch.float64) - 1.0) @ s_neur.transpose(1, 2)) >= n - 2 * d  # (b, 1, r)
        f_p = ((2.0 * ps.to(torch.float64) - 1.0) @ s_neur.transpose(1, 2)) >= n - 2 * d  # (b, D, r)
        out.append((f_p & f_xi).sum(-1))  # (b, D)
    return torch.cat(out).numpy().astype(np.int64)


def feature_kernel_mc(dvs, d, n, r, draws, seed=0) -> pd.DataFrame:
    """Monte Carlo mean of ``phi(xi)^T phi(p)`` against the exact ``I r / 2^n``, per distance.

    Parameters
    ----------
    dvs, d, n, r, draws, seed
        As in :func:`shared_feature_counts`.

    Returns
    -------
    pandas.DataFrame
        One row per ``dv`` with columns ``dv``, ``mean`` (sample mean), ``se`` (standard error,
        sample standard deviation over ``sqrt(draws)``), ``exact`` (``I r / 2^n``, exact
        rational rounded once), ``binomial_se`` (``sqrt(r q (1 - q) / draws)``, ``q = I / 2^n``),
        ``z`` (``(mean - exact) / binomial_se``; 0 where ``q = 0``), ``all_integer`` and
        ``distinct`` (number of distinct count values seen).

    References
    ----------
    Seed 002, "Connections"; Bricken & Pehlevan (2021), §1.
    """
    counts = shared_feature_counts(dvs, d, n, r, draws, seed)
    dv_list = [int(v) for v in dvs]
    rows = []
    for j, dv in enumerate(dv_list):
        c = counts[:, j].astype(np.float64)
        q = Fraction(circle_intersection(dv, d, n), 1 << n)
        exact = float(q * r)
        bse = math.sqrt(float(r * q * (1 - q)) / counts.shape[0])
        rows.append(dict(dv=dv, mean=c.mean(), se=c.std(ddof=1) / math.sqrt(len(c)), exact=exact,
                         binomial_se=bse, z=(c.mean() - exact) / bse if bse > 0 else 0.0,
                         all_integer=bool(np.all(counts[:, j] == np.round(counts[:, j]))),
                         distinct=int(np.unique(counts[:, j]).size)))
    return pd.DataFrame(rows)


def neurons_for_precision(dv, d, n, rel_sd) -> float:
    """Neurons ``r`` for which the shared-neuron count at distance ``dv`` has relative SD ``rel_sd``.

    The count is ``Binomial(r, q)``, ``q = I(dv, d, n) / 2^n``, with relative standard deviation
    ``sqrt((1 - q) / (r q))``; solving for ``r`` gives ``(1 - q) / (q rel_sd^2)``.

    Parameters
    ----------
    dv, d, n : int
        Distance, radius, dimension (``I(dv, d, n) > 0`` needed, i.e. ``dv <= 2d``).
    rel_sd : float
        Target relative standard deviation, ``> 0``.

    Returns
    -------
    float
        ``r`` (not rounded).

    Raises
    ------
    ValueError
        If ``I(dv, d, n) = 0`` or ``rel_sd <= 0``.

    References
    ----------
    Seed 002, claim C16 and "Bearing on the record" (biologically sized ``r``).
    """
    I = circle_intersection(dv, d, n)
    if I == 0:
        raise ValueError(f"I({dv}, {d}, {n}) = 0: no number of neurons gives this pattern a weight")
    s = float(rel_sd)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"rel_sd must be a finite positive number, got {rel_sd!r}")
    q = Fraction(I, 1 << _check_n(n))
    return float((1 - q) / q) / (s * s)


# ==========================================================================================
# 4. Softmax as a von Mises-Fisher posterior
# ==========================================================================================


def vmf_log_normalizer(n, kappa) -> np.ndarray:
    """``log C_n(kappa)``, the normaliser of the von Mises-Fisher density on ``S^{n-1}``.

    ``f(x; mu, kappa) = C_n(kappa) exp(kappa mu^T x)`` with
    ``C_n(kappa) = kappa^{n/2 - 1} / ((2 pi)^{n/2} I_{n/2 - 1}(kappa))`` (``I_v`` the modified
    Bessel function of the first kind), evaluated with the scaled Bessel function
    ``ive = I_v e^{-kappa}`` so that large ``kappa`` does not overflow. At ``kappa = 0`` it is the
    uniform density ``Gamma(n/2) / (2 pi^{n/2})``.

    Parameters
    ----------
    n : int
        Ambient dimension, ``n >= 2``.
    kappa : float or array_like
        Concentrations, ``>= 0``.

    Returns
    -------
    numpy.ndarray (0-d for a scalar), float64

    Raises
    ------
    ValueError
        If ``n < 2`` or a ``kappa`` is negative or not finite.

    References
    ----------
    Mardia & Jupp (2000), Directional Statistics, §9.3; seed 002, "Connections".
    """
    n = _as_int(n, "n")
    if n < 2:
        raise ValueError(f"the vMF density needs n >= 2, got {n}")
    k = np.asarray(kappa, dtype=np.float64)
    if not np.all(np.isfinite(k)) or np.any(k < 0):
        raise ValueError("kappa must be finite and >= 0")
    v = n / 2 - 1
    safe = np.where(k > 0, k, 1.0)
    out = v * np.log(safe) - (n / 2) * math.log(2 * math.pi) - (np.log(special.ive(v, safe)) + safe)
    uniform = special.gammaln(n / 2) - math.log(2.0) - (n / 2) * math.log(math.pi)
    return np.where(k > 0, out, uniform)


def vmf_log_density(x, mu, kappa) -> np.ndarray:
    """Log von Mises-Fisher density ``log C_n(kappa) + kappa mu^T x`` on ``S^{n-1}``.

    Parameters
    ----------
    x : array_like, shape ``(..., n)``
        Unit vectors.
    mu : array_like, shape ``(n,)``
        Unit mean direction.
    kappa : float
        Concentration, ``>= 0``.

    Returns
    -------
    numpy.ndarray, shape ``(...)``, float64

    Raises
    ------
    ValueError
        If shapes disagree, ``n < 2`` or ``kappa`` is invalid.

    References
    ----------
    Mardia & Jupp (2000), §9.3.
    """
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    if mu.ndim != 1 or x.shape[-1] != mu.shape[0]:
        raise ValueError(f"x (..., n) and mu (n,) must share n, got {x.shape} and {mu.shape}")
    return vmf_log_normalizer(mu.shape[0], kappa) + float(kappa) * (x @ mu)


def vmf_responsibilities(query, means, kappa, log_weights=None, method: str = "explicit") -> np.ndarray:
    """Posterior responsibilities ``P(component mu | x)`` of a von Mises-Fisher mixture.

    ``r_mu(x) = pi_mu f(x; mu_mu, kappa_mu) / sum_nu pi_nu f(x; mu_nu, kappa_nu)``. With equal
    weights and a common ``kappa`` the normalisers cancel and ``r(x) = softmax(kappa M x)``: softmax
    attention with unit keys ``M`` and inverse temperature ``beta = kappa`` (seed 002,
    "Connections").

    Parameters
    ----------
    query : array_like, shape ``(..., n)``
        Unit query vectors.
    means : array_like, shape ``(m, n)``
        Unit mean directions (the keys), ``m >= 1``.
    kappa : float or array_like of shape ``(m,)``
        Concentration(s), ``>= 0``.
    log_weights : array_like of shape ``(m,)``, optional
        Log mixture weights (need not be normalised). Default: equal weights.
    method : {"explicit", "scipy"}, default "explicit"
        ``"explicit"``: :func:`vmf_log_density` with its normaliser. ``"scipy"``:
        ``scipy.stats.vonmises_fisher(mu, kappa).logpdf`` (scipy >= 1.11), one component at a time.

    Returns
    -------
    numpy.ndarray, shape ``(..., m)``, float64
        Nonnegative, summing to one over ``m``.

    Raises
    ------
    ValueError
        On shape mismatch, non-unit inputs, invalid ``kappa`` or an unknown ``method``.

    References
    ----------
    Seed 002, "Connections" (softmax as the posterior of an equal-weight vMF mixture);
    Bricken & Pehlevan (2021), Eq. 6.
    """
    means = _unit_rows(means, "means")
    m, n = means.shape
    q = np.asarray(query, dtype=np.float64)
    if q.shape[-1] != n:
        raise ValueError(f"query must have last axis n = {n}, got shape {q.shape}")
    if np.any(np.abs(np.linalg.norm(q, axis=-1) - 1.0) > 1e-12):
        raise ValueError("query must be unit vectors (|norm - 1| <= 1e-12)")
    kap = np.broadcast_to(np.asarray(kappa, dtype=np.float64), (m,))
    lw = np.zeros(m) if log_weights is None else np.asarray(log_weights, dtype=np.float64)
    if lw.shape != (m,):
        raise ValueError(f"log_weights must have shape ({m},), got {lw.shape}")
    if method == "explicit":
        logf = np.stack([vmf_log_density(q, means[i], kap[i]) for i in range(m)], axis=-1)
    elif method == "scipy":
        if not hasattr(stats, "vonmises_fisher"):
            raise ValueError("method='scipy' needs scipy >= 1.11 (scipy.stats.vonmises_fisher)")
        flat = q.reshape(-1, n)
        logf = np.stack([stats.vonmises_fisher(means[i], kap[i]).logpdf(flat) for i in range(m)], axis=-1)
        logf = logf.reshape(*q.shape[:-1], m)
    else:
        raise ValueError(f"method must be 'explicit' or 'scipy', got {method!r}")
    a = logf + lw
    return np.exp(a - special.logsumexp(a, axis=-1, keepdims=True))


def attention_as_vmf_mixture(keys, beta):
    """The vMF mixture whose posterior is ``softmax(beta K^T q)`` for unit ``q`` and any keys.

    ``exp(beta k^T q) = exp(kappa mu^T q)`` with ``mu = k / |k|`` and ``kappa = beta |k|``, and
    ``exp(kappa mu^T q) = f(q; mu, kappa) / C_n(kappa)``. So softmax attention over unnormalised
    keys is the posterior of a vMF mixture with concentrations ``beta |k_mu|`` *and* mixture
    weights ``pi_mu`` proportional to ``1 / C_n(beta |k_mu|)``: the weights are equal only when
    all key norms are equal, as with Query-Key Normalisation.

    Parameters
    ----------
    keys : array_like, shape ``(m, n)``
        Nonzero keys.
    beta : float
        Inverse temperature, ``> 0``.

    Returns
    -------
    directions : numpy.ndarray, shape ``(m, n)``
        ``k_mu / |k_mu|``.
    kappa : numpy.ndarray, shape ``(m,)``
        ``beta |k_mu|``.
    log_weights : numpy.ndarray, shape ``(m,)``
        ``-log C_n(kappa_mu)`` (unnormalised).

    Raises
    ------
    ValueError
        If a key is zero or ``beta`` is not positive.

    References
    ----------
    Seed 002, "Connections"; Henry et al. (2020) (QK-norm); Bricken & Pehlevan (2021), §3.
    """
    k = np.asarray(keys, dtype=np.float64)
    if k.ndim != 2 or k.shape[1] < 2:
        raise ValueError(f"keys must have shape (m, n) with n >= 2, got {k.shape}")
    b = float(beta)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"beta must be a finite positive number, got {beta!r}")
    norms = np.linalg.norm(k, axis=1)
    if np.any(norms == 0):
        raise ValueError("keys must be nonzero")
    kappa = b * norms
    return k / norms[:, None], kappa, -vmf_log_normalizer(k.shape[1], kappa)


# ==========================================================================================
# 5. Hopfield as a special case (App. B.6)
# ==========================================================================================


def sign_keep(field, current) -> torch.Tensor:
    """``sign(field)``, keeping the current bipolar value where the field is exactly 0.

    Parameters
    ----------
    field, current : torch.Tensor, same shape
        The local field and the current ``+-1`` state.

    Returns
    -------
    torch.Tensor, float64, entries ``+-1``
    """
    field = torch.as_tensor(field, dtype=torch.float64)
    current = torch.as_tensor(current, dtype=torch.float64).to(field.device)
    return torch.where(field > 0, 1.0, torch.where(field < 0, -1.0, current)).to(torch.float64)


def _bipolar_rows(x, name: str) -> torch.Tensor:
    x = torch.as_tensor(x).to(torch.float64)
    if x.ndim < 1 or x.numel() == 0 or not bool(((x == 1) | (x == -1)).all()):
        raise ValueError(f"{name} must be a nonempty +-1 (bipolar) tensor")
    return x


def hopfield_field(patterns, xi) -> torch.Tensor:
    """The Hopfield local field ``P P^T xi`` (the paper's ``P_a P_a^T xi``), bipolar patterns as rows.

    This is the read of Part I's outer-product memory ``S = sum_mu s_mu s_mu^T`` (keys = values =
    the patterns) at the query ``xi``.

    Parameters
    ----------
    patterns : torch.Tensor or array_like, shape ``(m, n)``
        Bipolar (``+-1``) patterns.
    xi : torch.Tensor or array_like, shape ``(..., n)``
        Bipolar states.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64 (exact integers)

    Raises
    ------
    ValueError
        If an entry is not ``+-1`` or the last axes differ.

    References
    ----------
    Hopfield (1982); Bricken & Pehlevan (2021), App. B.6.
    """
    P = _bipolar_rows(patterns, "patterns")
    x = _bipolar_rows(xi, "xi").to(P.device)
    if P.ndim != 2 or x.shape[-1] != P.shape[1]:
        raise ValueError(f"patterns (m, n) and xi (..., n) must share n, got {tuple(P.shape)}, {tuple(x.shape)}")
    return (x @ P.T) @ P  # (..., m) @ (m, n) -> (..., n)


def hopfield_update(patterns, xi, steps: int = 1, zero_diagonal: bool = False) -> torch.Tensor:
    """Synchronous Hopfield updates ``xi <- sign(P P^T xi)``, bipolar.

    Parameters
    ----------
    patterns : torch.Tensor or array_like, shape ``(m, n)``
        Bipolar patterns.
    xi : torch.Tensor or array_like, shape ``(..., n)``
        Bipolar initial states.
    steps : int, default 1
        Number of synchronous updates (stops early once no state changes).
    zero_diagonal : bool, default False
        Remove the self-coupling ``m xi`` from the field (Hopfield 1982 sets ``T_ii = 0``); the
        paper's ``g(P_a P_a^T xi)`` keeps it.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64, entries ``+-1``
        Where the field is exactly 0 the bit keeps its value.

    Raises
    ------
    ValueError
        If an entry is not ``+-1``, shapes differ or ``steps < 0``.

    References
    ----------
    Hopfield (1982); Bricken & Pehlevan (2021), App. B.6 (``xi_new = g(P_a P_a^T xi)``).
    """
    steps = _as_int(steps, "steps")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    P = _bipolar_rows(patterns, "patterns")
    x = _bipolar_rows(xi, "xi").to(P.device)
    m = P.shape[0]
    for _ in range(steps):
        field = hopfield_field(P, x)
        if zero_diagonal:
            field = field - m * x
        new = sign_keep(field, x)
        if torch.equal(new, x):
            break
        x = new
    return x


def app_b6_field(patterns, query) -> torch.Tensor:
    """App. B.6's chain of changes applied to a neuron-view SDM, literally.

    1. Neurons = patterns and write radius 0: an SDM with its neurons at the pattern addresses
       (:meth:`assocmem.sdm.NeuronSDM.from_addresses` with ``d = 0``), so writing bipolar pointers
       stores pattern ``mu`` in neuron ``mu`` alone.
    2. No read threshold: every neuron is read, not only those within a radius of the query.
    3. The raw bipolar dot product ``s(x_tau)^T s(xi) = n - 2 d(x_tau, xi)`` weights neuron ``tau``
       in place of its activation; it is negative beyond ``n/2``, so the normaliser (a sum of
       signed weights) is dropped too and ``g`` becomes the sign.

    The field returned is ``sum_tau (s(x_tau)^T s(xi)) storage_tau = P P^T xi``.

    Parameters
    ----------
    patterns : torch.Tensor or array_like, shape ``(m, n)``
        *Binary* (0/1) distinct patterns.
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary queries.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64 (exact integers)

    Raises
    ------
    ValueError
        On non-binary input or mismatched ``n``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6; Keeler (1988); seed 002, claim C9.
    """
    P = _binary(patterns, "patterns")
    q = _binary(query, "query").to(P.device)
    mem = NeuronSDM.from_addresses(P, d=0, device=P.device).write(P, bipolar(P, normalize=False))
    weights = bipolar(q, normalize=False) @ bipolar(mem.neuron_addresses, normalize=False).T  # (..., r)
    return weights @ mem.storage  # (..., n)


def hopfield_field_as_sdm(patterns, query) -> torch.Tensor:
    """``P P^T xi`` written as a pattern-view SDM read with nonnegative weights.

    Store every pattern *and its complement*, weight a stored pattern at Hamming distance ``dv``
    from the query by ``(n - 2 dv)_+`` instead of the circle intersection, and sum the bipolar
    pointers: the complement of pattern ``mu`` lies at distance ``n - dv_mu`` and contributes
    ``-s_mu (2 dv_mu - n)_+``, so pattern and complement together give ``s_mu (n - 2 dv_mu)``.
    The Hopfield field is therefore SDM's Eq. 1 numerator with a different kernel (a hinge in
    the inner product, not a ball intersection) over a mirrored memory.

    Parameters
    ----------
    patterns : torch.Tensor or array_like, shape ``(m, n)``
        Binary patterns.
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary queries.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64 (exact integers)

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 and App. B.6.
    """
    P = _binary(patterns, "patterns").to(torch.uint8)
    q = _binary(query, "query").to(P.device)
    n = P.shape[1]
    mirrored = torch.cat([P, 1 - P])  # (2m, n)
    table = torch.clamp(n - 2.0 * torch.arange(n + 1, dtype=torch.float64), min=0.0)  # (n + 1,)
    w = sdm_weights(q, mirrored, 0, weights=table, normalize=False)  # (..., 2m)
    return w @ bipolar(mirrored, normalize=False)


def keeler_sdm_read(patterns, query, d_read, threshold: bool = True, empty: str = "nan") -> torch.Tensor:
    """The SDM that App. B.6's *parameter* changes reach: neurons at the patterns, write radius 0.

    Only the first step of App. B.6 is a parameter setting. With neurons at the pattern addresses
    and write radius 0, neuron ``mu`` holds pattern ``mu``, and reading with radius ``d_read``
    returns the majority of the patterns within ``d_read`` of the query (weights
    ``1[d(xi, p_mu) <= d_read]``). Computed as :func:`sdm_as_linear_attention` with
    ``neuron_addresses = patterns``, ``d = 0``.

    Parameters
    ----------
    patterns : torch.Tensor or array_like, shape ``(m, n)``
        Binary, distinct patterns (autoassociative: pointers = addresses).
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary queries.
    d_read : int
        Read radius, ``0 <= d_read <= n``; ``d_read = n`` reads every neuron ("no read
        threshold"), and the read no longer depends on the query.
    threshold : bool, default True
        Apply the majority ``g``.
    empty : {"nan", "query", "raise"}, default "nan"
        For a query with no pattern within ``d_read``.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6; Keeler (1988).
    """
    P = _binary(patterns, "patterns")
    return sdm_as_linear_attention(query, P, P.to(torch.float64), P, 0, d_read=d_read,
                                   threshold=threshold, empty=empty)


def iterate_reads(read: Callable[[torch.Tensor], torch.Tensor], x0, max_steps: int = 100):
    """Iterate a read until no state changes (or ``max_steps``).

    Parameters
    ----------
    read : callable
        Maps states ``(Q, n)`` to new states of the same shape.
    x0 : torch.Tensor, shape ``(Q, n)``
        Initial states.
    max_steps : int, default 100
        At most this many reads (the authors' convergence experiments use 100).

    Returns
    -------
    x : torch.Tensor, shape ``(Q, n)``
        Final states.
    steps : int
        Reads performed.
    """
    x = x0
    steps = 0
    for _ in range(_as_int(max_steps, "max_steps")):
        new = read(x)
        steps += 1
        if torch.equal(new, x):
            break
        x = new
    return x, steps


def compare_retrieval(n, m, flips, d, d_read, queries, max_steps: int = 100, seed=0) -> pd.DataFrame:
    """Hopfield and SDM side by side: same patterns, same perturbed queries, iterated to a fixed point.

    For each number of flipped bits ``k``, ``queries`` stored patterns (cycled) are perturbed by
    exactly ``k`` bits and each memory is iterated from them:

    * ``"Hopfield"``: :func:`hopfield_update` (synchronous, with self-coupling, as App. B.6);
    * ``"SDM, neuron at every address"``: Eq. 1 with the circle intersection at radius ``d``
      and the majority threshold; a read with no pattern within ``2d`` leaves the state as it
      is (the authors' convention);
    * ``"SDM, d_write = 0, neurons = patterns"``: :func:`keeler_sdm_read` at ``d_read``, same
      convention.

    Parameters
    ----------
    n : int
        Bits per pattern.
    m : int
        Number of random stored patterns.
    flips : iterable of int
        Perturbation levels (bits flipped).
    d : int
        Radius of the exhaustive SDM.
    d_read : int
        Read radius of the write-radius-0 SDM.
    queries : int
        Queries per level.
    max_steps : int, default 100
        Iteration cap.
    seed : int, default 0
        Seeds the patterns and the perturbations.

    Returns
    -------
    pandas.DataFrame
        One row per (memory, flips): ``memory``, ``m``, ``flips``, ``overlap`` (mean cosine of the
        bipolar final state with the target), ``overlap_se``, ``success`` (fraction ending exactly
        at the target), ``success_se``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6 and App. B.7 (convergence experiments).
    """
    n, m, queries = _as_int(n, "n"), _as_int(m, "m"), _as_int(queries, "queries")
    P = random_binary_patterns(m, n, seed=seed, device="cpu")  # (m, n)
    S = bipolar(P, normalize=False)
    idx = torch.arange(queries) % m
    targets = P[idx]  # (Q, n)
    reads = {
        "Hopfield": None,
        "SDM, neuron at every address": lambda x: sdm_read(x, P, P, d, threshold=True, empty="query"),
        "SDM, d_write = 0, neurons = patterns": lambda x: keeler_sdm_read(P, x, d_read, empty="query"),
    }
    rows = []
    for k in flips:
        k = _as_int(k, "flips")
        start = flip_bits(targets, k, seed=_as_int(seed, "seed") * 1000 + k + 1)  # (Q, n)
        for name, fn in reads.items():
            if fn is None:
                final = hopfield_update(S, bipolar(start, normalize=False), steps=max_steps)
            else:
                final, _ = iterate_reads(lambda x: fn(x).to(torch.uint8), start, max_steps)
                final = bipolar(final, normalize=False)
            ov = (final * S[idx]).sum(-1) / n  # (Q,)
            ok = (ov == 1.0).to(torch.float64)
            rows.append(dict(memory=name, m=m, flips=k, overlap=float(ov.mean()),
                             overlap_se=float(ov.std() / math.sqrt(queries)) if queries > 1 else 0.0,
                             success=float(ok.mean()),
                             success_se=float(ok.std() / math.sqrt(queries)) if queries > 1 else 0.0))
    return pd.DataFrame(rows)


def one_step_agreement(patterns, queries) -> pd.DataFrame:
    """How often one SDM read equals one Hopfield update, for every radius of two SDM families.

    Families: the same-radius SDM with a neuron at every address (Eq. 1, ``d = 0..n``) and the
    write-radius-0 SDM with neurons at the patterns (:func:`keeler_sdm_read`, ``d_read = 0..n``).
    A read with no pattern in range is undefined (NaN) and counts as a disagreement.

    Parameters
    ----------
    patterns : torch.Tensor, shape ``(m, n)``
        Binary patterns.
    queries : torch.Tensor of shape ``(Q, n)``, or dict of name -> tensor
        Binary queries; a dict evaluates several query sets in one pass (one read per radius for
        all of them) and reports each set separately.

    Returns
    -------
    pandas.DataFrame
        Columns ``family``, ``radius``, ``queries`` (the set's name; ``"all"`` for a tensor),
        ``agreement`` (fraction of the set's queries whose thresholded output equals the Hopfield
        update bit for bit) and ``defined`` (fraction of defined reads).

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6; seed 002, claim C9.
    """
    P = _binary(patterns, "patterns")
    sets = queries if isinstance(queries, dict) else {"all": queries}
    if not sets:
        raise ValueError("queries is empty")
    names, blocks = list(sets), [_binary(q, f"queries[{k!r}]").to(P.device) for k, q in sets.items()]
    sizes = [b.shape[0] for b in blocks]
    Q = torch.cat(blocks)  # (sum Q, n)
    n = P.shape[1]
    hop = hopfield_update(bipolar(P, normalize=False), bipolar(Q, normalize=False), steps=1)
    hop01 = (hop + 1) / 2  # (Q, n) in {0, 1}
    rows = []
    for family, fn in (("SDM, neuron at every address", lambda r: sdm_read(Q, P, P, r, threshold=True)),
                       ("SDM, d_write = 0, neurons = patterns", lambda r: keeler_sdm_read(P, Q, r))):
        for radius in range(n + 1):
            out = fn(radius)  # (Q, n), NaN rows where undefined
            defined = ~torch.isnan(out).any(-1)
            same = (out == hop01).all(-1) & defined
            for name, d_part, s_part in zip(names, defined.split(sizes), same.split(sizes)):
                rows.append(dict(family=family, radius=radius, queries=name,
                                 agreement=float(s_part.to(torch.float64).mean()),
                                 defined=float(d_part.to(torch.float64).mean())))
    return pd.DataFrame(rows)


def unanimity_violations(outputs, patterns) -> torch.Tensor:
    """Bits where every stored pattern agrees but the output does not.

    Any SDM read (Eq. 1 with nonnegative weights, any neurons, any radii, thresholded at 1/2)
    is a weighted average of the stored pointers, so where all pointers share a bit the defined
    read has it too: zero violations for every parameter setting. Hopfield's field can point the
    other way (its mirror states ``-s_mu`` are fixed points).

    Parameters
    ----------
    outputs : torch.Tensor, shape ``(Q, n)``
        Binary outputs (rows with NaN are ignored).
    patterns : torch.Tensor, shape ``(m, n)``
        Binary stored patterns.

    Returns
    -------
    torch.Tensor, shape ``(Q,)``, int64
        Violations per output row.

    References
    ----------
    Seed 002, claim C9 (a change of rule, not a parameter setting).
    """
    P = _binary(patterns, "patterns").to(torch.float64)
    out = torch.as_tensor(outputs, dtype=torch.float64).to(P.device)
    all_one = (P == 1).all(0)  # (n,)
    all_zero = (P == 0).all(0)
    bad = (all_one & (out == 0)) | (all_zero & (out == 1))  # NaN compares False
    return bad.sum(-1)
