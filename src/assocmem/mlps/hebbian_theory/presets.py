"""Sizes of the experiments of the chapter "MLPs are kernel Hebbians".

:class:`HebbianTheoryPreset` fixes the sizes of chapter 11's four checks (Theorem 3.1, Lemmas B.2,
B.3 and B.34 of seed 001); :data:`PRESETS` holds ``"quick"`` (the book and CI) and ``"full"`` (larger
sizes, five times the Monte Carlo draws), and :func:`get_preset` looks one up by name. Used by
chapter 11.

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): Sec. 3.1 (Theorem 3.1),
App. B.2.2 (Lemma B.2), B.2.4 (Lemma B.3), B.8.6 (Lemma B.34).
"""

from __future__ import annotations

from dataclasses import dataclass

from assocmem._checks import lookup

__all__ = [
    "HebbianTheoryPreset",
    "PRESETS",
    "get_preset",
]


@dataclass(frozen=True)
class HebbianTheoryPreset:
    """Sizes of the experiments of the chapter "MLPs are kernel Hebbians"."""

    d: int  # key dimension of the Theorem 3.1 check
    m: int  # hidden width of the Theorem 3.1 check (m <= F and m <= d(d+1)/2 keep Sigma invertible)
    F: int  # number of stored inputs of the Theorem 3.1 check
    queries: int  # fresh queries on which MLP and Hebbian rewrite are compared
    sketch_d: int  # dimension of the (x, z) pairs of the Lemma B.2 experiment
    sketch_ms: tuple[int, ...]  # feature widths m of the Lemma B.2 experiment
    sketch_draws: int  # independent (A, G) draws per width
    precond_d: int  # key dimension of the Lemma B.3 experiment
    precond_F: int  # stored keys of the Lemma B.3 experiment
    precond_m: int  # feature width of the Lemma B.3 experiment
    precond_n: int  # random preconditioners per family
    welch_F: int  # stored items of the Lemma B.34 kernels
    welch_ms: tuple[int, ...]  # ranks m of the Lemma B.34 kernels
    welch_n: int  # random kernels per (family, m)


#: ``"quick"`` runs in the book and CI (seconds on two cores); ``"full"`` has larger sizes and five times
#: the Monte Carlo draws (minutes on a CPU).
PRESETS: dict[str, HebbianTheoryPreset] = {
    "quick": HebbianTheoryPreset(
        d=32, m=64, F=256, queries=256,
        sketch_d=16, sketch_ms=(4, 8, 16, 32, 64, 128, 256, 512, 1024), sketch_draws=400,
        precond_d=16, precond_F=256, precond_m=64, precond_n=250,
        welch_F=128, welch_ms=(8, 16, 32, 64), welch_n=12,
    ),
    "full": HebbianTheoryPreset(
        d=64, m=256, F=1024, queries=1024,
        sketch_d=64, sketch_ms=(4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
        sketch_draws=2000,
        precond_d=32, precond_F=1024, precond_m=256, precond_n=1000,
        welch_F=512, welch_ms=(8, 16, 32, 64, 128, 256), welch_n=30,
    ),
}


def get_preset(name: str) -> HebbianTheoryPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)
