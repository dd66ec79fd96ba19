"""The one-layer book-author language model of seed 001 (App. A.4.5), with a swappable fact expert.

For tokens ``t_1 .. t_T`` with frozen tied embeddings ``e_t`` (rows of ``E``, ``(V, d)``):

1. ``z_t = RMSNorm_attn(e_t)`` (trainable gain);
2. learned nonlinear query and key maps, ``q_t = W_Q2 GELU(W_Q1 LN(z_t))``,
   ``k_t = W_K2 GELU(W_K1 LN(z_t))`` (LN: a trainable LayerNorm), rotated by RoPE at position
   ``t``; values ``v_t = z_t`` (``W_V = I``);
3. causal softmax attention, scale ``1/sqrt(d)``: ``x_t = sum_{s<=t} softmax_s(q_t.k_s/sqrt(d)) v_s``,
   output projection the identity, **no attention residual**;
4. the two-expert feed-forward, **no MLP residual**:
   ``y_t = alpha_t f_fact(x~_t) + (1 - alpha_t) f_aux(x_t)``, ``alpha_t = sigmoid(g_2 GELU(g_1 x_t))``,
   where ``x~_t = x_t / ||x_t||`` is the frozen pre-expert normalisation, ``f_fact`` the frozen
   fact-storing MLP (any of the book's memories mapping ``R^d -> R^d``) and
   ``f_aux(x) = x U V`` a trainable rank-``r`` expert (``r = 8`` in the seed);
5. ``logits_t = RMSNorm_out(y_t) E^T`` (trainable gain, tied read-out over the whole vocabulary).

The frozen pre-expert norm. Seed 001 freezes "the RMSNorm before the MLP"; a gain-free RMSNorm
maps to the sphere of radius ``sqrt(d)``. The fact expert is built on the *normalised* book
embeddings (unit keys, App. A.4.5), so the book projects to the unit sphere instead (the
"unit-RMSNorm" of the SSFR Transformer, :mod:`assocmem.mlps.transformer.model`): the expert then
sees inputs on the sphere its keys lie on. The two differ by the constant factor ``sqrt(d)``.

Swapping. :meth:`EditingLM.with_fact_expert` returns a model that *shares* every trained module
and the embeddings with this one and holds another fact expert: MLP swapping (seed 001, Sec. 5.2)
with no change to any Transformer weight.

References
----------
Seed 001, App. A.4.5 ("Model Parameterization": frozen tied embeddings, no attention or MLP
residual, RoPE, frozen pre-MLP RMSNorm, RMSNorm before attention and head, ``W_V = W_O = I``,
``d_model = 256``, the nonlinear query/key maps, the two-expert FFN with a rank-8 auxiliary expert
and a scalar sigmoid router; Kaiming-uniform embeddings). J. Su et al., "RoFormer: Enhanced
Transformer with Rotary Position Embedding" (2021), eq. (34) (RoPE, rotating pairs of coordinates).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as Fn

from assocmem._checks import as_int, as_real, seed_int, token_ids
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.mlps._checks import module_device, probe_map

__all__ = ["EditingLMConfig", "EditingLM", "rope", "kaiming_embedding", "check_lm_tokens"]


@dataclass(frozen=True)
class EditingLMConfig:
    """Settings of :class:`EditingLM`.

    Attributes
    ----------
    vocab_size : int
        ``V >= 2`` (the corpus's vocabulary, :class:`~assocmem.mlps.editing.data.BookCorpus`).
    d : int, default 256
        Model width (seed 001: ``d_model = 256``); even (RoPE rotates pairs).
    qk_hidden : int, default 256
        Hidden width of the nonlinear query and key maps (``W_Q1``: ``d -> qk_hidden``).
    aux_rank : int, default 8
        Rank ``r`` of the auxiliary expert ``x U V`` (seed 001: 8).
    router_hidden : int, default 64
        Hidden width of the router ``g_2 GELU(g_1 x)`` (the seed does not give it).
    rope_base : float, default 10000
        RoPE's base ``theta``: pair ``i`` turns by ``t * theta^(-2i/d)`` at position ``t``.
    norm_eps : float, default 1e-6
    dtype : torch.dtype, optional
        Dtype of the trainable weights and embeddings (float32 or float64); ``None``: torch's
        default dtype at construction (``torch.get_default_dtype()``), stored resolved.

    Raises
    ------
    ValueError
        On construction: sizes that are not positive integers, an odd ``d``, ``vocab_size < 2``,
        a non-positive ``rope_base``, a negative ``norm_eps``, or a dtype other than float32/64.
    """

    vocab_size: int
    d: int = 256
    qk_hidden: int = 256
    aux_rank: int = 8
    router_hidden: int = 64
    rope_base: float = 10000.0
    norm_eps: float = 1e-6
    dtype: torch.dtype | None = None

    def __post_init__(self) -> None:
        as_int(self.vocab_size, "vocab_size", minimum=2)
        as_int(self.d, "d", minimum=2)
        if self.d % 2:
            raise ValueError(f"d must be even (RoPE rotates pairs of coordinates); got {self.d}")
        as_int(self.qk_hidden, "qk_hidden", minimum=1)
        as_int(self.aux_rank, "aux_rank", minimum=1)
        as_int(self.router_hidden, "router_hidden", minimum=1)
        as_real(self.rope_base, "rope_base", minimum=0.0, strict_min=True)
        as_real(self.norm_eps, "norm_eps", minimum=0.0)
        object.__setattr__(self, "dtype", check_float_dtype(resolve_dtype(self.dtype)))


def kaiming_embedding(vocab_size: int, d: int, seed: int = 0, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A ``(vocab_size, d)`` table drawn Kaiming-uniform, ``U(-b, b)`` with ``b = sqrt(6 / d)``.

    Drawn on the CPU in float64 from ``seed``, then cast (seed 001, App. A.4.5: "We initialize
    embeddings with Kaiming-uniform initialization"; fan-in ``d``, gain ``sqrt(2)``).

    Raises
    ------
    ValueError
        Non-positive sizes, a non-integer seed, a dtype other than float32/64.
    """
    dtype = resolve_dtype(dtype)
    V, d = as_int(vocab_size, "vocab_size", minimum=1), as_int(d, "d", minimum=1)
    check_float_dtype(dtype)
    gen = torch.Generator().manual_seed(seed_int(seed))
    bound = math.sqrt(6.0 / d)
    return ((torch.rand(V, d, generator=gen, dtype=torch.float64) * 2 - 1) * bound).to(dtype)


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding of ``x`` ``(B, T, d)`` (``d`` even): pair ``(x_{2i}, x_{2i+1})`` at
    position ``t`` (0-based) is rotated by the angle ``t * base^(-2i/d)``.

    Inner products then depend on positions only through their difference:
    ``<rope(q)_t, rope(k)_s> = f(q_t, k_s, t - s)`` (RoFormer, eq. (34)).

    Returns
    -------
    torch.Tensor
        Same shape, dtype and device as ``x``.

    Raises
    ------
    ValueError
        ``x`` is not a floating ``(B, T, d)`` tensor with ``d`` even, or ``base`` is not a finite
        real ``> 0`` (a base of 0 or NaN would give NaN angles).
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() != 3 or x.shape[-1] % 2:
        what = f"{x.dtype} tensor of shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x must be a floating (B, T, d) tensor with d even (RoPE rotates pairs); got a {what}")
    base = as_real(base, "base", minimum=0.0, strict_min=True)
    B, T, d = x.shape
    inv = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]  # (T, d/2)
    cos, sin = ang.cos().to(x.dtype).to(x.device), ang.sin().to(x.dtype).to(x.device)
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (B, T, d/2)
    out = torch.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


