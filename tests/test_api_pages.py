"""The book's API reference (book/api/, one page per package) covers the whole library.

The pages are written by ``tools/booktools.py api-pages``; Sphinx autodoc fills them from the
docstrings when the book is built (``make book``), so these tests need no Sphinx build: they check
the pages' lists of modules against the package on disk, that the pages and the toc's API part are
what the generator writes (a new module or package cannot be forgotten), that every ``{py:...}``
link of a chapter names an object documented there, and the docstring rules the ``-W`` build
depends on.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
API = ROOT / "book" / "api"
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import assocmem_api  # noqa: E402
import booktools  # noqa: E402

AUTOMODULE = re.compile(r"^\.\. automodule:: (\S+)$", flags=re.M)
#: A MyST role of the Python domain: {py:func}`~assocmem.x.y`, {func}`text <assocmem.x.y>`.
PY_ROLE = re.compile(r"\{(?:py:)?(func|class|meth|mod|data|attr|obj|exc)\}`([^`]+)`")


def _public_modules_on_disk() -> set[str]:
    """Every module file under src/assocmem with no private part (``_checks``, ``__main__``)."""
    out = set()
    for path in (SRC / "assocmem").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not any(p.startswith("_") for p in parts):
            out.add(".".join(parts))
    return out


def _documented() -> Counter:
    return Counter(m for page in API.glob("*.md") for m in AUTOMODULE.findall(page.read_text()))


def _toc_files(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["file"]] if "file" in node else []) + [
            f for v in node.values() for f in _toc_files(v)]
    if isinstance(node, list):
        return [f for v in node for f in _toc_files(v)]
    return []


def test_the_pages_document_every_public_module_exactly_once():
    documented = _documented()
    on_disk = _public_modules_on_disk()
    assert len(on_disk) > 100, "the walk found too few modules"
    assert not on_disk - set(documented), (
        f"public modules missing from book/api (run `python tools/booktools.py api-pages`): "
        f"{sorted(on_disk - set(documented))}")
    assert not set(documented) - on_disk, f"pages document modules that are gone: {sorted(set(documented) - on_disk)}"
    assert [m for m, n in documented.items() if n > 1] == []


def test_one_page_per_package_and_each_module_on_its_package_page():
    packages = {m for m in _public_modules_on_disk() if (SRC / m.replace(".", "/") / "__init__.py").exists()}
    assert {booktools.api_page_of(p) for p in packages} == set(API.glob("*.md"))
    for package in packages:
        modules = AUTOMODULE.findall(booktools.api_page_of(package).read_text())
        assert modules[0] == package
        assert all(m.rpartition(".")[0] == package and m not in packages for m in modules[1:]), modules


def test_the_pages_and_the_toc_are_what_the_generator_writes():
    for package in booktools.public_packages():
        page = booktools.api_page_of(package)
        assert page.read_text() == booktools.api_page_markdown(package), (
            f"{page.relative_to(ROOT)} is stale; run `python tools/booktools.py api-pages`")
    toc = booktools.TOC.read_text()
    assert toc == booktools.toc_with_api(toc), "the API part of _toc.yml is stale; run `python tools/booktools.py api-pages`"


def test_every_api_page_is_in_the_toc_in_the_api_part():
    toc = yaml.safe_load(booktools.TOC.read_text())
    part = [p for p in toc["parts"] if p["caption"] == booktools.API_CAPTION]
    assert len(part) == 1
    listed = _toc_files(part[0])
    assert sorted(listed) == sorted(p.relative_to(ROOT).with_suffix("").as_posix() for p in API.glob("*.md"))
    assert listed[0] == "book/api/assocmem"
    assert not [f for p in toc["parts"] if p is not part[0] for f in _toc_files(p) if f.startswith("book/api/")]


def test_the_book_loads_autodoc_napoleon_and_the_api_extension():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert {"sphinx.ext.autodoc", "sphinx.ext.napoleon"} <= set(sphinx["extra_extensions"])
    assert sphinx["local_extensions"]["assocmem_api"] == "book/_ext"
    # Each object documented once, where it is defined; no intersphinx inventory is fetched.
    assert sphinx["config"]["autodoc_default_options"]["ignore-module-all"] is True
    assert "intersphinx_mapping" not in sphinx["config"]


def _role_target(text: str) -> str:
    m = re.fullmatch(r"[^<]*<([^>]+)>", text)
    return (m.group(1) if m else text).strip().lstrip("~")


def _chapter_links() -> list[tuple[str, str, str]]:
    out = []
    for md in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.md")):
        out += [(md.stem, kind, _role_target(text)) for kind, text in PY_ROLE.findall(md.read_text())]
    return out


def test_every_py_link_of_a_chapter_names_an_object_the_api_pages_document():
    links = _chapter_links()
    assert len(links) >= 20, "the chapters link fewer library names than expected"
    documented = set(_documented())
    bad = []
    for chapter, kind, target in links:
        if kind == "mod":
            if target not in documented:
                bad.append((chapter, target, "module not documented"))
            continue
        obj = assocmem_api._import(target)
        if obj is None:
            bad.append((chapter, target, "does not import"))
            continue
        module = getattr(obj, "__module__", None)
        if module not in documented or obj.__name__.startswith("_"):
            bad.append((chapter, target, f"defined in {module}, which the API pages do not document"))
        elif kind in ("func", "class") and not callable(obj):
            bad.append((chapter, target, f"not a {kind}"))
    assert not bad, bad


def test_docstrings_define_no_rst_citation():
    """A reST citation (``.. [BP21] ...``) is a label of the whole book: two modules citing the same
    source would clash in the -W build. References are plain lists (``- [BP21] ...``)."""
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in (SRC / "assocmem").rglob("*.py")
            for i, line in enumerate(p.read_text().split("\n"), 1) if re.match(r"\s*\.\. \[[^\]]+\]", line)]
    assert not hits, hits


# ----------------------------------------------------------------- the API extension's rewrites


def test_section_titles_become_rubrics_and_numpy_fields_are_left_to_napoleon():
    lines = ["Text.", "", "Modules", "-------", "a  b", "", "Notes", "=====", "x"]
    assocmem_api.section_titles_to_rubrics(lines)
    assert lines == ["Text.", "", ".. rubric:: Modules", "", "a  b", "", ".. rubric:: Notes", "", "x"]
    table = ["", "=====  =====", "a      b", "=====  =====", "cc     dd", "=====  ====="]
    kept = list(table)
    assocmem_api.section_titles_to_rubrics(kept)
    assert kept == table


def test_column_lists_become_definition_lists():
    lines = ["Intro:", "", "memory    matrix memories: outer-product,", "          least-squares",
             "geometry  the geometry", "", "After."]
    assocmem_api.column_lists_to_definitions(lines)
    assert lines == ["Intro:", "", "``memory``", "    matrix memories: outer-product, least-squares",
                     "``geometry``", "    the geometry", "", "After."]


def test_in_a_package_docstring_a_module_name_links_to_the_module():
    lines = ["", "memory    matrix memories", "geometry  pairs", "nothing   else", ""]
    assocmem_api.column_lists_to_definitions(lines, package="assocmem.linear")
    assert lines[1:-1] == [":mod:`memory <assocmem.linear.memory>`", "    matrix memories",
                           ":mod:`geometry <assocmem.linear.geometry>`", "    pairs",
                           "``nothing``", "    else"]


def test_a_long_name_may_stand_alone_with_its_description_below():
    lines = ["", "facts     fact sets", "capacity_replicate_sweeps", "          the capacity_more sweep,",
             "          beside capacity", ""]
    assocmem_api.column_lists_to_definitions(lines)
    assert lines == ["", "``facts``", "    fact sets", "``capacity_replicate_sweeps``",
                     "    the capacity_more sweep, beside capacity", ""]


@pytest.mark.parametrize("block", [
    ["one  entry only"],                                   # a single line is not a list
    ["prose with  two spaces", "and a second line"],       # continuation not indented
    ["- item  one", "- item  two"],                        # a bullet list
    ["====  ====", "a     b", "====  ====", "c     d", "====  ===="],  # a simple table
    ["Title", "word  text"],                               # a name with no description
])
def test_column_lists_leave_other_paragraphs_alone(block):
    lines = ["", *block, ""]
    assocmem_api.column_lists_to_definitions(lines)
    assert lines == ["", *block, ""]


def test_a_literal_block_is_left_alone():
    lines = ["Example::", "", "    a   1", "    b   2", ""]
    assocmem_api.column_lists_to_definitions(lines)
    assert lines == ["Example::", "", "    a   1", "    b   2", ""]


def test_links_through_a_reexport_reach_the_defining_module():
    assert assocmem_api.canonical_name("assocmem.mlps.mlp.hebbian_mlp") == "assocmem.mlps.mlp.hebbian.hebbian_mlp"
    assert assocmem_api.canonical_name("assocmem.mlps.mlp.hebbian.hebbian_mlp") is None
    assert assocmem_api.canonical_name("assocmem.no_such_name") is None
    assert assocmem_api.canonical_name("numpy.mean") is None
