"""Tests for assocmem.sdm.convergence.retrieval: the stopping rules of App. B.7, per-query steps,
and that finished queries are not read again.
"""

import pytest
import torch

from assocmem.sdm.convergence.perturbations import perturb_binary
from assocmem.sdm.convergence.read_rules import ReadRule, make_read_rule
from assocmem.sdm.convergence.retrieval import converge


def test_binary_stopping_rule_and_per_query_steps(patterns64):
    pb, _ = patterns64
    rule = make_read_rule("Binary_SDM", 64, 11, device="cpu")
    q = torch.cat([pb[:1], perturb_binary(pb[1:2], 4, seed=0)])
    res = converge(rule, q, pb)
    assert res.steps.tolist() == [1, 2]  # the unchanged read counts
    assert bool(res.stopped.all())
    assert torch.equal(res.states, pb[:2].double())
    cut = converge(rule, q, pb, max_steps=1)
    assert cut.stopped.tolist() == [True, False] and cut.steps.tolist() == [1, 1]
    none = converge(rule, q, pb, max_steps=0)
    assert none.steps.tolist() == [0, 0] and not bool(none.stopped.any())
    assert torch.equal(none.states, q.double())


def test_continuous_tolerance():
    n = 4
    p = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    q = torch.tensor([[0.99, 0.141, 0.0, 0.0]])  # one read lands on p, moving component 2 by 0.14
    rule = make_read_rule("Cont_SDM_BFit_Attention", n, 2, beta=5.0, device="cpu")
    res = converge(rule, q, p, tol=0.05)
    assert res.steps.tolist() == [2] and torch.allclose(res.states, p.double())
    res = converge(rule, q, p, tol=0.2)  # the first move is below the tolerance: stop, keep the read
    assert res.steps.tolist() == [1] and torch.allclose(res.states, p.double())
    with pytest.raises(ValueError):
        converge(rule, q, p, tol=-1)
    with pytest.raises(ValueError):
        converge(rule, q, p, max_steps=-1)


def test_finished_queries_are_not_read_again(patterns64):
    pb, _ = patterns64

    class Spy(ReadRule):
        sizes: list

        def step(self, queries, prepared):
            self.sizes.append(queries.shape[0])
            return super().step(queries, prepared)

    spy = Spy("Binary_SDM", 64, 11, device="cpu")
    spy.sizes = []
    q = torch.cat([pb[:3], perturb_binary(pb[3:5], 6, seed=0)])
    res = converge(spy, q, pb)
    assert spy.sizes[0] == 5 and spy.sizes[1] == 2  # the three exact queries stopped after one read
    assert spy.sizes == sorted(spy.sizes, reverse=True)
    assert res.steps[:3].tolist() == [1, 1, 1]
