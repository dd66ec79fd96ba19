"""The learnt-projection experiment: one trained projection, every protocol, two baselines.

Does "the learnt projections do not generalise to test data" (Bricken & Pehlevan 2021, App. B.7,
Figs. 30-31; seed 002) survive a memory that stores its test targets?
:func:`projection_experiment` trains projections per radius and repeat, then evaluates them
under each arrangement of memory and queries (the authors', which stores no test target, and
the ``"stored*"`` protocols, which do), with the random initial matrix and the identity as
baselines; it returns a :class:`ProjectionExperiment` (the per-query frame, its summary, the
training curves and the nearest-stored bounds). :func:`summarize_projection` averages a frame
per protocol, projection, rule, radius and level. Used by chapter 36 through
:func:`assocmem.sdm.projections.run_projection_preset`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from numbers import Integral
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int as _as_int
from assocmem.sdm.convergence.algorithms import resolve_algorithm
from assocmem.sdm.projections._common import _as_float, _images, _seed_int
from assocmem.sdm.projections.evaluation import evaluate_projection, nearest_stored
from assocmem.sdm.projections.protocol import (
    AUTHORS_BASE_DIM,
    AUTHORS_TEST_LEVELS,
    AUTHORS_TRAIN_LEVELS,
    BASELINES,
    PROTOCOLS,
    TRAIN_RULE,
)
from assocmem.sdm.projections.training import train_projection
from assocmem.dtypes import resolve_dtype
from assocmem.devices import resolve_device

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "ProjectionExperiment",
    "projection_experiment",
    "summarize_projection",
]

_PROTOCOL_DOC = {
    "authors": "memory: training images; queries, targets: test images (no target stored)",
    "stored": "memory: test images; queries, targets: test images",
    "stored_all": "memory: training + test images; queries, targets: test images",
    "stored_train": "memory: training images; queries, targets: training images",
}


@dataclass
class ProjectionExperiment:
    """What :func:`projection_experiment` and :func:`run_projection_preset` return.

    Attributes
    ----------
    frame : pandas.DataFrame
        Every query (:func:`evaluate_projection` columns, plus ``repeat``).
    summary : pandas.DataFrame
        :func:`summarize_projection` of ``frame``.
    training : pandas.DataFrame
        Training curves: ``d``, ``repeat``, ``epoch`` (0 = before training), ``loss``,
        ``cosine``.
    bounds : pandas.DataFrame
        Per protocol: targets, memory size, share of targets stored, mean / median / min of the
        nearest-stored bound.
    projections : dict
        ``(d, repeat) -> LearntProjection``.
    config : dict
        The arguments.
    seconds : dict
        ``"train"`` and ``"evaluate"`` wall-clock seconds.
    """

    frame: pd.DataFrame
    summary: pd.DataFrame
    training: pd.DataFrame
    bounds: pd.DataFrame
    projections: dict
    config: dict
    seconds: dict = field(default_factory=dict)


def _protocol_sets(protocol: str, train: torch.Tensor, test: torch.Tensor, train_queries: torch.Tensor):
    if protocol == "authors":
        return train, test
    if protocol == "stored":
        return test, test
    if protocol == "stored_all":
        return torch.cat([train, test]), test
    if protocol == "stored_train":
        return train, train_queries
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")


def _as_names(value, allowed: Sequence[str], what: str) -> list[str]:
    if isinstance(value, str):
        value = list(allowed) if value == "all" else [value]
    if value is None:
        value = []
    names = list(value)
    for v in names:
        if v not in allowed:
            raise ValueError(f"unknown {what} {v!r}; expected one of {tuple(allowed)}")
    return names


def projection_experiment(train_images: ArrayLike, test_images: ArrayLike,
                          protocol: str | Sequence[str] = ("authors", "stored", "stored_all", "stored_train"),
                          *, d: int | Sequence[int] = 11, rules: Sequence[str] = (TRAIN_RULE,),
                          levels: Sequence[float] = AUTHORS_TEST_LEVELS, baselines: Sequence[str] = BASELINES,
                          n_out: int = 64, epochs: int = 10, batch_size: int = 128, lr: float = 0.005,
                          train_levels: tuple[float, float] = AUTHORS_TRAIN_LEVELS,
                          base_dim: int = AUTHORS_BASE_DIM, repeats: int = 1,
                          num_train_queries: int | None = None, max_steps: int = 10, tol: float = 0.05,
                          r: float | None = None, seed: int = 0, device: str | torch.device | None = None,
                          dtype: torch.dtype | None = None,
                          projections: dict | None = None) -> ProjectionExperiment:
    """Train the projection on the training images and evaluate it under several protocols.

    For each radius and repeat one projection is trained (:func:`train_projection`, seed
    ``(seed, d, repeat)``); it and the baselines are evaluated under every protocol with the
    same perturbed queries (:func:`evaluate_projection`).

    Parameters
    ----------
    train_images, test_images : array_like, shapes ``(N_train, n_base)``, ``(N_test, n_base)``
        E.g. ``split.train / 16`` and ``split.test / 16`` of
        :func:`assocmem.datasets.load_digits_patterns`, or MNIST from
        :func:`assocmem.datasets.load_mnist`.
    protocol : str or sequence of str, default all four
        Names in :data:`PROTOCOLS` (``"all"`` for all): ``"authors"`` (memory = training images,
        queries = targets = test images, no target stored) and the ``"stored*"`` protocols in
        which the memory holds the targets.
    d : int or sequence of int, default 11
        Radius (or radii) at ``n_out``; each gets its own projection, trained with its ``beta``.
    rules : sequence of str, default ("Cont_SDM_BFit_Attention",)
        Read rules at test (:data:`AUTHORS_RULES` are the authors').
    levels : sequence of float, default (0, 50, ..., 300)
        Test perturbations in the authors' units.
    baselines : sequence of str, default ("random", "identity")
        ``"random"``: the learnt projection's standard-normal starting matrix; ``"identity"``:
        no projection (only if ``n_out == n_base``, else skipped).
    n_out, epochs, batch_size, lr, train_levels, base_dim
        Training (:func:`train_projection`).
    repeats : int, default 1
        Projections trained per radius (the authors: 3).
    num_train_queries : int, optional
        Training images used as queries under ``"stored_train"`` (a seeded subset); default all.
    max_steps, tol, r
        Reads (:func:`evaluate_projection`).
    seed : int, default 0
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    dtype : torch.float32 or torch.float64, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
    projections : dict, optional
        ``(d, repeat) -> LearntProjection`` to evaluate instead of training.

    Returns
    -------
    ProjectionExperiment

    Raises
    ------
    ValueError
        On invalid images (shapes, non-finite values, zero rows, ``n_base`` mismatch), an unknown
        protocol or baseline, ``n_out < 1``, ``repeats < 1``, a bad ``num_train_queries``, or as
        :func:`train_projection` and :func:`evaluate_projection`.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7, Figs. 30-31; seed 002, "Convergence experiments
    (App. B.7)"; [BP21-code] (``LearnProjections.ipynb``, cells 2-3).
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    train = _images(train_images, "train_images")
    test = _images(test_images, "test_images", train.shape[1])
    protocols = _as_names(protocol, PROTOCOLS, "protocol")
    if not protocols:
        raise ValueError("no protocol given")
    baselines = _as_names(baselines, BASELINES, "baseline")
    n_out = _as_int(n_out, "n_out", minimum=1)
    radii = [_as_int(v, "d") for v in ([d] if isinstance(d, Integral) else d)]
    if not radii:
        raise ValueError("d is empty")
    repeats = _as_int(repeats, "repeats", minimum=1)
    seed = _as_int(seed, "seed")
    n_base = int(train.shape[1])
    train_queries = train
    if num_train_queries is not None:
        k = _as_int(num_train_queries, "num_train_queries")
        if not 1 <= k <= train.shape[0]:
            raise ValueError(f"num_train_queries must lie in [1, {train.shape[0]}], got {k}")
        pick = torch.randperm(train.shape[0], generator=torch.Generator().manual_seed(_seed_int(seed, 31)))
        train_queries = train[pick[:k].sort().values]
    if "identity" in baselines and n_out != n_base:
        baselines = [b_ for b_ in baselines if b_ != "identity"]

    t_train = 0.0
    trained: dict = {}
    for dv in radii:
        for rep in range(repeats):
            if projections is not None and (dv, rep) in projections:
                trained[(dv, rep)] = projections[(dv, rep)]
                continue
            t0 = time.perf_counter()
            trained[(dv, rep)] = train_projection(
                train, n_out, d=dv, epochs=epochs, batch_size=batch_size, lr=lr,
                train_levels=train_levels, base_dim=base_dim, seed=_seed_int(seed, dv, rep),
                device=device, dtype=dtype)
            t_train += time.perf_counter() - t0

    t0 = time.perf_counter()
    frames = []
    bounds = []
    for prot in protocols:
        memory, queries = _protocol_sets(prot, train, test, train_queries)
        _, near_cos, stored = nearest_stored(memory, queries, device=device)
        bounds.append({"protocol": prot, "description": _PROTOCOL_DOC[prot],
                       "memory": int(memory.shape[0]), "targets": int(queries.shape[0]),
                       "stored": float(stored.mean()), "bound_mean": float(near_cos.mean()),
                       "bound_median": float(np.median(near_cos)), "bound_min": float(near_cos.min())})
        for (dv, rep), proj in trained.items():
            candidates = [("learnt", proj)]
            if "random" in baselines:
                candidates.append(("random", proj.initial_weight))
            if "identity" in baselines:
                candidates.append(("identity", torch.eye(n_base, dtype=torch.float64)))
            for pname, pw in candidates:
                fr = evaluate_projection(pw, memory, queries, rules=rules, d=dv, levels=levels,
                                         base_dim=base_dim, max_steps=max_steps, tol=tol, r=r,
                                         seed=_seed_int(seed, dv, rep, 17), device=device, dtype=dtype,
                                         protocol=prot, projection_name=pname)
                fr.insert(2, "repeat", rep)
                frames.append(fr)
    frame = pd.concat(frames, ignore_index=True)
    frame["protocol"] = pd.Categorical(frame["protocol"].astype(str), categories=protocols)
    pnames = ["learnt"] + [b_ for b_ in BASELINES if b_ in baselines]
    frame["projection"] = pd.Categorical(frame["projection"].astype(str), categories=pnames)
    frame["rule"] = pd.Categorical(frame["rule"].astype(str), categories=list(dict.fromkeys(
        resolve_algorithm(r_) for r_ in ([rules] if isinstance(rules, str) else rules))))
    t_eval = time.perf_counter() - t0
    training = pd.concat([proj.curve().assign(d=dv, repeat=rep) for (dv, rep), proj in trained.items()],
                         ignore_index=True)[["d", "repeat", "epoch", "loss", "cosine"]]
    config = dict(protocols=protocols, d=radii, rules=list(frame["rule"].cat.categories),
                  levels=list(levels), baselines=list(baselines), n_out=n_out, n_base=n_base,
                  epochs=epochs, batch_size=batch_size, lr=lr, train_levels=tuple(train_levels),
                  base_dim=base_dim, repeats=repeats, num_train=int(train.shape[0]),
                  num_test=int(test.shape[0]), num_train_queries=int(train_queries.shape[0]),
                  max_steps=max_steps, tol=tol, r=r, seed=seed, dtype=str(dtype))
    return ProjectionExperiment(frame=frame, summary=summarize_projection(frame), training=training,
                                bounds=pd.DataFrame(bounds), projections=trained, config=config,
                                seconds={"train": t_train, "evaluate": t_eval})


def summarize_projection(frame: pd.DataFrame, threshold: float = 0.99) -> pd.DataFrame:
    """Average an :func:`evaluate_projection` frame per protocol, projection, rule, radius, level.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`evaluate_projection` or :attr:`ProjectionExperiment.frame`.
    threshold : float, default 0.99
        A query counts as retrieved when its final cosine to the target is at least this.

    Returns
    -------
    pandas.DataFrame
        One row per group: ``count``, ``cosine`` (mean), ``cosine_sem``, ``retrieved`` (share
        with cosine >= threshold), ``nearest_bound`` (mean), ``gap`` (mean of
        ``nearest_bound - cosine``), ``exceeds_bound`` (share), ``retrieved_is_nearest``
        (share), ``retrieved_cosine`` (mean), ``target_stored`` (share), ``steps`` (mean).

    Raises
    ------
    ValueError
        If columns are missing or ``threshold`` is not a number in ``[-1, 1]``.
    """
    need = {"protocol", "projection", "rule", "d", "level", "query_cosine", "cosine", "nearest_bound",
            "exceeds_bound", "retrieved_is_nearest", "retrieved_cosine", "target_stored", "steps"}
    missing = need - set(frame.columns)
    if missing:
        raise ValueError(f"frame lacks the columns {sorted(missing)}")
    threshold = _as_float(threshold, "threshold")
    if abs(threshold) > 1:
        raise ValueError(f"threshold must lie in [-1, 1], got {threshold}")
    f = frame.assign(retrieved=frame["cosine"] >= threshold, gap=frame["nearest_bound"] - frame["cosine"])
    keys = ["protocol", "projection", "rule", "d", "level"]
    g = f.groupby(keys, observed=True, sort=True)
    out = g.agg(count=("cosine", "size"), query_cosine=("query_cosine", "mean"),
                cosine=("cosine", "mean"), cosine_sem=("cosine", "sem"),
                retrieved=("retrieved", "mean"), nearest_bound=("nearest_bound", "mean"),
                gap=("gap", "mean"), exceeds_bound=("exceeds_bound", "mean"),
                retrieved_is_nearest=("retrieved_is_nearest", "mean"),
                retrieved_cosine=("retrieved_cosine", "mean"),
                target_stored=("target_stored", "mean"), steps=("steps", "mean")).reset_index()
    return out
