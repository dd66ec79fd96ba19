"""The sweep driver: run the points that are not stored yet and commit each one as it finishes.

:func:`run_sweep` looks the sweep up, builds its grid, opens the results store (which reports
the points already done), sends the remaining points to an executor, and commits every finished
point from the driver the moment it comes back, whatever the order. When every point is done
the CSV is rewritten in grid order and the provenance is completed (see
:mod:`assocmem.sweeps.store`).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import platform
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from assocmem.devices import resolve_device
from assocmem.dtypes import default_dtype
from assocmem.progress import progress as progress_bar
from assocmem.sweeps.config import RESERVED_COLUMNS, Sweep, _scalar, canonical_key, config_to_json, point_seed
from assocmem.sweeps.executors import Executor, RayExecutor, TaskError, make_executor
from assocmem.sweeps.registry import get_sweep
from assocmem.sweeps.store import SCHEMA, ResultsStore, format_line, format_value
from assocmem._checks import as_bool

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["SweepError", "SweepRun", "run_sweep", "execute_point", "environment_info", "POINT_DTYPE"]


class SweepError(RuntimeError):
    """A point failed or returned something that cannot be stored. Finished points stay stored."""


@dataclass
class SweepRun:
    """What :func:`run_sweep` returns."""

    frame: pd.DataFrame  # every row of the sweep, in grid order (as read back from the CSV)
    provenance: dict  # the provenance (as stored in <preset>.json when persisted)
    computed: int  # points computed by this call
    skipped: int  # points found already stored (not recomputed)
    path: Path | None  # the CSV, or None when not persisted


#: torch's default dtype while a point runs (:func:`execute_point`).
POINT_DTYPE = torch.float64


def execute_point(run_point: Callable[..., Any], config: Any, point: dict,
                  device: str) -> tuple[Any, float, str]:
    """Run one point where the executor put it: ``(run_point's output, seconds, device used)``.

    Module-level so that process pools and Ray can ship it; ``device`` is resolved here, in
    the worker, with :func:`assocmem.devices.resolve_device`. The point runs under torch's
    default dtype :data:`POINT_DTYPE` (float64, the dtype the book's stored results were made
    in: a library call inside a point that leaves ``dtype=None`` computes in it), scoped with
    :func:`assocmem.dtypes.default_dtype` and restored afterwards; a sweep whose config names a
    dtype passes it explicitly.

    Raises
    ------
    TypeError
        ``run_point`` is not callable.
    ValueError, RuntimeError
        As :func:`assocmem.devices.resolve_device`; whatever ``run_point`` raises.
    """
    if not callable(run_point):
        raise TypeError(f"run_point must be a callable (config, point, device) -> rows, got {type(run_point).__name__}")
    dev = resolve_device(device)
    with default_dtype(POINT_DTYPE):
        start = time.perf_counter()
        out = run_point(config, point, dev)
    return out, time.perf_counter() - start, str(dev)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@functools.lru_cache(maxsize=1)
def _git() -> dict:
    """Commit and dirty flag of the repository holding this package (None outside one): dirty
    when the package's own files differ from the commit (:func:`_git_state`)."""
    return _git_state(Path(__file__).resolve().parent.parent)


def _git_state(package: Path) -> dict:
    """Commit and dirty flag of the git repository holding the folder ``package``.

    Dirty means a file inside ``package`` differs from the commit or is untracked (not ignored):
    a changed or new module a sweep imports is code the commit does not hold. Files elsewhere in
    the repository do not count: a sweep rewriting its own tracked result files (``--force``)
    leaves the code it ran as committed.

    Parameters
    ----------
    package : pathlib.Path
        A folder inside the repository (the library's package folder).

    Returns
    -------
    dict
        ``{"commit": str or None, "dirty": bool or None}``; both None outside a repository or
        without git.
    """
    def git(*args):
        cmd = ["git", "-C", str(package), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain", "--untracked-files=all", "--", ".").strip())
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": dirty}


def environment_info(devices: list[str] | None = None) -> dict:
    """Package versions, git state and a hostname-free description of this machine.

    Parameters
    ----------
    devices : list of str, optional
        Devices used; a CUDA device adds the GPU's name to ``machine``.

    Returns
    -------
    dict
        ``{"git": {"commit", "dirty"}, "versions": {...}, "machine": {...}}``.

    Raises
    ------
    TypeError
        ``devices`` is a str (its characters would be read as devices) or not a sequence of str.
    """
    if devices is not None and (isinstance(devices, str) or not isinstance(devices, (list, tuple))
                                or not all(isinstance(d, str) for d in devices)):
        raise TypeError(f"devices must be a list of device names (str) or None, got {devices!r}")
    import numpy
    import scipy
    import torch

    from assocmem import __version__

    versions = {
        "assocmem": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pd.__version__,
    }
    machine = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    if any(d.startswith("cuda") for d in devices or []) and torch.cuda.is_available():
        machine["gpu"] = torch.cuda.get_device_name(0)
    return {"git": _git(), "versions": versions, "machine": machine}


def _rows(sweep: Sweep, key: str, point: dict, out: Any, seed: int, wall: float, columns: list[str] | None):
    """Check ``run_point``'s output and turn it into full rows; returns ``(rows, columns)``."""
    where = f"sweep {sweep.name!r}, point {key}"
    if isinstance(out, Mapping):
        results = [out]
    elif isinstance(out, (list, tuple)) and out and all(isinstance(r, Mapping) for r in out):
        results = list(out)
    else:
        raise SweepError(f"{where}: run_point must return a dict or a non-empty list of dicts; got {out!r}")
    rows = []
    for r in results:
        row = dict(point)
        for k, v in r.items():
            if not isinstance(k, str) or not k:
                raise SweepError(f"{where}: result field names must be strings; got {k!r}")
            if k in point or k in RESERVED_COLUMNS:
                raise SweepError(f"{where}: result field {k!r} clashes with a point key or a reserved column")
            try:
                row[k] = _scalar(v, f"{where}: field {k!r}")
            except (TypeError, ValueError) as exc:
                raise SweepError(str(exc)) from None
        row["seed"] = seed
        row["wall_time_s"] = round(wall, 6)
        rows.append(row)
    if columns is None:
        columns = list(rows[0])
    for row in rows:
        if set(row) != set(columns):
            raise SweepError(f"{where}: rows have the fields {list(row)}; this sweep's rows have {columns}")
    return rows, columns


def _session(executor: Executor, device: str | None, computed: int, compute_s: float, started: float,
             started_iso: str, devices: set[str], status: str) -> dict:
    return {
        "started": started_iso,
        "ended": _now(),
        "status": status,
        "device": str(device) if device is not None else str(resolve_device(None)),
        "devices_used": sorted(devices),
        **executor.describe(),
        "points_computed": computed,
        "compute_time_s": round(compute_s, 3),
        "wall_time_s": round(time.perf_counter() - started, 3),
        "git_commit": _git()["commit"],
    }


def _provenance(sweep: Sweep, preset: str, cfg_json: dict, grid_size: int, sessions: list[dict]) -> dict:
    devices = sorted({d for s in sessions for d in s.get("devices_used", [])})
    env = environment_info(devices)
    last = sessions[-1]
    return {
        "schema": SCHEMA,
        "sweep": sweep.name,
        "preset": preset,
        "description": sweep.description,
        "status": "running",
        "config": cfg_json,
        "n_points": grid_size,
        "device": last["device"],
        "devices_used": devices,
        "executor": last["executor"],
        **env,
        "started": sessions[0]["started"],
        "date": _now(),
        "wall_time_s": round(sum(s.get("wall_time_s", 0.0) for s in sessions), 3),
        "compute_time_s": round(sum(s.get("compute_time_s", 0.0) for s in sessions), 3),
        "sessions": sessions,
    }


def run_sweep(
    sweep: str | Sweep,
    preset: str = "quick",
    *,
    config: Any = None,
    device: str | None = None,
    executor: str | Executor = "serial",
    workers: int | None = None,
    address: str | None = None,
    results_dir: str | os.PathLike | None = None,
    persist: bool = True,
    force: bool = False,
    progress: bool = True,
) -> SweepRun:
    """Run a registered sweep under a preset, resuming whatever is already stored.

    Parameters
    ----------
    sweep : str or Sweep
        A registered name (see :func:`assocmem.sweeps.sweep_names`) or a :class:`Sweep`.
    preset : str, default ``"quick"``
        Preset name; also the results file's name (``<results_dir>/<sweep>/<preset>.csv``).
    config : config instance, optional
        Run this config instead of the preset's. ``preset`` then only names the files, and must
        not be a registered preset with a different config.
    device : str, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Device for every point (:func:`assocmem.devices.resolve_device`).
    executor : {"serial", "process", "ray"} or Executor, default ``"serial"``
        A name makes an executor for this call (started and closed here). An :class:`Executor`
        instance must already be entered (``with RayExecutor(...) as ex:``) and stays open, so
        one pool or Ray instance can serve several sweeps.
    workers : int, optional
        Process pool size, or the CPUs of a local Ray instance (default: all cores).
    address : str, optional
        Ray cluster address; without one, the Ray executor starts (and stops) a local instance.
    results_dir : path, optional
        Folder of the results (default :func:`assocmem.sweeps.default_results_dir`).
    persist : bool, default True
        Store the results. ``False`` computes every point in memory and writes nothing (for a
        chapter's live ``quick`` run to compare with the stored rows).
    force : bool, default False
        Discard stored results (also ones with another config, or damaged ones) and start over.
    progress : bool, default True
        Show a progress bar (silent anyway under CI or ``ASSOCMEM_QUIET``).

    Returns
    -------
    SweepRun
        ``frame`` (all rows, in grid order), ``provenance``, ``computed``, ``skipped``, ``path``.

    Raises
    ------
    UnknownNameError
        Unknown sweep or preset (the message lists the valid names).
    ConfigMismatchError
        Stored results were made with another config or grid (use ``force=True``).
    CorruptResultsError
        Stored files are truncated or inconsistent (use ``force=True``).
    ResultsLockedError
        Another process is running the same sweep and preset into the same folder.
    SweepError
        A point raised, or returned rows that cannot be stored; finished points stay stored.
    ResultsError
        The results folder cannot be created or used (a path through a file, no permission).
    ValueError
        ``persist``, ``force`` or ``progress`` is not a bool; ``preset`` is not a str (or, when
        persisting, not a file name); an unknown device or executor; ``workers`` not a positive
        integer. Arguments are checked before anything is written.
    RuntimeError
        The device is not available here (checked before anything is written, except on Ray,
        whose cluster decides).
    TypeError
        ``config`` is not an instance of the sweep's config type, or ``results_dir`` not a path.
    """
    for flag, value in (("persist", persist), ("force", force), ("progress", progress)):
        as_bool(value, flag)
    if not isinstance(preset, str):
        raise ValueError(f"preset must be a str, got {type(preset).__name__} {preset!r}")
    sw = get_sweep(sweep)
    if config is None:
        cfg = sw.config(preset)
    else:
        if type(config) is not sw.config_type:
            raise TypeError(f"config must be a {sw.config_type.__name__}; got {type(config).__name__}")
        if preset in sw.presets and sw.presets[preset] != config:
            raise ValueError(f"preset {preset!r} of sweep {sw.name!r} has another config; name this run differently")
        cfg = config
    cfg_json = config_to_json(cfg)
    grid = sw.grid(cfg)
    keys = [canonical_key(p) for p in grid]
    point_columns = list(grid[0])
    # An Executor instance belongs to the caller, who has entered it and will close it (so a pool
    # or a Ray instance can serve several sweeps); a name makes one for this call only.
    owned = not isinstance(executor, Executor)
    ex = make_executor(executor, workers=workers, address=address) if owned else executor
    # A bad device must fail before the store is opened, or it would leave an unfinished run behind.
    if isinstance(ex, RayExecutor):
        try:  # the cluster decides availability once entered; the name is checked now
            resolve_device(device)
        except RuntimeError:
            pass
    else:
        ex.task_device(device)

    started, started_iso = time.perf_counter(), _now()
    store = ResultsStore(results_dir, sw.name, preset) if persist else None
    try:
        done = store.open(config=cfg_json, grid_keys=keys, point_columns=point_columns, force=force) if store else set()
        if store is not None and store.complete:
            return SweepRun(_read(store.paths.csv.read_bytes()), store.previous, 0, len(grid), store.paths.csv)
        todo = [i for i, k in enumerate(keys) if k not in done]
        previous = list((store.previous or {}).get("sessions", [])) if store else []
        # a session still "running" on disk was killed: its last update is where it stopped
        previous = [{**s, "status": "killed"} if s.get("status") == "running" else s for s in previous]
        columns = store.columns if store else None
        memory: dict[str, list[str]] = {}
        devices: set[str] = set()
        computed, compute_s = 0, 0.0

        def provenance(status: str) -> dict:
            session = _session(ex, device, computed, compute_s, started, started_iso, devices, status)
            return _provenance(sw, preset, cfg_json, len(grid), previous + [session])

        if todo:
            with ex if owned else contextlib.nullcontext(ex):
                task_device = ex.task_device(device)
                if store is not None:
                    store.write_provenance(provenance("running"))
                args = [(sw.run_point, cfg, grid[i], task_device) for i in todo]
                results = ex.map_unordered(execute_point, args)
                options = {} if progress else {"disable": True}
                bar = progress_bar(results, total=len(todo), desc=f"{sw.name}/{preset}", unit="point", **options)
                try:
                    for j, (out, wall, used) in bar:
                        i = todo[j]
                        seed = point_seed(cfg, grid[i])
                        rows, columns = _rows(sw, keys[i], grid[i], out, seed, wall, columns)
                        lines = [format_line([format_value(r[c]) for c in columns]) for r in rows]
                        if store is not None:
                            store.append(keys[i], lines, columns)
                        else:
                            memory[keys[i]] = lines
                        computed, compute_s = computed + 1, compute_s + wall
                        devices.add(used)
                        if store is not None:
                            store.write_provenance(provenance("running"))
                except TaskError as exc:
                    i = todo[exc.index]
                    if store is not None:
                        store.write_provenance(provenance("failed"))
                    done = (f"{computed} points finished and stored in this run; rerun to resume"
                            if store is not None else
                            f"{computed} points finished in this run, in memory only (persist=False): "
                            "nothing was stored")
                    raise SweepError(
                        f"sweep {sw.name!r}, point {keys[i]} failed: {type(exc.cause).__name__}: {exc.cause} "
                        f"({done})"
                    ) from exc.cause
                except BaseException as exc:
                    if store is not None:
                        try:
                            status = "failed" if isinstance(exc, Exception) else "interrupted"
                            store.write_provenance(provenance(status))
                        except Exception:  # the original error matters more
                            pass
                    raise
                finally:
                    results.close()
                    if hasattr(bar, "close"):
                        bar.close()
        prov = provenance("finished")
        if store is not None:
            store.finish(prov)
            frame = _read(store.paths.csv.read_bytes())
            path = store.paths.csv
        else:
            prov.update(status="complete", columns=columns, point_columns=point_columns, n_rows=None)
            content = format_line(columns).encode() + "".join(line for k in keys for line in memory[k]).encode()
            frame = _read(content)
            prov["n_rows"] = len(frame)
            path = None
        return SweepRun(frame, prov, computed, len(grid) - len(todo), path)
    finally:
        if store is not None:
            store.close()


def _read(raw: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(raw), keep_default_na=False, na_values=[""])
