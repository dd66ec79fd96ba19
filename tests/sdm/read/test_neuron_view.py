"""Tests for assocmem.sdm.read.neuron_view: NeuronSDM with explicit neurons.

With a neuron at every address it is the reference for the pattern view (equal bit for bit); with
random neurons its shared-neuron counts are checked against ``I r / 2^n`` within four standard
errors.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.sdm import circle_intersection_table, expected_neurons
from assocmem.sdm.read.hamming import pairwise_hamming
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.sdm.read.pattern_view import sdm_read
from assocmem.sdm.read.patterns import flip_bits, random_binary_patterns

CPU = "cpu"


def patterns(m, n, seed=0):
    return random_binary_patterns(m, n, seed=seed, device=CPU)


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


def test_the_constructor_has_its_own_docstring():
    # help(NeuronSDM.__init__) showed torch's "Initialize internal Module state"
    import inspect

    doc = inspect.getdoc(NeuronSDM.__init__)
    assert "Module state" not in doc and all(f"``{p}``" in doc for p in ("n", "r", "d", "seed", "device"))
