"""Hamming distances and the binary-to-sphere map of Eq. 5, with sign binarisation.

An SDM compares addresses by Hamming distance, attention compares unit vectors by their cosine.
Bricken & Pehlevan (2021), Eq. 5, link the two through a map ``h`` of binary vectors onto the
sphere with ``d(a, b) = (n/2)(1 - <h(a), h(b)>)``, which they "assume ... exists, at least
approximately"; the bipolar map ``x -> (2x - 1)/sqrt(n)`` satisfies it with equality
(:func:`bipolar`; App. B.6 writes the identity as ``d = (n - x^T y)/2``). Going the other way,
App. B.7 binarises continuous patterns by sign (:func:`sign_binarize`), which does not keep the
Eq. 5 distance: a uniformly rotated pair at angle ``theta`` has expected sign distance
``n theta / pi`` (:func:`expected_sign_hamming`, the random-hyperplane argument of Goemans &
Williamson 1995 and Charikar 2002), and for independent uniform pairs the two distances
correlate by :func:`sign_hamming_correlation`. Also here: :func:`hamming_distance`,
:func:`pairwise_hamming` (every query against every address, exact in float64) and
:func:`sphere_hamming` (the Eq. 5 distance of continuous vectors). Chapter 30 checks each
statement; the pattern view, the random features and the Hopfield comparison of chapter 35
compute their distances and bipolar images here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from assocmem.sdm._common import _as_int, _binary, _read_dtype, _real_array, _unit_norm
from assocmem.sdm.read._checks import _real

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "hamming_distance",
    "pairwise_hamming",
    "bipolar",
    "sphere_hamming",
    "sign_binarize",
    "expected_sign_hamming",
    "sign_hamming_correlation",
]


def _check_broadcast(s: torch.Size, t: torch.Size, a: str, b: str) -> None:
    """The leading shapes of two batches of vectors broadcast (a ValueError naming both if not)."""
    try:
        torch.broadcast_shapes(s, t)
    except RuntimeError:
        raise ValueError(f"the leading shapes of {a} {tuple(s)} and {b} {tuple(t)} do not "
                         "broadcast") from None


def hamming_distance(a: ArrayLike, b: ArrayLike) -> torch.Tensor:
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
        If an entry is not 0 or 1, an input has no axis or is float16/bfloat16 (the dtype
        policy of :mod:`assocmem.dtypes`), the last axes differ or the leading shapes do not
        broadcast.

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
    _check_broadcast(a.shape[:-1], b.shape[:-1], "a", "b")
    b = b.to(a.device)
    return (a.to(torch.uint8) != b.to(torch.uint8)).sum(-1)  # (...)


def _pairwise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``d(x_i, y_j)`` as float64 integers, ``(..., n), (m, n) -> (..., m)``; no checks."""
    xf, yf = x.to(torch.float64), y.to(torch.float64)
    # d = |x| + |y| - 2 <x, y> for 0/1 vectors; every term is an integer below 2^53: exact.
    return xf.sum(-1, keepdim=True) + yf.sum(-1) - 2.0 * (xf @ yf.T)  # (..., m)


def pairwise_hamming(query: ArrayLike, addresses: ArrayLike) -> torch.Tensor:
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
        If an entry is not 0 or 1, an input is float16/bfloat16, ``addresses`` is not 2-D, or
        the bit counts differ.

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


def bipolar(x: ArrayLike, normalize: bool = True) -> torch.Tensor:
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
    torch.Tensor, shape ``(..., n)``
        Computed in float64, returned in ``x``'s dtype if it is floating point, else in torch's
        default dtype (bool and integer patterns).

    Raises
    ------
    ValueError
        If an entry is not 0 or 1, ``x`` has no axis or is float16/bfloat16.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 5 (the map ``h``) and App. B.6 (the bipolar identity).
    """
    x = _binary(x, "x")
    s = 2.0 * x.to(torch.float64) - 1.0
    return (s / math.sqrt(x.shape[-1]) if normalize else s).to(_read_dtype(x))


def sphere_hamming(x: ArrayLike, y: ArrayLike) -> torch.Tensor:
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
        If the last axes differ, the leading shapes do not broadcast, an entry is not finite, an
        input is float16/bfloat16, or a vector is zero.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 5 and App. B.7 (``Cont_Binary_SDM``: cosines mapped to
    Hamming distances).
    """
    x, y = _real(x, "x"), _real(y, "y")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"x and y must have the same last axis n, got shapes {tuple(x.shape)} "
                         f"and {tuple(y.shape)}")
    _check_broadcast(x.shape[:-1], y.shape[:-1], "x", "y")
    y = y.to(x.device)
    nx, ny = _unit_norm(x).squeeze(-1), _unit_norm(y).squeeze(-1)
    if bool((nx == 0).any()) or bool((ny == 0).any()):
        raise ValueError("sphere_hamming needs nonzero vectors (the cosine is undefined at 0)")
    cos = (x * y).sum(-1) / (nx * ny)
    bad = ~torch.isfinite(cos)
    if bool(bad.any()):  # x * y overflowed (float32 entries above ~1e19): divide first
        safe = ((x / nx.unsqueeze(-1)) * (y / ny.unsqueeze(-1))).sum(-1)
        cos = torch.where(bad, safe, cos)
    return 0.5 * x.shape[-1] * (1.0 - cos.clamp(-1.0, 1.0))


def sign_binarize(x: ArrayLike) -> torch.Tensor:
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
        If an entry is not finite, or ``x`` has no axis or is float16/bfloat16.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7; Goemans & Williamson (1995) and Charikar (2002) (the
    ``theta / pi`` disagreement probability of random hyperplanes).
    """
    x = _real(x, "x")
    return (x > 0).to(torch.uint8)


def expected_sign_hamming(cos: ArrayLike, n: int) -> torch.Tensor:
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
        If ``n < 1``, or a cosine is outside ``[-1, 1]``, not finite, a boolean or a string.

    References
    ----------
    Goemans & Williamson (1995), Lemma 3.2 (random hyperplane rounding); Charikar (2002)
    (SimHash); Bricken & Pehlevan (2021), Eq. 5 and App. B.7 (the comparison it quantifies).
    """
    n = _as_int(n, "n")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    c = torch.as_tensor(_real_array(cos, "cos"), dtype=torch.float64)
    if bool(((c < -1) | (c > 1)).any()):
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    return n * torch.arccos(c) / math.pi


def sign_hamming_correlation(n: int) -> float:
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
