"""Sizes of the experiments of chapter 35, "SDM as a kernel memory".

A :class:`KernelPreset` fixes how far the Krawtchouk identity is checked, the size of the
brute-force ``2^n x 2^n`` eigendecomposition, the points of the Gram matrices on the sphere, the
neuron draws of the random-feature Monte Carlo and the queries of the Hopfield experiments;
:data:`PRESETS` holds ``"quick"`` (the book and CI) and ``"full"``, :func:`get_preset` looks one
up. The statements the experiments test are those of seed 002, "Connections", about Bricken &
Pehlevan (2021). Used by chapter 35.
"""

from __future__ import annotations

from dataclasses import dataclass

from assocmem._checks import lookup

__all__ = [
    "KernelPreset",
    "PRESETS",
    "get_preset",
]


@dataclass(frozen=True)
class KernelPreset:
    """Sizes of the experiments of the chapter "SDM as a kernel memory"."""

    spectrum_max_n: int  # Krawtchouk identity checked for every (n, d) with n <= this
    brute_n: int  # brute-force 2^n x 2^n eigendecomposition at this n
    sphere_points: int  # points in the cap / exponential Gram matrices
    mc_draws: int  # independent neuron draws in the E[phi^T phi] Monte Carlo
    mc_r: int  # neurons per draw in that Monte Carlo
    hopfield_queries: int  # queries per perturbation level in the retrieval experiment
    agreement_queries: int  # queries in the one-step agreement scan


#: ``"quick"`` runs in the book and CI (seconds); ``"full"`` for papermill runs.
PRESETS: dict[str, KernelPreset] = {
    "quick": KernelPreset(spectrum_max_n=20, brute_n=10, sphere_points=120, mc_draws=400, mc_r=1000,
                          hopfield_queries=100, agreement_queries=400),
    "full": KernelPreset(spectrum_max_n=64, brute_n=10, sphere_points=400, mc_draws=4000, mc_r=1000,
                         hopfield_queries=1000, agreement_queries=4000),
}


def get_preset(name: str) -> KernelPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)
