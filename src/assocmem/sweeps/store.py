"""Results store: ``results/<sweep>/<preset>.csv`` with ``<preset>.json`` provenance beside it.

Layout
------
``<preset>.csv``
    Tidy table, one line per row: the point's key columns, the result fields, ``seed`` and
    ``wall_time_s``. A finished sweep's file is ordered like the grid (``points(config)``).
``<preset>.json``
    Provenance: config, git commit, package versions, device, executor, wall time, date, machine,
    and, once finished, the SHA-256 of the CSV.
``<preset>.journal``
    Exists only while a run is unfinished (running, or interrupted). Its first line holds the
    config and a hash of the grid; each further line commits one finished point: its key, how
    many rows it wrote, the CSV's length in bytes after them and the SHA-256 of those rows.

Atomicity and resume
--------------------
A finished point is committed in two durable steps: its rows are appended to the CSV and
``fsync``-ed, then its journal line is appended and ``fsync``-ed. A point is done if and only if
its journal line is complete. A process killed at any moment leaves at most an unfinished tail:
bytes in the CSV past the last committed length, and/or a journal line without its newline. On
reopening, that tail (and only that) is cut off and its point runs again; every committed point
is checked against the journal (lengths, row counts, header, key columns, the hash of its rows, so
that a row edited by hand to a value of the same length is caught) and never recomputed.
A commit that fails inside a live process (a full disk, an interrupt) is undone on the spot: the
CSV and the journal are cut back to their committed lengths and the store is as it was.

Finishing a run writes the JSON with ``status: "complete"`` and the CSV's hash, then replaces the
CSV by its grid-ordered version (temporary file, ``fsync``, ``os.replace``), then deletes the
journal. Each step is atomic and reopening recognises every state in between.

Anything else is corruption and raises :class:`CorruptResultsError` rather than being extended:
a committed region shorter than the journal says, a partial last line or a wrong header in a
finished file, a point whose rows appear twice, a row count or hash that disagrees with the
provenance, unparsable JSON. A stored config that differs from the requested one raises
:class:`ConfigMismatchError`. Both say how to start over (``--force``).

An exclusive ``fcntl.flock`` on the journal keeps two processes from running the same preset
into the same folder at once (where ``fcntl`` exists).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from assocmem.sweeps._files import _parse_line, _sha256, describe_os_error, format_line, format_value, grid_hash, is_book_repository
from assocmem.sweeps._files import atomic_write as _atomic_write
from assocmem.sweeps._files import fsync_dir as _fsync_dir
from assocmem.sweeps._files import write_all as _write_all
from assocmem._checks import as_bool

try:  # POSIX only; elsewhere runs are not protected against a concurrent second run
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

__all__ = [
    "load_largest_results",
    "SCHEMA",
    "ResultsError",
    "CorruptResultsError",
    "ConfigMismatchError",
    "ResultsLockedError",
    "ResultsPaths",
    "ResultsStore",
    "default_results_dir",
    "format_value",
    "format_line",
    "grid_hash",
    "read_provenance",
    "load_results",
]

#: Version of the on-disk layout, recorded in the journal and the provenance.
SCHEMA = 1

log = logging.getLogger("assocmem.sweeps")


class ResultsError(RuntimeError):
    """Base class of the results store's errors."""


class CorruptResultsError(ResultsError):
    """A results, journal or provenance file is truncated, edited or otherwise inconsistent."""


class ConfigMismatchError(ResultsError):
    """The stored results were made with another config (or grid) than the one requested."""


class ResultsLockedError(ResultsError):
    """Another process is running the same sweep and preset into the same folder."""


_FORCE_HINT = "rerun with --force (run_sweep(..., force=True)) to discard them and start over"


# --------------------------------------------------------------------------------------------
# Paths and low-level durable writes


def default_results_dir() -> Path:
    """Where results live when no folder is given.

    ``$ASSOCMEM_RESULTS_DIR`` if set; else ``results/`` at the root of the book's own repository
    when the working directory is inside it (the nearest folder, from the working directory
    upwards, whose ``pyproject.toml`` declares the project ``assocmem``; also when a notebook runs
    in ``notebooks/``); else ``./results`` in the working directory. Another project's repository
    is never taken for the book's: a ``pyproject.toml`` of another name is passed over.
    """
    env = os.environ.get("ASSOCMEM_RESULTS_DIR")
    if env:
        return Path(env)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if is_book_repository(folder):
            return folder / "results"
    return here / "results"


_FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ResultsPaths:
    """The three files of one sweep and preset."""

    csv: Path  # results/<sweep>/<preset>.csv, the tidy table
    json: Path  # results/<sweep>/<preset>.json, the provenance
    journal: Path  # results/<sweep>/<preset>.journal, present only while a run is unfinished

    @classmethod
    def of(cls, results_dir: str | os.PathLike | None, sweep: str, preset: str) -> ResultsPaths:
        """Paths for ``sweep`` and ``preset`` under ``results_dir`` (default :func:`default_results_dir`).

        Raises
        ------
        TypeError
            If ``results_dir`` is not a str, os.PathLike or None.
        ValueError
            If ``results_dir`` is the empty string, or ``sweep`` or ``preset`` is not a file name
            (letters, digits, ``_``, ``.``, ``-``; not starting with ``.`` or ``-``): a name such as
            ``"../x"`` or ``"a/b"`` would put the files outside the sweep's folder.
        """
        if results_dir is not None and not isinstance(results_dir, (str, os.PathLike)):
            raise TypeError(f"results_dir must be a path (str or os.PathLike) or None, got "
                            f"{type(results_dir).__name__} {results_dir!r}")
        if isinstance(results_dir, str) and not results_dir:
            raise ValueError("results_dir must not be empty (give '.' for the working directory)")
        for what, name in (("sweep", sweep), ("preset", preset)):
            if not isinstance(name, str) or not _FILE_NAME.match(name):
                raise ValueError(f"{what} must be a name of letters, digits, '_', '.' or '-' (not starting with "
                                 f"'.' or '-'), got {name!r}")
        folder = Path(results_dir if results_dir is not None else default_results_dir()) / sweep
        return cls(folder / f"{preset}.csv", folder / f"{preset}.json", folder / f"{preset}.journal")


