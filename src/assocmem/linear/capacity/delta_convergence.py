"""Repeated delta-rule passes over the same pairs, and how far the delta rule's limit is from ``S*``.

For ``n > d_k`` the system ``S K = V`` is inconsistent and the delta rule with a constant step
``beta`` does not reach the least-squares memory ``S* = V K^+``: its end-of-sweep limit lies at
distance ``O(beta)`` from ``S*`` and reads worse by ``O(beta^2)`` (Censor, Eggermont & Gordon 1983,
strong underrelaxation of cyclic Kaczmarz), while a decreasing step ``beta = 1/P`` heads for
``S*``. :func:`delta_convergence` records the read error and the distance to ``S*`` after every
sweep for several step schedules; :func:`delta_limit_curve` gives the distance and the excess
error of the limit as a function of ``beta``. Both belong to chapter 03 ("How much can a matrix
remember?"), whose seed (§6-§7) has only the additive and least-squares memories; the delta rule
is that of Widrow & Hoff (1960) and Schlag et al. (2021).

References
----------
Seed "How much can a matrix remember?", §6-§7.
Widrow, B., & Hoff, M. E. (1960). Adaptive switching circuits. IRE WESCON Convention Record.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Kaczmarz, S. (1937). Angenaherte Auflosung von Systemen linearer Gleichungen. Bull. Int. Acad.
Polon. Sci. Lett. A, 35, 355-357.
Censor, Y., Eggermont, P. P. B., & Gordon, D. (1983). Strong underrelaxation in Kaczmarz's method
for inconsistent systems. Numerische Mathematik, 41, 83-92.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import pandas as pd
import torch

from assocmem.linear.capacity._common import _check_beta, _check_int
from assocmem.linear.capacity.delta_rule import _delta_sweep_, delta_limit, delta_pass_map, least_squares_state
from assocmem.linear.capacity.read_error import ReadError, _summarise, sample_pairs
from assocmem.dtypes import resolve_dtype
from assocmem.devices import resolve_device

__all__ = [
    "DeltaConvergence",
    "delta_convergence",
    "delta_limit_curve",
]


def _schedule(beta) -> tuple[str, float | None]:
    """``(label, constant beta or None)`` for a step schedule: a number in (0, 1] or ``"1/p"``."""
    if isinstance(beta, str):
        if beta != "1/p":
            raise ValueError(f"unknown beta schedule {beta!r}; use a number in (0, 1] or '1/p'")
        return beta, None
    b = _check_beta(beta)
    return f"{b:g}", b


def _as_list(betas) -> list:
    """``betas`` as a list; a single step (a number or ``"1/p"``) is a list of one, not its
    characters or a non-iterable error."""
    if isinstance(betas, (str, bytes, numbers.Real)) or getattr(betas, "ndim", None) == 0:
        return [betas]
    return list(betas)


class DeltaConvergence(NamedTuple):
    """Result of :func:`delta_convergence`."""

    curve: pd.DataFrame  # schedule, passes, error, sem, distance, distance_sem (one row per pass)
    limit: pd.DataFrame  # schedule, error, sem, distance, distance_sem (constant beta only)
    least_squares: ReadError  # the least-squares memory on the same pairs


def _error_and_distance(S: torch.Tensor, keys, values, S_star, norm_star) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-trial read error and relative distance ``||S - S*||_F / ||S*||_F``, both ``(B,)``."""
    reads = keys @ S.transpose(-2, -1)  # (B, n, d_v)
    error = ((reads - values) ** 2).sum(dim=-1).mean(dim=-1)  # (B,)
    distance = torch.linalg.matrix_norm(S - S_star) / norm_star  # (B,)
    return error, distance


