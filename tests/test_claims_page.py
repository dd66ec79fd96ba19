"""The claims page (book/claims.md) is generated from the registry and the executed chapters: every
claim is on it with its verdict, and it is markdown that MyST and Sphinx accept."""

import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import booktools  # noqa: E402

from assocmem.claims import load_claims, verdicts  # noqa: E402
from assocmem.repro import collect  # noqa: E402

DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")


def _toc_files() -> list[str]:
    """The files of _toc.yml, in order."""
    def walk(node):
        if isinstance(node, dict):
            yield from ([node["file"]] if "file" in node else [])
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value)
    return list(walk(yaml.safe_load((ROOT / "_toc.yml").read_text())))


@pytest.fixture(scope="module")
def page():
    return booktools.CLAIMS_PAGE.read_text()


def test_the_page_is_what_the_registry_and_the_chapters_generate(page):
    assert page == booktools.claims_markdown(), "book/claims.md is stale; run `python tools/booktools.py claims`"


def test_every_claim_is_on_the_page_once_with_its_verdict(page):
    result = verdicts(collect([ipynb for _, ipynb in booktools.chapter_pairs() if ipynb.exists()], summaries=True))
    rows = {m.group(1): line for line in page.split("\n") if (m := re.match(r"\| `([0-9a-z.-]+)` ", line))}
    assert set(rows) == set(load_claims()), sorted(set(load_claims()) ^ set(rows))
    for cid, v in result.claims.items():
        verdict = rows[cid].rsplit(" | ", 1)[1]
        assert verdict.startswith(v.verdict), (cid, v.verdict, verdict)
        for chapter in {c.chapter for c in v.chapters}:
            assert f"<../notebooks/{chapter}>" in rows[cid], (cid, chapter)
    errata = [(cid, e) for cid, c in load_claims().items() for e in c.errata]
    assert errata and all(f"- `{cid}`: " in page for cid, _ in errata)


def test_every_doc_link_names_a_page_of_the_book(page):
    files = set(_toc_files())
    assert "book/claims" in files
    targets = set(DOC.findall(page))
    assert targets, "no {doc} link found"
    missing = sorted(t for t in targets if (ROOT / "book" / t).resolve().relative_to(ROOT).as_posix() not in files)
    assert not missing, f"{{doc}} targets that are not pages of the book: {missing}"


def test_claims_come_right_after_the_errata_in_the_back_matter():
    files = _toc_files()
    assert files[files.index("book/errata") + 1] == "book/claims"


def test_headings_do_not_skip_a_level_and_tables_stay_narrow(page):
    """MyST warns on a heading that skips a level (which fails the -W build); and a table with many
    columns or a long unbreakable word would be wider than the text column at 1280 px."""
    levels = [len(m.group(1)) for m in re.finditer(r"^(#+) ", page, flags=re.M)]
    assert levels[0] == 1 and levels.count(1) == 1
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:])), levels
    tables = [line for line in page.split("\n") if line.startswith("|")]
    assert tables and all(line.count(" | ") <= 9 for line in tables)
    shown = [re.sub(r"\{doc\}`([^`<]*)<[^`]*>`", r"\1", line) for line in tables]  # a link shows its text
    words = [w for line in shown for w in re.split(r"\s+", line)]
    assert max(map(len, words)) <= 45, max(words, key=len)
