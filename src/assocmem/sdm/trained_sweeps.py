"""The ``trained_recall`` sweep: attention models trained on associative recall (chapter 37).

One registered sweep, ``trained_recall``, trains :class:`assocmem.sdm.trained.RecallAttention`
models (one layer, head dimension ``n = 64``, ``m`` stored pairs per training context; see
:mod:`assocmem.sdm.trained.recall`) and measures each trained model. A point is
``{"variant", "noise", "replicate"}``: a variant names the score rule (QK-norm with a learned
``beta``, LayerNorm, plain scaled dot product), the value rule (raw or L2-normalised) and the
starting ``beta``; ``noise`` is the query's bit-flip probability; ``replicate`` is the training
seed, shared across variants so that variants are paired. Its rows are one per evaluated
context length ``m`` (the recall curve of the review's open question; only variants with
``curve=True`` evaluate the whole grid, the others the training ``m`` alone), each carrying the
point's measurements:

* ``beta`` (learned, at the end; NaN without one), ``beta_late`` (its mean over the last 20% of
  training, the reading compared with the optima), ``train_loss`` (mean over the same records),
  ``test_loss`` and ``test_accuracy`` at the training ``m``;
* on a probe batch at the training ``m``: ``max_input`` (App. A.2's heuristic),
  ``fitted_beta_input`` / ``fitted_r2_input`` (Eq. 10's log-linear slope on the inputs' cosine
  ``1 - 2 dv / n``), ``fitted_beta_proj`` (the slope on the projected query-key cosine);
  ``pearson``, ``spearman``, ``top_mismatch``, ``norm_cv`` (App. A.3's weight against weight x
  value norm); ``sphere_mean_q``, ``sphere_cv_q``, ``sphere_cv_k`` (norms after LayerNorm over
  ``sqrt(d)``) and ``beta_eff_p05``, ``beta_eff_p50``, ``beta_eff_p95`` (the spread of
  ``beta |q| |k| / d``), NaN where they do not apply;
* the evaluation: ``m``, ``correct``, ``queries``, ``accuracy``, ``loss``.

Presets: ``quick`` (two variants, three replicates of short runs, seconds: the stored spread
that the chapter's live rerun of replicate 0 is checked against), ``cpu`` (21
runs of 1,000 steps, the committed results; a few minutes on one core), ``paper`` (longer
training, more replicates and noise levels, a larger ``m``; not run).

References
----------
Seed 002 (the review of Bricken & Pehlevan 2021): claims C7, C8, C11, C12, C13 and "Open
questions" (accuracy against context length along Eq. 26).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real
from assocmem.sdm.trained.effective_beta import log_linear_beta, max_softmax_input
from assocmem.sdm.trained.recall import (QK_RULES, VALUE_RULES, RecallConfig, evaluate_recall,
                                         make_recall_batch, train_recall)
from assocmem.sdm.trained.value_norms import beta_spread, sphere_distance, weight_contribution
from assocmem.sweeps.registry import register_sweep

if TYPE_CHECKING:
    from assocmem._typing import PathLike
    from collections.abc import Sequence

__all__ = [
    "TrainedVariant",
    "TrainedSweepConfig",
    "TRAINED_PRESETS",
    "trained_points",
    "trained_point",
    "load_trained_results",
    "agreement_rules",
]


@dataclass(frozen=True)
class TrainedVariant:
    """One model variant of the sweep.

    Raises
    ------
    ValueError
        If the label is empty, ``qk`` or ``values`` is unknown, ``beta_init`` is not positive,
        ``noises`` is empty or holds a value outside ``[0, 0.5]``, or ``curve`` is not a bool.
    """

    label: str
    qk: str = "l2"
    values: str = "raw"
    beta_init: float = 4.0
    noises: tuple[float, ...] = (0.2,)
    curve: bool = False  # evaluate the whole m grid (the recall curve)

    def __post_init__(self):
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"label must be a non-empty str, got {self.label!r}")
        if self.qk not in QK_RULES or self.values not in VALUE_RULES:
            raise ValueError(f"qk must be in {QK_RULES} and values in {VALUE_RULES}; got "
                             f"{self.qk!r}, {self.values!r}")
        as_real(self.beta_init, "beta_init", minimum=0.0, strict_min=True)
        if not self.noises:
            raise ValueError("noises must not be empty")
        for x in self.noises:
            as_real(x, "noise", minimum=0.0, maximum=0.5)
        if not isinstance(self.curve, bool):
            raise ValueError(f"curve must be a bool, got {self.curve!r}")


@dataclass(frozen=True)
class TrainedSweepConfig:
    """Settings of the ``trained_recall`` sweep (the training settings of every run).

    Raises
    ------
    ValueError
        If the variants' labels are missing or repeated, a count is not a positive integer,
        ``m_grid`` is empty or holds a value below 1, or ``replicates`` is empty.
    """

    variants: tuple[TrainedVariant, ...]
    replicates: tuple[int, ...] = (0, 1, 2)
    n: int = 64
    m: int = 32
    vocab: int = 64
    steps: int = 1000
    batch: int = 32
    lr: float = 3e-3
    beta_lr: float = 3e-2
    weight_decay: float = 0.01
    m_grid: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    eval_queries: int = 1000
    probe_queries: int = 500
    seed: int = 0  # unused by the runs (their seed is the replicate); kept for the engine
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        labels = [v.label for v in self.variants]
        if not labels or len(set(labels)) != len(labels):
            raise ValueError(f"variants need distinct labels; got {labels}")
        if not self.replicates:
            raise ValueError("replicates must not be empty")
        for r in self.replicates:
            as_int(r, "replicate", minimum=0)
        for name in ("n", "m", "vocab", "steps", "batch", "eval_queries", "probe_queries"):
            as_int(getattr(self, name), name, minimum=1)
        if not self.m_grid:
            raise ValueError("m_grid must not be empty")
        for mm in self.m_grid:
            as_int(mm, "m_grid entry", minimum=1)

    def variant(self, label: str) -> TrainedVariant:
        """The variant called ``label``; ``KeyError`` if none is."""
        for v in self.variants:
            if v.label == label:
                return v
        raise KeyError(f"no variant {label!r}; variants: {[v.label for v in self.variants]}")

    def recall_config(self, label: str, noise: float, replicate: int) -> RecallConfig:
        """The :class:`RecallConfig` of one run."""
        v = self.variant(label)
        return RecallConfig(n=self.n, m=self.m, vocab=self.vocab, noise=noise, qk=v.qk,
                            values=v.values, beta_init=v.beta_init, steps=self.steps,
                            batch=self.batch, lr=self.lr, beta_lr=self.beta_lr,
                            weight_decay=self.weight_decay, seed=replicate)


_CPU_VARIANTS = (
    TrainedVariant("qknorm", noises=(0.1, 0.2, 0.3), curve=True),
    TrainedVariant("qknorm_beta30", beta_init=30.0),
    TrainedVariant("qknorm_l2values", values="l2"),
    TrainedVariant("layernorm", qk="layernorm"),
    TrainedVariant("dot_product", qk="none"),
)

TRAINED_PRESETS = {
    "quick": TrainedSweepConfig(
        variants=(TrainedVariant("qknorm", curve=True), TrainedVariant("qknorm_l2values",
                                                                       values="l2")),
        replicates=(0, 1, 2), steps=300, m_grid=(4, 32, 256), eval_queries=300, probe_queries=100,
        notes=("seconds: three trainings per point, the spread the chapter's live rerun of "
               "replicate 0 is checked against",)),
    "cpu": TrainedSweepConfig(variants=_CPU_VARIANTS,
                              notes=("21 runs of 1,000 steps; minutes on one core",)),
    "paper": TrainedSweepConfig(
        variants=tuple(TrainedVariant(v.label, v.qk, v.values, v.beta_init,
                                      (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35), v.curve)
                       for v in _CPU_VARIANTS),
        replicates=tuple(range(10)), steps=10000, m=64,
        m_grid=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), eval_queries=10000,
        probe_queries=2000, notes=("not run: longer training, ten replicates, seven noises",)),
}


def trained_points(config: TrainedSweepConfig) -> list[dict]:
    """The grid: ``{"variant", "noise", "replicate"}`` for every variant, noise and replicate."""
    return [{"variant": v.label, "noise": float(x), "replicate": int(r)}
            for v in config.variants for x in v.noises for r in config.replicates]


def _probe(model, config: TrainedSweepConfig, noise: float) -> dict:
    c = model.config
    g = torch.Generator().manual_seed(10_000 + c.seed)
    batch = make_recall_batch(config.probe_queries, config.m, config.n, config.vocab, noise, g)
    with torch.no_grad():
        ro = model.readout(batch)
    scores = ro.scores[:, 0].numpy()  # one head in every variant of the presets
    out = {"max_input": float(max_softmax_input(ro.scores).max())}
    out["fitted_beta_input"], out["fitted_r2_input"] = log_linear_beta(
        scores, batch.input_cosines.numpy())
    out["fitted_beta_proj"], _ = log_linear_beta(scores, ro.cosines[:, 0].numpy())
    wc = weight_contribution(ro.weights[:, 0], ro.value_norms[:, 0])
    out |= {k: wc[k] for k in ("pearson", "spearman", "top_mismatch")}
    out["norm_cv"] = wc["norm_cv"] if c.values == "raw" else 0.0
    nan = float("nan")
    if c.qk == "layernorm":
        sq = sphere_distance(ro.query_norms, c.head_dim)
        sk = sphere_distance(ro.key_norms, c.head_dim)
        q05, q50, q95 = beta_spread(float(model.betas()[0]), ro.query_norms[:, 0],
                                    ro.key_norms[:, 0], c.head_dim)
        out |= dict(sphere_mean_q=sq["mean"], sphere_cv_q=sq["cv"], sphere_cv_k=sk["cv"],
                    beta_eff_p05=float(q05), beta_eff_p50=float(q50), beta_eff_p95=float(q95))
    else:
        out |= dict(sphere_mean_q=nan, sphere_cv_q=nan, sphere_cv_k=nan, beta_eff_p05=nan,
                    beta_eff_p50=nan, beta_eff_p95=nan)
    return out


def trained_point(config: TrainedSweepConfig, point: dict, device: torch.device) -> list[dict]:
    """Train one model and measure it: one row per evaluated ``m`` (see the module docstring).

    Runs on the CPU with one thread whatever ``device`` is (the runs are small and float64).
    """
    torch.set_num_threads(1)
    v = config.variant(point["variant"])
    rc = config.recall_config(v.label, point["noise"], point["replicate"])
    tr = train_recall(rc)
    h = tr.history
    late = h["step"] > 0.8 * rc.steps
    base = dict(qk=v.qk, values=v.values, beta_init=float(v.beta_init), m_train=config.m,
                n=config.n, beta=float(h["beta"][-1]), beta_late=float(np.mean(h["beta"][late])),
                train_loss=float(np.mean(h["loss"][late])))
    seed = 20_000 + rc.seed
    at_train = evaluate_recall(tr.model, config.m, queries=config.eval_queries, seed=seed)
    base |= dict(test_loss=at_train["loss"], test_accuracy=at_train["accuracy"])
    base |= _probe(tr.model, config, rc.noise)
    grid = config.m_grid if v.curve else (config.m,)
    rows = []
    for mm in grid:
        ev = at_train if mm == config.m else evaluate_recall(
            tr.model, mm, queries=config.eval_queries, seed=seed + mm)
        rows.append(base | dict(m=int(mm), correct=ev["correct"], queries=ev["queries"],
                                accuracy=ev["accuracy"], loss=ev["loss"]))
    return rows


register_sweep(
    "trained_recall",
    config_type=TrainedSweepConfig,
    presets=TRAINED_PRESETS,
    points=trained_points,
    run_point=trained_point,
    description="one-layer attention trained on associative recall: learned beta, recall "
                "against m, effective beta, value norms (seed 002, C7-C13, open question)",
)


def load_trained_results(presets: Sequence[str] = ("paper", "cpu"),
                         results_dir: PathLike | None = None) -> tuple[str, pd.DataFrame]:
    """The stored results of the largest preset that has been run: ``(preset, frame)``.

    Raises
    ------
    FileNotFoundError
        If none of them is stored.
    """
    from assocmem.sweeps.store import load_largest_results

    return load_largest_results("trained_recall", presets, results_dir)


_CONTINUOUS = ("beta", "beta_late", "train_loss", "test_loss", "max_input", "fitted_beta_input",
               "fitted_r2_input", "fitted_beta_proj", "pearson", "spearman", "norm_cv",
               "sphere_mean_q", "sphere_cv_q", "sphere_cv_k", "beta_eff_p05", "beta_eff_p50",
               "beta_eff_p95", "loss")


def agreement_rules(config: TrainedSweepConfig) -> dict:
    """The rules by which a rerun of ``trained_recall`` must agree with its stored replicates.

    Every measurement comes out of an Adam training, so a rerun (of any replicate, on any CPU)
    is checked against the spread of the stored replicates of its point
    (:func:`assocmem.sweeps.check_spread`), never against one replicate's digits. Resolutions
    (added to each interval's half-width): one answer for ``correct``, one query's share
    ``1 / eval_queries`` for ``accuracy`` and ``test_accuracy``, one probe query's share
    ``1 / probe_queries`` for ``top_mismatch``; the other measurements are continuous (0).
    Settings (``qk``, ``values``, ``beta_init``, ``m_train``, ``n``, ``queries``) must be equal;
    ``seed`` (the replicate's own) and ``wall_time_s`` are not compared.

    Parameters
    ----------
    config : TrainedSweepConfig
        The stored preset's config (its query counts set the resolutions).

    Returns
    -------
    dict
        Keyword arguments ``keys`` (``variant``, ``noise``, ``m``), ``columns``, ``exact``,
        ``ignore`` and ``training="replicate"`` for :func:`assocmem.sweeps.check_spread` and
        :func:`assocmem.sweeps.leave_one_training_out`.

    Raises
    ------
    TypeError
        ``config`` is not a :class:`TrainedSweepConfig`.
    """
    if not isinstance(config, TrainedSweepConfig):
        raise TypeError(f"config must be a TrainedSweepConfig; got {type(config).__name__}")
    share = 1.0 / config.eval_queries
    columns = ({c: 0.0 for c in _CONTINUOUS} | {"correct": 1.0, "accuracy": share,
                                                 "test_accuracy": share,
                                                 "top_mismatch": 1.0 / config.probe_queries})
    return {"keys": ["variant", "noise", "m"], "columns": columns,
            "exact": ["qk", "values", "beta_init", "m_train", "n", "queries"],
            "ignore": ["seed", "wall_time_s"], "training": "replicate"}
