"""SDM read rules: the neuron view, the pattern view (Eq. 1) and attention in SDM notation (Eq. 4).

Kanerva's sparse distributed memory stores ``m`` patterns, each a pair of an *address*
``p_a in {0, 1}^n`` and a *pointer* ``p_p`` (the content; ``p_p = p_a`` for an autoassociative
memory), in ``r`` *neurons* (hard locations) with fixed addresses ``x_tau in {0, 1}^n``. Writing
adds the pointer to the storage vector of every neuron within Hamming radius ``d`` of the pattern
address; reading from a query ``xi`` sums the storage vectors of the neurons within ``d`` of
``xi``, divides by the number of patterns those neurons hold, and (for binary pointers) applies
the majority threshold ``g(e) = 1[e > 1/2]``. Exchanging the two sums gives the pattern view of
Bricken & Pehlevan (2021), Eq. 1:

    xi_new = g( sum_mu w_mu p_p^mu / sum_mu w_mu ),
    w_mu = #{tau : d(x_tau, p_a^mu) <= d and d(x_tau, xi) <= d},

the number of neurons in both balls. With a neuron at every address (``r = 2^n``) ``w_mu`` is the
circle intersection ``I(d(p_a^mu, xi), d, n)`` exactly; with ``r`` uniform random neurons it is
binomial with mean ``I r / 2^n``. This module holds

1. Hamming distances and the binary-to-sphere map: :func:`hamming_distance`,
   :func:`pairwise_hamming`, :func:`bipolar` (the exact form of Eq. 5,
   ``d(a, b) = (n/2)(1 - <a^, b^>)``), :func:`sphere_hamming` (the Hamming distance Eq. 5 assigns
   to continuous vectors), :func:`sign_binarize` (continuous to binary, App. B.7) and what sign
   binarisation does to distances (:func:`expected_sign_hamming`,
   :func:`sign_hamming_correlation`).
2. Random patterns and perturbations: :func:`random_binary_patterns`, :func:`flip_bits`,
   :func:`rotate_to_cosine`.
3. The pattern view, Eq. 1: :func:`sdm_weights`, :func:`sdm_read`, with the majority
   threshold :func:`majority`.
4. Attention in SDM notation, Eq. 4 / Eq. 6: :func:`attention_weights`, :func:`attention_read`.
5. The neuron view: :class:`NeuronSDM`, ``r`` explicit neurons, random or exhaustive.

Conventions. Binary tensors hold only 0 and 1 (any dtype: bool, integer or floating; anything
else raises :class:`ValueError`). Patterns are *rows*: addresses ``(m, n)``, pointers
``(m, n_p)``; queries ``(..., n)`` with any leading shape. The paper writes patterns as columns
(``P_a`` is ``n x m``); ``P_a^T xi`` there is ``addresses @ query`` here. Reads are float64 and are
computed on the query's device (other inputs are moved there). Exact counts (intersections, neuron
counts) are integers held in float64, exact up to ``2^53``.

References
----------
.. [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
   NeurIPS 34. Eq. 1 (SDM read, pattern view), Eq. 2 (circle intersection), Eq. 4 (attention in
   SDM notation), Eq. 5 (binary-to-sphere map), Eq. 6 (attention approximates SDM), App. B.6 (the
   bipolar identity ``d = (n - x^T y)/2``), App. B.7 (sign binarisation of continuous patterns).
.. [K88] Kanerva, P. (1988). Sparse Distributed Memory. MIT Press (neurons, read and write radius).
.. [KVPF20] Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs.
   ICML (the neuron view is linear attention with the binary feature map
   ``phi_tau(x) = 1[d(x, x_tau) <= d]``).
"""

from __future__ import annotations

import functools
import math
from numbers import Integral, Real

import torch
from torch import nn

from assocmem.devices import resolve_device
from assocmem.sdm._common import _as_int, _as_tensor, _binary, _finish_read, _generator, _majority
from assocmem.sdm.geometry import circle_intersection_table

__all__ = [
    # distances and the binary-to-sphere map
    "hamming_distance",
    "pairwise_hamming",
    "bipolar",
    "sphere_hamming",
    "sign_binarize",
    "expected_sign_hamming",
    "sign_hamming_correlation",
    # patterns and perturbations
    "random_binary_patterns",
    "flip_bits",
    "rotate_to_cosine",
    # the pattern view (Eq. 1)
    "EMPTY_POLICIES",
    "majority",
    "sdm_weights",
    "sdm_read",
    # attention (Eq. 4)
    "attention_weights",
    "attention_read",
    # the neuron view
    "NeuronSDM",
]

#: What :func:`sdm_read` and :meth:`NeuronSDM.read` return for a query whose weights are all zero.
EMPTY_POLICIES = ("nan", "query", "raise")

_EXACT = 2**53  # integers up to here are exact in float64
_ENUMERATE_MAX_N = 20  # NeuronSDM.exhaustive: at most 2^20 neurons


# ==========================================================================================
# 0. Input validation
# ==========================================================================================


def _check_radius(d, n: int) -> int:
    d = _as_int(d, "d")
    if d < 0 or d > n:
        raise ValueError(f"the radius d must lie in [0, n] = [0, {n}], got {d}")
    return d


def _real(x, name: str, min_ndim: int = 1) -> torch.Tensor:
    """``x`` as a floating tensor (float64 unless already floating) with finite entries."""
    x = _as_tensor(x, name)
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(x.shape)}")
    if x.is_complex():
        raise ValueError(f"{name} must be real, got a complex tensor")
    if not x.is_floating_point():
        x = x.to(torch.float64)
    if x.numel() and not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} must have finite entries")
    return x


def _check_memory(addresses: torch.Tensor, pointers: torch.Tensor | None, n: int,
                  names=("addresses", "pointers")) -> None:
    a, p = names
    if addresses.ndim != 2:
        raise ValueError(f"{a} must have shape (m, n), got {tuple(addresses.shape)}")
    if addresses.shape[0] == 0:
        raise ValueError(f"the memory is empty: {a} has m = 0 rows")
    if addresses.shape[1] != n:
        raise ValueError(f"{a} have n = {addresses.shape[1]} bits but the query has n = {n}")
    if pointers is not None:
        if pointers.ndim != 2:
            raise ValueError(f"{p} must have shape (m, n_p), got {tuple(pointers.shape)}")
        if pointers.shape[0] != addresses.shape[0]:
            raise ValueError(f"{a} and {p} must have the same number of rows m, got "
                             f"{addresses.shape[0]} and {pointers.shape[0]}")


