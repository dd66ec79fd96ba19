"""Tests of assocmem.mlps.editing.training: the corpus sequences, determinism, accuracies."""

from __future__ import annotations

import pytest
import torch

from assocmem.devices import torch_threads
from assocmem.mlps.editing.data import build_corpus, generate_book_facts
from assocmem.mlps.editing.training import (
    LMTrainConfig,
    Sequences,
    author_logits,
    base_model,
    expert_accuracy,
    lm_accuracy,
    train_lm,
    training_sequences,
)

F64 = torch.float64
CORPUS = build_corpus(generate_book_facts(12, seed=0))


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny tensors: one thread is fastest, and it is the arithmetic the determinism test needs."""
    with torch_threads(1):
        yield


def _tiny(steps=60, seed=0):
    return base_model(CORPUS, d=16, expert="data_dependent", m=48, seed=seed, dtype=F64,
                      train=LMTrainConfig(steps=steps, batch_size=16, lr=1e-2, seed=seed))


def test_training_sequences_mark_every_real_position_and_the_author():
    seqs = training_sequences(CORPUS)
    F, nt = CORPUS.num_facts, len(CORPUS.train_templates)
    assert len(seqs) == F * nt and seqs.tokens.shape == seqs.mask.shape
    assert int(seqs.author_mask.sum()) == F * nt  # one author target per sentence
    assert bool((seqs.mask | ~seqs.author_mask).all())  # the author position is a real one
    author_targets = seqs.targets[seqs.author_mask]
    assert bool(((author_targets >= CORPUS.author_offset) & (author_targets < CORPUS.author_offset + F)).all())
    for t in range(nt):  # row 0 of template t is fact 0: its real targets are the sentence shifted by one
        tok, _ = CORPUS.sequences(t, [0])
        row = t * F
        assert torch.equal(seqs.targets[row][seqs.mask[row]], tok[0, 1:])


def test_training_is_deterministic_for_a_seed():
    a, ra = _tiny()
    b, rb = _tiny()
    assert torch.equal(torch.as_tensor(ra.losses), torch.as_tensor(rb.losses))
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert torch.equal(p, q), n
    c, rc = _tiny(seed=1)
    assert not torch.equal(torch.as_tensor(ra.losses), torch.as_tensor(rc.losses))


def test_training_lowers_the_loss_and_leaves_the_expert_frozen():
    model, res = _tiny(steps=150)
    assert res.losses[-20:].mean() < res.losses[:20].mean() - 0.5
    assert not any(p.requires_grad for p in model.fact_expert.parameters())
    assert expert_accuracy(model.fact_expert, model.embedding, CORPUS) == 1.0
    acc = lm_accuracy(model, CORPUS, 0)
    assert 0.0 <= acc <= 1.0


def test_author_logits_are_the_forward_logits_at_the_suffix_end():
    model, _ = _tiny(steps=5)
    tokens, pos = CORPUS.sequences(2, [1, 4])
    want = model(tokens)[:, pos - 1].to(F64)
    got = author_logits(model, CORPUS, 2, [1, 4])
    assert torch.allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: LMTrainConfig(steps=0), "steps"),
    (lambda: LMTrainConfig(steps=3, lr=0.0), "lr"),
    (lambda: LMTrainConfig(steps=3, betas=(0.9, 1.0)), "betas"),
    (lambda: training_sequences(CORPUS, templates=[]), "at least one template"),
    (lambda: training_sequences("corpus"), "BookCorpus"),
    (lambda: train_lm("model", training_sequences(CORPUS), LMTrainConfig(steps=1)), "EditingLM"),
    (lambda: base_model(CORPUS, d=15, expert="gd_mse", m=4, train=LMTrainConfig(steps=1)), "even"),
    (lambda: base_model(CORPUS, d=16, expert="hebbian?", m=4, train=LMTrainConfig(steps=1)), "unknown method"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_train_lm_refuses_a_wrong_data_type():
    model, _ = _tiny(steps=1)
    with pytest.raises(ValueError, match="Sequences"):
        train_lm(model, (1, 2), LMTrainConfig(steps=1))
    seqs = training_sequences(CORPUS)
    big = Sequences(seqs.tokens + 10_000, seqs.targets, seqs.mask, seqs.author_mask)
    with pytest.raises(ValueError, match="vocabulary"):
        train_lm(model, big, LMTrainConfig(steps=1))
