"""One harness for every memory: the same fact sets, one decoding rule, the same measurements.

Fact sets
---------
:func:`table_facts` draws ``F_max`` facts in dimension ``d``: keys and values independent and
uniform on the unit sphere, value ``i`` for key ``i`` (seed 001's untied tables,
:func:`assocmem.mlps.facts.make_fact_set`), optionally after the rank-1 spike
``e -> normalise(e + beta <e, u> u)`` on keys and values (``anisotropic``; seed 001, App. A.3.2).
The fact set of ``F`` facts is the first ``F`` of them (:func:`first_facts`), so that the sets
are nested and a search over ``F`` asks about one growing set; every memory sees the same sets.

Measurements
------------
recall
    :func:`recall`: write the ``F`` pairs, read the keys (or noisy keys), decode each output by
    the strict argmax over the ``F`` value rows (:func:`assocmem.memory_protocol.decode`, the one
    rule for every memory's output) and count the facts recovered.
capacity
    :func:`capacity`: the largest ``F <= F_max`` at which recall is 100 %, found by
    :func:`assocmem.sweeps.smallest_width` as the smallest ``F`` that *fails*, minus one (the
    search verifies the next widths, so a lucky success just above a failure is not the answer).
read error
    :func:`read_error`: ``e(F) = mean_i ||y_i - v_i||^2`` on the memory's natural output, seed
    000's ``e(n)`` (§7; for unit values ``e_add = (n - 1)/d_k``, ``e_ls = 1 - d_k/n`` beyond
    ``d_k``), and :func:`pairs_at_error`, the largest ``F`` with ``e(F) <= eps``. A memory whose
    output is not an estimate of the value (an unwhitened Hebbian MLP's output carries a factor
    ``1/F``; a Hopfield state is a sign vector) has a large read error at every ``F`` although
    argmax decoding recovers its facts: read error and capacity are different questions.
noise
    :func:`noisy_recall`: recall with queries ``k_i + eps u_i``, ``u_i`` uniform on the sphere and
    not renormalised (:func:`assocmem.mlps.margins.perturb_queries`, seed 001's App. A.4.2). The
    directions are drawn from their own stream (:func:`noise_seed`), so they never repeat the draw
    of a fact set made with the same seed.
time
    :func:`timed_recall`: wall-clock seconds of the write and of the read. Machine-dependent:
    compared only as ratios within one run, never as facts about the mathematics.

Chapter 50 ("One table for every memory") uses these through the ``memory_table`` sweep
(:mod:`assocmem.compare.table_sweeps`) and the analysis functions :func:`facts_at_budget` and
:func:`bits_per_parameter`.

References
----------
Seed 000, §7 (read error against the number of pairs). Seed 001, Definition 2.1 (decoding),
Definition 2.3 (capacity), Theorem 2.4 (counting bound), App. A.3.1 (capacity protocol), A.3.2
(spike), A.4.2 (noisy queries).
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real, positive_int, whole_numbers
from assocmem.memory_protocol import AssociativeMemory, MemoryNotWrittenError, decode
from assocmem.mlps.facts import FactSet, make_fact_set, random_direction, with_spike
from assocmem.mlps.margins.noisy_queries import perturb_queries
from assocmem.sweeps.search import smallest_width

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from assocmem.sweeps.search import SearchResult

__all__ = [
    "GEOMETRIES",
    "table_facts",
    "first_facts",
    "recall",
    "read_error",
    "noisy_recall",
    "noise_seed",
    "timed_recall",
    "capacity",
    "pairs_at_error",
    "facts_at_budget",
    "bits_per_parameter",
]

#: Key/value geometries: uniform on the sphere, and the same after the rank-1 spike.
GEOMETRIES = ("isotropic", "anisotropic")
#: The spawn key of the query-noise stream (:func:`noise_seed`): "noise" in ASCII.
_NOISE_STREAM = 0x6E6F697365


def _check_facts(facts) -> FactSet:
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be a FactSet (table_facts); got {type(facts).__name__}")
    return facts


def _check_memory(memory) -> AssociativeMemory:
    """``memory`` if it is an AssociativeMemory with pairs written; a clear error otherwise.

    A memory of a Part on its own (an :class:`~assocmem.linear.memory.OuterProductMemory`, an MLP)
    is refused with the adapter to use: such a memory reads zeros, or noise, before any write, and
    the decoder would count that as facts lost instead of saying the memory is empty.
    """
    if not isinstance(memory, AssociativeMemory):
        hint = ""
        if callable(getattr(memory, "read", None)) or callable(getattr(memory, "forward", None)):
            hint = ("; wrap a memory of the library in its adapter (assocmem.compare.adapters: make_memory, "
                    "MatrixAdapter, MLPAdapter, ...), which checks its input and knows whether it was written")
        raise ValueError(f"memory must be an AssociativeMemory (a written memory); got {type(memory).__name__}"
                         + hint)
    if memory.num_pairs == 0:
        raise MemoryNotWrittenError(f"{type(memory).__name__} is empty: write the facts "
                                    "(memory.write(facts.keys, facts.targets)) before measuring it")
    return memory


def _recalled(outputs: torch.Tensor, facts: FactSet) -> float:
    """Fraction of the rows of ``outputs`` ``(F, d_v)`` that decode to their fact's value row."""
    return float((decode(outputs, facts.values) == facts.mapping.to(outputs.device)).double().mean())


