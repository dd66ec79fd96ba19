"""Scoring an edited language model: Table 1's metrics for every editor on one edit.

:class:`EditEvaluation` fixes one edit (an :class:`~assocmem.mlps.editing.swapping.EditAssignment`
of a trained base model) and scores any model that differs from the base **only in its fact
expert** (MLP swapping and the three weight editors all do): the attention outputs do not depend
on the expert, so they are computed once and every scored model only reruns its feed-forward
block and head.

The prompt sets (seed 001, App. A.4.5, "Evaluation"):

* **efficacy**: the altered facts on the edit template (template 0, the one prompt per fact the
  residuals are learned on), labelled with their new authors;
* **paraphrase**: the altered facts on the other training templates (``1 .. 15``), new
  authors. These are rephrasings *held out from the edit* (the editors never see them); the
  model trained on them, as on every template of the corpus. The never-trained rephrasings of
  :data:`~assocmem.mlps.editing.data.HELDOUT_TEMPLATES` are scored separately
  (``unseen``): the small model does not generalise to unseen sentence frames, so an
  accuracy on them measures the frame, not the edit (the chapter shows it);
* **specificity**: the preserved facts on the edit template, original authors;
* ``r_NF``: the cross-entropy over every next-token position **except the author token**, on
  every training template of every fact, the altered ones with their new authors, before and
  after the edit (:func:`~assocmem.mlps.editing.metrics.nonfact_ppl_ratio`).

References
----------
Seed 001, App. A.4.5 and Table 1; MEMIT (Meng et al. 2023), Sec. 5.2.
"""

from __future__ import annotations

import torch
from torch.nn import functional as Fn

from assocmem.mlps.editing.data import BookCorpus
from assocmem.mlps.editing.metrics import EditMetrics, edit_score, fact_accuracy, nonfact_ppl_ratio
from assocmem.mlps.editing.model import EditingLM
from assocmem.mlps.editing.swapping import EditAssignment
from assocmem.mlps.editing.training import training_sequences

__all__ = ["EditEvaluation"]

_F64 = torch.float64


