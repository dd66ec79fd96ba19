"""Counting facts: the information-theoretic lower bound on fact storage, and Hebbian capacities.

Two halves, both for chapter 10, "Facts, margins and the counting bound" (Part II), which reads
this package as ``from assocmem.mlps import counting as C``; the package re-exports the public
names of its modules, so ``C.min_parameters`` and ``from assocmem.mlps.counting import
min_parameters_bound`` work as before the split.

Map
---
=====================  =====================================================================  ========
module                 holds                                                                  chapters
=====================  =====================================================================  ========
``bound``              the counting bound of Theorem 2.4 (``W >= F log2 V / b``), exact and    10, 13
                       real-valued: :func:`num_fact_sets`, :func:`log2_num_fact_sets`,
                       :func:`min_parameters`, :func:`min_parameters_bound`,
                       :func:`max_facts`
``hebbian_memories``   Hebbian memories on random facts (eq. 5 and the exact ``K_2``           10
                       memory): :data:`HEBBIAN_KERNELS`, :func:`hebbian_memory`,
                       :func:`hebbian_gram`, :func:`hebbian_point`, :func:`hebbian_f_sweep`,
                       :func:`hebbian_capacity`, :func:`hebbian_capacity_scan`,
                       :class:`CapacityResult`
``scaling``            cross-talk second moments (eq. 6), the capacity heuristic               10
                       ``F ln F = c d^p`` and power-law fits: :func:`kernel_second_moment`,
                       :func:`crosstalk_second_moment`, :func:`crosstalk_second_moment_mc`,
                       :data:`HEURISTIC_CONSTANTS`, :func:`capacity_heuristic`,
                       :class:`PowerLawFit`, :func:`power_law_fit`
``presets``            the chapter's sizes: :class:`CountingPreset`, :data:`PRESETS`,          10
                       :func:`get_preset`, :func:`geometric_grid`
=====================  =====================================================================  ========

Chapter 13, "Facts per parameter", draws :func:`min_parameters_bound` through
:mod:`assocmem.mlps.capacity_sweeps`.

Conventions
-----------
Rows throughout, as in the seed: keys ``(F, d)``, values ``(V, d)``. Margins are on the
kernel-Hebbian scale (no ``1/F``; :func:`assocmem.mlps.margins.fact_margins`). Everything is float64.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 2.1
(Definitions 2.1-2.3, Theorem 2.4), Sec. 2.2 (eq. 5), Sec. 4 (eq. 6), App. B.1 (proof of
Theorem 2.4).
"""

from assocmem.mlps.counting import bound, hebbian_memories, presets, scaling
from assocmem.mlps.counting.bound import (
    EXACT_BITS_LIMIT,  # noqa: F401  (public, outside __all__, as before the split)
    log2_num_fact_sets,
    max_facts,
    min_parameters,
    min_parameters_bound,
    num_fact_sets,
)
from assocmem.mlps.counting.hebbian_memories import (
    HEBBIAN_KERNELS,
    CapacityResult,
    hebbian_capacity,
    hebbian_capacity_scan,
    hebbian_f_sweep,
    hebbian_gram,
    hebbian_memory,
    hebbian_point,
)
from assocmem.mlps.counting.presets import PRESETS, CountingPreset, geometric_grid, get_preset
from assocmem.mlps.counting.scaling import (
    HEURISTIC_CONSTANTS,
    PowerLawFit,
    capacity_heuristic,
    crosstalk_second_moment,
    crosstalk_second_moment_mc,
    kernel_second_moment,
    power_law_fit,
)

__all__ = [
    *bound.__all__,  # Theorem 2.4
    *hebbian_memories.__all__,  # Hebbian memories on random facts
    *scaling.__all__,  # cross-talk moments, heuristic, power laws
    *presets.__all__,  # the chapter's sizes
]
