"""Maintenance of the book's chapters (jupytext pairs in notebooks/).

    python tools/booktools.py sync-boilerplate   # rewrite the install and macros cells from _config.yml
    python tools/booktools.py execute notebooks/01-*.md ...   # .md -> .ipynb, run top to bottom, save outputs
    python tools/booktools.py sync-inputs        # .md -> .ipynb inputs (outputs kept), for every edited chapter
    python tools/booktools.py repro-counts       # write the front matter's count of verdicts from the chapters
    python tools/booktools.py errata             # write book/errata.md: every row whose verdict is "differs"
    python tools/booktools.py claims             # write book/claims.md: every claim of the sources, its verdict
    python tools/booktools.py api-pages          # write book/api/*.md (one page per package) and the toc's API part

The ``.md`` twin is what people edit. ``execute`` writes the ``.ipynb`` exactly as ``jupytext --sync``
would (jupytext keeps the ``text_representation`` header in the ``.md`` only), so the two tools
never undo each other; ``tests/test_notebooks.py`` pins that byte for byte.

The repository address and the maths macros are defined once, in ``_config.yml``. Every chapter
carries two generated cells that copy them, so that the notebook renders and installs the same way
in Jupyter and on Colab as in the book: a hidden markdown cell with the macros as ``\\def``
definitions (KaTeX, Colab's renderer, rejects ``\\newcommand`` of a name it predefines), and a
first code cell that installs the library on Colab only. The contract tests
(tests/test_notebooks.py) use the functions here to check that every chapter is up to date.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
FORMATS = "ipynb,md:myst"
INSTALL_TAG = "remove-cell"
MACROS_TAG = "remove-cell"
MACROS_MARKER = "<!-- maths macros: generated from _config.yml by tools/booktools.py -->"
INSTALL_MARKER = "# On Google Colab only: installs this book's library. Elsewhere it does nothing."
SETUP_TAG = "remove-cell"
SETUP_MARKER = "# The book computes in float64: the library's dtype=None is torch's default dtype."
# First lines of earlier versions of the generated cells, so that sync-boilerplate replaces them.
OLD_MARKERS = ("# Runs on Google Colab only: installs this book's library there. Elsewhere it does nothing.",)


def config() -> dict:
    """The parsed ``_config.yml``."""
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def repository_url() -> str:
    """The repository address, from ``_config.yml`` (its only definition)."""
    return config()["repository"]["url"]


def macros() -> dict:
    """The MathJax macros from ``_config.yml``."""
    return config()["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]


def macros_cell_source() -> str:
    """The hidden markdown cell that defines the macros for Jupyter and Colab.

    The definitions use TeX's ``\\def`` (``\\def\\Q#1{...}`` for a macro with arguments), not
    ``\\newcommand``: Colab renders markdown maths with KaTeX, which predefines some of these names
    (``\\R``, for one) and rejects ``\\newcommand`` of a defined name, so also of the cell's own
    names when a front end keeps definitions between renders and renders the cell again.
    ``\\def`` redefines silently in both KaTeX and MathJax (Jupyter).
    tests/browser/test_katex.py renders this cell with both.
    """
    lines = [MACROS_MARKER, "$$"]
    for name, body in macros().items():
        if isinstance(body, list):
            text, nargs = body
            params = "".join(f"#{i}" for i in range(1, int(nargs) + 1))
            lines.append(rf"\def\{name}{params}{{{text}}}")
        else:
            lines.append(rf"\def\{name}{{{body}}}")
    lines.append("$$")
    return "\n".join(lines)


def install_cell_source() -> str:
    """The first code cell of every chapter: on Colab, clones the repository, installs the library
    from it and points ``ASSOCMEM_RESULTS_DIR`` at its committed ``results/`` (chapters that plot
    stored sweeps need them); a no-op elsewhere. No line is longer than 88 characters, the
    book's limit for code (tests/test_chapter_presentation.py)."""
    url = repository_url()
    folder = "/content/" + url.rstrip("/").rsplit("/", 1)[-1]
    return "\n".join(
        [
            INSTALL_MARKER,
            "import sys",
            "",
            'if "google.colab" in sys.modules:',
            "    import os",
            "    import subprocess",
            "",
            f'    REPOSITORY = "{url}"',
            f'    BOOK = "{folder}"  # library and committed results/',
            "    if not os.path.isdir(BOOK):",
            '        clone = ["git", "clone", "--quiet", "--depth", "1", REPOSITORY, BOOK]',
            "        subprocess.run(clone, check=True)",
            '    %pip install --quiet "{BOOK}[colab]"',
            '    os.environ["ASSOCMEM_RESULTS_DIR"] = os.path.join(BOOK, "results")',
        ]
    )


