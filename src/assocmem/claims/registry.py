"""The registry of the three sources' claims: one record per checkable claim, read from YAML.

Every theorem, figure, table and quantitative statement of seeds 000, 001 and 002 has one record
in ``seed_000.yml``, ``seed_001.yml`` or ``seed_002.yml`` (shipped with the package). A record
names the claim once, with a stable id, so that every chapter that checks it, and the book's list
of claims, speak of the same thing. ``crosswalk.yml`` maps every row of the chapters'
reproduction tables to the record it checks (or to none, with the reason: a sanity check of our
own code).

A record's fields:

``id``
    ``<seed>.<location>.<slug>``: ``"001.fig12.eq44"``, ``"000.sec7.e-add"``, ``"002.c7.qknorm-band"``;
    lower case, the location and the slug of ``[a-z0-9-]``. Never reused for another claim.
``source``
    ``"000"``, ``"001"`` or ``"002"``, the seed the id starts with.
``location``
    Where the source states it, in the source's own terms (``"Sec. 4.3, Fig. 2c"``, ``"Thm 2.4"``).
``claim``
    The claim in our words.
``value``
    The source's value(s): a number, a ``[lo, hi]`` range, a mapping of named values, a short
    string (``"Θ(F log F)"``), or null where the claim has no number.
``test``
    The kind of test the claim admits (:data:`TEST_KINDS`).
``outside``
    Null, or the outside material the claim or its check rests on: where a value comes from when
    the seed does not give it (the authors' code, a cited paper, a figure the seed does not
    reproduce), or where the authors' code and the text differ.
``errata`` (optional)
    Where the source contradicts itself about this claim: a list of ``{issue, evidence}``.
``checked_in``
    The chapters (file stems, ``"13-facts-per-parameter"``) whose reproduction tables check the
    claim today; empty for a claim the book does not check yet.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from importlib import resources
from numbers import Real
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from assocmem._typing import PathLike

__all__ = [
    "FIELDS",
    "SOURCES",
    "TEST_KINDS",
    "Claim",
    "CrosswalkRow",
    "Erratum",
    "get_claim",
    "load_claims",
    "load_crosswalk",
]

#: The seeds, as the ids and the ``source`` field name them.
SOURCES = ("000", "001", "002")
#: The kinds of test a claim admits.
#:
#: ``value``: a number within a tolerance; ``range``: our value in an interval; ``ratio``: a ratio,
#: with a tolerance from its standard error; ``bound``: a one-sided inequality; ``growth``: a
#: scaling exponent (a one-sided bound on it is only "consistent with O(...)", never a
#: reproduction of a Θ); ``fit``: a curve fit whose quality is claimed (it must beat a
#: geometry-free baseline with as many constants); ``identity``: an identity or derivation,
#: checkable to rounding; ``qualitative``: a yes-or-no statement about an experiment's outcome;
#: ``theorem``: a proved statement, checked numerically on instances.
TEST_KINDS = ("value", "range", "ratio", "bound", "growth", "fit", "identity", "qualitative", "theorem")
#: The fields every record has (``errata`` is optional).
FIELDS = ("id", "source", "location", "claim", "value", "test", "outside", "checked_in")
_OPTIONAL = ("errata",)
_ID = re.compile(r"^(?P<seed>[0-9]{3})\.(?P<location>[a-z0-9][a-z0-9-]*)\.(?P<slug>[a-z0-9][a-z0-9-]*)$")
_CHAPTER = re.compile(r"^[0-9]{2}-[a-z0-9][a-z0-9-]*$")
_PACKAGE_DIR = "assocmem.claims"


@dataclass(frozen=True)
class Erratum:
    """A place where a source contradicts itself about a claim.

    Attributes
    ----------
    issue : str
        What is inconsistent, in our words.
    evidence : str
        Where the source says each of the two things, so that a reader can check it.
    """

    issue: str
    evidence: str


@dataclass(frozen=True)
class Claim:
    """One checkable claim of a source (see the module docstring for the fields).

    Attributes
    ----------
    id : str
    source : str
    location : str
    claim : str
    value : float, int, str, tuple of two reals, mapping or None
        A ``[lo, hi]`` range is a tuple; a mapping is read-only.
    test : str
        One of :data:`TEST_KINDS`.
    outside : str or None
    checked_in : tuple of str
        Chapter file stems; empty when the book does not check the claim yet.
    errata : tuple of Erratum
    """

    id: str
    source: str
    location: str
    claim: str
    value: Any
    test: str
    outside: str | None
    checked_in: tuple[str, ...]
    errata: tuple[Erratum, ...] = ()

    def __hash__(self) -> int:  # a mapping value is not hashable; the id names the claim
        return hash(self.id)

    @property
    def checked(self) -> bool:
        """Whether some chapter checks the claim today."""
        return bool(self.checked_in)


@dataclass(frozen=True)
class CrosswalkRow:
    """One row of a chapter's reproduction tables and the claim it checks.

    Attributes
    ----------
    chapter : str
        The chapter's file stem.
    row : str
        The row's claim text, as the chapter passed it to ``table.add`` (formatted).
    id : str or None
        The registry id the row checks; None for a row that checks no source's claim.
    reason : str or None
        Why ``id`` is None (a sanity check of our own code, our own derivation); None otherwise.
    """

    chapter: str
    row: str
    id: str | None
    reason: str | None


def _default_dir() -> Path:
    return Path(str(resources.files(_PACKAGE_DIR)))


def _resolve(directory) -> Path:
    path = _default_dir() if directory is None else Path(directory)
    if not path.is_dir():
        raise FileNotFoundError(f"claims directory {str(path)!r} does not exist")
    return path.resolve()


def _read_yaml(path: Path):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{path.name}: not valid YAML ({err})") from None


def _is_real(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def _where(path: Path, record) -> str:
    rid = record.get("id") if isinstance(record, dict) else None
    return f"{path.name}, record {rid!r}" if rid is not None else f"{path.name}, record {record!r}"


def _check_range(value, where: str) -> tuple:
    if len(value) != 2 or not all(_is_real(x) for x in value):
        raise ValueError(f"{where}: a list value must be a range [lo, hi] of two numbers, got {value!r}")
    lo, hi = value
    if lo > hi:
        raise ValueError(f"{where}: range [lo, hi] has lo > hi ({lo} > {hi})")
    return (lo, hi)


def _value(value, test: str, where: str):
    """The record's value in its stored form, or a ValueError naming the file and record."""
    if value is None or isinstance(value, str) or _is_real(value):
        if test == "range" and _is_real(value):
            raise ValueError(f"{where}: a 'range' claim's value is [lo, hi] (or names its ends, or is "
                             f"null), not the single number {value!r}")
        return value
    if isinstance(value, list):
        return _check_range(value, where)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"{where}: value names must be non-empty strings, got {key!r}")
            if isinstance(item, list):
                out[key] = _check_range(item, f"{where}, value {key!r}")
            elif item is None or isinstance(item, str) or _is_real(item):
                out[key] = item
            else:
                raise ValueError(f"{where}: value {key!r} must be a number, a string, null or "
                                 f"[lo, hi], got {item!r}")
        return MappingProxyType(out)
    raise ValueError(f"{where}: value must be a number, [lo, hi], a mapping, a string or null, "
                     f"got {value!r}")


