"""Hebbian memories on random facts: accuracy, kernel-scale margins and the largest number of facts stored.

The Hebbian memory ``W = sum_t v_f(t) k_t^T`` (seed 001, Sec. 2.2, eq. 5) is Part I's
outer-product memory (:class:`assocmem.linear.memory.OuterProductMemory`) written with the fact
targets; in kernel form it reads ``y_i = sum_t K(k_t, k_i) v_f(t)`` with the linear kernel
``K(x, z) = <x, z>``. Replacing the kernel by ``K_2(x, z) = <x, z>^2`` gives the exact
quadratic-kernel memory (:func:`assocmem.mlps.mlp.hebbian.exact_k2_memory`, eq. 8).
:func:`hebbian_memory` and :func:`hebbian_gram` build either memory and its Gram matrix,
:func:`hebbian_point` measures accuracy and margins on one fact set, :func:`hebbian_f_sweep`
sweeps the number of facts at fixed ``d``, and :func:`hebbian_capacity` /
:func:`hebbian_capacity_scan` find the largest ``F`` a seeded draw stores (Definitions 2.1-2.3).
Margins are on the kernel-Hebbian scale (no ``1/F``; :func:`assocmem.mlps.margins.fact_margins`);
everything is float64. Used by chapter 10 ("Facts, margins and the counting bound").

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 2.1
(Definitions 2.1-2.3), Sec. 2.2 (eq. 5), Sec. 4 (eq. 6), eq. 8 and Lemma B.2, App. A.3.2,
App. B.4 (kernel-Hebbian margins).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch

from assocmem._checks import as_int, seed_int
from assocmem.linear.memory import OuterProductMemory
from assocmem._checks import as_bool
from assocmem.mlps.counting.bound import _count
from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins import fact_margins, gram_from_features, output_margins
from assocmem.mlps.mlp.hebbian import exact_k2_memory
from assocmem.sweeps.search import SearchResult, smallest_width
from assocmem.devices import resolve_device

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem.mlps.mlp.architectures import ExactK2Memory
    from collections.abc import Iterable, Mapping

__all__ = [
    "HEBBIAN_KERNELS",
    "hebbian_memory",
    "hebbian_gram",
    "hebbian_point",
    "hebbian_f_sweep",
    "hebbian_capacity",
    "hebbian_capacity_scan",
    "CapacityResult",
]


#: Kernels of the Hebbian memories compared in the chapter: ``<x, z>`` and ``<x, z>^2``.
HEBBIAN_KERNELS = ("linear", "k2")


def _check_kernel(kernel: str) -> str:
    if kernel not in HEBBIAN_KERNELS:
        raise ValueError(f"kernel must be one of {HEBBIAN_KERNELS}; got {kernel!r}")
    return kernel


def hebbian_memory(facts: FactSet, kernel: str = "linear") -> OuterProductMemory | ExactK2Memory:
    """The Hebbian memory of a fact set, as a model ``(F, d) -> (F, d)``.

    * ``"linear"``: eq. 5, ``W = sum_t v_f(t) k_t^T``, built as Part I's
      :class:`~assocmem.linear.memory.OuterProductMemory` written with the keys and the targets
      ``C_f`` (state ``S = W``, shape ``(d, d)``; read ``S x``; no ``1/F``).
    * ``"k2"``: :func:`assocmem.mlps.mlp.exact_k2_memory`, ``H(x) = (1/F) sum_t v_f(t) <k_t, x>^2``.

    Parameters
    ----------
    facts : FactSet
    kernel : {"linear", "k2"}, default "linear"

    Returns
    -------
    OuterProductMemory or ExactK2Memory
        float64, on the fact set's device.

    Raises
    ------
    ValueError
        An unknown kernel or a malformed fact set.

    References
    ----------
    Seed 001, eq. 5 (Sec. 2.2); eq. 8 and Lemma B.2 (the ``K_2`` kernel).
    """
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be a FactSet; got {type(facts).__name__}")
    if _check_kernel(kernel) == "linear":
        d = facts.dim
        mem = OuterProductMemory(d, d, dtype=torch.float64, device=facts.keys.device)
        return mem.write(facts.keys.to(torch.float64), facts.targets.to(torch.float64))
    return exact_k2_memory(facts, require_unit_keys=False)


def hebbian_gram(keys: torch.Tensor, kernel: str = "linear") -> torch.Tensor:
    """Kernel Gram matrix ``K[t, i] = K(k_t, k_i)`` of the stored keys, float64.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``
    kernel : {"linear", "k2"}
        ``<k_t, k_i>`` (identity features: :func:`assocmem.mlps.margins.gram_from_features` of the keys)
        or ``<k_t, k_i>^2``.

    Returns
    -------
    torch.Tensor, shape ``(F, F)``, float64

    Raises
    ------
    ValueError
        An unknown kernel, or keys that are not a finite real 2-D tensor (float16 / bfloat16
        refused) or whose Gram matrix overflows float64.

    References
    ----------
    Seed 001, App. B.4 (Gram matrix), eq. 8.
    """
    _check_kernel(kernel)
    if not isinstance(keys, torch.Tensor) or keys.dim() != 2:
        raise ValueError("keys must be a 2-D tensor (F, d)")
    g = gram_from_features(keys)  # (F, F): <k_t, k_i>
    return g if kernel == "linear" else g**2


def hebbian_point(facts: FactSet, kernel: str = "linear") -> dict:
    """Accuracy and margins of one Hebbian memory on one fact set.

    Parameters
    ----------
    facts : FactSet
        Needs ``V >= 2``.
    kernel : {"linear", "k2"}

    Returns
    -------
    dict
        ``accuracy`` -- fraction of facts whose target wins the argmax over every value row
        strictly, read from the *model's own outputs* (:func:`hebbian_memory`, Definition 2.1);
        ``frac_positive`` -- fraction of kernel-scale margins ``gamma_i > 0``;
        ``gamma_min``, ``gamma_median`` -- minimum and median kernel-scale margin;
        ``n_stored`` -- number of facts with ``gamma_i > 0``.

    Raises
    ------
    ValueError
        An unknown kernel or a malformed fact set.

    References
    ----------
    Seed 001, Definitions 2.1 and 2.2; App. B.4 (kernel-Hebbian margins).
    """
    model = hebbian_memory(facts, kernel)
    gam = fact_margins(hebbian_gram(facts.keys, kernel), facts)  # (F,)
    out = output_margins(model, facts)  # (F,), the model's own scale
    return {
        "accuracy": float((out > 0).double().mean()),
        "frac_positive": float((gam > 0).double().mean()),
        "gamma_min": float(gam.min()),
        "gamma_median": float(gam.median()),
        "n_stored": int((gam > 0).sum()),
    }


def hebbian_f_sweep(d: int, num_facts: Iterable[int], kernels: Iterable[str] = HEBBIAN_KERNELS,
                    seeds: Iterable[int] = (0,), tied: Iterable[bool] = (True,),
                    device: str | torch.device | None = None) -> pd.DataFrame:
    """Accuracy and margins of the Hebbian memories as the number of facts grows at fixed ``d``.

    Every point draws a fresh fact set ``make_fact_set(F, d, tied=..., seed=seed)``; both kernels
    see the same draw.

    Parameters
    ----------
    d : int
        Embedding width.
    num_facts : iterable of int
        The values of ``F``.
    kernels : iterable of {"linear", "k2"}
    seeds : iterable of int
    tied : iterable of bool
        Tied (values = permuted keys) and/or untied tables.
    device : str, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    pandas.DataFrame
        One row per (kernel, tied, F, seed) with the columns of :func:`hebbian_point` plus
        ``kernel, tied, d, F, seed``.

    Raises
    ------
    ValueError
        Bad sizes (a ``d`` or an entry of ``num_facts`` that is not a positive integer; ``2.5``
        is refused, not truncated), a seed that is not an integer, a ``tied`` entry that is not a
        bool, or an unknown kernel.

    References
    ----------
    Seed 001, eq. 5; App. A.3.2 (the exact-``K_2`` ``F``-sweep uses ``d = 32``).
    """
    device = resolve_device(device)
    kernels = [_check_kernel(k) for k in kernels]
    d = as_int(d, "d", minimum=1)
    tied = [as_bool(t, "tied entry") for t in tied]
    num_facts = [as_int(F, "num_facts entry", minimum=1) for F in num_facts]
    seeds = [seed_int(s) for s in seeds]
    rows = []
    for t in tied:
        for F in num_facts:
            for s in seeds:
                facts = make_fact_set(F, d, tied=t, seed=s, device=device)
                for k in kernels:
                    rows.append({"kernel": k, "tied": t, "d": d, "F": F, "seed": s,
                                 **hebbian_point(facts, k)})
    return pd.DataFrame(rows)


def _margins_unchecked(gram: torch.Tensor, facts: FactSet) -> torch.Tensor:
    """:func:`assocmem.mlps.margins.fact_margins` of a Gram matrix without re-validating its input.

    The same arithmetic (``y_i = sum_t K[t, i] c_f(t)``, scores against every value row, target
    minus best rival); the capacity search calls it many times on fact sets that
    :class:`~assocmem.mlps.facts.FactSet` has already validated. ``tests/mlps/counting/test_hebbian_memories.py`` holds the
    two equal.
    """
    values = facts.values.to(torch.float64)  # (V, d)
    y = gram.T @ values[facts.mapping]  # (F, d): row i is sum_t K[t, i] v_f(t)
    s = y @ values.T  # (F, V)
    rows = torch.arange(s.shape[0], device=s.device)
    target = s[rows, facts.mapping].clone()  # (F,)
    s[rows, facts.mapping] = -math.inf
    return target - s.max(dim=1).values  # (F,)


@dataclass(frozen=True)
class CapacityResult:
    """Largest ``F`` one seeded draw stores (see :func:`hebbian_capacity`)."""

    capacity: int  # largest F stored before the first failure found (first_failure - 1)
    first_failure: int  # smallest F found to fail, with the next `verify` F failing too
    search: SearchResult  # the search over F (evaluations, monotonicity violations)


def hebbian_capacity(d: int, kernel: str = "linear", seed: int = 0, tied: bool = True, *, lo: int = 2,
                     hi: int = 65536, verify: int = 2,
                     device: str | torch.device | None = None) -> CapacityResult:
    """Largest number of random facts a Hebbian memory stores, for one seeded family of draws.

    For each ``F`` the draw is ``make_fact_set(F, d, tied, seed)``; it *fails* when some fact's
    kernel-scale margin is ``<= 0``. :func:`assocmem.sweeps.smallest_width` (gallop, bisect,
    verify) finds the smallest failing ``F`` whose next ``verify`` values of ``F`` fail as well;
    the capacity is one less. Success is not monotone in ``F`` (each ``F`` is a new draw), so the
    result is the search's documented rule, not the largest ``F`` that ever succeeds.

    Parameters
    ----------
    d : int
    kernel : {"linear", "k2"}
    seed : int, default 0
    tied : bool, default True
    lo, hi : int
        Range of ``F`` searched (``lo >= 2``: a margin needs a competitor).
    verify : int, default 2
    device : str, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    CapacityResult

    Raises
    ------
    ValueError
        Bad arguments (a ``d`` that is not a positive integer, a ``tied`` that is not a bool, a
        seed that is not an integer, a bad search range), or no failure up to ``hi``.

    References
    ----------
    Seed 001, Definitions 2.1 and 2.3 (capacity: the most facts stored at a fixed budget).
    """
    device = resolve_device(device)
    _check_kernel(kernel)
    lo = _count("lo", lo, 2)
    d = as_int(d, "d", minimum=1)
    tied = as_bool(tied, "tied")
    seed = seed_int(seed)

    def fails(F: int) -> float:
        facts = make_fact_set(F, d, tied=tied, seed=seed, device=device)
        return float(_margins_unchecked(hebbian_gram(facts.keys, kernel), facts).min() <= 0)

    res = smallest_width(fails, lo=lo, hi=hi, target=1.0, verify=verify)
    if res.m is None:
        raise ValueError(f"no failure found for F in [{lo}, {hi}]; raise hi")
    return CapacityResult(capacity=res.m - 1, first_failure=res.m, search=res)


def hebbian_capacity_scan(dims: Mapping[str, Iterable[int]] | Iterable[int],
                          kernels: Iterable[str] = HEBBIAN_KERNELS, seeds: Iterable[int] = (0,),
                          tied: bool = True, device: str | torch.device | None = None) -> pd.DataFrame:
    """:func:`hebbian_capacity` for every (kernel, d, seed).

    Parameters
    ----------
    dims : mapping of kernel -> iterable of int, or iterable of int
        Embedding widths per kernel (or the same widths for every kernel).
    kernels : iterable of {"linear", "k2"}
    seeds : iterable of int
    tied : bool, default True
    device : str, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    pandas.DataFrame
        Columns ``kernel, d, seed, capacity, evaluations, monotone``.

    Raises
    ------
    ValueError
        As :func:`hebbian_capacity`.
    """
    device = resolve_device(device)
    rows = []
    for k in kernels:
        ds = dims[k] if isinstance(dims, dict) else dims
        for d in ds:
            for s in seeds:
                r = hebbian_capacity(d, k, seed=s, tied=tied, device=device)
                rows.append({"kernel": k, "d": as_int(d, "d"), "seed": seed_int(s), "capacity": r.capacity,
                             "evaluations": r.search.n_evaluations, "monotone": r.search.monotone})
    return pd.DataFrame(rows)