def setup_cell_source() -> str:
    """The second code cell of every chapter: sets the chapter's process to float64.

    The library follows torch (``dtype=None`` is ``torch.get_default_dtype()``, float32 unless
    the script says otherwise, CONTRIBUTING.md "dtype and device"); the chapters' numbers are
    float64 results, so every chapter says so once, for its own kernel (a script may set its
    process default; the library never does).
    """
    return "\n".join([SETUP_MARKER, "import torch", "", "torch.set_default_dtype(torch.float64)"])


def chapter_pairs() -> list[tuple[Path, Path]]:
    """(md, ipynb) paths of every chapter, sorted."""
    stems = sorted({p.stem for p in NOTEBOOKS.glob("*.md")} | {p.stem for p in NOTEBOOKS.glob("*.ipynb")})
    return [(NOTEBOOKS / f"{s}.md", NOTEBOOKS / f"{s}.ipynb") for s in stems]


def sync_boilerplate(md: Path) -> bool:
    """Rewrite the macros and install cells of one ``.md`` chapter; return whether it changed."""
    nb = jupytext.read(md)
    cells = nb.cells
    macros_cell = nbformat.v4.new_markdown_cell(macros_cell_source(), metadata={"tags": [MACROS_TAG]})
    install_cell = nbformat.v4.new_code_cell(install_cell_source(), metadata={"tags": [INSTALL_TAG]})
    setup_cell = nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": [SETUP_TAG]})
    # Drop old copies, then put the macros cell first (before any maths), the install cell first
    # among code and the dtype setup cell right after it.
    markers = (MACROS_MARKER, INSTALL_MARKER, SETUP_MARKER, *OLD_MARKERS)
    cells = [c for c in cells if not c.source.startswith(markers)]
    cells.insert(0, macros_cell)
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    cells.insert(first_code, install_cell)
    cells.insert(first_code + 1, setup_cell)
    nb.cells = cells
    new = jupytext.writes(nb, fmt="md:myst")
    if new != md.read_text():
        md.write_text(new)
        return True
    return False


def execute(md: Path, timeout: int = 1200) -> Path:
    """Pair ``md`` with its ``.ipynb``, execute it from a fresh kernel in ``notebooks/``, save the outputs."""
    from nbclient import NotebookClient

    nb = jupytext.read(md)
    nb.metadata.setdefault("jupytext", {})["formats"] = FORMATS
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(md.parent)}}).execute()
    for cell in nb.cells:  # timestamps of the run only make diffs noisy
        cell.metadata.pop("execution", None)
    _stable_ids(nb)
    out = md.with_suffix(".ipynb")
    write_ipynb(nb, out)
    # Re-write the .md from the executed notebook so both files carry the same metadata.
    md.write_text(jupytext.writes(nb, fmt="md:myst"))
    return out


def write_ipynb(nb, path: Path) -> None:
    """Write ``nb`` as jupytext writes a paired ``.ipynb``: without the ``.md``-only header."""
    nb.metadata.get("jupytext", {}).pop("text_representation", None)
    nbformat.write(nb, path)


def out_of_sync(md: Path, ipynb: Path) -> bool:
    """Whether the ``.md`` says something other than the inputs of the ``.ipynb``."""
    return not ipynb.exists() or md.read_text() != jupytext.writes(nbformat.read(ipynb, as_version=4), fmt="md:myst")


def sync_inputs(md: Path) -> bool:
    """Copy the cells of an edited ``.md`` into its ``.ipynb``, keeping the outputs of unchanged
    cells (jupytext's own pairing rule); return whether anything changed."""
    from jupytext.combine import combine_inputs_with_outputs

    ipynb = md.with_suffix(".ipynb")
    if not out_of_sync(md, ipynb):
        return False
    nb = jupytext.read(md)
    if ipynb.exists():
        nb = combine_inputs_with_outputs(nb, nbformat.read(ipynb, as_version=4), fmt="md:myst")
    nb.metadata.setdefault("jupytext", {})["formats"] = FORMATS
    _stable_ids(nb)
    write_ipynb(nb, ipynb)
    md.write_text(jupytext.writes(nb, fmt="md:myst"))
    return True


