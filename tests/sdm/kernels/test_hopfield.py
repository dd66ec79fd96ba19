"""Tests for assocmem.sdm.kernels.hopfield: Hopfield fields and updates, App. B.6's chain of
changes, the write-radius-0 SDM, unanimity, and the retrieval comparisons. Hopfield fields and
integer-valued reads are checked for equality.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from assocmem.linear.memory import OuterProductMemory
from assocmem.sdm import bipolar, flip_bits, random_binary_patterns, sdm_read
from assocmem.sdm.kernels.hopfield import (
    app_b6_field,
    compare_retrieval,
    hopfield_field,
    hopfield_field_as_sdm,
    hopfield_update,
    iterate_reads,
    keeler_sdm_read,
    one_step_agreement,
    sign_keep,
    unanimity_violations,
)

CPU = "cpu"


def test_sign_keep():
    out = sign_keep(torch.tensor([2.0, -1.0, 0.0, 0.0]), torch.tensor([1.0, 1.0, -1.0, 1.0]))
    assert out.tolist() == [1.0, -1.0, -1.0, 1.0]



def test_sign_keep_checks_the_current_state():
    # a zero field keeps the current value, which must therefore be +-1 (it gave [0., 1.])
    with pytest.raises(ValueError, match=r"current must be a bipolar state \(every entry \+1 or -1\)"):
        sign_keep(torch.tensor([0.0, 0.0]), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"current must have the shape of field, \(2,\).*got \(3,\)"):
        sign_keep(torch.tensor([0.0, 1.0]), torch.ones(3))
    with pytest.raises(ValueError, match=r"got \(1, 2\)"):  # no silent broadcasting either
        sign_keep(torch.tensor([[1.0, 0.0], [0.0, -1.0]]), torch.ones(1, 2))


def test_hopfield_field_identities():
    n, m = 24, 7
    P = random_binary_patterns(m, n, seed=0, device=CPU)
    Q = torch.randint(0, 2, (50, n), generator=torch.Generator().manual_seed(1), dtype=torch.uint8)
    S, X = bipolar(P, normalize=False), bipolar(Q, normalize=False)
    f = hopfield_field(S, X)
    assert torch.equal(f, app_b6_field(P, Q))
    assert torch.equal(f, hopfield_field_as_sdm(P, Q))
    assert torch.equal(f, OuterProductMemory(n, n, device=CPU).write(S, S).read(X))


def test_hopfield_update_fixed_points_and_mirror():
    # orthogonal patterns are fixed points, and so are their mirror images
    H = torch.tensor([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1]], dtype=torch.float64)
    assert torch.equal(hopfield_update(H, H, steps=5), H)
    assert torch.equal(hopfield_update(H, -H, steps=5), -H)
    with pytest.raises(ValueError):
        hopfield_update(H, torch.zeros(4))


def test_zero_diagonal_option():
    H = torch.tensor([[1, 1, -1, -1]], dtype=torch.float64)
    x = torch.tensor([[1, 1, 1, -1]], dtype=torch.float64)
    assert torch.equal(hopfield_update(H, x, zero_diagonal=True), H)


def test_keeler_read_is_majority_within_radius():
    n = 16
    P = random_binary_patterns(6, n, seed=3, device=CPU)
    Q = flip_bits(P, 2, seed=4)
    for d_read in (2, 5, 9, n):
        out = keeler_sdm_read(P, Q, d_read, threshold=False)
        table = torch.tensor([1.0 if k <= d_read else 0.0 for k in range(n + 1)], dtype=torch.float64)
        ref = sdm_read(Q, P, P, 0, weights=table)
        assert torch.allclose(torch.nan_to_num(out, -1.0), torch.nan_to_num(ref, -1.0), atol=1e-15, rtol=0)
    # no read threshold: every query gets the same output
    full = keeler_sdm_read(P, Q, n)
    assert torch.equal(full, full[:1].expand_as(full))


def test_sdm_never_breaks_unanimity_but_hopfield_does():
    n, m = 32, 3
    P = random_binary_patterns(m, n, seed=7, device=CPU)
    assert bool(((P == 0).all(0) | (P == 1).all(0)).any())
    mirror = 1 - P
    hop = hopfield_update(bipolar(P, normalize=False), bipolar(mirror, normalize=False))
    assert int(unanimity_violations((hop + 1) / 2, P).sum()) > 0
    for d in range(n + 1):
        out = sdm_read(mirror, P, P, d, threshold=True)
        assert int(unanimity_violations(out, P).sum()) == 0


def test_iterate_reads_stops_at_fixed_point():
    calls = []

    def read(x):
        calls.append(1)
        return torch.zeros_like(x)

    x, steps = iterate_reads(read, torch.ones(2, 3), max_steps=10)
    assert steps == 2 and torch.equal(x, torch.zeros(2, 3))


def test_compare_retrieval_and_agreement_small():
    df = compare_retrieval(32, 3, [0, 2], d=8, d_read=8, queries=12, max_steps=20, seed=0)
    assert set(df.memory) == {"Hopfield", "SDM, neuron at every address", "SDM, d_write = 0, neurons = patterns"}
    assert (df.loc[df.flips == 0, "success"] == 1.0).all()
    P = random_binary_patterns(3, 16, seed=1, device=CPU)
    near = flip_bits(P, 1, seed=2)
    ag = one_step_agreement(P, near)
    assert len(ag) == 2 * 17
    assert ag.agreement.between(0, 1).all()
    far = 1 - P
    both = one_step_agreement(P, {"near": near, "mirror": far})
    assert len(both) == 2 * 2 * 17
    got = both[both.queries == "near"].reset_index(drop=True)
    assert np.array_equal(got.agreement.to_numpy(), ag.agreement.to_numpy())
    assert (both[both.queries == "mirror"].agreement == 0).all()  # SDM never returns a mirror state
