"""Lazy modules for a package (PEP 562): the Part packages import their modules on first use.

``__getattr__, __dir__ = lazy_modules(__name__, __all__, globals())`` in a package's
``__init__`` makes ``package.module`` import ``package.module`` the first time it is read, so
that importing the package itself stays light (no torch).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence


def lazy_modules(package: str, names: Sequence[str],
                 namespace: dict) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose modules ``names`` load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : sequence of str
        Its modules and subpackages (the package's ``__all__``).
    namespace : dict
        The package's ``globals()`` (what ``dir()`` lists beside ``names``).

    Returns
    -------
    (__getattr__, __dir__)
        ``__getattr__(name)`` imports ``package.name`` for a listed name and raises
        ``AttributeError`` naming the package's modules otherwise; ``__dir__()`` lists the
        namespace and the modules.
    """
    listed = tuple(names)

    def __getattr__(name: str):
        if name in listed:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}; its modules are: "
                             f"{', '.join(listed)}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(listed))

    __getattr__.__doc__ = f"Import a module of {package} on first use (PEP 562)."
    return __getattr__, __dir__
