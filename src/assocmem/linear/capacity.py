"""Monte Carlo read error of matrix memories under the seed's random-key model.

The model of seed §7: ``n`` keys drawn independently and uniformly from the unit sphere in
``R^{d_k}``, values ``v ~ N(0, I / d_v)`` (so ``E||v||^2 = 1``), and the read error
``e(n) = E||S k_j - v_j||^2`` averaged over the stored pairs ``j``. Three ways to fill ``S``:

* ``"additive"``: ``S = V K^T`` (outer products; Kohonen 1972, Anderson 1972);
  theory ``(n - 1) / d_k``;
* ``"least_squares"``: ``S = V K^+`` (Kohonen & Ruohonen 1973); theory ``max(0, 1 - d_k/n)``;
* ``"delta"``: the delta rule swept ``passes`` times over the pairs (Widrow & Hoff 1960;
  Schlag et al. 2021); no closed form here;
* ``"delta_limit"``: where infinitely many passes of the delta rule with a fixed ``beta`` end up,
  the fixed point of one sweep (:func:`delta_limit`). For ``n > d_k`` it is *not* the
  least-squares memory: a sweep is cyclic relaxed Kaczmarz on an inconsistent system, whose
  end-of-sweep limit lies at distance ``O(beta)`` from ``S*`` (Censor, Eggermont & Gordon 1983).

Beyond the curves, this module holds the experiments of the chapter "How much can a matrix
remember?": the ``eps d_k`` rule measured with a decisive statistical test
(:func:`max_pairs_at_error_mc`), the convergence of repeated delta-rule passes towards ``S*``
(:func:`delta_convergence`), and the distance of the delta rule's limit from ``S*`` as a
function of ``beta`` (:func:`delta_limit_curve`). The chapter's presets are in :data:`PRESETS`.

All trials are computed at once with batched torch operations; these batched kernels mirror the
single-memory classes in :mod:`assocmem.linear.memory` (tests hold them equal).

References
----------
Seed "How much can a matrix remember?", §7.
Kohonen, T. (1972). Correlation matrix memories. IEEE Trans. Computers C-21(4).
Anderson, J. A. (1972). A simple neural network generating an interactive memory.
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Widrow, B., & Hoff, M. E. (1960). Adaptive switching circuits. IRE WESCON Convention Record.
Kaczmarz, S. (1937). Angenaherte Auflosung von Systemen linearer Gleichungen. Bull. Int. Acad.
Polon. Sci. Lett. A, 35, 355-357.
Censor, Y., Eggermont, P. P. B., & Gordon, D. (1983). Strong underrelaxation in Kaczmarz's method
for inconsistent systems. Numerische Mathematik, 41, 83-92.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch

from assocmem._checks import lookup
from assocmem.devices import resolve_device

__all__ = [
    "MEMORY_KINDS",
    "VALUE_DISTS",
    "ReadError",
    "sample_pairs",
    "batched_read_errors",
    "read_error_mc",
    "read_error_curve",
    "n_grid",
    "least_squares_state",
    "delta_pass_map",
    "delta_limit",
    "PairsAtError",
    "max_pairs_at_error_mc",
    "DeltaConvergence",
    "delta_convergence",
    "delta_limit_curve",
    "CapacityPreset",
    "PRESETS",
    "get_preset",
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


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_beta(beta) -> float:
    beta = float(beta)
    if not (0.0 < beta <= 1.0):
        raise ValueError(f"beta must be in (0, 1]; got {beta!r}")
    return beta


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
    device : str or torch.device, default ``"auto"``
        Where the returned tensors live (:func:`assocmem.devices.resolve_device`).
    dtype : torch.dtype, default ``torch.float64``
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
        If a size is not a positive integer, or ``value_dist`` is unknown.

    References
    ----------
    Seed §7 (the random-key model).
    """
    n, d_k, d_v, trials = (_check_int(a, b) for a, b in
                           (("n", n), ("d_k", d_k), ("d_v", d_v), ("trials", trials)))
    if value_dist not in VALUE_DISTS:
        raise ValueError(f"unknown value_dist {value_dist!r}; expected one of {VALUE_DISTS}")
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    keys = torch.randn(trials, n, d_k, generator=gen, dtype=dtype)  # (B, n, d_k)
    keys = keys / torch.linalg.vector_norm(keys, dim=-1, keepdim=True)  # unit rows
    values = torch.randn(trials, n, d_v, generator=gen, dtype=dtype) / math.sqrt(d_v)  # (B, n, d_v)
    if value_dist == "sign":
        values = torch.sign(values) / math.sqrt(d_v)  # +-1/sqrt(d_v); a zero has probability 0
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


