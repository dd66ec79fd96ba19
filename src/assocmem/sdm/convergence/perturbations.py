"""The perturbation protocol of App. B.7: random patterns, perturbed queries, levels.

The authors of Bricken & Pehlevan (2021) store ``uniform(-1, 1)^n`` patterns, binarised by sign
or L2-normalised (:func:`random_patterns`), and query with perturbed copies: exactly ``k``
flipped bits for the binary rules (:func:`perturb_binary`), the cosine ``1 - 2k/n`` that Eq. 5
assigns to ``k`` flipped bits for the continuous ones (:func:`perturb_continuous`), at the
levels ``unique(int(linspace(0, max, 7)))`` (:func:`perturbation_levels`). :func:`make_queries`
draws the queries for a set of targets and redraws those that have another stored pattern
closer than their target (the authors' ``ensure_no_closer_images``, in
``Data_Processing_Associative_Memory.py``). Every draw comes from a seeded CPU generator, so the
queries are the same on every device. Used by the experiment of chapter 36.
"""

from __future__ import annotations

import numpy as np
import torch

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.devices import resolve_device
from assocmem.sdm._common import _generator, _unit_norm
from assocmem.sdm.convergence._common import _as_tensor, _seed_int
from assocmem.sdm.read.patterns import flip_bits, rotate_to_cosine

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "perturbation_levels",
    "perturb_binary",
    "perturb_continuous",
    "random_patterns",
    "make_queries",
]


def perturbation_levels(max_level: int, num: int = 7) -> list[int]:
    """Perturbation levels as the authors chose them: ``unique(int(linspace(0, max, num)))``.

    ``int`` truncates toward zero, so ``max = 375`` gives ``[0, 62, 125, 187, 250, 312, 375]``
    and ``max = 12`` gives ``[0, 2, 4, 6, 8, 10, 12]``.

    Parameters
    ----------
    max_level : int
        Largest perturbation (bits, or the Hamming-equivalent of a cosine), ``>= 0``.
    num : int, default 7
        Number of points before removing duplicates, ``>= 1``.

    Returns
    -------
    list of int
        Sorted, distinct Python ints.

    Raises
    ------
    ValueError
        If ``max_level < 0`` or ``num < 1``.

    References
    ----------
    The authors' ``SDM_Experiments.ipynb`` (``n_perturbs = 7``), in [BP21-code].
    """
    max_level = _as_int(max_level, "max_level")
    num = _as_int(num, "num")
    if max_level < 0:
        raise ValueError(f"max_level must be >= 0, got {max_level}")
    if num < 1:
        raise ValueError(f"num must be >= 1, got {num}")
    return [int(v) for v in np.unique(np.linspace(0, max_level, num).astype(int))]


def perturb_binary(targets: ArrayLike, k: int, seed: int | torch.Generator = 0) -> torch.Tensor:
    """Flip exactly ``k`` distinct, uniformly chosen bits of every target.

    Parameters
    ----------
    targets : torch.Tensor or array_like, shape ``(B, n)``
        Binary vectors.
    k : int
        Bits to flip, ``0 <= k <= n``.
    seed : int or torch.Generator, default 0
        CPU generator (the same queries on every device).
        A generator must be a CPU one; another device's is refused (ValueError).

    Returns
    -------
    torch.Tensor, shape ``(B, n)``, dtype of ``targets``
        At Hamming distance exactly ``k`` from ``targets``.

    Raises
    ------
    ValueError
        On non-binary entries or ``k`` outside ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7; :func:`assocmem.sdm.read.flip_bits`.
    """
    return flip_bits(targets, k, seed=seed)


