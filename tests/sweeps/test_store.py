"""Tests for assocmem.sweeps.store: round trip, resume (after failures, kills and interrupted finishes),
corruption and config mismatches, locking, and loading stored results."""

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from assocmem.sweeps import (
    ConfigMismatchError,
    CorruptResultsError,
    ResultsError,
    ResultsLockedError,
    ResultsPaths,
    SerialExecutor,
    SweepError,
    load_results,
    read_provenance,
    register_sweep,
    run_sweep,
)
from tests.sweeps._toy import CALLS, FAIL_AT, ToyConfig, _without_wall, toy_point, toy_points


def test_round_trip(toy, tmp_path):
    run = run_sweep("toy", "quick", results_dir=tmp_path)
    assert (run.computed, run.skipped) == (6, 0)
    assert run.path == tmp_path / "toy" / "quick.csv"
    frame = run.frame
    assert list(frame.columns) == ["i", "label", "square", "root", "even", "note", "seed_used", "seed", "wall_time_s"]
    assert frame["i"].tolist() == list(range(6))  # grid order
    assert frame["square"].tolist() == [i * i for i in range(6)]
    assert frame["root"].tolist() == [math.sqrt(i) for i in range(6)]  # floats round-trip exactly
    assert frame["even"].tolist() == [i % 2 == 0 for i in range(6)]
    assert math.isnan(frame["note"][0]) and frame["note"][1] == "n1"  # None is stored as missing
    assert (frame["seed"] == frame["seed_used"]).all()  # the engine's seed column is point_seed
    assert (frame["wall_time_s"] >= 0).all()
    stored = load_results("toy", "quick", tmp_path)
    pd.testing.assert_frame_equal(stored, frame)
    assert not ResultsPaths.of(tmp_path, "toy", "quick").journal.exists()
    # A rerun computes nothing and leaves the files untouched.
    before = (tmp_path / "toy" / "quick.json").read_bytes()
    again = run_sweep("toy", "quick", results_dir=tmp_path)
    assert (again.computed, again.skipped) == (0, 6)
    assert (tmp_path / "toy" / "quick.json").read_bytes() == before
    pd.testing.assert_frame_equal(again.frame, frame)


def test_resume_after_a_failing_point_computes_each_point_once(toy, tmp_path):
    FAIL_AT.add(3)
    with pytest.raises(SweepError, match=r'point \{"i":3,"label":"p3"\} failed: RuntimeError: boom at 3'):
        run_sweep("toy", "quick", results_dir=tmp_path)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    assert paths.journal.exists()
    assert load_results("toy", "quick", tmp_path, allow_partial=True)["i"].tolist() == [0, 1, 2]
    with pytest.raises(ResultsError, match="unfinished"):
        load_results("toy", "quick", tmp_path)
    assert read_provenance("toy", "quick", tmp_path)["sessions"][-1]["status"] == "failed"
    assert CALLS == [0, 1, 2, 3]

    FAIL_AT.clear()
    CALLS.clear()
    run = run_sweep("toy", "quick", results_dir=tmp_path)
    assert (run.computed, run.skipped) == (3, 3)
    assert CALLS == [3, 4, 5]  # finished points are not recomputed
    assert run.frame["i"].tolist() == list(range(6))  # each point exactly once, in grid order
    assert not paths.journal.exists()
    prov = read_provenance("toy", "quick", tmp_path)
    assert [s["status"] for s in prov["sessions"]] == ["failed", "finished"]
    assert [s["points_computed"] for s in prov["sessions"]] == [3, 3]
    clean = run_sweep("toy", "quick", persist=False).frame
    pd.testing.assert_frame_equal(_without_wall(run.frame), _without_wall(clean))


def test_an_unfinished_tail_is_cut_off_and_recomputed(toy, tmp_path):
    FAIL_AT.add(2)
    with pytest.raises(SweepError):
        run_sweep("toy", "quick", results_dir=tmp_path)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    # What a kill in the middle of committing point 2 leaves: part of a row, part of a journal line.
    with open(paths.csv, "a") as f:
        f.write("2,p2,4,1.41")
    with open(paths.journal, "a") as f:
        f.write('{"key": "{\\"i\\":2')
    FAIL_AT.clear()
    CALLS.clear()
    run = run_sweep("toy", "quick", results_dir=tmp_path)
    assert CALLS == [2, 3, 4, 5]
    assert run.frame["i"].tolist() == list(range(6))
    load_results("toy", "quick", tmp_path)  # the finished file checks out


