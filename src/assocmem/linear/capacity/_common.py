"""Argument checks shared by the modules of :mod:`assocmem.linear.capacity`.

Sizes that must be positive integers, a delta-rule step ``beta`` in ``(0, 1]``, and a batch of pair
sets whose keys ``(B, n, d_k)`` and values ``(B, n, d_v)`` match; the messages name the argument and
the shapes.
"""

from __future__ import annotations

import numpy as np
import torch


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_beta(beta) -> float:
    beta = float(beta)
    if not (0.0 < beta <= 1.0):
        raise ValueError(f"beta must be in (0, 1]; got {beta!r}")
    return beta


def _check_batch(keys: torch.Tensor, values: torch.Tensor) -> None:
    if keys.ndim != 3 or values.ndim != 3 or keys.shape[:2] != values.shape[:2]:
        raise ValueError(
            "keys and values must be (B, n, d_k) and (B, n, d_v) with matching B and n; got "
            f"keys {tuple(keys.shape)}, values {tuple(values.shape)}"
        )
