"""The run sizes of the chapter "How close is attention to SDM?" (chapter 34).

Chapter 34 compares SDM's read weights with a fitted softmax's and simulates how much weight far
patterns get; its Monte Carlo sizes are a named preset: ``"quick"`` runs in the book and CI (a
few seconds), ``"full"`` uses ten times the trials and a finer sweep over ``beta``
(:class:`WeightsPreset`, :data:`PRESETS`, :func:`get_preset`). The sizes follow the review of
Bricken & Pehlevan (2021) (seed 002, "Weight on far patterns": ``m = 1024`` random patterns at
``n = 64``). Chapter 34.
"""

from __future__ import annotations

from dataclasses import dataclass

from assocmem._checks import lookup

__all__ = [
    "WeightsPreset",
    "PRESETS",
    "get_preset",
]


@dataclass(frozen=True)
class WeightsPreset:
    """Sizes of the chapter "How close is attention to SDM?"."""

    trials: int  # Monte Carlo trials for the headline far weights (query = target, m patterns)
    sweep_trials: int  # trials per point of the far-weight sweeps over beta (common random numbers)
    sweep_betas: tuple[float, ...]  # inverse temperatures of the simulated points in the sweep
    radii: tuple[int, ...]  # radii d at n = 64 whose SDM far weight is plotted against its beta


#: ``"quick"`` runs in the book and CI (a few seconds); ``"full"`` uses ten times the trials and a
#: finer sweep (papermill ``-p PRESET full``; a minute on a laptop).
PRESETS: dict[str, WeightsPreset] = {
    "quick": WeightsPreset(trials=400, sweep_trials=200,
                           sweep_betas=(4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 20.0, 24.0, 28.0),
                           radii=tuple(range(4, 21))),
    "full": WeightsPreset(trials=4000, sweep_trials=2000,
                          sweep_betas=tuple(float(b) for b in range(3, 31)),
                          radii=tuple(range(3, 24))),
}


def get_preset(name: str) -> WeightsPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)
