"""One verdict per claim of the registry, from the reproduction rows of every executed chapter.

The chapters' reproduction tables judge the sources' claims row by row; a claim may be checked by
several rows of one chapter (several cases) and by several chapters. :func:`verdicts` reads the
rows that :func:`assocmem.repro.collect` returns, finds the claim each row checks (the row's
``claim_id`` when :meth:`~assocmem.repro.ReproductionTable.check` made it, else the crosswalk,
:func:`~assocmem.claims.registry.load_crosswalk`), and gives every claim of the registry one verdict.

The rules
---------
A row's verdict is ``"reproduced"``, ``"differs"``, ``"mixed"`` (a claim about trainings that
holds in some of them) or ``"not comparable"``. Sanity rows test our own code and judge no claim;
rows that check no claim (the crosswalk's null ids) are left out.

*In one chapter*, the rows on a claim combine: the definite verdicts (reproduced, differs, mixed)
decide, and a not-comparable row adds nothing to set against them; when they all agree that is
the chapter's verdict, otherwise it is ``"mixed"`` (the claim holds in some of the cases the
chapter checks and not in others). A chapter with only not-comparable rows is ``"not comparable"``.

*Across chapters*, a claim whose chapters reach the same verdict has that verdict. Chapters that
reach different verdicts **conflict**, and the claim's verdict is ``"conflict"``: the book would
otherwise say two things about one claim. A conflict is of one of three kinds
(:data:`CONFLICT_KINDS`), the first that applies:

``"contradiction"``
    One chapter reproduces the claim and another finds it differs.
``"partial"``
    One chapter finds the claim mixed and another reaches a definite verdict.
``"comparability"``
    One chapter finds the claim not comparable and another judges it: either the source gives
    something to set against ours or it does not.

A row whose test is not the test the other chapters make (another setting, another quantity)
says so (``different_test="why"``): its verdict is shown with its reason and never set against
the others. Only where every row on a claim declares a different test do those rows give the
claim its verdict (combined as in one chapter). A claim no row checks is ``"unchecked"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, TYPE_CHECKING

import pandas as pd

from assocmem.claims.registry import SOURCES, get_claim, load_claims, load_crosswalk

if TYPE_CHECKING:
    from assocmem._typing import PathLike

__all__ = [
    "CLAIM_VERDICTS",
    "CONFLICT_KINDS",
    "ROW_VERDICTS",
    "ChapterVerdict",
    "ClaimVerdict",
    "Verdicts",
    "row_claim_ids",
    "verdicts",
]

#: The verdicts a reproduction row on a claim may have (sanity rows judge no claim).
ROW_VERDICTS = ("reproduced", "differs", "mixed", "not comparable")
#: The verdicts a claim may have, in the order the counts list them.
CLAIM_VERDICTS = ("reproduced", "differs", "mixed", "not comparable", "conflict", "unchecked")
#: The kinds of conflict between chapters, the most serious first (module docstring).
CONFLICT_KINDS = ("contradiction", "partial", "comparability")
_DEFINITE = ("reproduced", "differs", "mixed")
_SANITY = "sanity"


@dataclass(frozen=True)
class ChapterVerdict:
    """What one chapter's rows say about one claim.

    Attributes
    ----------
    chapter : str
        The chapter's file stem.
    verdict : str
        The rows' verdicts combined (module docstring); one of :data:`ROW_VERDICTS`.
    anchors : tuple of str
        The rows' HTML ids on the chapter's page, one per row.
    different_test : str or None
        The rows' reasons for a different test (joined with ``"; "``), or None for rows that
        test the claim as the other chapters do. A chapter with both has one of each.
    """

    chapter: str
    verdict: str
    anchors: tuple[str, ...]
    different_test: str | None = None


@dataclass(frozen=True)
class ClaimVerdict:
    """The book's one verdict on a claim.

    Attributes
    ----------
    id : str
        The registry id.
    verdict : str
        One of :data:`CLAIM_VERDICTS`.
    chapters : tuple of ChapterVerdict
        The chapters that check the claim, in the order of the rows; empty when unchecked.
    conflict : str or None
        The kind of conflict (:data:`CONFLICT_KINDS`) when ``verdict == "conflict"``, else None.
    """

    id: str
    verdict: str
    chapters: tuple[ChapterVerdict, ...] = ()
    conflict: str | None = None

    @property
    def checked(self) -> bool:
        """Whether some chapter checks the claim."""
        return bool(self.chapters)


@dataclass(frozen=True)
class Verdicts:
    """Every claim's verdict and the conflicts among them (:func:`verdicts`).

    Attributes
    ----------
    claims : Mapping of str to ClaimVerdict
        Every claim of the registry, in the registry's order (read-only).
    conflicts : tuple of ClaimVerdict
        The claims whose chapters conflict, in the registry's order.
    """

    claims: Mapping[str, ClaimVerdict]
    conflicts: tuple[ClaimVerdict, ...]

    def counts(self, directory: PathLike | None = None) -> pd.DataFrame:
        """Claims per source: how many, how many checked and unchecked, and how many per verdict.

        Parameters
        ----------
        directory : path-like or None
            The registry the claims come from (as for :func:`verdicts`).

        Returns
        -------
        pandas.DataFrame
            Index: the sources (:data:`~assocmem.claims.registry.SOURCES`) and ``"total"``;
            columns ``claims``, ``checked``, ``unchecked`` and then :data:`CLAIM_VERDICTS` less
            ``"unchecked"`` (integers).
        """
        registry = load_claims(directory)
        columns = ["claims", "checked", "unchecked", *CLAIM_VERDICTS[:-1]]
        table = pd.DataFrame(0, index=[*SOURCES, "total"], columns=columns)
        for cid, v in self.claims.items():
            source = registry[cid].source
            table.loc[source, "claims"] += 1
            table.loc[source, "checked" if v.checked else "unchecked"] += 1
            if v.checked:
                table.loc[source, v.verdict] += 1
        table.loc["total"] = table.loc[list(SOURCES)].sum()
        return table


def _combine(found: list[str]) -> str:
    """One chapter's rows on a claim, combined: the definite verdicts decide; disagreeing, mixed."""
    definite = {v for v in found if v in _DEFINITE}
    if not definite:
        return "not comparable"
    return definite.pop() if len(definite) == 1 else "mixed"


