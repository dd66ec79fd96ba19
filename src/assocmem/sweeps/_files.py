"""The results store's files at the lowest level (private): CSV text, durable writes, errors in words.

:func:`format_value` and :func:`format_line` make the CSV text of a row (re-exported by
:mod:`assocmem.sweeps.store`). Every write the store makes goes through here: :func:`write_all`
(a write that either writes every byte or raises), :func:`atomic_write` (temporary file, ``fsync``, ``os.replace``, ``fsync`` of the
folder; the temporary file is removed if the write fails) and :func:`fsync_dir`.
:func:`describe_os_error` turns an :class:`OSError` into the few words a person needs ("a part of
the path is a file, not a folder"). :func:`is_book_repository` tells the book's repository from
another project's (for the default results folder).
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "describe_os_error", "format_line", "format_value", "fsync_dir", "grid_hash",
           "is_book_repository", "write_all"]


def format_value(value: Any) -> str:
    """The CSV text of one scalar: ``repr`` for floats (round-trips exactly), ``""`` for None/NaN.

    Booleans are written ``True``/``False``; infinities ``inf``/``-inf``. pandas reads all of
    these back to the same values (``""`` as NaN).

    Raises
    ------
    TypeError
        A value that is not None, a bool, a Python int or float, or a str.
    ValueError
        A str holding a line break (a results row is one line of the file).
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            raise ValueError(f"cannot store {value!r} in a results file: a value may not contain a line break")
        return value
    raise TypeError(f"cannot store {type(value).__name__} {value!r} in a results file")


def format_line(fields: Sequence[str]) -> str:
    """One CSV line (quoted where needed) ending in ``\\n``.

    Raises
    ------
    TypeError
        ``fields`` is a str or a mapping (its characters or keys would become the fields), or a
        field is not a str (format values with :func:`format_value` first).
    """
    if isinstance(fields, (str, bytes, Mapping)) or not isinstance(fields, Sequence):
        raise TypeError(f"fields must be a sequence of str, got {type(fields).__name__}")
    if not all(isinstance(f, str) for f in fields):
        raise TypeError("every field must be a str (format values with format_value first)")
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def _parse_line(line: str) -> list[str]:
    return next(csv.reader([line]))


def grid_hash(keys: Sequence[str]) -> str:
    """SHA-256 of a grid's canonical point keys, in grid order.

    Raises
    ------
    TypeError
        ``keys`` is a str (its characters would be hashed) or holds a key that is not a str.
    """
    if isinstance(keys, (str, bytes)) or not all(isinstance(k, str) for k in keys):
        raise TypeError("keys must be a sequence of canonical point keys (str), not a str")
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fsync_dir(folder: Path) -> None:
    """``fsync`` a folder so that a file created, renamed or removed in it is durable."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms that cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write fewer), or raise ``OSError``."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - os.write raises rather than return 0 on regular files
            raise OSError(errno.EIO, "short write")
        view = view[written:]


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` in one step: temporary file, fsync, ``os.replace``, fsync folder.

    If any step fails the temporary file is removed and ``path`` is as it was.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # pragma: no cover - the original error matters more
            pass
        raise
    fsync_dir(path.parent)


_REASONS = {
    NotADirectoryError: "a part of the path is a file, not a folder",
    FileExistsError: "a file of that name exists where a folder is needed",
    IsADirectoryError: "a folder stands where a file is needed",
    PermissionError: "permission denied",
    FileNotFoundError: "no such file or folder",
}


def describe_os_error(exc: OSError) -> str:
    """``exc`` in words, with the path it concerns: ``"permission denied (/srv/results/demo)"``."""
    reason = next((text for kind, text in _REASONS.items() if isinstance(exc, kind)), None)
    if reason is None:
        reason = exc.strerror or str(exc) or type(exc).__name__
        if exc.errno == errno.EROFS:
            reason = "read-only file system"
    where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
    return reason + where


def is_book_repository(folder: Path) -> bool:
    """Whether ``folder`` holds a ``pyproject.toml`` of the project ``assocmem``."""
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # Python 3.10: the [project] table's name line
        table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
        return bool(table and re.search(r"^name\s*=\s*[\"']assocmem[\"']\s*$", table.group(1), re.M))
    try:
        project = tomllib.loads(text).get("project")
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(project, dict) and project.get("name") == "assocmem"
