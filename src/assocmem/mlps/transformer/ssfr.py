"""Synthetic Sequential Factual Recall (SSFR): the task, its token embeddings and its batches.

An SSFR sequence hides one *key* token among junk tokens and ends with a fixed *query* token; the
model must answer, at the query position, with the key's *value* token under a fact map
``f : [F] -> [F]`` (seed 001, Definition 3.2, App. A.2.1):

    j_1 ... j_J   k_i   j_{J+1} ... j_{2J}   Q   ->   v_{f(i)}

Token ids. Fact tokens are ``0 .. F-1`` (a key token ``i`` and a value token ``f(i)`` are both fact
tokens: keys and values share one table, as in the authors' capacity sweeps), junk tokens are
``F .. F+V_J-1`` and the query token is ``F+V_J``; so ``vocab_size = F + V_J + 1``. The sequence
fed to the model is the ``2J + 2`` tokens up to and including ``Q``; the value is the target of the
prediction at ``Q`` (the only position with a loss), not an input.

Junk length. ``J`` is the length of *each* junk string (prefix and suffix), as in App. A.2.1
("junk-prefixes and junk-suffixes of length 9") and the authors' batch generator; Definition 3.2
writes ``J/2 + J/2``. The book follows the appendix: a sequence holds ``2J`` junk tokens.

Embeddings. :func:`embedding_table` draws every token's embedding uniform on the unit sphere
``S^{d-1}``; the fact rows are the keys *and* the values (tied), so a fact-storing MLP for SSFR is
the MLP of the :class:`~assocmem.mlps.facts.FactSet` returned by :func:`fact_set` and every builder
of :mod:`assocmem.mlps.mlp` applies unchanged.

Evaluation. The authors estimate accuracy on sampled batches; :func:`ssfr_eval_batch` evaluates
*every* key, each in ``contexts_per_key`` sampled junk contexts.

References
----------
Seed 001, Definition 3.2 (SSFR), App. A.1.2 (Transformer setups), A.2.1 (the task and its default
``J = V_J = 9``), A.4.3 (``J = 9``, ``V_J = 9`` in the capacity sweeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch

from assocmem._checks import as_int, positive_int, seed_int
from assocmem.devices import resolve_device
from assocmem.mlps.facts import FactSet

__all__ = [
    "SSFRTask",
    "SSFRBatch",
    "embedding_table",
    "fact_map",
    "identity_map",
    "fact_set",
    "check_mapping",
    "check_embedding",
    "ssfr_batch",
    "ssfr_eval_batch",
    "check_seed",
    "MAX_SEED",
]

#: Seeds of this package lie in ``[0, MAX_SEED)``: what :class:`torch.Generator` and
#: :class:`numpy.random.SeedSequence` both take (the latter refuses negative entropy).
MAX_SEED = 2**63


def check_seed(seed: object, name: str = "seed") -> int:
    """``seed`` as an int in ``[0, 2^63)``: a Python or numpy integer, not a bool and not a float.

    One rule for every seed of :mod:`assocmem.mlps.transformer` (embeddings, maps, junk,
    training, :func:`~assocmem.mlps.transformer.training.seed_stream`), so that a seed one function
    takes is never refused by another.

    Raises
    ------
    ValueError
        ``"seed must be an integer; got ..."`` or ``"seed must lie in [0, 2^63); got ..."``.
    """
    seed = seed_int(seed)
    if not 0 <= seed < MAX_SEED:
        raise ValueError(f"{name} must lie in [0, 2^63); got {seed}")
    return seed


@dataclass(frozen=True)
class SSFRTask:
    """The SSFR task's sizes: ``F`` facts, ``V_J`` junk tokens, junk strings of length ``J``.

    Parameters
    ----------
    num_facts : int
        ``F >= 2`` fact tokens (keys and values share them).
    junk_vocab : int
        ``V_J``, the number of distinct junk tokens; ``>= 1`` when ``junk_length > 0`` (``0`` is
        allowed with no junk).
    junk_length : int
        ``J >= 0``, the length of the junk prefix and of the junk suffix.

    Raises
    ------
    ValueError
        ``F < 2``, ``J < 0``, ``V_J < 0``, ``V_J < 1`` with ``J > 0``, or a size that is not an
        integer (booleans and non-integral floats are refused).

    References
    ----------
    Seed 001, Definition 3.2 and App. A.2.1.
    """

    num_facts: int  # F
    junk_vocab: int  # V_J
    junk_length: int  # J (each of prefix and suffix)

    def __post_init__(self) -> None:
        F = as_int(self.num_facts, "num_facts")
        VJ = as_int(self.junk_vocab, "junk_vocab")
        J = as_int(self.junk_length, "junk_length")
        if F < 2:
            raise ValueError(f"SSFR needs at least two facts (num_facts = F >= 2); got {F}")
        if J < 0:
            raise ValueError(f"junk_length J must be >= 0; got {J}")
        if VJ < 0:
            raise ValueError(f"junk_vocab V_J must be >= 0; got {VJ}")
        if J > 0 and VJ < 1:
            raise ValueError(f"junk_length J = {J} > 0 needs a junk vocabulary V_J >= 1; got {VJ}")
        for name, v in (("num_facts", F), ("junk_vocab", VJ), ("junk_length", J)):
            object.__setattr__(self, name, v)

    @property
    def vocab_size(self) -> int:
        """``F + V_J + 1``: fact tokens, junk tokens and the query token."""
        return self.num_facts + self.junk_vocab + 1

    @property
    def seq_len(self) -> int:
        """``2 J + 2``: junk prefix, key, junk suffix, query."""
        return 2 * self.junk_length + 2

    @property
    def query_token(self) -> int:
        """The id of the query token, ``F + V_J``."""
        return self.num_facts + self.junk_vocab

    @property
    def key_position(self) -> int:
        """The position of the key in a sequence, ``J``."""
        return self.junk_length

    @property
    def query_position(self) -> int:
        """The position of the query token, ``2 J + 1`` (the last one)."""
        return 2 * self.junk_length + 1


class SSFRBatch(NamedTuple):
    """A batch of SSFR sequences.

    Attributes
    ----------
    tokens : torch.Tensor, shape ``(B, 2J + 2)``, int64
        ``junk^J key junk^J Q``.
    keys : torch.Tensor, shape ``(B,)``, int64
        The key token of each sequence (in ``[0, F)``).
    targets : torch.Tensor, shape ``(B,)``, int64
        ``f(key)``, the value token to predict at ``Q``.
    """

    tokens: torch.Tensor
    keys: torch.Tensor
    targets: torch.Tensor

    def to(self, device: str | torch.device) -> "SSFRBatch":
        """The batch on another device (``"auto"`` allowed)."""
        dev = resolve_device(device)
        return SSFRBatch(self.tokens.to(dev), self.keys.to(dev), self.targets.to(dev))


def _task(task) -> SSFRTask:
    if not isinstance(task, SSFRTask):
        raise ValueError(f"task must be an SSFRTask; got {type(task).__name__}")
    return task


def embedding_table(task: SSFRTask, d: int, seed: int = 0) -> torch.Tensor:
    """Token embeddings uniform on the unit sphere: one row per token of ``task``.

    Rows ``0 .. F-1`` are the fact tokens' embeddings (the keys *and* the values), then the junk
    tokens', then the query token's. Drawn on the CPU in float64 from one generator seeded with
    ``seed`` (normalised Gaussians), so a seed gives the same table on every machine.

    Parameters
    ----------
    task : SSFRTask
    d : int
        Embedding width, ``d >= 2``.
    seed : int, default 0

    Returns
    -------
    torch.Tensor, shape ``(vocab_size, d)``, float64, CPU, unit rows

    Raises
    ------
    ValueError
        Not an SSFRTask, ``d < 2``, or a seed outside ``[0, 2^63)`` (:func:`check_seed`).

    References
    ----------
    Seed 001, App. A.1.2 (frozen tied embeddings shared with the MLP) and A.3.1 (keys and values
    uniform on the sphere).
    """
    task = _task(task)
    d = as_int(d, "d", minimum=2)
    gen = torch.Generator(device="cpu").manual_seed(check_seed(seed))
    x = torch.randn(task.vocab_size, d, generator=gen, dtype=torch.float64)  # (vocab, d)
    return x / torch.linalg.vector_norm(x, dim=1, keepdim=True)


def fact_map(task: SSFRTask, seed: int = 0) -> torch.Tensor:
    """A random permutation ``f`` of ``[F]``: key token ``i`` has value token ``f(i)``.

    Parameters
    ----------
    task : SSFRTask
    seed : int, default 0

    Returns
    -------
    torch.Tensor, shape ``(F,)``, int64, CPU

    Raises
    ------
    ValueError
        Not an SSFRTask or a seed outside ``[0, 2^63)`` (:func:`check_seed`).

    References
    ----------
    Seed 001, App. A.1.2 and A.4.3 ("random-permutation fact set").
    """
    task = _task(task)
    gen = torch.Generator(device="cpu").manual_seed(check_seed(seed))
    return torch.randperm(task.num_facts, generator=gen)


def identity_map(task: SSFRTask) -> torch.Tensor:
    """The identity map ``f(i) = i`` of the dummy SSFR task used to pretrain attention (App. A.1.2).

    Returns
    -------
    torch.Tensor, shape ``(F,)``, int64
    """
    return torch.arange(_task(task).num_facts, dtype=torch.int64)


def check_mapping(mapping: object, task: SSFRTask) -> torch.Tensor:
    """``mapping`` checked to be a permutation of ``[F]`` (a bijection, Def. 3.2).

    Returns
    -------
    torch.Tensor, shape ``(F,)``, int64, on the mapping's device

    Raises
    ------
    ValueError
        Not a tensor, not an integer dtype, the wrong shape, or not a permutation of ``[F]``.
    """
    task = _task(task)
    if not isinstance(mapping, torch.Tensor):
        raise ValueError(f"mapping must be a torch.Tensor; got {type(mapping).__name__}")
    if mapping.is_floating_point() or mapping.is_complex() or mapping.dtype == torch.bool:
        raise ValueError(f"mapping must be an integer tensor; got {mapping.dtype}")
    F = task.num_facts
    if mapping.shape != (F,):
        raise ValueError(f"mapping must have shape (F,) = ({F},); got {tuple(mapping.shape)}")
    f = mapping.to(torch.int64)
    if not torch.equal(torch.sort(f).values.cpu(), torch.arange(F)):
        raise ValueError(f"mapping must be a permutation of [0, F) = [0, {F}) (a bijection of the facts)")
    return f


def check_embedding(embedding: object, task: SSFRTask, d: int | None = None) -> torch.Tensor:
    """``embedding`` checked to be a finite ``(vocab_size, d)`` floating table (float32 / float64).

    Raises
    ------
    ValueError
        Not a tensor, not 2-D, a row count other than ``task.vocab_size``, a width other than
        ``d`` (when given), non-floating or float16 / bfloat16, or non-finite entries.
    """
    task = _task(task)
    if not isinstance(embedding, torch.Tensor):
        raise ValueError(f"embedding must be a torch.Tensor; got {type(embedding).__name__}")
    if embedding.dim() != 2:
        raise ValueError(f"embedding must be 2-D (vocab_size, d); got shape {tuple(embedding.shape)}")
    if embedding.shape[0] != task.vocab_size:
        raise ValueError(
            f"embedding must have one row per token: vocab_size = F + V_J + 1 = {task.vocab_size} rows; "
            f"got {embedding.shape[0]}"
        )
    if d is not None and embedding.shape[1] != d:
        raise ValueError(f"embedding width must be d = {d}; got {embedding.shape[1]}")
    if embedding.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"embedding must be float32 or float64; got {embedding.dtype}")
    if not bool(torch.isfinite(embedding).all()):
        raise ValueError("embedding contains non-finite entries (nan or inf)")
    return embedding


def fact_set(embedding: torch.Tensor, task: SSFRTask, mapping: torch.Tensor) -> FactSet:
    """The fact set an MLP must store for SSFR: keys and values are the fact-token rows.

    Parameters
    ----------
    embedding : torch.Tensor, shape ``(vocab_size, d)``
        From :func:`embedding_table` (unit rows).
    task : SSFRTask
    mapping : torch.Tensor, shape ``(F,)``
        A permutation of ``[F]``.

    Returns
    -------
    FactSet
        ``keys = values = embedding[:F]`` ``(F, d)``, ``mapping = f``: fact ``i`` maps key row
        ``i`` to value row ``f(i)``, decoded against every fact row. Same dtype and device as
        ``embedding``.

    Raises
    ------
    ValueError
        A malformed table (:func:`check_embedding`) or map (:func:`check_mapping`), or fact rows
        that are not unit (:class:`~assocmem.mlps.facts.FactSet`).
    """
    task = _task(task)
    E = check_embedding(embedding, task)
    f = check_mapping(mapping, task).to(E.device)
    rows = E[: task.num_facts]  # (F, d)
    return FactSet(rows, rows, f, unit_norm=True)


def _draw(task: SSFRTask, keys: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Tokens ``(B, 2J+2)`` with the given keys ``(B,)`` and junk drawn from ``gen`` (CPU)."""
    B, J = keys.shape[0], task.junk_length
    tokens = torch.empty(B, task.seq_len, dtype=torch.int64)
    if J > 0:
        junk = torch.randint(task.num_facts, task.num_facts + task.junk_vocab, (B, 2 * J), generator=gen)
        tokens[:, :J] = junk[:, :J]
        tokens[:, J + 1 : 2 * J + 1] = junk[:, J:]
    tokens[:, J] = keys
    tokens[:, -1] = task.query_token
    return tokens


