"""The bit-complexity sweep (assocmem.mlps.margin_sweeps.bit_complexity): a point's fields and
Theorem B.6's sufficient bit count.
"""

import math

import pytest
import torch

from assocmem.mlps import margin_sweeps as MS
from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margin_sweeps.bit_complexity import _output_gamma_min
from assocmem.mlps.mlp import hebbian_mlp
from assocmem.sweeps import get_sweep

CPU = torch.device("cpu")


def test_bits_point_fields_and_theorem_b6():
    cfg = get_sweep("margin_bits").config("quick")
    row = MS.bits_point(cfg, {"d": 32, "rep": 0}, CPU)
    assert row["F"] == 64 and row["m"] == math.ceil(32.0 * 64 * math.log(64) / 32)
    assert row["P"] == 3 * row["m"] * 32
    assert row["gamma_out"] == pytest.approx(row["gamma_kernel"] / row["F"], rel=1e-9)
    assert 1 <= row["bits_min"] <= row["bits_stable"] <= cfg.max_bits
    assert row["bits_b6"] >= row["bits_stable"]
    assert row["margin_b6_ratio"] >= 0.5  # Theorem B.6's guarantee
    assert row["dist_b6"] <= row["dist_allowed"]


def _small_mlp():
    facts = make_fact_set(24, 16, tied=False, seed=3)
    mlp = hebbian_mlp(facts, 200, seed=4)
    return facts, mlp, {"A": mlp.A.detach(), "G": mlp.G.detach(), "B": mlp.B.detach()}


def test_theorem_b6_bits_is_the_smallest_sufficient_width():
    facts, mlp, mats = _small_mlp()
    gamma0 = float(M.output_margins(mlp, facts).min())
    assert gamma0 > 0
    res = MS.theorem_b6_bits(mats, gamma0)
    assert res.bits is not None and res.dist_bound <= res.dist_allowed
    # one bit fewer does not meet the condition
    prev = MS.theorem_b6_bits(mats, gamma0, max_bits=res.bits - 1)
    assert prev.bits is None and prev.dist_bound > prev.dist_allowed
    # the constants are those of Lemma B.5 with the measured operator norms
    assert res.l_theta == pytest.approx(3 * res.op_norm**2)
    assert res.c_rng == max(float(v.abs().max()) for v in mats.values())
    # and the guarantee holds: quantising to that many bits keeps at least half the margin
    q = M.quantize_matrices(mats, res.bits)
    dist = math.sqrt(sum(float(((q[k] - mats[k]) ** 2).sum()) for k in mats))
    assert dist <= res.dist_bound
    gq = _output_gamma_min(facts)(**q)
    assert gq >= gamma0 / 2


def test_theorem_b6_bits_edge_cases():
    _, _, mats = _small_mlp()
    assert MS.theorem_b6_bits(mats, -1.0).bits is None
    assert MS.theorem_b6_bits(mats, 0.0).bits is None
    assert MS.theorem_b6_bits(mats, 1e-300, max_bits=8).bits is None
    with pytest.raises(ValueError):
        MS.theorem_b6_bits({}, 1.0)
    with pytest.raises(ValueError):
        MS.theorem_b6_bits(mats, 1.0, key_radius=0.0)
    with pytest.raises(ValueError):
        MS.theorem_b6_bits(mats, 1.0, max_bits=0)
    # a larger margin or a smaller key radius needs no more bits
    a = MS.theorem_b6_bits(mats, 1e-3).bits
    assert MS.theorem_b6_bits(mats, 1e-2).bits <= a
    assert MS.theorem_b6_bits(mats, 1e-3, key_radius=0.5).bits <= a
