"""Building the MLP memories for insertion: every method, frozen, R^d -> R^d, 3 m d parameters."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.margins.decoding import accuracy
from assocmem.mlps.transformer import METHODS, SSFRTask, build_mlp, embedding_table, fact_map, fact_set

TASK = SSFRTask(16, 3, 2)
E = embedding_table(TASK, 8, seed=0)
FACTS = fact_set(E, TASK, fact_map(TASK, 1))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_builds_a_frozen_square_mlp(method):
    mlp = build_mlp(method, FACTS, 24, seed=0, epochs=30, lr=1e-2)
    assert not any(p.requires_grad for p in mlp.parameters())
    out = mlp(FACTS.keys.to(next(mlp.parameters()).dtype))  # forward does not cast
    assert out.shape == (16, 8)
    assert mlp.num_parameters == 3 * 24 * 8
    assert mlp.construction_method == method


def test_a_wide_whitened_mlp_stores_the_task_facts_and_casts():
    mlp = build_mlp("whitened", FACTS, 64, seed=0, dtype=torch.float32)
    assert mlp.B.dtype == torch.float32
    assert accuracy(mlp, FACTS) == 1.0


def test_gd_mse_uses_the_mse_loss():
    mlp = build_mlp("gd_mse", FACTS, 16, seed=0, epochs=5)
    assert mlp.info["loss"] == "mse"
    assert build_mlp("gd_ce", FACTS, 16, seed=0, epochs=5).info["loss"] == "ce"


def test_unknown_method():
    with pytest.raises(ValueError, match="valid methods"):
        build_mlp("hopfield", FACTS, 4)


def test_a_diverged_gd_run_is_refused_and_a_converged_one_keeps_its_dtype():
    task = SSFRTask(8, 2, 2)
    emb = embedding_table(task, 8, seed=0)
    facts = fact_set(emb, task, fact_map(task, seed=1))
    with pytest.raises(ValueError, match="diverged"):
        build_mlp("gd_ce", facts, 4, epochs=20, lr=1e6)  # weights ~1e6: loss 0 on most keys, huge on the rest
    mlp = build_mlp("gd_ce", facts, 4, epochs=200, lr=1e-2)
    assert mlp.A.dtype == torch.float32 and accuracy(mlp, facts) == 1.0