def delta_convergence(
    n: int,
    d_k: int,
    d_v: int | None = None,
    betas: Sequence[float | str] = (1.0, 0.1, "1/p"),
    passes: int = 100,
    trials: int = 200,
    seed: int = 0,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
) -> DeltaConvergence:
    """Repeated delta-rule passes over the same ``n`` pairs: how close do they get to ``S*``?

    For each step schedule the delta rule sweeps the pairs in the same order ``passes`` times,
    starting from ``S = 0``. After every sweep we record the mean read error over the stored
    pairs and the relative distance ``||S_P - S*||_F / ||S*||_F`` to the least-squares memory. All
    schedules see the same pairs (common random numbers).

    Schedules: a constant ``beta`` in ``(0, 1]``, or ``"1/p"`` (``beta = 1/P`` during sweep ``P``),
    a decreasing step whose sum diverges, the classical condition for incremental gradient descent
    to converge to the least-squares solution. For a constant ``beta`` the end-of-sweep limit
    :func:`delta_limit` is reported as well.

    Parameters
    ----------
    n, d_k : int
        Pairs and key dimension (``n > d_k`` is the inconsistent, interesting case).
    d_v : int or None, default None
        Value dimension (``None``: ``d_k``).
    betas : sequence of float or "1/p", default ``(1.0, 0.1, "1/p")``
        Step schedules.
    passes : int, default 100
        Sweeps to record (``P = 1 ... passes``).
    trials : int, default 200
        Independent pair sets.
    seed : int, default 0
        Seed of :func:`sample_pairs`.
    device, dtype
        As in :func:`read_error_mc`.

    Returns
    -------
    DeltaConvergence
        ``curve``: one row per ``(schedule, P)`` with columns ``schedule`` (str), ``passes``
        (int), ``error``, ``sem``, ``distance``, ``distance_sem`` (floats; means over trials and
        standard errors); ``limit``: one row per constant schedule, the same columns without
        ``passes``; ``least_squares``: the read error of ``S*``.

    Raises
    ------
    ValueError
        Bad sizes, an unknown schedule, or a ``beta`` that is not a real number in ``(0, 1]``
        (a boolean or a string other than ``"1/p"`` is refused).

    References
    ----------
    Widrow & Hoff (1960); Kaczmarz (1937); Censor, Eggermont & Gordon (1983); Schlag et al.
    (2021). The seed (§6-§7) has only the additive and least-squares memories.
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    schedules = [_schedule(b) for b in _as_list(betas)]
    passes = _check_int("passes", passes)
    d_v = d_k if d_v is None else d_v
    keys, values = sample_pairs(n, d_k, d_v, trials, seed, device=device, dtype=dtype)  # (B, n, ·)
    S_star = least_squares_state(keys, values)  # (B, d_v, d_k)
    norm_star = torch.linalg.matrix_norm(S_star)  # (B,)
    ls_error, _ = _error_and_distance(S_star, keys, values, S_star, norm_star)
    curve, limit = [], []
    for label, beta in schedules:
        if beta is not None:
            M, C = delta_pass_map(keys, values, beta)  # (B, d_k, d_k), (B, d_v, d_k)
            S = keys.new_zeros(C.shape)
        else:
            S = keys.new_zeros(trials, d_v, d_k)
        for p in range(1, passes + 1):
            if beta is not None:
                S = torch.baddbmm(C, S, M)  # one sweep: S M + C
            else:
                _delta_sweep_(S, keys, values, 1.0 / p)
            err, dist = _error_and_distance(S, keys, values, S_star, norm_star)
            e, d = _summarise(err), _summarise(dist)
            curve.append({"schedule": label, "passes": p, "error": e.mean, "sem": e.sem,
                          "distance": d.mean, "distance_sem": d.sem})
        if beta is not None:
            S_inf = delta_limit(keys, values, beta)
            err, dist = _error_and_distance(S_inf, keys, values, S_star, norm_star)
            e, d = _summarise(err), _summarise(dist)
            limit.append({"schedule": label, "error": e.mean, "sem": e.sem,
                          "distance": d.mean, "distance_sem": d.sem})
    cols = ["schedule", "passes", "error", "sem", "distance", "distance_sem"]
    return DeltaConvergence(
        pd.DataFrame(curve, columns=cols),
        pd.DataFrame(limit, columns=[c for c in cols if c != "passes"]),
        _summarise(ls_error),
    )


def delta_limit_curve(
    betas: Iterable[float],
    n: int,
    d_k: int,
    d_v: int | None = None,
    trials: int = 200,
    seed: int = 0,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
) -> pd.DataFrame:
    """How far the delta rule's limit is from ``S*``, as a function of ``beta``.

    For each ``beta`` computes :func:`delta_limit` on the same pairs and compares it with the
    least-squares memory: the relative distance ``||S_inf - S*||_F / ||S*||_F`` and the excess read
    error ``e(S_inf) - e(S*)`` (paired per trial, so its standard error is small). Because
    ``S*`` minimises the squared error, ``e(S) - e(S*) = ||(S - S*) K||_F^2 / n >= 0``: a distance
    of order ``beta`` gives an excess of order ``beta^2``.

    Parameters
    ----------
    betas : iterable of float
        Steps in ``(0, 1]``.
    n, d_k : int
        Pairs and key dimension.
    d_v : int or None, default None
        Value dimension (``None``: ``d_k``).
    trials, seed, device, dtype
        As in :func:`delta_convergence`.

    Returns
    -------
    pandas.DataFrame
        One row per ``beta``: ``beta``, ``distance``, ``distance_sem``, ``error``, ``sem``,
        ``excess``, ``excess_sem`` (floats).

    Raises
    ------
    ValueError
        Bad sizes or a ``beta`` that is not a real number in ``(0, 1]`` (a boolean or a string
        is refused).

    References
    ----------
    Censor, Eggermont & Gordon (1983): for cyclic relaxed projections on an inconsistent system,
    the limit points tend to the least-squares solution as the relaxation parameter tends to 0.
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    betas = [_check_beta(b) for b in _as_list(betas)]
    d_v = d_k if d_v is None else d_v
    keys, values = sample_pairs(n, d_k, d_v, trials, seed, device=device, dtype=dtype)
    S_star = least_squares_state(keys, values)  # (B, d_v, d_k)
    norm_star = torch.linalg.matrix_norm(S_star)  # (B,)
    ls_error, _ = _error_and_distance(S_star, keys, values, S_star, norm_star)
    rows = []
    for beta in betas:
        err, dist = _error_and_distance(delta_limit(keys, values, beta), keys, values, S_star, norm_star)
        d, e, x = _summarise(dist), _summarise(err), _summarise(err - ls_error)
        rows.append({"beta": beta, "distance": d.mean, "distance_sem": d.sem, "error": e.mean,
                     "sem": e.sem, "excess": x.mean, "excess_sem": x.sem})
    return pd.DataFrame(rows, columns=["beta", "distance", "distance_sem", "error", "sem", "excess", "excess_sem"])
