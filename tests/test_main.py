"""Tests for the command line, ``python -m assocmem sweep`` (assocmem.__main__): usage errors, listing,
a quick run and a rerun."""

import os
import subprocess
import sys

import pytest

from assocmem.__main__ import main
from assocmem.sweeps import config_to_json, get_sweep, load_results, read_provenance


@pytest.fixture(autouse=True)
def _keep_the_thread_rule_as_it_was(monkeypatch):
    """main() opts its process into the thread rule (os.environ.setdefault); in the tests' process
    that would outlast the test, so the variable is set here and restored afterwards."""
    monkeypatch.setenv("ASSOCMEM_LOAD_CAP", "0")


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


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("INFO")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_cli_results_dir_that_cannot_be_used_is_one_line_and_exit_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    run = ["sweep", "demo", "--preset", "quick", "--device", "cpu", "--results-dir"]
    cases = [
        (str(afile), "a part of the path is a file, not a folder"),  # the results folder is a file
        (str(afile / "sub"), "a part of the path is a file, not a folder"),  # a path through a file
        ("/proc/assocmem-results", "cannot create the results folder /proc/assocmem-results/demo"),  # cannot be made
        ("", "results_dir must not be empty"),
    ]
    for results_dir, message in cases:
        assert main(run + [results_dir]) == 1
        assert message in _one_error_line(capsys)

    def read_only(self, *args, **kwargs):  # a read-only parent (chmod does not stop root, so simulate it)
        raise PermissionError(13, "Permission denied", str(self))

    with monkeypatch.context() as m:
        m.setattr(type(tmp_path), "mkdir", read_only)
        assert main(run + [str(tmp_path / "ro")]) == 1
        assert "permission denied" in _one_error_line(capsys)

    (tmp_path / "d" / "demo" / "quick.json").mkdir(parents=True)  # a folder where a file should be
    (tmp_path / "d" / "demo" / "quick.csv").write_text("")
    assert main(run + [str(tmp_path / "d")]) == 1
    assert "a folder stands where a file is needed" in _one_error_line(capsys)


def test_cli_disk_error_while_writing_is_one_line_and_exit_1(tmp_path, capsys, monkeypatch):
    import errno

    import assocmem.sweeps.store as store

    real = store._write_all

    def full_disk(fd, data):  # the journal header is written, the first point's line is not
        if b'"key"' in data:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    monkeypatch.setattr(store, "_write_all", full_disk)
    argv = ["sweep", "demo", "--preset", "quick", "--device", "cpu", "--results-dir", str(tmp_path)]
    assert main(argv) == 1
    line = _one_error_line(capsys)
    assert line.startswith("error: cannot read or write the results: No space left on device")


def test_cli_results_dir_through_a_file_in_a_subprocess(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    env = {**os.environ, "ASSOCMEM_QUIET": "1"}
    cmd = [sys.executable, "-m", "assocmem", "sweep", "demo", "--device", "cpu", "--results-dir", str(afile / "x")]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        f"error: cannot create the results folder {afile / 'x' / 'demo'}: a part of the path is a file, not a folder "
        f"({afile / 'x' / 'demo'}); give a results folder (--results-dir) that can be created and written"]


def test_cli_set_overrides_fields_and_stores_the_run_under_its_own_name(tmp_path, capsys, monkeypatch):
    """``--set key=value`` (issue 29, item 6): typed, checked, never stored as the preset."""
    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    argv = ["sweep", "demo", "--device", "cpu", "--results-dir", str(tmp_path), "--set", "trials=3",
            "--set", "d_ks=8,16", "--label", "small"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "demo/small:" in out and not (tmp_path / "demo" / "quick.csv").exists()
    stored = read_provenance("demo", "small", tmp_path)["config"]
    assert stored["trials"] == 3 and stored["d_ks"] == [8, 16]
    quick = get_sweep("demo").config("quick")
    assert stored["ratios"] == list(quick.ratios)  # the other fields are the preset's
    assert main(argv[:-2]) == 0  # the default label names the overridden config
    assert any(p.name.startswith("quick_set_") for p in (tmp_path / "demo").iterdir())
    for bad, msg in ((["--set", "trial=3"], "no field 'trial'; fields: d_ks"),
                     (["--set", "trials=many"], "trials: expected an integer"),
                     (["--set", "trials=-5"], "trials must be an integer >= 1"),
                     (["--set", "d_ks=16,-32"], "d_ks must be positive integers"),
                     (["--set", "trials"], "--set takes KEY=VALUE"),
                     (["--label", "x"], "--label names a run with --set"),
                     (["--set", "trials=3", "--label", "../../evil"], "--label must be a file name"),
                     (["--set", "trials=3", "--label", "a/b"], "got 'a/b'")):
        with pytest.raises(SystemExit) as info:
            main(["sweep", "demo", "--results-dir", str(tmp_path), *bad])
        assert info.value.code == 2 and msg in capsys.readouterr().err


def test_cli_list_with_a_name_lists_that_sweep(capsys):
    assert main(["sweep", "demo", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("demo:") and "capacity:" not in out
    assert main(["sweep", "nope", "--list"]) == 2
    assert "valid sweeps:" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["sweep", "--list"], ["--help"], ["sweep", "--help"], []])
def test_listing_and_help_import_no_sweep_and_no_torch(argv):
    """``--list`` and ``--help`` answer from argparse and the static sweep index: no sweep module,
    no torch, numpy or pandas is imported (they cost seconds), checked in a fresh interpreter."""
    code = ("import sys\nfrom assocmem.__main__ import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy', 'pandas')\n"
            "               or m.endswith('_sweeps') or m == 'assocmem.sweeps')\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines()[-1] == "HEAVY []", out.stdout[-2000:]


def test_cli_list_reads_the_index_and_says_what_the_registry_says(capsys):
    from assocmem.sweeps import get_sweep
    from assocmem.sweeps.registry import sweep_index

    assert main(["sweep", "--list"]) == 0
    blocks = capsys.readouterr().out.split("\n")
    names = sweep_index()
    assert {"demo", "capacity", "memory_table", "convergence"} <= set(names)
    for name in names:
        sw = get_sweep(name)
        i = blocks.index(f"{name}: {sw.description}")
        assert blocks[i + 1:i + 1 + len(sw.presets)] == [
            f"    {label:<8} {len(sw.grid(cfg))} points" for label, cfg in sw.presets.items()]


def test_cli_list_with_a_name_shows_the_presets_configs(capsys):
    assert main(["sweep", "demo", "--list"]) == 0
    out = capsys.readouterr().out
    assert "trials=200" in out and "d_ks=[8, 16]" in out