def check_lm_tokens(tokens: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """``tokens`` checked: an integer tensor ``(B, T)``, ``B, T >= 1``, ids in ``[0, vocab_size)``.

    Raises
    ------
    ValueError
        Not a tensor, not an integer dtype, not 2-D, empty, or an id out of range.
    """
    return token_ids(tokens, vocab_size)


_TRAINED = ("attn_norm", "query", "key", "router_in", "router_out", "aux_U", "aux_V", "out_norm")


#: The trained modules are initialised in float32 from the seed (the draws of the stored
#: results), whatever torch's default dtype, then cast to the config's dtype.
_INIT = torch.float32


class _NonlinearMap(nn.Module):
    """``W_2 GELU(W_1 LN(z))`` without biases: the seed's learned query (or key) map."""

    def __init__(self, d: int, hidden: int, eps: float, **factory) -> None:
        super().__init__()
        factory = {"dtype": _INIT, **factory}  # drawn in float32 unless a shape-only build says
        self.norm = nn.LayerNorm(d, eps=max(eps, 1e-12), **factory)
        self.W1 = nn.Linear(d, hidden, bias=False, **factory)
        self.W2 = nn.Linear(hidden, d, bias=False, **factory)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.W2(Fn.gelu(self.W1(self.norm(z))))


def _check_expert(expert, d: int) -> nn.Module:
    """``expert`` checked to map ``R^d -> R^d`` (without changing it), then frozen in place."""
    if not isinstance(expert, nn.Module):
        raise ValueError(f"the fact expert must be a torch.nn.Module; got {type(expert).__name__}")
    p = next(iter(expert.parameters()), None)
    probe_map(expert, d, "the fact expert", dtype=p.dtype if p is not None else torch.float64,
              device=module_device(expert, torch.device("cpu")))
    expert.requires_grad_(False)
    return expert


class EditingLM(nn.Module):
    """The one-layer, one-head language model of seed 001, App. A.4.5 (see the module docstring).

    A ``state_dict`` holds the embeddings, the trained weights, the fact expert's weights and, as
    extra state, the config; :meth:`empty` builds a model without values to load it into.

    Parameters
    ----------
    config : EditingLMConfig
    embedding : torch.Tensor, shape ``(vocab_size, d)``
        Frozen tied embeddings (:func:`kaiming_embedding`), cast to ``config.dtype``; stored as
        a buffer (no gradient).
    fact_expert : torch.nn.Module
        Maps ``(n, d) -> (n, d)``; once every argument is checked, frozen in place
        (``requires_grad_(False)``); a refused expert is left unchanged. It keeps its own dtype (its
        input is cast to it, its output back).
    seed : int, default 0
        Seed of the trainable weights' initialisation (PyTorch's defaults, drawn in float32
        whatever torch's default dtype, under a forked RNG so the global stream is untouched;
        then cast to ``config.dtype``).

    Raises
    ------
    ValueError
        A config of the wrong type, an embedding of the wrong shape or with non-finite entries,
        an expert that does not map ``R^d -> R^d``, a non-integer seed.
    """

    def __init__(self, config: EditingLMConfig, embedding: torch.Tensor, fact_expert: nn.Module, *,
                 seed: int = 0, _shared: "EditingLM | None" = None) -> None:
        super().__init__()
        if not isinstance(config, EditingLMConfig):
            raise ValueError(f"config must be an EditingLMConfig; got {type(config).__name__}")
        c = self.config = config
        seed = seed_int(seed)  # every argument is checked before the caller's expert is frozen
        if not isinstance(embedding, torch.Tensor) or embedding.shape != (c.vocab_size, c.d):
            shape = tuple(embedding.shape) if isinstance(embedding, torch.Tensor) else type(embedding).__name__
            raise ValueError(f"embedding must be a tensor of shape (vocab_size, d) = ({c.vocab_size}, {c.d}); got {shape}")
        if not bool(torch.isfinite(embedding).all()):
            raise ValueError("embedding contains non-finite entries (nan or inf)")
        self.register_buffer("embedding", embedding.detach().to(c.dtype).clone() if _shared is None
                             else _shared.embedding)
        self.fact_expert = _check_expert(fact_expert, c.d)
        if _shared is not None:  # share every trained module (MLP swapping)
            for name in _TRAINED:
                setattr(self, name, getattr(_shared, name))
            return
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.attn_norm = nn.RMSNorm(c.d, eps=c.norm_eps, dtype=_INIT)
            self.query = _NonlinearMap(c.d, c.qk_hidden, c.norm_eps)
            self.key = _NonlinearMap(c.d, c.qk_hidden, c.norm_eps)
            self.router_in = nn.Linear(c.d, c.router_hidden, dtype=_INIT)
            self.router_out = nn.Linear(c.router_hidden, 1, dtype=_INIT)
            self.aux_U = nn.Linear(c.d, c.aux_rank, bias=False, dtype=_INIT)  # x U: (d -> r)
            self.aux_V = nn.Linear(c.aux_rank, c.d, bias=False, dtype=_INIT)  # (x U) V: (r -> d)
            self.out_norm = nn.RMSNorm(c.d, eps=c.norm_eps, dtype=_INIT)
        for name in _TRAINED:  # the expert keeps its own dtype
            getattr(self, name).to(c.dtype)

    @classmethod
    def empty(cls, config: EditingLMConfig, fact_expert: nn.Module, *,
              device: str | torch.device | None = None) -> "EditingLM":
        """A model with zero weights (nothing drawn, torch's random stream untouched), to load a
        ``state_dict`` into.

        ``EditingLM.empty(config, BilinearMLP.empty(d, m, device="meta"), device="meta")`` (or
        inside ``with torch.device("meta"):``, which ``device=None`` follows) allocates nothing;
        ``load_state_dict(saved, assign=True)`` then takes the saved tensors (their dtype and
        device) and the saved config.

        Parameters
        ----------
        config : EditingLMConfig
            The saved model's sizes (``vocab_size``, ``d``, ``qk_hidden``, ``aux_rank``,
            ``router_hidden``); ``config.dtype`` is the empty weights' dtype.
        fact_expert : torch.nn.Module
            An expert of the saved one's shape (e.g. ``BilinearMLP.empty(d, m)``); used as it is
            (not probed, not moved: build it on ``device``), frozen in place.
        device : str, torch.device or None
            Where the weights are allocated; ``None`` is torch's current default device.

        Raises
        ------
        ValueError
            A config that is not an EditingLMConfig or an expert that is not a module.
        """
        if not isinstance(config, EditingLMConfig):
            raise ValueError(f"config must be an EditingLMConfig; got {type(config).__name__}")
        if not isinstance(fact_expert, nn.Module):
            raise ValueError(f"the fact expert must be a torch.nn.Module; got {type(fact_expert).__name__}")
        c = config
        target = torch.empty(0, device=device).device  # None: the current default device
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        obj.config = c
        obj.register_buffer("embedding", torch.zeros(c.vocab_size, c.d, dtype=c.dtype, device=target))
        obj.fact_expert = fact_expert.requires_grad_(False)
        meta = {"device": "meta", "dtype": c.dtype}  # shapes only: nothing drawn
        obj.attn_norm = nn.RMSNorm(c.d, eps=c.norm_eps, **meta)
        obj.query = _NonlinearMap(c.d, c.qk_hidden, c.norm_eps, **meta)
        obj.key = _NonlinearMap(c.d, c.qk_hidden, c.norm_eps, **meta)
        obj.router_in = nn.Linear(c.d, c.router_hidden, **meta)
        obj.router_out = nn.Linear(c.router_hidden, 1, **meta)
        obj.aux_U = nn.Linear(c.d, c.aux_rank, bias=False, **meta)
        obj.aux_V = nn.Linear(c.aux_rank, c.d, bias=False, **meta)
        obj.out_norm = nn.RMSNorm(c.d, eps=c.norm_eps, **meta)
        if target.type != "meta":
            for name in _TRAINED:
                module = getattr(obj, name).to_empty(device=target)
                with torch.no_grad():
                    for p in module.parameters():
                        p.zero_()  # to_empty leaves the storage uninitialised
        return obj

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the tensors: ``{"config": dict}``, the config's fields."""
        return {"config": dataclasses.asdict(self.config)}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record: the saved config replaces this model's
        (``rope_base`` and ``norm_eps`` with it, the norms' ``eps`` too); ``config.dtype`` is the
        loaded embeddings' dtype.

        Raises
        ------
        ValueError
            If the record is not ``{"config": dict}`` of valid :class:`EditingLMConfig` fields, or
            the saved sizes (``vocab_size``, ``d``, ``qk_hidden``, ``aux_rank``,
            ``router_hidden``) are not this model's.
        """
        fields = state.get("config") if isinstance(state, dict) and set(state) == {"config"} else None
        if not isinstance(fields, dict):
            raise ValueError(f"the extra state of an EditingLM must be {{'config': dict}}; got {state!r}")
        try:
            config = EditingLMConfig(**fields)
        except TypeError as exc:
            raise ValueError(f"the saved config is not an EditingLMConfig: {exc}") from None
        sizes = ("vocab_size", "d", "qk_hidden", "aux_rank", "router_hidden")
        differ = [k for k in sizes if getattr(config, k) != getattr(self.config, k)]
        if differ:
            raise ValueError(f"the saved model differs from this one in {', '.join(differ)}: saved "
                             f"{[getattr(config, k) for k in differ]}, this one "
                             f"{[getattr(self.config, k) for k in differ]}")
        self.config = dataclasses.replace(config, dtype=self.embedding.dtype)
        for norm in (self.attn_norm, self.out_norm):
            norm.eps = config.norm_eps
        for qk in (self.query, self.key):
            qk.norm.eps = max(config.norm_eps, 1e-12)

    # ------------------------------------------------------------------ pieces

    def attention(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x (B, T, d), a (B, T, T))``: the attention output (the FFN's input) and the causal
        attention weights (``a[b, t, s] = 0`` for ``s > t``; rows sum to 1)."""
        e = Fn.embedding(tokens, self.embedding)  # (B, T, d), frozen
        z = self.attn_norm(e)
        q = rope(self.query(z), self.config.rope_base)
        k = rope(self.key(z), self.config.rope_base)
        T = tokens.shape[1]
        scores = q @ k.transpose(1, 2) / math.sqrt(self.config.d)  # (B, T, T)
        future = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(1)
        a = torch.softmax(scores.masked_fill(future, -math.inf), dim=-1)
        return a @ z, a  # v = z, W_O = I

    def expert_input(self, x: torch.Tensor) -> torch.Tensor:
        """The fact expert's input ``x~ = x / ||x||`` (frozen normalisation, no gain), same shape."""
        return Fn.normalize(x, dim=-1, eps=self.config.norm_eps)

    def router(self, x: torch.Tensor) -> torch.Tensor:
        """``alpha = sigmoid(g_2 GELU(g_1 x))``, shape ``(..., 1)``, in ``(0, 1)``."""
        return torch.sigmoid(self.router_out(Fn.gelu(self.router_in(x))))

    def fact_output(self, x_tilde: torch.Tensor) -> torch.Tensor:
        """``f_fact(x~)`` in the model's dtype (the expert runs in its own)."""
        p = next(iter(self.fact_expert.parameters()), None)
        inp = x_tilde if p is None else x_tilde.to(p.dtype)
        return self.fact_expert(inp).to(self.config.dtype)

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        """``alpha f_fact(x~) + (1 - alpha) x U V``, same shape as ``x``; no residual."""
        alpha = self.router(x)
        return alpha * self.fact_output(self.expert_input(x)) + (1 - alpha) * self.aux_V(self.aux_U(x))

    def head(self, y: torch.Tensor) -> torch.Tensor:
        """``RMSNorm_out(y) E^T``: logits over the vocabulary, ``(..., V)``."""
        return self.out_norm(y) @ self.embedding.T

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits at every position.

        Parameters
        ----------
        tokens : torch.Tensor, shape ``(B, T)``, integer
            Ids in ``[0, vocab_size)``.

        Returns
        -------
        torch.Tensor, shape ``(B, T, V)``, ``config.dtype``
            ``logits[:, t]`` predicts token ``t + 1``; it depends on tokens ``0 .. t`` only.

        Raises
        ------
        ValueError
            Tokens that are not an integer ``(B, T)`` tensor with ids in range.
        """
        tokens = check_lm_tokens(tokens, self.config.vocab_size).to(self.embedding.device)
        x, _ = self.attention(tokens)
        return self.head(self.feed_forward(x))

    # ------------------------------------------------------------------ swapping and parameters

    def with_fact_expert(self, fact_expert: nn.Module) -> "EditingLM":
        """MLP swapping: a model sharing this one's embeddings and trained modules, with another expert.

        No Transformer weight is copied or changed; the returned model and this one hold the same
        attention, router, auxiliary expert and norms (training one trains both).

        Raises
        ------
        ValueError
            An expert that does not map ``R^d -> R^d``.
        """
        return EditingLM(self.config, self.embedding, fact_expert, _shared=self)

    def check_vocabulary(self, vocab_size: int, what: str = "the corpus") -> None:
        """Refuse token ids this model cannot embed: ``vocab_size`` ids beyond its vocabulary.

        Called before a corpus's sentences are fed to the model (without it an id past the
        embedding table raises a bare ``IndexError`` deep inside the forward pass).

        Raises
        ------
        ValueError
            ``"the corpus has 60 token ids, but the model's vocabulary holds 40 ..."``.
        """
        n = as_int(vocab_size, "vocab_size", minimum=1)
        if n > self.config.vocab_size:
            raise ValueError(f"{what} has {n} token ids, but the model's vocabulary holds {self.config.vocab_size}: "
                             "build the model with EditingLMConfig(vocab_size=corpus.vocab_size, ...)")

    def trainable_parameters(self) -> list[nn.Parameter]:
        """Every parameter except the fact expert's (the embeddings are a buffer)."""
        expert = {id(p) for p in self.fact_expert.parameters()}
        return [p for p in self.parameters() if id(p) not in expert]
