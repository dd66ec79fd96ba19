"""Reading an SDM: the neuron view, the pattern view (Eq. 1) and attention in SDM notation (Eq. 4).

Kanerva's sparse distributed memory stores ``m`` patterns, each a pair of an *address*
``p_a in {0, 1}^n`` and a *pointer* ``p_p`` (the content; ``p_p = p_a`` for an autoassociative
memory), in ``r`` *neurons* (hard locations) with fixed addresses ``x_tau in {0, 1}^n``. Writing
adds the pointer to the storage vector of every neuron within Hamming radius ``d`` of the pattern
address; reading from a query ``xi`` sums the storage vectors of the neurons within ``d`` of
``xi``, divides by the number of patterns those neurons hold, and (for binary pointers) applies
the majority threshold ``g(e) = 1[e > 1/2]``. Exchanging the two sums gives the pattern view of
Bricken & Pehlevan (2021), Eq. 1:

    xi_new = g( sum_mu w_mu p_p^mu / sum_mu w_mu ),
    w_mu = #{tau : d(x_tau, p_a^mu) <= d and d(x_tau, xi) <= d},

the number of neurons in both balls. With a neuron at every address (``r = 2^n``) ``w_mu`` is the
circle intersection ``I(d(p_a^mu, xi), d, n)`` exactly; with ``r`` uniform random neurons it is
binomial with mean ``I r / 2^n``.

Submodules
----------
hamming
    Hamming distances and the binary-to-sphere map: :func:`hamming_distance`,
    :func:`pairwise_hamming`, :func:`bipolar` (the exact form of Eq. 5,
    ``d(a, b) = (n/2)(1 - <a^, b^>)``), :func:`sphere_hamming` (the Hamming distance Eq. 5 assigns
    to continuous vectors), :func:`sign_binarize` (continuous to binary, App. B.7) and what sign
    binarisation does to distances (:func:`expected_sign_hamming`,
    :func:`sign_hamming_correlation`). Chapter 30.
patterns
    Random patterns and perturbations: :func:`random_binary_patterns`, :func:`flip_bits`,
    :func:`rotate_to_cosine`. Chapters 30 and 35, and the perturbed queries of the convergence
    and learnt-projection experiments (chapter 36).
pattern_view
    The pattern view, Eq. 1: :func:`sdm_weights`, :func:`sdm_read`, with the majority threshold
    :func:`majority` and the policies for reads with all weights zero (:data:`EMPTY_POLICIES`).
    Chapters 30 and 35.
attention
    Attention in SDM notation, Eq. 4 / Eq. 6: :func:`attention_weights`, :func:`attention_read`.
    Chapters 30 and 35.
neuron_view
    The neuron view: :class:`NeuronSDM`, ``r`` explicit neurons, random or exhaustive.
    Chapters 30 and 35, and ``Binary_Neuron_SDM`` of the convergence experiments (chapter 36).

Every public name of the submodules is re-exported here (and from :mod:`assocmem.sdm`), so
``from assocmem.sdm.read import sdm_read`` works.

Conventions. Binary tensors hold only 0 and 1 (bool, integer, float32 or float64; anything
else raises :class:`ValueError`). float16 and bfloat16 tensors are refused everywhere, as the
dtype policy of :mod:`assocmem.dtypes` says (cast with ``.float()``). Patterns are *rows*:
addresses ``(m, n)``, pointers ``(m, n_p)``; queries ``(..., n)`` with any leading shape. The
paper writes patterns as columns (``P_a`` is ``n x m``); ``P_a^T xi`` there is ``addresses @
query`` here. Reads are float64 and are computed on the query's device (other inputs are moved
there). Exact counts (intersections, neuron counts) are integers held in float64, exact up to
``2^53``.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. Eq. 1 (SDM read, pattern view), Eq. 2 (circle intersection), Eq. 4 (attention in
  SDM notation), Eq. 5 (binary-to-sphere map), Eq. 6 (attention approximates SDM), App. B.6 (the
  bipolar identity ``d = (n - x^T y)/2``), App. B.7 (sign binarisation of continuous patterns).
- [K88] Kanerva, P. (1988). Sparse Distributed Memory. MIT Press (neurons, read and write radius).
- [KVPF20] Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs.
  ICML (the neuron view is linear attention with the binary feature map
  ``phi_tau(x) = 1[d(x, x_tau) <= d]``).
"""

from assocmem.sdm.read.hamming import *  # noqa: F401,F403
from assocmem.sdm.read.hamming import __all__ as _hamming_all
from assocmem.sdm.read.patterns import *  # noqa: F401,F403
from assocmem.sdm.read.patterns import __all__ as _patterns_all
from assocmem.sdm.read.pattern_view import *  # noqa: F401,F403
from assocmem.sdm.read.pattern_view import __all__ as _pattern_view_all
from assocmem.sdm.read.attention import *  # noqa: F401,F403
from assocmem.sdm.read.attention import __all__ as _attention_all
from assocmem.sdm.read.neuron_view import *  # noqa: F401,F403
from assocmem.sdm.read.neuron_view import __all__ as _neuron_view_all

__all__ = [*_hamming_all, *_patterns_all, *_pattern_view_all, *_attention_all, *_neuron_view_all]
