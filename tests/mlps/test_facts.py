"""Tests for assocmem.mlps.facts: fact sets, tied/untied tables, the rank-1 spike, validation."""

import pytest
import torch

from assocmem.mlps.facts import FactSet, make_fact_set, random_direction, spike, with_spike


def _row_sorted(x: torch.Tensor) -> torch.Tensor:
    # rows sorted lexicographically by their first coordinate (distinct with probability one)
    return x[torch.argsort(x[:, 0])]


def test_shapes_dtypes_and_unit_rows():
    fs = make_fact_set(50, 12, tied=True, seed=3)
    assert fs.keys.shape == (50, 12) and fs.values.shape == (50, 12) and fs.mapping.shape == (50,)
    assert fs.keys.dtype == torch.float64 and fs.mapping.dtype == torch.int64
    assert (fs.num_facts, fs.num_values, fs.dim) == (50, 50, 12)
    torch.testing.assert_close(fs.keys.norm(dim=1), torch.ones(50, dtype=torch.float64))
    torch.testing.assert_close(fs.values.norm(dim=1), torch.ones(50, dtype=torch.float64))
    torch.testing.assert_close(fs.targets, fs.values[fs.mapping])
    assert repr(fs).startswith("FactSet(F=50, V=50, d=12")


def test_tied_table_is_the_key_table_permuted_with_identity_map():
    fs = make_fact_set(40, 8, tied=True, seed=1)
    assert torch.equal(fs.mapping, torch.arange(40))
    # the value table holds exactly the key rows, in another order
    assert torch.equal(_row_sorted(fs.values), _row_sorted(fs.keys))
    assert not torch.equal(fs.values, fs.keys)
    # each target is some key
    match = (fs.targets @ fs.keys.T).isclose(torch.tensor(1.0, dtype=torch.float64)).sum(dim=1)
    assert torch.equal(match, torch.ones(40, dtype=torch.int64))


def test_untied_table_is_independent_with_identity_map():
    fs = make_fact_set(40, 8, tied=False, seed=1)
    assert torch.equal(fs.mapping, torch.arange(40))
    assert (fs.values @ fs.keys.T).abs().max() < 1 - 1e-6  # no value equals a key
    # the same seed gives the same keys whether tied or not
    assert torch.equal(fs.keys, make_fact_set(40, 8, tied=True, seed=1).keys)


def test_untied_with_other_value_count_draws_a_map_in_range():
    fs = make_fact_set(30, 6, tied=False, num_values=7, seed=0)
    assert fs.values.shape == (7, 6)
    assert fs.mapping.min() >= 0 and fs.mapping.max() < 7
    with pytest.raises(ValueError, match="tied"):
        make_fact_set(30, 6, tied=True, num_values=7)


def test_seeded_and_deterministic():
    a, b = make_fact_set(20, 5, seed=7), make_fact_set(20, 5, seed=7)
    assert torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)
    assert not torch.equal(a.keys, make_fact_set(20, 5, seed=8).keys)


def test_float32_fact_set_is_unit():
    fs = make_fact_set(10, 4, dtype=torch.float32)
    assert fs.keys.dtype == torch.float32
    assert (fs.keys.norm(dim=1) - 1).abs().max() < 1e-6


def test_to_keeps_map_and_changes_dtype():
    fs = make_fact_set(10, 4).to(dtype=torch.float32)
    assert fs.keys.dtype == torch.float32 and fs.mapping.dtype == torch.int64


@pytest.mark.parametrize("F, d", [(0, 4), (-1, 4), (4, 0), (2.5, 4), (True, 4)])
def test_bad_sizes_raise(F, d):
    with pytest.raises(ValueError):
        make_fact_set(F, d)


def test_validation_errors():
    k = make_fact_set(5, 3).keys
    idx = torch.arange(5)
    with pytest.raises(ValueError, match="at least one fact"):
        FactSet(k[:0], k, idx[:0])
    with pytest.raises(ValueError, match=r"\[0, V\)"):
        FactSet(k, k, torch.tensor([0, 1, 2, 3, 5]))
    with pytest.raises(ValueError, match=r"\[0, V\)"):
        FactSet(k, k, torch.tensor([0, 1, 2, 3, -1]))
    with pytest.raises(ValueError, match="unit-norm"):
        FactSet(2 * k, k, idx)
    with pytest.raises(ValueError, match="shape"):
        FactSet(k, k, idx[:4])
    with pytest.raises(ValueError, match="integer"):
        FactSet(k, k, idx.double())
    with pytest.raises(ValueError, match="finite"):
        bad = k.clone()
        bad[0, 0] = float("nan")
        FactSet(bad, k, idx)
    with pytest.raises(ValueError, match="width"):
        FactSet(k, k[:, :2], idx)
    with pytest.raises(ValueError, match="2-D"):
        FactSet(k[0], k, idx)
    # rows off the sphere are allowed when not required
    fs = FactSet(2 * k, k, idx.to(torch.int32), unit_norm=False)
    assert fs.mapping.dtype == torch.int64


