"""Tests for assocmem.mlps.margins.geometry: the App. B.5 statistics against hand computations and
direct loops (Definitions B.9-B.15, eqs. 32-34), their conventions, and bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import FactSet, make_fact_set
from tests.mlps.margins._memories import BilinearHebbian


def test_kernel_statistics_hand_example():
    g = torch.tensor([[2.0, 1.0, 2.0], [1.0, 3.0, 2.0], [2.0, 2.0, 1.0]], dtype=torch.float64)
    v = torch.eye(3, dtype=torch.float64)
    assert M.k_min_diag(g) == 1.0  # Def. B.9
    assert M.k_max_off(g) == 2.0  # Def. B.9
    assert M.e_k(g) == 8.0  # Def. B.10: column 2 has off-diagonal (2, 2)
    # orthonormal values, codes = values: <v_i - v_j, v_t> = delta_it - delta_jt
    assert M.e_v(v) == pytest.approx(1.0, rel=1e-14)  # Def. B.13: only t = j survives t != i
    assert M.b_y(v) == 0.0  # Def. B.12
    assert M.l_v(v) == 1.0  # Def. B.14: Y^(ij) = 0, convention 1
    # Def. B.15: kappa^ij = |K_ji| / sqrt(E_K(i)); largest 2 / sqrt(5) (i = 0 or 1, j = 2)
    assert M.kappa(g, v) == pytest.approx(2 / math.sqrt(5))
    st = M.geometry_statistics(g, v)
    # eq. 34: E~_K(i, j) = E_K(i) - K_ji^2, largest 8 - 4 = 5 - 1 = 4
    assert (st.e_v_tilde, st.kappa_tilde, st.e_k_tilde) == (0.0, 0.0, 4.0)
    # kernel-Hebbian margins: <y_i, v_j> = K_ji, so gamma = (2 - 2, 3 - 2, 1 - 2)
    facts = FactSet(torch.eye(3, dtype=torch.float64), v, torch.arange(3))
    want = torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64)
    torch.testing.assert_close(M.fact_margins(g, facts), want)


def test_value_statistics_hand_example():
    s = 1 / math.sqrt(2)
    v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [s, s]], dtype=torch.float64)
    assert M.v_min(v) == pytest.approx(1 - s)  # Def. B.11, pairs (0, 2), (1, 2)
    assert M.v_max(v) == pytest.approx(1.0)  # Def. B.11, pair (0, 1)
    assert M.b_y(v) == pytest.approx(s)  # Def. B.12, one coordinate +-s
    assert M.e_v(v) == pytest.approx(1.0)  # Def. B.13, pair (0, 1): (-1)^2 + 0^2
    assert M.l_v(v) == pytest.approx(1.0)  # Def. B.14, single coordinate
    st = M.geometry_statistics(torch.eye(3, dtype=torch.float64), v)
    assert st.e_v_tilde == pytest.approx(0.5)  # eq. 34
    # four items spread evenly: Y^(ij) has two equal coordinates for pair (0, 1) -> L_v = 2
    v4 = torch.tensor([[1.0, 0, 0, 0], [-1.0, 0, 0, 0], [0.6, 0.8, 0, 0], [0.6, -0.8, 0, 0]])
    # pair (0, 1): Y = (<v0 - v1, v2>, <v0 - v1, v3>) = (1.2, 1.2)
    assert M.l_v(v4) == pytest.approx(2.0)


def _naive_statistics(g, v, c):
    """Definitions B.9-B.15 and eq. 32-34 by direct loops over i, j, t."""
    F = g.shape[0]
    g, v, c = g.numpy(), v.numpy(), c.numpy()
    off = [(i, j) for i in range(F) for j in range(F) if i != j]
    out = dict(k_min_diag=g.diagonal().min(), k_max_off=max(abs(g[i, j]) for i, j in off))
    out.update(e_k=0.0, v_min=math.inf, v_max=0.0, b_y=0.0, e_v=0.0, l_v=1.0, kappa=0.0)
    out.update(e_k_tilde=0.0, e_v_tilde=0.0, kappa_tilde=0.0)
    for i in range(F):
        ek_i = sum(g[t, i] ** 2 for t in range(F) if t != i)
        out["e_k"] = max(out["e_k"], ek_i)
        for j in range(F):
            if j == i:
                continue
            dv = v[i] - v[j]
            out["v_min"] = min(out["v_min"], dv @ v[i])
            out["v_max"] = max(out["v_max"], abs(dv @ v[j]))
            rest = [t for t in range(F) if t not in (i, j)]
            Y = np.array([dv @ c[t] for t in rest])
            X = np.array([g[t, i] for t in rest])
            out["b_y"] = max(out["b_y"], abs(Y.sum()))
            ev_ij = sum((dv @ c[t]) ** 2 for t in range(F) if t != i)
            out["e_v"] = max(out["e_v"], ev_ij)
            if Y @ Y > 0:
                out["l_v"] = max(out["l_v"], np.abs(Y).sum() ** 2 / (Y @ Y))
            num = abs(sum(g[t, i] * (dv @ c[t]) for t in range(F) if t != i))
            if ek_i * ev_ij > 0:
                out["kappa"] = max(out["kappa"], num / math.sqrt(ek_i * ev_ij))
            out["e_k_tilde"] = max(out["e_k_tilde"], X @ X)
            out["e_v_tilde"] = max(out["e_v_tilde"], Y @ Y)
            if (X @ X) * (Y @ Y) > 0:
                cos = abs(X @ Y) / math.sqrt((X @ X) * (Y @ Y))
                out["kappa_tilde"] = max(out["kappa_tilde"], cos)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_statistics_match_direct_loops(seed):
    gen = torch.Generator().manual_seed(seed)
    F, d = 7, 5
    g = torch.randn(F, F, generator=gen, dtype=torch.float64)  # not symmetric: column i = query
    v = torch.randn(F, d, generator=gen, dtype=torch.float64)
    c = torch.randn(F, d, generator=gen, dtype=torch.float64)
    st = M.geometry_statistics(g, v, codes=c)
    ref = _naive_statistics(g, v, c)
    for name, want in ref.items():
        assert getattr(st, name) == pytest.approx(want, rel=1e-10, abs=1e-12), name
    # the single-statistic functions agree with the bundle
    assert M.e_k(g) == st.e_k and M.k_max_off(g) == st.k_max_off
    assert M.b_y(v, c) == pytest.approx(st.b_y) and M.e_v(v, c) == pytest.approx(st.e_v)
    assert M.l_v(v, c) == pytest.approx(st.l_v) and M.kappa(g, v, c) == pytest.approx(st.kappa)
    assert M.v_min(v) == pytest.approx(st.v_min) and M.v_max(v) == pytest.approx(st.v_max)


def test_statistics_from_a_fact_set_use_the_item_values():
    facts = make_fact_set(16, 8, tied=True, seed=7)  # values = permuted keys
    model = BilinearHebbian(facts, m=32, seed=2)
    st = M.geometry_statistics(model, facts)
    gram = M.kernel_gram(model, facts.keys)
    st2 = M.geometry_statistics(gram, facts.values[facts.mapping])
    assert st == st2
    assert st.num_facts == 16 and st.dim == 8


def test_statistics_of_rotated_orthonormal_values_are_exact_conventions():
    # orthonormal values in general position: Y^(ij)_t = 0 for t not in {i, j} up to rounding,
    # which must give the conventions kappa~ = 0, L_v = 1, E~_v = 0 (not a ratio of noises)
    gen = torch.Generator().manual_seed(0)
    F, d = 6, 9
    rot, _ = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))
    v = rot[:F]
    g = torch.randn(F, F, generator=gen, dtype=torch.float64)
    st = M.geometry_statistics(g, v)
    assert st.e_v_tilde == 0.0 and st.kappa_tilde == 0.0 and st.l_v == 1.0
    assert st.e_v == pytest.approx(1.0) and st.b_y < 1e-14
    assert st.v_min == pytest.approx(1.0) and st.v_max == pytest.approx(1.0)


def test_bad_input_raises_value_error():
    gram = torch.eye(8, dtype=torch.float64)
    with pytest.raises(ValueError, match="square"):
        M.e_k(torch.ones(3, 4))
    with pytest.raises(ValueError, match="values"):
        M.kappa(gram, torch.zeros(5, 4))
    with pytest.raises(ValueError, match="F >= 2"):
        M.v_min(torch.ones(1, 3))
    with pytest.raises(ValueError, match="bijection"):
        M.geometry_statistics(gram, make_fact_set(8, 4, tied=False, seed=0, num_values=5))