def _conflict_kind(found: set[str]) -> str:
    if {"reproduced", "differs"} <= found:
        return "contradiction"
    if "mixed" in found and found & {"reproduced", "differs"}:
        return "partial"
    return "comparability"


def row_claim_ids(rows: pd.DataFrame, directory: PathLike | None = None) -> list[str | None]:
    """The registry id of the claim each row checks, or None for a row that checks none.

    A row made by :meth:`~assocmem.repro.ReproductionTable.check` carries its id (the column
    ``claim_id``); any other row is looked up in the crosswalk by its chapter and claim text.
    Sanity rows check no claim.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of :func:`assocmem.repro.collect` (columns ``chapter``, ``claim``, ``kind``; and
        ``claim_id`` where the notebooks store it).
    directory : path-like or None
        Where the registry and its crosswalk are; None reads the shipped files.

    Returns
    -------
    list of str or None
        One entry per row, in order.

    Raises
    ------
    KeyError
        If a row's ``claim_id`` is not in the registry (naming the closest ids).
    ValueError
        If ``rows`` lacks a column, or a row without an id that is not a sanity check is not in
        the crosswalk (naming the rows).
    """
    missing = {"chapter", "claim", "kind"} - set(rows.columns)
    if missing:
        raise ValueError(f"rows must come from assocmem.repro.collect(); missing columns {sorted(missing)}")
    walk = {(chapter, r.row): r.id for chapter, walked in load_crosswalk(directory).items() for r in walked}
    ids = rows["claim_id"] if "claim_id" in rows.columns else [""] * len(rows)
    out, unmapped = [], []
    for chapter, claim, kind, cid in zip(rows["chapter"], rows["claim"], rows["kind"], ids):
        if isinstance(cid, str) and cid:
            out.append(get_claim(cid, directory).id)
        elif kind == _SANITY:
            out.append(None)
        elif (chapter, claim) in walk:
            out.append(walk[(chapter, claim)])
        else:
            out.append(None)
            unmapped.append(f"{chapter}: {claim}")
    if unmapped:
        raise ValueError("rows with no claim id that the crosswalk does not list (give them an id with "
                         "table.check, or list them in crosswalk.yml):\n  " + "\n  ".join(unmapped))
    return out


