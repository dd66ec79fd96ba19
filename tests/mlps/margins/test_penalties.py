"""Tests for assocmem.mlps.margins.penalties: the penalties of Sec. 4.2.2 recombine into the
cross-talk scale (Corollary B.26), and bad input.
"""

from __future__ import annotations

import math

import pytest

from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set
from tests.mlps.margins._memories import BilinearHebbian


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


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="d > log F"):
        M.s_sig(1.0, 1.0, 1000, 4)
    with pytest.raises(ValueError, match="kappa"):
        M.p_align(1.5, 10)