def test_random_direction_unit_and_seeded():
    u = random_direction(9, seed=4)
    assert u.shape == (9,) and abs(u.norm().item() - 1) < 1e-12
    assert torch.equal(u, random_direction(9, seed=4))


def test_spike_formula_and_unit_output():
    fs = make_fact_set(100, 16, seed=2)
    u = random_direction(16, seed=5)
    out = spike(fs.keys, 1.5, u)
    manual = fs.keys + 1.5 * (fs.keys @ u)[:, None] * u
    manual = manual / manual.norm(dim=1, keepdim=True)
    torch.testing.assert_close(out, manual)
    torch.testing.assert_close(out.norm(dim=1), torch.ones(100, dtype=torch.float64))
    # alignment with u grows, and beta = 0 is the identity on unit rows
    assert ((out @ u).abs() >= (fs.keys @ u).abs() - 1e-12).all()
    torch.testing.assert_close(spike(fs.keys, 0.0, u), fs.keys)
    # the direction is normalised internally
    torch.testing.assert_close(spike(fs.keys, 1.5, 3 * u), out)


def test_with_spike_keeps_tie_and_map():
    fs = make_fact_set(30, 8, tied=True, seed=0)
    sp = with_spike(fs, 1.5, on="both", seed=1)
    assert torch.equal(sp.mapping, fs.mapping)
    u = random_direction(8, seed=1)
    torch.testing.assert_close(sp.keys, spike(fs.keys, 1.5, u))
    # tied stays tied: the spiked value table is the spiked key table permuted. The unspiked
    # tables are exact permuted copies (checked in test_tied_table_is_the_key_table_permuted_with_identity_map), so the
    # permutation is read off them exactly; the spike then transforms the two tables as separate
    # batches, whose rows may be rounded differently (another vector-kernel split of the rows),
    # so they agree to a few units in the last place of unit-norm rows, not bit for bit.
    perm = torch.argsort(fs.keys[:, 0])[torch.argsort(torch.argsort(fs.values[:, 0]))]
    assert torch.equal(fs.keys[perm], fs.values)
    torch.testing.assert_close(sp.values, sp.keys[perm], rtol=0, atol=8 * torch.finfo(torch.float64).eps)
    only_keys = with_spike(fs, 1.5, on="keys", direction=u)
    assert torch.equal(only_keys.values, fs.values)
    only_values = with_spike(fs, 1.5, on="values", direction=u)
    assert torch.equal(only_values.keys, fs.keys)


def test_spike_bad_input():
    x = make_fact_set(4, 3).keys
    u = random_direction(3)
    for beta in (-1.0, -2.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="beta"):
            spike(x, beta, u)
    with pytest.raises(ValueError, match="shape"):
        spike(x, 1.0, torch.ones(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="non-zero"):
        spike(x, 1.0, torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="on must"):
        with_spike(make_fact_set(4, 3), 1.0, on="queries")


def test_repeated_value_rows_are_refused_and_the_mapped_form_decodes():
    # the naive form (one value row per fact, authors repeated) ties every fact under strict
    # argmax; the mapped form (each author once, a map) is the one decoding can score
    from assocmem.mlps.margins.decoding import accuracy
    from assocmem.mlps.mlp.hebbian import hebbian_mlp

    g = torch.Generator().manual_seed(0)
    books = torch.nn.functional.normalize(torch.randn(40, 16, generator=g, dtype=torch.float64), dim=1)
    authors = torch.nn.functional.normalize(torch.randn(10, 16, generator=g, dtype=torch.float64), dim=1)
    a = torch.arange(40) % 10
    with pytest.raises(ValueError, match="repeated row.*mapping"):
        FactSet(books, authors[a], torch.arange(40))
    facts = FactSet(books, authors, a)
    assert facts.num_values == 10 and torch.equal(facts.targets, authors[a])
    assert accuracy(hebbian_mlp(facts, 256, "full"), facts) == 1.0
    # one exact twin among otherwise distinct rows is enough
    twin = authors.clone()
    twin[3] = twin[7]
    with pytest.raises(ValueError, match="1 repeated row"):
        FactSet(books[:10], twin, torch.arange(10))
