"""Training the book-author language model around a frozen fact expert (seed 001, App. A.4.5).

The base model of seed 001's editing experiment is built in two stages:

1. the **fact expert**, a GD MLP trained with MSE to map each normalised book embedding to its
   normalised author embedding (:func:`~assocmem.mlps.editing.swapping.build_fact_expert`,
   ``"gd_mse"``; the data-dependent Hebbian construction of Fig. 9, or the cross-entropy GD MLP of
   App. A.4.5's CE-against-MSE note, are the other experts used here);
2. everything else of :class:`~assocmem.mlps.editing.model.EditingLM` (the query and key maps,
   the norms' gains, the router and the rank-``r`` auxiliary expert) trained on the templated
   corpus with the expert **frozen** and the tied embeddings frozen.

The corpus is every training template of every fact (:func:`training_sequences`), padded on the
right to one length; the loss is the next-token cross-entropy at every real position (the
model is causal, so right padding changes no real position's logits). Optimiser: AdamW with
learning rate ``2e-4``, weight decay ``0.1``, batch ``32`` (the seed's settings), constant rate,
one batch of sequences drawn uniformly with replacement per step.

Evaluation (:func:`author_logits`, :func:`lm_accuracy`, :func:`expert_accuracy`): the logits
that predict the author token, at the position of the suffix's last token, and the book's
accuracy rule (strictly largest logit over the **whole** vocabulary,
:func:`~assocmem.mlps.editing.metrics.fact_accuracy`). The expert's standalone accuracy is the
argmax of ``<f_fact(k_i), v_j>`` over the ``F`` author rows (Definition 2.1 of seed 001).

Determinism. The embedding table, the trainable weights and the batches come from seeds
derived from one seed (:func:`~assocmem.mlps.transformer.training.seed_stream`), all drawn on the
CPU, so a seed gives the same run on one machine and thread count.

References
----------
Seed 001, App. A.4.5 ("GD MLP Setup": MSE, ``h = 512``, up to 10,000 epochs at ``1e-3``, early
stop below ``1e-7``, the CE-trained expert reaching "only about 90 %" inside the model; "Training
Setup": 16,384 facts, 16 rephrases, Kaiming-uniform embeddings, AdamW ``2e-4``, weight decay
0.1, batch 32, 18 epochs of 8,192 steps; standalone MLP accuracy 0.9998, Transformer 0.9984).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as Fn

from assocmem._checks import (TrainingDiverged, as_real, check_finite_parameters, check_loss, index_tensor,
                              non_finite_parameter, positive_int, restore_state, seed_int, state_copy)
from assocmem.devices import resolve_device
from assocmem.mlps.editing.data import BookCorpus
from assocmem.mlps.editing.metrics import fact_accuracy
from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, kaiming_embedding
from assocmem.mlps.editing.swapping import build_fact_expert, expert_fact_set
from assocmem.mlps.margins.decoding import accuracy as mlp_accuracy
from assocmem.mlps.transformer.training import seed_stream
from assocmem.dtypes import resolve_dtype

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "LMTrainConfig",
    "LMTrainResult",
    "Sequences",
    "training_sequences",
    "train_lm",
    "author_logits",
    "lm_accuracy",
    "expert_accuracy",
    "base_model",
    "expert_seed",
]


@dataclass(frozen=True)
class LMTrainConfig:
    """Settings of :func:`train_lm`.

    Attributes
    ----------
    steps : int
        AdamW steps, ``>= 1`` (seed 001: 18 epochs of 8,192 steps).
    batch_size : int, default 32
        Sequences per step (seed 001: 32).
    lr : float, default 2e-4
    weight_decay : float, default 0.1
    seed : int, default 0
        Seeds the batches (stream 1 of :func:`~assocmem.mlps.transformer.training.seed_stream`).
    betas : tuple of float, default (0.9, 0.999)

    Raises
    ------
    ValueError
        On construction: non-positive ``steps`` or ``batch_size``, an ``lr`` that is not a finite
        real ``> 0``, a negative ``weight_decay``, betas outside ``[0, 1)``, a bad seed.
    """

    steps: int
    batch_size: int = 32
    lr: float = 2e-4
    weight_decay: float = 0.1
    seed: int = 0
    betas: tuple[float, float] = field(default=(0.9, 0.999))

    def __post_init__(self) -> None:
        positive_int("steps", self.steps)
        positive_int("batch_size", self.batch_size)
        as_real(self.lr, "lr", minimum=0.0, strict_min=True)
        as_real(self.weight_decay, "weight_decay", minimum=0.0)
        seed_int(self.seed)
        if len(tuple(self.betas)) != 2 or any(not 0 <= as_real(b, "beta") < 1 for b in self.betas):
            raise ValueError(f"betas must be a pair of reals in [0, 1); got {self.betas!r}")


@dataclass
class LMTrainResult:
    """What :func:`train_lm` returns besides the model.

    Attributes
    ----------
    losses : numpy.ndarray, shape ``(steps,)``, float64
        Each step's batch cross-entropy (nats per token), before the step's update.
    steps : int
    """

    losses: np.ndarray
    steps: int


@dataclass(frozen=True)
class Sequences:
    """Padded token sequences of one fact set on several templates.

    Attributes
    ----------
    tokens : torch.Tensor, shape ``(N, T)``, int64
        ``<bos> prefix book suffix author <eos>``, right-padded with ``<eos>``.
    targets : torch.Tensor, shape ``(N, T)``, int64
        ``tokens`` shifted left by one (the next token at each position; the last column is
        padding).
    mask : torch.Tensor, shape ``(N, T)``, bool
        The real next-token positions (``targets`` is not padding).
    author_mask : torch.Tensor, shape ``(N, T)``, bool
        The one position per row whose target is the author token.

    Raises
    ------
    ValueError
        On construction: a field that is not a tensor, ``tokens`` not ``(N, T)`` with
        ``N, T >= 1``, another field of another shape, token ids or targets that are not integer
        tensors, masks that are not bool tensors, or a row without a real position (its loss
        would be the NaN of an empty mean, read as a divergence).
    """

    tokens: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    author_mask: torch.Tensor

    def __post_init__(self) -> None:
        fields = {n: getattr(self, n) for n in ("tokens", "targets", "mask", "author_mask")}
        for name, t in fields.items():
            if not isinstance(t, torch.Tensor):
                raise ValueError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
        shape = tuple(self.tokens.shape)
        if len(shape) != 2 or 0 in shape:
            raise ValueError(f"tokens must have shape (N, T) with N, T >= 1; got {shape}")
        for name, t in fields.items():
            if tuple(t.shape) != shape:
                raise ValueError(f"{name} must have the tokens' shape {shape}; got {tuple(t.shape)}")
            integer = not (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool)
            if integer != (name in ("tokens", "targets")):
                raise ValueError(f"{name} must be {'an integer' if name in ('tokens', 'targets') else 'a bool'} "
                                 f"tensor; got {t.dtype}")
        if not bool(self.mask.any(dim=1).all()):
            raise ValueError("every row needs a real position (mask True somewhere): a row without one has no loss")

    def __len__(self) -> int:
        return self.tokens.shape[0]


def training_sequences(corpus: BookCorpus, templates: Sequence[int] | None = None,
                       facts: torch.Tensor | None = None, authors: torch.Tensor | None = None) -> Sequences:
    """Every ``(template, fact)`` sentence, template-major, padded to one length.

    Parameters
    ----------
    corpus : BookCorpus
    templates : sequence of int, optional
        Template indices (:meth:`BookCorpus.sequences`); all training templates by default.
    facts, authors : torch.Tensor, shape ``(n,)``, optional
        As :meth:`BookCorpus.sequences` (all facts with their true authors by default).

    Returns
    -------
    Sequences
        ``N = len(templates) * n`` rows.

    Raises
    ------
    ValueError
        Not a corpus, no template, or as :meth:`BookCorpus.sequences`.
    """
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    templates = list(range(len(corpus.train_templates))) if templates is None else list(templates)
    if not templates:
        raise ValueError("need at least one template")
    parts = [corpus.sequences(t, facts, authors) for t in templates]
    T = max(tok.shape[1] for tok, _ in parts)
    rows, author_cols, lengths = [], [], []
    for tok, pos in parts:
        n, t = tok.shape
        rows.append(torch.cat([tok, torch.full((n, T - t), corpus.eos_id)], dim=1))
        author_cols.append(torch.full((n,), pos - 1))
        lengths.append(torch.full((n,), t))
    tokens = torch.cat(rows)
    length, author_col = torch.cat(lengths), torch.cat(author_cols)
    cols = torch.arange(T)[None, :]
    targets = torch.cat([tokens[:, 1:], torch.full((tokens.shape[0], 1), corpus.eos_id)], dim=1)
    mask = cols < (length[:, None] - 1)
    return Sequences(tokens, targets, mask, cols == author_col[:, None])


def _check_model(model) -> EditingLM:
    if not isinstance(model, EditingLM):
        raise ValueError(f"model must be an EditingLM; got {type(model).__name__}")
    return model


def train_lm(model: EditingLM, data: Sequences, config: LMTrainConfig) -> LMTrainResult:
    """Train every parameter of ``model`` except the fact expert on next-token prediction, in place.

    Each step draws ``batch_size`` rows of ``data`` uniformly with replacement and takes one
    AdamW step on the mean cross-entropy over their real positions (author tokens included: the
    model learns to read the fact expert there).

    Parameters
    ----------
    model : EditingLM
        Its :meth:`~EditingLM.trainable_parameters` are trained; the expert and embeddings are not.
    data : Sequences
        :func:`training_sequences` of the model's corpus.
    config : LMTrainConfig

    Returns
    -------
    LMTrainResult

    Raises
    ------
    ValueError
        Not an EditingLM, data that is not :class:`Sequences`, a config of the wrong type, or token
        ids out of the model's vocabulary.
    assocmem._checks.TrainingDiverged
        (a :class:`FloatingPointError` and a :class:`ValueError`; lower ``lr``) at the first step
        whose loss is NaN, infinite or above :func:`~assocmem._checks.loss_limit` of its dtype
        (87 nats in float32, 708 in float64: a finite blow-up, such as weights driven to 1e30),
        at a step after the first whose forward pass fails (the updates have driven the
        activations out of range, so that the fact expert refuses its input), or if the last
        update does either (its loss is computed once more, on the last batch) or leaves a
        non-finite parameter. The message names the step.
        On this error, and on any other raised during the steps, the model's parameters (and
        those of every model sharing its trained modules) and its training mode are put back as
        they were before the call.

    References
    ----------
    Seed 001, App. A.4.5 ("Training Setup").
    """
    model = _check_model(model)
    if not isinstance(data, Sequences):
        raise ValueError(f"data must be Sequences (training_sequences); got {type(data).__name__}")
    if not isinstance(config, LMTrainConfig):
        raise ValueError(f"config must be an LMTrainConfig; got {type(config).__name__}")
    lo, hi = int(data.tokens.min()), int(data.tokens.max())
    if lo < 0 or hi >= model.config.vocab_size:
        raise ValueError(f"token ids must lie in [0, {model.config.vocab_size}) (the model's vocabulary); "
                         f"got [{lo}, {hi}]")
    dev = model.embedding.device
    params = model.trainable_parameters()
    opt = torch.optim.AdamW(params, lr=config.lr, betas=tuple(config.betas), weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(seed_stream(config.seed, 1))
    tokens, targets, mask = (x.to(dev) for x in (data.tokens, data.targets, data.mask))
    losses = torch.empty(config.steps, dtype=torch.float64)
    was = model.training
    saved = state_copy(model)
    model.train()

    def loss_of(idx, updates: int, final: bool = False) -> torch.Tensor:
        try:
            logits = model.head(model.feed_forward(model.attention(tokens[idx])[0]))  # (B, T, V)
        except (ValueError, RuntimeError, FloatingPointError) as err:
            if updates == 0:  # the model as given fails: not a divergence
                raise
            when = f"after the last update (step {updates})" if final else f"at step {updates + 1}"
            raise TrainingDiverged(
                f"train_lm diverged: the forward pass fails {when}, after {updates} update(s) "
                f"({err}); the largest trainable weight is {_largest(params):.3g} (lr = {config.lr:g}); "
                "lower lr. The model's parameters were restored as they were before the call") from err
        m = mask[idx]
        return Fn.cross_entropy(logits[m], targets[idx][m])

    try:
        for step in range(config.steps):
            idx = torch.randint(len(data), (config.batch_size,), generator=gen).to(dev)
            loss = loss_of(idx, step)
            check_loss(loss, step + 1, what="train_lm", lr=config.lr)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses[step] = float(loss.detach())
        bad = non_finite_parameter(model)
        if bad is not None:
            raise TrainingDiverged(f"train_lm diverged: the last update left parameter {bad!r} non-finite "
                                   f"(lr = {config.lr:g}); lower lr. The model's parameters were restored as "
                                   "they were before the call")
        with torch.no_grad():  # the last update is checked as every other one: by the loss it leads to
            last = loss_of(idx, config.steps, final=True)
        check_loss(last, config.steps, what="train_lm", lr=config.lr, final=True)
    except BaseException:
        restore_state(model, saved)
        raise
    finally:
        model.train(was)
    return LMTrainResult(losses=losses.numpy(), steps=config.steps)


def _largest(params) -> float:
    with torch.no_grad():
        return max(float(p.abs().max()) for p in params) if params else 0.0


@torch.no_grad()
def author_logits(model: EditingLM, corpus: BookCorpus, template: int, facts: torch.Tensor | None = None,
                  authors: torch.Tensor | None = None, *, batch: int = 4096) -> torch.Tensor:
    """Logits ``(n, V)`` that predict the author token of each fact on one template (float64, CPU).

    Parameters
    ----------
    model : EditingLM
    corpus : BookCorpus
    template : int
        A training or held-out template (:meth:`BookCorpus.sequences`).
    facts, authors : optional
        As :meth:`BookCorpus.sequences`; the author does not enter these logits (it comes after).
    batch : int, default 4096
        Rows per forward pass.

    Raises
    ------
    ValueError
        As :meth:`BookCorpus.sequences`, not an EditingLM or not a BookCorpus, a corpus with more
        token ids than the model's vocabulary, or a model with a NaN or infinite parameter or
        buffer (a diverged training: an argmax over its logits would be arbitrary).
    """
    model = _check_model(model)
    check_finite_parameters(model)
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    model.check_vocabulary(corpus.vocab_size)
    tokens, pos = corpus.sequences(template, facts, authors)
    dev = model.embedding.device
    out = []
    for i in range(0, tokens.shape[0], positive_int("batch", batch)):
        x, _ = model.attention(tokens[i:i + batch, :pos].to(dev))
        out.append(model.head(model.feed_forward(x[:, -1])).to(torch.float64).cpu())
    return torch.cat(out)


def lm_accuracy(model: EditingLM, corpus: BookCorpus, template: int, facts: torch.Tensor | None = None,
                authors: torch.Tensor | None = None) -> float:
    """Author-token accuracy of the language model on one template: strict argmax over the vocabulary.

    ``authors`` (default: the true ones) are the labels; see :func:`author_logits`.

    Raises
    ------
    ValueError
        As :func:`author_logits`.
    """
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    F = corpus.num_facts
    idx = torch.arange(F) if facts is None else index_tensor(facts, "facts", F, "F")
    auth = idx if authors is None else index_tensor(authors, "authors", F, "F")
    logits = author_logits(model, corpus, template, idx, auth)
    return fact_accuracy(logits, corpus.author_offset + auth)


def expert_accuracy(expert: torch.nn.Module, embedding: torch.Tensor, corpus: BookCorpus,
                    authors: torch.Tensor | None = None) -> float:
    """Standalone accuracy of a fact expert: ``argmax_j <f(k_i), v_j> = authors[i]`` strictly, over
    the ``F`` normalised author rows (seed 001, Definition 2.1).

    Raises
    ------
    ValueError
        As :func:`~assocmem.mlps.editing.swapping.expert_fact_set`, an expert that is not a
        ``torch.nn.Module`` with parameters, or one with a NaN or infinite parameter.
    """
    if not isinstance(expert, torch.nn.Module) or next(iter(expert.parameters()), None) is None:
        raise ValueError(f"expert must be a torch.nn.Module with parameters; got {type(expert).__name__}")
    check_finite_parameters(expert, "fact expert")
    facts = expert_fact_set(embedding, corpus, authors)
    p = next(iter(expert.parameters()))
    with torch.no_grad():
        return mlp_accuracy(lambda x: expert(x.to(p.device, p.dtype)).to(torch.float64).cpu(), facts)


def expert_seed(seed: int) -> int:
    """The seed :func:`base_model` builds its fact expert with (stream 2 of ``seed``, in ``[0, 2^31)``).

    MLP swapping builds the replacement expert with the same seed, so that the two experts differ
    only in the facts they store.

    Raises
    ------
    ValueError
        A seed outside ``[0, 2^63)``.
    """
    return seed_stream(seed, 2) % 2**31


def base_model(corpus: BookCorpus, *, d: int, expert: str, m: int, train: LMTrainConfig, seed: int = 0,
               expert_epochs: int = 10000, expert_lr: float = 1e-3, dtype: torch.dtype | None = None,
               qk_hidden: int | None = None,
               device: str | torch.device | None = None) -> tuple[EditingLM, LMTrainResult]:
    """The trained base model of seed 001's editing experiment: a frozen expert, then the rest trained.

    Parameters
    ----------
    corpus : BookCorpus
    d : int
        Model width (seed 001: 256); even.
    expert : str
        A method of :func:`~assocmem.mlps.editing.swapping.build_fact_expert`: ``"gd_mse"`` (the
        seed's base), ``"gd_ce"`` (its CE note), ``"data_dependent"`` (Fig. 9).
    m : int
        The expert's hidden width (seed 001: 512 for GD, 1024 for data-dependent).
    train : LMTrainConfig
        Training of the rest of the model (its ``seed`` seeds the batches).
    seed : int, default 0
        Seeds the embedding table (stream 0), the expert (stream 2, :func:`expert_seed`) and the
        trainable weights (stream 3).
    expert_epochs, expert_lr : int, float
        GD experts only (seed 001: 10,000 and ``1e-3``).
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        The model's dtype (the expert keeps its own).
    qk_hidden : int, optional
        Width of the query/key maps (``d`` by default).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where the model trains (``"auto"``: CUDA when available, :mod:`assocmem.devices`).

    Returns
    -------
    (EditingLM, LMTrainResult)

    Raises
    ------
    ValueError
        As :class:`EditingLMConfig`, :func:`build_fact_expert` and :func:`train_lm`.
    """
    dtype = resolve_dtype(dtype)
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    seed = seed_int(seed)
    dev = resolve_device(device)
    cfg = EditingLMConfig(vocab_size=corpus.vocab_size, d=d, qk_hidden=qk_hidden or d, dtype=dtype)
    emb = kaiming_embedding(corpus.vocab_size, d, seed=seed_stream(seed, 0), dtype=dtype)
    facts = expert_fact_set(emb, corpus)
    fact_expert = build_fact_expert(expert, facts, m, expert_seed(seed), epochs=expert_epochs,
                                    lr=expert_lr, device=dev)
    model = EditingLM(cfg, emb, fact_expert, seed=seed_stream(seed, 3)).to(dev)
    result = train_lm(model, training_sequences(corpus), train)
    return model, result