def _stable_ids(nb) -> None:
    """Give every cell an id derived from its type and source (numbered when repeated).

    Reading the ``.md`` gives cells fresh random ids, so every re-execution rewrote all of them;
    ids from the content stay put when nothing changed and move only for edited cells.
    """
    seen: dict[str, int] = {}
    for cell in nb.cells:
        base = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:10]
        seen[base] = seen.get(base, 0) + 1
        cell["id"] = base if seen[base] == 1 else f"{base}-{seen[base]}"


REPRO_COUNTS_PAGE = ROOT / "book" / "how-to-read.md"
REPRO_COUNTS_START = "<!-- reproduction counts: generated from the chapters by tools/booktools.py repro-counts -->"
REPRO_COUNTS_END = "<!-- end of reproduction counts -->"


def repro_counts_markdown() -> str:
    """The front matter's count of verdicts: the claims' (as the claims page counts them), and
    the rows that check our own code.

    One verdict per claim of the registry (:func:`assocmem.claims.verdicts` over the rows that
    ``ReproductionTable.show()`` stored in the committed ``.ipynb`` files, summary tables
    included), in the table :func:`claim_counts_lines` makes for the claims page too, so the two
    pages cannot disagree and no number is typed by hand. Below it, the sanity rows (which judge
    no claim) and the rows on claims from outside the seeds, counted from the same rows.
    """
    from assocmem.claims import verdicts
    from assocmem.repro import collect

    notebooks = [ipynb for _, ipynb in chapter_pairs() if ipynb.exists()]
    counts = verdicts(collect(notebooks, summaries=True)).counts()
    first = collect(notebooks)  # without the summary tables, which repeat rows
    sanity = int((first.kind == "sanity").sum())
    outside = first[first.kind == "claim (outside the seeds)"]
    by = outside.verdict.value_counts()
    lines = claim_counts_lines(counts)
    lines += ["", f"Besides the claims: {sanity} rows check our own code (*sanity*), and "
              f"{len(outside)} rows check claims from outside the seeds (each attributed in its "
              f"chapter), of which {int(by.get('reproduced', 0))} are reproduced and "
              f"{int(by.get('differs', 0))} differ."]
    return "\n".join(lines)


def claim_counts_lines(counts) -> list[str]:
    """Markdown lines of the table of claim counts: one row per count, one column per source
    (:meth:`assocmem.claims.Verdicts.counts`), so that it fits the text column at 1280 px
    (CONTRIBUTING.md, "How the book must look"); nine count columns did not."""
    sources = [*SOURCE_HEADINGS, "total"]
    lines = ["| count | " + " | ".join("**all**" if s == "total" else f"seed {s}" for s in sources)
             + " |", "| --- |" + " ---: |" * len(sources)]
    for c in counts.columns:
        cells = [str(int(counts.loc[s, c])) for s in sources]
        lines.append(f"| {c} | " + " | ".join([*cells[:-1], f"**{cells[-1]}**"]) + " |")
    return lines


def repro_counts_block(text: str | None = None) -> tuple[str, str]:
    """``(current, expected)`` text between the markers of :data:`REPRO_COUNTS_PAGE`.

    Raises
    ------
    ValueError
        If the page lacks either marker.
    """
    text = REPRO_COUNTS_PAGE.read_text() if text is None else text
    if REPRO_COUNTS_START not in text or REPRO_COUNTS_END not in text:
        raise ValueError(f"{REPRO_COUNTS_PAGE.name} lacks the reproduction-count markers")
    current = text.split(REPRO_COUNTS_START, 1)[1].split(REPRO_COUNTS_END, 1)[0]
    return current, "\n" + repro_counts_markdown() + "\n"


def write_repro_counts() -> bool:
    """Rewrite the generated table of verdict counts in the front matter; return whether it changed."""
    text = REPRO_COUNTS_PAGE.read_text()
    current, expected = repro_counts_block(text)
    if current == expected:
        return False
    REPRO_COUNTS_PAGE.write_text(text.replace(REPRO_COUNTS_START + current + REPRO_COUNTS_END,
                                              REPRO_COUNTS_START + expected + REPRO_COUNTS_END))
    return True


ERRATA_PAGE = ROOT / "book" / "errata.md"


