"""The margin sweeps of seed 001 (App. A.3.2, A.4.2) and a bit-complexity sweep (App. B.2.6).

Every sweep builds the unwhitened sketched-``K_2`` Hebbian MLP of Algorithm 1 (or the exact
``K_2`` memory) on a fact set with **untied** keys and values, independent and uniform on the unit
sphere, with the identity map (the convention of the authors' margin sweeps), and measures the
minimum decoding margin on the kernel-Hebbian scale, ``gamma_min = min_i (<y_i, v_f(i)> -
max_{j != f(i)} <y_i, v_j>)`` with ``y_i = sum_t K(k_t, k_i) v_f(t)`` (no ``1/F``; see
:func:`assocmem.mlps.margins.fact_margins`).

Registered sweeps (``python -m assocmem sweep NAME --preset P``):

* ``margin_f_exact``: exact ``K_2``, ``d = 32``, ``F`` in ``[32, 2048]`` (30 log-spaced, 5 seeds);
* ``margin_f_sketch``: sketched ``K_2``, ``d = 64``, ``m = 512``, ``F`` in ``[32, 512]``;
* ``margin_m_sketch``: sketched ``K_2``, ``d = 64``, ``F = 256``, ``m`` in ``[64, 1024]``;
* ``margin_spike_keys``: rank-1 spike on the keys, ``beta`` in ``[0, 5]``, ``d = 64, F = 128,
  m = 512``;
* ``margin_spike_values``: spike on the values, ``beta`` in ``[0, 10]``;
* ``margin_spike_both``: spike on keys and values (one direction), ``beta`` in ``[0, 3.35]``;
* ``margin_noisy``: noisy queries ``k_i + eps u_i``, ``d = 64, F = 256, m = 512``, 15 ``eps``
  log-spaced in ``[0.01, 2]``, 3 seeds (App. A.4.2);
* ``margin_bits``: smallest number of bits per parameter that keeps ``gamma_min > 0`` when
  ``A, G, B`` are quantised, in the regime of Corollary B.8 (our design; the seed runs no bit
  experiment).

Presets: ``quick`` (a subset of the full grid: the same points with the same seeds, so its rows
equal the stored ones) and ``paper`` (the seed's grid; ``cpu`` for ``margin_bits``, which has no
paper grid). The seed gives no number of ``beta`` points or seeds for the spike sweeps; we use 30
evenly spaced ``beta`` and 5 seeds, as in its isotropic sweeps.

Seeds. The isotropic sweeps draw every point independently from its engine seed
(:func:`~assocmem.sweeps.point_seed`). The spike and noisy sweeps use *common random numbers*: a
replicate ``rep`` fixes the fact set, the random features and (noisy sweep) the noise directions
for every ``beta`` or ``eps``, so that one replicate's curve shows the effect of the control
parameter alone; the spike direction ``u`` is one per sweep (App. A.3.2: "fixed within a sweep").

The module also holds the analysis the chapter needs: fits of the theory curves to a stored sweep
(:func:`fit_isotropic_sweep`, :func:`fit_spike_sweep`, :func:`fit_noisy_sweep`), the sufficient
bit count of Theorem B.6 with every constant measured (:func:`theorem_b6_bits`), and the
agreement check between a live ``quick`` run and the stored rows (:func:`live_check`,
:func:`compare_overlap`: :func:`assocmem.sweeps.check_rows` with one stated rule per result
column, :func:`agreement_rules`).

References
----------
Seed 001, Sec. 4.2 (eq. 9, Theorem 4.3), App. A.3.2 (margin sweeps), A.4.2 (noisy-margin
diagnostic), B.2.6 (Lemma B.4, Lemma B.5, Theorem B.6, Corollary B.8), B.8 (eqs. 44, 46, 51, 56,
Table 2), B.10.1 (eq. 74).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
import torch

from assocmem.devices import torch_threads
from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set, random_direction, with_spike
from assocmem.mlps.mlp import BilinearMLP, exact_k2_memory, hebbian_mlp
from assocmem.sweeps.config import point_seed
from assocmem.sweeps.registry import get_sweep, register_sweep

__all__ = [
    "IsotropicConfig",
    "SpikeConfig",
    "NoisyConfig",
    "BitsConfig",
    "isotropic_points",
    "isotropic_point",
    "spike_points",
    "spike_point",
    "noisy_points",
    "noisy_point",
    "bits_points",
    "bits_point",
    "sub_seeds",
    "theorem_b6_bits",
    "B6Bits",
    "SweepFit",
    "fit_isotropic_sweep",
    "fit_spike_sweep",
    "fit_noisy_sweep",
    "seed_means",
    "statistics_from_frame",
    "Curvature",
    "noisy_curvature",
    "smallest_noisy_constant",
    "log2_slope",
    "EXACT_COLUMNS",
    "THRESHOLD_COLUMNS",
    "MAX_CHANGED_ROWS",
    "ROUNDING_TOL",
    "COLUMN_TOL",
    "agreement_rules",
    "compare_overlap",
    "live_check",
    "STORED_PRESET",
    "SPIKE_FREE",
    "EQ9_SPECS",
    "EQ56_SPECS",
    "MARGIN_SWEEPS",
    "SPIKE_FORMS",
]

#: The sweeps this module registers, in the order the chapter uses them.
MARGIN_SWEEPS = (
    "margin_f_exact",
    "margin_f_sketch",
    "margin_m_sketch",
    "margin_spike_keys",
    "margin_spike_values",
    "margin_spike_both",
    "margin_noisy",
    "margin_bits",
)

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
    """
    state = np.random.SeedSequence(int(base)).generate_state(n)
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
    """An isotropic margin sweep: vary ``F`` (or ``m``) with the other sizes fixed."""

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


