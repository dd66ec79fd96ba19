"""Tests of assocmem.sdm.capacity as a package: what it exports, and the memory_capacity alias."""

from __future__ import annotations

from assocmem.sdm.capacity.signal_noise import capacity, memory_capacity


def test_exports():
    import importlib

    module = importlib.import_module("assocmem.sdm.capacity")
    assert memory_capacity is capacity
    assert "capacity" not in module.__all__  # a star import must not shadow the submodule
    for name in module.__all__:
        assert hasattr(module, name)
