"""Fig. 14: the whitened MLP inside a Transformer block whose embeddings are a language model's.

Seed 001, App. A.5.3 ("Transformer block storage capacity", Fig. 14): a frozen whitened MLP
storing ``F`` captured pairs ``(x_i, y_i)`` is inserted into a single Transformer block whose
*input* embeddings are the captured MLP inputs ``x`` and whose *output* embeddings are the captured
outputs ``y``; the attention is trained around it on SSFR (the insert-then-train protocol of
Fig. 1c), and a search finds the smallest hidden width at which the block reaches 100 % SSFR
*training* accuracy on that fact set. Unlike the capacity sweeps of Sec. 5, the post-attention
residual is kept and the value and output projections are trained. The source reports that
``W = 3 m d`` then follows ``Theta(F log F)``, as the standalone MLP does.

:class:`UntiedSSFRTransformer` is that block: :class:`~assocmem.mlps.transformer.SSFRTransformer`
(the book's one-layer, one-head SSFR model, App. A.1.2) with the read-out taken against a separate
output table ``Y`` (one row per fact token) instead of the input table's fact rows. Everything else
(the RMSNorm before the attention, no positional encoding, the projections to the sphere, the
training loop :func:`~assocmem.mlps.transformer.train_attention`) is the book's.

``lm_block_capacity``  one search per ``(training, draw, F)``: training ``r`` trains the attention
    with its own seed (and its own MLP and evaluation seeds), always on the pairs of the language
    model's training 0 (``fact_editing``'s training 0,
    :func:`assocmem.mlps.lm_embedding_sweeps.sweep_pairs`: one language model, so that a CPU
    affords the three attention trainings; ``lm_capacity`` and ``lm_dedup`` show the spread
    between language-model trainings). A draw of ``F + V_J + 1`` pairs
    (:func:`~assocmem.mlps.lm_embeddings.sample_fact_set`: ``"uniform"``, the source's, or
    ``"deduplicated"``, no two keys and no two values at cosine above ``1 - twin_gap``) is shuffled;
    the first ``F`` are the facts (key token ``i`` has input embedding ``x_i``, its value token the
    output embedding ``y_i``, identity map), the other inputs are the junk tokens' and the query
    token's embeddings, so every token comes from the language model. Per width ``m`` (multiples
    of ``step``): the whitened MLP of width ``m`` on the facts is inserted frozen, the attention
    (``W_Q, W_K, W_V, W_O``) is trained, and the training accuracy is measured on every key in
    ``contexts_per_key`` junk contexts. The row also holds the standalone MLP's smallest width at
    the same target (:func:`assocmem.mlps.capacity_sweeps.capacity_search`, no attention) and the
    near-twin share of the facts (:func:`assocmem.mlps.lm_embeddings.twins.near_twin_stats`).

``lm_block_recipe``  how far the block's training recipe limits it: one fact set of
    ``lm_block_capacity`` (its training 0), one wide MLP (``m``), the attention trained for each
    number of steps of ``steps`` (the rest of the recipe unchanged), ``seeds`` attention seeds;
    per run the training accuracy, the standalone MLP's accuracy on the exact keys and the
    attention noise ``||u - x_key||`` (Definition 5.1) over every key and context.

Presets: ``quick`` (the toy LM of ``fact_editing``'s quick preset, seconds), ``cpu`` (committed;
chapter 16's cpu base model, ``d = 64``, reduced training recipe, stated in ``notes``), ``paper``
(real Qwen3 pairs, which the book does not ship, with the source's recipe).

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.5.3 (Fig. 14), App. A.1.2 (the block and
its optimiser), App. A.4.3 (the insert-then-train capacity protocol).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch.nn import functional as Fn

from assocmem._checks import as_bool, as_int, as_real, positive_int, seed_int
from assocmem.mlps.facts import FactSet
from assocmem.mlps.lm_embeddings.twins import near_twin_stats
# module imports, not names: this module may be imported while lm_embedding_sweeps or
# capacity_sweeps is still initialising (the registry imports every sweep module)
import assocmem.mlps.capacity_sweeps as CS
import assocmem.mlps.lm_embedding_sweeps as LS
from assocmem.mlps.lm_embeddings.specs import check_grid, check_pairs_spec, check_trainings
from assocmem.mlps.lm_embeddings import sample_fact_set
from assocmem.mlps.transformer.evaluation import ssfr_accuracy
from assocmem.mlps.transformer.insertion import build_mlp
from assocmem.mlps.transformer.model import SSFRTransformer, TransformerConfig
from assocmem.mlps.transformer.ssfr import SSFRTask, identity_map
from assocmem.mlps.transformer.training import TrainConfig, seed_stream, train_attention
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import register_sweep
from assocmem.sweeps.search import smallest_width

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem.mlps.transformer.model import CausalAttention

__all__ = ["UntiedSSFRTransformer", "LMBlockConfig", "LM_BLOCK_PRESETS", "BLOCK_DRAWS", "block_setup",
           "block_points", "block_point", "LMBlockRecipeConfig", "LM_BLOCK_RECIPE_PRESETS", "recipe_points",
           "recipe_point", "agreement_rules"]

#: Draws of ``lm_block_capacity``: the source's uniform draw and the deduplicated one.
BLOCK_DRAWS = ("uniform", "deduplicated")
_DTYPES = {"float32": torch.float32, "float64": torch.float64}


class UntiedSSFRTransformer(SSFRTransformer):
    """The SSFR Transformer with untied embeddings: input table ``E``, output table ``Y`` (App. A.5.3).

    The block of :class:`~assocmem.mlps.transformer.SSFRTransformer` (RMSNorm, one causal head,
    optional residual ``z = e_Q + o``, projection to the sphere, the frozen MLP), read out against
    ``Y``: ``logits = unit(MLP(u)) Y^T``, cosines with the ``F`` output rows. The input table is
    what the attention reads and the residual adds; it plays no part in the read-out.

    Parameters
    ----------
    config : TransformerConfig
    embedding : torch.Tensor, shape ``(vocab_size, d)``
        Input embeddings (fact rows first, then junk, then the query token).
    output_embedding : torch.Tensor, shape ``(F, d)``
        Output embedding of each fact (value) token, finite; cast to ``config.dtype``.
    mlp : torch.nn.Module, optional
    task : SSFRTask
    seed : int, default 0
    attention : CausalAttention, optional

    Raises
    ------
    ValueError
        What :class:`~assocmem.mlps.transformer.SSFRTransformer` raises, or an output table that
        is not a finite float tensor of shape ``(F, d)``.
    """

    def __init__(self, config: TransformerConfig, embedding: torch.Tensor, output_embedding: torch.Tensor,
                 mlp: torch.nn.Module | None = None, *, task: SSFRTask, seed: int = 0,
                 attention: CausalAttention | None = None) -> None:
        super().__init__(config, embedding, mlp, task=task, seed=seed, attention=attention)
        Y = output_embedding
        if not isinstance(Y, torch.Tensor) or Y.dim() != 2 or tuple(Y.shape) != (task.num_facts, config.d):
            shape = tuple(Y.shape) if isinstance(Y, torch.Tensor) else type(Y).__name__
            raise ValueError(f"output_embedding must be a tensor of shape (F, d) = ({task.num_facts}, {config.d}); "
                             f"got {shape}")
        if not Y.is_floating_point() or not bool(torch.isfinite(Y).all()):
            raise ValueError("output_embedding must be a finite floating tensor")
        self.register_buffer("output_embedding", Y.to(device=self.device, dtype=config.dtype), persistent=True)

    def _logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, F)`` against the output table, without input checks (the training loop's path)."""
        u, _ = self._block(tokens)
        y = self.mlp(u.to(self._mlp_dtype)).to(self.config.dtype)
        return Fn.normalize(y, dim=-1, eps=self.config.norm_eps) @ self.output_embedding.T  # (B, F)

    def with_mlp(self, mlp: torch.nn.Module) -> "UntiedSSFRTransformer":
        """A model sharing this one's attention and both tables, with another MLP."""
        return UntiedSSFRTransformer(self.config, self.embedding, self.output_embedding, mlp, task=self.task,
                                     attention=self.attention)


