"""Reproduction checks: what a source says, what we compute, a tolerance, and a verdict.

Every experiment in the book ends with a :class:`ReproductionTable`. Each row is one of three
kinds (``kind=``):

``"claim"``
    A verdict on a source's claim, which could come out either way: ``"reproduced"`` when our
    value is within the tolerance of the source's (or the yes-or-no check holds), ``"differs"``
    when it is not (the chapter says why). The row states the verdict it *expects*. A claim about
    a trained model is a statement about its trainings (``holds=``, one yes-or-no per training):
    ``"reproduced"`` when it holds in every training, ``"differs"`` in none, and ``"mixed"`` when
    it holds in some trainings and not in others (the note says in how many).
``"sanity"``
    A check of our own code or of a result the book derives itself. Its verdict is
    ``"sanity: ok"``; when the check fails it is ``"sanity: failed"`` and the build fails. Sanity
    rows are labelled as such and kept out of the count of verdicts.
``"not comparable"``
    The source makes the claim but gives nothing we can set against our value, or our setting
    differs from the source's; the note says why. It may still carry ``passed=``, a check of ours
    that fails the build when it fails.

Where a claim comes from matters too (``origin=``): ``"seed"`` for the three seed documents (and,
in Part III, the paper the review discusses, quoted through it), ``"outside"`` for material from
anywhere else, such as the authors' code or a value read off a figure. An outside row is shown as
such in the table and never counted as the seed's claim.

:meth:`ReproductionTable.verify` (also ``check()`` without arguments) raises
:class:`ReproductionError` when any verdict is not the expected one, so a regression fails the book
build and nbval instead of quietly changing a table.

A row that checks a claim of the registry (:mod:`assocmem.claims`) is made by id,
``table.check("001.fig2c.ntk-ratio", ours=..., passed=...)``: the claim's text, the source's value
and where the source states it come from the registry, and the row keeps the id (``claim_id``),
which :func:`collect` returns, so that the book's page of claims finds every row that checks a
claim. A row whose test differs from other chapters' tests of the same claim (another setting,
another quantity) says so with ``different_test="why"``; its verdict is then not set against
theirs (:func:`assocmem.claims.verdicts`).

:meth:`ReproductionTable.show` also stores the rows (display strings only) in the output's
metadata, and :func:`collect` reads them back from executed notebooks, so that the book's front
matter counts its verdicts from the tables themselves.

Tolerances are absolute (``|ours - seed| <= tol``) or relative (``|ours - seed| <= tol |seed|``)
and are fixed before the comparison; they are never tuned to make a number match.

A row is decided by exactly one test: a tolerance (``tol=``, numeric ``seed`` and ``ours``) or a
yes-or-no check (``passed=``), never both, so that a ``passed`` cannot override a tolerance the
table shows. A row expected to differ or to be not comparable carries a ``note`` saying why, and
every row names what it compares (a claim that is not blank).
"""

from __future__ import annotations

import html as _html
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Mapping, TYPE_CHECKING

import numpy as np
import pandas as pd

from assocmem._checks import as_bool, as_int, as_real
from assocmem.display import fmt

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "KINDS",
    "METADATA_KEY",
    "ORIGINS",
    "Check",
    "ReproductionError",
    "ReproductionTable",
    "collect",
    "verdict_counts",
]