def _cell(text: str) -> str:
    """A markdown table cell: one line, the characters markdown would read (emphasis, maths, roles,
    HTML, the cell separator) escaped with a backslash, as CommonMark allows for any punctuation."""
    return re.sub(r"([\\`*_{}\[\]<>$|#~])", r"\\\1", " ".join(str(text).split())) or "-"


def errata_markdown() -> str:
    """The errata page: every reproduction row whose verdict is ``differs``, from the executed chapters,
    then the sources' own errors that the claims registry records (:func:`source_errata_lines`).

    Read from the rows that ``ReproductionTable.show()`` stored in the committed ``.ipynb`` files
    (:func:`assocmem.repro.collect`), never typed: the source's claim, our value, the chapter's
    explanation, and links to the chapter (``{doc}``) and to the row itself (its HTML anchor).
    """
    from assocmem.repro import collect

    rows = collect([ipynb for _, ipynb in chapter_pairs() if ipynb.exists()])
    differs = rows[rows["verdict"].str.startswith("differs")]
    chapters = list(dict.fromkeys(differs["chapter"]))
    lines = [
        "# Errata: where the sources and our computations differ",
        "",
        "<!-- generated from the executed chapters by `python tools/booktools.py errata` (run by `make book`);"
        " do not edit -->",
        "",
        f"Every row of a reproduction table whose verdict is *differs*: {len(differs)} rows in "
        f"{len(chapters)} chapters. Each gives the claim, where the source makes it, what the source says, "
        "what we compute, and the chapter's explanation; *row* links to the row in its chapter's table, "
        "where the computation behind it is. \"Source\" is the chapter's own source document (seed 000 in "
        "Part I, seed 001 in Part II, seed 002 and the paper it reviews in Part III, see "
        "{doc}`how-to-read`); a claim from outside the seeds is marked as such.",
        "",
    ]
    # Four columns, the claim's source and the link to its row in the claim's cell, so that the
    # table fits the text column at 1280 px (CONTRIBUTING.md, "How the book must look").
    for chapter in chapters:
        lines += [f"**{{doc}}`../notebooks/{chapter}`**", "",
                  "| claim (where the source makes it) | the source says | ours | why |",
                  "| --- | --- | --- | --- |"]
        for r in differs[differs["chapter"] == chapter].to_dict("records"):
            source = r["source"] if r["origin"] == "seed" else f"outside the seeds: {r['source']}"
            link = f'<a href="../notebooks/{chapter}.html#{r["anchor"]}">row</a>'
            claim = f"{_cell(r['claim'])} ({_cell(source)}; {link})"
            cells = (r["source says"], r["ours"], r["note"])
            lines.append(f"| {claim} | " + " | ".join(_cell(x) for x in cells) + " |")
        lines.append("")
    return "\n".join(lines + source_errata_lines())


def source_errata_lines() -> list[str]:
    """The errata page's second part: where a source contradicts itself, from the claims registry.

    Each erratum recorded on a claim (``assocmem.claims``, field ``errata``) with the claim's id
    and location and the evidence in the source's own text; see {doc}`claims` for every claim.
    """
    from assocmem.claims import load_claims

    claims = [c for c in load_claims().values() if c.errata]
    lines = [
        "## Errors in the sources themselves",
        "",
        f"Where a source contradicts itself or its own tables: {sum(len(c.errata) for c in claims)} "
        f"errata on {len(claims)} claims of the claims registry ({{doc}}`claims`), each with its "
        "evidence in the source's text. They are not verdicts: no computation of ours is involved.",
        "",
    ]
    for source in sorted({c.source for c in claims}):
        lines += [f"**Seed {source}**", ""]
        for c in sorted((c for c in claims if c.source == source), key=lambda c: c.id):
            for e in c.errata:
                lines.append(f"- {_cell(c.location)} (`{c.id}`): {_cell(e.issue)} "
                             f"*Evidence:* {_cell(e.evidence)}")
        lines.append("")
    return lines


