"""The array check shared by :mod:`~assocmem.sdm.trained.effective_beta` and
:mod:`~assocmem.sdm.trained.value_norms`."""

from __future__ import annotations

import numpy as np
import torch


def real_array(x, name: str) -> np.ndarray:
    """``x`` (array-like or tensor) as a float64 NumPy array of real numbers.

    Raises
    ------
    ValueError
        If ``x`` is complex, boolean or not numeric (an object or string array).
    """
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.dtype == torch.bool:
            raise ValueError(f"{name} must be real numbers, got a {x.dtype} tensor")
        x = x.detach().cpu().double().numpy()
    raw = np.asarray(x)
    if raw.dtype == bool or np.iscomplexobj(raw) or not np.issubdtype(raw.dtype, np.number):
        raise ValueError(f"{name} must be real numbers, got dtype {raw.dtype}")
    return raw.astype(float)
