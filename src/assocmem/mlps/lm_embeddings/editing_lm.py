"""The MLP input/output pairs of the book's own trained language model (chapter 16's ``EditingLM``).

Seed 001 (App. A.5.3) captures, at one layer of a pretrained LM, the MLP block's input ``x`` and
output ``y`` for every token of a text stream. The book cannot download Qwen3 or WikiText, so it
captures the same two quantities from the one-layer book-author language model that it trains
itself (:class:`~assocmem.mlps.editing.model.EditingLM`, seed 001 App. A.4.5):

* ``x_t``: the input of the feed-forward block, the attention output at token ``t`` (learned: the
  query and key maps and the norms are trained);
* ``y_t``: the feed-forward block's output, ``alpha_t f_fact(x~_t) + (1 - alpha_t) f_aux(x_t)``
  (the model has no residual, so this is the block's whole contribution).

Text stream: every training sentence ``<bos> prefix book suffix author <eos>`` of every fact.
A causal model's activations at token ``t`` depend on tokens ``1..t`` only, so two sentences that
share their first ``t`` tokens (every sentence of one template shares its prefix) give the *same*
pair there; :func:`capture_editing_lm` keeps one pair per distinct token prefix, found from the
token ids, so that no fact set drawn later contains a key twice.

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.4.5 (the model), App. A.5.3 (LM
embeddings).
"""

from __future__ import annotations

import torch

from assocmem.mlps.lm_embeddings.pairs import EmbeddingPairs

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem.mlps.editing.data import BookCorpus
    from assocmem.mlps.editing.model import EditingLM
    from collections.abc import Sequence

__all__ = ["capture_editing_lm", "distinct_prefix_rows"]


def distinct_prefix_rows(tokens: torch.Tensor, seen: set | None = None) -> torch.Tensor:
    """Positions ``(row, t)`` of ``tokens`` whose prefix ``tokens[row, :t + 1]`` appears there first.

    Parameters
    ----------
    tokens : torch.Tensor, shape ``(n, T)``, integer
        Token sequences (one template's sentences have one length).
    seen : set, optional
        Prefixes (tuples of ids) met before, e.g. in other templates: skipped, and the new ones are
        added to it.

    Returns
    -------
    torch.Tensor, shape ``(k, 2)``, int64
        ``(row, t)`` pairs in row-major order, the first occurrence of each distinct prefix.

    Raises
    ------
    ValueError
        Not a 2-D integer tensor, or a ``seen`` that is not a set.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point() \
            or tokens.is_complex() or tokens.dtype == torch.bool:
        raise ValueError(f"tokens must be a 2-D integer tensor; got {getattr(tokens, 'shape', type(tokens))}")
    if seen is not None and not isinstance(seen, set):
        raise ValueError(f"seen must be a set of prefixes (tuples of ids); got {type(seen).__name__}")
    rows = tokens.tolist()
    seen = set() if seen is None else seen
    keep = []
    for r, seq in enumerate(rows):
        for t in range(len(seq)):
            prefix = tuple(seq[: t + 1])
            if prefix not in seen:
                seen.add(prefix)
                keep.append((r, t))
    return torch.tensor(keep, dtype=torch.int64).reshape(-1, 2)


def capture_editing_lm(model: EditingLM, corpus: BookCorpus, templates: Sequence[int] | None = None, *,
                       batch_size: int = 512) -> EmbeddingPairs:
    """The feed-forward block's input and output at every distinct token prefix of the corpus.

    Parameters
    ----------
    model : assocmem.mlps.editing.EditingLM
        A (trained) book-author language model.
    corpus : assocmem.mlps.editing.BookCorpus
        Its corpus; the sentences are ``corpus.sequences(template)`` for every fact.
    templates : sequence of int, optional
        Template indices (default: the training templates, ``range(len(corpus.train_templates))``).
    batch_size : int, default 512
        Sentences per forward pass (memory only; the pairs do not depend on it beyond rounding).

    Returns
    -------
    EmbeddingPairs
        ``inputs`` ``(N, d)`` (the attention outputs ``x_t``) and ``outputs`` ``(N, d)`` (the block's
        outputs ``y_t``), in the model's dtype on the CPU, one row per distinct prefix, templates in
        the order given, then sentence, then position.

    Raises
    ------
    ValueError
        A model that is not an ``EditingLM``, a corpus that is not a ``BookCorpus`` or has more
        token ids than the model's vocabulary, template indices out of range (a bool or a
        non-integral float is refused), an empty template list, or a ``batch_size`` below 1.

    References
    ----------
    Seed 001, App. A.5.3 (per-token MLP inputs and outputs at one layer).
    """
    from assocmem._checks import as_int
    from assocmem.mlps.editing import BookCorpus, EditingLM

    if not isinstance(model, EditingLM):
        raise ValueError(f"model must be an EditingLM; got {type(model).__name__}")
    if not isinstance(corpus, BookCorpus):
        raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
    model.check_vocabulary(corpus.vocab_size)
    step = as_int(batch_size, "batch_size", minimum=1)
    chosen = list(range(len(corpus.train_templates))) if templates is None else [
        as_int(t, "template", minimum=0) for t in templates]
    if not chosen:
        raise ValueError("templates must name at least one template")
    for t in chosen:
        if t >= corpus.num_templates:
            raise ValueError(f"template {t} is out of range [0, {corpus.num_templates})")
    device = next(model.parameters()).device
    xs, ys = [], []
    seen: set[tuple[int, ...]] = set()
    with torch.no_grad():
        for t in chosen:
            tokens, _ = corpus.sequences(t)
            index = distinct_prefix_rows(tokens, seen)  # prefixes not met in this or an earlier template
            for lo in range(0, tokens.shape[0], step):
                sel = index[(index[:, 0] >= lo) & (index[:, 0] < lo + step)]
                if sel.numel() == 0:
                    continue
                x, _ = model.attention(tokens[lo: lo + step].to(device))
                y = model.feed_forward(x)
                xs.append(x[sel[:, 0] - lo, sel[:, 1]].cpu())
                ys.append(y[sel[:, 0] - lo, sel[:, 1]].cpu())
    names = ",".join(str(t) for t in chosen)
    return EmbeddingPairs(torch.cat(xs), torch.cat(ys),
                          source=f"book-author LM (d = {model.config.d}), feed-forward block, templates {names}")
