"""The SSFR task: token layout, the generator's distribution, determinism, embeddings and fact sets."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from assocmem.mlps.transformer.ssfr import (
    SSFRTask,
    check_mapping,
    embedding_table,
    fact_map,
    fact_set,
    identity_map,
    ssfr_batch,
    ssfr_eval_batch,
)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def test_sizes_and_token_ids():
    t = SSFRTask(10, 4, 3)
    assert (t.vocab_size, t.seq_len, t.query_token, t.key_position, t.query_position) == (15, 8, 14, 3, 7)
    assert SSFRTask(2, 0, 0).seq_len == 2  # no junk: key, Q


@pytest.mark.parametrize(("args", "match"), [((1, 3, 3), "F >= 2"), ((4, 3, -1), "J must be >= 0"),
                                             ((4, 0, 2), "V_J >= 1"), ((4, -1, 0), "V_J must be >= 0"),
                                             ((4.5, 3, 3), "integer"), ((True, 3, 3), "integer")])
def test_bad_sizes_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        SSFRTask(*args)


def test_batch_layout_and_ranges():
    task = SSFRTask(20, 5, 4)
    f = fact_map(task, 3)
    b = ssfr_batch(task, f, 500, gen(0))
    J = task.junk_length
    assert b.tokens.shape == (500, 2 * J + 2) and b.tokens.dtype == torch.int64
    junk = torch.cat([b.tokens[:, :J], b.tokens[:, J + 1 : 2 * J + 1]], dim=1)
    assert int(junk.min()) >= 20 and int(junk.max()) < 25
    assert torch.equal(b.tokens[:, J], b.keys) and int(b.keys.min()) >= 0 and int(b.keys.max()) < 20
    assert bool((b.tokens[:, -1] == task.query_token).all())
    assert torch.equal(b.targets, f[b.keys])


def test_junk_and_keys_are_uniform_chi_square():
    # Definition 3.2: junk i.i.d. uniform on the junk vocabulary; keys uniform on [F]. Fixed seed,
    # so the p-values are fixed numbers; 1e-3 only guards against a biased generator.
    task = SSFRTask(16, 7, 6)
    b = ssfr_batch(task, identity_map(task), 4000, gen(11))
    J = task.junk_length
    junk = torch.cat([b.tokens[:, :J], b.tokens[:, J + 1 : 2 * J + 1]], dim=1).reshape(-1) - 16
    counts = np.bincount(junk.numpy(), minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert stats.chisquare(np.bincount(b.keys.numpy(), minlength=16)).pvalue > 1e-3
    # prefix and suffix positions alike (no position gets a different law)
    per_position = [np.bincount(b.tokens[:, p].numpy() - 16, minlength=7) for p in (0, J - 1, J + 1, 2 * J)]
    assert stats.chi2_contingency(np.array(per_position)).pvalue > 1e-3


def test_every_key_appears_in_the_evaluation_batch():
    task = SSFRTask(12, 3, 2)
    f = fact_map(task, 0)
    b = ssfr_eval_batch(task, f, 5, seed=1)
    assert b.tokens.shape == (60, 6)
    assert torch.equal(torch.bincount(b.keys, minlength=12), torch.full((12,), 5))
    assert torch.equal(b.keys.reshape(12, 5)[:, 0], torch.arange(12))  # key-major
    assert torch.equal(b.targets, f[b.keys])


def test_a_seed_gives_the_same_batches_and_another_seed_other_ones():
    task = SSFRTask(12, 3, 4)
    f = fact_map(task, 0)
    a, b, c = (ssfr_batch(task, f, 64, gen(s)) for s in (5, 5, 6))
    assert torch.equal(a.tokens, b.tokens) and not torch.equal(a.tokens, c.tokens)
    assert torch.equal(ssfr_eval_batch(task, f, 3, 2).tokens, ssfr_eval_batch(task, f, 3, 2).tokens)


def test_embeddings_are_unit_seeded_and_tied_facts():
    task = SSFRTask(10, 4, 3)
    E = embedding_table(task, 8, seed=2)
    assert E.shape == (15, 8) and E.dtype == torch.float64
    assert torch.allclose(torch.linalg.vector_norm(E, dim=1), torch.ones(15, dtype=torch.float64), atol=1e-15)
    assert torch.equal(E, embedding_table(task, 8, seed=2)) and not torch.equal(E, embedding_table(task, 8, seed=3))
    f = fact_map(task, 1)
    assert torch.equal(torch.sort(f).values, torch.arange(10))
    fs = fact_set(E, task, f)
    assert torch.equal(fs.keys, E[:10]) and torch.equal(fs.values, E[:10]) and torch.equal(fs.targets, E[f])


def test_mapping_must_be_a_permutation():
    task = SSFRTask(5, 2, 1)
    with pytest.raises(ValueError, match="permutation"):
        check_mapping(torch.tensor([0, 0, 1, 2, 3]), task)
    with pytest.raises(ValueError, match="shape"):
        check_mapping(torch.arange(4), task)
    with pytest.raises(ValueError, match="integer"):
        check_mapping(torch.arange(5.0), task)
    assert torch.equal(check_mapping(torch.arange(5, dtype=torch.int32), task), torch.arange(5))


def test_no_junk_task():
    task = SSFRTask(4, 0, 0)
    b = ssfr_batch(task, identity_map(task), 8, gen(0))
    assert b.tokens.shape == (8, 2) and bool((b.tokens[:, 1] == 4).all())


def test_evaluation_contexts_do_not_depend_on_the_map():
    # attention_noise (identity map) and ssfr_correct (any map) see the same sequences for a seed
    task = SSFRTask(10, 3, 3)
    a = ssfr_eval_batch(task, fact_map(task, 0), 4, seed=9)
    b = ssfr_eval_batch(task, identity_map(task), 4, seed=9)
    assert torch.equal(a.tokens, b.tokens) and not torch.equal(a.targets, b.targets)


def test_one_seed_rule_for_the_package():
    from assocmem.mlps.transformer import MAX_SEED, check_seed, seed_stream

    assert check_seed(0) == 0 and check_seed(np.int64(5)) == 5 and check_seed(MAX_SEED - 1) == MAX_SEED - 1
    for bad in (-1, MAX_SEED, 1.0, True):
        with pytest.raises(ValueError, match="seed"):
            check_seed(bad)
    s = seed_stream(MAX_SEED - 1, 3)  # a stream of a valid seed is a valid seed again
    assert check_seed(s) == s