def _json_bytes(obj: dict) -> bytes:
    return (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode()


def _read_json(path: Path) -> dict:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptResultsError(f"{path} is not valid JSON ({exc}); {_FORCE_HINT}") from None
    if not isinstance(obj, dict):
        raise CorruptResultsError(f"{path} does not hold a JSON object; {_FORCE_HINT}")
    return obj


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:  # pragma: no cover
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ResultsLockedError(f"{path} is locked: another process is running this sweep and preset") from None


# --------------------------------------------------------------------------------------------
# Parsing and checking what is on disk


@dataclass(frozen=True)
class _Entry:
    key: str  # canonical key of the point
    rows: int  # rows it wrote
    end: int  # CSV length in bytes after its rows
    sha256: str | None = None  # SHA-256 of its rows' bytes (None in journals written before it was kept)


def _split_journal(data: bytes, path: Path) -> tuple[dict | None, list[_Entry], int]:
    """Parse a journal. Returns its header, its entries, and the length of its complete lines."""
    complete = data.rfind(b"\n") + 1
    lines = data[:complete].split(b"\n")[:-1]
    if not lines:
        return None, [], complete
    parsed = []
    for i, line in enumerate(lines, start=1):
        try:
            obj = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise CorruptResultsError(f"{path}: line {i} is not valid JSON; {_FORCE_HINT}") from None
        if not isinstance(obj, dict):
            raise CorruptResultsError(f"{path}: line {i} is not a JSON object; {_FORCE_HINT}")
        parsed.append(obj)
    header = parsed[0]
    need = ("schema", "sweep", "preset", "config", "grid_sha256", "point_columns")
    if any(k not in header for k in need):
        raise CorruptResultsError(f"{path}: the first line lacks one of {need}; {_FORCE_HINT}")
    entries: list[_Entry] = []
    seen: set[str] = set()
    for i, obj in enumerate(parsed[1:], start=2):
        key, rows, end, digest = obj.get("key"), obj.get("rows"), obj.get("end"), obj.get("sha256")
        if not (isinstance(key, str) and isinstance(rows, int) and rows >= 1 and isinstance(end, int)
                and (digest is None or isinstance(digest, str))):
            raise CorruptResultsError(f"{path}: line {i} is not a point entry; {_FORCE_HINT}")
        if key in seen:
            raise CorruptResultsError(f"{path}: point {key} is committed twice (line {i}); {_FORCE_HINT}")
        if entries and end <= entries[-1].end:
            raise CorruptResultsError(f"{path}: line {i} does not advance the results file; {_FORCE_HINT}")
        seen.add(key)
        entries.append(_Entry(key, rows, end, digest))
    if entries and "columns" not in header:
        columns = parsed[1].get("columns")
        if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
            raise CorruptResultsError(f"{path}: line 2 lacks the column names; {_FORCE_HINT}")
        header = {**header, "columns": columns}
    return header, entries, complete


def _check_committed(raw: bytes, path: Path, columns: list[str], point_columns: list[str], entries: list[_Entry]):
    """Check the committed region ``raw`` of a running CSV against its journal entries.

    Returns ``{key: bytes of its rows}``.
    """
    if list(columns[: len(point_columns)]) != list(point_columns):
        raise CorruptResultsError(f"{path}: the journal's columns do not start with the point's keys; {_FORCE_HINT}")
    head = format_line(columns).encode()
    if not raw.startswith(head):
        found = raw.split(b"\n", 1)[0].decode("utf-8", "replace")
        raise CorruptResultsError(
            f"{path}: wrong header: expected {head.decode().strip()!r}, found {found!r}; {_FORCE_HINT}"
        )
    blocks: dict[str, bytes] = {}
    pos = len(head)
    for e in entries:
        chunk = raw[pos : e.end]
        if e.end <= pos or not chunk.endswith(b"\n"):
            raise CorruptResultsError(f"{path}: rows of point {e.key} do not end where the journal says; {_FORCE_HINT}")
        try:
            lines = chunk.decode("utf-8").split("\n")[:-1]
        except UnicodeDecodeError:
            raise CorruptResultsError(f"{path}: rows of point {e.key} are not UTF-8; {_FORCE_HINT}") from None
        if len(lines) != e.rows:
            raise CorruptResultsError(
                f"{path}: point {e.key} has {len(lines)} rows, its journal entry says {e.rows}; {_FORCE_HINT}"
            )
        want_by_col = {k: format_value(v) for k, v in json.loads(e.key).items()}
        for line in lines:
            fields = _parse_line(line)
            if len(fields) != len(columns):
                raise CorruptResultsError(
                    f"{path}: a row of point {e.key} has {len(fields)} fields, not {len(columns)}; {_FORCE_HINT}"
                )
            got = dict(zip(point_columns, fields))
            if any(got[c] != want_by_col.get(c) for c in point_columns):
                raise CorruptResultsError(f"{path}: a row filed under point {e.key} reads {line!r}; {_FORCE_HINT}")
        if e.sha256 is not None and _sha256(chunk) != e.sha256:
            raise CorruptResultsError(
                f"{path}: the rows of point {e.key} differ from those committed (edited by hand?); {_FORCE_HINT}"
            )
        blocks[e.key] = chunk
        pos = e.end
    return blocks


def _check_finished_csv(raw: bytes, path: Path, prov: dict) -> None:
    """Check a finished CSV against its provenance: structure first (clear messages), then hash."""
    columns, point_columns = prov.get("columns"), prov.get("point_columns")
    if not isinstance(columns, list) or not isinstance(point_columns, list):
        raise CorruptResultsError(f"{path.with_suffix('.json')}: provenance lacks the column names; {_FORCE_HINT}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptResultsError(f"{path} is not UTF-8 text; {_FORCE_HINT}") from None
    if not text:
        raise CorruptResultsError(f"{path} is empty; {_FORCE_HINT}")
    if not text.endswith("\n"):
        raise CorruptResultsError(f"{path}: partial last line (the file is truncated); {_FORCE_HINT}")
    lines = text[:-1].split("\n")
    head = format_line(columns)[:-1]
    if lines[0] != head:
        raise CorruptResultsError(f"{path}: wrong header: expected {head!r}, found {lines[0]!r}; {_FORCE_HINT}")
    k = len(point_columns)
    per_point = prov.get("rows_per_point")
    counts: dict[tuple, int] = {}
    previous = None
    for number, line in enumerate(lines[1:], start=2):
        try:
            fields = _parse_line(line)
        except (csv.Error, StopIteration):
            raise CorruptResultsError(f"{path}: line {number} cannot be parsed; {_FORCE_HINT}") from None
        if len(fields) != len(columns):
            raise CorruptResultsError(
                f"{path}: line {number} has {len(fields)} fields, the header {len(columns)}; {_FORCE_HINT}"
            )
        point = tuple(fields[:k])
        if point != previous and point in counts:
            raise CorruptResultsError(
                f"{path}: line {number} duplicates point {point} of an earlier line; {_FORCE_HINT}"
            )
        counts[point] = counts.get(point, 0) + 1
        if per_point is not None and counts[point] > per_point:
            raise CorruptResultsError(
                f"{path}: line {number} is a duplicate row: point {point} has more than {per_point} row(s); "
                f"{_FORCE_HINT}"
            )
        previous = point
    if len(lines) - 1 != prov.get("n_rows") or len(counts) != prov.get("n_points"):
        raise CorruptResultsError(
            f"{path}: {len(lines) - 1} rows for {len(counts)} points, the provenance records "
            f"{prov.get('n_rows')} rows for {prov.get('n_points')} points (rows missing or duplicated); {_FORCE_HINT}"
        )
    if _sha256(raw) != prov.get("csv_sha256"):
        raise CorruptResultsError(
            f"{path}: contents differ from those recorded in the provenance (edited?); {_FORCE_HINT}"
        )


def _config_diff(stored: Any, wanted: dict) -> str:
    if not isinstance(stored, dict):
        return "stored config is missing"
    keys = sorted(set(stored) | set(wanted))
    diffs = [f"{k}: stored {stored.get(k, '<absent>')!r}, requested {wanted.get(k, '<absent>')!r}"
             for k in keys if stored.get(k) != wanted.get(k)]
    return "; ".join(diffs)


def _frame(raw: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(raw), keep_default_na=False, na_values=[""])


# --------------------------------------------------------------------------------------------
# The store used by the engine


class ResultsStore:
    """Durable, resumable storage of one sweep's results under one preset.

    The engine calls :meth:`open` (lock, check, recover; returns the points already done),
    :meth:`append` once per finished point, :meth:`write_provenance` to keep the JSON current,
    :meth:`finish` when every point is done, and :meth:`close` in any case. See the module
    docstring for the on-disk protocol.

    Parameters
    ----------
    results_dir : path or None
        Folder holding one folder per sweep (default :func:`default_results_dir`).
    sweep, preset : str
        Names; the files are ``<results_dir>/<sweep>/<preset>.{csv,json,journal}``.
    """

    def __init__(self, results_dir: str | os.PathLike | None, sweep: str, preset: str) -> None:
        self.sweep, self.preset = sweep, preset
        self.paths = ResultsPaths.of(results_dir, sweep, preset)
        self.previous: dict | None = None  # provenance found on disk (sessions of earlier runs)
        self.complete = False  # a finished run with the same config and grid is stored
        self.columns: list[str] | None = None
        self._entries: list[_Entry] = []
        self._journal: int | None = None
        self._csv = None
        self._broken = False  # an append failed and could not be undone: refuse further appends

    # -- opening ---------------------------------------------------------------------------

    def open(
        self, *, config: dict, grid_keys: Sequence[str], point_columns: Sequence[str], force: bool = False
    ) -> set[str]:
        """Lock and check what is stored, cut off an unfinished tail, and return the done keys.

        Parameters
        ----------
        config : dict
            The requested config as JSON (:func:`assocmem.sweeps.config.config_to_json`).
        grid_keys : sequence of str
            Canonical keys of the grid, in grid order.
        point_columns : sequence of str
            Names of the point's key columns (the CSV's first columns).
        force : bool, default False
            Delete whatever is stored and start afresh.

        Returns
        -------
        set of str
            Keys of points already committed (all of them when a finished run is stored).

        Raises
        ------
        CorruptResultsError, ConfigMismatchError, ResultsLockedError
        ResultsError
            Also when the folder cannot be created or its files cannot be read or written (a path
            through a file, no permission, a read-only file system); the message says which
            folder and why.
        """
        self._config, self._grid_keys = config, list(grid_keys)
        self._point_columns, self._grid_sha = list(point_columns), grid_hash(grid_keys)
        folder = self.paths.csv.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create the results folder {folder}: {describe_os_error(exc)}; "
                               "give a results folder (--results-dir) that can be created and written") from exc
        try:
            return self._open(force)
        except OSError as exc:
            raise ResultsError(f"cannot use the results in {folder}: {describe_os_error(exc)}") from exc

    def _open(self, force: bool) -> set[str]:
        if force:
            self._discard()
        for _ in range(3):  # the state may change under us once, when another run finishes
            p = self.paths
            if p.journal.exists():
                try:
                    fd = os.open(p.journal, os.O_RDWR | os.O_APPEND)
                except FileNotFoundError:
                    continue
                _lock(fd, p.journal)
                self._journal = fd  # closed by close() whatever happens next
                prov = _read_json(p.json) if p.json.exists() else None
                if (prov and prov.get("status") == "complete" and p.csv.exists()
                        and _sha256(p.csv.read_bytes()) == prov.get("csv_sha256")):
                    # Interrupted after the finished CSV was in place: only the journal is left over.
                    p.journal.unlink()
                    _fsync_dir(p.csv.parent)
                    self.close()
                    continue
                self.previous = prov
                self._remove_temporaries()
                return self._recover()
            if p.csv.exists() or p.json.exists():
                self.previous = self._check_finished()
                self.complete = True
                self.columns = self.previous["columns"]
                return set(self._grid_keys)
            try:
                fd = os.open(p.journal, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_APPEND, 0o644)
            except FileExistsError:
                continue
            _lock(fd, p.journal)
            self._journal = fd
            self._remove_temporaries()
            self._write_journal_header()
            _fsync_dir(p.csv.parent)
            return set()
        raise ResultsError(f"{self.paths.csv.parent}: the stored results kept changing while being opened")

    def _remove_temporaries(self) -> None:
        """Delete temporary files an interrupted atomic write left behind (we hold the lock)."""
        for path in (self.paths.csv, self.paths.json):
            for tmp in path.parent.glob(f".{path.name}.*.tmp"):
                tmp.unlink(missing_ok=True)

    def _discard(self) -> None:
        p = self.paths
        if p.journal.exists():
            fd = os.open(p.journal, os.O_RDWR)
            _lock(fd, p.journal)
            try:
                for path in (p.csv, p.json):
                    path.unlink(missing_ok=True)
                p.journal.unlink(missing_ok=True)
            finally:
                os.close(fd)
        else:
            for path in (p.csv, p.json):
                path.unlink(missing_ok=True)
        _fsync_dir(p.csv.parent)

    def _write_journal_header(self) -> None:
        header = {"schema": SCHEMA, "sweep": self.sweep, "preset": self.preset, "config": self._config,
                  "grid_sha256": self._grid_sha, "point_columns": self._point_columns}
        _write_all(self._journal, (json.dumps(header, allow_nan=False) + "\n").encode())
        os.fsync(self._journal)

    def _recover(self) -> set[str]:
        p, fd = self.paths, self._journal
        os.lseek(fd, 0, os.SEEK_SET)
        data = b""
        while chunk := os.read(fd, 1 << 20):
            data += chunk
        header, entries, complete = _split_journal(data, p.journal)
        if complete < len(data):
            log.warning("%s: dropping an unfinished journal line left by an interrupted run", p.journal)
            os.ftruncate(fd, complete)
            os.fsync(fd)
        if header is None:  # interrupted before the header was written: nothing is committed
            p.csv.unlink(missing_ok=True)
            self._write_journal_header()
            return set()
        if header["sweep"] != self.sweep or header["preset"] != self.preset:
            raise CorruptResultsError(f"{p.journal} belongs to {header['sweep']}/{header['preset']}; {_FORCE_HINT}")
        if header["config"] != self._config:
            raise ConfigMismatchError(
                f"{p.journal}: an unfinished run with another config is stored "
                f"({_config_diff(header['config'], self._config)}); {_FORCE_HINT}"
            )
        if header["grid_sha256"] != self._grid_sha or header["point_columns"] != self._point_columns:
            raise ConfigMismatchError(f"{p.journal}: the sweep's grid changed since this run started; {_FORCE_HINT}")
        self._entries = entries
        if not entries:
            if p.csv.exists():
                log.warning("%s: removing rows of a point that never finished", p.csv)
                p.csv.unlink()
            return set()
        columns = header["columns"]
        if not p.csv.exists():
            raise CorruptResultsError(
                f"{p.journal} commits {len(entries)} points but {p.csv} is missing; {_FORCE_HINT}"
            )
        size = p.csv.stat().st_size
        end = entries[-1].end
        if size < end:
            raise CorruptResultsError(
                f"{p.csv} is truncated: {size} bytes, but its journal committed {end}; {_FORCE_HINT}"
            )
        with open(p.csv, "rb") as f:
            raw = f.read(end)
        _check_committed(raw, p.csv, columns, self._point_columns, entries)
        if size > end:
            log.warning("%s: discarding %d bytes of a point that never finished", p.csv, size - end)
            with open(p.csv, "r+b") as f:
                f.truncate(end)
                f.flush()
                os.fsync(f.fileno())
        self.columns = columns
        return {e.key for e in entries}

    def _check_finished(self) -> dict:
        p = self.paths
        if not p.json.exists():
            raise CorruptResultsError(f"{p.csv} has no provenance file {p.json.name}; {_FORCE_HINT}")
        prov = _read_json(p.json)
        if prov.get("status") != "complete":
            raise CorruptResultsError(
                f"{p.json} says the run is {prov.get('status')!r} but its journal is missing; {_FORCE_HINT}"
            )
        if not p.csv.exists():
            raise CorruptResultsError(f"{p.json} describes results but {p.csv.name} is missing; {_FORCE_HINT}")
        if prov.get("sweep") != self.sweep or prov.get("preset") != self.preset:
            raise CorruptResultsError(f"{p.json} belongs to {prov.get('sweep')}/{prov.get('preset')}; {_FORCE_HINT}")
        if prov.get("config") != self._config:
            raise ConfigMismatchError(
                f"{p.json}: the stored results were made with another config "
                f"({_config_diff(prov.get('config'), self._config)}); {_FORCE_HINT}"
            )
        if prov.get("grid_sha256") != self._grid_sha or prov.get("point_columns") != self._point_columns:
            raise ConfigMismatchError(
                f"{p.json}: the sweep's grid changed since these results were made; {_FORCE_HINT}"
            )
        _check_finished_csv(p.csv.read_bytes(), p.csv, prov)
        return prov

    # -- writing ---------------------------------------------------------------------------

    def append(self, key: str, lines: Sequence[str], columns: Sequence[str]) -> None:
        """Commit one finished point: append its CSV lines durably, then its journal line.

        All or nothing: if any step fails (a full disk, an interrupt), the bytes this call wrote
        to the CSV and the journal are cut off again and the store is exactly as before, so the
        call can be retried and the files never hold half a point. (A process killed outright
        leaves an unfinished tail, which the next :meth:`open` cuts off.)

        Parameters
        ----------
        key : str
            Canonical key of the point.
        lines : sequence of str
            Its rows, at least one, each one line from :func:`format_line` (ending in ``"\\n"``).
        columns : sequence of str
            The column names; fixed by the first committed point.

        Raises
        ------
        ValueError
            If ``columns`` differ from those already stored, ``lines`` is empty or holds something
            that is not one CSV line, or ``key`` is already committed.
        ResultsError
            If the store is not open, or an earlier failed append could not be undone.
        OSError
            If a write fails (after the rollback described above).
        """
        if self._journal is None or self._broken:
            raise ResultsError(f"{self.paths.csv}: the store is " + (
                "not open" if self._journal is None else "unusable after a failed write; reopen it"))
        columns = list(columns)
        if self.columns is not None and columns != self.columns:
            raise ValueError(f"point {key} returned columns {columns}; this sweep's rows have {self.columns}")
        lines = list(lines)
        if not lines or any(not isinstance(x, str) or not x.endswith("\n") or x.count("\n") != 1 for x in lines):
            raise ValueError(f"point {key}: lines must be one or more CSV lines, each ending in a newline")
        if any(e.key == key for e in self._entries):
            raise ValueError(f"point {key} is already committed to {self.paths.csv}")
        prefix = format_line(columns) if self.columns is None else ""
        data = (prefix + "".join(lines)).encode("utf-8")
        journal_end = os.lseek(self._journal, 0, os.SEEK_END)
        created = self._csv is None and not self.paths.csv.exists()
        csv_end = self._entries[-1].end if self._entries else 0
        try:
            if self._csv is None:
                self._csv = open(self.paths.csv, "ab")
            self._csv.write(data)
            self._csv.flush()
            os.fsync(self._csv.fileno())
            if created:
                _fsync_dir(self.paths.csv.parent)
            digest = _sha256("".join(lines).encode("utf-8"))
            entry = {"key": key, "rows": len(lines), "end": self._csv.tell(), "sha256": digest}
            if not self._entries:
                entry["columns"] = columns
            _write_all(self._journal, (json.dumps(entry, allow_nan=False) + "\n").encode())
            os.fsync(self._journal)
        except BaseException:
            self._undo_append(csv_end, journal_end, created)
            raise
        self.columns = columns
        self._entries.append(_Entry(key, len(lines), entry["end"], digest))

    def _undo_append(self, csv_end: int, journal_end: int, created: bool) -> None:
        """Cut the CSV and the journal back to their committed lengths after a failed append."""
        try:
            if self._csv is not None:
                csv_file, self._csv = self._csv, None
                try:
                    csv_file.close()  # may try to flush what is left in its buffer: cut off below
                except OSError:
                    pass
            if created:
                self.paths.csv.unlink(missing_ok=True)
            elif self.paths.csv.exists():
                os.truncate(self.paths.csv, csv_end)
            os.ftruncate(self._journal, journal_end)
            os.fsync(self._journal)
        except BaseException:  # the files keep an unfinished tail that open() cuts off; refuse to go on
            self._broken = True
            log.warning("%s: could not undo a failed append; reopen the store to recover", self.paths.csv)

    def write_provenance(self, provenance: dict) -> None:
        """Atomically replace the JSON provenance (called as the run progresses)."""
        _atomic_write(self.paths.json, _json_bytes(provenance))

    def finish(self, provenance: dict) -> None:
        """Write the finished, grid-ordered CSV and its provenance; delete the journal.

        ``provenance`` is completed here with ``status``, the column names, the row and point
        counts, ``rows_per_point`` (when all points wrote the same number) and the CSV's SHA-256.

        Raises
        ------
        ResultsError
            If some grid point has not been committed.
        """
        if self.complete:
            return
        p = self.paths
        if self._csv is not None:
            self._csv.close()
            self._csv = None
        if not self._entries:
            raise ResultsError(f"cannot finish {p.csv}: no point is done")
        with open(p.csv, "rb") as f:
            raw = f.read(self._entries[-1].end)
        blocks = _check_committed(raw, p.csv, self.columns, self._point_columns, self._entries)
        missing = [k for k in self._grid_keys if k not in blocks]
        if missing:
            raise ResultsError(f"cannot finish {p.csv}: {len(missing)} points are not done, e.g. {missing[0]}")
        content = format_line(self.columns).encode() + b"".join(blocks[k] for k in self._grid_keys)
        counts = {e.rows for e in self._entries}
        provenance.update(
            status="complete",
            columns=self.columns,
            point_columns=self._point_columns,
            n_points=len(self._grid_keys),
            n_rows=sum(e.rows for e in self._entries),
            rows_per_point=counts.pop() if len(counts) == 1 else None,
            grid_sha256=self._grid_sha,
            csv_sha256=_sha256(content),
        )
        _atomic_write(p.json, _json_bytes(provenance))
        _atomic_write(p.csv, content)
        p.journal.unlink()
        _fsync_dir(p.csv.parent)
        self.complete = True

    def close(self) -> None:
        """Close files and release the lock (what is committed stays committed)."""
        if self._csv is not None:
            self._csv.close()
            self._csv = None
        if self._journal is not None:
            os.close(self._journal)
            self._journal = None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# Reading


def read_provenance(sweep: str, preset: str, results_dir: str | os.PathLike | None = None) -> dict:
    """The provenance JSON of stored results.

    Parameters
    ----------
    sweep, preset : str
    results_dir : path or None
        Default :func:`default_results_dir`.

    Returns
    -------
    dict
        Config, git commit, versions, device, executor, wall time, date, machine, sessions, ...

    Raises
    ------
    FileNotFoundError
        If nothing is stored. The message gives the command that computes the results, or,
        when ``sweep`` is not a registered sweep, says so and lists the registered ones.
    CorruptResultsError
        If the JSON cannot be parsed.
    ValueError, TypeError
        If a name or ``results_dir`` is not valid (:meth:`ResultsPaths.of`).
    """
    path = ResultsPaths.of(results_dir, sweep, preset).json
    if not path.exists():
        raise FileNotFoundError(f"no results stored at {path}; {_how_to_compute(sweep, preset)}")
    return _read_json(path)


def _how_to_compute(sweep: str, preset: str) -> str:
    """The advice of a missing-results error: the command to run, or that the sweep is unknown."""
    from assocmem.sweeps.registry import sweep_names  # here, not at import time: the registry imports the sweeps

    try:
        names = sweep_names()
    except Exception:  # a sweep module that fails to import must not hide the missing file
        names = None
    if names is not None and sweep not in names:
        return (f"{sweep!r} is not a registered sweep, so there is nothing to run "
                f"(registered sweeps: {', '.join(names) or 'none'})")
    return f"run `python -m assocmem sweep {sweep} --preset {preset}`"


def load_results(
    sweep: str,
    preset: str,
    results_dir: str | os.PathLike | None = None,
    *,
    config: dict | None = None,
    allow_partial: bool = False,
) -> pd.DataFrame:
    """Read stored results into a DataFrame after checking them.

    Parameters
    ----------
    sweep, preset : str
    results_dir : path or None
        Default :func:`default_results_dir`.
    config : dict or None
        If given (as :func:`assocmem.sweeps.config.config_to_json` makes it), the stored config
        must equal it: this catches results left over from an older preset.
    allow_partial : bool, default False
        Return the committed rows of an unfinished run instead of raising.

    Returns
    -------
    pandas.DataFrame
        One row per stored row, the columns of the CSV (empty cells are NaN). A finished run's
        rows are in grid order; an unfinished run's in the order they finished.

    Raises
    ------
    FileNotFoundError
        If nothing is stored (the message says if ``sweep`` is not a registered sweep).
    ResultsError
        If the run is unfinished and ``allow_partial`` is False.
    CorruptResultsError, ConfigMismatchError
        If the files are inconsistent, or were made with another config.
    ValueError, TypeError
        If a name or ``results_dir`` is not valid (:meth:`ResultsPaths.of`), ``allow_partial`` is
        not a bool, or ``config`` is not a dict (``config_to_json(cfg)``) or None.
    """
    p = ResultsPaths.of(results_dir, sweep, preset)
    allow_partial = as_bool(allow_partial, "allow_partial")
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict as config_to_json(config) makes it, or None; got "
                        f"{type(config).__name__}")
    if p.journal.exists():
        header, entries, _ = _split_journal(p.journal.read_bytes(), p.journal)
        stored = header["config"] if header else None
        if config is not None and header is not None and stored != config:
            raise ConfigMismatchError(f"{p.journal}: stored config differs ({_config_diff(stored, config)})")
        if not allow_partial:
            raise ResultsError(
                f"{p.csv} is unfinished ({len(entries)} points committed); rerun "
                f"`python -m assocmem sweep {sweep} --preset {preset}` to finish it, or pass allow_partial=True"
            )
        if not entries:
            return pd.DataFrame()
        with open(p.csv, "rb") as f:
            raw = f.read(entries[-1].end)
        if len(raw) < entries[-1].end:
            raise CorruptResultsError(f"{p.csv} is truncated: shorter than its journal says")
        _check_committed(raw, p.csv, header["columns"], header["point_columns"], entries)
        return _frame(raw)
    prov = read_provenance(sweep, preset, results_dir)
    if prov.get("status") != "complete":
        raise CorruptResultsError(f"{p.json} says {prov.get('status')!r} but there is no journal; {_FORCE_HINT}")
    if config is not None and prov.get("config") != config:
        raise ConfigMismatchError(f"{p.json}: stored config differs ({_config_diff(prov.get('config'), config)})")
    if not p.csv.exists():
        raise CorruptResultsError(f"{p.json} describes results but {p.csv.name} is missing")
    raw = p.csv.read_bytes()
    _check_finished_csv(raw, p.csv, prov)
    return _frame(raw)


