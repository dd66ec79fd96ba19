"""Capacity sweeps of Part II: the fewest parameters with which each MLP memory stores every fact.

For a tied fact set of ``F`` facts in dimension ``d`` (the load is ``alpha = F / d^2``), the
*capacity search* asks for the smallest hidden width ``m`` in ``[1, 65536]`` at which a memory
recalls every fact (accuracy 100 %, argmax over every value row), and reports ``W = 3 m d``
parameters (seed 001, Sec. 4.3 and App. A.3.1). Five memories are compared:

``gd``              bilinear gated MLP trained by full-batch Adam (:func:`assocmem.mlps.mlp.train_mlp`)
``ntk``             degree-1 Hermite (NTK) construction (:func:`assocmem.mlps.mlp.ntk_mlp`)
``unwhitened``      sketched-``K_2`` Hebbian MLP, Algorithm 1 (:func:`assocmem.mlps.mlp.hebbian_mlp`)
``whitened``        the same with the full ridge-whitened readout, ridge ``1e-6``
``data_dependent``  two least-squares refits of the factors, then the whitened readout
                    (:func:`assocmem.mlps.mlp.data_dependent_mlp`, output-space objective)

on two geometries: ``isotropic`` (keys uniform on the sphere, values the permuted keys) and
``anisotropic`` (the same fact set after the rank-1 spike ``e -> normalise(e + beta <e, u> u)``
with ``beta = 1.5`` on keys and values, one fixed ``u`` per ``d``; App. A.5.2).

One registered sweep, ``capacity``, runs the grid ``method x geometry x d x alpha`` with presets

``quick``  ``d = 32``, ``alpha`` in ``{1/32, 1/16, 1/8}``, the four closed forms only (**no GD**:
           a GD search takes minutes). A few seconds.
``cpu``    ``d = 64``, every ``alpha`` of the paper; GD with the paper's 10,000 epochs but only
           at ``alpha <= 1/16`` (``F <= 256``): every width GD misses costs 10,000 full-batch
           epochs, so one GD search takes minutes at ``F = 256`` and about 12 min at
           ``F = 1024`` on one free core; three trainings per GD point. The committed run took
           81 min on two cores (shared for 42 min with ``capacity_more``), 42 of them in one
           search: the data-dependent construction at ``alpha = 1`` under the spike, which stores
           nothing, so the search climbs to ``m = 65536`` (CG solves with ``65536 x 64`` unknowns).
``paper``  ``d`` in ``{64, 90, 128}``, every ``alpha``, every method at every point, 10,000 GD
           epochs: the grid of Figures 2c and 11. Meant for a GPU or a Ray cluster.

Pairing. Every method sees the *same* fact set at a given ``(d, F)`` (its seed depends on ``d``
and ``F`` only), and the anisotropic fact set is the spiked isotropic one, so the ratios between
methods and between geometries are paired comparisons. The random weights of a method (features,
NTK gate, GD initialisation) are seeded by the point's weights seed (:func:`weights_seed`, the
``weights_seed`` column) and are the same for every width tried, so ``accuracy(m)`` is a deterministic function of ``m``.

Trainings. GD is a sample over initialisations: the ``cpu`` and ``paper`` presets search
``gd_trainings = 3`` trainings of every GD point (grid column ``training``; the constructions are
searched once, training 0), and a rerun of a GD row is checked against the spread of its point's
trainings (:func:`gd_agreement_rules`, :func:`assocmem.sweeps.check_spread`), never against one
training's width. :func:`weights_seed` keeps training 0's seed the seed of the point's key, so
the constructions' random weights and the first training do not change with the trainings.

Non-monotone accuracy. Accuracy need not increase with ``m`` (each width draws fresh random
weights). The search (:func:`assocmem.sweeps.smallest_width`) reports a width that reaches 100 %,
whose predecessor misses and whose next two widths reach 100 % too, and lists every evaluated
width that missed above a smaller success (``monotone_violations``, ``violation_widths``). That
width is an upper bound on the smallest one storing every fact, and it depends on the widths the
search visits, so on where it starts: overriding ``lo`` (``--set lo=...``) can change it even with
no violation recorded. Compare results searched from one ``lo`` (every preset uses ``lo = 1``).

Speed. :func:`capacity_search` builds each width with the library's fast constructions and runs
with torch's threads capped at the cores other processes leave free
(:func:`assocmem.benchmarking.load_capped_threads`). :func:`capacity_search_reference` is the
plain search it is benchmarked beside: bisection over ``[lo, hi]``
(:func:`assocmem.sweeps.smallest_width_reference`) with the plain constructions
(:func:`assocmem.mlps.mlp.hebbian_mlp_reference`,
:func:`assocmem.mlps.mlp.data_dependent_mlp_reference`). Opt-in (``draw="nested"``, config field
``whitened_draw``): the whitened search with nested unit weights, which reuses the features and
Gram matrix of the largest width built so far (:mod:`assocmem.mlps.mlp.whitened_search`); every
preset and committed result uses the default draw.

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"): Theorem 2.4 (counting bound), Sec. 4.3
(Corollaries 4.4-4.5, Figure 2c), App. A.1.1 (the five MLP variants), A.3.1 (capacity protocol),
A.3.2 (rank-1 spike), A.5.2 (anisotropic capacity, Figure 11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real, positive_int, seed_int
from assocmem.benchmarking import load_capped_threads
from assocmem.mlps.counting import min_parameters_bound
from assocmem.mlps._checks import module_dtype, real_array
from assocmem.mlps.facts import FactSet, make_fact_set, random_direction, with_spike
from assocmem.mlps.margins.decoding import accuracy
from assocmem.mlps.mlp import (data_dependent_mlp, data_dependent_mlp_reference, hebbian_mlp,
                               hebbian_mlp_reference, ntk_mlp, train_mlp, train_mlps)
from assocmem.sweeps import spread
from assocmem.sweeps.config import OMIT_DEFAULT, point_seed
from assocmem.sweeps.registry import register_sweep
from assocmem.sweeps.search import SearchResult, smallest_width, smallest_width_batched, smallest_width_reference
from assocmem.devices import resolve_device
from assocmem.mlps.mlp._common import DRAWS, _check_draw

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, PathLike
    from collections.abc import Iterable, Sequence

__all__ = [
    "METHODS",
    "GEOMETRIES",
    "PAPER_ALPHAS",
    "CapacityConfig",
    "CAPACITY_PRESETS",
    "num_facts",
    "fact_seed",
    "spike_direction",
    "capacity_fact_set",
    "build_memory",
    "capacity_search",
    "search_columns",
    "capacity_search_reference",
    "accuracy_curve",
    "capacity_points",
    "POINT_KEYS",
    "weights_seed",
    "gd_agreement_rules",
    "median_training",
    "training_views",
    "capacity_point",
    "load_capacity_results",
    "counting_lower_bound",
    "growth_exponents",
    "method_ratios",
]

#: The five memories compared, in the order of the grid (the slow one first).
METHODS = ("gd", "ntk", "unwhitened", "whitened", "data_dependent")
#: Key/value geometries: spherical, and spherical after a rank-1 spike on keys and values.
GEOMETRIES = ("isotropic", "anisotropic")
#: The loads ``alpha = F / d^2`` of the seed's capacity protocol (App. A.3.1).
PAPER_ALPHAS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0)

_RIDGE = 1e-6  # ridge of the whitened readouts (App. A.1.1)


@dataclass(frozen=True)
class CapacityConfig:
    """Settings of the ``capacity`` sweep (one capacity search per grid point).

    Raises
    ------
    ValueError
        On construction: ``dims`` not integers ``>= 2``, ``alphas`` not positive real numbers,
        unknown methods or geometries, a ``beta`` that is not a real ``> -1``, a ``gd_lr`` that is
        not a real ``> 0``, a ``gd_max_alpha`` that is not a real number, ``gd_epochs``,
        ``gd_trainings``, ``lo`` or ``hi`` that are not positive integers, ``lo > hi``, a negative ``verify``, a non-integer
        ``seed`` or a ``whitened_draw`` that is not one of ``("block", "nested")`` (booleans and
        strings are refused throughout). The fields are stored as given.

    Notes
    -----
    ``lo`` is part of the protocol, not a speed knob. The search gallops from ``lo``
    (:func:`assocmem.sweeps.smallest_width`), so the widths it evaluates, and hence its answer,
    depend on ``lo``: accuracy is not monotone in ``m`` (each width draws fresh weights), and the
    reported width is an upper bound on the smallest width storing every fact, which a search
    started elsewhere can place differently even when neither records a monotonicity violation
    (an isolated failure or success between the widths one search visits is seen by the other).
    Results are comparable only at one ``lo``; the seed's protocol, and every preset, searches
    from ``lo = 1``.
    """

    dims: tuple[int, ...]  # embedding widths d
    alphas: tuple[float, ...]  # loads alpha = F / d^2; F = round(alpha d^2), half up
    methods: tuple[str, ...] = METHODS  # memories searched (names in METHODS)
    geometries: tuple[str, ...] = GEOMETRIES  # "isotropic" and/or "anisotropic"
    beta: float = 1.5  # spike strength of the anisotropic geometry (keys and values)
    gd_max_alpha: float = 1.0  # GD is searched only at alpha <= gd_max_alpha (CPU presets)
    gd_epochs: int = 10000  # GD epochs per width (the paper's 10,000 unless labelled)
    gd_lr: float = 1e-3  # GD initial Adam learning rate (cosine to 1e-6)
    gd_trainings: int = 1  # trainings (initialisations) of GD searched at every GD point
    lo: int = 1  # smallest width searched; the answer depends on it (see the class docstring)
    hi: int = 65536  # largest width searched (the seed's protocol: [1, 65536])
    verify: int = 2  # widths above the answer that must also reach 100 %
    seed: int = 0  # base seed of fact sets, spike directions and weights
    notes: tuple[str, ...] = field(default=())  # deviations from the paper's protocol, for the record
    # draw of the whitened method's unit weights (capacity_search's draw); "block" is every
    # committed result and is left out of the stored config (OMIT_DEFAULT), "nested" reuses work
    whitened_draw: str = field(default="block", metadata={OMIT_DEFAULT: True})

    def __post_init__(self):
        # validates only; the fields are stored as given (the point seeds hash them)
        if not self.dims or any(isinstance(d, bool) or not isinstance(d, int) or d < 2 for d in self.dims):
            raise ValueError(f"dims must be integers >= 2; got {self.dims!r}")
        if not self.alphas:
            raise ValueError(f"alphas must be positive; got {self.alphas!r}")
        for a in self.alphas:
            try:
                as_real(a, "alpha", minimum=0.0, strict_min=True)
            except ValueError as exc:
                raise ValueError(f"alphas must be positive real numbers; got {self.alphas!r} ({exc})") from None
        as_real(self.beta, "beta", minimum=-1.0, strict_min=True)
        as_real(self.gd_max_alpha, "gd_max_alpha", finite=False)
        as_real(self.gd_lr, "gd_lr", minimum=0.0, strict_min=True)
        positive_int("gd_epochs", self.gd_epochs)
        positive_int("gd_trainings", self.gd_trainings)
        positive_int("lo", self.lo)
        positive_int("hi", self.hi)
        if self.lo > self.hi:
            raise ValueError(f"lo must not exceed hi; got lo={self.lo}, hi={self.hi}")
        as_int(self.verify, "verify", minimum=0)
        seed_int(self.seed)
        bad = [m for m in self.methods if m not in METHODS]
        if bad or not self.methods:
            raise ValueError(f"unknown method(s) {bad}; valid methods: {', '.join(METHODS)}")
        bad = [g for g in self.geometries if g not in GEOMETRIES]
        if bad or not self.geometries:
            raise ValueError(f"unknown geometry(ies) {bad}; valid geometries: {', '.join(GEOMETRIES)}")
        if not isinstance(self.whitened_draw, str) or self.whitened_draw not in DRAWS:
            raise ValueError(f"whitened_draw must be one of {DRAWS}; got {self.whitened_draw!r}")


def num_facts(alpha: float, d: int) -> int:
    """``F = round(alpha d^2)``, halves rounded up, at least 1 (``d = 90, alpha = 1/8`` gives 1013).

    Raises
    ------
    ValueError
        An ``alpha`` that is not a finite real ``> 0`` (booleans and strings refused) or a ``d``
        that is not an integer ``>= 1``.
    """
    alpha = as_real(alpha, "alpha", minimum=0.0, strict_min=True)
    d = as_int(d, "d", minimum=1)
    return max(1, int(math.floor(alpha * d * d + 0.5)))


def fact_seed(config: CapacityConfig, d: int, F: int) -> int:
    """Seed of the fact set at ``(d, F)``: shared by every method and both geometries.

    Raises
    ------
    ValueError
        ``d`` or ``F`` that is not an integer (``2.5`` is refused, not truncated).
    """
    return point_seed(config, {"facts_d": as_int(d, "d"), "facts_F": as_int(F, "F")})


def spike_direction(config: CapacityConfig, d: int) -> torch.Tensor:
    """The fixed spike direction ``u`` ``(d,)`` of the anisotropic geometry at width ``d``.

    Raises
    ------
    ValueError
        A ``d`` that is not an integer ``>= 1``.
    """
    d = as_int(d, "d", minimum=1)
    return random_direction(d, seed=point_seed(config, {"spike_direction_d": d}))


def capacity_fact_set(config: CapacityConfig, d: int, F: int, geometry: str,
                      device: str | torch.device | None = None) -> FactSet:
    """The tied fact set searched at ``(d, F)`` under ``geometry``.

    Parameters
    ----------
    config : CapacityConfig
    d, F : int
        Embedding width and number of facts.
    geometry : {"isotropic", "anisotropic"}
        ``anisotropic`` spikes keys and values of the isotropic set with ``config.beta`` along
        :func:`spike_direction` (the permutation, hence the facts, are unchanged).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    FactSet
        Keys ``(F, d)``, values ``(F, d)`` (the permuted keys), identity map; in torch's
        default dtype (float32 unless changed; the constructions compute in float64).

    Raises
    ------
    ValueError
        An unknown geometry (the message lists the valid ones), or sizes that are not positive
        integers.

    References
    ----------
    Seed 001, App. A.3.1 (random-permutation fact sets on the sphere), A.3.2 and A.5.2 (spike).
    """
    device = resolve_device(device)
    if geometry not in GEOMETRIES:
        raise ValueError(f"unknown geometry {geometry!r}; valid geometries: {', '.join(GEOMETRIES)}")
    d, F = as_int(d, "d", minimum=1), as_int(F, "F", minimum=1)
    facts = make_fact_set(F, d, tied=True, seed=fact_seed(config, d, F), device=device)
    if geometry == "anisotropic":
        facts = with_spike(facts, config.beta, on="both", direction=spike_direction(config, d))
    return facts


#: Largest ``(F, m)`` matrix (in entries) the NTK and unwhitened builders form at once; above it
#: they are built from blocks of facts (:func:`_by_fact_blocks`). 2^25 float64 entries = 256 MiB.
BLOCK_ENTRIES = 2**25


def _by_fact_blocks(method: str, facts: FactSet, m: int, seed: int, block_entries: int):
    """The NTK or unwhitened memory built from blocks of facts, summing their readouts.

    Both constructions draw their random weights from ``seed`` alone (not from the facts) and
    are sums over facts: the NTK's ``W_up = (1/m) sum_i (h_i * (c_i P)) k_i^T`` and the
    unwhitened readout ``B0 = (1/F) sum_i c_i phi(k_i)^T``. So the memory built from blocks of
    ``b`` facts with the same seed, with readouts summed (weighted ``b / F`` for ``B0``), is the
    same memory, up to float64 summation order, while its largest intermediate is ``(b, m)``
    instead of ``(F, m)`` (at ``F = 4096``, ``m = 65536``: 256 MiB instead of three 2 GiB arrays).
    """
    F = facts.num_facts
    rows = max(1, block_entries // m)
    model = None
    for start in range(0, F, rows):
        part = FactSet(facts.keys[start : start + rows], facts.values, facts.mapping[start : start + rows],
                       unit_norm=facts.unit_norm)
        if method == "ntk":
            piece = ntk_mlp(part, m, seed=seed)
            if model is None:
                model = piece
            else:
                model.W_up.add_(piece.W_up)  # (m, d)
        else:
            piece = hebbian_mlp(part, m, whitening="none", seed=seed)
            piece.B.mul_(part.num_facts / F)  # (d_c, m): this block's share of C_f^T Phi / F
            if model is None:
                model = piece
            else:
                model.B.add_(piece.B)
    return model


def build_memory(method: str, facts: FactSet, m: int, seed: int = 0, *, epochs: int = 10000, lr: float = 1e-3,
                 device: str | torch.device | None = None,
                 block_entries: int = BLOCK_ENTRIES) -> torch.nn.Module:
    """One memory of width ``m`` storing ``facts``, built the way ``method`` builds it.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    facts : FactSet
    m : int
        Hidden width.
    seed : int, default 0
        Seed of the method's random weights.
    epochs, lr : int, float
        GD only: epochs and initial learning rate.
    device : str or torch.device
        GD only: where it trains (the constructions run where the fact set lives).
    block_entries : int, default :data:`BLOCK_ENTRIES`
        NTK and unwhitened: above ``F m > block_entries`` the memory is built from blocks of
        facts (:func:`_by_fact_blocks`; the same memory up to summation order, less memory).

    Returns
    -------
    assocmem.mlps.mlp.FactMLP
        ``num_parameters = 3 m d`` for every method.

    Raises
    ------
    ValueError
        An unknown method (the message lists the valid ones), a ``block_entries`` that is not a
        positive integer, or what the builder rejects.
    """
    device = resolve_device(device)
    block_entries = positive_int("block_entries", block_entries)
    if method == "gd":
        return train_mlp(facts, m, epochs=epochs, lr=lr, seed=seed, device=device,
                         dtype=torch.float32)
    if method in ("ntk", "unwhitened") and facts.num_facts * m > block_entries:
        return _by_fact_blocks(method, facts, m, seed, block_entries)
    if method == "ntk":
        return ntk_mlp(facts, m, seed=seed)
    if method == "unwhitened":
        return hebbian_mlp(facts, m, whitening="none", seed=seed)
    if method == "whitened":
        return hebbian_mlp(facts, m, whitening="full", ridge=_RIDGE, seed=seed)
    if method == "data_dependent":
        return data_dependent_mlp(facts, m, seed=seed, ridge=_RIDGE)
    raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")


class _Chunked:
    """``model`` applied to row blocks, so that a ``(F, m)`` hidden layer is never held whole."""

    def __init__(self, model, width: int, budget: int = 2**25):
        self.model, self.rows = model, max(1, budget // max(1, width))

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(module_dtype(self.model, x.dtype))  # the model computes in its own dtype (GD: float32)
        if x.shape[0] <= self.rows:
            return self.model(x)
        return torch.cat([self.model(x[i : i + self.rows]) for i in range(0, x.shape[0], self.rows)])


def capacity_search(
    facts: FactSet,
    method: str,
    seed: int = 0,
    *,
    lo: int = 1,
    hi: int = 65536,
    verify: int = 2,
    epochs: int = 10000,
    lr: float = 1e-3,
    device: str | torch.device | None = None,
    target: float = 1.0,
    batch: int = 2,
    draw: str = "block",
) -> SearchResult:
    """Smallest width at which ``method`` stores every fact of ``facts`` (App. A.3.1).

    Builds the memory at each width the search asks for (weights seeded with ``seed``, the same
    for every width) and measures :func:`assocmem.mlps.margins.accuracy` (strict argmax over every
    value row, Definition 2.1); :func:`assocmem.sweeps.smallest_width` does the rest. GD trains
    up to ``batch`` widths at once (:func:`assocmem.mlps.mlp.train_mlps`, speculative widths
    chosen by :func:`assocmem.sweeps.smallest_width_batched`: the same search path and answer as
    :func:`~assocmem.sweeps.smallest_width` for the accuracies the trainings give).

    Parameters
    ----------
    facts : FactSet
    method : str
        One of :data:`METHODS`.
    seed : int, default 0
    lo, hi : int, default 1 and 65536
    verify : int, default 2
    epochs, lr : GD settings (ignored by the constructions)
    device : GD's device
    target : float, default 1.0
        The accuracy to reach: 1.0 (every fact, App. A.3.1) or a per-fact recall threshold such
        as App. A.5.3's 0.98.
    batch : int, default 2
        GD only: most widths trained at once (1: one at a time, in the sequential search's order).
    draw : {"block", "nested"}, default "block"
        ``whitened`` only: the draw of the unit weights (``hebbian_mlp``'s ``draw``). ``"block"``
        (every committed result) builds each width from scratch; ``"nested"`` runs
        :func:`assocmem.mlps.mlp.whitened_search.whitened_nested_search`, which reuses the features
        and Gram matrix of the largest width built so far (another sample of the weights, so
        possibly another width).

    Returns
    -------
    SearchResult
        ``m`` (``None`` if even ``hi`` misses), every evaluation, the monotonicity violations
        (GD: the widths trained ahead of need and not used, in ``speculative``).

    Raises
    ------
    ValueError
        An unknown method, a bad search range, a ``batch`` that is not an integer ``>= 1``, an
        unknown ``draw``, or ``draw="nested"`` with a method other than ``whitened``.

    References
    ----------
    Seed 001, App. A.3.1 (the capacity protocol); accuracy is not monotone in ``m`` (see the
    module docstring).
    """
    device = resolve_device(device)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    if _check_draw(draw) == "nested":
        if method != "whitened":
            raise ValueError(f"draw='nested' is implemented for method 'whitened' only; got {method!r}")
        from assocmem.mlps.mlp.whitened_search import whitened_nested_search

        return whitened_nested_search(facts, seed, lo=lo, hi=hi, verify=verify, target=target, ridge=_RIDGE)

    if method == "gd":
        def accuracies_at(widths: list[int]) -> list[float]:
            with load_capped_threads():
                models = train_mlps(facts, widths, epochs=epochs, lr=lr, seed=seed, device=device,
                                    dtype=torch.float32)
                return [accuracy(_Chunked(model, m), facts) for model, m in zip(models, widths)]

        return smallest_width_batched(accuracies_at, lo=lo, hi=hi, target=target, verify=verify, batch=batch)

    def accuracy_at(m: int) -> float:
        with load_capped_threads():
            model = build_memory(method, facts, m, seed, epochs=epochs, lr=lr, device=device)
            return accuracy(_Chunked(model, m), facts)

    return smallest_width(accuracy_at, lo=lo, hi=hi, target=target, verify=verify)


def capacity_search_reference(facts: FactSet, method: str = "whitened", seed: int = 0, *, lo: int = 1,
                              hi: int = 65536, verify: int = 2, epochs: int = 10000,
                              lr: float = 1e-3) -> SearchResult:
    """Plain reference for :func:`capacity_search` (``whitened``, ``data_dependent`` and ``gd``).

    The constructions: bisection over ``[lo, hi]`` (:func:`assocmem.sweeps.smallest_width_reference`,
    no gallop, no verification), building each width with the plain construction
    (:func:`assocmem.mlps.mlp.hebbian_mlp_reference` with ridge ``1e-6``, or
    :func:`assocmem.mlps.mlp.data_dependent_mlp_reference`) and measuring
    :func:`assocmem.mlps.margins.accuracy` on the whole model. Where accuracy is monotone in
    ``m`` it finds the width :func:`capacity_search` finds. GD: :func:`assocmem.sweeps.smallest_width`
    training one width at a time (:func:`assocmem.mlps.mlp.train_mlp`; a bisection from 65536 would
    train the widest GD models there are). The same-run baselines of ``benchmarks/bench_ratios.py``.

    Parameters
    ----------
    facts : FactSet
    method : {"whitened", "data_dependent", "gd"}, default "whitened"
    seed : int, default 0
    lo, hi : int, default 1 and 65536
    verify : int, default 2
        GD only (the constructions' reference does not verify).
    epochs, lr : int, float
        GD only.

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        Another method, or a bad search range.

    References
    ----------
    Seed 001, App. A.3.1 (the capacity protocol: binary search over ``m`` in ``[1, 65536]``).
    """
    if method not in ("whitened", "data_dependent", "gd"):
        raise ValueError(f"the reference search covers 'whitened', 'data_dependent' and 'gd'; got {method!r}")
    if method == "gd":
        def accuracy_gd(m: int) -> float:
            model = train_mlp(facts, m, epochs=epochs, lr=lr, seed=seed, dtype=torch.float32)
            return accuracy(_Chunked(model, m), facts)

        return smallest_width(accuracy_gd, lo=lo, hi=hi, verify=verify)

    def accuracy_at(m: int) -> float:
        if method == "whitened":
            return accuracy(hebbian_mlp_reference(facts, m, ridge=_RIDGE, seed=seed), facts)
        return accuracy(data_dependent_mlp_reference(facts, m, seed=seed, ridge=_RIDGE), facts)

    return smallest_width_reference(accuracy_at, lo=lo, hi=hi, target=1.0)


def accuracy_curve(facts: FactSet, method: str, widths: Iterable[int], seed: int = 0, *, epochs: int = 10000,
                   lr: float = 1e-3, device: str | torch.device | None = None) -> np.ndarray:
    """Accuracy of ``method`` at every width in ``widths`` (what the search samples sparsely).

    Parameters
    ----------
    facts : FactSet
    method : str
        One of :data:`METHODS`.
    widths : iterable of int
    seed, epochs, lr, device
        As in :func:`capacity_search`.

    Returns
    -------
    numpy.ndarray of float, shape ``(len(widths),)``

    Raises
    ------
    ValueError
        An unknown method, a width that is not an integer ``>= 1`` (``2.5`` is refused, not
        truncated), or what the builder rejects.
    """
    device = resolve_device(device)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    widths = [as_int(m, "width", minimum=1) for m in widths]
    return np.array([accuracy(_Chunked(build_memory(method, facts, m, seed, epochs=epochs, lr=lr,
                                                    device=device), m), facts) for m in widths])


# --------------------------------------------------------------------------------------------
# the sweep


def capacity_points(config: CapacityConfig) -> list[dict]:
    """The grid: ``{"method", "geometry", "d", "alpha", "F", "training"}`` per point, method-major.

    GD comes first (its points are the slow ones, so a process pool starts them early) and is
    skipped at ``alpha > config.gd_max_alpha``. GD has ``config.gd_trainings`` points per load,
    trainings ``0, 1, ...`` from independent initialisations on the same fact set
    (:func:`weights_seed`); every construction is searched once, training 0.
    """
    grid = []
    for method in config.methods:
        for geometry in config.geometries:
            for d in config.dims:
                for alpha in config.alphas:
                    if method == "gd" and float(alpha) > config.gd_max_alpha:
                        continue
                    for t in range(config.gd_trainings if method == "gd" else 1):
                        grid.append({"method": method, "geometry": geometry, "d": int(d),
                                     "alpha": float(alpha), "F": num_facts(alpha, d), "training": t})
    return grid


#: The columns of a capacity point without its training: the keys of a point's trainings.
POINT_KEYS = ("method", "geometry", "d", "alpha", "F")


def weights_seed(config: CapacityConfig, point: dict) -> int:
    """The seed of a point's random weights (features, NTK gate, GD initialisation).

    Training 0 has the seed of the point's key without its training (the seed every point had
    before the sweep stored trainings, and the one ``capacity_more`` gives its replicate 0), so
    adding trainings leaves every construction and the first training unchanged; training
    ``t >= 1`` adds ``t`` to the key, an independent stream.

    Raises
    ------
    KeyError
        A point without one of :data:`POINT_KEYS`.
    ValueError
        A training that is not an integer ``>= 0``.
    """
    key = {k: point[k] for k in POINT_KEYS}
    t = as_int(point.get("training", 0), "training", minimum=0)
    return point_seed(config, {**key, "training": t} if t else key)


def search_columns(res: SearchResult, d: int) -> dict:
    """The result columns of one capacity search: the width found, ``W = 3 m d`` and the search's record.

    Shared by the ``capacity`` sweep and the ``capacity_more`` sweep
    (:mod:`assocmem.mlps.capacity_replicate_sweeps`), so both store the same columns.
    """
    return {
        "m": res.m,
        "W": None if res.m is None else 3 * res.m * d,
        "found": res.found,
        "accuracy": res.accuracy,
        "best_accuracy": max(a for _, a in res.evaluations),
        "n_evaluations": res.n_evaluations,
        "monotone_violations": len(res.monotone_violations),
        "violation_widths": ";".join(str(m) for m in res.monotone_violations),
        "restarts": res.restarts,
    }


def gd_agreement_rules(config: CapacityConfig) -> dict:
    """The rules a rerun of GD rows must meet, as keyword arguments of
    :func:`assocmem.sweeps.check_spread`.

    A GD row is one training: a rerun on another CPU ends elsewhere, so it is compared with the
    spread of the stored trainings of its point (keys :data:`POINT_KEYS`), never with one of
    them. The width ``m`` has resolution 1 (one step of the integer width) and ``W = 3 m d`` one
    step of ``3 d``; the accuracy at the width found and the best accuracy (1 where a width was
    found), ``found`` and the settings (``epochs``, ``beta``, ``fact_seed``) must be equal; the
    search's bookkeeping (evaluations, violations, restarts), the seeds (which differ between
    trainings) and the time are not compared.

    Raises
    ------
    TypeError
        ``config`` not a CapacityConfig.
    """
    if not isinstance(config, CapacityConfig):
        raise TypeError(f"config must be a CapacityConfig; got {type(config).__name__}")
    return {
        "keys": list(POINT_KEYS),
        "columns": {"m": 1.0, "W": float(3 * max(config.dims))},
        "exact": ["found", "accuracy", "best_accuracy", "epochs", "beta", "fact_seed"],
        "ignore": ["n_evaluations", "monotone_violations", "violation_widths", "restarts", "seed",
                   "weights_seed", "wall_time_s"],
        "training": "training",
    }


def median_training(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per point of a ``capacity`` frame: each GD point's median training by width ``m``.

    The row is one training's, whole (:func:`assocmem.sweeps.median_training`; a search that found
    no width ranks above every width); the constructions keep their one row.

    Raises
    ------
    TypeError, ValueError
        ``frame`` not a DataFrame, or without the columns :data:`POINT_KEYS`, ``training``, ``m``.
    """
    return spread.median_training(frame, POINT_KEYS, "m")


def training_views(frame: pd.DataFrame) -> dict[int, pd.DataFrame]:
    """A ``capacity`` frame as each GD training sees it: ``{t: rows}``, one row per point.

    View ``t`` has training ``t`` of every GD point and every construction's one row
    (:func:`assocmem.sweeps.training_views`): a claim that involves GD is checked in every view.

    Raises
    ------
    TypeError, ValueError
        ``frame`` not a DataFrame, without the columns :data:`POINT_KEYS` and ``training``, or a
        GD point that lacks one of the trainings.
    """
    return spread.training_views(frame, POINT_KEYS)


def capacity_point(config: CapacityConfig, point: dict, device: torch.device) -> dict:
    """One capacity search: the row of results at one grid point.

    Returns
    -------
    dict
        ``m`` and ``W = 3 m d`` (``None`` when no width in ``[lo, hi]`` stores every fact),
        ``found``, ``accuracy`` at ``m``, ``best_accuracy`` over every width tried,
        ``n_evaluations``, ``monotone_violations`` (how many evaluated widths missed above a
        smaller success), ``violation_widths`` (those widths, ``;``-separated), ``restarts``,
        ``epochs`` (GD's epochs; ``None`` for the constructions), ``beta`` (0 for isotropic),
        ``fact_seed`` and ``weights_seed`` (:func:`weights_seed`). The engine adds ``seed`` (the
        point's seed, which the weights do not use) and ``wall_time_s``.
    """
    method, d, F = point["method"], point["d"], point["F"]
    facts = capacity_fact_set(config, d, F, point["geometry"], device=device)
    seed = weights_seed(config, point)
    draw = config.whitened_draw if method == "whitened" else "block"
    res = capacity_search(facts, method, seed, lo=config.lo, hi=config.hi, verify=config.verify,
                          epochs=config.gd_epochs, lr=config.gd_lr, device=device, draw=draw)
    return {
        **search_columns(res, d),
        "epochs": config.gd_epochs if method == "gd" else None,
        "beta": config.beta if point["geometry"] == "anisotropic" else 0.0,
        "fact_seed": fact_seed(config, d, F),
        "weights_seed": seed,
    }


CAPACITY_PRESETS = {
    "quick": CapacityConfig(
        dims=(32,), alphas=(1 / 32, 1 / 16, 1 / 8), methods=("ntk", "unwhitened", "whitened", "data_dependent"),
        notes=("GD not searched (minutes per search; see the cpu preset)",),
    ),
    "cpu": CapacityConfig(
        dims=(64,), alphas=PAPER_ALPHAS, gd_max_alpha=1 / 16, gd_trainings=3,
        notes=("GD searched at alpha <= 1/16 only (F <= 256); its epochs are the paper's 10,000; "
               "three trainings per GD point",),
    ),
    "paper": CapacityConfig(dims=(64, 90, 128), alphas=PAPER_ALPHAS, gd_trainings=3),
}

register_sweep(
    "capacity",
    config_type=CapacityConfig,
    presets=CAPACITY_PRESETS,
    points=capacity_points,
    run_point=capacity_point,
    description="smallest width (W = 3md) storing every fact: GD, NTK, unwhitened, whitened, "
                "data-dependent; isotropic and spiked (seed 001, Fig. 2c and 11); a searched upper "
                "bound that depends on the search's start lo (compare runs at one lo)",
)


# --------------------------------------------------------------------------------------------
# analysis of the results


def load_capacity_results(presets: Sequence[str] = ("paper", "cpu"),
                          results_dir: PathLike | None = None) -> tuple[str, pd.DataFrame]:
    """The stored results of the largest preset that has been run: ``(preset, frame)``.

    Tries ``presets`` in order and returns the first one stored, complete and made with the
    preset's current config (:func:`assocmem.sweeps.load_results` checks the files).

    Raises
    ------
    FileNotFoundError
        If none of them is stored.
    """
    from assocmem.sweeps.store import load_largest_results

    return load_largest_results("capacity", presets, results_dir)


def counting_lower_bound(F: ArrayLike, V: ArrayLike | None = None, bits: int = 16) -> np.ndarray:
    """Theorem 2.4 with ``b`` bits per parameter: ``W >= F log2(V) / b``.

    A model with ``W`` parameters of ``b`` bits has at most ``2^(b W)`` settings, and there are
    ``V^F`` fact sets; storing all of them needs ``2^(b W) >= V^F``. A thin wrapper of
    :func:`assocmem.mlps.counting.min_parameters_bound` (evaluated on arrays) with this module's
    defaults (tied tables, 16 bits) and its stricter range (``F >= 1``, ``bits >= 1``).

    Parameters
    ----------
    F : array-like of int
        Number of facts.
    V : array-like of int, optional
        Number of values; ``F`` by default (tied tables).
    bits : int, default 16
        Bits per parameter (16, as in the book's chapter on the counting bound).

    Returns
    -------
    numpy.ndarray of float

    Raises
    ------
    ValueError
        ``F < 1``, ``V < 1`` or ``bits < 1``, or arguments that are not finite real numbers
        (booleans and strings refused).

    References
    ----------
    Seed 001, Theorem 2.4 and its proof (App. B.1).
    """
    F = real_array(F, "F")
    V = F if V is None else real_array(V, "V")
    bits = as_real(bits, "bits")
    if np.any(F < 1) or np.any(V < 1) or bits < 1:
        raise ValueError("need F >= 1, V >= 1 and bits >= 1")
    return min_parameters_bound(F, V, bits)


def _slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x and its standard error (nan with fewer than 3 points)."""
    n = len(x)
    xc = x - x.mean()
    sxx = float(xc @ xc)
    b = float(xc @ (y - y.mean())) / sxx
    if n < 3:
        return b, float("nan")
    resid = y - y.mean() - b * xc
    return b, math.sqrt(float(resid @ resid) / (n - 2) / sxx)


def growth_exponents(frame: pd.DataFrame) -> pd.DataFrame:
    """Fitted growth exponent ``p`` of ``W ~ F^p`` per ``(method, geometry, d)``.

    Least squares of ``log W`` on ``log F`` over the points where a width was found (at least
    two), with the slope's standard error, and the exponent that ``F log F`` itself has over the
    same ``F`` (its local slope ``1 + 1 / ln F`` averaged by the same regression), so that
    ``p - p_FlogF`` reads as the excess over the optimal rate.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``capacity`` sweep (columns ``method, geometry, d, F, W, found``).

    Returns
    -------
    pandas.DataFrame
        Columns ``method, geometry, d, n`` (points fitted), ``n_missing`` (points with no width
        in range), ``F_min, F_max, exponent, se, exponent_flogf, excess``.
    """
    rows = []
    for (method, geometry, d), g in frame.groupby(["method", "geometry", "d"], sort=False):
        ok = g[g["found"].astype(bool)]
        rec = {"method": method, "geometry": geometry, "d": int(d), "n": len(ok),
               "n_missing": int(len(g) - len(ok)), "F_min": None, "F_max": None, "exponent": float("nan"),
               "se": float("nan"), "exponent_flogf": float("nan"), "excess": float("nan")}
        if len(ok) >= 2:
            x = np.log(ok["F"].to_numpy(float))
            p, se = _slope(x, np.log(ok["W"].to_numpy(float)))
            q, _ = _slope(x, x + np.log(x))
            rec.update(F_min=int(ok["F"].min()), F_max=int(ok["F"].max()), exponent=p, se=se,
                       exponent_flogf=q, excess=p - q)
        rows.append(rec)
    return pd.DataFrame(rows)


def method_ratios(frame: pd.DataFrame, numerator: str, denominator: str, hi: int = 65536) -> pd.DataFrame:
    """Paired parameter ratios ``W_numerator / W_denominator`` at every shared grid point.

    A method that stored no fact set up to ``hi`` has ``W > 3 hi d``; the ratio is then a lower
    bound (``bound = "lower"``) if it is the numerator, an upper bound if the denominator, and
    undefined when both missed.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``capacity`` sweep (columns ``method, geometry, d, alpha, F, W, found``).
    numerator, denominator : str
        Method names.
    hi : int, default 65536
        Largest width the searches tried (``CapacityConfig.hi``).

    Returns
    -------
    pandas.DataFrame
        ``geometry, d, alpha, F, W_num, W_den, ratio, bound`` (``"exact"``, ``"lower"``,
        ``"upper"`` or ``"none"``), one row per point both methods were searched at.

    Raises
    ------
    ValueError
        A ``hi`` that is not a positive integer.
    """
    hi = positive_int("hi", hi)
    keys = ["geometry", "d", "alpha", "F"]
    a = frame[frame["method"] == numerator].set_index(keys)
    b = frame[frame["method"] == denominator].set_index(keys)
    rows = []
    for key in a.index.intersection(b.index):
        ra, rb = a.loc[key], b.loc[key]
        d = int(key[1])
        fa, fb = bool(ra["found"]), bool(rb["found"])
        wa = float(ra["W"]) if fa else 3.0 * hi * d
        wb = float(rb["W"]) if fb else 3.0 * hi * d
        bound = "exact" if fa and fb else "lower" if fb else "upper" if fa else "none"
        rows.append({"geometry": key[0], "d": d, "alpha": float(key[2]), "F": int(key[3]),
                     "W_num": wa if fa else float("nan"), "W_den": wb if fb else float("nan"),
                     "ratio": wa / wb if bound != "none" else float("nan"), "bound": bound})
    return pd.DataFrame(rows, columns=["geometry", "d", "alpha", "F", "W_num", "W_den", "ratio", "bound"])
