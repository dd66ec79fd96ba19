"""Tests of assocmem.mlps.editing.training: the corpus sequences, determinism, accuracies."""

from __future__ import annotations

import copy

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


def _tiny(steps=60, seed=0, dtype=F64):
    return base_model(CORPUS, d=16, expert="data_dependent", m=48, seed=seed, dtype=dtype,
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


def _state(model):
    # the expert's construction record is extra state (a dict), not a tensor
    return {k: v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for k, v in model.state_dict().items()}


def _same_state(model, before):
    return all(torch.equal(v, before[k]) if isinstance(v, torch.Tensor) else v == before[k]
               for k, v in model.state_dict().items())


@pytest.fixture(scope="module")
def tiny_model():
    with torch_threads(1):
        return _tiny(steps=2)[0]


@pytest.mark.parametrize("dtype, says", [
    # float32: the activations overflow; the expert's forward does not inspect them (sync-free), so
    # the NaN reaches the loss, which the loss guard refuses
    (torch.float32, "the loss is nan at step 2"),
    (F64, r"the loss is [\d.]+e\+30 at step 2, above 708 nats"),  # finite: weights near 1e30
])
def test_a_diverging_training_raises_naming_its_step_and_restores_the_model(dtype, says):
    """lr = 1e30: one update drives the weights to about 1e30. In float32 the next forward pass
    overflows and the loss is NaN; in float64 every number is still finite but
    the loss, some 4e30 nats, is beyond the loss limit (such a run used to go on, and with fewer
    steps returned the model)."""
    from assocmem._checks import TrainingDiverged
    model = _tiny(steps=2, dtype=dtype)[0]
    before = _state(model)
    model.eval()
    with pytest.raises(TrainingDiverged, match=rf"train_lm diverged: {says}.*lr = 1e\+30.*restored"):
        train_lm(model, training_sequences(CORPUS), LMTrainConfig(steps=20, batch_size=16, lr=1e30))
    assert _same_state(model, before) and not model.training


@pytest.mark.parametrize("dtype, says", [
    (torch.float32, r"the (forward pass fails|loss is (nan|inf|[\d.]+e\+\d+)) after the last update \(step 1\)"),
    (F64, r"the loss is [\d.]+e\+15 after the last update \(step 1\), above 708 nats"),
])
def test_a_last_update_that_blows_up_the_weights_is_refused_and_undone(dtype, says):
    """lr = 1e15 for one step leaves finite weights near 1e15, which the training used to return:
    the loss after the last update is checked as every other."""
    from assocmem._checks import TrainingDiverged
    model = _tiny(steps=2, dtype=dtype)[0]
    before = _state(model)
    with pytest.raises(TrainingDiverged, match=rf"train_lm diverged: {says}.*restored"):
        train_lm(model, training_sequences(CORPUS), LMTrainConfig(steps=1, batch_size=16, lr=1e15))
    assert _same_state(model, before)


@pytest.mark.parametrize("factor, says", [(float("nan"), "the loss is nan at step 4 "),
                                          (1e6, r"the loss is [\d.]+e\+0[67] at step 4, above 708 nats")])
def test_an_injected_nan_or_finite_blow_up_stops_the_training_at_its_step(tiny_model, scale_loss_at, factor, says):
    """A loss of some 1e6 nats is finite but beyond float64's loss limit: a divergence (it used to
    go on training)."""
    import assocmem.mlps.editing.training as T

    before = _state(tiny_model)
    calls = scale_loss_at(T.Fn, 4, factor)
    with pytest.raises(FloatingPointError, match=says):
        train_lm(tiny_model, training_sequences(CORPUS), LMTrainConfig(steps=10, batch_size=8, lr=1e-2))
    assert len(calls) == 4 and _same_state(tiny_model, before)


def test_a_last_update_that_leaves_a_non_finite_weight_is_refused_and_undone(tiny_model, monkeypatch):
    real = torch.optim.AdamW.step

    def step(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        self.param_groups[0]["params"][0].data.fill_(float("nan"))
        return out

    before = _state(tiny_model)
    monkeypatch.setattr(torch.optim.AdamW, "step", step)
    with pytest.raises(ValueError, match="the last update left parameter .* non-finite"):
        train_lm(tiny_model, training_sequences(CORPUS), LMTrainConfig(steps=1, batch_size=8, lr=1e-2))
    assert _same_state(tiny_model, before)


def test_evaluating_a_model_or_expert_with_non_finite_weights_raises(tiny_model):
    broken = _tiny(steps=1)[0]
    with torch.no_grad():
        broken.router_in.weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="parameter 'router_in.weight' is not finite"):
        lm_accuracy(broken, CORPUS, 0)
    with torch.no_grad():
        next(iter(broken.fact_expert.parameters())).fill_(float("inf"))
    with pytest.raises(ValueError, match="the fact expert's parameter .* is not finite"):
        expert_accuracy(broken.fact_expert, broken.embedding, CORPUS)


def test_the_accuracy_helpers_refuse_float_or_bool_indices(tiny_model):
    for facts, match in (([0.5, 1], "facts must hold whole numbers"), ([True], "facts must hold integers")):
        with pytest.raises(ValueError, match=match):
            lm_accuracy(tiny_model, CORPUS, 0, facts)
    with pytest.raises(ValueError, match="template must be an integer"):
        lm_accuracy(tiny_model, CORPUS, True)
    with pytest.raises(ValueError, match="corpus must be a BookCorpus"):
        lm_accuracy(tiny_model, "corpus", 0)
    assert lm_accuracy(tiny_model, CORPUS, 0, [0.0, 1.0]) == lm_accuracy(tiny_model, CORPUS, 0, [0, 1])


def test_a_model_whose_vocabulary_is_smaller_than_the_corpus_is_refused_up_front():
    from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, kaiming_embedding
    from assocmem.mlps.lm_embeddings import capture_editing_lm
    small = CORPUS.vocab_size - 5
    expert = _tiny(steps=1)[0].fact_expert
    model = EditingLM(EditingLMConfig(vocab_size=small, d=16, dtype=F64), kaiming_embedding(small, 16, dtype=F64),
                      expert)
    for call in (lambda: lm_accuracy(model, CORPUS, 0), lambda: author_logits(model, CORPUS, 0),
                 lambda: capture_editing_lm(model, CORPUS)):
        with pytest.raises(ValueError, match=f"the corpus has {CORPUS.vocab_size} token ids, but the model's "
                                             f"vocabulary holds {small}"):
            call()
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, "):
        train_lm(model, training_sequences(CORPUS), LMTrainConfig(steps=1))