class ReverseExecutor(SerialExecutor):
    """Finishes the points last to first: the stored order must not depend on completion order."""

    def map_unordered(self, fn, args):
        for i in reversed(range(len(args))):
            yield i, fn(*args[i])


def test_completion_order_does_not_matter(toy, tmp_path):
    run = run_sweep("toy", "quick", results_dir=tmp_path, executor=ReverseExecutor())
    assert CALLS == [5, 4, 3, 2, 1, 0] and run.frame["i"].tolist() == list(range(6))
    serial = run_sweep("toy", "quick", results_dir=tmp_path / "serial")
    csv = ResultsPaths.of(tmp_path, "toy", "quick").csv.read_text().splitlines()
    csv_serial = ResultsPaths.of(tmp_path / "serial", "toy", "quick").csv.read_text().splitlines()
    assert [line.rsplit(",", 1)[0] for line in csv] == [line.rsplit(",", 1)[0] for line in csv_serial]
    assert serial.computed == 6


def test_an_interrupted_finish_is_completed_on_rerun(toy, tmp_path, monkeypatch):
    import assocmem.sweeps.store as store

    real = store._atomic_write

    def crash_on_csv(path, data):
        if path.suffix == ".csv":
            raise KeyboardInterrupt  # killed after the finished JSON, before the finished CSV
        real(path, data)

    monkeypatch.setattr(store, "_atomic_write", crash_on_csv)
    with pytest.raises(KeyboardInterrupt):
        run_sweep("toy", "quick", results_dir=tmp_path, executor=ReverseExecutor())
    monkeypatch.setattr(store, "_atomic_write", real)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    assert paths.journal.exists() and read_provenance("toy", "quick", tmp_path)["status"] == "complete"
    assert paths.csv.read_text().splitlines()[1].startswith("5,p5,")  # still in completion order
    CALLS.clear()
    run = run_sweep("toy", "quick", results_dir=tmp_path)
    assert CALLS == [] and run.computed == 0 and run.frame["i"].tolist() == list(range(6))
    assert not paths.journal.exists()
    load_results("toy", "quick", tmp_path)

    # killed after the finished CSV was in place, before the journal was deleted
    paths.journal.write_text('{"schema": 1}\n')
    assert run_sweep("toy", "quick", results_dir=tmp_path).computed == 0 and CALLS == []
    assert not paths.journal.exists()


def test_multi_row_points_resume_and_round_trip(toy2, tmp_path):
    FAIL_AT.add(2)
    with pytest.raises(SweepError):
        run_sweep("toy_rows", "quick", results_dir=tmp_path)
    FAIL_AT.clear()
    CALLS.clear()
    run = run_sweep("toy_rows", "quick", results_dir=tmp_path)
    assert CALLS == [2, 3]
    assert run.frame[["i", "rep", "value"]].values.tolist() == [[i, r, 10 * i + r] for i in range(4) for r in range(2)]
    assert read_provenance("toy_rows", "quick", tmp_path)["rows_per_point"] == 2
    csv = ResultsPaths.of(tmp_path, "toy_rows", "quick").csv
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text("".join(lines + [lines[3]]))  # one row of point 1 again, at the end
    with pytest.raises(CorruptResultsError, match="duplicates point"):
        load_results("toy_rows", "quick", tmp_path)


