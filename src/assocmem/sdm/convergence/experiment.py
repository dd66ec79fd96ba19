"""The convergence experiment of App. B.7: every rule and radius on the same perturbed queries.

For each pattern set, perturbation level and repeat, Bricken & Pehlevan (2021), App. B.7
(Figs. 18-31), perturb stored patterns, iterate every read rule at every radius from the same
queries to convergence, and record the cosine of the final state to its target.
:func:`convergence_experiment` runs that protocol (random patterns or rows of a data set such as
the digits) and returns a tidy :class:`pandas.DataFrame`, one row per convergence, with every
random draw derived from one master seed through independent streams keyed by (set, level,
repeat, rule, radius), so a run with fewer rules or radii reproduces the corresponding rows of a
larger run. The authors' parameters are in their ``SDM_Experiments.ipynb`` ([BP21-code] in
:mod:`assocmem.sdm.convergence`). Chapter 36 runs it through the presets
(:mod:`assocmem.sdm.convergence.presets`, :mod:`assocmem.sdm.convergence_sweeps`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.devices import resolve_device, torch_threads
from assocmem.sdm._common import _real_array, _unit_norm
from assocmem.progress import progress
from assocmem.sdm.convergence._common import _check_dtype, _seed_int
from assocmem.sdm.convergence.algorithms import (
    _SPECS,
    ALGORITHMS,
    ALL_ALGORITHMS,
    PAPER_MAX_PERTURBATION,
    PAPER_NEURONS,
    _algorithm_names,
    paper_radii,
)
from assocmem.sdm.convergence.perturbations import (
    make_queries,
    perturbation_levels,
    random_patterns,
)
from assocmem.sdm.convergence.read_rules import ReadRule
from assocmem.sdm.convergence.retrieval import converge, cosine_to_target
from assocmem.dtypes import resolve_dtype

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Iterable

__all__ = [
    "convergence_experiment",
]


def convergence_experiment(n: int = 64, m: int = 1024, radii: Iterable[int] | None = None,
                           algorithms: str | Iterable[str] = ALGORITHMS, levels: Iterable[int] | None = None,
                           num_queries: int | None = None, seed: int = 0,
                           device: str | torch.device | None = None, *, num_datasets: int = 1,
                           num_repeats: int = 1, r: int | float | None = None,
                           beta_convention: str = "authors", max_steps: int = 100, tol: float = 0.05,
                           dtype: torch.dtype | None = None, ensure_closest: bool | None = None,
                           data: ArrayLike | None = None, rule_options: dict | None = None,
                           setting: str | None = None, num_threads: int | None = None,
                           show_progress: bool = True) -> pd.DataFrame:
    """Run the App. B.7 convergence experiment; one row per convergence.

    For each pattern set (``num_datasets``), level and repeat, ``num_queries`` stored patterns
    are perturbed (binary: ``k`` flipped bits; continuous: cosine ``1 - 2k/n``) and every rule
    and radius iterates the *same* queries to convergence (:func:`converge`). The metric is the
    cosine of the final state to the target (:func:`cosine_to_target`).

    Parameters
    ----------
    n : int, default 64
        Dimension (ignored if ``data`` is given).
    m : int, default 1024
        Stored patterns per set.
    radii : iterable of int, optional
        Radii ``d``; default :func:`paper_radii` ``(n)``.
    algorithms : str or iterable of str, default :data:`ALGORITHMS`
        Rule names (:func:`resolve_algorithm`); a single name runs that one rule.
    levels : iterable of int, optional
        Perturbation levels; default ``perturbation_levels(PAPER_MAX_PERTURBATION[n])``.
    num_queries : int, optional
        Targets per pattern set and repeat, ``1 <= num_queries <= m`` (default ``m``: every
        stored pattern, as the authors). A seeded subset, the same for every level and repeat.
    seed : int, default 0
        Master seed. Patterns, targets, perturbations and stochastic rounding all derive from
        it through independent streams keyed by (set, level, repeat, rule, radius), so a run with
        fewer rules or radii reproduces the corresponding rows of a larger run.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    num_datasets : int, default 1
        Independent pattern sets (the authors: 3).
    num_repeats : int, default 1
        Perturbation draws per set and level (the authors: 5).
    r : int or float, optional
        Neurons for the neuron-limited rules; default ``PAPER_NEURONS[n]``.
    beta_convention : {"authors", "ols"}, default "authors"
    max_steps : int, default 100
    tol : float, default 0.05
    dtype : torch.float32 or torch.float64, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Floating type of the reads (float32 is about twice as fast on CPUs; cosines are
        reported in float64).
    ensure_closest : bool, optional
        Redraw queries that have a stored pattern closer than their target (default: True for
        random patterns, False for ``data``, as the authors).
    data : array_like, shape ``(N, n)``, optional
        Real patterns (e.g. :func:`assocmem.datasets.load_digits_patterns`) instead of random
        ones: each set stores ``m`` rows drawn without replacement; binary rules use
        ``1[x > 0]``. Store and query the *same* rows: querying with held-out rows asks for a
        target that was never stored (the learnt-projection artefact of App. B.7).
    rule_options : dict, optional
        Extra keyword arguments for every :class:`ReadRule` (e.g. ``{"authors_cap_counts":
        True}``, ``{"cap_table_size": 16385}``).
    setting : str, optional
        Value of the ``setting`` column that labels these rows (default ``"n=<n>"``); the
        analysis functions keep settings apart, so runs of the same ``n`` with different ``r``
        can be concatenated.
    num_threads : int, optional
        torch CPU threads for the run, restored afterwards (see :func:`run_preset`; one
        thread is usually fastest for these small reads). Default: leave torch's setting.
    show_progress : bool, default True
        Progress bar (silent under CI, see :mod:`assocmem.progress`).

    Returns
    -------
    pandas.DataFrame
        Columns ``setting`` (categorical), ``algorithm`` (categorical), ``space``, ``n``, ``m``, ``d``, ``r`` (NaN where
        not used), ``beta`` (NaN where not used), ``level``, ``dataset``, ``repeat``,
        ``query`` (target row), ``cosine`` (final cosine to the target), ``steps``, ``stopped``
        (the stopping rule fired), ``zero_weights`` (the last read had all weights zero). The
        attribute ``attrs["config"]`` records the arguments.

    Raises
    ------
    ValueError
        On unknown algorithms, a radius outside ``[0, n]``, an invalid level, ``num_queries``
        outside ``[1, m]``, ``m`` larger than ``data`` has rows, ``data`` with non-finite,
        boolean or string entries or a zero row, a missing ``levels`` or ``r`` for an ``n``
        without a paper default, empty ``radii`` or ``levels``, ``max_steps < 0``, a ``tol``
        that is not a finite number ``>= 0``, a float16/bfloat16 ``dtype``, or bad counts (all
        checked before any rule is built).
    RuntimeError
        If queries cannot be drawn with the target closest (:func:`make_queries`).

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (Figs. 18-31); the authors' ``SDM_Experiments.ipynb``
    ([BP21-code]); [S002] claim C5.
    """
    dtype = resolve_dtype(dtype)
    algos = _algorithm_names(algorithms)
    if not algos:
        raise ValueError("algorithms is empty")
    if len(set(algos)) != len(algos):
        raise ValueError(f"algorithms has duplicates: {algos}")
    m = _as_int(m, "m")
    if data is not None:
        data_arr = _real_array(data, "data")  # no booleans, strings, float16, NaN or inf
        if data_arr.ndim != 2:
            raise ValueError(f"data must have shape (N, n), got {data_arr.shape}")
        n = data_arr.shape[1]
        if m > data_arr.shape[0]:
            raise ValueError(f"m = {m} exceeds the {data_arr.shape[0]} rows of data")
        if np.any(np.linalg.norm(data_arr, axis=1) == 0):
            raise ValueError("data has a zero row, which cannot be L2-normalised")
    n = _as_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    radii = paper_radii(n) if radii is None else [_as_int(v, "d") for v in radii]
    for d in radii:
        if d < 0 or d > n:
            raise ValueError(f"radius d = {d} outside [0, n] = [0, {n}]")
    if levels is None:
        if n not in PAPER_MAX_PERTURBATION:
            raise ValueError(f"no paper perturbation levels for n = {n}; pass levels")
        levels = perturbation_levels(PAPER_MAX_PERTURBATION[n])
    levels = [_as_int(v, "level") for v in levels]
    for k in levels:
        if k < 0 or k > n:
            raise ValueError(f"perturbation level {k} outside [0, n] = [0, {n}]")
    num_queries = m if num_queries is None else _as_int(num_queries, "num_queries")
    if not 1 <= num_queries <= m:
        raise ValueError(f"num_queries must lie in [1, m] = [1, {m}], got {num_queries}")
    num_datasets = _as_int(num_datasets, "num_datasets")
    num_repeats = _as_int(num_repeats, "num_repeats")
    if num_datasets < 1 or num_repeats < 1:
        raise ValueError("num_datasets and num_repeats must be >= 1")
    specs = {a: _SPECS[a] for a in algos}
    if any(s.needs_r for s in specs.values()) and r is None:
        if n not in PAPER_NEURONS:
            raise ValueError(f"no paper neuron count for n = {n}; pass r")
        r = PAPER_NEURONS[n]
    if ensure_closest is None:
        ensure_closest = data is None
    seed = _as_int(seed, "seed")
    # checked here, before any rule is built, not at the first convergence
    max_steps = _as_int(max_steps, "max_steps")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    try:
        tol = as_real(tol, "tol")
    except ValueError:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}") from None
    if tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    if not radii or not levels:
        raise ValueError(f"radii and levels must be nonempty, got radii = {radii}, levels = {levels}")
    dtype = _check_dtype(dtype)
    dev = resolve_device(device, dtype=dtype)

    options = dict(rule_options or {})
    clash = {"r", "beta_convention", "seed", "device", "dtype"} & set(options)
    if clash:
        raise ValueError(f"rule_options cannot set {sorted(clash)}; use the experiment's arguments")
    rules = {}
    for d in radii:
        for a in algos:
            rules[(a, d)] = ReadRule(a, n, d, r=r if specs[a].needs_r else None,
                                     beta_convention=beta_convention,
                                     seed=_seed_int(seed, 7, d, ALL_ALGORITHMS.index(a)), device=dev,
                                     dtype=dtype, **options)
    setting = f"n={n}" if setting is None else str(setting)
    with torch_threads(num_threads, dev):
        pieces = _run(rules, algos, n, m, data_arr if data is not None else None, levels, num_queries,
                      num_datasets, num_repeats, seed, max_steps, tol, bool(ensure_closest),
                      show_progress)
    frame = _frame(pieces, n, m, algos, setting)
    frame.attrs["config"] = dict(n=n, m=m, radii=list(radii), algorithms=algos, levels=levels,
                                 num_queries=num_queries, num_datasets=num_datasets,
                                 num_repeats=num_repeats, r=r, beta_convention=beta_convention,
                                 max_steps=max_steps, tol=tol, seed=seed, device=str(dev),
                                 dtype=str(dtype), data=data is not None,
                                 ensure_closest=bool(ensure_closest), rule_options=options,
                                 setting=setting)
    return frame


def _run(rules: dict, algos: list[str], n: int, m: int, data_arr, levels, num_queries: int,
         num_datasets: int, num_repeats: int, seed: int, max_steps: int, tol: float,
         ensure_closest: bool, show_progress: bool) -> list[dict]:
    """The loops of :func:`convergence_experiment`: sets, levels, repeats, then every rule."""
    want_binary = any(rule.is_binary for rule in rules.values())
    want_cont = any(not rule.is_binary for rule in rules.values())
    pieces = []
    total = num_datasets * len(levels) * num_repeats
    bar = progress(None, total=total, desc=f"convergence n={n}") if show_progress else None
    for ds in range(num_datasets):
        if data_arr is None:
            pb, pc = random_patterns(m, n, seed=_seed_int(seed, 1, ds))
        else:
            rows = np.random.default_rng(_seed_int(seed, 1, ds)).choice(data_arr.shape[0], m, replace=False)
            x = torch.as_tensor(data_arr[rows])
            pb = (x > 0).to(torch.uint8)
            pc = x / _unit_norm(x)  # no overflow of the norm for entries above 1e154
        targets = np.sort(np.random.default_rng(_seed_int(seed, 2, ds)).permutation(m)[:num_queries]) \
            if num_queries < m else np.arange(m)
        tidx = torch.as_tensor(targets, dtype=torch.int64)
        tb, tc = pb[tidx], pc[tidx]
        prepared = {key: rule.prepare(pb if rule.is_binary else pc) for key, rule in rules.items()}
        for k in levels:
            for rep in range(num_repeats):
                qb, qc = make_queries(pb if want_binary else None, pc if want_cont else None,
                                      targets, k, seed=_seed_int(seed, 3, ds, k, rep),
                                      ensure_closest=ensure_closest)
                for (a, d), rule in rules.items():
                    rule.manual_seed(_seed_int(seed, 4, ds, k, rep, d, ALL_ALGORITHMS.index(a)))
                    q, tgt = (qb, tb) if rule.is_binary else (qc, tc)
                    res = converge(rule, q, prepared[(a, d)], max_steps=max_steps, tol=tol)
                    cos = cosine_to_target(res.states, tgt.to(res.states.device), rule.space)
                    pieces.append({
                        "algorithm": a, "space": rule.space, "d": d,
                        "r": float(rule.r) if rule.r is not None else math.nan,
                        "beta": rule.beta if rule.beta is not None else math.nan,
                        "level": k, "dataset": ds, "repeat": rep,
                        "query": targets.astype(np.int32),
                        "cosine": cos.cpu().numpy(),
                        "steps": res.steps.cpu().numpy().astype(np.int16),
                        "stopped": res.stopped.cpu().numpy(),
                        "zero_weights": res.zero_weights.cpu().numpy(),
                    })
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    return pieces


_COLUMNS = ["setting", "algorithm", "space", "n", "m", "d", "r", "beta", "level", "dataset", "repeat",
            "query", "cosine", "steps", "stopped", "zero_weights"]


def _frame(pieces: list[dict], n: int, m: int, algos: list[str], setting: str) -> pd.DataFrame:
    if not pieces:
        return pd.DataFrame(columns=_COLUMNS)
    lengths = [len(p["query"]) for p in pieces]
    rep = lambda key, dtype: np.repeat(np.array([p[key] for p in pieces], dtype=dtype), lengths)  # noqa: E731
    frame = pd.DataFrame({
        "setting": pd.Categorical([setting] * sum(lengths), categories=[setting]),
        "algorithm": pd.Categorical(np.repeat([p["algorithm"] for p in pieces], lengths), categories=algos),
        "space": pd.Categorical(np.repeat([p["space"] for p in pieces], lengths),
                                categories=["binary", "continuous"]),
        "n": np.full(sum(lengths), n, dtype=np.int32),
        "m": np.full(sum(lengths), m, dtype=np.int32),
        "d": rep("d", np.int32),
        "r": rep("r", np.float64),
        "beta": rep("beta", np.float64),
        "level": rep("level", np.int32),
        "dataset": rep("dataset", np.int16),
        "repeat": rep("repeat", np.int16),
        "query": np.concatenate([p["query"] for p in pieces]),
        "cosine": np.concatenate([p["cosine"] for p in pieces]),
        "steps": np.concatenate([p["steps"] for p in pieces]),
        "stopped": np.concatenate([p["stopped"] for p in pieces]),
        "zero_weights": np.concatenate([p["zero_weights"] for p in pieces]),
    })
    return frame
