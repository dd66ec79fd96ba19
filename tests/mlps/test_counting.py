"""Tests for assocmem.mlps.counting: Theorem 2.4's count exactly, its inverse, and the Hebbian memories
(eq. 5 as Part I's outer-product memory, the K2 memory, margins, capacity search, cross-talk moments).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem.mlps import counting as C
from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins import accuracy, fact_margins, output_margins
from assocmem.linear.memory import OuterProductMemory
from assocmem.mlps.mlp import ExactK2Memory

# --------------------------------------------------------------------------------------------
# Theorem 2.4: counting


def test_num_fact_sets_small_cases_by_enumeration():
    import itertools

    for F, V in [(0, 3), (1, 1), (2, 3), (3, 2), (3, 3)]:
        maps = list(itertools.product(range(V), repeat=F))
        assert C.num_fact_sets(F, V) == len(maps)
        inj = [m for m in maps if len(set(m)) == len(m)]
        if F <= V:
            assert C.num_fact_sets(F, V, injective=True) == len(inj)


def test_log2_count_matches_exact():
    for F, V in [(10, 7), (1024, 1024), (1000, 1000), (5, 2)]:
        assert math.isclose(C.log2_num_fact_sets(F, V), math.log2(C.num_fact_sets(F, V)), rel_tol=1e-12)
        if F > V:
            continue
        exact = C.num_fact_sets(F, V, injective=True)
        assert math.isclose(C.log2_num_fact_sets(F, V, injective=True), math.log2(exact), rel_tol=1e-10)


def test_min_parameters_is_smallest_w():
    for F, V, b in [(1024, 1024, 16), (1000, 1000, 16), (7, 3, 1), (7, 3, 5), (64, 100, 8), (3, 1, 4)]:
        N = C.num_fact_sets(F, V)
        W = C.min_parameters(F, V, b)
        assert 2 ** (b * W) >= N
        if W > 0:
            assert 2 ** (b * (W - 1)) < N
        assert W == C.min_parameters(F, V, b, method="float")
        assert W == math.ceil(C.min_parameters_bound(F, V, b) - 1e-12) or W == math.ceil(
            math.ceil(F * math.log2(V)) / b
        )


def test_min_parameters_worked_number():
    # F = V = 1024: F log2 V = 10240 bits exactly
    assert C.min_parameters(1024, 1024, 16) == 640
    assert C.min_parameters(1024, 1024, 1) == 10240
    assert C.min_parameters_bound(1024, 1024, 16) == 640.0
    assert C.min_parameters(1, 1, 8) == 0  # a single fact set needs nothing


def test_min_parameters_bound_on_arrays_matches_the_scalars():
    V = np.array([[3], [10], [1024]])  # broadcasts against F to (3, 4)
    for F, injective in [(np.array([0, 1, 64, 1024]), False), (np.array([0, 1, 2, 3]), True)]:
        got = C.min_parameters_bound(F, V, 16, injective=injective)
        assert isinstance(got, np.ndarray) and got.shape == (3, 4) and got.dtype == np.float64
        want = [[C.min_parameters_bound(int(f), int(v), 16, injective=injective) for f in F] for v in V[:, 0]]
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    # the plain formula is bit-for-bit the scalar one
    np.testing.assert_array_equal(C.min_parameters_bound([1024, 256], [1024, 16], [16, 8]), [640.0, 128.0])
    # lists, pandas Series and real-valued lines of F work; bits broadcast too
    line = np.geomspace(2.0, 100.0, 7)
    np.testing.assert_allclose(C.min_parameters_bound(line, line, 2.0), line * np.log2(line) / 2, rtol=1e-15)
    np.testing.assert_allclose(C.min_parameters_bound(pd.Series([4, 8]), 4, [1, 2]), [8.0, 8.0])
    assert C.min_parameters_bound(np.array(1024), 1024, 16) == 640.0  # 0-d arrays: a NumPy scalar
    # scalars keep their type and their checks
    assert type(C.min_parameters_bound(1024, 1024, 16)) is float
    assert type(C.min_parameters_bound(np.int64(1024), 1024, 16)) is float
    with pytest.raises(ValueError, match="num_keys"):
        C.min_parameters_bound(3.5, 4, 1)


def test_min_parameters_bound_bad_arrays():
    with pytest.raises(ValueError, match="num_keys must be >= 0"):
        C.min_parameters_bound([3, -1], 4, 1)
    with pytest.raises(ValueError, match="num_values must be >= 1"):
        C.min_parameters_bound([3, 1], [4, 0], 1)
    with pytest.raises(ValueError, match="bits must be positive"):
        C.min_parameters_bound([3, 1], 4, [1, 0])
    with pytest.raises(ValueError, match="bits must be positive"):
        C.min_parameters_bound([3, 1], 4, -2.0)
    with pytest.raises(ValueError, match="injective"):
        C.min_parameters_bound([3, 5], 4, 1, injective=True)
    with pytest.raises(ValueError, match="finite"):
        C.min_parameters_bound([3, np.nan], 4, 1)
    with pytest.raises(ValueError, match="finite"):
        C.min_parameters_bound([3, 1], [4, np.inf], 1)
    with pytest.raises(ValueError, match="real numbers"):
        C.min_parameters_bound([True, False], 4, 1)
    with pytest.raises(ValueError, match="real numbers"):
        C.min_parameters_bound(["3"], 4, 1)
    with pytest.raises(ValueError, match="broadcast"):
        C.min_parameters_bound([1, 2, 3], [4, 5], 1)


def test_min_parameters_injective_is_smaller():
    full = C.min_parameters(256, 256, 1)
    perm = C.min_parameters(256, 256, 1, injective=True)
    assert perm < full
    assert perm == (math.factorial(256) - 1).bit_length()


@pytest.mark.parametrize("W, b", [(100, 8), (640, 16), (4096, 16), (1, 1), (0, 4)])
def test_max_facts_inverts_min_parameters(W, b):
    F = C.max_facts(W, b)
    if F >= 1:
        assert C.min_parameters(F, F, b) <= W
    assert C.min_parameters(F + 1, F + 1, b) > W
    Fv = C.max_facts(W, b, num_values=1024)
    assert C.min_parameters(Fv, 1024, b) <= W < C.min_parameters(Fv + 1, 1024, b)


def test_max_facts_injective_capped():
    assert C.max_facts(10**6, 8, num_values=50, injective=True) == 50
    F = C.max_facts(2000, 8, injective=True)
    assert C.min_parameters(F, F, 8, injective=True) <= 2000 < C.min_parameters(F + 1, F + 1, 8, injective=True)
    assert F >= C.max_facts(2000, 8)


def test_counting_bad_input():
    with pytest.raises(ValueError):
        C.num_fact_sets(-1, 3)
    with pytest.raises(ValueError):
        C.num_fact_sets(3, 0)
    with pytest.raises(ValueError):
        C.num_fact_sets(4, 3, injective=True)
    with pytest.raises(ValueError):
        C.min_parameters(3, 3, 0)
    with pytest.raises(ValueError):
        C.min_parameters(3, 3, 8, method="nope")
    with pytest.raises(ValueError):
        C.min_parameters_bound(3, 3, 0.0)
    with pytest.raises(ValueError):
        C.max_facts(10, 8, num_values=1)
    with pytest.raises(ValueError):
        C.num_fact_sets(10**8, 10**8)  # beyond the exact limit
    with pytest.raises(ValueError):
        C.min_parameters(True, 3, 8)


# --------------------------------------------------------------------------------------------
# Hebbian memories


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


def test_second_moments():
    assert C.kernel_second_moment(10, "linear") == 0.1
    assert C.kernel_second_moment(10, "k2") == 3 / 120
    assert C.crosstalk_second_moment(2, 10, "linear") == pytest.approx(0.1 * 1.1)
    # Monte Carlo agrees within 4 standard errors (40 seeds; deterministic)
    for k in C.HEBBIAN_KERNELS:
        mean, se = C.crosstalk_second_moment_mc(24, 12, k, seeds=range(40))
        assert abs(mean - C.crosstalk_second_moment(24, 12, k)) <= 4 * se
    with pytest.raises(ValueError):
        C.crosstalk_second_moment_mc(24, 12, "linear", seeds=[0])


def test_capacity_heuristic_solves_equation():
    for k, (c, p) in C.HEURISTIC_CONSTANTS.items():
        d = np.array([8.0, 32.0, 128.0])
        F = C.capacity_heuristic(d, k)
        np.testing.assert_allclose(F * np.log(F), c * d**p, rtol=1e-12)
        assert isinstance(C.capacity_heuristic(32, k), float)
    with pytest.raises(ValueError):
        C.capacity_heuristic(0, "linear")


def test_geometric_grid_and_presets():
    assert C.geometric_grid(4, 16, 1) == [4, 8, 16]
    assert C.geometric_grid(4, 20, 1) == [4, 8, 16, 20]
    with pytest.raises(ValueError):
        C.geometric_grid(8, 4)
    assert C.get_preset("quick").sweep_d == 32
    with pytest.raises(ValueError, match="quick"):
        C.get_preset("paper-ish")


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


def test_power_law_fit_exact_and_noisy():
    x = np.array([2.0, 4.0, 8.0, 16.0])
    f = C.power_law_fit(x, 3.0 * x**2.5)
    assert f.exponent == pytest.approx(2.5, abs=1e-12)
    assert f.prefactor == pytest.approx(3.0, rel=1e-12)
    assert f.exponent_se == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    xs = np.repeat(x, 50)
    fits = [C.power_law_fit(xs, xs**2 * np.exp(0.1 * rng.standard_normal(xs.size))) for _ in range(200)]
    p = np.array([q.exponent for q in fits])
    se = np.mean([q.exponent_se for q in fits])
    assert abs(p.mean() - 2) < 4 * p.std() / math.sqrt(len(p))
    assert 0.8 < p.std() / se < 1.2  # the OLS standard error is calibrated
    with pytest.raises(ValueError):
        C.power_law_fit([1, 2], [1, 2])
    with pytest.raises(ValueError):
        C.power_law_fit([2, 2, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        C.power_law_fit([1, 2, 0], [1, 2, 3])