def _check_build(build) -> Callable[[], AssociativeMemory]:
    if not callable(build):
        raise ValueError(f"build must be a callable returning a fresh AssociativeMemory; got {type(build).__name__}")
    return build


def table_facts(d: int, F_max: int, geometry: str = "isotropic", seed: int = 0, *, beta: float = 1.5,
                spike_seed: int | None = None) -> FactSet:
    """The fact set of ``F_max`` facts that every memory is measured on.

    Parameters
    ----------
    d : int
        Key and value width.
    F_max : int
        Facts drawn (``>= 2``); smaller sets are its prefixes (:func:`first_facts`).
    geometry : {"isotropic", "anisotropic"}
    seed : int
        Seed of the keys and values.
    beta : float, default 1.5
        Spike strength of the anisotropic geometry (seed 001's 1.5).
    spike_seed : int, optional
        Seed of the spike direction; ``seed + 1`` by default. (Every seed of the harness must
        differ: a direction, a noise or a fact set drawn from the same seed as another is the
        same Gaussian draw, :func:`assocmem.mlps.facts.make_fact_set` and
        :func:`assocmem.mlps.margins.perturb_queries` both normalise ``torch.randn``.)

    Returns
    -------
    FactSet
        Keys ``(F_max, d)``, values ``(F_max, d)``, identity map, in torch's default dtype, on
        the CPU (the book sets float64 in its chapters).

    Raises
    ------
    ValueError
        An unknown geometry, ``F_max < 2`` or ``d < 1``, or a ``beta`` that is not a finite real
        ``> -1`` (checked for both geometries: a NaN is never silently unused).
    """
    as_real(beta, "beta", minimum=-1.0, strict_min=True)
    if geometry not in GEOMETRIES:
        raise ValueError(f"unknown geometry {geometry!r}; valid geometries: {', '.join(GEOMETRIES)}")
    F_max = as_int(F_max, "F_max", minimum=2)
    facts = make_fact_set(F_max, positive_int("d", d), tied=False, seed=seed)
    if geometry == "anisotropic":
        u = random_direction(d, seed=seed + 1 if spike_seed is None else spike_seed)
        facts = with_spike(facts, beta, on="both", direction=u)
    return facts


