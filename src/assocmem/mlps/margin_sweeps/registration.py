"""Registration of the margin sweeps with the sweep engine: names, presets, stored presets.

Importing this module registers the eight sweeps of :data:`MARGIN_SWEEPS` (``python -m assocmem
sweep NAME --preset P``): the isotropic sweeps ``margin_f_exact``, ``margin_f_sketch`` and
``margin_m_sketch`` and the spike sweeps ``margin_spike_keys``, ``margin_spike_values`` and
``margin_spike_both`` (seed 001, "MLPs are Hebbians", App. A.3.2), the noisy-query sweep
``margin_noisy`` (App. A.4.2) and the bit sweep ``margin_bits`` (App. B.2.6, our design), each
with a ``quick`` preset (a strided subset of the stored grid: the same points with the same
seeds) and the seed's grid (``paper``; ``cpu`` for ``margin_bits``, which has no paper grid).
:data:`STORED_PRESET` names the preset whose results are committed. Chapter 12 (How margins
scale) loads, plots and rechecks them.
"""

from __future__ import annotations

from assocmem.mlps.margin_sweeps.bit_complexity import BitsConfig, bits_point, bits_points
from assocmem.mlps.margin_sweeps.points import (
    IsotropicConfig,
    NoisyConfig,
    SpikeConfig,
    isotropic_point,
    isotropic_points,
    noisy_point,
    noisy_points,
    spike_point,
    spike_points,
)
from assocmem.sweeps.registry import register_sweep

__all__ = ["MARGIN_SWEEPS", "STORED_PRESET"]

#: The sweeps this module registers, in the order the chapter uses them.
MARGIN_SWEEPS = (
    "margin_f_exact",
    "margin_f_sketch",
    "margin_m_sketch",
    "margin_spike_keys",
    "margin_spike_values",
    "margin_spike_both",
    "margin_noisy",
    "margin_bits",
)

#: The preset whose stored results the chapter plots, per sweep (``margin_bits`` has no paper grid).
STORED_PRESET = {name: ("cpu" if name == "margin_bits" else "paper") for name in MARGIN_SWEEPS}


def _isotropic(kernel, vary, d, F, m, lo, hi, reps, stride):
    return IsotropicConfig(kernel=kernel, vary=vary, d=d, F=F, m=m, lo=lo, hi=hi, num=30, reps=reps, stride=stride)


register_sweep(
    "margin_f_exact",
    config_type=IsotropicConfig,
    presets={
        "quick": _isotropic("exact", "F", 32, None, None, 32, 2048, reps=2, stride=6),
        "paper": _isotropic("exact", "F", 32, None, None, 32, 2048, reps=5, stride=1),
    },
    points=isotropic_points,
    run_point=isotropic_point,
    description="gamma_min of the exact-K2 Hebbian memory vs F (d=32; seed 001, App. A.3.2)",
)
register_sweep(
    "margin_f_sketch",
    config_type=IsotropicConfig,
    presets={
        "quick": _isotropic("sketch", "F", 64, None, 512, 32, 512, reps=2, stride=6),
        "paper": _isotropic("sketch", "F", 64, None, 512, 32, 512, reps=5, stride=1),
    },
    points=isotropic_points,
    run_point=isotropic_point,
    description="gamma_min of the sketched-K2 Hebbian MLP vs F (d=64, m=512; seed 001, App. A.3.2)",
)
register_sweep(
    "margin_m_sketch",
    config_type=IsotropicConfig,
    presets={
        "quick": _isotropic("sketch", "m", 64, 256, None, 64, 1024, reps=2, stride=6),
        "paper": _isotropic("sketch", "m", 64, 256, None, 64, 1024, reps=5, stride=1),
    },
    points=isotropic_points,
    run_point=isotropic_point,
    description="gamma_min of the sketched-K2 Hebbian MLP vs m (d=64, F=256; seed 001, App. A.3.2)",
)

_BETA_MAX = {"keys": 5.0, "values": 10.0, "both": 3.35}  # App. A.3.2
_TARGET = {"keys": "the keys", "values": "the values", "both": "keys and values"}
for _on, _beta_max in _BETA_MAX.items():
    register_sweep(
        f"margin_spike_{_on}",
        config_type=SpikeConfig,
        presets={
            "quick": SpikeConfig(on=_on, d=64, F=128, m=512, beta_max=_beta_max, num=30, reps=2, stride=6),
            "paper": SpikeConfig(on=_on, d=64, F=128, m=512, beta_max=_beta_max, num=30, reps=5, stride=1),
        },
        points=spike_points,
        run_point=spike_point,
        description=f"gamma_min and App. B.5 statistics under a rank-1 spike on {_TARGET[_on]} "
        f"(beta in [0, {_beta_max:g}]; seed 001, App. A.3.2)",
    )

register_sweep(
    "margin_noisy",
    config_type=NoisyConfig,
    presets={
        "quick": NoisyConfig(d=64, F=256, m=512, eps_lo=0.01, eps_hi=2.0, num=15, reps=2, stride=4),
        "paper": NoisyConfig(d=64, F=256, m=512, eps_lo=0.01, eps_hi=2.0, num=15, reps=3, stride=1),
    },
    points=noisy_points,
    run_point=noisy_point,
    description="clean and noisy-query gamma_min vs eps (d=64, F=256, m=512; seed 001, App. A.4.2)",
)

register_sweep(
    "margin_bits",
    config_type=BitsConfig,
    presets={
        "quick": BitsConfig(ds=(32, 45), alpha=1 / 16, width_factor=32.0, reps=2, max_bits=24),
        "cpu": BitsConfig(ds=(32, 45, 64, 91, 128, 181), alpha=1 / 16, width_factor=32.0, reps=5, max_bits=24),
    },
    points=bits_points,
    run_point=bits_point,
    description="smallest bits per parameter keeping gamma_min > 0, F = d^2/16, m d = 32 F ln F "
    "(seed 001, App. B.2.6; our design)",
)
