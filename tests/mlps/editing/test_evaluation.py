"""Tests of assocmem.mlps.editing.evaluation: Table 1's metrics of an edited model."""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as Fn

from assocmem.devices import torch_threads
from assocmem.mlps.editing.data import build_corpus, generate_book_facts
from assocmem.mlps.editing.evaluation import EditEvaluation
from assocmem.mlps.editing.metrics import fact_accuracy
from assocmem.mlps.editing.swapping import edit_assignment, mlp_swap
from assocmem.mlps.editing.training import LMTrainConfig, author_logits, base_model, training_sequences

F64 = torch.float64
CORPUS = build_corpus(generate_book_facts(10, seed=2))
with torch_threads(1):
    BASE, _ = base_model(CORPUS, d=16, expert="data_dependent", m=40, seed=0, dtype=F64,
                         train=LMTrainConfig(steps=30, batch_size=16, lr=1e-2))
A = edit_assignment(CORPUS.num_facts, 0.2, seed=1)


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def test_the_base_model_has_r_nf_one_and_the_accuracies_of_its_logits():
    ev = EditEvaluation(BASE, CORPUS, A)
    m, unseen = ev.metrics(BASE)
    assert m.r_nf == 1.0
    nt = len(CORPUS.train_templates)
    eff = fact_accuracy(author_logits(BASE, CORPUS, 0, A.altered), CORPUS.author_offset + A.new_authors)
    spec = fact_accuracy(author_logits(BASE, CORPUS, 0, A.preserved), CORPUS.author_offset + A.preserved)
    para = fact_accuracy(torch.cat([author_logits(BASE, CORPUS, t, A.altered) for t in range(1, nt)]),
                         (CORPUS.author_offset + A.new_authors).repeat(nt - 1))
    assert (m.efficacy, m.specificity, m.paraphrase) == (eff, spec, para)
    assert 0.0 <= unseen <= 1.0


def test_nonfact_cross_entropy_is_the_forward_pass_loss_off_the_author_tokens():
    ev = EditEvaluation(BASE, CORPUS, A)
    seqs = training_sequences(CORPUS, authors=A.authors)
    with torch.no_grad():
        logits = BASE(seqs.tokens).to(F64)
    keep = seqs.mask & ~seqs.author_mask
    want = float(Fn.cross_entropy(logits[keep], seqs.targets[keep]))
    assert math.isclose(ev.ce_pre, want, rel_tol=1e-12)


def test_swapping_is_scored_and_r_nf_is_the_exponential_of_the_loss_change():
    ev = EditEvaluation(BASE, CORPUS, A)
    swapped = mlp_swap(BASE, CORPUS, A.authors, "data_dependent", 40, seed=0)
    m, _ = ev.metrics(swapped)
    assert math.isclose(m.r_nf, math.exp(ev.nonfact_cross_entropy(swapped) - ev.ce_pre), rel_tol=1e-12)
    no_nf, _ = ev.metrics(swapped, r_nf=False)
    assert math.isnan(no_nf.r_nf) and no_nf.score == m.score


def test_a_model_with_other_attention_is_refused():
    other, _ = base_model(CORPUS, d=16, expert="data_dependent", m=40, seed=1, dtype=F64,
                          train=LMTrainConfig(steps=1, batch_size=4))
    ev = EditEvaluation(BASE, CORPUS, A)
    with pytest.raises(ValueError, match="sharing the base model's trained modules"):
        ev.metrics(other)
    with pytest.raises(ValueError, match="EditAssignment"):
        EditEvaluation(BASE, CORPUS, edit_assignment(CORPUS.num_facts + 1, 0.2))
    with pytest.raises(ValueError, match="EditingLM"):
        EditEvaluation("model", CORPUS, A)
