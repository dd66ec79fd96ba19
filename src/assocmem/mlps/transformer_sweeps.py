"""Sweeps of Part II inside the SSFR Transformer: usability, attention noise, capacity (chapters 14-15).

Three registered sweeps run the experiments of seed 001 (Garcia et al. 2026, "MLPs are Hebbians"),
Sec. 3.2 and 5.1, on the one-layer SSFR Transformer of :mod:`assocmem.mlps.transformer`:

``transformer_usability``  Fig. 2a and Fig. 7 (App. A.2.2, A.4.4): the *pretrained-attention*
    protocol. Attention is trained alone on the dummy SSFR task with the identity map, frozen; a
    GD-trained MLP storing a fresh random-permutation fact set is inserted, at a range of hidden
    widths. Per width: the standalone MLP's accuracy and margins, the Transformer's accuracy over
    every key (each in ``contexts_per_key`` junk contexts), and the **usable-key fraction** (below).
    The GD MLP is trained with cross-entropy (``gd_ce``) and, for App. A.4.5's comparison, with MSE
    (``gd_mse``).
``attention_noise``  Fig. 3a (App. A.4.1, Definition 5.1): attention pretrained on the identity
    task at junk lengths ``J`` in {2, 4, 8, 16} with ``V_J = J``; per ``(d, F, J)`` and seed, the
    noise ``||u_i - k_i||_2`` of the MLP input ``u_i`` (the unit-normalised attention output at the
    query) against the key embedding, for every key and sampled context: its maximum (the noise
    ceiling), mean and quantiles.
``transformer_capacity``  Fig. 1c / 3b and Fig. 10 (App. A.4.3): the *inserted-MLP* protocol. For a
    method and ``F``, an MLP_A of width ``m`` storing fact set A is inserted and the attention
    trained around it; the *training accuracy* is the Transformer's accuracy on A, the
    *fact-adaptive accuracy* that on a fresh set B after swapping in MLP_B (same method and width)
    with no further training. Two capacity searches (:func:`assocmem.sweeps.smallest_width`) share
    every trained model: the smallest ``m`` reaching 100 % fact-adaptive accuracy (Fig. 1c) and
    the smallest reaching ``train_target`` = 99 % training accuracy (Fig. 10). ``W = 3 m d``, the
    MLP's parameters, as in :mod:`assocmem.mlps.capacity_sweeps`.

Usable keys (Fig. 7). The source says that "the usable-key fraction inferred from per-key margins"
tracks Transformer accuracy, without defining it. Ours: key ``i`` is *usable* when its margin
survives noise of the size the attention produces for it. With ``eps_i`` the largest noise of key
``i`` over ``contexts_per_key`` **held-out** contexts (its own noise ceiling, Def. 5.1 per key,
drawn from a seed stream of their own, never the contexts the Transformer is scored on), we read
the MLP at ``noise_draws`` points of the unit sphere at chord distance ``eps_i`` from ``k_i`` in
random tangent directions (the perturbation model of App. A.4.2, kept on the sphere because the
MLP's input is unit-normalised); the key is usable when the margin stays positive at all of them,
i.e. when its clean margin exceeds the largest drop that noise of that size caused.

Baselines. A predictor of Transformer accuracy is informative only if it beats what needs no
margin at all: the standalone MLP's accuracy (``mlp_accuracy``), and that times the attention's
accuracy on the identity task over the same held-out contexts (``identity_accuracy_heldout``).
:func:`assocmem.mlps.transformer_summaries.usability_summary` scores all three side by side.

Where the authors' code and the source's text differ, the sweeps follow the text: ``V_J = J`` in
the noise sweep (the code: 16) and ``d = 96`` for its middle size (the code: 90); the GD MLP is the
bilinear one (:mod:`assocmem.mlps.transformer.insertion`). Every key is evaluated (the source
samples batches). Seeds: a point's seed
(:func:`assocmem.sweeps.point_seed`) is split into independent streams for the embedding, the fact
sets, the MLPs, training and evaluation (:func:`_streams`).

Presets: ``quick`` (seconds: CI and the chapters' live runs), ``cpu`` (committed, reduced: ``d =
32`` or ``64``, ``F <= 512``, fewer steps and a smaller batch, labelled in ``notes``), ``paper``
(the source's grids: ``d = 128``, ``F`` up to 8192, 4000 iterations, batch 1280; GPU or Ray).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real, positive_int, seed_int
from assocmem.mlps._checks import module_device, module_dtype
from assocmem.mlps.margins.decoding import output_margins
from assocmem.mlps.transformer_setup import (DTYPES, capacity_setup, check_training_fields, model_config,
                                             stream_seeds, train_config)
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import register_sweep
from assocmem.sweeps.search import smallest_width

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem.mlps.facts import FactSet
    from collections.abc import Callable

__all__ = [
    "GD_METHODS",
    "CAPACITY_METHODS",
    "UsabilityConfig",
    "NoiseConfig",
    "TransformerCapacityConfig",
    "USABILITY_PRESETS",
    "NOISE_PRESETS",
    "TRANSFORMER_CAPACITY_PRESETS",
    "usability_points",
    "usability_point",
    "noise_points",
    "noise_point",
    "transformer_capacity_points",
    "capacity_setup",
    "transformer_capacity_point",
    "sphere_perturbations",
    "usable_keys",
    "injection_columns",
    "THEOREM_DELTA",
]

#: GD-trained MLPs of the usability sweep: cross-entropy (Fig. 2a) and MSE (App. A.4.5).
GD_METHODS = ("gd_ce", "gd_mse")
#: Memories of the capacity sweep (:data:`assocmem.mlps.transformer.METHODS`).
CAPACITY_METHODS = ("gd_ce", "gd_mse", "ntk", "unwhitened", "whitened", "data_dependent")
#: A context in which ``||u - k|| > 1`` has the query closer to orthogonal than to its key
#: (chord 1 is a 60-degree angle): we count the key as *lost* by the attention there.
_LOST_CHORD = 1.0


def _transformer():
    """The library of issue 14, imported when a point runs (keeps this module importable alone)."""
    from assocmem.mlps import transformer

    return transformer


# --------------------------------------------------------------------------------------------
# configs and presets


@dataclass(frozen=True)
class UsabilityConfig:
    """Settings of ``transformer_usability`` (Fig. 2a, Fig. 7; App. A.2.2, A.4.4).

    Raises
    ------
    ValueError
        On construction: sizes that are not positive integers (``num_facts >= 2``, ``d >= 2``),
        ``junk_length < 0``, empty or non-increasing ``widths``, unknown ``methods``, a
        non-positive ``lr`` or ``mlp_epochs``, ``noise_draws < 1``, ``injected_noise`` not
        strictly increasing chords in ``(0, 2]``, or an unknown ``dtype``.
    """

    d: int  # embedding width
    num_facts: int  # F
    junk_vocab: int  # V_J
    junk_length: int  # J
    widths: tuple[int, ...]  # MLP hidden widths m, increasing
    seeds: int = 1  # independent repetitions (a point each: attention, fact set, MLPs)
    methods: tuple[str, ...] = ("gd_ce",)  # GD losses (names in GD_METHODS)
    mlp_epochs: int = 10000  # full-batch epochs of the GD MLP (the source's 10,000 unless labelled)
    mlp_lr: float = 1e-3  # GD MLP's Adam rate (cosine to 1e-6)
    steps: int = 4000  # attention pretraining steps (AdamW)
    batch_size: int = 1280
    lr: float = 2e-4
    weight_decay: float = 0.1
    contexts_per_key: int = 4  # junk contexts evaluated per key (every key is evaluated)
    noise_draws: int = 8  # random tangent directions per key in the usable-key test
    injected_noise: tuple[float, ...] = ()  # chords injected into the MLP input (injection module)
    dtype: str = "float32"
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        as_int(self.d, "d", minimum=2)
        as_int(self.num_facts, "num_facts", minimum=2)
        for eps in self.injected_noise:
            as_real(eps, "injected noise", minimum=0.0, maximum=2.0, strict_min=True)
        if list(self.injected_noise) != sorted(set(self.injected_noise)):
            raise ValueError(f"injected_noise must be strictly increasing; got {self.injected_noise!r}")
        positive_int("junk_vocab", self.junk_vocab)
        as_int(self.junk_length, "junk_length", minimum=0)
        if not self.widths or any(isinstance(m, bool) or not isinstance(m, int) or m < 1 for m in self.widths):
            raise ValueError(f"widths must be positive integers; got {self.widths!r}")
        if list(self.widths) != sorted(set(self.widths)):
            raise ValueError(f"widths must be strictly increasing; got {self.widths!r}")
        positive_int("seeds", self.seeds)
        bad = [m for m in self.methods if m not in GD_METHODS]
        if bad or not self.methods:
            raise ValueError(f"unknown method(s) {bad}; valid methods: {', '.join(GD_METHODS)}")
        positive_int("mlp_epochs", self.mlp_epochs)
        as_real(self.mlp_lr, "mlp_lr", minimum=0.0, strict_min=True)
        positive_int("noise_draws", self.noise_draws)
        check_training_fields(self)


@dataclass(frozen=True)
class NoiseConfig:
    """Settings of ``attention_noise`` (Fig. 3a; App. A.4.1): ``V_J = J`` at every point.

    Raises
    ------
    ValueError
        On construction: ``sizes`` not pairs ``(d, F)`` of integers ``>= 2``, junk lengths that are
        not integers ``>= 1`` (``V_J = J`` needs ``J >= 1``), bad training fields.
    """

    sizes: tuple[tuple[int, int], ...]  # (d, F) pairs
    junk_lengths: tuple[int, ...] = (2, 4, 8, 16)
    seeds: int = 4
    steps: int = 4000
    batch_size: int = 1280
    lr: float = 2e-4
    weight_decay: float = 0.1
    contexts_per_key: int = 8
    dtype: str = "float32"
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if not self.sizes:
            raise ValueError("sizes must list at least one (d, F) pair")
        for pair in self.sizes:
            if len(pair) != 2:
                raise ValueError(f"sizes must be (d, F) pairs; got {pair!r}")
            as_int(pair[0], "d", minimum=2)
            as_int(pair[1], "F", minimum=2)
        if not self.junk_lengths:
            raise ValueError("junk_lengths must not be empty")
        for J in self.junk_lengths:
            as_int(J, "junk length", minimum=1)
        positive_int("seeds", self.seeds)
        check_training_fields(self)


@dataclass(frozen=True)
class TransformerCapacityConfig:
    """Settings of ``transformer_capacity`` (Fig. 1c / 3b, Fig. 10; App. A.4.3).

    The search runs over ``m = step * k`` for integer ``k`` in ``[ceil(lo / step), hi // step]``
    (the source binary-searches ``m`` in ``[1, 65536]`` "with precision 16", i.e. ``step = 16``).

    Raises
    ------
    ValueError
        On construction: sizes that are not integers ``>= 2``, unknown methods, a search range
        with ``hi < max(lo, step)``, a ``train_target`` outside ``(0, 1]``, bad training fields.
    """

    d: int
    num_facts: tuple[int, ...]  # F values
    methods: tuple[str, ...] = CAPACITY_METHODS
    junk_vocab: int = 9
    junk_length: int = 9
    seeds: int = 1  # independent trainings per (method, F): embeddings, fact sets, MLPs, attention
    gd_epochs: int = 10000  # GD MLPs' full-batch epochs
    gd_max_facts: int = 2**31 - 1  # GD is searched only at F <= gd_max_facts (CPU presets)
    gd_lr: float = 1e-3
    steps: int = 4000
    batch_size: int = 1280
    lr: float = 2e-4
    weight_decay: float = 0.1
    contexts_per_key: int = 2
    lo: int = 1
    hi: int = 65536
    step: int = 16  # search precision in m
    verify: int = 1  # search steps above the answer that must also succeed
    train_target: float = 0.99  # the training-accuracy criterion (Fig. 10)
    dtype: str = "float32"
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        as_int(self.d, "d", minimum=2)
        if not self.num_facts:
            raise ValueError("num_facts must not be empty")
        for F in self.num_facts:
            as_int(F, "F", minimum=2)
        bad = [m for m in self.methods if m not in CAPACITY_METHODS]
        if bad or not self.methods:
            raise ValueError(f"unknown method(s) {bad}; valid methods: {', '.join(CAPACITY_METHODS)}")
        positive_int("junk_vocab", self.junk_vocab)
        as_int(self.junk_length, "junk_length", minimum=0)
        positive_int("seeds", self.seeds)
        positive_int("gd_epochs", self.gd_epochs)
        positive_int("gd_max_facts", self.gd_max_facts)
        as_real(self.gd_lr, "gd_lr", minimum=0.0, strict_min=True)
        positive_int("lo", self.lo)
        positive_int("hi", self.hi)
        positive_int("step", self.step)
        if self.hi < max(self.lo, self.step):
            raise ValueError(f"need hi >= max(lo, step); got lo={self.lo}, hi={self.hi}, step={self.step}")
        as_int(self.verify, "verify", minimum=0)
        as_real(self.train_target, "train_target", minimum=0.0, maximum=1.0, strict_min=True)
        check_training_fields(self)


_CPU_NOTE = "reduced from the source's grid to fit a few minutes of one CPU core: "
#: The ``recipe`` presets: the ``cpu`` scale with the attention pretrained by App. A.1.2's optimiser
#: (AdamW, 4000 steps of batch 1280 at lr 2e-4; weight decay 0.1, which A.1.2 does not state: the
#: value the source gives for its fact-editing language model, App. A.4.5).
_RECIPE_NOTE = ("the source's attention recipe (4000 steps of batch 1280 at lr 2e-4, AdamW, weight decay "
                "0.1) at a reduced scale: ")

#: Chords injected into the MLP input in the ``cpu`` and ``recipe`` usability presets (our sensitivity
#: test, :mod:`assocmem.mlps.transformer.injection`; the source injects none).
_INJECTED = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)

USABILITY_PRESETS = {
    "quick": UsabilityConfig(d=16, num_facts=32, junk_vocab=4, junk_length=4, widths=(2, 4, 8, 16), seeds=3,
                             methods=("gd_ce",), mlp_epochs=600, mlp_lr=1e-2, steps=150, batch_size=64, lr=3e-3,
                             contexts_per_key=4, injected_noise=(0.05, 0.2), dtype="float64",
                             notes=("toy scale for CI and the live run",)),
    "cpu": UsabilityConfig(d=64, num_facts=512, junk_vocab=9, junk_length=9,
                           widths=(12, 16, 20, 24, 32, 48, 64, 96), seeds=3, methods=GD_METHODS, mlp_epochs=2000,
                           steps=600, batch_size=256, lr=3e-3, contexts_per_key=4, injected_noise=_INJECTED,
                           dtype="float64",
                           notes=(_CPU_NOTE + "d = 64 and F = 512 (source: 128 and 2048, the same F / d^2 = 1/8), "
                                  "8 widths in [12, 96] (source: 16 in [16, 256]), 3 seeds (4), GD 2000 epochs "
                                  "(10,000), attention 600 steps of batch 256 at lr 3e-3 (4000 of 1280 at 2e-4), "
                                  "float64",)),
    "recipe": UsabilityConfig(d=64, num_facts=512, junk_vocab=9, junk_length=9,
                              widths=(12, 16, 20, 24, 32, 48, 64, 96), seeds=3, methods=GD_METHODS, mlp_epochs=2000,
                              contexts_per_key=4, injected_noise=_INJECTED, dtype="float64",
                              notes=(_RECIPE_NOTE + "d = 64 and F = 512 (source: 128 and 2048), 8 widths in "
                                     "[12, 96] (16 in [16, 256]), 3 seeds (4), GD 2000 epochs (10,000), float64",)),
    "paper": UsabilityConfig(d=128, num_facts=2048, junk_vocab=9, junk_length=9,
                             widths=tuple(sorted({int(round(16 * 16 ** (i / 15))) for i in range(16)})), seeds=4,
                             methods=GD_METHODS),
}

NOISE_PRESETS = {
    "quick": NoiseConfig(sizes=((16, 32),), junk_lengths=(2, 8), seeds=3, steps=150, batch_size=64, lr=3e-3,
                         contexts_per_key=4, dtype="float64", notes=("toy scale for CI and the live run",)),
    "cpu": NoiseConfig(sizes=((32, 128), (64, 512)), seeds=3, steps=600, batch_size=256, lr=3e-3,
                       contexts_per_key=8, dtype="float64",
                       notes=(_CPU_NOTE + "(d, F) in {(32, 128), (64, 512)} (source: (64, 512), (96, 1152), "
                              "(128, 2048)), 3 seeds (4), attention 600 steps of batch 256 at lr 3e-3 "
                              "(4000 of 1280 at 2e-4), float64",)),
    "recipe": NoiseConfig(sizes=((64, 512),), junk_lengths=(2, 16), seeds=3, contexts_per_key=8, dtype="float64",
                          notes=(_RECIPE_NOTE + "(d, F) = (64, 512) only (source: also (96, 1152) and "
                                 "(128, 2048)), J in {2, 16} (2, 4, 8, 16), 3 seeds (4), float64",)),
    "recipe_mid": NoiseConfig(sizes=((64, 512),), junk_lengths=(4, 8), seeds=3, contexts_per_key=8,
                              dtype="float64",
                              notes=(_RECIPE_NOTE + "(d, F) = (64, 512) only (source: also (96, 1152) and "
                                     "(128, 2048)), J in {4, 8}: the middle junk lengths of the "
                                     "recipe preset's grid (which has 2 and 16), 3 seeds (4), float64",)),
    "paper": NoiseConfig(sizes=((64, 512), (96, 1152), (128, 2048))),
}

TRANSFORMER_CAPACITY_PRESETS = {
    "quick": TransformerCapacityConfig(d=16, num_facts=(16, 32), methods=("whitened", "data_dependent"),
                                       seeds=3, junk_vocab=4, junk_length=4, steps=100, batch_size=64, lr=3e-3, hi=256,
                                       step=4, contexts_per_key=2, dtype="float64",
                                       notes=("toy scale for CI and the live run; closed forms only",)),
    "cpu": TransformerCapacityConfig(d=64, num_facts=(64, 128, 256), methods=("gd_ce", "ntk", "data_dependent"),
                                     seeds=3, gd_epochs=2000, gd_max_facts=128, steps=300, batch_size=256, lr=3e-3, lo=4,
                                     hi=2048, step=4, dtype="float64",
                                     notes=(_CPU_NOTE + "d = 64 (source: 128), F in {64, 128, 256} (64 to 8192), "
                                            "three memories (GD with cross-entropy, NTK, data-dependent; source: "
                                            "five), 3 seeds (the source reports one), search precision 4 in [4, 2048] (16 in [1, 65536]), GD only at "
                                            "F <= 128 with 2000 epochs (10,000), attention 300 steps of batch 256 "
                                            "at lr 3e-3 (4000 of 1280 at 2e-4), float64",)),
    "paper": TransformerCapacityConfig(d=128, num_facts=tuple(2**k for k in range(6, 14))),
}


# --------------------------------------------------------------------------------------------
# the usable-key test


def sphere_perturbations(keys: torch.Tensor, eps: torch.Tensor, draws: int, seed: int) -> torch.Tensor:
    """Points of the unit sphere at chord distance ``eps_i`` from ``k_i`` in random tangent directions.

    ``q = cos(theta) k + sin(theta) t`` with ``t`` a uniformly random unit vector orthogonal to
    ``k`` and ``theta = 2 arcsin(eps / 2)``, so that ``||q|| = 1`` and ``||q - k|| = eps``.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``
        Unit rows.
    eps : torch.Tensor, shape ``(F,)``
        Chord distances in ``[0, 2]``.
    draws : int
        Directions per key.
    seed : int

    Returns
    -------
    torch.Tensor, shape ``(draws, F, d)``, the dtype and device of ``keys``
        The directions are drawn on the CPU from ``seed`` and then moved, so a seed gives the
        same points on every device.

    Raises
    ------
    ValueError
        ``keys`` not 2-D with ``d >= 2``, ``eps`` not of shape ``(F,)`` or outside ``[0, 2]`` or
        not finite, ``draws < 1``.

    References
    ----------
    Seed 001, App. A.4.2 (queries ``k + eps u``), here on the sphere the Transformer's MLP reads.
    """
    if keys.dim() != 2 or keys.shape[1] < 2:
        raise ValueError(f"keys must have shape (F, d) with d >= 2; got {tuple(keys.shape)}")
    draws = positive_int("draws", draws)
    eps = torch.as_tensor(eps, dtype=keys.dtype, device=keys.device)
    if eps.shape != keys.shape[:1]:
        raise ValueError(f"eps must have shape ({keys.shape[0]},); got {tuple(eps.shape)}")
    if not torch.isfinite(eps).all() or (eps < 0).any() or (eps > 2).any():
        raise ValueError("eps must be finite chord distances in [0, 2]")
    gen = torch.Generator().manual_seed(seed_int(seed))  # drawn on the CPU: one seed, one draw on every device
    t = torch.randn(draws, *keys.shape, generator=gen, dtype=torch.float64)  # (R, F, d)
    t = t.to(device=keys.device, dtype=keys.dtype)
    t = t - (t * keys).sum(-1, keepdim=True) * keys  # tangent at k
    t = t / t.norm(dim=-1, keepdim=True)
    theta = 2 * torch.arcsin(eps / 2)  # (F,)
    return torch.cos(theta)[None, :, None] * keys + torch.sin(theta)[None, :, None] * t


def usable_keys(mlp: Callable[[torch.Tensor], torch.Tensor], facts: FactSet, eps: torch.Tensor, draws: int,
                seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Which keys keep a positive margin under noise of their measured size (see the module doc).

    Parameters
    ----------
    mlp : callable ``(F, d) -> (F, d)``
        A module must live on the facts' device (:meth:`SSFRTransformer.with_mlp` moves the
        module it is given to the model's device: test the MLP before inserting it, or move the
        facts with :meth:`FactSet.to`).
    facts : FactSet
        The facts the MLP stores (keys on the unit sphere).
    eps : torch.Tensor, shape ``(F,)``
        Per-key noise size (the key's largest measured attention noise).
    draws : int
    seed : int

    Returns
    -------
    usable : torch.Tensor, shape ``(F,)``, bool
        The margin stays positive at every perturbed query.
    drop : torch.Tensor, shape ``(F,)``, float64
        The largest margin drop over the draws (clean margin minus the smallest noisy one).

    Raises
    ------
    ValueError
        A module ``mlp`` whose weights are on another device than ``facts``, or what
        :func:`sphere_perturbations` and :func:`~assocmem.mlps.margins.decoding.output_margins`
        refuse.
    """
    if isinstance(mlp, torch.nn.Module):
        where = module_device(mlp, facts.keys.device)
        if where != facts.keys.device:
            raise ValueError(f"the MLP's weights are on {where} but the facts are on {facts.keys.device}; "
                             "move one of them (facts.to(device)) before the usable-key test")
    clean = output_margins(mlp, facts)  # (F,)
    noisy = _noisy_margins(mlp, facts, eps, draws, seed)  # (R, F)
    worst = noisy.min(dim=0).values
    return worst > 0, clean - worst


def _noisy_margins(mlp, facts, eps: torch.Tensor, draws: int, seed: int) -> torch.Tensor:
    """Margins ``(draws, F)`` at :func:`sphere_perturbations` of the keys."""
    queries = sphere_perturbations(facts.keys, eps, draws, seed)
    return torch.stack([output_margins(mlp, facts, queries=q) for q in queries])


# --------------------------------------------------------------------------------------------
# transformer_usability


def usability_points(config: UsabilityConfig) -> list[dict]:
    """One point per seed (the attention is pretrained once per seed, then every width is inserted)."""
    return [{"d": int(config.d), "F": int(config.num_facts), "J": int(config.junk_length), "rep": r}
            for r in range(config.seeds)]


def usability_point(config: UsabilityConfig, point: dict, device: torch.device) -> list[dict]:
    """Pretrain attention on the identity task, then insert a GD MLP of every width: one row each.

    Returns
    -------
    list of dict
        Per ``(method, m)``: ``W = 3 m d``; the standalone MLP's ``mlp_accuracy``,
        ``mlp_min_margin`` (output scale), ``mlp_min_margin_unit`` (each margin divided by the
        norm of its output, the scale the unit-normalised Transformer output sees) and the
        margin quantiles ``margin_q10, margin_q50, margin_q90``; the Transformer's
        ``transformer_accuracy`` (every key, ``contexts_per_key`` contexts each) and
        ``key_accuracy`` (keys right in every context); ``usable_fraction`` (usable keys, see the
        module doc), ``key_agreement`` (keys where "usable" equals "right in every context"),
        ``drop_median`` (median margin drop of the usable-key test), ``margin_median_right`` and
        ``margin_median_wrong`` (median unit margin of the keys right in every context, and of the
        others; NaN when there are none), ``wrong_with_positive_margin`` (keys the MLP stores that
        the Transformer gets wrong in some context); ``baseline_key_agreement`` (keys where "the
        MLP stores it" equals "right in every context"), ``drop_max`` (the largest margin drop),
        ``usable_differs_from_stored`` (keys the usable-key test calls otherwise than the sign of
        the clean margin: what the noise term adds), ``wrong_lost_by_attention`` (stored keys
        missed in a scored context where ``||u - k|| > 1``: the attention lost the key); the
        attention's ``noise_ceiling``, ``noise_mean`` and ``noise_q50`` over every key and
        **held-out** context, its accuracy on the identity task over the scored contexts
        (``identity_accuracy``) and over the held-out ones (``identity_accuracy_heldout``). Per
        chord ``e`` of ``injected_noise`` (:func:`injection_columns`): ``acc_inj_<e>``, the
        Transformer's accuracy on the scored contexts with the MLP input moved by ``e``
        (:mod:`assocmem.mlps.transformer.injection`; the same moved inputs at every width), and
        ``usable_inj_<e>``, the usable-key fraction with key ``i``'s noise
        ``sqrt(eps_i^2 + e^2)`` (``eps_i`` its held-out ceiling, as above), and
        ``survive_inj_<e>``, the fraction of the ``F x noise_draws`` noisy queries at that
        distance whose margin stays positive (the expected accuracy the margins predict when
        every context draws its own direction, as the injection does). Theorem B.62:
        ``lipschitz_max`` (the largest spectral norm of the MLP's Jacobian over the keys and the
        held-out MLP inputs, :func:`~assocmem.mlps.transformer.noise.local_lipschitz`: a lower
        bound on ``L_bil``), ``value_coherence`` (``mu_v``), ``value_spread`` (the largest
        ``||v_i - v_j||``), ``thm_eps`` (eq. 70's threshold at ``delta =``
        :data:`THEOREM_DELTA`, :func:`~assocmem.mlps.transformer.noise.noisy_margin_threshold`;
        NaN when the MLP does not store every fact) and ``thm_lost`` (keys whose margin is not
        positive at some of ``noise_draws`` random points at chord ``thm_eps``: 0 if the bound
        holds there; NaN with ``thm_eps``).
    """
    T = _transformer()
    # the 7th stream (held-out contexts) extends the first six, the 8th (injected noise) the first
    # seven: SeedSequence states are prefixes
    s_emb, s_map, s_mlp, s_train, s_eval, s_noise, s_held, s_inj = stream_seeds(point_seed(config, point), 8)
    task = T.SSFRTask(num_facts=config.num_facts, junk_vocab=config.junk_vocab, junk_length=config.junk_length)
    emb = T.embedding_table(task, config.d, seed=s_emb)
    model = T.pretrained_attention(task, emb, model_config(config, config.d, device), train_config(config, s_train))
    identity = torch.arange(task.num_facts)
    identity_acc = T.ssfr_accuracy(model, task, identity, config.contexts_per_key, s_eval)
    # noise and the attention's identity accuracy on HELD-OUT contexts (s_held): the predictors below
    # never see the contexts the Transformer is scored on (s_eval)
    identity_held = T.ssfr_accuracy(model, task, identity, config.contexts_per_key, s_held)
    noise = T.attention_noise(model, task, config.contexts_per_key, s_held).to(torch.float64)  # (F, C)
    eps = noise.max(dim=1).values.clamp(max=2.0)  # per-key ceiling, held-out contexts
    noise_eval = T.attention_noise(model, task, config.contexts_per_key, s_eval).to(torch.float64)  # (F, C)
    lost_eval = noise_eval.max(dim=1).values > _LOST_CHORD  # keys the attention loses in a scored context
    mapping = T.fact_map(task, seed=s_map)
    facts = T.fact_set(emb, task, mapping)
    # Theorem B.62's threshold (eq. 70): the values' coherence, and the held-out MLP inputs at which
    # (with the keys) the MLP's Lipschitz constant is estimated
    values = facts.values.to(torch.float64)
    gram = values @ values.T
    coherence = float((gram - torch.eye(len(values), dtype=torch.float64)).abs().max())
    value_spread = float(torch.cdist(values, values).max())
    from assocmem.mlps.transformer import injection

    u_held, _ = injection.query_inputs(model, task, mapping, config.contexts_per_key, s_held)
    lip_points = torch.cat([facts.keys.to(torch.float64), u_held.to(torch.float64).cpu()])
    injected = []  # per injected chord: the scored contexts' MLP inputs moved by it (same for every width)
    if config.injected_noise:
        u, targets = injection.query_inputs(model, task, mapping, config.contexts_per_key, s_eval)
        for e, s_e in zip(config.injected_noise, stream_seeds(s_inj, len(config.injected_noise))):
            injected.append((e, injection.tangent_noise(u, e, s_e), targets))
    rows = []
    for method in config.methods:
        for m in config.widths:
            mlp = T.build_mlp(method, facts, m, s_mlp, epochs=config.mlp_epochs, lr=config.mlp_lr)
            margins = output_margins(mlp, facts)  # (F,)
            with torch.no_grad():
                norms = mlp(facts.keys.to(module_dtype(mlp))).to(torch.float64).norm(dim=1)
            unit_margins = margins / norms.clamp_min(torch.finfo(torch.float64).tiny)
            # before the swap: with_mlp moves the MLP to the model's device, the facts stay where they are
            usable, drop = usable_keys(mlp, facts, eps, config.noise_draws, s_noise)
            extra = _theorem_and_injection(mlp, facts, margins, eps, lip_points, coherence, value_spread,
                                           injected, config, s_noise)  # before the swap moves the MLP
            with_mlp = model.with_mlp(mlp)
            for e, u_e, targets in injected:  # the Transformer's accuracy with the MLP input moved by e
                extra[injection_columns(e)[0]] = float(injection.injected_correct(with_mlp, u_e, targets)
                                                       .double().mean())
            correct = T.ssfr_correct(with_mlp, task, mapping, config.contexts_per_key, s_eval)  # (F, C)
            key_right = correct.all(dim=1)
            stored = margins > 0
            q10, q50, q90 = torch.quantile(unit_margins, torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)).tolist()
            right, wrong = unit_margins[key_right], unit_margins[~key_right]
            rows.append({
                "method": method, "m": int(m), "W": 3 * int(m) * int(config.d),
                "mlp_accuracy": float((margins > 0).double().mean()),
                "mlp_min_margin": float(margins.min()), "mlp_min_margin_unit": float(unit_margins.min()),
                "margin_q10": q10, "margin_q50": q50, "margin_q90": q90,
                "transformer_accuracy": float(correct.double().mean()),
                "key_accuracy": float(key_right.double().mean()),
                "usable_fraction": float(usable.double().mean()),
                "key_agreement": float((usable == key_right).double().mean()),
                "baseline_key_agreement": float((stored == key_right).double().mean()),
                "drop_median": float(drop.median()), "drop_max": float(drop.max()),
                "usable_differs_from_stored": int((usable != stored).sum()),
                "wrong_lost_by_attention": int((~key_right & stored & lost_eval).sum()),
                "margin_median_right": float(right.median()) if len(right) else float("nan"),
                "margin_median_wrong": float(wrong.median()) if len(wrong) else float("nan"),
                "wrong_with_positive_margin": int(((margins > 0) & ~key_right).sum()),
                "noise_ceiling": float(noise.max()), "noise_mean": float(noise.mean()),
                "noise_q50": float(noise.median()),
                "identity_accuracy": float(identity_acc), "identity_accuracy_heldout": float(identity_held),
                "V_J": int(config.junk_vocab), "contexts": int(config.contexts_per_key),
            })
            rows[-1].update(extra)
    return rows


