"""Tests for assocmem.sdm.read: Hamming distances, the bipolar map, the pattern view (Eq. 1),
attention in SDM notation (Eq. 4) and the neuron view of sparse distributed memory.

The neuron view with a neuron at every address is the reference for the pattern view (equal bit
for bit); with random neurons its shared-neuron counts are checked against ``I r / 2^n`` within
four standard errors.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.sdm import circle_intersection, circle_intersection_table, expected_neurons, fit_beta
from assocmem.sdm.read import (
    EMPTY_POLICIES,
    NeuronSDM,
    attention_read,
    attention_weights,
    bipolar,
    expected_sign_hamming,
    flip_bits,
    hamming_distance,
    majority,
    pairwise_hamming,
    random_binary_patterns,
    rotate_to_cosine,
    sdm_read,
    sdm_weights,
    sign_binarize,
    sign_hamming_correlation,
    sphere_hamming,
)

CPU = "cpu"


def patterns(m, n, seed=0):
    return random_binary_patterns(m, n, seed=seed, device=CPU)


# ------------------------------------------------------------------------------------------
# Distances and the binary-to-sphere map
# ------------------------------------------------------------------------------------------


def test_hamming_distance_small_example_and_dtypes():
    a = torch.tensor([0, 1, 1, 0, 1])
    b = torch.tensor([1, 1, 0, 0, 0])
    assert hamming_distance(a, b).item() == 3
    assert hamming_distance(a.bool(), b.double()).item() == 3
    assert hamming_distance(a.tolist(), b.numpy()).item() == 3
    assert hamming_distance(a, b).dtype == torch.int64


def test_hamming_distance_broadcasts_and_matches_pairwise():
    x, y = patterns(7, 13, seed=1), patterns(5, 13, seed=2)
    broadcast = hamming_distance(x[:, None, :], y[None, :, :])  # (7, 5)
    assert broadcast.shape == (7, 5)
    assert torch.equal(broadcast, pairwise_hamming(x, y))
    loop = torch.tensor([[int((x[i] != y[j]).sum()) for j in range(5)] for i in range(7)])
    assert torch.equal(broadcast, loop)
    # leading axes on the query side
    assert torch.equal(pairwise_hamming(x.reshape(7, 1, 13), y), broadcast[:, None, :])


@pytest.mark.parametrize("n", [1, 5, 16, 63, 64, 100, 256, 1000])
def test_bipolar_identity_holds(n):
    x, y = patterns(200, n, seed=3), patterns(200, n, seed=4)
    d = hamming_distance(x, y).double()
    s, t = bipolar(x, normalize=False), bipolar(y, normalize=False)
    assert torch.equal((n - (s * t).sum(-1)) / 2, d)  # integer arithmetic: exact for every n
    xh, yh = bipolar(x), bipolar(y)
    assert torch.allclose(torch.linalg.vector_norm(xh, dim=-1), torch.ones(200, dtype=torch.float64))
    cos_form = n / 2 * (1 - (xh * yh).sum(-1))
    assert torch.allclose(cos_form, d, rtol=0, atol=n * 4e-16)
    assert torch.allclose(sphere_hamming(xh, yh), d, rtol=0, atol=n * 4e-16)


@pytest.mark.parametrize("n", [4, 16, 64, 256, 1024])
def test_bipolar_identity_is_bit_exact_when_sqrt_n_is_a_power_of_two(n):
    x, y = patterns(300, n, seed=5), patterns(300, n, seed=6)
    xh, yh = bipolar(x), bipolar(y)
    assert torch.equal((n - n * (xh * yh).sum(-1)) / 2, hamming_distance(x, y).double())


def test_sphere_hamming_is_scale_invariant_and_rejects_zero():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(10, 8, generator=g, dtype=torch.float64), torch.randn(10, 8, generator=g, dtype=torch.float64)
    torch.testing.assert_close(sphere_hamming(3 * x, 0.5 * y), sphere_hamming(x, y))
    torch.testing.assert_close(sphere_hamming(x, x), torch.zeros(10, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(sphere_hamming(x, -x), torch.full((10,), 8.0, dtype=torch.float64))
    with pytest.raises(ValueError, match="nonzero"):
        sphere_hamming(torch.zeros(8), x[0])
    with pytest.raises(ValueError, match="last axis"):
        sphere_hamming(x, y[:, :7])


def test_sign_binarize():
    x = torch.tensor([[-1.0, 0.0, 2.0, 1e-300]], dtype=torch.float64)
    assert torch.equal(sign_binarize(x), torch.tensor([[0, 0, 1, 1]], dtype=torch.uint8))
    with pytest.raises(ValueError, match="finite"):
        sign_binarize(torch.tensor([float("nan")]))


def test_expected_sign_hamming_endpoints_and_mc():
    torch.testing.assert_close(expected_sign_hamming([1.0, 0.0, -1.0], 64),
                               torch.tensor([0.0, 32.0, 64.0], dtype=torch.float64))
    n, N = 32, 20_000
    g = torch.Generator().manual_seed(7)
    u = torch.randn(N, n, generator=g, dtype=torch.float64)
    c = torch.rand(N, generator=g, dtype=torch.float64) * 2 - 1
    v = rotate_to_cosine(u, c, seed=8)
    H = hamming_distance(sign_binarize(u), sign_binarize(v)).double()
    resid = H - expected_sign_hamming(c, n)
    assert abs(resid.mean()) <= 4 * resid.std() / math.sqrt(N)
    with pytest.raises(ValueError):
        expected_sign_hamming(1.5, 8)
    with pytest.raises(ValueError):
        expected_sign_hamming(0.5, 0)


def test_sign_hamming_correlation_closed_form_and_mc():
    assert sign_hamming_correlation(1) == pytest.approx(1.0, abs=1e-15)
    assert sign_hamming_correlation(2) == pytest.approx(8 / math.pi**2, rel=1e-14)
    assert sign_hamming_correlation(10**6) == pytest.approx(2 / math.pi, rel=1e-5)
    vals = [sign_hamming_correlation(n) for n in range(1, 200)]
    assert all(a > b for a, b in zip(vals, vals[1:]))
    n, N = 64, 40_000
    g = torch.Generator().manual_seed(9)
    u, v = (torch.randn(N, n, generator=g, dtype=torch.float64) for _ in range(2))
    D = sphere_hamming(u, v)
    H = hamming_distance(sign_binarize(u), sign_binarize(v)).double()
    terms = (H - n / 2) * (D - n / 2) / (n / 4)  # known means and variances: an unbiased estimate
    se = terms.std() / math.sqrt(N)
    assert abs(terms.mean() - sign_hamming_correlation(n)) <= 4 * se


def test_rotate_to_cosine_is_exact_and_orthogonal_part_is_random():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(50, 16, generator=g, dtype=torch.float64)
    c = torch.linspace(-1, 1, 50, dtype=torch.float64)
    y = rotate_to_cosine(x, c, seed=2)
    cos = (torch.nn.functional.normalize(x, dim=-1) * y).sum(-1)
    torch.testing.assert_close(cos, c, atol=1e-14, rtol=0)
    torch.testing.assert_close(torch.linalg.vector_norm(y, dim=-1), torch.ones(50, dtype=torch.float64))
    y2 = rotate_to_cosine(x, 0.5, seed=2)
    assert y2.shape == x.shape
    with pytest.raises(ValueError):
        rotate_to_cosine(x, 1.2)
    with pytest.raises(ValueError, match="n >= 2"):
        rotate_to_cosine(torch.ones(3, 1), 0.5)


# ------------------------------------------------------------------------------------------
# Patterns and perturbations
# ------------------------------------------------------------------------------------------


def test_random_binary_patterns_are_seeded_fair_bits():
    a, b = patterns(2000, 50, seed=11), patterns(2000, 50, seed=11)
    assert torch.equal(a, b) and a.dtype == torch.uint8 and a.shape == (2000, 50)
    assert not torch.equal(a, patterns(2000, 50, seed=12))
    mean = a.double().mean().item()
    assert abs(mean - 0.5) <= 4 * 0.5 / math.sqrt(a.numel())
    assert patterns(0, 5).shape == (0, 5)
    with pytest.raises(ValueError):
        random_binary_patterns(-1, 5)
    with pytest.raises(ValueError):
        random_binary_patterns(3, 0)


@pytest.mark.parametrize("k", [0, 1, 7, 20])
def test_flip_bits_flips_exactly_k(k):
    x = patterns(100, 20, seed=3)
    y = flip_bits(x, k, seed=4)
    assert torch.equal(hamming_distance(x, y), torch.full((100,), k))
    assert y.dtype == x.dtype
    with pytest.raises(ValueError):
        flip_bits(x, 21)


# ------------------------------------------------------------------------------------------
# The pattern view (Eq. 1)
# ------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------
# Attention in SDM notation (Eq. 4)
# ------------------------------------------------------------------------------------------


def test_attention_read_matches_explicit_softmax():
    g = torch.Generator().manual_seed(3)
    q = torch.randn(4, 8, generator=g, dtype=torch.float64)
    K = torch.randn(10, 8, generator=g, dtype=torch.float64)
    V = torch.randn(10, 3, generator=g, dtype=torch.float64)
    qh, Kh = q / q.norm(dim=-1, keepdim=True), K / K.norm(dim=-1, keepdim=True)
    scores = 7.0 * qh @ Kh.T
    w = torch.exp(scores - scores.max(-1, keepdim=True).values)
    w = w / w.sum(-1, keepdim=True)
    torch.testing.assert_close(attention_weights(q, K, 7.0), w)
    torch.testing.assert_close(attention_read(q, K, V, 7.0), w @ V)
    torch.testing.assert_close(attention_read(3 * q, 0.1 * K, V, 7.0), w @ V)  # scale-free
    raw = torch.softmax(2.0 * q @ K.T, dim=-1)
    torch.testing.assert_close(attention_weights(q, K, 2.0, normalize=False), raw)
    assert attention_read(q.float(), K.float(), V.float(), 1.0).dtype == torch.float32


def test_attention_on_bipolar_vectors_depends_on_hamming_distance_only():
    n, beta = 64, 15.0
    P = patterns(50, n, seed=4)
    q = flip_bits(P[:3], 5, seed=5)
    w = attention_weights(bipolar(q), bipolar(P), beta)
    dist = pairwise_hamming(q, P).double()
    expect = torch.softmax(beta * (1 - 2 * dist / n), dim=-1)
    torch.testing.assert_close(w, expect, rtol=1e-12, atol=1e-300)


def test_attention_approximates_sdm_for_close_queries():
    # Eq. 6 in the Attention setting: a fitted beta reproduces the thresholded SDM read.
    n, d, m = 64, 11, 256
    P = patterns(m, n, seed=6)
    q = flip_bits(P[:40], 4, seed=7)
    beta = fit_beta(n, d).beta
    sdm = sdm_read(q, P, P, d, threshold=True)
    att = majority(attention_read(bipolar(q), bipolar(P), P, beta))
    assert torch.equal(sdm, att) and torch.equal(sdm, P[:40].double())


def test_attention_bad_input():
    K = torch.randn(5, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="finite"):
        attention_weights(torch.randn(4), K, float("inf"))
    with pytest.raises(ValueError, match="real"):
        attention_weights(torch.randn(4), K, "big")
    with pytest.raises(ValueError, match="zero vector"):
        attention_weights(torch.zeros(4), K, 1.0)
    with pytest.raises(ValueError, match="empty"):
        attention_weights(torch.randn(4), K[:0], 1.0)
    with pytest.raises(ValueError, match="values"):
        attention_read(torch.randn(4), K, torch.randn(4, 2), 1.0)


# ------------------------------------------------------------------------------------------
# The neuron view
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(4, 1), (8, 2), (10, 3), (12, 4), (12, 6)])
def test_exhaustive_neurons_equal_the_pattern_view_exactly(n, d):
    P = patterns(25, n, seed=n)
    pointers = patterns(25, 7, seed=n + 1)
    q = torch.stack([flip_bits(P[i % 25], i % (n + 1), seed=i) for i in range(60)])
    mem = NeuronSDM.exhaustive(n, d, device=CPU, chunk_size=1000).write(P, pointers)
    counts = mem.shared_neurons(q, P)
    dist = pairwise_hamming(q, P)
    table = circle_intersection_table(n, d)
    assert torch.equal(counts, torch.tensor([[table[int(v)] for v in row] for row in dist]))
    for thr in (False, True):
        a = mem.read(q, threshold=thr)
        b = sdm_read(q, P, pointers, d, threshold=thr)
        assert torch.equal(torch.isnan(a), torch.isnan(b))
        assert torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))


def test_exhaustive_addresses_are_every_binary_vector():
    mem = NeuronSDM.exhaustive(5, 2, device=CPU)
    assert mem.r == 32 and mem.neuron_addresses.shape == (32, 5)
    assert len({tuple(row.tolist()) for row in mem.neuron_addresses}) == 32
    with pytest.raises(ValueError):
        NeuronSDM.exhaustive(21, 2, device=CPU)


def test_random_neuron_counts_match_expectation_within_four_standard_errors():
    n, d, r, K = 16, 5, 8192, 300
    mem = NeuronSDM(n, r, d, seed=1, device=CPU, chunk_size=3000)
    samples = mem.sample_shared_neurons(range(0, 2 * d + 3), K, seed=2)
    assert samples.shape == (2 * d + 3, K) and samples.dtype == torch.int64
    for dv in range(0, 2 * d + 3):
        c = samples[dv].double()
        e = expected_neurons(dv, d, n, r)
        if dv > 2 * d:
            assert e == 0.0 and torch.equal(c, torch.zeros(K, dtype=torch.float64))
        else:
            assert abs(c.mean().item() - e) <= 4 * c.std().item() / math.sqrt(K)


def test_sample_shared_neurons_scalar_and_bad_input():
    mem = NeuronSDM(10, 64, 2, seed=0, device=CPU)
    assert mem.sample_shared_neurons(3, 5, seed=1).shape == (5,)
    assert torch.equal(mem.sample_shared_neurons([3], 5, seed=1)[0], mem.sample_shared_neurons(3, 5, seed=1))
    with pytest.raises(ValueError, match="distances"):
        mem.sample_shared_neurons([11], 5)
    with pytest.raises(ValueError, match="num_pairs"):
        mem.sample_shared_neurons(1, 0)
    exh = NeuronSDM.exhaustive(10, 2, device=CPU)
    counts = exh.sample_shared_neurons(range(11), 3, seed=0)
    table = circle_intersection_table(10, 2)
    assert torch.equal(counts, torch.tensor(table)[:, None].expand(11, 3))


def test_random_neuron_read_approaches_the_pattern_view():
    n, d = 18, 5
    P = patterns(30, n, seed=2)
    q = flip_bits(P, 2, seed=3)
    exact = sdm_read(q, P, P, d)
    errs = []
    for r in (2**10, 2**16):
        mem = NeuronSDM(n, r, d, seed=4, device=CPU).write(P, P)
        errs.append((mem.read(q) - exact).abs().mean().item())
    assert errs[1] < errs[0] and errs[1] < 0.02


def test_neuron_sdm_write_read_bookkeeping():
    n, d = 12, 3
    P = patterns(10, n, seed=1)
    mem = NeuronSDM(n, 500, d, seed=0, device=CPU)
    assert mem.pointer_dim is None
    with pytest.raises(RuntimeError, match="write"):
        mem.read(P)
    mem.write(P[:5], P[:5]).write(P[5:], P[5:])
    once = NeuronSDM(n, 500, d, seed=0, device=CPU).write(P, P)
    assert torch.equal(mem.storage, once.storage) and torch.equal(mem.counts, once.counts)
    act = mem.activation(P).double()  # (10, 500)
    assert torch.equal(mem.counts, act.sum(0))
    assert torch.equal(mem.storage, act.T @ P.double())
    assert torch.equal(mem.shared_neurons(P, P), (act @ act.T).round().long())
    assert mem.pointer_dim == n and "r=500" in repr(mem)
    torch.testing.assert_close(mem(P), mem.read(P))
    with pytest.raises(ValueError, match="n_p"):
        mem.write(P, P[:, :3])
    mem.reset()
    assert mem.storage is None and mem.counts.sum() == 0


def test_neuron_sdm_chunking_does_not_change_results():
    n, d = 14, 4
    P = patterns(20, n, seed=5)
    q = flip_bits(P, 3, seed=6)
    a = NeuronSDM(n, 3000, d, seed=7, device=CPU, chunk_size=128).write(P, P)
    b = NeuronSDM(n, 3000, d, seed=7, device=CPU).write(P, P)
    assert torch.equal(a.read(q), b.read(q))
    assert torch.equal(a.shared_neurons(q, P), b.shared_neurons(q, P))


def test_neuron_sdm_empty_read_and_bad_input():
    n, d = 10, 1
    mem = NeuronSDM.exhaustive(n, d, device=CPU)
    P = torch.ones(1, n, dtype=torch.uint8)
    mem.write(P, P)
    lonely = torch.zeros(1, n, dtype=torch.uint8)
    assert torch.isnan(mem.read(lonely)).all()
    assert torch.equal(mem.read(lonely, empty="query"), lonely.double())
    with pytest.raises(ValueError, match="no neuron"):
        mem.read(lonely, empty="raise")
    with pytest.raises(ValueError, match="r must be"):
        NeuronSDM(10, 0, 2)
    with pytest.raises(ValueError, match="n must be"):
        NeuronSDM(0, 10, 0)
    with pytest.raises(ValueError, match="radius"):
        NeuronSDM(10, 10, 11, device=CPU)
    with pytest.raises(ValueError, match="chunk_size"):
        NeuronSDM(10, 10, 2, device=CPU, chunk_size=0)
    with pytest.raises(ValueError, match="binary"):
        mem.write(P * 3, P)
    with pytest.raises(ValueError, match="bits"):
        mem.read(torch.zeros(1, n + 1, dtype=torch.uint8))
    with pytest.raises(ValueError, match="empty"):
        mem.write(P[:0], P[:0])
    with pytest.raises(ValueError, match="rows"):
        mem.write(P, torch.ones(2, n))
    with pytest.raises(ValueError, match="\\(r, n\\)"):
        NeuronSDM.from_addresses(torch.zeros(0, 4), 1, device=CPU)


def test_from_addresses_uses_the_given_neurons():
    X = torch.tensor([[0, 0, 0, 0], [1, 1, 1, 1]])
    mem = NeuronSDM.from_addresses(X, 1, device=CPU)
    act = mem.activation(torch.tensor([[0, 0, 0, 1], [1, 1, 0, 0]]))
    assert act.tolist() == [[True, False], [False, False]]


@pytest.mark.gpu
def test_reads_agree_on_cuda():
    n, d = 12, 3
    P = patterns(20, n, seed=1)
    q = flip_bits(P, 2, seed=2)
    cpu = NeuronSDM(n, 2000, d, seed=3, device="cpu").write(P, P).read(q, threshold=True)
    gpu = NeuronSDM(n, 2000, d, seed=3, device="cuda").write(P.cuda(), P.cuda()).read(q.cuda(), threshold=True)
    assert torch.equal(cpu, gpu.cpu())
    assert torch.equal(sdm_read(q, P, P, d), sdm_read(q.cuda(), P.cuda(), P.cuda(), d).cpu())


def test_docstrings_say_empty_reads_are_nan_by_default():
    for fn in (sdm_read, NeuronSDM.read):
        doc = " ".join(fn.__doc__.split())
        assert 'default "nan"' in doc and '"raise"' in doc
        assert "rows of empty reads are NaN" in doc
    assert "Empty reads return NaN by default" in sdm_read.__doc__