def _text(record: dict, field: str, where: str, optional: bool = False) -> str | None:
    value = record[field]
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {field!r} must be a non-empty string, got {value!r}")
    return value.strip()


def _errata(value, where: str) -> tuple[Erratum, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: 'errata' must be a non-empty list of {{issue, evidence}}, got {value!r}")
    out = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"issue", "evidence"} or not all(
                isinstance(item[k], str) and item[k].strip() for k in ("issue", "evidence")):
            raise ValueError(f"{where}: every erratum needs a non-empty 'issue' and 'evidence', got {item!r}")
        out.append(Erratum(item["issue"].strip(), item["evidence"].strip()))
    return tuple(out)


def _claim(record, path: Path, seed: str) -> Claim:
    where = _where(path, record)
    if not isinstance(record, dict):
        raise ValueError(f"{where}: a record must be a mapping of fields")
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise ValueError(f"{where}: missing field(s) {missing}")
    unknown = sorted(set(record) - set(FIELDS) - set(_OPTIONAL))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}")
    rid = record["id"]
    match = _ID.match(rid) if isinstance(rid, str) else None
    if match is None:
        raise ValueError(f"{where}: malformed id {rid!r} (want '<seed>.<location>.<slug>', lower case, "
                         "location and slug of [a-z0-9-])")
    source = record["source"]
    if source not in SOURCES:
        raise ValueError(f"{where}: source must be one of {SOURCES} (a quoted string), got {source!r}")
    if match["seed"] != source:
        raise ValueError(f"{where}: the id's seed prefix {match['seed']!r} disagrees with source {source!r}")
    if source != seed:
        raise ValueError(f"{where}: a record of seed {source!r} in the file of seed {seed!r}")
    test = record["test"]
    if test not in TEST_KINDS:
        raise ValueError(f"{where}: unknown test kind {test!r} (one of {TEST_KINDS})")
    chapters = record["checked_in"]
    if not isinstance(chapters, list) or not all(isinstance(c, str) and _CHAPTER.match(c) for c in chapters):
        raise ValueError(f"{where}: 'checked_in' must be a list of chapter stems ('13-facts-per-parameter'), "
                         f"got {chapters!r}")
    if len(set(chapters)) != len(chapters):
        raise ValueError(f"{where}: 'checked_in' names a chapter twice: {chapters!r}")
    return Claim(
        id=rid,
        source=source,
        location=_text(record, "location", where),
        claim=_text(record, "claim", where),
        value=_value(record["value"], test, where),
        test=test,
        outside=_text(record, "outside", where, optional=True),
        checked_in=tuple(chapters),
        errata=_errata(record["errata"], where) if "errata" in record else (),
    )


