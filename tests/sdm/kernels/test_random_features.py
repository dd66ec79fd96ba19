"""Tests for assocmem.sdm.kernels.random_features: the binary feature map equals the neurons'
activation, neuron-view SDM equals normalised linear attention, and the Monte Carlo mean of the
shared features is ``I r / 2^n`` within four standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from assocmem.linear.memory import OuterProductMemory
from assocmem.sdm import (
    NeuronSDM,
    circle_intersection,
    circle_intersection_table,
    expected_neurons,
    flip_bits,
    random_binary_patterns,
)
from assocmem.sdm.kernels.random_features import (
    binary_random_features,
    feature_kernel_mc,
    neurons_for_precision,
    sdm_as_linear_attention,
    shared_feature_counts,
)

CPU = "cpu"


def test_features_match_neuron_activation():
    mem = NeuronSDM(16, 500, 5, seed=3, device=CPU)
    x = random_binary_patterns(20, 16, seed=4, device=CPU)
    phi = binary_random_features(x, mem.neuron_addresses, 5)
    assert phi.dtype == torch.float64 and phi.shape == (20, 500)
    assert torch.equal(phi.bool(), mem.activation(x))


@pytest.mark.parametrize("threshold", [False, True])
def test_linear_attention_form_equals_neuron_read(threshold):
    n, r, d = 20, 3000, 6
    mem = NeuronSDM(n, r, d, seed=0, device=CPU)
    P = random_binary_patterns(30, n, seed=1, device=CPU)
    mem.write(P, P)
    Q = torch.cat([flip_bits(P, k, seed=k) for k in (0, 2, 5, 9)])
    a = mem.read(Q, threshold=threshold)
    b = sdm_as_linear_attention(Q, P, P, mem.neuron_addresses, d, threshold=threshold)
    assert torch.equal(torch.isnan(a), torch.isnan(b))
    assert torch.equal(torch.nan_to_num(a, -7.0), torch.nan_to_num(b, -7.0))
    # a leading batch shape is kept
    c = sdm_as_linear_attention(Q.reshape(4, 30, n), P, P, mem.neuron_addresses, d, threshold=threshold)
    assert torch.equal(torch.nan_to_num(c.reshape(-1, n), -7.0), torch.nan_to_num(b, -7.0))


def test_storage_is_outer_product_memory():
    n, r, d = 16, 800, 5
    mem = NeuronSDM(n, r, d, seed=0, device=CPU)
    P = random_binary_patterns(12, n, seed=1, device=CPU)
    mem.write(P, P)
    phi = binary_random_features(P, mem.neuron_addresses, d)
    S = OuterProductMemory(r, n, device=CPU).write(phi, P.to(torch.float64)).S  # (n, r)
    assert torch.equal(S.T, mem.storage)


def test_exhaustive_features_give_intersection():
    n, d = 10, 3
    mem = NeuronSDM.exhaustive(n, d, device=CPU)
    x = random_binary_patterns(6, n, seed=2, device=CPU)
    y = torch.cat([flip_bits(x, k, seed=k) for k in range(n + 1)])
    phi_x = binary_random_features(x, mem.neuron_addresses, d)
    phi_y = binary_random_features(y, mem.neuron_addresses, d)
    table = circle_intersection_table(n, d)
    got = (phi_y.reshape(n + 1, 6, -1) * phi_x).sum(-1)  # (n + 1, 6)
    for k in range(n + 1):
        assert torch.all(got[k] == table[k])


def test_two_radii_and_empty_policy():
    P = random_binary_patterns(5, 12, seed=0, device=CPU)
    Q = flip_bits(P, 3, seed=1)
    out = sdm_as_linear_attention(Q, P, P, P, 0, d_read=2, threshold=True)
    assert torch.isnan(out).all()  # nothing within 2 of the queries
    kept = sdm_as_linear_attention(Q, P, P, P, 0, d_read=2, threshold=True, empty="query")
    assert torch.equal(kept, Q.to(torch.float64))
    with pytest.raises(ValueError):
        sdm_as_linear_attention(Q, P, P, P, 0, d_read=2, empty="raise")


def test_shared_feature_counts_mean_within_four_se():
    n, d, r, draws = 16, 5, 300, 600
    dvs = list(range(0, 2 * d + 2))
    df = feature_kernel_mc(dvs, d, n, r, draws, seed=11)
    for row in df.itertuples():
        assert row.exact == pytest.approx(expected_neurons(row.dv, d, n, r), rel=1e-15)
        assert abs(row.z) <= 4.0
    assert df.all_integer.all()
    assert (df.loc[df.dv > 2 * d, "mean"] == 0).all()


def test_shared_feature_counts_shape_and_determinism():
    a = shared_feature_counts([0, 3], 4, 12, 50, 7, seed=5)
    b = shared_feature_counts([0, 3], 4, 12, 50, 7, seed=5)
    assert a.shape == (7, 2) and a.dtype == np.int64
    assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        shared_feature_counts([13], 4, 12, 50, 7)


def test_neurons_for_precision():
    n, d, dv = 20, 6, 4
    r = neurons_for_precision(dv, d, n, 0.1)
    q = circle_intersection(dv, d, n) / 2**n
    assert math.isclose(math.sqrt((1 - q) / (r * q)), 0.1, rel_tol=1e-12)
    with pytest.raises(ValueError):
        neurons_for_precision(2 * d + 1, d, n, 0.1)
