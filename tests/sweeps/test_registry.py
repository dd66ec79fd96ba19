"""Tests for assocmem.sweeps.registry: unknown names list the valid ones, registration is checked."""

from dataclasses import dataclass

import pytest

from assocmem.sweeps import UnknownNameError, get_sweep, register_sweep, run_sweep, sweep_names
from tests.sweeps._toy import ToyConfig, toy_point, toy_points


def test_unknown_names_list_the_valid_ones(toy):
    with pytest.raises(UnknownNameError, match=r"unknown sweep 'nope'; valid sweeps: .*demo") as info:
        get_sweep("nope")
    assert "toy" in info.value.valid
    with pytest.raises(UnknownNameError, match=r"unknown preset 'huge'; valid presets: cpu, quick"):
        run_sweep("toy", "huge", persist=False)
    assert {"demo", "toy"} <= set(sweep_names())


def test_registration_is_checked():
    @dataclass
    class Loose:
        seed: int = 0

    with pytest.raises(TypeError, match="frozen"):
        register_sweep("bad", config_type=Loose, presets={"quick": Loose()}, points=toy_points, run_point=toy_point)
    with pytest.raises(ValueError, match="'quick'"):
        register_sweep("bad", config_type=ToyConfig, presets={"cpu": ToyConfig(2)}, points=toy_points,
                       run_point=toy_point)
    with pytest.raises(TypeError, match="not a ToyConfig"):
        register_sweep("bad", config_type=ToyConfig, presets={"quick": {"size": 2}}, points=toy_points,
                       run_point=toy_point)
    with pytest.raises(ValueError, match="sweep name"):
        register_sweep("Bad Name", config_type=ToyConfig, presets={"quick": ToyConfig(2)}, points=toy_points,
                       run_point=toy_point)
    with pytest.raises(ValueError, match="already registered"):
        register_sweep("demo", config_type=ToyConfig, presets={"quick": ToyConfig(2)}, points=toy_points,
                       run_point=toy_point)
    assert "bad" not in sweep_names()


def test_a_failing_registration_leaves_the_registry_unchanged():
    from assocmem.sweeps import registry

    before = dict(registry._SWEEPS)
    demo = get_sweep("demo")
    for kwargs in ({"replace": "yes"}, {"presets": {"cpu": ToyConfig(1)}}, {"description": 5}):
        args = dict(config_type=ToyConfig, presets={"quick": ToyConfig(1)}, points=toy_points, run_point=toy_point)
        with pytest.raises((ValueError, TypeError)):
            register_sweep("demo", **{**args, **kwargs})
    with pytest.raises(ValueError, match="already registered"):
        register_sweep("demo", config_type=ToyConfig, presets={"quick": ToyConfig(1)}, points=toy_points,
                       run_point=toy_point)
    assert registry._SWEEPS == before and get_sweep("demo") is demo


def test_a_sweep_module_that_fails_to_import_is_retried_not_half_loaded(monkeypatch):
    from assocmem.sweeps import registry

    before = dict(registry._SWEEPS)
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "SWEEP_MODULES", ("assocmem_no_such_module_sweeps",))
    for _ in range(2):  # the second lookup raises the same error: the registry did not pretend to be loaded
        with pytest.raises(ModuleNotFoundError, match="assocmem_no_such_module_sweeps"):
            get_sweep("demo")
        assert registry._loaded is False and registry._SWEEPS == before
