"""Tests for assocmem.mlps.counting.hebbian_memories: eq. 5 as Part I's outer-product memory, the K2 memory,
margins, the F-sweep and the capacity search.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from assocmem.linear.memory import OuterProductMemory
from assocmem.mlps.counting import hebbian_memories as C
from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins import accuracy, fact_margins, output_margins
from assocmem.mlps.mlp.architectures import ExactK2Memory


def test_linear_memory_is_eq5_and_outer_product():
    facts = make_fact_set(40, 16, tied=True, seed=3)
    mem = C.hebbian_memory(facts, "linear")
    assert isinstance(mem, OuterProductMemory)
    W = sum(torch.outer(facts.values[facts.mapping[j]], facts.keys[j]) for j in range(40))
    torch.testing.assert_close(mem.S, W, rtol=0, atol=1e-12)
    # kernel form with identity features: y_i = sum_t <k_t, k_i> v_f(t)
    y = C.hebbian_gram(facts.keys, "linear").T @ facts.targets
    torch.testing.assert_close(mem(facts.keys), y, rtol=0, atol=1e-12)
    assert mem.num_parameters == 16 * 16


def test_k2_memory_and_gram():
    facts = make_fact_set(30, 8, tied=False, seed=1)
    mem = C.hebbian_memory(facts, "k2")
    assert isinstance(mem, ExactK2Memory)
    g = C.hebbian_gram(facts.keys, "k2")
    torch.testing.assert_close(g, (facts.keys @ facts.keys.T) ** 2, rtol=0, atol=1e-14)
    torch.testing.assert_close(mem(facts.keys) * 30, g.T @ facts.targets, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", C.HEBBIAN_KERNELS)
def test_hebbian_point_accuracy_is_sign_of_margins(kernel):
    facts = make_fact_set(120, 16, tied=True, seed=0)
    p = C.hebbian_point(facts, kernel)
    gam = fact_margins(C.hebbian_gram(facts.keys, kernel), facts)
    assert p["accuracy"] == p["frac_positive"] == float((gam > 0).double().mean())
    assert p["accuracy"] == accuracy(C.hebbian_memory(facts, kernel), facts)
    assert p["gamma_min"] == float(gam.min())
    assert p["n_stored"] == int((gam > 0).sum())


def test_unchecked_margins_equal_library():
    for tied in (True, False):
        facts = make_fact_set(50, 8, tied=tied, seed=2)
        for k in C.HEBBIAN_KERNELS:
            g = C.hebbian_gram(facts.keys, k)
            torch.testing.assert_close(C._margins_unchecked(g, facts), fact_margins(g, facts), rtol=0, atol=1e-13)
    # a map onto a larger value table (rows no fact uses still compete)
    facts = make_fact_set(20, 8, tied=False, seed=5, num_values=35)
    g = C.hebbian_gram(facts.keys, "linear")
    torch.testing.assert_close(C._margins_unchecked(g, facts), fact_margins(g, facts), rtol=0, atol=1e-13)


def test_orthonormal_keys_margin_is_one_minus_overlap():
    gen = torch.Generator().manual_seed(0)
    Q, _ = torch.linalg.qr(torch.randn(12, 12, dtype=torch.float64, generator=gen))
    keys = Q[:7]  # 7 orthonormal rows
    v = torch.randn(7, 12, dtype=torch.float64, generator=gen)
    v = v / v.norm(dim=1, keepdim=True)
    facts = FactSet(keys, v, torch.arange(7))
    overlap = v @ v.T
    overlap.fill_diagonal_(-math.inf)
    expected = 1 - overlap.max(dim=1).values
    for k in C.HEBBIAN_KERNELS:
        torch.testing.assert_close(fact_margins(C.hebbian_gram(keys, k), facts), expected, rtol=0, atol=1e-12)


def test_f_sweep_frame():
    df = C.hebbian_f_sweep(8, [4, 16], seeds=(0, 1), tied=(True, False))
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 2 * 2 * 2 * 2
    assert set(df.kernel) == set(C.HEBBIAN_KERNELS)
    assert (df.accuracy == df.frac_positive).all()
    with pytest.raises(ValueError):
        C.hebbian_f_sweep(8, [4], kernels=("cubic",))


def test_capacity_search_rule():
    r = C.hebbian_capacity(8, "linear", seed=0)
    assert r.capacity == r.first_failure - 1
    for F in range(r.first_failure, r.first_failure + 3):  # verified failures
        facts = make_fact_set(F, 8, tied=True, seed=0)
        assert fact_margins(C.hebbian_gram(facts.keys, "linear"), facts).min() <= 0
    facts = make_fact_set(r.capacity, 8, tied=True, seed=0)
    assert fact_margins(C.hebbian_gram(facts.keys, "linear"), facts).min() > 0
    scan = C.hebbian_capacity_scan({"linear": (8,), "k2": (8,)}, seeds=(0,))
    assert list(scan.columns) == ["kernel", "d", "seed", "capacity", "evaluations", "monotone"]
    assert int(scan[scan.kernel == "linear"].capacity.iloc[0]) == r.capacity


def test_capacity_search_no_failure_raises():
    with pytest.raises(ValueError):
        C.hebbian_capacity(64, "k2", seed=0, hi=8)


def test_bad_kernel_and_facts():
    with pytest.raises(ValueError):
        C.hebbian_gram(torch.ones(3, 2, dtype=torch.float64), "rbf")
    with pytest.raises(ValueError):
        C.hebbian_memory("not facts")
    with pytest.raises(ValueError):
        C.hebbian_gram(torch.ones(3, dtype=torch.float64))


def test_output_scale_of_k2_is_kernel_scale_over_f():
    facts = make_fact_set(60, 8, tied=True, seed=4)
    mem = C.hebbian_memory(facts, "k2")
    torch.testing.assert_close(output_margins(mem, facts) * 60,
                               fact_margins(C.hebbian_gram(facts.keys, "k2"), facts), rtol=1e-12, atol=1e-12)
