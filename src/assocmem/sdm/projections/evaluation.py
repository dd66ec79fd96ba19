"""Evaluating a projection: iterated reads in the projected space, scored in pixel space.

The authors of Bricken & Pehlevan (2021), App. B.7, test a learnt projection by perturbing
images, iterating a read rule for at most 10 steps (project the current state, read, repeat)
and scoring the cosine of the final state to the clean target (``test_projection`` and
``convergence_loop`` in [BP21-code], :mod:`assocmem.sdm.projections`).
:func:`evaluate_projection` does that with any rule of :mod:`assocmem.sdm.convergence`, stopping
each query on its own, and adds what the authors' evaluation lacks: whether the target is
stored, the nearest-stored bound (the best score of a memory that returns one stored item,
:func:`nearest_stored`), and whether the final state is nearest to the stored item nearest the
target. Used by chapter 36 through :func:`assocmem.sdm.projections.run_projection_preset`.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int as _as_int
from assocmem.devices import resolve_device
from assocmem.sdm._common import _refuse_low_precision
from assocmem.sdm.convergence.algorithms import algorithm_spec, resolve_algorithm
from assocmem.sdm.convergence.read_rules import ReadRule, make_read_rule
from assocmem.sdm.projections._common import _as_float, _check_dtype, _images, _seed_int, _unit_rows
from assocmem.sdm.projections.protocol import (
    AUTHORS_BASE_DIM,
    AUTHORS_RULES,
    AUTHORS_TEST_LEVELS,
    TRAIN_RULE,
    _perturb,
    level_to_cosine,
)
from assocmem.sdm.projections.training import LearntProjection

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "evaluate_projection",
    "nearest_stored",
]


def nearest_stored(memory_images: ArrayLike, target_images: ArrayLike,
                   device: str | torch.device | None = None,
                   chunk_size: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stored image nearest (by cosine, in pixel space) to each target.

    Parameters
    ----------
    memory_images : array_like or torch.Tensor, shape ``(m, n_base)``
    target_images : array_like or torch.Tensor, shape ``(B, n_base)``
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    chunk_size : int, default 1024
        Targets per block.

    Returns
    -------
    index : numpy.ndarray, shape ``(B,)``, int64
        Row of the nearest stored image.
    cosine : numpy.ndarray, shape ``(B,)``, float64
        Its cosine to the target: the best score a memory that returns one stored item can get
        (the nearest-stored bound).
    stored : numpy.ndarray, shape ``(B,)``, bool
        The target is one of the stored images (equal up to ``1e-9`` relative distance).

    Raises
    ------
    ValueError
        On invalid images (as :func:`train_projection`) or different ``n_base``.
    """
    mem = _images(memory_images, "memory_images")
    tgt = _images(target_images, "target_images", mem.shape[1])
    chunk_size = _as_int(chunk_size, "chunk_size", minimum=1)
    dev = resolve_device(device)
    mem, tgt = mem.to(dev), tgt.to(dev)
    mem_u = _unit_rows(mem)
    idx, cos, stored = [], [], []
    for lo in range(0, tgt.shape[0], chunk_size):
        t = tgt[lo:lo + chunk_size]
        c = _unit_rows(t) @ mem_u.T
        val, arg = c.max(dim=1)
        # cdist may use a matrix product (rounding ~1e-7): it only nominates the candidate row,
        # whose distance is then computed directly
        closest = torch.cdist(t, mem).argmin(dim=1)
        dist = torch.linalg.vector_norm(t - mem[closest], dim=1)
        idx.append(arg)
        cos.append(val.clamp(-1.0, 1.0))
        stored.append(dist <= 1e-9 * torch.linalg.vector_norm(t, dim=1))
    return (torch.cat(idx).cpu().numpy().astype(np.int64), torch.cat(cos).cpu().numpy(),
            torch.cat(stored).cpu().numpy())


def _weight_matrix(projection) -> tuple[torch.Tensor, float | None]:
    if isinstance(projection, LearntProjection):
        return projection.weight, projection.config.beta
    if isinstance(projection, (torch.Tensor, np.ndarray)):
        w = projection.detach() if isinstance(projection, torch.Tensor) else torch.from_numpy(
            np.ascontiguousarray(projection))
        _refuse_low_precision(w, "projection")
        if w.dtype == torch.bool:
            raise ValueError("the projection matrix must be real and finite, got a boolean matrix")
        if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] < 1:
            raise ValueError(f"a projection matrix must have shape (n_out, n_base) with n_out >= 1, "
                             f"got {tuple(w.shape)}")
        if w.is_complex() or not bool(torch.isfinite(w.to(torch.float64)).all()):
            raise ValueError("the projection matrix must be real and finite")
        return w.to(torch.float64), None
    raise ValueError(f"projection must be a LearntProjection or an (n_out, n_base) matrix, got "
                     f"{type(projection).__name__}")


