"""Tests for assocmem.linear.demo_sweeps: the demo sweep agrees with the closed form, its results stay out
of git."""

import subprocess
from pathlib import Path

import pytest

from assocmem.sweeps import run_sweep


def test_demo_sweep_agrees_with_the_closed_form():
    frame = run_sweep("demo", "quick", persist=False, device="cpu").frame
    assert frame["theory"].tolist() == [(n - 1) / d for d, n in zip(frame["d_k"], frame["n"])]
    assert (frame["z"].abs() < 4).all()


def test_demo_results_are_ignored_by_git():
    root = Path(__file__).resolve().parents[2]
    try:
        probe = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "results/demo/quick.csv"],
                               capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("git is not available")
    if probe.returncode == 128:
        pytest.skip("not a git checkout")
    assert probe.returncode == 0, "results/demo/ (the demo sweep's output) must be in .gitignore"
