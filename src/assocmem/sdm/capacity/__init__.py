"""Signal-to-noise ratio, capacity, critical distance and optimal radii of SDM.

Bricken & Pehlevan (2021) identify the read/write radius ``d`` of Kanerva's sparse distributed
memory (SDM) with the inverse temperature ``beta`` of softmax attention and ask which ``d`` (and
hence which ``beta``) is optimal for random patterns. App. B.4 gives a signal-to-noise model of a
read; App. B.5 optimises it three ways (Table 1). This package implements that model exactly, in
log arithmetic, so the canonical setting (``n = 1000``, ``r = 10^6`` neurons, ``m = 10^4``
patterns) and the Attention setting (``n = 64``, ``r = 2^64``, ``m = 1024``) need neither
``2^n`` nor ``r`` as a float. It re-exports the public names of its modules, so
``from assocmem.sdm.capacity import table1`` works, and :mod:`assocmem.sdm` re-exports them again.

Map
---
:mod:`~assocmem.sdm.capacity.signal_noise`
    **Signal-to-noise ratio and memory capacity**: :func:`snr` (Eq. 25) with the mean overlap of
    a random pattern (:func:`mean_random_overlap`), :func:`capacity` (Eqs. 26-27; exported as
    :data:`memory_capacity` so that a star import into :mod:`assocmem.sdm` does not shadow this
    subpackage; ``from assocmem.sdm.capacity import capacity`` still gives the function) and the
    z-score of a retrieval target (:func:`retrieval_z`). Chapter 33.
:mod:`~assocmem.sdm.capacity.iterated_reading`
    **Kanerva's iterated-reading model**: the expected distance after one read
    (:func:`read_distance_map`), its literal iteration (:func:`read_trajectory`) and the critical
    distance (:func:`critical_distance`, :func:`critical_distance_analysis`,
    :class:`CriticalDistance`). Chapter 33.
:mod:`~assocmem.sdm.capacity.optimal_radii`
    **The optima of Table 1**: the settings (:class:`SDMSetting`, :data:`CANONICAL`,
    :data:`ATTENTION`) and criteria (:data:`CRITERIA`), :func:`optimal_radius`
    (:class:`OptimalRadius`), :func:`table1` and the continuous optima
    :func:`snr_optimal_fraction`, :func:`memory_optimal_fraction`, :func:`radius_for_fraction`.
    Chapter 33.

Private helpers: ``_common`` (validation of counts, neurons and z-scores; exact ball sizes for every
radius), shared by these modules and by :mod:`assocmem.sdm.weights.far_patterns`, which holds how
much weight far patterns get when the query equals its target (``far_pattern_weight*``,
chapter 34).

The model (App. B.4)
--------------------
Patterns are random, stored autoassociatively with bipolar (``+-1``) contents in ``r`` neurons
at uniformly random addresses, each written to and read from every neuron within Hamming
distance ``d``. Reading at a query ``xi`` that lies ``x`` bits from its target gives, at each bit,
the sum ``S = sum_mu I_mu b_mu`` over the stored patterns, where ``I_mu`` is the number of neurons
in the intersection of the read ball and the write ball of pattern ``mu`` and ``b_mu`` its bit.
With the counts Poisson and independent,

* signal ``E[I*] = I(x, d, n) r / 2^n`` (the expected neurons shared with the target; with
  ``x = 0`` this is ``p r``, ``p`` the ball fraction), variance ``E[I*]``;
* noise from each of the other ``m - 1`` patterns, mean 0 and variance
  ``E[I_mu^2] = E[I_mu] + E[I_mu]^2``.

So ``SNR = E[I*] / sqrt(E[I*] + (m - 1) (E[I_mu] + E[I_mu]^2))`` (Eq. 25). For the mean overlap with
a random pattern we use ``E[I_mu] = p^2 r`` (``mean_overlap="random"``, the default): averaged
over a uniformly random pattern the intersection is exactly ``|B| p``, i.e. ``p^2 2^n``
addresses. The alternative ``mean_overlap="orthogonal"`` evaluates the intersection at the
orthogonal distance ``floor(n/2)`` (all other patterns exactly orthogonal, App. B.4's
assumption); it vanishes at ``n = 64`` for ``d < 16`` and is offered only to show that.

Numbers that do and do not reproduce
------------------------------------
With the defaults, :func:`table1` gives ``d* = 447, 444, 448`` (SNR, memory, critical distance)
in the canonical setting and ``d* = 11, 5, 15`` in the Attention setting, the values of Table 1.
The choices each entry depends on are recorded in :func:`optimal_radius`; in short, the SNR
entries need the paper's continuous optimum (the integer maximum of Eq. 25 is at 446 in the
canonical setting), and the Attention critical-distance optimum is a tie (``d = 15`` and ``16``
share the largest critical distance, 24 bits) broken towards the smaller radius.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. App. B.4 (Eq. 25, signal-to-noise ratio; Eqs. 26-27, memory capacity), App. B.5
  (Table 1, optimal radii; Fig. 17, critical distance), Eq. 10 (the beta regression).
- [K88] Kanerva, P. (1988). Sparse Distributed Memory. MIT Press. Ch. 7 (reading from a noisy
  address: the expected distance after one read, iterated reading and the critical distance,
  Fig. 7.3).
- [K93] Kanerva, P. (1993). Sparse distributed memory and related models. In M. H. Hassoun
  (Ed.), Associative Neural Memories: Theory and Implementation. Oxford University Press.
  §3.6 (the signal-to-noise ratio of a read and its optimal activation probability
  ``p = (2 m r)^(-1/3)``). The critical distance is in the book [K88], not here.
"""

from assocmem.sdm.capacity.iterated_reading import (
    CriticalDistance,
    critical_distance,
    critical_distance_analysis,
    read_distance_map,
    read_trajectory,
)
from assocmem.sdm.capacity.optimal_radii import (
    ATTENTION,
    CANONICAL,
    CRITERIA,
    OptimalRadius,
    SDMSetting,
    memory_optimal_fraction,
    optimal_radius,
    radius_for_fraction,
    snr_optimal_fraction,
    table1,
)
from assocmem.sdm.capacity.signal_noise import (
    capacity,
    mean_random_overlap,
    memory_capacity,
    retrieval_z,
    snr,
)

__all__ = [
    # settings and criteria
    "SDMSetting",
    "CANONICAL",
    "ATTENTION",
    "CRITERIA",
    # Eq. 25-27
    "mean_random_overlap",
    "snr",
    "memory_capacity",  # = capacity; the bare name would shadow this submodule on re-export
    "retrieval_z",
    # critical distance
    "read_distance_map",
    "read_trajectory",
    "CriticalDistance",
    "critical_distance_analysis",
    "critical_distance",
    # optima
    "snr_optimal_fraction",
    "memory_optimal_fraction",
    "radius_for_fraction",
    "OptimalRadius",
    "optimal_radius",
    "table1",
]
