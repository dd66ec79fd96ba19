"""The Ray executor: a small sweep on a local two-CPU Ray instance gives exactly the serial rows."""

import time

import pandas as pd
import pytest

from assocmem.sweeps import load_results, read_provenance, run_sweep

ray = pytest.importorskip("ray")


def test_ray_executor_gives_the_serial_rows(tmp_path):
    serial = run_sweep("demo", "quick", results_dir=tmp_path / "serial", executor="serial", device="cpu")
    start = time.perf_counter()
    # As the CLI does it: a local Ray instance with two CPUs, started and shut down by run_sweep.
    on_ray = run_sweep("demo", "quick", results_dir=tmp_path / "ray", executor="ray", workers=2, device="cpu")
    elapsed = time.perf_counter() - start
    assert not ray.is_initialized()
    assert (on_ray.computed, on_ray.skipped) == (6, 0)
    pd.testing.assert_frame_equal(
        on_ray.frame.drop(columns="wall_time_s"), serial.frame.drop(columns="wall_time_s")
    )
    pd.testing.assert_frame_equal(load_results("demo", "quick", tmp_path / "ray"), on_ray.frame)
    prov = read_provenance("demo", "quick", tmp_path / "ray")
    assert prov["executor"] == "ray" and prov["devices_used"] == ["cpu"]
    session = prov["sessions"][-1]
    assert session["address"] == "local" and session["gpus_per_task"] == 0 and session["cluster_cpus"] == 2
    print(f"Ray startup {session['ray_startup_s']:.1f} s; Ray sweep {elapsed:.1f} s in all")