def _check_empty_policy(empty: str) -> None:
    if empty not in EMPTY_POLICIES:
        raise ValueError(f"empty must be one of {EMPTY_POLICIES}, got {empty!r}")


# ==========================================================================================
# 1. Hamming distances and the binary-to-sphere map
# ==========================================================================================


def hamming_distance(a, b) -> torch.Tensor:
    """Hamming distance between binary vectors, broadcast over the leading axes.

    Parameters
    ----------
    a, b : torch.Tensor or array_like, shapes ``(..., n)``
        Binary vectors (entries 0 or 1, any dtype). The leading shapes broadcast against each
        other; the last axes must both be ``n``.

    Returns
    -------
    torch.Tensor, shape ``broadcast(a.shape[:-1], b.shape[:-1])``, dtype int64
        ``d(a, b) = #{i : a_i != b_i}``.

    Raises
    ------
    ValueError
        If an entry is not 0 or 1, an input has no axis, or the last axes differ.

    See Also
    --------
    pairwise_hamming : every query against every address, ``(..., n), (m, n) -> (..., m)``.

    References
    ----------
    Bricken & Pehlevan (2021), §1 (``d(., .)`` is the Hamming distance); Kanerva (1988), Ch. 1.
    """
    a, b = _binary(a, "a"), _binary(b, "b")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a and b must have the same last axis n, got shapes {tuple(a.shape)} "
                         f"and {tuple(b.shape)}")
    b = b.to(a.device)
    return (a.to(torch.uint8) != b.to(torch.uint8)).sum(-1)  # (...)


