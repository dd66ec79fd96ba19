"""Training the attention of the SSFR Transformer around a frozen MLP: the two protocols of App. A.1.2.

* **Pretrained attention** (:func:`pretrained_attention`): attention alone is trained on a
  *dummy* SSFR task with the identity map and the identity "MLP", so that it learns to fetch the
  key past the junk; it is then frozen and an MLP built for a fresh random-permutation fact set
  is swapped in (:meth:`~assocmem.mlps.transformer.model.SSFRTransformer.with_mlp`).
* **Inserted MLP** (:func:`inserted_mlp`): a frozen MLP storing the fact set is inserted first and
  the attention is trained around it on SSFR with that fact set.

Optimiser: AdamW (the fused kernel on CPU and CUDA) with learning rate ``2e-4``, betas
``(0.9, 0.999)``, weight decay ``0.1`` on the attention matrices, constant learning rate (no
warm-up, no schedule, as in the authors' code), one fresh batch per step; the loss is the
cross-entropy at the query position over the ``F`` fact tokens. The logits are cosines in
``[-1, 1]`` (no temperature, as in the authors' code), so the loss cannot fall below
``log(e + (F - 1) e^{-1}) - 1`` even at 100 % accuracy: judge training by accuracy
(:attr:`TrainResult.batch_accuracy`, :mod:`~assocmem.mlps.transformer.evaluation`), not by the
loss alone. The seed trains 4,000-10,000 steps of batch 1,280; the book's CPU presets use fewer and
say so. Training runs in the model's dtype (float32 by default); ``torch.set_num_threads`` is left
to the caller.

Determinism. The attention weights are drawn from a CPU generator seeded with
``seed_stream(seed, 0)`` and the batches from one seeded with ``seed_stream(seed, 1)``
(independent streams of one seed), so a seed gives the same run on the CPU.

References
----------
Seed 001, App. A.1.2 (AdamW, ``2e-4``, batch 1,280, 4,000 iterations; the two protocols),
A.4.1 (the noise sweep uses the pretrained-attention setting), A.4.3 (the inserted-MLP setting).
Weight decay 0.1: the shared reference notes (REFERENCE.md, SSFR).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as Fn

from assocmem._checks import (TrainingDiverged, as_int, as_real, check_loss, non_finite_parameter, positive_int,
                              restore_state, state_copy)
from assocmem.mlps.transformer.model import SSFRTransformer, TransformerConfig
from assocmem.mlps.transformer.ssfr import SSFRTask, _sample, check_embedding, check_mapping, check_seed, identity_map

__all__ = [
    "TrainConfig",
    "TrainResult",
    "seed_stream",
    "train_attention",
    "pretrained_attention",
    "inserted_mlp",
]


@dataclass(frozen=True)
class TrainConfig:
    """Settings of :func:`train_attention`.

    Attributes
    ----------
    steps : int
        Optimiser steps (one fresh batch each), ``>= 1``.
    batch_size : int
        Sequences per step (the seed uses 1,280).
    lr : float, default 2e-4
    weight_decay : float, default 0.1
        AdamW's decoupled weight decay on the attention matrices.
    seed : int, default 0
        Seeds the attention's initialisation and the batches (:func:`seed_stream`).
    betas : tuple of float, default (0.9, 0.999)

    Raises
    ------
    ValueError
        On construction: ``steps`` or ``batch_size`` not a positive integer, an ``lr`` that is not
        a finite real ``> 0``, a negative ``weight_decay``, ``betas`` that are not a pair of reals
        in ``[0, 1)``, or a seed outside ``[0, 2^63)`` (the rule of every seed of this package,
        :func:`~assocmem.mlps.transformer.ssfr.check_seed`).
    """

    steps: int
    batch_size: int
    lr: float = 2e-4
    weight_decay: float = 0.1
    seed: int = 0
    betas: tuple[float, float] = field(default=(0.9, 0.999))

    def __post_init__(self) -> None:
        positive_int("steps", self.steps)
        positive_int("batch_size", self.batch_size)
        as_real(self.lr, "lr", minimum=0.0, strict_min=True)
        as_real(self.weight_decay, "weight_decay", minimum=0.0)
        check_seed(self.seed)
        betas = self.betas
        if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2) of reals in [0, 1); got {betas!r}")
        checked = tuple(as_real(b, "beta", minimum=0.0, maximum=1.0) for b in betas)
        if any(b >= 1.0 for b in checked):
            raise ValueError(f"betas must lie in [0, 1); got {betas!r}")
        object.__setattr__(self, "betas", checked)


@dataclass
class TrainResult:
    """What :func:`train_attention` returns (the model is trained in place).

    Attributes
    ----------
    losses : numpy.ndarray, shape ``(steps,)``, float64
        The cross-entropy of every step's batch (before the step's update).
    batch_accuracy : numpy.ndarray, shape ``(steps,)``, float64
        The fraction of every step's batch predicted correctly (argmax over the fact tokens).
    steps : int
    """

    losses: np.ndarray
    batch_accuracy: np.ndarray
    steps: int

    @property
    def final_loss(self) -> float:
        """The loss of the last step."""
        return float(self.losses[-1])


def seed_stream(seed: int, stream: int) -> int:
    """An integer seed for stream ``stream`` of ``seed`` (numpy ``SeedSequence``; streams independent).

    Parameters
    ----------
    seed : int
        In ``[0, 2^63)`` (:func:`~assocmem.mlps.transformer.ssfr.check_seed`).
    stream : int
        The stream's index, ``>= 0``.

    Returns
    -------
    int
        In ``[0, 2^63)``: a valid seed again.

    Raises
    ------
    ValueError
        A seed outside ``[0, 2^63)`` or a stream that is not an integer ``>= 0``.
    """
    seed = check_seed(seed)
    stream = as_int(stream, "stream", minimum=0)
    return int(np.random.SeedSequence([seed, int(stream)]).generate_state(1, dtype=np.uint64)[0] >> 1)


def train_attention(model: SSFRTransformer, task: SSFRTask, mapping: torch.Tensor,
                    config: TrainConfig) -> TrainResult:
    """Train the attention of ``model`` on SSFR with ``mapping``; the MLP and embeddings stay frozen.

    Each step draws a batch (as :func:`~assocmem.mlps.transformer.ssfr.ssfr_batch`), computes the
    logits at the query position only, and takes one AdamW step on the cross-entropy against the
    value tokens. Losses are kept on the device; each step's loss is checked before its backward
    pass (finite and within :func:`~assocmem._checks.loss_limit`, a read that changes no value),
    and once more after the last update (one forward pass on the last batch) with the parameters.

    Parameters
    ----------
    model : SSFRTransformer
        Trained in place (its :meth:`~SSFRTransformer.attention_parameters`).
    task : SSFRTask
        Must be the model's task.
    mapping : torch.Tensor, shape ``(F,)``
        A permutation of ``[F]``: the fact set the targets come from.
    config : TrainConfig

    Returns
    -------
    TrainResult

    Raises
    ------
    ValueError
        Not an SSFRTransformer, a task other than the model's, a map that is not a permutation of
        ``[F]``, or a model without trainable parameters.
    assocmem._checks.TrainingDiverged
        (a :class:`FloatingPointError` and a :class:`ValueError`) at the first step whose loss is
        NaN, infinite or above :func:`~assocmem._checks.loss_limit` of its dtype (87 nats in
        float32, 708 in float64: a finite blow-up, such as weights driven to 1e30), naming the
        step; or if the loss after the last update is such a loss, or that update leaves a
        non-finite parameter. On
        this error, and on any other raised during the steps, the model's parameters and
        training mode are put back as they were before the call.

    References
    ----------
    Seed 001, App. A.1.2.
    """
    if not isinstance(model, SSFRTransformer):
        raise ValueError(f"model must be an SSFRTransformer; got {type(model).__name__}")
    if not isinstance(config, TrainConfig):
        raise ValueError(f"config must be a TrainConfig; got {type(config).__name__}")
    if task != model.task:
        raise ValueError(f"task {task} is not the model's task {model.task}")
    f = check_mapping(mapping, task).cpu()
    params = model.attention_parameters()
    if not params:
        raise ValueError("the model has no trainable attention parameter")
    dev = model.device
    # the fused kernel (CPU and CUDA): one call per step instead of a dozen small ones
    fused = {"fused": True} if dev.type in ("cpu", "cuda") else {}
    opt = torch.optim.AdamW(params, lr=config.lr, betas=tuple(config.betas), weight_decay=config.weight_decay,
                            **fused)
    gen = torch.Generator(device="cpu").manual_seed(seed_stream(config.seed, 1))
    losses = torch.empty(config.steps, dtype=torch.float64, device=dev)
    hits = torch.empty(config.steps, dtype=torch.float64, device=dev)
    was_training = model.training
    saved = state_copy(model)
    model.train()
    try:
        for step in range(config.steps):
            batch = _sample(task, f, config.batch_size, gen).to(dev)  # = ssfr_batch, checked once above
            logits = model._logits(batch.tokens)  # (B, F)
            loss = Fn.cross_entropy(logits, batch.targets)
            check_loss(loss, step + 1, what="train_attention", lr=config.lr)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                losses[step] = loss.detach()
                hits[step] = (logits.argmax(dim=1) == batch.targets).double().mean()
        bad = non_finite_parameter(model)
        if bad is not None:
            raise TrainingDiverged(f"train_attention diverged: the last update left parameter {bad!r} non-finite "
                                   f"(lr = {config.lr:g}); lower lr. The model's parameters were restored as "
                                   "they were before the call")
        with torch.no_grad():  # the last update is checked as every other one: by the loss it leads to
            last = Fn.cross_entropy(model._logits(batch.tokens), batch.targets)
        check_loss(last, config.steps, what="train_attention", lr=config.lr, final=True)
    except BaseException:
        restore_state(model, saved)
        raise
    finally:
        model.train(was_training)
    return TrainResult(losses=losses.cpu().numpy(), batch_accuracy=hits.cpu().numpy(), steps=config.steps)


def _new_model(task, embedding, mlp, model_config, train_config) -> SSFRTransformer:
    if not isinstance(model_config, TransformerConfig):
        raise ValueError(f"model_config must be a TransformerConfig; got {type(model_config).__name__}")
    if not isinstance(train_config, TrainConfig):
        raise ValueError(f"train_config must be a TrainConfig; got {type(train_config).__name__}")
    check_embedding(embedding, task, model_config.d)
    return SSFRTransformer(model_config, embedding, mlp, task=task, seed=seed_stream(train_config.seed, 0))


def pretrained_attention(task: SSFRTask, embedding: torch.Tensor, model_config: TransformerConfig,
                         train_config: TrainConfig, *,
                         return_result: bool = False) -> SSFRTransformer | tuple[SSFRTransformer, TrainResult]:
    """Attention trained alone on the dummy SSFR task (identity map, :class:`IdentityMLP`).

    The "pretrained attention" protocol of App. A.1.2, first half: afterwards swap in a fact-storing
    MLP with :meth:`~SSFRTransformer.with_mlp` (the attention is not trained again).

    Parameters
    ----------
    task : SSFRTask
    embedding : torch.Tensor, shape ``(vocab_size, d)``
    model_config : TransformerConfig
    train_config : TrainConfig
    return_result : bool, default False
        Also return the :class:`TrainResult`.

    Returns
    -------
    SSFRTransformer, or (SSFRTransformer, TrainResult)
        With the identity MLP.

    Raises
    ------
    ValueError
        A table whose row count is not ``task.vocab_size`` or whose width is not ``model_config.d``,
        configs of the wrong type, or what :func:`train_attention` rejects.
    """
    model = _new_model(task, embedding, None, model_config, train_config)
    result = train_attention(model, task, identity_map(task), train_config)
    return (model, result) if return_result else model


def inserted_mlp(task: SSFRTask, embedding: torch.Tensor, mlp: nn.Module, mapping: torch.Tensor,
                 model_config: TransformerConfig, train_config: TrainConfig, *,
                 return_result: bool = False) -> SSFRTransformer | tuple[SSFRTransformer, TrainResult]:
    """A Transformer with ``mlp`` inserted frozen and its attention trained around it on ``mapping``.

    The "inserted MLP" protocol of App. A.1.2 (used by the capacity sweeps, App. A.4.3).

    Parameters
    ----------
    task : SSFRTask
    embedding : torch.Tensor, shape ``(vocab_size, d)``
    mlp : torch.nn.Module
        Maps ``R^d -> R^d``; frozen and moved to the model's device in place.
    mapping : torch.Tensor, shape ``(F,)``
        The permutation the MLP stores.
    model_config : TransformerConfig
    train_config : TrainConfig
    return_result : bool, default False

    Returns
    -------
    SSFRTransformer, or (SSFRTransformer, TrainResult)

    Raises
    ------
    ValueError
        As :func:`pretrained_attention`, or an MLP whose input/output width is not ``d``.
    """
    if mlp is None:
        raise ValueError("mlp must be a torch.nn.Module mapping R^d -> R^d; got None")
    model = _new_model(task, embedding, mlp, model_config, train_config)
    result = train_attention(model, task, mapping, train_config)
    return (model, result) if return_result else model
