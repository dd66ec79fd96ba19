"""No library call changes torch's process-wide state on its caller's behalf (issue 29, item 4).

The entry points that used to cap torch's thread count under load (the whitened and
data-dependent constructions, linear attention, the SDM read rules' step and the capacity search)
must leave ``torch.set_num_threads`` alone unless the caller opts in with ``ASSOCMEM_LOAD_CAP=1``;
with the rule on, they restore the caller's setting. The machine is made to look fully loaded
(``free_cores`` returns 1), so that a call that still capped would be caught.
"""

import pytest
import torch

import assocmem.benchmarking as bm
from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.mlps.capacity_sweeps import capacity_search
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp.data_dependent import data_dependent_mlp
from assocmem.mlps.mlp.hebbian import hebbian_mlp
from assocmem.sdm.convergence.read_rules import make_read_rule
from assocmem.sdm.convergence.retrieval import converge
from assocmem.sdm.convergence.perturbations import random_patterns


def _calls():
    facts = make_fact_set(64, 16, tied=True, seed=0)
    q = torch.randn(40, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    _, patterns = random_patterns(32, 64, seed=3)  # (binary, continuous)
    rule = make_read_rule("Cont_SDM_BFit_Attention", 64, 11, device="cpu")
    return {
        "hebbian_mlp (whitened)": lambda: hebbian_mlp(facts, 80, "full"),
        "data_dependent_mlp": lambda: data_dependent_mlp(facts, 80),
        "linear_attention (chunked)": lambda: linear_attention(q, q, q, form="chunked", chunk_size=8),
        "read rule step (converge)": lambda: converge(rule, patterns, patterns),
        "capacity_search (whitened)": lambda: capacity_search(facts, "whitened", lo=8, hi=128),
    }


@pytest.fixture
def loaded_machine(monkeypatch):
    """torch at two threads, every core but one busy, and a record of set_num_threads calls."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    calls = []
    real = torch.set_num_threads
    monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (calls.append(n), real(n))[1])
    yield calls
    real(before)


@pytest.mark.parametrize("name", list(_calls()))
def test_a_library_call_leaves_the_thread_count_alone(name, loaded_machine, monkeypatch):
    monkeypatch.delenv("ASSOCMEM_LOAD_CAP", raising=False)
    _calls()[name]()
    assert loaded_machine == [], f"{name} called torch.set_num_threads{tuple(loaded_machine)}"
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("name", list(_calls()))
def test_with_the_rule_opted_in_the_callers_setting_is_restored(name, loaded_machine, monkeypatch):
    monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "1")
    _calls()[name]()
    assert 1 in loaded_machine, f"{name} no longer applies the opted-in thread rule"
    assert torch.get_num_threads() == 2
