"""Contract tests for the chapters in notebooks/ and the book's structure.

Each chapter is a jupytext pair (``NN-slug.ipynb`` executed, ``NN-slug.md`` MyST). These tests
check the conventions of DESIGN.md without executing anything (nbval does that).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import booktools  # noqa: E402

from assocmem import display  # noqa: E402

PAIRS = booktools.chapter_pairs()
IDS = [md.stem for md, _ in PAIRS]
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(/(?:home|root|work|tmp|Users|opt|usr|var|mnt)/[\w.\-/]+|[A-Z]:\\\\[\w\\]+)")


def _load(ipynb: Path):
    return nbformat.read(ipynb, as_version=4)


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_there_are_chapters():
    assert len(PAIRS) >= 3


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_pair_exists_and_is_in_sync(md, ipynb):
    assert md.exists(), f"{md.name} is missing (every chapter is an ipynb,md:myst pair)"
    assert ipynb.exists(), f"{ipynb.name} is missing (every chapter is an ipynb,md:myst pair)"
    nb = _load(ipynb)
    assert nb.metadata.get("jupytext", {}).get("formats") == booktools.FORMATS
    expected = jupytext.writes(nb, fmt="md:myst")
    assert md.read_text() == expected, (
        f"{md.name} and {ipynb.name} differ; edit the .md, then run "
        f"`python tools/booktools.py execute {md.relative_to(ROOT)}`"
    )


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_kernelspec_is_python3(md, ipynb):
    assert _load(ipynb).metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_exactly_one_parameters_cell_with_preset_device_seed(md, ipynb):
    cells = [c for c in _code_cells(_load(ipynb)) if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{ipynb.name}: {len(cells)} cells tagged 'parameters', expected exactly 1"
    names = {t.id for node in ast.parse(cells[0].source).body if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)}
    missing = {"PRESET", "DEVICE", "SEED"} - names
    assert not missing, f"{ipynb.name}: the parameters cell does not set {sorted(missing)}"


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_executed_in_order_from_one_without_errors(md, ipynb):
    cells = _code_cells(_load(ipynb))
    counts = [c.execution_count for c in cells]
    assert counts == list(range(1, len(cells) + 1)), f"{ipynb.name}: execution counts {counts}; re-execute it"
    for c in cells:
        for out in c.outputs:
            assert out.output_type != "error", f"{ipynb.name}: a cell has an error output:\n{c.source[:200]}"
            if out.output_type == "stream":
                assert out.name != "stderr" or "Warning" not in out.text, f"{ipynb.name}: warning in output: {out.text[:300]}"


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_no_absolute_paths(md, ipynb):
    text = ipynb.read_text()
    hits = ABSOLUTE_PATH.findall(text)
    assert not hits, f"{ipynb.name} contains absolute paths: {sorted(set(hits))[:5]}"


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_generated_cells_are_current(md, ipynb):
    nb = _load(ipynb)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source == booktools.macros_cell_source(), (
        f"{ipynb.name}: the maths-macros cell is missing or stale; run `python tools/booktools.py sync-boilerplate`"
    )
    assert booktools.MACROS_TAG in nb.cells[0].metadata.get("tags", [])
    first = _code_cells(nb)[0]
    assert first.source == booktools.install_cell_source(), (
        f"{ipynb.name}: the first code cell must be the Colab install cell; run `python tools/booktools.py sync-boilerplate`"
    )
    assert booktools.INSTALL_TAG in first.metadata.get("tags", []), "the install cell must be hidden in the book"
    assert first.outputs == [], "the install cell must do nothing outside Colab"
    setup = _code_cells(nb)[1]
    assert setup.source == booktools.setup_cell_source(), (
        f"{ipynb.name}: the second code cell must be the float64 setup cell; run `python tools/booktools.py sync-boilerplate`"
    )
    assert booktools.SETUP_TAG in setup.metadata.get("tags", []) and setup.outputs == []


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_nbval_ignore_only_on_wall_clock_cells(md, ipynb):
    for c in _code_cells(_load(ipynb)):
        assert "NBVAL_IGNORE_OUTPUT" not in c.source, (
            f"{ipynb.name}: use the cell tag nbval-ignore-output, not the comment the reader would see:\n"
            f"{c.source[:300]}"
        )
        if "nbval-ignore-output" in c.metadata.get("tags", []):
            assert re.search(r"perf_counter|timeit|time_|wall", c.source), (
                f"{ipynb.name}: nbval-ignore-output on a cell that does not report a wall-clock time:\n{c.source[:300]}"
            )
        assert "NBVAL_SKIP" not in c.source and "nbval-skip" not in c.metadata.get("tags", []), "cells may not skip nbval"


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_every_chapter_checks_its_reproduction(md, ipynb):
    src = md.read_text()
    assert "ReproductionTable" in src and ".show()" in src, f"{md.name} has no reproduction check"


def _toc_files(node) -> list[str]:
    out = []
    if isinstance(node, dict):
        if "file" in node:
            out.append(node["file"])
        for v in node.values():
            out += _toc_files(v)
    elif isinstance(node, list):
        for v in node:
            out += _toc_files(v)
    return out


def test_toc_lists_every_chapter_and_every_listed_file_exists():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + _toc_files(toc)
    for f in files:
        assert any((ROOT / f"{f}{ext}").exists() for ext in (".md", ".ipynb")), f"_toc.yml lists {f}, which does not exist"
    chapters = {f"notebooks/{md.stem}" for md, _ in PAIRS}
    assert chapters <= set(files), f"chapters missing from _toc.yml: {sorted(chapters - set(files))}"


def test_every_citation_is_in_the_bibliography():
    bib = (ROOT / "book" / "references.bib").read_text()
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    sources = list((ROOT / "book").glob("*.md")) + [md for md, _ in PAIRS]
    for path in sources:
        for group in re.findall(r"\{cite[:\w]*\}`([^`]+)`", path.read_text()):
            for key in group.split(","):
                assert key.strip() in keys, f"{path.name} cites {key.strip()!r}, which is not in references.bib"


def test_no_textual_citation_of_a_source_without_author():
    # {cite:t} prints the author as the subject of the sentence; a source with no author prints
    # its bibliography key instead ("the tutorial Matrix tutorial (2026)" in chapter 01)
    bib = (ROOT / "book" / "references.bib").read_text()
    entries = re.findall(r"@\w+\{([^,\s]+),(.*?)\n\}", bib, flags=re.S)
    authorless = {key for key, body in entries if not re.search(r"^\s*(author|editor)\s*=", body, flags=re.M)}
    # the chapters and the hand-written pages (how-to-read.md's counts section is generated, its
    # prose is not)
    sources = [ROOT / "book" / "intro.md", ROOT / "book" / "how-to-read.md", *(ROOT / "book").glob("part*.md"),
               *(md for md, _ in PAIRS)]
    for path in sources:
        for group in re.findall(r"\{cite:t\}`([^`]+)`", path.read_text()):
            bad = authorless & {key.strip() for key in group.split(",")}
            assert not bad, f"{path.name} cites {sorted(bad)} with {{cite:t}}, but they have no author; use {{cite}}"


def test_repository_url_is_defined_once():
    url = booktools.repository_url()
    offenders = []
    for path in [ROOT / "README.md", *ROOT.glob("book/*.md"), *ROOT.glob("src/assocmem/*.py")]:
        if path.exists() and url in path.read_text() and path.name != "README.md":
            offenders.append(path.name)
    assert not offenders, f"the repository URL is typed into {offenders}; read it from _config.yml instead"


# --------------------------------------------------------------------------------------------
# The display policy (assocmem.display): outputs that are a fact about the mathematics


def _output_texts(nb):
    """(cell index, text) for every text-like output of every code cell, glue records included."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            if out.output_type == "stream":
                yield i, out.text
            for mime, value in out.get("data", {}).items():
                if mime.split("/", 1)[0] == "text" or "/text/" in mime:
                    yield i, value if isinstance(value, str) else "".join(value)


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_no_output_shows_machine_digits(md, ipynb):
    """No stored output carries more digits than the display policy allows (see assocmem.display)."""
    problems = [f"cell {i}: {p}" for i, text in _output_texts(_load(ipynb)) for p in display.output_problems(text)]
    assert not problems, f"{ipynb.name}: {len(problems)} output number(s) break the display policy:\n  " + \
        "\n  ".join(problems[:20])


