"""Tests of assocmem.sdm as a package: what it re-exports from its subpackages."""

from __future__ import annotations

from assocmem import sdm


def test_module_exports():
    for name in sdm.__all__:
        assert getattr(sdm, name).__doc__, name


def test_new_names_are_exported():
    for name in ("circle_intersection_paper_limits", "circle_intersection_grid", "lune_term",
                 "simulate_shared_neurons"):
        assert name in sdm.__all__
        assert name in sdm.geometry.__all__
