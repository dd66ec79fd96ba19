"""Tests for assocmem.mlps.margins.decoding: scores and margins on a hand-made case, strict accuracy
against the margin sign and the argmax, ties, overflow, and bad input.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import FactSet, make_fact_set
from tests.mlps.margins._memories import BilinearHebbian, ExactK2, orthonormal_fact_set


def test_score_margins_hand_example():
    s = torch.tensor([[3.0, 1.0, 2.5], [0.0, -1.0, 4.0], [1.0, 1.0, 1.0]])
    got = M.score_margins(s, [0, 1, 2])
    torch.testing.assert_close(got, torch.tensor([0.5, -5.0, 0.0], dtype=torch.float64))


@pytest.mark.parametrize("m", [8, 24, 400])
def test_accuracy_is_fraction_of_positive_hebbian_margins(m):
    facts = make_fact_set(32, 24, tied=False, seed=2)
    model = BilinearHebbian(facts, m=m, seed=5)
    hebb = M.fact_margins(model, facts)
    out = M.output_margins(model, facts)
    # the unwhitened readout carries the 1/F of Algorithm 1
    torch.testing.assert_close(out * facts.num_facts, hebb, rtol=1e-10, atol=1e-10)
    acc = M.accuracy(model, facts)
    assert acc == pytest.approx(float((hebb > 0).double().mean()))
    argmax = M.scores(model, facts).argmax(dim=1)
    assert acc == pytest.approx(float((argmax == facts.mapping).double().mean()))
    if m == 400:
        assert acc == 1.0 and M.gamma_min(model, facts) > 0


def test_accuracy_of_exact_k2_memory_and_untied_value_table():
    facts = make_fact_set(20, 16, tied=False, seed=0, num_values=30)  # V > F, random map
    model = ExactK2(facts)
    hebb = M.fact_margins(model, facts)
    assert M.accuracy(model, facts) == pytest.approx(float((hebb > 0).double().mean()))


@pytest.mark.parametrize("m", [8, 24, 400])
def test_accuracy_from_outputs_equals_accuracy(m):
    facts = make_fact_set(32, 24, tied=False, seed=2, num_values=40)
    model = BilinearHebbian(facts, m=m, seed=5)
    with torch.no_grad():
        out = model(facts.keys)
    acc = M.accuracy_from_outputs(out, facts)
    assert acc == M.accuracy(model, facts)
    assert acc == float((M.output_margins(model, facts) > 0).double().mean())
    assert M.accuracy_from_outputs(out.float(), facts) == pytest.approx(acc, abs=1 / 32)  # read in float64
    assert M.accuracy_from_outputs(out.numpy(), facts) == acc  # any array-like


def test_accuracy_counts_exact_ties_as_errors():
    facts = orthonormal_fact_set(3, 4)  # values: rows 3, 2, 1 of the basis
    v = facts.values
    out = torch.stack([v[0], v[1] + v[0], v[2]])  # fact 1 ties with value 0
    assert M.accuracy_from_outputs(out, facts) == pytest.approx(2 / 3)
    assert M.accuracy(lambda x: out, facts) == pytest.approx(2 / 3)
    margins = M.score_margins(out @ v.T, facts.mapping)
    assert margins.tolist() == [1.0, 0.0, 1.0]


def test_accuracy_scans_scores_only_when_they_can_overflow():
    facts = orthonormal_fact_set(2, 3)
    huge = torch.full((2, 3), 1e200, dtype=torch.float64)  # finite outputs, overflowing scores
    table = torch.full((2, 3), 1e200, dtype=torch.float64)
    table[1, 2] = -1e200  # two distinct rows (a fact set refuses equal value rows)
    vals = FactSet(facts.keys, table, facts.mapping, unit_norm=False)
    with pytest.raises(ValueError, match="score_matrix must be finite"):
        M.accuracy_from_outputs(huge, vals)
    with pytest.raises(ValueError, match="score_matrix must be finite"):
        M.accuracy(lambda x: huge, vals)
    with pytest.raises(ValueError, match="score_matrix must be finite"):
        M.output_margins(lambda x: huge, vals)  # the unfused path says the same
    big = 1e300 * facts.targets  # large but finite scores (|y| |v| = 1e300) are fine
    assert M.accuracy_from_outputs(big, facts) == 1.0
    # a finite table whose sum overflows is still finite
    M.score_margins(torch.tensor([[1e308, 1e308], [1e308, 1e308]], dtype=torch.float64), [0, 1])
    # ... but a margin beyond float64's range is an overflow, not -inf
    with pytest.raises(ValueError, match="margins overflows"):
        M.score_margins(torch.tensor([[1e308, 1e308], [1e308, -1e308]], dtype=torch.float64), [0, 1])


def test_accuracy_from_outputs_bad_input():
    facts = make_fact_set(8, 4, tied=False, seed=0)
    out = torch.zeros(8, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"outputs must have shape \(8, 4\)"):
        M.accuracy_from_outputs(torch.zeros(8, 3), facts)
    with pytest.raises(ValueError, match=r"outputs must have shape \(8, 4\)"):
        M.accuracy_from_outputs(torch.zeros(7, 4), facts)
    with pytest.raises(ValueError, match="outputs must be 2-D"):
        M.accuracy_from_outputs(torch.zeros(32), facts)
    bad = out.clone()
    bad[3, 1] = math.nan
    with pytest.raises(ValueError, match="outputs must be finite"):
        M.accuracy_from_outputs(bad, facts)
    bad[3, 1] = -math.inf
    with pytest.raises(ValueError, match="outputs must be finite"):
        M.accuracy_from_outputs(bad, facts)
    with pytest.raises(ValueError, match="real"):
        M.accuracy_from_outputs(out.to(torch.complex128), facts)
    with pytest.raises(ValueError, match="FactSet"):
        M.accuracy_from_outputs(out, (facts.keys, facts.values, facts.mapping))
    one_value = FactSet(facts.keys, facts.values[:1], torch.zeros(8, dtype=torch.int64))
    with pytest.raises(ValueError, match="competitor"):
        M.accuracy_from_outputs(out, one_value)
    with pytest.raises(ValueError, match="competitor"):
        M.accuracy(lambda x: out, one_value)


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="mapping"):
        M.score_margins(torch.zeros(2, 3), [0, 3])
    with pytest.raises(ValueError, match="competitor"):
        M.score_margins(torch.zeros(2, 1), [0, 0])