_GLUE_REF = re.compile(r"\{glue(?::text)?\}`([\w\-]+)(?::([^`]*))?`")


def _glued(nb) -> dict[str, str]:
    out = {}
    for cell in _code_cells(nb):
        for o in cell.outputs:
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                data = o.get("data", {})
                text = next((v for k, v in data.items() if k.endswith("text/plain")), None)
                out[name] = text if isinstance(text, str) or text is None else "".join(text)
    return out


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_prose_shows_every_glued_digit_and_no_more_rounding(md, ipynb):
    """A glued float is stored rounded to the digits the prose shows: formatting it with the
    prose's spec loses nothing (so the prose never rounds a second time, and the stored value has
    no digits the reader does not see)."""
    glued = _glued(_load(ipynb))
    bad = []
    for key, spec in _GLUE_REF.findall(md.read_text()):
        text = glued.get(key)
        if not spec or text is None or spec[-1] not in "eEfFgG%":
            continue
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, float) and display.rounded(value, spec) != value:
            bad.append(f"{key}: stored {text}, shown as {format(value, spec)} ({spec})")
    assert not bad, f"{md.name}: glued values with digits the prose drops (glue them with the prose's spec):\n  " + \
        "\n  ".join(bad)


# --------------------------------------------------------------------------------------------
# The two tools that write a chapter pair agree byte for byte


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_jupytext_sync_leaves_the_committed_pair_unchanged(md, ipynb, tmp_path):
    """A fresh clone followed by ``jupytext --sync notebooks/*.md`` leaves ``git status`` clean:
    what ``booktools execute`` wrote is exactly what jupytext would write."""
    from jupytext.cli import jupytext as jupytext_cli

    copies = [tmp_path / md.name, tmp_path / ipynb.name]
    for src, dst in zip((md, ipynb), copies):
        dst.write_bytes(src.read_bytes())
    jupytext_cli(["--sync", "--quiet", str(copies[0])])
    assert copies[1].read_bytes() == ipynb.read_bytes(), f"jupytext --sync rewrites {ipynb.name}"
    assert copies[0].read_bytes() == md.read_bytes(), f"jupytext --sync rewrites {md.name}"


