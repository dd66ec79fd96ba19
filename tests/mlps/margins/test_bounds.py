"""Tests for assocmem.mlps.margins.bounds: the theory curves at known points, the deterministic
bounds of Theorem B.25 (eqs. 43, 44) below the measured gamma_min, and bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set, with_spike
from tests.mlps.margins._memories import BilinearHebbian


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


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="delta"):
        M.log_term(10, delta=1.5)