Kind = Literal["claim", "sanity", "not comparable"]
Verdict = Literal["reproduced", "differs", "not comparable", "sanity: ok", "sanity: failed", "invalid"]
#: The row kinds, in the order the tables and counts list them.
KINDS = ("claim", "sanity", "not comparable")
#: Where a row's claim comes from: the seeds, or outside them (authors' code, a figure, a paper).
ORIGINS = ("seed", "outside")
_CLAIM_VERDICTS = ("reproduced", "differs", "mixed")
_VERDICTS = ("reproduced", "differs", "not comparable", "mixed", "sanity: ok", "sanity: failed", "invalid")
_UNSET = object()  # an argument not given (None is a value a row may state)
#: The output-metadata key under which :meth:`ReproductionTable.show` stores its rows.
METADATA_KEY = "assocmem.repro"


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
        What is compared, in a few words (e.g. ``"e_add(n = d_k + 1)"``); not blank.
    seed : float or str or None
        The value the source states. A string for qualitative claims (``"linear in n"``).
    ours : float or str or None
        The value computed here.
    tol : float or None
        The tolerance, which decides a numeric row; ``None`` for rows that ``passed`` decides.
    relative : bool
        Whether ``tol`` is relative to ``|seed|``.
    source : str
        Where the source states the claim (section, equation, figure); for ``origin="outside"``,
        where the material comes from (``"authors' code (SDM_Circ_Inter_Funcs.py)"``,
        ``"read off Fig. 16"``).
    expect : {"reproduced", "differs", "mixed", "not comparable"} or None
        The verdict this row must reach. ``None`` (the default) means ``"reproduced"`` for a
        claim, ``"sanity: ok"`` for a sanity check and ``"not comparable"`` for a row of that
        kind; after construction the attribute holds the resolved verdict.
    note : str
        Why a row differs or is not comparable (required for those rows: the reason, not the
        row's history); shown in the table.
    passed : bool or None
        For rows without a tolerance: whether our computation confirms the claim. Not together
        with ``tol`` (a check against a tolerance is ``tol=`` with numeric ``seed``/``ours``).
    holds : sequence of bool or None
        For a claim about a trained model: whether the claim holds in each training (at least
        two). Decides the verdict (all: ``"reproduced"``, none: ``"differs"``, some:
        ``"mixed"``); not together with ``tol`` or ``passed``. After construction a tuple.
    below : float or None
        Show ``ours`` as the bound ``"< below"`` (a rounding-level value; :mod:`assocmem.display`).
        By default a row whose absolute ``tol`` is at most :data:`ROUNDING_LEVEL` shows a value
        within ``tol`` of a source value of 0 as ``"< tol"``. The verdict always uses the
        unrounded value.
    kind : {"claim", "sanity", "not comparable"} or None
        What the row is (module docstring). ``None`` (the default) means ``"not comparable"``
        when ``expect="not comparable"``, else ``"claim"``; after construction the attribute
        holds the resolved kind.
    origin : {"seed", "outside"}
        Whether the claim is the seeds' (default) or comes from outside them; an outside row
        needs a ``source`` naming where it comes from.
    claim_id : str or None
        The registry id of the claim the row checks (:mod:`assocmem.claims`), set by
        :meth:`ReproductionTable.check`; None for a row made by ``add`` (the crosswalk maps those).
    different_test : str or None
        Why this row's test of its claim is not the test other chapters make of it (another
        setting, another quantity), so that its verdict is not set against theirs; None (the
        default) for a row that tests the claim as stated.

    Raises
    ------
    ValueError
        If ``kind``, ``origin`` or ``expect`` is not one of the values above, or ``expect`` does
        not fit ``kind`` (a claim expects ``"reproduced"`` or ``"differs"``, a sanity check
        nothing else, a not-comparable row ``"not comparable"``); an outside row has no
        ``source``; ``tol`` is not a finite real number ``>= 0`` (booleans and strings are
        refused); ``relative`` is not a bool; ``passed`` is not a bool (Python, numpy or a 0-d
        tensor); ``below`` is not a positive finite number; ``seed`` or ``ours`` is not a number,
        string or None (a tensor or array must hold one value); or a claim or sanity row lacks
        numeric ``seed``/``ours`` (booleans are not numbers here) and a ``tol``, and has no
        ``passed``; ``passed`` and ``tol`` are both given (``passed`` would override the
        tolerance); a not-comparable row has a ``tol``; ``claim`` is blank; or a row expected
        to be ``"differs"`` or ``"not comparable"`` has a blank ``note``.
    TypeError
        If ``claim``, ``source`` or ``note`` is not a str, or ``claim_id`` or ``different_test`` is
        neither a str nor None.
    KeyError
        If ``claim_id`` is not an id of the registry (the message names the closest ids).
    """

    claim: str
    seed: float | str | None
    ours: float | str | None
    tol: float | None = None
    relative: bool = False
    source: str = ""
    expect: str | None = None
    note: str = ""
    passed: bool | None = None
    below: float | None = None
    kind: Kind | None = None
    origin: str = "seed"
    holds: tuple | None = None
    claim_id: str | None = None
    different_test: str | None = None

    def __post_init__(self) -> None:
        for name in ("claim", "source", "note"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")
        if not self.claim.strip():
            raise ValueError(f"claim must say what is compared, got the blank string {self.claim!r}")
        for name in ("claim_id", "different_test"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str or None, got {type(value).__name__} {value!r}")
        if self.claim_id is not None:
            from assocmem.claims import get_claim

            get_claim(self.claim_id)  # a KeyError naming the closest ids
        if self.different_test is not None and not self.different_test.strip():
            raise ValueError(f"check {self.claim!r}: different_test must say how the test differs, got "
                             f"the blank string {self.different_test!r}")
        set_ = object.__setattr__  # the dataclass is frozen: normalise the fields once, here
        set_(self, "kind", _resolve_kind(self.kind, self.expect))
        set_(self, "expect", _resolve_expect(self.kind, self.expect, self.claim))
        if not isinstance(self.origin, str) or self.origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, got {self.origin!r}")
        if self.origin == "outside" and not self.source.strip():
            raise ValueError(f"check {self.claim!r}: an outside row must say where it comes from (source=)")
        set_(self, "seed", _plain(self.seed, "seed"))
        set_(self, "ours", _plain(self.ours, "ours"))
        if self.tol is not None:
            tol = as_real(self.tol, "tol", minimum=0)  # no bool, str, NaN or inf tolerance
            if type(self.tol) not in (int, float):  # numpy and torch scalars become plain floats
                set_(self, "tol", tol)
        set_(self, "relative", as_bool(self.relative, "relative"))
        if self.passed is not None:
            set_(self, "passed", as_bool(self.passed, "passed"))
            if self.tol is not None:
                raise ValueError(
                    f"check {self.claim!r}: give tol= (the tolerance decides, with numeric seed/ours) or "
                    f"passed= (a yes-or-no check decides), not both: passed={self.passed} would override "
                    f"the tolerance {self.tol}")
        if self.holds is not None:
            if self.kind != "claim":
                raise ValueError(f"check {self.claim!r}: holds= is for claims about trained models; a "
                                 f"{self.kind} row is decided by passed=")
            if self.tol is not None or self.passed is not None:
                raise ValueError(f"check {self.claim!r}: give holds= (one verdict per training) alone, "
                                 "without tol= or passed=")
            if isinstance(self.holds, (str, bytes)) or not hasattr(self.holds, "__iter__"):
                raise ValueError(f"check {self.claim!r}: holds must be a sequence of bools, one per training")
            holds = tuple(as_bool(h, "holds") for h in self.holds)
            if len(holds) < 2:
                raise ValueError(f"check {self.claim!r}: holds needs at least two trainings; got {len(holds)}")
            set_(self, "holds", holds)
        elif self.expect == "mixed":
            raise ValueError(f"check {self.claim!r}: only a row over trainings (holds=) can be 'mixed'")
        if self.kind == "not comparable" and self.tol is not None:
            raise ValueError(f"check {self.claim!r}: a not-comparable row has nothing to set a tolerance "
                             f"against (tol={self.tol} would be shown and decide nothing); a check of ours "
                             "is passed=")
        if self.expect in ("differs", "mixed", "not comparable") and not self.note.strip():
            raise ValueError(f"check {self.claim!r}: a row expected to be {self.expect!r} needs a note= "
                             "saying why")
        if self.below is not None:
            set_(self, "below", as_real(self.below, "below", minimum=0, strict_min=True))
        numeric = _is_number(self.seed) and _is_number(self.ours)
        if (self.kind != "not comparable" and self.passed is None and self.holds is None
                and not (numeric and self.tol is not None)):
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
    def label(self) -> str:
        """The kind as the table shows it: ``"claim (outside the seeds)"`` for an outside claim."""
        if self.kind == "claim" and self.origin == "outside":
            return "claim (outside the seeds)"
        return self.kind

    @property
    def verdict(self) -> str:
        """The verdict this row reaches.

        A claim is ``"reproduced"`` when within tolerance (or ``passed``), else ``"differs"``. A
        sanity check is ``"sanity: ok"`` or ``"sanity: failed"``. A ``"not comparable"`` row
        stays so unless ``passed`` is ``False``: then our own check failed and the verdict is
        ``"differs"`` (so :meth:`ReproductionTable.verify` raises). A numeric row whose value is
        NaN is ``"invalid"``, which no row may expect: a broken computation cannot pass as a
        difference.
        """
        if self.kind == "not comparable":
            return "differs" if self.passed is False else "not comparable"
        if self.holds is not None:
            return "reproduced" if all(self.holds) else ("differs" if not any(self.holds) else "mixed")
        if self.passed is not None:
            raw = "reproduced" if self.passed else "differs"
        else:
            bound = self.tol * abs(float(self.seed)) if self.relative else self.tol
            err = self.error
            if err is None or math.isnan(err) or math.isnan(bound):
                return "invalid"
            raw = "reproduced" if err <= bound else "differs"
        if self.kind == "sanity":
            return "sanity: ok" if raw == "reproduced" else "sanity: failed"
        return raw


def _resolve_kind(kind, expect) -> str:
    if kind is None:
        return "not comparable" if expect == "not comparable" else "claim"
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return kind


def _resolve_expect(kind: str, expect, claim: str) -> str:
    allowed = {"claim": (None, *_CLAIM_VERDICTS), "sanity": (None, "sanity: ok"),
               "not comparable": (None, "not comparable")}[kind]
    if not isinstance(expect, (str, type(None))) or expect not in allowed:
        if isinstance(expect, str) and expect in _VERDICTS:
            raise ValueError(f"check {claim!r}: a {kind} row cannot expect {expect!r} "
                             f"(allowed: {[a for a in allowed if a]})")
        raise ValueError(f"expect must be one of {_VERDICTS[:3]} or None, got {expect!r}")
    if expect is not None:
        return expect
    return {"claim": "reproduced", "sanity": "sanity: ok", "not comparable": "not comparable"}[kind]


@dataclass
class ReproductionTable:
    """The reproduction checks of one experiment.

    Parameters
    ----------
    title : str
        Shown above the table; its slug names the table's HTML anchors (``repro-<slug>-<row>``).
    digits : int, default 4
        Significant digits of the numbers shown.
    rows : list of Check
    summary : bool, default False
        A table that repeats rows shown in earlier tables of the same chapter: :func:`collect`
        leaves it out unless asked, so no verdict is counted twice.

    Examples
    --------
    >>> t = ReproductionTable("Additive memory")
    >>> t.add("e_add(n = 65), d_k = 64", seed=1.0, ours=0.997, tol=0.05,
    ...       source="seed 000, sec. 7")
    >>> # a claim of the registry, by its id
    >>> t.check("001.fig2c.ntk-ratio", ours=120.0, passed=True, case="F = 1024")
    >>> t.verify()  # raises ReproductionError on a regression

    Raises
    ------
    TypeError
        If ``title`` is not a str or ``rows`` holds something other than :class:`Check` objects.
    ValueError
        If ``digits`` is not an integer ``>= 1``, ``summary`` is not a bool, or ``title`` has no
        letter or digit to name its anchors.
    """

    title: str
    digits: int = 4
    rows: list[Check] = field(default_factory=list)
    summary: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.title, str):
            raise TypeError(f"title must be a str, got {type(self.title).__name__} {self.title!r}")
        if not _slug(self.title):
            raise ValueError(f"title must contain a letter or digit, got {self.title!r}")
        self.digits = as_int(self.digits, "digits", minimum=1)
        self.summary = as_bool(self.summary, "summary")
        bad = [r for r in self.rows if not isinstance(r, Check)]
        if bad:
            raise TypeError(f"rows must be Check objects, got {bad[0]!r}")

    def add(self, claim: str, seed: float | str | None = None, ours: float | str | None = None,
            tol: float | None = None, **kwargs: Any) -> Check:
        """Append a :class:`Check` built from the arguments and return it.

        numpy and torch scalars (and 0-d arrays or tensors) become plain Python numbers. The row
        is decided by ``tol`` or by ``passed``, never both; a row expected to differ or to be not
        comparable needs a ``note`` (:class:`Check`).

        Raises
        ------
        ValueError, TypeError
            As :class:`Check` does; the table is then left unchanged.
        """
        if "claim_id" in kwargs:
            raise TypeError("add() takes no claim_id: a row that checks a registry claim is made by "
                            "check(claim_id, ours=...), which takes the claim's text, value and location "
                            "from the registry")
        row = Check(claim, seed, ours, tol, **kwargs)
        self.rows.append(row)
        return row

    def check(self, claim_id: str | None = None, /, *, ours: float | str | None = _UNSET,
              seed: float | str | None = _UNSET, value: str | None = None,
              case: str | None = None, **kwargs: Any) -> Check | ReproductionTable:
        """Append a row that checks the registry's claim ``claim_id`` and return it.

        Called without arguments, ``check()`` is :meth:`verify` (its name before rows were made by
        id): it raises if a row missed its expected verdict and returns the table.

        The row's claim text is the registry's (followed by ``case`` in parentheses), its
        ``source`` is ``"seed NNN, <location>"`` (for ``origin="outside"``, the registry's
        ``outside`` material), and its ``seed`` is the registry's value; the row records
        ``claim_id``. Everything else is as :meth:`add` takes it.

        Parameters
        ----------
        claim_id : str
            A registry id (:func:`assocmem.claims.get_claim`).
        ours : float or str or None
            The value computed here (required).
        seed : float or str or None, optional
            What the row sets ``ours`` against, only where the registry has no number for it: a
            claim with no value (null) or a string. By default the registry's value; a range is
            shown as ``"lo to hi"``, and a row may set one of its two ends instead (a bound
            checked alone). Refused where the registry's value (or the named one) is a number,
            which the row must use, and for a range, anything but one of its ends.
        value : str, optional
            For a claim whose registry value names several values (a mapping), the name of the
            one this row checks.
        case : str, optional
            The case this row checks (``"d_k = 64, n = 65"``), for a chapter with several rows
            on one claim; shown after the claim's text.
        **kwargs
            ``tol``, ``relative``, ``passed``, ``holds``, ``expect``, ``note``, ``kind``,
            ``origin``, ``below`` and ``different_test``, as :class:`Check` takes them. Not
            ``claim`` or ``source``, which the registry gives.

        Returns
        -------
        Check

        Raises
        ------
        KeyError
            If no claim has the id (the message names the closest ids).
        TypeError
            If ``ours`` is missing, ``claim`` or ``source`` is given, or keywords are given
            without an id.
        ValueError
            If ``seed`` is given where the registry has a number, or is not an end of its
            range; ``value`` is missing for a claim with named values, names no value of it, or
            is given for a claim without named values; ``kind="sanity"`` (a sanity check tests
            our own code, not a source's claim: use :meth:`add`); ``origin="outside"`` for a
            claim with no outside material in the registry; ``case`` is blank; and as
            :class:`Check` raises (the table is then left unchanged).
        """
        if claim_id is None:
            if ours is not _UNSET or seed is not _UNSET or value is not None or case is not None or kwargs:
                raise TypeError("check() takes a claim id to add a row by id, or nothing to verify the table")
            return self.verify()
        from assocmem.claims import get_claim

        record = get_claim(claim_id)
        if ours is _UNSET:
            raise TypeError(f"check({claim_id!r}): ours= is required (the value computed here)")
        given = sorted({"claim", "source", "claim_id"} & set(kwargs))
        if given:
            raise TypeError(f"check({claim_id!r}): {', '.join(given)} come(s) from the registry, not the call")
        if kwargs.get("kind") == "sanity":
            raise ValueError(f"check({claim_id!r}): a sanity row tests our own code, not a source's claim; "
                             "make it with add()")
        stated, numeric = _registry_value(record, value)
        if seed is _UNSET:
            seed = str(stated) if isinstance(stated, _Range) else stated
        elif numeric:
            raise ValueError(f"check({claim_id!r}): the registry gives the number {stated!r}, which the row "
                             f"uses; seed={seed!r} would contradict it")
        elif isinstance(stated, _Range) and not (_is_number(seed) and seed in stated.ends):
            raise ValueError(f"check({claim_id!r}): the registry gives the range {stated}; seed= may only "
                             f"name one of its ends {stated.ends}, got {seed!r}")
        if kwargs.get("origin", "seed") == "outside":
            if record.outside is None:
                raise ValueError(f"check({claim_id!r}): origin='outside', but the registry records no "
                                 "outside material for this claim")
            source = record.outside
        else:
            source = f"seed {record.source}, {record.location}"
        text = record.claim
        if case is not None:
            if not isinstance(case, str) or not case.strip():
                raise ValueError(f"check({claim_id!r}): case must name the case the row checks, got {case!r}")
            text = f"{text} ({case.strip()})"
        row = Check(text, seed, ours, kwargs.pop("tol", None), source=source, claim_id=claim_id, **kwargs)
        self.rows.append(row)
        return row

    @property
    def anchor(self) -> str:
        """The HTML id of the table, ``"repro-<slug of the title>"``; row ``i`` (from 1) adds ``-i``."""
        return f"repro-{_slug(self.title)}"

    def records(self) -> list[dict[str, str]]:
        """One dict of display strings per row (no raw floats): what the table shows and stores."""
        out = []
        for i, r in enumerate(self.rows, start=1):
            tol = "-" if r.tol is None else f"{_fmt(r.tol, 2)}{' (rel.)' if r.relative else ''}"
            if r.holds is not None:
                tol = f"holds in {sum(r.holds)} of {len(r.holds)} trainings"
            rec = {
                "claim": r.claim,
                "kind": r.label,
                "origin": r.origin,
                "source": r.source,
                "source says": _fmt(r.seed, self.digits),
                "ours": r.display(self.digits),
                "tolerance": tol,
                "verdict": r.verdict,
                "note": r.note,
                "anchor": f"{self.anchor}-{i}",
            }
            # Only where set, so that the rows made by add() store exactly what they always did.
            for key in ("claim_id", "different_test"):
                if getattr(r, key) is not None:
                    rec[key] = getattr(r, key)
            out.append(rec)
        return out

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame of display strings (rounded to ``digits`` significant digits)."""
        records = [
            {**{k: rec[k] for k in ("claim", "kind", "source", "source says", "ours", "tolerance")},
             "verdict": rec["verdict"] + (f": {rec['note']}" if rec["note"] else "")
             + (f" (a different test: {rec['different_test']})" if "different_test" in rec else "")}
            for rec in self.records()
        ]
        for rec in records:
            if rec["kind"] == "claim (outside the seeds)":
                rec["source"] = f"outside the seeds: {rec['source']}"
        return pd.DataFrame.from_records(records, columns=list(COLUMNS))

    def failures(self) -> list[Check]:
        """The rows whose verdict is not the expected one."""
        return [r for r in self.rows if r.verdict != r.expect]

    def verify(self) -> "ReproductionTable":
        """Raise :class:`ReproductionError` if any row missed its expected verdict; else return self."""
        bad = self.failures()
        if bad:
            lines = [
                f"  {r.claim} ({r.kind}): source says {_fmt(r.seed, self.digits)}, ours {r.ours!r}, "
                f"tol {r.tol}, verdict {r.verdict!r}, expected {r.expect!r}"
                for r in bad
            ]
            raise ReproductionError(f"{self.title}: {len(bad)} check(s) regressed\n" + "\n".join(lines))
        return self

    def show(self) -> _Display:
        """Check, then return the table for display (HTML with an id per row, plain text, and
        the rows as display strings in the output's metadata under :data:`METADATA_KEY`)."""
        self.verify()
        return _Display(self)

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """How many rows reached each verdict, by kind (``counts["claim"]["differs"]``).

        Outside claims are counted under ``"claim (outside the seeds)"``, apart from the seeds'.
        """
        out: dict[str, dict[str, int]] = {}
        for r in self.rows:
            bucket = out.setdefault(r.label, {})
            bucket[r.verdict] = bucket.get(r.verdict, 0) + 1
        return out


#: The columns of a displayed table.
COLUMNS = ("claim", "kind", "source", "source says", "ours", "tolerance", "verdict")


class _Display:
    """Deterministic rich display (no random ids, so nbval can compare it)."""

    def __init__(self, table: ReproductionTable):
        self.table = table
        self.title, self.frame = table.title, table.to_frame()

    def _repr_html_(self) -> str:
        t = self.table
        head = "".join(f"<th>{_escape(c)}</th>" for c in COLUMNS)
        body = []
        for (_, row), rec in zip(self.frame.iterrows(), t.records()):
            cells = "".join(f"<td>{_escape(str(row[c]))}</td>" for c in COLUMNS)
            claim = f' data-claim="{_escape(rec["claim_id"])}"' if "claim_id" in rec else ""
            body.append(f'    <tr id="{rec["anchor"]}" class="repro-{_slug(rec["kind"])}"{claim}>{cells}</tr>')
        return (f"<p><strong>Reproduction check: {_escape(self.title)}</strong></p>\n"
                f'<table class="repro-table" id="{t.anchor}">\n  <thead><tr>{head}</tr></thead>\n  <tbody>\n'
                + "\n".join(body) + "\n  </tbody>\n</table>")

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", 80, "display.width", 200):
            return f"Reproduction check: {self.title}\n{self.frame.to_string(index=False)}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"text/plain": repr(self), "text/html": self._repr_html_()}
        meta = {METADATA_KEY: {"title": self.title, "anchor": self.table.anchor,
                               "summary": self.table.summary, "rows": self.table.records()}}
        return data, meta


def collect(notebooks: Iterable, summaries: bool = False) -> pd.DataFrame:
    """Every reproduction row stored in executed notebooks, one DataFrame row each.

    Reads the metadata that :meth:`ReproductionTable.show` leaves on its output, so it needs the
    notebooks' stored outputs, not a re-execution.

    Parameters
    ----------
    notebooks : iterable of path-like
        ``.ipynb`` files (executed).
    summaries : bool, default False
        Include tables marked ``summary=True`` (their rows repeat earlier tables).

    Returns
    -------
    pandas.DataFrame
        Columns ``chapter`` (the file's stem), ``cell`` (cell id), ``table``, ``claim``,
        ``kind``, ``origin``, ``source``, ``source says``, ``ours``, ``tolerance``, ``verdict``,
        ``note``, ``anchor`` (the row's HTML id on the chapter's page), ``claim_id`` (the
        registry id of a row made by :meth:`ReproductionTable.check`, else ``""``) and
        ``different_test`` (the row's reason, else ``""``), all strings, in notebook order.

    Raises
    ------
    FileNotFoundError
        If a notebook does not exist.
    ValueError
        If a path is not an ``.ipynb`` file, or two rows of one chapter share an anchor (two
        tables with the same title).
    """
    summaries = as_bool(summaries, "summaries")
    columns = ["chapter", "cell", "table", "claim", "kind", "origin", "source", "source says", "ours",
               "tolerance", "verdict", "note", "anchor", "claim_id", "different_test"]
    out = []
    for path in notebooks:
        path = Path(path)
        if path.suffix != ".ipynb":
            raise ValueError(f"collect reads executed .ipynb files, got {path.name!r}")
        nb = json.loads(path.read_text())
        seen: set[str] = set()
        for cell in nb.get("cells", []):
            for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
                table = o.get("metadata", {}).get(METADATA_KEY)
                if not table or (table.get("summary") and not summaries):
                    continue
                for rec in table["rows"]:
                    if rec["anchor"] in seen and not table.get("summary"):
                        raise ValueError(f"{path.name}: two rows share the anchor {rec['anchor']!r} "
                                         "(give the tables distinct titles)")
                    seen.add(rec["anchor"])
                    out.append({"chapter": path.stem, "cell": cell.get("id", ""), "table": table["title"],
                                **{k: rec[k] for k in columns[3:-2]},
                                **{k: rec.get(k, "") for k in columns[-2:]}})
    return pd.DataFrame.from_records(out, columns=columns)


#: The columns of :func:`verdict_counts`, in order.
#: Short, so that the table fits the text column at 1280 px: "reproduced", "differ" and "mixed"
#: count the seeds' claims ("mixed": the verdict is not the same in every training); the
#: "outside" columns count claims from outside the seeds; "sanity" counts the sanity checks.
COUNT_COLUMNS = ("reproduced", "differ", "mixed", "outside reproduced", "outside differ",
                 "not comparable", "sanity")


def verdict_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows of :func:`collect` counted by kind and verdict, one line per chapter and a total.

    Returns
    -------
    pandas.DataFrame
        Index: the chapters in their order, then ``"total"``; columns :data:`COUNT_COLUMNS`
        (integers).

    Raises
    ------
    ValueError
        If ``rows`` lacks the columns ``chapter``, ``kind`` or ``verdict``.
    """
    missing = {"chapter", "kind", "verdict"} - set(rows.columns)
    if missing:
        raise ValueError(f"rows must come from collect(); missing columns {sorted(missing)}")

    def column(kind: str, verdict: str) -> str:
        if kind == "sanity":
            return "sanity"
        if kind == "not comparable":
            return "not comparable"
        if verdict.startswith("mixed"):
            return "mixed"
        outside = "outside " if kind == "claim (outside the seeds)" else ""
        return f"{outside}{'reproduced' if verdict == 'reproduced' else 'differ'}"

    chapters = list(dict.fromkeys(rows["chapter"]))
    table = pd.DataFrame(0, index=[*chapters, "total"], columns=list(COUNT_COLUMNS))
    for chapter, kind, verdict in zip(rows["chapter"], rows["kind"], rows["verdict"]):
        table.loc[chapter, column(kind, verdict)] += 1
    table.loc["total"] = table.loc[chapters].sum()
    return table


def _registry_value(record, name: str | None) -> tuple[object, bool]:
    """The registry's value for a row (a range as ``"lo to hi"``) and whether it is a number."""
    stated = record.value
    if isinstance(stated, Mapping):
        if name is None:
            raise ValueError(f"check({record.id!r}): the registry gives named values {list(stated)}; "
                             "choose the row's with value=")
        if name not in stated:
            raise ValueError(f"check({record.id!r}): the registry has no value {name!r} (it has {list(stated)})")
        stated = stated[name]
    elif name is not None:
        raise ValueError(f"check({record.id!r}): value={name!r} names one of several values, and the "
                         f"registry gives one ({stated!r})")
    if isinstance(stated, tuple):
        return _Range(stated[0], stated[1]), False
    return stated, _is_number(stated)


class _Range(str):
    """A registry range shown as ``"lo to hi"``; a row may set one of its ends against ``ours``."""

    def __new__(cls, lo, hi):
        out = super().__new__(cls, f"{lo} to {hi}")
        out.ends = (lo, hi)
        return out


def _slug(text: str) -> str:
    """Lower-case letters and digits joined by single hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _escape(s: str) -> str:
    return _html.escape(s, quote=True)


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
