"""What the SSFR Transformer sweeps share: their training fields, seed streams and draws.

The sweeps of :mod:`assocmem.mlps.transformer_sweeps` (``transformer_usability``,
``attention_noise``, ``transformer_capacity``) and :mod:`assocmem.mlps.transformer_capacity_sweeps`
(``transformer_facts``, ``transformer_architecture``) train the one-layer SSFR Transformer of
:mod:`assocmem.mlps.transformer` from configs with the same training fields (``steps``,
``batch_size``, ``lr``, ``weight_decay``, ``contexts_per_key``, ``dtype``, ``seed``). This module
holds what they share:

* :func:`check_training_fields` validates those fields;
* :func:`stream_seeds` splits a point's seed into independent seeds (embeddings, fact sets,
  MLPs, training, evaluation);
* :func:`train_config` and :func:`model_config` turn a config into the
  :class:`~assocmem.mlps.transformer.TrainConfig` and
  :class:`~assocmem.mlps.transformer.TransformerConfig` of one training;
* :func:`capacity_setup` draws what an inserted-MLP point needs before its search (App. A.4.3):
  the task, the embeddings, the fact sets A and B and their seeds.

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.1.2 (the model and its optimiser),
App. A.4.3 (the inserted-MLP protocol).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from assocmem._checks import as_real, positive_int, seed_int
from assocmem.sweeps.config import point_seed

if TYPE_CHECKING:
    from assocmem.mlps.transformer import TrainConfig, TransformerConfig

__all__ = ["DTYPES", "check_training_fields", "stream_seeds", "train_config", "model_config",
           "capacity_setup"]

#: The dtypes a config may name, by name.
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _transformer():
    """:mod:`assocmem.mlps.transformer`, imported when a point runs (keeps this module light)."""
    from assocmem.mlps import transformer

    return transformer


def check_training_fields(cfg: Any) -> None:
    """Validate a sweep config's training, evaluation and seed fields.

    Parameters
    ----------
    cfg : dataclass instance
        With ``steps``, ``batch_size``, ``contexts_per_key`` (positive integers), ``lr`` (> 0),
        ``weight_decay`` (>= 0), ``seed`` (an integer seed) and ``dtype`` (a key of
        :data:`DTYPES`).

    Raises
    ------
    ValueError
        A field outside its range, or an unknown dtype.
    TypeError
        A field of the wrong type (as :func:`assocmem._checks.positive_int` and friends).
    """
    positive_int("steps", cfg.steps)
    positive_int("batch_size", cfg.batch_size)
    as_real(cfg.lr, "lr", minimum=0.0, strict_min=True)
    as_real(cfg.weight_decay, "weight_decay", minimum=0.0)
    positive_int("contexts_per_key", cfg.contexts_per_key)
    seed_int(cfg.seed)
    if cfg.dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}; got {cfg.dtype!r}")


def stream_seeds(seed: int, n: int) -> list[int]:
    """``n`` independent seeds in ``[0, 2^31)`` derived from one seed.

    The first ``k`` of ``n`` streams are the ``k`` streams of the same seed (a
    :class:`numpy.random.SeedSequence` state), so a point may ask for more streams later without
    moving the ones it had.

    Parameters
    ----------
    seed : int
        A point's seed (:func:`assocmem.sweeps.point_seed`), ``>= 0``.
    n : int
        Number of seeds, ``>= 1``.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        A negative seed or ``n < 1``.
    """
    n = positive_int("n", n)
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0; got {seed}")
    state = np.random.SeedSequence(int(seed)).generate_state(n)
    return [int(s) % 2**31 for s in state]


def train_config(cfg: Any, seed: int) -> TrainConfig:
    """The attention's :class:`~assocmem.mlps.transformer.TrainConfig` for one training.

    Parameters
    ----------
    cfg : dataclass instance
        A sweep config with ``steps``, ``batch_size``, ``lr`` and ``weight_decay``.
    seed : int
        The training's seed (initial weights and batches).

    Returns
    -------
    TrainConfig

    Raises
    ------
    ValueError
        What :class:`~assocmem.mlps.transformer.TrainConfig` rejects.
    """
    T = _transformer()
    return T.TrainConfig(steps=cfg.steps, batch_size=cfg.batch_size, lr=cfg.lr,
                         weight_decay=cfg.weight_decay, seed=seed)


def model_config(cfg: Any, d: int, device: str | torch.device) -> TransformerConfig:
    """The :class:`~assocmem.mlps.transformer.TransformerConfig` of width ``d`` in ``cfg.dtype``.

    Parameters
    ----------
    cfg : dataclass instance
        A sweep config with ``dtype`` (a key of :data:`DTYPES`).
    d : int
        The embedding width.
    device : str or torch.device
        Where the model lives.

    Returns
    -------
    TransformerConfig

    Raises
    ------
    ValueError
        An unknown dtype, or what :class:`~assocmem.mlps.transformer.TransformerConfig` rejects.
    """
    if cfg.dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}; got {cfg.dtype!r}")
    T = _transformer()
    return T.TransformerConfig(d=d, dtype=DTYPES[cfg.dtype], device=device)


def capacity_setup(config: Any, point: dict) -> dict:
    """What an inserted-MLP point draws before its searches (so a chapter can rebuild it).

    Parameters
    ----------
    config : dataclass instance
        With ``junk_vocab``, ``junk_length`` and ``seed`` (the ``transformer_capacity``,
        ``transformer_facts`` and ``transformer_architecture`` configs).
    point : dict
        With ``F`` (facts) and ``d`` (width); its seed is :func:`assocmem.sweeps.point_seed`
        of the whole point.

    Returns
    -------
    dict
        ``task`` (:class:`~assocmem.mlps.transformer.SSFRTask`), ``embedding`` ``(vocab, d)``,
        ``map_a``, ``map_b`` (the permutations of fact sets A and B), ``facts_a``, ``facts_b``
        (:class:`~assocmem.mlps.facts.FactSet`), and the seeds ``seed_mlp_a``, ``seed_mlp_b``,
        ``seed_train``, ``seed_eval``, all from the point's seed.

    Raises
    ------
    KeyError
        A point without ``F`` or ``d``.
    ValueError
        What the task or the embedding table rejects (e.g. ``F < 2``).
    """
    T = _transformer()
    s_emb, s_a, s_b, s_mlp_a, s_mlp_b, s_train, s_eval = stream_seeds(point_seed(config, point), 7)
    task = T.SSFRTask(num_facts=point["F"], junk_vocab=config.junk_vocab, junk_length=config.junk_length)
    emb = T.embedding_table(task, point["d"], seed=s_emb)
    map_a, map_b = T.fact_map(task, seed=s_a), T.fact_map(task, seed=s_b)
    return {"task": task, "embedding": emb, "map_a": map_a, "map_b": map_b,
            "facts_a": T.fact_set(emb, task, map_a), "facts_b": T.fact_set(emb, task, map_b),
            "seed_mlp_a": s_mlp_a, "seed_mlp_b": s_mlp_b, "seed_train": s_train, "seed_eval": s_eval}
