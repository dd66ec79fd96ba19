"""The sizes of chapter 03's experiments ("How much can a matrix remember?"), as named presets.

:class:`CapacityPreset` lists every size the chapter uses (trials, key dimensions, the ``n / d_k``
grid, the ``eps d_k`` scan, the delta-rule and convergence experiments); :data:`PRESETS` holds
``"quick"`` (the book and CI) and ``"full"`` (papermill on a GPU), and :func:`get_preset` looks one
up by name. The experiments follow seed §7.
"""

from __future__ import annotations

from dataclasses import dataclass

from assocmem._checks import lookup

__all__ = [
    "CapacityPreset",
    "PRESETS",
    "get_preset",
]


@dataclass(frozen=True)
class CapacityPreset:
    """Sizes of the experiments in the chapter "How much can a matrix remember?"."""

    trials: int  # Monte Carlo trials per point of the capacity curves
    d_ks: tuple[int, ...]  # key dimensions of the capacity figure
    ratios: tuple[float, ...]  # n / d_k grid of the capacity curves (n = 1 and d_k + 1 are added)
    d_v_check_dk: int  # key dimension of the value-dimension check
    d_vs: tuple[int, int]  # the two value dimensions compared
    eps: float  # error level of the eps * d_k rule
    eps_trials: int  # trials per n in the eps * d_k scan (must make the boundary decisive)
    delta_dk: int  # key dimension of the delta-rule capacity curves
    delta_passes: int  # "repeated passes" on the capacity plot
    delta_beta_small: float  # the small constant step
    conv_dk: int  # key dimension of the convergence experiment (n = 2 d_k and n = d_k / 2)
    conv_passes: int  # sweeps recorded in the convergence experiment
    conv_trials: int  # trials of the convergence experiment
    limit_betas: tuple[float, ...]  # steps of the limit-versus-beta curve


#: Named presets: ``"quick"`` runs in the book and CI (seconds on two CPU cores); ``"full"`` is
#: for papermill on a GPU (``-p PRESET full -p DEVICE auto``).
PRESETS: dict[str, CapacityPreset] = {
    "quick": CapacityPreset(
        trials=200, d_ks=(16, 32, 64), ratios=(0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4),
        d_v_check_dk=32, d_vs=(4, 128), eps=0.1, eps_trials=4000,
        delta_dk=32, delta_passes=50, delta_beta_small=0.1,
        conv_dk=16, conv_passes=200, conv_trials=200,
        limit_betas=(1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01),
    ),
    "full": CapacityPreset(
        trials=2000, d_ks=(16, 32, 64, 128, 256),
        ratios=tuple(i / 8 for i in range(1, 33)),
        d_v_check_dk=64, d_vs=(4, 256), eps=0.1, eps_trials=10000,
        delta_dk=64, delta_passes=50, delta_beta_small=0.1,
        conv_dk=32, conv_passes=500, conv_trials=1000,
        limit_betas=(1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001),
    ),
}


def get_preset(name: str) -> CapacityPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not in :data:`PRESETS` (the message lists the valid names).
    """
    return lookup(PRESETS, name)