class EditEvaluation:
    """Table 1's metrics of models that share a base model's attention, for one edit.

    Parameters
    ----------
    base : EditingLM
        The trained, unedited model.
    corpus : BookCorpus
    assignment : EditAssignment
        Which facts are altered and their new authors.
    batch : int, default 2048
        Sequences per forward pass.

    Raises
    ------
    ValueError
        A base that is not an EditingLM, a corpus or assignment of the wrong type or size, or a
        corpus with more token ids than the base's vocabulary.

    Attributes
    ----------
    ce_pre : float
        The base model's non-author cross-entropy (nats) on the post-edit sentences.
    """

    def __init__(self, base: EditingLM, corpus: BookCorpus, assignment: EditAssignment, *, batch: int = 2048) -> None:
        if not isinstance(base, EditingLM):
            raise ValueError(f"base must be an EditingLM; got {type(base).__name__}")
        if not isinstance(corpus, BookCorpus):
            raise ValueError(f"corpus must be a BookCorpus; got {type(corpus).__name__}")
        if not isinstance(assignment, EditAssignment) or assignment.authors.numel() != corpus.num_facts:
            raise ValueError(f"assignment must be an EditAssignment over the corpus's F = {corpus.num_facts} facts")
        base.check_vocabulary(corpus.vocab_size)
        self.base, self.corpus, self.assignment, self.batch = base, corpus, assignment, int(batch)
        a = assignment
        n_train = len(corpus.train_templates)
        heldout = range(n_train, corpus.num_templates)
        with torch.no_grad():
            self._edit = self._last_x(0, a.altered)
            self._spec = self._last_x(0, a.preserved)
            self._para = torch.cat([self._last_x(t, a.altered) for t in range(1, n_train)]) if n_train > 1 else None
            self._unseen = torch.cat([self._last_x(t, a.altered) for t in heldout]) if len(heldout) else None
            seqs = training_sequences(corpus, authors=a.authors)
            self._nf_x = self._attention(seqs.tokens)  # (N, T, d), model dtype
            self._nf_targets = seqs.targets
            self._nf_mask = seqs.mask & ~seqs.author_mask
        self._new_labels = corpus.author_offset + a.new_authors
        self._old_labels = corpus.author_offset + a.preserved
        self.ce_pre = self.nonfact_cross_entropy(base)

    def _attention(self, tokens: torch.Tensor) -> torch.Tensor:
        dev = self.base.embedding.device
        return torch.cat([self.base.attention(tokens[i:i + self.batch].to(dev))[0]
                          for i in range(0, tokens.shape[0], self.batch)])

    def _last_x(self, template: int, facts: torch.Tensor) -> torch.Tensor:
        tokens, pos = self.corpus.sequences(template, facts)
        return self._attention(tokens[:, :pos])[:, -1]  # (n, d)

    def _logits(self, model: EditingLM, x: torch.Tensor) -> torch.Tensor:
        return model.head(model.feed_forward(x)).to(_F64).cpu()

    def _check(self, model) -> EditingLM:
        if not isinstance(model, EditingLM) or any(getattr(model, k) is not getattr(self.base, k)
                                                    for k in ("query", "key", "router_in", "aux_U", "out_norm")):
            raise ValueError("model must be an EditingLM sharing the base model's trained modules "
                             "(base.with_fact_expert(...)): only its fact expert may differ")
        return model

    @torch.no_grad()
    def nonfact_cross_entropy(self, model: EditingLM) -> float:
        """Mean cross-entropy (nats) over the non-author positions of the post-edit sentences."""
        model = self._check(model)
        total, count = torch.zeros((), dtype=_F64), 0
        for i in range(0, self._nf_x.shape[0], self.batch):
            m = self._nf_mask[i:i + self.batch]
            logits = self._logits(model, self._nf_x[i:i + self.batch])
            total += Fn.cross_entropy(logits[m], self._nf_targets[i:i + self.batch][m], reduction="sum")
            count += int(m.sum())
        return float(total / count)

    @torch.no_grad()
    def accuracies(self, model: EditingLM) -> dict[str, float]:
        """``efficacy``, ``paraphrase``, ``specificity`` and ``unseen`` (NaN without such templates)."""
        model = self._check(model)
        nt = len(self.corpus.train_templates)
        out = {"efficacy": fact_accuracy(self._logits(model, self._edit), self._new_labels),
               "specificity": fact_accuracy(self._logits(model, self._spec), self._old_labels)}
        out["paraphrase"] = (fact_accuracy(self._logits(model, self._para), self._new_labels.repeat(nt - 1))
                             if self._para is not None else float("nan"))
        nh = self.corpus.num_templates - nt
        out["unseen"] = (fact_accuracy(self._logits(model, self._unseen), self._new_labels.repeat(nh))
                         if self._unseen is not None else float("nan"))
        return out

    def metrics(self, model: EditingLM, *, r_nf: bool = True) -> tuple[EditMetrics, float]:
        """``(EditMetrics, unseen accuracy)`` of an edited model (see the module docstring).

        ``r_nf=False`` skips the non-fact cross-entropy (a forward pass over the whole corpus:
        the dearest part) and reports ``r_nf`` as NaN; the score does not use it.

        Raises
        ------
        ValueError
            A model that does not share the base model's trained modules.
        """
        acc = self.accuracies(model)
        ratio = nonfact_ppl_ratio(self.ce_pre, self.nonfact_cross_entropy(model)) if r_nf else float("nan")
        score = edit_score(acc["efficacy"], acc["paraphrase"], acc["specificity"])
        return EditMetrics(acc["efficacy"], acc["paraphrase"], acc["specificity"], score, ratio), acc["unseen"]
