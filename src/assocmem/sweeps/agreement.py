"""Live rows against stored rows: the assertion behind "the live run recomputes the stored one".

A chapter that plots a stored sweep also reruns its ``quick`` preset and checks that the live
rows agree with the stored ones where they overlap. The live run is on the reader's machine and
the stored one on ours, so the two can differ in the last digits of every float (another BLAS
kernel, another thread count), and an outcome decided by a threshold (an argmax, a convergence
test, a capacity search's verdict at one width) can flip when a rounding difference meets a
near-tie. :func:`check_rows` therefore compares each result column by its own stated rule:

- a **continuous** column within an absolute tolerance (``tolerances``), justified by the chapter
  (float64 rounding amplified by the computation);
- a **discrete** column (``max_changed``) by the number of rows whose value changed, which may
  not exceed a stated bound;
- an **exact** column (``exact``: integers from exact arithmetic, labels) equal in every row.

Every result column must be named in one of the three, so that no column goes unchecked. The
check raises :class:`RowsDisagree`; it never returns a printed ``True``/``False``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from assocmem._checks import as_int, as_real

__all__ = ["RowsDisagree", "check_rows"]

_SKIP = ("wall_time_s",)


class RowsDisagree(AssertionError):
    """Live rows differ from the stored rows beyond the stated tolerances."""


def check_rows(
    live: pd.DataFrame,
    stored: pd.DataFrame,
    keys: Sequence[str],
    *,
    tolerances: Mapping[str, float] | None = None,
    max_changed: Mapping[str, int] | None = None,
    exact: Iterable[str] = (),
    ignore: Iterable[str] = _SKIP,
    what: str = "live rows",
) -> pd.DataFrame:
    """Assert that ``live`` agrees with ``stored`` on the rows they share; return the summary.

    Rows are matched on ``keys``; every live row must have a stored partner. NaN in the same
    place on both sides counts as equal (a value that does not exist, such as a gap against a
    rule that was not run); NaN on one side only is a difference. Infinities compare as values:
    ``inf`` equals ``inf`` of the same sign (difference 0), and an infinity against a finite
    value or against the opposite infinity is an infinite difference, which no finite tolerance
    admits. A difference of two finite values that overflows float64 (``1e308`` against
    ``-1e308``) is infinite as well, never 0, and a NaN on one side only counts as an infinite
    difference. Integer columns on both sides are compared exactly (no rounding to float64).

    Parameters
    ----------
    live, stored : pandas.DataFrame
        Rows of the same sweep; ``stored`` may cover more points than ``live``.
    keys : sequence of str
        The columns that identify a row (a single str is one column); at least one. Each row
        of ``live`` and of ``stored`` must have its own key: a key shared by two rows would
        make the pairing ambiguous.
    tolerances : mapping of column -> float, optional
        Continuous columns and their absolute tolerances, ``|live - stored| <= tol``.
    max_changed : mapping of column -> int, optional
        Discrete columns and how many shared rows may differ in them.
    exact : iterable of str
        Columns that must be equal in every shared row (a single str is one column).
    ignore : iterable of str, default ``("wall_time_s",)``
        Columns not compared (wall-clock times; a single str is one column).
    what : str
        What is compared, for the error message.

    Returns
    -------
    pandas.DataFrame
        One row per compared column: ``column``, ``rule`` (``"|diff| <= tol"``,
        ``"rows changed <= N"`` or ``"equal"``), ``rows`` (shared rows), ``max |diff|`` (the
        largest ``|live - stored|`` as float64, ``inf`` when any row's difference is infinite in the
        sense above; NaN for non-numeric columns), ``rows changed``, ``allowed``. Numbers, not display strings:
        show them with :func:`assocmem.display.frame`.

    Raises
    ------
    TypeError
        If ``live`` or ``stored`` is not a DataFrame, or ``tolerances``/``max_changed`` is not a
        mapping.
    ValueError
        If ``keys`` is empty or a key or named column is missing; a key is also named under a
        rule; two rows of ``live`` or of ``stored`` share a key; a result column of ``live`` is
        named in none of ``tolerances``, ``max_changed``, ``exact`` and ``ignore`` (or in more
        than one); a tolerance is not a finite real number ``>= 0`` (booleans and strings are
        refused, and ``inf`` would check nothing: use ``ignore``); a tolerance is given to a
        column that is not numeric; or a ``max_changed`` bound is not an integer ``>= 0``.
    RowsDisagree
        If a live row has no stored partner, or any column breaks its rule.
    """
    for name, frame in (("live", live), ("stored", stored)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    for name, rule in (("tolerances", tolerances), ("max_changed", max_changed)):
        if rule is not None and not isinstance(rule, Mapping):
            raise TypeError(f"{name} must be a mapping of column -> bound, got {type(rule).__name__}")
    tolerances = dict(tolerances or {})
    max_changed = dict(max_changed or {})
    exact, ignore, keys = _names(exact), set(_names(ignore)), _names(keys)
    if not keys:
        raise ValueError("keys must name at least one column that identifies a row")
    for name, frame in (("live", live), ("stored", stored)):
        absent = [k for k in keys if k not in frame.columns]
        if absent:
            raise ValueError(f"key column(s) {absent} missing from the {name} rows")
        repeated = frame[keys].duplicated(keep=False)
        if repeated.any():
            first = frame.loc[repeated, keys].iloc[0].to_dict()
            raise ValueError(f"keys {keys} do not identify the {name} rows: {int(repeated.sum())} rows share a key, "
                             f"e.g. {first}; add the columns that tell them apart to keys")
    named = [*tolerances, *max_changed, *exact]
    twice = sorted({c for c in named if named.count(c) > 1})
    if twice:
        raise ValueError(f"column(s) {twice} named under more than one rule")
    as_key = [c for c in named if c in keys]
    if as_key:
        raise ValueError(f"column(s) {as_key} are keys (rows are matched on them); name only result columns "
                         "under tolerances, max_changed and exact")
    results = [c for c in live.columns if c not in keys and c not in ignore]
    unnamed = [c for c in results if c not in named]
    if unnamed:
        raise ValueError(f"result column(s) {unnamed} have no stated rule (tolerances, max_changed or exact)")
    for c in named:
        if c not in live.columns or c not in stored.columns:
            raise ValueError(f"column {c!r} is missing from the live or the stored rows")
    for c, tol in tolerances.items():
        try:
            tolerances[c] = as_real(tol, f"tolerance of {c!r}", minimum=0)
        except ValueError:
            raise ValueError(f"tolerance of {c!r} must be a non-negative finite number, got {tol!r}") from None
        for name, frame in (("live", live), ("stored", stored)):
            if not _numeric(frame[c]):
                raise ValueError(f"tolerance of {c!r}: the {name} column is not numeric ({frame[c].dtype}); "
                                 "compare it under exact or max_changed")
    for c, n in max_changed.items():
        try:
            max_changed[c] = as_int(n, f"max_changed of {c!r}", minimum=0)
        except ValueError:
            raise ValueError(f"max_changed of {c!r} must be a non-negative integer, got {n!r}") from None

    merged = live[keys + named].merge(stored[keys + named], on=keys, how="left",
                                      suffixes=("_live", "_stored"), indicator=True)
    missing = int((merged["_merge"] != "both").sum())
    merged = merged[merged["_merge"] == "both"]
    records, problems = [], []
    if missing:
        problems.append(f"{missing} live row(s) have no stored partner")
    for col in named:
        a, b = merged[f"{col}_live"], merged[f"{col}_stored"]
        changed, max_diff = _changed(a, b)
        if col in tolerances:
            tol = float(tolerances[col])
            rule, allowed = f"|diff| <= {tol:g}", tol
            ok = max_diff <= tol and not _nan_mismatch(a, b)
            changed_rows = int(_differs(a, b, tol).sum())
        elif col in max_changed:
            rule, allowed = f"rows changed <= {max_changed[col]}", max_changed[col]
            changed_rows = changed
            ok = changed <= max_changed[col]
        else:
            rule, allowed = "equal", 0
            changed_rows = changed
            ok = changed == 0
        records.append({"column": col, "rule": rule, "rows": len(merged), "max |diff|": max_diff,
                        "rows changed": changed_rows, "allowed": allowed})
        if not ok:
            why = _why_infinite(a, b) if max_diff == math.inf else ""
            problems.append(f"{col}: {rule} broken ({changed_rows} row(s) changed, max |diff| {max_diff:.3g}{why})")
    if problems:
        raise RowsDisagree(f"{what} disagree with the stored rows:\n  " + "\n  ".join(problems))
    return pd.DataFrame.from_records(records)


def _names(columns) -> list:
    """Column names as a list; a single str is one name (not its characters)."""
    return [columns] if isinstance(columns, str) else list(columns)


def _numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _nan_mismatch(a: pd.Series, b: pd.Series) -> bool:
    return bool((a.isna().to_numpy() != b.isna().to_numpy()).any())


def _floats(s: pd.Series) -> np.ndarray:
    return s.to_numpy(dtype=float, na_value=np.nan)


def _exact_integers(a: pd.Series, b: pd.Series) -> bool:
    """Both columns plain numpy integers (no missing values): compared without rounding."""
    return all(isinstance(s.dtype, np.dtype) and s.dtype.kind in "iu" for s in (a, b))


def _abs_diff(a: pd.Series, b: pd.Series) -> np.ndarray:
    """``|live - stored|`` per row of two numeric columns, as float64.

    0 where the two are equal: the same value, NaN on both sides, or the same infinity (``inf - inf``
    would be NaN). ``inf`` where NaN is on one side only, where an infinity meets a finite value or
    the opposite infinity, and where the difference of two finite values overflows float64. Integer
    columns are subtracted as Python ints, so that ``2**53 + 1`` and ``2**53`` differ by 1.
    """
    if _exact_integers(a, b):
        exact = [abs(int(x) - int(y)) for x, y in zip(a.to_numpy(), b.to_numpy())]
        return np.array([float(d) if d < 2.0**1023 else math.inf for d in exact], dtype=float)
    x, y = _floats(a), _floats(b)
    nx, ny = np.isnan(x), np.isnan(y)
    same = (x == y) | (nx & ny)
    with np.errstate(over="ignore", invalid="ignore"):
        diff = np.abs(x - y)
    diff[nx ^ ny] = math.inf
    diff[same] = 0.0
    return diff


def _why_infinite(a: pd.Series, b: pd.Series) -> str:
    """Why a numeric column's largest difference is infinite, for the error message."""
    if not (_numeric(a) and _numeric(b)) or _exact_integers(a, b):
        return ""
    x, y = _floats(a), _floats(b)
    nx, ny = np.isnan(x), np.isnan(y)
    ix, iy = np.isinf(x), np.isinf(y)
    reasons = {
        "NaN on one side only": nx ^ ny,
        "an infinity against a finite value or the opposite infinity": (ix | iy) & ~nx & ~ny & (x != y),
        "a difference that overflows float64": np.isfinite(x) & np.isfinite(y) & np.isinf(_abs_diff(a, b)),
    }
    found = [f"{int(m.sum())} row(s) with {what}" for what, m in reasons.items() if m.any()]
    return f": {'; '.join(found)}" if found else ""


def _differs(a: pd.Series, b: pd.Series, tol: float) -> np.ndarray:
    return _abs_diff(a, b) > tol


def _changed(a: pd.Series, b: pd.Series) -> tuple[int, float]:
    """Rows that differ at all, and the largest numeric difference (NaN for non-numeric)."""
    if _numeric(a) and _numeric(b):
        diff = _abs_diff(a, b)
        return int(np.count_nonzero(diff)), float(diff.max()) if diff.size else 0.0
    both_missing = (a.isna() & b.isna()).to_numpy()  # absent on both sides: equal
    sa, sb = a.astype(str).to_numpy(), b.astype(str).to_numpy()
    return int(((sa != sb) & ~both_missing).sum()), math.nan
