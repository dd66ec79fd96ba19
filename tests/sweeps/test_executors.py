"""Tests for assocmem.sweeps.executors: the process pool reports results and failures and gives the serial
rows (the Ray executor is tested in ``test_executors_ray.py``)."""

import pandas as pd
import pytest

from assocmem.sweeps import ProcessExecutor, SerialExecutor, TaskError, read_provenance, run_sweep
from tests.sweeps._toy import _without_wall


def test_process_executor_reports_results_and_failures_and_gives_the_serial_rows(tmp_path):
    serial = run_sweep("demo", "quick", results_dir=tmp_path / "serial", executor="serial")
    results = {}
    with ProcessExecutor(workers=2) as ex:  # one pool for all three checks (workers start once)
        assert dict(ex.map_unordered(int, [("1",), ("2",), ("3",)])) == {0: 1, 1: 2, 2: 3}
        with pytest.raises(TaskError) as info:
            for i, value in ex.map_unordered(int, [("1",), ("x",), ("3",)]):
                results[i] = value
        pooled = run_sweep("demo", "quick", results_dir=tmp_path / "process", executor=ex)
    assert info.value.index == 1 and isinstance(info.value.cause, ValueError)
    assert results.get(0) == 1  # a task running when another failed still reports its result
    with pytest.raises(TaskError):
        list(SerialExecutor().map_unordered(int, [("x",)]))
    pd.testing.assert_frame_equal(_without_wall(pooled.frame), _without_wall(serial.frame))
    assert read_provenance("demo", "quick", tmp_path / "process")["executor"] == "process"
