"""Named runs of the learnt-projection experiment on scikit-learn's digits.

:data:`PROJECTION_PRESETS` holds ``"quick"`` (the training rule at ``d = 11``, four levels, 100
epochs: the book build and CI) and ``"cpu"`` (the radii, rules and seven test levels of
Bricken & Pehlevan 2021, App. B.7, and about the authors' number of Adam steps);
:func:`digits_images` prepares the digits as the presets use them (centred with the training
mean, divided by 16 so that a pixel's full scale is 1, as the authors' MNIST pixels) and
:func:`run_projection_preset` runs a preset. Chapter 36 runs it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from assocmem.devices import resolve_device, torch_threads
from assocmem.sdm.projections.experiment import ProjectionExperiment, projection_experiment
from assocmem.sdm.projections.protocol import (
    AUTHORS_RADII,
    AUTHORS_RULES,
    AUTHORS_TEST_LEVELS,
    BASELINES,
    PROTOCOLS,
    TRAIN_RULE,
)

__all__ = [
    "ProjectionPreset",
    "PROJECTION_PRESETS",
    "digits_images",
    "run_projection_preset",
]


@dataclass(frozen=True)
class ProjectionPreset:
    """A named :func:`projection_experiment` on the digits."""

    name: str
    label: str
    radii: tuple[int, ...]
    rules: tuple[str, ...]
    levels: tuple[float, ...]
    epochs: int
    protocols: tuple[str, ...] = PROTOCOLS
    baselines: tuple[str, ...] = BASELINES
    repeats: int = 1
    num_train_queries: int | None = None
    n_out: int = 64
    dtype: torch.dtype = torch.float32


#: ``"quick"``: ``d = 11``, the training rule only, four levels, 100 epochs (1,100 Adam steps;
#: the training loss levels off by about epoch 75), 450 training queries under
#: ``"stored_train"``: 5-10 s on one core (book, CI).
#: ``"cpu"``: the authors' radii, rules and seven levels, 430 epochs (4,730 steps, about the
#: authors' 4,690 on MNIST), all 1,347 training images as queries under ``"stored_train"``:
#: about 2 min on one core (55 s training, 62 s reads).
PROJECTION_PRESETS: dict[str, ProjectionPreset] = {
    "quick": ProjectionPreset(
        name="quick",
        label="quick: digits, n_out = 64, d = 11, Cont_SDM_BFit_Attention, levels 0-300 step 100",
        radii=(11,), rules=(TRAIN_RULE,), levels=(0, 100, 200, 300), epochs=100,
        num_train_queries=450),
    "cpu": ProjectionPreset(
        name="cpu",
        label="cpu: digits, n_out = 64, d in {5, 9, 11, 15}, four exact rules, levels 0-300 step 50",
        radii=AUTHORS_RADII, rules=AUTHORS_RULES, levels=AUTHORS_TEST_LEVELS, epochs=430),
}


def digits_images(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The digits as the presets use them: centred with the training mean, divided by 16.

    Returns
    -------
    train, test : numpy.ndarray, shapes ``(1347, 64)`` and ``(450, 64)``, float64
        Pixels of full scale 1 (as ``ToTensor`` gives the authors' MNIST), mean zero over the
        training set.

    Raises
    ------
    ImportError
        If scikit-learn is missing.
    """
    from assocmem.datasets import load_digits_patterns

    split = load_digits_patterns(seed=seed, preprocessing="center")
    return split.train / 16.0, split.test / 16.0


def run_projection_preset(name: str, seed: int = 0, device: str | torch.device | None = None,
                          num_threads: int | None = 1) -> ProjectionExperiment:
    """Run a preset of :data:`PROJECTION_PRESETS` on the digits.

    Parameters
    ----------
    name : {"quick", "cpu"}
    seed : int, default 0
        Seeds the data split, training and perturbations.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    num_threads : int or None, default 1
        torch CPU threads during the run (restored afterwards; ignored off the CPU).

    Returns
    -------
    ProjectionExperiment
        ``config["preset"]`` and ``config["label"]`` name the preset; ``seconds["total"]`` is
        the wall-clock time including loading the digits.

    Raises
    ------
    ValueError
        If ``name`` is not a preset (the message lists them) or ``num_threads < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7, Figs. 30-31.
    """
    if not isinstance(name, str) or name not in PROJECTION_PRESETS:
        raise ValueError(f"unknown projection preset {name!r}; expected one of {sorted(PROJECTION_PRESETS)}")
    p = PROJECTION_PRESETS[name]
    dev = resolve_device(device)
    t0 = time.perf_counter()
    with torch_threads(num_threads, dev):
        train, test = digits_images(seed=seed)
        out = projection_experiment(train, test, p.protocols, d=p.radii, rules=p.rules, levels=p.levels,
                                    baselines=p.baselines, n_out=p.n_out, epochs=p.epochs,
                                    repeats=p.repeats, num_train_queries=p.num_train_queries,
                                    seed=seed, device=dev, dtype=p.dtype)
    out.config.update(preset=p.name, label=p.label)
    out.seconds["total"] = time.perf_counter() - t0
    return out
