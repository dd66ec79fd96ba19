"""Tests of assocmem.mlps.editing.residuals: keys, learned residuals, each editor end to end."""

from __future__ import annotations

import pytest
import torch

from assocmem.devices import torch_threads
from assocmem.mlps.editing.data import build_corpus, generate_book_facts
from assocmem.mlps.editing.evaluation import EditEvaluation
from assocmem.mlps.editing.residuals import (
    EditTargets,
    ResidualConfig,
    corpus_key_moment,
    learn_residuals,
    prompt_keys,
    weight_edit,
)
from assocmem.mlps.editing.swapping import build_fact_expert, edit_assignment, expert_fact_set
from assocmem.mlps.editing.editors import key_covariance
from assocmem.mlps.editing.training import LMTrainConfig, author_logits, base_model, training_sequences

F64 = torch.float64
CORPUS = build_corpus(generate_book_facts(12, seed=1))
F = CORPUS.num_facts
# the base: a data-dependent expert wider than F (its preserved keys leave a null space)
with torch_threads(1):  # tiny tensors: one thread is fastest, and deterministic
    BASE, _ = base_model(CORPUS, d=16, expert="data_dependent", m=48, seed=0, dtype=F64,
                         train=LMTrainConfig(steps=40, batch_size=16, lr=1e-2))
    # the same model with a narrow GD expert (m = 8 < preserved facts: a full-rank key covariance)
    NARROW = BASE.with_fact_expert(build_fact_expert("gd_mse", expert_fact_set(BASE.embedding, CORPUS), 8,
                                                     seed=0, epochs=200, lr=1e-2))
A = edit_assignment(F, 0.2, seed=0)  # 2 altered facts
STRONG = ResidualConfig(steps=300, lr=0.1)


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def _predicts_new_authors(model) -> bool:
    logits = author_logits(model, CORPUS, 0, A.altered)
    return bool((logits.argmax(dim=1) == CORPUS.author_offset + A.new_authors).all())


def test_prompt_keys_are_the_experts_hidden_activations_at_the_last_prompt_token():
    pk = prompt_keys(BASE, CORPUS, A.altered)
    tokens, pos = CORPUS.sequences(0, A.altered)
    x, _ = BASE.attention(tokens[:, :pos])
    xt = BASE.expert_input(x[:, -1])
    assert torch.allclose(pk.keys, BASE.fact_expert.features(xt).to(F64), atol=1e-12)
    assert torch.allclose(pk.outputs, BASE.fact_expert(xt).to(F64), atol=1e-12)


def test_learned_residuals_make_the_edited_prompt_predict_the_new_author():
    t = learn_residuals(BASE, CORPUS, A.altered, A.new_authors, STRONG)
    assert isinstance(t, EditTargets) and t.residuals.shape == (2, 16)
    # the head's RMSNorm bounds the logits, so the loss has a floor; the argmax is what moves
    assert bool((t.final_loss < learn_residuals(BASE, CORPUS, A.altered, A.new_authors,
                                                ResidualConfig(steps=1, lr=1e-12)).final_loss).all())
    # the model's own forward pass, with delta added to the expert output, gives the new authors
    tokens, pos = CORPUS.sequences(0, A.altered)
    x = BASE.attention(tokens[:, :pos])[0][:, -1]
    alpha = BASE.router(x)
    y = alpha * (BASE.fact_output(BASE.expert_input(x)) + t.residuals) + (1 - alpha) * BASE.aux_V(BASE.aux_U(x))
    assert torch.equal(BASE.head(y).argmax(dim=1), CORPUS.author_offset + A.new_authors)
    assert not _predicts_new_authors(BASE)


def test_clip_norm_and_early_stopping_bound_the_residuals():
    clipped = learn_residuals(BASE, CORPUS, A.altered, A.new_authors, ResidualConfig(steps=50, lr=0.5, clip_norm=0.1))
    scale = clipped.prompt.outputs.norm(dim=1)
    assert bool((clipped.residuals.norm(dim=1) <= 0.1 * scale * (1 + 1e-12)).all())
    full = learn_residuals(BASE, CORPUS, A.altered, A.new_authors, STRONG)
    stop = float(full.final_loss.max()) + 0.2  # reached by every fact before the last step
    early = learn_residuals(BASE, CORPUS, A.altered, A.new_authors,
                            ResidualConfig(steps=300, lr=0.1, early_stopping_loss=stop))
    assert float(early.residuals.norm()) < float(full.residuals.norm())
    assert bool((early.final_loss < stop).all())


def test_rome_end_to_end_inserts_a_single_edit_exactly():
    one = edit_assignment(F, 0.01, seed=2)  # num_edits floors at 2; edit only the first fact
    t = learn_residuals(BASE, CORPUS, one.altered[:1], one.authors[one.altered[:1]], STRONG)
    preserved = prompt_keys(BASE, CORPUS, one.preserved)
    edited = weight_edit(BASE, "rome", t, preserved, ridge=1e-9)
    got = prompt_keys(edited, CORPUS, one.altered[:1]).outputs
    assert torch.allclose(got, t.targets, atol=1e-8)
    logits = author_logits(edited, CORPUS, 0, one.altered[:1])
    assert int(logits.argmax()) == CORPUS.author_offset + int(one.authors[one.altered[0]])


def test_memit_end_to_end_with_a_small_lambda_hits_every_target():
    t = learn_residuals(NARROW, CORPUS, A.altered, A.new_authors, STRONG)
    edited = weight_edit(NARROW, "memit", t, prompt_keys(NARROW, CORPUS, A.preserved), lam=1e-9)
    assert torch.allclose(prompt_keys(edited, CORPUS, A.altered).outputs, t.targets, atol=1e-5)
    assert _predicts_new_authors(edited)