def first_facts(facts: FactSet, F: int) -> FactSet:
    """The first ``F`` facts of ``facts``: their keys, the value rows they map to, and their map.

    Fact ``i < F`` keeps its association ``k_i -> v_{f(i)}``. The value table of the subset is
    the rows the ``F`` facts use, in the order of ``facts.values`` (so the decoder compares an
    output with the values of the facts stored, as for the whole set), and the map is re-indexed
    into it. For the identity map of :func:`table_facts` this is ``keys[:F]``, ``values[:F]`` and
    the identity: bit for bit what the harness has always measured.

    Parameters
    ----------
    facts : FactSet
        Keys ``(F_max, d)``, values ``(V, d)``, map ``(F_max,)``, on any device.
    F : int
        How many facts, ``1 <= F <= F_max``.

    Returns
    -------
    FactSet
        Keys ``(F, d)``, values ``(V_F, d)`` with ``V_F`` the number of distinct rows in
        ``facts.mapping[:F]``, map ``(F,)`` int64; dtype, device and ``unit_norm`` of ``facts``.
        A prefix whose facts all share one value row has ``V_F = 1``, which :func:`recall`
        refuses (a decoder with no competitor decides nothing).

    Raises
    ------
    ValueError
        ``facts`` not a FactSet, or ``F`` outside ``[1, facts.num_facts]``.
    """
    _check_facts(facts)
    F = as_int(F, "F", minimum=1)
    if F > facts.num_facts:
        raise ValueError(f"F = {F} exceeds the {facts.num_facts} facts drawn")
    # on the map's own device: the rows used (sorted) and each fact's index among them
    used, mapping = torch.unique(facts.mapping[:F], sorted=True, return_inverse=True)  # (V_F,), (F,)
    return FactSet(facts.keys[:F], facts.values[used], mapping, unit_norm=facts.unit_norm)


def _built(build: Callable[[], AssociativeMemory]) -> AssociativeMemory:
    memory = _check_build(build)()
    if not isinstance(memory, AssociativeMemory):
        raise ValueError(f"build() must return an AssociativeMemory; it returned a {type(memory).__name__}")
    if memory.num_pairs != 0:
        # a memory that already holds pairs (build returning one shared memory, say) would be
        # measured on its old pairs plus the new ones: a smaller capacity than the memory's own
        raise ValueError(f"build() must return a fresh, empty memory; it returned a {type(memory).__name__} "
                         f"already holding {memory.num_pairs} pairs (make a new memory inside build, e.g. "
                         "lambda: make_memory(name, d), rather than returning one made outside it)")
    return memory


def _fresh(build: Callable[[], AssociativeMemory], facts: FactSet) -> AssociativeMemory:
    memory = _built(build)
    memory.write(facts.keys, facts.targets)
    return memory


def recall(memory: AssociativeMemory, facts: FactSet, queries: ArrayLike | None = None) -> float:
    """Fraction of facts whose read decodes to their value row (strict argmax over every row).

    Parameters
    ----------
    memory : AssociativeMemory
        Already written with ``facts``.
    facts : FactSet
        ``V >= 2`` value rows.
    queries : array-like, shape ``(F, d_k)``, optional
        Read these instead of the keys: one query per fact, in the order of ``facts``.

    Returns
    -------
    float in ``[0, 1]``

    Raises
    ------
    ValueError
        ``memory`` not an AssociativeMemory (a memory of a Part that is not wrapped in its
        adapter: the message names the adapters) or ``facts`` not a FactSet, ``queries`` whose
        shape is not the keys' ``(F, d_k)`` (one query per fact), or what
        :meth:`AssociativeMemory.read` and :func:`decode` refuse.
    MemoryNotWrittenError
        ``memory`` has no pairs written (never, or not since :meth:`AssociativeMemory.reset`).
    """
    _check_memory(memory)
    _check_facts(facts)
    if queries is not None:
        shape = tuple(queries.shape) if hasattr(queries, "shape") else tuple(torch.as_tensor(queries).shape)
        if shape != tuple(facts.keys.shape):
            raise ValueError(f"queries must have the keys' shape (F, d_k) = {tuple(facts.keys.shape)}, one per "
                             f"fact; got shape {shape}")
    return _recalled(memory.read(facts.keys if queries is None else queries), facts)


