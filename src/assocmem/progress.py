"""Progress bars that stay silent in CI, under nbval and in the book build."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tqdm.std import tqdm  # plain text bars: no ipywidgets needed, no warning in a kernel

if TYPE_CHECKING:
    from typing import Any

__all__ = ["progress", "quiet"]


def quiet() -> bool:
    """True when progress output should be suppressed: ``CI`` or ``ASSOCMEM_QUIET`` is set (non-empty, not "0")."""
    return any(os.environ.get(k, "") not in ("", "0", "false", "False") for k in ("CI", "ASSOCMEM_QUIET"))


def progress(iterable: Iterable, **kwargs: Any) -> Iterable:
    """Wrap ``iterable`` in a tqdm bar unless :func:`quiet`; keyword arguments go to tqdm."""
    kwargs.setdefault("disable", quiet())
    kwargs.setdefault("leave", False)
    return tqdm(iterable, **kwargs)
