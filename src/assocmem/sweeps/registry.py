"""The registry of named sweeps, filled by the modules listed in :data:`SWEEP_MODULES`.

A module defines its config dataclass, presets, ``points`` and ``run_point`` and calls
:func:`register_sweep` at import time. The first time a sweep is looked up, the registry imports
every module of the library whose name ends in ``_sweeps`` (each Part keeps its sweeps beside
its science: ``assocmem/mlps/capacity_sweeps.py``, ``assocmem/sdm/convergence_sweeps.py``), plus
any module listed in :data:`SWEEP_MODULES`, so ``python -m assocmem sweep NAME`` finds sweeps
without this floor package naming the Parts. To add a sweep, register it in a module
``<part>/<topic>_sweeps.py``; a module outside the library goes in :data:`SWEEP_MODULES`.

Listing the sweeps (``python -m assocmem sweep --list``) needs no import of them: the library's
sweeps, their modules, descriptions and preset sizes are written to the static index
:mod:`assocmem._sweep_index` by :func:`write_sweep_index` (``python tools/sweep_index.py``), and a
test checks that it equals :func:`sweep_index` of the live registry, so it cannot drift.
"""

from __future__ import annotations

import importlib
import pkgutil
import json
import sys
from pathlib import Path
from collections.abc import Callable, Mapping
from typing import Any

from assocmem.sweeps.config import Sweep, UnknownNameError
from assocmem._checks import as_bool

__all__ = ["SWEEP_MODULES", "register_sweep", "unregister_sweep", "get_sweep", "sweep_names", "all_sweeps",
           "sweep_index", "write_sweep_index"]

#: Extra modules whose import registers sweeps (beyond the library's ``*_sweeps`` modules);
#: imported on the first lookup.
SWEEP_MODULES: tuple[str, ...] = ()

_SWEEPS: dict[str, Sweep] = {}
_ORIGIN: dict[str, str] = {}  # sweep name -> the module that registered it
_loaded = False


def _discovered() -> list[str]:
    """The library's ``*_sweeps`` modules (one level below each package), sorted by name."""
    root = importlib.import_module(__package__.split(".")[0])
    found = []
    for pkg in pkgutil.iter_modules(root.__path__):
        if not pkg.ispkg:
            continue
        package = importlib.import_module(f"{root.__name__}.{pkg.name}")
        found += [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
                  if info.name.endswith("_sweeps")]
    return sorted(found)


def _load() -> None:
    """Import the sweep modules once. If one fails to import, the next lookup tries again (and
    raises the same error) rather than silently working with part of the registry."""
    global _loaded
    if not _loaded:
        _loaded = True  # set first: a listed module may look sweeps up while it is imported
        try:
            for module in (*SWEEP_MODULES, *_discovered()):
                importlib.import_module(module)
        except BaseException:
            _loaded = False
            raise


def register_sweep(
    name: str,
    *,
    config_type: type,
    presets: Mapping[str, Any],
    points: Callable[[Any], list],
    run_point: Callable[..., Any],
    description: str = "",
    replace: bool = False,
) -> Sweep:
    """Register a sweep under ``name`` and return it.

    Parameters
    ----------
    name : str
        Lower-case identifier, the folder of its results (``results/<name>/``).
    config_type : type
        Frozen dataclass of the sweep's settings.
    presets : mapping of str to config_type
        Named configs; ``"quick"`` is required, ``"cpu"`` and ``"paper"`` are the convention.
    points : callable
        ``points(config) -> list[dict]``, the grid (see :class:`Sweep`).
    run_point : callable
        ``run_point(config, point, device) -> dict | list[dict]``, a module-level function.
    description : str, optional
        One line shown by ``python -m assocmem sweep --list``.
    replace : bool, default False
        Replace a sweep of the same name registered from another module. Re-registering from
        the same module (a re-import or ``importlib.reload``) always replaces.

    Returns
    -------
    Sweep

    Raises
    ------
    ValueError
        If ``name`` is taken by a sweep from another module and ``replace`` is False (the
        library's own sweeps are loaded first, so a clash with one of them is caught here, not at
        a later lookup), ``replace`` is not a bool, or the description is invalid (see
        :class:`Sweep`).
    TypeError
        If a preset is not an instance of ``config_type`` or ``config_type`` is not frozen.
    """
    replace = as_bool(replace, "replace")
    sweep = Sweep(name, config_type, presets, points, run_point, description)
    origin = sys._getframe(1).f_globals.get("__name__", run_point.__module__)  # the registering module
    if origin.split(".")[0] != __package__.split(".")[0]:
        # A module outside the library: load the library's sweeps first, so that a clash with one
        # of them is caught here. The library's own modules do not: loading every sweep module
        # from inside one of them would import modules that are only half initialised (a sweep
        # module imported through a module it imports); clashes among them surface in _load.
        _load()
    old = _SWEEPS.get(name)
    if old is not None and not replace and old.run_point.__module__ != run_point.__module__:
        raise ValueError(
            f"a sweep named {name!r} is already registered by {old.run_point.__module__}; "
            "pick another name or pass replace=True"
        )
    _SWEEPS[name] = sweep
    _ORIGIN[name] = origin
    return sweep