def read_error(memory: AssociativeMemory, facts: FactSet) -> float:
    """Seed 000's read error ``mean_i ||y_i - v_{f(i)}||^2`` of a written memory on its keys.

    Raises
    ------
    ValueError
        ``memory`` not an AssociativeMemory or ``facts`` not a FactSet, or what
        :meth:`AssociativeMemory.read` refuses.
    MemoryNotWrittenError
        ``memory`` has no pairs written.
    """
    _check_memory(memory)
    _check_facts(facts)
    y = memory.read(facts.keys).double()
    return float(((y - facts.targets.to(y.device)) ** 2).sum(dim=1).mean())


def noise_seed(seed: int) -> int:
    """The seed of the query-noise directions for the harness seed ``seed``: its own stream.

    ``numpy.random.SeedSequence(seed, spawn_key=(_NOISE_STREAM,))``, so the directions are a draw
    independent of any fact set, spike or memory seeded with ``seed`` itself
    (:func:`assocmem.mlps.margins.perturb_queries` and :func:`assocmem.mlps.facts.make_fact_set`
    both normalise ``torch.randn``: drawn with one seed, the "noise" would be the keys).

    Returns
    -------
    int
        A seed in ``[0, 2**63)``.

    Raises
    ------
    ValueError
        A ``seed`` that is not an integer ``>= 0``.
    """
    seed = as_int(seed, "seed", minimum=0)
    state = np.random.SeedSequence(seed, spawn_key=(_NOISE_STREAM,)).generate_state(2, dtype=np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])


def noisy_recall(memory: AssociativeMemory, facts: FactSet, eps: float, seed: int) -> float:
    """:func:`recall` with queries ``k_i + eps u_i`` (:func:`assocmem.mlps.margins.perturb_queries`).

    ``seed`` is the harness seed of the noise; the directions ``u_i`` are drawn with
    :func:`noise_seed` ``(seed)``, a stream of their own, so that a ``seed`` equal to the facts'
    seed still gives noise independent of the keys.

    Raises
    ------
    ValueError
        A negative or non-finite ``eps``, or a ``seed`` that is not an integer ``>= 0``.
    """
    return recall(memory, facts, perturb_queries(facts.keys, eps, seed=noise_seed(seed)))


def timed_recall(build: Callable[[], AssociativeMemory], facts: FactSet) -> tuple[float, float, float]:
    """``(write_s, read_s, recall)``: wall-clock seconds to write and read ``facts`` (machine-dependent).

    ``build()`` makes a fresh memory; the write and the read of every key are timed once each
    with :func:`time.perf_counter`.

    Raises
    ------
    ValueError
        ``build`` not a callable returning a fresh (empty) AssociativeMemory, ``facts`` not a
        FactSet, or what the memory's ``write`` and ``read`` refuse.
    """
    memory = _built(build)
    _check_facts(facts)
    t0 = time.perf_counter()
    memory.write(facts.keys, facts.targets)
    t1 = time.perf_counter()
    y = memory.read(facts.keys)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, _recalled(y, facts)


def _check_searchable(facts: FactSet) -> None:
    """Refuse a fact set whose capacity search cannot start (the search measures ``F >= 2``)."""
    if facts.num_facts < 2:
        raise ValueError(f"capacity searches F in [2, F_max] and needs F_max >= 2 facts; got a fact set of "
                         f"{facts.num_facts} (draw more facts, e.g. table_facts(d, F_max) with F_max >= 2)")
    first, second = (int(x) for x in facts.mapping[:2].tolist())
    if first == second:
        raise ValueError(f"capacity measures the first F facts for F >= 2, and the first two facts both map "
                         f"to value row {first}: their subset has one value row, which decoding cannot "
                         "decide between; order the facts so that facts 0 and 1 map to different value rows")


