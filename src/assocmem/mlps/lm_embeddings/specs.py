"""Checks of the settings shared by the sweeps on captured language-model pairs (chapter 17).

They live outside the sweep modules (:mod:`assocmem.mlps.lm_embedding_sweeps`,
:mod:`assocmem.mlps.lm_dedup_sweeps`, :mod:`assocmem.mlps.lm_block_sweeps`) so that each of those
can build its presets at import time whichever of them the sweep registry imports first.
"""

from __future__ import annotations

from assocmem._checks import as_int, positive_int

__all__ = ["EDITING_PREFIX", "check_pairs_spec", "check_trainings", "check_grid"]

#: The prefix of a pairs source trained from a ``fact_editing`` preset.
EDITING_PREFIX = "editing_lm:"


def check_pairs_spec(spec: object) -> str:
    """``spec`` checked: ``"editing_lm:<preset>:<expert>"`` or a path (a non-empty string).

    Raises
    ------
    ValueError
        Not a non-empty string, or a malformed ``editing_lm:`` spec.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"pairs must be 'editing_lm:<preset>:<expert>' or a .npz path; got {spec!r}")
    if spec.startswith(EDITING_PREFIX):
        parts = spec.split(":")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise ValueError(f"pairs must be 'editing_lm:<preset>:<expert>'; got {spec!r}")
    return spec


def check_trainings(spec: str, trainings: object) -> None:
    """``trainings`` checked against the source: 1 for a file, at most the preset's trainings.

    Raises
    ------
    ValueError
        Not a positive integer, above 1 for a file, or above the ``fact_editing`` preset's.
    """
    n = positive_int("trainings", trainings)
    if n > 1 and not spec.startswith(EDITING_PREFIX):
        raise ValueError(f"trainings must be 1 for pairs read from a file (one model's pairs); got {n}")
    if spec.startswith(EDITING_PREFIX):
        from assocmem._checks import lookup
        from assocmem.mlps.editing_sweeps import FACT_EDITING_PRESETS

        preset = spec.split(":")[1]
        available = lookup(FACT_EDITING_PRESETS, preset).trainings
        if n > available:
            raise ValueError(f"trainings must be at most the {available} of fact_editing's {preset!r} preset; got {n}")


def check_grid(name: str, values: object) -> None:
    """``values`` checked: a non-empty increasing tuple of integers ``>= 2`` without repeats.

    Raises
    ------
    ValueError
        Otherwise.
    """
    if not isinstance(values, tuple) or not values:
        raise ValueError(f"{name} must be a non-empty tuple; got {values!r}")
    for v in values:
        as_int(v, name, minimum=2)
    if list(values) != sorted(set(values)):
        raise ValueError(f"{name} must be increasing without repeats; got {values}")