def ssfr_batch(task: SSFRTask, mapping: torch.Tensor, batch_size: int, generator: torch.Generator,
               device: str | torch.device | None = None) -> SSFRBatch:
    """A training batch: keys uniform on ``[F]``, junk i.i.d. uniform on the junk vocabulary.

    Draw order from ``generator`` (a CPU ``torch.Generator``): the ``B`` keys, then the ``B x 2J``
    junk tokens (prefix then suffix of each row). The batch is drawn on the CPU and moved to
    ``device``, so a seed gives the same batches on every device.

    Parameters
    ----------
    task : SSFRTask
    mapping : torch.Tensor, shape ``(F,)``
        A permutation of ``[F]``.
    batch_size : int
        ``B >= 1``.
    generator : torch.Generator
        A CPU generator (the caller owns its state).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    SSFRBatch
        ``tokens`` ``(B, 2J+2)``, ``keys`` ``(B,)``, ``targets = mapping[keys]`` ``(B,)``.

    Raises
    ------
    ValueError
        A bad task or map, ``B < 1``, or a generator that is not a CPU ``torch.Generator``.

    References
    ----------
    Seed 001, Definition 3.2 (``j_t`` i.i.d. uniform on ``[V_J]``) and App. A.2.1.
    """
    device = resolve_device(device)
    task = _task(task)
    f = check_mapping(mapping, task).cpu()
    B = positive_int("batch_size", batch_size)
    if not isinstance(generator, torch.Generator) or generator.device.type != "cpu":
        raise ValueError("generator must be a CPU torch.Generator")
    return _sample(task, f, B, generator).to(device)


