"""SSFR accuracy of a Transformer over every key, the fact-adaptive swap, and per-key diagnostics.

Every key is evaluated. :func:`ssfr_correct` runs every key of the task in ``contexts_per_key``
sampled junk contexts (:func:`~assocmem.mlps.transformer.ssfr.ssfr_eval_batch`) and marks a
sequence correct when the target's logit beats every other fact token's *strictly* (ties are
errors), the criterion of Definition 2.1 applied at the query position. The authors estimate
accuracy on sampled batches instead, where a key can be missed.

Fact-adaptive accuracy (App. A.4.3): the attention is trained with ``MLP_A`` storing fact set
``A``; then ``MLP_B``, built for a fresh fact set ``B`` on the same embeddings, is swapped in with
no further training and the accuracy is measured on ``B`` (:func:`fact_adaptive_accuracy`).

Per-key diagnostic (App. A.4.4, Fig. 7): the standalone MLP's margin on each exact key
(:func:`assocmem.mlps.margins.decoding.output_margins`) beside the Transformer's per-key accuracy
over contexts (:func:`per_key_diagnostic`), and the fraction of keys whose margin clears a
threshold (:func:`usable_key_fraction`), which the seed says tracks the Transformer's accuracy.

References
----------
Seed 001, Definition 2.1 (correct decoding), App. A.4.3 (training and fact-adaptive criteria),
A.4.4 and Fig. 7 (per-key margins against Transformer accuracy).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_real, check_finite_parameters
from assocmem.mlps._checks import real_array
from assocmem.mlps.facts import FactSet
from assocmem.mlps.margins.decoding import output_margins
from assocmem.mlps.transformer.model import SSFRTransformer
from assocmem.mlps.transformer.noise import attention_noise
from assocmem.mlps.transformer.ssfr import SSFRTask, check_mapping, fact_set, ssfr_eval_batch

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "ssfr_correct",
    "ssfr_accuracy",
    "fact_adaptive_accuracy",
    "per_key_accuracy",
    "per_key_diagnostic",
    "usable_key_fraction",
]

def _model(model, task) -> SSFRTransformer:
    if not isinstance(model, SSFRTransformer):
        raise ValueError(f"model must be an SSFRTransformer; got {type(model).__name__}")
    if task is not None and task != model.task:
        raise ValueError(f"task {task} is not the model's task {model.task}")
    check_finite_parameters(model)  # NaN weights would give an arbitrary argmax, not an accuracy
    return model


def _strict_hits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``logits[i, t_i] > max_{j != t_i} logits[i, j]`` per row, ``(n,)`` bool."""
    rows = torch.arange(logits.shape[0], device=logits.device)
    target = logits[rows, targets].clone()
    logits[rows, targets] = -math.inf
    return target > logits.amax(dim=1)


def ssfr_correct(model: SSFRTransformer, task: SSFRTask, mapping: torch.Tensor, contexts_per_key: int = 4,
                 seed: int = 0) -> torch.Tensor:
    """Which SSFR sequences the model answers correctly: every key, ``contexts_per_key`` contexts each.

    Parameters
    ----------
    model : SSFRTransformer
    task : SSFRTask
        Must be the model's task.
    mapping : torch.Tensor, shape ``(F,)``
        The permutation the answers are checked against.
    contexts_per_key : int, default 4
        ``C >= 1`` junk contexts per key.
    seed : int, default 0
        Seed of the junk (:func:`~assocmem.mlps.transformer.ssfr.ssfr_eval_batch`).

    Returns
    -------
    torch.Tensor, shape ``(F, C)``, bool, CPU
        Entry ``[i, c]``: key ``i`` in context ``c`` decodes to ``f(i)`` with a strict argmax over
        the ``F`` fact tokens.

    Raises
    ------
    ValueError
        Not an SSFRTransformer, another task, a map that is not a permutation of ``[F]``, ``C < 1``,
        a seed outside ``[0, 2^63)``, a parameter or buffer of the model that is NaN or infinite (a
        diverged training), or non-finite logits (an MLP that outputs NaN or inf).

    References
    ----------
    Seed 001, Definition 2.1 (strict decoding) at the query position; App. A.4.3.
    """
    model = _model(model, task)
    batch = ssfr_eval_batch(task, mapping, contexts_per_key, seed)
    n = batch.tokens.shape[0]
    rows = model.chunk_rows(n)
    hits = torch.empty(n, dtype=torch.bool)
    dev = model.device
    with torch.no_grad():
        for s in range(0, n, rows):
            e = min(n, s + rows)
            logits = model._logits(batch.tokens[s:e].to(dev))  # (rows, F)
            if not bool(torch.isfinite(logits).all()):
                raise ValueError("the model's logits are not finite (NaN or inf): the inserted MLP returns "
                                 "non-finite outputs; an argmax over them would be a meaningless accuracy")
            hits[s:e] = _strict_hits(logits, batch.targets[s:e].to(dev)).cpu()
    return hits.reshape(task.num_facts, contexts_per_key)


