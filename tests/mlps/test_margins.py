"""Tests for assocmem.mlps.margins: margins on hand-made cases, accuracy vs margin sign, the App. B.5
statistics against hand computations and direct loops, the deterministic bounds, theory-curve
fits on synthetic data, the quantiser, noisy queries and bad input.

Models here are small stand-ins built in the test (bilinear features ``phi(x) = (A x) * (G x) /
sqrt(m)`` and the exact quadratic kernel), so the tests do not depend on assocmem.mlps.mlp.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import FactSet, make_fact_set, with_spike

# --------------------------------------------------------------------------------------------
# Stand-in memories
# --------------------------------------------------------------------------------------------


class BilinearHebbian(torch.nn.Module):
    """Unwhitened sketched-K2 Hebbian MLP: phi(x) = (A x) * (G x) / sqrt(m), B = C_f^T Phi / F."""

    def __init__(self, facts: FactSet, m: int, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        d = facts.dim
        self.A = torch.randn(m, d, generator=gen, dtype=torch.float64)
        self.G = torch.randn(m, d, generator=gen, dtype=torch.float64)
        self.m = m
        phi = self.features(facts.keys)  # (F, m)
        self.B = facts.targets.T @ phi / facts.num_facts  # (d, m)

    def features(self, x):
        return (x @ self.A.T) * (x @ self.G.T) / math.sqrt(self.m)

    def forward(self, x):
        return self.features(x) @ self.B.T


class ExactK2:
    """Hebbian memory with the exact quadratic kernel K2(x, z) = <x, z>^2 (no features)."""

    def __init__(self, facts: FactSet):
        self.keys = facts.keys
        self.targets = facts.targets
        self.F = facts.num_facts

    def kernel(self, x, z):
        return (x @ z.T) ** 2

    def __call__(self, x):
        return self.kernel(self.keys, x).T @ self.targets / self.F


def k2_features(x):
    """Exact K2 features x (x) x, so that <phi(x), phi(z)> = <x, z>^2."""
    return torch.einsum("ni,nj->nij", x, x).reshape(x.shape[0], -1)


def orthonormal_fact_set(F, d, perm=None):
    eye = torch.eye(d, dtype=torch.float64)
    keys = eye[:F]
    values = eye[torch.arange(d - 1, d - 1 - F, -1)]  # different rows of the basis
    mapping = torch.arange(F) if perm is None else torch.as_tensor(perm)
    return FactSet(keys, values, mapping)


# --------------------------------------------------------------------------------------------
# Margins on hand-made cases
# --------------------------------------------------------------------------------------------


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


def test_score_margins_hand_example():
    s = torch.tensor([[3.0, 1.0, 2.5], [0.0, -1.0, 4.0], [1.0, 1.0, 1.0]])
    got = M.score_margins(s, [0, 1, 2])
    torch.testing.assert_close(got, torch.tensor([0.5, -5.0, 0.0], dtype=torch.float64))


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


# --------------------------------------------------------------------------------------------
# Accuracy and the margin sign
# --------------------------------------------------------------------------------------------


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
    vals = FactSet(facts.keys, torch.full((2, 3), 1e200, dtype=torch.float64), facts.mapping, unit_norm=False)
    with pytest.raises(ValueError, match="score_matrix must be finite"):
        M.accuracy_from_outputs(huge, vals)
    with pytest.raises(ValueError, match="score_matrix must be finite"):
        M.accuracy(lambda x: huge, vals)
    with pytest.raises(ValueError, match="score_matrix must be finite"):
        M.output_margins(lambda x: huge, vals)  # the unfused path says the same
    big = 1e300 * facts.targets  # large but finite scores (|y| |v| = 1e300) are fine
    assert M.accuracy_from_outputs(big, facts) == 1.0
    # a finite table whose sum overflows is still finite
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


# --------------------------------------------------------------------------------------------
# Geometric statistics (App. B.5)
# --------------------------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("beta", "on"), [(0.0, "both"), (2.0, "keys"), (4.0, "values"), (2.0, "both")]
)
def test_deterministic_margin_bounds_hold(beta, on):
    facts = with_spike(make_fact_set(40, 10, tied=False, seed=3), beta, on=on, seed=1)
    model = BilinearHebbian(facts, m=96, seed=4)
    gram = M.kernel_gram(model, facts.keys)
    gm = M.gamma_min(gram, facts)
    st = M.geometry_statistics(gram, facts)
    eq44 = M.arbitrary_bound(st.k_min_diag, st.v_min, st.e_k, st.e_v, st.kappa)
    eq43 = M.absorbed_bound(
        st.k_min_diag, st.k_max_off, st.v_min, st.v_max, st.e_k_tilde, st.e_v_tilde, st.kappa_tilde
    )
    assert gm >= eq44 - 1e-10  # Theorem B.25, eq. 44
    assert gm >= eq43 - 1e-10  # Theorem B.25, eq. 43
    assert st.v_min >= 0  # eq. 40 for unit values
    assert 0 <= st.kappa <= 1 and 0 <= st.kappa_tilde <= 1
    assert 1 <= st.l_v <= st.num_facts - 2


def test_penalties_recombine_into_the_crosstalk_scale():
    facts = make_fact_set(64, 16, tied=False, seed=1)
    m = 128
    model = BilinearHebbian(facts, m=m, seed=0)
    st = M.geometry_statistics(model, facts)
    pen = M.penalty_statistics(st, m)
    F, d = 64, 16
    assert pen.p_key == pytest.approx(math.sqrt(st.e_k) / math.sqrt(F / m))
    assert pen.p_val == pytest.approx(math.sqrt(st.e_v) / math.sqrt(F / d))
    assert pen.p_align == pytest.approx(st.kappa / math.sqrt(math.log(F) / F))
    assert pen.s_sig == pytest.approx(st.k_min_diag * st.v_min / (1 - math.sqrt(math.log(F) / d)))
    # exact identity of Corollary B.26's proof
    lhs = pen.p_key * pen.p_val * pen.p_align * math.sqrt(F * math.log(F) / (m * d))
    assert lhs == pytest.approx(math.sqrt(st.e_k) * math.sqrt(st.e_v) * st.kappa, rel=1e-12)
    both = M.arbitrary_bound(st.k_min_diag, st.v_min, st.e_k, st.e_v, st.kappa, C_s=0.7)
    c_s = 0.7 * (1 - math.sqrt(math.log(F) / d))
    pb = M.penalty_bound(pen.s_sig, pen.p_key, pen.p_val, pen.p_align, F, m, d, C_s=c_s)
    assert pb == pytest.approx(both, rel=1e-12)


# --------------------------------------------------------------------------------------------
# Theory curves and fits
# --------------------------------------------------------------------------------------------


def test_theory_curves_known_points():
    L = math.log(1.0 * 100**2 / 0.5)
    assert M.log_term(100) == pytest.approx(L)
    assert M.log_term(1, C_L=0.0) == 0.0  # floored
    iso = M.isotropic_bound(100, 50, 8, C_s=0.5, C_x=2.0)
    assert iso == pytest.approx(0.5 - 2 * math.sqrt(100 * L / 400))
    eq56 = M.isotropic_bound_eq56(100, 50, 8, C_1=0, C_2=0, C_3=0, C_4=2.0, C_s=0.5)
    assert eq56 == pytest.approx(M.isotropic_bound(100, 50, 8, C_s=0.5, C_x=2.0))
    eps_v = math.sqrt(L / 7)
    keys = M.arbitrary_keys_bound(0.9, 0.2, 4.0, 100, 8)
    assert keys == pytest.approx(0.9 * (1 - eps_v) - 0.2 - 2 * math.sqrt(L / 8))
    r = math.sqrt(L / 50)
    vals = M.arbitrary_values_bound(0.8, 1.0, 4.0, 9.0, 100, 50)
    assert vals == pytest.approx((1 - r) * 0.8 - (1 + 6) * r)
    assert M.arbitrary_bound(1.0, 0.5, 4.0, 9.0, 0.25) == pytest.approx(0.5 - 1.5)
    noisy = M.noisy_margin_bound(0.4, 0.1, 100, 8, C_n=2.0)
    assert noisy == pytest.approx(0.4 - 0.2 * math.sqrt(100 * L / 8))
    out = M.isotropic_bound(np.array([10, 100]), 50, 8)
    assert isinstance(out, np.ndarray) and out.shape == (2,)


def test_fit_isotropic_recovers_known_constants():
    F = np.geomspace(32, 2048, 30)
    truth = dict(C_s=0.55, C_x=0.12, C_L=4.0)
    gamma = M.isotropic_bound(F, 512, 32, **truth)
    fit = M.fit_theory_curve("isotropic", gamma, {"F": F, "m": 512, "d": 32})
    assert fit.free == ("C_s", "C_x", "C_L") and fit.success
    for k, v in truth.items():
        assert fit.constants[k] == pytest.approx(v, rel=1e-5)
    assert fit.constants["delta"] == 0.5
    assert fit.r2 == pytest.approx(1.0, abs=1e-10) and fit.n_points == 30
    np.testing.assert_allclose(fit(F=F, m=512, d=32), gamma, atol=1e-9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.r2 = 0.0
    with pytest.raises(TypeError):
        fit.constants["C_s"] = 1.0


def test_fit_is_bounded_to_non_negative_constants():
    F = np.geomspace(32, 512, 12)
    gamma = 0.5 + 0.01 * np.sqrt(F)  # increasing: the best non-negative C_x is 0
    cov = {"F": F, "m": 256, "d": 64}
    fit = M.fit_theory_curve("isotropic", gamma, cov, fixed={"C_L": 1.0}, free=("C_s", "C_x"))
    assert fit.constants["C_x"] == pytest.approx(0.0, abs=1e-10) and fit.constants["C_s"] > 0
    assert fit.r2 < 1


@pytest.mark.parametrize(
    ("form", "truth"),
    [
        ("keys", dict(C_s=0.8, C_x=0.3)),
        ("values", dict(C_s=0.7, C_x=0.05)),
        ("both", dict(C_s=0.6, C_x=0.4)),
        ("penalty", dict(C_s=0.45, C_x=0.2)),
        ("noisy", dict(C_n=1.7)),
        ("isotropic_eq56", dict(C_s=0.9, C_1=0.3, C_2=0.2, C_3=0.5, C_4=0.1)),
    ],
)
def test_fit_table2_forms_recover_known_constants(form, truth):
    rng = np.random.default_rng(0)
    n = 25
    cov = {
        "k_min_diag": rng.uniform(0.8, 1.2, n),
        "k_max_off": rng.uniform(0.0, 0.5, n),
        "e_k": rng.uniform(1.0, 20.0, n),
        "v_min": rng.uniform(0.3, 1.0, n),
        "v_max": rng.uniform(0.5, 1.5, n),
        "b_y": rng.uniform(0.0, 3.0, n),
        "e_v": rng.uniform(1.0, 5.0, n),
        "l_v": rng.uniform(1.0, 50.0, n),
        "kappa": rng.uniform(0.05, 0.6, n),
        "s_sig": rng.uniform(0.5, 1.5, n),
        "p_key": rng.uniform(0.5, 3.0, n),
        "p_val": rng.uniform(0.5, 3.0, n),
        "p_align": rng.uniform(0.5, 3.0, n),
        "gamma_clean": rng.uniform(0.3, 0.6, n),
        "eps": np.geomspace(0.01, 2.0, n),
        "F": rng.choice([64.0, 128.0, 256.0], n),
        "m": rng.choice([256.0, 512.0, 1024.0], n),
        "d": rng.choice([32.0, 64.0], n),
    }
    spec = M.THEORY_FORMS[form]
    args = {k: cov[k] for k in spec.covariates}
    gamma = spec.func(**args, **truth)
    fit = M.fit_theory_curve(form, gamma, args, free=tuple(truth))
    for k, v in truth.items():
        assert fit.constants[k] == pytest.approx(v, rel=1e-5), k
    assert fit.r2 > 1 - 1e-10


def test_covariates_from_statistics_feed_a_fit():
    base = make_fact_set(32, 12, tied=False, seed=0)
    stats, gammas = [], []
    for beta in (0.0, 0.5, 1.0, 2.0, 3.0):
        facts = with_spike(base, beta, on="keys", seed=0)
        model = BilinearHebbian(facts, m=64, seed=0)
        stats.append(M.geometry_statistics(model, facts))
        gammas.append(M.gamma_min(model, facts))
    cov = M.covariates_from_statistics(stats, width=64)
    assert cov["F"].tolist() == [32.0] * 5 and cov["m"].tolist() == [64.0] * 5
    fit = M.fit_theory_curve("keys", gammas, cov)
    assert set(fit.free) == {"C_s", "C_x"} and all(fit.constants[k] >= 0 for k in fit.free)
    assert np.isfinite(fit.r2)
    assert fit(**{k: cov[k] for k in M.THEORY_FORMS["keys"].covariates}).shape == (5,)


def test_r_squared():
    y = np.array([1.0, 2.0, 3.0])
    assert M.r_squared(y, y) == 1.0
    assert M.r_squared(y, np.full(3, 2.0)) == 0.0
    assert math.isnan(M.r_squared(np.ones(3), np.ones(3)))


# --------------------------------------------------------------------------------------------
# Noisy queries
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Quantiser and bit search (App. B.2.6)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", [1, 2, 3, 5, 8, 12])
def test_quantizer_properties(bits):
    gen = torch.Generator().manual_seed(bits)
    x = torch.randn(40, 30, generator=gen, dtype=torch.float64)
    q = M.quantize(x, bits)
    step = M.quantization_step(x, bits)
    s = float(x.abs().max())
    assert step == pytest.approx(2 * s / 2**bits)
    assert float((q - x).abs().max()) <= step / 2 * (1 + 1e-12)  # error <= half a step
    assert torch.unique(q).numel() <= 2**bits
    torch.testing.assert_close(M.quantize(-x, bits), -q)  # symmetric
    assert float(q.abs().max()) <= s - step / 2 + 1e-12
    levels = torch.unique(q) / step - 0.5  # integer codes in [-2^(b-1), 2^(b-1) - 1]
    torch.testing.assert_close(levels, levels.round())
    assert levels.min() >= -(2 ** (bits - 1)) and levels.max() <= 2 ** (bits - 1) - 1


def test_quantizer_special_cases():
    x = torch.tensor([-2.0, -0.1, 0.3, 2.0], dtype=torch.float32)
    q1 = M.quantize(x, 1)
    assert q1.dtype == torch.float32
    torch.testing.assert_close(q1, torch.tensor([-1.0, -1.0, 1.0, 1.0]))  # +-s/2
    assert torch.equal(M.quantize(torch.zeros(3, 3), 4), torch.zeros(3, 3))
    errs = [float((M.quantize(x, b) - x).abs().max()) for b in range(1, 12)]
    assert all(e2 <= e1 + 1e-7 for e1, e2 in zip(errs, errs[1:]))  # finer with more bits here
    out = M.quantize_matrices({"A": x, "B": 2 * x}, 3)
    assert set(out) == {"A", "B"}
    torch.testing.assert_close(out["B"], 2 * out["A"])  # one scale per matrix


def test_min_bits_for_positive_margin():
    facts = make_fact_set(16, 16, tied=False, seed=0)
    model = BilinearHebbian(facts, m=256, seed=0)
    mats = {"A": model.A / model.m**0.25, "G": model.G / model.m**0.25, "B": model.B}

    def margin(A, G, B):
        out = ((facts.keys @ A.T) * (facts.keys @ G.T)) @ B.T  # the MLP B((A x) * (G x))
        return M.score_margins(out @ facts.values.T, facts.mapping).min()

    res = M.min_bits_for_positive_margin(margin, mats, max_bits=16)
    assert res.full_precision_margin == pytest.approx(float(M.output_margins(model, facts).min()))
    assert res.full_precision_margin > 0
    assert res.bits is not None and res.margins[-1] == (res.bits, res.margins[-1][1])
    assert res.margins[-1][1] > 0 and all(g <= 0 for _, g in res.margins[:-1])
    seq = [mats["A"], mats["G"], mats["B"]]
    full = M.min_bits_for_positive_margin(margin, seq, max_bits=12, scan_all=True)
    assert [b for b, _ in full.margins] == list(range(1, 13)) and full.bits == res.bits
    assert M.min_bits_for_positive_margin(lambda **kw: -1.0, mats, max_bits=3).bits is None


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def test_bad_input_raises_value_error():
    facts = make_fact_set(8, 4, tied=False, seed=0)
    gram = torch.eye(8, dtype=torch.float64)
    with pytest.raises(ValueError, match="square"):
        M.fact_margins(torch.ones(8, 7), facts)
    with pytest.raises(ValueError, match=r"\(8, 8\)"):
        M.fact_margins(torch.eye(6), facts)
    with pytest.raises(ValueError, match="square"):
        M.e_k(torch.ones(3, 4))
    out_of_range = torch.tensor([0, 1, 2, 3, 4, 5, 6, 8])
    bad_map = SimpleNamespace(keys=facts.keys, values=facts.values, mapping=out_of_range)
    with pytest.raises(ValueError, match="mapping"):
        M.fact_margins(gram, bad_map)
    with pytest.raises(ValueError, match="mapping"):
        M.score_margins(torch.zeros(2, 3), [0, 3])
    with pytest.raises(ValueError, match="competitor"):
        M.score_margins(torch.zeros(2, 1), [0, 0])
    with pytest.raises(ValueError, match="codes"):
        M.fact_margins(gram, facts, codes=torch.zeros(8, 3))
    with pytest.raises(ValueError, match="queries"):
        M.fact_margins(gram, facts, queries=facts.keys)
    with pytest.raises(ValueError, match="features"):
        M.fact_margins(object(), facts)
    with pytest.raises(ValueError, match="values"):
        M.kappa(gram, torch.zeros(5, 4))
    with pytest.raises(ValueError, match="F >= 2"):
        M.v_min(torch.ones(1, 3))
    with pytest.raises(ValueError, match="bijection"):
        M.geometry_statistics(gram, make_fact_set(8, 4, tied=False, seed=0, num_values=5))
    with pytest.raises(ValueError, match="bits"):
        M.quantize(torch.ones(3), 0)
    with pytest.raises(ValueError, match="bits"):
        M.quantize(torch.ones(3), 2.5)
    with pytest.raises(ValueError, match="bits"):
        M.min_bits_for_positive_margin(lambda *a: 1.0, [torch.ones(2)], min_bits=0)
    with pytest.raises(ValueError, match="finite"):
        M.quantize(torch.tensor([1.0, math.nan]), 4)
    with pytest.raises(ValueError, match="unknown form"):
        M.fit_theory_curve("nope", [1.0, 2.0], {})
    with pytest.raises(ValueError, match="missing"):
        M.fit_theory_curve("isotropic", [1.0, 2.0], {"F": [1.0, 2.0]})
    with pytest.raises(ValueError, match="unknown constant"):
        cov = dict(k_min_diag=1, v_min=1, e_k=1, e_v=1, kappa=1)
        M.fit_theory_curve("both", [1.0, 2.0], cov, free=("C_q",))
    with pytest.raises(ValueError, match="delta"):
        cov = {"F": [1, 2, 3], "m": 4, "d": 4}
        M.fit_theory_curve("isotropic", [1.0, 2.0, 3.0], cov, free=("delta",))
    with pytest.raises(ValueError, match="entries"):
        M.fit_theory_curve("isotropic", [1.0, 2.0, 3.0], {"F": [1, 2], "m": 4, "d": 4})
    with pytest.raises(ValueError, match="d > log F"):
        M.s_sig(1.0, 1.0, 1000, 4)
    with pytest.raises(ValueError, match="kappa"):
        M.p_align(1.5, 10)
    with pytest.raises(ValueError, match="eps"):
        M.perturb_queries(facts.keys, -0.1)
    with pytest.raises(ValueError, match="Gram"):
        M.noisy_fact_margins(gram, facts, 0.1)
    with pytest.raises(ValueError, match="delta"):
        M.log_term(10, delta=1.5)