def unregister_sweep(name: str) -> None:
    """Remove a sweep from the registry (tests use it to clean up); unknown names are ignored.

    Raises
    ------
    ValueError
        If ``name`` is not a str.
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a str, got {type(name).__name__} {name!r}")
    _SWEEPS.pop(name, None)
    _ORIGIN.pop(name, None)


def get_sweep(name: str | Sweep) -> Sweep:
    """The sweep registered as ``name`` (a :class:`Sweep` is returned unchanged).

    Raises
    ------
    UnknownNameError
        If no sweep has that name; the message lists the registered ones.
    """
    if isinstance(name, Sweep):
        return name
    _load()
    try:
        return _SWEEPS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("sweep", name, _SWEEPS) from None


def sweep_names() -> list[str]:
    """Names of all registered sweeps, sorted."""
    _load()
    return sorted(_SWEEPS)


def all_sweeps() -> list[Sweep]:
    """All registered sweeps, sorted by name."""
    _load()
    return [_SWEEPS[n] for n in sorted(_SWEEPS)]


def sweep_index() -> dict[str, dict]:
    """What ``--list`` shows of the library's sweeps, from the live registry (imports them all).

    A sweep counts when the module that registered it is (or lies inside) one of the library's
    ``*_sweeps`` modules or a module listed in :data:`SWEEP_MODULES`; one registered by other code
    at run time (a test's toy sweep) is left out.

    Returns
    -------
    dict
        ``{name: {"module": str, "description": str, "presets": {preset: number of points}}}``,
        sorted by name; ``module`` is the listed module whose import registers the sweep.
    """
    _load()
    modules = (*SWEEP_MODULES, *_discovered())

    def listed(name: str, sw: Sweep) -> str | None:
        """The listed module that registers ``name`` (itself or a package above its module)."""
        origin = _ORIGIN.get(name, sw.run_point.__module__)
        return next((m for m in modules if origin == m or origin.startswith(m + ".")), None)

    found = {name: listed(name, sw) for name, sw in _SWEEPS.items()}
    return {name: {"module": found[name], "description": sw.description,
                   "presets": {label: len(sw.grid(cfg)) for label, cfg in sw.presets.items()}}
            for name, sw in sorted(_SWEEPS.items()) if found[name] is not None}


def _index_path() -> Path:
    return Path(importlib.import_module(__package__.split(".")[0]).__file__).parent / "_sweep_index.py"


def render_sweep_index(index: dict[str, dict]) -> str:
    """The text of :mod:`assocmem._sweep_index` holding ``index`` (see :func:`sweep_index`)."""
    s = json.dumps  # a JSON string is a Python literal too
    body = "".join(f"    {s(name)}: {{\n        \"module\": {s(e['module'])},\n"
                   f"        \"description\": {s(e['description'])},\n"
                   f"        \"presets\": {{{', '.join(f'{s(k)}: {int(n)}' for k, n in e['presets'].items())}}},\n"
                   "    },\n" for name, e in index.items())
    return ('"""The library\'s sweeps, by name, for listing them without importing them (generated).\n\n'
            "Written by :func:`assocmem.sweeps.registry.write_sweep_index` (``python tools/sweep_index.py``)\n"
            "from the live registry; do not edit. ``tests/sweeps/test_registry.py`` checks that it equals\n"
            "the registry. ``python -m assocmem sweep --list`` reads it, so listing imports no sweep.\n"
            '"""\n\n'
            "#: ``{name: {\"module\": ..., \"description\": ..., \"presets\": {preset: points}}}``.\n"
            f"SWEEPS = {{\n{body}}}\n")


def write_sweep_index(path: str | Path | None = None) -> Path:
    """Write :mod:`assocmem._sweep_index` from the live registry; returns the path written.

    Parameters
    ----------
    path : str or Path, optional
        Where to write (default: the library's own ``assocmem/_sweep_index.py``).
    """
    path = Path(path) if path is not None else _index_path()
    path.write_text(render_sweep_index(sweep_index()))
    return path
