"""Reproduction checks: what a source says, what we compute, a tolerance, and a verdict.

Every experiment in the book ends with a :class:`ReproductionTable`. Each row compares one
quantitative claim of a seed with the value this library computes. A row carries the verdict it
is *expected* to reach: ``"reproduced"`` for a claim we confirm, ``"differs"`` for a claim we
have shown to be wrong (the chapter says why), or ``"not comparable"`` where the seed's number
cannot be set against ours (the row says why). :meth:`ReproductionTable.check` raises
:class:`ReproductionError` when any verdict is not the expected one, so a regression fails the
book build and nbval instead of quietly changing a table.

Tolerances are absolute (``|ours - seed| <= tol``) or relative (``|ours - seed| <= tol |seed|``)
and are fixed before the comparison; they are never tuned to make a number match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from assocmem._checks import as_bool, as_int, as_real
from assocmem.display import fmt

__all__ = ["Check", "ReproductionError", "ReproductionTable"]

Verdict = Literal["reproduced", "differs", "not comparable"]
_VERDICTS = ("reproduced", "differs", "not comparable")


class ReproductionError(AssertionError):
    """A reproduction check reached a verdict other than the one the chapter expects."""


#: An absolute tolerance at or below this is a rounding-level check (an identity that holds up to
#: float64 rounding): a value within it is shown as the bound ``"< tol"``, never as its digits.
ROUNDING_LEVEL = 1e-6


def _fmt(x: object, digits: int) -> str:
    """A table cell: ``digits`` significant digits, exponent form outside [1e-3, 1e6); None is "-"."""
    if x is None:
        return "-"
    if isinstance(x, float) and x != 0 and math.isfinite(x) and not 1e-3 <= abs(x) < 1e6:
        return fmt(x, f".{digits - 1}e")
    return fmt(x, f".{digits}g", missing="nan")


@dataclass(frozen=True)
class Check:
    """One row of a reproduction table.

    Attributes
    ----------
    claim : str
        What is compared, in a few words (e.g. ``"e_add(n = d_k + 1)"``).
    seed : float or str or None
        The value the seed states. A string for qualitative claims (``"linear in n"``).
    ours : float or str or None
        The value computed here.
    tol : float or None
        The tolerance; ``None`` for qualitative rows, where ``passed`` decides.
    relative : bool
        Whether ``tol`` is relative to ``|seed|``.
    source : str
        Where the seed states the claim (section, equation, figure).
    expect : {"reproduced", "differs", "not comparable"}
        The verdict this row must reach.
    note : str
        Why a row differs or is not comparable; shown in the table.
    passed : bool or None
        For qualitative rows: whether our computation confirms the claim.
    below : float or None
        Show ``ours`` as the bound ``"< below"`` (a rounding-level value; :mod:`assocmem.display`).
        By default a row whose absolute ``tol`` is at most :data:`ROUNDING_LEVEL` shows a value
        within ``tol`` of a source value of 0 as ``"< tol"``. The verdict always uses the
        unrounded value.

    Raises
    ------
    ValueError
        If ``expect`` is not a verdict; ``tol`` is not a finite real number ``>= 0`` (booleans
        and strings are refused); ``relative`` is not a bool; ``passed`` is not a bool (Python,
        numpy or a 0-d tensor); ``below`` is not a positive finite number; ``seed`` or ``ours``
        is not a number, string or None (a tensor or array must hold one value); or a numeric row
        lacks numeric ``seed``/``ours`` (booleans are not numbers here) or a ``tol``.
    TypeError
        If ``claim`` is not a str.
    """

    claim: str
    seed: float | str | None
    ours: float | str | None
    tol: float | None = None
    relative: bool = False
    source: str = ""
    expect: Verdict = "reproduced"
    note: str = ""
    passed: bool | None = None
    below: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.claim, str):
            raise TypeError(f"claim must be a str, got {type(self.claim).__name__} {self.claim!r}")
        if not isinstance(self.expect, str) or self.expect not in _VERDICTS:
            raise ValueError(f"expect must be one of {_VERDICTS}, got {self.expect!r}")
        set_ = object.__setattr__  # the dataclass is frozen: normalise the fields once, here
        set_(self, "seed", _plain(self.seed, "seed"))
        set_(self, "ours", _plain(self.ours, "ours"))
        if self.tol is not None:
            tol = as_real(self.tol, "tol", minimum=0)  # no bool, str, NaN or inf tolerance
            if type(self.tol) not in (int, float):  # numpy and torch scalars become plain floats
                set_(self, "tol", tol)
        set_(self, "relative", as_bool(self.relative, "relative"))
        if self.passed is not None:
            set_(self, "passed", as_bool(self.passed, "passed"))
        if self.below is not None:
            set_(self, "below", as_real(self.below, "below", minimum=0, strict_min=True))
        numeric = _is_number(self.seed) and _is_number(self.ours)
        if self.expect != "not comparable" and self.passed is None and not (numeric and self.tol is not None):
            raise ValueError(
                f"check {self.claim!r}: a numeric comparison needs numeric seed/ours (booleans are not "
                "numbers here) and a tol; "
                "a qualitative one needs passed=True/False"
            )

    def display(self, digits: int) -> str:
        """``ours`` at ``digits`` significant digits, or as its rounding-level bound."""
        if self.below is not None:
            return fmt(self.ours, below=self.below)
        if (
            isinstance(self.ours, float)
            and isinstance(self.seed, (int, float))
            and self.seed == 0
            and self.tol is not None
            and not self.relative
            and self.tol <= ROUNDING_LEVEL
            and abs(self.ours) < self.tol
        ):
            return fmt(self.ours, below=self.tol)
        return _fmt(self.ours, digits)

    @property
    def error(self) -> float | None:
        """``|ours - seed|``, or ``None`` for a qualitative row."""
        if _is_number(self.seed) and _is_number(self.ours):
            return abs(float(self.ours) - float(self.seed))
        return None

    @property
    def verdict(self) -> str:
        """``"reproduced"`` when within tolerance (or ``passed``), else ``"differs"``.

        A ``"not comparable"`` row stays so unless ``passed`` is ``False``: then our own check
        failed and the verdict is ``"differs"`` (so :meth:`ReproductionTable.check` raises). A
        numeric row whose value is NaN is ``"invalid"``, which no row may expect: a broken
        computation cannot pass as a difference.
        """
        if self.expect == "not comparable":
            return "differs" if self.passed is False else "not comparable"
        if self.passed is not None:
            return "reproduced" if self.passed else "differs"
        bound = self.tol * abs(float(self.seed)) if self.relative else self.tol
        err = self.error
        if err is None or math.isnan(err) or math.isnan(bound):
            return "invalid"
        return "reproduced" if err <= bound else "differs"


@dataclass
class ReproductionTable:
    """The reproduction checks of one experiment.

    Examples
    --------
    >>> t = ReproductionTable("Additive memory")
    >>> t.add("e_add(n = 65), d_k = 64", seed=1.0, ours=0.997, tol=0.05, source="seed 000, sec. 7")
    >>> t.check()  # raises ReproductionError on a regression

    Raises
    ------
    TypeError
        If ``title`` is not a str or ``rows`` holds something other than :class:`Check` objects.
    ValueError
        If ``digits`` is not an integer ``>= 1``.
    """

    title: str
    digits: int = 4
    rows: list[Check] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.title, str):
            raise TypeError(f"title must be a str, got {type(self.title).__name__} {self.title!r}")
        self.digits = as_int(self.digits, "digits", minimum=1)
        bad = [r for r in self.rows if not isinstance(r, Check)]
        if bad:
            raise TypeError(f"rows must be Check objects, got {bad[0]!r}")

    def add(self, claim: str, seed=None, ours=None, tol=None, **kwargs) -> Check:
        """Append a :class:`Check` built from the arguments and return it.

        numpy and torch scalars (and 0-d arrays or tensors) become plain Python numbers.

        Raises
        ------
        ValueError, TypeError
            As :class:`Check` does; the table is then left unchanged.
        """
        row = Check(claim, seed, ours, tol, **kwargs)
        self.rows.append(row)
        return row

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame of display strings (rounded to ``digits`` significant digits)."""
        records = []
        for r in self.rows:
            if r.tol is None:
                tol = "-"
            else:
                tol = f"{_fmt(r.tol, 2)}{' (rel.)' if r.relative else ''}"
            records.append(
                {
                    "claim": r.claim,
                    "source": r.source,
                    "source says": _fmt(r.seed, self.digits),
                    "ours": r.display(self.digits),
                    "tolerance": tol,
                    "verdict": r.verdict + (f": {r.note}" if r.note else ""),
                }
            )
        return pd.DataFrame.from_records(
            records, columns=["claim", "source", "source says", "ours", "tolerance", "verdict"]
        )

    def failures(self) -> list[Check]:
        """The rows whose verdict is not the expected one."""
        return [r for r in self.rows if r.verdict != r.expect]

    def check(self) -> "ReproductionTable":
        """Raise :class:`ReproductionError` if any row missed its expected verdict; else return self."""
        bad = self.failures()
        if bad:
            lines = [
                f"  {r.claim}: source says {_fmt(r.seed, self.digits)}, ours {r.ours!r}, "
                f"tol {r.tol}, verdict {r.verdict!r}, expected {r.expect!r}"
                for r in bad
            ]
            raise ReproductionError(f"{self.title}: {len(bad)} check(s) regressed\n" + "\n".join(lines))
        return self

    def show(self):
        """Check, then return the table for display (a pandas DataFrame, index hidden in HTML)."""
        self.check()
        return _Display(self.title, self.to_frame())

    @property
    def counts(self) -> dict[str, int]:
        """How many rows reached each verdict."""
        out = {v: 0 for v in (*_VERDICTS, "invalid")}
        for r in self.rows:
            out[r.verdict] += 1
        return out


