"""The harness: fact sets, recall by the one decoding rule, capacity and read-error searches, analysis."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.compare import harness as H
from assocmem.compare.adapters import MatrixAdapter, make_memory
from assocmem.linear.theory import additive_read_error


def test_fact_sets_are_nested_unit_and_shared():
    a = H.table_facts(8, 32, "isotropic", seed=3)
    b = H.table_facts(8, 32, "isotropic", seed=3)
    assert torch.equal(a.keys, b.keys) and a.num_facts == 32 and a.num_values == 32
    torch.testing.assert_close(torch.linalg.vector_norm(a.values, dim=1), torch.ones(32, dtype=torch.float64))
    sub = H.first_facts(a, 5)
    assert torch.equal(sub.keys, a.keys[:5]) and sub.mapping.tolist() == list(range(5))
    spiked = H.table_facts(8, 32, "anisotropic", seed=3)
    assert not torch.allclose(spiked.keys, a.keys)
    # the spike concentrates the keys: their mean overlap grows
    mean_cos = lambda k: float((k @ k.T).abs().mean())  # noqa: E731
    assert mean_cos(spiked.keys) > mean_cos(a.keys)


def test_recall_read_error_and_noise_on_an_exact_memory():
    facts = H.first_facts(H.table_facts(8, 16), 6)
    mem = MatrixAdapter(8, 8, "least_squares").write(facts.keys, facts.targets)
    assert H.recall(mem, facts) == 1.0
    assert H.read_error(mem, facts) < 1e-20
    assert H.noisy_recall(mem, facts, 0.0, seed=7) == 1.0
    assert H.noisy_recall(mem, facts, 4.0, seed=7) < 1.0  # independent noise of norm 4 breaks some reads


def test_the_noise_seed_must_differ_from_the_facts_seed():
    """Same seed, same Gaussian draw: the "noise" is the keys themselves and recall survives eps = 4."""
    facts = H.first_facts(H.table_facts(32, 64, seed=0), 36)
    mem = MatrixAdapter(32, 32, "outer_product").write(facts.keys, facts.targets)
    assert H.noisy_recall(mem, facts, 4.0, seed=0) > 0.9
    assert H.noisy_recall(mem, facts, 4.0, seed=1) < 0.5


def test_capacity_of_the_least_squares_matrix_is_at_least_d():
    """``n <= d_k`` independent keys are recalled exactly (seed 000 §6), so F* >= d_k."""
    facts = H.table_facts(8, 64)
    F, censored, res = H.capacity(lambda: MatrixAdapter(8, 8, "least_squares"), facts)
    assert F >= 8 and not censored and res.n_evaluations > 3
    # the answer stores its facts and F* + 1 does not
    def stored(n):
        sub = H.first_facts(facts, n)
        return H.recall(MatrixAdapter(8, 8, "least_squares").write(sub.keys, sub.targets), sub) == 1.0
    assert stored(F) and not stored(F + 1)


def test_capacity_is_censored_when_nothing_fails():
    facts = H.table_facts(8, 16)
    F, censored, _ = H.capacity(lambda: make_memory("modern_hopfield", 8), facts)
    assert (F, censored) == (16, True)


def test_pairs_at_error_follows_the_additive_curve():
    """For the additive memory e(F) grows like (F - 1)/d_k (seed 000 §7): F_eps is finite and small."""
    facts = H.table_facts(16, 64)
    F, censored = H.pairs_at_error(lambda: MatrixAdapter(16, 16, "outer_product"), facts, 0.5)
    assert not censored and 1 <= F <= 32
    assert additive_read_error(F + 1, 16) > 0.25  # the curve is far above zero where the search stopped
    F0, _ = H.pairs_at_error(lambda: MatrixAdapter(16, 16, "least_squares"), facts, 1e-9)
    assert F0 == 16  # exact up to d_k, an error beyond


def test_timed_recall_returns_seconds_and_recall():
    facts = H.first_facts(H.table_facts(8, 16), 4)
    w, r, acc = H.timed_recall(lambda: MatrixAdapter(8, 8, "least_squares"), facts)
    assert w >= 0 and r >= 0 and acc == 1.0


def test_facts_at_budget():
    rows = pd.DataFrame([
        {"memory": "a", "geometry": "isotropic", "W": 100, "F_star": 10, "censored": False, "grows_with_pairs": False},
        {"memory": "a", "geometry": "isotropic", "W": 1000, "F_star": 50, "censored": False, "grows_with_pairs": False},
        {"memory": "c", "geometry": "isotropic", "W": 40 * 16, "F_star": 40, "censored": True, "grows_with_pairs": True},
    ])
    out = H.facts_at_budget(rows, 320, d=8).set_index("memory")
    assert out.loc["a", "F"] == 10 and out.loc["a", "W"] == 100
    assert out.loc["c", "F"] == 20 and out.loc["c", "W"] == 320 and not out.loc["c", "at_least"]
    assert out.loc["c", "facts_per_param"] == pytest.approx(1 / 16)
    assert "a" not in H.facts_at_budget(rows, 50, d=8).memory.tolist()
    assert bool(H.facts_at_budget(rows, 10**6, d=8).set_index("memory").loc["c", "at_least"])


def test_bits_per_parameter():
    np.testing.assert_allclose(H.bits_per_parameter([8, 2], [24, 1]), [1.0, 2.0])
    with pytest.raises(ValueError, match="F >= 1"):
        H.bits_per_parameter([0], [1])


@pytest.mark.parametrize("call, match", [
    (lambda: H.table_facts(8, 16, "spiked"), "unknown geometry 'spiked'"),
    (lambda: H.table_facts(8, 1), "F_max"),
    (lambda: H.table_facts(0, 8), "d"),
    (lambda: H.first_facts(H.table_facts(4, 8), 9), "exceeds the 8 facts"),
    (lambda: H.first_facts(H.table_facts(4, 8), 0), "F"),
    (lambda: H.pairs_at_error(lambda: MatrixAdapter(4, 4), H.table_facts(4, 8), -0.1), "eps"),
    (lambda: H.pairs_at_error(lambda: MatrixAdapter(4, 4), H.table_facts(4, 8), math.nan), "eps"),
    (lambda: H.facts_at_budget(pd.DataFrame(), 0, 4), "budget"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
