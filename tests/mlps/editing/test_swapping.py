"""Tests of assocmem.mlps.editing.swapping: edit assignments, the expert's fact set, MLP swapping."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.editing.data import build_corpus, generate_book_facts
from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, kaiming_embedding
from assocmem.mlps.editing.swapping import (
    build_fact_expert,
    edit_assignment,
    expert_fact_set,
    mlp_swap,
    num_edits,
)
from assocmem.mlps.margins import accuracy

F64 = torch.float64
CORPUS = build_corpus(generate_book_facts(24, seed=0))
D = 16
E = kaiming_embedding(CORPUS.vocab_size, D, seed=0, dtype=F64)
CFG = EditingLMConfig(vocab_size=CORPUS.vocab_size, d=D, qk_hidden=8, aux_rank=2, router_hidden=4, dtype=F64)


def test_num_edits_matches_the_seed():
    assert [num_edits(16384, f) for f in (0.02, 0.05, 0.10)] == [328, 819, 1638]  # seed 001, App. A.4.5
    assert num_edits(10, 0.01) == 2


def test_edit_assignment_is_a_derangement_of_the_altered_facts():
    a = edit_assignment(100, 0.1, seed=3)
    assert a.altered.numel() == 10 and a.preserved.numel() == 90
    assert torch.equal(torch.sort(torch.cat([a.altered, a.preserved])).values, torch.arange(100))
    assert bool((a.authors[a.altered] != a.altered).all())
    assert torch.equal(a.authors[a.preserved], a.preserved)
    assert torch.equal(a.authors.sort().values, torch.arange(100))  # still one book per author
    assert torch.equal(a.new_authors.sort().values, a.altered)  # a permutation of the altered authors
    b = edit_assignment(100, 0.1, seed=3)
    assert torch.equal(a.authors, b.authors)


def test_expert_fact_set():
    fs = expert_fact_set(E, CORPUS)
    F = CORPUS.num_facts
    assert fs.keys.shape == (F, D) and fs.values.shape == (F, D) and fs.keys.dtype == F64
    assert torch.allclose(fs.keys[3] * E[CORPUS.book_offset + 3].norm(), E[CORPUS.book_offset + 3], atol=1e-14)
    assert torch.equal(fs.mapping, torch.arange(F))
    a = edit_assignment(F, 0.25, seed=0)
    assert torch.equal(expert_fact_set(E, CORPUS, a.authors).mapping, a.authors)


def test_mlp_swap_stores_the_edited_facts_and_keeps_the_transformer():
    F = CORPUS.num_facts
    base_expert = build_fact_expert("data_dependent", expert_fact_set(E, CORPUS), 128, seed=0)
    base = EditingLM(CFG, E, base_expert, seed=0)
    a = edit_assignment(F, 0.25, seed=1)
    swapped = mlp_swap(base, CORPUS, a.authors, "data_dependent", 128, seed=0)
    edited = expert_fact_set(E, CORPUS, a.authors)
    assert accuracy(swapped.fact_expert, edited) == 1.0  # the new expert stores the post-edit facts
    assert accuracy(base.fact_expert, edited) < 1.0  # the old one does not
    assert swapped.query is base.query and swapped.aux_U is base.aux_U and swapped.out_norm is base.out_norm
    assert base.fact_expert is base_expert
    tokens, pos = CORPUS.sequences(0)
    x, _ = base.attention(tokens)
    assert torch.equal(swapped.attention(tokens)[0], x)


def test_gd_mse_expert():
    expert = build_fact_expert("gd_mse", expert_fact_set(E, CORPUS), 32, seed=0, epochs=40, lr=1e-2)
    assert expert.construction_method == "gd_mse"
    assert not any(p.requires_grad for p in expert.parameters())


@pytest.mark.parametrize("call, match", [
    (lambda: num_edits(1, 0.5), "at least 2 facts"),
    (lambda: num_edits(10, 0.0), "fraction must be > 0"),
    (lambda: num_edits(10, 1.5), "fraction must be <= 1"),
    (lambda: edit_assignment(10, 0.5, seed=0.5), "seed must be an integer"),
    (lambda: expert_fact_set(E[:-1], CORPUS), "vocab_size"),
    (lambda: expert_fact_set(E, "corpus"), "must be a BookCorpus"),
    (lambda: expert_fact_set(E, CORPUS, torch.arange(3)), "authors must have shape"),
    (lambda: build_fact_expert("rome", expert_fact_set(E, CORPUS), 8), "unknown method"),
    (lambda: mlp_swap("model", CORPUS, torch.arange(24), "data_dependent", 8), "must be an EditingLM"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