def isotropic_points(config: IsotropicConfig) -> list[dict]:
    """The grid ``{vary: value, "rep": r}``, value-major."""
    if config.kernel not in ("exact", "sketch") or config.vary not in ("F", "m"):
        raise ValueError(f"kernel must be 'exact' or 'sketch' and vary 'F' or 'm'; got {config}")
    values = _subset(_log_grid(config.lo, config.hi, config.num, integer=True), config.stride)
    return [{config.vary: v, "rep": r} for v in values for r in range(config.reps)]


def isotropic_point(config: IsotropicConfig, point: dict, device) -> dict:
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
    """A rank-1 spike sweep: ``e' = normalise(e + beta <e, u> u)`` on keys, values or both."""

    on: str  # "keys", "values" or "both"
    d: int  # embedding width
    F: int  # number of facts
    m: int  # hidden width of the sketched-K_2 MLP
    beta_max: float  # beta runs over num evenly spaced values in [0, beta_max]
    num: int  # number of beta values
    reps: int  # replicates (fact set + features) per beta
    stride: int = 1  # keep every stride-th beta (quick presets)
    seed: int = 0  # base seed (replicates and the sweep's direction u derive from it)


def spike_points(config: SpikeConfig) -> list[dict]:
    """The grid ``{"beta": b, "rep": r}``, beta-major."""
    if config.on not in SPIKE_FORMS:
        raise ValueError(f"on must be one of {sorted(SPIKE_FORMS)}; got {config.on!r}")
    betas = _subset(_lin_grid(0.0, config.beta_max, config.num), config.stride)
    return [{"beta": b, "rep": r} for b in betas for r in range(config.reps)]


def _replicate_seeds(config, rep: int, n: int) -> list[int]:
    """Seeds shared by every point of one replicate (common random numbers across the control)."""
    return sub_seeds(point_seed(config, {"rep": rep}), n)


def spike_point(config: SpikeConfig, point: dict, device) -> dict:
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
    mlp = hebbian_mlp(facts, config.m, whitening="none", seed=feature_seed)
    gram = M.kernel_gram(mlp, facts.keys)  # (F, F)
    row = {"d": config.d, "F": config.F, "m": config.m}
    row.update(_margin_summary(M.fact_margins(gram, facts)))
    stats = M.geometry_statistics(gram, facts).as_dict()
    row.update({k: v for k, v in stats.items() if k not in ("num_facts", "dim")})
    return row


# --------------------------------------------------------------------------------------------
# Noisy queries (App. A.4.2)


@dataclass(frozen=True)
class NoisyConfig:
    """The noisy-margin diagnostic: queries ``k_i + eps u_i``, ``u_i`` uniform on the sphere."""

    d: int  # embedding width
    F: int  # number of facts
    m: int  # hidden width
    eps_lo: float  # smallest noise radius
    eps_hi: float  # largest noise radius
    num: int  # log-spaced radii in [eps_lo, eps_hi]
    reps: int  # replicates (fact set, features, noise directions)
    stride: int = 1  # keep every stride-th radius (quick presets)
    seed: int = 0  # base seed


def noisy_points(config: NoisyConfig) -> list[dict]:
    """The grid ``{"eps": e, "rep": r}``, eps-major."""
    eps = _subset(_log_grid(config.eps_lo, config.eps_hi, config.num, integer=False), config.stride)
    return [{"eps": e, "rep": r} for e in eps for r in range(config.reps)]


def noisy_point(config: NoisyConfig, point: dict, device) -> dict:
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


# --------------------------------------------------------------------------------------------
# Bit complexity (App. B.2.6)


@dataclass(frozen=True)
class B6Bits:
    """Theorem B.6's sufficient bit count, with the constants it was computed from."""

    bits: int | None  # smallest b meeting the sufficient condition; None if gamma0 <= 0 or > max_bits
    c_rng: float  # dynamic range C_rng = max |theta_p|
    op_norm: float  # M_b: bound on every operator norm of theta* and its b-bit quantisation
    l_theta: float  # L_theta = 3 M_b^2 R_K^2 (Lemma B.5)
    dist_bound: float  # C_rng 2^-b sqrt(P), a bound on ||theta~ - theta*||_2 at b bits
    dist_allowed: float  # gamma0 / (4 L_theta R_V), the radius Lemma B.4 needs