def _theorem_and_injection(mlp, facts, margins, eps, lip_points, coherence, value_spread, injected, config,
                           s_noise) -> dict:
    """The columns of a usability row that read the MLP alone: Theorem B.62 and the injected margins."""
    T = _transformer()
    lipschitz = float(T.local_lipschitz(mlp, lip_points).max())
    gamma = float(margins.min())
    thm_eps, thm_lost = float("nan"), float("nan")
    F = len(margins)
    if gamma > 0:
        thm_eps = T.noise.noisy_margin_threshold(gamma, lipschitz, F, config.d, coherence, delta=THEOREM_DELTA)
        at = torch.full((F,), thm_eps, dtype=torch.float64)
        thm_lost = int((_noisy_margins(mlp, facts, at, config.noise_draws, s_noise) <= 0).any(dim=0).sum())
    out = {"lipschitz_max": lipschitz, "value_coherence": coherence, "value_spread": value_spread,
           "thm_eps": thm_eps, "thm_lost": thm_lost}
    for e, _, _ in injected:
        total = (eps.square() + e * e).sqrt().clamp(max=2.0)  # chord from the key (injection module)
        positive = _noisy_margins(mlp, facts, total, config.noise_draws, s_noise) > 0  # (R, F)
        out[injection_columns(e)[1]] = float(positive.all(dim=0).double().mean())
        out[f"survive_inj_{e:g}"] = float(positive.double().mean())
    return out


