"""Fig. 10's own protocol and the App. A.4.3 counterfactuals, for the SSFR Transformer (chapter 15).

Two registered sweeps complement ``transformer_capacity`` (:mod:`assocmem.mlps.transformer_sweeps`)
on the one-layer SSFR Transformer of :mod:`assocmem.mlps.transformer`, for seed 001 (Garcia et
al. 2026, "MLPs are Hebbians"):

``transformer_facts``  Fig. 10 (App. A.5.1) as the source runs it: the MLP's hidden width ``m`` is
    *fixed* and the search is over the number of facts ``F`` ("we fix the hidden dimension m ...
    and binary-search for the maximum number of facts F"). Every ``F`` tried draws its own
    embeddings, fact sets A and B and MLPs (an SSFR task of ``F`` facts), inserts MLP_A and trains
    the attention around it (App. A.1.2); the *training accuracy* is the block's on A, the
    *fact-adaptive accuracy* that on B with MLP_B swapped in and no further training (App.
    A.4.3). Two searches share every trained block: the largest ``F`` reaching
    ``train_target`` (99 %) training accuracy (Fig. 10) and the largest reaching 100 %
    fact-adaptive accuracy (the criterion of Fig. 1c), so their ratio is the source's "facts at
    a fixed parameter budget".
``transformer_architecture``  App. A.4.3's two architecture changes, reverted one at a time: with
    MLP_A inserted at a fixed width, the attention is trained with the attention residual on
    (``residual``), with ``W_V`` trainable (``value``), with ``W_O`` trainable (``output``), with
    both trainable (``value_output``), or as the source prescribes (``source``: no residual,
    ``W_V = W_O = I`` frozen); training and fact-adaptive accuracy are measured as above.

The largest-``F`` search (:func:`largest_count`) is :func:`assocmem.sweeps.smallest_width` run on
the *failure* of the criterion (the smallest ``F`` at which it fails, its ``verify`` next values
failing too), on the grid ``F = f_step * k``: the book's galloping search, not the source's plain
bisection of ``[1, 65536]`` (the same answer when accuracy is monotone in ``F``).

Presets: ``quick`` (seconds; CI and the chapter's live run), ``cpu`` (committed, reduced: ``d =
64``, one width per memory, 300 attention steps; labelled in ``notes``), ``paper`` (the source's
widths at ``d = 128``, 4000 steps of batch 1280; GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from assocmem._checks import as_int, as_real, positive_int
from assocmem.mlps import transformer_setup as TSU
from assocmem.mlps.transformer_sweeps import CAPACITY_METHODS
from assocmem.sweeps.registry import register_sweep
from assocmem.sweeps.search import smallest_width

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from assocmem.mlps.transformer.model import SSFRTransformer, TransformerConfig
    from assocmem.mlps.transformer.ssfr import SSFRTask
    from assocmem.mlps.transformer.training import TrainConfig
    from collections.abc import Callable

__all__ = [
    "VARIANTS",
    "CountResult",
    "largest_count",
    "FactsConfig",
    "ArchitectureConfig",
    "FACTS_PRESETS",
    "ARCHITECTURE_PRESETS",
    "facts_points",
    "facts_point",
    "architecture_points",
    "architecture_point",
    "variant_model",
    "ratio_bounds",
    "architecture_summary",
]

#: The attention variants of ``transformer_architecture``: (attention residual, W_V trainable,
#: W_O trainable). ``source`` is App. A.4.3's block; each other one reverts part of it.
VARIANTS = {
    "source": (False, False, False),
    "residual": (True, False, False),
    "value": (False, True, False),
    "output": (False, False, True),
    "value_output": (False, True, True),
}


def _transformer():
    from assocmem.mlps import transformer

    return transformer


def _check_widths(widths, methods=CAPACITY_METHODS) -> None:
    """``widths`` must be non-empty ``(method, m)`` pairs, known methods, ``m >= 1``."""
    if not widths:
        raise ValueError("widths must list at least one (method, m) pair")
    for pair in widths:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ValueError(f"widths must be (method, m) pairs; got {pair!r}")
        if pair[0] not in methods:
            raise ValueError(f"unknown method {pair[0]!r}; valid methods: {', '.join(methods)}")
        as_int(pair[1], "m", minimum=1)


# --------------------------------------------------------------------------------------------
# the largest-count search


@dataclass(frozen=True)
class CountResult:
    """Outcome of :func:`largest_count`.

    Attributes
    ----------
    n : int or None
        The largest ``n`` found to meet the criterion (see :func:`largest_count`); ``None`` when
        it fails already at ``lo``.
    censored : bool
        True when the criterion held at every ``n`` up to ``hi``: ``n = hi`` is then a lower
        bound.
    evaluations : int
        Values of ``n`` evaluated.
    violations : tuple of int
        Evaluated ``n`` that met the criterion above a smaller ``n`` that failed it.
    """

    n: int | None
    censored: bool
    evaluations: int
    violations: tuple[int, ...]


def largest_count(ok_at: Callable[[int], bool], lo: int, hi: int, verify: int = 1) -> CountResult:
    """Largest integer ``n`` in ``[lo, hi]`` at which ``ok_at(n)`` holds, searched from below.

    :func:`assocmem.sweeps.smallest_width` finds the smallest ``n`` at which the criterion
    *fails* (galloping up from ``lo``, bisecting, and requiring the ``verify`` next values to fail
    too); the answer is the value just below it, which was evaluated and met the criterion.

    Parameters
    ----------
    ok_at : callable
        ``ok_at(n) -> bool``; called at most once per ``n``.
    lo, hi : int
        The searched range, ``1 <= lo <= hi``.
    verify : int, default 1
        Values above the first failure that must fail too.

    Returns
    -------
    CountResult

    Raises
    ------
    ValueError
        As :func:`~assocmem.sweeps.smallest_width` (bad ``lo``, ``hi``, ``verify``).
    TypeError
        ``ok_at`` not callable.

    Examples
    --------
    >>> largest_count(lambda n: n <= 37, 1, 100).n
    37
    """
    if not callable(ok_at):
        raise TypeError(f"ok_at must be a callable n -> bool; got {type(ok_at).__name__}")
    res = smallest_width(lambda n: 0.0 if bool(ok_at(n)) else 1.0, lo=lo, hi=hi, target=1.0,
                         verify=verify)
    failed_first = res.m is not None and res.m == lo
    n = None if failed_first else (hi if res.m is None else res.m - 1)
    return CountResult(n=n, censored=res.m is None, evaluations=len(res.evaluations),
                       violations=res.monotone_violations)


# --------------------------------------------------------------------------------------------
# configs


@dataclass(frozen=True)
class FactsConfig:
    """Settings of ``transformer_facts`` (Fig. 10's protocol: fixed width, largest ``F``).

    The search runs over ``F = f_step * k``, ``k`` in ``[ceil(f_lo / f_step), f_hi // f_step]``
    (``gd_f_hi`` for the GD MLPs). Training and evaluation fields as
    :class:`~assocmem.mlps.transformer_sweeps.TransformerCapacityConfig`.

    Raises
    ------
    ValueError
        On construction: ``widths`` not ``(method, m)`` pairs of known methods and ``m >= 1``,
        ``d < 2``, a search range with ``f_hi < max(f_lo, f_step, 2)``, a ``train_target``
        outside ``(0, 1]``, bad training fields.
    """

    d: int
    widths: tuple[tuple[str, int], ...]  # (method, m): one search per pair and training
    junk_vocab: int = 9
    junk_length: int = 9
    seeds: int = 1
    gd_epochs: int = 10000
    gd_lr: float = 1e-3
    steps: int = 4000
    batch_size: int = 1280
    lr: float = 2e-4
    weight_decay: float = 0.1
    contexts_per_key: int = 2
    f_lo: int = 16
    f_hi: int = 65536
    gd_f_hi: int = 65536
    f_step: int = 16
    verify: int = 1
    train_target: float = 0.99
    dtype: str = "float32"
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        as_int(self.d, "d", minimum=2)
        _check_widths(self.widths)
        positive_int("junk_vocab", self.junk_vocab)
        as_int(self.junk_length, "junk_length", minimum=0)
        positive_int("seeds", self.seeds)
        positive_int("gd_epochs", self.gd_epochs)
        as_real(self.gd_lr, "gd_lr", minimum=0.0, strict_min=True)
        for name in ("f_lo", "f_hi", "gd_f_hi", "f_step"):
            positive_int(name, getattr(self, name))
        for name in ("f_hi", "gd_f_hi"):
            if getattr(self, name) < max(self.f_lo, self.f_step, 2):
                raise ValueError(f"need {name} >= max(f_lo, f_step, 2); got {name}={getattr(self, name)}, "
                                 f"f_lo={self.f_lo}, f_step={self.f_step}")
        as_int(self.verify, "verify", minimum=0)
        as_real(self.train_target, "train_target", minimum=0.0, maximum=1.0, strict_min=True)
        TSU.check_training_fields(self)


@dataclass(frozen=True)
class ArchitectureConfig:
    """Settings of ``transformer_architecture`` (App. A.4.3's changes reverted one at a time).

    Raises
    ------
    ValueError
        On construction: ``widths`` not ``(method, m)`` pairs of known methods, unknown
        ``variants``, ``d < 2``, ``num_facts < 2``, bad training fields.
    """

    d: int
    num_facts: int
    widths: tuple[tuple[str, int], ...]  # (method, m)
    variants: tuple[str, ...] = tuple(VARIANTS)
    junk_vocab: int = 9
    junk_length: int = 9
    seeds: int = 1
    gd_epochs: int = 10000
    gd_lr: float = 1e-3
    steps: int = 4000
    batch_size: int = 1280
    lr: float = 2e-4
    weight_decay: float = 0.1
    contexts_per_key: int = 2
    dtype: str = "float32"
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        as_int(self.d, "d", minimum=2)
        as_int(self.num_facts, "num_facts", minimum=2)
        _check_widths(self.widths)
        bad = [v for v in self.variants if v not in VARIANTS]
        if bad or not self.variants:
            raise ValueError(f"unknown variant(s) {bad}; valid variants: {', '.join(VARIANTS)}")
        positive_int("junk_vocab", self.junk_vocab)
        as_int(self.junk_length, "junk_length", minimum=0)
        positive_int("seeds", self.seeds)
        positive_int("gd_epochs", self.gd_epochs)
        as_real(self.gd_lr, "gd_lr", minimum=0.0, strict_min=True)
        TSU.check_training_fields(self)


_CPU_NOTE = "reduced from the source's grid to fit a few minutes of one CPU core: "
_CPU_TRAINING = ("attention 300 steps of batch 256 at lr 3e-3 (4000 of 1280 at 2e-4), GD 2000 epochs "
                 "(10,000), 3 trainings (the source reports one), float64, as transformer_capacity's cpu")

FACTS_PRESETS = {
    "quick": FactsConfig(d=16, widths=(("whitened", 32), ("data_dependent", 32)), seeds=3, junk_vocab=4,
                         junk_length=4, steps=100, batch_size=64, lr=3e-3, f_lo=4, f_hi=64, gd_f_hi=64,
                         f_step=4, dtype="float64",
                         notes=("toy scale for CI and the live run; closed forms only",)),
    "cpu": FactsConfig(d=64, widths=(("gd_ce", 16), ("ntk", 384), ("data_dependent", 64)), seeds=3,
                       gd_epochs=2000, steps=300, batch_size=256, lr=3e-3, f_lo=16, f_hi=1024, gd_f_hi=512,
                       f_step=16, dtype="float64",
                       notes=(_CPU_NOTE + "d = 64 (source: 128), one width per memory (source: six, m in "
                              "{44, ..., 1408}), three memories (five), F searched with precision 16 in "
                              "[16, 1024] ([1, 65536]; GD up to 512), " + _CPU_TRAINING,)),
    "paper": FactsConfig(d=128, widths=tuple((mth, m) for mth in ("gd_ce", "ntk", "unwhitened", "whitened",
                                                                  "data_dependent")
                                             for m in (44, 88, 176, 352, 704, 1408)),
                         f_lo=1, f_step=1),
}

ARCHITECTURE_PRESETS = {
    "quick": ArchitectureConfig(d=16, num_facts=16, widths=(("data_dependent", 32),), seeds=3, junk_vocab=4,
                                junk_length=4, steps=100, batch_size=64, lr=3e-3, dtype="float64",
                                notes=("toy scale for CI and the live run; closed forms only",)),
    "cpu": ArchitectureConfig(d=64, num_facts=64, widths=(("gd_ce", 16), ("gd_ce", 64),
                                                          ("data_dependent", 128), ("data_dependent", 512)),
                              variants=("source", "residual", "value", "value_output"), seeds=3,
                              gd_epochs=2000, steps=300, batch_size=256, lr=3e-3, dtype="float64",
                              notes=(_CPU_NOTE + "d = 64, F = 64 (the smallest F of transformer_capacity), "
                                     "two widths per memory, GD with cross-entropy and data-dependent, no "
                                     "'output' variant (the same training as 'value': W_O W_V enters only as "
                                     "a product; the quick preset checks it), " + _CPU_TRAINING,)),
    "paper": ArchitectureConfig(d=128, num_facts=1024,
                                widths=tuple((mth, m) for mth in ("gd_ce", "data_dependent")
                                             for m in (88, 352, 1408))),
}


# --------------------------------------------------------------------------------------------
# transformer_facts


def facts_points(config: FactsConfig) -> list[dict]:
    """``(method, d, m, rep)`` per width pair and training, GD first (the slow ones)."""
    pairs = sorted(config.widths, key=lambda p: not p[0].startswith("gd"))
    return [{"method": mth, "d": int(config.d), "m": int(m), "rep": r} for mth, m in pairs
            for r in range(config.seeds)]


def _block_accuracies(config, method: str, setup: dict, m: int, device) -> tuple[float, float]:
    """(fact-adaptive, training) accuracy of the inserted-MLP block at width ``m``."""
    T = _transformer()
    gd = method.startswith("gd")
    kw = {"epochs": config.gd_epochs, "lr": config.gd_lr} if gd else {}
    task, emb = setup["task"], setup["embedding"]
    mlp_a = T.build_mlp(method, setup["facts_a"], m, setup["seed_mlp_a"], **kw)
    model = T.inserted_mlp(task, emb, mlp_a, setup["map_a"], TSU.model_config(config, emb.shape[1], device),
                           TSU.train_config(config, setup["seed_train"]))
    train = T.ssfr_accuracy(model, task, setup["map_a"], config.contexts_per_key, setup["seed_eval"])
    mlp_b = T.build_mlp(method, setup["facts_b"], m, setup["seed_mlp_b"], **kw)
    adaptive = T.fact_adaptive_accuracy(model, mlp_b, setup["map_b"], config.contexts_per_key,
                                        setup["seed_eval"])
    return float(adaptive), float(train)


def facts_point(config: FactsConfig, point: dict, device: torch.device) -> dict:
    """Both largest-``F`` searches at one ``(method, m)``, sharing every trained block.

    Each ``F`` tried draws its task, embeddings, fact sets, MLPs and attention from the seed of
    the point with ``F`` added (:func:`~assocmem.mlps.transformer_setup.capacity_setup`).

    Returns
    -------
    dict
        ``F_adaptive`` (largest ``F`` with 100 % fact-adaptive accuracy; NaN when even ``f_lo``
        fails), ``censored_adaptive`` (held up to the top of the range: a lower bound),
        ``n_adaptive``, ``violations_adaptive`` (successes above a failure); the same with suffix
        ``_train`` (``train_target``); ``ratio`` = ``F_train / F_adaptive`` (NaN when either is);
        ``W = 3 m d``; ``n_trained``; ``evaluated``: every ``F`` tried as
        ``"F:fact-adaptive:training"`` accuracies joined by ``;``; ``J, V_J, steps, epochs``.
    """
    method, m = point["method"], point["m"]
    step = config.f_step
    top = config.gd_f_hi if method.startswith("gd") else config.f_hi
    cache: dict[int, tuple[float, float]] = {}

    def evaluate(k: int) -> tuple[float, float]:
        if k not in cache:
            setup = TSU.capacity_setup(config, {**point, "F": k * step})
            cache[k] = _block_accuracies(config, method, setup, m, device)
        return cache[k]

    k_lo, k_hi = max(1, -(-max(config.f_lo, 2) // step)), top // step
    adaptive = largest_count(lambda k: evaluate(k)[0] >= 1.0, k_lo, k_hi, config.verify)
    train = largest_count(lambda k: evaluate(k)[1] >= config.train_target, k_lo, k_hi, config.verify)
    row = {}
    for name, res in (("adaptive", adaptive), ("train", train)):
        row.update({f"F_{name}": float("nan") if res.n is None else res.n * step,
                    f"censored_{name}": bool(res.censored), f"n_{name}": res.evaluations,
                    f"violations_{name}": len(res.violations)})
    fa, ft = row["F_adaptive"], row["F_train"]
    row["ratio"] = ft / fa if fa == fa and ft == ft else float("nan")
    row.update({"W": 3 * m * int(point["d"]), "n_trained": len(cache),
                "evaluated": ";".join(f"{k * step}:{a:.6g}:{t:.6g}" for k, (a, t) in sorted(cache.items())),
                "J": int(config.junk_length), "V_J": int(config.junk_vocab), "steps": int(config.steps),
                "epochs": int(config.gd_epochs) if method.startswith("gd") else None})
    return row


# --------------------------------------------------------------------------------------------
# transformer_architecture


def architecture_points(config: ArchitectureConfig) -> list[dict]:
    """``(method, d, F, m, variant, rep)`` per width pair, variant and training, GD first."""
    pairs = sorted(config.widths, key=lambda p: not p[0].startswith("gd"))
    return [{"method": mth, "d": int(config.d), "F": int(config.num_facts), "m": int(m), "variant": v, "rep": r}
            for mth, m in pairs for v in config.variants for r in range(config.seeds)]


def variant_model(task: SSFRTask, embedding: torch.Tensor, mlp: torch.nn.Module, variant: str,
                  model_config: TransformerConfig, train_config: TrainConfig) -> SSFRTransformer:
    """An SSFR block with ``mlp`` inserted, in one of :data:`VARIANTS`, before training.

    ``source`` is exactly the model :func:`~assocmem.mlps.transformer.inserted_mlp` trains (the
    same initial weights from the same seed); the other variants differ from it only in the
    attention residual and in which of ``W_V``, ``W_O`` (initialised to the identity) train.

    Parameters
    ----------
    task : SSFRTask
    embedding : torch.Tensor, shape ``(vocab_size, d)``
    mlp : torch.nn.Module
        Maps ``R^d -> R^d``; frozen in place.
    variant : str
        A key of :data:`VARIANTS`.
    model_config : TransformerConfig
        Its ``attention_residual`` and ``freeze_value_output`` are replaced by the variant's.
    train_config : TrainConfig
        Only its ``seed`` is read (the attention's initial weights).

    Returns
    -------
    SSFRTransformer

    Raises
    ------
    ValueError
        An unknown variant, or what :class:`~assocmem.mlps.transformer.SSFRTransformer` rejects.

    References
    ----------
    Seed 001, App. A.4.3 (the two changes: no residual after attention, ``W_V = W_O = I``
    frozen).
    """
    import dataclasses

    T = _transformer()
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)}")
    residual, value, output = VARIANTS[variant]
    cfg = dataclasses.replace(model_config, attention_residual=residual,
                              freeze_value_output=not (value or output))
    model = T.SSFRTransformer(cfg, embedding, mlp, task=task, seed=T.seed_stream(train_config.seed, 0))
    model.attention.W_V.requires_grad_(value)
    model.attention.W_O.requires_grad_(output)
    return model


def architecture_point(config: ArchitectureConfig, point: dict, device: torch.device) -> dict:
    """Train one variant's attention around MLP_A; measure training and fact-adaptive accuracy.

    The task, embeddings, fact sets, MLPs and the attention's initial weights depend on the point
    without its ``variant``, so every variant of a training starts from the same block.

    Returns
    -------
    dict
        ``train_accuracy`` (on A), ``adaptive_accuracy`` (on B, MLP_B swapped in),
        ``unswapped_accuracy`` (on B with MLP_A: a block that ignores the MLP would score here),
        ``mlp_accuracy`` (MLP_A alone on A), ``vo_drift`` (``||W_O W_V - I||_F / sqrt(d)`` after
        training), ``residual``, ``value_trainable``, ``output_trainable``, ``W = 3 m d``,
        ``J, V_J, steps, epochs``.
    """
    T = _transformer()
    from assocmem.mlps.margins import accuracy

    method, m, variant = point["method"], point["m"], point["variant"]
    base = {k: v for k, v in point.items() if k != "variant"}
    setup = TSU.capacity_setup(config, base)
    task, emb = setup["task"], setup["embedding"]
    gd = method.startswith("gd")
    kw = {"epochs": config.gd_epochs, "lr": config.gd_lr} if gd else {}
    mlp_a = T.build_mlp(method, setup["facts_a"], m, setup["seed_mlp_a"], **kw)
    tcfg = TSU.train_config(config, setup["seed_train"])
    model = variant_model(task, emb, mlp_a, variant, TSU.model_config(config, int(point["d"]), device), tcfg)
    T.train_attention(model, task, setup["map_a"], tcfg)
    C, s_eval = config.contexts_per_key, setup["seed_eval"]
    mlp_b = T.build_mlp(method, setup["facts_b"], m, setup["seed_mlp_b"], **kw)
    with torch.no_grad():
        vo = model.attention.W_O @ model.attention.W_V
        drift = torch.linalg.matrix_norm(vo - torch.eye(vo.shape[0], dtype=vo.dtype, device=vo.device))
    residual, value, output = VARIANTS[variant]
    return {"train_accuracy": float(T.ssfr_accuracy(model, task, setup["map_a"], C, s_eval)),
            "adaptive_accuracy": float(T.fact_adaptive_accuracy(model, mlp_b, setup["map_b"], C, s_eval)),
            "unswapped_accuracy": float(T.ssfr_accuracy(model, task, setup["map_b"], C, s_eval)),
            "mlp_accuracy": float(accuracy(mlp_a, setup["facts_a"])),
            "vo_drift": float(drift) / float(vo.shape[0]) ** 0.5,
            "residual": residual, "value_trainable": value, "output_trainable": output,
            "W": 3 * int(m) * int(point["d"]), "J": int(config.junk_length), "V_J": int(config.junk_vocab),
            "steps": int(config.steps), "epochs": int(config.gd_epochs) if gd else None}


register_sweep(
    "transformer_facts",
    config_type=FactsConfig,
    presets=FACTS_PRESETS,
    points=facts_points,
    run_point=facts_point,
    description="largest F at a fixed MLP width reaching 99 % training and 100 % fact-adaptive accuracy in "
                "the SSFR Transformer (seed 001, Fig. 10's protocol)",
)
register_sweep(
    "transformer_architecture",
    config_type=ArchitectureConfig,
    presets=ARCHITECTURE_PRESETS,
    points=architecture_points,
    run_point=architecture_point,
    description="training and fact-adaptive accuracy of the SSFR block with App. A.4.3's changes reverted "
                "one at a time: residual on, W_V or W_O trainable (seed 001)",
)


# --------------------------------------------------------------------------------------------
# analysis


def ratio_bounds(frame: pd.DataFrame, f_lo: int, f_step: int) -> pd.DataFrame:
    """Per ``transformer_facts`` row: the range of ``F_train / F_adaptive`` the search allows.

    A largest ``F`` found on the grid ``F = f_step * k`` is known to lie in ``[F, F + f_step)``
    (the next grid value failed), or ``>= F`` when the search was censored at the top of its
    range, or ``< f_lo`` (NaN in the row) when the criterion failed already at ``f_lo``. The ratio
    of two such values lies between ``ratio_lo`` and ``ratio_hi``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``transformer_facts`` (columns ``F_train``, ``F_adaptive``, ``censored_train``,
        ``censored_adaptive``).
    f_lo, f_step : int
        The config's search start and precision.

    Returns
    -------
    pandas.DataFrame
        ``frame`` with ``ratio_lo`` and ``ratio_hi`` added (``inf`` where unbounded, NaN where
        both searches failed at ``f_lo``).

    Raises
    ------
    ValueError
        A missing column, or ``f_lo``, ``f_step`` not integers ``>= 1``.
    """
    import numpy as np

    f_lo, f_step = positive_int("f_lo", f_lo), positive_int("f_step", f_step)
    need = {"F_train", "F_adaptive", "censored_train", "censored_adaptive"}
    missing = sorted(need - set(frame.columns))
    if missing:
        raise ValueError(f"transformer_facts rows lack the column(s) {missing}")

    def limits(F, censored):
        F = np.asarray(F, dtype=float)
        censored = np.asarray(censored, dtype=bool)
        low = np.where(np.isnan(F), 0.0, F)  # below f_lo: at least 0 facts
        high = np.where(np.isnan(F), f_lo - 1.0, np.where(censored, np.inf, F + f_step - 1))
        return low, high

    t_lo, t_hi = limits(frame["F_train"], frame["censored_train"])
    a_lo, a_hi = limits(frame["F_adaptive"], frame["censored_adaptive"])
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(a_hi > 0, t_lo / a_hi, np.nan)
        hi = np.where(a_lo > 0, t_hi / a_lo, np.where(t_hi > 0, np.inf, np.nan))
    return frame.assign(ratio_lo=lo, ratio_hi=hi)


def architecture_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per ``(method, m, variant)`` of ``transformer_architecture``: accuracies over the trainings.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``transformer_architecture``.

    Returns
    -------
    pandas.DataFrame
        One row per ``(method, m, variant)`` in the frame's order: ``trainings``, the mean, min
        and max over the trainings of ``train_accuracy`` and ``adaptive_accuracy`` (suffixes
        ``_mean``, ``_min``, ``_max``), ``adaptive_full`` (trainings at 100 % fact-adaptive
        accuracy), and ``drop_mean``, ``drop_sd``: the mean and standard deviation (``ddof = 1``;
        NaN for one training) over the trainings of the fact-adaptive accuracy lost against the
        ``source`` variant of the same training.

    Raises
    ------
    ValueError
        A missing column, or a training without its ``source`` row.
    """
    need = {"method", "m", "variant", "rep", "train_accuracy", "adaptive_accuracy"}
    missing = sorted(need - set(frame.columns))
    if missing:
        raise ValueError(f"transformer_architecture rows lack the column(s) {missing}")
    keys = ["method", "m", "rep"]
    src = frame[frame["variant"] == "source"].set_index(keys)["adaptive_accuracy"]
    idx = frame.set_index(keys).index
    if not idx.isin(src.index).all():
        raise ValueError("every training needs its 'source' row to measure a drop")
    f = frame.assign(drop=src.reindex(idx).to_numpy() - frame["adaptive_accuracy"].to_numpy(),
                     full=frame["adaptive_accuracy"] >= 1.0)
    g = f.groupby(["method", "m", "variant"], sort=False)
    out = g.agg(trainings=("rep", "size"),
                train_accuracy_mean=("train_accuracy", "mean"), train_accuracy_min=("train_accuracy", "min"),
                train_accuracy_max=("train_accuracy", "max"),
                adaptive_accuracy_mean=("adaptive_accuracy", "mean"),
                adaptive_accuracy_min=("adaptive_accuracy", "min"),
                adaptive_accuracy_max=("adaptive_accuracy", "max"),
                adaptive_full=("full", "sum"), drop_mean=("drop", "mean"), drop_sd=("drop", "std"))
    return out.reset_index()
