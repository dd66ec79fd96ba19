"""The errata page is generated: every row of the chapters whose verdict is "differs", then the
sources' own errors recorded in the claims registry, with their evidence."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import booktools  # noqa: E402

from assocmem.repro import collect  # noqa: E402


def _differs():
    rows = collect([ipynb for _, ipynb in booktools.chapter_pairs() if ipynb.exists()])
    return rows[rows["verdict"].str.startswith("differs")]


def test_every_differs_row_is_on_the_page():
    page = booktools.ERRATA_PAGE.read_text()
    differs = _differs()
    assert len(differs), "no chapter has a 'differs' row: the errata page would be empty"
    missing = [f"{r.chapter}: {r.claim}" for r in differs.itertuples()
               if f'href="../notebooks/{r.chapter}.html#{r.anchor}"' not in page]
    assert not missing, ("book/errata.md lacks these 'differs' rows; run `python tools/booktools.py errata`:\n  "
                         + "\n  ".join(missing))


def test_the_page_is_what_the_chapters_generate():
    assert booktools.ERRATA_PAGE.read_text() == booktools.errata_markdown(), \
        "book/errata.md is stale; run `python tools/booktools.py errata`"


def test_a_missing_row_is_detected(tmp_path, monkeypatch):
    """Drop one row from the generated page: the check above must fail on it."""
    page = booktools.errata_markdown()
    first = _differs().iloc[0]
    link = f'href="../notebooks/{first.chapter}.html#{first.anchor}"'
    broken = "\n".join(line for line in page.split("\n") if link not in line)
    fake = tmp_path / "errata.md"
    fake.write_text(broken)
    monkeypatch.setattr(booktools, "ERRATA_PAGE", fake)
    with pytest.raises(AssertionError, match="lacks these 'differs' rows"):
        test_every_differs_row_is_on_the_page()


def test_cells_escape_markdown():
    assert booktools._cell("a|b  S*\n$x$ <= [1]") == r"a\|b S\* \$x\$ \<= \[1\]"
    assert booktools._cell("") == "-"


def test_every_source_erratum_of_the_registry_is_on_the_page():
    """The page's second part lists each erratum the claims registry records, with its evidence."""
    from assocmem.claims import load_claims

    page = booktools.ERRATA_PAGE.read_text()
    errata = [(c, e) for c in load_claims().values() for e in c.errata]
    assert errata, "the claims registry records no erratum of the sources"
    section = page.split("## Errors in the sources themselves", 1)
    assert len(section) == 2, "book/errata.md has no section on the sources' own errors"
    missing = [c.id for c, e in errata
               if f"(`{c.id}`): {booktools._cell(e.issue)} *Evidence:* {booktools._cell(e.evidence)}"
               not in section[1]]
    assert not missing, f"errata of these claims are not on the page: {missing}"
