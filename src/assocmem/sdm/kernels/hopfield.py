"""The Hopfield network as a special case of SDM (App. B.6), and where the two differ.

Bricken & Pehlevan (2021), App. B.6, reach the Hopfield update ``xi <- sign(P P^T xi)``
(Hopfield 1982) from SDM by a chain of changes: neurons at the pattern addresses with write
radius 0, no read threshold, and the raw bipolar dot product ``n - 2 d`` in place of a neuron's
activation, which drops the normaliser and turns the majority ``g`` into the sign. Only the
first change is a parameter setting of SDM (seed 002, claim C9). This module computes the
Hopfield field and update (:func:`hopfield_field`, :func:`hopfield_update`, :func:`sign_keep`),
App. B.6's chain literally (:func:`app_b6_field`), the Hopfield field as a pattern-view SDM read
over a mirrored memory (:func:`hopfield_field_as_sdm`), and the SDM that the parameter change
reaches, neurons at the patterns with write radius 0 (:func:`keeler_sdm_read`; Keeler 1988).
Side-by-side experiments show where they part: iterated retrieval from noisy queries
(:func:`iterate_reads`, :func:`compare_retrieval`), agreement after one step
(:func:`one_step_agreement`) and the unanimity of the patterns that an SDM read keeps and a
Hopfield update can break (:func:`unanimity_violations`). Used by chapter 35.
"""

from __future__ import annotations

import math
from typing import Callable

import pandas as pd
import torch

from assocmem._checks import as_int as _as_int
from assocmem.sdm._common import _as_tensor, _binary
from assocmem.sdm.kernels._common import _check_d
from assocmem.sdm.kernels.random_features import sdm_as_linear_attention
from assocmem.sdm.read.hamming import bipolar
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.sdm.read.pattern_view import sdm_read, sdm_weights
from assocmem.sdm.read.patterns import flip_bits, random_binary_patterns

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Iterable, Mapping

