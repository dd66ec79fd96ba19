"""Smoke tests of the benchmark scripts: they run end to end (no timing is asserted).

``make bench`` is not part of ``make test``; a script that no longer runs would otherwise go
unnoticed (``bench_ratios.py`` failed for a session after the dtype convention changed: its
whitened pair multiplied a float64 feature matrix by a float32 readout). Each pair's builder runs
its fast path and its reference once and asserts that they agree, which is what these catch.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> str:
    env = {**os.environ, "ASSOCMEM_QUIET": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_bench_ratios_quick_builds_every_pair_and_prints_its_verdict():
    text = _run("benchmarks/bench_ratios.py", "--quick", "--only", "circle")
    assert "circle intersection" in text and "fast path slower than its reference anywhere:" in text


def test_gpu_projection_dry_run_on_the_cpu():
    text = _run("benchmarks/gpu_projection.py", "--device", "cpu", "--quick", "--epochs", "5")
    assert "| 64 | 1024 |" in text and "GD, every point:" in text