def _sample(task: SSFRTask, f: torch.Tensor, B: int, generator: torch.Generator) -> SSFRBatch:
    """:func:`ssfr_batch` on the CPU without argument checks (the training loop's path)."""
    keys = torch.randint(task.num_facts, (B,), generator=generator)
    return SSFRBatch(_draw(task, keys, generator), keys, f[keys])


def ssfr_eval_batch(task: SSFRTask, mapping: torch.Tensor, contexts_per_key: int, seed: int = 0,
                    device: str | torch.device | None = None) -> SSFRBatch:
    """Every key, each in ``contexts_per_key`` sampled junk contexts (key-major order).

    Row ``i * C + c`` holds key ``i`` in its ``c``-th context, so per-key results reshape to
    ``(F, C)``. The junk is drawn on the CPU from a generator seeded with ``seed``.

    Parameters
    ----------
    task : SSFRTask
    mapping : torch.Tensor, shape ``(F,)``
    contexts_per_key : int
        ``C >= 1``.
    seed : int, default 0
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

    Returns
    -------
    SSFRBatch
        ``F C`` sequences.

    Raises
    ------
    ValueError
        A bad task or map, ``C < 1``, or a seed outside ``[0, 2^63)`` (:func:`check_seed`).
    """
    device = resolve_device(device)
    task = _task(task)
    f = check_mapping(mapping, task).cpu()
    C = positive_int("contexts_per_key", contexts_per_key)
    gen = torch.Generator(device="cpu").manual_seed(check_seed(seed))
    keys = torch.arange(task.num_facts, dtype=torch.int64).repeat_interleave(C)  # (F C,)
    return SSFRBatch(_draw(task, keys, gen), keys, f[keys]).to(device)