def _write_page(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it already holds it; return whether it changed."""
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def write_errata() -> bool:
    """Rewrite :data:`ERRATA_PAGE` from the chapters; return whether it changed."""
    return _write_page(ERRATA_PAGE, errata_markdown())


CLAIMS_PAGE = ROOT / "book" / "claims.md"
#: The section heading of each source on the claims page (plain text: a heading is an anchor and a
#: sidebar entry).
SOURCE_HEADINGS = {
    "000": "Seed 000: linear attention as a matrix memory (Part I)",
    "001": "Seed 001: MLPs are Hebbians (Part II)",
    "002": "Seed 002: the review of Attention Approximates Sparse Distributed Memory (Part III)",
}
SOURCE_PARTS = {"000": "part1", "001": "part2", "002": "part3"}


def _chapter_link(chapter: str) -> str:
    """A chapter linked from ``book/`` under its number (a title would widen the table)."""
    return f"{{doc}}`{chapter[:2]} <../notebooks/{chapter}>`"


def _verdict_cell(v) -> str:
    """A claim's verdict, with each chapter's where they differ or a row declares another test."""
    if not v.chapters:
        return "unchecked"
    plain = all(c.different_test is None for c in v.chapters)
    if plain and len({c.verdict for c in v.chapters}) == 1:
        return v.verdict
    parts = []
    for c in v.chapters:
        why = f" ({_cell('a different test: ' + c.different_test)})" if c.different_test else ""
        parts.append(f"{_chapter_link(c.chapter)} {c.verdict}{why}")
    head = f"conflict ({v.conflict})" if v.conflict else v.verdict
    return f"{head}: " + "; ".join(parts)


def claims_markdown() -> str:
    """The claims page: every claim of the registry, where the book checks it, and its verdict.

    From the registry (:mod:`assocmem.claims`) and the rows that ``ReproductionTable.show()``
    stored in the committed ``.ipynb`` files (:func:`assocmem.repro.collect`, summary tables
    included), combined by :func:`assocmem.claims.verdicts`: one section per source with its
    counts, a table of its claims (the claim in one cell, with its id and location, so that the
    table has three columns and fits the text column at 1280 px) and the errata the registry
    records.
    """
    from assocmem.claims import load_claims, verdicts
    from assocmem.repro import collect

    claims = load_claims()
    result = verdicts(collect([ipynb for _, ipynb in chapter_pairs() if ipynb.exists()], summaries=True))
    counts = result.counts()
    total = counts.loc["total"]
    lines = [
        "# Claims: every checkable claim of the three sources",
        "",
        "<!-- generated from the claims registry and the executed chapters by"
        " `python tools/booktools.py claims` (run by `make book`); do not edit -->",
        "",
        f"Every theorem, figure, table and quantitative statement of the three sources is one claim "
        f"with a stable id in the book's registry of claims (`assocmem.claims`): {total['claims']} "
        f"claims, of which {total['checked']} are checked by a chapter's reproduction table and "
        f"{total['unchecked']} are not checked yet. Each claim has one verdict, from every row that "
        "checks it: when a chapter's rows agree, theirs; when some of its cases hold and others do "
        "not, *mixed*; when chapters reach different verdicts, *conflict*, with each chapter's "
        "verdict beside it (a row whose test differs from the others' says so, and is not set "
        "against them); *unchecked* when no chapter checks it. The claims are the sources' own, "
        "restated; the rows that differ are explained in the chapters and listed in {doc}`errata`, "
        "and {doc}`how-to-read` says how the reproduction tables are read. Where a source "
        "contradicts itself about a claim, the erratum is listed after the source's table.",
        "",
    ]
    lines += claim_counts_lines(counts)
    lines.append("")
    for source, heading in SOURCE_HEADINGS.items():
        mine = [c for c in claims.values() if c.source == source]
        row = counts.loc[source]
        lines += [
            f"## {heading}",
            "",
            f"{row['claims']} claims, {row['checked']} checked and {row['unchecked']} unchecked; the "
            f"chapters are those of {{doc}}`{SOURCE_PARTS[source]}`.",
            "",
            "| claim (id and where the source makes it) | checked in | verdict |",
            "| --- | --- | --- |",
        ]
        for claim in mine:
            v = result.claims[claim.id]
            erratum = " *(erratum below)*" if claim.errata else ""
            cell = f"`{claim.id}` ({_cell(claim.location)}): {_cell(claim.claim)}{erratum}"
            where = ", ".join(_chapter_link(ch) for ch in dict.fromkeys(c.chapter for c in v.chapters)) or "-"
            lines.append(f"| {cell} | {where} | {_verdict_cell(v)} |")
        lines.append("")
        errata = [(c, e) for c in mine for e in c.errata]
        if errata:
            lines += [f"**Errata of seed {source} recorded in the registry**", ""]
            for claim, e in errata:
                lines.append(f"- `{claim.id}`: {_cell(e.issue)} Evidence: {_cell(e.evidence)}")
            lines.append("")
    return "\n".join(lines)


def write_claims() -> bool:
    """Rewrite :data:`CLAIMS_PAGE` from the registry and the chapters; return whether it changed."""
    return _write_page(CLAIMS_PAGE, claims_markdown())


# ---------------------------------------------------------------------------------- API reference

SRC = ROOT / "src"
PACKAGE = "assocmem"
API_DIR = ROOT / "book" / "api"
TOC = ROOT / "_toc.yml"
API_CAPTION = "API reference"
API_MARKER = ("<!-- Generated by `python tools/booktools.py api-pages` from the package layout: "
              "edit the docstrings, not this page. -->")
#: The order of the top-level packages in the book's API part: the Parts as the book reads them,
#: then the shared floor's packages. A package missing here comes after them, by name.
API_ORDER = ("linear", "mlps", "sdm", "compare", "sweeps", "claims")
#: The top page's introduction: the conventions every page below follows (CONTRIBUTING.md,
#: "dtype and device", says the same for contributors).
API_INTRO = """\
**Conventions.** The library follows torch. `dtype=None` and `device=None`, the default of every
public signature, mean torch's defaults: `torch.get_default_dtype()` (float32 unless your script
sets another) and `torch.get_default_device()` (the CPU unless it sets another), resolved by
{func}`assocmem.dtypes.resolve_dtype` and {func}`assocmem.devices.resolve_device`.
`device="auto"` is accepted as an explicit value (CUDA, then Apple MPS, then the CPU). Modules
compute in their parameters' dtype and do not cast your tensors (a mismatch raises, as in
`nn.Linear`); a construction that needs float64 for its conditioning (a Cholesky or whitened
readout, a least-squares solve, an exact table) computes in float64 inside and returns the dtype
that was asked for (or the fact set's), as its docstring says. No function changes torch's default
dtype or device. Random draws happen on the CPU, from a CPU generator seeded by the seed, and
move to the target device, so a seed gives the same numbers on every device. The book's chapters
compute in float64: each sets `torch.set_default_dtype(torch.float64)` in a hidden setup cell,
and the sweep engine runs every point under float64 ({data}`assocmem.sweeps.engine.POINT_DTYPE`).
"""


def public_modules() -> list[str]:
    """Every public module of the library, by dotted name, sorted: each ``.py`` file under
    ``src/assocmem`` (a package by its ``__init__.py``) none of whose dotted parts starts with an
    underscore (``assocmem._checks`` and ``assocmem.__main__`` are private)."""
    names = []
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(part.startswith("_") for part in parts):
            names.append(".".join(parts))
    return sorted(names)


def public_packages() -> list[str]:
    """The public modules that are packages (one API page each)."""
    return [m for m in public_modules() if (SRC / m.replace(".", "/") / "__init__.py").exists()]


def api_page_of(package: str) -> Path:
    """The API page of ``package``: ``book/api/assocmem-linear-attention.md`` and so on."""
    return API_DIR / f"{package.replace('.', '-')}.md"


def api_modules_of(package: str) -> list[str]:
    """The modules documented on ``package``'s page: the package itself, then the public modules
    that are not packages and whose nearest package is ``package``."""
    packages = set(public_packages())
    own = [m for m in public_modules()
           if m not in packages and m.rpartition(".")[0] == package]
    return [package, *own]


def _automodule(name: str, members: bool) -> list[str]:
    lines = ["```{eval-rst}", f".. automodule:: {name}"]
    if members:
        lines.append("   :members:")
    return lines + ["```", ""]


def api_page_markdown(package: str) -> str:
    """The API page of ``package``: the package's docstring (its members are documented where
    they are defined, so every object has one entry and one link target), then one section per
    module of the package with its public members (Sphinx autodoc, numpy docstrings through
    napoleon; ``_config.yml`` sets the options)."""
    lines = [API_MARKER, "", f"# {package}", ""]
    if package == PACKAGE:
        lines += [API_INTRO]
    lines += _automodule(package, members=False)
    for module in api_modules_of(package)[1:]:
        lines += [f"## {module}", ""] + _automodule(module, members=True)
    return "\n".join(lines).rstrip("\n") + "\n"


def _api_key(package: str) -> tuple:
    top = package.split(".")[1] if "." in package else ""
    rank = API_ORDER.index(top) if top in API_ORDER else len(API_ORDER)
    return (package != PACKAGE, rank, package)


def api_toc_yaml() -> str:
    """The ``API reference`` part of ``_toc.yml``: the top package's page, then each top-level
    package with its subpackages as sections, nested as the packages are."""
    packages = sorted(public_packages(), key=_api_key)

    def entry(package: str, indent: str) -> list[str]:
        out = [f"{indent}- file: {api_page_of(package).relative_to(ROOT).with_suffix('').as_posix()}"]
        children = [p for p in packages if p.rpartition(".")[0] == package and p != package]
        if children and package != PACKAGE:
            out.append(f"{indent}  sections:")
            for child in children:
                out += entry(child, indent + "    ")
        return out

    lines = [f"  - caption: {API_CAPTION}", "    chapters:"]
    lines += entry(PACKAGE, "      ")
    for package in packages:
        if package.count(".") == 1:
            lines += entry(package, "      ")
    return "\n".join(lines) + "\n"


def toc_with_api(text: str) -> str:
    """``_toc.yml``'s text with its API part replaced by :func:`api_toc_yaml` (appended if absent).
    The part runs from its ``- caption:`` line to the next part's or to the end of the file."""
    lines = text.rstrip("\n").split("\n")
    head = f"  - caption: {API_CAPTION}"
    if head in lines:
        start = lines.index(head)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("  - caption:")),
                   len(lines))
    else:
        start = end = len(lines)
    new = api_toc_yaml().rstrip("\n").split("\n")
    return "\n".join(lines[:start] + new + lines[end:]) + "\n"


