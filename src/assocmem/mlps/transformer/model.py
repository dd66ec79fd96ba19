"""The one-layer, one-head SSFR Transformer of seed 001 (App. A.1.2), as a ``torch.nn.Module``.

Architecture, for tokens ``t_1 .. t_T`` with frozen tied embeddings ``e_t`` (unit rows):

1. ``h_t = RMSNorm(e_t) = e_t / sqrt(mean(e_t^2) + eps)`` (no gain; the authors' norm has none);
2. one causal attention head without positional encoding, scale ``1/sqrt(d)``:
   ``a_{s,t} = softmax_t(<W_Q h_s, W_K h_t> / sqrt(d))`` over ``t <= s`` and
   ``o_s = W_O W_V sum_t a_{s,t} h_t``; ``W_V = W_O = I`` frozen by default (App. A.4.3: "freeze
   the value and output projections to identity matrices");
3. optional residual ``z_s = e_s + o_s`` (off by default, App. A.4.3), else ``z_s = o_s``;
4. projection to the sphere ``u_s = z_s / ||z_s||`` (the "unit-RMSNorm"): the MLP's input;
5. the MLP, **no MLP residual**: ``y_s = MLP(u_s)``;
6. projection to the sphere again and tied read-out: ``logits = (y / ||y||) E_fact^T``.

Read-out over the fact tokens. The logits are taken against the ``F`` fact-token rows only,
``(B, F)``, not the whole vocabulary as in the authors' code: the targets are always fact tokens,
and decoding over the fact rows is exactly the argmax of Definition 2.1 that the standalone MLP's
accuracy and margins use (:mod:`assocmem.mlps.margins.decoding`), so Transformer and MLP accuracy
are measured over the same candidates. A junk or query row can never win the argmax here; in the
authors' read-out one could, which can only lower their accuracy.

Only the query position matters for SSFR (the loss is taken at ``Q``), so :meth:`forward`,
:meth:`mlp_input` and :meth:`attention_weights` compute attention for the *last* position only:
its query against every key, one softmax over ``T`` scores and one weighted sum, with the
embeddings gathered from the precomputed normalised table. This equals the full causal forward at
the last position (the last row of a causal mask hides nothing), which :meth:`attention_pattern`
and :meth:`attention_outputs` compute for every position (tests check that both agree).

References
----------
Seed 001, App. A.1.2 (Transformer setups: frozen embeddings shared with the MLP, no positional
encoding, RMSNorm before attention, unit-RMSNorm before the MLP and the output), App. A.4.3
(attention residual off, ``W_V``, ``W_O`` frozen to the identity for the fact-adaptive criterion).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as Fn

from assocmem._checks import as_bool, as_int, as_real, token_ids
from assocmem.devices import resolve_device
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.mlps._checks import module_device, module_dtype, probe_map
from assocmem.mlps.transformer.ssfr import SSFRTask, check_embedding, check_seed

__all__ = [
    "TransformerConfig",
    "CausalAttention",
    "IdentityMLP",
    "SSFRTransformer",
    "check_tokens",
    "CHUNK_ENTRIES",
]

#: Entries of the largest ``(rows, width)`` intermediate an evaluation chunk may hold (2^24: 128 MiB
#: of float64), see :meth:`SSFRTransformer.chunk_rows`.
CHUNK_ENTRIES = 1 << 24


@dataclass(frozen=True)
class TransformerConfig:
    """Settings of :class:`SSFRTransformer`.

    Attributes
    ----------
    d : int
        Model (embedding) width, ``>= 2``.
    attention_residual : bool, default False
        Add the token's embedding to the attention output (``z = e + o``). Off for the capacity
        sweeps with the fact-adaptive criterion (App. A.4.3); the authors' pretraining keeps it.
    freeze_value_output : bool, default True
        ``W_V`` and ``W_O`` fixed to the identity (App. A.4.3). When False they are trained,
        starting from the identity (the authors draw them ``N(0, 0.02^2)``).
    dtype : torch.dtype, optional (``None``: torch's default dtype at construction, stored resolved)
        Dtype of the embeddings and attention weights (float32 or float64).
    norm_eps : float, default 1e-6
        ``eps`` of the RMSNorm and floor of the norm in the projections to the sphere.
    init_std : float, default 0.02
        ``W_Q`` and ``W_K`` start i.i.d. ``N(0, init_std^2)`` (GPT-2's initialisation, as the
        authors' code).
    device : str or torch.device, optional
        Where the model lives (:func:`assocmem.devices.resolve_device`); ``None``: torch's
        default device (``torch.get_default_device()``), ``"auto"``: CUDA if available.

    Raises
    ------
    ValueError
        On construction: a ``d`` that is not an integer ``>= 2`` (an integral float such as
        ``8.0`` is stored as the int ``8``), flags that are not bools, a dtype other than float32 /
        float64, or an ``eps`` / ``init_std`` that is not a finite real ``> 0`` (``eps >= 0``).
    """

    d: int
    attention_residual: bool = False
    freeze_value_output: bool = True
    dtype: torch.dtype | None = None
    norm_eps: float = 1e-6
    init_std: float = 0.02
    device: str | torch.device | None = None

    def __post_init__(self) -> None:
        # store the checked values: an integral float d = 8.0 becomes the int 8 (torch needs an int)
        object.__setattr__(self, "d", as_int(self.d, "d", minimum=2))
        object.__setattr__(self, "attention_residual", as_bool(self.attention_residual, "attention_residual"))
        object.__setattr__(self, "freeze_value_output", as_bool(self.freeze_value_output, "freeze_value_output"))
        object.__setattr__(self, "dtype", check_float_dtype(resolve_dtype(self.dtype)))
        object.__setattr__(self, "norm_eps", as_real(self.norm_eps, "norm_eps", minimum=0.0))
        object.__setattr__(self, "init_std", as_real(self.init_std, "init_std", minimum=0.0, strict_min=True))


class IdentityMLP(nn.Module):
    """The identity map ``R^d -> R^d``: the "MLP" of the attention-only pretraining (App. A.1.2).

    No parameters, buffers or settings: its ``state_dict`` is empty and ``IdentityMLP()`` is
    already an "empty" module on every device (the meta device included).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @property
    def num_parameters(self) -> int:
        """0: the identity has no parameters."""
        return 0


class CausalAttention(nn.Module):
    """One causal attention head without positional encoding on normalised embeddings ``h``.

    A ``state_dict`` holds the four weights and, as extra state, ``frozen_identity`` (whether
    ``W_V = W_O = I`` are frozen and skipped); :meth:`empty` builds a module to load it into.

    Parameters
    ----------
    d : int
    freeze_value_output : bool
        ``W_V = W_O = I``, not trained.
    init_std : float
    generator : torch.Generator
        CPU generator for ``W_Q`` then ``W_K`` (float64 draws, cast to ``dtype``).
    dtype : torch.dtype
        float32 or float64 (:func:`assocmem.dtypes.check_float_dtype`).

    Attributes
    ----------
    W_Q, W_K, W_V, W_O : torch.nn.Parameter, shape ``(d, d)``
        ``q = W_Q h`` (rows act on the right: ``q = h @ W_Q.T``).

    Raises
    ------
    ValueError
        ``d`` not an integer ``>= 1``, ``freeze_value_output`` not a bool, ``init_std`` not a
        finite real ``>= 0``, ``generator`` not a CPU ``torch.Generator``, or a dtype outside the
        policy.
    """

    def __init__(self, d: int, freeze_value_output: bool, init_std: float, generator: torch.Generator,
                 dtype: torch.dtype) -> None:
        super().__init__()
        d = as_int(d, "d", minimum=1)
        freeze_value_output = as_bool(freeze_value_output, "freeze_value_output")
        init_std = as_real(init_std, "init_std", minimum=0.0)
        if not isinstance(generator, torch.Generator) or generator.device.type != "cpu":
            raise ValueError(f"generator must be a CPU torch.Generator; got {generator!r}")
        dtype = check_float_dtype(dtype)
        draw = lambda: (torch.randn(d, d, generator=generator, dtype=torch.float64) * init_std).to(dtype)
        self.W_Q = nn.Parameter(draw())  # (d, d)
        self.W_K = nn.Parameter(draw())  # (d, d)
        eye = torch.eye(d, dtype=dtype)
        self.W_V = nn.Parameter(eye.clone(), requires_grad=not freeze_value_output)  # (d, d)
        self.W_O = nn.Parameter(eye.clone(), requires_grad=not freeze_value_output)  # (d, d)
        self.scale = 1.0 / math.sqrt(d)
        #: ``W_V = W_O = I`` frozen: the fast path skips them (edit them only with this flag off)
        self.frozen_identity = bool(freeze_value_output)

    @classmethod
    def empty(cls, d: int, freeze_value_output: bool = True, *, dtype: torch.dtype | None = None,
              device: str | torch.device | None = None) -> "CausalAttention":
        """A head of width ``d`` with zero weights (nothing drawn), to load a ``state_dict`` into.

        ``CausalAttention.empty(d, device="meta")`` (or inside ``with torch.device("meta"):``,
        which ``device=None`` follows) allocates nothing; ``load_state_dict(saved, assign=True)``
        then takes the saved weights (their dtype and device) and the saved ``frozen_identity``.

        Parameters
        ----------
        d : int
            Width, ``>= 1``.
        freeze_value_output : bool, default True
            As in the constructor (the loaded record replaces it).
        dtype : torch.dtype, optional
            float32 or float64; ``None`` is :func:`torch.get_default_dtype`.
        device : str, torch.device or None
            Passed to :func:`torch.zeros`; ``None`` is torch's current default device.

        Raises
        ------
        ValueError
            ``d`` not an integer ``>= 1``, ``freeze_value_output`` not a bool, or a dtype other
            than float32 / float64.
        """
        d = as_int(d, "d", minimum=1)
        frozen = as_bool(freeze_value_output, "freeze_value_output")
        dtype = check_float_dtype(torch.get_default_dtype() if dtype is None else dtype)
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            frozen_weight = frozen and name in ("W_V", "W_O")
            weight = torch.zeros(d, d, dtype=dtype, device=device)  # (d, d)
            setattr(obj, name, nn.Parameter(weight, requires_grad=not frozen_weight))
        obj.scale = 1.0 / math.sqrt(d)
        obj.frozen_identity = frozen
        return obj

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the weights: ``{"frozen_identity": bool}``."""
        return {"frozen_identity": bool(self.frozen_identity)}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record: ``frozen_identity`` and, with it, whether
        ``W_V`` and ``W_O`` take gradients.

        Raises
        ------
        ValueError
            If the record is not ``{"frozen_identity": bool}``.
        """
        if not isinstance(state, dict) or set(state) != {"frozen_identity"} or not isinstance(
                state["frozen_identity"], bool):
            raise ValueError("the extra state of a CausalAttention must be "
                             f"{{'frozen_identity': bool}}; got {state!r}")
        self.frozen_identity = state["frozen_identity"]
        self.W_V.requires_grad_(not self.frozen_identity)
        self.W_O.requires_grad_(not self.frozen_identity)

    def at_last(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention of the last position only: ``(o_T (B, d), a_T (B, T))`` from ``h`` ``(B, T, d)``.

        ``<W_Q h_T, W_K h_t> = <h_t, W_K^T W_Q h_T>``, so the keys are never projected: one
        ``(B, d)`` vector meets the ``T`` embeddings in one batched product.
        """
        q = h[:, -1] @ self.W_Q.T  # (B, d)
        kq = q @ self.W_K  # (B, d) = W_K^T q
        # broadcast-and-reduce, not bmm: for T x d blocks this small it is several times faster
        scores = (h * kq.unsqueeze(1)).sum(dim=-1) * self.scale  # (B, T)
        a = torch.softmax(scores, dim=-1)  # (B, T)
        mixed = (a.unsqueeze(2) * h).sum(dim=1)  # (B, d)
        if self.frozen_identity:  # W_V = W_O = I: nothing to apply
            return mixed, a
        return mixed @ self.W_V.T @ self.W_O.T, a

    def full(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The causal forward at every position: ``(o (B, T, d), a (B, T, T))``; ``a[b, s, t] = 0``
        for ``t > s``."""
        T = h.shape[1]
        q = h @ self.W_Q.T  # (B, T, d)
        k = h @ self.W_K.T  # (B, T, d)
        v = h @ self.W_V.T  # (B, T, d)
        scores = q @ k.transpose(1, 2) * self.scale  # (B, T, T)
        future = torch.ones(T, T, dtype=torch.bool, device=h.device).triu(1)
        a = torch.softmax(scores.masked_fill(future, -math.inf), dim=-1)  # (B, T, T)
        return (a @ v) @ self.W_O.T, a


def check_tokens(tokens: torch.Tensor, task: SSFRTask, *, ssfr: bool = True) -> torch.Tensor:
    """``tokens`` checked: an integer tensor ``(B, T)``, ``B, T >= 1``, ids in ``[0, vocab_size)``.

    Parameters
    ----------
    tokens : torch.Tensor, shape ``(B, T)``, integer
    task : SSFRTask
    ssfr : bool, default True
        Also require SSFR sequences: ``T = 2 J + 2`` and the query token ``Q`` last. The
        query-position methods (:meth:`SSFRTransformer.forward`, ``mlp_input``,
        ``attention_weights``, ``query_attention_output``) answer for ``Q`` and require it; the
        every-position methods (``attention_pattern``, ``attention_outputs``) take any causal
        sequence and pass False.

    Returns
    -------
    torch.Tensor, int64, the same shape

    Raises
    ------
    ValueError
        Not a tensor, not an integer dtype, not 2-D, empty, or an id out of range; with ``ssfr``,
        a length other than ``2 J + 2`` or a last token that is not ``Q``.
    """
    tokens = token_ids(tokens, task.vocab_size)
    if ssfr:
        if tokens.shape[1] != task.seq_len:
            raise ValueError(f"SSFR sequences have length 2 J + 2 = {task.seq_len} (junk, key, junk, Q); "
                             f"got length {tokens.shape[1]}")
        if bool((tokens[:, -1] != task.query_token).any()):
            raise ValueError(f"SSFR sequences end with the query token Q = {task.query_token}; "
                             f"{int((tokens[:, -1] != task.query_token).sum())} of {tokens.shape[0]} do not")
    return tokens.to(torch.int64)


def _check_mlp(mlp, d: int, device: torch.device, dtype: torch.dtype) -> nn.Module:
    """``mlp`` checked to be a module mapping ``(n, d)`` to ``(n, d)``; then frozen and moved in place.

    Every check runs before the module is changed: a refused module keeps its ``requires_grad``
    flags, its device and its training mode (the probe runs where the module already is).
    """
    if not isinstance(mlp, nn.Module):
        raise ValueError(f"mlp must be a torch.nn.Module; got {type(mlp).__name__}")
    width = getattr(getattr(mlp, "config", None), "d", None)
    if width is not None and width != d:
        raise ValueError(f"the MLP's input width is {width}; the Transformer's width is d = {d}")
    mlp_dtype = module_dtype(mlp, dtype)
    if mlp_dtype not in (torch.float32, torch.float64):
        raise ValueError(f"the MLP's weights must be float32 or float64; got {mlp_dtype}")
    probe_map(mlp, d, "the MLP", dtype=mlp_dtype, device=module_device(mlp, device))
    mlp.requires_grad_(False)
    mlp.to(device)
    return mlp


def _after_load(model: "SSFRTransformer", incompatible) -> None:
    """``load_state_dict``'s post hook: ``config.dtype`` / ``config.device`` name where the loaded
    embeddings are (``assign=True`` takes the saved tensors), and the MLP's input dtype follows
    the loaded MLP."""
    E = model.embedding
    try:  # "auto" on this machine, or the name of the embeddings' device: nothing to rewrite
        named = resolve_device(model.config.device, dtype=E.dtype)
        here = named.type == E.device.type and named.index in (None, E.device.index)
    except (ValueError, RuntimeError):
        here = False
    if E.dtype != model.config.dtype or not here:
        model.config = dataclasses.replace(model.config, dtype=E.dtype, device=str(E.device))
    model._mlp_dtype = module_dtype(model.mlp, model.config.dtype)


class SSFRTransformer(nn.Module):
    """One-layer, one-head Transformer for SSFR with a frozen, swappable MLP (seed 001, App. A.1.2).

    See the module docstring for the architecture. Only the attention weights are trainable
    (:meth:`attention_parameters`); the embeddings are frozen buffers and the MLP is frozen.

    A ``state_dict`` holds the embeddings, the attention weights, the MLP's weights and, as extra
    state, the config and the task (every field but the device: a loaded model stays where it
    was built, and its ``config.device`` and ``config.dtype`` then name where its embeddings
    are). :meth:`empty` builds a model without values to load it into.

    Parameters
    ----------
    config : TransformerConfig
    embedding : torch.Tensor, shape ``(vocab_size, d)``
        The frozen tied token embeddings (:func:`~assocmem.mlps.transformer.ssfr.embedding_table`),
        cast to ``config.dtype``; fact rows first.
    mlp : torch.nn.Module, optional
        Maps ``(n, d) -> (n, d)``. ``None`` inserts :class:`IdentityMLP`. Once every argument is
        checked, the module is frozen (``requires_grad_(False)``) and moved to the model's device
        *in place*; a refused module is left unchanged. It keeps its own dtype (its input is cast
        to it, its output back to ``config.dtype``).
    task : SSFRTask
        Keyword-only, required: gives ``F`` (the read-out rows) and the vocabulary.
    seed : int, default 0
        Seed of ``W_Q`` and ``W_K`` (drawn on the CPU in float64, then cast).
    attention : CausalAttention, optional
        Share an existing attention module instead of drawing one (what :meth:`with_mlp` does).

    Raises
    ------
    ValueError
        A config that is not a TransformerConfig, a table of the wrong shape (its row count must be
        ``task.vocab_size``, its width ``config.d``) or with non-finite entries, an MLP that does
        not map ``R^d -> R^d``, or a seed outside ``[0, 2^63)``.
    """

    def __init__(self, config: TransformerConfig, embedding: torch.Tensor, mlp: nn.Module | None = None, *,
                 task: SSFRTask, seed: int = 0, attention: CausalAttention | None = None) -> None:
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise ValueError(f"config must be a TransformerConfig; got {type(config).__name__}")
        if not isinstance(task, SSFRTask):
            raise ValueError(f"task must be an SSFRTask; got {type(task).__name__}")
        E = check_embedding(embedding, task, config.d)
        self.config, self.task = config, task
        dev = resolve_device(config.device, dtype=config.dtype)
        E = E.to(device=dev, dtype=config.dtype)
        self.register_buffer("embedding", E, persistent=True)  # (vocab, d)
        self.register_buffer("normed", Fn.rms_norm(E, (config.d,), eps=config.norm_eps))  # (vocab, d)
        if attention is None:
            gen = torch.Generator(device="cpu").manual_seed(check_seed(seed))
            attention = CausalAttention(config.d, config.freeze_value_output, config.init_std, gen, config.dtype)
            attention.to(dev)
        self.attention = attention
        self.mlp = _check_mlp(IdentityMLP() if mlp is None else mlp, config.d, dev, config.dtype)
        self._mlp_dtype = module_dtype(self.mlp, config.dtype)  # the MLP's input is cast to it
        self.register_load_state_dict_post_hook(_after_load)

    @classmethod
    def empty(cls, config: TransformerConfig, task: SSFRTask, mlp: nn.Module | None = None, *,
              device: str | torch.device | None = None) -> "SSFRTransformer":
        """A model with zero embeddings and attention weights (nothing drawn), to load a
        ``state_dict`` into.

        ``SSFRTransformer.empty(config, task, mlp, device="meta")`` (or inside
        ``with torch.device("meta"):``, which ``device=None`` follows) allocates nothing;
        ``load_state_dict(saved, assign=True)`` then takes the saved tensors (their dtype and
        device), config and task.

        Parameters
        ----------
        config : TransformerConfig
            Its ``d``, ``dtype`` and ``freeze_value_output`` shape the empty model; its
            ``device`` is replaced by the device the model is built on.
        task : SSFRTask
            Gives the embedding's row count ``vocab_size``.
        mlp : torch.nn.Module, optional
            An MLP of the saved one's shape, e.g. ``BilinearMLP.empty(d, m, device="meta")``;
            ``None`` is :class:`IdentityMLP`. Used as it is (not probed, not moved: build it on
            ``device``), frozen in place.
        device : str, torch.device or None
            Passed to :func:`torch.zeros`; ``None`` is torch's current default device.

        Raises
        ------
        ValueError
            A config that is not a TransformerConfig, a task that is not an SSFRTask, an MLP that
            is not a module or whose ``config.d`` is not ``config.d``.
        """
        if not isinstance(config, TransformerConfig):
            raise ValueError(f"config must be a TransformerConfig; got {type(config).__name__}")
        if not isinstance(task, SSFRTask):
            raise ValueError(f"task must be an SSFRTask; got {type(task).__name__}")
        mlp = IdentityMLP() if mlp is None else mlp
        if not isinstance(mlp, nn.Module):
            raise ValueError(f"mlp must be a torch.nn.Module; got {type(mlp).__name__}")
        width = getattr(getattr(mlp, "config", None), "d", None)
        if width is not None and width != config.d:
            raise ValueError(f"the MLP's input width is {width}; the Transformer's width is d = {config.d}")
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        E = torch.zeros(task.vocab_size, config.d, dtype=config.dtype, device=device)  # (vocab, d)
        obj.config = dataclasses.replace(config, device=str(E.device))
        obj.task = task
        obj.register_buffer("embedding", E, persistent=True)
        obj.register_buffer("normed", torch.zeros_like(E))  # (vocab, d)
        obj.attention = CausalAttention.empty(config.d, config.freeze_value_output, dtype=config.dtype,
                                              device=E.device)
        obj.mlp = mlp.requires_grad_(False)
        obj._mlp_dtype = module_dtype(obj.mlp, config.dtype)
        obj.register_load_state_dict_post_hook(_after_load)
        return obj

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the tensors: ``{"config": dict, "task": dict}``, the
        config's fields but ``device`` and the task's fields."""
        config = {f.name: getattr(self.config, f.name) for f in dataclasses.fields(self.config)
                  if f.name != "device"}
        return {"config": config, "task": dataclasses.asdict(self.task)}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record: the saved config (on this model's device)
        and task replace this model's.

        Raises
        ------
        ValueError
            If the record is not ``{"config": dict, "task": dict}`` of valid
            :class:`TransformerConfig` / :class:`SSFRTask` fields, or the saved ``d`` or
            ``vocab_size`` is not this model's.
        """
        ok = isinstance(state, dict) and set(state) == {"config", "task"} and all(
            isinstance(state[k], dict) for k in state)
        if not ok:
            raise ValueError("the extra state of an SSFRTransformer must be {'config': dict, 'task': dict}; "
                             f"got {state!r}")
        try:
            config = TransformerConfig(**state["config"], device=self.config.device)
            task = SSFRTask(**state["task"])
        except TypeError as exc:
            raise ValueError(f"the saved config or task is not valid: {exc}") from None
        if config.d != self.config.d or task.vocab_size != self.task.vocab_size:
            raise ValueError(f"the saved model has d = {config.d} and vocab_size = {task.vocab_size}; this one "
                             f"d = {self.config.d} and vocab_size = {self.task.vocab_size}")
        self.config, self.task = config, task

    # ------------------------------------------------------------------ the query position

    def _block(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(u (B, d), a (B, T))``: the MLP input and the attention weights at the last position."""
        h = Fn.embedding(tokens, self.normed)  # (B, T, d), frozen: no gradient to the table
        o, a = self.attention.at_last(h)
        if self.config.attention_residual:
            o = o + Fn.embedding(tokens[:, -1], self.embedding)
        return Fn.normalize(o, dim=-1, eps=self.config.norm_eps), a

    def _logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, F)`` at the last position, without input checks (the training loop's path)."""
        u, _ = self._block(tokens)
        y = self.mlp(u.to(self._mlp_dtype)).to(self.config.dtype)  # (B, d), in the MLP's dtype then back
        y = Fn.normalize(y, dim=-1, eps=self.config.norm_eps)
        return y @ self.embedding[: self.task.num_facts].T  # (B, F)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits over the ``F`` fact tokens at the query (last) position.

        Parameters
        ----------
        tokens : torch.Tensor, shape ``(B, T)``, integer
            SSFR sequences: ids in ``[0, vocab_size)``, ``T = 2J + 2``, ending with ``Q``.

        Returns
        -------
        torch.Tensor, shape ``(B, F)``, ``config.dtype``
            ``<unit(MLP(u)), e_j>`` for every fact token ``j``: cosines, in ``[-1, 1]``.

        Raises
        ------
        ValueError
            Tokens that are not an integer ``(B, T)`` tensor with ids in range, of length
            ``2 J + 2`` and ending with ``Q`` (:func:`check_tokens`).
        """
        return self._logits(check_tokens(tokens, self.task).to(self.embedding.device))

    def mlp_input(self, tokens: torch.Tensor) -> torch.Tensor:
        """The MLP's input at the query position: ``u = z / ||z||``, shape ``(B, d)`` (unit rows).

        Raises
        ------
        ValueError
            As :meth:`forward`.
        """
        return self._block(check_tokens(tokens, self.task).to(self.embedding.device))[0]

    def attention_weights(self, tokens: torch.Tensor) -> torch.Tensor:
        """Attention weights of the query (last) position over every position, ``(B, T)``.

        Rows sum to 1. Equal to ``attention_pattern(tokens)[:, -1]``.

        Raises
        ------
        ValueError
            As :meth:`forward`.
        """
        return self._block(check_tokens(tokens, self.task).to(self.embedding.device))[1]

    # ------------------------------------------------------------------ every position

    def attention_pattern(self, tokens: torch.Tensor) -> torch.Tensor:
        """The full causal attention matrix ``a[b, s, t]``, shape ``(B, T, T)``; zero above the diagonal.

        Any causal sequence (any ``T >= 1``, any last token) is accepted.

        Raises
        ------
        ValueError
            Tokens that are not an integer ``(B, T)`` tensor with ids in range.
        """
        tokens = check_tokens(tokens, self.task, ssfr=False).to(self.embedding.device)
        return self.attention.full(Fn.embedding(tokens, self.normed))[1]

    def attention_outputs(self, tokens: torch.Tensor) -> torch.Tensor:
        """The attention layer's output ``o_s`` at every position (before residual and norm), ``(B, T, d)``.

        Position ``s`` depends on tokens ``1 .. s`` only (causal mask). Any causal sequence is
        accepted.

        Raises
        ------
        ValueError
            Tokens that are not an integer ``(B, T)`` tensor with ids in range.
        """
        tokens = check_tokens(tokens, self.task, ssfr=False).to(self.embedding.device)
        return self.attention.full(Fn.embedding(tokens, self.normed))[0]

    def query_attention_output(self, tokens: torch.Tensor) -> torch.Tensor:
        """``o_T``, the attention output at the last position by the fast path, ``(B, d)``.

        Equal to ``attention_outputs(tokens)[:, -1]``.
        """
        tokens = check_tokens(tokens, self.task).to(self.embedding.device)
        return self.attention.at_last(Fn.embedding(tokens, self.normed))[0]

    # ------------------------------------------------------------------ parameters and swaps

    def attention_parameters(self) -> list[nn.Parameter]:
        """The trainable parameters: ``W_Q``, ``W_K`` (and ``W_V``, ``W_O`` when not frozen)."""
        return [p for p in self.attention.parameters() if p.requires_grad]

    def with_mlp(self, mlp: nn.Module | None) -> "SSFRTransformer":
        """A model that *shares* this one's attention module and embeddings, with another MLP.

        The fact-adaptive swap of App. A.4.3: no attention weight is copied or changed (the two
        models hold the same :class:`CausalAttention` object; training one trains both).

        The MLP keeps its own dtype (float32 or float64); its input is cast to it and its output
        back to ``config.dtype``.

        Raises
        ------
        ValueError
            ``None`` is allowed (the identity); otherwise an MLP that is not a module, whose weights
            are not float32 / float64, or that does not map ``R^d -> R^d``.
        """
        return SSFRTransformer(self.config, self.embedding, mlp, task=self.task, attention=self.attention)

    @property
    def num_mlp_parameters(self) -> int:
        """The MLP's parameter count: its ``num_parameters`` if it has one (``3 m d`` for the book's
        MLPs), else the number of entries of its parameters."""
        n = getattr(self.mlp, "num_parameters", None)
        return int(n) if n is not None else sum(p.numel() for p in self.mlp.parameters())

    def chunk_rows(self, n: int) -> int:
        """Rows per evaluation chunk of ``n`` sequences, so that no ``(rows, width)`` intermediate
        exceeds :data:`CHUNK_ENTRIES` entries; the width is the largest of the MLP's hidden width
        (``config.m``, or the rows of ``W_up``), ``F`` and ``T d``."""
        hidden = getattr(getattr(self.mlp, "config", None), "m", None)
        if hidden is None and hasattr(self.mlp, "W_up"):
            hidden = self.mlp.W_up.shape[0]
        width = max(int(hidden or 1), self.task.num_facts, self.task.seq_len * self.config.d)
        return max(1, min(int(n), CHUNK_ENTRIES // width))

    @property
    def device(self) -> torch.device:
        """The device of the embeddings and attention weights."""
        return self.embedding.device

    def extra_repr(self) -> str:
        c, t = self.config, self.task
        return (f"d={c.d}, F={t.num_facts}, V_J={t.junk_vocab}, J={t.junk_length}, "
                f"attention_residual={c.attention_residual}, freeze_value_output={c.freeze_value_output}, "
                f"dtype={c.dtype}")