def capacity(build: Callable[[], AssociativeMemory], facts: FactSet, *,
             verify: int = 2) -> tuple[int, bool, SearchResult]:
    """The largest ``F`` at which a fresh memory stores the first ``F`` facts with 100 % recall.

    Searches the smallest ``F`` in ``[2, F_max]`` whose recall is below 1 with
    :func:`assocmem.sweeps.smallest_width` (gallop, bisect, then ``verify`` larger ``F`` must fail
    too), and returns one less.

    Parameters
    ----------
    build : callable
        ``build() -> AssociativeMemory``, a fresh empty memory (same seed every time).
    facts : FactSet
        The ``F_max`` facts (:func:`table_facts`), ``F_max >= 2``. The search measures the first
        ``F`` facts (:func:`first_facts`) for ``F >= 2``, decoded against the value rows those
        facts use, so facts 0 and 1 must map to different value rows (a subset with one value
        row has nothing to decode against).
    verify : int, default 2

    Returns
    -------
    (int, bool, SearchResult)
        ``F*`` (at least 1: one fact is always "stored"), whether it is censored (no ``F <= F_max``
        failed, so the capacity is at least ``F_max``), and the search record.

    Raises
    ------
    ValueError
        ``build`` not a callable, a ``build()`` that returns a memory already holding pairs
        (not fresh), ``facts`` not a FactSet, ``F_max < 2``, facts 0 and 1 mapped to one value
        row, ``verify`` not an integer ``>= 0``, or what the memory refuses.
    """
    _check_build(build)
    _check_facts(facts)
    _check_searchable(facts)

    def fails(F: int) -> float:
        return float(recall(_fresh(build, first_facts(facts, F)), first_facts(facts, F)) < 1.0)

    res = smallest_width(fails, lo=2, hi=facts.num_facts, target=1.0, verify=verify)
    if res.m is None:
        return facts.num_facts, True, res
    return res.m - 1, False, res


def pairs_at_error(build: Callable[[], AssociativeMemory], facts: FactSet, eps: float, *,
                   verify: int = 2) -> tuple[int, bool]:
    """The largest ``F`` with read error ``e(F) <= eps`` (0 if even one pair exceeds it).

    The same search as :func:`capacity` on the predicate ``e(F) > eps``, over ``[1, F_max]``.

    Returns
    -------
    (int, bool)
        ``F_eps`` and whether it is censored (no ``F <= F_max`` exceeded ``eps``).

    Raises
    ------
    ValueError
        An ``eps`` that is not a finite real ``>= 0``, ``build`` not a callable or one whose
        memory already holds pairs, ``facts`` not a FactSet, or what the memory refuses.
    """
    eps = as_real(eps, "eps", minimum=0.0)
    _check_build(build)
    _check_facts(facts)

    def exceeds(F: int) -> float:
        sub = first_facts(facts, F)
        return float(read_error(_fresh(build, sub), sub) > eps)

    res = smallest_width(exceeds, lo=1, hi=facts.num_facts, target=1.0, verify=verify)
    if res.m is None:
        return facts.num_facts, True
    return res.m - 1, False


# --------------------------------------------------------------------------------------------
# analysis of the sweep's rows


_BUDGET_COLUMNS = ("memory", "geometry", "W", "F_star", "censored", "grows_with_pairs")


