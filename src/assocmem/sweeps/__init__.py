"""Sweeps: named experiments over a grid of points, with presets, a durable results store and executors.

A sweep is registered by name (:func:`register_sweep`) with a frozen config dataclass, its named
presets (``quick``, ``cpu``, ``paper``), a grid ``points(config)`` and the work of one point
``run_point(config, point, device)``. :func:`run_sweep` (or ``python -m assocmem sweep NAME
--preset P``) runs the points that are not stored yet, serially, in a process pool or on Ray, and
commits each as it finishes to ``results/<sweep>/<preset>.csv`` with provenance in
``<preset>.json``; an interrupted sweep resumes where it stopped. :func:`load_results` reads
stored results back after checking them. :func:`smallest_width` is the capacity search of Part II.

Modules
-------
config      the Sweep description, point keys and point seeds
registry    named sweeps (SWEEP_MODULES lists the modules that register them)
store       the results store: atomic per-point commits, resume, corruption checks, provenance
executors   serial, process pool and Ray executors
engine      run_sweep, the driver
search      capacity search: smallest width reaching a target accuracy
agreement   live rows against stored rows, each result column by a stated rule
spread      trained results: their spread over trainings, and a rerun checked against it

Each Part keeps its sweeps beside its science, in modules named ``*_sweeps`` that the registry
finds: ``assocmem.linear.demo_sweeps`` (the engine's worked example), ``assocmem.mlps.capacity_sweeps``
and ``assocmem.mlps.margin_sweeps`` (chapters 12-13), ``assocmem.sdm.convergence_sweeps`` (chapter 36).
"""

from assocmem.sweeps.agreement import RowsDisagree, check_rows
from assocmem.sweeps.config import RESERVED_COLUMNS, Sweep, UnknownNameError, canonical_key, config_to_json, point_seed
from assocmem.sweeps.engine import SweepError, SweepRun, environment_info, run_sweep
from assocmem.sweeps.executors import EXECUTORS, Executor, ProcessExecutor, RayExecutor, SerialExecutor, TaskError, make_executor
from assocmem.sweeps.registry import SWEEP_MODULES, all_sweeps, get_sweep, register_sweep, sweep_names, unregister_sweep
from assocmem.sweeps.search import SearchResult, smallest_width, smallest_width_batched, smallest_width_reference
from assocmem.sweeps.spread import (
    check_spread,
    leave_one_training_out,
    median_training,
    prediction_half_width,
    training_spread,
    training_views,
)
from assocmem.sweeps.store import (
    ConfigMismatchError,
    CorruptResultsError,
    ResultsError,
    ResultsLockedError,
    ResultsPaths,
    default_results_dir,
    load_largest_results,
    load_results,
    read_provenance,
)

__all__ = [
    "RowsDisagree",
    "check_rows",
    "check_spread",
    "leave_one_training_out",
    "prediction_half_width",
    "training_spread",
    "training_views",
    "median_training",
    "RESERVED_COLUMNS",
    "Sweep",
    "UnknownNameError",
    "canonical_key",
    "config_to_json",
    "point_seed",
    "SweepError",
    "SweepRun",
    "environment_info",
    "run_sweep",
    "EXECUTORS",
    "Executor",
    "ProcessExecutor",
    "RayExecutor",
    "SerialExecutor",
    "TaskError",
    "make_executor",
    "SWEEP_MODULES",
    "all_sweeps",
    "get_sweep",
    "register_sweep",
    "sweep_names",
    "unregister_sweep",
    "SearchResult",
    "smallest_width",
    "smallest_width_batched",
    "smallest_width_reference",
    "ConfigMismatchError",
    "CorruptResultsError",
    "ResultsError",
    "ResultsLockedError",
    "ResultsPaths",
    "default_results_dir",
    "load_largest_results",
    "load_results",
    "read_provenance",
]
