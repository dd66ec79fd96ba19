"""Random binary patterns and perturbed queries: exact bit flips and rotations to a set cosine.

The analyses of Bricken & Pehlevan (2021) store patterns uniform on ``{0, 1}^n`` (§1; random
neurons have such addresses too): :func:`random_binary_patterns`. Their convergence experiments
(App. B.7) query the memory with perturbed copies of stored patterns: binary queries with exactly
``k`` bits flipped (:func:`flip_bits`), continuous ones moved to a prescribed cosine along a
uniformly random direction orthogonal to the target (:func:`rotate_to_cosine`). Every draw comes
from a seeded CPU generator, so a seed gives the same patterns on every device. Used by chapters
30 and 35, and by the convergence and learnt-projection experiments of chapter 36
(:mod:`assocmem.sdm.convergence`, :mod:`assocmem.sdm.projections`).
"""

from __future__ import annotations

import torch

from assocmem.devices import resolve_device
from assocmem.sdm._common import _as_int, _binary, _generator, _real_array, _unit_norm
from assocmem.sdm.read._checks import _real

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "random_binary_patterns",
    "flip_bits",
    "rotate_to_cosine",
]


def random_binary_patterns(m: int, n: int, seed: int | torch.Generator = 0,
                           device: str | torch.device | None = None) -> torch.Tensor:
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
        A generator must be a CPU one; another device's is refused (ValueError).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where the result lives (``"auto"``: CUDA, then MPS, then CPU).

    Returns
    -------
    torch.Tensor, shape ``(m, n)``, dtype uint8

    Raises
    ------
    ValueError
        If ``m < 0`` or ``n < 1``, or ``seed`` is not an integer in ``[-2^63, 2^64 - 1]``.

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


def flip_bits(x: ArrayLike, k: int, seed: int | torch.Generator = 0) -> torch.Tensor:
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
        A generator must be a CPU one; another device's is refused (ValueError).

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, dtype of ``x`` (uint8 for bool input), on ``x``'s device

    Raises
    ------
    ValueError
        If an entry is not 0 or 1, ``x`` is float16/bfloat16, or ``k`` is outside ``[0, n]``.

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


def rotate_to_cosine(x: ArrayLike, cos: float | torch.Tensor,
                     seed: int | torch.Generator = 0) -> torch.Tensor:
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
        A generator must be a CPU one; another device's is refused (ValueError).

    Returns
    -------
    torch.Tensor, shape ``(..., n)``, float64 unless ``x`` has another floating dtype
        Unit vectors with ``cos(x, y) = cos`` up to rounding.

    Raises
    ------
    ValueError
        If ``n < 2``, a vector is zero, an entry is not finite, ``x`` is float16/bfloat16, a
        cosine is outside ``[-1, 1]``, not finite, a boolean or a string, or ``cos`` does not
        broadcast to ``x.shape[:-1]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (continuous perturbations move the query to a set cosine
    along a random orthogonal direction).
    """
    x = _real(x, "x")
    n = x.shape[-1]
    if n < 2:
        raise ValueError(f"rotate_to_cosine needs n >= 2, got n = {n}")
    norm = _unit_norm(x)
    if bool((norm == 0).any()):
        raise ValueError("rotate_to_cosine needs nonzero vectors")
    c = torch.as_tensor(_real_array(cos, "cos"), dtype=x.dtype, device=x.device)
    if bool(((c < -1) | (c > 1)).any()):
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    try:
        torch.broadcast_shapes(c.shape, x.shape[:-1])
    except RuntimeError:
        raise ValueError(f"cos of shape {tuple(c.shape)} does not broadcast to x.shape[:-1] = "
                         f"{tuple(x.shape[:-1])}") from None
    u = x / norm
    g = torch.randn(x.shape, generator=_generator(seed), dtype=torch.float64).to(x)
    w = g - (g * u).sum(-1, keepdim=True) * u
    w = w / torch.linalg.vector_norm(w, dim=-1, keepdim=True)
    c = c.unsqueeze(-1) if c.ndim else c
    return c * u + torch.sqrt(1.0 - c * c) * w
