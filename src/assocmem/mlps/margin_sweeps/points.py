"""The grids and points of the margin sweeps: isotropic, rank-1 spike and noisy-query fact sets.

Every point builds the unwhitened sketched-``K_2`` Hebbian MLP of Algorithm 1 (or the exact ``K_2``
memory) on a fact set with untied keys and values, uniform on the unit sphere, with the identity
map, and records its minimum kernel-Hebbian margin ``gamma_min``
(:func:`assocmem.mlps.margins.fact_margins`), the mean margin and the fraction of facts with a
positive margin (seed 001, "MLPs are Hebbians", App. A.3.2 and A.4.2). The isotropic sweeps vary
``F`` or ``m`` (:class:`IsotropicConfig`, :func:`isotropic_points`, :func:`isotropic_point`); the
spike sweeps apply the rank-1 spike to the keys, the values or both and add the geometric
statistics of App. B.5 (:class:`SpikeConfig`, :func:`spike_points`, :func:`spike_point`); the
noisy sweep reads perturbed queries (:class:`NoisyConfig`, :func:`noisy_points`,
:func:`noisy_point`). :func:`sub_seeds` derives the seeds of a point (isotropic sweeps) or of a
replicate shared by every value of the control parameter (spike and noisy sweeps: common random
numbers). Chapter 12 (How margins scale) plots their stored results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from assocmem._checks import as_int, as_real, positive_int, seed_int
from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set, random_direction, with_spike
from assocmem.mlps.mlp import exact_k2_memory, hebbian_mlp
from assocmem.sweeps.config import point_seed

if TYPE_CHECKING:
    from assocmem.mlps.facts import FactSet

__all__ = [
    "IsotropicConfig",
    "SpikeConfig",
    "NoisyConfig",
    "isotropic_points",
    "isotropic_point",
    "spike_points",
    "spike_point",
    "noisy_points",
    "noisy_point",
    "sub_seeds",
    "statistics_row",
    "SPIKE_FORMS",
]

#: Theory form (a key of :data:`assocmem.mlps.margins.THEORY_FORMS`) of each spike target (Table 2).
SPIKE_FORMS = {"keys": "keys", "values": "values", "both": "both"}


# --------------------------------------------------------------------------------------------
# Seeds and grids


def sub_seeds(base: int, n: int) -> list[int]:
    """``n`` independent seeds in ``[0, 2**31)`` derived from ``base`` (``numpy.random.SeedSequence``).

    Parameters
    ----------
    base : int
        Non-negative base seed (e.g. a point seed).
    n : int
        How many seeds.

    Returns
    -------
    list of int
        The same list on every machine.

    Raises
    ------
    ValueError
        A ``base`` that is not an integer ``>= 0`` or an ``n`` that is not an integer ``>= 0``
        (``2.5`` is refused, not truncated).
    """
    state = np.random.SeedSequence(as_int(base, "base", minimum=0)).generate_state(as_int(n, "n", minimum=0))
    return [int(s) % 2**31 for s in state]


def _log_grid(lo: float, hi: float, num: int, integer: bool) -> list:
    """``num`` log-spaced values in ``[lo, hi]``: rounded integers (duplicates dropped) or floats
    rounded to 6 significant digits (so that grid keys read cleanly)."""
    raw = np.geomspace(lo, hi, num)
    if integer:
        return list(dict.fromkeys(int(round(x)) for x in raw))
    return list(dict.fromkeys(float(f"{x:.6g}") for x in raw))


def _lin_grid(lo: float, hi: float, num: int) -> list[float]:
    """``num`` evenly spaced floats in ``[lo, hi]``, rounded to 6 decimals."""
    return list(dict.fromkeys(round(float(x), 6) for x in np.linspace(lo, hi, num)))


def _subset(values: list, stride: int) -> list:
    """Every ``stride``-th value (the ``quick`` presets take a strided subset of the full grid)."""
    if stride < 1:
        raise ValueError(f"stride must be >= 1; got {stride}")
    return values[::stride]


def _check_config(config, positive: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """Validate a sweep config's sizes (positive integers; ``optional`` ones may be None) and seed.

    Only validates: the fields stay as given, since the point seeds hash them.
    """
    for name in positive:
        positive_int(name, getattr(config, name))
    for name in optional:
        if getattr(config, name) is not None:
            positive_int(name, getattr(config, name))
    seed_int(config.seed)


def _margin_summary(margins: torch.Tensor) -> dict:
    """``gamma_min``, the mean per-fact margin and the fraction of facts with a positive margin."""
    return {
        "gamma_min": float(margins.min()),
        "gamma_mean": float(margins.mean()),
        "frac_positive": float((margins > 0).double().mean()),
    }


# --------------------------------------------------------------------------------------------
# Isotropic sweeps (App. A.3.2, "Isotropic keys and values")


@dataclass(frozen=True)
class IsotropicConfig:
    """An isotropic margin sweep: vary ``F`` (or ``m``) with the other sizes fixed.

    Raises
    ------
    ValueError
        On construction: an unknown kernel or ``vary``, sizes that are not positive integers,
        ``lo > hi``, the fixed size (``m`` for the sketch varying ``F``, ``F`` when ``m`` varies)
        missing, or a non-integer seed.
    """

    kernel: str  # "exact" (K_2(x, z) = <x, z>^2) or "sketch" (bilinear random features, Alg. 1)
    vary: str  # "F" (number of facts) or "m" (hidden width)
    d: int  # embedding width
    F: int | None  # number of facts when vary == "m" (None when F varies)
    m: int | None  # hidden width when vary == "F" (None for the exact kernel and when m varies)
    lo: int  # smallest value of the varied size
    hi: int  # largest value of the varied size
    num: int  # log-spaced values in [lo, hi] (rounded to integers)
    reps: int  # independent replicates (seeds) per value
    stride: int = 1  # keep every stride-th value (quick presets use a subset of the full grid)
    seed: int = 0  # base seed of point_seed

    def __post_init__(self):
        if self.kernel not in ("exact", "sketch") or self.vary not in ("F", "m"):
            raise ValueError(f"kernel must be 'exact' or 'sketch' and vary 'F' or 'm'; got {self.kernel!r}, "
                             f"{self.vary!r}")
        _check_config(self, ("d", "lo", "hi", "num", "reps", "stride"), ("F", "m"))
        if self.lo > self.hi:
            raise ValueError(f"lo must not exceed hi; got lo={self.lo}, hi={self.hi}")
        fixed = "F" if self.vary == "m" else ("m" if self.kernel == "sketch" else None)
        if fixed is not None and getattr(self, fixed) is None:
            raise ValueError(f"{fixed} must be set (a positive integer) when vary={self.vary!r} and "
                             f"kernel={self.kernel!r}")


def isotropic_points(config: IsotropicConfig) -> list[dict]:
    """The grid ``{vary: value, "rep": r}``, value-major."""
    if config.kernel not in ("exact", "sketch") or config.vary not in ("F", "m"):
        raise ValueError(f"kernel must be 'exact' or 'sketch' and vary 'F' or 'm'; got {config}")
    values = _subset(_log_grid(config.lo, config.hi, config.num, integer=True), config.stride)
    return [{config.vary: v, "rep": r} for v in values for r in range(config.reps)]


def isotropic_point(config: IsotropicConfig, point: dict, device: torch.device) -> dict:
    """``gamma_min`` of one isotropic fact set and its memory.

    The fact set (untied, identity map) and the features are drawn from two seeds derived from
    the point's engine seed; float64 on ``device``.

    Returns
    -------
    dict
        ``kernel``, ``d`` and the size that is not varied (``m`` or ``F``; ``m`` is None for the
        exact kernel), ``gamma_min``, ``gamma_mean``, ``frac_positive``.
    """
    F = point["F"] if config.vary == "F" else config.F
    m = point["m"] if config.vary == "m" else config.m
    facts_seed, feature_seed = sub_seeds(point_seed(config, point), 2)
    facts = make_fact_set(F, config.d, tied=False, seed=facts_seed, device=device)
    if config.kernel == "exact":
        memory = exact_k2_memory(facts)
    else:
        memory = hebbian_mlp(facts, m, whitening="none", seed=feature_seed)
    row = {"kernel": config.kernel, "d": config.d}
    row.update({"m": m} if config.vary == "F" else {"F": F})
    row.update(_margin_summary(M.fact_margins(memory, facts)))
    return row


# --------------------------------------------------------------------------------------------
# Rank-1 spike sweeps (App. A.3.2, the three non-isotropic cells of Table 2)


@dataclass(frozen=True)
class SpikeConfig:
    """A rank-1 spike sweep: ``e' = normalise(e + beta <e, u> u)`` on keys, values or both.

    Raises
    ------
    ValueError
        On construction: an unknown ``on``, sizes that are not positive integers, a ``beta_max``
        that is not a finite real ``>= 0`` (booleans and strings refused), or a non-integer seed.
    """

    on: str  # "keys", "values" or "both"
    d: int  # embedding width
    F: int  # number of facts
    m: int  # hidden width of the sketched-K_2 MLP
    beta_max: float  # beta runs over num evenly spaced values in [0, beta_max]
    num: int  # number of beta values
    reps: int  # replicates (fact set + features) per beta
    stride: int = 1  # keep every stride-th beta (quick presets)
    seed: int = 0  # base seed (replicates and the sweep's direction u derive from it)

    def __post_init__(self):
        if self.on not in SPIKE_FORMS:
            raise ValueError(f"on must be one of {sorted(SPIKE_FORMS)}; got {self.on!r}")
        _check_config(self, ("d", "F", "m", "num", "reps", "stride"))
        as_real(self.beta_max, "beta_max", minimum=0.0)


def spike_points(config: SpikeConfig) -> list[dict]:
    """The grid ``{"beta": b, "rep": r}``, beta-major."""
    if config.on not in SPIKE_FORMS:
        raise ValueError(f"on must be one of {sorted(SPIKE_FORMS)}; got {config.on!r}")
    betas = _subset(_lin_grid(0.0, config.beta_max, config.num), config.stride)
    return [{"beta": b, "rep": r} for b in betas for r in range(config.reps)]


def _replicate_seeds(config, rep: int, n: int) -> list[int]:
    """Seeds shared by every point of one replicate (common random numbers across the control)."""
    return sub_seeds(point_seed(config, {"rep": rep}), n)


def spike_point(config: SpikeConfig, point: dict, device: torch.device) -> dict:
    """``gamma_min`` and the geometric statistics of App. B.5 for one spiked fact set.

    The isotropic fact set and the features depend on the replicate only; the direction ``u`` is
    one per sweep (drawn from ``config.seed``). The statistics are those of the MLP's own
    (sketched) Gram matrix and the spiked values, with codes equal to the values.

    Returns
    -------
    dict
        ``d, F, m``, ``gamma_min``, ``gamma_mean``, ``frac_positive`` and every field of
        :class:`assocmem.mlps.margins.GeometryStatistics` except the sizes.
    """
    facts_seed, feature_seed = _replicate_seeds(config, point["rep"], 2)
    u = random_direction(config.d, seed=sub_seeds(config.seed, 1)[0])
    base = make_fact_set(config.F, config.d, tied=False, seed=facts_seed, device=device)
    facts = with_spike(base, point["beta"], on=config.on, direction=u.to(device))
    return statistics_row(facts, config.m, feature_seed)


def statistics_row(facts: FactSet, m: int, feature_seed: int) -> dict:
    """``gamma_min`` and the geometric statistics of App. B.5 of one sketched-``K_2`` Hebbian MLP.

    Builds the unwhitened bilinear random-feature Hebbian MLP of width ``m`` on ``facts``
    (Algorithm 1, :func:`assocmem.mlps.mlp.hebbian_mlp` with ``whitening="none"``) and measures,
    on its own (sketched) Gram matrix, the margins and the statistics of
    :class:`assocmem.mlps.margins.GeometryStatistics` (codes equal to the values). Used by the
    spike sweeps and by the sweeps on captured language-model activations
    (:mod:`assocmem.mlps.lm_embedding_sweeps`).

    Parameters
    ----------
    facts : FactSet
        Unit keys and values, ``F >= 2`` facts in ``R^d``.
    m : int
        Hidden width.
    feature_seed : int
        Seeds the random features.

    Returns
    -------
    dict
        ``d, F, m``, ``gamma_min``, ``gamma_mean``, ``frac_positive`` and every field of
        :class:`~assocmem.mlps.margins.GeometryStatistics` except the sizes.

    Raises
    ------
    ValueError
        As :func:`~assocmem.mlps.mlp.hebbian_mlp` and
        :func:`~assocmem.mlps.margins.geometry_statistics` (e.g. fewer than two facts).
    """
    mlp = hebbian_mlp(facts, m, whitening="none", seed=feature_seed)
    gram = M.kernel_gram(mlp, facts.keys)  # (F, F)
    row = {"d": int(facts.keys.shape[1]), "F": int(facts.keys.shape[0]), "m": int(m)}
    row.update(_margin_summary(M.fact_margins(gram, facts)))
    stats = M.geometry_statistics(gram, facts).as_dict()
    row.update({k: v for k, v in stats.items() if k not in ("num_facts", "dim")})
    return row


# --------------------------------------------------------------------------------------------
# Noisy queries (App. A.4.2)


@dataclass(frozen=True)
class NoisyConfig:
    """The noisy-margin diagnostic: queries ``k_i + eps u_i``, ``u_i`` uniform on the sphere.

    Raises
    ------
    ValueError
        On construction: sizes that are not positive integers, radii that are not finite reals
        ``> 0`` with ``eps_lo <= eps_hi``, or a non-integer seed.
    """

    d: int  # embedding width
    F: int  # number of facts
    m: int  # hidden width
    eps_lo: float  # smallest noise radius
    eps_hi: float  # largest noise radius
    num: int  # log-spaced radii in [eps_lo, eps_hi]
    reps: int  # replicates (fact set, features, noise directions)
    stride: int = 1  # keep every stride-th radius (quick presets)
    seed: int = 0  # base seed

    def __post_init__(self):
        _check_config(self, ("d", "F", "m", "num", "reps", "stride"))
        lo = as_real(self.eps_lo, "eps_lo", minimum=0.0, strict_min=True)
        if as_real(self.eps_hi, "eps_hi", minimum=0.0, strict_min=True) < lo:
            raise ValueError(f"eps_hi must be >= eps_lo; got eps_lo={self.eps_lo}, eps_hi={self.eps_hi}")


def noisy_points(config: NoisyConfig) -> list[dict]:
    """The grid ``{"eps": e, "rep": r}``, eps-major."""
    eps = _subset(_log_grid(config.eps_lo, config.eps_hi, config.num, integer=False), config.stride)
    return [{"eps": e, "rep": r} for e in eps for r in range(config.reps)]


def noisy_point(config: NoisyConfig, point: dict, device: torch.device) -> dict:
    """Clean and noisy ``gamma_min`` of one replicate at one noise radius.

    A replicate fixes the fact set, the features and the directions ``u_i`` (so ``eps`` only
    scales the same perturbation). The noisy margin uses the mixed Gram
    ``<phi(k_t), phi(k_i + eps u_i)>`` (:func:`assocmem.mlps.margins.noisy_fact_margins`); the queries
    are not renormalised.

    Returns
    -------
    dict
        ``d, F, m``, ``gamma_clean``, ``gamma_min`` (noisy), ``gamma_mean`` (noisy),
        ``frac_positive`` (noisy), and ``lipschitz``, the empirical query-Lipschitz constant of
        the kernel at this radius (eq. 69).
    """
    facts_seed, feature_seed, noise_seed = _replicate_seeds(config, point["rep"], 3)
    facts = make_fact_set(config.F, config.d, tied=False, seed=facts_seed, device=device)
    mlp = hebbian_mlp(facts, config.m, whitening="none", seed=feature_seed)
    clean = M.fact_margins(mlp, facts)
    queries = M.perturb_queries(facts.keys, point["eps"], seed=noise_seed)
    noisy = M.fact_margins(mlp, facts, queries=queries)
    row = {"d": config.d, "F": config.F, "m": config.m, "gamma_clean": float(clean.min())}
    row.update(_margin_summary(noisy))
    row["lipschitz"] = M.query_lipschitz(mlp, facts, queries)
    return row
