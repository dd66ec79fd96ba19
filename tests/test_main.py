"""Tests for the command line, ``python -m assocmem sweep`` (assocmem.__main__): usage errors, listing,
a quick run and a rerun."""

import os
import subprocess
import sys

import pytest

from assocmem.__main__ import main
from assocmem.sweeps import config_to_json, get_sweep, load_results, read_provenance


def test_cli_usage_errors_exit_2(capsys):
    assert main(["sweep", "nope"]) == 2
    err = capsys.readouterr().err
    assert "valid sweeps:" in err and "demo" in err.split("valid sweeps:", 1)[1]
    assert main(["sweep", "demo", "--preset", "huge"]) == 2
    assert "valid presets: cpu, paper, quick" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["sweep", "demo", "--executor", "threads"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["sweep"])
    assert info.value.code == 2
    assert main([]) == 2


def test_cli_list_and_quick_run(tmp_path):
    env = {**os.environ, "ASSOCMEM_QUIET": "1"}
    listed = subprocess.run([sys.executable, "-m", "assocmem", "sweep", "--list"], capture_output=True, text=True,
                            env=env, timeout=120, check=True)
    assert "demo:" in listed.stdout and "quick" in listed.stdout and "paper" in listed.stdout
    cmd = [sys.executable, "-m", "assocmem", "sweep", "demo", "--preset", "quick", "--device", "cpu",
           "--results-dir", str(tmp_path)]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "6 points computed, 0 already stored" in first.stdout
    frame = load_results("demo", "quick", tmp_path, config=config_to_json(get_sweep("demo").config("quick")))
    assert len(frame) == 6
    assert read_provenance("demo", "quick", tmp_path)["device"] == "cpu"


def test_cli_usage_errors_of_the_sweep_command_show_its_usage(capsys):
    for argv, msg in ((["sweep", "demo", "--workers", "0"], "--workers must be at least 1"),
                      (["sweep", "demo", "--address", "x"], "--address needs --executor ray"),
                      (["sweep"], "give a sweep NAME or --list")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: python -m assocmem sweep ") and msg in err, err


def test_cli_rerun_reports_that_nothing_was_computed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    argv = ["sweep", "demo", "--preset", "quick", "--device", "cpu", "--results-dir", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "demo/quick: 6 points computed, 0 already stored; 6 rows in " in first
    assert "(this run: " in first and "session" not in first
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert "demo/quick: nothing to compute, all 6 points already stored; 6 rows in " in again
    assert "computed earlier in 1 session, " in again and "this run" not in again
    assert len(read_provenance("demo", "quick", tmp_path)["sessions"]) == 1  # the rerun added none
