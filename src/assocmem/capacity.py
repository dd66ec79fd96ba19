"""Monte Carlo read error of matrix memories under the seed's random-key model.

The model of seed §7: ``n`` keys drawn independently and uniformly from the unit sphere in
``R^{d_k}``, values ``v ~ N(0, I / d_v)`` (so ``E||v||^2 = 1``), and the read error
``e(n) = E||S k_j - v_j||^2`` averaged over the stored pairs ``j``. Three ways to fill ``S``:

* ``"additive"``: ``S = V K^T`` (outer products; Kohonen 1972, Anderson 1972);
  theory ``(n - 1) / d_k``;
* ``"least_squares"``: ``S = V K^+`` (Kohonen & Ruohonen 1973); theory ``max(0, 1 - d_k/n)``;
* ``"delta"``: the delta rule swept ``passes`` times over the pairs (Widrow & Hoff 1960;
  Schlag et al. 2021); no closed form here.

All trials are computed at once with batched torch operations; these batched kernels mirror the
single-memory classes in :mod:`assocmem.memory` (tests hold them equal).

References
----------
Seed "How much can a matrix remember?", §7.
Kohonen, T. (1972). Correlation matrix memories. IEEE Trans. Computers C-21(4).
Anderson, J. A. (1972). A simple neural network generating an interactive memory.
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch

from .devices import resolve_device

__all__ = [
    "MEMORY_KINDS",
    "ReadError",
    "sample_pairs",
    "batched_read_errors",
    "read_error_mc",
    "read_error_curve",
]

#: Memory names accepted by :func:`read_error_mc` and :func:`read_error_curve`.
MEMORY_KINDS = ("additive", "least_squares", "delta")


class ReadError(NamedTuple):
    """A Monte Carlo estimate: ``mean`` of the per-trial read error and its standard error."""

    mean: float  # average over trials of the per-trial mean over j of ||S k_j - v_j||^2
    sem: float  # standard error of that mean: std over trials (ddof=1) / sqrt(trials)


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_memory(memory: str) -> str:
    if memory not in MEMORY_KINDS:
        raise ValueError(f"unknown memory {memory!r}; expected one of {MEMORY_KINDS}")
    return memory


def sample_pairs(
    n: int,
    d_k: int,
    d_v: int,
    trials: int,
    seed: int = 0,
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``trials`` independent sets of ``n`` key-value pairs from the seed's model.

    Keys are Gaussian vectors normalised to unit length (hence uniform on the sphere); values
    are ``N(0, I / d_v)``. Sampling happens on the CPU with a seeded :class:`torch.Generator`,
    so the numbers are the same on every device, and is then moved to ``device``.

    Parameters
    ----------
    n, d_k, d_v, trials : int
        Pairs per trial, key dimension, value dimension, number of trials (all ``>= 1``).
    seed : int, default 0
        Seed of the generator.
    device : str or torch.device, default ``"auto"``
        Where the returned tensors live (:func:`assocmem.devices.resolve_device`).
    dtype : torch.dtype, default ``torch.float64``

    Returns
    -------
    keys : torch.Tensor, shape ``(trials, n, d_k)``
        Unit keys as rows (the seed stacks them as columns, ``K`` of shape ``(d_k, n)``).
    values : torch.Tensor, shape ``(trials, n, d_v)``
        Values as rows, ``E||v||^2 = 1``.

    Raises
    ------
    ValueError
        If a size is not a positive integer.

    References
    ----------
    Seed §7 (the random-key model).
    """
    n, d_k, d_v, trials = (_check_int(a, b) for a, b in
                           (("n", n), ("d_k", d_k), ("d_v", d_v), ("trials", trials)))
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    keys = torch.randn(trials, n, d_k, generator=gen, dtype=dtype)  # (B, n, d_k)
    keys = keys / torch.linalg.vector_norm(keys, dim=-1, keepdim=True)  # unit rows
    values = torch.randn(trials, n, d_v, generator=gen, dtype=dtype) / math.sqrt(d_v)  # (B, n, d_v)
    dev = resolve_device(device)
    return keys.to(dev), values.to(dev)


