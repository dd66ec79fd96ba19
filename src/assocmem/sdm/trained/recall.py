"""A small attention model trained on associative recall, with QK-norm and a learned ``beta``.

The task (one sequence). ``m`` pairs ``(a_i, v_i)`` are in context: ``a_i`` a fresh random
bipolar address in ``{-1, +1}^n`` (the random patterns of SDM, seed 002, App. B.4), ``v_i`` a
value token drawn uniformly from ``vocab``. The query is one stored address with every bit
flipped independently with probability ``noise`` (a noisy cue, as in SDM's critical-distance
experiments); the model must output the value token of that pair. Addresses are fresh in every
sequence, so nothing can be memorised: the model has to compare the query with the keys in
context.

The model is one attention layer, ``heads`` heads of dimension ``n // heads``:

* queries and keys ``q = W_Q a``, ``k_i = W_K a_i`` (learned ``n x n`` matrices), split into heads;
* scores ``s_i`` by one of three rules (``qk``):
  ``"l2"``: QK-norm (Henry et al. 2020), ``s_i = beta_h <q/|q|, k_i/|k_i|>`` with a learned
  inverse temperature ``beta_h`` per head (one scalar when ``heads = 1``), parametrised as
  ``beta_h = exp(theta_h)`` so that AdamW's steps are relative to the value (the learned value
  can still remember where it starts: chapter 37 trains from two starting values and finds
  them apart after a finite run);
  ``"layernorm"``: LayerNorm with a learned gain and bias in place of the L2 normalisation,
  ``s_i = beta_h <LN(q), LN(k_i)> / d_h`` (so that with unit gain and zero bias it is QK-norm
  of the mean-centred vectors, ``|LN(x)| = sqrt(d_h)``; seed 002, claim C11);
  ``"none"``: standard scaled dot-product attention, ``s_i = <q, k_i> / sqrt(d_h)``, no ``beta``;
* weights ``w = softmax(s)``, values ``v_i = E[v_i]`` (a learned embedding; ``values="l2"``
  divides every head's slice by its L2 norm, the variant of App. A.3, claim C13);
* logits ``U (sum_i w_i v_i)`` over the ``vocab`` value tokens, trained by cross-entropy with
  AdamW (weight decay on the matrices, none on ``beta`` or the LayerNorm parameters).

Everything runs in float64 on the CPU with one generator per run, so a run is a deterministic
function of its config (and stable across BLAS builds to far below the digits the book shows).

Source: seed 002 (the review of Bricken & Pehlevan 2021), claims C7, C11, C13 and the open
question on context length; QK-norm: Henry, Dachapally, Pawar & Chen (2020), Findings of EMNLP.
Chapter 37.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
import torch

from assocmem._checks import TrainingDiverged, as_int, as_real, check_finite_parameters, check_loss, seed_int

__all__ = [
    "QK_RULES",
    "VALUE_RULES",
    "RecallConfig",
    "RecallBatch",
    "make_recall_batch",
    "RecallAttention",
    "AttentionReadout",
    "TrainedRecall",
    "train_recall",
    "evaluate_recall",
]

#: Seeds are checked to lie in ``[0, SEED_LIMIT)``: ``train_recall`` seeds its data generator
#: with ``seed + 1``, which must still fit ``torch.Generator.manual_seed`` (a signed 64-bit int).
SEED_LIMIT = 2**63 - 1


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int in ``[0, SEED_LIMIT)``; ``ValueError`` for bools, floats or out of range."""
    out = seed_int(seed)
    if not 0 <= out < SEED_LIMIT:
        raise ValueError(f"{name} must lie in [0, 2**63 - 1), got {out}")
    return out


QK_RULES = ("l2", "layernorm", "none")
VALUE_RULES = ("raw", "l2")
_DTYPE = torch.float64


