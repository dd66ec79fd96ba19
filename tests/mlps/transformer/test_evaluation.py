"""Every-key evaluation, strict decoding, the fact-adaptive swap and the per-key diagnostic."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assocmem.mlps.margins.decoding import output_margins
from assocmem.mlps.mlp import hebbian_mlp
from assocmem.mlps.transformer import (
    fact_adaptive_accuracy,
    fact_map,
    fact_set,
    per_key_accuracy,
    per_key_diagnostic,
    ssfr_accuracy,
    ssfr_correct,
    usable_key_fraction,
)
from assocmem.mlps.transformer.evaluation import _strict_hits
from tests.mlps.transformer._helpers import copy_the_key, tiny


def test_correctness_table_covers_every_key():
    task, E, model = tiny()
    f = fact_map(task, 0)
    c = ssfr_correct(model, task, f, 3, seed=0)
    assert c.shape == (task.num_facts, 3) and c.dtype == torch.bool
    assert ssfr_accuracy(model, task, f, 3, seed=0) == float(c.double().mean())
    assert np.allclose(per_key_accuracy(c), c.double().mean(1).numpy())


def test_ties_are_errors():
    logits = torch.tensor([[1.0, 1.0, 0.0], [0.0, 2.0, 1.0]])
    assert _strict_hits(logits, torch.tensor([0, 1])).tolist() == [False, True]


def test_evaluation_is_chunked_without_changing_the_answer(monkeypatch):
    import assocmem.mlps.transformer.model as M

    task, E, model = tiny()
    f = fact_map(task, 0)
    whole = ssfr_correct(model, task, f, 5, seed=2)
    monkeypatch.setattr(M, "CHUNK_ENTRIES", 7 * task.seq_len * 16)  # 7 rows per chunk
    assert model.chunk_rows(40) == 7
    assert torch.equal(ssfr_correct(model, task, f, 5, seed=2), whole)


def test_fact_adaptive_accuracy_of_an_oracle_attention_is_the_mlp_accuracy():
    task, E, model = tiny()
    copy_the_key(model)
    f_b = fact_map(task, 4)
    mlp_b = hebbian_mlp(fact_set(E, task, f_b), 200, "full")
    assert fact_adaptive_accuracy(model, mlp_b, f_b, 4, 0) == 1.0
    with pytest.raises(ValueError, match="task"):
        fact_adaptive_accuracy(model, mlp_b, f_b, 4, 0, task=type(task)(9, 3, 3))


def test_per_key_diagnostic_joins_margins_and_accuracy():
    task, E, model = tiny()
    copy_the_key(model)
    f = fact_map(task, 1)
    facts = fact_set(E, task, f)
    mlp = hebbian_mlp(facts, 12, "none")  # narrow: some keys may fail
    df = per_key_diagnostic(model.with_mlp(mlp), f, 4, 0, facts=facts)
    assert list(df.columns) == ["key", "value", "margin", "cosine_margin", "mlp_correct", "accuracy", "noise_max"]
    assert np.allclose(df["margin"], output_margins(mlp, facts).numpy())
    assert (df["mlp_correct"] == (df["margin"] > 0)).all()
    # behind an exact copy of the key the Transformer is right exactly where the MLP is
    assert (df["accuracy"] == df["mlp_correct"].astype(float)).all()
    assert usable_key_fraction(df["cosine_margin"]) == df["mlp_correct"].mean()


def test_usable_key_fraction():
    assert usable_key_fraction([0.1, -0.2, 0.3, 0.0]) == 0.5
    assert usable_key_fraction([0.1, 0.2, 0.3], threshold=0.15) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        usable_key_fraction([])