def test_an_edited_md_is_copied_into_its_ipynb_with_outputs_kept(tmp_path):
    md, ipynb = PAIRS[0]
    new_md, new_ipynb = tmp_path / md.name, tmp_path / ipynb.name
    new_ipynb.write_bytes(ipynb.read_bytes())
    new_md.write_text(md.read_text().replace("# ", "# Edited: ", 1))
    assert booktools.out_of_sync(new_md, new_ipynb)
    assert booktools.sync_inputs(new_md)
    assert not booktools.out_of_sync(new_md, new_ipynb)
    nb, old = _load(new_ipynb), _load(ipynb)
    assert any("Edited: " in c.source for c in nb.cells)
    assert sum(len(c.outputs) for c in _code_cells(nb)) == sum(len(c.outputs) for c in _code_cells(old))
    assert not booktools.sync_inputs(new_md)  # nothing left to copy


# --------------------------------------------------------------------------------------------
# Reproduction tables: every verdict a test that could fail, and the front matter counts them


def _repro_rows(md: Path) -> list[tuple[str, str, dict]]:
    """(claim, kind, keyword nodes) of every ``table.add(...)`` and ``table.check(claim_id, ...)``
    call in a chapter's code cells (for ``check``, the claim is the id).

    A call counts when it passes ``seed=`` or ``ours=`` (``set.add`` and the like do not). The
    kind is resolved as :class:`assocmem.repro.Check` does: ``kind=`` if given, else
    ``"not comparable"`` when ``expect="not comparable"``, else ``"claim"``.
    """
    rows = []
    for cell in jupytext.read(md).cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython magics (the Colab install cell)
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("add", "check")):
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            if not {"seed", "ours"} & set(kw):
                continue
            claim = ast.get_source_segment(cell.source, node.args[0]) if node.args else "?"
            kind = kw.get("kind")
            if kind is not None:
                assert isinstance(kind, ast.Constant) and isinstance(kind.value, str), (
                    f"{md.name}: {claim}: give kind= as a literal string, so the contract test can read it")
                resolved = kind.value
            else:
                expect = kw.get("expect")
                resolved = ("not comparable" if isinstance(expect, ast.Constant) and expect.value == "not comparable"
                            else "claim")
            rows.append((claim, resolved, kw))
    return rows


def _computed(node: ast.AST) -> bool:
    """Whether an expression depends on anything but literals (a name, attribute, call or subscript)."""
    return any(isinstance(n, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for n in ast.walk(node))


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_every_claim_row_is_a_test_that_could_fail(md, ipynb):
    """No claim row has a hard-coded pass or fail, or compares two literals; every chapter has a
    claim row. Checks of our own code are ``kind="sanity"``, rows without a source number
    ``kind="not comparable"`` (assocmem.repro)."""
    rows = _repro_rows(md)
    claims = [(claim, kw) for claim, kind, kw in rows if kind == "claim"]
    assert claims, f"{md.name}: no reproduction row is a claim check (kind='claim')"
    bad = []
    for claim, kw in claims:
        passed = kw.get("passed", kw.get("holds"))
        if passed is not None and not _computed(passed):
            bad.append(f"{claim}: passed= or holds={ast.unparse(passed)} is hard-coded")
        if passed is None and not _computed(kw.get("ours", ast.Constant(None))):
            bad.append(f"{claim}: ours={ast.unparse(kw['ours']) if 'ours' in kw else None} is a literal")
    assert not bad, f"{md.name}: claim rows that cannot fail (make them sanity checks or compute them):\n  " + \
        "\n  ".join(bad)


@pytest.mark.parametrize("md,ipynb", PAIRS, ids=IDS)
def test_stored_tables_carry_their_rows(md, ipynb):
    """Every executed chapter stores its table rows in the outputs' metadata, with a row on a
    source's claim among them (a claim, an outside claim, or a claim we cannot compare)."""
    from assocmem.repro import collect

    rows = collect([ipynb], summaries=True)
    assert len(rows), f"{ipynb.name}: no stored reproduction rows; re-execute it with the current library"
    assert rows.kind.isin(["claim", "claim (outside the seeds)", "not comparable"]).any(), \
        f"{ipynb.name}: no stored row on a source's claim"
    assert rows.anchor.str.fullmatch(r"repro-[a-z0-9-]+-\d+").all()


def test_front_matter_counts_are_computed_from_the_chapters():
    """The verdict counts in book/how-to-read.md equal collect() over the committed notebooks."""
    current, expected = booktools.repro_counts_block()
    assert current == expected, (
        "book/how-to-read.md's reproduction counts are stale; run `python tools/booktools.py repro-counts`"
    )