@dataclass(frozen=True)
class RecallConfig:
    """Settings of one training run of :func:`train_recall`.

    Raises
    ------
    ValueError
        If a count is not an integer (Python or numpy; floats such as ``2.0`` and bools are
        refused) or is below its minimum, ``n`` is not a multiple of ``heads``, ``m < 2``,
        ``vocab < 2``, ``noise`` is outside ``[0, 0.5]``, ``qk`` or ``values`` is unknown, a
        learning rate, weight decay or ``beta_init`` is not finite and positive (weight decay
        ``>= 0``), or ``seed`` is not an integer in ``[0, 2**63 - 1)``.
    """

    n: int = 64  # address bits, also the model width (head dimension n // heads)
    m: int = 64  # stored pairs per training context
    vocab: int = 64  # value tokens
    noise: float = 0.2  # probability that a query bit is flipped
    qk: str = "l2"  # score rule: "l2" (QK-norm), "layernorm", "none"
    values: str = "raw"  # "raw" or "l2" (L2-normalised values)
    heads: int = 1
    beta_init: float = 4.0  # initial beta of every head ("l2", "layernorm")
    steps: int = 1500
    batch: int = 64
    lr: float = 3e-3
    beta_lr: float = 3e-2  # learning rate of log beta (and the LayerNorm gains and biases)
    weight_decay: float = 0.01
    seed: int = 0

    def __post_init__(self):
        for name, low in (("n", 2), ("m", 2), ("vocab", 2), ("heads", 1), ("steps", 1),
                          ("batch", 1)):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            as_int(value, name, minimum=low)
        if self.n % self.heads:
            raise ValueError(f"n = {self.n} is not a multiple of heads = {self.heads}")
        as_real(self.noise, "noise", minimum=0.0, maximum=0.5)
        if self.qk not in QK_RULES:
            raise ValueError(f"qk must be one of {QK_RULES}, got {self.qk!r}")
        if self.values not in VALUE_RULES:
            raise ValueError(f"values must be one of {VALUE_RULES}, got {self.values!r}")
        for name in ("beta_init", "lr", "beta_lr"):
            if not as_real(getattr(self, name), name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        as_real(self.weight_decay, "weight_decay", minimum=0.0)
        check_seed(self.seed)

    @property
    def head_dim(self) -> int:
        """Dimension of one head, ``n // heads``."""
        return self.n // self.heads


@dataclass(frozen=True)
class RecallBatch:
    """A batch of recall problems (CPU tensors), as :func:`make_recall_batch` draws them.

    ``addresses`` ``(B, m, n)`` float64 in ``{-1, +1}``; ``values`` ``(B, m)`` int64 tokens;
    ``queries`` ``(B, n)`` float64 in ``{-1, +1}``; ``targets`` ``(B,)`` int64, the position of
    the cued pair; ``labels`` ``(B,)`` int64, its value token. :meth:`RecallAttention.readout`
    checks the shapes and dtypes it uses. Source: the task of the module docstring (SDM's random
    patterns and noisy cues, seed 002, App. B.4).
    """

    addresses: torch.Tensor
    values: torch.Tensor
    queries: torch.Tensor
    targets: torch.Tensor
    labels: torch.Tensor

    @property
    def input_cosines(self) -> torch.Tensor:
        """``(B, m)`` cosine ``1 - 2 dv / n`` between the query and each address (dv: Hamming)."""
        n = self.addresses.shape[-1]
        return torch.einsum("bmn,bn->bm", self.addresses, self.queries) / n


def make_recall_batch(batch: int, m: int, n: int, vocab: int, noise: float,
                      generator: torch.Generator) -> RecallBatch:
    """Draw ``batch`` recall problems (see the module docstring) from ``generator``.

    Returns
    -------
    RecallBatch
        ``addresses`` ``(batch, m, n)`` and ``queries`` ``(batch, n)`` float64 in ``{-1, +1}``
        (each query bit flipped with probability ``noise``), ``values`` ``(batch, m)``,
        ``targets`` and ``labels`` ``(batch,)`` int64.

    Raises
    ------
    ValueError
        If a count is not a positive integer (``m``, ``vocab >= 2``) or ``noise`` is outside
        ``[0, 0.5]``.
    TypeError
        If ``generator`` is not a :class:`torch.Generator`.
    """
    batch = as_int(batch, "batch", minimum=1)
    m = as_int(m, "m", minimum=1)
    n = as_int(n, "n", minimum=1)
    vocab = as_int(vocab, "vocab", minimum=2)
    noise = as_real(noise, "noise", minimum=0.0, maximum=0.5)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    g = generator
    addresses = torch.randint(0, 2, (batch, m, n), generator=g).to(_DTYPE) * 2 - 1
    values = torch.randint(0, vocab, (batch, m), generator=g)
    targets = torch.randint(0, m, (batch,), generator=g)
    flips = torch.rand((batch, n), generator=g, dtype=_DTYPE) < noise
    rows = torch.arange(batch)
    queries = torch.where(flips, -addresses[rows, targets], addresses[rows, targets])
    return RecallBatch(addresses, values, queries, targets, values[rows, targets])


@dataclass
class AttentionReadout:
    """What one forward pass computed, per head (all ``(B, H, m)`` unless said otherwise).

    ``scores`` the softmax inputs, ``weights`` the attention weights, ``cosines`` the cosine
    between the projected query and key (before any normalisation), ``value_norms`` the L2 norm
    of each value as used (1 with ``values="l2"``), ``query_norms`` ``(B, H)`` and ``key_norms``
    the norms of the vectors whose dot product forms the score (after LayerNorm for
    ``qk="layernorm"``), ``logits`` ``(B, vocab)``.
    """

    scores: torch.Tensor
    weights: torch.Tensor
    cosines: torch.Tensor
    value_norms: torch.Tensor
    query_norms: torch.Tensor
    key_norms: torch.Tensor
    logits: torch.Tensor


class RecallAttention(torch.nn.Module):
    """The one-layer attention model of the module docstring (float64).

    Parameters
    ----------
    config : RecallConfig
        Sizes and rules; its ``seed`` seeds the initialisation.
    """

    def __init__(self, config: RecallConfig) -> None:
        super().__init__()
        if not isinstance(config, RecallConfig):
            raise TypeError(f"config must be a RecallConfig, got {type(config).__name__}")
        self.config = c = config
        g = torch.Generator().manual_seed(check_seed(c.seed))

        def mat(rows, cols):
            return torch.nn.Parameter(torch.randn(rows, cols, generator=g, dtype=_DTYPE)
                                      / math.sqrt(rows))

        self.w_q, self.w_k = mat(c.n, c.n), mat(c.n, c.n)
        self.embed = torch.nn.Parameter(torch.randn(c.vocab, c.n, generator=g, dtype=_DTYPE))
        self.unembed = mat(c.n, c.vocab)
        if c.qk != "none":
            self.log_beta = torch.nn.Parameter(torch.full((c.heads,), math.log(c.beta_init),
                                                          dtype=_DTYPE))
        if c.qk == "layernorm":
            self.ln_q = torch.nn.LayerNorm(c.head_dim, dtype=_DTYPE)
            self.ln_k = torch.nn.LayerNorm(c.head_dim, dtype=_DTYPE)

    def readout(self, batch: RecallBatch) -> AttentionReadout:
        """Run the model on ``batch`` and return every intermediate (see :class:`AttentionReadout`).

        Raises
        ------
        TypeError
            If ``batch`` is not a :class:`RecallBatch`, or its addresses or queries are not
            float64 tensors or its values not an int64 tensor.
        ValueError
            If the addresses are not ``(B, m, n)`` with ``m >= 1`` (an empty context has nothing
            to read), the queries not ``(B, n)``, the values not ``(B, m)``, the address width
            does not fit the model, an address or query is not finite, or a value token lies
            outside ``[0, vocab)``.
        """
        c = self.config
        if not isinstance(batch, RecallBatch):
            raise TypeError(f"batch must be a RecallBatch, got {type(batch).__name__}")
        for name in ("addresses", "queries", "values"):
            t = getattr(batch, name)
            want = torch.int64 if name == "values" else _DTYPE
            if not isinstance(t, torch.Tensor) or t.dtype != want:
                got = t.dtype if isinstance(t, torch.Tensor) else type(t).__name__
                raise TypeError(f"batch.{name} must be a {want} tensor, got {got}")
        if batch.addresses.ndim != 3:
            raise ValueError(f"batch.addresses must be (B, m, n), got shape "
                             f"{tuple(batch.addresses.shape)}")
        b, m, n = batch.addresses.shape
        if m < 1:
            raise ValueError("batch holds an empty context (m = 0): there is nothing to read")
        if tuple(batch.values.shape) != (b, m):
            raise ValueError(f"batch.values must be (B, m) = ({b}, {m}), got shape "
                             f"{tuple(batch.values.shape)}")
        if not (torch.isfinite(batch.addresses).all() and torch.isfinite(batch.queries).all()):
            raise ValueError("batch addresses and queries must be finite (no NaN or inf)")
        if n != c.n or batch.queries.shape != (b, n):
            raise ValueError(f"batch addresses have width {n} and queries shape "
                             f"{tuple(batch.queries.shape)}; the model needs width {c.n}")
        if batch.values.numel() and (batch.values.min() < 0 or batch.values.max() >= c.vocab):
            raise ValueError(f"value tokens must lie in [0, {c.vocab}), got "
                             f"[{int(batch.values.min())}, {int(batch.values.max())}]")
        h, dh = c.heads, c.head_dim
        q = (batch.queries @ self.w_q).view(b, h, dh)
        k = (batch.addresses @ self.w_k).view(b, m, h, dh).transpose(1, 2)  # (B, H, m, dh)
        cosines = torch.einsum("bhd,bhmd->bhm", q, k) / (
            q.norm(dim=-1, keepdim=True) * k.norm(dim=-1)).clamp_min(1e-300)
        if c.qk == "l2":
            qn = q / q.norm(dim=-1, keepdim=True).clamp_min(1e-300)
            kn = k / k.norm(dim=-1, keepdim=True).clamp_min(1e-300)
            scores = self.log_beta.exp().view(1, h, 1) * torch.einsum("bhd,bhmd->bhm", qn, kn)
        elif c.qk == "layernorm":
            qn, kn = self.ln_q(q), self.ln_k(k)
            scores = self.log_beta.exp().view(1, h, 1) * torch.einsum("bhd,bhmd->bhm", qn, kn) / dh
        else:
            qn, kn = q, k
            scores = torch.einsum("bhd,bhmd->bhm", q, k) / math.sqrt(dh)
        weights = torch.softmax(scores, dim=-1)
        # a one-hot product, not an index: its backward is a matrix product (much faster on
        # the CPU than the scatter-add of an indexed gather)
        onehot = torch.nn.functional.one_hot(batch.values, c.vocab).to(_DTYPE)
        v = (onehot @ self.embed).view(b, m, h, dh).transpose(1, 2)  # (B, H, m, dh)
        if c.values == "l2":
            v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        out = torch.einsum("bhm,bhmd->bhd", weights, v).reshape(b, n)
        return AttentionReadout(scores, weights, cosines, v.norm(dim=-1), qn.norm(dim=-1),
                                kn.norm(dim=-1), out @ self.unembed)

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the parameters: the config, as a dict of its fields.

        The constructor takes only the config (shapes and rules), so ``with torch.device("meta"):
        RecallAttention(config)`` builds the model without values, to
        ``load_state_dict(saved, assign=True)``; the saved config (its ``values`` rule, training
        settings and seed) replaces the one the model was built with.
        """
        return {"config": dataclasses.asdict(self.config)}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record.

        Raises
        ------
        ValueError
            If the record is not ``{"config": dict}`` of valid :class:`RecallConfig` fields, or
            the saved model's shape (``n``, ``vocab``, ``heads``) or score rule ``qk`` is not this
            model's.
        """
        fields = state.get("config") if isinstance(state, dict) and set(state) == {"config"} else None
        try:
            config = RecallConfig(**fields) if isinstance(fields, dict) else None
        except TypeError as exc:
            raise ValueError(f"the saved config is not a RecallConfig: {exc}") from None
        if config is None:
            raise ValueError(f"the extra state of a RecallAttention must be {{'config': dict}}; got {state!r}")
        differ = [k for k in ("n", "vocab", "heads", "qk") if getattr(config, k) != getattr(self.config, k)]
        if differ:
            raise ValueError(f"the saved model differs from this one in {', '.join(differ)}: saved "
                             f"{[getattr(config, k) for k in differ]}, this one "
                             f"{[getattr(self.config, k) for k in differ]}")
        self.config = config

    def forward(self, batch: RecallBatch) -> torch.Tensor:
        """Logits ``(B, vocab)`` float64 over value tokens; raises as :meth:`readout`."""
        return self.readout(batch).logits

    def betas(self) -> np.ndarray:
        """The learned inverse temperature of each head (NaN for ``qk="none"``), float64."""
        if self.config.qk == "none":
            return np.full(self.config.heads, np.nan)
        return self.log_beta.detach().exp().numpy().astype(np.float64).copy()


@dataclass
class TrainedRecall:
    """A trained :class:`RecallAttention` and its training record.

    ``history`` holds, every ``record_every`` steps, the step, the training loss and the mean
    learned ``beta`` over heads (NaN for ``qk="none"``).
    """

    config: RecallConfig
    model: RecallAttention
    history: dict = field(default_factory=dict)


def train_recall(config: RecallConfig, *, record_every: int = 50) -> TrainedRecall:
    """Train :class:`RecallAttention` on fresh recall batches with AdamW (deterministic).

    The data generator is seeded with ``config.seed + 1`` (the initialisation with
    ``config.seed``); the learning rate decays linearly to a tenth over the run. Every step's
    loss is checked before its backward pass (finite and within
    :func:`~assocmem._checks.loss_limit`; a read: no value changes), and once more after the last
    update (one forward pass on the last batch), with the trained weights.

    Raises
    ------
    TypeError
        If ``config`` is not a :class:`RecallConfig`.
    ValueError
        If ``record_every`` is not a positive integer.
    assocmem._checks.TrainingDiverged
        (a :class:`FloatingPointError` and a :class:`ValueError`) at the first step whose loss is
        NaN, infinite or above :func:`~assocmem._checks.loss_limit` (708 nats in float64: a
        finite blow-up, such as weights driven to 1e30), or if the loss after the last update is
        such a loss or that update leaves a non-finite weight (a learning rate too large): no
        model is returned.
    """
    if not isinstance(config, RecallConfig):
        raise TypeError(f"config must be a RecallConfig, got {type(config).__name__}")
    record_every = as_int(record_every, "record_every", minimum=1)
    c = config
    model = RecallAttention(c)
    decay = [model.w_q, model.w_k, model.embed, model.unembed]
    ids = {id(p) for p in decay}
    rest = [p for p in model.parameters() if id(p) not in ids]
    groups = [{"params": decay, "weight_decay": c.weight_decay}]
    if rest:
        groups.append({"params": rest, "weight_decay": 0.0, "lr": c.beta_lr})
    opt = torch.optim.AdamW(groups, lr=c.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 1.0 - 0.9 * min(s, c.steps) / c.steps)
    g = torch.Generator().manual_seed(check_seed(c.seed) + 1)
    hist = {"step": [], "loss": [], "beta": []}
    for step in range(1, c.steps + 1):
        batch = make_recall_batch(c.batch, c.m, c.n, c.vocab, c.noise, g)
        loss = torch.nn.functional.cross_entropy(model(batch), batch.labels)
        check_loss(loss, step, what="train_recall", lr=c.lr, restored=False)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % record_every == 0 or step == c.steps:
            hist["step"].append(step)
            hist["loss"].append(float(loss.detach()))
            hist["beta"].append(float(np.mean(model.betas())))
    _check_trained(model, c)
    with torch.no_grad():  # the last update is checked as every other one: by the loss it leads to
        last = torch.nn.functional.cross_entropy(model(batch), batch.labels)
    check_loss(last, c.steps, what="train_recall", lr=c.lr, restored=False, final=True)
    model.eval()
    return TrainedRecall(c, model, {k: np.asarray(v) for k, v in hist.items()})


def _check_trained(model: RecallAttention, c: RecallConfig) -> None:
    try:
        check_finite_parameters(model)
    except ValueError as err:
        raise TrainingDiverged(f"train_recall diverged: the last update left a non-finite weight "
                               f"(lr = {c.lr:g}); lower lr") from err


@torch.no_grad()
def evaluate_recall(model: RecallAttention, m: int, *, noise: float | None = None,
                    queries: int = 2000, seed: int = 0, chunk: int = 250) -> dict:
    """Accuracy and loss of ``model`` on ``queries`` fresh problems with ``m`` stored pairs.

    The problems are drawn ``chunk`` at a time from a generator seeded with ``seed``, so they
    depend on ``seed``, ``queries`` and ``chunk``.

    Returns
    -------
    dict
        ``correct`` (int, argmax of the logits equals the value token), ``queries``,
        ``accuracy`` (= correct / queries) and ``loss`` (mean cross-entropy, nats).

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`RecallAttention`.
    ValueError
        If ``m``, ``queries`` or ``chunk`` is not a positive integer, ``noise`` is outside
        ``[0, 0.5]`` (``None``: the model's training noise), ``seed`` is not an integer in
        ``[0, 2**63 - 1)``, a weight of the model is NaN or infinite (a diverged training), or
        the logits are not finite (an argmax over NaN would be an arbitrary answer).
    """
    if not isinstance(model, RecallAttention):
        raise TypeError(f"model must be a RecallAttention, got {type(model).__name__}")
    check_finite_parameters(model)
    c = model.config
    m = as_int(m, "m", minimum=1)
    queries = as_int(queries, "queries", minimum=1)
    chunk = as_int(chunk, "chunk", minimum=1)
    noise = c.noise if noise is None else as_real(noise, "noise", minimum=0.0, maximum=0.5)
    g = torch.Generator().manual_seed(check_seed(seed))
    correct, loss, done = 0, 0.0, 0
    while done < queries:
        size = min(chunk, queries - done)
        batch = make_recall_batch(size, m, c.n, c.vocab, noise, g)
        logits = model(batch)
        if not bool(torch.isfinite(logits).all()):
            raise ValueError("the model's logits are not finite (NaN or inf) although its weights are: "
                             "an accuracy computed from them would mean nothing")
        correct += int((logits.argmax(-1) == batch.labels).sum())
        loss += float(torch.nn.functional.cross_entropy(logits, batch.labels, reduction="sum"))
        done += size
    return {"correct": correct, "queries": queries, "accuracy": correct / queries,
            "loss": loss / queries}
