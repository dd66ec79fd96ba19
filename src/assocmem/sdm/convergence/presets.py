"""Named runs of the convergence experiment: ``"quick"``, ``"cpu"`` and ``"paper"``.

A :class:`ConvergencePreset` is a list of :class:`ConvergenceSetting` (the arguments of one
:func:`assocmem.sdm.convergence.experiment.convergence_experiment` call: dimension, radii,
levels, convergences per level, rules, neurons, pattern source); :func:`run_preset` runs them
and concatenates the frames. ``"cpu"`` has the sizes of Bricken & Pehlevan (2021), App. B.7
(15,360 convergences per level at ``n = 64`` and ``n = 1000``, all six radii and eight rules)
plus the five continuous rules (:data:`CONTINUOUS_ALGORITHMS`) on scikit-learn's digits
(:data:`DATA_SOURCES`, :func:`setting_data`); ``"paper"`` adds the authors' ``r = 10^5`` neuron
comparison; ``"quick"`` is a small run for the book build and CI. Chapter 36 runs them through
:mod:`assocmem.sdm.convergence_sweeps`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from assocmem._checks import lookup
from assocmem.sdm.convergence.algorithms import (
    ALGORITHMS,
    ALL_ALGORITHMS,
    _algorithm_names,
    algorithm_spec,
    paper_radii,
)
from assocmem.sdm.convergence.experiment import convergence_experiment
from assocmem.sdm.convergence.perturbations import perturbation_levels

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ConvergenceSetting",
    "ConvergencePreset",
    "DATA_SOURCES",
    "CONTINUOUS_ALGORITHMS",
    "setting_data",
    "PRESETS",
    "get_preset",
    "run_preset",
]


@dataclass(frozen=True)
class ConvergenceSetting:
    """One run of a preset: the arguments of :func:`convergence_experiment`.

    ``algorithms`` and ``r`` default to the preset's rules and :data:`PAPER_NEURONS`; ``name``
    labels the rows (the ``setting`` column), default ``"n=<n>"``. ``data`` is ``None`` (random
    patterns) or ``"digits"``: scikit-learn's handwritten digits, centred training images of
    :func:`assocmem.datasets.load_digits_patterns` (1,347 rows, ``n = 64``), stored and queried
    from the same rows (:func:`setting_data`).
    """

    n: int
    m: int
    radii: tuple[int, ...]
    levels: tuple[int, ...]
    num_queries: int
    num_datasets: int
    num_repeats: int
    algorithms: tuple[str, ...] | None = None
    r: int | None = None
    name: str | None = None
    data: str | None = None

    def __post_init__(self):
        if self.data not in DATA_SOURCES:
            raise ValueError(f"data must be one of {DATA_SOURCES}; got {self.data!r}")

    @property
    def convergences_per_level(self) -> int:
        """Convergences per rule, radius and level (the paper: 15,360)."""
        return self.num_queries * self.num_datasets * self.num_repeats

    @property
    def label(self) -> str:
        return self.name or f"n={self.n}"


#: Pattern sources of a :class:`ConvergenceSetting`: random patterns or the digits.
DATA_SOURCES = (None, "digits")


def setting_data(setting: ConvergenceSetting) -> np.ndarray | None:
    """The patterns a setting stores: ``None`` (random patterns) or the digits' training rows.

    Returns
    -------
    numpy.ndarray or None
        For ``data="digits"``: the centred training images of
        :func:`assocmem.datasets.load_digits_patterns` (defaults: 25 % stratified test split,
        seed 0), shape ``(1347, 64)``, float64. The same array every call.

    Raises
    ------
    ImportError
        If scikit-learn is missing (digits only).
    """
    if setting.data is None:
        return None
    from assocmem.datasets import load_digits_patterns

    return load_digits_patterns().train


@dataclass(frozen=True)
class ConvergencePreset:
    """A named list of :class:`ConvergenceSetting` with a label for figures."""

    name: str
    settings: tuple[ConvergenceSetting, ...]
    label: str
    algorithms: tuple[str, ...] = ALGORITHMS
    dtype: torch.dtype = torch.float32


_LEVELS_64 = tuple(perturbation_levels(12))
_LEVELS_1000 = tuple(perturbation_levels(375))
_PAPER_64 = ConvergenceSetting(64, 1024, tuple(paper_radii(64)), _LEVELS_64, 1024, 3, 5)
_PAPER_1000 = ConvergenceSetting(1000, 1024, tuple(paper_radii(1000)), _LEVELS_1000, 1024, 3, 5)
#: The five rules with continuous queries (App. B.7 runs these on images).
CONTINUOUS_ALGORITHMS: tuple[str, ...] = tuple(a for a in ALGORITHMS if algorithm_spec(a).space == "continuous")
_DIGITS = ConvergenceSetting(64, 1024, tuple(paper_radii(64)), _LEVELS_64, 1024, 3, 5,
                             algorithms=CONTINUOUS_ALGORITHMS, name="digits", data="digits")
#: ``"quick"``: ``n = 64``, 256 convergences per level, radii 5, 11, 15, 19, on random patterns
#: and on the digits (5 s on one core; for the book build and CI). ``"cpu"``: the paper's sizes,
#: 15,360 convergences per level (3 pattern sets x 5 perturbation draws x 1024 targets) at
#: ``n = 64`` and ``n = 1000``, all six radii and eight rules, plus the five continuous rules on
#: the digits (setting ``"digits"``): 11.9 million convergences, 14.8 min on one thread of a
#: two-core machine with the other core busy. ``"paper"``: ``"cpu"`` plus the authors' neuron
#: comparison at ``n = 64`` with ``r = 10^5`` neurons (``Binary_SDM_NeuronLimit`` against
#: ``Binary_Neuron_SDM``, setting ``"n=64,r=1e5"``), i.e. everything App. B.7 ran on random
#: patterns (the explicit neurons add tens of minutes on a CPU).
PRESETS: dict[str, ConvergencePreset] = {
    "quick": ConvergencePreset(
        name="quick",
        settings=(ConvergenceSetting(64, 1024, (5, 11, 15, 19), _LEVELS_64, 256, 1, 1),
                  ConvergenceSetting(64, 1024, (5, 11, 15, 19), _LEVELS_64, 256, 1, 1,
                                     algorithms=CONTINUOUS_ALGORITHMS, name="digits", data="digits")),
        label=("quick: n = 64, m = 1024, 256 convergences per level, d in {5, 11, 15, 19}, "
               "random patterns and the digits"),
    ),
    "cpu": ConvergencePreset(
        name="cpu",
        settings=(_PAPER_64, _PAPER_1000, _DIGITS),
        label=("cpu: the paper's 15,360 convergences per level (3 pattern sets x 5 draws x 1024) "
               "at n = 64 and n = 1000, all six radii, and the continuous rules on the digits"),
    ),
    "paper": ConvergencePreset(
        name="paper",
        settings=(_PAPER_64, _PAPER_1000, _DIGITS,
                  ConvergenceSetting(64, 1024, tuple(paper_radii(64)), _LEVELS_64, 1024, 3, 5,
                                     algorithms=("Binary_SDM_NeuronLimit", "Binary_Neuron_SDM"),
                                     r=10**5, name="n=64,r=1e5")),
        label=("paper: the cpu preset plus the r = 10^5 neuron comparison at n = 64 "
               "(Binary_SDM_NeuronLimit vs Binary_Neuron_SDM), 15,360 convergences per level"),
    ),
}


def get_preset(name: str) -> ConvergencePreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)


def run_preset(name: str, seed: int = 0, device: str | torch.device | None = None,
               algorithms: str | Iterable[str] | None = None, dtype: torch.dtype | None = None,
               num_threads: int | None = 1, show_progress: bool = True) -> pd.DataFrame:
    """Run a preset: :func:`convergence_experiment` for each of its settings, concatenated.

    Parameters
    ----------
    name : {"quick", "cpu", "paper"}
    seed : int, default 0
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    algorithms : str or iterable of str, optional
        Restrict every setting to these rules, or to one rule given by name (default: each
        setting's, else the preset's).
    dtype : torch.dtype, optional
        Default: the preset's (float32, as the authors' ``torch.Tensor``).
    num_threads : int or None, default 1
        torch CPU threads during the run (restored afterwards; ignored off the CPU). One
        thread is the safe choice: each read is small, and on a shared two-core machine a second
        OpenMP thread made the runs eight times *slower* when the other core was busy. ``None``
        leaves torch's setting alone.
    show_progress : bool, default True

    Returns
    -------
    pandas.DataFrame
        As :func:`convergence_experiment`, with a ``setting`` column naming each setting;
        ``attrs["preset"]`` and ``attrs["label"]`` name the preset.

    Raises
    ------
    ValueError
        If the preset is unknown, or as :func:`convergence_experiment`.
    """
    preset = get_preset(name)
    frames = []
    wanted = None if algorithms is None else _algorithm_names(algorithms)
    for st in preset.settings:
        algos = list(st.algorithms or preset.algorithms)
        if wanted is not None:
            algos = [a for a in algos if a in wanted]
            if not algos:
                continue
        frames.append(convergence_experiment(
            n=st.n, m=st.m, radii=st.radii, algorithms=algos, levels=st.levels,
            num_queries=st.num_queries, seed=seed, device=device, num_datasets=st.num_datasets,
            num_repeats=st.num_repeats, r=st.r, dtype=dtype or preset.dtype, setting=st.label,
            data=setting_data(st),
            num_threads=num_threads, show_progress=show_progress))
    if not frames:
        raise ValueError(f"none of {algorithms!r} is run by the preset {name!r}")
    order = [a for a in ALL_ALGORITHMS if any(a in f["algorithm"].cat.categories for f in frames)]
    settings = [st.label for st in preset.settings]
    for f in frames:
        f["algorithm"] = pd.Categorical(f["algorithm"].astype(str), categories=order)
        f["setting"] = pd.Categorical(f["setting"].astype(str), categories=settings)
    out = pd.concat(frames, ignore_index=True)
    out.attrs["preset"] = preset.name
    out.attrs["label"] = preset.label
    out.attrs["config"] = [f.attrs.get("config") for f in frames]
    return out
