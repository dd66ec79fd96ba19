"""Tests for assocmem.mlps.mlp.ntk: the degree-1 Hermite (NTK) construction of App. B.3."""

import torch

from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp.architectures import GatedReLUMLP
from assocmem.mlps.mlp.ntk import ntk_mlp
from tests.mlps.mlp._helpers import accuracy


def test_ntk_construction_matches_appendix_b3():
    fs = make_fact_set(64, 32, seed=1)
    m = 128
    model = ntk_mlp(fs, m, seed=2)
    assert isinstance(model, GatedReLUMLP)
    torch.testing.assert_close(model.P.norm(dim=0), torch.ones(m, dtype=torch.float64))
    # W_up, row by row: u_r = (1/m) sum_i (w_r . k_i)(c_f(i) . p_r) k_i
    K, C = fs.keys, fs.targets
    u = torch.stack([
        sum((model.W_gate[r] @ K[i]) * (C[i] @ model.P[:, r]) * K[i] for i in range(64)) / m
        for r in range(0, m, 17)
    ])
    torch.testing.assert_close(model.W_up[::17], u)
    x = torch.randn(4, 32, dtype=torch.float64)
    ref = (torch.relu(x @ model.W_gate.T) * (x @ model.W_up.T)) @ model.P.T
    torch.testing.assert_close(model(x), ref)
    assert model.num_parameters == 3 * m * 32
    assert accuracy(ntk_mlp(fs, 2048, seed=2), fs) == 1.0
    assert accuracy(ntk_mlp(fs, 32, seed=2), fs) < 1.0
