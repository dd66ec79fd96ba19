"""Sweeps on a language model's own MLP activations (seed 001, App. A.5.3, Figs. 12-13): chapter 17.

Seed 001 replaces its random spherical keys and values by pairs ``(x_i, y_i)`` captured at one
MLP block of a pretrained language model (Qwen3-0.6B-Base, layer 14 of 28, WikiText) and asks
whether its margin bounds and its capacity law still hold on those real, anisotropic embeddings.
The book cannot download Qwen3, so the committed presets capture the pairs from the language
model it trains itself in chapter 16 (:func:`assocmem.mlps.lm_embeddings.capture_editing_lm`);
a reader with real activations points the same code at them (``pairs`` = a ``.npz`` path written
by :func:`assocmem.mlps.lm_embeddings.save_pairs`).

Three registered sweeps:

``lm_pairs``  what the captured pairs look like: how anisotropic (the spectrum of the second-moment
    matrices of the unit-normalised inputs and outputs) and how many near-duplicates a drawn fact
    set holds (nearest-neighbour cosines).

``lm_margin``  Fig. 12: the unwhitened bilinear random-feature Hebbian MLP (Algorithm 1, sketched
    ``K_2``) of width ``m`` on ``F`` captured pairs, ``F`` log-spaced from 4 to 128, five fact
    sets per ``F``, at ``m = d`` (the source's ``d = M``) and at the source's width ``m = 1024``; per run the minimum margin ``gamma_min`` and the geometric statistics of
    App. B.5 (:func:`assocmem.mlps.margin_sweeps.statistics_row`). Chapter 17 fits the
    arbitrary-keys-and-values bound (eq. 44, through ``K_min^diag``, ``E_K``, ``E_v``, ``kappa``)
    and the isotropic one (eq. 9, ``C_s - C_x sqrt(F L / (m d))``) and reports ``R^2``.
``lm_capacity``  Fig. 13: the smallest width ``m`` at which the whitened construction recalls at
    least 98 % of ``F`` captured facts (App. A.3.1's search with A.5.3's threshold), ``W = 3 m d``,
    for ``F`` doubling; chapter 17 fits the growth exponent of ``W`` in ``F`` against that of
    ``F log F``.

Pairs. ``pairs`` names where the captured pairs come from: ``"editing_lm:<preset>:<expert>"``
trains the base model of that ``fact_editing`` point (:func:`assocmem.mlps.editing_sweeps.point_base_model`,
the same seeds as chapter 16) and captures its feed-forward block at every distinct token prefix
of its training sentences; any other string is the path of a ``.npz`` of captured pairs. A process
captures each source once (:func:`sweep_pairs` caches them).

Trainings. A trained language model is a sample: every config has ``trainings`` (the grid column
``training``), and training ``r`` captures the pairs of ``fact_editing``'s training ``r`` of that
expert (the same facts, another initialisation and batch order). A fact set's seed does not
depend on the training, so the trainings are compared on the same draw protocol and seeds. A
``.npz`` source is one model's pairs: ``trainings`` must be 1.

Fact sets. :func:`assocmem.mlps.lm_embeddings.sample_fact_set`: ``F`` pairs, keys ``x_i`` and
values ``y_i`` projected on the unit sphere, identity map. Each sweep runs two draws (the grid
column ``draw``): ``"uniform"``, the seed's protocol (``F`` pairs uniformly without replacement),
and ``"separated"``, our diagnostic, which keeps no two keys and no two values with cosine above
``max_cosine = 0.999``. The book's templated corpus gives many near-duplicate pairs (the same
template position after different books; median nearest-neighbour cosine above 0.999 among
1024 drawn keys), which a uniform draw keeps and the separated one removes, so the two draws
separate what the anisotropy of the embeddings does from what near-duplicates do.

Presets: ``quick`` (the toy language model of ``fact_editing``'s quick preset; seconds plus its
training), ``cpu`` (committed: chapter 16's cpu base model, ``d = 64``), ``paper`` (the seed's
sizes, ``d = m = 1024`` and ``F`` up to ``2^14``, on real Qwen3 pairs at the path
``results/qwen3_layer14_pairs.npz``, which the book does not ship).

References
----------
Seed 001 (Garcia et al. 2026, "MLPs are Hebbians"), App. A.5.3 (Figs. 12-14), App. A.3.1 (the
capacity protocol), App. A.3.2 (the margin sweeps), Algorithm 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, as_real, positive_int, seed_int
from assocmem.devices import resolve_device, torch_threads
from assocmem.mlps.capacity_sweeps import capacity_search, search_columns
from assocmem.mlps.lm_embeddings import EmbeddingPairs, capture_editing_lm, load_pairs, sample_fact_set
from assocmem.mlps.lm_embeddings.specs import EDITING_PREFIX as _EDITING_PREFIX
from assocmem.mlps.lm_embeddings.specs import check_grid as _check_grid
from assocmem.mlps.lm_embeddings.specs import check_pairs_spec as _check_pairs_spec
from assocmem.mlps.lm_embeddings.specs import check_trainings as _check_trainings
from assocmem.mlps.margin_sweeps.points import statistics_row, sub_seeds
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import register_sweep

__all__ = [
    "LMMarginConfig",
    "LMCapacityConfig",
    "LM_MARGIN_PRESETS",
    "LM_CAPACITY_PRESETS",
    "sweep_pairs",
    "margin_points",
    "margin_point",
    "capacity_points",
    "capacity_point",
    "pairs_summary",
    "LMPairsConfig",
    "LM_PAIRS_PRESETS",
    "pairs_points",
    "pairs_point",
    "agreement_rules",
    "DRAWS",
]

#: How a fact set is drawn from the captured pairs: ``"uniform"`` (the seed's protocol) or
#: ``"separated"`` (no two keys, and no two values, closer than ``max_cosine``;
#: :func:`assocmem.mlps.lm_embeddings.sample_fact_set`).
DRAWS = ("uniform", "separated")
# keys: (spec, device, training) for a trained source, (path, device, size, mtime) for a file
_PAIRS_CACHE: dict[tuple, EmbeddingPairs] = {}


def _check_draws(draws, max_cosine) -> None:
    if not isinstance(draws, tuple) or not draws or any(d not in DRAWS for d in draws) \
            or len(set(draws)) != len(draws):
        raise ValueError(f"draws must be distinct names from {DRAWS}; got {draws!r}")
    limit = as_real(max_cosine, "max_cosine", minimum=-1.0, maximum=1.0)
    if not -1.0 < limit < 1.0:
        raise ValueError(f"max_cosine must lie in (-1, 1); got {max_cosine}")


@dataclass(frozen=True)
class LMMarginConfig:
    """Settings of ``lm_margin`` (Fig. 12).

    Raises
    ------
    ValueError
        On construction: a bad ``pairs`` spec, an empty or unsorted ``Fs`` or one below 2, a
        non-positive ``m`` or ``reps``, a bad ``trainings`` (:func:`sweep_pairs`), or a bad seed.
    """

    pairs: str  # "editing_lm:<preset>:<expert>" or a .npz path
    Fs: tuple[int, ...]  # numbers of facts
    ms: tuple[int, ...]  # hidden widths (the seed: m = d = 1024)
    reps: int = 5  # fact sets (and feature draws) per F
    draws: tuple[str, ...] = DRAWS  # "uniform" (the seed's) and/or "separated"
    max_cosine: float = 0.999  # the separated draw's largest cosine between two keys or two values
    trainings: int = 1  # language-model trainings the pairs are captured from
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        _check_pairs_spec(self.pairs)
        _check_grid("Fs", self.Fs)
        _check_draws(self.draws, self.max_cosine)
        if not isinstance(self.ms, tuple) or not self.ms:
            raise ValueError(f"ms must be a non-empty tuple of widths; got {self.ms!r}")
        for m in self.ms:
            positive_int("m", m)
        if list(self.ms) != sorted(set(self.ms)):
            raise ValueError(f"ms must be increasing without repeats; got {self.ms}")
        positive_int("reps", self.reps)
        _check_trainings(self.pairs, self.trainings)
        seed_int(self.seed)


@dataclass(frozen=True)
class LMCapacityConfig:
    """Settings of ``lm_capacity`` (Fig. 13).

    Raises
    ------
    ValueError
        On construction: a bad ``pairs`` spec, a bad ``Fs`` grid, a ``target`` outside ``(0, 1]``,
        a bad search range or ``reps``, a bad ``trainings``, or a bad seed.
    """

    pairs: str
    Fs: tuple[int, ...]
    target: float = 0.98  # per-fact recall to reach (App. A.5.3)
    reps: int = 1  # fact sets per F
    draws: tuple[str, ...] = DRAWS
    max_cosine: float = 0.999
    lo: int = 1
    hi: int = 65536
    verify: int = 2
    trainings: int = 1
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        _check_pairs_spec(self.pairs)
        _check_grid("Fs", self.Fs)
        _check_draws(self.draws, self.max_cosine)
        as_real(self.target, "target", minimum=0.0, strict_min=True, maximum=1.0)
        positive_int("reps", self.reps)
        lo = as_int(self.lo, "lo", minimum=1)
        if as_int(self.hi, "hi", minimum=1) < lo:
            raise ValueError(f"hi must be >= lo; got lo={self.lo}, hi={self.hi}")
        as_int(self.verify, "verify", minimum=0)
        _check_trainings(self.pairs, self.trainings)
        seed_int(self.seed)


def sweep_pairs(spec: str, device: str | torch.device | None = None, training: int = 0) -> EmbeddingPairs:
    """The captured pairs a sweep config names, computed once per process and source.

    Parameters
    ----------
    spec : str
        ``"editing_lm:<preset>:<expert>"`` (train the base model of that ``fact_editing`` point and
        capture it, on one thread whatever torch's setting: a trained model's pairs depend on the
        thread count through rounding; a minute or two for the ``cpu`` preset) or the path of a
        ``.npz`` of pairs (cached by path, size and modification time, so a rewritten file is read
        again).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where the language model trains and the pairs live.
    training : int, default 0
        Which of the ``fact_editing`` point's trainings (``0 .. trainings - 1`` of its preset);
        must be 0 for a file.

    Returns
    -------
    EmbeddingPairs

    Raises
    ------
    ValueError
        A malformed spec, an unknown preset, an expert that preset does not train, or a
        training outside the preset's (any but 0 for a file).
    FileNotFoundError
        A path with no file.
    """
    device = resolve_device(device)
    spec = _check_pairs_spec(spec)
    training = as_int(training, "training", minimum=0)
    if spec.startswith(_EDITING_PREFIX):
        key = (spec, str(device), training)
    else:
        if training:
            raise ValueError(f"training must be 0 for pairs read from a file; got {training}")  # a file: its identity is its resolved path, size and modification time
        path = Path(spec).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"no captured pairs at {path} (write them with save_pairs)")
        st = path.stat()
        key = (str(path), str(device), st.st_size, st.st_mtime_ns)
    if key not in _PAIRS_CACHE:
        if spec.startswith(_EDITING_PREFIX):
            from assocmem._checks import lookup
            from assocmem.mlps.editing_sweeps import FACT_EDITING_PRESETS, point_base_model

            _, preset, expert = spec.split(":")
            config = lookup(FACT_EDITING_PRESETS, preset)
            widths = [m for e, m in config.experts if e == expert]
            if not widths:
                raise ValueError(f"the {preset!r} preset of fact_editing trains no {expert!r} expert; "
                                 f"it has {[e for e, _ in config.experts]}")
            # one thread, as chapter 16's sweep workers: training amplifies rounding, so the
            # captured pairs (and every stored row) depend on the thread count
            with torch_threads(1):
                point = {"expert": expert, "m": widths[0], "training": training}
                corpus, model, _ = point_base_model(config, point, device)
                pairs = capture_editing_lm(model, corpus)
        else:
            pairs = load_pairs(spec)
        _PAIRS_CACHE[key] = pairs
    return _PAIRS_CACHE[key]


def pairs_summary(pairs: EmbeddingPairs, top: int = 5) -> dict:
    """How anisotropic the captured directions are: the spectrum of their second-moment matrices.

    For the unit-normalised inputs (and outputs) ``u_i``, ``S = (1/N) sum_i u_i u_i^T`` has trace 1;
    on the isotropic sphere every eigenvalue is ``1/d``. Reported: ``N``, ``d``, the largest
    eigenvalues times ``d`` (1 when isotropic), and the participation ratio
    ``(sum lambda)^2 / sum lambda^2`` (``d`` when isotropic, 1 for a single direction), and the
    mean absolute cosine between distinct rows of a uniform random sample (seed 0) of at most 2048
    rows (about ``sqrt(2 / (pi d))`` when isotropic).

    Returns
    -------
    dict
        ``N, d, d_out``, ``x_top`` / ``y_top`` (arrays of ``top`` values), ``x_participation``,
        ``y_participation``, ``x_mean_abs_cos``, ``y_mean_abs_cos``.

    Raises
    ------
    ValueError
        ``pairs`` is not :class:`EmbeddingPairs`, or ``top`` is not a positive integer.
    """
    if not isinstance(pairs, EmbeddingPairs):
        raise ValueError(f"pairs must be EmbeddingPairs; got {type(pairs).__name__}")
    top = positive_int("top", top)
    out: dict = {"N": len(pairs), "d": pairs.d_in, "d_out": pairs.d_out}
    for name, z in (("x", pairs.inputs), ("y", pairs.outputs)):
        u = torch.nn.functional.normalize(z.to(torch.float64), dim=1)
        lam = torch.linalg.eigvalsh(u.T @ u / len(u)).flip(0)
        out[f"{name}_top"] = (lam[:top] * u.shape[1]).cpu().numpy()
        out[f"{name}_participation"] = float(lam.sum() ** 2 / (lam ** 2).sum())
        rows = np.random.default_rng(0).permutation(len(u))[: min(len(u), 2048)]
        s = u[torch.from_numpy(np.sort(rows)).to(u.device)]
        c = (s @ s.T).abs()
        n = s.shape[0]
        out[f"{name}_mean_abs_cos"] = float((c.sum() - c.diagonal().sum()) / max(n * (n - 1), 1))
    return out


# --------------------------------------------------------------------------------------------
# lm_pairs: what the captured pairs look like


@dataclass(frozen=True)
class LMPairsConfig:
    """Settings of ``lm_pairs``: one row describing a source of captured pairs.

    Raises
    ------
    ValueError
        On construction: a bad ``pairs`` spec, a ``sample`` below 2, a ``max_cosine`` outside
        ``(-1, 1)``, a bad ``trainings``, or a bad seed.
    """

    pairs: str
    sample: int = 1024  # fact-set size at which nearest-neighbour cosines are measured
    max_cosine: float = 0.999  # the separated draw's limit (as in the other two sweeps)
    trainings: int = 1
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        _check_pairs_spec(self.pairs)
        as_int(self.sample, "sample", minimum=2)
        _check_draws(DRAWS, self.max_cosine)
        _check_trainings(self.pairs, self.trainings)
        seed_int(self.seed)


def pairs_points(config: LMPairsConfig) -> list[dict]:
    """One point per training and draw, ``{"training": r, "draw": draw}``."""
    return [{"training": r, "draw": d} for r in range(config.trainings) for d in DRAWS]


def pairs_point(config: LMPairsConfig, point: dict, device: torch.device) -> dict:
    """:func:`pairs_summary` of the source, and nearest-neighbour cosines in one drawn fact set.

    Returns
    -------
    dict
        ``N, d``, the participation ratios and mean absolute cosines of the inputs and outputs,
        the three largest eigenvalues of each second-moment matrix (times ``d``: ``x_top1`` ..
        ``y_top3``), and for one fact set of ``sample`` facts drawn as ``point["draw"]`` says:
        the median and 90th percentile of each key's (value's) largest cosine with another key
        (value), ``key_nn_median``, ``key_nn_p90``, ``value_nn_median``, ``value_nn_p90``, and the
        fraction of keys (values) with a neighbour above cosine ``1 - 1e-4``,
        ``key_near_duplicate``, ``value_near_duplicate``.
    """
    pairs = sweep_pairs(config.pairs, training=point["training"])
    summary = pairs_summary(pairs, top=3)
    row = {"N": summary["N"], "d": summary["d"]}
    for z in ("x", "y"):
        row[f"{z}_participation"] = summary[f"{z}_participation"]
        row[f"{z}_mean_abs_cos"] = summary[f"{z}_mean_abs_cos"]
        for i, v in enumerate(summary[f"{z}_top"], start=1):
            row[f"{z}_top{i}"] = float(v)
    seed = sub_seeds(point_seed(config, {"draw": point["draw"]}), 1)[0]  # the same for every training
    limit = config.max_cosine if point["draw"] == "separated" else None
    facts = sample_fact_set(pairs, config.sample, seed=seed, max_cosine=limit)
    for name, z in (("key", facts.keys), ("value", facts.values)):
        c = z @ z.T
        c.fill_diagonal_(-2.0)
        nn = c.amax(dim=1).cpu().numpy()
        row[f"{name}_nn_median"] = float(np.median(nn))
        row[f"{name}_nn_p90"] = float(np.quantile(nn, 0.9))
        row[f"{name}_near_duplicate"] = float(np.mean(nn > 1 - 1e-4))
    return row


# --------------------------------------------------------------------------------------------
# lm_margin (Fig. 12)


def _draw(config, point: dict, seed: int):
    """The fact set of one point: ``F`` captured pairs, drawn as ``point["draw"]`` says."""
    pairs = sweep_pairs(config.pairs, training=point["training"])
    limit = config.max_cosine if point["draw"] == "separated" else None
    return pairs, sample_fact_set(pairs, point["F"], seed=seed, max_cosine=limit)


def _grid(config) -> list[dict]:
    return [{"training": t, "draw": d, "F": int(F), "rep": r} for t in range(config.trainings)
            for d in config.draws for F in config.Fs for r in range(config.reps)]


def margin_points(config: LMMarginConfig) -> list[dict]:
    """The grid ``{"training": t, "draw": draw, "m": m, "F": F, "rep": r}``, training-major, then
    draw, width and F.

    A replicate ``r`` at one ``F`` draws with the same seed at every width and training (its seed
    depends on neither), so the widths are compared on the same facts.
    """
    return [{"training": t, "draw": d, "m": int(m), "F": int(F), "rep": r} for t in range(config.trainings)
            for d in config.draws for m in config.ms for F in config.Fs for r in range(config.reps)]


def margin_point(config: LMMarginConfig, point: dict, device: torch.device) -> dict:
    """``gamma_min`` and the App. B.5 statistics of one fact set of captured pairs.

    Returns
    -------
    dict
        The columns of :func:`~assocmem.mlps.margin_sweeps.statistics_row`, ``kernel = "sketch"``
        (so that :func:`~assocmem.mlps.margin_sweeps.fit_isotropic_sweep` reads the rows) and
        ``n_pairs`` (the pairs drawn from).

    Raises
    ------
    ValueError
        ``F`` above the number of captured pairs.
    """
    base = {k: point[k] for k in ("draw", "F", "rep")}  # the fact set and features: shared by every m
    facts_seed, feature_seed = sub_seeds(point_seed(config, base), 2)
    pairs, facts = _draw(config, point, facts_seed)
    row = statistics_row(facts.to(device), point["m"], feature_seed)
    del row["F"], row["m"]  # point keys
    row.update(kernel="sketch", n_pairs=len(pairs))
    return row


# --------------------------------------------------------------------------------------------
# lm_capacity (Fig. 13)


def capacity_points(config: LMCapacityConfig) -> list[dict]:
    """The grid ``{"training": t, "draw": draw, "F": F, "rep": r}``, training-major, then draw and F."""
    return _grid(config)


def capacity_point(config: LMCapacityConfig, point: dict, device: torch.device) -> dict:
    """The smallest whitened width recalling ``target`` of ``F`` captured facts.

    Returns
    -------
    dict
        :func:`~assocmem.mlps.capacity_sweeps.search_columns` (``m``, ``W = 3 m d``, ``found``,
        the search's record), ``method = "whitened"``, ``geometry = "lm"``, ``d``, ``target`` and
        ``n_pairs``.
    """
    base = {k: point[k] for k in ("draw", "F", "rep")}  # the same seeds for every training
    facts_seed, weight_seed = sub_seeds(point_seed(config, base), 2)
    pairs, facts = _draw(config, point, facts_seed)
    res = capacity_search(facts.to(device), "whitened", weight_seed, lo=config.lo, hi=config.hi, verify=config.verify,
                          target=config.target)
    d = int(facts.keys.shape[1])
    return {"method": "whitened", "geometry": "lm", "d": d, **search_columns(res, d),
            "target": float(config.target), "n_pairs": len(pairs)}


# --------------------------------------------------------------------------------------------
# live rows against stored rows

_SEARCH_COLUMNS = ("m", "W", "found", "accuracy", "best_accuracy", "n_evaluations", "monotone_violations",
                   "restarts")


def agreement_rules(sweep: str, stored: pd.DataFrame) -> dict:
    """The rules by which a live run of ``lm_margin`` or ``lm_capacity`` must agree with stored rows.

    The pairs come from a *trained* language model, and a training is a sample: on another CPU or
    thread count it sums in another order and ends elsewhere, so the captured pairs and every
    margin move. A live row is therefore checked against the spread of the stored trainings of
    its point (:func:`assocmem.sweeps.check_spread`: inside the 99 % prediction interval of one
    further training, the column's pooled spread as a floor, widened by the column's
    resolution), never against one training's digits:

    * ``lm_margin``: every continuous column (the margins and the App. B.5 statistics) with
      resolution 0; ``frac_positive`` with one fact's share at the smallest ``F``; ``d``,
      ``kernel`` and ``n_pairs`` (set by the corpus alone) equal.
    * ``lm_capacity``: a search's columns with the resolution of one search step (one hidden
      unit in ``m``, ``3 d`` in ``W``, one fact's share at the smallest ``F`` in the accuracies,
      one evaluation, violation or restart); ``found`` with none; sizes, ``method``,
      ``geometry``, ``target`` and ``n_pairs`` equal.

    ``seed`` (a training's own) and ``wall_time_s`` are ignored, and so is ``violation_widths``
    (a list written as text; its count, ``monotone_violations``, is compared). Rows are matched
    on ``draw, m, F, rep`` (``lm_margin``) or ``draw, F, rep`` (``lm_capacity``).

    Parameters
    ----------
    sweep : {"lm_margin", "lm_capacity"}
    stored : pandas.DataFrame
        The stored rows, with a ``training`` column.

    Returns
    -------
    dict
        Keyword arguments ``keys``, ``columns``, ``exact``, ``ignore`` for
        :func:`assocmem.sweeps.check_spread`.

    Raises
    ------
    ValueError
        An unknown sweep or a frame without its columns.
    """
    if sweep == "lm_margin":
        exact = ["d", "kernel", "n_pairs"]
        keys = ["draw", "m", "F", "rep"]
        missing = {"gamma_min", "kappa", "frac_positive", "training", *keys, *exact} - set(stored.columns)
        if missing:
            raise ValueError(f"stored rows lack {sorted(missing)}")
        skip = {*keys, "training", "wall_time_s", "seed", "frac_positive", *exact}
        columns = {c: 0.0 for c in stored.columns if c not in skip}
        columns["frac_positive"] = 1.0 / float(stored["F"].min())
        return {"keys": keys, "columns": columns, "exact": exact, "ignore": ["wall_time_s", "seed"]}
    if sweep == "lm_capacity":
        exact = ["method", "geometry", "d", "target", "n_pairs"]
        keys = ["draw", "F", "rep"]
        missing = {*_SEARCH_COLUMNS, "training", *keys, *exact} - set(stored.columns)
        if missing:
            raise ValueError(f"stored rows lack {sorted(missing)}")
        step = 1.0 / float(stored["F"].min())
        columns = {"m": 1.0, "W": 3.0 * float(stored["d"].max()), "found": 0.0, "accuracy": step,
                   "best_accuracy": step, "n_evaluations": 1.0, "monotone_violations": 1.0, "restarts": 1.0}
        return {"keys": keys, "columns": columns, "exact": exact,
                "ignore": ["wall_time_s", "seed", "violation_widths"]}
    raise ValueError(f"sweep must be 'lm_margin' or 'lm_capacity'; got {sweep!r}")


def _log_ints(lo: int, hi: int, num: int) -> tuple[int, ...]:
    return tuple(sorted({int(round(v)) for v in np.geomspace(lo, hi, num)}))


_QWEN3_PATH = "results/qwen3_layer14_pairs.npz"
_CPU_NOTE = ("pairs captured from chapter 16's cpu base model (the book-author LM, d = 64, with its GD "
             "fact expert trained on squared error), trained on one thread, "
             "instead of Qwen3-0.6B-Base on WikiText (d = 1024), which cannot be downloaded here")

LM_MARGIN_PRESETS = {
    "quick": LMMarginConfig(pairs="editing_lm:quick:gd_mse", Fs=(4, 8, 16, 32), ms=(32, 256), reps=2, trainings=3,
                            notes=("the toy LM of fact_editing's quick preset (d = 32)",)),
    "cpu": LMMarginConfig(pairs="editing_lm:cpu:gd_mse", Fs=_log_ints(4, 128, 11), ms=(64, 1024), reps=5,
                          trainings=3,
                          notes=(_CPU_NOTE + "; m = d, as the source's d = M, and m = 1024, the source's width; "
                                 "three trainings of the language model",)),
    "paper": LMMarginConfig(pairs=_QWEN3_PATH, Fs=_log_ints(4, 128, 11), ms=(1024,), reps=5,
                            notes=("real Qwen3-0.6B-Base layer-14 pairs, which the book does not ship",)),
}

LM_CAPACITY_PRESETS = {
    "quick": LMCapacityConfig(pairs="editing_lm:quick:gd_mse", Fs=(32, 64, 128, 256), trainings=3,
                              notes=("the toy LM of fact_editing's quick preset (d = 32)",)),
    "cpu": LMCapacityConfig(pairs="editing_lm:cpu:gd_mse", Fs=(128, 256, 512, 1024, 2048, 4096), reps=1,
                            trainings=3,
                            notes=(_CPU_NOTE + "; F from 2^7 to 2^12, the loads F / d^2 = 1/32 to 1 of chapter 13 "
                                   "(the source's 2^9 to 2^14 at d = 1024 are loads 1/2048 to 1/64, which at "
                                   "d = 64 would mean F = 2 to 64); three trainings of the language model, "
                                   "one fact set per F and training",)),
    "paper": LMCapacityConfig(pairs=_QWEN3_PATH, Fs=tuple(2 ** k for k in range(9, 15)),
                              notes=("real Qwen3-0.6B-Base layer-14 pairs, which the book does not ship",)),
}

LM_PAIRS_PRESETS = {
    "quick": LMPairsConfig(pairs="editing_lm:quick:gd_mse", sample=256, trainings=3,
                           notes=("the toy LM of fact_editing's quick preset (d = 32)",)),
    "cpu": LMPairsConfig(pairs="editing_lm:cpu:gd_mse", trainings=3,
                         notes=(_CPU_NOTE + "; three trainings of the language model",)),
    "paper": LMPairsConfig(pairs=_QWEN3_PATH, notes=("real Qwen3-0.6B-Base layer-14 pairs, which the book does "
                                                      "not ship",)),
}

register_sweep(
    "lm_pairs",
    config_type=LMPairsConfig,
    presets=LM_PAIRS_PRESETS,
    points=pairs_points,
    run_point=pairs_point,
    description="the captured language-model pairs: anisotropy and near-duplicates (seed 001, App. A.5.3)",
)

register_sweep(
    "lm_margin",
    config_type=LMMarginConfig,
    presets=LM_MARGIN_PRESETS,
    points=margin_points,
    run_point=margin_point,
    description="minimum margin of the bilinear random-feature Hebbian MLP on a language model's captured "
                "MLP inputs and outputs (seed 001, Fig. 12)",
)

register_sweep(
    "lm_capacity",
    config_type=LMCapacityConfig,
    presets=LM_CAPACITY_PRESETS,
    points=capacity_points,
    run_point=capacity_point,
    description="smallest whitened width recalling 98 % of F captured language-model facts (seed 001, Fig. 13)",
)
