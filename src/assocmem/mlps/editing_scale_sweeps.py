"""Fact editing at other scales than ``fact_editing``'s presets: ``editing_scale``.

Three explanations chapter 16 once left untested are each a preset of this sweep:

* ``room``: the room per edit. The source writes 1638 edits (10 % of 16,384 facts) into a GD
  expert of ``h = 512`` hidden units, 3.2 edits per hidden unit, with ``3 h d / F = 24`` expert
  parameters per fact; ``fact_editing``'s ``cpu`` preset keeps the 24 parameters per fact but
  writes 102 edits into ``h = 128`` (0.8 per unit). Both ratios together fix ``d = 256`` and
  ``h = F / 32``; ``F = 1024``, ``h = 32`` keeps the ``cpu`` preset's facts and edits
  (``102 / 32 = 3.2``, ``3 * 32 * 256 / 1024 = 24``), so only the room per edit (and ``d``)
  changes.
* ``rome328``: ROME after the source's number of sequential edits, 328 (2 % of 16,384), on
  ``fact_editing``'s ``cpu`` base model (``F = 1024``: 32 % of its facts).
* ``lm8k`` (``lm16k``): swapping on the ``cpu`` base model trained 2x (4x) longer, 8,000
  (16,000) language-model steps: does swapping's ``r_NF`` fall with the language model's
  training length?

Each point is one training ``r`` of the GD expert: the point's :class:`~assocmem.mlps.editing_sweeps.FactEditingConfig`
is the base ``fact_editing`` preset with this config's scale
(:meth:`EditingScaleConfig.fact_config`), and its seeds are those of the ``fact_editing``
point ``{"expert": "gd_mse", "m": m, "training": r}`` of that config
(:func:`assocmem.mlps.editing_sweeps.point_base_model`): at the base preset's own scale the
model is that preset's model (up to the machine's rounding; ``lm16k`` differs only in the
training length, so their trainings pair with the ``cpu`` ones). Per fraction it runs the listed
editors with ``fact_editing``'s own code (:func:`~assocmem.mlps.editing_sweeps.swap_row`,
:func:`~assocmem.mlps.editing_sweeps.editor_rows`), the weight editors once per listed
preserved-key moment. Rows: ``fact_editing``'s columns plus ``moment`` (``"none"`` for the
base and swap rows, ``"facts"`` or ``"corpus"``).

The ``paper`` preset is the source's scale (``fact_editing``'s ``paper``, the GD expert, the
corpus moment, 18 x 8192 steps), where none of the three questions arises.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from assocmem._checks import as_int, as_real, positive_int, seed_int
from assocmem.mlps.editing_sweeps import (
    FACT_EDITING_PRESETS,
    KEY_MOMENTS,
    FactEditingConfig,
    _base_metrics,
    _point_streams,
    _row,
    editor_rows,
    editor_settings,
    point_base_model,
    swap_row,
)
from assocmem.sweeps.registry import register_sweep

if TYPE_CHECKING:
    import torch

__all__ = ["EditingScaleConfig", "EDITING_SCALE_PRESETS", "EDITORS", "GRID_FIELDS", "editing_scale_points",
           "editing_scale_point", "with_extra_grid"]

#: What a point can run: swapping and the three weight editors.
EDITORS = ("swap", "rome", "memit", "alphaedit")
#: The editor grids a config may set (``FactEditingConfig``'s fields).
GRID_FIELDS = ("rome_steps", "rome_weight_decay", "memit_steps", "memit_lam", "memit_clip_norm",
               "alphaedit_steps", "alphaedit_rel_tol", "alphaedit_clip_norm")


@dataclass(frozen=True)
class EditingScaleConfig:
    """Settings of ``editing_scale``: a ``fact_editing`` preset's GD expert at another scale.

    Attributes
    ----------
    num_facts, d, m : int
        Facts ``F``, model width and the GD expert's hidden width ``h``.
    lm_steps : int
        Language-model training steps (the base preset's batch, lr and weight decay).
    fractions : tuple of float
        Edited fractions, each in ``(0, 0.5]`` (``round(f F)`` edits, at least 2).
    editors : tuple of str
        Subset of :data:`EDITORS`; the weight editors run the base preset's grids.
    moments : tuple of str
        Preserved-key moments of the weight editors (``"facts"``: the preserved facts' own
        prompts; ``"corpus"``: :func:`~assocmem.mlps.editing.residuals.corpus_key_moment`);
        empty only when no weight editor runs.
    base_preset : str, default "cpu"
        The ``fact_editing`` preset whose recipe (expert epochs and lr, batch, lr, editor grids,
        dtype, seed) the points use.
    grids : tuple of (str, tuple), default ()
        Editor grids that replace the base preset's: ``(field, values)`` pairs with ``field``
        one of :data:`GRID_FIELDS` (checked by ``FactEditingConfig``).
    trainings : int, default 3
    seed : int, default 0
        The engine's ``seed`` column; the points' seeds are the base preset's (see the module).
    notes : tuple of str

    Raises
    ------
    ValueError
        On construction: an unknown base preset, sizes ``fact_editing`` refuses (``F >= 50``,
        even ``d``), a non-positive width, steps or trainings, a fraction outside ``(0, 0.5]``,
        an unknown or repeated editor or moment, weight editors without a moment, a moment
        without a weight editor, a grid field that is not in :data:`GRID_FIELDS` or given
        twice, or a grid ``FactEditingConfig`` refuses.
    """

    num_facts: int
    d: int
    m: int
    lm_steps: int
    fractions: tuple[float, ...] = (0.02, 0.05, 0.10)
    editors: tuple[str, ...] = EDITORS
    moments: tuple[str, ...] = ("corpus",)
    base_preset: str = "cpu"
    grids: tuple[tuple[str, tuple[float, ...]], ...] = ()
    trainings: int = 3
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.base_preset not in FACT_EDITING_PRESETS:
            raise ValueError(f"base_preset must be one of {sorted(FACT_EDITING_PRESETS)}; "
                             f"got {self.base_preset!r}")
        positive_int("m", self.m)
        positive_int("lm_steps", self.lm_steps)
        positive_int("trainings", self.trainings)
        as_int(self.num_facts, "num_facts", minimum=50)
        if not self.fractions:
            raise ValueError("fractions must not be empty")
        for f in self.fractions:
            as_real(f, "fraction", minimum=0.0, strict_min=True, maximum=0.5)
        for name, allowed, values in (("editors", EDITORS, self.editors),
                                      ("moments", KEY_MOMENTS, self.moments)):
            if any(v not in allowed for v in values) or len(set(values)) != len(values):
                raise ValueError(f"{name} must be distinct values of {allowed}; got {values!r}")
        if not self.editors:
            raise ValueError("editors must not be empty")
        weight = [e for e in self.editors if e != "swap"]
        if bool(weight) != bool(self.moments):
            raise ValueError("moments must be given exactly when a weight editor runs; got editors "
                             f"{self.editors!r}, moments {self.moments!r}")
        names = [g[0] if isinstance(g, tuple) and len(g) == 2 else None for g in self.grids]
        if any(n not in GRID_FIELDS for n in names) or len(set(names)) != len(names):
            raise ValueError(f"grids must be distinct (field, values) pairs with field in {GRID_FIELDS}; "
                             f"got {self.grids!r}")
        seed_int(self.seed)
        self.fact_config()  # fact_editing's own checks (an odd d, ...)

    def fact_config(self) -> FactEditingConfig:
        """The base preset at this scale: the ``fact_editing`` config the points run."""
        return dataclasses.replace(
            FACT_EDITING_PRESETS[self.base_preset], num_facts=self.num_facts, d=self.d,
            experts=(("gd_mse", int(self.m)),), lm_steps=self.lm_steps, fractions=tuple(self.fractions),
            trainings=self.trainings, notes=(), **{k: tuple(v) for k, v in self.grids})


_ROOM_NOTE = (
    "the source's room per edit at a CPU size: F = 1024 facts (the cpu preset's), d = 256, the "
    "GD expert at h = 32, so that 10 % of the facts (102 edits) is 3.2 edits per hidden unit and "
    "the expert has 3 h d / F = 24 parameters per fact, both the source's (1638 edits into "
    "h = 512, 24 per fact; fact_editing's cpu preset: 102 edits into h = 128, 0.8 per unit; the "
    "two ratios fix d = 256 and h = F / 32, and F = 1024 rather than 2048 halves the cost on a "
    "shared CPU and keeps the cpu preset's facts and edits); the cpu preset's recipe "
    "otherwise (4000 language-model steps), the weight editors with the corpus moment (as the "
    "editors' papers estimate it) on a narrowed grid, to fit a shared CPU: one residual setting "
    "per editor (the steps the cpu preset's corpus-moment runs picked in 26 of 27 cases) and five "
    "values of MEMIT's lambda and AlphaEdit's relative threshold around the ones they picked "
    "(lambda shifted down, as the moment's size per direction grows as 1/h); three trainings")

EDITING_SCALE_PRESETS = {
    "quick": EditingScaleConfig(
        num_facts=64, d=32, m=16, lm_steps=300, fractions=(0.05, 0.25), base_preset="quick",
        moments=("facts", "corpus"), trainings=2,
        notes=("toy scale for CI: fact_editing's quick recipe at h = 16, both moments",)),
    "room": EditingScaleConfig(
        num_facts=1024, d=256, m=32, lm_steps=4000, notes=(_ROOM_NOTE,),
        grids=(("rome_steps", (10,)), ("memit_steps", (25,)), ("alphaedit_steps", (25,)),
               ("memit_lam", (1.5, 5.0, 15.0, 50.0, 150.0)),
               ("alphaedit_rel_tol", (0.1, 0.3, 0.5, 0.7, 0.9)))),
    "room_memit": EditingScaleConfig(
        num_facts=1024, d=256, m=32, lm_steps=4000, editors=("memit",),
        grids=(("memit_steps", (25,)), ("memit_lam", (0.05, 0.15, 0.5))),
        notes=("the room preset's base models (its seeds), MEMIT alone at the three lambdas below "
               "room's grid (0.05 to 0.5, where fact_editing's cpu grid reaches), because MEMIT's "
               "score-best lambda in room is its grid's smallest, 1.5, in every run; with room's "
               "rows it makes MEMIT's grid 0.05 to 150; three trainings",)),
    "room_memit_low": EditingScaleConfig(
        num_facts=1024, d=256, m=32, lm_steps=4000, editors=("memit",),
        grids=(("memit_steps", (25,)), ("memit_lam", (0.005, 0.015))),
        notes=("as room_memit, two lambdas further down (0.005, 0.015): at 10 % MEMIT's score "
               "still rose towards room_memit's smallest lambda, 0.05; three trainings",)),
    "rome328": EditingScaleConfig(
        num_facts=1024, d=64, m=128, lm_steps=4000, fractions=(0.32,), editors=("rome",),
        moments=("facts", "corpus"),
        notes=("ROME after the source's 328 sequential edits (2 % of 16,384) on fact_editing's cpu "
               "base model (its seeds, F = 1024, so 32 % of its facts), with both preserved-key "
               "moments; three trainings",)),
    "lm8k": EditingScaleConfig(
        num_facts=1024, d=64, m=128, lm_steps=8000, editors=("swap",), moments=(),
        notes=("swapping on fact_editing's cpu base model (its seeds, facts and edits) with the "
               "language model trained 8,000 steps, 2x the cpu preset's 4000 (source: 147,456; 2x, "
               "not 4x, to fit three trainings on a shared CPU); the cpu preset's trainings are the "
               "1x baseline; three trainings",)),
    "lm16k": EditingScaleConfig(
        num_facts=1024, d=64, m=128, lm_steps=16000, editors=("swap",), moments=(),
        notes=("as lm8k with 16,000 language-model steps, 4x the cpu preset's",)),
    "paper": EditingScaleConfig(
        num_facts=16384, d=256, m=512, lm_steps=18 * 8192, base_preset="paper",
        notes=("the source's scale (fact_editing's paper preset, the GD expert, corpus moment; GPU)",)),
}


def editing_scale_points(config: EditingScaleConfig) -> list[dict]:
    """One point per training ``0 .. config.trainings - 1`` of the GD expert at width ``m``."""
    return [{"expert": "gd_mse", "m": int(config.m), "training": r} for r in range(config.trainings)]


def editing_scale_point(config: EditingScaleConfig, point: dict, device: torch.device) -> list[dict]:
    """Train one base model at the config's scale and run its editors (see the module docstring).

    Returns
    -------
    list of dict
        The ``base`` row, then per fraction the ``swap`` row (if listed) and, per moment, one
        row per weight-editor setting of the listed editors (``best`` on each editor's
        score-best setting, per fraction and moment, with its ``r_nf``).
    """
    from assocmem.mlps import editing as E

    fc = config.fact_config()
    _, _, _, s_edit = _point_streams(fc, point)
    corpus, model, result = point_base_model(fc, point, device)
    base = _base_metrics(model, corpus, result)
    rows = [{**_row("base", 0.0, None, **base), "moment": "none"}]
    settings = [s for s in editor_settings(fc) if s["editor"] in config.editors]
    corpus_moment = E.corpus_key_moment(model, corpus) if "corpus" in config.moments else None
    for j, fraction in enumerate(fc.fractions):
        assignment = E.edit_assignment(fc.num_facts, fraction, seed=s_edit + j)
        ev = E.EditEvaluation(model, corpus, assignment)
        if "swap" in config.editors:
            row = swap_row(fc, point, model, corpus, ev, assignment, fraction, base, device)
            rows.append({**row, "best": True, "moment": "none"})
        for moment in config.moments:
            preserved = (corpus_moment if moment == "corpus"
                         else E.prompt_keys(model, corpus, assignment.preserved))
            rows.extend({**r, "moment": moment} for r in
                        editor_rows(model, corpus, ev, assignment, settings, preserved, fraction, base))
    return rows


register_sweep(
    "editing_scale",
    config_type=EditingScaleConfig,
    presets=EDITING_SCALE_PRESETS,
    points=editing_scale_points,
    run_point=editing_scale_point,
    description="fact editing's GD expert at other scales: the source's edits per hidden unit, ROME "
                "after 328 sequential edits, swapping against the language model's training length "
                "(seed 001, Table 1, Fig. 8)",
)


def with_extra_grid(frame: pd.DataFrame, extra: pd.DataFrame, editor: str = "memit") -> pd.DataFrame:
    """One preset's rows with another preset's settings of ``editor`` added, as one grid.

    ``extra`` holds more settings of ``editor`` on the same base models (the same trainings and
    fractions, e.g. ``room_memit`` beside ``room``). Its rows of ``editor`` are appended and
    ``best`` is picked again per training, fraction and moment over the union: the highest score
    among the settings that did not fail, the first of equal scores in increasing ``lam`` (MEMIT)
    or ``rel_tol`` (AlphaEdit), as one sweep over the joined grid would pick. Each preset computed
    ``r_nf`` on its own score-best setting only, so the union's best always has it.

    Parameters
    ----------
    frame, extra : pandas.DataFrame
        ``editing_scale`` results (``extra``'s rows of other editors, its base and swap rows are
        ignored).
    editor : {"rome", "memit", "alphaedit"}, default "memit"

    Returns
    -------
    pandas.DataFrame
        ``frame``'s rows and ``extra``'s rows of ``editor``; ``best`` re-picked for ``editor``.

    Raises
    ------
    ValueError
        An editor that is not a weight editor, or ``extra`` on other base models (a training
        whose seed differs from ``frame``'s).
    """
    if editor not in EDITORS or editor == "swap":
        raise ValueError(f"editor must be one of {EDITORS[1:]}; got {editor!r}")
    seeds = frame.groupby("training").seed.first()
    other = extra.groupby("training").seed.first()
    if not other.index.isin(seeds.index).all() or (seeds.reindex(other.index) != other).any():
        raise ValueError("extra must hold the same trainings (same seeds) as frame")
    out = pd.concat([frame, extra[extra.editor == editor]], ignore_index=True)
    mine = out.editor == editor
    out.loc[mine, "best"] = False
    order = {"memit": "lam", "alphaedit": "rel_tol", "rome": "rwd"}[editor]
    ok = out[mine & ~out.failed.astype(bool)].sort_values(order, kind="stable")
    winners = ok.groupby(["training", "fraction", "moment"], sort=False).score.idxmax()
    out.loc[winners.to_numpy(), "best"] = True
    return out