def verdicts(rows: pd.DataFrame, directory: PathLike | None = None) -> Verdicts:
    """Every registry claim's verdict from the chapters' reproduction rows, and the conflicts.

    Parameters
    ----------
    rows : pandas.DataFrame
        The rows of :func:`assocmem.repro.collect` over the executed chapters, with the summary
        tables (``summaries=True``: a chapter may judge a claim only in its summary table, and a
        summary row counts as any other row of its chapter). Columns
        ``chapter``, ``claim``, ``kind``, ``verdict`` and ``anchor``; ``claim_id`` and
        ``different_test`` where present.
    directory : path-like or None
        Where the registry and its crosswalk are; None reads the shipped files.

    Returns
    -------
    Verdicts
        One :class:`ClaimVerdict` per registry claim (the rules are in the module docstring),
        and the conflicts.

    Raises
    ------
    KeyError, ValueError
        As :func:`row_claim_ids`; and ValueError if a row on a claim has a verdict outside
        :data:`ROW_VERDICTS`, or ``rows`` lacks ``verdict`` or ``anchor``.
    """
    missing = {"verdict", "anchor"} - set(rows.columns)
    if missing:
        raise ValueError(f"rows must come from assocmem.repro.collect(); missing columns {sorted(missing)}")
    ids = row_claim_ids(rows, directory)
    reasons = rows["different_test"] if "different_test" in rows.columns else [""] * len(rows)
    # (claim, chapter, different test or not) -> verdicts, anchors and reasons, in row order
    groups: dict[str, dict[tuple[str, bool], tuple[list, list, list]]] = {}
    for cid, chapter, verdict, anchor, why in zip(ids, rows["chapter"], rows["verdict"], rows["anchor"], reasons):
        if cid is None:
            continue
        if verdict not in ROW_VERDICTS:
            raise ValueError(f"{chapter}: a row on {cid} has the verdict {verdict!r}, not one of {ROW_VERDICTS}")
        different = isinstance(why, str) and bool(why)
        found, anchors, whys = groups.setdefault(cid, {}).setdefault((chapter, different), ([], [], []))
        found.append(verdict)
        anchors.append(anchor)
        if different and why not in whys:
            whys.append(why)
    out: dict[str, ClaimVerdict] = {}
    for cid in load_claims(directory):
        if cid not in groups:
            out[cid] = ClaimVerdict(cid, "unchecked")
            continue
        chapters = tuple(
            ChapterVerdict(chapter, _combine(found), tuple(anchors), "; ".join(whys) or None)
            for (chapter, _), (found, anchors, whys) in groups[cid].items())
        same = [c for c in chapters if c.different_test is None]
        if not same:
            verdict, conflict = _combine([c.verdict for c in chapters]), None
        else:
            found = {c.verdict for c in same}
            verdict, conflict = (found.pop(), None) if len(found) == 1 else ("conflict", _conflict_kind(found))
        out[cid] = ClaimVerdict(cid, verdict, chapters, conflict)
    conflicts = tuple(v for v in out.values() if v.conflict is not None)
    return Verdicts(MappingProxyType(out), conflicts)
