"""The top-level package: light to import, and every Part and main name reachable from it (issue 29,
item 5)."""

import ast
import importlib
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest

import assocmem


def test_import_is_light_and_loads_nothing_heavy():
    code = "import sys, assocmem; print('torch' in sys.modules, 'assocmem.linear' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("name", assocmem.__all__[1:])
def test_every_listed_name_is_reachable(name):
    value = getattr(assocmem, name)
    assert value is getattr(assocmem, name)  # cached after the first use
    assert name in dir(assocmem)


def test_the_main_names_are_the_library_objects():
    from assocmem.linear.memory import OuterProductMemory
    from assocmem.mlps.mlp.hebbian import hebbian_mlp

    assert assocmem.OuterProductMemory is OuterProductMemory and assocmem.hebbian_mlp is hebbian_mlp
    assert assocmem.linear.__name__ == "assocmem.linear"


def test_an_unknown_name_says_what_exists():
    with pytest.raises(AttributeError, match="the Parts and main names are: linear, mlps"):
        assocmem.no_such_thing  # noqa: B018


def test_the_package_declares_its_type_hints():
    assert resources.files("assocmem").joinpath("py.typed").is_file()
    # and the wheel ships the marker: setuptools copies only the package data pyproject lists
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["assocmem"]


@pytest.mark.parametrize("module", ["assocmem.mlps.transformer.model", "assocmem.mlps.editing.model",
                                    "assocmem.mlps.mlp.hebbian", "assocmem.mlps.mlp.readout"])
def test_public_signatures_are_annotated(module):
    """Every parameter and return of the public functions and methods of these modules has a type
    hint (the modules issue 29's state_dict and naming work touched)."""
    tree = ast.parse(Path(importlib.import_module(module).__file__).read_text())
    missing = []

    def visit(node, prefix=""):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef) and (not child.name.startswith("_") or child.name == "__init__"):
                a = child.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
                missing.extend(f"{prefix}{child.name}({p.arg})" for p in params
                               if p.annotation is None and p.arg not in ("self", "cls"))
                if child.returns is None and child.name != "__init__":
                    missing.append(f"{prefix}{child.name} -> ?")

    visit(tree)
    assert not missing, missing




def test_the_chapter_ranges_of_the_parts_match_the_book():
    # the top docstring said 10-13 and 30-36, Part II's own 10-16: the book has 10-17 and 30-37
    import re
    from pathlib import Path

    import assocmem.linear
    import assocmem.mlps

    numbers = sorted(int(p.name[:2]) for p in (Path(__file__).parents[1] / "notebooks").glob("[0-9][0-9]-*.md"))
    for part, (lo, hi), package in (("I", (0, 9), assocmem.linear), ("II", (10, 29), assocmem.mlps),
                                    ("III", (30, 49), None)):
        chapters = [n for n in numbers if lo <= n <= hi]
        want = f"{chapters[0]:02d}-{chapters[-1]:02d}"
        found = re.search(rf"Part {part} \(chapters (\d\d-\d\d)\)", assocmem.__doc__)
        assert found and found.group(1) == want, (part, found and found.group(1), want)
        if package is not None:
            own = re.search(r"\(chapters (\d\d-\d\d)", package.__doc__.splitlines()[0])
            assert own and own.group(1) == want, (package.__name__, own and own.group(1), want)
