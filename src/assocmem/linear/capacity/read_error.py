"""Monte Carlo read error of matrix memories under the seed's random-key model.

The model of seed §7: ``n`` keys drawn independently and uniformly from the unit sphere in
``R^{d_k}`` (:func:`sample_pairs`), values ``v ~ N(0, I / d_v)`` (so ``E||v||^2 = 1``), and the read
error ``e(n) = E||S k_j - v_j||^2`` averaged over the stored pairs ``j``. Four ways to fill ``S``:

* ``"additive"``: ``S = V K^T`` (outer products; Kohonen 1972, Anderson 1972);
  theory ``(n - 1) / d_k``;
* ``"least_squares"``: ``S = V K^+`` (Kohonen & Ruohonen 1973); theory ``max(0, 1 - d_k/n)``;
* ``"delta"``: the delta rule swept ``passes`` times over the pairs (Widrow & Hoff 1960;
  Schlag et al. 2021); no closed form here;
* ``"delta_limit"``: where infinitely many passes of the delta rule with a fixed ``beta`` end up,
  the fixed point of one sweep (:func:`~assocmem.linear.capacity.delta_rule.delta_limit`).

All trials are computed at once with batched torch operations (:func:`batched_read_errors`), which
mirror the single-memory classes in :mod:`assocmem.linear.memory` (tests hold them equal);
:func:`read_error_mc` gives one estimate with its standard error, :func:`read_error_curve` the
capacity curves of chapter 03 ("How much can a matrix remember?") over the grid :func:`n_grid`.
The closed forms they are compared with are in :mod:`assocmem.linear.theory`.

References
----------
Seed "How much can a matrix remember?", §7.
Kohonen, T. (1972). Correlation matrix memories. IEEE Trans. Computers C-21(4).
Anderson, J. A. (1972). A simple neural network generating an interactive memory.
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
Widrow, B., & Hoff, M. E. (1960). Adaptive switching circuits. IRE WESCON Convention Record.
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

from assocmem._checks import as_int, as_real
from assocmem.devices import resolve_device
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.linear.capacity._common import _check_batch, _check_beta, _check_int
from assocmem.linear.capacity.delta_rule import _delta_sweep_, delta_limit, delta_pass_map

__all__ = [
    "MEMORY_KINDS",
    "VALUE_DISTS",
    "ReadError",
    "sample_pairs",
    "batched_read_errors",
    "read_error_mc",
    "read_error_curve",
    "n_grid",
]

#: Memory names accepted by :func:`read_error_mc` and :func:`read_error_curve`.
MEMORY_KINDS = ("additive", "least_squares", "delta", "delta_limit")

#: Value distributions accepted by :func:`sample_pairs`: Gaussian ``N(0, I/d_v)`` (the seed's
#: assumption for ``e_ls``) or random signs ``+-1/sqrt(d_v)`` (mean zero, ``||v||^2 = 1`` exactly).
VALUE_DISTS = ("gaussian", "sign")


class ReadError(NamedTuple):
    """A Monte Carlo estimate: ``mean`` of the per-trial read error and its standard error."""

    mean: float  # average over trials of the per-trial mean over j of ||S k_j - v_j||^2
    sem: float  # standard error of that mean: std over trials (ddof=1) / sqrt(trials)


def _check_dtype(dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point dtype (torch.float32 or torch.float64); got {dtype}")
    return check_float_dtype(dtype)


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
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    value_dist: str = "gaussian",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``trials`` independent sets of ``n`` key-value pairs from the seed's model.

    Keys are Gaussian vectors normalised to unit length (hence uniform on the sphere); values
    are ``N(0, I / d_v)`` or, with ``value_dist="sign"``, independent signs ``+-1/sqrt(d_v)``.
    Either way ``E v = 0`` and ``E||v||^2 = 1``. Sampling happens on the CPU with a seeded
    :class:`torch.Generator`, so the numbers are the same on every device, and is then moved to
    ``device``. The keys depend only on ``(n, d_k, trials, seed)``, not on ``d_v`` or
    ``value_dist``.

    Parameters
    ----------
    n, d_k, d_v, trials : int
        Pairs per trial, key dimension, value dimension, number of trials (all ``>= 1``).
    seed : int, default 0
        Seed of the generator.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where the returned tensors live (:func:`assocmem.devices.resolve_device`).
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
    value_dist : {"gaussian", "sign"}, default ``"gaussian"``
        Distribution of the value coordinates (see :data:`VALUE_DISTS`).

    Returns
    -------
    keys : torch.Tensor, shape ``(trials, n, d_k)``
        Unit keys as rows (the seed stacks them as columns, ``K`` of shape ``(d_k, n)``).
    values : torch.Tensor, shape ``(trials, n, d_v)``
        Values as rows, ``E||v||^2 = 1``.

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``seed`` is not an integer, ``dtype`` is not
        float32 or float64 (float16 and bfloat16 are refused, naming the supported dtypes), or
        ``value_dist`` is unknown.

    References
    ----------
    Seed §7 (the random-key model).
    """
    dtype = resolve_dtype(dtype)
    n, d_k, d_v, trials = (_check_int(a, b) for a, b in
                           (("n", n), ("d_k", d_k), ("d_v", d_v), ("trials", trials)))
    if value_dist not in VALUE_DISTS:
        raise ValueError(f"unknown value_dist {value_dist!r}; expected one of {VALUE_DISTS}")
    dtype = _check_dtype(dtype)
    gen = torch.Generator(device="cpu").manual_seed(as_int(seed, "seed"))
    keys = torch.randn(trials, n, d_k, generator=gen, dtype=dtype)  # (B, n, d_k)
    keys = keys / torch.linalg.vector_norm(keys, dim=-1, keepdim=True)  # unit rows
    values = torch.randn(trials, n, d_v, generator=gen, dtype=dtype) / math.sqrt(d_v)  # (B, n, d_v)
    if value_dist == "sign":
        values = torch.sign(values) / math.sqrt(d_v)  # +-1/sqrt(d_v); a zero has probability 0
    dev = resolve_device(device, dtype=dtype)
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

    One pass is a direct sweep. Several passes use the affine pass map of
    :func:`delta_pass_map` (one sweep to build it, then ``S <- S M + C`` per pass), which equals
    repeated sweeps up to rounding and is much faster when ``passes`` is large.
    """
    B, n, d_k = keys.shape
    if passes == 1:
        S = _delta_sweep_(keys.new_zeros(B, values.shape[-1], d_k), keys, values, beta)  # (B, d_v, d_k)
    else:
        M, C = delta_pass_map(keys, values, beta)  # (B, d_k, d_k), (B, d_v, d_k)
        S = C.clone()  # state after the first pass from S = 0
        for _ in range(passes - 1):
            S = torch.baddbmm(C, S, M)  # S M + C, (B, d_v, d_k)
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
    memory : {"additive", "least_squares", "delta", "delta_limit"}
        How ``S`` is filled (see the module docstring).
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows, one set per trial.
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows.
    passes : int, default 1
        Sweeps over the pairs (``"delta"`` only).
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]`` (``"delta"`` and ``"delta_limit"``).

    Returns
    -------
    torch.Tensor, shape ``(B,)``
        Mean over the ``n`` stored pairs of the squared read error, one per trial. This is a
        measurement, not a differentiable layer (the delta kernel updates its state in place).

    Raises
    ------
    ValueError
        Unknown memory, mismatched shapes (named), keys or values that are not finite
        float32/float64 tensors of one dtype on one device, no pairs (``n = 0``: a mean over no
        pairs is undefined), ``passes`` not an integer ``>= 1``, or ``beta`` not a real number in
        ``(0, 1]``.

    References
    ----------
    Seed §5 (reads ``V G``), §6 (``V K^+ K``); Schlag et al. (2021) (delta rule).
    """
    _check_memory(memory)
    passes = _check_int("passes", passes)
    beta = _check_beta(beta)
    _check_batch(keys, values)
    if keys.shape[1] == 0:
        raise ValueError(f"keys and values hold no pairs (n = 0; keys {tuple(keys.shape)}): the mean read "
                         "error over no stored pairs is undefined")
    if memory == "additive":
        # S = V K^T in the seed's columns, i.e. S^T = keys^T values with rows; reads = keys S^T.
        # (Equal to G V, but O(n d_k d_v) instead of O(n^2 (d_k + d_v)) once n > d_k.)
        reads = keys @ (keys.transpose(-2, -1) @ values)  # (B, n, d_k) @ (B, d_k, d_v) -> (B, n, d_v)
    elif memory == "least_squares":
        reads = _least_squares_reads(keys, values)  # (B, n, d_v)
    elif memory == "delta":
        reads = _delta_reads(keys, values, passes, beta)  # (B, n, d_v)
    else:
        reads = keys @ delta_limit(keys, values, beta).transpose(-2, -1)  # (B, n, d_v)
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
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    value_dist: str = "gaussian",
) -> ReadError:
    """Monte Carlo estimate of ``e(n) = E||S k_j - v_j||^2`` for random unit keys.

    Parameters
    ----------
    memory : {"additive", "least_squares", "delta", "delta_limit"}
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
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
    value_dist : {"gaussian", "sign"}, default ``"gaussian"``
        Distribution of the values (:func:`sample_pairs`).

    Returns
    -------
    ReadError
        ``(mean, sem)``: the mean over trials of the per-trial average error over the ``n``
        stored pairs, and its standard error (std over trials with ``ddof=1`` over
        ``sqrt(trials)``; the trials, not the pairs within one trial, are independent).

    Raises
    ------
    ValueError
        Unknown memory or value distribution, a size that is not a positive integer,
        ``passes < 1``, ``beta`` not a real number in ``(0, 1]``, a non-integer ``seed``, or a
        ``dtype`` other than float32 or float64.

    References
    ----------
    Seed §7; compare :func:`assocmem.linear.theory.additive_read_error` and
    :func:`assocmem.linear.theory.least_squares_read_error`.
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    _check_memory(memory)
    passes, beta = _check_int("passes", passes), _check_beta(beta)
    d_v = d_k if d_v is None else d_v
    keys, values = sample_pairs(n, d_k, d_v, trials, seed, device=device, dtype=dtype, value_dist=value_dist)
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
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    value_dist: str = "gaussian",
) -> pd.DataFrame:
    """Read error against the number of stored pairs, as a tidy table.

    Parameters
    ----------
    memory : str or sequence of str
        One or several of :data:`MEMORY_KINDS`.
    ns : iterable of int
        Numbers of stored pairs.
    d_k : int or sequence of int
        One or several key dimensions.
    d_v : int or None, default None
        Value dimension (``None``: equal to each ``d_k``).
    trials, passes, beta, device, dtype, value_dist
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
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    memories = [memory] if isinstance(memory, str) else list(memory)
    for m in memories:
        _check_memory(m)
    if isinstance(d_k, (str, bytes)):
        raise ValueError(f"d_k must be an integer >= 1 or a sequence of them; got {d_k!r}")
    dks = [d_k] if isinstance(d_k, (int, np.integer)) else list(d_k)
    dks = [_check_int("d_k", dk) for dk in dks]
    ns = [_check_int("n", n) for n in ns]
    trials, passes, beta = _check_int("trials", trials), _check_int("passes", passes), _check_beta(beta)
    dtype = _check_dtype(dtype)
    rows = []
    for dk in dks:
        for n in ns:
            # One draw per point, shared by every memory (sampling costs more than most reads).
            keys, values = sample_pairs(
                n, dk, dk if d_v is None else d_v, trials, _point_seed(seed, dk, n),
                device=device, dtype=dtype, value_dist=value_dist,
            )  # (trials, n, d_k), (trials, n, d_v)
            for m in memories:
                est = _summarise(batched_read_errors(m, keys, values, passes=passes, beta=beta))
                rows.append({"memory": m, "d_k": int(dk), "n": n, "error": est.mean,
                             "sem": est.sem, "trials": int(trials)})
    columns = ["memory", "d_k", "n", "error", "sem", "trials"]
    order = {m: i for i, m in enumerate(memories)}
    rows.sort(key=lambda r: order[r["memory"]])  # stable: memory, then d_k and n as given
    return pd.DataFrame(rows, columns=columns)


def n_grid(d_k: int, ratios: Iterable[float]) -> list[int]:
    """Numbers of pairs for a capacity curve: ``round(r d_k)`` for each ratio, plus 1 and ``d_k + 1``.

    Parameters
    ----------
    d_k : int
        Key dimension.
    ratios : iterable of float
        Values of ``n / d_k`` (positive).

    Returns
    -------
    list of int
        Sorted, distinct, all ``>= 1``; always contains ``1`` (one pair, no interference) and
        ``d_k + 1`` (where the seed says interference reaches the signal).

    Raises
    ------
    ValueError
        If ``d_k`` is not a positive integer or a ratio is not a finite positive number (a
        boolean or a string is refused, not read as a number).
    """
    d_k = _check_int("d_k", d_k)
    if isinstance(ratios, (str, bytes)):
        raise ValueError(f"ratios must be positive numbers; got {ratios!r}")
    ratios = [as_real(r, "ratios entry", finite=False) for r in ratios]
    if any(not (r > 0 and math.isfinite(r)) for r in ratios):
        raise ValueError(f"ratios must be positive numbers; got {ratios!r}")
    return sorted({1, d_k + 1} | {max(1, round(r * d_k)) for r in ratios})
