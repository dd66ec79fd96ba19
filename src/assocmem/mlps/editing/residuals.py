"""The weight editors inside the language model: keys, learned residuals, and the edited expert.

Seed 001 (App. A.4.5) adapts ROME, MEMIT and AlphaEdit to its one-layer model: they all edit
the fact expert's **output matrix** ``B`` (``(d, m)``; the expert is ``f(x~) = B phi(x~)`` with
hidden activations ``phi(x~) = (A x~) * (G x~)``, :class:`~assocmem.mlps.mlp.BilinearMLP`),
"immediately upstream of the logits".

* **Keys** (:func:`prompt_keys`): the expert's hidden activations ``k = phi(x~)`` at the last
  token of the prompt ``<bos> prefix book suffix`` on the edit template (template 0), i.e. at
  the position whose logits predict the author. The attention does not depend on the expert, so
  the keys of a model and of any edit of its expert are the same.
* **Residuals** (:func:`learn_residuals`): for each altered fact, a vector ``delta`` added to the
  expert's output at that position is optimised so that the model predicts the **new** author
  there: Adam on ``CE(head(alpha (B k + delta) + (1 - alpha) f_aux(x)), new author)
  + wd ||delta||^2 / ||B k||^2``, with ``delta`` clipped after each step to
  ``||delta|| <= clip_norm ||B k||`` and a fact's ``delta`` frozen once its loss falls below
  ``early_stopping_loss``. This is ROME's and MEMIT's target-vector optimisation (Meng et al.
  2022, Sec. 3.1 step 2; 2023, Sec. 4.1 eq. (16)) on one templated prompt per fact, with no
  random prefixes and no KL term (seed 001 omits both). The **target** is ``v = B k + delta``.
* **Edit** (:func:`weight_edit`): ROME, MEMIT or AlphaEdit
  (:mod:`~assocmem.mlps.editing.editors`) writes ``(k_i, v_i)`` into ``B``, protecting a
  preserved-key moment ``C``, and returns a new model holding
  an edited **copy** of the expert (:meth:`~assocmem.mlps.editing.model.EditingLM.with_fact_expert`);
  the input model is not changed.

* **Preserved-key moment** ``C``, the uncentred second moment of the keys an edit should leave
  alone, from one of two sources. The *oracle* one (:func:`prompt_keys` of the preserved facts)
  uses exactly the prompts specificity is scored on, which no editor's paper has; the *corpus*
  one (:func:`corpus_key_moment`) uses the keys at every other position of the training
  sentences, never the author-predicting position of any fact, as ROME, MEMIT and AlphaEdit
  estimate ``C`` from keys of generic text (Wikipedia samples).

All of it runs in float64 on the CPU; the edited matrix is cast back to the expert's dtype.

References
----------
Seed 001, App. A.4.5 ("Baselines": residuals from a single templated prompt per fact, applied to
the inserted MLP output; the winning settings ``lr = 0.05``, ``clip_norm``, ``wd``,
``early_stopping_loss`` and steps). K. Meng et al., ROME (NeurIPS 2022) Sec. 3.1 and MEMIT (ICLR
2023) Sec. 4.1-4.3 (the target vector ``v* = argmin_z -log P(o* | ...)``, its weight decay and
norm clamp); J. Fang et al., AlphaEdit (ICLR 2025) Sec. 3.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch.nn import functional as Fn

from assocmem._checks import as_real, positive_int
from assocmem.mlps.editing.data import BookCorpus
from assocmem.mlps.editing.editors import alphaedit_edit, key_covariance, memit_edit, nullspace_projector, rome_edit
from assocmem.mlps.editing.model import EditingLM
from assocmem.mlps.mlp import BilinearMLP

__all__ = ["EDITORS", "ResidualConfig", "PromptKeys", "EditTargets", "prompt_keys", "corpus_key_moment",
           "learn_residuals", "weight_edit"]

#: The weight editors :func:`weight_edit` applies.
EDITORS = ("rome", "memit", "alphaedit")
_F64 = torch.float64


@dataclass(frozen=True)
class ResidualConfig:
    """How the residuals are learned (:func:`learn_residuals`).

    Attributes
    ----------
    steps : int, default 100
        Adam steps, ``>= 1``.
    lr : float, default 0.05
        Adam's learning rate (seed 001: 0.05 for all three editors).
    clip_norm : float or None, default None
        Clamp ``||delta|| <= clip_norm ||B k||`` after every step (MEMIT's ``clamp_norm_factor``;
        seed 001: 0.75 for MEMIT, none for AlphaEdit); ``None``: no clamp.
    weight_decay : float, default 0
        ``wd`` of the penalty ``wd ||delta||^2 / ||B k||^2`` (seed 001: ``1.5e-3`` for ROME).
    early_stopping_loss : float or None, default None
        A fact's ``delta`` stops moving once its cross-entropy is below this (seed 001: ``5e-2``
        for ROME).

    Raises
    ------
    ValueError
        On construction: ``steps`` not a positive integer, ``lr`` not a finite real ``> 0``,
        negative ``weight_decay``, a ``clip_norm`` or ``early_stopping_loss`` that is not ``None``
        or a finite real ``> 0``.
    """

    steps: int = 100
    lr: float = 0.05
    clip_norm: float | None = None
    weight_decay: float = 0.0
    early_stopping_loss: float | None = None

    def __post_init__(self) -> None:
        positive_int("steps", self.steps)
        as_real(self.lr, "lr", minimum=0.0, strict_min=True)
        as_real(self.weight_decay, "weight_decay", minimum=0.0)
        for name in ("clip_norm", "early_stopping_loss"):
            if getattr(self, name) is not None:
                as_real(getattr(self, name), name, minimum=0.0, strict_min=True)


@dataclass(frozen=True)
class PromptKeys:
    """What the model computes at the last prompt token of some facts (all float64, CPU).

    Attributes
    ----------
    facts : torch.Tensor, shape ``(n,)``, int64
    x : torch.Tensor, shape ``(n, d)``
        The feed-forward block's input (the attention output).
    keys : torch.Tensor, shape ``(n, m)``
        The expert's hidden activations ``phi(x~)``, ``x~ = x / ||x||``.
    outputs : torch.Tensor, shape ``(n, d)``
        The expert's output ``B k``.
    """

    facts: torch.Tensor
    x: torch.Tensor
    keys: torch.Tensor
    outputs: torch.Tensor


@dataclass(frozen=True)
class EditTargets:
    """The learned residuals of the altered facts (:func:`learn_residuals`).

    Attributes
    ----------
    prompt : PromptKeys
        The altered facts' keys.
    new_authors : torch.Tensor, shape ``(n,)``, int64
        Author indices in ``[0, F)``.
    residuals : torch.Tensor, shape ``(n, d)``, float64
        ``delta``.
    final_loss : torch.Tensor, shape ``(n,)``, float64
        Each fact's cross-entropy (nats) for its new author with its residual.
    """

    prompt: PromptKeys
    new_authors: torch.Tensor
    residuals: torch.Tensor
    final_loss: torch.Tensor

    @property
    def keys(self) -> torch.Tensor:
        """``(n, m)``: the edited keys."""
        return self.prompt.keys

    @property
    def targets(self) -> torch.Tensor:
        """``(n, d)``: ``B k + delta``, what the edited matrix should read out."""
        return self.prompt.outputs + self.residuals


def _bilinear(model) -> BilinearMLP:
    if not isinstance(model, EditingLM):
        raise ValueError(f"model must be an EditingLM; got {type(model).__name__}")
    if not isinstance(model.fact_expert, BilinearMLP):
        raise ValueError("the weight editors edit a BilinearMLP expert's output matrix B; "
                         f"this model's expert is a {type(model.fact_expert).__name__}")
    return model.fact_expert


def _indices(facts, F: int, name: str) -> torch.Tensor:
    idx = torch.as_tensor(facts)
    if idx.is_floating_point() or idx.dtype == torch.bool or idx.dim() != 1 or idx.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-D integer tensor of fact indices")
    idx = idx.to(torch.int64)
    if int(idx.min()) < 0 or int(idx.max()) >= F:
        raise ValueError(f"{name} must lie in [0, F) = [0, {F})")
    return idx


@torch.no_grad()
def prompt_keys(model: EditingLM, corpus: BookCorpus, facts: torch.Tensor, template: int = 0) -> PromptKeys:
    """The keys and expert outputs at the last prompt token of ``facts`` on one template.

    Parameters
    ----------
    model : EditingLM
        With a :class:`~assocmem.mlps.mlp.BilinearMLP` expert.
    corpus : BookCorpus
    facts : torch.Tensor, shape ``(n,)``, integer
        Fact indices in ``[0, F)``.
    template : int, default 0
        The edit template.

    Returns
    -------
    PromptKeys

    Raises
    ------
    ValueError
        Not an EditingLM with a BilinearMLP expert, not a BookCorpus, a corpus with more token ids
        than the model's vocabulary, bad indices, a bad template.
    """
    expert = _bilinear(model)
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    model.check_vocabulary(corpus.vocab_size)
    idx = _indices(facts, corpus.num_facts, "facts")
    tokens, pos = corpus.sequences(template, idx)
    x, _ = model.attention(tokens[:, :pos].to(model.embedding.device))
    x = x[:, -1].to(_F64).cpu()  # (n, d)
    w = {k: getattr(expert, k).detach().to(_F64).cpu() for k in ("A", "G", "B")}
    xt = Fn.normalize(x, dim=-1, eps=model.config.norm_eps)
    keys = (xt @ w["A"].T) * (xt @ w["G"].T)  # (n, m)
    return PromptKeys(idx, x, keys, keys @ w["B"].T)


@torch.no_grad()
def corpus_key_moment(model: EditingLM, corpus: BookCorpus, *, batch: int = 1024) -> torch.Tensor:
    """The uncentred second moment of the expert's keys over the corpus, away from the facts' recall.

    ``C = (1/N) sum_t k_t k_t^T`` over every real next-token position ``t`` of every training
    sentence (:func:`~assocmem.mlps.editing.training.training_sequences`: all training
    templates, every fact with its original author) **except** the position that predicts the
    author, the one efficacy, paraphrase and specificity are scored on. These are the keys the
    expert meets in ordinary text, none of them a fact's recall prompt: the counterpart of the
    moment ROME, MEMIT and AlphaEdit estimate from a sample of Wikipedia, and not the oracle
    moment of the preserved facts' own prompts (:func:`prompt_keys`).

    Parameters
    ----------
    model : EditingLM
        With a :class:`~assocmem.mlps.mlp.BilinearMLP` expert; not changed.
    corpus : BookCorpus
    batch : int, default 1024
        Sentences per forward pass (memory only; the result does not depend on it beyond
        rounding).

    Returns
    -------
    torch.Tensor, shape ``(m, m)``, float64, CPU
        Symmetric positive semidefinite.

    Raises
    ------
    ValueError
        Not an EditingLM with a BilinearMLP expert, not a BookCorpus, a corpus with more token
        ids than the model's vocabulary, a batch that is not a positive integer, or a moment
        that is not finite.

    References
    ----------
    ROME Sec. 3.1 and App. (``C = K K^T`` from 100,000 Wikipedia samples); MEMIT Sec. 4.2 eq.
    (14); AlphaEdit Sec. 3.2 (``K_0`` from 100,000 Wikipedia triplets).
    """
    from assocmem.mlps._checks import check_finite_result
    from assocmem.mlps.editing.training import training_sequences

    expert = _bilinear(model)
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    batch = positive_int("batch", batch)
    model.check_vocabulary(corpus.vocab_size)
    seqs = training_sequences(corpus)
    keep = seqs.mask & ~seqs.author_mask  # (N, T)
    w = {k: getattr(expert, k).detach().to(_F64).cpu() for k in ("A", "G")}
    m = w["A"].shape[0]
    total, count = torch.zeros(m, m, dtype=_F64), 0
    for i in range(0, seqs.tokens.shape[0], batch):
        x, _ = model.attention(seqs.tokens[i:i + batch].to(model.embedding.device))
        x = x.to(_F64).cpu()[keep[i:i + batch]]  # (n, d)
        xt = Fn.normalize(x, dim=-1, eps=model.config.norm_eps)
        k = (xt @ w["A"].T) * (xt @ w["G"].T)  # (n, m)
        total += k.T @ k
        count += k.shape[0]
    C = total / count
    return check_finite_result((C + C.T) / 2, "the corpus key moment")


def learn_residuals(model: EditingLM, corpus: BookCorpus, facts: torch.Tensor, new_authors: torch.Tensor,
                    config: ResidualConfig, template: int = 0) -> EditTargets:
    """Optimise one output residual per altered fact so that the model predicts its new author.

    See the module docstring for the objective; the residuals are independent (one per fact),
    optimised together by Adam (a per-coordinate method, so a batch equals separate runs).

    Parameters
    ----------
    model : EditingLM
        The unedited model (not changed).
    corpus : BookCorpus
    facts : torch.Tensor, shape ``(n,)``, integer
        The altered facts.
    new_authors : torch.Tensor, shape ``(n,)``, integer
        Their new author indices in ``[0, F)``.
    config : ResidualConfig
    template : int, default 0
        The one templated prompt per fact the residuals are learned on.

    Returns
    -------
    EditTargets

    Raises
    ------
    ValueError
        As :func:`prompt_keys`, authors of another length or out of range, a config of the wrong
        type, or a non-finite loss.

    References
    ----------
    ROME Sec. 3.1 (step 2, ``v*``), MEMIT Sec. 4.3 (eq. (16)); seed 001, App. A.4.5.
    """
    if not isinstance(config, ResidualConfig):
        raise ValueError(f"config must be a ResidualConfig; got {type(config).__name__}")
    pk = prompt_keys(model, corpus, facts, template)
    auth = _indices(new_authors, corpus.num_facts, "new_authors")
    if auth.shape != pk.facts.shape:
        raise ValueError(f"new_authors must have one entry per fact ({pk.facts.numel()}); got {auth.numel()}")
    labels = corpus.author_offset + auth
    dev = model.embedding.device
    dt = model.config.dtype
    with torch.no_grad():
        x = pk.x.to(dev, dt)
        alpha = model.router(x).to(_F64).cpu()  # (n, 1)
        aux = model.aux_V(model.aux_U(x)).to(_F64).cpu()  # (n, d)
    gain = model.out_norm.weight.detach().to(_F64).cpu()
    eps = model.out_norm.eps if model.out_norm.eps is not None else torch.finfo(dt).eps
    E = model.embedding.detach().to(_F64).cpu()
    base = (1 - alpha) * aux + alpha * pk.outputs  # (n, d): the feed-forward output without delta
    scale = pk.outputs.norm(dim=1).clamp_min(torch.finfo(_F64).tiny)  # ||B k||

    def losses(delta: torch.Tensor) -> torch.Tensor:
        y = base + alpha * delta
        y = y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + eps) * gain  # RMSNorm_out
        return Fn.cross_entropy(y @ E.T, labels, reduction="none")  # (n,)

    delta = torch.zeros_like(pk.outputs, requires_grad=True)
    opt = torch.optim.Adam([delta], lr=config.lr)
    active = torch.ones(delta.shape[0], dtype=torch.bool)
    for _ in range(config.steps):
        per_fact = losses(delta)
        if config.early_stopping_loss is not None:
            active &= per_fact.detach() >= config.early_stopping_loss
            if not bool(active.any()):
                break
        penalty = config.weight_decay * (delta.pow(2).sum(dim=1) / scale**2)
        loss = ((per_fact + penalty) * active).sum()
        if not bool(torch.isfinite(loss)):
            raise ValueError(f"the residual loss is not finite (lr = {config.lr:g}); lower lr")
        frozen = delta.detach().clone()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            delta[~active] = frozen[~active]
            if config.clip_norm is not None:
                norm = delta.norm(dim=1)
                cap = config.clip_norm * scale
                delta *= torch.where(norm > cap, cap / norm.clamp_min(torch.finfo(_F64).tiny), 1.0)[:, None]
    with torch.no_grad():
        final = losses(delta)
    return EditTargets(pk, auth, delta.detach(), final.detach())


def weight_edit(model: EditingLM, method: str, targets: EditTargets, preserved: PromptKeys, *,
                lam: float = 150.0, rel_tol: float = 1e-2, alpha: float = 1.0,
                ridge: float = 0.0) -> EditingLM:
    """Write the learned targets into the expert's output matrix with ROME, MEMIT or AlphaEdit.

    Parameters
    ----------
    model : EditingLM
        The unedited model; not changed (the result holds an edited deep copy of its expert and
        shares everything else).
    method : {"rome", "memit", "alphaedit"}
        :func:`~assocmem.mlps.editing.editors.rome_edit` (in the order of ``targets``),
        :func:`~assocmem.mlps.editing.editors.memit_edit` or
        :func:`~assocmem.mlps.editing.editors.alphaedit_edit`.
    targets : EditTargets
        :func:`learn_residuals` of this model.
    preserved : PromptKeys or torch.Tensor
        The moment ``C`` that is protected (ROME, MEMIT) or projected out (AlphaEdit): either
        :func:`prompt_keys` of the preserved facts (the oracle moment of the prompts specificity
        is scored on, ``key_covariance`` of their keys) or an ``(m, m)`` moment itself, e.g.
        :func:`corpus_key_moment`.
    lam : float, default 150
        MEMIT's ``lambda`` (seed 001: 150).
    rel_tol : float, default 1e-2
        AlphaEdit's relative eigenvalue threshold (:func:`nullspace_projector`).
    alpha : float, default 1
        AlphaEdit's ridge on ``||Delta P||^2``.
    ridge : float, default 0
        ROME's ``C + ridge I`` (needed only when ``C`` is singular).

    Returns
    -------
    EditingLM

    Raises
    ------
    ValueError
        An unknown method, inputs of the wrong types or widths, or what the editor raises (a
        singular ``C`` for ROME without ridge, a singular MEMIT system, a zero AlphaEdit
        projector).
    """
    expert = _bilinear(model)
    if method not in EDITORS:
        raise ValueError(f"unknown editor {method!r}; valid editors: {', '.join(EDITORS)}")
    if not isinstance(targets, EditTargets) or not isinstance(preserved, (PromptKeys, torch.Tensor)):
        raise ValueError("targets must be EditTargets (learn_residuals) and preserved PromptKeys (prompt_keys) "
                         "or an (m, m) key moment (corpus_key_moment)")
    W = expert.B.detach().to(_F64).cpu()
    if isinstance(preserved, PromptKeys):
        C = key_covariance(preserved.keys)
    else:
        m = W.shape[1]
        if (preserved.shape != (m, m) or preserved.is_complex() or not preserved.is_floating_point()
                or not bool(torch.isfinite(preserved).all())):
            raise ValueError(f"a key moment must be a finite real ({m}, {m}) tensor; got shape "
                             f"{tuple(preserved.shape)}, dtype {preserved.dtype}")
        C = preserved.detach().to(_F64).cpu()
    if method == "rome":
        new = rome_edit(W, targets.keys, targets.targets, C, ridge=ridge)
    elif method == "memit":
        new = memit_edit(W, targets.keys, targets.targets, C, lam=lam)
    else:
        new = alphaedit_edit(W, targets.keys, targets.targets, nullspace_projector(C, rel_tol), alpha=alpha)
    edited = copy.deepcopy(expert)
    with torch.no_grad():
        edited.B.copy_(new.to(edited.B.dtype))
    return model.with_fact_expert(edited)
