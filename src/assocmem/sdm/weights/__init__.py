"""How close are SDM's read weights to a fitted softmax? Profiles, total variation, far patterns.

Bricken & Pehlevan (2021) argue that a normalised SDM read (Eq. 1) and softmax attention over
unit vectors (Eq. 4) weight the stored patterns alike: pattern ``mu`` at Hamming distance
``dv_mu`` from the query gets

* in SDM, ``I(dv_mu, d, n) / sum_nu I(dv_nu, d, n)`` with ``I`` the circle intersection (Eq. 2),
  or the cap intersection ``Ic`` in continuous SDM (Eq. 9, App. B.3);
* in attention, ``exp(beta rho_mu) / sum_nu exp(beta rho_nu)`` with ``rho = 1 - 2 dv / n`` the
  cosine of the bipolar images (Eq. 5) and ``beta`` fitted to ``log I`` (Eq. 10).

This package measures how far apart the two weightings are, in the two settings of the review of
the paper (seed 002, "What my recomputation of the approximation shows"). It re-exports the public
names of its modules, so ``from assocmem.sdm.weights import compare_weights`` works; the
``far_pattern_weight*`` functions are also re-exported by :mod:`assocmem.sdm`.

Map
---
:mod:`~assocmem.sdm.weights.profiles`
    **One pattern at every distance** ``0..n`` (the view of the paper's Fig. 3): the normalised
    profiles (:func:`sdm_weight_profile`, :func:`softmax_weight_profile`, :func:`sdm_log_weights`,
    :func:`cosine_of_distance`, :data:`INTERSECTIONS`), their total-variation distance
    (:func:`total_variation`), a comparison that splits it by distance band and measures the local
    disagreement of the un-normalised shapes (:func:`compare_weights`, :class:`WeightComparison`),
    and the ``beta`` that minimises it (:func:`tv_of_beta`, :func:`tv_optimal_beta`). Chapter 34.
:mod:`~assocmem.sdm.weights.far_patterns`
    **Many random far patterns, query equal to its target**, in closed form and by simulation: the
    softmax far weight ``m e^{-beta} / (1 + m e^{-beta})`` for exactly orthogonal patterns
    (:func:`far_pattern_weight`), its mean-field version for random ones
    (:func:`far_pattern_weight_meanfield`) and a vector-level Monte Carlo
    (:func:`far_pattern_weight_mc`); SDM's mean-field far weight (:func:`far_pattern_weight_sdm`)
    and its Monte Carlo with the exact intersection (:func:`far_pattern_weight_sdm_mc`).
    Chapter 34.
:mod:`~assocmem.sdm.weights.relative_weights`
    **The same, exactly**: the weight relative to the target at each distance
    (:func:`softmax_relative_weights`, :func:`sdm_relative_weights`), the exact expected total far
    weight for ``m`` uniformly random binary patterns (:func:`expected_far_weight`, a
    one-dimensional integral), a sampler with common random numbers for both weightings
    (:func:`sample_far_distances`, :func:`far_weight_from_distances`), the expected contribution of
    each distance (:func:`far_weight_contributions`), the probability that SDM gives the far
    patterns exactly zero weight (:func:`prob_sdm_far_weight_zero`), and the target's expected
    share of a read from ``k`` bits away (:func:`expected_target_share`). Chapters 34, 36.
:mod:`~assocmem.sdm.weights.presets`
    The run sizes of chapter 34 (:class:`WeightsPreset`, :data:`PRESETS`, :func:`get_preset`).

The far-pattern modules read their counts through :mod:`assocmem.sdm.capacity`'s private
``_common`` (the SNR model's validation and exact ball sizes) and their Hamming arguments through
:mod:`assocmem.sdm.geometry`'s.

Conventions. Distances are integers in ``[0, n]``; weights are float64 numpy arrays indexed by
distance (``[dv]``, shape ``(n + 1,)``) unless a set of distances ``dvs`` is given. Binary
intersections are exact Python integers until they are normalised (one rounding per weight).

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. Eq. 1 (SDM read), Eq. 2 (circle intersection), Eqs. 4-6 (attention, the
  binary-to-sphere map, the approximation), Eq. 9 and App. B.3 (continuous SDM), Eq. 10 (the
  beta regression), Fig. 3 and App. B.2 (weights of far patterns), App. B.7 (convergence).
- [S002] Seed 002, a critical review of [BP21]: "What my recomputation of the approximation
  shows" (normalised-weight discrepancy, weight on far patterns) and claims C5, C16.
"""

from assocmem.sdm.weights.far_patterns import (
    far_pattern_weight,
    far_pattern_weight_mc,
    far_pattern_weight_meanfield,
    far_pattern_weight_sdm,
    far_pattern_weight_sdm_mc,
)
from assocmem.sdm.weights.presets import PRESETS, WeightsPreset, get_preset
from assocmem.sdm.weights.profiles import (
    INTERSECTIONS,
    WeightComparison,
    compare_weights,
    cosine_of_distance,
    sdm_log_weights,
    sdm_weight_profile,
    softmax_weight_profile,
    total_variation,
    tv_of_beta,
    tv_optimal_beta,
)
from assocmem.sdm.weights.relative_weights import (
    expected_far_weight,
    expected_target_share,
    far_weight_contributions,
    far_weight_from_distances,
    prob_sdm_far_weight_zero,
    sample_far_distances,
    sdm_relative_weights,
    softmax_relative_weights,
)

__all__ = [
    # presets
    "WeightsPreset",
    "PRESETS",
    "get_preset",
    # one pattern per distance
    "INTERSECTIONS",
    "cosine_of_distance",
    "sdm_log_weights",
    "sdm_weight_profile",
    "softmax_weight_profile",
    "total_variation",
    "WeightComparison",
    "compare_weights",
    "tv_of_beta",
    "tv_optimal_beta",
    # far patterns: closed forms and simulations
    "far_pattern_weight",
    "far_pattern_weight_meanfield",
    "far_pattern_weight_mc",
    "far_pattern_weight_sdm",
    "far_pattern_weight_sdm_mc",
    # far patterns: exact expectations
    "softmax_relative_weights",
    "sdm_relative_weights",
    "expected_far_weight",
    "far_weight_contributions",
    "sample_far_distances",
    "far_weight_from_distances",
    "prob_sdm_far_weight_zero",
    "expected_target_share",
]