@dataclass(frozen=True)
class LMBlockConfig:
    """Settings of ``lm_block_capacity`` (Fig. 14).

    Raises
    ------
    ValueError
        On construction: a bad ``pairs`` spec or ``Fs`` grid, draws not from :data:`BLOCK_DRAWS`,
        a ``twin_gap`` outside ``(0, 1)``, a ``target`` outside ``(0, 1]``, bad task sizes, search
        range or training fields, a bad ``trainings``, an unknown dtype, or a bad seed.
    """

    pairs: str
    Fs: tuple[int, ...]
    draws: tuple[str, ...] = BLOCK_DRAWS
    twin_gap: float = 1e-4
    target: float = 1.0  # the source's 100 % training accuracy
    junk_vocab: int = 9
    junk_length: int = 9
    attention_residual: bool = True  # kept, as the source's Fig. 14
    train_value_output: bool = True  # W_V, W_O trained, as the source's Fig. 14
    steps: int = 4000
    batch_size: int = 1280
    lr: float = 2e-4
    weight_decay: float = 0.1
    contexts_per_key: int = 2
    lo: int = 4
    hi: int = 2048
    step: int = 4
    verify: int = 1
    dtype: str = "float64"
    trainings: int = 1  # attention trainings (seeds), all on the language model's training 0
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        check_pairs_spec(self.pairs)
        check_grid("Fs", self.Fs)
        if not isinstance(self.draws, tuple) or not self.draws or len(set(self.draws)) != len(self.draws) \
                or any(d not in BLOCK_DRAWS for d in self.draws):
            raise ValueError(f"draws must be distinct names from {BLOCK_DRAWS}; got {self.draws!r}")
        as_real(self.twin_gap, "twin_gap", minimum=0.0, strict_min=True, maximum=1.0)
        if not self.twin_gap < 1.0:
            raise ValueError(f"twin_gap must lie in (0, 1); got {self.twin_gap}")
        as_real(self.target, "target", minimum=0.0, strict_min=True, maximum=1.0)
        positive_int("junk_vocab", self.junk_vocab)
        as_int(self.junk_length, "junk_length", minimum=0)
        as_bool(self.attention_residual, "attention_residual")
        as_bool(self.train_value_output, "train_value_output")
        TrainConfig(steps=self.steps, batch_size=self.batch_size, lr=self.lr, weight_decay=self.weight_decay)
        positive_int("contexts_per_key", self.contexts_per_key)
        positive_int("lo", self.lo)
        positive_int("step", self.step)
        if as_int(self.hi, "hi", minimum=1) < max(self.lo, self.step):
            raise ValueError(f"need hi >= max(lo, step); got lo={self.lo}, hi={self.hi}, step={self.step}")
        as_int(self.verify, "verify", minimum=0)
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)}; got {self.dtype!r}")
        check_trainings(self.pairs, self.trainings)
        seed_int(self.seed)


