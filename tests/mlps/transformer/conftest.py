"""The SSFR Transformer tests run their tiny models on one CPU thread (an OpenMP team on a loaded
machine is many times slower for matrices this small); the thread count is restored afterwards."""

import pytest

from assocmem.devices import torch_threads


@pytest.fixture(autouse=True, scope="package")
def one_thread():
    with torch_threads(1):
        yield
