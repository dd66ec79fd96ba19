"""Tests for assocmem.mlps.margins.noisy_queries: noisy margins use the mixed Gram matrix, the
query-Lipschitz constant of the exact K2 kernel, and bad input.
"""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set
from tests.mlps.margins._memories import BilinearHebbian, ExactK2


def test_noisy_margins_use_the_mixed_gram():
    facts = make_fact_set(32, 16, tied=False, seed=5)
    model = BilinearHebbian(facts, m=128, seed=3)
    clean = M.fact_margins(model, facts)
    torch.testing.assert_close(M.noisy_fact_margins(model, facts, 0.0), clean)
    q = M.perturb_queries(facts.keys, 0.3, seed=1)
    dist = torch.linalg.vector_norm(q - facts.keys, dim=1)
    torch.testing.assert_close(dist, torch.full((32,), 0.3, dtype=torch.float64))
    mixed = model.features(facts.keys) @ model.features(q).T  # <phi(k_t), phi(z_i)>
    y = mixed.T @ facts.targets
    want = M.score_margins(y @ facts.values.T, facts.mapping)
    torch.testing.assert_close(M.noisy_fact_margins(model, facts, 0.3, seed=1), want)
    # reproducible, and the output-scale margins of the model agree up to 1/F
    torch.testing.assert_close(M.perturb_queries(facts.keys, 0.3, seed=1), q)
    torch.testing.assert_close(M.output_margins(model, facts, queries=q) * 32, want)


def test_query_lipschitz_of_exact_k2():
    facts = make_fact_set(16, 8, tied=False, seed=0)
    eps = 0.05
    q = M.perturb_queries(facts.keys, eps, seed=2)
    lk = M.query_lipschitz(ExactK2(facts), facts, q)
    # |<k, q>^2 - <k, k_i>^2| <= ||q - k_i|| (||q|| + ||k_i||) <= eps (2 + eps)
    assert 0 < lk <= 2 + eps
    assert M.query_lipschitz(ExactK2(facts), facts, facts.keys) == 0.0


def test_bad_input_raises_value_error():
    facts = make_fact_set(8, 4, tied=False, seed=0)
    gram = torch.eye(8, dtype=torch.float64)
    with pytest.raises(ValueError, match="eps"):
        M.perturb_queries(facts.keys, -0.1)
    with pytest.raises(ValueError, match="Gram"):
        M.noisy_fact_margins(gram, facts, 0.1)