def test_alphaedit_end_to_end_edits_and_leaves_the_preserved_facts_exactly():
    t = learn_residuals(BASE, CORPUS, A.altered, A.new_authors, STRONG)
    pres = prompt_keys(BASE, CORPUS, A.preserved)
    edited = weight_edit(BASE, "alphaedit", t, pres, rel_tol=1e-6, alpha=1e-8)
    assert _predicts_new_authors(edited)
    after = prompt_keys(edited, CORPUS, A.preserved).outputs
    assert torch.allclose(after, pres.outputs, atol=1e-9)  # P k_p = 0: preserved read-outs unchanged
    ev = EditEvaluation(BASE, CORPUS, A)
    m, _ = ev.metrics(edited)
    assert m.efficacy == 1.0 and m.specificity == ev.accuracies(BASE)["specificity"]


def test_weight_edit_returns_a_new_model_and_leaves_the_base_alone():
    B = BASE.fact_expert.B.detach().clone()
    t = learn_residuals(BASE, CORPUS, A.altered, A.new_authors, ResidualConfig(steps=5))
    edited = weight_edit(BASE, "alphaedit", t, prompt_keys(BASE, CORPUS, A.preserved))
    assert torch.equal(BASE.fact_expert.B, B)
    assert edited.fact_expert is not BASE.fact_expert and edited.query is BASE.query
    assert not torch.equal(edited.fact_expert.B, B)


def test_corpus_key_moment_averages_the_keys_of_every_non_author_position():
    seqs = training_sequences(CORPUS)
    x, _ = BASE.attention(seqs.tokens)
    keep = seqs.mask & ~seqs.author_mask
    keys = BASE.fact_expert.features(BASE.expert_input(x[keep])).to(F64)  # (N, m)
    C = corpus_key_moment(BASE, CORPUS, batch=5)  # batches that do not divide the sentences
    assert C.shape == (48, 48) and C.dtype == F64
    assert torch.allclose(C, keys.T @ keys / keys.shape[0], atol=1e-12)
    # no author-predicting position: the fact prompts' own keys are not in the sample
    assert keys.shape[0] == int(keep.sum()) < int(seqs.mask.sum())


def test_weight_edit_takes_a_moment_as_well_as_preserved_keys():
    t = learn_residuals(NARROW, CORPUS, A.altered, A.new_authors, ResidualConfig(steps=5))
    pres = prompt_keys(NARROW, CORPUS, A.preserved)
    by_keys = weight_edit(NARROW, "memit", t, pres, lam=2.0)
    by_moment = weight_edit(NARROW, "memit", t, key_covariance(pres.keys), lam=2.0)
    assert torch.allclose(by_keys.fact_expert.B, by_moment.fact_expert.B, atol=1e-12)
    corpus = weight_edit(NARROW, "memit", t, corpus_key_moment(NARROW, CORPUS), lam=2.0)
    assert not torch.allclose(corpus.fact_expert.B, by_keys.fact_expert.B, atol=1e-6)
    with pytest.raises(ValueError, match="key moment must be"):
        weight_edit(NARROW, "memit", t, torch.eye(7, dtype=F64))
    with pytest.raises(ValueError, match="key moment must be"):
        weight_edit(NARROW, "memit", t, torch.full((8, 8), float("nan"), dtype=F64))


@pytest.mark.parametrize("call, match", [
    (lambda: corpus_key_moment(BASE, CORPUS, batch=0), "batch"),
    (lambda: corpus_key_moment(BASE, "corpus"), "BookCorpus"),
    (lambda: ResidualConfig(steps=0), "steps"),
    (lambda: ResidualConfig(clip_norm=0.0), "clip_norm"),
    (lambda: ResidualConfig(early_stopping_loss=-1.0), "early_stopping_loss"),
    (lambda: prompt_keys(BASE, CORPUS, torch.tensor([F])), "\\[0, F\\)"),
    (lambda: prompt_keys(BASE, CORPUS, torch.tensor([0.5])), "integer"),
    (lambda: prompt_keys("model", CORPUS, A.altered), "EditingLM"),
    (lambda: learn_residuals(BASE, CORPUS, A.altered, A.new_authors[:1], STRONG), "one entry per fact"),
    (lambda: learn_residuals(BASE, CORPUS, A.altered, A.new_authors, {"steps": 3}), "ResidualConfig"),
    (lambda: weight_edit(BASE, "kn", None, None), "unknown editor"),
    (lambda: weight_edit(BASE, "rome", None, None), "EditTargets"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_editor_failures_are_clear_errors():
    t = learn_residuals(NARROW, CORPUS, A.altered, A.new_authors, ResidualConfig(steps=5))
    full_rank = prompt_keys(NARROW, CORPUS, A.preserved)
    with pytest.raises(ValueError, match="projector is zero"):
        weight_edit(NARROW, "alphaedit", t, full_rank, rel_tol=0.0)
    t_wide = learn_residuals(BASE, CORPUS, A.altered, A.new_authors, ResidualConfig(steps=5))
    singular = prompt_keys(BASE, CORPUS, A.preserved)  # 10 keys in R^48
    with pytest.raises(ValueError, match="pass ridge > 0"):
        weight_edit(BASE, "rome", t_wide, singular)
    with pytest.raises(ValueError, match="singular"):
        weight_edit(BASE, "memit", t_wide, singular, lam=0.0)
