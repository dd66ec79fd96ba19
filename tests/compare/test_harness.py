"""The harness: fact sets, recall by the one decoding rule, capacity and read-error searches, analysis."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.compare import harness as H
from assocmem.compare.adapters import MatrixAdapter, make_memory
from assocmem.linear.memory import OuterProductMemory
from assocmem.linear.theory import additive_read_error
from assocmem.memory_protocol import MemoryNotWrittenError
from assocmem.mlps.facts import FactSet


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


def test_first_facts_keeps_the_map_of_the_facts():
    """Fact i of the subset returns what fact i of the whole set returns, whatever the map."""
    keys = H.table_facts(6, 8, seed=2).keys
    values = H.table_facts(6, 4, seed=3).values
    facts = FactSet(keys, values, torch.tensor([3, 1, 3, 0, 2, 1, 0, 2]))
    sub = H.first_facts(facts, 4)
    assert torch.equal(sub.keys, keys[:4]) and torch.equal(sub.targets, facts.targets[:4])
    assert torch.equal(sub.values, values[[0, 1, 3]]) and sub.mapping.tolist() == [2, 1, 2, 0]
    with pytest.raises(ValueError, match="at least two value rows"):  # facts 0 and 2 share one value
        H.recall(MatrixAdapter(6, 6, "least_squares").write(keys[[0, 2]], values[[3, 3]]),
                 H.first_facts(FactSet(keys[[0, 2]], values, torch.tensor([3, 3])), 2))


def test_capacity_measures_the_users_fact_set():
    """A permuted map is the same fact set as the permuted value table with the identity map."""
    base = H.table_facts(6, 24, seed=4)
    perm = torch.randperm(24, generator=torch.Generator().manual_seed(5))
    mapped = FactSet(base.keys, base.values, perm)
    tabled = FactSet(base.keys, base.values[perm], torch.arange(24))
    build = lambda: MatrixAdapter(6, 6, "outer_product")  # noqa: E731
    for F in (2, 5, 11):
        a, b = H.first_facts(mapped, F), H.first_facts(tabled, F)
        assert torch.equal(a.targets, b.targets)
        assert H.recall(build().write(a.keys, a.targets), a) == H.recall(build().write(b.keys, b.targets), b)
    assert H.capacity(build, mapped)[:2] == H.capacity(build, tabled)[:2]


@pytest.mark.parametrize("geometry", H.GEOMETRIES)
def test_the_books_fact_sets_have_the_identity_map(geometry):
    """So first_facts is bit for bit the prefix the memory_table results were computed on."""
    facts = H.table_facts(8, 32, geometry, seed=7)
    assert torch.equal(facts.mapping, torch.arange(32))
    for F in (1, 2, 17, 32):
        sub = H.first_facts(facts, F)
        assert torch.equal(sub.keys, facts.keys[:F]) and torch.equal(sub.values, facts.values[:F])
        assert torch.equal(sub.mapping, torch.arange(F))


def test_first_facts_stays_on_the_device_of_the_facts():
    """Nothing is made on the default device: with another one in force (meta, standing for a GPU
    while the facts are elsewhere), the subset still lives with the facts."""
    facts = H.table_facts(4, 8)
    with torch.device("meta"):
        sub = H.first_facts(facts, 5)
    assert sub.keys.device == sub.mapping.device == facts.keys.device


def test_an_empty_memory_is_an_error_not_a_recall_of_zero():
    facts = H.first_facts(H.table_facts(8, 16), 4)
    with pytest.raises(MemoryNotWrittenError, match="is empty"):
        H.recall(MatrixAdapter(8, 8), facts)
    written = MatrixAdapter(8, 8).write(facts.keys, facts.targets)
    assert H.recall(written, facts) == 1.0
    with pytest.raises(MemoryNotWrittenError, match="is empty"):
        H.read_error(written.reset(), facts)
    with pytest.raises(ValueError, match="wrap a memory of the library in its adapter"):
        H.recall(OuterProductMemory(8, 8, device="cpu"), facts)  # reads zeros: recall 0 before


class _ReadsAnyway(MatrixAdapter):
    """An AssociativeMemory whose public read skips the protocol's check for an empty memory."""

    def read(self, queries):
        return self._read(torch.as_tensor(queries, dtype=self.dtype))


