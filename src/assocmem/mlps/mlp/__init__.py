"""Fact-storing MLPs: the modules, the closed-form Hebbian constructions, the NTK baseline and gradient descent.

Every memory here maps a key ``x`` in ``R^d`` to an output in ``R^{d_c}`` that is decoded by inner
products with the value rows: fact ``i`` is stored when ``argmax_j <MLP(k_i), v_j> = f(i)``
(seed 001, Definition 2.1). This package re-exports the public names of its modules, so
``from assocmem.mlps.mlp import hebbian_mlp`` works as before the split.

Map
---
=======================  ===================================================================  ========
module                   holds                                                                chapters
=======================  ===================================================================  ========
``architectures``        :class:`FactMLP`, :class:`BilinearConfig`, :class:`BilinearMLP`,     10-13
                         :class:`ExactK2Memory`, :class:`GatedReLUMLP` (with their
                         ``num_parameters``), :func:`bilinear_features` (eq. 4, eq. 7,
                         Theorem B.1)
``readout``              :func:`hebbian_readout`, :data:`WHITENINGS`: the readout of          10-13
                         Algorithm 1, raw or whitened (eqs. 12-14), and the blocked
                         Gram / Cholesky linear algebra that solves it;
                         :func:`hebbian_readout_reference` (plain normal equations)
``hebbian``              :func:`hebbian_mlp` (sketched ``K_2``, Algorithm 1) and              10-13
                         :func:`exact_k2_memory` (its infinite-width limit, Lemma B.2);
                         :func:`hebbian_mlp_reference` (plain whitened construction)
``data_dependent``       :func:`data_dependent_mlp` and the factor least squares of           10, 13
                         eqs. 17-18, :func:`solve_factor` (matrix-free PCG) and
                         :func:`solve_factor_reference` (dense);
                         :func:`data_dependent_mlp_reference` (plain Jacobi CG)
``ntk``                  :func:`ntk_mlp`: the degree-1 Hermite (NTK) baseline of App. B.3     10, 13
``gradient_descent``     :func:`train_mlp`: the full-batch Adam baseline of App. A.1.1;       10, 13
                         :func:`train_mlps` (several widths trained as one stack, the
                         capacity search's fast path) and :func:`train_mlps_reference`
``whitened_search``      the whitened capacity search over nested draws                       13
                         (``draw="nested"``), reusing features and Gram matrix across
                         widths: ``NestedWhitenedCache``, ``whitened_nested_search`` and
                         its plain ``whitened_nested_search_reference`` (not re-exported)
``_common``              private argument checks and the seeded Gaussian draws (block and
                         nested)
=======================  ===================================================================  ========

Chapter 10 is "Facts, margins and the counting bound", 11 "MLPs are kernel Hebbians" (it calls
:func:`bilinear_features`, and :mod:`assocmem.mlps.hebbian_theory` rewrites Algorithm 1's MLP),
12 "How margins scale" (through :mod:`assocmem.mlps.margin_sweeps`) and 13 "Facts per parameter"
(through :mod:`assocmem.mlps.capacity_sweeps`).

Conventions
-----------
Rows throughout, as in the seed: keys ``K`` are ``(F, d)``, the targets ``C_f`` are ``(F, d_c)``
with row ``i`` the code ``c_f(i) = v_f(i)`` (:attr:`~assocmem.mlps.facts.FactSet.targets`), the
feature matrix ``Phi`` is ``(F, m)`` with row ``i`` ``phi(k_i)``, and the readout ``B`` is
``(d_c, m)``. Constructions run in float64 on the device of the fact set; gradient descent runs in
float32 by default. A module's ``forward`` casts its input to the module's dtype, so a float32
model can be queried with float64 keys (a cast that overflows float32 raises). Inputs follow the
dtype policy of :mod:`assocmem.dtypes`: float16 / bfloat16 tensors are refused, and non-finite
features, keys, targets or weights are refused before any work (never a NaN readout).

References beside fast paths: each benchmarked fast path has a plain, obviously correct version
named ``<fast path>_reference`` in the same module (whole matrices, ``torch.linalg.solve``,
textbook CG), tested equal to it and timed beside it by ``benchmarks/bench_ratios.py``.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 2.2 (eq. 4),
Sec. 3.1 (Theorem 3.1 / B.1), Sec. 4.1 (eqs. 7-8), Sec. 4.3 (whitened and data-dependent
variants), App. A.1.1 (MLP variants), A.3.1 (capacity protocol), B.2.2 (Lemma B.2), B.2.3
(Algorithm 1), B.2.4 (eqs. 12-14), B.2.5 (eqs. 17-18), B.3 (NTK baseline).
E. Nichani, J. D. Lee, A. Bietti (2024), "Understanding Factual Recall in Transformers via
Associative Memories".
"""

from assocmem.mlps.mlp import architectures, data_dependent, gradient_descent, hebbian, ntk, readout
from assocmem.mlps.mlp.architectures import (
    BilinearConfig,
    BilinearMLP,
    ExactK2Memory,
    FactMLP,
    GatedReLUMLP,
    bilinear_features,
)
from assocmem.mlps.mlp.data_dependent import (
    data_dependent_mlp,
    data_dependent_mlp_reference,
    solve_factor,
    solve_factor_reference,
)
from assocmem.mlps.mlp.gradient_descent import train_mlp, train_mlps, train_mlps_reference
from assocmem.mlps.mlp.hebbian import exact_k2_memory, hebbian_mlp, hebbian_mlp_reference
from assocmem.mlps.mlp.ntk import ntk_mlp
from assocmem.mlps.mlp.readout import WHITENINGS, hebbian_readout, hebbian_readout_reference

__all__ = [
    *architectures.__all__,  # the fact memories and the bilinear features
    *readout.__all__,  # the readout of Algorithm 1, raw or whitened
    *hebbian.__all__,  # Algorithm 1 and the exact-K2 memory
    *data_dependent.__all__,  # eqs. 17-18
    *ntk.__all__,  # the NTK baseline
    *gradient_descent.__all__,  # the GD baseline
]
