"""Private checks shared by the modules of :mod:`assocmem.sdm.convergence`.

The floating types a read may use (:func:`_check_dtype`: float32 or float64, the policy of
:mod:`assocmem.dtypes`), independent seeds
derived from tuples of integers (:func:`_seed_int`, through numpy's ``SeedSequence``, so that
every pattern set, level, repeat, rule and radius of the App. B.7 experiment of Bricken &
Pehlevan (2021) has its own stream) and tensors from array-likes (:func:`_as_tensor`, which
refuses float16/bfloat16). Used by
the read rules, iterated retrieval, the perturbations and the experiment. Nothing here is public
API.
"""

from __future__ import annotations

import numpy as np
import torch

from assocmem.dtypes import check_float_dtype
from assocmem.sdm._common import _refuse_low_precision


def _check_dtype(dtype) -> torch.dtype:
    return check_float_dtype(dtype, "dtype")  # float16/bfloat16 refused with the policy's reason


def _seed_int(*parts) -> int:
    """A 63-bit seed from integers, independent for different tuples (numpy SeedSequence)."""
    state = np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


def _as_tensor(x, name: str) -> torch.Tensor:
    """A tensor from ``x``; strings and float16/bfloat16 are refused (:mod:`assocmem.dtypes`)."""
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}")
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(np.asarray(x))
        except (TypeError, ValueError, RuntimeError) as err:
            raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}") from err
    return _refuse_low_precision(x, name)
