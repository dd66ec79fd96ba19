"""The ``memory_table`` sweep: every memory of the book, measured by one harness (chapter 50).

One grid point is one memory at one size on one geometry. At every point the harness
(:mod:`assocmem.compare.harness`) draws the same fact set (it depends on ``d``, ``F_max``, the
geometry and the base seed only, never on the memory), and measures

``F_star``, ``censored``   the capacity: the largest ``F`` stored with 100 % argmax recall
                           (``censored``: none up to ``F_max`` failed);
``W``, ``num_bits``        parameters and their storage at ``F_star`` (they grow with ``F`` for the
                           caches);
``F_eps``                  the largest ``F`` with read error at most ``read_error_eps``
                           (``F_eps_censored`` likewise);
``error_at_capacity``      the read error at ``F_star``;
``noise_<eps>``            recall at the capacity ``F_star`` (at least 2 facts) with queries
                           ``k + eps u``: how much of what the memory can hold survives noise;
``load_clean``             recall of the first ``noise_load`` facts (the same load for every
                           memory) with clean queries;
``load_noise_<eps>``       the same facts with noisy queries, so that memories can be compared
                           under noise at one load rather than each at its own capacity;
``write_s``, ``read_s``    wall-clock seconds to write and read ``time_facts`` facts, the same
                           number for every memory (machine-dependent);
``clean_at_time_facts``    recall of those ``time_facts`` facts with clean queries;
``n_evaluations``          memories built by the capacity search.

Presets
-------
``quick``  ``d = 16``, ``F_max = 256``, MLP widths 4, 16, 64, SDM neurons 31, 124, 496 (see
           :func:`sdm_neurons`); no gradient descent. Seconds.
``cpu``    ``d = 32``, ``F_max = 2048``, MLP widths 4 to 256, SDM neurons 63 to 16128; gradient
           descent at widths 4 to 32 (every width of the grid below chapter 50's budget
           ``(2d)^2``) with 2,000 epochs (the source's 10,000 cost minutes per width on a CPU;
           recorded in ``notes``), three trainings per width. About 25 minutes on one core.
``paper``  ``d = 64``, ``F_max = 8192``, wider grids, gradient descent with 10,000 epochs at every
           width, three trainings per width. A GPU or Ray job.

Trainings. Gradient descent is a sample over initialisations: the presets that run it store
``gd_trainings`` trainings of every GD point (the column ``training``; every other memory is built
once, training 0), and :func:`median_training` and :func:`training_views` turn the stored frame
into one row per point for the chapter's tables.

References
----------
Seed 000, §7; seed 001, Sec. 4.3 and App. A.3.1; seed 002 and Bricken & Pehlevan (2021).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from assocmem._checks import as_bool, as_int, as_real, seed_int
from assocmem.compare.adapters import MEMORIES, MEMORY_INFO, make_memory
from assocmem.sweeps.spread import median_training as spread_median
from assocmem.sweeps.spread import training_views as spread_views
from assocmem.compare.harness import (
    GEOMETRIES,
    capacity,
    first_facts,
    noisy_recall,
    pairs_at_error,
    read_error,
    recall,
    table_facts,
    timed_recall,
)
from assocmem.devices import torch_threads
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import register_sweep

if TYPE_CHECKING:
    from assocmem._typing import PathLike
    from collections.abc import Sequence
    import torch

__all__ = [
    "TableConfig",
    "TABLE_PRESETS",
    "table_points",
    "table_point",
    "noise_column",
    "noise_load",
    "sdm_neurons",
    "load_table_results",
    "median_training",
    "training_views",
    "gd_agreement_rules",
]


def noise_column(eps: float, *, at_load: bool = False) -> str:
    """The column of recall under query noise ``eps``: at capacity (``noise_0.1``) or at the fixed
    load ``noise_load`` (``load_noise_0.1``).

    Raises
    ------
    ValueError
        ``eps`` not a finite real ``>= 0`` (a str, NaN or a negative level names no column), or
        ``at_load`` not a bool.
    """
    eps = as_real(eps, "eps", minimum=0.0)
    return f"{'load_' if as_bool(at_load, 'at_load') else ''}noise_{eps:g}"


def _check_config(config) -> "TableConfig":
    if not isinstance(config, TableConfig):
        raise ValueError(f"config must be a TableConfig; got {type(config).__name__}")
    return config


def noise_load(config: "TableConfig") -> int:
    """Facts written for the fixed-load noise columns: ``config.noise_load``, or ``d // 2`` (at least 2).

    Raises
    ------
    ValueError
        ``config`` not a TableConfig.
    """
    config = _check_config(config)
    return config.noise_load if config.noise_load is not None else max(2, config.d // 2)


@dataclass(frozen=True)
class TableConfig:
    """Settings of the ``memory_table`` sweep.

    Raises
    ------
    ValueError
        On construction: unknown memories or geometries, ``d < 2``, ``F_max < 2``, sizes that are not
        positive integers, a ``time_facts`` outside ``[2, F_max]``, a negative ``read_error_eps`` or
        noise level, a ``spike_beta <= -1``, non-integer epochs or seed, ``gd_trainings < 1``.
    """

    d: int  # key and value width
    F_max: int  # facts drawn; capacities are searched in [2, F_max]
    mlp_widths: tuple[int, ...]  # hidden widths m of the MLP memories
    sdm_neurons: tuple[int, ...]  # neuron counts r of the binary SDM
    memories: tuple[str, ...] = MEMORIES
    geometries: tuple[str, ...] = GEOMETRIES
    gd_widths: tuple[int, ...] = ()  # widths at which gradient descent is run (a subset of mlp_widths)
    gd_epochs: int = 10000
    gd_trainings: int = 1  # trainings (initialisations) of gradient descent at every GD width
    spike_beta: float = 1.5
    read_error_eps: float = 0.1
    noise: tuple[float, ...] = (0.1, 0.3, 0.5)
    noise_load: int | None = None  # facts written for the fixed-load noise columns; None is d // 2
    time_facts: int = 8  # facts written for the time measurement
    verify: int = 2
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        as_int(self.d, "d", minimum=2)
        as_int(self.F_max, "F_max", minimum=2)
        bad = [m for m in self.memories if m not in MEMORY_INFO]
        if bad or not self.memories:
            raise ValueError(f"unknown memories {bad}; valid memories: {', '.join(MEMORIES)}")
        bad = [g for g in self.geometries if g not in GEOMETRIES]
        if bad or not self.geometries:
            raise ValueError(f"unknown geometries {bad}; valid geometries: {', '.join(GEOMETRIES)}")
        for name in ("mlp_widths", "sdm_neurons", "gd_widths"):
            for s in getattr(self, name):
                as_int(s, name, minimum=1)
        as_int(self.gd_epochs, "gd_epochs", minimum=1)
        as_int(self.gd_trainings, "gd_trainings", minimum=1)
        as_real(self.spike_beta, "spike_beta", minimum=-1.0, strict_min=True)
        as_real(self.read_error_eps, "read_error_eps", minimum=0.0)
        for e in self.noise:
            as_real(e, "noise", minimum=0.0)
        if self.noise_load is not None:
            as_int(self.noise_load, "noise_load", minimum=2)
            if self.noise_load > self.F_max:
                raise ValueError(f"noise_load = {self.noise_load} exceeds F_max = {self.F_max}")
        as_int(self.time_facts, "time_facts", minimum=2)
        if self.time_facts > self.F_max:
            raise ValueError(f"time_facts = {self.time_facts} exceeds F_max = {self.F_max}")
        as_int(self.verify, "verify", minimum=0)
        seed_int(self.seed)


def _sizes(config: TableConfig, memory: str) -> tuple:
    knob = MEMORY_INFO[memory].size
    if knob is None:
        return (None,)
    if memory == "mlp_gd":
        return tuple(config.gd_widths)
    return tuple(config.mlp_widths if knob == "m" else config.sdm_neurons)


def _trainings(config: TableConfig, memory: str) -> range:
    return range(config.gd_trainings if MEMORY_INFO[memory].trained else 1)


def table_points(config: TableConfig) -> list[dict]:
    """The grid: ``{"memory", "geometry", "size", "training"}`` per point (``size`` None for
    fixed-size memories).

    A trained memory (gradient descent) has ``config.gd_trainings`` points per size, trainings
    ``0, 1, ...`` from independent initialisations on the same facts (the point's seed differs);
    every other memory is built once, training 0.

    Raises
    ------
    ValueError
        ``config`` not a TableConfig.
    """
    config = _check_config(config)
    return [{"memory": m, "geometry": g, "size": None if s is None else int(s), "training": t}
            for m in config.memories for g in config.geometries for s in _sizes(config, m)
            for t in _trainings(config, m)]


def _seed(config: TableConfig, what: str) -> int:
    """The seed of the fact set, the spike direction or the query noise: one per ``(d, what)``,
    shared by every memory (paired comparisons), distinct from each other and from the memories'."""
    return point_seed(config, {"table": what, "d": config.d})


def _builder(config: TableConfig, point: dict, device):
    options = {"epochs": config.gd_epochs} if point["memory"] == "mlp_gd" else {}
    seed = point_seed(config, point)

    def build():
        return make_memory(point["memory"], config.d, point["size"], seed, device=device, **options)

    return build


def table_point(config: TableConfig, point: dict, device: torch.device) -> dict:
    """Measure one memory at one size on one geometry (module docstring: the columns).

    The fact set, its spike and the query noise depend on ``(d, F_max, geometry, seed)`` only, so
    every memory of the same geometry sees the same facts and the same noisy queries. Runs on one CPU thread (the stored runs did: the same
    arithmetic every time).

    Raises
    ------
    ValueError
        ``config`` not a TableConfig, or ``point`` not a point of its grid (:func:`table_points`).
    """
    config = _check_config(config)
    if not isinstance(point, dict) or point not in table_points(config):
        raise ValueError(f"point must be one of table_points(config); got {point!r}")
    with torch_threads(1, device):
        return _measure(config, point, device)


def _measure(config: TableConfig, point: dict, device) -> dict:
    info = MEMORY_INFO[point["memory"]]
    facts = table_facts(config.d, config.F_max, point["geometry"], seed=_seed(config, "facts"),
                        beta=config.spike_beta, spike_seed=_seed(config, "spike"))
    build = _builder(config, point, device)
    F_star, censored, search = capacity(build, facts, verify=config.verify)
    at_cap = first_facts(facts, F_star)
    memory = build().write(at_cap.keys, at_cap.targets)
    F_eps, eps_censored = pairs_at_error(build, facts, config.read_error_eps, verify=config.verify)
    loaded = first_facts(facts, max(F_star, 2))  # the noise is measured at the memory's own capacity
    noisy = memory if F_star >= 2 else build().write(loaded.keys, loaded.targets)
    at_load = first_facts(facts, min(noise_load(config), config.F_max))
    load_memory = build().write(at_load.keys, at_load.targets)
    write_s, read_s, clean = timed_recall(build, first_facts(facts, config.time_facts))
    row = {
        "W": memory.num_parameters,
        "num_bits": memory.num_bits,
        "F_star": F_star,
        "censored": censored,
        "F_eps": F_eps,
        "F_eps_censored": eps_censored,
        "error_at_capacity": read_error(memory, at_cap),
        "clean_at_time_facts": clean,
        **{noise_column(e): noisy_recall(noisy, loaded, e, seed=_seed(config, "noise")) for e in config.noise},
        "load_clean": recall(load_memory, at_load),
        **{noise_column(e, at_load=True): noisy_recall(load_memory, at_load, e, seed=_seed(config, "noise"))
           for e in config.noise},
        "write_s": write_s,
        "read_s": read_s,
        "n_evaluations": search.n_evaluations,
        "monotone_violations": len(search.monotone_violations),
        "part": info.part,
        "grows_with_pairs": info.grows_with_pairs,
        "d": config.d,
    }
    if F_star > 1 and recall(memory, at_cap) < 1.0:  # the search's answer was evaluated and stored its facts
        raise RuntimeError(f"{point}: the memory at F* = {F_star} does not store its facts")
    return row


def sdm_neurons(d: int, count: int) -> tuple[int, ...]:
    """Neuron counts ``r_k = floor(((2d)^2 - 1) / (2d + 1)) 4^k``, ``k < count``: a binary SDM on
    ``d``-bit addresses with ``d``-wide contents then has ``W = r (2d + 1)`` just below the budgets
    ``(2d)^2 4^k`` at which chapter 50 compares memories (``(2d)^2`` is the Hopfield network's size).

    Raises
    ------
    ValueError
        ``d`` or ``count`` not a positive integer.
    """
    d, count = as_int(d, "d", minimum=1), as_int(count, "count", minimum=1)
    base = ((2 * d) ** 2 - 1) // (2 * d + 1)
    return tuple(base * 4**k for k in range(count))


TABLE_PRESETS = {
    "quick": TableConfig(d=16, F_max=256, mlp_widths=(4, 16, 64), sdm_neurons=sdm_neurons(16, 3), time_facts=16,
                         memories=tuple(m for m in MEMORIES if m != "mlp_gd"),
                         notes=("gradient descent not run (minutes per width)",)),
    "cpu": TableConfig(d=32, F_max=2048, mlp_widths=(4, 8, 16, 32, 64, 128, 256),
                       sdm_neurons=sdm_neurons(32, 5), gd_widths=(4, 8, 16, 32), gd_epochs=2000, gd_trainings=3,
                       time_facts=64,
                       notes=("gradient descent at widths 4 to 32 only (every width of the grid below the "
                              "budget (2d)^2), 2,000 epochs (the source's 10,000 take minutes per width on a "
                              "CPU), three trainings per width",)),
    "paper": TableConfig(d=64, F_max=8192, mlp_widths=(4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048),
                         sdm_neurons=sdm_neurons(64, 5), gd_widths=(8, 32, 128, 512), gd_trainings=3,
                         time_facts=256),
}

register_sweep(
    "memory_table",
    config_type=TableConfig,
    presets=TABLE_PRESETS,
    points=table_points,
    run_point=table_point,
    description="every memory of the book on the same fact sets: capacity at 100 % argmax recall, read "
                "error, query noise, time (chapter 50)",
)


def load_table_results(presets: Sequence[str] = ("paper", "cpu"),
                       results_dir: PathLike | None = None) -> tuple[str, pd.DataFrame]:
    """The stored results of the largest preset that has been run: ``(preset, frame)``.

    Raises
    ------
    FileNotFoundError
        If none of them is stored.
    """
    from assocmem.sweeps.store import load_largest_results

    return load_largest_results("memory_table", presets, results_dir)


def _check_frame(frame) -> pd.DataFrame:
    need = {"memory", "geometry", "size", "training", "F_star"}
    if not isinstance(frame, pd.DataFrame) or need - set(frame.columns):
        missing = sorted(need - set(frame.columns)) if isinstance(frame, pd.DataFrame) else sorted(need)
        raise ValueError(f"frame must hold memory_table rows; missing columns {missing}")
    return frame


def training_views(frame: pd.DataFrame) -> dict[int, pd.DataFrame]:
    """The stored table as seen by each training: ``{t: rows}``, one row per point.

    View ``t`` keeps every untrained memory's row and, for each trained point, the row of its
    training ``t``. A claim about the table that involves a trained memory is checked in every
    view: it holds in all, some or none of the trainings.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``memory_table`` sweep (columns ``memory, geometry, size, training, F_star``).

    Returns
    -------
    dict of int to pandas.DataFrame
        One view per stored training index, in order; each has the ``training`` column dropped.

    Raises
    ------
    ValueError
        ``frame`` lacks those columns, or a trained point lacks one of the trainings.
    """
    frame = _check_frame(frame)
    trained = frame.memory.map(lambda m: MEMORY_INFO[m].trained)
    keys = ["memory", "geometry", "size"]
    counts = frame[trained].groupby(keys, dropna=False)["training"].nunique()
    stored = frame.loc[trained, "training"].nunique()
    if len(counts) and counts.min() < stored:
        raise ValueError(f"a trained point stores {counts.min()} of the {stored} trainings")
    return spread_views(frame, keys)


def median_training(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per point: each trained point's row of its median training by capacity ``F_star``.

    The row is one training's, whole (its columns are never mixed between trainings): with an
    even number of trainings, or ties, the lower median's row of the smallest training index.
    Untrained memories keep their one row.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``memory_table`` sweep (columns ``memory, geometry, size, training, F_star``).

    Returns
    -------
    pandas.DataFrame
        The rows in ``frame``'s order, the ``training`` column kept (which training each row is).

    Raises
    ------
    ValueError
        ``frame`` lacks those columns.
    """
    return spread_median(_check_frame(frame), ["memory", "geometry", "size"], "F_star")


def gd_agreement_rules(config: TableConfig) -> dict:
    """The rules a rerun of the trained (GD) rows must meet, as keyword arguments of
    :func:`assocmem.sweeps.check_spread`.

    A GD row is one training: a rerun on another CPU ends elsewhere, so it is compared with the
    spread of the stored trainings of its point, never with one of them. Counts (``F_star``,
    ``F_eps``) have resolution 1; recall fractions and the read error 0 (the pooled spread of the
    column is the floor). The settings that follow from the point (``W``, ``num_bits``, ``d``,
    ``part``, ``grows_with_pairs``) and the censoring flags must be equal; the search's bookkeeping,
    the times and the seed (which differs between trainings) are not compared.

    Raises
    ------
    ValueError
        ``config`` not a TableConfig.
    """
    config = _check_config(config)
    fractions = ["clean_at_time_facts", "load_clean", *[noise_column(e) for e in config.noise],
                 *[noise_column(e, at_load=True) for e in config.noise]]
    return {
        "keys": ["memory", "geometry", "size"],
        "columns": {"F_star": 1.0, "F_eps": 1.0, "error_at_capacity": 0.0, **{c: 0.0 for c in fractions}},
        "exact": ["W", "num_bits", "censored", "F_eps_censored", "part", "grows_with_pairs", "d"],
        "ignore": ["n_evaluations", "monotone_violations", "write_s", "read_s", "wall_time_s", "seed"],
        "training": "training",
    }