def perturb_continuous(targets: ArrayLike, k: int | float, seed: int | torch.Generator = 0) -> torch.Tensor:
    """Move each target to cosine ``1 - 2k/n`` along a uniformly random orthogonal direction.

    ``y = c u + sqrt(1 - c^2) w`` with ``u`` the normalised target, ``w`` a uniform unit vector
    orthogonal to ``u`` and ``c = 1 - 2k/n``, the cosine Eq. 5 assigns to ``k`` flipped bits.

    Parameters
    ----------
    targets : torch.Tensor or array_like, shape ``(B, n)``
        Nonzero real vectors, ``n >= 2``.
    k : int or float
        Hamming-equivalent perturbation, ``0 <= k <= n``.
    seed : int or torch.Generator, default 0
        CPU generator for the directions.
        A generator must be a CPU one; another device's is refused (ValueError).

    Returns
    -------
    torch.Tensor, shape ``(B, n)``, float64
        Unit vectors with ``cos(y, target) = 1 - 2k/n`` to rounding (about ``1e-15``).

    Raises
    ------
    ValueError
        If ``k`` is not a real number in ``[0, n]`` (booleans and strings are refused),
        ``n < 2``, or a target is zero, not finite or float16/bfloat16.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (``cosine_perturb_queries``);
    :func:`assocmem.sdm.read.rotate_to_cosine`.
    """
    t = _as_tensor(targets, "targets")
    if t.ndim < 1:
        raise ValueError("targets must have at least one axis")
    n = t.shape[-1]
    try:
        kf = as_real(k, "k")  # no booleans, strings, NaN or infinities
    except ValueError:
        raise ValueError(f"k must be a number in [0, n] = [0, {n}], got {k!r}") from None
    if not 0 <= kf <= n:
        raise ValueError(f"k must be a number in [0, n] = [0, {n}], got {k!r}")
    return rotate_to_cosine(t.to(torch.float64), 1.0 - 2.0 * kf / n, seed=seed)


