"""Tests for assocmem.mlps.margins.kernel_margins: kernel-Hebbian margins on hand-made cases (from a
Gram matrix, features, a kernel model), pairwise margins and their signal / cross-talk split,
and bad input.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import FactSet, make_fact_set
from tests.mlps.margins._memories import BilinearHebbian, ExactK2, k2_features, orthonormal_fact_set


def test_orthonormal_keys_and_values_have_unit_margin():
    facts = orthonormal_fact_set(4, 6, perm=[2, 0, 3, 1])
    gram = (facts.keys @ facts.keys.T) ** 2  # identity
    torch.testing.assert_close(M.fact_margins(gram, facts), torch.ones(4, dtype=torch.float64))
    assert M.gamma_min(gram, facts) == 1.0
    # same from features, from a kernel model, and from a features model
    from_features = M.gram_from_features(k2_features(facts.keys))
    ones = torch.ones(4, dtype=torch.float64)
    torch.testing.assert_close(M.fact_margins(from_features, facts), ones)
    assert M.gamma_min(ExactK2(facts), facts) == 1.0
    model = SimpleNamespace(features=k2_features)
    assert M.gamma_min(model, facts) == pytest.approx(1.0, abs=1e-15)
    # codes scale the Hebbian read linearly
    assert M.gamma_min(gram, facts, codes=3.0 * facts.values) == pytest.approx(3.0)


def test_two_keys_at_an_angle():
    c = 0.6
    keys = torch.tensor([[1.0, 0.0], [c, math.sqrt(1 - c * c)]], dtype=torch.float64)
    values = torch.eye(2, dtype=torch.float64)
    facts = FactSet(keys, values, torch.tensor([0, 1]))
    # y_1 = v_1 + c^2 v_2, so gamma_1 = 1 - c^2 (and symmetrically for fact 2)
    expected = torch.full((2,), 1 - c**2, dtype=torch.float64)
    torch.testing.assert_close(M.fact_margins(ExactK2(facts), facts), expected)
    # a swapped code table writes the other value for every fact: each margin flips sign
    flipped = M.fact_margins(ExactK2(facts), facts, codes=values[[1, 0]])
    torch.testing.assert_close(flipped, -expected)


def test_pairwise_margins_decompose_into_signal_and_crosstalk():
    torch.manual_seed(3)
    F, d = 6, 4
    g = torch.randn(F, F, dtype=torch.float64)
    v = torch.randn(F, d, dtype=torch.float64)
    c = torch.randn(F, d, dtype=torch.float64)
    pm = M.pairwise_margins(g, v, c)
    sig, cross = M.signal_crosstalk(g, v, c)
    off = ~torch.eye(F, dtype=torch.bool)
    torch.testing.assert_close((sig + cross)[off], pm[off])
    # direct eq. 24: gamma_ij = <v_i - v_j, sum_t K_ti c_t>
    i, j = 2, 5
    y = (g[:, i : i + 1] * c).sum(0)
    assert pm[i, j].item() == pytest.approx(float((v[i] - v[j]) @ y))
    assert torch.isinf(pm.diagonal()).all()


def test_pairwise_min_equals_gamma_min_for_a_bijective_map():
    facts = make_fact_set(24, 8, tied=True, seed=4)
    model = BilinearHebbian(facts, m=64, seed=1)
    gram = M.kernel_gram(model, facts.keys)
    pm = M.pairwise_margins(gram, facts.targets)
    assert float(pm.min()) == pytest.approx(M.gamma_min(model, facts), rel=1e-12)


def test_bad_input_raises_value_error():
    facts = make_fact_set(8, 4, tied=False, seed=0)
    gram = torch.eye(8, dtype=torch.float64)
    with pytest.raises(ValueError, match="square"):
        M.fact_margins(torch.ones(8, 7), facts)
    with pytest.raises(ValueError, match=r"\(8, 8\)"):
        M.fact_margins(torch.eye(6), facts)
    out_of_range = torch.tensor([0, 1, 2, 3, 4, 5, 6, 8])
    bad_map = SimpleNamespace(keys=facts.keys, values=facts.values, mapping=out_of_range)
    with pytest.raises(ValueError, match="mapping"):
        M.fact_margins(gram, bad_map)
    with pytest.raises(ValueError, match="codes"):
        M.fact_margins(gram, facts, codes=torch.zeros(8, 3))
    with pytest.raises(ValueError, match="queries"):
        M.fact_margins(gram, facts, queries=facts.keys)
    with pytest.raises(ValueError, match="features"):
        M.fact_margins(object(), facts)