def test_the_harness_checks_the_writes_itself():
    facts = H.first_facts(H.table_facts(8, 16), 4)
    with pytest.raises(MemoryNotWrittenError, match="_ReadsAnyway is empty"):
        H.recall(_ReadsAnyway(8, 8), facts)


def test_recall_read_error_and_noise_on_an_exact_memory():
    facts = H.first_facts(H.table_facts(8, 16), 6)
    mem = MatrixAdapter(8, 8, "least_squares").write(facts.keys, facts.targets)
    assert H.recall(mem, facts) == 1.0
    assert H.read_error(mem, facts) < 1e-20
    assert H.noisy_recall(mem, facts, 0.0, seed=7) == 1.0
    assert H.noisy_recall(mem, facts, 4.0, seed=7) < 1.0  # independent noise of norm 4 breaks some reads


def test_the_noise_has_its_own_stream():
    """A noise seed equal to the facts' seed still gives noise independent of the keys (API item A)."""
    facts = H.first_facts(H.table_facts(32, 64, seed=0), 36)
    mem = MatrixAdapter(32, 32, "outer_product").write(facts.keys, facts.targets)
    assert H.noisy_recall(mem, facts, 4.0, seed=0) < 0.5
    assert H.noisy_recall(mem, facts, 4.0, seed=1) < 0.5
    # the directions are not the keys: no |cos| near 1
    from assocmem.mlps.margins.noisy_queries import perturb_queries
    u = perturb_queries(facts.keys, 1.0, seed=H.noise_seed(0)) - facts.keys
    assert float((u * facts.keys).sum(dim=1).abs().max()) < 0.9
    assert H.noise_seed(0) != 0 and H.noise_seed(0) != H.noise_seed(1) and H.noise_seed(0) == H.noise_seed(0)
    # the reviewer's probe: huge noise drawn with the facts' own seed must not leave recall at 1
    small = H.table_facts(8, 16, seed=0)
    ls = make_memory("least_squares", 8).write(small.keys, small.targets)
    assert H.noisy_recall(ls, small, 1e300, 0) < 1.0


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


def test_capacity_refuses_a_build_whose_memory_is_not_fresh():
    # a build returning one shared memory: every search step would write on top of the last
    # step's pairs, and the capacity measured would be the shared memory's, not a fresh one's
    facts = H.table_facts(16, 64)
    fresh, _, _ = H.capacity(lambda: make_memory("outer_product", 16), facts)
    shared = make_memory("outer_product", 16)
    with pytest.raises(ValueError, match="fresh, empty memory.*already holding"):
        H.capacity(lambda: shared, facts)
    used = make_memory("outer_product", 16).write(facts.keys[:3], facts.targets[:3])
    for call in (lambda: H.pairs_at_error(lambda: used, facts, 0.5),
                 lambda: H.timed_recall(lambda: used, H.first_facts(facts, 4))):
        with pytest.raises(ValueError, match="already holding 3 pairs"):
            call()
    assert fresh > 1


def test_capacity_says_what_its_fact_set_lacks():
    from assocmem.mlps.facts import make_fact_set
    build = lambda: make_memory("least_squares", 8)  # noqa: E731
    with pytest.raises(ValueError, match=r"F_max >= 2 facts; got a fact set of 1"):
        H.capacity(build, make_fact_set(1, 8))
    facts = make_fact_set(12, 8, tied=False, seed=1)
    shared = FactSet(facts.keys, facts.values[:4], torch.tensor([2, 2, 0, 1, 3, 0, 1, 2, 3, 0, 1, 3]))
    with pytest.raises(ValueError, match="first two facts both map to value row 2"):
        H.capacity(build, shared)
    # facts 0 and 1 on different rows: every prefix the search measures decodes
    F, _, _ = H.capacity(build, FactSet(shared.keys, shared.values, shared.mapping.roll(1)))
    assert F >= 1


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
    # a size knob whose largest size tried is below the budget: a lower bound (the grid stopped short)
    knob = rows.assign(size=[4.0, 40.0, float("nan")])
    assert not H.facts_at_budget(knob, 320, d=8).set_index("memory").loc["a", "at_least"]
    assert bool(H.facts_at_budget(knob, 5000, d=8).set_index("memory").loc["a", "at_least"])
    assert not H.facts_at_budget(rows, 5000, d=8).set_index("memory").loc["a", "at_least"]  # fixed size
    empty = H.facts_at_budget(rows.iloc[:0], 100, d=8)
    assert empty.empty and list(empty.columns) == ["memory", "geometry", "F", "W", "at_least", "facts_per_param"]