def _least_squares_reads(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Reads ``keys S*^T`` of the least-squares memory for a batch, ``(B, n, d_v)``.

    ``S*^T = keys^+ values``, so the reads are ``P values`` with ``P = keys keys^+`` the orthogonal
    projection onto the column space of ``keys`` (the seed's ``(K^+ K)^T``). When every batch
    element has full rank ``min(n, d_k)`` (probability one for sampled keys) ``P = Q Q^T`` from a
    reduced QR, about 3x cheaper than an SVD; otherwise we fall back to :func:`torch.linalg.pinv`.
    """
    Q, R = torch.linalg.qr(keys)  # Q (B, n, r), R (B, r, d_k), r = min(n, d_k)
    diag = torch.diagonal(R, dim1=-2, dim2=-1).abs()  # (B, r)
    tol = torch.finfo(keys.dtype).eps * max(keys.shape[-2:]) * diag.amax(dim=-1, keepdim=True)
    if bool((diag > tol).all()):
        return Q @ (Q.transpose(-2, -1) @ values)  # (B, n, r) @ (B, r, d_v)
    return keys @ (torch.linalg.pinv(keys) @ values)  # (B, n, d_k) @ (B, d_k, d_v)


def _delta_reads(keys: torch.Tensor, values: torch.Tensor, passes: int, beta: float) -> torch.Tensor:
    """Delta rule over the pairs in order, ``passes`` times, all trials at once; reads ``(B, n, d_v)``.

    Same arithmetic as :meth:`assocmem.memory.DeltaRuleMemory.write`, with the state updated in
    place by a batched rank-1 ``baddbmm`` (the loop is over ``n``, the batch is over trials).
    """
    B, n, d_k = keys.shape
    S = keys.new_zeros(B, values.shape[-1], d_k)  # (B, d_v, d_k)
    for _ in range(passes):
        for i in range(n):
            k_i = keys[:, i, :].unsqueeze(-1)  # (B, d_k, 1)
            v_i = values[:, i, :].unsqueeze(-1)  # (B, d_v, 1)
            error = v_i - torch.bmm(S, k_i)  # v_i - S k_i, (B, d_v, 1)
            S.baddbmm_(error, k_i.transpose(-2, -1), alpha=beta)  # S += beta error k_i^T
    return keys @ S.transpose(-2, -1)  # (B, n, d_k) @ (B, d_k, d_v) -> (B, n, d_v)


def batched_read_errors(
    memory: str,
    keys: torch.Tensor,
    values: torch.Tensor,
    passes: int = 1,
    beta: float = 1.0,
) -> torch.Tensor:
    """Per-trial read error, ``mean_j ||S k_j - v_j||^2``, for a batch of independent memories.

    Parameters
    ----------
    memory : {"additive", "least_squares", "delta"}
        How ``S`` is filled (see the module docstring).
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows, one set per trial.
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows.
    passes : int, default 1
        Sweeps over the pairs (``"delta"`` only).
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]`` (``"delta"`` only).

    Returns
    -------
    torch.Tensor, shape ``(B,)``
        Mean over the ``n`` stored pairs of the squared read error, one per trial. This is a
        measurement, not a differentiable layer (the delta kernel updates its state in place).

    Raises
    ------
    ValueError
        Unknown memory, mismatched shapes (named), ``passes < 1`` or ``beta`` outside ``(0, 1]``.

    References
    ----------
    Seed §5 (reads ``V G``), §6 (``V K^+ K``); Schlag et al. (2021) (delta rule).
    """
    _check_memory(memory)
    passes = _check_int("passes", passes)
    if not (0.0 < float(beta) <= 1.0):
        raise ValueError(f"beta must be in (0, 1]; got {beta!r}")
    if keys.ndim != 3 or values.ndim != 3 or keys.shape[:2] != values.shape[:2]:
        raise ValueError(
            "keys and values must be (B, n, d_k) and (B, n, d_v) with matching B and n; got "
            f"keys {tuple(keys.shape)}, values {tuple(values.shape)}"
        )
    if memory == "additive":
        # S = V K^T in the seed's columns, i.e. S^T = keys^T values with rows; reads = keys S^T.
        # (Equal to G V, but O(n d_k d_v) instead of O(n^2 (d_k + d_v)) once n > d_k.)
        reads = keys @ (keys.transpose(-2, -1) @ values)  # (B, n, d_k) @ (B, d_k, d_v) -> (B, n, d_v)
    elif memory == "least_squares":
        reads = _least_squares_reads(keys, values)  # (B, n, d_v)
    else:
        reads = _delta_reads(keys, values, passes, float(beta))  # (B, n, d_v)
    return ((reads - values) ** 2).sum(dim=-1).mean(dim=-1)  # (B,)


def read_error_mc(
    memory: str,
    n: int,
    d_k: int,
    d_v: int | None = None,
    trials: int = 200,
    seed: int = 0,
    passes: int = 1,
    beta: float = 1.0,
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
) -> ReadError:
    """Monte Carlo estimate of ``e(n) = E||S k_j - v_j||^2`` for random unit keys.

    Parameters
    ----------
    memory : {"additive", "least_squares", "delta"}
        How the memory is written.
    n : int
        Number of stored pairs, ``>= 1``.
    d_k : int
        Key dimension.
    d_v : int or None, default None
        Value dimension (``None``: ``d_k``). The theory does not depend on it.
    trials : int, default 200
        Independent draws of the ``n`` pairs. With one trial the standard error is ``nan``.
    seed : int, default 0
        Seed of :func:`sample_pairs`.
    passes : int, default 1
        Delta-rule sweeps over the pairs (ignored by the other memories).
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]`` (ignored by the other memories).
    device : str or torch.device, default ``"auto"``
    dtype : torch.dtype, default ``torch.float64``

    Returns
    -------
    ReadError
        ``(mean, sem)``: the mean over trials of the per-trial average error over the ``n``
        stored pairs, and its standard error (std over trials with ``ddof=1`` over
        ``sqrt(trials)``; the trials, not the pairs within one trial, are independent).

    Raises
    ------
    ValueError
        Unknown memory, a size that is not a positive integer, ``passes < 1``, or ``beta``
        outside ``(0, 1]``.

    References
    ----------
    Seed §7; compare :func:`assocmem.theory.additive_read_error` and
    :func:`assocmem.theory.least_squares_read_error`.
    """
    _check_memory(memory)
    d_v = d_k if d_v is None else d_v
    keys, values = sample_pairs(n, d_k, d_v, trials, seed, device=device, dtype=dtype)
    per_trial = batched_read_errors(memory, keys, values, passes=passes, beta=beta)  # (trials,)
    return _summarise(per_trial)


def _summarise(per_trial: torch.Tensor) -> ReadError:
    """Mean over trials and its standard error (``nan`` for a single trial)."""
    mean = float(per_trial.mean())
    if per_trial.numel() > 1:
        sem = float(per_trial.std(correction=1)) / math.sqrt(per_trial.numel())
    else:
        sem = float("nan")
    return ReadError(mean, sem)


def _point_seed(seed: int, d_k: int, n: int) -> int:
    """Independent, reproducible seed for one point of a curve (shared by all memories)."""
    return int(np.random.SeedSequence([int(seed), int(d_k), int(n)]).generate_state(1)[0])


def read_error_curve(
    memory: str | Sequence[str],
    ns: Iterable[int],
    d_k: int | Sequence[int],
    d_v: int | None = None,
    trials: int = 200,
    seed: int = 0,
    passes: int = 1,
    beta: float = 1.0,
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
) -> pd.DataFrame:
    """Read error against the number of stored pairs, as a tidy table.

    Parameters
    ----------
    memory : str or sequence of str
        One or several of ``"additive"``, ``"least_squares"``, ``"delta"``.
    ns : iterable of int
        Numbers of stored pairs.
    d_k : int or sequence of int
        One or several key dimensions.
    d_v : int or None, default None
        Value dimension (``None``: equal to each ``d_k``).
    trials, passes, beta, device, dtype
        As in :func:`read_error_mc`.
    seed : int, default 0
        Base seed. Point ``(d_k, n)`` uses a seed derived from ``(seed, d_k, n)``, so every
        point is independent of the others, and all memories at the same point see the same
        pairs (common random numbers, which makes memory-to-memory differences less noisy).
        A point's numbers therefore do not depend on which other points are requested, and
        ``read_error_curve(m, [n], d_k, seed=s)`` reproduces any row on its own.

    Returns
    -------
    pandas.DataFrame
        One row per ``(memory, d_k, n)`` with columns ``memory`` (str), ``d_k`` (int),
        ``n`` (int), ``error`` (float, mean read error), ``sem`` (float, its standard error),
        ``trials`` (int).

    Raises
    ------
    ValueError
        As :func:`read_error_mc`.

    References
    ----------
    Seed §7 (the capacity curves).
    """
    memories = [memory] if isinstance(memory, str) else list(memory)
    for m in memories:
        _check_memory(m)
    dks = [d_k] if isinstance(d_k, (int, np.integer)) else list(d_k)
    ns = [_check_int("n", n) for n in ns]
    rows = []
    for dk in dks:
        for n in ns:
            # One draw per point, shared by every memory (sampling costs more than most reads).
            keys, values = sample_pairs(
                n, dk, dk if d_v is None else d_v, trials, _point_seed(seed, dk, n),
                device=device, dtype=dtype,
            )  # (trials, n, d_k), (trials, n, d_v)
            for m in memories:
                est = _summarise(batched_read_errors(m, keys, values, passes=passes, beta=beta))
                rows.append({"memory": m, "d_k": int(dk), "n": n, "error": est.mean,
                             "sem": est.sem, "trials": int(trials)})
    columns = ["memory", "d_k", "n", "error", "sem", "trials"]
    order = {m: i for i, m in enumerate(memories)}
    rows.sort(key=lambda r: order[r["memory"]])  # stable: memory, then d_k and n as given
    return pd.DataFrame(rows, columns=columns)
