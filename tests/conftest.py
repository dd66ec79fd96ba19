"""Shared pytest configuration: GPU-marked tests run only where CUDA is available."""

import os

import pytest
import torch

os.environ.setdefault("ASSOCMEM_QUIET", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


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
