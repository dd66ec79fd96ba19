"""Iterated SDM and attention reads: the convergence experiments of App. B.7.

Bricken & Pehlevan (2021) support "attention approximates SDM" (claim C5 of the review, seed
002) with simulations: ``m = 1024`` random patterns are stored, each is perturbed and used as a
query, the query is read from the memory again and again until it stops changing, and the
cosine between the final state and the stored target is recorded. Eight read rules are compared
(App. B.7; the names are those of the authors' code): ``Binary_SDM``,
``Binary_SDM_NeuronLimit``, ``Binary_SDM_BFit_Attention``, ``Cont_SDM``,
``Cont_SDM_NeuronLimit``, ``Cont_Binary_SDM``, ``Cont_SDM_BFit_Attention`` and
``Cont_SDM_CFit_Attention``; :mod:`assocmem.sdm.convergence.read_rules` tabulates the pattern
weight ``w_mu`` of each. Every rule reads ``sum_mu w_mu p_mu / sum_mu w_mu``; binary rules then
apply the majority threshold ``g(e) = 1[e > 1/2]`` and continuous rules L2-normalise. A ninth
rule, ``Binary_Neuron_SDM``, reads through ``r`` explicit random neurons
(:class:`assocmem.sdm.read.NeuronSDM`), as the authors' ``use_Neuron_SDM`` runs do.

Submodules
----------
algorithms
    The rules' names and what each does: :class:`Algorithm`, :class:`AlgorithmSpec`,
    :data:`ALGORITHMS`, :data:`ALL_ALGORITHMS`, :func:`resolve_algorithm`,
    :func:`algorithm_spec`, and the paper's settings :data:`PAPER_NEURONS`,
    :data:`PAPER_FRACTIONS`, :data:`PAPER_MAX_PERTURBATION`, :func:`paper_radii`.
read_rules
    The read rules: :func:`make_read_rule`, :class:`ReadRule` (``rule(queries (B, n), patterns
    (m, n)) -> (B, n)``, vectorised over the queries in torch on any device; per-distance weight
    tables are computed once on the host in log space, so ``r = 2^64`` and ``n = 1000`` neither
    overflow nor underflow), :class:`PreparedPatterns`.
retrieval
    Iterated retrieval with the paper's stopping rules: :func:`converge`,
    :class:`ConvergenceResult`, and the metric :func:`cosine_to_target`.
perturbations
    The perturbation protocol: :func:`perturbation_levels`, :func:`perturb_binary`,
    :func:`perturb_continuous`, :func:`random_patterns`, :func:`make_queries`.
experiment
    The experiment: :func:`convergence_experiment` (a tidy :class:`pandas.DataFrame`, one row per
    convergence).
agreement
    Its analysis: :func:`summarize`, and the agreement metrics :func:`agreement` and
    :func:`agreement_summary` that App. B.7 does not give.
presets
    The presets :data:`PRESETS` (``"quick"``, ``"cpu"``, ``"paper"``) run by :func:`run_preset`:
    :class:`ConvergenceSetting`, :class:`ConvergencePreset`, :data:`DATA_SOURCES`,
    :data:`CONTINUOUS_ALGORITHMS`, :func:`setting_data`.

Chapter 36 ("Eight read rules, iterated: does attention converge like SDM?") uses the package
as ``from assocmem.sdm import convergence as conv`` and runs the presets through
:mod:`assocmem.sdm.convergence_sweeps`; the learnt-projection experiment
(:mod:`assocmem.sdm.projections`) reads with its rules. Every public name of the submodules is
re-exported here, so ``from assocmem.sdm.convergence import make_read_rule`` works.

The protocol as the authors ran it (their ``SDM_Experiments.ipynb``)
--------------------------------------------------------------------
* Patterns: ``m = 1024`` vectors uniform in ``(-1, 1)^n``; the binary version is
  ``1[x > 0]``, the continuous version ``x / |x|``. Three pattern sets ("datasets"), five
  perturbation repeats each, every stored pattern used once as a target per repeat:
  ``3 x 5 x 1024 = 15,360`` convergences per perturbation level, radius and rule.
* Levels: ``unique(int(linspace(0, max, 7)))``, ``max = 12`` at ``n = 64`` and ``375`` at
  ``n = 1000`` (``int`` truncates: ``[0, 62, 125, 187, 250, 312, 375]``).
* Binary queries flip exactly ``k`` bits; continuous queries are moved to cosine
  ``1 - 2k/n`` along a random direction orthogonal to the target. A query set is redrawn if a
  perturbed query is closer to another stored pattern than to its target.
* Radii from ball fractions ``[1e-13, 1e-9, 1e-8, 7e-6, 3.68e-4, 0.1]`` (the binomial quantile):
  ``5, 9, 11, 15, 19, 27`` at ``n = 64`` and ``384, 405, 411, 431, 447, 480`` at ``n = 1000``.
* Neurons for the neuron-limited rules: ``r = 2^64`` at ``n = 64`` (and for MNIST,
  ``n = 784``), ``r = 10^6`` at ``n = 1000`` (:data:`PAPER_NEURONS`); ``r = 10^5`` for the
  ``use_Neuron_SDM`` comparison at ``n = 64``.
* ``beta`` from the log-linear fit of Eq. 10 over ``dv = 0..d-1`` with the authors' slope
  (sample covariance over population variance, :func:`assocmem.sdm.fit_beta` with
  ``convention="authors"``); ``"ols"`` is available.
* At most 100 reads; stop when no bit changes (binary) or no component moves by more than
  ``0.05`` (continuous). A read whose weights are all zero leaves the query unchanged.
* Metric: cosine between the final state and the target (``1 - 2 H / n`` for binary states).

Where this implementation differs, and why
------------------------------------------
* **Stopping per query.** The authors iterate the whole batch until *no* query changes; we stop
  each query the first time its read leaves it unchanged and stop updating it. For the
  deterministic rules the two agree (an unchanged query is a fixed point). For the
  neuron-limited rules, whose weights are redrawn at every read, a query can stop by chance and
  would have moved again under the batch rule; per-query stopping is the rule the brief asks for.
* **Continuous tolerance** compares the new, L2-normalised state with the previous one; the
  authors compare the un-normalised read with the previous (normalised) state.
* **Cap weights** are interpolated (linearly in log space, on a grid uniform in
  ``u = sin(t/2) = sqrt((1 - rho)/2)``, ``t`` the angle) from a table of
  :func:`assocmem.sdm.log_cap_intersection`; the authors floor the cosine to a grid of
  ``10^4`` points. The grid in ``u`` is smooth at ``rho = 1``, where ``Ic`` has an infinite
  derivative in ``rho``, and the table holds ``log Ic - (n/2) log(u0 - u)``, which stays smooth
  where the caps stop overlapping (``u0``; ``Ic`` vanishes like ``(u0 - u)^(n/2)`` there), so
  the support is exact and ``log Ic`` is within ``1e-4`` (float64) of the closed form.
* **Continuous perturbation direction** is uniform on the sphere orthogonal to the target
  (Gaussian, :func:`assocmem.sdm.read.rotate_to_cosine`); the authors orthogonalise a
  ``uniform(-1, 1)^n`` vector, which is not isotropic. Both reach the cosine exactly.
* **Redrawing** replaces only the offending queries; the authors redraw the whole batch.
* **Neuron-limited counts** are redrawn at every read, independently per query and pattern, as
  in the authors' code (a model of finite ``r``, not a fixed set of neurons: that is
  ``Binary_Neuron_SDM``). The continuous counts are ``r Ic`` with ``Ic`` the exact area
  fraction; the authors' counts are ``e^2 / 2`` times larger (their ``2`` for ``log 2``), which
  ``authors_cap_counts=True`` reproduces. At ``n = 64`` with ``r = 2^64`` the binary counts
  ``I r / 2^n = I`` are integers already, so ``Binary_SDM_NeuronLimit`` reads as ``Binary_SDM``
  (in the ``"cpu"`` preset 14 of 645,120 convergences differ, at majority ties that float32
  rounding decides one way or the other).
* **Precision.** :class:`ReadRule` defaults to float64; the experiment defaults to float32, the
  authors' ``torch.Tensor`` type and about twice as fast on CPUs. Hamming distances and binary
  reads are exact in both.

References
----------
- [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
  NeurIPS 34. Eq. 1 (SDM read), Eq. 2 (circle intersection), Eq. 5 (binary-to-sphere map),
  Eq. 9 and App. B.3 (continuous SDM), Eq. 10 (beta fit), App. B.7 (convergence experiments,
  Figs. 18-31) and App. B.7.1 (neuron-limited SDM).
- [S002] Seed 002, a critical review of [BP21]: "Convergence experiments (App. B.7)", claim C5
  (close agreement, no quantitative metric, three named exceptions: ``d = 5`` at large
  perturbation, ``d = 19`` at perturbation 12 for ``Binary_SDM_BFit_Attention``, ``d = 447`` at
  large perturbation), claim C16 (integer neuron counts).
- [BP21-code] The authors' code, ``github.com/TrentBrick/attention-approximates-sdm`` (commit
  ``0a5d55e``), the source of "the protocol as the authors ran it" above:
  ``SDM_Experiments.ipynb`` (the experiment's parameters: patterns, levels, radii, neurons),
  ``Implementations_Associative_Memory.py`` (the eight read rules, ``update_using_cache``; the
  stopping rules, ``convergence_loop``), ``SDM_Circ_Inter_Funcs.py`` (the cap intersection
  ``cap_intersection``, whose log adds ``2`` where ``log 2`` is meant; the slope of
  ``fit_beta_regression``, ``np.cov / np.var``) and ``Data_Processing_Associative_Memory.py``
  (the perturbations and ``ensure_no_closer_images``).
"""