def injection_columns(eps: float) -> tuple[str, str]:
    """The two ``transformer_usability`` columns of an injected chord ``eps``.

    Returns
    -------
    (str, str)
        ``acc_inj_<eps>`` (the Transformer's accuracy over the scored contexts with the MLP input
        moved by chord ``eps``, :mod:`assocmem.mlps.transformer.injection`) and
        ``usable_inj_<eps>`` (the usable-key fraction with each key's noise
        ``sqrt(eps_i^2 + eps^2)``), ``eps`` written with ``:g``. (The rows also carry
        ``survive_inj_<eps>``: the fraction of keys and draws whose margin stays positive.)
    """
    e = as_real(eps, "eps", minimum=0.0, maximum=2.0, strict_min=True)
    return f"acc_inj_{e:g}", f"usable_inj_{e:g}"


#: Failure probability at which :func:`usability_point` evaluates Theorem B.62's noise threshold.
THEOREM_DELTA = 0.05

def noise_points(config: NoiseConfig) -> list[dict]:
    """``(d, F, J, rep)`` for every size, junk length and repetition; ``V_J = J``."""
    return [{"d": int(d), "F": int(F), "J": int(J), "rep": r}
            for d, F in config.sizes for J in config.junk_lengths for r in range(config.seeds)]