def load_largest_results(sweep: str, presets: Sequence[str] = ("paper", "cpu"),
                         results_dir: str | os.PathLike | None = None
                         ) -> tuple[str, pd.DataFrame]:
    """The stored results of the first of ``presets`` that has been run: ``(preset, frame)``.

    A chapter plots the largest preset someone has computed: list them largest first. A preset
    counts only if it is stored, complete and was made with the preset's *current* config
    (:func:`load_results` with ``config``), so results left over from an older preset are skipped.

    Parameters
    ----------
    sweep : str
        A registered sweep.
    presets : sequence of str, default ("paper", "cpu")
        Presets of that sweep, in order of preference.
    results_dir : path or None
        Default :func:`default_results_dir`.

    Raises
    ------
    FileNotFoundError
        If none of them is stored (the message gives the command that computes the last one).
    UnknownNameError
        If ``sweep`` is not registered or a preset does not exist.
    ValueError
        If ``presets`` is empty (a single name is taken as a one-name list).
    """
    from assocmem.sweeps.config import config_to_json
    from assocmem.sweeps.registry import get_sweep  # here, not at import time: the registry imports the sweeps

    sw = get_sweep(sweep)
    presets = [presets] if isinstance(presets, str) else list(presets)
    if not presets:
        raise ValueError("presets must name at least one preset")
    for preset in presets:
        try:
            frame = load_results(sweep, preset, results_dir, config=config_to_json(sw.config(preset)))
        except FileNotFoundError:
            continue
        return preset, frame
    folder = Path(results_dir) if results_dir is not None else default_results_dir()
    raise FileNotFoundError(f"no {sweep} results stored for any of {list(presets)} in {folder} (outside the "
                            "repository, set ASSOCMEM_RESULTS_DIR to its results/ folder); "
                            f"{_how_to_compute(sweep, list(presets)[-1])}")
