"""SDM as a kernel memory: the ball kernel, binary random features, vMF posteriors and Hopfield.

The source (a critical review of Bricken & Pehlevan 2021, section "Connections") restates the
SDM-attention correspondence in the language of kernels. This package makes each statement
computable; chapter 35 ("SDM as a kernel memory") uses every submodule.

Submodules
----------
hypercube
    **The ball kernel on** ``Z_2^n``. With a neuron at every address the weight of a pattern is
    ``k(xi, p) = I(d(xi, p), d, n) = sum_x 1[d(x, xi) <= d] 1[d(x, p) <= d]``, the
    autocorrelation of the ball indicator on the group ``Z_2^n``. A kernel that depends only on
    ``xi + p`` is diagonalised by the Walsh characters ``chi_s(x) = (-1)^{s.x}``; for a function of
    the Hamming weight the eigenvalue of ``chi_s`` depends only on ``w = |s|`` and is the
    Krawtchouk transform ``lambda(w) = sum_j k(j) K_j(w; n)``. For the ball kernel it equals the
    square of the ball indicator's transform ``b(w) = sum_{j <= d} K_j(w; n)``, hence
    ``lambda >= 0``: :func:`krawtchouk_matrix`, :func:`radial_spectrum`,
    :func:`ball_kernel_spectrum`, :func:`walsh_hadamard`, and the brute-force matrices
    :func:`hamming_kernel_matrix`, :func:`ball_kernel_matrix`. The exponential kernel
    ``exp(beta rho)``, ``rho = 1 - 2 dv / n``, on the same cube:
    :func:`log_exponential_kernel_spectrum`.
sphere
    **Zonal kernels on the sphere**: the cap intersection ``Ic(x^T y)`` and ``exp(beta x^T y)``
    as Gram matrices of points (:func:`random_unit_vectors`, :func:`cap_kernel_gram`,
    :func:`exponential_kernel_gram`, :func:`psd_tolerance`).
random_features
    **Binary random features**: ``phi_tau(x) = 1[d(x, x_tau) <= d]`` for ``r`` neurons
    (:func:`binary_random_features`); neuron-view SDM as linear attention with that feature map
    (:func:`sdm_as_linear_attention`); the Monte Carlo test of ``E[phi(xi)^T phi(p)] = I r / 2^n``
    (:func:`shared_feature_counts`, :func:`feature_kernel_mc`); the neurons needed for a given
    weight precision (:func:`neurons_for_precision`).
vmf
    **Softmax as a von Mises-Fisher posterior**: :func:`vmf_log_normalizer`,
    :func:`vmf_log_density`, :func:`vmf_responsibilities`, and the mixture that reproduces softmax
    with unnormalised keys (:func:`attention_as_vmf_mixture`).
hopfield
    **Hopfield as a special case (App. B.6)**: :func:`hopfield_field`, :func:`hopfield_update`,
    App. B.6's chain of changes literally (:func:`app_b6_field`), Hopfield as a pattern-view SDM
    over a mirrored memory (:func:`hopfield_field_as_sdm`), the parameter setting that stays inside
    SDM (:func:`keeler_sdm_read`), and side-by-side experiments (:func:`iterate_reads`,
    :func:`compare_retrieval`, :func:`one_step_agreement`, :func:`unanimity_violations`).
presets
    The sizes of chapter 35's experiments: :class:`KernelPreset`, :data:`PRESETS`,
    :func:`get_preset`.

Every public name of the submodules is re-exported here, so ``from assocmem.sdm.kernels import
ball_kernel_spectrum`` works.

Conventions follow :mod:`assocmem.sdm.read`: binary tensors hold 0/1, patterns are rows
(``(m, n)``), the bipolar image of ``x`` is ``2x - 1``. Exact spectra are Python integers.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. Eq. 1 (SDM read), Eq. 2 (circle intersection), Eq. 4/6 (attention), App. B.3
  (continuous SDM), App. B.6 (Hopfield as a special case), §6 (softmax "with no additional
  computational cost").
- [S002] Seed 002 (the critical review), "Connections" (the kernel statements, linear attention
  with a binary feature map, the vMF reading) and claims C9, C16.
- [KVPF20] Katharopoulos, A., et al. (2020). Transformers are RNNs. ICML (normalised linear
  attention ``phi(q)^T S / phi(q)^T z``).
- [C21] Choromanski, K., et al. (2021). Rethinking attention with Performers. ICLR (positive
  random features for the softmax kernel).
- [MS77] MacWilliams, F. J., & Sloane, N. J. A. (1977). The Theory of Error-Correcting Codes,
  Ch. 5 §7 (Krawtchouk polynomials, the three-term recurrence).
- [K88a] Keeler, J. D. (1988). Comparison between Kanerva's SDM and Hopfield-type neural
  networks. Cognitive Science 12(3).
- [H82] Hopfield, J. J. (1982). Neural networks and physical systems with emergent collective
  computational abilities. PNAS 79(8).
"""

from assocmem.sdm.kernels.presets import *  # noqa: F401,F403
from assocmem.sdm.kernels.presets import __all__ as _presets_all
from assocmem.sdm.kernels.hypercube import *  # noqa: F401,F403
from assocmem.sdm.kernels.hypercube import __all__ as _hypercube_all
from assocmem.sdm.kernels.sphere import *  # noqa: F401,F403
from assocmem.sdm.kernels.sphere import __all__ as _sphere_all
from assocmem.sdm.kernels.random_features import *  # noqa: F401,F403
from assocmem.sdm.kernels.random_features import __all__ as _random_features_all
from assocmem.sdm.kernels.vmf import *  # noqa: F401,F403
from assocmem.sdm.kernels.vmf import __all__ as _vmf_all
from assocmem.sdm.kernels.hopfield import *  # noqa: F401,F403
from assocmem.sdm.kernels.hopfield import __all__ as _hopfield_all

__all__ = [
    *_presets_all,
    *_hypercube_all,
    *_sphere_all,
    *_random_features_all,
    *_vmf_all,
    *_hopfield_all,
]