def _delta_sweep_(S: torch.Tensor, keys: torch.Tensor, targets: torch.Tensor, beta: float) -> torch.Tensor:
    """One delta-rule sweep over the pairs in order, updating ``S`` in place; returns ``S``.

    ``S`` is ``(B, r, d_k)``, ``keys`` ``(B, n, d_k)``, ``targets`` ``(B, n, r)``. Same arithmetic as
    :meth:`assocmem.linear.memory.DeltaRuleMemory.write`: ``S += beta (t_i - S k_i) k_i^T`` for each ``i``
    (the loop is over ``n``, the batch is over trials).
    """
    for i in range(keys.shape[1]):
        k_i = keys[:, i, :]  # (B, d_k)
        error = targets[:, i, :] - torch.bmm(S, k_i.unsqueeze(-1)).squeeze(-1)  # t_i - S k_i, (B, r)
        S.add_(error.unsqueeze(-1) * k_i.unsqueeze(-2), alpha=beta)  # S += beta error k_i^T
    return S


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


def _check_batch(keys: torch.Tensor, values: torch.Tensor) -> None:
    if keys.ndim != 3 or values.ndim != 3 or keys.shape[:2] != values.shape[:2]:
        raise ValueError(
            "keys and values must be (B, n, d_k) and (B, n, d_v) with matching B and n; got "
            f"keys {tuple(keys.shape)}, values {tuple(values.shape)}"
        )


