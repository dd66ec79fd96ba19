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


def test_the_static_index_is_the_registry(toy):
    """``--list`` reads assocmem._sweep_index; it must say what the import-time registry holds
    (regenerate with ``PYTHONPATH=src python tools/sweep_index.py``). A sweep registered at run time
    (the toy) is not the library's and stays out."""
    from assocmem._sweep_index import SWEEPS
    from assocmem.sweeps.registry import render_sweep_index, sweep_index

    live = sweep_index()
    assert "toy" not in live and "demo" in live
    assert SWEEPS == live, "the static sweep index is stale: run tools/sweep_index.py"
    namespace: dict = {}
    exec(render_sweep_index(live), namespace)  # the rendered text is Python that holds the index
    assert namespace["SWEEPS"] == live


def test_the_index_names_the_module_that_registers_each_sweep():
    import importlib

    from assocmem._sweep_index import SWEEPS
    from assocmem.sweeps import registry

    for name, entry in SWEEPS.items():
        assert entry["module"].endswith("_sweeps") and name in vars(registry)["_SWEEPS"]
        origin = registry._ORIGIN[name]
        assert origin == entry["module"] or origin.startswith(entry["module"] + ".")
        assert importlib.import_module(entry["module"]).__name__ == entry["module"]


def test_write_sweep_index_writes_a_module_that_holds_it(tmp_path):
    from assocmem.sweeps.registry import sweep_index, write_sweep_index

    path = write_sweep_index(tmp_path / "index.py")
    namespace: dict = {}
    exec(path.read_text(), namespace)
    assert namespace["SWEEPS"] == sweep_index()


def test_every_sweep_module_imports_first_in_a_fresh_interpreter():
    """A library sweep module imported first (before any lookup) registers without loading the
    others mid-import: loading them there imported half-initialised modules (a sweep module that
    imports ``transformer.insertion`` while ``insertion`` was itself importing a sweep module)."""
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from assocmem.sweeps.registry import _discovered

    first = [*_discovered(), "assocmem.mlps.transformer", "assocmem.mlps.editing",
             "assocmem.mlps.lm_embeddings"]

    def fresh_import(name):
        code = f"import {name}; from assocmem.sweeps import sweep_names; sweep_names()"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        return name, done.returncode, done.stderr[-600:]

    with ThreadPoolExecutor(max_workers=4) as pool:
        failed = [(n, err) for n, rc, err in pool.map(fresh_import, first) if rc != 0]
    assert not failed, failed