def test_bits_per_parameter():
    np.testing.assert_allclose(H.bits_per_parameter([8, 2], [24, 1]), [1.0, 2.0])
    with pytest.raises(ValueError, match="F >= 1"):
        H.bits_per_parameter([0], [1])
    assert H.bits_per_parameter(4, 8) == pytest.approx(1.0) and H.bits_per_parameter(4.0, 8).shape == ()


def _written():
    facts = H.table_facts(4, 8)
    return MatrixAdapter(4, 4, "least_squares").write(facts.keys, facts.targets), facts


def _recall_with(queries):
    mem, facts = _written()
    return H.recall(mem, facts, queries(facts))


@pytest.mark.parametrize("call, match", [
    (lambda: H.table_facts(8, 16, "spiked"), "unknown geometry 'spiked'"),
    (lambda: H.table_facts(8, 1), "F_max"),
    (lambda: H.table_facts(0, 8), "d"),
    (lambda: H.first_facts(H.table_facts(4, 8), 9), "exceeds the 8 facts"),
    (lambda: H.first_facts(H.table_facts(4, 8), 0), "F"),
    (lambda: H.pairs_at_error(lambda: MatrixAdapter(4, 4), H.table_facts(4, 8), -0.1), "eps"),
    (lambda: H.pairs_at_error(lambda: MatrixAdapter(4, 4), H.table_facts(4, 8), math.nan), "eps"),
    (lambda: H.facts_at_budget(pd.DataFrame(), 0, 4), "budget"),
    (lambda: H.facts_at_budget(pd.DataFrame(), 100, 8), r"lacks the columns \['memory'"),
    (lambda: H.facts_at_budget([{"memory": "a"}], 100, 8), "DataFrame"),
    (lambda: H.facts_at_budget(pd.DataFrame(), 100, 0), "d"),
    (lambda: H.bits_per_parameter(math.nan, 10), "F must be finite"),
    (lambda: H.bits_per_parameter(8, math.inf), "W must be finite"),
    (lambda: H.bits_per_parameter(2.5, 10), "F must hold whole numbers"),
    (lambda: H.bits_per_parameter(4, 0.5), "W must hold whole numbers"),
    (lambda: H.bits_per_parameter("x", 10), "F must hold integers"),
    (lambda: H.bits_per_parameter("8", 10), "F must hold integers; got a boolean or a string"),
    (lambda: H.bits_per_parameter(True, 10), "F must hold integers; got a boolean"),
    (lambda: H.bits_per_parameter(8, [True, 2]), "W must hold integers; got a boolean"),
    (lambda: H.bits_per_parameter(8, np.array([True])), "W must hold integers; got dtype bool"),
    (lambda: H.bits_per_parameter([2, 4], [8, 8, 8]), "do not broadcast"),
    (lambda: H.bits_per_parameter(4, 0), "W >= 1"),
    (lambda: _recall_with(lambda f: f.keys[:3]), r"queries must have the keys' shape \(F, d_k\) = \(8, 4\)"),
    (lambda: _recall_with(lambda f: f.keys[:, :3]), r"got shape \(8, 3\)"),
    (lambda: _recall_with(lambda f: f.keys[None]), r"got shape \(1, 8, 4\)"),
    (lambda: H.noisy_recall(_written()[0], _written()[1], 0.1, seed=-1), "seed"),
    (lambda: H.noisy_recall(_written()[0], _written()[1], 0.1, seed=1.5), "seed"),
    (lambda: H.noise_seed(True), "seed"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