def block_points(config: LMBlockConfig) -> list[dict]:
    """The grid ``{"training": t, "draw": draw, "F": F}``, training-major, then draw and F."""
    return [{"training": t, "draw": d, "F": int(F)} for t in range(config.trainings) for d in config.draws
            for F in config.Fs]


def block_setup(config: LMBlockConfig, point: dict) -> dict:
    """What one point draws before its search (so that a chapter or a test can rebuild it).

    The pairs are those of the language model's training 0 whatever ``point["training"]``, drawn
    with a seed of ``(draw, F)`` alone, so every training searches the same facts; the MLP,
    attention and evaluation seeds depend on the training.

    Returns
    -------
    dict
        ``task`` (:class:`SSFRTask`), ``embedding`` ``(F + V_J + 1, d)`` (unit input rows),
        ``output_embedding`` ``(F, d)`` (unit), ``facts`` (:class:`FactSet`: the first ``F`` input
        rows to the output rows, identity map), ``n_pairs`` and the seeds ``seed_mlp``,
        ``seed_train``, ``seed_eval``.
    """
    F = int(point["F"])
    task = SSFRTask(num_facts=F, junk_vocab=config.junk_vocab, junk_length=config.junk_length)
    draw_seed, order_seed = np.random.SeedSequence(
        point_seed(config, {"draw": point["draw"], "F": F})).generate_state(2)
    pairs = LS.sweep_pairs(config.pairs, training=0)
    limit = None if point["draw"] == "uniform" else 1.0 - float(config.twin_gap)
    drawn = sample_fact_set(pairs, task.vocab_size, seed=int(draw_seed), max_cosine=limit)
    order = torch.from_numpy(np.random.default_rng(int(order_seed)).permutation(task.vocab_size))
    order = order.to(drawn.keys.device)
    E, Y = drawn.keys[order], drawn.values[order][:F]
    facts = FactSet(E[:F].clone(), Y.clone(), torch.arange(F, device=E.device))
    s_mlp, s_train, s_eval = (int(s) % 2**31 for s in
                              np.random.SeedSequence(point_seed(config, point)).generate_state(3))
    return {"task": task, "embedding": E, "output_embedding": Y, "facts": facts, "n_pairs": len(pairs),
            "seed_mlp": s_mlp, "seed_train": s_train, "seed_eval": s_eval}