def _pairwise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``d(x_i, y_j)`` as float64 integers, ``(..., n), (m, n) -> (..., m)``; no checks."""
    xf, yf = x.to(torch.float64), y.to(torch.float64)
    # d = |x| + |y| - 2 <x, y> for 0/1 vectors; every term is an integer below 2^53: exact.
    return xf.sum(-1, keepdim=True) + yf.sum(-1) - 2.0 * (xf @ yf.T)  # (..., m)


def pairwise_hamming(query, addresses) -> torch.Tensor:
    """Hamming distance from every query to every address.

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary query vectors, any leading shape.
    addresses : torch.Tensor or array_like, shape ``(m, n)``
        Binary addresses (pattern or neuron addresses), one per row.

    Returns
    -------
    torch.Tensor, shape ``(..., m)``, dtype int64
        ``D[..., mu] = d(query[...], addresses[mu])``, computed as
        ``|x| + |y| - 2 x^T y`` in float64 (exact) on the query's device.

    Raises
    ------
    ValueError
        If an entry is not 0 or 1, ``addresses`` is not 2-D, or the bit counts differ.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 (the distances ``d(p_a^mu, xi)`` that set the weights).
    """
    query = _binary(query, "query")
    addresses = _binary(addresses, "addresses").to(query.device)
    if addresses.ndim != 2:
        raise ValueError(f"addresses must have shape (m, n), got {tuple(addresses.shape)}")
    if addresses.shape[1] != query.shape[-1]:
        raise ValueError(f"addresses have n = {addresses.shape[1]} bits but the query has "
                         f"n = {query.shape[-1]}")
    return _pairwise(query, addresses).round().to(torch.int64)


def bipolar(x, normalize: bool = True) -> torch.Tensor:
    """The binary-to-sphere map of Eq. 5 in closed form: ``x -> (2 x - 1) / sqrt(n)``.

    For binary ``a, b in {0, 1}^n`` the bipolar vectors ``s = 2a - 1``, ``t = 2b - 1`` agree in
    ``n - d`` positions and disagree in ``d``, so ``s^T t = n - 2 d(a, b)`` and, with
    ``a^ = s / sqrt(n)``,

        d(a, b) = (n - n <a^, b^>) / 2 = (n/2) (1 - cos(a^, b^)).

    This is Eq. 5 of Bricken & Pehlevan (2021) *with equality*: the floor there is unnecessary
    for binary vectors, and the map ``h`` the paper "assume[s] ... exists, at least
    approximately" exists exactly. In float64 the identity holds to rounding for every ``n``
    and bit for bit when ``n`` is a power of 4 (``sqrt(n)`` a power of 2, so every step is exact),
    e.g. the head dimension ``n = 64``.

    Parameters
    ----------
    x : torch.Tensor or array_like, shape ``(..., n)``
        Binary vectors.
    normalize : bool, default True
        ``True``: unit vectors ``(2x - 1)/sqrt(n)``. ``False``: the bipolar ``+-1`` vectors
        ``2x - 1`` (App. B.6 writes ``d = (n - x^T y)/2`` with these).

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, dtype float64

    Raises
    ------
    ValueError
        If an entry is not 0 or 1 or ``x`` has no axis.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 5 (the map ``h``) and App. B.6 (the bipolar identity).
    """
    x = _binary(x, "x")
    s = 2.0 * x.to(torch.float64) - 1.0
    return s / math.sqrt(x.shape[-1]) if normalize else s


def sphere_hamming(x, y) -> torch.Tensor:
    """The Hamming distance Eq. 5 assigns to continuous vectors, ``(n/2)(1 - cos(x, y))``.

    For bipolar images of binary vectors this *is* the Hamming distance (:func:`bipolar`). For
    other vectors it is the distance the paper's continuous SDM variants use to look up binary
    intersections (without the floor of Eq. 5, which we leave to the caller).

    Parameters
    ----------
    x, y : torch.Tensor or array_like, shapes ``(..., n)``
        Real, nonzero vectors; leading shapes broadcast.

    Returns
    -------
    torch.Tensor, shape ``broadcast(x.shape[:-1], y.shape[:-1])``
        Real values in ``[0, n]``; float64 unless the inputs are another floating dtype.

    Raises
    ------
    ValueError
        If the last axes differ, an entry is not finite, or a vector is zero.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 5 and App. B.7 (``Cont_Binary_SDM``: cosines mapped to
    Hamming distances).
    """
    x, y = _real(x, "x"), _real(y, "y")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"x and y must have the same last axis n, got shapes {tuple(x.shape)} "
                         f"and {tuple(y.shape)}")
    y = y.to(x.device)
    nx, ny = torch.linalg.vector_norm(x, dim=-1), torch.linalg.vector_norm(y, dim=-1)
    if bool((nx == 0).any()) or bool((ny == 0).any()):
        raise ValueError("sphere_hamming needs nonzero vectors (the cosine is undefined at 0)")
    cos = (x * y).sum(-1) / (nx * ny)
    return 0.5 * x.shape[-1] * (1.0 - cos.clamp(-1.0, 1.0))


def sign_binarize(x) -> torch.Tensor:
    """Continuous to binary by sign: ``1[x > 0]``.

    The binarisation App. B.7 applies to continuous patterns before running the binary SDM
    variants (zeros go to 0; for continuous random draws they have probability zero). For a
    pair at angle ``theta`` whose orientation is uniformly random, each coordinate's signs
    differ with probability ``theta / pi`` (the hyperplane argument), so the expected Hamming
    distance of the signs is ``n theta / pi``, not the ``(n/2)(1 - cos theta)`` of Eq. 5; the
    two agree only at ``theta = 0, pi/2, pi``.

    Parameters
    ----------
    x : torch.Tensor or array_like, shape ``(..., n)``
        Real vectors.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, dtype uint8

    Raises
    ------
    ValueError
        If an entry is not finite or ``x`` has no axis.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7; Goemans & Williamson (1995) and Charikar (2002) (the
    ``theta / pi`` disagreement probability of random hyperplanes).
    """
    x = _real(x, "x")
    return (x > 0).to(torch.uint8)


def expected_sign_hamming(cos, n) -> torch.Tensor:
    """Expected Hamming distance between the signs of a uniformly rotated pair: ``n theta / pi``.

    For unit vectors ``u, v`` at angle ``theta = arccos(cos)`` whose joint orientation is
    uniformly random (e.g. ``u`` uniform on the sphere and ``v`` from :func:`rotate_to_cosine`),
    each coordinate axis is a uniformly random direction relative to the pair, and a random
    hyperplane separates ``u`` from ``v`` with probability ``theta / pi``. Summing over the ``n``
    coordinates, ``E d(sign u, sign v) = n theta / pi``. Eq. 5 would assign the pair
    ``(n/2)(1 - cos theta)``; the two agree at ``theta = 0, pi/2, pi`` only, and for close pairs
    the sign distance is larger (``n theta / pi`` against ``n theta^2 / 4``).

    Parameters
    ----------
    cos : float or array_like
        Cosines in ``[-1, 1]``.
    n : int
        Dimension, ``>= 1``.

    Returns
    -------
    torch.Tensor, shape of ``cos``, dtype float64

    Raises
    ------
    ValueError
        If ``n < 1`` or a cosine is outside ``[-1, 1]``.

    References
    ----------
    Goemans & Williamson (1995), Lemma 3.2 (random hyperplane rounding); Charikar (2002)
    (SimHash); Bricken & Pehlevan (2021), Eq. 5 and App. B.7 (the comparison it quantifies).
    """
    n = _as_int(n, "n")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    c = torch.as_tensor(cos, dtype=torch.float64)
    if not bool(torch.isfinite(c).all()) or bool(((c < -1) | (c > 1)).any()):
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    return n * torch.arccos(c) / math.pi


def sign_hamming_correlation(n) -> float:
    """Correlation of ``(n/2)(1 - cos(u, v))`` with ``d(sign u, sign v)`` for independent ``u, v``.

    For ``u, v`` independent and uniform on the sphere (e.g. normalised Gaussian vectors), the
    Eq. 5 distance ``D = (n/2)(1 - u^T v)`` and the sign distance ``H`` both have mean ``n/2``
    and variance ``n/4`` (``Var(u^T v) = 1/n``; the signs are independent fair bits). Only the
    diagonal terms of ``Cov(H, D) = -(n/2) sum_ij Cov(1[u_i v_i < 0], u_j v_j)`` survive (flip
    ``u_j``), each equal to ``-(E|u_1|)^2 / 2``, so ``Cov(H, D) = n^2 (E|u_1|)^2 / 4`` and

        rho(n) = n (E|u_1|)^2,   E|u_1| = Gamma(n/2) / (sqrt(pi) Gamma((n + 1)/2)),

    which decreases from 1 at ``n = 1`` to ``2/pi`` as ``n -> infinity`` (0.6416 at ``n = 64``).
    The variance of ``H - D`` is ``n/2 (1 - rho)``.

    Parameters
    ----------
    n : int
        Dimension, ``>= 1``.

    Returns
    -------
    float
        ``rho(n)``.

    Raises
    ------
    ValueError
        If ``n < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (distances after sign binarisation "approximately
    equal", not quantified there).
    """
    n = _as_int(n, "n")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    mean_abs = math.exp(math.lgamma(n / 2) - math.lgamma((n + 1) / 2)) / math.sqrt(math.pi)
    return n * mean_abs * mean_abs


# ==========================================================================================
# 2. Random patterns and perturbations
# ==========================================================================================


def random_binary_patterns(m, n, seed=0, device="auto") -> torch.Tensor:
    """``m`` patterns of ``n`` i.i.d. fair bits: uniform random addresses in ``{0, 1}^n``.

    Parameters
    ----------
    m : int
        Number of patterns, ``>= 0``.
    n : int
        Number of bits, ``>= 1``.
    seed : int or torch.Generator, default 0
        Seed of a CPU generator (or the generator). The bits are drawn on the CPU and then
        moved, so a seed gives the same patterns on every device.
    device : str or torch.device, default "auto"
        Where the result lives (``"auto"``: CUDA, then MPS, then CPU).

    Returns
    -------
    torch.Tensor, shape ``(m, n)``, dtype uint8

    Raises
    ------
    ValueError
        If ``m < 0`` or ``n < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), §1 (random patterns and neuron addresses, uniform on
    ``{0, 1}^n``).
    """
    m, n = _as_int(m, "m"), _as_int(n, "n")
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    bits = torch.randint(0, 2, (m, n), generator=_generator(seed), dtype=torch.uint8)
    return bits.to(resolve_device(device))


def flip_bits(x, k, seed=0) -> torch.Tensor:
    """Flip exactly ``k`` distinct, uniformly chosen bits of every vector.

    Parameters
    ----------
    x : torch.Tensor or array_like, shape ``(..., n)``
        Binary vectors.
    k : int
        Number of bits to flip, ``0 <= k <= n``; the result is at Hamming distance exactly
        ``k`` from ``x``.
    seed : int or torch.Generator, default 0
        Seed of the CPU generator that picks the positions.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, dtype of ``x`` (uint8 for bool input), on ``x``'s device

    Raises
    ------
    ValueError
        If an entry is not 0 or 1, or ``k`` is outside ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (binary perturbations flip a fixed number of bits).
    """
    x = _binary(x, "x")
    n = x.shape[-1]
    k = _as_int(k, "k")
    if k < 0 or k > n:
        raise ValueError(f"k must lie in [0, n] = [0, {n}], got {k}")
    order = torch.rand(x.shape, generator=_generator(seed), dtype=torch.float64).argsort(-1)
    mask = torch.zeros(x.shape, dtype=torch.bool)
    mask.scatter_(-1, order[..., :k], True)
    mask = mask.to(x.device)
    return torch.where(mask, 1 - x, x)


def rotate_to_cosine(x, cos, seed=0) -> torch.Tensor:
    """Unit vectors at a prescribed cosine to ``x``, in a uniformly random orthogonal direction.

    ``y = c u + sqrt(1 - c^2) w`` with ``u = x / |x|`` and ``w`` a uniform unit vector orthogonal
    to ``u``. If ``x`` is uniform on the sphere, the pair ``(u, y)`` is a uniformly rotated pair
    at angle ``arccos c``.

    Parameters
    ----------
    x : torch.Tensor or array_like, shape ``(..., n)``
        Real, nonzero vectors, ``n >= 2``.
    cos : float or torch.Tensor broadcastable to ``x.shape[:-1]``
        Target cosines in ``[-1, 1]``.
    seed : int or torch.Generator, default 0
        Seed of the CPU generator for the orthogonal directions.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64 unless ``x`` has another floating dtype
        Unit vectors with ``cos(x, y) = cos`` up to rounding.

    Raises
    ------
    ValueError
        If ``n < 2``, a vector is zero, an entry is not finite, or a cosine is outside
        ``[-1, 1]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (continuous perturbations move the query to a set cosine
    along a random orthogonal direction).
    """
    x = _real(x, "x")
    n = x.shape[-1]
    if n < 2:
        raise ValueError(f"rotate_to_cosine needs n >= 2, got n = {n}")
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    if bool((norm == 0).any()):
        raise ValueError("rotate_to_cosine needs nonzero vectors")
    c = torch.as_tensor(cos, dtype=x.dtype, device=x.device)
    if not bool(torch.isfinite(c).all()) or bool(((c < -1) | (c > 1)).any()):
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    u = x / norm
    g = torch.randn(x.shape, generator=_generator(seed), dtype=torch.float64).to(x)
    w = g - (g * u).sum(-1, keepdim=True) * u
    w = w / torch.linalg.vector_norm(w, dim=-1, keepdim=True)
    c = c.unsqueeze(-1) if c.ndim else c
    return c * u + torch.sqrt(1.0 - c * c) * w


# ==========================================================================================
# 3. The pattern view (Eq. 1)
# ==========================================================================================


def majority(x) -> torch.Tensor:
    """The majority threshold ``g`` of Eq. 1: ``g(e) = 1`` if ``e > 1/2``, else ``0``.

    Applied element-wise to a normalised read of binary pointers; ties (``e = 1/2`` exactly) go
    to 0, as in the paper's strict inequality and the authors' code. NaN (an undefined read)
    stays NaN.

    Parameters
    ----------
    x : torch.Tensor or array_like, any shape
        Normalised reads.

    Returns
    -------
    torch.Tensor, same shape, dtype float64
        0.0, 1.0 or NaN.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 (``g``); Kanerva (1988), Ch. 7 (the majority rule).
    """
    return _majority(_as_tensor(x, "x").to(torch.float64))


@functools.lru_cache(maxsize=256)
def _intersection_table(n: int, d: int) -> tuple[int, ...]:
    return tuple(circle_intersection_table(n, d))


def _weight_table(weights, n: int, d: int) -> tuple[torch.Tensor, bool]:
    """``(table, log_space)``: the weight at each distance ``0..n`` as float64.

    For ``"intersection"`` the table holds ``I(dv, d, n)`` exactly while ``I(0) < 2^53``;
    otherwise it holds ``log I`` (``-inf`` where ``I = 0``) and ``log_space`` is True.
    """
    if isinstance(weights, str):
        if weights != "intersection":
            raise ValueError(f"weights must be 'intersection' or a table of n + 1 = {n + 1} "
                             f"weights, got {weights!r}")
        table = _intersection_table(n, d)
        if max(table) < _EXACT:
            return torch.tensor([float(v) for v in table], dtype=torch.float64), False
        logs = [math.log(v) if v > 0 else -math.inf for v in table]
        return torch.tensor(logs, dtype=torch.float64), True
    table = _real(weights, "weights").to(torch.float64)
    if table.shape != (n + 1,):
        raise ValueError(f"a weight table needs one weight per distance 0..n (n + 1 entries), "
                         f"shape ({n + 1},), got {tuple(table.shape)}")
    if bool((table < 0).any()):
        raise ValueError("weights must be nonnegative")
    return table, False


def _raw_weights(query: torch.Tensor, addresses: torch.Tensor, d: int, weights) -> torch.Tensor:
    """Unnormalised weights ``(..., m)``: exact integers, or rescaled per query in log space."""
    n = query.shape[-1]
    table, log_space = _weight_table(weights, n, d)
    table = table.to(query.device)
    dist = _pairwise(query, addresses).round().to(torch.int64)  # (..., m)
    w = table[dist]  # (..., m)
    if log_space:  # divide each row by its largest weight: exp(log w - max log w)
        top = w.amax(-1, keepdim=True)
        w = torch.where(torch.isfinite(top), torch.exp(w - torch.where(torch.isfinite(top), top, 0.0)),
                        torch.zeros_like(w))
    return w


def sdm_weights(query, addresses, d, weights="intersection", normalize: bool = True) -> torch.Tensor:
    """The pattern weights of Eq. 1, ``w_mu = I(d(p_a^mu, xi), d, n)``.

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary read addresses ``xi``.
    addresses : torch.Tensor or array_like, shape ``(m, n)``
        Binary pattern addresses ``p_a^mu``, one per row, ``m >= 1``.
    d : int
        Read and write radius, ``0 <= d <= n``.
    weights : "intersection" or array_like of shape ``(n + 1,)``, default "intersection"
        ``"intersection"``: the exact circle intersection ``I(dv, d, n)`` (neurons at every
        address, ``r = 2^n``; Eq. 2). A table: the weight given to a pattern at each distance
        ``0..n`` (nonnegative), e.g. expected neuron counts or a fitted exponential.
    normalize : bool, default True
        Divide each row by its sum (rows with all weights zero become NaN). ``False``: the raw
        weights, ``I`` as exact integers in float64; only possible while ``I(0, d, n) < 2^53``
        (always for ``n <= 52``; e.g. ``n = 64, d = 11`` qualifies, ``n = 100, d = 30`` does not).

    Returns
    -------
    torch.Tensor, shape ``(..., m)``, dtype float64

    Raises
    ------
    ValueError
        On non-binary entries, shape mismatch, ``d`` outside ``[0, n]``, an empty memory
        (``m = 0``), an unknown ``weights``, or ``normalize=False`` where ``I`` exceeds ``2^53``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 (the weights) and Eq. 2 (``I``).
    """
    query = _binary(query, "query")
    addresses = _binary(addresses, "addresses").to(query.device)
    n = query.shape[-1]
    _check_memory(addresses, None, n)
    d = _check_radius(d, n)
    if not normalize and isinstance(weights, str) and weights == "intersection" \
            and max(_intersection_table(n, d)) >= _EXACT:
        raise ValueError(f"I(0, d, n) >= 2^53 at n = {n}, d = {d}: raw intersections are not exact "
                         "in float64; use normalize=True (or geometry.circle_intersection)")
    w = _raw_weights(query, addresses, d, weights)
    if not normalize:
        return w
    return w / w.sum(-1, keepdim=True)


def sdm_read(query, addresses, pointers, d, weights="intersection", threshold: bool = False,
             empty: str = "nan") -> torch.Tensor:
    """The SDM read in the pattern view (Eq. 1): ``g(sum_mu w_mu p_p^mu / sum_mu w_mu)``.

    With ``weights="intersection"`` this is the read of an SDM with a neuron at every address
    (``r = 2^n``): the weight of pattern ``mu`` is the number of neurons in both radius-``d``
    balls, ``I(d(p_a^mu, xi), d, n)``. While ``I(0, d, n) < 2^53`` the weights are exact integers
    and the numerator and denominator are exact sums, so the result equals the neuron view
    :meth:`NeuronSDM.read` of :meth:`NeuronSDM.exhaustive` bit for bit (for integer pointers);
    above that (e.g. ``n = 1000``) each query's weights are divided by their largest value in log
    space first, so no read underflows to an empty one.

    **Empty reads return NaN by default.** A query with no stored pattern within ``2d`` has all
    weights zero and its read ``0/0`` is undefined; with the default ``empty="nan"`` its row of
    the result is all NaN (and stays NaN through ``threshold``). Check with
    ``torch.isnan(out).any(-1)``, or pass ``empty="raise"`` to get a :class:`ValueError`, or
    ``empty="query"`` to get the query back as the authors' convergence code does.

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary read addresses ``xi``.
    addresses : torch.Tensor or array_like, shape ``(m, n)``
        Binary pattern addresses ``p_a^mu``, ``m >= 1``.
    pointers : torch.Tensor or array_like, shape ``(m, n_p)``
        Pattern pointers ``p_p^mu`` (binary for the threshold to make sense, but any real values
        are accepted). Autoassociative memory: ``pointers = addresses``.
    d : int
        Read and write radius, ``0 <= d <= n``.
    weights : "intersection" or array_like of shape ``(n + 1,)``, default "intersection"
        As in :func:`sdm_weights`.
    threshold : bool, default False
        Apply the majority threshold ``g`` (:func:`majority`) to the normalised read.
    empty : {"nan", "query", "raise"}, default "nan"
        What to return for a query with all weights zero (no pattern within ``2d``), where the
        read ``0/0`` is undefined: ``"nan"`` a row of NaN; ``"query"`` the query itself, as the
        authors' convergence code does (needs ``n_p = n``); ``"raise"`` a :class:`ValueError`.

    Returns
    -------
    torch.Tensor, shape ``(..., n_p)``, dtype float64
        The reads; with ``empty="nan"`` (the default) the rows of empty reads are NaN.

    Raises
    ------
    ValueError
        On non-binary query or addresses, shape mismatch, ``d`` outside ``[0, n]``, an empty
        memory, an unknown ``weights`` or ``empty``, non-finite pointers, or an all-zero row with
        ``empty="raise"``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 (the read), Eq. 2 (``I``), App. B.7 (queries with no
    intersection are left unchanged).
    """
    _check_empty_policy(empty)
    query = _binary(query, "query")
    addresses = _binary(addresses, "addresses").to(query.device)
    pointers = _real(pointers, "pointers").to(device=query.device, dtype=torch.float64)
    n = query.shape[-1]
    _check_memory(addresses, pointers, n)
    d = _check_radius(d, n)
    w = _raw_weights(query, addresses, d, weights)  # (..., m)
    num = w @ pointers  # (..., n_p)
    den = w.sum(-1, keepdim=True)  # (..., 1)
    return _finish_read(num, den, query, threshold, empty)


# ==========================================================================================
# 4. Attention in SDM notation (Eq. 4)
# ==========================================================================================


def _check_beta(beta) -> float:
    if isinstance(beta, bool) or not isinstance(beta, (Real, torch.Tensor)):
        raise ValueError(f"beta must be a real number, got {beta!r}")
    b = float(beta)
    if not math.isfinite(b):
        raise ValueError(f"beta must be finite, got {beta!r}")
    return b


def _unit(x: torch.Tensor, name: str) -> torch.Tensor:
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    if bool((norm == 0).any()):
        raise ValueError(f"{name} has a zero vector, which cannot be L2-normalised")
    return x / norm


def attention_weights(query, keys, beta, normalize: bool = True) -> torch.Tensor:
    """Softmax attention weights in SDM notation, ``softmax(beta P_a^T xi)`` (Eq. 4).

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Queries ``xi`` (real; pass :func:`bipolar` of binary queries).
    keys : torch.Tensor or array_like, shape ``(m, n)``
        Keys = pattern addresses ``p_a^mu``, one per row, ``m >= 1``.
    beta : float
        Inverse temperature; the SDM correspondence fits it to ``I`` (Eq. 10,
        :func:`assocmem.sdm.fit_beta`). Not the ``1/sqrt(n)`` of standard attention.
    normalize : bool, default True
        L2-normalise queries and keys first (the hats of Eq. 6; Query-Key Normalisation), so the
        scores are cosines.

    Returns
    -------
    torch.Tensor, shape ``(..., m)``
        Nonnegative weights summing to one over ``m``; float64 unless the inputs are another
        floating dtype.

    Raises
    ------
    ValueError
        On shape mismatch, an empty memory, non-finite entries or ``beta``, or a zero vector
        with ``normalize=True``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 (attention with keys ``P_a``, values ``P_p``, query ``xi``)
    and Eq. 6 (normalised queries and keys); Henry et al. (2020) (QK-norm).
    """
    query = _real(query, "query")
    keys = _real(keys, "keys").to(device=query.device, dtype=query.dtype)
    _check_memory(keys, None, query.shape[-1], names=("keys", "values"))
    b = _check_beta(beta)
    if normalize:
        query, keys = _unit(query, "query"), _unit(keys, "keys")
    return torch.softmax(b * (query @ keys.T), dim=-1)  # (..., m)


def attention_read(query, keys, values, beta, normalize: bool = True) -> torch.Tensor:
    """Softmax attention in SDM notation, ``xi_new = P_p softmax(beta P_a^T xi)`` (Eq. 4).

    Keys are the pattern addresses, values the pointers, and the query the read address. With
    ``normalize=True`` and ``beta`` fitted to the circle intersection this is the right-hand
    side of the paper's approximation (Eq. 6) to :func:`sdm_read`. Apply :func:`majority` to
    compare with a thresholded binary read (the paper's ``Binary_SDM_BFit_Attention``).

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Queries ``xi``.
    keys : torch.Tensor or array_like, shape ``(m, n)``
        Keys (pattern addresses), ``m >= 1``.
    values : torch.Tensor or array_like, shape ``(m, n_p)``
        Values (pattern pointers).
    beta : float
        Inverse temperature.
    normalize : bool, default True
        L2-normalise queries and keys (not the values).

    Returns
    -------
    torch.Tensor, shape ``(..., n_p)``

    Raises
    ------
    ValueError
        As :func:`attention_weights`, or if ``values`` does not have ``m`` rows.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 and Eq. 6; Vaswani et al. (2017).
    """
    w = attention_weights(query, keys, beta, normalize=normalize)  # (..., m)
    values = _real(values, "values").to(device=w.device, dtype=w.dtype)
    if values.ndim != 2 or values.shape[0] != w.shape[-1]:
        raise ValueError(f"values must have shape (m, n_p) with m = {w.shape[-1]}, got "
                         f"{tuple(values.shape)}")
    return w @ values  # (..., n_p)


# ==========================================================================================
# 5. The neuron view
# ==========================================================================================


class NeuronSDM(nn.Module):
    """Kanerva's SDM with ``r`` explicit neurons (hard locations).

    Each neuron ``tau`` has a fixed address ``x_tau in {0, 1}^n``, a storage vector ``s_tau`` (the
    sum of the pointers written to it) and a count ``c_tau`` (how many patterns were written to
    it). With the binary feature map ``phi_tau(x) = 1[d(x, x_tau) <= d]``,

        write:  s_tau += sum_mu phi_tau(p_a^mu) p_p^mu,   c_tau += sum_mu phi_tau(p_a^mu),
        read:   xi_new = g( sum_tau phi_tau(xi) s_tau / sum_tau phi_tau(xi) c_tau ).

    Exchanging the sums shows the read is Eq. 1 with weights ``w_mu = phi(xi)^T phi(p_a^mu)``,
    the number of neurons within ``d`` of both (:meth:`shared_neurons`). With a neuron at every
    address (:meth:`exhaustive`) that number is ``I(d(p_a^mu, xi), d, n)``; with ``r`` uniform
    random neurons it is ``Binomial(r, I / 2^n)``. The storage ``S = Phi(P_a)^T P_p`` and the read
    ``phi(xi)^T S / phi(xi)^T Phi(P_a)^T 1`` are linear attention with the feature map ``phi``.
    The read and write radius are the same ``d``, as the paper assumes.

    Parameters
    ----------
    n : int
        Address length in bits, ``>= 1``.
    r : int
        Number of neurons, ``>= 1``. Addresses are drawn i.i.d. uniform (with replacement).
    d : int
        Read and write radius, ``0 <= d <= n``.
    seed : int or torch.Generator, default 0
        Seed of the CPU generator for the neuron addresses (the same neurons on every device).
    device : str or torch.device, default "auto"
        Where addresses and storage live.
    chunk_size : int, default 16384
        Neurons processed at a time (bounds the ``(queries, chunk)`` activation matrices).

    Attributes
    ----------
    neuron_addresses : torch.Tensor, shape ``(r, n)``, uint8
    storage : torch.Tensor, shape ``(r, n_p)``, float64, or None before the first write
    counts : torch.Tensor, shape ``(r,)``, float64
        Patterns written to each neuron (exact integers).

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``d`` outside ``[0, n]`` or ``chunk_size < 1``.

    References
    ----------
    Kanerva (1988), Ch. 7; Bricken & Pehlevan (2021), §1 and Eq. 1, App. B.7
    (``Binary_Neuron_SDM``); Katharopoulos et al. (2020) (linear attention).

    Examples
    --------
    >>> mem = NeuronSDM(n=16, r=4096, d=5, seed=0, device="cpu")
    >>> P = random_binary_patterns(10, 16, seed=1, device="cpu")
    >>> out = mem.write(P, P).read(P, threshold=True)  # (10, 16)
    """

    def __init__(self, n, r, d, seed=0, device="auto", chunk_size: int = 16384):
        super().__init__()
        n, r = _as_int(n, "n"), _as_int(r, "r")
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if r < 1:
            raise ValueError(f"r must be >= 1 neuron, got {r}")
        addresses = torch.randint(0, 2, (r, n), generator=_generator(seed), dtype=torch.uint8)
        self._setup(addresses, d, resolve_device(device), chunk_size)

    def _setup(self, addresses: torch.Tensor, d, device: torch.device, chunk_size) -> None:
        self.n = int(addresses.shape[1])
        self.r = int(addresses.shape[0])
        self.d = _check_radius(d, self.n)
        self.chunk_size = _as_int(chunk_size, "chunk_size")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        self.register_buffer("neuron_addresses", addresses.to(device))
        self.register_buffer("storage", None)
        self.register_buffer("counts", torch.zeros(self.r, dtype=torch.float64, device=device))

    @classmethod
    def from_addresses(cls, addresses, d, device="auto", chunk_size: int = 16384) -> "NeuronSDM":
        """An SDM whose neurons sit at the given addresses.

        Parameters
        ----------
        addresses : torch.Tensor or array_like, shape ``(r, n)``
            Binary neuron addresses, ``r >= 1``.
        d : int
            Read and write radius, ``0 <= d <= n``.
        device, chunk_size
            As in the constructor.

        Returns
        -------
        NeuronSDM

        Raises
        ------
        ValueError
            On non-binary entries, a shape other than ``(r, n)`` with ``r, n >= 1``, or ``d``
            outside ``[0, n]``.
        """
        addresses = _binary(addresses, "addresses")
        if addresses.ndim != 2 or addresses.shape[0] < 1 or addresses.shape[1] < 1:
            raise ValueError(f"neuron addresses must have shape (r, n) with r, n >= 1, got "
                             f"{tuple(addresses.shape)}")
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        obj._setup(addresses.to(torch.uint8), d, resolve_device(device), chunk_size)
        return obj

    @classmethod
    def exhaustive(cls, n, d, device="auto", chunk_size: int = 16384) -> "NeuronSDM":
        """An SDM with a neuron at every one of the ``2^n`` addresses (``n <= 20``).

        Its shared-neuron counts are the circle intersection ``I(dv, d, n)`` exactly, and its
        read equals the pattern view :func:`sdm_read`.

        Parameters
        ----------
        n : int
            Address length, ``1 <= n <= 20``.
        d : int
            Read and write radius, ``0 <= d <= n``.
        device, chunk_size
            As in the constructor.

        Returns
        -------
        NeuronSDM
            Neuron ``tau`` has the binary expansion of ``tau`` as its address (bit ``i`` of
            ``tau`` at position ``i``).

        Raises
        ------
        ValueError
            If ``n`` is outside ``[1, 20]`` or ``d`` outside ``[0, n]``.

        References
        ----------
        Bricken & Pehlevan (2021), App. B.5 (``r = 2^n``: "every address holds a neuron").
        """
        n = _as_int(n, "n")
        if n < 1 or n > _ENUMERATE_MAX_N:
            raise ValueError(f"exhaustive neurons need 1 <= n <= {_ENUMERATE_MAX_N}, got n = {n}")
        idx = torch.arange(1 << n, dtype=torch.int64)
        bits = ((idx[:, None] >> torch.arange(n, dtype=torch.int64)) & 1).to(torch.uint8)  # (2^n, n)
        return cls.from_addresses(bits, d, device=device, chunk_size=chunk_size)

    # --------------------------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        """Where the neurons live."""
        return self.neuron_addresses.device

    @property
    def pointer_dim(self) -> int | None:
        """``n_p``, the pointer size fixed by the first write (None before)."""
        return None if self.storage is None else int(self.storage.shape[1])

    def extra_repr(self) -> str:
        return f"n={self.n}, r={self.r}, d={self.d}, pointer_dim={self.pointer_dim}"

    def _chunks(self):
        for lo in range(0, self.r, self.chunk_size):
            yield slice(lo, min(lo + self.chunk_size, self.r))

    def _signs(self, x: torch.Tensor) -> torch.Tensor:
        """Bipolar ``2x - 1`` in float32: products and sums of ``+-1`` are exact below ``2^24``."""
        dtype = torch.float32 if self.n < 2**24 else torch.float64
        return 2.0 * x.to(dtype) - 1.0

    def _active(self, signs: torch.Tensor, sl: slice) -> torch.Tensor:
        """``phi(x)`` for the neurons in ``sl`` from the signs of ``x``: ``(..., C)`` bool.

        ``d(x, x_tau) <= d`` if and only if ``s(x)^T s(x_tau) = n - 2 d(x, x_tau) >= n - 2 d``:
        one matrix product and one comparison per chunk.
        """
        neuron_signs = self._signs(self.neuron_addresses[sl])  # (C, n)
        return signs @ neuron_signs.T >= self.n - 2 * self.d  # (..., C)

    def _check_addresses(self, x, name: str, min_ndim: int = 1) -> torch.Tensor:
        x = _binary(x, name, min_ndim=min_ndim).to(self.device)
        if x.shape[-1] != self.n:
            raise ValueError(f"{name} must have n = {self.n} bits (last axis), got shape "
                             f"{tuple(x.shape)}")
        return x

    def activation(self, x) -> torch.Tensor:
        """Which neurons an address activates, ``phi_tau(x) = 1[d(x, x_tau) <= d]``.

        Parameters
        ----------
        x : torch.Tensor or array_like, shape ``(..., n)``
            Binary addresses.

        Returns
        -------
        torch.Tensor, shape ``(..., r)``, dtype bool

        Raises
        ------
        ValueError
            On non-binary entries or the wrong number of bits.
        """
        x = self._check_addresses(x, "x")
        signs = self._signs(x)
        return torch.cat([self._active(signs, sl) for sl in self._chunks()], dim=-1)

    def write(self, addresses, pointers) -> "NeuronSDM":
        """Add each pointer to every neuron within ``d`` of its address.

        ``S += Phi(P_a)^T P_p`` and ``c += Phi(P_a)^T 1``. Writes accumulate.

        Parameters
        ----------
        addresses : torch.Tensor or array_like, shape ``(m, n)``
            Binary pattern addresses, ``m >= 1``.
        pointers : torch.Tensor or array_like, shape ``(m, n_p)``
            Pointers (real; binary for the thresholded read). ``n_p`` must match earlier writes.

        Returns
        -------
        NeuronSDM
            ``self``, so that ``mem.write(P, P).read(q)`` chains.

        Raises
        ------
        ValueError
            On non-binary addresses, shape mismatch, an empty write (``m = 0``), non-finite
            pointers, or a pointer size different from an earlier write.
        """
        addresses = self._check_addresses(addresses, "addresses", min_ndim=2)
        pointers = _real(pointers, "pointers").to(device=self.device, dtype=torch.float64)
        _check_memory(addresses, pointers, self.n)
        if self.storage is None:
            self.storage = torch.zeros(self.r, pointers.shape[1], dtype=torch.float64, device=self.device)
        elif pointers.shape[1] != self.storage.shape[1]:
            raise ValueError(f"pointers have n_p = {pointers.shape[1]}, but earlier writes had "
                             f"n_p = {self.storage.shape[1]}")
        signs = self._signs(addresses)
        for sl in self._chunks():
            act = self._active(signs, sl).to(torch.float64)  # (m, C)
            self.storage[sl] += act.T @ pointers  # (C, n_p)
            self.counts[sl] += act.sum(0)  # (C,)
        return self

    def read(self, query, threshold: bool = False, empty: str = "nan") -> torch.Tensor:
        """Sum the neurons within ``d`` of the query, normalise, and optionally threshold.

        ``sum_tau phi_tau(xi) s_tau / sum_tau phi_tau(xi) c_tau``, then ``g`` if ``threshold``.

        Parameters
        ----------
        query : torch.Tensor or array_like, shape ``(..., n)``
            Binary read addresses.
        threshold : bool, default False
            Apply the majority threshold :func:`majority`.
        empty : {"nan", "query", "raise"}, default "nan"
            For a query whose active neurons hold no pattern (denominator 0), as in
            :func:`sdm_read`: by default its row is NaN; ``"raise"`` makes it an error.

        Returns
        -------
        torch.Tensor, shape ``(..., n_p)``, dtype float64
            The reads; with ``empty="nan"`` (the default) the rows of empty reads are NaN.

        Raises
        ------
        RuntimeError
            If nothing has been written.
        ValueError
            On non-binary entries, the wrong number of bits, an unknown ``empty``, or an empty
            row with ``empty="raise"``.
        """
        _check_empty_policy(empty)
        if self.storage is None:
            raise RuntimeError("nothing has been written to this NeuronSDM; call write() first")
        query = self._check_addresses(query, "query")
        num = torch.zeros(*query.shape[:-1], self.storage.shape[1], dtype=torch.float64, device=self.device)
        den = torch.zeros(*query.shape[:-1], 1, dtype=torch.float64, device=self.device)
        signs = self._signs(query)
        for sl in self._chunks():
            act = self._active(signs, sl).to(torch.float64)  # (..., C)
            num += act @ self.storage[sl]  # (..., n_p)
            den += (act @ self.counts[sl]).unsqueeze(-1)  # (..., 1)
        return _finish_read(num, den, query, threshold, empty)

    def shared_neurons(self, query, addresses, paired: bool = False) -> torch.Tensor:
        """Number of neurons within ``d`` of both a query and a pattern address.

        The pattern weight of the neuron view, ``w_mu = phi(xi)^T phi(p_a^mu)``. Its expectation
        over uniform random neuron addresses is ``I(d(xi, p_a^mu), d, n) r / 2^n``
        (:func:`assocmem.sdm.expected_neurons`); for :meth:`exhaustive` it is ``I`` exactly.

        Parameters
        ----------
        query : torch.Tensor or array_like, shape ``(..., n)``
            Binary queries.
        addresses : torch.Tensor or array_like, shape ``(m, n)``, or ``(..., n)`` if ``paired``
            Binary pattern addresses.
        paired : bool, default False
            ``False``: every query against every address, ``(..., m)``. ``True``: query ``i``
            against address ``i`` only (shapes must broadcast), ``(...)``.

        Returns
        -------
        torch.Tensor, dtype int64, shape ``(..., m)`` or (paired) the broadcast leading shape

        Raises
        ------
        ValueError
            On non-binary entries, the wrong number of bits, or (unpaired) addresses that are
            not 2-D.
        """
        query = self._check_addresses(query, "query")
        addresses = self._check_addresses(addresses, "addresses")
        if not paired and addresses.ndim != 2:
            raise ValueError(f"addresses must have shape (m, n) unless paired=True, got "
                             f"{tuple(addresses.shape)}")
        sq, sp = self._signs(query), self._signs(addresses)
        total = None
        for sl in self._chunks():
            aq, ap = self._active(sq, sl), self._active(sp, sl)  # (..., C), bool
            if paired:
                part = (aq & ap).sum(-1)  # (...), int64
            else:
                part = (aq.to(torch.float64) @ ap.to(torch.float64).T).round().to(torch.int64)
            total = part if total is None else total + part
        return total

    def sample_shared_neurons(self, dvs, num_pairs: int, seed=0) -> torch.Tensor:
        """Shared-neuron counts of random query-pattern pairs at given Hamming distances.

        For each distance ``dv``, draws ``num_pairs`` uniform queries and, for each, a pattern
        at distance exactly ``dv`` (:func:`flip_bits`), and counts the neurons within ``d`` of
        both. For a *fixed* set of neurons, every neuron lies in the intersection for the same
        number of the pairs at distance ``dv`` (the hypercube is vertex-transitive), so the
        count of a uniformly random pair has expectation exactly ``I(dv, d, n) r / 2^n`` whatever
        the neurons are, and the pairs are i.i.d. given the neurons: the sample mean and its
        standard error test :func:`assocmem.sdm.expected_neurons` without redrawing neurons.

        Parameters
        ----------
        dvs : int or iterable of int
            Distances, each in ``[0, n]``.
        num_pairs : int
            Pairs per distance, ``>= 1``.
        seed : int, default 0
            Seed of the CPU generator for the pairs.

        Returns
        -------
        torch.Tensor, shape ``(len(dvs), num_pairs)`` (``(num_pairs,)`` for a scalar ``dvs``),
        dtype int64

        Raises
        ------
        ValueError
            If a distance is outside ``[0, n]`` or ``num_pairs < 1``.

        References
        ----------
        Bricken & Pehlevan (2021), §1 and App. B.1 (Fig. 11 checks ``I r / 2^n`` by simulation).
        """
        scalar = isinstance(dvs, (Integral, Real)) and not isinstance(dvs, bool)
        dv_list = [_as_int(v, "dv") for v in ([dvs] if scalar else list(dvs))]
        if not dv_list or any(v < 0 or v > self.n for v in dv_list):
            raise ValueError(f"distances must be a nonempty set in [0, n] = [0, {self.n}], got {dvs!r}")
        num_pairs = _as_int(num_pairs, "num_pairs")
        if num_pairs < 1:
            raise ValueError(f"num_pairs must be >= 1, got {num_pairs}")
        gen = _generator(seed)
        out = []
        for dv in dv_list:
            q = torch.randint(0, 2, (num_pairs, self.n), generator=gen, dtype=torch.uint8)
            p = flip_bits(q, dv, seed=gen)
            out.append(self.shared_neurons(q, p, paired=True))  # (num_pairs,)
        counts = torch.stack(out)  # (len(dvs), num_pairs)
        return counts[0] if scalar else counts

    def reset(self) -> "NeuronSDM":
        """Forget every write (the neuron addresses stay)."""
        self.storage = None
        self.counts.zero_()
        return self

    def forward(self, query) -> torch.Tensor:
        """Same as :meth:`read` with the defaults."""
        return self.read(query)