def noise_point(config: NoiseConfig, point: dict, device: torch.device) -> dict:
    """Pretrain attention on the identity task at ``(d, F, J)``; measure its noise (Def. 5.1).

    Returns
    -------
    dict
        ``V_J``; ``noise_ceiling`` (max over every key and context), ``noise_mean``,
        ``noise_q50``, ``noise_q90``, ``noise_q99``; ``key_weight_mean`` (mean attention weight of
        the query on the key token, when the model exposes ``attention_weights``);
        ``identity_accuracy``; ``contexts``.
    """
    T = _transformer()
    s_emb, s_train, s_eval = stream_seeds(point_seed(config, point), 3)
    J = point["J"]
    task = T.SSFRTask(num_facts=point["F"], junk_vocab=J, junk_length=J)
    emb = T.embedding_table(task, point["d"], seed=s_emb)
    model = T.pretrained_attention(task, emb, model_config(config, point["d"], device), train_config(config, s_train))
    noise = T.attention_noise(model, task, config.contexts_per_key, s_eval).to(torch.float64).flatten()
    identity = torch.arange(task.num_facts)
    q50, q90, q99 = torch.quantile(noise, torch.tensor([0.5, 0.9, 0.99], dtype=torch.float64)).tolist()
    batch = T.ssfr_eval_batch(task, identity, 1, s_eval)
    with torch.no_grad():
        weights = model.attention_weights(batch.tokens).to(torch.float64)  # (F, seq_len)
    key_weight = weights[:, task.key_position].mean()
    return {"V_J": J, "noise_ceiling": float(noise.max()), "noise_mean": float(noise.mean()),
            "noise_q50": q50, "noise_q90": q90, "noise_q99": q99, "key_weight_mean": float(key_weight),
            "identity_accuracy": float(T.ssfr_accuracy(model, task, identity, config.contexts_per_key, s_eval)),
            "contexts": int(config.contexts_per_key)}


