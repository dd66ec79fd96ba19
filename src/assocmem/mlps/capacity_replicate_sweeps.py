"""More capacity searches beside the ``capacity`` sweep: GD at more loads, more fact sets per point.

The ``capacity`` sweep (:mod:`assocmem.mlps.capacity_sweeps`) searches one fact set per point and,
in its ``cpu`` preset, gradient descent only at ``alpha <= 1/16``. This sweep, ``capacity_more``,
adds to it without touching its stored results (a changed config would make the results store
refuse them, :class:`assocmem.sweeps.ConfigMismatchError`):

* GD at the loads ``gd_alphas`` on the base preset's own fact set (replicate 0), so that the
  data-dependent-over-GD ratio of chapter 13 rests on more loads;
* the same search on further fact sets (replicates ``1, 2, ...``) at the loads ``alphas`` for
  the constructions and at ``gd_replicate_alphas`` for GD, so that every ratio and every width
  can be shown with its spread over fact sets.

GD is a sample over initialisations: every GD point is searched in the base preset's
``gd_trainings`` trainings (column ``training``; three in ``cpu``), as in the ``capacity`` sweep,
and a rerun of a GD row is checked against their spread
(:func:`assocmem.mlps.capacity_sweeps.gd_agreement_rules`).

Every row names its replicate; replicate 0 is the fact set of the base ``capacity`` preset
(:func:`assocmem.mlps.capacity_sweeps.capacity_fact_set`), with the weights seed that preset
would give the point, so a GD row at replicate 0 extends that preset's GD column. Replicate
``r >= 1`` draws its fact set and weights from seeds derived from the base config, ``(d, F)``
and ``r`` (:func:`replicate_fact_set`).

Presets
-------
``quick``  ``d = 16``, two loads, the four closed forms on one more fact set. Seconds.
``cpu``    base ``cpu`` (``d = 64``): GD at ``alpha = 1/8`` on the base fact sets; two more fact
           sets per point for the four constructions at ``alpha <= 1/4`` and for GD at
           ``alpha = 1/32``, three trainings of every GD point. The committed run took 42 min
           with two workers on two cores shared with the ``capacity`` sweep.
``gd_quarter``  base ``cpu``: GD alone at ``alpha = 1/4`` (``F = 1024``) on the base fact set,
           isotropic only, three trainings of the protocol's 10,000 epochs; no constructions,
           no further fact sets. Stores the speculative trainings of each search
           (``record_speculative``). Anisotropic is not run for time (each training is tens of
           minutes on a CPU core). The committed run took 43 min with two workers on two shared
           cores (its three trainings 21, 22 and 30 min).
``paper``  base ``paper``: GD at every load of the paper; four more fact sets per point for
           every method at every load (a GPU or a Ray cluster).

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"): Sec. 4.3, Figure 2c, App. A.3.1 (capacity
protocol), A.5.2 (anisotropic capacity, Figure 11).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from assocmem._checks import as_int, as_real
from assocmem.mlps import capacity_sweeps as CS
from assocmem.mlps.facts import FactSet, make_fact_set, with_spike
from assocmem.sweeps import spread
from assocmem.sweeps.config import OMIT_DEFAULT, point_seed
from assocmem.sweeps.registry import register_sweep
from assocmem.devices import resolve_device

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = [
    "ReplicateConfig",
    "REPLICATE_PRESETS",
    "base_config",
    "replicate_fact_set",
    "replicate_points",
    "replicate_point",
    "weights_seed",
    "median_training",
    "training_views",
]


@dataclass(frozen=True)
class ReplicateConfig:
    """Settings of the ``capacity_more`` sweep.

    Raises
    ------
    ValueError
        On construction: a ``base`` that is not a preset of the ``capacity`` sweep, replicates
        that are not integers ``>= 1``, loads that are not positive reals, unknown methods or
        geometries, ``dims`` that are not integers ``>= 2``, a ``record_speculative`` that is not a
        bool, or a config whose grid is empty (no ``gd_alphas``, and no replicates with loads to
        search). Empty ``replicates`` or ``methods`` are allowed (e.g. GD on the base fact set
        only).
    """

    base: str  # the capacity preset whose fact sets (replicate 0) and protocol are shared
    dims: tuple[int, ...]  # embedding widths d
    replicates: tuple[int, ...]  # further fact sets, numbered from 1 (0 is the base preset's)
    alphas: tuple[float, ...]  # loads at which the replicates are searched (constructions)
    gd_alphas: tuple[float, ...] = ()  # loads at which GD is searched on the base fact set
    gd_replicate_alphas: tuple[float, ...] = ()  # loads at which GD is searched on the replicates
    methods: tuple[str, ...] = ("ntk", "unwhitened", "whitened", "data_dependent")
    geometries: tuple[str, ...] = CS.GEOMETRIES
    notes: tuple[str, ...] = field(default=())
    # GD rows also store the speculative trainings of the search (columns ``speculative`` and
    # ``speculative_widths``); off in the presets stored before it, and left out of their config
    record_speculative: bool = field(default=False, metadata={OMIT_DEFAULT: True})

    def __post_init__(self):
        if self.base not in CS.CAPACITY_PRESETS:
            raise ValueError(f"base must be a capacity preset ({', '.join(CS.CAPACITY_PRESETS)}); got {self.base!r}")
        if not self.dims or any(isinstance(d, bool) or not isinstance(d, int) or d < 2 for d in self.dims):
            raise ValueError(f"dims must be integers >= 2; got {self.dims!r}")
        for r in self.replicates:
            as_int(r, "replicate", minimum=1)
        for a in (*self.alphas, *self.gd_alphas, *self.gd_replicate_alphas):
            as_real(a, "alpha", minimum=0.0, strict_min=True)
        bad = [m for m in self.methods if m not in CS.METHODS]
        if bad:
            raise ValueError(f"unknown method(s) {bad}; valid methods: {', '.join(CS.METHODS)}")
        bad = [g for g in self.geometries if g not in CS.GEOMETRIES]
        if bad or not self.geometries:
            raise ValueError(f"unknown geometry(ies) {bad}; valid geometries: {', '.join(CS.GEOMETRIES)}")
        if not isinstance(self.record_speculative, bool):
            raise ValueError(f"record_speculative must be a bool; got {self.record_speculative!r}")
        constructions = self.alphas and any(m != "gd" for m in self.methods)
        if not (self.gd_alphas or (self.replicates and (self.gd_replicate_alphas or constructions))):
            raise ValueError("the config searches nothing: give gd_alphas, or replicates with "
                             "gd_replicate_alphas or with alphas and a construction in methods")


def base_config(config: ReplicateConfig) -> CS.CapacityConfig:
    """The ``capacity`` preset this sweep extends (its protocol, seeds and spike direction)."""
    return CS.CAPACITY_PRESETS[config.base]


def replicate_fact_set(config: ReplicateConfig, d: int, F: int, geometry: str, replicate: int,
                       device: str | torch.device | None = None) -> FactSet:
    """The tied fact set of one replicate at ``(d, F)``; replicate 0 is the base preset's.

    Parameters
    ----------
    config : ReplicateConfig
    d, F : int
        Embedding width and number of facts.
    geometry : {"isotropic", "anisotropic"}
        As in :func:`assocmem.mlps.capacity_sweeps.capacity_fact_set` (same spike direction).
    replicate : int
        ``0`` for the base preset's fact set, ``r >= 1`` for a fresh one drawn from a seed
        derived from the base config, ``d``, ``F`` and ``r``.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    FactSet
        Keys ``(F, d)``, values ``(F, d)`` (the permuted keys), identity map; float64.

    Raises
    ------
    ValueError
        An unknown geometry, sizes that are not positive integers, or a negative replicate.
    """
    device = resolve_device(device)
    base = base_config(config)
    replicate = as_int(replicate, "replicate", minimum=0)
    if replicate == 0:
        return CS.capacity_fact_set(base, d, F, geometry, device=device)
    if geometry not in CS.GEOMETRIES:
        raise ValueError(f"unknown geometry {geometry!r}; valid geometries: {', '.join(CS.GEOMETRIES)}")
    d, F = as_int(d, "d", minimum=1), as_int(F, "F", minimum=1)
    seed = point_seed(base, {"facts_d": d, "facts_F": F, "facts_replicate": replicate})
    facts = make_fact_set(F, d, tied=True, seed=seed, device=device)
    if geometry == "anisotropic":
        facts = with_spike(facts, base.beta, on="both", direction=CS.spike_direction(base, d))
    return facts


def replicate_points(config: ReplicateConfig) -> list[dict]:
    """The grid: ``{"method", "geometry", "d", "alpha", "F", "replicate", "training"}`` per point,
    GD first.

    GD is searched in the base preset's ``gd_trainings`` trainings at every GD point (independent
    initialisations on the same fact set, :func:`weights_seed`); every construction once,
    training 0.
    """
    trainings = range(base_config(config).gd_trainings)
    grid = []
    for d in config.dims:
        for geometry in config.geometries:
            for alpha in config.gd_alphas:
                for t in trainings:
                    grid.append({"method": "gd", "geometry": geometry, "d": int(d), "alpha": float(alpha),
                                 "F": CS.num_facts(alpha, d), "replicate": 0, "training": t})
    for r in config.replicates:
        for d in config.dims:
            for geometry in config.geometries:
                for alpha in config.gd_replicate_alphas:
                    for t in trainings:
                        grid.append({"method": "gd", "geometry": geometry, "d": int(d),
                                     "alpha": float(alpha), "F": CS.num_facts(alpha, d),
                                     "replicate": int(r), "training": t})
    for r in config.replicates:
        for method in config.methods:
            if method == "gd":
                continue
            for d in config.dims:
                for geometry in config.geometries:
                    for alpha in config.alphas:
                        grid.append({"method": method, "geometry": geometry, "d": int(d), "alpha": float(alpha),
                                     "F": CS.num_facts(alpha, d), "replicate": int(r), "training": 0})
    return grid


def weights_seed(config: ReplicateConfig, point: dict) -> int:
    """The seed of a point's random weights (features, NTK gate, GD initialisation).

    Replicate 0 has the seed the base ``capacity`` preset gives the same point and training
    (:func:`assocmem.mlps.capacity_sweeps.weights_seed`), so its GD rows extend that preset's GD
    column; replicate ``r >= 1`` a seed of its own, training 0 without the training in its key
    (the seed the sweep gave before it stored trainings), training ``t >= 1`` with it.

    Raises
    ------
    KeyError
        A point without ``replicate`` or one of the base sweep's point keys.
    ValueError
        A replicate or training that is not an integer ``>= 0``.
    """
    base = base_config(config)
    replicate = as_int(point["replicate"], "replicate", minimum=0)
    t = as_int(point.get("training", 0), "training", minimum=0)
    key = {k: point[k] for k in CS.POINT_KEYS}
    if not replicate:  # the base preset's own weights
        return CS.weights_seed(base, {**key, "training": t})
    return point_seed(base, {**key, "replicate": replicate, **({"training": t} if t else {})})


def replicate_point(config: ReplicateConfig, point: dict, device: torch.device) -> dict:
    """One capacity search (the base preset's protocol) on one replicate's fact set.

    Returns
    -------
    dict
        The columns of :func:`assocmem.mlps.capacity_sweeps.capacity_point` except ``seed``
        (the engine adds this sweep's own), plus ``weights_seed``: the seed of the weights
        (for replicate 0, the one the base preset gives the same point); with
        ``config.record_speculative``, also ``speculative`` (how many widths GD trained ahead of
        need and did not use; 0 for a construction) and ``speculative_widths`` (those widths,
        ``;``-separated).
    """
    base = base_config(config)
    method, d, F = point["method"], point["d"], point["F"]
    facts = replicate_fact_set(config, d, F, point["geometry"], point["replicate"], device=device)
    seed = weights_seed(config, point)
    res = CS.capacity_search(facts, method, seed, lo=base.lo, hi=base.hi, verify=base.verify,
                             epochs=base.gd_epochs, lr=base.gd_lr, device=device)
    row = {
        **CS.search_columns(res, d),
        "epochs": base.gd_epochs if method == "gd" else None,
        "beta": base.beta if point["geometry"] == "anisotropic" else 0.0,
        "weights_seed": seed,
    }
    if config.record_speculative:
        row["speculative"] = len(res.speculative)
        row["speculative_widths"] = ";".join(str(m) for m, _ in res.speculative)
    return row


#: The columns of a point without its training.
POINT_KEYS = (*CS.POINT_KEYS, "replicate")


def median_training(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per point of a ``capacity_more`` frame: each GD point's median training by ``m``.

    As :func:`assocmem.mlps.capacity_sweeps.median_training`, with the replicate in the key.

    Raises
    ------
    TypeError, ValueError
        ``frame`` not a DataFrame, or without the columns :data:`POINT_KEYS`, ``training``, ``m``.
    """
    return spread.median_training(frame, POINT_KEYS, "m")


def training_views(frame: pd.DataFrame) -> dict[int, pd.DataFrame]:
    """A ``capacity_more`` frame as each GD training sees it: ``{t: rows}``, one row per point.

    As :func:`assocmem.mlps.capacity_sweeps.training_views`, with the replicate in the key.

    Raises
    ------
    TypeError, ValueError
        ``frame`` not a DataFrame, without the columns :data:`POINT_KEYS` and ``training``, or a
        GD point that lacks one of the trainings.
    """
    return spread.training_views(frame, POINT_KEYS)


REPLICATE_PRESETS = {
    "quick": ReplicateConfig(base="quick", dims=(16,), replicates=(1,), alphas=(1 / 32, 1 / 16),
                             notes=("no GD (minutes per search)",)),
    "cpu": ReplicateConfig(
        base="cpu", dims=(64,), replicates=(1, 2), alphas=(1 / 32, 1 / 16, 1 / 8, 1 / 4),
        gd_alphas=(1 / 8,), gd_replicate_alphas=(1 / 32,),
        notes=("GD on the base fact sets at alpha = 1/8 (the cpu capacity preset stops at 1/16); "
               "two more fact sets for the constructions at alpha <= 1/4 and for GD at alpha = 1/32",),
    ),
    "gd_quarter": ReplicateConfig(
        base="cpu", dims=(64,), replicates=(), alphas=(), gd_alphas=(1 / 4,), methods=(),
        geometries=("isotropic",), record_speculative=True,
        notes=("GD alone at alpha = 1/4 (F = 1024) on the base cpu fact set (replicate 0), three "
               "trainings of 10,000 epochs: the data-dependent / GD ratio of chapter 13 at one "
               "more load (the cpu capacity preset stops GD at 1/16, capacity_more cpu at 1/8)",
               "isotropic only: the anisotropic point would double the run (each training is "
               "tens of minutes on one CPU core), which the session's time did not allow",),
    ),
    "paper": ReplicateConfig(
        base="paper", dims=(64, 90, 128), replicates=(1, 2, 3, 4), alphas=CS.PAPER_ALPHAS,
        gd_replicate_alphas=CS.PAPER_ALPHAS, methods=CS.METHODS,
    ),
}

register_sweep(
    "capacity_more",
    config_type=ReplicateConfig,
    presets=REPLICATE_PRESETS,
    points=replicate_points,
    run_point=replicate_point,
    description="the capacity search at more GD loads and on more fact sets per point (seed 001, "
                "Fig. 2c and 11; extends the capacity sweep)",
)
