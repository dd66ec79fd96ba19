"""Tests for assocmem.benchmarking: machine description, timing one call, GEMM rate, thread choice."""

from __future__ import annotations

import pytest
import torch

from assocmem.benchmarking import machine_info, time_call


def test_time_call_is_a_positive_median():
    s = time_call(lambda: sum(range(100)), min_run_time=0.01)
    assert isinstance(s, float) and 0 < s < 0.1
    with pytest.raises(ValueError, match="positive"):
        time_call(lambda: None, min_run_time=0)


def test_machine_info_keys():
    info = machine_info("cpu")
    assert set(info) == {"cpu", "cpu_cores", "threads", "device", "torch", "python", "os"}
    assert info["device"] == "cpu" and info["torch"] == torch.__version__ and info["threads"] == "1"
    loaded = machine_info("cpu", 2, load_average=True)
    assert set(loaded) == set(info) | {"load_average"} and loaded["threads"] == "2"
    load = loaded["load_average"]
    assert load == "unavailable" or (load.endswith("(1, 5, 15 min)") and len(load.split(",")) == 5)


def test_time_call_statistics():
    fast = time_call(lambda: sum(range(100)), min_run_time=0.01, stat="min")
    median = time_call(lambda: sum(range(100)), min_run_time=0.01, stat="median")
    assert fast > 0 and median > 0
    with pytest.raises(ValueError, match="unknown stat"):
        time_call(lambda: None, stat="mean")


def test_gemm_rate_and_fastest_thread_count():
    from assocmem.benchmarking import fastest_thread_count, gemm_rate
    assert gemm_rate(32, 16, 8, num_threads=1, min_run_time=0.01) > 0
    assert fastest_thread_count((32, 16, 8), min_run_time=0.01) >= 1
    with pytest.raises(ValueError, match="sizes"):
        gemm_rate(0, 4, 4)


def test_load_readings_are_in_range():
    from assocmem.benchmarking import free_cores, others_running, usable_cores

    cores = usable_cores()
    others = others_running()
    assert others is None or others >= 0
    assert 1 <= free_cores(max_age=0) <= cores


def test_load_capped_threads_caps_and_restores(monkeypatch):
    import assocmem.benchmarking as bm

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
        with bm.load_capped_threads() as used:
            assert used == 1 and torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with bm.load_capped_threads(1) as used:
            assert used == 1
        monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 8)
        with bm.load_capped_threads() as used:
            assert used == 2  # never more than asked for
        monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
        monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "0")
        with bm.load_capped_threads() as used:
            assert used == 2  # the cap is off
        with pytest.raises(ValueError, match="threads"):
            with bm.load_capped_threads(0):
                pass
    finally:
        torch.set_num_threads(before)


def test_cpu_load_summary():
    from assocmem.benchmarking import CpuLoad

    with CpuLoad() as load:
        sum(range(200_000))
    s = load.summary()
    assert set(s) == {"seconds", "loadavg_start", "loadavg_end", "others_share", "own_share", "others_running"}
    assert s["seconds"] > 0
    for key in ("others_share", "own_share"):
        assert s[key] is None or 0.0 <= s[key] <= 1.0
    with pytest.raises(RuntimeError):
        CpuLoad().summary()
    with pytest.raises(RuntimeError):
        CpuLoad().stop()
