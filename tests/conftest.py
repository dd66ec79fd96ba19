"""Shared pytest configuration: GPU-marked tests run only where CUDA is available, and torch's
default dtype is float64 while the tests are collected and run.

The library follows torch (``dtype=None`` is ``torch.get_default_dtype()``); the tests were written
for float64 results, so the session pins float64 (module-level fixtures are built at collection)
and every test starts from it again (a test may change it; the fixture restores it). Tests of the
float32 path and of the convention itself set the default they need, scoped
(``assocmem.dtypes.default_dtype``): ``tests/test_dtype_convention.py``."""

import os

import pytest
import torch

os.environ.setdefault("ASSOCMEM_QUIET", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


_SAVED_DTYPE: list = []


def pytest_configure(config):
    config.addinivalue_line("markers", "float32_default: run under torch's default dtype float32 "
                                       "(a test of torch's own default; the others are pinned to float64)")
    _SAVED_DTYPE.append(torch.get_default_dtype())
    torch.set_default_dtype(torch.float64)


def pytest_unconfigure(config):
    if _SAVED_DTYPE:
        torch.set_default_dtype(_SAVED_DTYPE.pop())


@pytest.fixture(autouse=True)
def _float64_default(request):
    """Each test starts with torch's default dtype float64 (float32 for a test marked
    ``float32_default``) and leaves float64 behind."""
    torch.set_default_dtype(torch.float32 if request.node.get_closest_marker("float32_default") else torch.float64)
    yield
    torch.set_default_dtype(torch.float64)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def scale_loss_at(monkeypatch):
    """Failure injection for the trainings: ``scale_loss_at(module, step, factor)`` makes the
    ``step``-th call of ``module.cross_entropy`` return its loss times ``factor`` (NaN: a
    non-finite loss; 1e6: a finite blow-up) and returns the list of calls, one entry a call."""

    def scale(module, step: int, factor: float, attribute: str = "cross_entropy") -> list:
        real, calls = getattr(module, attribute), []

        def scaled(*args, **kwargs):
            calls.append(1)
            out = real(*args, **kwargs)
            return out * factor if len(calls) == step else out

        monkeypatch.setattr(module, attribute, scaled)
        return calls

    return scale
