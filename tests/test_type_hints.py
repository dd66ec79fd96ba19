"""Every public signature carries type hints (issue 29, item 5; the package ships ``py.typed``).

A public module is one under ``assocmem`` with no private part in its name; its public objects are
those its ``__all__`` names and that it defines itself (a re-export is checked where it is
defined). For each public function, and each public method of a public class (``__init__``,
static and class methods and property getters included), every parameter but ``self``/``cls``
and the return must be annotated.

``PENDING`` lists the modules not annotated yet, each with the reason. It can only shrink: a
module listed there that has become fully annotated fails too, so its entry is removed with the
work that finished it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import assocmem

PENDING: dict[str, str] = {}


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(assocmem.__path__, "assocmem."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def _callables(module):
    """``(qualified name, function)`` for the public functions and methods ``module`` defines."""
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                elif isinstance(value, property):
                    value = value.fget
                if inspect.isfunction(value):
                    yield f"{name}.{attr}", value


def _unannotated(module) -> list[str]:
    missing = []
    for qualname, fn in _callables(module):
        sig = inspect.signature(fn)
        missing.extend(f"{qualname}({p})" for p, param in sig.parameters.items()
                       if p not in ("self", "cls") and param.annotation is inspect.Parameter.empty)
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{qualname} -> ?")
    return missing


MODULES = _public_modules()


@pytest.mark.parametrize("name", MODULES)
def test_public_signatures_are_annotated(name):
    missing = _unannotated(importlib.import_module(name))
    if name in PENDING:
        assert missing, f"{name} is fully annotated now: remove it from PENDING"
    else:
        assert not missing, f"{name}: unannotated parameters or returns: {missing}"


def test_the_pending_list_names_public_modules_with_a_reason():
    assert set(PENDING) <= set(MODULES), sorted(set(PENDING) - set(MODULES))
    assert all(reason.startswith("pending: ") for reason in PENDING.values())


def test_the_check_sees_a_missing_hint():
    """The scan itself: it finds an unannotated parameter and a missing return, and follows only
    what a module defines and lists."""
    import types

    module = types.ModuleType("fake")
    exec(
        "def f(a: int, b) -> int: ...\n"
        "def g(a: int): ...\n"
        "class C:\n"
        "    def __init__(self, x: int): ...\n"
        "    @property\n"
        "    def p(self) -> int: ...\n"
        "    @staticmethod\n"
        "    def s(y) -> None: ...\n"
        "    def _private(self, z): ...\n"
        "def hidden(q): ...\n"
        "__all__ = ['f', 'g', 'C']\n",
        module.__dict__,
    )
    for obj in (module.f, module.g, module.C):
        obj.__module__ = "fake"
    assert _unannotated(module) == ["f(b)", "g -> ?", "C.__init__ -> ?", "C.s(y)"]
