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

from typing import TYPE_CHECKING

import torch

from assocmem._checks import as_real
from assocmem.dtypes import cast_checked
from assocmem.sdm._common import _as_tensor, _unit_norm
from assocmem.sdm.read._checks import _check_memory, _real

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "attention_weights",
    "attention_read",
]


def _check_beta(beta) -> float:
    return as_real(beta, "beta")


def _not_bits(x, name: str) -> torch.Tensor:
    """``x`` as a tensor, refused if it holds SDM bit patterns: a bool or integer dtype, every entry 0 or 1.

    The cosine of two 0/1 vectors is not the cosine of their bipolar images (Eq. 5), the
    similarity ``beta`` is fitted on; a float tensor is taken as the real vectors it holds.
    """
    t = _as_tensor(x, name)
    integral = t.dtype == torch.bool or not (t.is_floating_point() or t.is_complex())
    if integral and t.numel() and bool(((t == 0) | (t == 1)).all()):
        raise ValueError(
            f"{name} holds 0/1 bit patterns (dtype {t.dtype}); their cosine is not the cosine of the "
            f"bipolar vectors (Eq. 5) that beta is fitted on. Pass bipolar({name}) "
            f"(assocmem.sdm.bipolar, (2 x - 1) / sqrt(n)), or {name}.double() if the 0/1 vectors are "
            "meant as real vectors")
    return t


def _unit(x: torch.Tensor, name: str) -> torch.Tensor:
    norm = _unit_norm(x)
    if bool((norm == 0).any()):
        raise ValueError(f"{name} has a zero vector, which cannot be L2-normalised")
    return x / norm


def _stable_softmax(beta: float, scores: torch.Tensor) -> torch.Tensor:
    """``softmax(beta * scores)`` over the last axis, never NaN for finite ``beta`` and scores.

    ``torch.softmax`` subtracts the row maximum itself, so while ``beta * scores`` is finite it is
    used as is (bit for bit the plain softmax). Where the product overflows (a large ``beta``,
    or float32 above ``3.4e38``) the shift is applied before the multiplication, in float64,
    ``softmax(beta (s - c))`` with ``c`` the row's max (``beta > 0``) or min (``beta < 0``), whose
    largest entry is exactly 0: the limit of the softmax, with no ``inf - inf``.
    """
    if scores.numel() and not bool(torch.isfinite(scores).all()):
        raise ValueError(f"the scores query @ keys.T overflow {scores.dtype} (largest finite value "
                         f"{torch.finfo(scores.dtype).max:.2g}); rescale the inputs, normalise them "
                         "or use torch.float64")
    z = beta * scores
    if not z.numel() or bool(torch.isfinite(z).all()):
        return torch.softmax(z, dim=-1)
    ref = scores.amax(-1, keepdim=True) if beta > 0 else scores.amin(-1, keepdim=True)
    # in float64, where beta itself is finite (a float32 beta of 1e39 would be inf, and inf * 0
    # NaN); the differences are <= 0 and the largest is 0, so nothing overflows upwards
    diff = scores - ref
    if diff.device.type == "mps":  # no float64 on MPS: this rare path runs on the CPU
        diff = diff.cpu()
    shifted = beta * diff.to(torch.float64)
    return torch.softmax(shifted, dim=-1).to(device=scores.device, dtype=scores.dtype)


def attention_weights(query: ArrayLike, keys: ArrayLike, beta: float,
                      normalize: bool = True) -> torch.Tensor:
    """Softmax attention weights in SDM notation, ``softmax(beta P_a^T xi)`` (Eq. 4).

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Queries ``xi``, real vectors: pass :func:`bipolar` of binary queries. A bool or integer
        tensor of 0/1 entries (the patterns of :func:`random_binary_patterns`) is refused, not
        read as the real 0/1 vector: its cosines are not Eq. 5's. (Cast it to float to mean that.)
    keys : torch.Tensor or array_like, shape ``(m, n)``
        Keys = pattern addresses ``p_a^mu``, one per row, ``m >= 1``; real, as ``query``.
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
        floating dtype. Never NaN: a ``beta`` so large that ``beta * scores`` overflows gives
        the limit of the softmax (all weight on the largest scores).

    Raises
    ------
    ValueError
        On 0/1 bit patterns of a bool or integer dtype as ``query`` or ``keys`` (the message names
        :func:`bipolar`), shape mismatch, an empty memory, non-finite entries or ``beta`` (also a
        boolean or a string), a zero vector with ``normalize=True``, float16/bfloat16 inputs (the dtype
        policy of :mod:`assocmem.dtypes`), keys that overflow the query's dtype when cast to it,
        or scores ``query @ keys.T`` that overflow (``normalize=False`` with huge entries).

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 (attention with keys ``P_a``, values ``P_p``, query ``xi``)
    and Eq. 6 (normalised queries and keys); Henry et al. (2020) (QK-norm).
    """
    query = _real(_not_bits(query, "query"), "query")
    keys = cast_checked(_real(_not_bits(keys, "keys"), "keys").to(device=query.device), query.dtype, "keys")
    _check_memory(keys, None, query.shape[-1], names=("keys", "values"))
    b = _check_beta(beta)
    if normalize:
        query, keys = _unit(query, "query"), _unit(keys, "keys")
    return _stable_softmax(b, query @ keys.T)  # (..., m)


def attention_read(query: ArrayLike, keys: ArrayLike, values: ArrayLike, beta: float,
                   normalize: bool = True) -> torch.Tensor:
    """Softmax attention in SDM notation, ``xi_new = P_p softmax(beta P_a^T xi)`` (Eq. 4).

    Keys are the pattern addresses, values the pointers, and the query the read address. With
    ``normalize=True`` and ``beta`` fitted to the circle intersection this is the right-hand
    side of the paper's approximation (Eq. 6) to :func:`sdm_read`. Apply :func:`majority` to
    compare with a thresholded binary read (the paper's ``Binary_SDM_BFit_Attention``).

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Queries ``xi``, real vectors (:func:`bipolar` of binary queries; 0/1 patterns of a bool
        or integer dtype are refused, as in :func:`attention_weights`).
    keys : torch.Tensor or array_like, shape ``(m, n)``
        Keys (pattern addresses), ``m >= 1``; real, as ``query``.
    values : torch.Tensor or array_like, shape ``(m, n_p)``
        Values (pattern pointers); 0/1 pointers are fine here (the read averages them).
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
        As :func:`attention_weights`, or if ``values`` does not have ``m`` rows, has
        non-finite entries, or overflows the query's dtype when cast to it.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 4 and Eq. 6; Vaswani et al. (2017).
    """
    w = attention_weights(query, keys, beta, normalize=normalize)  # (..., m)
    values = cast_checked(_real(values, "values").to(device=w.device), w.dtype, "values")
    if values.ndim != 2 or values.shape[0] != w.shape[-1]:
        raise ValueError(f"values must have shape (m, n_p) with m = {w.shape[-1]}, got "
                         f"{tuple(values.shape)}")
    return w @ values  # (..., n_p)
