"""The kernel-Hebbian reading of MLPs, checked: Theorem 3.1, Lemmas B.2, B.3 and B.34 of seed 001.

Four statements of *MLPs are Hebbians* are about exact algebra or simple probability, so each can be
checked directly on random instances. Chapter 11, "MLPs are kernel Hebbians", reads this package as
``from assocmem.mlps import hebbian_theory as ht``; the package re-exports the public names of its
modules, so ``ht.theorem31_study`` and ``from assocmem.mlps.hebbian_theory import welch_study`` work
as before the split.

Map
---
=============  ===========================================================================  ========
module         holds                                                                        chapters
=============  ===========================================================================  ========
``rewrite``    **Theorem 3.1 / B.1** (MLPs are Hebbians): a gated MLP equals the whitened   11
               kernel Hebbian memory of its stored inputs. :data:`GATES`,
               :class:`GatedMLP`, :func:`gated_mlp`, :class:`HebbianRewrite`,
               :func:`hebbian_rewrite`, :func:`rewrite_errors`, :func:`rewrite_tolerance`,
               :func:`random_unit_inputs`, :func:`theorem31_study`
``sketch``     **Lemma B.2** (bilinear features sketch ``K_2``, error ``~ m^{-1/2}``).       11
               :func:`sketch_kernel`, :func:`sketch_variance`, :class:`SketchErrors`,
               :func:`sketch_error`, :class:`LogLogFit`, :func:`loglog_fit`,
               :func:`pair_with_overlap`, :func:`overlap_pairs`, :func:`bonferroni_z`
``whitening``  **Lemma B.3** (whitening minimises ``||K_M||_F^2``).                         11
               :func:`feature_covariance`, :func:`kernel_energy`,
               :func:`kernel_energy_reference`, :func:`whitened_kernel_energy`,
               :func:`key_crowding`, :func:`normalise_preconditioner`,
               :func:`random_preconditioners`, :func:`preconditioner_experiment`
``welch``      **Lemma B.34** (Welch / Frobenius: ``||K||_F^2 >= tr(K)^2 / m``).            11
               :class:`WelchFrobenius`, :func:`welch_frobenius_bound`,
               :func:`harmonic_frame`, :func:`simplex_etf`, :func:`random_rank_m_kernels`,
               :func:`welch_study`
``presets``    the chapter's sizes: :class:`HebbianTheoryPreset`, :data:`PRESETS`,          11
               :func:`get_preset`
``_common``    :func:`unit_rows` and private float64 checks and seeded generators           11
=============  ===========================================================================  ========

Conventions
-----------
Rows throughout, as in seed 001: stored inputs (keys) are ``(F, d)``, the feature matrix ``Phi`` is
``(F, m)`` with row ``t`` equal to ``phi(x_t)``, readouts are ``(d_c, m)``, Gram matrices are
``(F, Q)`` with entry ``[t, i] = K(x_t, z_i)``. Everything is float64.

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): Sec. 3.1 (Theorem 3.1), Sec. 4.1 (eqs. 7-8), App. B.2.1 (Theorem B.1),
B.2.2 (Lemma B.2), B.2.3 (Algorithm 1), B.2.4 (eqs. 12-16, Lemma B.3), B.8.6 (Definition B.33,
Lemma B.34).
L. Isserlis (1918), on the moments of the normal distribution (fourth moments in Lemma B.2's variance).
L. R. Welch (1974), "Lower bounds on the maximum cross correlation of signals".
N. J. Higham (2002), *Accuracy and Stability of Numerical Algorithms*, 2nd ed. (Cholesky error bounds).
"""

from assocmem.mlps.hebbian_theory import _common, presets, rewrite, sketch, welch, whitening
from assocmem.mlps.hebbian_theory._common import unit_rows
from assocmem.mlps.hebbian_theory.presets import PRESETS, HebbianTheoryPreset, get_preset
from assocmem.mlps.hebbian_theory.rewrite import (
    GATES,
    GatedMLP,
    HebbianRewrite,
    gated_mlp,
    hebbian_rewrite,
    random_unit_inputs,
    rewrite_errors,
    rewrite_tolerance,
    theorem31_study,
)
from assocmem.mlps.hebbian_theory.sketch import (
    LogLogFit,
    SketchErrors,
    bonferroni_z,
    loglog_fit,
    overlap_pairs,
    pair_with_overlap,
    sketch_error,
    sketch_kernel,
    sketch_variance,
)
from assocmem.mlps.hebbian_theory.welch import (
    WelchFrobenius,
    harmonic_frame,
    random_rank_m_kernels,
    simplex_etf,
    welch_frobenius_bound,
    welch_study,
)
from assocmem.mlps.hebbian_theory.whitening import (
    feature_covariance,
    kernel_energy,
    kernel_energy_reference,
    key_crowding,
    normalise_preconditioner,
    preconditioner_experiment,
    random_preconditioners,
    whitened_kernel_energy,
)

__all__ = [
    *rewrite.__all__,  # Theorem 3.1 / B.1
    *_common.__all__,  # unit_rows
    *sketch.__all__,  # Lemma B.2
    *whitening.__all__,  # Lemma B.3
    *welch.__all__,  # Lemma B.34
    *presets.__all__,  # the chapter's sizes
]
