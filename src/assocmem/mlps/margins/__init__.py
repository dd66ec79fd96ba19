"""Decoding margins of fact-storing memories, the geometry that bounds them, their theory curves.

A memory ``g`` *stores* a fact set when, for every fact ``i`` and every value row ``j != f(i)``,
``<g(k_i), v_f(i)> > <g(k_i), v_j>`` (seed 001, Definition 2.1); the *margin* of fact ``i`` is the
gap between its target score and its best competitor (Definition 2.2) and ``gamma_min`` is the
smallest margin over facts. This package measures all of it; it re-exports the public names of
its modules, so ``from assocmem.mlps import margins as M; M.accuracy(...)`` and
``from assocmem.mlps.margins import accuracy`` both work.

Map
---
:mod:`~assocmem.mlps.margins.decoding`
    **Scores and accuracy** on the model's own output scale (Definitions 2.1, 2.2):
    :func:`scores`, :func:`score_margins`, :func:`output_margins`, :func:`accuracy`, and
    :func:`accuracy_from_outputs` for outputs already computed (e.g. from the features a
    construction computed anyway). Chapters 10, 13 (and 12 through the bit sweep).
:mod:`~assocmem.mlps.margins.kernel_margins`
    **Margins on the kernel-Hebbian scale** used by the paper's bounds (App. B.4, eqs. 23-25):
    with the Gram matrix ``K[t, i] = K(k_t, q_i)`` of the stored keys against the queries
    (``q_i = k_i`` for clean reads), the Hebbian read is ``y_i = sum_t K[t, i] c_f(t)`` (no
    ``1/F``) and ``gamma_i = <y_i, v_f(i)> - max_{j != f(i)} <y_i, v_j>`` over *every* value row:
    :func:`gram_from_features`, :func:`kernel_gram`, :func:`hebbian_readout`,
    :func:`fact_margins`, :func:`gamma_min`, and the per-pair form :func:`pairwise_margins` with
    its signal / cross-talk split (:func:`signal_crosstalk`, eq. 25). Chapters 10, 11, 12.
:mod:`~assocmem.mlps.margins.geometry`
    **Geometric summary statistics** of App. B.5 (Definitions B.9-B.15) and the truncated ones of
    eq. 34: :func:`k_min_diag`, :func:`k_max_off`, :func:`e_k`, :func:`v_min`, :func:`v_max`,
    :func:`b_y`, :func:`e_v`, :func:`l_v`, :func:`kappa`, all at once in
    :func:`geometry_statistics` (a :class:`GeometryStatistics`). Chapter 12.
:mod:`~assocmem.mlps.margins.penalties`
    The **penalties** of Sec. 4.2.2, the inputs of Theorem 4.3's bound (Cor. B.26): :func:`p_key`, :func:`p_val`,
    :func:`p_align`, :func:`s_sig`, :func:`penalty_statistics` (a :class:`PenaltyStatistics`).
    Chapter 12.
:mod:`~assocmem.mlps.margins.bounds`
    **Theory curves**: Theorem 4.1 (eq. 9 / Cor. B.31), eq. 56, the four cells of Table 2, eq. 43,
    the margin bound of Theorem 4.3 in its penalty form (eq. 10, :func:`penalty_bound`) and the
    noisy-query bound eq. 74: :func:`log_term`, :func:`isotropic_bound`,
    :func:`isotropic_bound_eq56`, :func:`arbitrary_keys_bound`, :func:`arbitrary_values_bound`,
    :func:`arbitrary_bound`, :func:`absorbed_bound`, :func:`penalty_bound`,
    :func:`noisy_margin_bound`. Chapter 12.
:mod:`~assocmem.mlps.margins.fits`
    Their least-squares **fits** with non-negative constants: :data:`THEORY_FORMS`
    (:class:`TheoryForm`), :func:`fit_theory_curve` returning a :class:`TheoryFit` with the
    constants, ``R^2`` and a callable, :func:`covariates_from_statistics`, :func:`r_squared`.
    Chapter 12.
:mod:`~assocmem.mlps.margins.noisy_queries`
    **Noisy queries** (App. A.4.2, B.10.1): :func:`perturb_queries`, :func:`noisy_fact_margins`
    (mixed Gram ``<phi(k_t), phi(z_i)>``), :func:`query_lipschitz`. Chapter 12.
:mod:`~assocmem.mlps.margins.bit_complexity`
    **Bit complexity** (App. B.2.6): a uniform symmetric quantiser :func:`quantization_step`,
    :func:`quantize`, :func:`quantize_matrices`, and :func:`min_bits_for_positive_margin` (a
    :class:`BitSearch`). Chapter 12.

Private helpers: ``_common`` (input handling shared by every module) and ``_pairs`` (the
closed-form pair sums of App. B.5-B.6 with :data:`ROUNDING_FACTOR`, shared by
:func:`signal_crosstalk` and the statistics).

Conventions
-----------
Rows throughout (seed 001): keys ``(F, d)``, values ``(V, d)``, codes ``(V, d)`` with row ``j`` the
code ``c_j`` of value ``j`` (Algorithm 1; default ``c_j = v_j``), so fact ``t`` writes
``c_f(t)``. Gram matrices are ``(F, Q)`` with **column ``i`` the query**, ``gram[t, i] =
K(k_t, q_i)``; for clean reads of a symmetric kernel the orientation does not matter. Everything
is computed in float64.

The statistics of App. B.5 are written for *items* ``t = 1..F`` that each carry their own value
``v_t`` and code ``c_t`` (the paper's identity map). Given a :class:`~assocmem.mlps.facts.FactSet` we
set ``v_t = values[f(t)]`` and ``c_t = codes[f(t)]``, which is exact when ``f`` is a bijection onto
the value table (both the tied capacity tables and the untied margin tables are); other maps are
rejected there, since the competitor ``j`` of the paper is then not one item.

References
----------
Seed 001, "MLPs are Hebbians": Sec. 2.1 (Definitions 2.1, 2.2), Sec. 4 (eqs. 6-10 and the
penalty statistics of Sec. 4.2.2), App. A.3.2 (margin sweeps), A.4.2 (noisy-margin diagnostic),
B.2.6 (bit complexity), B.4 (margin setup, eqs. 23-27), B.5 (Definitions B.9-B.15), B.6-B.8
(cross-talk, signal and margin bounds, eqs. 28-56, Table 2), B.10.1 (noisy margin, eqs. 68-76).
"""