def ssfr_accuracy(model: SSFRTransformer, task: SSFRTask, mapping: torch.Tensor, contexts_per_key: int = 4,
                  seed: int = 0) -> float:
    """Fraction of the ``F C`` sequences of :func:`ssfr_correct` answered correctly.

    Returns
    -------
    float
        In ``[0, 1]``; a multiple of ``1 / (F C)``.

    Raises
    ------
    ValueError
        As :func:`ssfr_correct`.
    """
    return float(ssfr_correct(model, task, mapping, contexts_per_key, seed).double().mean())


def fact_adaptive_accuracy(model: SSFRTransformer, mlp_b: torch.nn.Module, mapping_b: torch.Tensor,
                           contexts_per_key: int = 4, seed: int = 0, *,
                           task: SSFRTask | None = None) -> float:
    """Accuracy on fact set ``B`` after swapping ``mlp_b`` into ``model``, with no further training.

    The attention of ``model`` (trained with ``MLP_A`` on fact set ``A``) is shared, not copied:
    :meth:`~assocmem.mlps.transformer.model.SSFRTransformer.with_mlp` changes no attention weight.

    Parameters
    ----------
    model : SSFRTransformer
        Trained on fact set ``A``.
    mlp_b : torch.nn.Module
        An MLP storing fact set ``B``, built on the same embeddings (same fact rows, map
        ``mapping_b``); frozen and moved to the model's device in place.
    mapping_b : torch.Tensor, shape ``(F,)``
        ``B``'s permutation.
    contexts_per_key : int, default 4
    seed : int, default 0
        Seed of the evaluation junk.
    task : SSFRTask, optional
        Checked against the model's task when given.

    Returns
    -------
    float
        :func:`ssfr_accuracy` of the swapped model on ``mapping_b``.

    Raises
    ------
    ValueError
        As :func:`ssfr_correct`; ``mlp_b`` None (the swap needs an MLP: ``None`` would silently
        insert the identity) or an ``mlp_b`` that does not map ``R^d -> R^d``.

    References
    ----------
    Seed 001, App. A.4.3 ("Evaluation (fact-adaptive) accuracy").
    """
    model = _model(model, task)
    if mlp_b is None:
        raise ValueError("mlp_b must be the MLP storing fact set B; got None (which would insert the identity)")
    return ssfr_accuracy(model.with_mlp(mlp_b), model.task, mapping_b, contexts_per_key, seed)


def per_key_accuracy(correct: torch.Tensor) -> np.ndarray:
    """Per-key accuracy over contexts: the row means of a ``(F, C)`` correctness table.

    Parameters
    ----------
    correct : torch.Tensor, shape ``(F, C)``, bool
        :func:`ssfr_correct`'s table, ``F, C >= 1``.

    Returns
    -------
    numpy.ndarray, shape ``(F,)``, float64
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        Not a 2-D bool tensor (a count or a float is not a correctness flag: ``2`` would make an
        accuracy above 1), or no key or no context.
    """
    if not isinstance(correct, torch.Tensor) or correct.dim() != 2:
        raise ValueError("correct must be a (F, C) tensor (from ssfr_correct)")
    if correct.dtype != torch.bool:
        raise ValueError(f"correct must be a bool tensor of hits (from ssfr_correct); got {correct.dtype}")
    if correct.shape[0] == 0 or correct.shape[1] == 0:
        raise ValueError(f"correct must have F, C >= 1; got shape {tuple(correct.shape)}")
    return correct.double().mean(dim=1).cpu().numpy()