def least_squares_state(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The least-squares memory ``S* = V K^+`` for a batch of pair sets.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows (the seed's ``K^T`` per trial).
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows (the seed's ``V^T``).

    Returns
    -------
    torch.Tensor, shape ``(B, d_v, d_k)``
        ``S*`` per trial, the minimum-norm minimiser of ``||S K - V||_F^2``, computed as
        ``(keys^+ values)^T`` with :func:`torch.linalg.pinv` (default cut-offs).

    Raises
    ------
    ValueError
        If the shapes do not match (both are named).

    References
    ----------
    Seed §6 (``S* = V K^+``); Kohonen & Ruohonen (1973).
    """
    _check_batch(keys, values)
    return (torch.linalg.pinv(keys) @ values).transpose(-2, -1)  # ((B, d_k, n) @ (B, n, d_v))^T


def delta_pass_map(keys: torch.Tensor, values: torch.Tensor, beta: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """One sweep of the delta rule as an affine map ``S -> S M + C``.

    A delta step ``S <- S + beta (v_i - S k_i) k_i^T = S (I - beta k_i k_i^T) + beta v_i k_i^T`` is
    affine in ``S``, so a sweep over the ``n`` pairs in order is too, with

    ``M = (I - beta k_1 k_1^T) (I - beta k_2 k_2^T) ... (I - beta k_n k_n^T)`` and ``C`` the state one
    sweep writes into an empty memory. ``P`` sweeps from ``S = 0`` give ``C (I + M + ... + M^{P-1})``.
    Both are computed in one sweep of the delta rule on the stacked state ``[S; I]`` with targets
    ``[v_i; 0]`` (the rows of ``M`` are what a sweep does to the identity when nothing is written).

    Parameters
    ----------
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows, one set per trial (unit keys, as in the seed).
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows.
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]``.

    Returns
    -------
    M : torch.Tensor, shape ``(B, d_k, d_k)``
        Linear part of the sweep (acts on the right of ``S``).
    C : torch.Tensor, shape ``(B, d_v, d_k)``
        The state after one sweep from ``S = 0``.

    Raises
    ------
    ValueError
        Mismatched shapes or ``beta`` outside ``(0, 1]``.

    References
    ----------
    Widrow & Hoff (1960); Schlag et al. (2021) (the delta rule). Kaczmarz (1937) (cyclic
    projections, the ``beta = 1`` case).
    """
    _check_batch(keys, values)
    beta = _check_beta(beta)
    B, n, d_k = keys.shape
    d_v = values.shape[-1]
    eye = torch.eye(d_k, dtype=keys.dtype, device=keys.device).expand(B, d_k, d_k)
    state = torch.cat([keys.new_zeros(B, d_v, d_k), eye], dim=1)  # [S; I], (B, d_v + d_k, d_k)
    targets = torch.cat([values, keys.new_zeros(B, n, d_k)], dim=-1)  # [v_i; 0], (B, n, d_v + d_k)
    _delta_sweep_(state, keys, targets, beta)
    return state[:, d_v:, :], state[:, :d_v, :]  # M (B, d_k, d_k), C (B, d_v, d_k)


def delta_limit(keys: torch.Tensor, values: torch.Tensor, beta: float = 1.0, rtol: float | None = None) -> torch.Tensor:
    """End-of-sweep limit of the delta rule repeated forever from ``S = 0`` with a fixed ``beta``.

    The iterates ``S_P`` (state after ``P`` sweeps) converge to the fixed point of the sweep map,
    ``S_inf = S_inf M + C`` (:func:`delta_pass_map`). Starting from zero, every row of ``S`` stays in
    the span of the keys, where ``M`` is a strict contraction for ``beta`` in ``(0, 1]``; with ``U``
    an orthonormal basis of that span the fixed point is
    ``S_inf = C U (I - U^T M U)^{-1} U^T``. Then:

    * linearly independent keys (``n <= d_k``): the system ``S K = V`` is consistent and
      ``S_inf = S*`` for every ``beta``;
    * ``n > d_k``: the system is inconsistent; ``S_inf`` depends on ``beta`` and on the order of
      the pairs, and ``S_inf = S* + O(beta)`` (Censor, Eggermont & Gordon 1983). Within a sweep the
      state cycles through ``n`` different matrices (a limit cycle); ``S_inf`` is the one reached
      after the last pair.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows.
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows.
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]``.
    rtol : float or None, default None
        Singular values of the keys below ``rtol * sigma_max`` count as zero when finding their
        span; ``None`` means ``eps(dtype) * max(n, d_k)``.

    Returns
    -------
    torch.Tensor, shape ``(B, d_v, d_k)``
        ``S_inf`` per trial.

    Raises
    ------
    ValueError
        Mismatched shapes or ``beta`` outside ``(0, 1]``.

    References
    ----------
    Kaczmarz (1937); Censor, Eggermont & Gordon (1983), Strong underrelaxation in Kaczmarz's method
    for inconsistent systems; Schlag et al. (2021) (the delta rule in linear attention).
    """
    M, C = delta_pass_map(keys, values, beta)  # (B, d_k, d_k), (B, d_v, d_k)
    B, n, d_k = keys.shape
    U, sv, _ = torch.linalg.svd(keys.transpose(-2, -1), full_matrices=False)  # U (B, d_k, r), sv (B, r)
    cut = (torch.finfo(keys.dtype).eps * max(n, d_k)) if rtol is None else float(rtol)
    U = U * (sv > cut * sv[:, :1]).unsqueeze(-2)  # drop null directions: those columns become 0
    r = U.shape[-1]
    eye = torch.eye(r, dtype=keys.dtype, device=keys.device)
    A = eye - U.transpose(-2, -1) @ M @ U  # I - U^T M U, (B, r, r); identity on dropped columns
    X = torch.linalg.solve(A, C @ U, left=False)  # X A = C U, (B, d_v, r)
    return X @ U.transpose(-2, -1)  # (B, d_v, d_k)


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
        Unknown memory, mismatched shapes (named), ``passes < 1`` or ``beta`` outside ``(0, 1]``.

    References
    ----------
    Seed §5 (reads ``V G``), §6 (``V K^+ K``); Schlag et al. (2021) (delta rule).
    """
    _check_memory(memory)
    passes = _check_int("passes", passes)
    beta = _check_beta(beta)
    _check_batch(keys, values)
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
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
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
    device : str or torch.device, default ``"auto"``
    dtype : torch.dtype, default ``torch.float64``
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
        ``passes < 1``, or ``beta`` outside ``(0, 1]``.

    References
    ----------
    Seed §7; compare :func:`assocmem.linear.theory.additive_read_error` and
    :func:`assocmem.linear.theory.least_squares_read_error`.
    """
    _check_memory(memory)
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
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
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
        If ``d_k`` is not a positive integer or a ratio is not positive.
    """
    d_k = _check_int("d_k", d_k)
    ratios = [float(r) for r in ratios]
    if any(not (r > 0 and math.isfinite(r)) for r in ratios):
        raise ValueError(f"ratios must be positive numbers; got {ratios!r}")
    return sorted({1, d_k + 1} | {max(1, round(r * d_k)) for r in ratios})


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
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
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
        If ``eps <= 0``, ``z < 0``, or another argument is invalid.
    RuntimeError
        If no ``n`` up to ``10 (eps d_k + 1) + 10`` is confidently above ``eps``.

    References
    ----------
    Seed §7 ("keeping the error below a fraction eps allows only about eps d_k pairs").
    """
    eps, z = float(eps), float(z)
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


def _schedule(beta) -> tuple[str, float | None]:
    """``(label, constant beta or None)`` for a step schedule: a number in (0, 1] or ``"1/p"``."""
    if isinstance(beta, str):
        if beta != "1/p":
            raise ValueError(f"unknown beta schedule {beta!r}; use a number in (0, 1] or '1/p'")
        return beta, None
    b = _check_beta(beta)
    return f"{b:g}", b


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
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
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
        Bad sizes, an unknown schedule, or ``beta`` outside ``(0, 1]``.

    References
    ----------
    Widrow & Hoff (1960); Kaczmarz (1937); Censor, Eggermont & Gordon (1983); Schlag et al.
    (2021). The seed (§6-§7) has only the additive and least-squares memories.
    """
    schedules = [_schedule(b) for b in betas]
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
    device: str | torch.device | None = "auto",
    dtype: torch.dtype = torch.float64,
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
        Bad sizes or a ``beta`` outside ``(0, 1]``.

    References
    ----------
    Censor, Eggermont & Gordon (1983): for cyclic relaxed projections on an inconsistent system,
    the limit points tend to the least-squares solution as the relaxation parameter tends to 0.
    """
    betas = [_check_beta(b) for b in betas]
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


@dataclass(frozen=True)
class CapacityPreset:
    """Sizes of the experiments in the chapter "How much can a matrix remember?"."""

    trials: int  # Monte Carlo trials per point of the capacity curves
    d_ks: tuple[int, ...]  # key dimensions of the capacity figure
    ratios: tuple[float, ...]  # n / d_k grid of the capacity curves (n = 1 and d_k + 1 are added)
    d_v_check_dk: int  # key dimension of the value-dimension check
    d_vs: tuple[int, int]  # the two value dimensions compared
    eps: float  # error level of the eps * d_k rule
    eps_trials: int  # trials per n in the eps * d_k scan (must make the boundary decisive)
    delta_dk: int  # key dimension of the delta-rule capacity curves
    delta_passes: int  # "repeated passes" on the capacity plot
    delta_beta_small: float  # the small constant step
    conv_dk: int  # key dimension of the convergence experiment (n = 2 d_k and n = d_k / 2)
    conv_passes: int  # sweeps recorded in the convergence experiment
    conv_trials: int  # trials of the convergence experiment
    limit_betas: tuple[float, ...]  # steps of the limit-versus-beta curve


#: Named presets: ``"quick"`` runs in the book and CI (seconds on two CPU cores); ``"full"`` is
#: for papermill on a GPU (``-p PRESET full -p DEVICE auto``).
PRESETS: dict[str, CapacityPreset] = {
    "quick": CapacityPreset(
        trials=200, d_ks=(16, 32, 64), ratios=(0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4),
        d_v_check_dk=32, d_vs=(4, 128), eps=0.1, eps_trials=4000,
        delta_dk=32, delta_passes=50, delta_beta_small=0.1,
        conv_dk=16, conv_passes=200, conv_trials=200,
        limit_betas=(1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01),
    ),
    "full": CapacityPreset(
        trials=2000, d_ks=(16, 32, 64, 128, 256),
        ratios=tuple(i / 8 for i in range(1, 33)),
        d_v_check_dk=64, d_vs=(4, 256), eps=0.1, eps_trials=10000,
        delta_dk=64, delta_passes=50, delta_beta_small=0.1,
        conv_dk=32, conv_passes=500, conv_trials=1000,
        limit_betas=(1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001),
    ),
}


def get_preset(name: str) -> CapacityPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not in :data:`PRESETS` (the message lists the valid names).
    """
    return lookup(PRESETS, name)