from assocmem.mlps.margins import (
    bit_complexity,
    bounds,
    decoding,
    fits,
    geometry,
    kernel_margins,
    noisy_queries,
    penalties,
)
from assocmem.mlps.margins._pairs import ROUNDING_FACTOR
from assocmem.mlps.margins.bit_complexity import (
    BitSearch,
    min_bits_for_positive_margin,
    quantization_step,
    quantize,
    quantize_matrices,
)
from assocmem.mlps.margins.bounds import (
    absorbed_bound,
    arbitrary_bound,
    arbitrary_keys_bound,
    arbitrary_values_bound,
    isotropic_bound,
    isotropic_bound_eq56,
    log_term,
    noisy_margin_bound,
    penalty_bound,
)
from assocmem.mlps.margins.decoding import (
    accuracy,
    accuracy_from_outputs,
    output_margins,
    score_margins,
    scores,
)
from assocmem.mlps.margins.fits import (
    THEORY_FORMS,
    TheoryFit,
    TheoryForm,
    covariates_from_statistics,
    fit_theory_curve,
    r_squared,
)
from assocmem.mlps.margins.geometry import (
    GeometryStatistics,
    b_y,
    e_k,
    e_v,
    geometry_statistics,
    k_max_off,
    k_min_diag,
    kappa,
    l_v,
    v_max,
    v_min,
)
from assocmem.mlps.margins.kernel_margins import (
    fact_margins,
    gamma_min,
    gram_from_features,
    hebbian_readout,
    kernel_gram,
    pairwise_margins,
    signal_crosstalk,
)
from assocmem.mlps.margins.noisy_queries import noisy_fact_margins, perturb_queries, query_lipschitz
from assocmem.mlps.margins.penalties import (
    PenaltyStatistics,
    p_align,
    p_key,
    p_val,
    penalty_statistics,
    s_sig,
)

__all__ = [
    *decoding.__all__,  # scores and margins on the output scale
    *kernel_margins.__all__,  # margins on the kernel-Hebbian scale
    *geometry.__all__,  # geometric statistics (App. B.5)
    *penalties.__all__,  # penalties (Sec. 4.2.2)
    *bounds.__all__,  # theory curves
    *fits.__all__,  # their fits
    *noisy_queries.__all__,  # noisy queries (App. A.4.2, B.10.1)
    *bit_complexity.__all__,  # bit complexity (App. B.2.6)
]
