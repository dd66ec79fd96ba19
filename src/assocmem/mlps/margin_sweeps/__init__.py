"""The margin sweeps of seed 001 (App. A.3.2, A.4.2) and a bit-complexity sweep (App. B.2.6).

Every sweep builds the unwhitened sketched-``K_2`` Hebbian MLP of Algorithm 1 (or the exact
``K_2`` memory) on a fact set with **untied** keys and values, independent and uniform on the unit
sphere, with the identity map (the convention of the authors' margin sweeps), and measures the
minimum decoding margin on the kernel-Hebbian scale, ``gamma_min = min_i (<y_i, v_f(i)> -
max_{j != f(i)} <y_i, v_j>)`` with ``y_i = sum_t K(k_t, k_i) v_f(t)`` (no ``1/F``; see
:func:`assocmem.mlps.margins.fact_margins`). Chapter 12 (How margins scale) uses all of it, as
``from assocmem.mlps import margin_sweeps as MS``: this package re-exports the public names of its
modules, and importing it registers the sweeps (the registry finds it by its ``_sweeps`` name).

Map
---
:mod:`~assocmem.mlps.margin_sweeps.points`
    The grids and points of the isotropic, spike and noisy sweeps: :class:`IsotropicConfig`,
    :class:`SpikeConfig`, :class:`NoisyConfig`, their ``*_points`` and ``*_point``,
    :func:`sub_seeds`, :func:`statistics_row` (margins and App. B.5 statistics of one fact set),
    :data:`SPIKE_FORMS`.
:mod:`~assocmem.mlps.margin_sweeps.bit_complexity`
    The bit sweep and Theorem B.6's sufficient bit count: :class:`BitsConfig`,
    :func:`bits_points`, :func:`bits_point`, :func:`theorem_b6_bits` (a :class:`B6Bits`).
:mod:`~assocmem.mlps.margin_sweeps.registration`
    The registered sweeps and their presets: :data:`MARGIN_SWEEPS`, :data:`STORED_PRESET`.
:mod:`~assocmem.mlps.margin_sweeps.fits`
    The analysis of the stored rows: :func:`seed_means`, the theory-curve fits
    :func:`fit_isotropic_sweep`, :func:`fit_spike_sweep`, :func:`fit_statistics_sweep`,
    :func:`fit_noisy_sweep` (each a :class:`SweepFit`; :data:`EQ9_SPECS`, :data:`EQ56_SPECS`,
    :data:`SPIKE_FREE`, :func:`statistics_from_frame`), the geometry-free baseline
    :func:`fit_power_baseline` (a :class:`BaselineFit`), the noisy-query diagnostics :func:`noisy_curvature` (a
    :class:`Curvature`) and :func:`smallest_noisy_constant`, and :func:`log2_slope`.
:mod:`~assocmem.mlps.margin_sweeps.agreement`
    The live-against-stored check: :func:`live_check`, :func:`compare_overlap`,
    :func:`agreement_rules` and their rules :data:`EXACT_COLUMNS`, :data:`THRESHOLD_COLUMNS`,
    :data:`MAX_CHANGED_ROWS`, :data:`ROUNDING_TOL`, :data:`COLUMN_TOL`.

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

References
----------
Seed 001, Sec. 4.2 (eq. 9, Theorem 4.3), App. A.3.2 (margin sweeps), A.4.2 (noisy-margin
diagnostic), B.2.6 (Lemma B.4, Lemma B.5, Theorem B.6, Corollary B.8), B.8 (eqs. 44, 46, 51, 56,
Table 2), B.10.1 (eq. 74).
"""

from assocmem.mlps.margin_sweeps import agreement, bit_complexity, fits, points, registration
from assocmem.mlps.margin_sweeps.agreement import (
    COLUMN_TOL,
    EXACT_COLUMNS,
    MAX_CHANGED_ROWS,
    ROUNDING_TOL,
    THRESHOLD_COLUMNS,
    agreement_rules,
    compare_overlap,
    live_check,
)
from assocmem.mlps.margin_sweeps.bit_complexity import B6Bits, BitsConfig, bits_point, bits_points, theorem_b6_bits
from assocmem.mlps.margin_sweeps.fits import (
    EQ9_SPECS,
    EQ56_SPECS,
    SPIKE_FREE,
    Curvature,
    SweepFit,
    fit_isotropic_sweep,
    fit_noisy_sweep,
    fit_spike_sweep,
    fit_statistics_sweep,
    fit_power_baseline,
    BaselineFit,
    log2_slope,
    noisy_curvature,
    seed_means,
    smallest_noisy_constant,
    statistics_from_frame,
)
from assocmem.mlps.margin_sweeps.points import (
    SPIKE_FORMS,
    IsotropicConfig,
    NoisyConfig,
    SpikeConfig,
    isotropic_point,
    isotropic_points,
    noisy_point,
    noisy_points,
    spike_point,
    spike_points,
    statistics_row,
    sub_seeds,
)
from assocmem.mlps.margin_sweeps.registration import MARGIN_SWEEPS, STORED_PRESET

__all__ = [
    *points.__all__,
    *bit_complexity.__all__,
    *registration.__all__,
    *fits.__all__,
    *agreement.__all__,
]
