"""Private checks shared by the modules of :mod:`assocmem.sdm.convergence`.

The floating types a read may use (:func:`_check_dtype`: float32 or float64), independent seeds
derived from tuples of integers (:func:`_seed_int`, through numpy's ``SeedSequence``, so that
every pattern set, level, repeat, rule and radius of the App. B.7 experiment of Bricken &
Pehlevan (2021) has its own stream) and tensors from array-likes (:func:`_as_tensor`). Used by
the read rules, iterated retrieval, the perturbations and the experiment. Nothing here is public
API.
"""

from __future__ import annotations

import numpy as np
import torch


def _check_dtype(dtype) -> torch.dtype:
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
    return dtype


def _seed_int(*parts) -> int:
    """A 63-bit seed from integers, independent for different tuples (numpy SeedSequence)."""
    state = np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


def _as_tensor(x, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    try:
        return torch.as_tensor(np.asarray(x))
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}") from err
