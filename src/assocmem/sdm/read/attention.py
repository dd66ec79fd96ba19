"""Softmax attention in SDM notation (Eq. 4): the right-hand side of "attention approximates SDM".

Bricken & Pehlevan (2021), Eq. 4, write attention with the pattern addresses as keys, the
pointers as values and the read address as the query, ``xi_new = P_p softmax(beta P_a^T xi)``.
With queries and keys L2-normalised (the hats of Eq. 6; the Query-Key Normalisation of Henry et
al. 2020) and ``beta`` fitted to the circle intersection (Eq. 10), this is the approximation to
the SDM read of Eq. 1 that the paper studies: :func:`attention_weights`,
:func:`attention_read`. Chapters 30 and 35 compare it with the pattern view
(:mod:`assocmem.sdm.read.pattern_view`).
"""

from __future__ import annotations

import math
from numbers import Real

import torch

from assocmem.sdm.read._checks import _check_memory, _real

__all__ = [
    "attention_weights",
    "attention_read",
]


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
