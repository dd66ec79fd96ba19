"""Fixtures of the sweep tests: the toy sweeps registered for one test and unregistered after it."""

import pytest

from assocmem.sweeps import register_sweep, unregister_sweep
from tests.sweeps._toy import CALLS, FAIL_AT, ToyConfig, toy_point, toy_points, toy_rows


@pytest.fixture
def toy():
    CALLS.clear()
    FAIL_AT.clear()
    sweep = register_sweep("toy", config_type=ToyConfig, presets={"quick": ToyConfig(6), "cpu": ToyConfig(8)},
                           points=toy_points, run_point=toy_point, description="toy")
    yield sweep
    unregister_sweep("toy")
    FAIL_AT.clear()


@pytest.fixture
def toy2():
    CALLS.clear()
    FAIL_AT.clear()
    sweep = register_sweep("toy_rows", config_type=ToyConfig, presets={"quick": ToyConfig(4)},
                           points=toy_points, run_point=toy_rows)
    yield sweep
    unregister_sweep("toy_rows")
    FAIL_AT.clear()
