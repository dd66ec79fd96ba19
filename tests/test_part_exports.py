"""Every Part package declares ``__all__``; every name in it resolves and is documented (issue 29,
item 5).

A module, class or function documents itself (its own ``__doc__``); a constant has no docstring of
its own, so it is documented by a ``#:`` comment above its assignment (the Sphinx autodoc
convention) in the module that defines it.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

PARTS = ("assocmem.linear", "assocmem.mlps", "assocmem.sdm", "assocmem.compare", "assocmem.sweeps")
SRC = Path(__file__).resolve().parents[1] / "src"


def _exports():
    for part in PARTS:
        for name in importlib.import_module(part).__all__:
            yield part, name


def _documented_constant(part: str, name: str) -> bool:
    """A ``#:`` comment directly above ``NAME = ...`` (or ``NAME: type = ...``) in the Part's source."""
    pattern = re.compile(rf"^{re.escape(name)}\s*(:[^=]*)?=")
    for path in (SRC / Path(*part.split("."))).rglob("*.py"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if pattern.match(line) and i > 0 and lines[i - 1].startswith("#:"):
                return True
    return False


@pytest.mark.parametrize("part", PARTS)
def test_every_part_declares_all(part):
    module = importlib.import_module(part)
    assert isinstance(module.__all__, list) and module.__all__
    assert len(set(module.__all__)) == len(module.__all__), f"{part}.__all__ repeats a name"


@pytest.mark.parametrize("part, name", list(_exports()))
def test_every_exported_name_resolves_and_has_a_docstring(part, name):
    value = getattr(importlib.import_module(part), name)
    if isinstance(value, (types.ModuleType, type, types.FunctionType)) or inspect.isroutine(value):
        doc = value.__doc__  # its own: a class's __doc__ is not inherited
        assert doc and doc.strip(), f"{part}.{name} has no docstring"
    else:
        assert _documented_constant(part, name), f"{part}.{name}: no '#:' comment above its assignment"


@pytest.mark.parametrize("part", ["assocmem.linear", "assocmem.mlps", "assocmem.compare"])
def test_lazy_parts_stay_lazy_and_star_import_works(part):
    code = (f"import sys, {part} as p; before = 'torch' in sys.modules; "
            f"exec('from {part} import *'); print(before, all(n in globals() for n in p.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=300)
    assert out.stdout.split() == ["False", "True"]


def test_an_unknown_name_of_a_part_says_what_exists():
    import assocmem.linear

    with pytest.raises(AttributeError, match="its modules are: attention, memory"):
        assocmem.linear.no_such_module  # noqa: B018
