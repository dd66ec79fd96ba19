"""Tests for assocmem.sdm.read.pattern_view: the SDM read of Eq. 1 with circle-intersection
weights, its log-space path, weight tables, the majority threshold and the empty-read policies.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.sdm import circle_intersection, circle_intersection_table
from assocmem.sdm.read.hamming import bipolar, hamming_distance, pairwise_hamming
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.sdm.read.pattern_view import EMPTY_POLICIES, majority, sdm_read, sdm_weights
from assocmem.sdm.read.patterns import flip_bits, random_binary_patterns

CPU = "cpu"


def patterns(m, n, seed=0):
    return random_binary_patterns(m, n, seed=seed, device=CPU)


def test_majority_is_strict_and_keeps_nan():
    out = majority(torch.tensor([0.2, 0.5, 0.5000001, 1.0, float("nan")]))
    assert torch.equal(out[:4], torch.tensor([0.0, 0.0, 1.0, 1.0], dtype=torch.float64))
    assert math.isnan(out[4].item())


def test_read_returns_a_pattern_at_distance_zero_when_the_rest_are_beyond_2d():
    n, d = 40, 6
    target = patterns(1, n, seed=0)[0]
    others = torch.stack([flip_bits(target, 2 * d + 1 + j, seed=10 + j) for j in range(9)])
    P = torch.cat([others[:4], target[None], others[4:]])  # target in the middle
    pointers = torch.randn(10, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    out = sdm_read(target, P, pointers, d)
    assert torch.equal(out, pointers[4])
    w = sdm_weights(target, P, d)
    assert torch.equal(w, torch.nn.functional.one_hot(torch.tensor(4), 10).double())
    # binary pointers come back exactly after the threshold as well
    assert torch.equal(sdm_read(target, P, P, d, threshold=True), target.double())


def test_sdm_weights_are_the_circle_intersection():
    n, d = 30, 8
    P, q = patterns(25, n, seed=2), patterns(4, n, seed=3)
    raw = sdm_weights(q, P, d, normalize=False)
    dist = pairwise_hamming(q, P)
    expect = torch.tensor([[float(circle_intersection(int(v), d, n)) for v in row] for row in dist],
                          dtype=torch.float64)
    assert torch.equal(raw, expect)
    torch.testing.assert_close(sdm_weights(q, P, d), expect / expect.sum(-1, keepdim=True))


def test_log_space_path_matches_exact_path():
    # I(0, 30, 100) > 2^53 needs the log path; compare with exact big-integer weights.
    n, d = 100, 30
    P = patterns(300, n, seed=5)
    q = torch.stack([flip_bits(P[i], k, seed=i) for i, k in enumerate([0, 3, 8, 15, 21, 59])])
    dist = pairwise_hamming(q, P)
    table = circle_intersection_table(n, d)
    for i in range(q.shape[0]):
        ints = [table[int(v)] for v in dist[i]]
        total = sum(ints)
        exact = torch.tensor([v / total for v in ints], dtype=torch.float64)
        torch.testing.assert_close(sdm_weights(q[i], P, d), exact, rtol=1e-12, atol=1e-300)
    with pytest.raises(ValueError, match="2\\^53"):
        sdm_weights(q, P, d, normalize=False)


def test_read_with_a_weight_table_and_autoassociative_threshold():
    n, d = 20, 4
    P = patterns(12, n, seed=6)
    table = [float(v) for v in circle_intersection_table(n, d)]
    q = flip_bits(P, 1, seed=7)
    torch.testing.assert_close(sdm_read(q, P, P, d, weights=table), sdm_read(q, P, P, d))
    flat = torch.ones(n + 1, dtype=torch.float64)  # every pattern counts equally: the mean
    torch.testing.assert_close(sdm_read(q, P, P, d, weights=flat), P.double().mean(0).expand(12, n))
    with pytest.raises(ValueError, match="n \\+ 1"):
        sdm_read(q, P, P, d, weights=table[:-1])
    with pytest.raises(ValueError, match="nonnegative"):
        sdm_read(q, P, P, d, weights=[-1.0] * (n + 1))
    with pytest.raises(ValueError, match="intersection"):
        sdm_read(q, P, P, d, weights="softmax")


def test_all_zero_weights_follow_the_empty_policy():
    n, d = 16, 2
    lonely = torch.zeros(1, n, dtype=torch.uint8)
    P = torch.stack([torch.ones(n, dtype=torch.uint8)])  # one pattern at distance n from lonely
    out = sdm_read(torch.cat([lonely, P]), P, P, d)
    assert torch.isnan(out[0]).all() and torch.equal(out[1], P[0].double())
    out_q = sdm_read(torch.cat([lonely, P]), P, P, d, empty="query", threshold=True)
    assert torch.equal(out_q[0], lonely[0].double())
    with pytest.raises(ValueError, match="no neuron"):
        sdm_read(lonely, P, P, d, empty="raise")
    with pytest.raises(ValueError, match="n_p"):
        sdm_read(lonely, P, torch.ones(1, 3), d, empty="query")
    with pytest.raises(ValueError, match="empty must be"):
        sdm_read(lonely, P, P, d, empty="zero")
    assert torch.isnan(sdm_weights(lonely, P, d)).all()
    assert set(EMPTY_POLICIES) == {"nan", "query", "raise"}


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda P, Q: sdm_read(Q * 2, P, P, 3), "binary"),
        (lambda P, Q: sdm_read(Q, P * 0.5, P, 3), "binary"),
        (lambda P, Q: sdm_read(Q[:, :9], P, P, 3), "bits"),
        (lambda P, Q: sdm_read(Q, P, P[:4], 3), "rows"),
        (lambda P, Q: sdm_read(Q, P, P[0], 3), "n_p"),
        (lambda P, Q: sdm_read(Q, P[0], P, 3), "\\(m, n\\)"),
        (lambda P, Q: sdm_read(Q, P, P, 11), "radius"),
        (lambda P, Q: sdm_read(Q, P, P, -1), "radius"),
        (lambda P, Q: sdm_read(Q, P, P, 2.5), "integer"),
        (lambda P, Q: sdm_read(Q, P[:0], P[:0], 3), "empty"),
        (lambda P, Q: sdm_read(Q, P, P.double() * float("nan"), 3), "finite"),
        (lambda P, Q: hamming_distance(Q, P[:, :9]), "last axis"),
        (lambda P, Q: bipolar(Q + 1), "binary"),
        (lambda P, Q: pairwise_hamming(Q, P[None]), "\\(m, n\\)"),
    ],
)
def test_bad_input_raises(call, match):
    P, Q = patterns(6, 10, seed=1), patterns(3, 10, seed=2)
    with pytest.raises(ValueError, match=match):
        call(P, Q)


def test_docstrings_say_empty_reads_are_nan_by_default():
    for fn in (sdm_read, NeuronSDM.read):
        doc = " ".join(fn.__doc__.split())
        assert 'default "nan"' in doc and '"raise"' in doc
        assert "rows of empty reads are NaN" in doc
    assert "Empty reads return NaN by default" in sdm_read.__doc__
