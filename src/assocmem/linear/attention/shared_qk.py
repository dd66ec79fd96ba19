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

import torch

__all__ = [
    "self_top_rate",
    "score_asymmetry",
]


def _check_square_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (..., T, d); got q {tuple(q.shape)}, k {tuple(k.shape)}")
    return q @ k.transpose(-2, -1)  # (..., T, T)


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
        If ``q`` and ``k`` do not have the same shape ``(..., T, d)``.

    References
    ----------
    Seed §1 ("a token scores highest against tokens that resemble itself").
    """
    scores = _check_square_scores(q, k)  # (..., T, T)
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
        If ``q`` and ``k`` do not have the same shape ``(..., T, d)``.

    References
    ----------
    Seed §1 ("the score is symmetric").
    """
    A = _check_square_scores(q, k)  # (..., T, T)
    norm = float(torch.linalg.matrix_norm(A).square().sum().sqrt())
    if norm == 0:
        return 0.0
    return float(torch.linalg.matrix_norm(A - A.transpose(-2, -1)).square().sum().sqrt()) / norm