def theorem_b6_bits(
    matrices: Mapping[str, torch.Tensor],
    gamma0: float,
    *,
    key_radius: float = 1.0,
    value_radius: float = 1.0,
    max_bits: int = 64,
) -> B6Bits:
    """Smallest bit width for which the proof of Theorem B.6 guarantees ``gamma_min >= gamma0 / 2``.

    With the per-matrix uniform quantiser of :func:`assocmem.mlps.margins.quantize` (scale ``s_X =
    max |X|``, ``b`` bits) every entry moves by at most ``s_X 2^-b <= C_rng 2^-b``, so
    ``||theta~ - theta*||_2 <= C_rng 2^-b sqrt(P)`` and ``||X~||_op <= ||X||_op + s_X 2^-b
    sqrt(n_X)``. Lemma B.5 then gives the parameter-Lipschitz constant ``L_theta = 3 M_b^2 R_K^2``
    with ``M_b`` the largest of these operator-norm bounds, and Lemma B.4 needs
    ``||theta~ - theta*||_2 <= gamma0 / (4 L_theta R_V)``. The returned ``b`` is the smallest for
    which ``C_rng 2^-b sqrt(P) <= gamma0 / (4 L_theta R_V)``: the theorem's
    ``t = log2(4 C_rng L_theta R_V sqrt(P) / gamma0)`` with every constant measured on this model
    (the ``O(.)`` of eq. 21 has constant 1 for this quantiser).

    Parameters
    ----------
    matrices : mapping of str to torch.Tensor
        ``{"A": (m, d), "G": (m, d), "B": (d_c, m)}`` of a bilinear MLP (eq. 19).
    gamma0 : float
        Its minimum margin on the output scale, ``gamma_min(theta*)`` of App. B.2.6.
    key_radius, value_radius : float, default 1.0
        ``R_K = max ||k_i||`` and ``R_V = max ||v_a||``.
    max_bits : int, default 64
        Largest ``b`` tried.

    Returns
    -------
    B6Bits
        ``bits`` is None when ``gamma0 <= 0`` (the theorem does not apply) or no ``b <= max_bits``
        suffices; the other fields are then those at ``max_bits``.

    Raises
    ------
    ValueError
        Empty ``matrices``, non-positive radii or ``max_bits < 1``.

    References
    ----------
    Seed 001, App. B.2.6: Lemma B.4 (margin robustness), Lemma B.5 (``3 M^2 ||x||^2``),
    Theorem B.6 (eq. 21).
    """
    if not matrices:
        raise ValueError("matrices must not be empty")
    if not (key_radius > 0 and value_radius > 0):
        raise ValueError("key_radius and value_radius must be positive")
    if max_bits < 1:
        raise ValueError(f"max_bits must be >= 1; got {max_bits}")
    mats = {k: v.detach().to(torch.float64) for k, v in matrices.items()}
    scale = {k: float(v.abs().max()) for k, v in mats.items()}
    op = {k: float(torch.linalg.matrix_norm(v, ord=2)) for k, v in mats.items()}
    size = {k: v.numel() for k, v in mats.items()}
    c_rng = max(scale.values())
    P = sum(size.values())
    out = None
    for b in range(1, max_bits + 1):
        m_b = max(op[k] + scale[k] * 2.0**-b * math.sqrt(size[k]) for k in mats)
        l_theta = 3.0 * m_b**2 * key_radius**2
        dist = c_rng * 2.0**-b * math.sqrt(P)
        allowed = gamma0 / (4.0 * l_theta * value_radius) if gamma0 > 0 else 0.0
        out = B6Bits(None, c_rng, m_b, l_theta, dist, allowed)
        if gamma0 > 0 and dist <= allowed:
            return B6Bits(b, c_rng, m_b, l_theta, dist, allowed)
    return out


@dataclass(frozen=True)
class BitsConfig:
    """Bit sweep in the regime of Corollary B.8: ``F = alpha d^2`` and ``m d = c F ln F``."""

    ds: tuple[int, ...]  # embedding widths d (from 32: below, the value coherence of a small d
    #                      dominates the margin and there is no constant slack to keep)
    alpha: float  # load F / d^2 (F = round(alpha d^2))
    width_factor: float  # c in m = ceil(c F ln F / d), so that P = 3 m d grows like F log F
    reps: int  # replicates per d
    max_bits: int  # bits scanned: 1 .. max_bits
    seed: int = 0  # base seed


def bits_points(config: BitsConfig) -> list[dict]:
    """The grid ``{"d": d, "rep": r}``."""
    return [{"d": int(d), "rep": r} for d in config.ds for r in range(config.reps)]


def _output_gamma_min(facts):
    """``margin_fn(A, G, B)``: output-scale ``gamma_min`` of the bilinear MLP built from the factors."""

    def margin(A, G, B):
        return float(M.output_margins(BilinearMLP(A, G, B), facts).min())

    return margin


def bits_point(config: BitsConfig, point: dict, device) -> dict:
    """Smallest bit width keeping every fact stored, and Theorem B.6's sufficient bit width.

    Builds the unwhitened sketched-``K_2`` MLP on an isotropic untied fact set with
    ``F = round(alpha d^2)`` and ``m = ceil(c F ln F / d)``, quantises ``A, G, B`` each with its
    own scale to ``b = 1 .. max_bits`` bits (:func:`assocmem.mlps.margins.quantize`) and records the
    output-scale ``gamma_min`` of the quantised MLP.

    Returns
    -------
    dict
        ``F, m, P`` (``= 3 m d``), ``gamma_kernel`` (kernel-Hebbian scale), ``gamma_out``
        (output scale, ``= gamma_kernel / F``), ``bits_min`` (smallest ``b`` with a positive
        margin), ``bits_stable`` (smallest ``b`` from which every larger ``b`` up to ``max_bits``
        keeps it positive), ``nonmonotone`` (whether some ``b`` above ``bits_min`` loses a fact),
        ``margin_1bit`` (output margin at one bit), ``bits_b6`` (:func:`theorem_b6_bits`),
        ``margin_b6_ratio`` (quantised margin at ``bits_b6`` over ``gamma_out``; Theorem B.6 says
        ``>= 1/2``), ``dist_b6`` (measured ``||theta~ - theta*||_2`` there), ``dist_allowed``,
        ``c_rng``, ``l_theta``. Bit fields are None when ``gamma_out <= 0``.
    """
    d = point["d"]
    F = int(round(config.alpha * d * d))
    m = int(math.ceil(config.width_factor * F * math.log(F) / d))
    facts_seed, feature_seed = sub_seeds(point_seed(config, point), 2)
    facts = make_fact_set(F, d, tied=False, seed=facts_seed, device=device)
    mlp = hebbian_mlp(facts, m, whitening="none", seed=feature_seed)
    mats = {"A": mlp.A.detach(), "G": mlp.G.detach(), "B": mlp.B.detach()}
    margin_fn = _output_gamma_min(facts)
    search = M.min_bits_for_positive_margin(margin_fn, mats, max_bits=config.max_bits, scan_all=True)
    gamma_out = search.full_precision_margin
    positive = [b for b, g in search.margins if g > 0]
    stable = None
    for b, g in reversed(search.margins):
        if g <= 0:
            break
        stable = b
    b6 = theorem_b6_bits(mats, gamma_out)
    ratio = dist = None
    if b6.bits is not None:
        quant = M.quantize_matrices(mats, b6.bits)
        ratio = margin_fn(**quant) / gamma_out
        dist = math.sqrt(sum(float(((quant[k] - mats[k]) ** 2).sum()) for k in mats))
    return {
        "F": F,
        "m": m,
        "P": mlp.num_parameters,
        "gamma_kernel": M.gamma_min(mlp, facts),
        "gamma_out": gamma_out,
        "bits_min": positive[0] if positive else None,
        "bits_stable": stable,
        "nonmonotone": bool(positive) and stable != positive[0],
        "margin_1bit": search.margins[0][1],
        "bits_b6": b6.bits,
        "margin_b6_ratio": ratio,
        "dist_b6": dist,
        "dist_allowed": b6.dist_allowed if b6.bits is not None else None,
        "c_rng": b6.c_rng,
        "l_theta": b6.l_theta,
    }