def _records(path: Path, seed: str) -> list:
    doc = _read_yaml(path)
    if not isinstance(doc, dict) or set(doc) != {"source", "claims"}:
        raise ValueError(f"{path.name}: the file must be a mapping with the keys 'source' and 'claims'")
    if doc["source"] != seed:
        raise ValueError(f"{path.name}: 'source' is {doc['source']!r}, the file name says {seed!r}")
    if not isinstance(doc["claims"], list):
        raise ValueError(f"{path.name}: 'claims' must be a list of records")
    return doc["claims"]


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> Mapping[str, Claim]:
    files = sorted(path.glob("seed_*.yml"))
    if not files:
        raise FileNotFoundError(f"no seed_*.yml files in {str(path)!r}")
    out: dict[str, Claim] = {}
    for file in files:
        seed = file.stem.removeprefix("seed_")
        if seed not in SOURCES:
            raise ValueError(f"{file.name}: the file name names no seed of {SOURCES}")
        for record in _records(file, seed):
            claim = _claim(record, file, seed)
            if claim.id in out:
                raise ValueError(f"{_where(file, record)}: duplicate id {claim.id!r}")
            out[claim.id] = claim
    return MappingProxyType(out)


def load_claims(directory: PathLike | None = None) -> Mapping[str, Claim]:
    """Every claim of the registry, by id (read once per directory, then cached).

    Parameters
    ----------
    directory : path-like or None
        Where the ``seed_*.yml`` files are; None (the default) reads the files shipped with
        :mod:`assocmem.claims`.

    Returns
    -------
    Mapping of str to Claim
        A read-only mapping, in the order of the files (seed 000, 001, 002) and of their records.

    Raises
    ------
    FileNotFoundError
        If ``directory`` does not exist or holds no ``seed_*.yml`` file.
    ValueError
        Naming the file and the record, for: invalid YAML; a file that is not a mapping of
        ``source`` and ``claims``; a missing or unknown field; a malformed id; an id whose seed
        prefix disagrees with ``source`` (or a record in another seed's file); an id used twice;
        an unknown ``test`` kind; a ``[lo, hi]`` value with ``lo > hi`` (or a list that is not two
        numbers), or a ``range`` claim whose value is a single number; a malformed ``checked_in``
        or ``errata``.

    Notes
    -----
    The records restate, in our words, the claims of seed 000 (Part I), seed 001 (*MLPs are
    Hebbians*) and seed 002 (the review of *Attention Approximates Sparse Distributed Memory*),
    with the authors' code and other outside material where a claim rests on it.
    """
    return _load(_resolve(directory))


