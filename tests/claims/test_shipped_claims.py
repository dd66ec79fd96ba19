"""The claims registry as shipped: three seeds' claims, well formed, and in step with the chapters.

The crosswalk must list every row of every chapter's reproduction tables that does not carry its
claim's id (as the executed notebooks store them; a row made by ``ReproductionTable.check`` names
its claim itself), and a claim's ``checked_in`` must name exactly the chapters whose rows check it
(through the crosswalk or by id), so that neither can drift from the book.
"""

import fnmatch
import re
import tomllib
from collections import Counter
from pathlib import Path

import pytest
import yaml

from assocmem.claims import SOURCES, get_claim, load_claims, load_crosswalk
from assocmem.claims.registry import _default_dir
from assocmem.repro import collect

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
DATA = _default_dir()
ID = re.compile(r"^(000|001|002)\.[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*$")


@pytest.fixture(scope="module")
def claims():
    return load_claims()


@pytest.fixture(scope="module")
def crosswalk():
    return load_crosswalk()


def test_every_seed_has_claims_and_ids_are_unique_and_well_formed(claims):
    raw = [r["id"] for f in sorted(DATA.glob("seed_*.yml")) for r in yaml.safe_load(f.read_text())["claims"]]
    assert len(raw) == len(set(raw)) == len(claims), [i for i, n in Counter(raw).items() if n > 1]
    assert all(ID.match(i) and i.split(".")[0] == c.source for i, c in claims.items())
    per_seed = Counter(c.source for c in claims.values())
    assert set(per_seed) == set(SOURCES) and min(per_seed.values()) >= 20, per_seed
    assert get_claim("001.fig12.eq44").source == "001"


def test_every_chapter_named_exists(claims, crosswalk):
    stems = {p.stem for p in NOTEBOOKS.glob("*.md")}
    named = {ch for c in claims.values() for ch in c.checked_in} | set(crosswalk)
    assert named <= stems, sorted(named - stems)


def test_checked_in_agrees_with_the_crosswalk(claims, crosswalk):
    from_walk: dict[str, set[str]] = {}
    for chapter, rows in crosswalk.items():
        for row in rows:
            if row.id is not None:
                from_walk.setdefault(row.id, set()).add(chapter)
    stored = collect(sorted(NOTEBOOKS.glob("*.ipynb")), summaries=True)
    for chapter, cid in zip(stored.chapter, stored.claim_id):
        if cid:  # a row made by table.check names its claim
            from_walk.setdefault(cid, set()).add(chapter)
    wrong = {i: (sorted(c.checked_in), sorted(from_walk.get(i, ()))) for i, c in claims.items()
             if set(c.checked_in) != from_walk.get(i, set())}
    assert not wrong, f"checked_in (left) against the crosswalk (right): {wrong}"


def test_the_crosswalk_lists_every_reproduction_row_of_every_chapter(crosswalk):
    rows = collect(sorted(NOTEBOOKS.glob("*.ipynb")), summaries=True)
    rows = rows[rows.claim_id == ""]  # a row made by table.check names its claim itself
    stored: dict[str, list[str]] = {}
    for chapter, claim in zip(rows.chapter, rows.claim):
        if claim not in stored.setdefault(chapter, []):
            stored[chapter].append(claim)
    walked = {chapter: [r.row for r in walk] for chapter, walk in crosswalk.items()}
    assert list(walked) == list(stored), "the crosswalk's chapters are the chapters with tables, in order"
    for chapter in stored:
        missing = [c for c in stored[chapter] if c not in walked[chapter]]
        extra = [c for c in walked[chapter] if c not in stored[chapter]]
        assert not missing and not extra, f"{chapter}: rows not in the crosswalk {missing}; stale rows {extra}"


def test_claim_rows_have_ids_and_null_ids_have_reasons(crosswalk):
    rows = collect(sorted(NOTEBOOKS.glob("*.ipynb")), summaries=True)
    kind = {(ch, c): k for ch, c, k, o in zip(rows.chapter, rows.claim, rows.kind, rows.origin)}
    unmapped = [(ch, r.row) for ch, walk in crosswalk.items() for r in walk
                if r.id is None and kind[(ch, r.row)] == "claim"]
    assert not unmapped, f"a seed claim row must name the claim it checks: {unmapped}"


def test_errata_give_their_evidence(claims):
    errata = [(c.id, e) for c in claims.values() for e in c.errata]
    assert len(errata) >= 5
    assert all(re.search(r"Seed 00[0-2]", e.evidence) for _, e in errata), errata


def test_the_data_files_ship_with_the_package():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = meta["tool"]["setuptools"]["package-data"]["assocmem"]
    files = sorted(p.relative_to(DATA.parent).as_posix() for p in DATA.glob("*.yml"))
    assert files == ["claims/crosswalk.yml", "claims/seed_000.yml", "claims/seed_001.yml", "claims/seed_002.yml"]
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files)
    deps = [re.split(r"[<>=]", d)[0].strip().lower() for d in meta["project"]["dependencies"]]
    assert "pyyaml" in deps, "the registry's data is YAML: pyyaml is a core dependency"


CHAPTERS = sorted(p.stem for p in NOTEBOOKS.glob("*.md"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_rows_on_a_claim_are_made_by_id(chapter, crosswalk):
    """Issue 27, item 2: a row that checks a claim is ``table.check(id, ...)``, so its text, value
    and location come from the registry; the crosswalk keeps only the rows that check no claim
    (``id: null`` with the reason)."""
    by_text = [r.row for r in crosswalk.get(chapter, []) if r.id is not None]
    assert not by_text, (f"{chapter}: rows that check a claim by their text, not by id "
                         f"(use table.check): {by_text}")
