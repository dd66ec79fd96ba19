"""The bit-complexity sweep: the fewest bits per parameter that keep every fact stored, and Theorem B.6.

In the regime of Corollary B.8 of seed 001 ("MLPs are Hebbians", App. B.2.6), ``F = alpha d^2``
and ``m d = c F ln F``, a point (:class:`BitsConfig`, :func:`bits_points`, :func:`bits_point`)
quantises ``A, G, B`` of the sketched-``K_2`` Hebbian MLP, each with its own scale, to
``b = 1 .. max_bits`` bits and records the smallest ``b`` with a positive output-scale margin;
:func:`theorem_b6_bits` is the sufficient bit count of Theorem B.6 (through Lemmas B.4 and B.5)
with every constant measured on the model (a :class:`B6Bits`). The sweep is our design: the seed
runs no bit experiment. Chapter 12 (How margins scale) reports it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from assocmem._checks import as_int, as_real, positive_int, seed_int
from assocmem.mlps import margins as M
from assocmem.mlps._checks import float_tensor
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margin_sweeps.points import sub_seeds
from assocmem.mlps.mlp import BilinearMLP, hebbian_mlp
from assocmem.sweeps.config import point_seed

__all__ = [
    "BitsConfig",
    "bits_points",
    "bits_point",
    "theorem_b6_bits",
    "B6Bits",
]


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
        Empty ``matrices`` or matrices that are not finite real 2-D tensors (float16 / bfloat16
        refused), a ``gamma0`` that is not a finite real number, radii that are not finite reals
        ``> 0``, or a ``max_bits`` that is not an integer ``>= 1`` (booleans and strings are
        refused throughout).

    References
    ----------
    Seed 001, App. B.2.6: Lemma B.4 (margin robustness), Lemma B.5 (``3 M^2 ||x||^2``),
    Theorem B.6 (eq. 21).
    """
    if not isinstance(matrices, Mapping) or not matrices:
        raise ValueError("matrices must be a non-empty mapping of name -> tensor")
    gamma0 = as_real(gamma0, "gamma0")
    key_radius = as_real(key_radius, "key_radius", minimum=0.0, strict_min=True)
    value_radius = as_real(value_radius, "value_radius", minimum=0.0, strict_min=True)
    max_bits = as_int(max_bits, "max_bits", minimum=1)
    mats = {k: float_tensor(v, f"matrices[{k!r}]", 2).detach().to(torch.float64) for k, v in matrices.items()}
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
    """Bit sweep in the regime of Corollary B.8: ``F = alpha d^2`` and ``m d = c F ln F``.

    Raises
    ------
    ValueError
        On construction: an empty ``ds`` or widths that are not positive integers, an ``alpha`` or
        ``width_factor`` that is not a finite real ``> 0``, ``reps`` not a positive integer,
        ``max_bits`` outside ``[1, 64]``, or a non-integer seed.
    """

    ds: tuple[int, ...]  # embedding widths d (from 32: below, the value coherence of a small d
    #                      dominates the margin and there is no constant slack to keep)
    alpha: float  # load F / d^2 (F = round(alpha d^2))
    width_factor: float  # c in m = ceil(c F ln F / d), so that P = 3 m d grows like F log F
    reps: int  # replicates per d
    max_bits: int  # bits scanned: 1 .. max_bits
    seed: int = 0  # base seed

    def __post_init__(self):
        if not self.ds:
            raise ValueError("ds must hold at least one embedding width")
        for d in self.ds:
            positive_int("ds entry", d)
        as_real(self.alpha, "alpha", minimum=0.0, strict_min=True)
        as_real(self.width_factor, "width_factor", minimum=0.0, strict_min=True)
        positive_int("reps", self.reps)
        if not 1 <= positive_int("max_bits", self.max_bits) <= 64:
            raise ValueError(f"max_bits must lie in [1, 64]; got {self.max_bits}")
        seed_int(self.seed)


def bits_points(config: BitsConfig) -> list[dict]:
    """The grid ``{"d": d, "rep": r}``."""
    return [{"d": int(d), "rep": r} for d in config.ds for r in range(config.reps)]


def _output_gamma_min(facts):
    """``margin_fn(A, G, B)``: output-scale ``gamma_min`` of the bilinear MLP built from the factors."""

    def margin(A, G, B):
        return float(M.output_margins(BilinearMLP(A, G, B), facts).min())

    return margin


def bits_point(config: BitsConfig, point: dict, device: torch.device) -> dict:
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
