"""The library's layout is the book's table of contents (README, "Using the library").

The modules of ``assocmem`` form a dependency graph (an arrow for every ``import`` of another
``assocmem`` module, at any depth in the file). The graph has no cycles; the shared floor (the
top-level modules and ``assocmem.sweeps``) imports no Part; and a Part imports another Part only
where the dependency is deliberate and documented here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "assocmem"
PARTS = ("linear", "mlps", "sdm", "compare")  # Part I, Part II, Part III, Part IV
#: Deliberate dependencies between Parts: Part II stores facts in Part I's matrix memory (the
#: linear Hebbian baseline), Part III compares SDM reads with Part I's softmax attention, and
#: Part IV measures every memory of Parts I-III through one protocol (its adapters wrap them all).
ALLOWED_ACROSS = {("mlps", "linear"), ("sdm", "linear"),
                  ("compare", "linear"), ("compare", "mlps"), ("compare", "sdm")}
MAX_LINES = 900  # the guide is "about 800"; a module above this holds more than one concept


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """The assocmem modules that ``path`` imports (a name imported from a package counts as its
    submodule when one of that name exists)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("assocmem")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("assocmem"):
            if node.level:
                raise AssertionError(f"{path}: relative import (the library uses absolute imports)")
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in MODULES else node.module)
    out.discard(_module_name(path))
    return out


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PARTS else None


def test_every_import_names_an_existing_module():
    missing = {(m, t) for m, targets in GRAPH.items() for t in targets if t not in MODULES}
    assert not missing, f"imports of modules that do not exist: {sorted(missing)}"


def test_the_module_graph_has_no_cycles():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(GRAPH.get(m, ())):
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_the_floor_imports_no_part():
    upward = sorted((m, t) for m, ts in GRAPH.items() if _part(m) is None for t in ts if _part(t))
    assert not upward, f"the shared floor imports a Part: {upward}"


def test_parts_import_each_other_only_where_documented():
    across = sorted((m, t) for m, ts in GRAPH.items() for t in ts
                    if _part(m) and _part(t) and _part(m) != _part(t) and (_part(m), _part(t)) not in ALLOWED_ACROSS)
    assert not across, f"undocumented dependencies between Parts: {across}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module):
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it by concept"


@pytest.mark.parametrize("module", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_every_package_says_what_it_holds(module):
    doc = ast.get_docstring(ast.parse(MODULES[module].read_text()))
    assert doc and len(doc) > 80, f"{module}: the package docstring should map its modules and chapters"


@pytest.mark.parametrize("module", sorted(m for m, p in MODULES.items() if p.name != "__init__.py"
                                          and not p.name.startswith("_") and m != "assocmem.__main__"))
def test_every_module_has_its_test_module(module):
    """tests/ mirrors src/assocmem/: ``assocmem/a/b.py`` is tested in ``tests/a/test_b.py``."""
    parts = module.split(".")[1:]
    path = SRC.parents[1] / "tests" / Path(*parts[:-1]) / f"test_{parts[-1]}.py"
    assert path.exists(), f"{module} has no test module {path.relative_to(SRC.parents[1])}"


@pytest.mark.parametrize("package", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_every_package_docstring_names_its_modules(package):
    """The package docstring is a map: every public module or subpackage in it is named there."""
    import re

    doc = ast.get_docstring(ast.parse(MODULES[package].read_text())) or ""
    children = {m.rsplit(".", 1)[1] for m in MODULES if m.rsplit(".", 1)[0] == package and m != package}
    missing = sorted(c for c in children if not c.startswith("_") and not re.search(rf"\b{c}\b", doc))
    assert not missing, f"{package}: its docstring does not name {missing}"