_FRAME_COLUMNS = ["protocol", "projection", "rule", "d", "beta", "level", "query_cosine", "query",
                  "target_stored", "cosine", "nearest_bound", "exceeds_bound", "retrieved_index",
                  "nearest_index", "retrieved_is_nearest", "retrieved_cosine", "max_weight", "steps",
                  "stopped", "empty"]


def evaluate_projection(projection: LearntProjection | ArrayLike, memory_images: ArrayLike,
                        query_images: ArrayLike, target_images: ArrayLike | None = None, *,
                        rules: Sequence[str] = (TRAIN_RULE,), d: int | None = None,
                        levels: Sequence[float] = AUTHORS_TEST_LEVELS, base_dim: int = AUTHORS_BASE_DIM,
                        max_steps: int = 10, tol: float = 0.05, beta: float | None = None,
                        r: float | None = None, seed: int = 0, device: str | torch.device | None = None,
                        dtype: torch.dtype | None = None, protocol: str = "",
                        projection_name: str | None = None, chunk_size: int = 512) -> pd.DataFrame:
    """Perturb queries, iterate reads in the projected space, score against the targets.

    For each level ``k`` every query image is moved to cosine ``1 - 2 k / base_dim`` along a
    random orthogonal direction (norm kept; the same draw for every rule and projection with the
    same ``seed``). Its state ``s`` (pixel space) is then read at most ``max_steps`` times:
    ``p = W s / |W s|``, weights ``w_mu`` of the rule between ``p`` and the projected stored
    keys ``W x_mu / |W x_mu|``, ``s <- sum_mu w_mu x_mu / sum_mu w_mu`` (a read with all weights
    zero leaves ``s`` unchanged). A query stops when no pixel moves by more than ``tol``.

    Parameters
    ----------
    projection : LearntProjection or array_like, shape ``(n_out, n_base)``
        The key/query map ``W``.
    memory_images : array_like or torch.Tensor, shape ``(m, n_base)``
        Stored images: keys after projection, values as they are.
    query_images : array_like or torch.Tensor, shape ``(B, n_base)``
        Clean images that are perturbed into queries.
    target_images : array_like or torch.Tensor, shape ``(B, n_base)``, optional
        What each query should retrieve; default ``query_images`` (autoassociative recall).
    rules : sequence of str, default ("Cont_SDM_BFit_Attention",)
        Continuous rules of :mod:`assocmem.sdm.convergence` (neuron-limited ones need ``r``).
    d : int, optional
        Radius at ``n_out``; default the projection's (:attr:`ProjectionConfig.d`), else 11.
        Softmax rules use the ``beta`` fitted to it (for ``Cont_SDM_BFit_Attention``: the
        projection's training ``beta``).
    levels : sequence of float, default (0, 50, ..., 300)
        Perturbations in the authors' units (:func:`level_to_cosine`).
    base_dim : int, default 784
    max_steps : int, default 10
        Most reads per query (the authors' ``max_conv_steps``), ``>= 1``.
    tol : float, default 0.05
        Stopping tolerance per pixel (the authors' ``epsilon``, pixels of full scale 1), ``>= 0``.
    beta : float, optional
        Inverse temperature of every softmax rule, replacing the fitted / trained one (e.g. a
        very large ``beta`` makes the read return the single best-matching stored image).
    r : float, optional
        Neurons, for neuron-limited rules.
    seed : int, default 0
        Perturbation draws and stochastic rounding.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    dtype : torch.float32 or torch.float64, optional
        Default: float64 for a matrix, the training dtype for a :class:`LearntProjection`.
    protocol, projection_name : str
        Labels written into the frame (``projection_name`` default: ``"learnt"`` for a
        :class:`LearntProjection`, else ``"matrix"``).
    chunk_size : int, default 512
        Queries iterated together (bounds memory at ``chunk_size x m`` weights).

    Returns
    -------
    pandas.DataFrame
        One row per query x rule x level: ``protocol``, ``projection``, ``rule``, ``d``,
        ``beta`` (NaN for non-softmax rules), ``level``, ``query_cosine`` (cosine of the
        perturbed query to its clean image), ``query`` (row of ``query_images``),
        ``target_stored`` (the target is a row of the memory), ``cosine`` (final state to target
        in pixel space: the authors' metric), ``nearest_bound`` (cosine of the target to its
        nearest stored image), ``exceeds_bound`` (``cosine > nearest_bound + 1e-6``: only a
        blend of stored images can do that), ``retrieved_index`` (stored image nearest to the
        final state), ``nearest_index`` (stored image nearest to the target),
        ``retrieved_is_nearest``, ``retrieved_cosine`` (cosine of the retrieved stored image to
        the target, ``<= nearest_bound``), ``max_weight`` (largest normalised weight of the last
        read), ``steps``, ``stopped`` (the tolerance rule fired within ``max_steps``), ``empty``
        (the last read had all weights zero). ``attrs`` hold ``m``, ``n_base``, ``n_out``,
        ``seconds``.

    Raises
    ------
    ValueError
        On invalid or mismatched images (shapes, non-finite values, zero rows, float16/bfloat16),
        a projection matrix that is not a finite real ``(n_out, n_base)`` array, queries and
        targets of different counts, an unknown or binary rule, bad ``levels``, ``max_steps``,
        ``tol``, ``d`` or ``chunk_size`` (booleans and strings are refused for the numbers), or
        a neuron-limited rule without ``r``.
    RuntimeError
        If the device is not available.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7, Figs. 30-31; the authors' ``test_projection`` and
    ``convergence_loop``; seed 002, "Convergence experiments (App. B.7)".
    """
    w, trained_beta = _weight_matrix(projection)
    n_out, n_base = w.shape
    mem = _images(memory_images, "memory_images", n_base)
    qry = _images(query_images, "query_images", n_base)
    tgt = qry if target_images is None else _images(target_images, "target_images", n_base)
    if tgt.shape[0] != qry.shape[0]:
        raise ValueError(f"query_images has {qry.shape[0]} rows but target_images has "
                         f"{tgt.shape[0]}; they are paired by row")
    if isinstance(rules, str):
        rules = (rules,)
    rules = list(dict.fromkeys(resolve_algorithm(r_) for r_ in rules))
    if not rules:
        raise ValueError("rules is empty")
    for name in rules:
        if algorithm_spec(name).space != "continuous":
            raise ValueError(f"{name} is a binary rule; projected images need a continuous rule "
                             f"(e.g. {', '.join(AUTHORS_RULES)})")
    if d is None:
        d = projection.config.d if isinstance(projection, LearntProjection) else 11
    d = _as_int(d, "d")
    if not 0 <= d <= n_out:
        raise ValueError(f"d must lie in [0, n_out] = [0, {n_out}], got {d}")
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        raise ValueError(f"levels must be a sequence of numbers, got {levels!r}")
    levels = [_as_float(v, "levels") for v in levels]  # no booleans, strings or NaN
    if not levels:
        raise ValueError("levels is empty")
    cosines = [level_to_cosine(v, base_dim) for v in levels]
    max_steps = _as_int(max_steps, "max_steps", minimum=1)
    tol = _as_float(tol, "tol")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    chunk_size = _as_int(chunk_size, "chunk_size", minimum=1)
    seed = _as_int(seed, "seed")
    if dtype is None:
        dtype = projection.weight.dtype if isinstance(projection, LearntProjection) else torch.float64
    dtype = _check_dtype(dtype)
    dev = resolve_device(device, dtype=dtype)
    if projection_name is None:
        projection_name = "learnt" if isinstance(projection, LearntProjection) else "matrix"

    t0 = time.perf_counter()
    near_idx, near_cos, stored = nearest_stored(mem, tgt, device=dev)
    W = w.to(dev, dtype)
    M = mem.to(dev, dtype)
    T = tgt.to(dev)
    M_unit = _unit_rows(M)
    pk = M @ W.T
    if bool((torch.linalg.vector_norm(pk, dim=-1) == 0).any()):
        raise ValueError("a stored image projects to the zero vector; the projection cannot key it")
    read_rules: dict[str, ReadRule] = {}
    for name in rules:
        kw = dict(device=dev, dtype=dtype, seed=seed)
        if algorithm_spec(name).neuron_limited:
            kw["r"] = r
        if beta is not None and algorithm_spec(name).weights == "softmax":
            kw["beta"] = _as_float(beta, "beta")
        elif name == TRAIN_RULE and trained_beta is not None and d == projection.config.d:
            kw["beta"] = trained_beta
        read_rules[name] = make_read_rule(name, n_out, d, **kw)
    prepared = {name: rule.prepare(pk) for name, rule in read_rules.items()}

    pieces = []
    b = qry.shape[0]
    for j, (level, c) in enumerate(zip(levels, cosines)):
        gen = torch.Generator().manual_seed(_seed_int(seed, j, 7919))
        q0 = _perturb(qry, torch.full((b,), c, dtype=torch.float64), gen).to(dev)
        qc = (_unit_rows(q0) * _unit_rows(qry.to(dev))).sum(-1).clamp(-1, 1).cpu().numpy()
        for name, rule in read_rules.items():
            rule.manual_seed(_seed_int(seed, j, 104729))
            out = _iterate(rule, prepared[name], W, M, q0.to(dtype), max_steps, tol, chunk_size)
            state, steps, stopped, empty, maxw = out
            cos = (_unit_rows(state.to(torch.float64)) * _unit_rows(T)).sum(-1).clamp(-1, 1)
            ret_idx = torch.cat([(_unit_rows(state[lo:lo + chunk_size]) @ M_unit.T).argmax(dim=1)
                                 for lo in range(0, b, chunk_size)])
            ret_cos = (_unit_rows(mem.to(dev)[ret_idx]) * _unit_rows(T)).sum(-1).clamp(-1, 1)
            cos_np = cos.cpu().numpy()
            ret_np = ret_idx.cpu().numpy().astype(np.int64)
            pieces.append(pd.DataFrame({
                "rule": name, "d": d,
                "beta": rule.beta if rule.beta is not None else np.nan,
                "level": level, "query_cosine": qc, "query": np.arange(b),
                "target_stored": stored, "cosine": cos_np, "nearest_bound": near_cos,
                "exceeds_bound": cos_np > near_cos + 1e-6,
                "retrieved_index": ret_np, "nearest_index": near_idx,
                "retrieved_is_nearest": ret_np == near_idx,
                "retrieved_cosine": ret_cos.cpu().numpy(),
                "max_weight": maxw.cpu().numpy(), "steps": steps.cpu().numpy(),
                "stopped": stopped.cpu().numpy(), "empty": empty.cpu().numpy(),
            }))
    frame = pd.concat(pieces, ignore_index=True)
    frame.insert(0, "projection", projection_name)
    frame.insert(0, "protocol", protocol)
    frame = frame[_FRAME_COLUMNS]
    frame["rule"] = pd.Categorical(frame["rule"], categories=rules)
    frame.attrs.update(m=int(mem.shape[0]), n_base=int(n_base), n_out=int(n_out),
                       seconds=time.perf_counter() - t0)
    return frame


