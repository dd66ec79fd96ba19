"""Sizes of the experiments of the chapter "Facts, margins and the counting bound", and their grids.

:class:`CountingPreset` fixes the sizes of chapter 10's experiments (the ``F``-sweep of the Hebbian
memories, the worked example of Theorem 2.4, the capacity scan over ``d``, the Monte Carlo check of
the cross-talk moment); :data:`PRESETS` holds ``"quick"`` (the book) and ``"full"``, and
:func:`geometric_grid` spaces the swept numbers of facts geometrically. The seed's exact-``K_2``
``F``-sweep uses ``d = 32`` (seed 001, App. A.3.2). Used by chapter 10.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): App. A.3.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assocmem._checks import lookup
from assocmem.mlps.counting.bound import _count

__all__ = [
    "geometric_grid",
    "CountingPreset",
    "PRESETS",
    "get_preset",
]


def geometric_grid(lo: int, hi: int, per_octave: int = 2) -> list[int]:
    """Integers from ``lo`` to ``hi`` spaced ``2^(1/per_octave)`` apart (rounded, deduplicated).

    Raises
    ------
    ValueError
        ``lo < 1``, ``hi < lo`` or ``per_octave < 1``.
    """
    lo, hi = _count("lo", lo, 1), _count("hi", hi, 1)
    per_octave = _count("per_octave", per_octave, 1)
    if hi < lo:
        raise ValueError(f"hi must be >= lo; got {lo}, {hi}")
    n = math.floor(per_octave * math.log2(hi / lo) + 1e-9)
    grid = [round(lo * 2 ** (k / per_octave)) for k in range(n + 1)] + [hi]
    return sorted(set(grid))


@dataclass(frozen=True)
class CountingPreset:
    """Sizes of the experiments in the chapter "Facts, margins and the counting bound"."""

    sweep_d: int  # embedding width of the F-sweep (the seed's exact-K2 F-sweep uses d = 32)
    sweep_f: tuple[int, ...]  # numbers of facts of the F-sweep
    sweep_seeds: tuple[int, ...]  # seeds per point of the F-sweep
    example_f: int  # number of facts of the one-fact margin illustration (at sweep_d)
    worked_d: int  # width of the worked example of Theorem 2.4
    worked_f: int  # facts (= value rows) of the worked example
    not_rerun: tuple[str, ...]  # constructions whose stored width is quoted, not rebuilt (too slow)
    capacity_dims: tuple[tuple[str, tuple[int, ...]], ...]  # (kernel, widths d) of the scan
    capacity_seeds: tuple[int, ...]  # seeds per (kernel, d) of the capacity scan
    moment_f: int  # facts of the Monte Carlo check of the cross-talk second moment
    moment_d: int  # its embedding width
    moment_seeds: int  # its number of independent untied fact sets


PRESETS: dict[str, CountingPreset] = {
    "quick": CountingPreset(
        sweep_d=32, sweep_f=tuple(geometric_grid(4, 2048, 2)), sweep_seeds=(0,),
        example_f=64, worked_d=64, worked_f=256, not_rerun=("GD",),
        capacity_dims=(("linear", (8, 16, 24, 32, 48, 64, 96)), ("k2", (8, 16, 24, 32, 40, 48))),
        capacity_seeds=(0, 1, 2, 3, 4), moment_f=64, moment_d=32, moment_seeds=50,
    ),
    "full": CountingPreset(
        sweep_d=32, sweep_f=tuple(geometric_grid(4, 4096, 4)), sweep_seeds=(0, 1, 2, 3, 4),
        example_f=64, worked_d=64, worked_f=256, not_rerun=(),
        capacity_dims=(("linear", (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)),
                       ("k2", (8, 16, 24, 32, 40, 48, 64, 80, 96))),
        capacity_seeds=tuple(range(10)), moment_f=64, moment_d=32, moment_seeds=400,
    ),
}


def get_preset(name: str) -> CountingPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not in :data:`PRESETS` (the message lists the valid names).
    """
    return lookup(PRESETS, name)
