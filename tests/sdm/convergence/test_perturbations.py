"""Tests for assocmem.sdm.convergence.perturbations: the authors' random patterns, exact bit
flips, continuous perturbations at the cosine of Eq. 5, and queries whose target stays closest.
"""

import numpy as np
import pytest
import torch

from assocmem.sdm.convergence.perturbations import (
    make_queries,
    perturb_binary,
    perturb_continuous,
    random_patterns,
)


def test_random_patterns_are_sign_and_unit():
    pb, pc = random_patterns(50, 64, seed=0)
    assert pb.dtype == torch.uint8 and torch.equal(pb, (pc > 0).to(torch.uint8))
    torch.testing.assert_close(torch.linalg.vector_norm(pc, dim=-1), torch.ones(50, dtype=torch.float64))
    with pytest.raises(ValueError):
        random_patterns(0, 64)


@pytest.mark.parametrize("k", [0, 1, 6, 12, 64])
def test_binary_perturbation_flips_exactly_k(k):
    pb, _ = random_patterns(200, 64, seed=1)
    q = perturb_binary(pb, k, seed=2)
    assert ((q != pb).sum(-1) == k).all()


@pytest.mark.parametrize("n, k", [(64, 0), (64, 2), (64, 12), (64, 32), (64, 64), (1000, 375)])
def test_continuous_perturbation_hits_the_cosine(n, k):
    _, pc = random_patterns(100, n, seed=1)
    q = perturb_continuous(pc, k, seed=2)
    cos = (q * pc).sum(-1) / torch.linalg.vector_norm(q, dim=-1)
    assert torch.max(torch.abs(cos - (1 - 2 * k / n))).item() < 1e-12
    torch.testing.assert_close(torch.linalg.vector_norm(q, dim=-1), torch.ones(100, dtype=torch.float64))
    with pytest.raises(ValueError):
        perturb_continuous(pc, n + 1)


def test_make_queries_keeps_the_target_closest():
    pb, pc = random_patterns(256, 64, seed=0)
    targets = np.arange(256)
    qb, qc = make_queries(pb, pc, targets, 12, seed=1)
    dist = torch.cdist(qb.double(), pb.double(), p=0)
    assert torch.equal(dist.amin(-1), dist[torch.arange(256), torch.arange(256)])
    cos = qc @ pc.T
    assert bool((cos.amax(-1) <= 1 - 24 / 64 + 1e-5).all())
    assert ((qb != pb).sum(-1) == 12).all()
    # a pattern that is always closer than the target: give up after max_attempts
    bad = torch.tensor([[0, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="closer"):
        make_queries(bad, None, [0], 3, seed=0, max_attempts=2)
    # same seed, same queries
    qb2, qc2 = make_queries(pb, pc, targets, 12, seed=1)
    assert torch.equal(qb, qb2) and torch.equal(qc, qc2)