def random_patterns(m: int, n: int, seed: int | torch.Generator = 0,
                    device: str | torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The authors' random patterns: ``uniform(-1, 1)^n``, binarised by sign and L2-normalised.

    Parameters
    ----------
    m : int
        Number of patterns, ``>= 1``.
    n : int
        Dimension, ``>= 2``.
    seed : int or torch.Generator, default 0
        CPU generator (the same patterns on every device).
        A generator must be a CPU one; another device's is refused (ValueError).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    binary : torch.Tensor, shape ``(m, n)``, uint8
        ``1[x > 0]``.
    continuous : torch.Tensor, shape ``(m, n)``, float64
        ``x / |x|``.

    Raises
    ------
    ValueError
        If ``m < 1`` or ``n < 2``, or ``seed`` is not an integer in ``[-2^63, 2^64 - 1]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (``np.random.uniform(-1, 1, (m, n))``).
    """
    m, n = _as_int(m, "m"), _as_int(n, "n")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    x = torch.rand((m, n), generator=_generator(seed), dtype=torch.float64) * 2.0 - 1.0
    dev = resolve_device(device, dtype=torch.float64)  # the continuous patterns are float64
    return (x > 0).to(torch.uint8).to(dev), (x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)).to(dev)


def make_queries(patterns_binary: torch.Tensor | None, patterns_continuous: torch.Tensor | None,
                 targets: ArrayLike, k: int, seed: int = 0, *, ensure_closest: bool = True,
                 max_attempts: int = 10) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Perturbed queries for a set of targets, redrawn until each target is still the closest.

    Parameters
    ----------
    patterns_binary : torch.Tensor or None, shape ``(m, n)``
        Stored binary patterns (None: no binary queries).
    patterns_continuous : torch.Tensor or None, shape ``(m, n)``
        Stored unit patterns (None: no continuous queries).
    targets : array_like of int, shape ``(B,)``
        Row indices of the targets.
    k : int
        Perturbation level (bits), ``0 <= k <= n``.
    seed : int, default 0
        Seed; the binary and continuous queries use independent streams derived from it.
    ensure_closest : bool, default True
        Redraw (only) the queries with another stored pattern strictly closer than the target:
        binary, Hamming distance ``< k``; continuous, cosine above ``1 - 2k/n + 1e-5`` (the
        authors' tolerance). Ties are allowed, as in the authors' check.
    max_attempts : int, default 10
        Redraw rounds before giving up.

    Returns
    -------
    binary : torch.Tensor or None, shape ``(B, n)``, uint8
    continuous : torch.Tensor or None, shape ``(B, n)``, float64

    Raises
    ------
    ValueError
        On inconsistent shapes, targets that are not integer row indices in range (floats and
        booleans are refused, not truncated), an out-of-range ``k``, continuous patterns with
        non-finite entries or zero rows, or float16/bfloat16 patterns.
    RuntimeError
        If some query still has a closer pattern after ``max_attempts`` rounds.

    References
    ----------
    The authors' ``Data_Processing_Associative_Memory.py`` (``ensure_no_closer_images``).
    """
    raw = np.asarray(targets)
    if raw.size and not (np.issubdtype(raw.dtype, np.integer) or raw.dtype == object):
        # np.asarray(..., int64) would truncate 0.7 to 0 and read True as 1
        raise ValueError(f"targets must be integer row indices, got an array of dtype {raw.dtype}")
    idx = torch.as_tensor(np.array([_as_int(v, "targets") for v in raw.ravel()], dtype=np.int64)
                          .reshape(raw.shape) if raw.dtype == object else raw.astype(np.int64))
    if idx.ndim != 1:
        raise ValueError(f"targets must be a 1-D array of row indices, got shape {tuple(idx.shape)}")
    max_attempts = _as_int(max_attempts, "max_attempts")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    base = _as_int(seed, "seed")
    out = []
    for kind, pats in (("binary", patterns_binary), ("continuous", patterns_continuous)):
        if pats is None:
            out.append(None)
            continue
        pats = _as_tensor(pats, f"patterns_{kind}").cpu()
        if pats.ndim != 2:
            raise ValueError(f"patterns_{kind} must have shape (m, n), got {tuple(pats.shape)}")
        if kind == "continuous":  # a NaN or zero row would become NaN and never be "closer"
            pf = pats.to(torch.float64)
            if pf.numel() and not bool(torch.isfinite(pf).all()):
                raise ValueError("patterns_continuous must have finite entries")
            if bool((_unit_norm(pf) == 0).any()):
                raise ValueError("patterns_continuous has a zero row, which cannot be L2-normalised")
        m, n = pats.shape
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= m):
            raise ValueError(f"targets must index rows 0..{m - 1}")
        kk = _as_int(k, "k")
        if kk < 0 or kk > n:
            raise ValueError(f"k must lie in [0, n] = [0, {n}], got {kk}")
        gen = torch.Generator().manual_seed(_seed_int(base, 0 if kind == "binary" else 1))
        tgt = pats[idx]
        if kind == "binary":
            q = perturb_binary(tgt, kk, seed=gen)
        else:
            pf = pats.to(torch.float64)
            pats = pf / _unit_norm(pf)
            tgt = pats[idx]
            q = perturb_continuous(tgt, kk, seed=gen)
        if ensure_closest and kk > 0 and idx.numel():
            for _attempt in range(max_attempts + 1):
                bad = _closer_exists(q, pats, kk, kind)
                if not bool(bad.any()):
                    break
                if _attempt == max_attempts:
                    raise RuntimeError(f"{int(bad.sum())} {kind} queries at perturbation {kk} still "
                                       f"have a stored pattern closer than their target after "
                                       f"{max_attempts} redraws")
                sel = torch.nonzero(bad).squeeze(-1)
                redo = perturb_binary(tgt[sel], kk, seed=gen) if kind == "binary" \
                    else perturb_continuous(tgt[sel], kk, seed=gen)
                q[sel] = redo.to(q.dtype)
        out.append(q)
    return out[0], out[1]


def _closer_exists(q: torch.Tensor, pats: torch.Tensor, k: int, kind: str) -> torch.Tensor:
    if kind == "binary":
        qf, pf = q.to(torch.float64), pats.to(torch.float64)
        dist = qf.sum(-1, keepdim=True) + pf.sum(-1) - 2.0 * (qf @ pf.T)
        return dist.amin(-1) < k - 0.5
    c = 1.0 - 2.0 * k / q.shape[-1]
    cos = q @ pats.T
    return cos.amax(-1) > c + 1e-5