_KILL_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from dataclasses import dataclass
    from assocmem.sweeps import register_sweep, run_sweep

    RESULTS, LOG, DELAY = sys.argv[1], sys.argv[2], float(sys.argv[3])

    @dataclass(frozen=True)
    class Slow:
        size: int
        seed: int = 0

    def points(config):
        return [{"i": i} for i in range(config.size)]

    def run_point(config, point, device):
        with open(LOG, "a") as f:
            f.write(f"{point['i']}\\n")
            f.flush()
            os.fsync(f.fileno())
        time.sleep(DELAY)
        return {"value": 10 * point["i"]}

    register_sweep("slow", config_type=Slow, presets={"quick": Slow(8)}, points=points, run_point=run_point)
    if __name__ == "__main__":
        run_sweep("slow", "quick", results_dir=RESULTS, progress=False)
    """
)


def _committed(journal: Path) -> list[int]:
    if not journal.exists():
        return []
    lines = journal.read_bytes().split(b"\n")[1:-1]  # header, then complete lines only
    return [json.loads(json.loads(line)["key"])["i"] for line in lines]


def test_resume_after_sigkill(tmp_path):
    script = tmp_path / "slow_sweep.py"
    script.write_text(_KILL_SCRIPT)
    log = tmp_path / "calls.log"
    results = tmp_path / "results"
    journal = ResultsPaths.of(results, "slow", "quick").journal
    env = {**os.environ, "ASSOCMEM_QUIET": "1"}
    proc = subprocess.Popen([sys.executable, str(script), str(results), str(log), "0.25"], env=env)
    try:
        deadline = time.monotonic() + 120
        while len(_committed(journal)) < 3:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "the sweep did not commit three points in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    done_before = _committed(journal)
    assert 3 <= len(done_before) < 8
    subprocess.run([sys.executable, str(script), str(results), str(log), "0"], env=env, check=True, timeout=120)
    frame = load_results("slow", "quick", results)
    assert frame["i"].tolist() == list(range(8)) and frame["value"].tolist() == [10 * i for i in range(8)]
    calls = [int(x) for x in log.read_text().split()]
    assert sorted(set(calls)) == list(range(8))
    for i in done_before:
        assert calls.count(i) == 1, f"point {i} was committed before the kill but computed again"
    assert len(calls) <= 9  # at most the one point in flight at the kill runs twice
    prov = read_provenance("slow", "quick", results)
    assert [s["status"] for s in prov["sessions"]] == ["killed", "finished"]


def _truncate_last_line(paths):
    paths.csv.write_bytes(paths.csv.read_bytes()[:-7])


def _duplicate_last_row(paths):
    lines = paths.csv.read_text().splitlines(keepends=True)
    paths.csv.write_text("".join(lines + [lines[-1]]))


def _wrong_header(paths):
    lines = paths.csv.read_text().splitlines(keepends=True)
    paths.csv.write_text("".join([lines[0].replace("square", "sqr")] + lines[1:]))


def _edit_a_value(paths):
    lines = paths.csv.read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace(",4,", ",5,", 1)  # point 2's square, same shape
    paths.csv.write_text("".join(lines))


def _drop_a_row(paths):
    lines = paths.csv.read_text().splitlines(keepends=True)
    paths.csv.write_text("".join(lines[:2] + lines[3:]))


def _garble_json(paths):
    paths.json.write_text(paths.json.read_text()[:40])


@pytest.mark.parametrize(
    "damage, message",
    [
        (_truncate_last_line, "partial last line"),
        (_duplicate_last_row, "duplicate row"),
        (_wrong_header, "wrong header"),
        (_edit_a_value, "contents differ"),
        (_drop_a_row, "rows missing or duplicated"),
        (_garble_json, "not valid JSON"),
    ],
)
def test_damaged_finished_results_raise(toy, tmp_path, damage, message):
    run_sweep("toy", "quick", results_dir=tmp_path)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    damage(paths)
    damaged = paths.csv.read_bytes()
    CALLS.clear()
    with pytest.raises(CorruptResultsError, match=message) as info:
        run_sweep("toy", "quick", results_dir=tmp_path)
    assert "--force" in str(info.value)
    assert CALLS == [] and paths.csv.read_bytes() == damaged  # never extended or rewritten
    with pytest.raises(CorruptResultsError, match=message):
        load_results("toy", "quick", tmp_path)
    run = run_sweep("toy", "quick", results_dir=tmp_path, force=True)
    assert run.computed == 6 and run.frame["i"].tolist() == list(range(6))


def test_damaged_unfinished_results_raise(toy, tmp_path):
    FAIL_AT.add(4)
    with pytest.raises(SweepError):
        run_sweep("toy", "quick", results_dir=tmp_path)
    FAIL_AT.clear()
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    csv, journal = paths.csv.read_bytes(), paths.journal.read_bytes()

    paths.csv.write_bytes(csv[:-10])  # shorter than the journal says
    with pytest.raises(CorruptResultsError, match="truncated"):
        run_sweep("toy", "quick", results_dir=tmp_path)

    paths.csv.write_bytes(csv)
    lines = journal.split(b"\n")
    paths.journal.write_bytes(b"\n".join(lines[:-1] + [lines[-2], b""]))  # a point committed twice
    with pytest.raises(CorruptResultsError, match="committed twice"):
        run_sweep("toy", "quick", results_dir=tmp_path)

    paths.journal.write_bytes(journal)
    paths.csv.write_bytes(csv.replace(b"square", b"squirm"))  # same length
    with pytest.raises(CorruptResultsError, match="wrong header"):
        run_sweep("toy", "quick", results_dir=tmp_path)

    paths.csv.write_bytes(csv)
    assert run_sweep("toy", "quick", results_dir=tmp_path).computed == 2  # intact again: resumes


def test_a_config_mismatch_raises_unless_forced(toy, tmp_path):
    run_sweep("toy", "quick", results_dir=tmp_path)
    register_sweep("toy", config_type=ToyConfig, presets={"quick": ToyConfig(7)}, points=toy_points,
                   run_point=toy_point)  # the preset changed since the results were stored
    with pytest.raises(ConfigMismatchError, match="size: stored 6, requested 7"):
        run_sweep("toy", "quick", results_dir=tmp_path)
    with pytest.raises(ConfigMismatchError):
        load_results("toy", "quick", tmp_path, config={"size": 7, "seed": 0})
    run = run_sweep("toy", "quick", results_dir=tmp_path, force=True)
    assert run.computed == 7 and read_provenance("toy", "quick", tmp_path)["config"]["size"] == 7


def test_an_unfinished_run_with_another_config_raises(toy, tmp_path):
    FAIL_AT.add(1)
    with pytest.raises(SweepError):
        run_sweep("toy", "quick", results_dir=tmp_path)
    FAIL_AT.clear()
    register_sweep("toy", config_type=ToyConfig, presets={"quick": ToyConfig(6, seed=3)}, points=toy_points,
                   run_point=toy_point)
    with pytest.raises(ConfigMismatchError, match="seed: stored 0, requested 3"):
        run_sweep("toy", "quick", results_dir=tmp_path)


def test_a_second_concurrent_run_is_refused(toy, tmp_path):
    fcntl = pytest.importorskip("fcntl")
    FAIL_AT.add(2)
    with pytest.raises(SweepError):
        run_sweep("toy", "quick", results_dir=tmp_path)
    FAIL_AT.clear()
    journal = ResultsPaths.of(tmp_path, "toy", "quick").journal
    fd = os.open(journal, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another run holds the journal
        with pytest.raises(ResultsLockedError, match="another process"):
            run_sweep("toy", "quick", results_dir=tmp_path)
    finally:
        os.close(fd)
    assert run_sweep("toy", "quick", results_dir=tmp_path).computed == 4


def test_missing_results_name_the_sweep_or_say_it_is_unknown(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"'nosuch' is not a registered sweep.*registered sweeps: .*demo"):
        load_results("nosuch", "quick", tmp_path)
    with pytest.raises(FileNotFoundError, match="'nosuch' is not a registered sweep"):
        read_provenance("nosuch", "quick", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"run `python -m assocmem sweep demo --preset quick`"):
        load_results("demo", "quick", tmp_path)


def test_load_largest_results_prefers_the_first_stored_preset(tmp_path):
    from assocmem.sweeps import load_largest_results, run_sweep
    with pytest.raises(FileNotFoundError, match="demo"):
        load_largest_results("demo", ("quick",), tmp_path)
    run_sweep("demo", "quick", device="cpu", results_dir=tmp_path, progress=False)
    preset, frame = load_largest_results("demo", ("paper", "quick"), tmp_path)
    assert preset == "quick" and len(frame) > 0
    with pytest.raises(Exception, match="nosuch"):
        load_largest_results("nosuch", ("quick",), tmp_path)


# --------------------------------------------------------------------------------------------
# Failure injection: a failing commit never leaves the store (in memory or on disk) half-written


def _snapshot(store):
    p = store.paths
    return (p.csv.read_bytes() if p.csv.exists() else None, p.journal.read_bytes(),
            None if store.columns is None else list(store.columns), list(store._entries))


def _open_store(tmp_path, keys):
    from assocmem.sweeps.store import ResultsStore

    store = ResultsStore(tmp_path, "toy", "quick")
    assert store.open(config={"size": len(keys)}, grid_keys=keys, point_columns=["i"]) == set()
    return store


def _row(i):
    from assocmem.sweeps.store import format_line
    return [format_line([str(i), str(i * i)])]


@pytest.mark.parametrize("when", ["first point", "later point"])
@pytest.mark.parametrize("fail", ["csv fsync", "short journal write", "interrupt"])
def test_a_failing_append_leaves_the_store_exactly_as_it_was(tmp_path, monkeypatch, fail, when):
    import errno

    import assocmem.sweeps.store as store_module

    keys = ['{"i":0}', '{"i":1}']
    store = _open_store(tmp_path, keys)
    try:
        if when == "later point":
            store.append(keys[0], _row(0), ["i", "sq"])
        key, i = (keys[0], 0) if when == "first point" else (keys[1], 1)
        before = _snapshot(store)
        real_fsync, real_write_all = os.fsync, store_module._write_all

        def failing_fsync(fd):  # the rows reached the CSV, then the disk filled up
            if store._csv is not None and fd == store._csv.fileno():
                raise OSError(errno.ENOSPC, "No space left on device")
            real_fsync(fd)

        def short_journal_write(fd, data):  # half of the journal line, then the write fails
            os.write(fd, data[: len(data) // 2])
            raise OSError(errno.EIO, "I/O error")

        def interrupted(fd, data):
            raise KeyboardInterrupt

        if fail == "csv fsync":
            monkeypatch.setattr(os, "fsync", failing_fsync)
        else:
            monkeypatch.setattr(store_module, "_write_all", short_journal_write if fail != "interrupt" else interrupted)
        with pytest.raises(KeyboardInterrupt if fail == "interrupt" else OSError):
            store.append(key, _row(i), ["i", "sq"])
        monkeypatch.setattr(os, "fsync", real_fsync)
        monkeypatch.setattr(store_module, "_write_all", real_write_all)
        assert _snapshot(store) == before  # files, columns and committed entries all unchanged
        # the same append now succeeds, and the finished file holds every point once
        store.append(key, _row(i), ["i", "sq"])
        if when == "first point":
            store.append(keys[1], _row(1), ["i", "sq"])
        store.finish({})
    finally:
        store.close()
    assert store.paths.csv.read_text() == "i,sq\n0,0\n1,1\n"


def test_an_append_whose_rollback_fails_refuses_to_go_on_and_reopening_recovers(tmp_path, monkeypatch):
    import errno

    import assocmem.sweeps.store as store_module

    keys = ['{"i":0}', '{"i":1}']
    store = _open_store(tmp_path, keys)
    store.append(keys[0], _row(0), ["i", "sq"])

    def fail(*args):
        raise OSError(errno.EIO, "I/O error")

    def half(fd, data):
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(store_module, "_write_all", half)
    monkeypatch.setattr(os, "ftruncate", fail)  # the journal cannot be cut back either
    with pytest.raises(OSError):
        store.append(keys[1], _row(1), ["i", "sq"])
    monkeypatch.undo()
    with pytest.raises(ResultsError, match="unusable after a failed write"):
        store.append(keys[1], _row(1), ["i", "sq"])  # never appended after a half-written journal line
    store.close()
    from assocmem.sweeps.store import ResultsStore

    again = ResultsStore(tmp_path, "toy", "quick")
    try:
        assert again.open(config={"size": 2}, grid_keys=keys, point_columns=["i"]) == {keys[0]}  # tail cut off
        again.append(keys[1], _row(1), ["i", "sq"])
        again.finish({})
    finally:
        again.close()
    assert again.paths.csv.read_text() == "i,sq\n0,0\n1,1\n"


def test_a_disk_error_during_a_sweep_keeps_every_committed_point(toy, tmp_path, monkeypatch):
    import errno

    import assocmem.sweeps.store as store_module

    real = store_module._write_all
    calls = {"n": 0}

    def full_disk_at_the_third_point(fd, data):
        if b'"key"' in data:
            calls["n"] += 1
            if calls["n"] == 3:
                os.write(fd, data[:5])
                raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(store_module, "_write_all", full_disk_at_the_third_point)
    with pytest.raises(OSError, match="No space left"):
        run_sweep("toy", "quick", results_dir=tmp_path)
    monkeypatch.setattr(store_module, "_write_all", real)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    assert paths.journal.read_bytes().endswith(b"\n") and len(paths.journal.read_bytes().splitlines()) == 3
    assert load_results("toy", "quick", tmp_path, allow_partial=True)["i"].tolist() == [0, 1]
    assert paths.csv.read_bytes().count(b"\n") == 3  # header and two rows: point 2's rows were cut off
    assert read_provenance("toy", "quick", tmp_path)["sessions"][-1]["status"] == "failed"
    CALLS.clear()
    run = run_sweep("toy", "quick", results_dir=tmp_path)
    assert CALLS == [2, 3, 4, 5] and run.frame["i"].tolist() == list(range(6))
    pd.testing.assert_frame_equal(_without_wall(run.frame), _without_wall(run_sweep("toy", "quick", persist=False).frame))


def test_append_refuses_what_would_corrupt_the_files(tmp_path):
    keys = ['{"i":0}', '{"i":1}']
    store = _open_store(tmp_path, keys)
    try:
        for lines, match in (([], "one or more CSV lines"), (["0,0"], "ending in a newline"),
                             (["0,0\n1,1\n"], "one or more CSV lines")):
            with pytest.raises(ValueError, match=match):
                store.append(keys[0], lines, ["i", "sq"])
        assert store.columns is None and not store.paths.csv.exists()
        store.append(keys[0], _row(0), ["i", "sq"])
        with pytest.raises(ValueError, match="already committed"):
            store.append(keys[0], _row(0), ["i", "sq"])
        with pytest.raises(ValueError, match="returned columns"):
            store.append(keys[1], _row(1), ["i", "square"])
    finally:
        store.close()
    with pytest.raises(ResultsError, match="not open"):
        store.append(keys[1], _row(1), ["i", "sq"])


def test_a_results_folder_that_cannot_be_created_is_one_clear_error(toy, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ResultsError, match=r"cannot create the results folder .*a part of the path is a file"):
        run_sweep("toy", "quick", results_dir=blocker / "deeper")
    real_mkdir = Path.mkdir

    def read_only(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(ResultsError, match=r"cannot create the results folder .*permission denied"):
        run_sweep("toy", "quick", results_dir=tmp_path / "ro")
    monkeypatch.setattr(Path, "mkdir", real_mkdir)
    (tmp_path / "d" / "toy" / "quick.json").mkdir(parents=True)  # a folder where a file should be
    (tmp_path / "d" / "toy" / "quick.csv").write_text("")
    with pytest.raises(ResultsError, match=r"cannot use the results in .*a folder stands where a file is needed"):
        run_sweep("toy", "quick", results_dir=tmp_path / "d")


def test_load_largest_results_names_the_folder_it_searched(tmp_path):
    from assocmem.sweeps import load_largest_results, sweep_names

    name = sweep_names()[0]
    with pytest.raises(FileNotFoundError, match="ASSOCMEM_RESULTS_DIR") as err:
        load_largest_results(name, results_dir=tmp_path)
    assert str(tmp_path) in str(err.value)


def test_a_committed_row_edited_to_a_value_of_the_same_length_is_caught_on_resume(toy, tmp_path):
    FAIL_AT.add(3)
    with pytest.raises(SweepError):
        run_sweep("toy", "quick", results_dir=tmp_path)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    text = paths.csv.read_text()
    row = next(line for line in text.splitlines() if line.startswith("2,p2,4,"))
    paths.csv.write_text(text.replace(row, row.replace("2,p2,4,", "2,p2,5,", 1)))  # same length
    assert len(paths.csv.read_text()) == len(text)
    FAIL_AT.clear()
    with pytest.raises(CorruptResultsError, match=r'rows of point \{"i":2,"label":"p2"\} differ from those committed'):
        run_sweep("toy", "quick", results_dir=tmp_path)
    with pytest.raises(CorruptResultsError, match="differ from those committed"):
        load_results("toy", "quick", tmp_path, allow_partial=True)


def test_a_journal_written_without_row_hashes_still_resumes(toy, tmp_path):
    """Journals of runs started before the hash was kept: their points are checked as before."""
    FAIL_AT.add(3)
    with pytest.raises(SweepError):
        run_sweep("toy", "quick", results_dir=tmp_path)
    paths = ResultsPaths.of(tmp_path, "toy", "quick")
    lines = paths.journal.read_text().splitlines()
    old = [lines[0]] + [json.dumps({k: v for k, v in json.loads(x).items() if k != "sha256"}) for x in lines[1:]]
    paths.journal.write_text("\n".join(old) + "\n")
    FAIL_AT.clear()
    CALLS.clear()
    run = run_sweep("toy", "quick", results_dir=tmp_path)
    assert CALLS == [3, 4, 5] and run.frame["i"].tolist() == list(range(6))
