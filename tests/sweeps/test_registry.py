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