def per_key_diagnostic(model: SSFRTransformer, mapping: torch.Tensor, contexts_per_key: int = 4,
                       seed: int = 0, *, facts: FactSet | None = None) -> pd.DataFrame:
    """Per key: the standalone MLP's margin on the exact key beside the Transformer's accuracy.

    Parameters
    ----------
    model : SSFRTransformer
        With the MLP to diagnose inserted.
    mapping : torch.Tensor, shape ``(F,)``
        The permutation the MLP stores.
    contexts_per_key : int, default 4
    seed : int, default 0
    facts : FactSet, optional
        The fact set the MLP was built for (float64 keys, as built). By default it is rebuilt from
        the model's embedding table (in the model's dtype).

    Returns
    -------
    pandas.DataFrame
        One row per key: ``key``, ``value`` (``f(key)``), ``margin`` (Definition 2.2 on the MLP's
        own output scale), ``cosine_margin`` (the margin divided by ``||MLP(k_i)||``: the margin
        on the Transformer's read-out scale, whose output is projected to the sphere),
        ``mlp_correct`` (``margin > 0``), ``accuracy`` (the Transformer's fraction of the ``C``
        contexts answered correctly) and ``noise_max`` (the largest ``||u - k_i||`` over those
        contexts, :mod:`~assocmem.mlps.transformer.noise`).

    Raises
    ------
    ValueError
        As :func:`ssfr_correct`, or a fact set whose keys are not the model's fact rows' width.

    References
    ----------
    Seed 001, App. A.4.4 and Fig. 7.
    """
    model = _model(model, None)
    task = model.task
    f = check_mapping(mapping, task).cpu()
    if facts is None:
        facts = fact_set(model.embedding.double().cpu(), task, f)
    if not isinstance(facts, FactSet) or facts.dim != model.config.d or facts.num_facts != task.num_facts:
        raise ValueError("facts must be the FactSet of the model's task (F keys of width d)")
    mlp = model.mlp
    dev = next(iter(mlp.parameters()), facts.keys).device
    facts_dev = facts.to(dev)
    margins = output_margins(mlp, facts_dev).cpu()  # (F,)
    with torch.no_grad():
        norms = torch.linalg.vector_norm(mlp(facts_dev.keys).double(), dim=1).cpu()  # (F,)
    correct = ssfr_correct(model, task, f, contexts_per_key, seed)
    noise = attention_noise(model, task, contexts_per_key, seed)
    cos = torch.where(norms > 0, margins / norms.clamp_min(torch.finfo(torch.float64).tiny), torch.zeros_like(margins))
    return pd.DataFrame({
        "key": np.arange(task.num_facts),
        "value": f.numpy(),
        "margin": margins.numpy(),
        "cosine_margin": cos.numpy(),
        "mlp_correct": (margins > 0).numpy(),
        "accuracy": per_key_accuracy(correct),
        "noise_max": noise.max(dim=1).values.numpy(),
    })


def usable_key_fraction(margins: ArrayLike, threshold: float = 0.0) -> float:
    """Fraction of keys whose margin exceeds ``threshold`` (strictly): the "usable keys" of Fig. 7.

    Parameters
    ----------
    margins : array-like, shape ``(F,)``
        Per-key margins (e.g. the ``cosine_margin`` column of :func:`per_key_diagnostic`).
    threshold : float, default 0.0
        A finite real; the margin a key needs to survive the attention's perturbation.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Margins that are empty, not 1-D, not finite or not real numbers (booleans and strings are
        refused), or a threshold that is not a finite real.
    """
    try:
        x = real_array(margins, "margins")  # booleans and strings refused, not read as 1.0 / parsed
    except ValueError as err:
        raise ValueError(f"margins must be a non-empty, finite 1-D array of reals ({err})") from None
    if x.ndim != 1 or x.size == 0:
        raise ValueError("margins must be a non-empty, finite 1-D array")
    t = as_real(threshold, "threshold")
    return float(np.mean(x > t))
