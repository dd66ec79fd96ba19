"""The SDM read in the pattern view (Eq. 1): circle-intersection weights and the majority rule.

Exchanging the sums over neurons and over patterns in Kanerva's read gives the pattern view of
Bricken & Pehlevan (2021), Eq. 1: ``xi_new = g(sum_mu w_mu p_p^mu / sum_mu w_mu)``, where the
weight ``w_mu`` of pattern ``mu`` is the number of neurons within ``d`` of both the query and the
pattern address. With a neuron at every address (``r = 2^n``) it is the circle intersection
``I(d(p_a^mu, xi), d, n)`` of Eq. 2, and ``g(e) = 1[e > 1/2]`` is the majority threshold of
Kanerva (1988, Ch. 7). :func:`sdm_weights` computes the weights (the exact intersection, in log
space where it exceeds ``2^53``, or any table of weights by distance), :func:`sdm_read` the read,
:func:`majority` the threshold, and :data:`EMPTY_POLICIES` lists what a read whose weights are
all zero returns (NaN by default; the query, as the authors' convergence code does; or an
error). Chapters 30 and 35 use it; with explicit neurons the same read is
:class:`assocmem.sdm.read.neuron_view.NeuronSDM`.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import torch

from assocmem.sdm._common import _as_tensor, _binary, _finish_read, _majority
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.read._checks import _check_memory, _check_radius, _real
from assocmem.sdm.read.hamming import _pairwise

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "EMPTY_POLICIES",
    "majority",
    "sdm_weights",
    "sdm_read",
]

#: What :func:`sdm_read` and :meth:`NeuronSDM.read` return for a query whose weights are all zero.
EMPTY_POLICIES = ("nan", "query", "raise")
_EXACT = 2**53  # integers up to here are exact in float64


def _check_empty_policy(empty: str) -> None:
    if empty not in EMPTY_POLICIES:
        raise ValueError(f"empty must be one of {EMPTY_POLICIES}, got {empty!r}")


def majority(x: ArrayLike) -> torch.Tensor:
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

    Raises
    ------
    ValueError
        If ``x`` is not array-like (a string, say) or is float16/bfloat16.

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


def sdm_weights(query: ArrayLike, addresses: ArrayLike, d: int,
                weights: str | ArrayLike = "intersection", normalize: bool = True) -> torch.Tensor:
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
        On non-binary entries, float16/bfloat16 inputs, shape mismatch, ``d`` outside ``[0, n]``,
        an empty memory (``m = 0``), an unknown ``weights`` or a table with negative or
        non-finite entries, or ``normalize=False`` where ``I`` exceeds ``2^53``.

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


def sdm_read(query: ArrayLike, addresses: ArrayLike, pointers: ArrayLike, d: int,
             weights: str | ArrayLike = "intersection", threshold: bool = False,
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
    torch.Tensor, shape ``(..., n_p)``
        The reads; with ``empty="nan"`` (the default) the rows of empty reads are NaN.
        Computed in float64 (exact counts), returned in the query's dtype if it is floating
        point, else in torch's default dtype.

    Raises
    ------
    ValueError
        On non-binary query or addresses, float16/bfloat16 inputs, shape mismatch, ``d`` outside
        ``[0, n]``, an empty memory, an unknown ``weights`` or ``empty``, non-finite pointers, or
        an all-zero row with ``empty="raise"``.

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