def get_claim(claim_id: str, directory: PathLike | None = None) -> Claim:
    """The claim with the id ``claim_id``.

    Parameters
    ----------
    claim_id : str
        A registry id, ``"<seed>.<location>.<slug>"``.
    directory : path-like or None
        As for :func:`load_claims`.

    Returns
    -------
    Claim

    Raises
    ------
    KeyError
        If no claim has that id; the message names the closest ids.
    TypeError
        If ``claim_id`` is not a str.
    """
    if not isinstance(claim_id, str):
        raise TypeError(f"claim_id must be a str, got {type(claim_id).__name__} {claim_id!r}")
    claims = load_claims(directory)
    if claim_id in claims:
        return claims[claim_id]
    close = difflib.get_close_matches(claim_id, list(claims), n=5, cutoff=0.5)
    hint = f"; close ids: {', '.join(close)}" if close else ""
    raise KeyError(f"no claim with the id {claim_id!r} in the registry{hint}")


@functools.lru_cache(maxsize=None)
def _load_crosswalk(path: Path) -> Mapping[str, tuple[CrosswalkRow, ...]]:
    file = path / "crosswalk.yml"
    if not file.is_file():
        raise FileNotFoundError(f"no crosswalk.yml in {str(path)!r}")
    doc = _read_yaml(file)
    if not isinstance(doc, dict) or set(doc) != {"chapters"} or not isinstance(doc["chapters"], dict):
        raise ValueError(f"{file.name}: the file must be a mapping with the one key 'chapters'")
    claims = _load(path)
    out = {}
    for chapter, rows in doc["chapters"].items():
        if not isinstance(chapter, str) or not _CHAPTER.match(chapter) or not isinstance(rows, list):
            raise ValueError(f"{file.name}: chapter {chapter!r} must be a chapter stem with a list of rows")
        seen, parsed = set(), []
        for item in rows:
            where = f"{file.name}, chapter {chapter!r}, row {item.get('row') if isinstance(item, dict) else item!r}"
            if not isinstance(item, dict) or not {"row", "id"} <= set(item) or set(item) - {"row", "id", "reason"}:
                raise ValueError(f"{where}: a row is a mapping of 'row', 'id' and, where id is null, 'reason'")
            row, rid, reason = item["row"], item["id"], item.get("reason")
            if not isinstance(row, str) or not row.strip():
                raise ValueError(f"{where}: 'row' must be the row's claim text")
            if row in seen:
                raise ValueError(f"{where}: the row is listed twice")
            seen.add(row)
            if rid is None:
                if not isinstance(reason, str) or not reason.strip():
                    raise ValueError(f"{where}: a row with no id needs a 'reason'")
            elif rid not in claims:
                close = difflib.get_close_matches(str(rid), list(claims), n=3, cutoff=0.5)
                raise ValueError(f"{where}: unknown id {rid!r}" + (f" (close: {', '.join(close)})" if close else ""))
            elif reason is not None:
                raise ValueError(f"{where}: a row with an id takes no 'reason'")
            parsed.append(CrosswalkRow(chapter, row, rid, reason))
        out[chapter] = tuple(parsed)
    return MappingProxyType(out)


def load_crosswalk(directory: PathLike | None = None) -> Mapping[str, tuple[CrosswalkRow, ...]]:
    """The crosswalk from the chapters' reproduction rows to the registry, by chapter.

    Parameters
    ----------
    directory : path-like or None
        Where ``crosswalk.yml`` and the ``seed_*.yml`` files are; None reads the shipped files.

    Returns
    -------
    Mapping of str to tuple of CrosswalkRow
        For every chapter with a reproduction table, its rows in the chapter's order.

    Raises
    ------
    FileNotFoundError
        If the directory or its ``crosswalk.yml`` does not exist.
    ValueError
        If the file is malformed, a row is listed twice in a chapter, a row names an id the
        registry does not hold, or a row with no id gives no reason (the registry's own errors
        as :func:`load_claims`).
    """
    return _load_crosswalk(_resolve(directory))