def block_point(config: LMBlockConfig, point: dict, device: torch.device) -> dict:
    """The smallest whitened width at which the untied block reaches ``target`` training accuracy.

    Returns
    -------
    dict
        ``m``, ``W = 3 m d``, ``found``, ``accuracy`` (at ``m``), ``best_accuracy`` (over every
        width tried), ``n_trained`` (blocks trained), ``violations`` (widths that missed above a
        smaller success), ``m_mlp`` / ``W_mlp`` / ``found_mlp`` (the standalone whitened MLP's
        smallest width at the same target, same facts and MLP seed), ``near_twin_stats`` of
        the facts, ``d``, ``steps``, ``target``, ``n_pairs``.
    """
    setup = block_setup(config, point)
    task, facts, E, Y = setup["task"], setup["facts"], setup["embedding"], setup["output_embedding"]
    d = int(E.shape[1])
    mcfg = TransformerConfig(d=d, attention_residual=config.attention_residual,
                             freeze_value_output=not config.train_value_output, dtype=_DTYPES[config.dtype],
                             device=device)
    tcfg = TrainConfig(steps=config.steps, batch_size=config.batch_size, lr=config.lr,
                       weight_decay=config.weight_decay, seed=setup["seed_train"])
    mapping = identity_map(task)
    cache: dict[int, float] = {}

    def evaluate(k: int) -> float:
        m = k * config.step
        if m not in cache:
            mlp = build_mlp("whitened", facts, m, setup["seed_mlp"])
            model = UntiedSSFRTransformer(mcfg, E, Y, mlp, task=task, seed=seed_stream(tcfg.seed, 0))
            train_attention(model, task, mapping, tcfg)
            cache[m] = float(ssfr_accuracy(model, task, mapping, config.contexts_per_key, setup["seed_eval"]))
        return cache[m]

    k_lo, k_hi = max(1, -(-config.lo // config.step)), config.hi // config.step
    res = smallest_width(evaluate, lo=k_lo, hi=k_hi, target=config.target, verify=config.verify)
    m = None if res.m is None else res.m * config.step
    alone = CS.capacity_search(facts, "whitened", setup["seed_mlp"], lo=1, hi=config.hi, verify=2,
                            target=config.target)
    row = {"m": m, "W": None if m is None else 3 * m * d, "found": res.found,
           "accuracy": float("nan") if m is None else cache[m], "best_accuracy": max(cache.values()),
           "n_trained": len(cache), "violations": len(res.monotone_violations),
           "m_mlp": alone.m, "W_mlp": None if alone.m is None else 3 * alone.m * d, "found_mlp": alone.found}
    row.update(near_twin_stats(facts, config.twin_gap))
    row.update(d=d, steps=int(config.steps), target=float(config.target), n_pairs=setup["n_pairs"])
    return row


_CPU_NOTE = ("chapter 16's cpu base model (d = 64, three trainings, each with its own attention seed) "
             "instead of Qwen3-0.6B-Base (d = 1024); F in {32, 64, 128, 256}; junk and query embeddings are "
             "other captured inputs; attention 300 steps of batch 256 at lr 3e-3 (source: 4000 of 1280 at "
             "2e-4), float64; search precision 4 in [4, 2048] (source: 16 in [1, 65536]); training "
             "accuracy over every key in 2 junk contexts")

LM_BLOCK_PRESETS = {
    "quick": LMBlockConfig(pairs="editing_lm:quick:gd_mse", Fs=(16, 32), draws=("deduplicated",), junk_vocab=4,
                           junk_length=4, steps=100, batch_size=64, lr=3e-3, hi=256, trainings=3,
                           notes=("the toy LM of fact_editing's quick preset (d = 32); three attention "
                                  "trainings, the spread a live rerun is checked against",)),
    "cpu": LMBlockConfig(pairs="editing_lm:cpu:gd_mse", Fs=(32, 64, 128, 256), steps=300, batch_size=256, lr=3e-3,
                         trainings=3, notes=(_CPU_NOTE,)),
    "paper": LMBlockConfig(pairs="results/qwen3_layer14_pairs.npz", Fs=tuple(2 ** k for k in range(6, 14)),
                           lo=16, hi=65536, step=16, dtype="float32",
                           notes=("real Qwen3-0.6B-Base layer-14 pairs, which the book does not ship; the "
                                  "source's recipe (App. A.1.2) and search (precision 16 in [1, 65536]); F as "
                                  "in Fig. 1c (App. A.4.3), which Fig. 14 does not state",)),
}

@dataclass(frozen=True)
class LMBlockRecipeConfig:
    """Settings of ``lm_block_recipe``: training length against the block's training accuracy.

    Raises
    ------
    ValueError
        On construction: an unknown ``block`` preset, a ``draw`` not in :data:`BLOCK_DRAWS` or
        the preset's draws, an ``F`` not in the preset's ``Fs``, a width ``m`` that is not a
        positive integer, ``steps`` not an increasing tuple of positive integers, a bad
        ``seeds`` or seed.
    """

    block: str  # the lm_block_capacity preset whose pairs, block and recipe are used
    F: int
    m: int
    steps: tuple[int, ...]
    draw: str = "deduplicated"
    seeds: int = 3
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.block not in LM_BLOCK_PRESETS:
            raise ValueError(f"block must name an lm_block_capacity preset {sorted(LM_BLOCK_PRESETS)}; "
                             f"got {self.block!r}")
        cfg = LM_BLOCK_PRESETS[self.block]
        if self.draw not in cfg.draws:
            raise ValueError(f"draw must be one of the preset's draws {cfg.draws}; got {self.draw!r}")
        if as_int(self.F, "F") not in cfg.Fs:
            raise ValueError(f"F must be one of the preset's Fs {cfg.Fs}; got {self.F}")
        positive_int("m", self.m)
        if not isinstance(self.steps, tuple) or not self.steps:
            raise ValueError(f"steps must be a non-empty tuple; got {self.steps!r}")
        for n in self.steps:
            positive_int("steps", n)
        if list(self.steps) != sorted(set(self.steps)):
            raise ValueError(f"steps must be increasing without repeats; got {self.steps}")
        positive_int("seeds", self.seeds)
        seed_int(self.seed)


def recipe_points(config: LMBlockRecipeConfig) -> list[dict]:
    """The grid ``{"rep": r, "steps": n}``, seed-major."""
    return [{"rep": r, "steps": int(n)} for r in range(config.seeds) for n in config.steps]


def recipe_point(config: LMBlockRecipeConfig, point: dict, device: torch.device) -> dict:
    """One block, trained for ``point["steps"]`` steps around the whitened MLP of width ``m``.

    The facts, embeddings and MLP seed are those of the ``lm_block_capacity`` point
    ``{"training": 0, "draw": draw, "F": F}`` of the named preset; the attention seed depends on
    ``rep`` only, so the runs of one seed differ only in their length.

    Returns
    -------
    dict
        ``accuracy`` (training accuracy, every key in the preset's ``contexts_per_key`` contexts),
        ``mlp_accuracy`` (the MLP alone on the exact keys), ``noise_max``, ``noise_mean`` (the
        attention noise ``||u - x_key||`` over the same contexts), ``final_loss``, ``m``, ``d``.
    """
    from assocmem.mlps.margins.decoding import accuracy as mlp_acc
    from assocmem.mlps.transformer.noise import attention_noise

    cfg = LM_BLOCK_PRESETS[config.block]
    setup = block_setup(cfg, {"training": 0, "draw": config.draw, "F": int(config.F)})
    task, facts, E, Y = setup["task"], setup["facts"], setup["embedding"], setup["output_embedding"]
    d = int(E.shape[1])
    seed = int(np.random.SeedSequence(point_seed(config, {"rep": point["rep"]})).generate_state(1)[0]) % 2**31
    mcfg = TransformerConfig(d=d, attention_residual=cfg.attention_residual,
                             freeze_value_output=not cfg.train_value_output, dtype=_DTYPES[cfg.dtype],
                             device=device)
    tcfg = TrainConfig(steps=int(point["steps"]), batch_size=cfg.batch_size, lr=cfg.lr,
                       weight_decay=cfg.weight_decay, seed=seed)
    mlp = build_mlp("whitened", facts, int(config.m), setup["seed_mlp"])
    model = UntiedSSFRTransformer(mcfg, E, Y, mlp, task=task, seed=seed_stream(tcfg.seed, 0))
    result = train_attention(model, task, identity_map(task), tcfg)
    noise = attention_noise(model, task, cfg.contexts_per_key, setup["seed_eval"])
    return {"accuracy": float(ssfr_accuracy(model, task, identity_map(task), cfg.contexts_per_key,
                                            setup["seed_eval"])),
            "mlp_accuracy": float(mlp_acc(mlp, facts)), "noise_max": float(noise.max()),
            "noise_mean": float(noise.mean()), "final_loss": result.final_loss, "m": int(config.m), "d": d}


LM_BLOCK_RECIPE_PRESETS = {
    "quick": LMBlockRecipeConfig(block="quick", F=16, m=64, steps=(50, 100), seeds=3,
                                 notes=("the quick block preset; three attention seeds, the spread a "
                                        "live rerun is checked against",)),
    "cpu": LMBlockRecipeConfig(block="cpu", F=32, m=2048, steps=(300, 1200), seeds=3,
                               notes=("lm_block_capacity's cpu block and recipe; its training-0 fact set at "
                                      "F = 32, deduplicated; m = 2048, the top of its search",)),
}

_BLOCK_COUNTS = ("n_trained", "violations")
_TWIN_SHARES = ("key_twin_share", "value_twin_share", "pair_twin_share")


def agreement_rules(sweep: str, stored: pd.DataFrame, config: LMBlockConfig | LMBlockRecipeConfig) -> dict:
    """The rules by which a live run of ``lm_block_capacity`` or ``lm_block_recipe`` must agree.

    Every row comes out of an attention training, a sample: a live row is checked against the
    spread of the stored trainings of its point with :func:`assocmem.sweeps.check_spread`, never
    against one training's digits. Resolutions (added to each interval's half-width):

    * ``lm_block_capacity`` (trainings: column ``training``; points ``draw, F``): one search
      step in ``m`` (the config's ``step``) and ``3 d step`` in ``W``; one step of the
      standalone search (1) in ``m_mlp`` and ``3 d`` in ``W_mlp``; one sequence's share
      ``1 / (F C)`` at the smallest ``F`` (``C`` the contexts per key) in ``accuracy`` and
      ``best_accuracy``; one for a count; none for ``found`` and ``found_mlp``. ``d``,
      ``steps``, ``target``, ``n_pairs`` must be equal. The near-twin columns
      (``key_twin_share``, ``value_twin_share``, ``pair_twin_share``, ``key_nn_median``) are
      not compared: they are set by the language model's training 0 alone, the same in every
      stored attention training, so the stored spread says nothing of how a rerun's language
      model moves them (``lm_dedup``'s rules check them against the spread between language
      model trainings).
    * ``lm_block_recipe`` (trainings: column ``rep``; points ``steps``): ``1 / (F C)`` in
      ``accuracy``, ``1 / F`` in ``mlp_accuracy``, none in ``noise_max``, ``noise_mean`` and
      ``final_loss``; ``m`` and ``d`` equal.

    ``seed`` (a training's own) and ``wall_time_s`` are not compared.

    Parameters
    ----------
    sweep : {"lm_block_capacity", "lm_block_recipe"}
    stored : pandas.DataFrame
        The stored rows of that sweep.
    config : LMBlockConfig or LMBlockRecipeConfig
        The stored preset's config (the search step, ``F`` and the contexts per key are read
        from it).

    Returns
    -------
    dict
        Keyword arguments ``keys``, ``columns``, ``exact``, ``ignore`` and ``training`` for
        :func:`assocmem.sweeps.check_spread` (and :func:`~assocmem.sweeps.leave_one_training_out`).

    Raises
    ------
    ValueError
        An unknown sweep, or stored rows without the sweep's columns.
    TypeError
        ``stored`` not a DataFrame, or a config of the wrong type.

    References
    ----------
    Seed 001, App. A.5.3 (Fig. 14).
    """
    if not isinstance(stored, pd.DataFrame):
        raise TypeError(f"stored must be a pandas DataFrame, got {type(stored).__name__}")
    ignore = ["seed", "wall_time_s"]
    if sweep == "lm_block_capacity":
        if not isinstance(config, LMBlockConfig):
            raise TypeError(f"lm_block_capacity needs an LMBlockConfig; got {type(config).__name__}")
        keys, exact, training = ["draw", "F"], ["d", "steps", "target", "n_pairs"], "training"
        need = ["m", "W", "found", "accuracy", "best_accuracy", *_BLOCK_COUNTS, "m_mlp", "W_mlp",
                "found_mlp", *_TWIN_SHARES, "key_nn_median"]
        d, step, F = float(stored["d"].max()), float(config.step), float(stored["F"].min())
        columns = ({"m": step, "W": 3 * d * step, "m_mlp": 1.0, "W_mlp": 3 * d, "found": 0.0,
                    "found_mlp": 0.0}
                   | {c: 1.0 / (F * config.contexts_per_key) for c in ("accuracy", "best_accuracy")}
                   | {c: 1.0 for c in _BLOCK_COUNTS})
        ignore += [*_TWIN_SHARES, "key_nn_median"]  # the language model's, not the attention's
    elif sweep == "lm_block_recipe":
        if not isinstance(config, LMBlockRecipeConfig):
            raise TypeError(f"lm_block_recipe needs an LMBlockRecipeConfig; got {type(config).__name__}")
        keys, exact, training = ["steps"], ["m", "d"], "rep"
        need = ["accuracy", "mlp_accuracy", "noise_max", "noise_mean", "final_loss"]
        C = LM_BLOCK_PRESETS[config.block].contexts_per_key
        columns = {"accuracy": 1.0 / (config.F * C), "mlp_accuracy": 1.0 / config.F, "noise_max": 0.0,
                   "noise_mean": 0.0, "final_loss": 0.0}
    else:
        raise ValueError(f"sweep must be 'lm_block_capacity' or 'lm_block_recipe'; got {sweep!r}")
    missing = sorted({*keys, *exact, training, *need} - set(stored.columns))
    if missing:
        raise ValueError(f"stored {sweep} rows lack the column(s) {missing}")
    return {"keys": keys, "columns": columns, "exact": exact, "ignore": ignore, "training": training}


register_sweep(
    "lm_block_capacity",
    config_type=LMBlockConfig,
    presets=LM_BLOCK_PRESETS,
    points=block_points,
    run_point=block_point,
    description="smallest whitened MLP width at which an untied Transformer block on language-model "
                "embeddings (residual, trained V/O) reaches 100 % SSFR training accuracy (seed 001, Fig. 14)",
)

register_sweep(
    "lm_block_recipe",
    config_type=LMBlockRecipeConfig,
    presets=LM_BLOCK_RECIPE_PRESETS,
    points=recipe_points,
    run_point=recipe_point,
    description="training accuracy and attention noise of the untied block on language-model embeddings "
                "against the attention's training length (seed 001, Fig. 14)",
)