from assocmem.sdm.convergence.algorithms import *  # noqa: F401,F403
from assocmem.sdm.convergence.algorithms import __all__ as _algorithms_all
from assocmem.sdm.convergence.read_rules import *  # noqa: F401,F403
from assocmem.sdm.convergence.read_rules import __all__ as _read_rules_all
from assocmem.sdm.convergence.retrieval import *  # noqa: F401,F403
from assocmem.sdm.convergence.retrieval import __all__ as _retrieval_all
from assocmem.sdm.convergence.perturbations import *  # noqa: F401,F403
from assocmem.sdm.convergence.perturbations import __all__ as _perturbations_all
from assocmem.sdm.convergence.experiment import *  # noqa: F401,F403
from assocmem.sdm.convergence.experiment import __all__ as _experiment_all
from assocmem.sdm.convergence.agreement import *  # noqa: F401,F403
from assocmem.sdm.convergence.agreement import __all__ as _agreement_all
from assocmem.sdm.convergence.presets import *  # noqa: F401,F403
from assocmem.sdm.convergence.presets import __all__ as _presets_all

__all__ = [
    *_algorithms_all,
    *_read_rules_all,
    *_retrieval_all,
    *_perturbations_all,
    *_experiment_all,
    *_agreement_all,
    *_presets_all,
]
