"""Fixtures shared by the tests of assocmem.mlps.mlp."""

import pytest
import torch

from assocmem.mlps.facts import make_fact_set


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # Small GEMMs: one thread is fastest and immune to oversubscription on a shared machine.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def facts256():
    return make_fact_set(256, 64, tied=True, seed=0)