# --------------------------------------------------------------------------------------------
# Analysis: seed means, theory-curve fits, live-versus-stored agreement


def seed_means(frame: pd.DataFrame, by: str | Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Mean of ``columns`` over replicates at each value of ``by`` (sorted by ``by``).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a sweep.
    by : str or sequence of str
        The grid column(s), e.g. ``"F"``.
    columns : sequence of str
        Numeric columns to average.

    Returns
    -------
    pandas.DataFrame
        One row per value of ``by``, with the means and ``n`` (rows averaged).
    """
    keys = [by] if isinstance(by, str) else list(by)
    grouped = frame.groupby(keys, sort=True)
    out = grouped[list(columns)].mean()
    out["n"] = grouped.size()
    return out.reset_index()


@dataclass(frozen=True)
class SweepFit:
    """A theory curve fitted to every run of a sweep, with ``R^2`` on runs and on seed means."""

    fit: M.TheoryFit  # the least-squares fit (constants, callable curve); fit.r2 is over runs
    r2_runs: float  # R^2 over every run (row)
    r2_means: float  # R^2 of the seed-averaged gamma_min against the seed-averaged prediction
    n_runs: int  # rows fitted
    n_points: int  # grid values (seed means)
    vary: str  # the control column ("F", "m", "beta" or "eps")
    means: pd.DataFrame  # per value of `vary`: gamma_min and the prediction averaged over seeds
    fixed: Mapping[str, float]  # covariates held fixed along an isotropic sweep (else empty)

    @property
    def constants(self) -> Mapping[str, float]:
        """The fitted and fixed constants of the curve."""
        return self.fit.constants

    def curve(self, values) -> np.ndarray:
        """The fitted curve along the varied size of an isotropic sweep (e.g. a fine grid of ``F``).

        Raises
        ------
        ValueError
            For a sweep whose covariates vary from run to run (spike and noisy sweeps: use
            ``means["predicted"]``).
        """
        if not self.fixed:
            raise ValueError("curve() is defined for isotropic sweeps only; use means['predicted']")
        return np.asarray(self.fit(**{self.vary: np.asarray(values, dtype=float), **self.fixed}))


def _sweep_fit(fit: M.TheoryFit, frame: pd.DataFrame, by: str, gamma: str, predicted, fixed=None) -> SweepFit:
    work = pd.DataFrame({by: frame[by].to_numpy(), "gamma_min": frame[gamma].to_numpy(), "predicted": predicted})
    means = seed_means(work, by, ["gamma_min", "predicted"])
    return SweepFit(
        fit=fit,
        r2_runs=M.r_squared(work["gamma_min"], work["predicted"]),
        r2_means=M.r_squared(means["gamma_min"], means["predicted"]),
        n_runs=len(work),
        n_points=len(means),
        vary=by,
        means=means,
        fixed=dict(fixed or {}),
    )


#: Which constants of eq. 56 are fitted along each isotropic sweep. The signal is kept at the
#: theorem's 1 (eq. 56 has no signal constant; its value-coherence term eps_v = C_2 sqrt(L/(d-1))
#: is what brings the small-F margin down to about 0.5). Along an F-sweep C_1 sqrt(L/m) and C_2
#: sqrt(L/(d-1)) are both proportional to sqrt(L), and C_3 sqrt(L F/d^3) and C_4 sqrt(L F/(m d))
#: both to sqrt(L F), so one of each pair is fitted and the other fixed at 0: C_2, and C_3 for the
#: exact kernel (which has no sketch, C_1 = C_4 = 0) or C_4 for the sketch. Along an m-sweep L is
#: constant: C_1 and C_4 both multiply 1/sqrt(m) (C_4 is fitted), and the C_2 and C_3 terms are
#: one constant (C_2 is fitted).
EQ56_SPECS = {
    ("sketch", "F"): (("C_2", "C_4"), {"C_s": 1.0, "C_1": 0.0, "C_3": 0.0}),
    ("exact", "F"): (("C_2", "C_3"), {"C_s": 1.0, "C_1": 0.0, "C_4": 0.0}),
    ("sketch", "m"): (("C_2", "C_4"), {"C_s": 1.0, "C_1": 0.0, "C_3": 0.0}),
}
#: Constants fitted for eq. 9 in its fitted form C_s - C_x sqrt(F L / (m d)), L = log(C_L F^2 /
#: delta) with delta = 0.5 (the theorems hold for any delta in (0, 1); with C_L fitted only
#: C_L / delta is identifiable, so delta only rescales the reported C_L): all three along F;
#: along m, L is constant and C_L cannot be told from C_x.
EQ9_SPECS = {
    ("sketch", "F"): (("C_s", "C_x", "C_L"), {}),
    ("exact", "F"): (("C_s", "C_x", "C_L"), {}),
    ("sketch", "m"): (("C_s", "C_x"), {"C_L": 1.0}),
}


def fit_isotropic_sweep(frame: pd.DataFrame, form: str = "isotropic") -> SweepFit:
    """Fit eq. 9 (``"isotropic"``) or eq. 56 (``"isotropic_eq56"``) to an isotropic sweep.

    The sweep's kernel and varied size are read from its rows (columns ``kernel``, ``F``, ``m``,
    ``d``). For the exact kernel the width is its feature dimension ``m = d^2``
    (``K_2(x, z) = <x (x) x, z (x) z>``), which turns eq. 9's cross-talk term into eq. 56's
    ``C_3 sqrt(L F / d^3)``. Which constants are fitted is fixed by :data:`EQ9_SPECS` (eq. 9 in
    the fitted form ``C_s - C_x sqrt(F L / (m d))``) and :data:`EQ56_SPECS` (eq. 56 with its
    signal 1 and one constant per identifiable term). ``delta = 0.5`` throughout, a fixed
    convention: Theorems 4.1 and B.30 hold for every failure probability ``delta`` in ``(0, 1)``
    through ``L = log(C_0 F^2 / delta)``; where ``C_L`` is fitted (eq. 9) only ``C_L / delta``
    is identifiable, so ``delta`` changes the reported ``C_L`` and not the fitted curve.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_f_exact``, ``margin_f_sketch`` or ``margin_m_sketch``.
    form : {"isotropic", "isotropic_eq56"}

    Returns
    -------
    SweepFit

    Raises
    ------
    ValueError
        An unknown form, mixed kernels, or a frame without the needed columns.

    References
    ----------
    Seed 001, eq. 9 (Theorem 4.1, Cor. B.31), eq. 56 (Theorem B.30), App. A.3.2.
    """
    if form not in ("isotropic", "isotropic_eq56"):
        raise ValueError(f"form must be 'isotropic' or 'isotropic_eq56'; got {form!r}")
    kernels = set(frame["kernel"])
    if len(kernels) != 1:
        raise ValueError(f"one kernel per fit; got {sorted(kernels)}")
    kernel = kernels.pop()
    vary = "F" if frame["F"].nunique() > 1 else "m"
    d = frame["d"].to_numpy(dtype=float)
    m = d * d if kernel == "exact" else frame["m"].to_numpy(dtype=float)
    cov = {"F": frame["F"].to_numpy(dtype=float), "m": m, "d": d}
    free, fixed = (EQ9_SPECS if form == "isotropic" else EQ56_SPECS)[(kernel, vary)]
    fit = M.fit_theory_curve(form, frame["gamma_min"].to_numpy(), cov, free=free, fixed=fixed)
    held = {k: float(v[0]) for k, v in cov.items() if k != vary}
    return _sweep_fit(fit, frame, vary, "gamma_min", fit(**cov), fixed=held)


_STAT_COLUMNS = tuple(f.name for f in fields(M.GeometryStatistics) if f.name not in ("num_facts", "dim"))


#: Constants fitted for each Table 2 cell along a spike sweep: every absolute constant the data
#: can identify. F is fixed, so L is constant and C_L is redundant. Keys (eq. 46): the signal
#: coefficients of K_min^diag, C_s (1 - C_v sqrt(L/(d-1))), and of K_max^off, C_s, differ only
#: through C_v, so C_s, C_v and C_x are all identifiable. Values (eq. 51): C_s (1 - C_k
#: sqrt(L/m)) is one number, so C_k stays at 1. Both (eq. 44) and the penalty form (eq. 10): C_s
#: and C_x.
SPIKE_FREE = {
    "keys": ("C_s", "C_x", "C_v"),
    "values": ("C_s", "C_x"),
    "both": ("C_s", "C_x"),
    "penalty": ("C_s", "C_x"),
}


def statistics_from_frame(frame: pd.DataFrame) -> list[M.GeometryStatistics]:
    """The :class:`~assocmem.mlps.margins.GeometryStatistics` of every row of a spike sweep."""
    return [
        M.GeometryStatistics(num_facts=int(r["F"]), dim=int(r["d"]), **{c: float(r[c]) for c in _STAT_COLUMNS})
        for _, r in frame.iterrows()
    ]


def fit_spike_sweep(frame: pd.DataFrame, on: str, form: str = "table2", *,
                    free: Sequence[str] | None = None) -> SweepFit:
    """Fit a margin bound to a spike sweep's measured ``gamma_min``.

    ``form="table2"`` fits the Table 2 cell of the sweep: ``on="keys"``, eq. 46 (arbitrary keys,
    isotropic values); ``"values"``, eq. 51 (isotropic keys, arbitrary values); ``"both"``,
    eq. 44 (arbitrary keys and values). ``form="penalty"`` fits the general bound of Theorem 4.3,
    eq. 10, ``C_s S_sig - C_x P_key P_val P_align sqrt(F log F / (m d))``, which covers all three.
    The covariates are each run's own statistics; the fitted (non-negative) constants are those
    of :data:`SPIKE_FREE`, every other constant keeps its theorem value.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_spike_<on>`` (the statistics columns of :func:`spike_point`).
    on : {"keys", "values", "both"}
    form : {"table2", "penalty"}, default "table2"
    free : sequence of str, optional
        Constants to fit instead of :data:`SPIKE_FREE` (e.g. ``("C_s", "C_x")`` for the key cell).

    Returns
    -------
    SweepFit
        ``means`` is indexed by ``beta``.

    Raises
    ------
    ValueError
        An unknown ``on`` or ``form``, or missing columns.

    References
    ----------
    Seed 001, Sec. 4.2.2 (eq. 10), Table 2, eqs. 44, 46, 51; App. A.3.2 (Figure 5, ``R^2 >= 0.95``).
    """
    if on not in SPIKE_FORMS:
        raise ValueError(f"on must be one of {sorted(SPIKE_FORMS)}; got {on!r}")
    if form not in ("table2", "penalty"):
        raise ValueError(f"form must be 'table2' or 'penalty'; got {form!r}")
    if form == "penalty":
        theory, default = "penalty", SPIKE_FREE["penalty"]
        cov = M.covariates_from_statistics(statistics_from_frame(frame), width=frame["m"].to_numpy())
    else:
        theory, default = SPIKE_FORMS[on], SPIKE_FREE[on]
        cov = {c: frame[c].to_numpy(dtype=float) for c in (*_STAT_COLUMNS, "F", "m", "d")}
    cov = {k: np.asarray(cov[k], dtype=float) for k in M.THEORY_FORMS[theory].covariates}
    free = tuple(default if free is None else free)
    fit = M.fit_theory_curve(theory, frame["gamma_min"].to_numpy(), cov, free=free)
    return _sweep_fit(fit, frame, "beta", "gamma_min", fit(**cov))


def fit_noisy_sweep(frame: pd.DataFrame) -> SweepFit:
    """Fit eq. 74, ``gamma(eps) = gamma_clean - C eps sqrt(F L / d)``, to the noisy sweep.

    Each run's own clean margin is the intercept; ``C = C_2 L_bil`` is the one fitted constant
    (``L = log(F^2 / 0.5)``, ``C_L = 1``).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_noisy``.

    Returns
    -------
    SweepFit
        ``means`` is indexed by ``eps``.

    References
    ----------
    Seed 001, App. A.4.2 (Figure 6); App. B.10.1, eq. 74.
    """
    cov = {
        "gamma_clean": frame["gamma_clean"].to_numpy(dtype=float),
        "eps": frame["eps"].to_numpy(dtype=float),
        "F": frame["F"].to_numpy(dtype=float),
        "d": frame["d"].to_numpy(dtype=float),
    }
    fit = M.fit_theory_curve("noisy", frame["gamma_min"].to_numpy(), cov)
    return _sweep_fit(fit, frame, "eps", "gamma_min", fit(**cov))


@dataclass(frozen=True)
class Curvature:
    """Per-replicate fit of the noisy-query degradation ``gamma_clean - gamma_min = a eps + b eps^2``."""

    a: np.ndarray  # (reps,) linear coefficients
    b: np.ndarray  # (reps,) quadratic coefficients
    b_mean: float  # mean of b over replicates
    b_sem: float  # its standard error, std(b, ddof=1) / sqrt(reps)
    reps: int  # replicates


def noisy_curvature(frame: pd.DataFrame) -> Curvature:
    """Least-squares ``a`` and ``b`` of ``gamma_clean - gamma_min(eps) = a eps + b eps^2`` per replicate.

    A degradation linear in ``eps`` (App. A.4.2) has ``b = 0``. No intercept: the degradation
    vanishes at ``eps = 0`` by construction.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``margin_noisy`` (columns ``rep, eps, gamma_clean, gamma_min``).

    Returns
    -------
    Curvature

    Raises
    ------
    ValueError
        Fewer than two replicates (no standard error) or fewer than two radii per replicate.
    """
    a, b = [], []
    for _, g in frame.groupby("rep", sort=True):
        eps = g["eps"].to_numpy(dtype=float)
        if eps.size < 2:
            raise ValueError("need at least two radii per replicate")
        X = np.column_stack([eps, eps**2])  # (n, 2)
        coef, *_ = np.linalg.lstsq(X, (g["gamma_clean"] - g["gamma_min"]).to_numpy(dtype=float), rcond=None)
        a.append(coef[0])
        b.append(coef[1])
    if len(b) < 2:
        raise ValueError("need at least two replicates for a standard error")
    b_arr = np.asarray(b)
    return Curvature(np.asarray(a), b_arr, float(b_arr.mean()), float(b_arr.std(ddof=1) / math.sqrt(len(b))), len(b))


def smallest_noisy_constant(frame: pd.DataFrame, C_L: float = 1.0, delta: float = 0.5) -> pd.Series:
    """Per ``eps``, the smallest ``C`` with ``gamma_min(eps) >= gamma_clean - C eps sqrt(F L / d)`` on every run.

    Eq. 74 holds with one constant ``C = C_2 L_bil`` for all ``eps`` only if this series is
    bounded by it; a constant that grows with ``eps`` means the degradation is not linear.

    Returns
    -------
    pandas.Series
        Indexed by ``eps`` (sorted); ``max(0, gamma_clean - gamma_min) / (eps sqrt(F L / d))``
        maximised over replicates.
    """
    F, d, eps = (frame[c].to_numpy(dtype=float) for c in ("F", "d", "eps"))
    L = np.asarray(M.log_term(F, C_L, delta))
    scale = eps * np.sqrt(F * L / d)
    need = np.maximum(0.0, (frame["gamma_clean"] - frame["gamma_min"]).to_numpy(dtype=float)) / scale
    return pd.Series(need, index=frame["eps"].to_numpy()).groupby(level=0).max().sort_index()


def log2_slope(x, y) -> float:
    """Least-squares slope of ``y`` against ``log2(x)``: the change in ``y`` per doubling of ``x``."""
    x = np.log2(np.asarray(x, dtype=float))
    y = np.asarray(y, dtype=float)
    return float(np.polyfit(x, y, 1)[0])


#: The preset whose stored results the chapter plots, per sweep (``margin_bits`` has no paper grid).
STORED_PRESET = {name: ("cpu" if name == "margin_bits" else "paper") for name in MARGIN_SWEEPS}


#: Result columns set by the config with no arithmetic (sizes, labels, seeds), and Theorem B.6's bit
#: count, an integer ceiling whose condition holds and fails one bit below with a relative slack
#: far above float64 rounding in every stored row: compared for equality.
EXACT_COLUMNS = ("kernel", "d", "F", "m", "P", "seed", "bits_b6")
#: Result columns decided by the sign of a margin (a fact's, or a quantised model's), which a
#: rounding difference could flip if that margin were within rounding of zero: at most
#: :data:`MAX_CHANGED_ROWS` rows of a sweep may differ in each.
THRESHOLD_COLUMNS = ("frac_positive", "bits_min", "bits_stable", "nonmonotone")
MAX_CHANGED_ROWS = 1
#: Every other result column is a float64 computation: ``|live - stored| <= ROUNDING_TOL * s``, with
#: ``s`` the column's largest stored ``|value|`` rounded up to a power of ten (1 for a zero column).
ROUNDING_TOL = 1e-9
#: Columns with their own absolute tolerance. ``margin_b6_ratio`` is a margin after quantising to
#: ``bits_b6`` bits, where a weight within rounding of a level boundary may land in the
#: neighbouring level; by Lemmas B.4-B.5 each such weight moves the ratio by at most
#: ``1 / sqrt(P)`` (below 0.0063 for every stored ``P``).
COLUMN_TOL = {"margin_b6_ratio": 1e-2}


def _power_of_ten_scale(values: pd.Series) -> float:
    """The largest finite ``|value|`` rounded up to a power of ten; 1 for a column of zeros or NaN."""
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    x = np.abs(x[np.isfinite(x)])
    top = float(x.max()) if x.size else 0.0
    return 10.0 ** math.ceil(math.log10(top)) if top > 0 else 1.0


def agreement_rules(stored: pd.DataFrame, columns: Sequence[str]) -> dict:
    """The rule of each result column in ``columns``: keyword arguments of :func:`~assocmem.sweeps.check_rows`.

    Columns of :data:`EXACT_COLUMNS` go to ``exact``, those of :data:`THRESHOLD_COLUMNS` to
    ``max_changed`` (:data:`MAX_CHANGED_ROWS` each), those of :data:`COLUMN_TOL` get their own
    tolerance, and every other column the rounding tolerance ``ROUNDING_TOL * s`` with ``s`` the
    power of ten at or above its largest stored ``|value|``. The engine's ``wall_time_s`` is not
    a result.

    Parameters
    ----------
    stored : pandas.DataFrame
        The stored rows (they set each column's scale, so the rule is the same on every machine).
    columns : sequence of str
        The result columns (the live frame's columns less the point keys).

    Returns
    -------
    dict
        ``{"tolerances": {...}, "max_changed": {...}, "exact": [...]}``.
    """
    tolerances, max_changed, exact = {}, {}, []
    for col in columns:
        if col == "wall_time_s":
            continue
        if col in EXACT_COLUMNS:
            exact.append(col)
        elif col in THRESHOLD_COLUMNS:
            max_changed[col] = MAX_CHANGED_ROWS
        elif col in COLUMN_TOL:
            tolerances[col] = COLUMN_TOL[col]
        else:
            tolerances[col] = ROUNDING_TOL * _power_of_ten_scale(stored[col]) if col in stored else ROUNDING_TOL
    return {"tolerances": tolerances, "max_changed": max_changed, "exact": exact}


def compare_overlap(live: pd.DataFrame, stored: pd.DataFrame, keys: Sequence[str], *,
                    what: str = "live rows") -> pd.DataFrame:
    """Assert that a live run agrees with stored rows on the grid points they share.

    Each result column is compared by its rule (:func:`agreement_rules`) with
    :func:`assocmem.sweeps.check_rows`, the book's one comparison of live against stored rows.

    Parameters
    ----------
    live, stored : pandas.DataFrame
        Rows of the same sweep (e.g. a ``quick`` run and the stored ``paper`` preset).
    keys : sequence of str
        The point columns that identify a row (e.g. ``["F", "rep"]``).
    what : str
        What is compared, for the error message.

    Returns
    -------
    pandas.DataFrame
        :func:`~assocmem.sweeps.check_rows`' summary: one row per result column, with ``column``,
        ``rule``, ``rows``, ``max |diff|``, ``rows changed`` and ``allowed``; and ``kind``, the
        rule in words that do not depend on the column's scale (``"equal"``, ``"at most 1 row
        changed"``, ``"|diff| <= 1e-09 x scale"`` or a column's own ``"|diff| <= tol"``).

    Raises
    ------
    assocmem.sweeps.RowsDisagree
        If a live row has no stored partner or a column breaks its rule.
    """
    from assocmem.sweeps.agreement import check_rows

    columns = [c for c in live.columns if c not in keys]
    rules = agreement_rules(stored, columns)
    summary = check_rows(live, stored, keys, what=what, **rules)
    kind = {c: "equal" for c in rules["exact"]}
    kind.update({c: f"at most {n} row{'s' if n != 1 else ''} changed" for c, n in rules["max_changed"].items()})
    kind.update({c: (f"|diff| <= {tol:g}" if c in COLUMN_TOL else f"|diff| <= {ROUNDING_TOL:g} x scale")
                 for c, tol in rules["tolerances"].items()})
    return summary.assign(kind=summary["column"].map(kind))


def live_check(names: Sequence[str] = MARGIN_SWEEPS, preset: str = "quick", device: str = "cpu",
               results_dir=None, num_threads: int | None = 1, seed: int | None = None) -> pd.DataFrame:
    """Run each sweep's ``preset`` in memory and assert that its rows agree with the stored ones.

    The stored preset is the largest one (:data:`STORED_PRESET`); the ``quick`` presets run a
    strided subset of its grid with the same point seeds, so the live rows must reproduce the
    stored ones by the rules of :func:`compare_overlap`. The points run serially in this process
    with ``num_threads`` torch CPU threads (restored afterwards). One thread is the default: the
    matrices are at most ``2048 x 2048``, where a second thread gains little and, on a machine
    busy with other work, threads that wait on each other can make the run many times slower; it
    is also how the stored runs were made (a two-worker process pool gives each worker one thread).

    Parameters
    ----------
    names : sequence of str
        Sweeps to check (default: all of :data:`MARGIN_SWEEPS`).
    preset : str, default "quick"
        The preset to run live (``persist=False``: nothing is written).
    device : str, default "cpu"
    results_dir : path, optional
        Where the stored results live (default: the repository's ``results/``).
    num_threads : int or None, default 1
        Torch CPU threads during the run; None leaves the setting alone.
    seed : int, optional
        Base seed of the live run; default the preset's (0). With another seed the live points
        are other fact sets, and the check fails (it exists to show that it can).

    Returns
    -------
    pandas.DataFrame
        One row per sweep and result column: ``sweep``, ``stored`` (the preset compared with)
        and the columns of :func:`compare_overlap`'s summary.

    Raises
    ------
    assocmem.sweeps.RowsDisagree
        If some sweep's live rows break a rule.
    """
    from assocmem.sweeps.engine import run_sweep
    from assocmem.sweeps.store import load_results

    frames = []
    with torch_threads(num_threads):
        for name in names:
            config = get_sweep(name).config(preset)
            if seed is None or seed == config.seed:
                run = run_sweep(name, preset, device=device, persist=False, progress=False)
            else:
                config = dataclasses.replace(config, seed=int(seed))
                run = run_sweep(name, f"{preset}_seed{int(seed)}", config=config, device=device,
                                persist=False, progress=False)
            stored = load_results(name, STORED_PRESET[name], results_dir)
            keys = list(run.provenance["point_columns"])
            summary = compare_overlap(run.frame, stored, keys,
                                      what=f"{name}: live {preset} rows against the stored {STORED_PRESET[name]} rows")
            frames.append(summary.assign(sweep=name, stored=STORED_PRESET[name]))
    out = pd.concat(frames, ignore_index=True)
    return out[["sweep", "stored", *[c for c in out.columns if c not in ("sweep", "stored")]]]


# --------------------------------------------------------------------------------------------
# Registration


def _isotropic(kernel, vary, d, F, m, lo, hi, reps, stride):
    return IsotropicConfig(kernel=kernel, vary=vary, d=d, F=F, m=m, lo=lo, hi=hi, num=30, reps=reps, stride=stride)


register_sweep(
    "margin_f_exact",
    config_type=IsotropicConfig,
    presets={
        "quick": _isotropic("exact", "F", 32, None, None, 32, 2048, reps=2, stride=6),
        "paper": _isotropic("exact", "F", 32, None, None, 32, 2048, reps=5, stride=1),
    },
    points=isotropic_points,
    run_point=isotropic_point,
    description="gamma_min of the exact-K2 Hebbian memory vs F (d=32; seed 001, App. A.3.2)",
)
register_sweep(
    "margin_f_sketch",
    config_type=IsotropicConfig,
    presets={
        "quick": _isotropic("sketch", "F", 64, None, 512, 32, 512, reps=2, stride=6),
        "paper": _isotropic("sketch", "F", 64, None, 512, 32, 512, reps=5, stride=1),
    },
    points=isotropic_points,
    run_point=isotropic_point,
    description="gamma_min of the sketched-K2 Hebbian MLP vs F (d=64, m=512; seed 001, App. A.3.2)",
)
register_sweep(
    "margin_m_sketch",
    config_type=IsotropicConfig,
    presets={
        "quick": _isotropic("sketch", "m", 64, 256, None, 64, 1024, reps=2, stride=6),
        "paper": _isotropic("sketch", "m", 64, 256, None, 64, 1024, reps=5, stride=1),
    },
    points=isotropic_points,
    run_point=isotropic_point,
    description="gamma_min of the sketched-K2 Hebbian MLP vs m (d=64, F=256; seed 001, App. A.3.2)",
)

_BETA_MAX = {"keys": 5.0, "values": 10.0, "both": 3.35}  # App. A.3.2
_TARGET = {"keys": "the keys", "values": "the values", "both": "keys and values"}
for _on, _beta_max in _BETA_MAX.items():
    register_sweep(
        f"margin_spike_{_on}",
        config_type=SpikeConfig,
        presets={
            "quick": SpikeConfig(on=_on, d=64, F=128, m=512, beta_max=_beta_max, num=30, reps=2, stride=6),
            "paper": SpikeConfig(on=_on, d=64, F=128, m=512, beta_max=_beta_max, num=30, reps=5, stride=1),
        },
        points=spike_points,
        run_point=spike_point,
        description=f"gamma_min and App. B.5 statistics under a rank-1 spike on {_TARGET[_on]} "
        f"(beta in [0, {_beta_max:g}]; seed 001, App. A.3.2)",
    )

register_sweep(
    "margin_noisy",
    config_type=NoisyConfig,
    presets={
        "quick": NoisyConfig(d=64, F=256, m=512, eps_lo=0.01, eps_hi=2.0, num=15, reps=2, stride=4),
        "paper": NoisyConfig(d=64, F=256, m=512, eps_lo=0.01, eps_hi=2.0, num=15, reps=3, stride=1),
    },
    points=noisy_points,
    run_point=noisy_point,
    description="clean and noisy-query gamma_min vs eps (d=64, F=256, m=512; seed 001, App. A.4.2)",
)

register_sweep(
    "margin_bits",
    config_type=BitsConfig,
    presets={
        "quick": BitsConfig(ds=(32, 45), alpha=1 / 16, width_factor=32.0, reps=2, max_bits=24),
        "cpu": BitsConfig(ds=(32, 45, 64, 91, 128, 181), alpha=1 / 16, width_factor=32.0, reps=5, max_bits=24),
    },
    points=bits_points,
    run_point=bits_point,
    description="smallest bits per parameter keeping gamma_min > 0, F = d^2/16, m d = 32 F ln F "
    "(seed 001, App. B.2.6; our design)",
)
