"""One vector as query, key and value: two diagnostics of the score matrix ``A = Q K^T``.

Seed §1 asks what goes wrong when a token uses the same vector ``x`` for all three jobs: the score
is symmetric (``x_t^T x_i = x_i^T x_t``) and a token scores highest against itself or tokens that
resemble it (Cauchy-Schwarz). :func:`self_top_rate` measures the second, :func:`score_asymmetry`
the first; separate query and key maps remove both. (Tying the query and key maps is what Kitaev
et al. 2020 call shared-QK attention.) Chapter 01 ("From attention to a matrix") uses them.

References
----------
Seed 000 ("How much can a matrix remember?"), §1.
Kitaev, N., Kaiser, L., & Levskaya, A. (2020). Reformer: the efficient transformer. ICLR.
"""

from __future__ import annotations

import math

import torch

from assocmem.linear.attention._common import _check_qkv

__all__ = [
    "self_top_rate",
    "score_asymmetry",
]


def _check_square_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The score matrix ``Q K^T`` of checked ``q``, ``k``; float64 if it overflows their dtype."""
    for name, x in (("q", q), ("k", k)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (..., T, d); got q {tuple(q.shape)}, k {tuple(k.shape)}")
    _check_qkv(q, k, k, causal=True, names=("q", "k", "k"))  # dtype (float32/float64), device, finite
    A = q @ k.transpose(-2, -1)  # (..., T, T)
    if not bool(torch.isfinite(A).all()):  # finite q, k whose scores overflow float32
        A = q.double() @ k.double().transpose(-2, -1)
        if not bool(torch.isfinite(A).all()):
            raise ValueError("the scores q^T k overflow torch.float64 although q and k are finite; rescale q or k")
    return A


def self_top_rate(q: torch.Tensor, k: torch.Tensor) -> float:
    """Fraction of positions whose own key scores at least as high as every other key.

    Position ``t`` counts when ``q_t^T k_t >= q_t^T k_i`` for all ``i`` (non-causal: all ``T``
    keys compete; ties count for ``t``). When the query and key are the same unit vector
    (``q = k = x``) the rate is 1 by the Cauchy-Schwarz inequality: a token finds itself, or an
    exact copy, first (seed §1).

    Parameters
    ----------
    q, k : torch.Tensor, shape ``(..., T, d)``
        Queries and keys, same shape and dtype.

    Returns
    -------
    float
        In ``[0, 1]``, averaged over positions and leading dimensions.

    Raises
    ------
    ValueError
        If ``q`` and ``k`` are not tensors of the same shape ``(..., T, d)``, are not float32 or
        float64 (float16 and bfloat16 are refused), hold a NaN or infinity, have no positions
        (``T = 0`` or an empty batch: a fraction of nothing is undefined), or have scores beyond
        float64's range.

    References
    ----------
    Seed §1 ("a token scores highest against tokens that resemble itself").
    """
    scores = _check_square_scores(q, k)  # (..., T, T)
    if scores.numel() == 0:
        raise ValueError(f"self_top_rate needs at least one position; got q and k of shape {tuple(q.shape)}")
    own = scores.diagonal(dim1=-2, dim2=-1)  # (..., T)
    return float((own >= scores.amax(dim=-1)).to(torch.float64).mean())


def score_asymmetry(q: torch.Tensor, k: torch.Tensor) -> float:
    """Relative asymmetry ``||A - A^T||_F / ||A||_F`` of the score matrix ``A = Q K^T``.

    Zero when queries and keys are the same vectors: then ``x_t^T x_i = x_i^T x_t``, and if
    ``t`` finds ``i`` then ``i`` finds ``t`` equally well (seed §1). Separate query and key maps
    make it order one.

    Parameters
    ----------
    q, k : torch.Tensor, shape ``(..., T, d)``
        Queries and keys, same shape and dtype.

    Returns
    -------
    float
        ``0`` for a symmetric score matrix (up to rounding), at most 2.

    Raises
    ------
    ValueError
        If ``q`` and ``k`` are not tensors of the same shape ``(..., T, d)``, are not float32 or
        float64 (float16 and bfloat16 are refused), hold a NaN or infinity, or have scores
        beyond float64's range.

    References
    ----------
    Seed §1 ("the score is symmetric").
    """
    A = _check_square_scores(q, k)  # (..., T, T)
    norm = float(torch.linalg.matrix_norm(A).square().sum().sqrt())
    if norm == 0:
        return 0.0
    out = float(torch.linalg.matrix_norm(A - A.transpose(-2, -1)).square().sum().sqrt()) / norm
    if math.isfinite(out) and math.isfinite(norm):
        return out
    # Norms of huge scores overflow (or A - A^T does): the ratio is scale-free, so compute it on
    # A scaled by a power of two (exact) in float64.
    A = A.double()
    _, e = torch.frexp(A.abs().amax())
    A = torch.ldexp(A, -e)
    norm = float(torch.linalg.matrix_norm(A).square().sum().sqrt())
    return float(torch.linalg.matrix_norm(A - A.transpose(-2, -1)).square().sum().sqrt()) / norm
