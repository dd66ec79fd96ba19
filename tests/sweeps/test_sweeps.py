"""The sweep engine: registry, results store (round trip, provenance, resume, corruption), executors,
capacity search and the command line."""

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from assocmem.__main__ import main
from assocmem.sweeps import (
    ConfigMismatchError,
    CorruptResultsError,
    ProcessExecutor,
    ResultsError,
    ResultsLockedError,
    ResultsPaths,
    SerialExecutor,
    SweepError,
    TaskError,
    UnknownNameError,
    canonical_key,
    config_to_json,
    get_sweep,
    load_results,
    point_seed,
    read_provenance,
    register_sweep,
    run_sweep,
    smallest_width,
    sweep_names,
    unregister_sweep,
)

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------------------------
# A toy sweep whose calls are counted and which can be made to fail at chosen points


CALLS: list[int] = []  # point "i" of every run_point call, in call order
FAIL_AT: set[int] = set()  # points at which toy_point raises


@dataclass(frozen=True)
class ToyConfig:
    size: int  # number of points
    seed: int = 0  # base seed


def toy_points(config):
    return [{"i": i, "label": f"p{i}"} for i in range(config.size)]


def toy_point(config, point, device):
    i = point["i"]
    CALLS.append(i)
    if i in FAIL_AT:
        raise RuntimeError(f"boom at {i}")
    return {"square": i * i, "root": math.sqrt(i), "even": i % 2 == 0, "note": None if i == 0 else f"n{i}",
            "seed_used": point_seed(config, point)}


def toy_rows(config, point, device):
    i = point["i"]
    CALLS.append(i)
    if i in FAIL_AT:
        raise RuntimeError(f"boom at {i}")
    return [{"rep": r, "value": 10 * i + r} for r in range(2)]


@pytest.fixture
def toy():
    CALLS.clear()
    FAIL_AT.clear()
    sweep = register_sweep("toy", config_type=ToyConfig, presets={"quick": ToyConfig(6), "cpu": ToyConfig(8)},
                           points=toy_points, run_point=toy_point, description="toy")
    yield sweep
    unregister_sweep("toy")
    FAIL_AT.clear()


@pytest.fixture
def toy2():
    CALLS.clear()
    FAIL_AT.clear()
    sweep = register_sweep("toy_rows", config_type=ToyConfig, presets={"quick": ToyConfig(4)},
                           points=toy_points, run_point=toy_rows)
    yield sweep
    unregister_sweep("toy_rows")
    FAIL_AT.clear()


def _without_wall(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns="wall_time_s").reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Registry and grid


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


@pytest.mark.parametrize(
    "grid, message",
    [
        ([], "non-empty"),
        ([{"i": 1}, {"i": 1}], "twice"),
        ([{"i": 1}, {"j": 2}], "keys"),
        ([{"seed": 1}], "reserved"),
        ([{"i": [1, 2]}], "must be a bool, int, float, str or None"),
        ([{"i": float("nan")}], "not finite"),
    ],
)
def test_bad_grids_are_rejected(grid, message):
    sweep = register_sweep("badgrid", config_type=ToyConfig, presets={"quick": ToyConfig(1)},
                           points=lambda c: grid, run_point=toy_point)
    try:
        with pytest.raises((ValueError, TypeError), match=message):
            sweep.grid(ToyConfig(1))
    finally:
        unregister_sweep("badgrid")


def test_point_keys_and_seeds_are_stable():
    assert canonical_key({"n": 8, "d_k": 16}) == '{"d_k":16,"n":8}'
    cfg = ToyConfig(3, seed=0)
    a, b = point_seed(cfg, {"i": 1}), point_seed(cfg, {"i": 2})
    assert a != b and 0 <= a < 2**32
    assert point_seed(cfg, {"i": 1}) == a  # deterministic
    assert point_seed(ToyConfig(3, seed=1), {"i": 1}) != a  # depends on the base seed
    assert point_seed(cfg, {"i": 1}) == 3209170894  # same on every machine and Python version


# --------------------------------------------------------------------------------------------
# Results store: round trip and provenance


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


# --------------------------------------------------------------------------------------------
# Resume


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


# --------------------------------------------------------------------------------------------
# Corruption and mismatches


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


# --------------------------------------------------------------------------------------------
# Executors


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


