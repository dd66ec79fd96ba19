"""The live-against-stored check of the margin sweeps: one stated rule per result column.

Chapter 12 (How margins scale) reruns the ``quick`` preset of each margin sweep of seed 001
("MLPs are Hebbians", App. A.3.2, A.4.2, B.2.6), a strided subset of the stored grid with the same
point seeds, and asserts that its rows agree with the stored ones (:func:`live_check`,
:func:`compare_overlap`, through the book's one comparison :func:`assocmem.sweeps.check_rows`).
:func:`agreement_rules` gives each result column its rule: equality for the columns the config
sets and for Theorem B.6's bit count (:data:`EXACT_COLUMNS`), at most :data:`MAX_CHANGED_ROWS`
changed rows for an outcome decided by the sign of a margin (:data:`THRESHOLD_COLUMNS`), a
column's own tolerance (:data:`COLUMN_TOL`), and otherwise float64 rounding relative to the
column's scale (:data:`ROUNDING_TOL`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from assocmem.devices import resolve_device, torch_threads
from assocmem.mlps.margin_sweeps.registration import MARGIN_SWEEPS, STORED_PRESET
from assocmem.sweeps.registry import get_sweep

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import PathLike

__all__ = [
    "EXACT_COLUMNS",
    "THRESHOLD_COLUMNS",
    "MAX_CHANGED_ROWS",
    "ROUNDING_TOL",
    "COLUMN_TOL",
    "agreement_rules",
    "compare_overlap",
    "live_check",
]


#: Result columns set by the config with no arithmetic (sizes, labels, seeds), and Theorem B.6's bit
#: count, an integer ceiling whose condition holds and fails one bit below with a relative slack
#: far above float64 rounding in every stored row: compared for equality.
EXACT_COLUMNS = ("kernel", "d", "F", "m", "P", "seed", "bits_b6")
#: Result columns decided by the sign of a margin (a fact's, or a quantised model's), which a
#: rounding difference could flip if that margin were within rounding of zero: at most
#: :data:`MAX_CHANGED_ROWS` rows of a sweep may differ in each.
THRESHOLD_COLUMNS = ("frac_positive", "bits_min", "bits_stable", "nonmonotone")
MAX_CHANGED_ROWS = 1
#: Every other result column is a float64 computation: ``|live - stored| <= ROUNDING_TOL * s``, with
#: ``s`` the column's largest stored ``|value|`` rounded up to a power of ten (1 for a zero column).
ROUNDING_TOL = 1e-9
#: Columns with their own absolute tolerance. ``margin_b6_ratio`` is a margin after quantising to
#: ``bits_b6`` bits, where a weight within rounding of a level boundary may land in the
#: neighbouring level; by Lemmas B.4-B.5 each such weight moves the ratio by at most
#: ``1 / sqrt(P)`` (below 0.0063 for every stored ``P``).
COLUMN_TOL = {"margin_b6_ratio": 1e-2}


def _power_of_ten_scale(values: pd.Series) -> float:
    """The largest finite ``|value|`` rounded up to a power of ten; 1 for a column of zeros or NaN."""
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    x = np.abs(x[np.isfinite(x)])
    top = float(x.max()) if x.size else 0.0
    return 10.0 ** math.ceil(math.log10(top)) if top > 0 else 1.0


def agreement_rules(stored: pd.DataFrame, columns: Sequence[str]) -> dict:
    """The rule of each result column in ``columns``: keyword arguments of :func:`~assocmem.sweeps.check_rows`.

    Columns of :data:`EXACT_COLUMNS` go to ``exact``, those of :data:`THRESHOLD_COLUMNS` to
    ``max_changed`` (:data:`MAX_CHANGED_ROWS` each), those of :data:`COLUMN_TOL` get their own
    tolerance, and every other column the rounding tolerance ``ROUNDING_TOL * s`` with ``s`` the
    power of ten at or above its largest stored ``|value|``. The engine's ``wall_time_s`` is not
    a result.

    Parameters
    ----------
    stored : pandas.DataFrame
        The stored rows (they set each column's scale, so the rule is the same on every machine).
    columns : sequence of str
        The result columns (the live frame's columns less the point keys).

    Returns
    -------
    dict
        ``{"tolerances": {...}, "max_changed": {...}, "exact": [...]}``.
    """
    tolerances, max_changed, exact = {}, {}, []
    for col in columns:
        if col == "wall_time_s":
            continue
        if col in EXACT_COLUMNS:
            exact.append(col)
        elif col in THRESHOLD_COLUMNS:
            max_changed[col] = MAX_CHANGED_ROWS
        elif col in COLUMN_TOL:
            tolerances[col] = COLUMN_TOL[col]
        else:
            tolerances[col] = ROUNDING_TOL * _power_of_ten_scale(stored[col]) if col in stored else ROUNDING_TOL
    return {"tolerances": tolerances, "max_changed": max_changed, "exact": exact}


def compare_overlap(live: pd.DataFrame, stored: pd.DataFrame, keys: Sequence[str], *,
                    what: str = "live rows") -> pd.DataFrame:
    """Assert that a live run agrees with stored rows on the grid points they share.

    Each result column is compared by its rule (:func:`agreement_rules`) with
    :func:`assocmem.sweeps.check_rows`, the book's one comparison of live against stored rows.

    Parameters
    ----------
    live, stored : pandas.DataFrame
        Rows of the same sweep (e.g. a ``quick`` run and the stored ``paper`` preset).
    keys : sequence of str
        The point columns that identify a row (e.g. ``["F", "rep"]``).
    what : str
        What is compared, for the error message.

    Returns
    -------
    pandas.DataFrame
        :func:`~assocmem.sweeps.check_rows`' summary: one row per result column, with ``column``,
        ``rule``, ``rows``, ``max |diff|``, ``rows changed`` and ``allowed``; and ``kind``, the
        rule in words that do not depend on the column's scale (``"equal"``, ``"at most 1 row
        changed"``, ``"|diff| <= 1e-09 x scale"`` or a column's own ``"|diff| <= tol"``).

    Raises
    ------
    assocmem.sweeps.RowsDisagree
        If a live row has no stored partner or a column breaks its rule.
    """
    from assocmem.sweeps.agreement import check_rows

    columns = [c for c in live.columns if c not in keys]
    rules = agreement_rules(stored, columns)
    summary = check_rows(live, stored, keys, what=what, **rules)
    kind = {c: "equal" for c in rules["exact"]}
    kind.update({c: f"at most {n} row{'s' if n != 1 else ''} changed" for c, n in rules["max_changed"].items()})
    kind.update({c: (f"|diff| <= {tol:g}" if c in COLUMN_TOL else f"|diff| <= {ROUNDING_TOL:g} x scale")
                 for c, tol in rules["tolerances"].items()})
    return summary.assign(kind=summary["column"].map(kind))


def live_check(names: Sequence[str] = MARGIN_SWEEPS, preset: str = "quick", device: str | None = None,
               results_dir: PathLike | None = None, num_threads: int | None = 1,
               seed: int | None = None) -> pd.DataFrame:
    """Run each sweep's ``preset`` in memory and assert that its rows agree with the stored ones.

    The stored preset is the largest one (:data:`STORED_PRESET`); the ``quick`` presets run a
    strided subset of its grid with the same point seeds, so the live rows must reproduce the
    stored ones by the rules of :func:`compare_overlap`. The points run serially in this process
    with ``num_threads`` torch CPU threads (restored afterwards). One thread is the default: the
    matrices are at most ``2048 x 2048``, where a second thread gains little and, on a machine
    busy with other work, threads that wait on each other can make the run many times slower; it
    is also how the stored runs were made (a two-worker process pool gives each worker one thread).

    Parameters
    ----------
    names : sequence of str
        Sweeps to check (default: all of :data:`MARGIN_SWEEPS`).
    preset : str, default "quick"
        The preset to run live (``persist=False``: nothing is written).
    device : str, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    results_dir : path, optional
        Where the stored results live (default: the repository's ``results/``).
    num_threads : int or None, default 1
        Torch CPU threads during the run; None leaves the setting alone.
    seed : int, optional
        Base seed of the live run; default the preset's (0). With another seed the live points
        are other fact sets, and the check fails (it exists to show that it can).

    Returns
    -------
    pandas.DataFrame
        One row per sweep and result column: ``sweep``, ``stored`` (the preset compared with)
        and the columns of :func:`compare_overlap`'s summary.

    Raises
    ------
    assocmem.sweeps.RowsDisagree
        If some sweep's live rows break a rule.
    """
    device = resolve_device(device)
    from assocmem.sweeps.engine import run_sweep
    from assocmem.sweeps.store import load_results

    frames = []
    with torch_threads(num_threads):
        for name in names:
            config = get_sweep(name).config(preset)
            if seed is None or seed == config.seed:
                run = run_sweep(name, preset, device=device, persist=False, progress=False)
            else:
                config = dataclasses.replace(config, seed=int(seed))
                run = run_sweep(name, f"{preset}_seed{int(seed)}", config=config, device=device,
                                persist=False, progress=False)
            stored = load_results(name, STORED_PRESET[name], results_dir)
            keys = list(run.provenance["point_columns"])
            summary = compare_overlap(run.frame, stored, keys,
                                      what=f"{name}: live {preset} rows against the stored {STORED_PRESET[name]} rows")
            frames.append(summary.assign(sweep=name, stored=STORED_PRESET[name]))
    out = pd.concat(frames, ignore_index=True)
    return out[["sweep", "stored", *[c for c in out.columns if c not in ("sweep", "stored")]]]
