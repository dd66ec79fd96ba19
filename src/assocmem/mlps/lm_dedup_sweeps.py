"""Fig. 13 on deduplicated language-model activations, and the near-twin share of every draw.

Chapter 17 reran seed 001's Fig. 13 (the smallest whitened MLP recalling 98 % of ``F`` facts
drawn from a language model's MLP inputs and outputs, App. A.5.3) on the book's own language
model, and the source's uniform draws failed: from ``F = 1024`` on most searches find no width
at all. The chapter blamed its templated corpus, whose keys come in *near-twins* (a second key
within ``1e-4`` of cosine 1). This sweep tests that explanation.

``lm_dedup``  one row per ``(training, draw, F, rep)``. Every row gives the near-twin share of
    its fact set: the fraction of keys (values; pairs whose key or value) with another one at
    cosine above ``1 - twin_gap``, and the median nearest-neighbour cosine of the keys
    (:func:`assocmem.mlps.lm_embeddings.twins.near_twin_stats`). The draws are

    * ``"uniform"`` and ``"separated"``: the fact sets of ``lm_capacity`` (the same point keys,
      base seed and ``max_cosine``, so the same facts: their near-twin share is measured here,
      their searches are stored there);
    * ``"deduplicated"``: the near-twins removed at the diagnostic's own threshold. The pairs are
      visited in a seeded random order and a pair is kept only if neither its key nor its value
      has a cosine above ``1 - twin_gap`` with one already kept
      (:func:`assocmem.mlps.lm_embeddings.sample_fact_set` with ``max_cosine = 1 - twin_gap``),
      so no two keys and no two values of the fact set are near-twins, and nothing else is
      removed.

    For the draws in ``search_draws`` the row also holds the capacity search of ``lm_capacity``
    (:func:`assocmem.mlps.lm_embedding_sweeps.capacity_point`'s columns: the same protocol,
    target and range); for the others those columns are empty.

Presets: ``quick`` (the toy language model of ``fact_editing``'s quick preset), ``cpu``
(committed: chapter 16's cpu base model, ``lm_capacity``'s cpu grid, three trainings), ``paper``
(``lm_capacity``'s paper grid on real Qwen3 pairs, which the book does not ship).

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.5.3 (Fig. 13), App. A.3.1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from assocmem._checks import as_int, as_real, positive_int, seed_int
# module imports, not names: this module may be imported while lm_embedding_sweeps or
# capacity_sweeps is still initialising (the registry imports every sweep module)
import assocmem.mlps.capacity_sweeps as CS
import assocmem.mlps.lm_embedding_sweeps as LS
from assocmem.mlps.lm_embeddings.specs import check_grid, check_pairs_spec, check_trainings
from assocmem.mlps.lm_embeddings import sample_fact_set
from assocmem.mlps.lm_embeddings.twins import near_twin_stats
from assocmem.mlps.margin_sweeps.points import sub_seeds
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import register_sweep

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["DEDUP_DRAWS", "LMDedupConfig", "LM_DEDUP_PRESETS", "near_twin_stats", "dedup_points",
           "dedup_point", "draw_limit", "agreement_rules"]

#: The draws of ``lm_dedup``: the two of ``lm_capacity`` and the deduplicated one.
DEDUP_DRAWS = ("uniform", "separated", "deduplicated")
#: near_twin_stats' fractions (of keys, values, facts): one fact's share is their resolution
_TWIN_SHARES = ("key_twin_share", "value_twin_share", "pair_twin_share")
_SEARCH_KEYS = ("m", "W", "found", "accuracy", "best_accuracy", "n_evaluations",
                "monotone_violations", "violation_widths", "restarts")


@dataclass(frozen=True)
class LMDedupConfig:
    """Settings of ``lm_dedup``.

    ``pairs``, ``Fs``, ``reps``, ``max_cosine``, ``target``, ``lo``, ``hi``, ``verify``,
    ``trainings`` and ``seed`` mean what they mean in
    :class:`assocmem.mlps.lm_embedding_sweeps.LMCapacityConfig`; with the same values the
    ``uniform`` and ``separated`` draws are that sweep's fact sets.

    Raises
    ------
    ValueError
        On construction: a bad ``pairs`` spec or ``Fs`` grid, draws not from
        :data:`DEDUP_DRAWS` (or repeated), ``search_draws`` not among ``draws``, a ``twin_gap``
        outside ``(0, 1)``, a ``max_cosine`` outside ``(-1, 1)``, a ``target`` outside ``(0, 1]``,
        a bad search range, ``reps`` or ``trainings``, or a bad seed.
    """

    pairs: str
    Fs: tuple[int, ...]
    draws: tuple[str, ...] = DEDUP_DRAWS
    search_draws: tuple[str, ...] = ("deduplicated",)  # draws whose capacity is searched here
    twin_gap: float = 1e-4  # a near-twin: cosine above 1 - twin_gap
    max_cosine: float = 0.999  # the separated draw's limit (lm_capacity's)
    target: float = 0.98
    reps: int = 1
    lo: int = 1
    hi: int = 65536
    verify: int = 2
    trainings: int = 1
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        check_pairs_spec(self.pairs)
        check_grid("Fs", self.Fs)
        for name, draws in (("draws", self.draws), ("search_draws", self.search_draws)):
            if not isinstance(draws, tuple) or len(set(draws)) != len(draws) \
                    or any(d not in DEDUP_DRAWS for d in draws):
                raise ValueError(f"{name} must be distinct names from {DEDUP_DRAWS}; got {draws!r}")
        if not self.draws:
            raise ValueError("draws must not be empty")
        if any(d not in self.draws for d in self.search_draws):
            raise ValueError(f"search_draws must be among draws {self.draws}; got {self.search_draws}")
        as_real(self.twin_gap, "twin_gap", minimum=0.0, strict_min=True, maximum=1.0)
        if not self.twin_gap < 1.0:
            raise ValueError(f"twin_gap must lie in (0, 1); got {self.twin_gap}")
        limit = as_real(self.max_cosine, "max_cosine", minimum=-1.0, maximum=1.0)
        if not -1.0 < limit < 1.0:
            raise ValueError(f"max_cosine must lie in (-1, 1); got {self.max_cosine}")
        as_real(self.target, "target", minimum=0.0, strict_min=True, maximum=1.0)
        positive_int("reps", self.reps)
        lo = as_int(self.lo, "lo", minimum=1)
        if as_int(self.hi, "hi", minimum=1) < lo:
            raise ValueError(f"hi must be >= lo; got lo={self.lo}, hi={self.hi}")
        as_int(self.verify, "verify", minimum=0)
        check_trainings(self.pairs, self.trainings)
        seed_int(self.seed)


def draw_limit(config: LMDedupConfig, draw: str) -> float | None:
    """The largest cosine a draw allows between two kept keys or values (``None``: uniform).

    Raises
    ------
    ValueError
        ``draw`` not in :data:`DEDUP_DRAWS`.
    """
    if draw == "uniform":
        return None
    if draw == "separated":
        return float(config.max_cosine)
    if draw == "deduplicated":
        return 1.0 - float(config.twin_gap)
    raise ValueError(f"draw must be one of {DEDUP_DRAWS}; got {draw!r}")


def dedup_points(config: LMDedupConfig) -> list[dict]:
    """The grid ``{"training": t, "draw": draw, "F": F, "rep": r}``, training-major, then draw and F."""
    return [{"training": t, "draw": d, "F": int(F), "rep": r} for t in range(config.trainings)
            for d in config.draws for F in config.Fs for r in range(config.reps)]


def dedup_point(config: LMDedupConfig, point: dict, device: torch.device) -> dict:
    """The near-twin share of one fact set and, for a draw in ``search_draws``, its capacity search.

    The fact set and search seeds are those of
    :func:`assocmem.mlps.lm_embedding_sweeps.capacity_point` for the same point key, so a
    ``uniform`` or ``separated`` row describes the fact set ``lm_capacity`` searched.

    Returns
    -------
    dict
        :func:`~assocmem.mlps.lm_embeddings.twins.near_twin_stats`, ``searched`` (bool), the search columns (``None`` when not
        searched), ``method``, ``geometry``, ``d``, ``target``, ``max_cosine`` (the draw's limit,
        NaN for uniform) and ``n_pairs``.
    """
    base = {k: point[k] for k in ("draw", "F", "rep")}
    facts_seed, weight_seed = sub_seeds(point_seed(config, base), 2)
    pairs = LS.sweep_pairs(config.pairs, training=point["training"])
    limit = draw_limit(config, point["draw"])
    facts = sample_fact_set(pairs, point["F"], seed=facts_seed, max_cosine=limit)
    d = int(facts.keys.shape[1])
    row = near_twin_stats(facts, config.twin_gap)
    searched = point["draw"] in config.search_draws
    row["searched"] = searched
    if searched:
        res = CS.capacity_search(facts.to(device), "whitened", weight_seed, lo=config.lo, hi=config.hi,
                              verify=config.verify, target=config.target)
        row.update(CS.search_columns(res, d))
    else:
        row.update(dict.fromkeys(_SEARCH_KEYS))
    row.update(method="whitened", geometry="lm", d=d, target=float(config.target),
               max_cosine=float("nan") if limit is None else limit, n_pairs=len(pairs))
    return row


def agreement_rules(stored: pd.DataFrame) -> dict:
    """The rules by which a live run of ``lm_dedup`` must agree with its stored rows.

    The pairs come from a trained language model, a sample: a live row is checked against the
    spread of the stored trainings (column ``training``) of its point with
    :func:`assocmem.sweeps.check_spread`, never against one training's digits. The capacity
    search's columns follow ``lm_capacity``'s rules
    (:func:`assocmem.mlps.lm_embedding_sweeps.agreement_rules`: one search step, one fact's share
    at the smallest ``F``, one evaluation; ``found`` with none); the near-twin shares have one
    fact's share at the smallest ``F`` as resolution and ``key_nn_median`` none; ``searched``
    and ``max_cosine`` (the draw's settings) must be equal too. Rows are matched on
    ``draw, F, rep``; the search columns of a draw that is not searched are empty in every
    training and pass as such.

    Parameters
    ----------
    stored : pandas.DataFrame
        The stored ``lm_dedup`` rows, with a ``training`` column.

    Returns
    -------
    dict
        Keyword arguments ``keys``, ``columns``, ``exact``, ``ignore`` for
        :func:`assocmem.sweeps.check_spread`.

    Raises
    ------
    ValueError
        A frame without the sweep's columns.
    TypeError
        ``stored`` not a DataFrame.

    References
    ----------
    Seed 001, App. A.5.3 (Fig. 13).
    """
    if not isinstance(stored, pd.DataFrame):
        raise TypeError(f"stored must be a pandas DataFrame, got {type(stored).__name__}")
    missing = {*_TWIN_SHARES, "key_nn_median", "searched", "max_cosine"} - set(stored.columns)
    if missing:
        raise ValueError(f"stored lm_dedup rows lack {sorted(missing)}")
    rules = LS.agreement_rules("lm_capacity", stored)
    share = 1.0 / float(stored["F"].min())
    rules["columns"] |= {c: share for c in _TWIN_SHARES} | {"key_nn_median": 0.0}
    rules["exact"] = [*rules["exact"], "searched", "max_cosine"]
    return rules


_NOTE = ("lm_capacity's cpu grid and seeds on chapter 16's cpu base model (d = 64, three trainings); "
         "near-twin: a second key (value) at cosine above 1 - 1e-4; the deduplicated draw keeps no two "
         "keys and no two values closer than that; searches only for the deduplicated draw (the others "
         "are stored in lm_capacity/cpu)")

LM_DEDUP_PRESETS = {
    "quick": LMDedupConfig(pairs="editing_lm:quick:gd_mse", Fs=(32, 64, 128, 256), trainings=3,
                           notes=("the toy LM of fact_editing's quick preset (d = 32)",)),
    "cpu": LMDedupConfig(pairs="editing_lm:cpu:gd_mse", Fs=(128, 256, 512, 1024, 2048, 4096),
                         trainings=3, notes=(_NOTE,)),
    "paper": LMDedupConfig(pairs="results/qwen3_layer14_pairs.npz", Fs=tuple(2 ** k for k in range(9, 15)),
                           notes=("real Qwen3-0.6B-Base layer-14 pairs, which the book does not ship",)),
}

register_sweep(
    "lm_dedup",
    config_type=LMDedupConfig,
    presets=LM_DEDUP_PRESETS,
    points=dedup_points,
    run_point=dedup_point,
    description="near-twin share of every Fig. 13 draw, and Fig. 13 on deduplicated language-model "
                "facts (seed 001, App. A.5.3)",
)