def test_demo_sweep_agrees_with_the_closed_form():
    frame = run_sweep("demo", "quick", persist=False, device="cpu").frame
    assert frame["theory"].tolist() == [(n - 1) / d for d, n in zip(frame["d_k"], frame["n"])]
    assert (frame["z"].abs() < 4).all()


# --------------------------------------------------------------------------------------------
# Capacity search


@pytest.mark.parametrize("threshold", [1, 2, 3, 7, 64, 257, 1000, 46341, 65536])
def test_search_finds_the_threshold_of_a_monotone_function(threshold):
    calls = []

    def accuracy(m):
        calls.append(m)
        return 1.0 if m >= threshold else 0.5

    result = smallest_width(accuracy)
    assert result.m == threshold and result.accuracy == 1.0 and result.found and result.monotone
    assert len(calls) == len(set(calls)) == result.n_evaluations  # no width evaluated twice
    assert result.n_evaluations <= 2 * math.log2(threshold) + 2 + 2 + 1  # gallop + bisect + verify
    assert max(calls) <= max(65536, threshold + 2)


def test_search_reports_a_miss_within_range():
    result = smallest_width(lambda m: float(m >= 100_000), hi=65536)
    assert result.m is None and result.accuracy is None and not result.found
    assert result.evaluations[-1] == (65536, 0.0)
    assert max(m for m, _ in result.evaluations) == 65536


def test_search_respects_lo_hi_and_target():
    result = smallest_width(lambda m: m / 100, lo=10, hi=200, target=0.9)
    assert result.m == 90
    assert min(m for m, _ in result.evaluations) == 10
    assert smallest_width(lambda m: 1.0, lo=5, hi=5).m == 5
    assert smallest_width(lambda m: True, lo=3).m == 3  # booleans work too


def test_search_non_monotone_dip_above_the_candidate():
    # succeeds from 100 on, except a dip at 101 and 102
    def accuracy(m):
        return 1.0 if m >= 100 and m not in (101, 102) else 0.9

    result = smallest_width(accuracy, verify=2)
    assert result.m == 103
    assert result.monotone_violations == (101, 102) and result.restarts == 1
    assert not result.monotone
    # without verification the search stops at the first candidate
    plain = smallest_width(accuracy, verify=0)
    assert plain.m == 100 and plain.monotone


def test_search_non_monotone_isolated_early_success():
    # a lucky width 4 succeeds; the real threshold is 300
    def accuracy(m):
        return 1.0 if m == 4 or m >= 300 else 0.0

    result = smallest_width(accuracy, verify=2)
    assert result.m == 300 and result.restarts == 1 and result.monotone_violations[0] == 5
    assert all(v > 4 for v in result.monotone_violations)
    assert smallest_width(accuracy, verify=0).m == 4


def test_search_rejects_bad_input():
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        smallest_width(lambda m: 1.0, lo=10, hi=5)
    with pytest.raises(ValueError, match="integer >= 1"):
        smallest_width(lambda m: 1.0, lo=0)
    with pytest.raises(ValueError, match="verify"):
        smallest_width(lambda m: 1.0, verify=-1)
    with pytest.raises(ValueError, match="NaN"):
        smallest_width(lambda m: float("nan"))


# --------------------------------------------------------------------------------------------
# Command line


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


def test_missing_results_name_the_sweep_or_say_it_is_unknown(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"'nosuch' is not a registered sweep.*registered sweeps: .*demo"):
        load_results("nosuch", "quick", tmp_path)
    with pytest.raises(FileNotFoundError, match="'nosuch' is not a registered sweep"):
        read_provenance("nosuch", "quick", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"run `python -m assocmem sweep demo --preset quick`"):
        load_results("demo", "quick", tmp_path)


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


def test_load_largest_results_prefers_the_first_stored_preset(tmp_path):
    from assocmem.sweeps import load_largest_results, run_sweep
    with pytest.raises(FileNotFoundError, match="demo"):
        load_largest_results("demo", ("quick",), tmp_path)
    run_sweep("demo", "quick", device="cpu", results_dir=tmp_path, progress=False)
    preset, frame = load_largest_results("demo", ("paper", "quick"), tmp_path)
    assert preset == "quick" and len(frame) > 0
    with pytest.raises(Exception, match="nosuch"):
        load_largest_results("nosuch", ("quick",), tmp_path)
