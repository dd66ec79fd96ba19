"""The geometry of SDM: Hamming balls, circle and cap intersections, and the softmax beta.

In Kanerva's sparse distributed memory (SDM) a pattern written at address ``p`` and read from
address ``xi`` meets in the neurons (hard locations) that lie within Hamming radius ``d`` of both.
With neurons at every address, the read-out weight of the pattern is the number of binary
addresses in the intersection of two radius-``d`` Hamming balls whose centres are ``dv`` apart,
``I(dv, d, n)``. Bricken & Pehlevan (2021) show that this count falls off roughly exponentially in
``dv`` and hence that a normalised SDM read is close to softmax attention with unit-norm vectors
and a fitted inverse temperature ``beta``. This package holds that geometry. It re-exports the
public names of its modules, so ``from assocmem.sdm.geometry import fit_beta`` and
``from assocmem.sdm import geometry; geometry.fit_beta(...)`` both work, and :mod:`assocmem.sdm`
re-exports them all again.

Map
---
:mod:`~assocmem.sdm.geometry.balls`
    **Hamming balls**: :func:`ball_size`, :func:`ball_fraction`, :func:`log_ball_fraction`.
    Chapters 34, 36.
:mod:`~assocmem.sdm.geometry.intersection`
    **The circle intersection** ``I(dv, d, n)``, exactly: the paper's double sum (Eq. 2 / Eq. 12)
    with its summation limits generalised to every ``0 <= dv, d <= n``
    (:func:`circle_intersection`, :func:`log_circle_intersection`), a fast exact table
    (:func:`circle_intersection_table`), Kanerva's lune form (:func:`circle_intersection_lune`)
    and its steps (:func:`lune_term`), brute-force enumeration for small ``n``
    (:func:`circle_intersection_enumerate`), Eq. 2 with the paper's literal limits
    (:func:`circle_intersection_paper_limits`) and every form over every radius and distance
    (:func:`circle_intersection_grid`). Chapter 31; the table in chapters 30, 32, 33, 35.
:mod:`~assocmem.sdm.geometry.normal_approximation`
    **Kanerva's normal approximation** of the intersection fraction
    (:func:`circle_intersection_continuous`). Chapter 31.
:mod:`~assocmem.sdm.geometry.shared_neurons`
    **Neurons shared** by a query and a pattern among ``r`` random neurons: the expected count
    ``I r / 2^n`` (:func:`expected_neurons`, :func:`log_expected_neurons`) and a simulation with
    explicit neurons (:func:`simulate_shared_neurons`). Chapters 30, 31, 33.
:mod:`~assocmem.sdm.geometry.spherical_caps`
    **Continuous SDM on the unit sphere**: the area fraction of the intersection of two
    hyperspherical caps (:func:`cap_intersection`, :func:`log_cap_intersection`, after Lee & Kim
    2014), its single-cap counterpart (:func:`cap_fraction`, :func:`log_cap_fraction`) and a
    Monte Carlo check (:func:`cap_intersection_mc`). Chapters 32, 35.
:mod:`~assocmem.sdm.geometry.beta_fit`
    **The exponential approximation**: the log-linear ``beta`` fit of Eq. 10 (:func:`fit_beta`,
    :class:`BetaFit`, :data:`POOR_FIT_R2`), the analytic ``beta`` of Eq. 21
    (:func:`analytic_beta`, :func:`analytic_log_intersection`) and the single-largest-summand
    approximation of Eq. 2 that Eq. 21 is derived from (:func:`largest_summand`,
    :func:`largest_summand_beta`). Chapter 32; the fitted ``beta`` in chapters 30, 33-36.

Private helpers: ``_common`` (validation of Hamming arguments and of the number of neurons, exact
binomial coefficients), shared by these modules and by :mod:`~assocmem.sdm.capacity`,
:mod:`~assocmem.sdm.weights`, :mod:`~assocmem.sdm.simulation` and :mod:`~assocmem.sdm.convergence`.
Signal-to-noise ratios, optimal radii, weights and read rules build on this package and live in
the sibling modules of :mod:`assocmem.sdm`.

Conventions. Hamming arguments (``n``, ``d``, ``dv``) are integers: Python ints, numpy integers,
integral floats such as ``3.0``, or 0-d numpy arrays or torch tensors holding one
(``torch.tensor(3)``); anything else raises :class:`ValueError`. Exact counts are
Python integers (``2^1000`` does not fit in a float64 or an int64). Cosines and the spherical
radius are floats. The binary-to-sphere dictionary is the bipolar map ``x -> (2x - 1)/sqrt(n)``,
under which Hamming distance ``dv`` is the cosine ``rho = 1 - 2 dv / n`` and radius ``d`` is the
threshold cosine ``c = 1 - 2 d / n``.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. Eq. 1 (SDM read), Eq. 2 / Eq. 12 (circle intersection), Eq. 3 (exponential
  approximation), Eq. 5 (binary-to-sphere map), Eq. 9 and App. B.3 / Eq. 22 (continuous SDM),
  Eq. 10 (beta regression), App. B.2 / Eqs. 16-21 (analytic exponential bound).
- [K88] Kanerva, P. (1988). Sparse Distributed Memory. MIT Press. Ch. 7 and App. B
  (intersection of two circles, the lune, the normal approximation).
- [LK14] Lee, Y., & Kim, W. C. (2014). Concise formulas for the surface area of the
  intersection of two hyperspherical caps. KAIST Technical Report (the intersection as twice
  an integral of ``sin^{n-2}`` times a regularised incomplete beta function).
- [Li11] Li, S. (2011). Concise formulas for the area and volume of a hyperspherical cap.
  Asian Journal of Mathematics and Statistics 4(1), 66-70 (the single cap).
"""

from assocmem.sdm.geometry.balls import ball_fraction, ball_size, log_ball_fraction
from assocmem.sdm.geometry.beta_fit import (
    POOR_FIT_R2,
    BetaFit,
    analytic_beta,
    analytic_log_intersection,
    fit_beta,
    largest_summand,
    largest_summand_beta,
)
from assocmem.sdm.geometry.intersection import (
    circle_intersection,
    circle_intersection_enumerate,
    circle_intersection_grid,
    circle_intersection_lune,
    circle_intersection_paper_limits,
    circle_intersection_table,
    log_circle_intersection,
    lune_term,
)
from assocmem.sdm.geometry.normal_approximation import circle_intersection_continuous
from assocmem.sdm.geometry.shared_neurons import (
    expected_neurons,
    log_expected_neurons,
    simulate_shared_neurons,
)
from assocmem.sdm.geometry.spherical_caps import (
    cap_fraction,
    cap_intersection,
    cap_intersection_mc,
    log_cap_fraction,
    log_cap_intersection,
)

__all__ = [
    # Hamming balls
    "ball_size",
    "ball_fraction",
    "log_ball_fraction",
    # circle intersection
    "circle_intersection",
    "circle_intersection_table",
    "circle_intersection_lune",
    "circle_intersection_enumerate",
    "circle_intersection_continuous",
    "log_circle_intersection",
    # neuron counts
    "expected_neurons",
    "log_expected_neurons",
    # spherical caps
    "cap_fraction",
    "log_cap_fraction",
    "cap_intersection",
    "log_cap_intersection",
    "cap_intersection_mc",
    # exponential approximation
    "BetaFit",
    "fit_beta",
    "analytic_beta",
    "analytic_log_intersection",
    "largest_summand",
    "largest_summand_beta",
    # counting shared neurons (chapter 31)
    "circle_intersection_paper_limits",
    "circle_intersection_grid",
    "lune_term",
    "simulate_shared_neurons",
]