class _Display:
    """Deterministic rich display (no random ids, so nbval can compare it)."""

    def __init__(self, title: str, frame: pd.DataFrame):
        self.title, self.frame = title, frame

    def _repr_html_(self) -> str:
        body = self.frame.to_html(index=False, escape=True, border=0, classes="repro-table")
        return f"<p><strong>Reproduction check: {_escape(self.title)}</strong></p>\n{body}"

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", 80, "display.width", 200):
            return f"Reproduction check: {self.title}\n{self.frame.to_string(index=False)}"


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _is_number(x) -> bool:
    """A real number for a numeric comparison: int or float, not a boolean."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _plain(x, name: str):
    """numpy / torch scalars to Python numbers, so the table and the tolerances use plain floats."""
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    if isinstance(x, np.bool_):
        return bool(x)
    item = getattr(x, "item", None)
    if callable(item):
        size = getattr(x, "size", None)
        size = size() if callable(size) else size  # torch's size is a method, numpy's a number
        count = getattr(x, "numel", lambda: size)()
        if isinstance(count, int) and count != 1:
            raise ValueError(f"{name} must be a number, str or None; got a {type(x).__name__} of "
                             f"shape {tuple(getattr(x, 'shape', ()))} ({count} values)")
        return item()
    try:
        return float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, str or None; got {type(x).__name__} {x!r}") from None