def facts_at_budget(frame: pd.DataFrame, budget: float, d: int) -> pd.DataFrame:
    """The most facts each memory stores with at most ``budget`` parameters.

    For a memory of fixed size (the matrices, Hopfield) or with a size knob (MLPs, binary SDM):
    the largest capacity ``F*`` over its rows with ``W <= budget``. For a memory whose parameters
    grow with the pairs (caches, continuous SDM, modern Hopfield; ``W = F (d_k + d_v)``): it stores
    its first ``F`` pairs for every ``F <= F*``, so it stores ``min(F*, floor(budget / 2d))``.

    A count is a lower bound (``at_least``) when the search was censored at ``F_max``, or when the
    memory has a size knob (a ``size`` column that is not NaN) and no size tried exceeds the budget:
    the grid stopped below the budget, so a larger size that fits was never measured. (Between
    the largest size tried under the budget and the first above it, the grid's own step limits
    the answer; that is the same for every memory with a knob, and the chapter states it.)

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``memory_table`` sweep (columns ``memory, geometry, W, F_star, censored,
        grows_with_pairs``, and ``size`` when the memories have size knobs).
    budget : float
        Parameters allowed, ``> 0``.
    d : int
        The key and value width of the rows, ``>= 1``.

    Returns
    -------
    pandas.DataFrame
        ``memory, geometry, F, W, at_least, facts_per_param``; memories with no row under the
        budget are left out (an empty frame with these columns when none has one).

    Raises
    ------
    ValueError
        A ``frame`` that is not a DataFrame or lacks one of the columns above (the message names
        them), a ``budget`` that is not a finite real ``> 0``, or a ``d`` that is not an integer
        ``>= 1``.
    """
    budget = as_real(budget, "budget", minimum=0.0, strict_min=True)
    d = as_int(d, "d", minimum=1)
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame of memory_table rows; got {type(frame).__name__}")
    missing = [c for c in _BUDGET_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks the columns {missing}; facts_at_budget needs {list(_BUDGET_COLUMNS)}")
    rows = []
    for (memory, geometry), g in frame.groupby(["memory", "geometry"], sort=False):
        if bool(g["grows_with_pairs"].iloc[0]):
            r = g.iloc[0]
            F = int(min(int(r["F_star"]), math.floor(budget / (2 * d))))
            if F < 1:
                continue
            rows.append({"memory": memory, "geometry": geometry, "F": F, "W": F * 2 * d,
                         "at_least": bool(r["censored"]) and F == int(r["F_star"])})
        else:
            ok = g[g["W"] <= budget]
            if ok.empty:
                continue
            r = ok.sort_values(["F_star", "W"], ascending=[False, True]).iloc[0]
            knob = "size" in g.columns and bool(g["size"].notna().any())
            truncated = knob and bool((g["W"] <= budget).all())
            rows.append({"memory": memory, "geometry": geometry, "F": int(r["F_star"]), "W": int(r["W"]),
                         "at_least": bool(r["censored"]) or truncated})
    out = pd.DataFrame(rows, columns=["memory", "geometry", "F", "W", "at_least"])
    out["facts_per_param"] = out["F"] / out["W"]
    return out


def bits_per_parameter(F: ArrayLike, W: ArrayLike) -> np.ndarray:
    """Information stored per parameter, ``F log2 F / W`` (``V = F`` values; seed 001, Theorem 2.4).

    The counting bound says a memory of ``W`` parameters at ``b`` bits each that stores every fact
    set of ``F`` facts over ``F`` values has ``F log2 F <= b W``: this ratio cannot exceed ``b``.

    Parameters
    ----------
    F, W : int or array-like of int
        Facts and parameters (broadcast together): whole numbers, ``F >= 1`` and ``W >= 1``.

    Returns
    -------
    numpy.ndarray of float64
        Bits per parameter, the broadcast shape of ``F`` and ``W``.

    Raises
    ------
    ValueError
        Entries that are not whole numbers (:func:`assocmem._checks.whole_numbers`: booleans and
        strings are refused, not read as 1 or parsed; NaN, inf and non-integral values too),
        ``F < 1`` or ``W < 1`` anywhere, or shapes that do not broadcast.
    """
    F, W = whole_numbers(F, "F"), whole_numbers(W, "W")
    if np.any(F < 1) or np.any(W < 1):
        raise ValueError("need F >= 1 and W >= 1 (W > 0 parameters)")
    try:
        F, W = np.broadcast_arrays(F, W)
    except ValueError:
        raise ValueError(f"F and W shapes {F.shape} and {W.shape} do not broadcast") from None
    return F * np.log2(F) / W