__all__ = [
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


def sign_keep(field: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    """``sign(field)``, keeping the current bipolar value where the field is exactly 0.

    Parameters
    ----------
    field, current : torch.Tensor, same shape
        The local field and the current ``+-1`` state.

    Returns
    -------
    torch.Tensor, float64, entries ``+-1``

    Raises
    ------
    ValueError
        If ``field`` has NaN entries (whose sign is undefined), ``current`` has an entry other
        than ``+-1`` or a shape other than ``field``'s, or an input is float16/bfloat16.
    """
    field = _as_tensor(field, "field").to(torch.float64)
    current = _as_tensor(current, "current").to(device=field.device, dtype=torch.float64)
    if current.shape != field.shape:
        raise ValueError(f"current must have the shape of field, {tuple(field.shape)} (one state per "
                         f"unit); got {tuple(current.shape)}")
    if field.numel() and bool(torch.isnan(field).any()):
        raise ValueError("field has NaN entries; its sign is undefined")
    if current.numel() and not bool(((current == 1) | (current == -1)).all()):
        raise ValueError("current must be a bipolar state (every entry +1 or -1): a unit with zero "
                         "field keeps it, and the result must stay +-1")
    return torch.where(field > 0, 1.0, torch.where(field < 0, -1.0, current)).to(torch.float64)


def _check_patterns(P: torch.Tensor) -> torch.Tensor:
    if P.ndim != 2 or P.shape[0] < 1 or P.shape[1] < 1:
        raise ValueError(f"patterns must have shape (m, n) with m, n >= 1, got {tuple(P.shape)}")
    return P


def _bipolar_rows(x, name: str) -> torch.Tensor:
    x = _as_tensor(x, name).to(torch.float64)
    if x.ndim < 1 or x.numel() == 0 or not bool(((x == 1) | (x == -1)).all()):
        raise ValueError(f"{name} must be a nonempty +-1 (bipolar) tensor")
    return x


def hopfield_field(patterns: ArrayLike, xi: ArrayLike) -> torch.Tensor:
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


def hopfield_update(patterns: ArrayLike, xi: ArrayLike, steps: int = 1,
                    zero_diagonal: bool = False) -> torch.Tensor:
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


def app_b6_field(patterns: ArrayLike, query: ArrayLike) -> torch.Tensor:
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
        On non-binary or float16/bfloat16 input, empty ``patterns`` or mismatched ``n``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6; Keeler (1988); seed 002, claim C9.
    """
    P = _check_patterns(_binary(patterns, "patterns"))
    q = _binary(query, "query").to(P.device)
    if q.shape[-1] != P.shape[1]:
        raise ValueError(f"query must have n = {P.shape[1]} bits (last axis), got shape {tuple(q.shape)}")
    mem = NeuronSDM.from_addresses(P, d=0, device=P.device).write(P, bipolar(P, normalize=False))
    weights = bipolar(q, normalize=False) @ bipolar(mem.neuron_addresses, normalize=False).T  # (..., r)
    return weights @ mem.storage  # (..., n)


def hopfield_field_as_sdm(patterns: ArrayLike, query: ArrayLike) -> torch.Tensor:
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

    Raises
    ------
    ValueError
        On non-binary or float16/bfloat16 input, empty ``patterns`` or mismatched ``n``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1 and App. B.6.
    """
    P = _check_patterns(_binary(patterns, "patterns")).to(torch.uint8)
    q = _binary(query, "query").to(P.device)
    n = P.shape[1]
    mirrored = torch.cat([P, 1 - P])  # (2m, n)
    table = torch.clamp(n - 2.0 * torch.arange(n + 1, dtype=torch.float64), min=0.0)  # (n + 1,)
    w = sdm_weights(q, mirrored, 0, weights=table, normalize=False)  # (..., 2m)
    return w @ bipolar(mirrored, normalize=False)


def keeler_sdm_read(patterns: ArrayLike, query: ArrayLike, d_read: int, threshold: bool = True,
                    empty: str = "nan") -> torch.Tensor:
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

    Raises
    ------
    ValueError
        On non-binary or float16/bfloat16 input, empty ``patterns``, mismatched ``n``, ``d_read``
        outside ``[0, n]``, an unknown ``empty`` or an empty read with ``empty="raise"``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6; Keeler (1988).
    """
    P = _check_patterns(_binary(patterns, "patterns"))
    return sdm_as_linear_attention(query, P, P.to(torch.float64), P, 0, d_read=d_read,
                                   threshold=threshold, empty=empty)


def iterate_reads(read: Callable[[torch.Tensor], torch.Tensor], x0: torch.Tensor,
                  max_steps: int = 100) -> tuple[torch.Tensor, int]:
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

    Raises
    ------
    ValueError
        If ``max_steps`` is not an integer ``>= 0``.
    """
    max_steps = _as_int(max_steps, "max_steps")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    x = x0
    steps = 0
    for _ in range(max_steps):
        new = read(x)
        steps += 1
        if torch.equal(new, x):
            break
        x = new
    return x, steps


def compare_retrieval(n: int, m: int, flips: Iterable[int], d: int, d_read: int, queries: int,
                      max_steps: int = 100, seed: int = 0) -> pd.DataFrame:
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

    Raises
    ------
    ValueError
        If ``n``, ``m`` or ``queries`` is below 1, ``d`` or ``d_read`` is outside ``[0, n]``, a
        level of ``flips`` is outside ``[0, n]``, or ``max_steps < 0``; all checked before any
        read.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6 and App. B.7 (convergence experiments).
    """
    n, m, queries = _as_int(n, "n"), _as_int(m, "m"), _as_int(queries, "queries")
    if n < 1 or m < 1 or queries < 1:
        raise ValueError(f"need n >= 1, m >= 1 and queries >= 1 (a mean over no query is NaN); got "
                         f"n = {n}, m = {m}, queries = {queries}")
    d, d_read = _check_d(d, n), _check_d(d_read, n)
    max_steps = _as_int(max_steps, "max_steps")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    seed = _as_int(seed, "seed")
    if isinstance(flips, (str, bytes)) or not hasattr(flips, "__iter__"):
        raise ValueError(f"flips must be an iterable of bit counts, got {flips!r}")
    flips = [_as_int(k, "flips") for k in flips]
    if any(k < 0 or k > n for k in flips):
        raise ValueError(f"flips must lie in [0, n] = [0, {n}], got {flips}")
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
        start = flip_bits(targets, k, seed=seed * 1000 + k + 1)  # (Q, n)
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


def one_step_agreement(patterns: torch.Tensor,
                       queries: torch.Tensor | Mapping[str, torch.Tensor]) -> pd.DataFrame:
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

    Raises
    ------
    ValueError
        On non-binary input, ``patterns`` not ``(m, n)`` with ``m >= 1``, an empty ``queries``
        (no set, or a set with no row: its fractions would be NaN) or a set whose ``n`` differs.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.6; seed 002, claim C9.
    """
    P = _binary(patterns, "patterns")
    if P.ndim != 2 or P.shape[0] < 1:
        raise ValueError(f"patterns must have shape (m, n) with m >= 1, got {tuple(P.shape)}")
    sets = queries if isinstance(queries, dict) else {"all": queries}
    if not sets:
        raise ValueError("queries is empty")
    names, blocks = list(sets), [_binary(q, f"queries[{k!r}]").to(P.device) for k, q in sets.items()]
    for k, b in zip(names, blocks):
        if b.ndim != 2 or b.shape[1] != P.shape[1] or b.shape[0] < 1:
            raise ValueError(f"queries[{k!r}] must have shape (Q, n) = (Q, {P.shape[1]}) with Q >= 1 "
                             f"(the fraction of no query is undefined), got {tuple(b.shape)}")
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


def unanimity_violations(outputs: torch.Tensor, patterns: torch.Tensor) -> torch.Tensor:
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

    Raises
    ------
    ValueError
        On non-binary patterns, float16/bfloat16 input or a last axis of ``outputs`` other
        than ``n``.

    References
    ----------
    Seed 002, claim C9 (a change of rule, not a parameter setting).
    """
    P = _binary(patterns, "patterns").to(torch.float64)
    out = _as_tensor(outputs, "outputs").to(device=P.device, dtype=torch.float64)
    if P.ndim != 2 or out.ndim < 1 or out.shape[-1] != P.shape[1]:
        raise ValueError(f"outputs (Q, n) and patterns (m, n) must share n, got {tuple(out.shape)} "
                         f"and {tuple(P.shape)}")
    all_one = (P == 1).all(0)  # (n,)
    all_zero = (P == 0).all(0)
    bad = (all_one & (out == 0)) | (all_zero & (out == 1))  # NaN compares False
    return bad.sum(-1)
