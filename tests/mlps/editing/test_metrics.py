"""Tests of assocmem.mlps.editing.metrics on hand-made logits."""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.mlps.editing.metrics import (
    EditMetrics,
    edit_metrics,
    edit_score,
    fact_accuracy,
    nonfact_ppl_ratio,
    token_cross_entropy,
)

LOGITS = torch.tensor([[3.0, 1.0, 0.0],
                       [0.0, 2.0, 2.0],   # tie between 1 and 2
                       [0.5, 0.0, 4.0],
                       [1.0, 0.0, 0.0]])


def test_fact_accuracy_hand_made():
    assert fact_accuracy(LOGITS, torch.tensor([0, 1, 2, 0])) == 0.75  # the tie is an error
    assert fact_accuracy(LOGITS, torch.tensor([0, 2, 2, 0])) == 0.75
    assert fact_accuracy(LOGITS, torch.tensor([1, 0, 0, 1])) == 0.0
    assert fact_accuracy(LOGITS[[0, 2, 3]], torch.tensor([0, 2, 0])) == 1.0
    assert fact_accuracy(torch.tensor([[5.0]]), torch.tensor([0])) == 1.0  # one class


def test_edit_score_harmonic_mean():
    assert edit_score(1.0, 1.0, 1.0) == 1.0
    assert edit_score(0.5, 0.5, 0.5) == pytest.approx(0.5, abs=1e-15)
    assert edit_score(1.0, 1.0, 0.0) == 0.0
    assert edit_score(1.0, 0.5, 0.25) == pytest.approx(3 / (1 + 2 + 4), abs=1e-15)
    # seed 001, Table 1, AlphaEdit at 2 %: efficacy 0.896, paraphrase 0.899, specificity 0.981 -> 0.924
    assert round(edit_score(0.896, 0.899, 0.981), 3) == 0.924


def test_token_cross_entropy_hand_made():
    # two sequences of length 2 over 2 tokens; equal logits give log 2 per position
    logits = torch.zeros(2, 2, 2, dtype=torch.float64)
    logits[1, 1] = torch.tensor([0.0, math.log(3.0)], dtype=torch.float64)  # p(1) = 3/4
    targets = torch.tensor([[0, 1], [1, 1]])
    mask = torch.tensor([[True, True], [False, True]])
    ce = token_cross_entropy(logits, targets, mask)
    assert ce == pytest.approx((2 * math.log(2) + math.log(4 / 3)) / 3, abs=1e-15)
    # masked-out targets may hold anything (padding ids)
    assert token_cross_entropy(logits, torch.tensor([[0, 1], [-100, 1]]), mask) == ce


def test_nonfact_ppl_ratio():
    assert nonfact_ppl_ratio(1.0, 1.0) == 1.0
    assert nonfact_ppl_ratio(2.0, 2.0 + math.log(1.5)) == pytest.approx(1.5, abs=1e-15)
    assert nonfact_ppl_ratio(3.0, 2.0) < 1


def test_edit_metrics_row():
    m = edit_metrics(LOGITS, torch.tensor([0, 1, 2, 0]), LOGITS[:2], torch.tensor([0, 2]),
                     LOGITS[2:], torch.tensor([2, 0]), ce_pre=1.0, ce_post=1.0 + math.log(2.0))
    assert isinstance(m, EditMetrics)
    assert (m.efficacy, m.paraphrase, m.specificity) == (0.75, 0.5, 1.0)
    assert m.score == pytest.approx(3 / (4 / 3 + 2 + 1), abs=1e-15)
    assert m.r_nf == pytest.approx(2.0, abs=1e-14)
    assert set(m.as_dict()) == {"efficacy", "paraphrase", "specificity", "score", "r_nf"}


@pytest.mark.parametrize("call, match", [
    (lambda: fact_accuracy(LOGITS[0], torch.tensor([0])), "logits must be 2-D"),
    (lambda: fact_accuracy(LOGITS, torch.tensor([0, 1])), "labels must have shape"),
    (lambda: fact_accuracy(LOGITS, torch.tensor([0, 1, 2, 3])), "labels must lie in"),
    (lambda: fact_accuracy(LOGITS, torch.tensor([0.0, 1, 2, 0])), "integer tensor"),
    (lambda: fact_accuracy(LOGITS * math.nan, torch.tensor([0, 1, 2, 0])), "non-finite"),
    (lambda: fact_accuracy(torch.zeros(0, 3), torch.zeros(0, dtype=torch.int64)), "at least 1 row"),
    (lambda: edit_score(1.2, 1.0, 1.0), "efficacy must be <= 1"),
    (lambda: edit_score(1.0, -0.1, 1.0), "paraphrase must be >= 0"),
    (lambda: edit_score(1.0, 1.0, math.nan), "specificity must be finite"),
    (lambda: token_cross_entropy(torch.zeros(1, 2, 3), torch.zeros(1, 2, dtype=torch.int64),
                                 torch.zeros(1, 2, dtype=torch.bool)), "selects no position"),
    (lambda: token_cross_entropy(torch.zeros(1, 2, 3), torch.zeros(1, 2, dtype=torch.int64),
                                 torch.ones(1, 3, dtype=torch.bool)), "mask must have shape"),
    (lambda: token_cross_entropy(torch.zeros(1, 2, 3), torch.full((1, 2), 3),
                                 torch.ones(1, 2, dtype=torch.bool)), "must lie in"),
    (lambda: token_cross_entropy(torch.zeros(1, 2, 3), torch.zeros(1, 2, dtype=torch.int64),
                                 torch.ones(1, 2)), "mask must be a bool"),
    (lambda: nonfact_ppl_ratio(-1.0, 1.0), "ce_pre must be >= 0"),
    (lambda: nonfact_ppl_ratio(0.0, 1e6), "overflows"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
