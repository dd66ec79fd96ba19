"""Tests for assocmem.sweeps.engine: in-memory and custom-config runs, provenance, rows checked per point."""

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from assocmem.sweeps import SweepError, load_results, read_provenance, register_sweep, run_sweep, unregister_sweep
from tests.sweeps._toy import ToyConfig, _without_wall


def test_in_memory_run_matches_stored_rows(toy, tmp_path):
    stored = run_sweep("toy", "quick", results_dir=tmp_path).frame
    live = run_sweep("toy", "quick", persist=False)
    assert live.path is None and not (Path.cwd() / "results" / "toy").exists()
    pd.testing.assert_frame_equal(_without_wall(live.frame), _without_wall(stored))


def test_a_custom_config_runs_under_its_own_name(toy, tmp_path):
    run = run_sweep("toy", "mine", config=ToyConfig(3, seed=5), results_dir=tmp_path)
    assert run.path == tmp_path / "toy" / "mine.csv" and run.frame["i"].tolist() == [0, 1, 2]
    assert read_provenance("toy", "mine", tmp_path)["config"] == {"size": 3, "seed": 5}
    with pytest.raises(ValueError, match="has another config"):
        run_sweep("toy", "quick", config=ToyConfig(3), persist=False)
    with pytest.raises(TypeError, match="must be a ToyConfig"):
        run_sweep("toy", "mine", config={"size": 3}, persist=False)


def test_provenance_fields(toy, tmp_path):
    run_sweep("toy", "cpu", results_dir=tmp_path, device="cpu")
    prov = read_provenance("toy", "cpu", tmp_path)
    assert prov["sweep"] == "toy" and prov["preset"] == "cpu" and prov["status"] == "complete"
    assert prov["config"] == dataclasses.asdict(ToyConfig(8))
    assert set(prov["git"]) == {"commit", "dirty"}
    if prov["git"]["commit"] is not None:
        assert len(prov["git"]["commit"]) == 40 and isinstance(prov["git"]["dirty"], bool)
    assert {"assocmem", "torch", "numpy", "scipy", "python"} <= set(prov["versions"])
    assert prov["device"] == "cpu" and prov["devices_used"] == ["cpu"]
    assert prov["executor"] == "serial"
    assert prov["wall_time_s"] >= prov["compute_time_s"] >= 0
    assert datetime.fromisoformat(prov["date"]).utcoffset().total_seconds() == 0
    assert {"platform", "cpu_count"} <= set(prov["machine"])
    assert "hostname" not in json.dumps(prov) and "node" not in prov["machine"]
    assert prov["n_points"] == 8 and prov["n_rows"] == 8 and len(prov["csv_sha256"]) == 64
    assert [s["status"] for s in prov["sessions"]] == ["finished"]


def test_bad_rows_fail_the_point_but_keep_what_is_stored(tmp_path):
    def points(config):
        return [{"i": i} for i in range(3)]

    register_sweep("badrows", config_type=ToyConfig, presets={"quick": ToyConfig(3)}, points=points,
                   run_point=_bad_rows_point)
    try:
        with pytest.raises(SweepError, match="clashes"):
            run_sweep("badrows", "quick", results_dir=tmp_path)
        assert load_results("badrows", "quick", tmp_path, allow_partial=True)["i"].tolist() == [0]
    finally:
        unregister_sweep("badrows")


def _bad_rows_point(config, point, device):
    return {"value": 1} if point["i"] == 0 else {"i": 5}


def test_an_untracked_module_in_the_package_makes_the_tree_dirty(tmp_path):
    import subprocess

    from assocmem.sweeps.engine import _git_state

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    assert _git_state(package)["dirty"] is False
    (tmp_path / "results.csv").write_text("x\n")  # a result being written: not code
    assert _git_state(package)["dirty"] is False
    (tmp_path / "stored.csv").write_text("x\n")
    git("add", "stored.csv")
    git("commit", "-qm", "a stored result")
    (tmp_path / "stored.csv").write_text("y\n")  # a sweep rewriting its tracked result (--force)
    assert _git_state(package)["dirty"] is False
    (package / "new_sweeps.py").write_text("B = 2\n")  # code the commit does not hold
    state = _git_state(package)
    assert state["dirty"] is True and len(state["commit"]) == 40
    (package / "new_sweeps.py").unlink()
    (package / "a.py").write_text("A = 2\n")  # a tracked change
    assert _git_state(package)["dirty"] is True
    assert _git_state(tmp_path.parent / "not-a-repo-here") == {"commit": None, "dirty": None}