def write_api_pages() -> list[Path]:
    """Write every package's API page and the toc's API part; delete pages of packages that are
    gone; return the files that changed."""
    API_DIR.mkdir(exist_ok=True)
    changed = []
    pages = {api_page_of(p): api_page_markdown(p) for p in public_packages()}
    for path, text in pages.items():
        if _write_page(path, text):
            changed.append(path)
    for path in API_DIR.glob("*.md"):
        if path not in pages:
            path.unlink()
            changed.append(path)
    if _write_page(TOC, toc_with_api(TOC.read_text())):
        changed.append(TOC)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("sync-boilerplate", help="rewrite the generated cells of every chapter's .md")
    sub.add_parser("sync-inputs", help="copy every edited .md into its .ipynb (outputs kept)")
    sub.add_parser("repro-counts", help="write the front matter's count of reproduction verdicts")
    sub.add_parser("errata", help="write book/errata.md: every reproduction row that differs from its source")
    sub.add_parser("claims", help="write book/claims.md: every claim of the sources and its verdict")
    sub.add_parser("api-pages", help="write book/api/*.md (one page per package) and the toc's API part")
    ex = sub.add_parser("execute", help="execute chapters (.md paths) and save their .ipynb with outputs")
    ex.add_argument("paths", nargs="+", type=Path)
    ex.add_argument("--timeout", type=int, default=1200)
    args = parser.parse_args(argv)
    if args.cmd == "sync-boilerplate":
        for md, _ in chapter_pairs():
            if md.exists() and sync_boilerplate(md):
                print(f"updated {md.relative_to(ROOT)}")
        return 0
    if args.cmd == "errata":
        if write_errata():
            print(f"updated {ERRATA_PAGE.relative_to(ROOT)}")
        return 0
    if args.cmd == "claims":
        if write_claims():
            print(f"updated {CLAIMS_PAGE.relative_to(ROOT)}")
        return 0
    if args.cmd == "api-pages":
        for path in write_api_pages():
            print(f"updated {path.relative_to(ROOT)}")
        return 0
    if args.cmd == "repro-counts":
        if write_repro_counts():
            print(f"updated the reproduction counts in {REPRO_COUNTS_PAGE.relative_to(ROOT)}")
        return 0
    if args.cmd == "sync-inputs":
        for md, ipynb in chapter_pairs():
            if md.exists() and sync_inputs(md):
                print(f"{md.relative_to(ROOT)} was edited: its cells are copied into {ipynb.name}; "
                      f"its stored outputs are stale until `make sync` (or booktools execute) reruns it")
        return 0
    for p in args.paths:
        md = p.with_suffix(".md")
        sync_boilerplate(md)
        print(f"executing {md.relative_to(ROOT) if md.is_absolute() else md} ...", flush=True)
        execute(md.resolve(), timeout=args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
