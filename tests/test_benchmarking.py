"""Tests for assocmem.benchmarking: machine description, timing one call, GEMM rate, thread choice."""

from __future__ import annotations

import os

import pytest
import torch

from assocmem.benchmarking import machine_info, time_call


@pytest.fixture(autouse=True)
def _load_cap_on(monkeypatch):
    """The thread rule is opt-in (ASSOCMEM_LOAD_CAP=1); these tests exercise it turned on."""
    monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "1")


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
    from assocmem.benchmarking import free_cores, others_cores, usable_cores

    cores = usable_cores()
    others = others_cores(max_age=0)
    assert others is None or 0.0 <= others <= (os.cpu_count() or 1)
    assert 1 <= free_cores(max_age=0) <= cores
    for bad in (-1, float("nan"), float("inf"), "0.1", True):
        with pytest.raises(ValueError, match="max_age"):
            others_cores(bad)


class FakeProc:
    """Fake /proc readings and clock for the thread rule: two cores, ticks set by the test."""

    def __init__(self, monkeypatch, cores=2):
        import assocmem.benchmarking as bm

        self.t, self.busy, self.total, self.own, self.reads = 0.0, 0, 0, 0, 0
        self.available = True
        monkeypatch.setattr(bm, "_now", lambda: self.t)
        monkeypatch.setattr(bm, "_cpu_jiffies", self._cpu)
        monkeypatch.setattr(bm, "_own_jiffies", lambda: self.own if self.available else None)
        monkeypatch.setattr(bm.os, "cpu_count", lambda: cores)
        monkeypatch.setattr(bm, "usable_cores", lambda: cores)
        monkeypatch.setattr(bm, "_STATE", bm._LoadState())
        self.cores = cores
        bm.others_cores(max_age=0)  # the window starts here, as at import

    def _cpu(self):
        self.reads += 1
        return (self.busy, self.total) if self.available else None

    def advance(self, seconds, others_cores, own_cores=0.0):
        """``seconds`` pass (100 ticks per second per core) with others and this process busy."""
        ticks = round(100 * seconds)
        self.t += seconds
        self.total += self.cores * ticks
        own = round(own_cores * ticks)
        self.own += own
        self.busy += own + round(others_cores * ticks)


def test_a_busy_process_takes_a_core_and_brief_wakeups_do_not(monkeypatch):
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch)
    assert bm.others_cores(0) == bm.DEFAULT_OTHERS_CORES == 0.0 and bm.free_cores(0) == 2
    proc.advance(0.3, others_cores=1.0, own_cores=1.0)  # a background job holds one core
    assert bm.others_cores(0) == pytest.approx(1.0) and bm.free_cores(0) == 1
    proc.advance(0.3, others_cores=0.1, own_cores=1.9)  # a shell woke up for 30 ms
    assert bm.others_cores(0) == pytest.approx(0.1) and bm.free_cores(0) == 2
    proc.advance(0.3, others_cores=0.5)  # half a core over the window: taken (the threshold)
    assert bm.free_cores(0) == 1
    proc.advance(0.3, others_cores=0.4)  # below it: free
    assert bm.free_cores(0) == 2
    proc.advance(0.3, others_cores=2.0)  # both cores busy: still one thread
    assert bm.others_cores(0) == pytest.approx(2.0) and bm.free_cores(0) == 1


def test_a_window_shorter_than_the_minimum_keeps_the_last_estimate(monkeypatch):
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch)
    proc.advance(0.1, others_cores=1.0)  # too short a window: no estimate yet, the default holds
    assert bm.others_cores(0) == 0.0 and bm.free_cores(0) == 2
    proc.advance(0.2, others_cores=1.0)  # 0.3 s since the window began: measured over all of it
    assert bm.others_cores(0) == pytest.approx(1.0)
    proc.advance(0.1, others_cores=0.0)  # a new window began at the last estimate; too short again
    assert bm.others_cores(0) == pytest.approx(1.0) and bm.free_cores(0) == 1
    proc.advance(0.2, others_cores=0.0)  # 0.3 s of a quiet machine
    assert bm.others_cores(0) == pytest.approx(0.0) and bm.free_cores(0) == 2
    proc.advance(5.0, others_cores=0.1)  # after a long pause: the average over the whole pause
    assert bm.others_cores(0) == pytest.approx(0.1)


def test_a_recent_reading_is_reused_without_reading_proc(monkeypatch):
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch)
    reads = proc.reads
    proc.t += bm.FREE_CORES_TTL / 2
    bm.free_cores()
    bm.others_cores()
    assert proc.reads == reads
    proc.t += bm.FREE_CORES_TTL
    bm.free_cores()
    assert proc.reads == reads + 1
    bm.free_cores(max_age=0)
    assert proc.reads == reads + 2


def test_own_ticks_above_the_busy_ticks_count_as_no_load(monkeypatch):
    # /proc/stat and /proc/self/stat are kept by different accounting and may disagree by a tick
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch)
    proc.advance(0.3, others_cores=0.0, own_cores=1.0)
    proc.own += 2
    assert bm.others_cores(0) == 0.0 and bm.free_cores(0) == 2


def test_without_proc_every_core_is_free(monkeypatch):
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch, cores=4)
    proc.available = False
    proc.t += 1.0
    assert bm.others_cores(0) is None and bm.free_cores(0) == 4
    proc.available = True  # /proc back: a new window, the default until it has passed
    proc.t += 1.0
    assert bm.others_cores(0) == 0.0
    proc.advance(0.3, others_cores=3.0)
    assert bm.free_cores(0) == 1


def test_the_rule_caps_a_block_under_fake_load(monkeypatch):
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        proc.advance(0.3, others_cores=0.02, own_cores=1.5)
        with bm.load_capped_threads() as used:
            assert used == 2
        proc.advance(0.3, others_cores=0.9, own_cores=1.0)
        proc.t += bm.FREE_CORES_TTL  # past the reuse time
        with bm.load_capped_threads() as used:
            assert used == 1 and torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "0")
        assert not bm.load_cap_enabled()
        with bm.load_capped_threads() as used:
            assert used == 2
        monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "1")
        assert bm.load_cap_enabled()
    finally:
        torch.set_num_threads(before)


def test_a_forked_child_starts_its_own_window(monkeypatch):
    import assocmem.benchmarking as bm

    proc = FakeProc(monkeypatch)
    proc.advance(0.3, others_cores=1.0)
    assert bm.others_cores(0) == pytest.approx(1.0)
    bm._reset_load_state()  # what os.register_at_fork runs in the child
    assert bm.others_cores(0) == bm.DEFAULT_OTHERS_CORES


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
    assert set(s) == {"seconds", "loadavg_start", "loadavg_end", "others_share", "own_share"}
    assert s["seconds"] > 0
    for key in ("others_share", "own_share"):
        assert s[key] is None or 0.0 <= s[key] <= 1.0
    with pytest.raises(RuntimeError):
        CpuLoad().summary()
    with pytest.raises(RuntimeError):
        CpuLoad().stop()


def test_the_rule_is_off_unless_asked_for(monkeypatch):
    """A library call leaves torch's thread count alone by default (issue 29): opt-in only."""
    import assocmem.benchmarking as bm

    monkeypatch.delenv("ASSOCMEM_LOAD_CAP")
    assert not bm.load_cap_enabled()
    monkeypatch.setattr(bm, "free_cores", lambda max_age=0.1: 1)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with bm.load_capped_threads() as used:
            assert used == 2 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    for on in ("1", "true", "ON"):
        monkeypatch.setenv("ASSOCMEM_LOAD_CAP", on)
        assert bm.load_cap_enabled()
