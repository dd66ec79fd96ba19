"""The ``eps d_k`` rule measured: the most pairs a memory holds at a given mean read error.

Seed §7 says that keeping the additive memory's read error below a fraction ``eps`` allows only
about ``eps d_k`` pairs; exactly, ``n_max = floor(eps d_k) + 1``
(:func:`assocmem.linear.theory.max_pairs_at_error`). :func:`max_pairs_at_error_mc` measures it by
scanning ``n = 1, 2, ...`` with an independent Monte Carlo estimate per ``n``
(:func:`~assocmem.linear.capacity.read_error.read_error_mc`) and a ``mean +- z sem`` interval, and
says whether the boundary it found is decisive or lies inside the noise. Chapter 03 ("How much can
a matrix remember?") checks the rule with it.

References
----------
Seed "How much can a matrix remember?", §7.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import pandas as pd
import torch

from assocmem._checks import as_real
from assocmem.linear.capacity._common import _check_int
from assocmem.linear.capacity.read_error import _check_memory, _point_seed, read_error_mc
from assocmem.dtypes import resolve_dtype
from assocmem.devices import resolve_device

__all__ = [
    "PairsAtError",
    "max_pairs_at_error_mc",
]


class PairsAtError(NamedTuple):
    """Result of :func:`max_pairs_at_error_mc`."""

    n_max: int  # largest n whose measured error is confidently <= eps (-1 if none)
    decisive: bool  # True when n_max is confidently <= eps and n_max + 1 confidently > eps
    scan: pd.DataFrame  # one row per scanned n: n, error, sem, lower, upper


def max_pairs_at_error_mc(
    eps: float,
    d_k: int,
    d_v: int | None = None,
    memory: str = "additive",
    trials: int = 4000,
    seed: int = 0,
    z: float = 4.0,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
) -> PairsAtError:
    """Measure the largest number of pairs a memory holds at mean read error ``<= eps``.

    The seed's rule says an additive memory holds "about ``eps d_k``" pairs at error ``eps``;
    exactly, ``(n - 1)/d_k <= eps`` gives ``n_max = floor(eps d_k) + 1``
    (:func:`assocmem.linear.theory.max_pairs_at_error`). A fair measurement must not decide a boundary
    by noise, so each ``n = 1, 2, ...`` gets an independent Monte Carlo estimate with an interval
    ``mean +- z * sem``; the scan stops at the first ``n`` whose interval lies entirely above
    ``eps``. The answer is the ``n`` before it, and it is *decisive* only if that ``n``'s interval
    lies entirely at or below ``eps``; otherwise the boundary is inside the noise and more trials
    are needed (the result says so instead of guessing).

    Parameters
    ----------
    eps : float
        Tolerated mean squared read error, ``> 0`` (relative to ``E||v||^2 = 1``).
    d_k : int
        Key dimension.
    d_v : int or None, default None
        Value dimension (``None``: ``d_k``).
    memory : str, default ``"additive"``
        Any of :data:`MEMORY_KINDS` (delta memories with one pass and ``beta = 1``).
    trials : int, default 4000
        Trials per scanned ``n``.
    seed : int, default 0
        Base seed; each ``n`` uses an independent seed derived from ``(seed, d_k, n)``.
    z : float, default 4.0
        Half-width of the intervals in standard errors.
    device, dtype
        As in :func:`read_error_mc`.

    Returns
    -------
    PairsAtError
        ``(n_max, decisive, scan)``.

    Raises
    ------
    ValueError
        If ``eps`` is not a finite number ``> 0`` or ``z`` not a finite number ``>= 0`` (a
        boolean or a string is refused, not read as a number), or another argument is invalid.
    RuntimeError
        If no ``n`` up to ``10 (eps d_k + 1) + 10`` is confidently above ``eps``.

    References
    ----------
    Seed §7 ("keeping the error below a fraction eps allows only about eps d_k pairs").
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    eps, z = as_real(eps, "eps", finite=False), as_real(z, "z", finite=False)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be a positive finite number; got {eps!r}")
    if not (z >= 0 and math.isfinite(z)):
        raise ValueError(f"z must be a finite number >= 0; got {z!r}")
    _check_memory(memory)
    d_k = _check_int("d_k", d_k)
    n_cap = int(10 * (eps * d_k + 1)) + 10
    rows = []
    for n in range(1, n_cap + 1):
        est = read_error_mc(memory, n, d_k, d_v, trials=trials, seed=_point_seed(seed, d_k, n),
                            device=device, dtype=dtype)
        sem = 0.0 if math.isnan(est.sem) else est.sem
        rows.append({"n": n, "error": est.mean, "sem": sem,
                     "lower": est.mean - z * sem, "upper": est.mean + z * sem})
        if rows[-1]["lower"] > eps:
            break
    else:
        raise RuntimeError(f"no n <= {n_cap} has a read error confidently above eps = {eps}")
    scan = pd.DataFrame(rows, columns=["n", "error", "sem", "lower", "upper"])
    n_max = n - 1
    decisive = n_max >= 1 and bool(scan.upper.iloc[n_max - 1] <= eps)
    return PairsAtError(n_max if n_max >= 1 else -1, decisive, scan)