# --------------------------------------------------------------------------------------------
# transformer_capacity


def transformer_capacity_points(config: TransformerCapacityConfig) -> list[dict]:
    """``(method, d, F, rep)`` per method, ``F`` and repetition (``rep`` in ``0 .. seeds - 1``: a
    training each, with its own embeddings, fact sets, MLPs and attention), method-major (GD
    first: the slow ones); GD only at ``F <= gd_max_facts``."""
    return [{"method": method, "d": int(config.d), "F": int(F), "rep": r} for method in config.methods
            for F in config.num_facts if not (method.startswith("gd") and F > config.gd_max_facts)
            for r in range(config.seeds)]


def transformer_capacity_point(config: TransformerCapacityConfig, point: dict, device: torch.device) -> dict:
    """Both capacity searches at one ``(method, F)``, sharing every trained Transformer.

    At each width ``m`` tried: MLP_A (fact set A) is inserted and the attention trained around it
    (:func:`assocmem.mlps.transformer.inserted_mlp`); the training accuracy is its accuracy on A;
    MLP_B, the same method and width on the fresh set B (same embeddings), is swapped in and the
    fact-adaptive accuracy measured on B with no further training. Every key is evaluated.

    Returns
    -------
    dict
        ``m_adaptive, W_adaptive, found_adaptive, n_adaptive`` (the fact-adaptive search: width,
        ``3 m d``, found, widths it evaluated), the same with suffix ``_train`` for the
        training-accuracy search (target ``train_target``), ``violations_adaptive`` and
        ``violations_train`` (evaluated widths that missed above a smaller success),
        ``train_accuracy_at_adaptive`` and ``adaptive_accuracy_at_train`` (the other criterion at
        each answer; NaN when it was not found), ``best_adaptive``, ``best_train`` (the best over
        every width tried), ``n_trained`` (Transformers trained), ``J, V_J, steps, epochs``.
    """
    T = _transformer()
    method, d, F = point["method"], point["d"], point["F"]
    setup = capacity_setup(config, point)
    task, emb, map_a, map_b = setup["task"], setup["embedding"], setup["map_a"], setup["map_b"]
    facts_a, facts_b = setup["facts_a"], setup["facts_b"]
    s_mlp_a, s_mlp_b, s_train, s_eval = (setup[k] for k in ("seed_mlp_a", "seed_mlp_b", "seed_train", "seed_eval"))
    gd = method.startswith("gd")
    kw = {"epochs": config.gd_epochs, "lr": config.gd_lr} if gd else {}
    mcfg, tcfg = model_config(config, d, device), train_config(config, s_train)
    cache: dict[int, tuple[float, float]] = {}

    def evaluate(m: int) -> tuple[float, float]:
        if m not in cache:
            mlp_a = T.build_mlp(method, facts_a, m, s_mlp_a, **kw)
            model = T.inserted_mlp(task, emb, mlp_a, map_a, mcfg, tcfg)
            train = T.ssfr_accuracy(model, task, map_a, config.contexts_per_key, s_eval)
            mlp_b = T.build_mlp(method, facts_b, m, s_mlp_b, **kw)
            adaptive = T.fact_adaptive_accuracy(model, mlp_b, map_b, config.contexts_per_key, s_eval)
            cache[m] = (float(adaptive), float(train))
        return cache[m]

    step = config.step
    k_lo, k_hi = max(1, -(-config.lo // step)), config.hi // step
    adaptive = smallest_width(lambda k: evaluate(k * step)[0], lo=k_lo, hi=k_hi, target=1.0, verify=config.verify)
    train = smallest_width(lambda k: evaluate(k * step)[1], lo=k_lo, hi=k_hi, target=config.train_target,
                           verify=config.verify)
    row = {}
    for name, res, other in (("adaptive", adaptive, 1), ("train", train, 0)):
        m = None if res.m is None else res.m * step
        row.update({f"m_{name}": m, f"W_{name}": None if m is None else 3 * m * d, f"found_{name}": res.found,
                    f"n_{name}": res.n_evaluations, f"violations_{name}": len(res.monotone_violations)})
        row[f"{'train_accuracy_at_adaptive' if name == 'adaptive' else 'adaptive_accuracy_at_train'}"] = (
            float("nan") if m is None else cache[m][other])
    row.update({"best_adaptive": max(a for a, _ in cache.values()), "best_train": max(t for _, t in cache.values()),
                "n_trained": len(cache), "J": int(config.junk_length), "V_J": int(config.junk_vocab),
                "steps": int(config.steps), "epochs": int(config.gd_epochs) if gd else None})
    return row


register_sweep(
    "transformer_usability",
    config_type=UsabilityConfig,
    presets=USABILITY_PRESETS,
    points=usability_points,
    run_point=usability_point,
    description="GD MLPs of growing width inserted into a pretrained SSFR attention: standalone margin and "
                "accuracy, Transformer accuracy, usable keys (seed 001, Fig. 2a and 7)",
)
register_sweep(
    "attention_noise",
    config_type=NoiseConfig,
    presets=NOISE_PRESETS,
    points=noise_points,
    run_point=noise_point,
    description="attention noise ceiling of a pretrained SSFR attention against junk length J, V_J = J "
                "(seed 001, Def. 5.1, Fig. 3a)",
)
register_sweep(
    "transformer_capacity",
    config_type=TransformerCapacityConfig,
    presets=TRANSFORMER_CAPACITY_PRESETS,
    points=transformer_capacity_points,
    run_point=transformer_capacity_point,
    description="smallest MLP width (W = 3md) at which the SSFR Transformer reaches 100 % fact-adaptive and "
                "99 % training accuracy, per method (seed 001, Fig. 1c, 3b and 10)",
)
