"""Calibrated noise injected into the SSFR Transformer's MLP input: a sensitivity test for chapter 14.

The attention hands the MLP ``u``, the unit-normalised blend of the key and the junk (App. A.1.2).
Its distance from the key, ``||u - k||``, is the attention noise of Definition 5.1. To ask how much
noise the MLP's margins can absorb, without retraining the attention, we move ``u`` by a chosen
chord ``eps`` on the unit sphere in a random tangent direction,

    ``u' = cos(theta) u + sin(theta) t``,  ``theta = 2 arcsin(eps / 2)``,

with ``t`` uniform on the unit vectors orthogonal to ``u``, so that ``||u'|| = 1`` and
``||u' - u|| = eps`` exactly, and then read ``u'`` out through the MLP and the tied read-out as the
model does. ``eps = 0`` gives the model's own answers (:func:`injected_correct` then equals
:func:`~assocmem.mlps.transformer.evaluation.ssfr_correct` on the same contexts). In ``d``
dimensions a random tangent is nearly orthogonal to the attention's own deviation ``u - k``, so
the query sits at chord about ``sqrt(||u - k||^2 + eps^2)`` from the key.

This is our device, not the source's: the source varies the noise through the junk length
(Fig. 3a) and the training; injection varies it at a fixed attention, so that a test of "the
Transformer lags the standalone MLP" (Fig. 2a) or "margins predict which keys survive" (Fig. 7)
can be given noise of the margins' size when the trained attention is quieter than that.

References
----------
Seed 001, App. A.1.2 (the block), Definition 5.1 (attention noise), App. A.4.2 (queries
``k + eps u`` for a standalone MLP, here on the sphere the block's MLP reads).
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as Fn

from assocmem._checks import as_real, seed_int
from assocmem.mlps.transformer.model import SSFRTransformer
from assocmem.mlps.transformer.ssfr import SSFRTask, check_mapping, ssfr_eval_batch

__all__ = ["tangent_noise", "query_inputs", "injected_correct"]


def tangent_noise(points: torch.Tensor, eps: float, seed: int) -> torch.Tensor:
    """Each unit row moved by chord ``eps`` on the sphere in an independent random tangent direction.

    Parameters
    ----------
    points : torch.Tensor, shape ``(n, d)``
        Unit rows (``d >= 2``), floating point.
    eps : float
        Chord distance in ``[0, 2]``.
    seed : int
        Seed of the directions, drawn on the CPU in float64 (one seed, the same points on every
        device).

    Returns
    -------
    torch.Tensor, shape ``(n, d)``, dtype and device of ``points``
        Unit rows at chord ``eps`` from the input rows.

    Raises
    ------
    ValueError
        ``points`` not a 2-D floating tensor with ``d >= 2`` or with non-finite entries, ``eps``
        outside ``[0, 2]``, a bad seed.

    References
    ----------
    Seed 001, App. A.4.2 (random perturbations of the query), on the unit sphere.
    """
    if not isinstance(points, torch.Tensor) or points.dim() != 2 or points.shape[1] < 2 \
            or not points.is_floating_point():
        raise ValueError("points must be a floating (n, d) tensor with d >= 2; got "
                         f"{getattr(points, 'shape', type(points).__name__)}")
    if not bool(torch.isfinite(points).all()):
        raise ValueError("points must be finite")
    eps = as_real(eps, "eps", minimum=0.0, maximum=2.0)
    gen = torch.Generator().manual_seed(seed_int(seed))
    t = torch.randn(points.shape, generator=gen, dtype=torch.float64).to(device=points.device)
    p = points.to(torch.float64)
    t = t - (t * p).sum(-1, keepdim=True) * p  # tangent at each point
    t = t / t.norm(dim=-1, keepdim=True)
    theta = 2 * math.asin(eps / 2)
    return (math.cos(theta) * p + math.sin(theta) * t).to(points.dtype)


def query_inputs(model: SSFRTransformer, task: SSFRTask, mapping: torch.Tensor, contexts_per_key: int = 4,
                 seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The MLP inputs ``u`` and targets of every key in ``contexts_per_key`` junk contexts.

    The contexts are those of :func:`~assocmem.mlps.transformer.evaluation.ssfr_correct` with
    the same ``seed`` (key-major: row ``i C + c`` is key ``i`` in context ``c``).

    Returns
    -------
    inputs : torch.Tensor, shape ``(F C, d)``, the model's dtype and device
        Unit rows (:meth:`SSFRTransformer.mlp_input`).
    targets : torch.Tensor, shape ``(F C,)``, int64, the model's device
        ``f(key)`` of each sequence.

    Raises
    ------
    ValueError
        Not an SSFRTransformer, another task, a bad map, ``C < 1``, a bad seed.
    """
    if not isinstance(model, SSFRTransformer):
        raise ValueError(f"model must be an SSFRTransformer; got {type(model).__name__}")
    if task != model.task:
        raise ValueError(f"task {task} is not the model's task {model.task}")
    check_mapping(mapping, task)
    batch = ssfr_eval_batch(task, mapping, contexts_per_key, seed)
    n, rows = batch.tokens.shape[0], model.chunk_rows(batch.tokens.shape[0])
    with torch.no_grad():
        u = torch.cat([model.mlp_input(batch.tokens[s:s + rows]) for s in range(0, n, rows)])
    return u, batch.targets.to(u.device)