def _iterate(rule: ReadRule, prep, W, M, queries, max_steps: int, tol: float, chunk_size: int):
    """Iterated heteroassociative reads, per-query stopping; returns states and diagnostics."""
    b = queries.shape[0]
    dev = queries.device
    state = queries.clone()
    steps = torch.zeros(b, dtype=torch.int64, device=dev)
    stopped = torch.zeros(b, dtype=torch.bool, device=dev)
    empty = torch.zeros(b, dtype=torch.bool, device=dev)
    maxw = torch.zeros(b, dtype=torch.float64, device=dev)
    for lo in range(0, b, chunk_size):
        active = torch.arange(lo, min(lo + chunk_size, b), device=dev)
        for _ in range(max_steps):
            if active.numel() == 0:
                break
            old = state.index_select(0, active)
            p = old @ W.T
            zero = torch.linalg.vector_norm(p, dim=-1) == 0
            p = torch.where(zero.unsqueeze(-1), torch.ones_like(p), p)
            wts = rule.weights(p, prep)
            bad = zero | torch.isnan(wts).any(-1)
            wts = torch.nan_to_num(wts, nan=0.0)
            new = wts @ M
            new = torch.where(bad.unsqueeze(-1), old, new)
            changed = ((new - old).abs() > tol).any(-1)
            state.index_copy_(0, active, new)
            steps.index_add_(0, active, torch.ones_like(active))
            empty.index_copy_(0, active, bad)
            maxw.index_copy_(0, active, torch.where(bad, torch.zeros_like(bad, dtype=wts.dtype),
                                                    wts.max(dim=-1).values).to(torch.float64))
            stopped.index_fill_(0, active[~changed], True)
            active = active[changed]
    return state, steps, stopped, empty, maxw
