"""Sparse distributed memory (Kanerva 1988) and its relation to attention (Bricken & Pehlevan 2021).

Submodules
----------
geometry
    Hamming balls, the exact circle intersection ``I(dv, d, n)`` (Eq. 2), Kanerva's lune form and
    normal approximation, expected neuron counts, spherical cap intersections (continuous SDM),
    and the log-linear ``beta`` fit (Eq. 10) with the analytic ``beta`` of Eq. 21. A subpackage:
    ``balls``, ``intersection``, ``normal_approximation``, ``shared_neurons``, ``spherical_caps``,
    ``beta_fit``.
exponential
    Why the intersection looks exponential: local decay rates, the exact form of the regression
    ``beta``, and the decomposition of the gap between Eq. 21 and the fitted ``beta``.
read
    Reading an SDM: Hamming distances, the bipolar map of Eq. 5, the pattern view of Eq. 1, attention
    in SDM notation (Eq. 4), and the neuron view with explicit random neurons.
weights
    Normalised SDM weights against fitted-softmax weights (total variation), and the weight on far
    patterns: closed forms, simulations and its exact expectation. A subpackage: ``profiles``,
    ``far_patterns``, ``relative_weights``, ``presets``.
capacity
    Signal-to-noise ratio (Eq. 25), memory capacity (Eqs. 26-27), critical distance and the optimal
    radii of Table 1. A subpackage: ``signal_noise``, ``iterated_reading``, ``optimal_radii``.
kernels
    SDM as a kernel memory: the spectrum of the ball-intersection kernel on the hypercube, binary
    random features (neuron-view SDM as linear attention), the von Mises-Fisher reading of softmax,
    and the Hopfield network of App. B.6.
convergence
    The eight read rules of App. B.7 (binary and continuous SDM, neuron-limited counts, fitted
    softmax), iterative retrieval with the paper's stopping rules, perturbations and the
    convergence experiment.
simulation
    Explicit-neuron simulation of a read bit's signal and noise (Fig. 16) and its exact moments.
projections
    Learnt key projections of App. B.7 (the authors' ``LearnProjections`` protocol and ours) and
    whether they generalise. A subpackage: protocol, training, evaluation, experiment, presets.
convergence_sweeps
    The ``convergence`` sweep: one perturbation level of one setting per point (chapter 36).
trained
    Claims about trained networks (C6-C8, C10-C14 and the open question on context length),
    tested on small attention models the book trains: associative recall with QK-norm and a
    learned ``beta``, its ``beta`` against SDM's optima, recall against ``m`` along Eq. 26,
    effective ``beta`` (with a GPT-2 loader), value norms and LayerNorm. A subpackage:
    ``recall``, ``reference``, ``effective_beta``, ``value_norms``.
trained_sweeps
    The ``trained_recall`` sweep: one trained model per point (chapter 37).
figures
    (subpackage) The chapters' figures, one function per figure (chapters 30-37).

Chapters: geometry 30-32; exponential 32; read 30, 34; weights 34; capacity 33; simulation 33;
kernels 35; convergence, projections and convergence_sweeps 36; trained and trained_sweeps 37.

Everything public in ``geometry``, ``read`` and ``capacity``, and the far-pattern weights of
``weights.far_patterns``, is re-exported here, so ``from assocmem.sdm import circle_intersection``
works. ``capacity.capacity`` is exported as ``memory_capacity`` so that the name
``assocmem.sdm.capacity`` keeps meaning the subpackage.
"""

from assocmem.sdm.capacity import *  # noqa: F401,F403
from assocmem.sdm.capacity import __all__ as _capacity_all
from assocmem.sdm.geometry import *  # noqa: F401,F403
from assocmem.sdm.geometry import __all__ as _geometry_all
from assocmem.sdm.read import *  # noqa: F401,F403
from assocmem.sdm.read import __all__ as _read_all
from assocmem.sdm.weights.far_patterns import *  # noqa: F401,F403
from assocmem.sdm.weights.far_patterns import __all__ as _far_patterns_all

__all__ = list(_geometry_all) + list(_read_all) + list(_capacity_all) + list(_far_patterns_all)