def injected_correct(model: SSFRTransformer, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Which (possibly perturbed) MLP inputs the model's MLP and read-out decode to their targets.

    The rest of the block after the attention (App. A.1.2): ``y = unit(MLP(u))``, logits
    ``<y, e_j>`` over the ``F`` fact tokens, correct when the target's logit beats every other's
    strictly (Definition 2.1).

    Parameters
    ----------
    model : SSFRTransformer
        Its MLP reads the inputs (cast to the MLP's dtype).
    inputs : torch.Tensor, shape ``(n, d)``
        MLP inputs, e.g. :func:`query_inputs` moved by :func:`tangent_noise`.
    targets : torch.Tensor, shape ``(n,)``, integer
        Fact tokens in ``[0, F)``.

    Returns
    -------
    torch.Tensor, shape ``(n,)``, bool, CPU

    Raises
    ------
    ValueError
        Not an SSFRTransformer, inputs not ``(n, d)`` with the model's ``d``, targets of another
        length or out of range, non-finite logits.
    """
    if not isinstance(model, SSFRTransformer):
        raise ValueError(f"model must be an SSFRTransformer; got {type(model).__name__}")
    d, F = model.config.d, model.task.num_facts
    if not isinstance(inputs, torch.Tensor) or inputs.dim() != 2 or inputs.shape[1] != d:
        raise ValueError(f"inputs must have shape (n, {d}); got {getattr(inputs, 'shape', None)}")
    targets = torch.as_tensor(targets)
    if targets.shape != inputs.shape[:1] or targets.is_floating_point():
        raise ValueError(f"targets must be integers of shape ({inputs.shape[0]},)")
    if len(targets) and (int(targets.min()) < 0 or int(targets.max()) >= F):
        raise ValueError(f"targets must be fact tokens in [0, {F})")
    dev, rows = model.device, model.chunk_rows(max(1, inputs.shape[0]))
    table = model.embedding[:F]
    hits = torch.empty(inputs.shape[0], dtype=torch.bool)
    with torch.no_grad():
        for s in range(0, inputs.shape[0], rows):
            u = inputs[s:s + rows].to(device=dev, dtype=model._mlp_dtype)
            y = Fn.normalize(model.mlp(u).to(model.config.dtype), dim=-1, eps=model.config.norm_eps)
            logits = y @ table.T  # (rows, F)
            if not bool(torch.isfinite(logits).all()):
                raise ValueError("the model's logits are not finite (NaN or inf)")
            t = targets[s:s + rows].to(dev)
            idx = torch.arange(len(t), device=dev)
            right = logits[idx, t].clone()
            logits[idx, t] = -math.inf
            hits[s:s + rows] = (right > logits.amax(dim=1)).cpu()
    return hits
