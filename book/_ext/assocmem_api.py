"""Local Sphinx extension for the book's API reference (book/api/, written by
``tools/booktools.py api-pages``; loaded through ``sphinx: local_extensions`` in _config.yml).

Docstring section titles become rubrics. A module docstring of the library is a short essay with
its own headings ("Modules", "Map", "Conventions", ...), which read well in
``help()``. Rendered as reST sections inside a page of the API reference they would become
sections of the page: entries in the page's contents, nested under whatever heading the page has
there, and labels that clash between modules ("duplicate label modules" under ``-W``). After
napoleon has turned the numpy sections it knows (Parameters, Returns, References, ...) into fields
and rubrics, :func:`section_titles_to_rubrics` turns every remaining section title (a line
underlined by one repeated punctuation character, at least as long as the title) into a
``.. rubric::`` line, which prints the same heading without making a section or a label.

Column lists become definition lists. The docstrings list a package's modules, a sweep's
columns or a folder's files as two plain-text columns, which read well in ``help()``::

    memory        matrix memories: outer-product (Hebbian), least-squares (pseudoinverse), delta
                  rule (chapters 01-03)
    geometry      the geometry of a few stored pairs ...

reST would read the first line as a term and the rest as its definition (or warn where an entry
has one line). :func:`column_lists_to_definitions` rewrites such a paragraph (two entries at
least, every other line indented deeper than the names, not inside a literal block; a name too
long for its column may stand alone on its line, its description on the lines below) as a
definition list: the name, as code (a link where the docstring is a package's and the name one
of its modules), then its description.

Links through re-exports. Every object is documented once, in the module that defines it
(``autodoc_default_options: ignore-module-all``), but docstrings and chapters name many objects by
the package that re-exports them (``assocmem.mlps.mlp.hebbian_mlp`` for
``assocmem.mlps.mlp.hebbian.hebbian_mlp``). :func:`resolve_reexport` answers Sphinx's
``missing-reference`` event for the Python domain: it imports the named object and, where it is
defined under another name that the book documents, links there.
"""

from __future__ import annotations

import importlib
import importlib.util
import re

#: Characters that underline a section title in the library's docstrings.
UNDERLINE = re.compile(r"^\s*([-=~^\"'`#*+])\1{2,}\s*$")


def section_titles_to_rubrics(lines: list[str]) -> None:
    """Rewrite, in place, each reST section title of ``lines`` (a docstring, one line per item)
    as a ``.. rubric::`` directive at the title's indentation."""
    i = 0
    while i < len(lines) - 1:
        title, under = lines[i], lines[i + 1]
        stripped = title.strip()
        if (stripped and UNDERLINE.match(under) and len(under.strip()) >= len(stripped)
                and not UNDERLINE.match(title) and (i == 0 or not lines[i - 1].strip())):
            indent = title[: len(title) - len(title.lstrip())]
            lines[i: i + 2] = [f"{indent}.. rubric:: {stripped}", ""]
        i += 1


#: An entry of a column list: the name (words joined by single spaces), two spaces or more, the
#: description.
ENTRY = re.compile(r"^(?P<indent>\s*)(?P<name>\S+(?: \S+)*?) {2,}(?P<text>\S.*)$")
#: An entry whose name is too long for the name column: the name alone, the description below.
NAME_ONLY = re.compile(r"^(?P<indent>\s*)(?P<name>\S+)(?P<text>)$")
BULLET = re.compile(r"^([-*+]|\d+\.|#\.|\(?\w\)|>>>|\.\.|:\w)")
#: A border line of a reST table (simple or grid): the paragraph is a table, not a column list.
TABLE_BORDER = re.compile(r"^\s*(=+( +=+)+|\+[-=+]+\+)\s*$")
PLAIN_NAME = re.compile(r"^[\w.<>*/-]+$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _in_literal_block(lines: list[str], start: int, indent: int) -> bool:
    """Whether the paragraph at ``start`` (indentation ``indent``) is the body of a literal block
    or a directive: the nearest earlier non-blank line indented less ends with ``::`` or is a
    directive."""
    for line in reversed(lines[:start]):
        if line.strip() and _indent(line) < indent:
            return line.rstrip().endswith("::") or line.lstrip().startswith(".. ")
    return False


def _column_list(block: list[str]) -> list[tuple[str, list[str]]] | None:
    """The entries ``(name, description lines)`` of ``block`` if it is a column list, else None."""
    first = ENTRY.match(block[0]) or NAME_ONLY.match(block[0])
    if not first or BULLET.match(block[0].lstrip()) or any(TABLE_BORDER.match(b) for b in block):
        return None
    indent = len(first["indent"])
    entries = []
    for line in block:
        if _indent(line) > indent + 1 and entries:
            entries[-1][1].append(line.strip())
            continue
        m = ENTRY.match(line) or NAME_ONLY.match(line)
        if not m or len(m["indent"]) != indent or BULLET.match(line.lstrip()):
            return None
        entries.append((m["name"], [m["text"]] if m["text"] else []))
    if len(entries) < 2 or not all(text for _, text in entries):
        return None
    return entries


def _submodule(package: str | None, name: str) -> str | None:
    """``package.name`` when that is a module of the library, else None."""
    if not package or not re.fullmatch(r"[A-Za-z]\w*", name):
        return None
    try:
        return f"{package}.{name}" if importlib.util.find_spec(f"{package}.{name}") else None
    except (ImportError, ValueError):
        return None


def _term(name: str, package: str | None) -> str:
    module = _submodule(package, name)
    if module:
        return f":mod:`{name} <{module}>`"
    return f"``{name}``" if PLAIN_NAME.match(name) else name


def column_lists_to_definitions(lines: list[str], package: str | None = None) -> None:
    """Rewrite, in place, each column list of ``lines`` as a reST definition list. In the
    docstring of ``package``, a name that is one of its modules links to that module."""
    i = 0
    while i < len(lines):
        if not lines[i].strip() or (i and lines[i - 1].strip()):
            i += 1
            continue
        end = i
        while end < len(lines) and lines[end].strip():
            end += 1
        block = lines[i:end]
        entries = _column_list(block)
        if entries is None or _in_literal_block(lines, i, _indent(block[0])):
            i = end
            continue
        pad = " " * _indent(block[0])
        out = []
        for name, text in entries:
            out.append(pad + _term(name, package))
            out.append(pad + "    " + " ".join(text))
        lines[i:end] = out
        i += len(out)


def _on_docstring(app, what, name, obj, options, lines) -> None:
    section_titles_to_rubrics(lines)
    column_lists_to_definitions(lines, package=name if what == "module" else None)


def _import(target: str):
    """The object named by the dotted path ``target``, or None."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def canonical_name(target: str) -> str | None:
    """Where the object named ``target`` is defined: ``module.qualname``, or None when it is not
    an importable class or function (or is defined under the same name)."""
    if not target.startswith("assocmem."):
        return None
    obj = _import(target)
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(qualname, str)):
        return None
    name = f"{module}.{qualname}"
    return None if name == target else name


def resolve_reexport(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    name = canonical_name(target)
    if name is None:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node.get("refdoc"), app.builder, node.get("reftype"), name,
                               node, contnode)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    # After napoleon (priority 500), which reads the numpy sections it knows by their titles.
    app.connect("autodoc-process-docstring", _on_docstring, priority=600)
    app.connect("missing-reference", resolve_reexport)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
