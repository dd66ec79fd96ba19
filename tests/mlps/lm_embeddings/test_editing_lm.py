"""Tests of assocmem.mlps.lm_embeddings.editing_lm: one pair per distinct token prefix, and the
pairs are the feed-forward block's input and output."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.editing import build_corpus, generate_book_facts
from assocmem.mlps.editing.model import EditingLM, EditingLMConfig, kaiming_embedding
from assocmem.mlps.lm_embeddings.editing_lm import capture_editing_lm, distinct_prefix_rows
from assocmem.mlps.mlp import BilinearMLP

F64 = torch.float64
CORPUS = build_corpus(generate_book_facts(12, seed=0))
D = 8


def _model():
    g = torch.Generator().manual_seed(0)
    expert = BilinearMLP(torch.randn(5, D, generator=g, dtype=F64), torch.randn(5, D, generator=g, dtype=F64),
                         torch.randn(D, 5, generator=g, dtype=F64), construction="test")
    cfg = EditingLMConfig(vocab_size=CORPUS.vocab_size, d=D, qk_hidden=6, aux_rank=2, router_hidden=4, dtype=F64)
    return EditingLM(cfg, kaiming_embedding(CORPUS.vocab_size, D, seed=0, dtype=F64), expert, seed=0)


MODEL = _model()


def test_distinct_prefix_rows_first_occurrences():
    t = torch.tensor([[1, 2, 3], [1, 2, 4], [1, 5, 3]])
    assert distinct_prefix_rows(t).tolist() == [[0, 0], [0, 1], [0, 2], [1, 2], [2, 1], [2, 2]]
    seen = {(1,), (1, 2)}
    assert distinct_prefix_rows(t, seen).tolist() == [[0, 2], [1, 2], [2, 1], [2, 2]]
    assert (1, 5, 3) in seen


def test_one_pair_per_distinct_prefix_across_templates():
    pairs = capture_editing_lm(MODEL, CORPUS)
    prefixes = set()
    for t in range(len(CORPUS.train_templates)):
        tokens, _ = CORPUS.sequences(t)
        for row in tokens.tolist():
            prefixes.update(tuple(row[: p + 1]) for p in range(len(row)))
    assert len(pairs) == len(prefixes)
    assert pairs.d_in == pairs.d_out == D and pairs.inputs.dtype == F64


def test_pairs_are_the_blocks_input_and_output():
    pairs = capture_editing_lm(MODEL, CORPUS, templates=[1], batch_size=5)  # batches split the facts
    tokens, _ = CORPUS.sequences(1)
    keep = distinct_prefix_rows(tokens)
    with torch.no_grad():
        x, _ = MODEL.attention(tokens)
        y = MODEL.feed_forward(x)
    torch.testing.assert_close(pairs.inputs, x[keep[:, 0], keep[:, 1]], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(pairs.outputs, y[keep[:, 0], keep[:, 1]], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    ({"templates": []}, "at least one"),
    ({"templates": [99]}, "out of range"),
    ({"templates": [-1]}, "template"),
    ({"batch_size": 0}, "batch_size"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        capture_editing_lm(MODEL, CORPUS, **kwargs)


def test_refuses_other_models_and_corpora():
    with pytest.raises(ValueError, match="EditingLM"):
        capture_editing_lm(torch.nn.Linear(2, 2), CORPUS)
    with pytest.raises(ValueError, match="BookCorpus"):
        capture_editing_lm(MODEL, "corpus")
    with pytest.raises(ValueError, match="integer"):
        distinct_prefix_rows(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="seen must be a set"):
        distinct_prefix_rows(torch.zeros(2, 3, dtype=torch.int64), seen=[])
