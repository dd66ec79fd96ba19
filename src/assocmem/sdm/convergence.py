"""Iterated SDM and attention reads: the convergence experiments of App. B.7.

Bricken & Pehlevan (2021) support "attention approximates SDM" (claim C5 of the review, seed
002) with simulations: ``m = 1024`` random patterns are stored, each is perturbed and used as a
query, the query is read from the memory again and again until it stops changing, and the
cosine between the final state and the stored target is recorded. Eight read rules are compared
(App. B.7; the names are those of the authors' code):

=============================  ==========  ==================================================  =========
name                           space       pattern weight ``w_mu``                             output
=============================  ==========  ==================================================  =========
``Binary_SDM``                 binary      ``I(dv_mu, d, n)``, the exact circle intersection   majority
``Binary_SDM_NeuronLimit``     binary      ``I r / 2^n`` stochastically rounded to integers    majority
``Binary_SDM_BFit_Attention``  binary      ``exp(beta (1 - 2 dv_mu / n))``, beta fit to ``I``  majority
``Cont_SDM``                   continuous  ``Ic(rho_mu)``, the cap intersection (App. B.3)     unit norm
``Cont_SDM_NeuronLimit``       continuous  ``Ic r`` stochastically rounded to integers         unit norm
``Cont_Binary_SDM``            continuous  ``I(floor(n/2 (1 - rho_mu)), d, n)`` (Eq. 5)        unit norm
``Cont_SDM_BFit_Attention``    continuous  ``exp(beta rho_mu)``, beta fit to ``I``             unit norm
``Cont_SDM_CFit_Attention``    continuous  ``exp(beta rho_mu)``, beta fit to ``Ic``            unit norm
=============================  ==========  ==================================================  =========

with ``dv_mu`` the Hamming distance and ``rho_mu`` the cosine between the query and pattern
``mu``. Every rule reads ``sum_mu w_mu p_mu / sum_mu w_mu``; binary rules then apply the majority
threshold ``g(e) = 1[e > 1/2]`` and continuous rules L2-normalise. A ninth rule,
``Binary_Neuron_SDM``, reads through ``r`` explicit random neurons
(:class:`assocmem.sdm.read.NeuronSDM`), as the authors' ``use_Neuron_SDM`` runs do.

This module holds

1. the read rules: :class:`Algorithm`, :data:`ALGORITHMS`, :func:`make_read_rule`,
   :class:`ReadRule` (``rule(queries (B, n), patterns (m, n)) -> (B, n)``, vectorised over the
   queries in torch on any device; per-distance weight tables are computed once on the host in
   log space, so ``r = 2^64`` and ``n = 1000`` neither overflow nor underflow);
2. iterated retrieval with the paper's stopping rules: :func:`converge`;
3. the perturbation protocol: :func:`perturbation_levels`, :func:`perturb_binary`,
   :func:`perturb_continuous`, :func:`random_patterns`, :func:`make_queries`;
4. the experiment: :func:`convergence_experiment` (a tidy :class:`pandas.DataFrame`, one row per
   convergence), :func:`summarize`, the agreement metrics :func:`agreement` and
   :func:`agreement_summary` that App. B.7 does not give, and the presets :data:`PRESETS`
   (``"quick"``, ``"cpu"``, ``"paper"``) run by :func:`run_preset`.

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
.. [BP21] Bricken, T., & Pehlevan, C. (2021). Attention approximates sparse distributed memory.
   NeurIPS 34. Eq. 1 (SDM read), Eq. 2 (circle intersection), Eq. 5 (binary-to-sphere map),
   Eq. 9 and App. B.3 (continuous SDM), Eq. 10 (beta fit), App. B.7 (convergence experiments,
   Figs. 18-31) and App. B.7.1 (neuron-limited SDM).
.. [S002] Seed 002, a critical review of [BP21]: "Convergence experiments (App. B.7)", claim C5
   (close agreement, no quantitative metric, three named exceptions: ``d = 5`` at large
   perturbation, ``d = 19`` at perturbation 12 for ``Binary_SDM_BFit_Attention``, ``d = 447`` at
   large perturbation), claim C16 (integer neuron counts).
.. [BP21-code] The authors' code, ``github.com/TrentBrick/attention-approximates-sdm`` (commit
   ``0a5d55e``), the source of "the protocol as the authors ran it" above:
   ``SDM_Experiments.ipynb`` (the experiment's parameters: patterns, levels, radii, neurons),
   ``Implementations_Associative_Memory.py`` (the eight read rules, ``update_using_cache``; the
   stopping rules, ``convergence_loop``), ``SDM_Circ_Inter_Funcs.py`` (the cap intersection
   ``cap_intersection``, whose log adds ``2`` where ``log 2`` is meant; the slope of
   ``fit_beta_regression``, ``np.cov / np.var``) and ``Data_Processing_Associative_Memory.py``
   (the perturbations and ``ensure_no_closer_images``).
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from scipy import stats

from assocmem._checks import as_int as _as_int, lookup
from assocmem.devices import resolve_device, torch_threads
from assocmem.progress import progress
from assocmem.sdm.capacity import radius_for_fraction
from assocmem.sdm.geometry import _check_r, circle_intersection_table, fit_beta, log_cap_intersection
from assocmem.sdm.read import NeuronSDM, flip_bits, rotate_to_cosine

__all__ = [
    # algorithms and read rules
    "Algorithm",
    "AlgorithmSpec",
    "ALGORITHMS",
    "ALL_ALGORITHMS",
    "PAPER_NEURONS",
    "PAPER_FRACTIONS",
    "PAPER_MAX_PERTURBATION",
    "algorithm_spec",
    "resolve_algorithm",
    "ReadRule",
    "PreparedPatterns",
    "make_read_rule",
    "paper_radii",
    # iterated retrieval
    "ConvergenceResult",
    "converge",
    "cosine_to_target",
    # perturbations
    "perturbation_levels",
    "perturb_binary",
    "perturb_continuous",
    "random_patterns",
    "make_queries",
    # experiment
    "convergence_experiment",
    "summarize",
    "agreement",
    "agreement_summary",
    "ConvergenceSetting",
    "ConvergencePreset",
    "DATA_SOURCES",
    "CONTINUOUS_ALGORITHMS",
    "setting_data",
    "PRESETS",
    "get_preset",
    "run_preset",
]

# ==========================================================================================
# 0. Algorithms
# ==========================================================================================


class Algorithm(str, enum.Enum):
    """The read rules of App. B.7, named as in the authors' code.

    Members compare equal to their string values, so ``Algorithm.CONT_SDM == "Cont_SDM"``.
    """

    BINARY_SDM = "Binary_SDM"
    BINARY_SDM_NEURON_LIMIT = "Binary_SDM_NeuronLimit"
    BINARY_SDM_BFIT_ATTENTION = "Binary_SDM_BFit_Attention"
    CONT_SDM = "Cont_SDM"
    CONT_SDM_NEURON_LIMIT = "Cont_SDM_NeuronLimit"
    CONT_BINARY_SDM = "Cont_Binary_SDM"
    CONT_SDM_BFIT_ATTENTION = "Cont_SDM_BFit_Attention"
    CONT_SDM_CFIT_ATTENTION = "Cont_SDM_CFit_Attention"
    BINARY_NEURON_SDM = "Binary_Neuron_SDM"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class AlgorithmSpec:
    """What a read rule does.

    Attributes
    ----------
    name : str
        The authors' name, e.g. ``"Cont_SDM"``.
    space : {"binary", "continuous"}
        Binary rules take and return 0/1 vectors; continuous rules take any nonzero real
        vectors (L2-normalised on entry) and return unit vectors.
    weights : str
        ``"intersection"`` (exact ``I``), ``"cap"`` (``Ic``), ``"softmax"`` (``exp(beta x)``),
        ``"neurons"`` (explicit random neurons).
    neuron_limited : bool
        Weights are expected neuron counts stochastically rounded to integers (needs ``r``).
    beta_fit : {None, "binary", "cap"}
        For softmax rules: which intersection ``beta`` is fitted to.
    description : str
        One line for tables.
    """

    name: str
    space: str
    weights: str
    neuron_limited: bool
    beta_fit: str | None
    description: str

    @property
    def needs_r(self) -> bool:
        """Whether the rule needs a number of neurons ``r``."""
        return self.neuron_limited or self.weights == "neurons"


_SPECS: dict[str, AlgorithmSpec] = {
    s.name: s
    for s in (
        AlgorithmSpec("Binary_SDM", "binary", "intersection", False, None,
                      "binary SDM, exact circle-intersection weights I(dv, d, n), majority output"),
        AlgorithmSpec("Binary_SDM_NeuronLimit", "binary", "intersection", True, None,
                      "binary SDM, weights I r / 2^n stochastically rounded, majority output"),
        AlgorithmSpec("Binary_SDM_BFit_Attention", "binary", "softmax", False, "binary",
                      "softmax of beta (1 - 2 dv / n), beta fit to I, majority output"),
        AlgorithmSpec("Cont_SDM", "continuous", "cap", False, None,
                      "continuous SDM, cap-intersection weights Ic(rho), unit-norm output"),
        AlgorithmSpec("Cont_SDM_NeuronLimit", "continuous", "cap", True, None,
                      "continuous SDM, weights Ic r stochastically rounded, unit-norm output"),
        AlgorithmSpec("Cont_Binary_SDM", "continuous", "intersection", False, None,
                      "continuous queries, weights I(floor(n/2 (1 - rho))), unit-norm output"),
        AlgorithmSpec("Cont_SDM_BFit_Attention", "continuous", "softmax", False, "binary",
                      "softmax of beta rho, beta fit to I, unit-norm output"),
        AlgorithmSpec("Cont_SDM_CFit_Attention", "continuous", "softmax", False, "cap",
                      "softmax of beta rho, beta fit to Ic, unit-norm output"),
        AlgorithmSpec("Binary_Neuron_SDM", "binary", "neurons", False, None,
                      "binary SDM with r explicit random neurons, majority output"),
    )
}

#: The eight rules compared in App. B.7, in the paper's order.
ALGORITHMS: tuple[str, ...] = tuple(a.value for a in Algorithm if a is not Algorithm.BINARY_NEURON_SDM)
#: The eight plus ``Binary_Neuron_SDM``.
ALL_ALGORITHMS: tuple[str, ...] = tuple(a.value for a in Algorithm)
#: Neurons the authors gave the neuron-limited rules, by ``n`` (``r = 2^64`` for ``n = 64`` and
#: MNIST's ``n = 784``; ``10^6`` for ``n = 1000``).
PAPER_NEURONS: dict[int, int] = {64: 2**64, 784: 2**64, 1000: 10**6}
#: Most neurons ``Binary_Neuron_SDM`` may hold (their addresses take ``r n`` bytes).
_MAX_EXPLICIT_NEURONS = 2**26
#: Ball fractions the radii come from (App. B.7).
PAPER_FRACTIONS: tuple[float, ...] = (1e-13, 1e-9, 1e-8, 7e-6, 3.68e-4, 0.1)
#: Largest perturbation (bits) by ``n``.
PAPER_MAX_PERTURBATION: dict[int, int] = {64: 12, 784: 300, 1000: 375}


def _key(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


_BY_KEY = {_key(name): name for name in _SPECS}


def resolve_algorithm(name) -> str:
    """The canonical name of an algorithm.

    Parameters
    ----------
    name : str or Algorithm
        An :class:`Algorithm` or a name, matched ignoring case, ``_``, ``-`` and spaces
        (``"cont_sdm_neuron_limit"`` is ``"Cont_SDM_NeuronLimit"``).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the valid names.
    """
    if isinstance(name, Algorithm):
        return name.value
    if isinstance(name, str):
        found = _BY_KEY.get(_key(name))
        if found is not None:
            return found
    raise ValueError(f"unknown algorithm {name!r}; valid names are {', '.join(ALL_ALGORITHMS)}")


def _algorithm_names(algorithms) -> list[str]:
    """Canonical names of ``algorithms``: one name (a str or :class:`Algorithm`) or an iterable."""
    if isinstance(algorithms, (str, Algorithm)):  # one rule, not the letters of its name
        algorithms = [algorithms]
    try:
        items = list(algorithms)
    except TypeError:
        raise ValueError(f"algorithms must be a rule name or an iterable of rule names; got "
                         f"{algorithms!r}") from None
    return [resolve_algorithm(a) for a in items]


def algorithm_spec(name) -> AlgorithmSpec:
    """The :class:`AlgorithmSpec` of an algorithm (see :func:`resolve_algorithm`).

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names).
    """
    return _SPECS[resolve_algorithm(name)]


def paper_radii(n) -> list[int]:
    """Radii of App. B.7: the binomial quantiles of :data:`PAPER_FRACTIONS`.

    Parameters
    ----------
    n : int
        Dimension, ``>= 1``.

    Returns
    -------
    list of int
        ``[5, 9, 11, 15, 19, 27]`` at ``n = 64``; ``[384, 405, 411, 431, 447, 480]`` at
        ``n = 1000``.

    Raises
    ------
    ValueError
        If ``n < 1``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (``space_frac_to_hamm_radius`` in their code).
    """
    return [radius_for_fraction(n, p) for p in PAPER_FRACTIONS]


# ==========================================================================================
# 1. Checks
# ==========================================================================================


def _check_dtype(dtype) -> torch.dtype:
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
    return dtype


def _seed_int(*parts) -> int:
    """A 63-bit seed from integers, independent for different tuples (numpy SeedSequence)."""
    state = np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


def _cpu_generator(seed) -> torch.Generator:
    if isinstance(seed, torch.Generator):
        return seed
    return torch.Generator().manual_seed(_as_int(seed, "seed"))


def _as_tensor(x, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    try:
        return torch.as_tensor(np.asarray(x))
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}") from err


# ==========================================================================================
# 2. Weight tables (host, log space)
# ==========================================================================================


@functools.lru_cache(maxsize=512)
def _log_intersection_table(n: int, d: int) -> np.ndarray:
    """``log I(dv, d, n)`` for ``dv = 0..n`` (``-inf`` where ``I = 0``), from exact integers."""
    table = circle_intersection_table(n, d)
    return np.array([math.log(v) if v > 0 else -math.inf for v in table], dtype=np.float64)


@functools.lru_cache(maxsize=512)
def _expected_count_table(n: int, d: int, r: Fraction) -> np.ndarray:
    """``I(dv, d, n) r / 2^n`` for ``dv = 0..n``, exact rationals rounded once to float64."""
    table = circle_intersection_table(n, d)
    scale = r / (1 << n)
    return np.array([float(Fraction(v) * scale) for v in table], dtype=np.float64)


@dataclass(frozen=True)
class _CapTable:
    """``log Ic`` on a grid uniform in ``u = sin(t/2) = sqrt((1 - rho)/2)``, for interpolation.

    Where the caps stop overlapping (``t = 2 theta``, ``u = u0 = sin theta``, if ``theta <
    pi/2``) ``Ic`` vanishes like ``(u0 - u)^(n/2)`` (the lens between two touching caps of the
    ``(n-1)``-sphere), so ``log Ic`` has a logarithmic singularity there. The table holds the
    smooth remainder ``h = log Ic - (n/2) log((K - 1)(u0 - u))`` and the reader adds the
    singular term back; without an edge, ``h = log Ic``.
    """

    base: np.ndarray  # (K - 1,) h at the left node of each cell (-inf beyond the edge)
    slope: np.ndarray  # (K - 1,) increment of h across the cell (finite everywhere)
    size: int  # K
    u_zero: float  # Ic = 0 for u >= u_zero (inf if the caps always overlap)
    edge_power: float  # n/2 if there is an edge, else 0


@functools.lru_cache(maxsize=128)
def _cap_table(n: int, d: int, size: int) -> _CapTable:
    u = np.linspace(0.0, 1.0, size)
    rho = np.clip(1.0 - 2.0 * u * u, -1.0, 1.0)
    logs = np.asarray(log_cap_intersection(rho, d, n), dtype=np.float64)
    c = 1.0 - 2.0 * d / n
    theta = math.acos(max(-1.0, min(1.0, c)))
    has_edge = 2.0 * theta < math.pi and d > 0
    u_zero = math.sin(theta) if has_edge else math.inf
    power = n / 2.0 if has_edge else 0.0
    h = logs.copy()
    if has_edge:
        k1 = size - 1
        inside = u < u_zero
        h[inside] -= power * np.log(k1 * (u_zero - u[inside]))
        h[~inside] = -math.inf
    left, right = h[:-1], h[1:]
    both = np.isfinite(left) & np.isfinite(right)
    slope = np.where(both, right - np.where(both, left, 0.0), 0.0)
    if has_edge:  # the cell holding the edge: extrapolate the smooth part from its left neighbour
        last = np.flatnonzero(np.isfinite(left) & ~np.isfinite(right))
        for j in last:
            if j >= 1 and both[j - 1]:
                slope[j] = slope[j - 1]
    return _CapTable(base=left.copy(), slope=slope, size=size, u_zero=u_zero, edge_power=power)


# ==========================================================================================
# 3. Read rules
# ==========================================================================================


@dataclass
class PreparedPatterns:
    """Stored patterns in the form a :class:`ReadRule` reads them (see :meth:`ReadRule.prepare`).

    Attributes
    ----------
    patterns : torch.Tensor, shape ``(m, n)``
        0/1 (binary rules) or unit rows (continuous rules), in the rule's dtype and device.
    transposed : torch.Tensor, shape ``(n, m)``
        ``patterns.T``, contiguous.
    ones : torch.Tensor or None, shape ``(m,)``
        Number of ones per binary pattern (for Hamming distances).
    memory : NeuronSDM or None
        The neurons holding the patterns (``Binary_Neuron_SDM`` only).
    """

    patterns: torch.Tensor
    transposed: torch.Tensor
    ones: torch.Tensor | None = None
    memory: NeuronSDM | None = None

    @property
    def m(self) -> int:
        return int(self.patterns.shape[0])


class _Workspace:
    """Named ``(rows, m)`` buffers, allocated on first use."""

    _DTYPES = {"i": torch.int32}

    def __init__(self, rows: int, m: int, dtype: torch.dtype, device: torch.device):
        self.rows, self.m, self.dtype, self.device = rows, m, dtype, device
        self._buffers: dict[str, torch.Tensor] = {}

    def view(self, name: str, b: int) -> torch.Tensor:
        """The first ``b`` rows of buffer ``name`` (contiguous)."""
        buf = self._buffers.get(name)
        if buf is None:
            buf = torch.empty(self.rows, self.m, dtype=self._DTYPES.get(name, self.dtype), device=self.device)
            self._buffers[name] = buf
        return buf[:b]


class ReadRule:
    """One SDM or attention read, vectorised over a batch of queries.

    Build with :func:`make_read_rule`. ``rule(queries, patterns)`` performs one read of every
    query from an autoassociative memory holding ``patterns`` (pointers = addresses):

        xi_new = g( sum_mu w_mu p_mu / sum_mu w_mu ),

    with the weights ``w_mu`` of the rule (module docstring), ``g`` the majority threshold for
    binary rules and L2 normalisation for continuous ones. A query whose weights are all zero
    (no pattern within ``2d`` for the binary intersection, none inside the cap overlap, or every
    neuron count rounded to 0) is returned unchanged, as in the authors' code.

    Weights are computed in log space and each query's weights are divided by their largest
    value before they are exponentiated, so nothing overflows (``r = 2^64``, ``n = 1000``) and no
    nonempty read underflows to an empty one. Neuron-limited rules instead use absolute expected
    counts (``<= r``) so that the stochastic rounding sees the true fractional parts; the
    expected-count table is an exact rational rounded once.

    Parameters
    ----------
    name : str or Algorithm
        One of :data:`ALL_ALGORITHMS`.
    n : int
        Dimension, ``>= 2``.
    d : int
        Radius, ``0 <= d <= n``. Continuous rules use the threshold cosine ``1 - 2d/n``.
    r : int or float, optional
        Number of neurons, for the neuron-limited rules and ``Binary_Neuron_SDM`` (required
        there, ignored elsewhere). The expected count of neurons in an intersection is
        ``I r / 2^n`` (binary) or ``Ic r`` (continuous, ``Ic`` an area fraction); each read draws
        ``floor(c) + Bernoulli(c - floor(c))`` independently per query and pattern, an integer
        with mean ``c`` (stochastic rounding; the authors' model of a finite neuron count).
        :data:`PAPER_NEURONS` holds the authors' values.
    beta : float, optional
        Inverse temperature for the softmax rules; default: fitted (Eq. 10) to the binary
        (``BFit``) or cap (``CFit``) intersection over ``dv = 0..d-1``.
    beta_convention : {"authors", "ols"}, default "authors"
        Slope convention of the fit (:func:`assocmem.sdm.fit_beta`); ``"authors"`` reproduces
        the paper's betas.
    seed : int, default 0
        Seed of the generator for stochastic rounding (on the rule's device) and of the neuron
        addresses of ``Binary_Neuron_SDM`` (CPU, so the same on every device).
    device : str or torch.device, default "auto"
        Where reads run.
    dtype : torch.float32 or torch.float64, default torch.float64
        Floating type of the reads. Hamming distances are exact in both (integers below
        ``2^24``); ``float32`` is about twice as fast on CPUs.
    cap_table_size : int, default 8193
        Grid points of the cap-intersection table (``Cont_SDM*``).
    authors_cap_counts : bool, default False
        ``Cont_SDM_NeuronLimit`` only: multiply the expected counts by ``e^2 / 2``, as the
        authors' code does (its ``cap_intersection`` in ``SDM_Circ_Inter_Funcs.py`` adds ``2``
        to the log-area where it means ``log 2``; [BP21-code]). The factor
        cancels in normalised weights but not in counts that are rounded to integers.
    chunk_size : int, default 256
        Queries per block. The ``(block, m)`` weight matrices live in buffers reused across
        reads (a rule is therefore not safe to share between threads).

    Attributes
    ----------
    name, n, d, r, beta, spec, device, dtype

    Raises
    ------
    ValueError
        From :func:`make_read_rule`.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1, Eq. 2, Eq. 5, Eq. 6, Eq. 9, Eq. 10, App. B.3, App. B.7;
    the authors' ``Implementations_Associative_Memory.py`` (``update_using_cache``).
    """

    def __init__(self, name, n, d, *, r=None, beta=None, beta_convention: str = "authors",
                 seed=0, device="auto", dtype=torch.float64, cap_table_size: int = 8193,
                 chunk_size: int = 256, authors_cap_counts: bool = False):
        self.spec = algorithm_spec(name)
        self.name = self.spec.name
        self.n = _as_int(n, "n")
        if self.n < 2:
            raise ValueError(f"n must be >= 2, got {self.n}")
        self.d = _as_int(d, "d")
        if self.d < 0 or self.d > self.n:
            raise ValueError(f"the radius d must lie in [0, n] = [0, {self.n}], got d = {self.d}")
        self.device = resolve_device(device)
        self.dtype = _check_dtype(dtype)
        self.chunk_size = _as_int(chunk_size, "chunk_size")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        if beta_convention not in ("authors", "ols"):
            raise ValueError(f"beta_convention must be 'authors' or 'ols', got {beta_convention!r}")
        self.beta_convention = beta_convention
        self.seed = _as_int(seed, "seed")
        self.r = None
        if self.spec.needs_r:
            if r is None:
                raise ValueError(f"{self.name} needs the number of neurons r (e.g. PAPER_NEURONS"
                                 f"[{self.n}] = {PAPER_NEURONS.get(self.n, 'n/a')})")
            fr = _check_r(r)
            self.r = int(fr) if fr.denominator == 1 else float(r)
            self._r_fraction = fr
            if self.spec.neuron_limited and fr > 10**300:
                raise ValueError(f"r = {r!r} is too large for neuron counts in floating point")
            if self.spec.weights == "neurons" and (fr.denominator != 1 or fr > _MAX_EXPLICIT_NEURONS):
                raise ValueError(f"Binary_Neuron_SDM stores r explicit neurons: r must be an integer "
                                 f"<= {_MAX_EXPLICIT_NEURONS}, got {r!r} (the authors used r = 10^5)")
        self.beta = None
        if self.spec.weights == "softmax":
            if beta is None:
                if self.d < 2:
                    raise ValueError(f"fitting beta needs d >= 2 (the fit uses dv = 0..d-1), got "
                                     f"d = {self.d}; pass beta explicitly")
                beta = fit_beta(self.n, self.d, convention=beta_convention,
                                intersection=self.spec.beta_fit).beta
            if isinstance(beta, bool) or not isinstance(beta, (Real, torch.Tensor)) \
                    or not math.isfinite(float(beta)):
                raise ValueError(f"beta must be a finite real number, got {beta!r}")
            self.beta = float(beta)
        self.cap_table_size = _as_int(cap_table_size, "cap_table_size")
        if self.cap_table_size < 2:
            raise ValueError(f"cap_table_size must be >= 2, got {self.cap_table_size}")
        self.authors_cap_counts = bool(authors_cap_counts)
        self._ws = None
        self._build_tables()
        self.manual_seed(self.seed)

    # --------------------------------------------------------------------------------------

    def _to(self, array: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(array, dtype=self.dtype).to(self.device)

    def _build_tables(self) -> None:
        spec, n, d = self.spec, self.n, self.d
        self._log_table = self._count_table = self._cap = None
        if spec.weights == "intersection":
            if spec.neuron_limited:
                counts = _expected_count_table(n, d, self._r_fraction)
                if self.dtype == torch.float32 and counts.max() > 3e38:
                    raise ValueError("expected neuron counts overflow float32; use dtype=torch.float64")
                self._count_table = self._to(counts)
            else:
                self._log_table = self._to(_log_intersection_table(n, d))
        elif spec.weights == "cap":
            tab = _cap_table(n, d, self.cap_table_size)
            self._cap = tab
            self._cap_base = self._to(tab.base)
            self._cap_slope = self._to(tab.slope)
            self._log_r = (math.log(self._r_fraction.numerator) - math.log(self._r_fraction.denominator)
                           if spec.neuron_limited else 0.0)
            if spec.neuron_limited and self.authors_cap_counts:
                self._log_r += 2.0 - math.log(2.0)
            if spec.neuron_limited and self.dtype == torch.float32 and self._log_r > 87.0:
                raise ValueError("r overflows float32 neuron counts; use dtype=torch.float64")
        # snapping for Cont_Binary_SDM: distances within rounding of an integer count as it
        self._snap = 16.0 * n * float(torch.finfo(self.dtype).eps)
        # exp floor (see _safe_exp) and the tiny positive floor of log arguments
        tiny = float(torch.finfo(self.dtype).tiny)
        self._exp_floor = math.log(tiny) + 1.0
        self._zero_below = math.exp(self._exp_floor + 0.5)
        self._log_floor = tiny * 2.0**24
        self._log_edge_cut = math.log(self._log_floor) + 1.0

    def manual_seed(self, seed) -> "ReadRule":
        """Reseed the stochastic rounding (neuron-limited rules); returns ``self``."""
        self._generator = torch.Generator(device=self.device).manual_seed(_as_int(seed, "seed"))
        return self

    def __repr__(self) -> str:
        extra = []
        if self.r is not None:
            extra.append(f"r={self.r}")
        if self.beta is not None:
            extra.append(f"beta={self.beta:.4g}")
        tail = (", " + ", ".join(extra)) if extra else ""
        return (f"ReadRule({self.name!r}, n={self.n}, d={self.d}{tail}, device={str(self.device)!r}, "
                f"dtype={self.dtype})")

    @property
    def space(self) -> str:
        """``"binary"`` or ``"continuous"``."""
        return self.spec.space

    @property
    def is_binary(self) -> bool:
        return self.spec.space == "binary"

    # --------------------------------------------------------------------------------------
    # input preparation

    def _rows(self, x, name: str, min_rows: int) -> torch.Tensor:
        x = _as_tensor(x, name)
        if x.ndim != 2:
            raise ValueError(f"{name} must have shape ({'B' if name == 'queries' else 'm'}, n), got "
                             f"{tuple(x.shape)}")
        if x.shape[1] != self.n:
            raise ValueError(f"{name} have n = {x.shape[1]} components but the rule has n = {self.n}")
        if x.shape[0] < min_rows:
            raise ValueError(f"{name} must have at least {min_rows} row(s), got {x.shape[0]}")
        if x.is_complex():
            raise ValueError(f"{name} must be real, got a complex tensor")
        x = x.to(self.device)
        if self.is_binary:
            if x.dtype == torch.bool:
                x = x.to(torch.uint8)
            if x.numel() and not bool(((x == 0) | (x == 1)).all()):
                raise ValueError(f"{name} must be binary (entries 0 or 1) for {self.name}")
            return x.to(self.dtype)
        x = x.to(self.dtype)
        if x.numel() and not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} must have finite entries")
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        if bool((norm == 0).any()):
            raise ValueError(f"{name} has a zero vector, which cannot be L2-normalised")
        return x / norm

    def prepare_queries(self, queries) -> torch.Tensor:
        """Validate queries and put them in the rule's form.

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)``
            0/1 vectors (binary rules) or nonzero real vectors (continuous rules).

        Returns
        -------
        torch.Tensor, shape ``(B, n)``
            On the rule's device and dtype; continuous queries L2-normalised.

        Raises
        ------
        ValueError
            On a shape other than ``(B, n)``, non-binary entries (binary rules), non-finite
            entries or zero vectors (continuous rules).
        """
        return self._rows(queries, "queries", 0)

    def prepare(self, patterns) -> PreparedPatterns:
        """Validate the stored patterns once, for many reads (:meth:`step`, :func:`converge`).

        Parameters
        ----------
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``
            0/1 rows (binary rules) or nonzero real rows (continuous rules, L2-normalised
            here), ``m >= 1``. A :class:`PreparedPatterns` is returned as is.

        Returns
        -------
        PreparedPatterns
            For ``Binary_Neuron_SDM`` this writes the patterns into ``r`` random neurons
            (seeded by the rule's ``seed``).

        Raises
        ------
        ValueError
            As :meth:`prepare_queries`, or if ``m = 0``.
        """
        if isinstance(patterns, PreparedPatterns):
            return patterns
        p = self._rows(patterns, "patterns", 1)
        prep = PreparedPatterns(patterns=p, transposed=p.T.contiguous())
        if self.is_binary:
            prep.ones = p.sum(-1)
        if self.spec.weights == "neurons":
            mem = NeuronSDM(self.n, self.r, self.d, seed=self.seed, device=self.device)
            prep.memory = mem.write(p, p)
        return prep

    # --------------------------------------------------------------------------------------
    # weights

    def _workspace(self, rows: int, m: int) -> "_Workspace":
        """Buffers for one block of ``rows`` queries against ``m`` patterns, reused across reads.

        Fresh multi-megabyte tensors cost page faults on every read; on a CPU that is most of the
        time of a read. The buffers are kept for the largest block seen with this ``m``.
        """
        ws = self._ws
        if ws is None or ws.m != m or ws.rows < rows:
            ws = self._ws = _Workspace(max(rows, 1), m, self.dtype, self.device)
        return ws

    def _block_weights(self, x: torch.Tensor, prep: PreparedPatterns) -> tuple[torch.Tensor, torch.Tensor]:
        """Unnormalised weights ``(b, m)`` (scaled per row) and their row sums ``(b, 1)``.

        The weights live in a workspace buffer that the next call overwrites.
        """
        spec, n = self.spec, self.n
        b, m = x.shape[0], prep.m
        ws = self._workspace(b, m)
        s = torch.mm(x, prep.transposed, out=ws.view("s", b))  # overlaps (binary) or cosines
        if self.is_binary:
            dist = s.mul_(-2.0).add_(prep.ones).add_(x.sum(-1, keepdim=True))  # exact integers
            if spec.weights == "softmax":
                logw = dist.mul_(-2.0 * self.beta / n).add_(self.beta)
            else:
                table = self._count_table if spec.neuron_limited else self._log_table
                logw = self._lookup(table, dist, ws, b)
                if spec.neuron_limited:
                    return self._finish_counts(logw, ws, b)
        else:
            cos = s.clamp_(-1.0, 1.0)
            if spec.weights == "softmax":
                logw = cos.mul_(self.beta)
            elif spec.weights == "intersection":  # Cont_Binary_SDM: Eq. 5 with the floor
                h = cos.neg_().add_(1.0).mul_(0.5 * n).add_(self._snap).floor_().clamp_(0, n)
                logw = self._lookup(self._log_table, h, ws, b)
            else:  # cap
                logw = self._cap_log_weights(cos, ws, b)
                if spec.neuron_limited:
                    counts = self._safe_exp(logw.add_(self._log_r))
                    return self._finish_counts(counts, ws, b)
        top = logw.amax(-1, keepdim=True)
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
        w = self._safe_exp(logw.sub_(top))
        return w, w.sum(-1, keepdim=True)

    @staticmethod
    def _lookup(table: torch.Tensor, index: torch.Tensor, ws: "_Workspace", b: int) -> torch.Tensor:
        """``table[index]`` for integer-valued float ``index``, into workspace buffers."""
        idx = ws.view("i", b)
        idx.copy_(index)  # float -> int32; int32 indices gather fast
        out = ws.view("a", b)
        torch.index_select(table, 0, idx.view(-1), out=out.view(-1))
        return out

    def _safe_exp(self, logw: torch.Tensor) -> torch.Tensor:
        """``exp`` in place, with weights below the dtype's smallest normal number set to 0.

        CPU ``exp`` takes a slow path (tens of times slower) for arguments that underflow or are
        ``-inf``. Clamping at ``log(tiny) + 1`` keeps it fast; the clamped entries, which
        underflow anyway, are then set to exactly 0, so zero weights stay zero.
        """
        w = logw.clamp_(min=self._exp_floor).exp_()
        return torch.nn.functional.threshold_(w, self._zero_below, 0.0)

    def _finish_counts(self, counts: torch.Tensor, ws: "_Workspace",
                       b: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Stochastic rounding in place: ``floor(c) + 1[U < c - floor(c)]``, ``U ~ uniform(0, 1)``."""
        low = torch.floor(counts, out=ws.view("b", b))
        frac = counts.sub_(low)
        u = ws.view("c", b).uniform_(0.0, 1.0, generator=self._generator)
        w = low.add_(u.lt_(frac))  # lt_ writes 1.0 / 0.0 in u's dtype
        return w, w.sum(-1, keepdim=True)

    def _cap_log_weights(self, cos: torch.Tensor, ws: "_Workspace | None" = None, b: int = 0) -> torch.Tensor:
        """``log Ic`` at the cosines ``cos`` (overwritten), interpolated from the table."""
        if ws is None:
            b = cos.numel()
            ws = _Workspace(b, 1, cos.dtype, cos.device)
            cos = cos.reshape(b, 1).clone()
        tab = self._cap
        k1 = tab.size - 1
        a = 0.5 * k1 * k1
        # grid position (K - 1) u with u = sin(t/2) = sqrt((1 - cos)/2), in place
        pos = cos.mul_(-a).add_(a).clamp_(0.0, float(k1 * k1)).sqrt_()
        edge = None
        if tab.edge_power:  # (n/2) log((K - 1)(u0 - u)); -inf from the edge of the support on
            edge = torch.sub(pos, tab.u_zero * k1, out=ws.view("b", b)).neg_()
            # CPU log is slow on zeros: floor the argument at a tiny normal number, which no
            # point inside the support reaches ((K - 1)(u0 - u) is either 0 or at least about
            # an ulp of K), and send the floored entries to -inf in one pass.
            edge.clamp_(min=self._log_floor).log_()
            torch.nn.functional.threshold_(edge, self._log_edge_cut, -math.inf)
        low = torch.floor(pos, out=ws.view("c", b)).clamp_(max=k1 - 1)
        idx = ws.view("i", b)
        idx.copy_(low)
        flat = idx.view(-1)
        base = ws.view("a", b)
        torch.index_select(self._cap_base, 0, flat, out=base.view(-1))
        slope = ws.view("d", b)
        torch.index_select(self._cap_slope, 0, flat, out=slope.view(-1))
        logw = base.addcmul_(pos.sub_(low), slope)
        if edge is not None:
            logw.add_(edge, alpha=tab.edge_power)
        return logw

    # --------------------------------------------------------------------------------------
    # reads

    def _block_read(self, x: torch.Tensor, prep: PreparedPatterns) -> tuple[torch.Tensor, torch.Tensor]:
        if self.spec.weights == "neurons":
            out = prep.memory.read(x, threshold=True, empty="nan").to(self.dtype)
            empty = torch.isnan(out).any(-1)
            return torch.where(empty.unsqueeze(-1), x, out), empty
        w, den = self._block_weights(x, prep)
        empty = den.squeeze(-1) == 0
        out = (w @ prep.patterns).div_(torch.where(den == 0, torch.ones_like(den), den))
        if self.is_binary:
            out = (out > 0.5).to(self.dtype)
        else:
            norm = torch.linalg.vector_norm(out, dim=-1, keepdim=True)
            empty = empty | (norm.squeeze(-1) == 0) | ~torch.isfinite(norm.squeeze(-1))
            out = out.div_(torch.where(norm > 0, norm, torch.ones_like(norm)))
        out = torch.where(empty.unsqueeze(-1), x, out)
        return out, empty

    def step(self, queries: torch.Tensor, prepared: PreparedPatterns) -> tuple[torch.Tensor, torch.Tensor]:
        """One read without input checks, for loops (:func:`converge`, benchmarks).

        Parameters
        ----------
        queries : torch.Tensor, shape ``(B, n)``
            Output of :meth:`prepare_queries` (or of an earlier step).
        prepared : PreparedPatterns
            Output of :meth:`prepare`.

        Returns
        -------
        new : torch.Tensor, shape ``(B, n)``
            The read; rows with all weights zero are the query itself.
        empty : torch.Tensor, shape ``(B,)``, bool
            Which rows had all weights zero (or, continuous, a zero read).
        """
        if queries.shape[0] <= self.chunk_size:
            return self._block_read(queries, prepared)
        outs, empties = [], []
        for lo in range(0, queries.shape[0], self.chunk_size):
            o, e = self._block_read(queries[lo:lo + self.chunk_size], prepared)
            outs.append(o)
            empties.append(e)
        return torch.cat(outs), torch.cat(empties)

    def read(self, queries, patterns, return_empty: bool = False):
        """One read of every query (validated inputs).

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)`` or ``(n,)``
            Binary (binary rules) or real nonzero (continuous rules) queries.
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``
            Stored patterns, ``m >= 1``.
        return_empty : bool, default False
            Also return which queries had all weights zero (left unchanged).

        Returns
        -------
        new : torch.Tensor, shape ``(B, n)`` (``(n,)`` for a 1-D query)
            0/1 floats (binary rules) or unit vectors (continuous rules), on the rule's device
            in its dtype.
        empty : torch.Tensor, shape ``(B,)``, bool
            Only if ``return_empty``.

        Raises
        ------
        ValueError
            On shape mismatch, non-binary entries for a binary rule, zero or non-finite vectors
            for a continuous rule, or an empty memory.

        References
        ----------
        Bricken & Pehlevan (2021), Eq. 1 and App. B.7.
        """
        q = _as_tensor(queries, "queries")
        single = q.ndim == 1
        if single:
            q = q.unsqueeze(0)
        x = self.prepare_queries(q)
        out, empty = self.step(x, self.prepare(patterns))
        if single:
            out, empty = out[0], empty[0]
        return (out, empty) if return_empty else out

    __call__ = read

    def weights(self, queries, patterns) -> torch.Tensor:
        """Normalised read weights ``w_mu / sum_nu w_nu`` of every query.

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)``
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``

        Returns
        -------
        torch.Tensor, shape ``(B, m)``
            Rows sum to one; rows with all weights zero are NaN. Neuron-limited rules return
            one stochastic draw.

        Raises
        ------
        ValueError
            As :meth:`read`; also for ``Binary_Neuron_SDM`` (its weights are shared-neuron counts,
            see :meth:`assocmem.sdm.read.NeuronSDM.shared_neurons`).
        """
        w, den = self._weights(queries, patterns)
        return w / den

    def raw_weights(self, queries, patterns) -> torch.Tensor:
        """Un-normalised read weights of every query.

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)``
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``

        Returns
        -------
        torch.Tensor, shape ``(B, m)``
            Neuron-limited rules: one draw of the integer neuron counts (mean ``I r / 2^n`` or
            ``Ic r``). Other rules: the weights divided by each row's largest weight (rows with
            all weights zero stay zero).

        Raises
        ------
        ValueError
            As :meth:`weights`.
        """
        w, _ = self._weights(queries, patterns)
        return w

    def _weights(self, queries, patterns) -> tuple[torch.Tensor, torch.Tensor]:
        if self.spec.weights == "neurons":
            raise ValueError("Binary_Neuron_SDM has no weight table; use NeuronSDM.shared_neurons")
        x = self.prepare_queries(queries)
        prep = self.prepare(patterns)
        ws, dens = [], []
        for lo in range(0, max(x.shape[0], 1), self.chunk_size):
            w, den = self._block_weights(x[lo:lo + self.chunk_size], prep)
            ws.append(w.clone())  # the block's weights live in a buffer the next block reuses
            dens.append(den)
        return torch.cat(ws), torch.cat(dens)

    def log_weight_table(self) -> np.ndarray:
        """Log weight at each Hamming distance ``0..n`` (rules whose weights depend on it).

        Returns
        -------
        numpy.ndarray, shape ``(n + 1,)``
            ``log I`` (``Binary_SDM``, ``Cont_Binary_SDM``), ``log(I r / 2^n)`` (expected
            counts, ``Binary_SDM_NeuronLimit``) or ``beta (1 - 2 dv / n)``
            (``Binary_SDM_BFit_Attention``); ``-inf`` where the weight is 0.

        Raises
        ------
        ValueError
            For rules whose weights are not a function of a Hamming distance.
        """
        spec = self.spec
        if spec.weights == "intersection" and not spec.neuron_limited:
            return _log_intersection_table(self.n, self.d).copy()
        if spec.weights == "intersection":
            with np.errstate(divide="ignore"):
                return np.log(_expected_count_table(self.n, self.d, self._r_fraction))
        if spec.weights == "softmax" and spec.space == "binary":
            return self.beta * (1.0 - 2.0 * np.arange(self.n + 1) / self.n)
        raise ValueError(f"{self.name} weights are not a function of a Hamming distance")


def make_read_rule(name, n, d, **kwargs) -> ReadRule:
    """Build the read rule ``name`` for dimension ``n`` and radius ``d``.

    Parameters
    ----------
    name : str or Algorithm
        One of :data:`ALL_ALGORITHMS` (case, ``_`` and ``-`` are ignored).
    n : int
        Dimension, ``>= 2``.
    d : int
        Radius, ``0 <= d <= n``.
    **kwargs
        ``r``, ``beta``, ``beta_convention``, ``seed``, ``device``, ``dtype``,
        ``cap_table_size``, ``chunk_size``: see :class:`ReadRule`.

    Returns
    -------
    ReadRule

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names), ``n < 2``, ``d`` is outside
        ``[0, n]``, a neuron-limited rule gets no positive ``r``, a softmax rule with ``d < 2``
        gets no ``beta``, or an option is invalid.
    RuntimeError
        If the device is not available.

    Examples
    --------
    >>> rule = make_read_rule("Cont_SDM_CFit_Attention", n=64, d=11, device="cpu")
    >>> _, P = random_patterns(16, 64, seed=0)
    >>> bool(torch.allclose(rule(P, P), P.to(rule.dtype), atol=1e-6))
    True

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7.
    """
    return ReadRule(name, n, d, **kwargs)


# ==========================================================================================
# 4. Iterated retrieval
# ==========================================================================================


@dataclass
class ConvergenceResult:
    """What :func:`converge` returns.

    Attributes
    ----------
    states : torch.Tensor, shape ``(B, n)``
        Final states (0/1 floats or unit vectors), on the rule's device.
    steps : torch.Tensor, shape ``(B,)``, int64
        Reads applied to each query. A query that stops was read once more than it moved (the
        read that changed nothing counts).
    stopped : torch.Tensor, shape ``(B,)``, bool
        The stopping rule fired within ``max_steps`` reads.
    zero_weights : torch.Tensor, shape ``(B,)``, bool
        The last read had all weights zero, so it left the query unchanged.
    """

    states: torch.Tensor
    steps: torch.Tensor
    stopped: torch.Tensor
    zero_weights: torch.Tensor

    def cosine_to(self, targets, space: str) -> torch.Tensor:
        """Cosine of each final state to its target (:func:`cosine_to_target`)."""
        return cosine_to_target(self.states, targets, space)


def cosine_to_target(states, targets, space: str) -> torch.Tensor:
    """The App. B.7 metric: cosine between each state and its target.

    Parameters
    ----------
    states, targets : torch.Tensor, shape ``(B, n)``
        Binary (0/1) or real vectors, paired by row.
    space : {"binary", "continuous"}
        ``"binary"``: ``1 - 2 H / n`` with ``H`` the Hamming distance (the cosine of the
        bipolar images, the authors' ``hamm_to_cosine``). ``"continuous"``: the cosine.

    Returns
    -------
    torch.Tensor, shape ``(B,)``, float64

    Raises
    ------
    ValueError
        On shape mismatch or an unknown ``space``.
    """
    s, t = _as_tensor(states, "states"), _as_tensor(targets, "targets")
    t = t.to(s.device)
    if s.shape != t.shape or s.ndim != 2:
        raise ValueError(f"states and targets must both have shape (B, n), got {tuple(s.shape)} "
                         f"and {tuple(t.shape)}")
    n = s.shape[1]
    if space == "binary":
        h = (s.to(torch.float64) != t.to(torch.float64)).sum(-1).to(torch.float64)
        return 1.0 - 2.0 * h / n
    if space == "continuous":
        s, t = s.to(torch.float64), t.to(torch.float64)
        return (s * t).sum(-1) / (torch.linalg.vector_norm(s, dim=-1) * torch.linalg.vector_norm(t, dim=-1))
    raise ValueError(f"space must be 'binary' or 'continuous', got {space!r}")


def converge(rule: ReadRule, queries, patterns, max_steps: int = 100, tol: float = 0.05) -> ConvergenceResult:
    """Read each query repeatedly until it stops changing (App. B.7).

    Each step reads every still-active query once. A binary query stops when a read changes no
    bit; a continuous query stops when no component of its (unit-norm) state moves by more than
    ``tol``. Stopped queries are not read again; the others run for at most ``max_steps`` reads.
    A read whose weights are all zero leaves the query unchanged, so such a query stops at once
    (binary rules) or after that read (continuous rules).

    Parameters
    ----------
    rule : ReadRule
        The read rule (:func:`make_read_rule`).
    queries : torch.Tensor or array_like, shape ``(B, n)``
        Initial queries (binary or real, as the rule expects; continuous ones are normalised).
    patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``
        Stored patterns.
    max_steps : int, default 100
        Most reads per query, ``>= 0``.
    tol : float, default 0.05
        Continuous stopping tolerance on each component, ``>= 0`` (ignored by binary rules).

    Returns
    -------
    ConvergenceResult
        ``states``, ``steps``, ``stopped``, ``zero_weights``.

    Raises
    ------
    ValueError
        As :meth:`ReadRule.read`, or if ``max_steps < 0`` or ``tol`` is negative or not finite.

    Notes
    -----
    The authors iterate the whole batch until no query in it changes (``convergence_loop``).
    For deterministic rules the final states are the same; for the neuron-limited rules, whose
    counts are redrawn at every read, stopping per query ends each query at its first unchanged
    read.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (at most 100 steps; tolerance 0.05); the authors'
    ``convergence_loop`` in ``Implementations_Associative_Memory.py`` ([BP21-code]).
    """
    if not isinstance(rule, ReadRule):
        raise ValueError(f"rule must be a ReadRule (see make_read_rule), got {type(rule).__name__}")
    max_steps = _as_int(max_steps, "max_steps")
    if max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    if isinstance(tol, bool) or not isinstance(tol, Real) or not math.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    prep = rule.prepare(patterns)
    x = rule.prepare_queries(queries).clone()
    b = x.shape[0]
    dev = x.device
    steps = torch.zeros(b, dtype=torch.int64, device=dev)
    zero = torch.zeros(b, dtype=torch.bool, device=dev)
    active = torch.arange(b, device=dev)
    for _ in range(max_steps):
        if active.numel() == 0:
            break
        old = x.index_select(0, active)
        new, emp = rule.step(old, prep)
        if rule.is_binary:
            changed = (new != old).any(-1)
        else:
            changed = ((new - old).abs() > tol).any(-1)
        x.index_copy_(0, active, new)
        steps.index_add_(0, active, torch.ones_like(active))
        zero.index_copy_(0, active, emp)
        active = active[changed]
    stopped = torch.ones(b, dtype=torch.bool, device=dev)
    stopped[active] = False
    return ConvergenceResult(states=x, steps=steps, stopped=stopped, zero_weights=zero)


# ==========================================================================================
# 5. Patterns and perturbations
# ==========================================================================================


def perturbation_levels(max_level, num: int = 7) -> list[int]:
    """Perturbation levels as the authors chose them: ``unique(int(linspace(0, max, num)))``.

    ``int`` truncates toward zero, so ``max = 375`` gives ``[0, 62, 125, 187, 250, 312, 375]``
    and ``max = 12`` gives ``[0, 2, 4, 6, 8, 10, 12]``.

    Parameters
    ----------
    max_level : int
        Largest perturbation (bits, or the Hamming-equivalent of a cosine), ``>= 0``.
    num : int, default 7
        Number of points before removing duplicates, ``>= 1``.

    Returns
    -------
    list of int
        Sorted, distinct Python ints.

    Raises
    ------
    ValueError
        If ``max_level < 0`` or ``num < 1``.

    References
    ----------
    The authors' ``SDM_Experiments.ipynb`` (``n_perturbs = 7``), in [BP21-code].
    """
    max_level = _as_int(max_level, "max_level")
    num = _as_int(num, "num")
    if max_level < 0:
        raise ValueError(f"max_level must be >= 0, got {max_level}")
    if num < 1:
        raise ValueError(f"num must be >= 1, got {num}")
    return [int(v) for v in np.unique(np.linspace(0, max_level, num).astype(int))]


def perturb_binary(targets, k, seed=0) -> torch.Tensor:
    """Flip exactly ``k`` distinct, uniformly chosen bits of every target.

    Parameters
    ----------
    targets : torch.Tensor or array_like, shape ``(B, n)``
        Binary vectors.
    k : int
        Bits to flip, ``0 <= k <= n``.
    seed : int or torch.Generator, default 0
        CPU generator (the same queries on every device).

    Returns
    -------
    torch.Tensor, shape ``(B, n)``, dtype of ``targets``
        At Hamming distance exactly ``k`` from ``targets``.

    Raises
    ------
    ValueError
        On non-binary entries or ``k`` outside ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7; :func:`assocmem.sdm.read.flip_bits`.
    """
    return flip_bits(targets, k, seed=seed)


def perturb_continuous(targets, k, seed=0) -> torch.Tensor:
    """Move each target to cosine ``1 - 2k/n`` along a uniformly random orthogonal direction.

    ``y = c u + sqrt(1 - c^2) w`` with ``u`` the normalised target, ``w`` a uniform unit vector
    orthogonal to ``u`` and ``c = 1 - 2k/n``, the cosine Eq. 5 assigns to ``k`` flipped bits.

    Parameters
    ----------
    targets : torch.Tensor or array_like, shape ``(B, n)``
        Nonzero real vectors, ``n >= 2``.
    k : int or float
        Hamming-equivalent perturbation, ``0 <= k <= n``.
    seed : int or torch.Generator, default 0
        CPU generator for the directions.

    Returns
    -------
    torch.Tensor, shape ``(B, n)``, float64
        Unit vectors with ``cos(y, target) = 1 - 2k/n`` to rounding (about ``1e-15``).

    Raises
    ------
    ValueError
        If ``k`` is outside ``[0, n]``, ``n < 2``, or a target is zero or not finite.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (``cosine_perturb_queries``);
    :func:`assocmem.sdm.read.rotate_to_cosine`.
    """
    t = _as_tensor(targets, "targets")
    if t.ndim < 1:
        raise ValueError("targets must have at least one axis")
    n = t.shape[-1]
    if isinstance(k, bool) or not isinstance(k, Real) or not (0 <= float(k) <= n):
        raise ValueError(f"k must be a number in [0, n] = [0, {n}], got {k!r}")
    return rotate_to_cosine(t.to(torch.float64), 1.0 - 2.0 * float(k) / n, seed=seed)


def random_patterns(m, n, seed=0, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """The authors' random patterns: ``uniform(-1, 1)^n``, binarised by sign and L2-normalised.

    Parameters
    ----------
    m : int
        Number of patterns, ``>= 1``.
    n : int
        Dimension, ``>= 2``.
    seed : int or torch.Generator, default 0
        CPU generator (the same patterns on every device).
    device : str or torch.device, default "cpu"

    Returns
    -------
    binary : torch.Tensor, shape ``(m, n)``, uint8
        ``1[x > 0]``.
    continuous : torch.Tensor, shape ``(m, n)``, float64
        ``x / |x|``.

    Raises
    ------
    ValueError
        If ``m < 1`` or ``n < 2``.

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (``np.random.uniform(-1, 1, (m, n))``).
    """
    m, n = _as_int(m, "m"), _as_int(n, "n")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    x = torch.rand((m, n), generator=_cpu_generator(seed), dtype=torch.float64) * 2.0 - 1.0
    dev = resolve_device(device)
    return (x > 0).to(torch.uint8).to(dev), (x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)).to(dev)


def make_queries(patterns_binary, patterns_continuous, targets, k, seed=0, *,
                 ensure_closest: bool = True, max_attempts: int = 10):
    """Perturbed queries for a set of targets, redrawn until each target is still the closest.

    Parameters
    ----------
    patterns_binary : torch.Tensor or None, shape ``(m, n)``
        Stored binary patterns (None: no binary queries).
    patterns_continuous : torch.Tensor or None, shape ``(m, n)``
        Stored unit patterns (None: no continuous queries).
    targets : array_like of int, shape ``(B,)``
        Row indices of the targets.
    k : int
        Perturbation level (bits), ``0 <= k <= n``.
    seed : int, default 0
        Seed; the binary and continuous queries use independent streams derived from it.
    ensure_closest : bool, default True
        Redraw (only) the queries with another stored pattern strictly closer than the target:
        binary, Hamming distance ``< k``; continuous, cosine above ``1 - 2k/n + 1e-5`` (the
        authors' tolerance). Ties are allowed, as in the authors' check.
    max_attempts : int, default 10
        Redraw rounds before giving up.

    Returns
    -------
    binary : torch.Tensor or None, shape ``(B, n)``, uint8
    continuous : torch.Tensor or None, shape ``(B, n)``, float64

    Raises
    ------
    ValueError
        On inconsistent shapes or out-of-range targets or ``k``.
    RuntimeError
        If some query still has a closer pattern after ``max_attempts`` rounds.

    References
    ----------
    The authors' ``Data_Processing_Associative_Memory.py`` (``ensure_no_closer_images``).
    """
    idx = torch.as_tensor(np.asarray(targets, dtype=np.int64))
    if idx.ndim != 1:
        raise ValueError(f"targets must be a 1-D array of row indices, got shape {tuple(idx.shape)}")
    max_attempts = _as_int(max_attempts, "max_attempts")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    base = _as_int(seed, "seed")
    out = []
    for kind, pats in (("binary", patterns_binary), ("continuous", patterns_continuous)):
        if pats is None:
            out.append(None)
            continue
        pats = _as_tensor(pats, f"patterns_{kind}").cpu()
        if pats.ndim != 2:
            raise ValueError(f"patterns_{kind} must have shape (m, n), got {tuple(pats.shape)}")
        m, n = pats.shape
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= m):
            raise ValueError(f"targets must index rows 0..{m - 1}")
        kk = _as_int(k, "k")
        if kk < 0 or kk > n:
            raise ValueError(f"k must lie in [0, n] = [0, {n}], got {kk}")
        gen = torch.Generator().manual_seed(_seed_int(base, 0 if kind == "binary" else 1))
        tgt = pats[idx]
        if kind == "binary":
            q = perturb_binary(tgt, kk, seed=gen)
        else:
            pf = pats.to(torch.float64)
            pats = pf / torch.linalg.vector_norm(pf, dim=-1, keepdim=True)
            tgt = pats[idx]
            q = perturb_continuous(tgt, kk, seed=gen)
        if ensure_closest and kk > 0 and idx.numel():
            for _attempt in range(max_attempts + 1):
                bad = _closer_exists(q, pats, kk, kind)
                if not bool(bad.any()):
                    break
                if _attempt == max_attempts:
                    raise RuntimeError(f"{int(bad.sum())} {kind} queries at perturbation {kk} still "
                                       f"have a stored pattern closer than their target after "
                                       f"{max_attempts} redraws")
                sel = torch.nonzero(bad).squeeze(-1)
                redo = perturb_binary(tgt[sel], kk, seed=gen) if kind == "binary" \
                    else perturb_continuous(tgt[sel], kk, seed=gen)
                q[sel] = redo.to(q.dtype)
        out.append(q)
    return out[0], out[1]


def _closer_exists(q: torch.Tensor, pats: torch.Tensor, k: int, kind: str) -> torch.Tensor:
    if kind == "binary":
        qf, pf = q.to(torch.float64), pats.to(torch.float64)
        dist = qf.sum(-1, keepdim=True) + pf.sum(-1) - 2.0 * (qf @ pf.T)
        return dist.amin(-1) < k - 0.5
    c = 1.0 - 2.0 * k / q.shape[-1]
    cos = q @ pats.T
    return cos.amax(-1) > c + 1e-5


# ==========================================================================================
# 6. The experiment
# ==========================================================================================


def convergence_experiment(n=64, m=1024, radii=None, algorithms=ALGORITHMS, levels=None,
                           num_queries=None, seed=0, device="cpu", *, num_datasets: int = 1,
                           num_repeats: int = 1, r=None, beta_convention: str = "authors",
                           max_steps: int = 100, tol: float = 0.05, dtype=torch.float32,
                           ensure_closest=None, data=None, rule_options=None, setting=None,
                           num_threads=None, show_progress: bool = True) -> pd.DataFrame:
    """Run the App. B.7 convergence experiment; one row per convergence.

    For each pattern set (``num_datasets``), level and repeat, ``num_queries`` stored patterns
    are perturbed (binary: ``k`` flipped bits; continuous: cosine ``1 - 2k/n``) and every rule
    and radius iterates the *same* queries to convergence (:func:`converge`). The metric is the
    cosine of the final state to the target (:func:`cosine_to_target`).

    Parameters
    ----------
    n : int, default 64
        Dimension (ignored if ``data`` is given).
    m : int, default 1024
        Stored patterns per set.
    radii : iterable of int, optional
        Radii ``d``; default :func:`paper_radii` ``(n)``.
    algorithms : str or iterable of str, default :data:`ALGORITHMS`
        Rule names (:func:`resolve_algorithm`); a single name runs that one rule.
    levels : iterable of int, optional
        Perturbation levels; default ``perturbation_levels(PAPER_MAX_PERTURBATION[n])``.
    num_queries : int, optional
        Targets per pattern set and repeat, ``1 <= num_queries <= m`` (default ``m``: every
        stored pattern, as the authors). A seeded subset, the same for every level and repeat.
    seed : int, default 0
        Master seed. Patterns, targets, perturbations and stochastic rounding all derive from
        it through independent streams keyed by (set, level, repeat, rule, radius), so a run with
        fewer rules or radii reproduces the corresponding rows of a larger run.
    device : str or torch.device, default "cpu"
    num_datasets : int, default 1
        Independent pattern sets (the authors: 3).
    num_repeats : int, default 1
        Perturbation draws per set and level (the authors: 5).
    r : int or float, optional
        Neurons for the neuron-limited rules; default ``PAPER_NEURONS[n]``.
    beta_convention : {"authors", "ols"}, default "authors"
    max_steps : int, default 100
    tol : float, default 0.05
    dtype : torch.float32 or torch.float64, default torch.float32
        Floating type of the reads (float32 is about twice as fast on CPUs; cosines are
        reported in float64).
    ensure_closest : bool, optional
        Redraw queries that have a stored pattern closer than their target (default: True for
        random patterns, False for ``data``, as the authors).
    data : array_like, shape ``(N, n)``, optional
        Real patterns (e.g. :func:`assocmem.datasets.load_digits_patterns`) instead of random
        ones: each set stores ``m`` rows drawn without replacement; binary rules use
        ``1[x > 0]``. Store and query the *same* rows: querying with held-out rows asks for a
        target that was never stored (the learnt-projection artefact of App. B.7).
    rule_options : dict, optional
        Extra keyword arguments for every :class:`ReadRule` (e.g. ``{"authors_cap_counts":
        True}``, ``{"cap_table_size": 16385}``).
    setting : str, optional
        Value of the ``setting`` column that labels these rows (default ``"n=<n>"``); the
        analysis functions keep settings apart, so runs of the same ``n`` with different ``r``
        can be concatenated.
    num_threads : int, optional
        torch CPU threads for the run, restored afterwards (see :func:`run_preset`; one
        thread is usually fastest for these small reads). Default: leave torch's setting.
    show_progress : bool, default True
        Progress bar (silent under CI, see :mod:`assocmem.progress`).

    Returns
    -------
    pandas.DataFrame
        Columns ``setting`` (categorical), ``algorithm`` (categorical), ``space``, ``n``, ``m``, ``d``, ``r`` (NaN where
        not used), ``beta`` (NaN where not used), ``level``, ``dataset``, ``repeat``,
        ``query`` (target row), ``cosine`` (final cosine to the target), ``steps``, ``stopped``
        (the stopping rule fired), ``zero_weights`` (the last read had all weights zero). The
        attribute ``attrs["config"]`` records the arguments.

    Raises
    ------
    ValueError
        On unknown algorithms, a radius outside ``[0, n]``, an invalid level, ``num_queries``
        outside ``[1, m]``, ``m`` larger than ``data`` has rows, a missing ``levels`` or ``r``
        for an ``n`` without a paper default, or bad counts.
    RuntimeError
        If queries cannot be drawn with the target closest (:func:`make_queries`).

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7 (Figs. 18-31); the authors' ``SDM_Experiments.ipynb``
    ([BP21-code]); [S002] claim C5.
    """
    algos = _algorithm_names(algorithms)
    if not algos:
        raise ValueError("algorithms is empty")
    if len(set(algos)) != len(algos):
        raise ValueError(f"algorithms has duplicates: {algos}")
    m = _as_int(m, "m")
    if data is not None:
        data_arr = np.asarray(data, dtype=np.float64)
        if data_arr.ndim != 2:
            raise ValueError(f"data must have shape (N, n), got {data_arr.shape}")
        if not np.all(np.isfinite(data_arr)):
            raise ValueError("data must have finite entries")
        n = data_arr.shape[1]
        if m > data_arr.shape[0]:
            raise ValueError(f"m = {m} exceeds the {data_arr.shape[0]} rows of data")
        if np.any(np.linalg.norm(data_arr, axis=1) == 0):
            raise ValueError("data has a zero row, which cannot be L2-normalised")
    n = _as_int(n, "n")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    radii = paper_radii(n) if radii is None else [_as_int(v, "d") for v in radii]
    for d in radii:
        if d < 0 or d > n:
            raise ValueError(f"radius d = {d} outside [0, n] = [0, {n}]")
    if levels is None:
        if n not in PAPER_MAX_PERTURBATION:
            raise ValueError(f"no paper perturbation levels for n = {n}; pass levels")
        levels = perturbation_levels(PAPER_MAX_PERTURBATION[n])
    levels = [_as_int(v, "level") for v in levels]
    for k in levels:
        if k < 0 or k > n:
            raise ValueError(f"perturbation level {k} outside [0, n] = [0, {n}]")
    num_queries = m if num_queries is None else _as_int(num_queries, "num_queries")
    if not 1 <= num_queries <= m:
        raise ValueError(f"num_queries must lie in [1, m] = [1, {m}], got {num_queries}")
    num_datasets = _as_int(num_datasets, "num_datasets")
    num_repeats = _as_int(num_repeats, "num_repeats")
    if num_datasets < 1 or num_repeats < 1:
        raise ValueError("num_datasets and num_repeats must be >= 1")
    specs = {a: _SPECS[a] for a in algos}
    if any(s.needs_r for s in specs.values()) and r is None:
        if n not in PAPER_NEURONS:
            raise ValueError(f"no paper neuron count for n = {n}; pass r")
        r = PAPER_NEURONS[n]
    if ensure_closest is None:
        ensure_closest = data is None
    seed = _as_int(seed, "seed")
    dev = resolve_device(device)
    dtype = _check_dtype(dtype)

    options = dict(rule_options or {})
    clash = {"r", "beta_convention", "seed", "device", "dtype"} & set(options)
    if clash:
        raise ValueError(f"rule_options cannot set {sorted(clash)}; use the experiment's arguments")
    rules = {}
    for d in radii:
        for a in algos:
            rules[(a, d)] = ReadRule(a, n, d, r=r if specs[a].needs_r else None,
                                     beta_convention=beta_convention,
                                     seed=_seed_int(seed, 7, d, ALL_ALGORITHMS.index(a)), device=dev,
                                     dtype=dtype, **options)
    setting = f"n={n}" if setting is None else str(setting)
    with torch_threads(num_threads, dev):
        pieces = _run(rules, algos, n, m, data_arr if data is not None else None, levels, num_queries,
                      num_datasets, num_repeats, seed, max_steps, tol, bool(ensure_closest),
                      show_progress)
    frame = _frame(pieces, n, m, algos, setting)
    frame.attrs["config"] = dict(n=n, m=m, radii=list(radii), algorithms=algos, levels=levels,
                                 num_queries=num_queries, num_datasets=num_datasets,
                                 num_repeats=num_repeats, r=r, beta_convention=beta_convention,
                                 max_steps=max_steps, tol=tol, seed=seed, device=str(dev),
                                 dtype=str(dtype), data=data is not None,
                                 ensure_closest=bool(ensure_closest), rule_options=options,
                                 setting=setting)
    return frame


def _run(rules: dict, algos: list[str], n: int, m: int, data_arr, levels, num_queries: int,
         num_datasets: int, num_repeats: int, seed: int, max_steps: int, tol: float,
         ensure_closest: bool, show_progress: bool) -> list[dict]:
    """The loops of :func:`convergence_experiment`: sets, levels, repeats, then every rule."""
    want_binary = any(rule.is_binary for rule in rules.values())
    want_cont = any(not rule.is_binary for rule in rules.values())
    pieces = []
    total = num_datasets * len(levels) * num_repeats
    bar = progress(None, total=total, desc=f"convergence n={n}") if show_progress else None
    for ds in range(num_datasets):
        if data_arr is None:
            pb, pc = random_patterns(m, n, seed=_seed_int(seed, 1, ds))
        else:
            rows = np.random.default_rng(_seed_int(seed, 1, ds)).choice(data_arr.shape[0], m, replace=False)
            x = torch.as_tensor(data_arr[rows])
            pb = (x > 0).to(torch.uint8)
            pc = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        targets = np.sort(np.random.default_rng(_seed_int(seed, 2, ds)).permutation(m)[:num_queries]) \
            if num_queries < m else np.arange(m)
        tidx = torch.as_tensor(targets, dtype=torch.int64)
        tb, tc = pb[tidx], pc[tidx]
        prepared = {key: rule.prepare(pb if rule.is_binary else pc) for key, rule in rules.items()}
        for k in levels:
            for rep in range(num_repeats):
                qb, qc = make_queries(pb if want_binary else None, pc if want_cont else None,
                                      targets, k, seed=_seed_int(seed, 3, ds, k, rep),
                                      ensure_closest=ensure_closest)
                for (a, d), rule in rules.items():
                    rule.manual_seed(_seed_int(seed, 4, ds, k, rep, d, ALL_ALGORITHMS.index(a)))
                    q, tgt = (qb, tb) if rule.is_binary else (qc, tc)
                    res = converge(rule, q, prepared[(a, d)], max_steps=max_steps, tol=tol)
                    cos = cosine_to_target(res.states, tgt.to(res.states.device), rule.space)
                    pieces.append({
                        "algorithm": a, "space": rule.space, "d": d,
                        "r": float(rule.r) if rule.r is not None else math.nan,
                        "beta": rule.beta if rule.beta is not None else math.nan,
                        "level": k, "dataset": ds, "repeat": rep,
                        "query": targets.astype(np.int32),
                        "cosine": cos.cpu().numpy(),
                        "steps": res.steps.cpu().numpy().astype(np.int16),
                        "stopped": res.stopped.cpu().numpy(),
                        "zero_weights": res.zero_weights.cpu().numpy(),
                    })
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    return pieces


_COLUMNS = ["setting", "algorithm", "space", "n", "m", "d", "r", "beta", "level", "dataset", "repeat",
            "query", "cosine", "steps", "stopped", "zero_weights"]


def _frame(pieces: list[dict], n: int, m: int, algos: list[str], setting: str) -> pd.DataFrame:
    if not pieces:
        return pd.DataFrame(columns=_COLUMNS)
    lengths = [len(p["query"]) for p in pieces]
    rep = lambda key, dtype: np.repeat(np.array([p[key] for p in pieces], dtype=dtype), lengths)  # noqa: E731
    frame = pd.DataFrame({
        "setting": pd.Categorical([setting] * sum(lengths), categories=[setting]),
        "algorithm": pd.Categorical(np.repeat([p["algorithm"] for p in pieces], lengths), categories=algos),
        "space": pd.Categorical(np.repeat([p["space"] for p in pieces], lengths),
                                categories=["binary", "continuous"]),
        "n": np.full(sum(lengths), n, dtype=np.int32),
        "m": np.full(sum(lengths), m, dtype=np.int32),
        "d": rep("d", np.int32),
        "r": rep("r", np.float64),
        "beta": rep("beta", np.float64),
        "level": rep("level", np.int32),
        "dataset": rep("dataset", np.int16),
        "repeat": rep("repeat", np.int16),
        "query": np.concatenate([p["query"] for p in pieces]),
        "cosine": np.concatenate([p["cosine"] for p in pieces]),
        "steps": np.concatenate([p["steps"] for p in pieces]),
        "stopped": np.concatenate([p["stopped"] for p in pieces]),
        "zero_weights": np.concatenate([p["zero_weights"] for p in pieces]),
    })
    return frame


def _ci(mean: np.ndarray, sem: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    z = stats.norm.ppf(0.5 + confidence / 2.0)
    return mean - z * sem, mean + z * sem


def _check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, Real) or not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return float(confidence)


def _check_frame(df, needed: Sequence[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a DataFrame from convergence_experiment, got {type(df).__name__}")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"the frame lacks the columns {missing}; pass the per-query frame of "
                         "convergence_experiment")


def _group_keys(df: pd.DataFrame) -> list[str]:
    return (["setting"] if "setting" in df.columns else []) + ["n", "d", "level"]


def summarize(df: pd.DataFrame, threshold: float = 0.99, confidence: float = 0.95) -> pd.DataFrame:
    """Mean final cosine per rule, setting, radius and level, with a confidence interval.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`convergence_experiment` (or several, concatenated).
    threshold : float, default 0.99
        A convergence counts as a retrieval when its final cosine exceeds this.
    confidence : float, default 0.95
        Level of the normal-approximation interval ``mean +- z sem``.

    Returns
    -------
    pandas.DataFrame
        One row per ``(setting, algorithm, n, d, level)``: ``count``, ``mean_cosine``, ``sem``,
        ``ci_low``, ``ci_high``, ``retrieved`` (fraction above ``threshold``), ``mean_steps``,
        ``stopped`` (fraction), ``zero_weights`` (fraction).

    Raises
    ------
    ValueError
        If ``df`` lacks the needed columns or ``confidence`` is not in ``(0, 1)``.
    """
    _check_frame(df, ["algorithm", "n", "d", "level", "cosine", "steps", "stopped", "zero_weights"])
    confidence = _check_confidence(confidence)
    keys = _group_keys(df)
    keys = keys[:-3] + ["algorithm"] + keys[-3:]
    work = df.assign(retrieved=df["cosine"] > threshold)
    g = work.groupby(keys, observed=True)
    out = g.agg(count=("cosine", "size"), mean_cosine=("cosine", "mean"), sd=("cosine", "std"),
                retrieved=("retrieved", "mean"), mean_steps=("steps", "mean"),
                stopped=("stopped", "mean"), zero_weights=("zero_weights", "mean")).reset_index()
    out["sem"] = (out["sd"] / np.sqrt(out["count"])).fillna(0.0)
    out["ci_low"], out["ci_high"] = _ci(out["mean_cosine"].to_numpy(), out["sem"].to_numpy(), confidence)
    return out[keys + ["count", "mean_cosine", "sem", "ci_low", "ci_high", "retrieved", "mean_steps",
                       "stopped", "zero_weights"]]


_AGREEMENT_COLUMNS = ["count", "mean_diff", "ci_low", "ci_high", "outcome_agreement", "retrieved",
                      "retrieved_reference"]


def agreement(df: pd.DataFrame, reference="Binary_SDM", threshold: float = 0.99,
              confidence: float = 0.95) -> pd.DataFrame:
    """How closely two rules agree, query by query (the metric App. B.7 does not give).

    Rows are paired by ``(setting, n, d, level, dataset, repeat, query)``: the same target and,
    within a space (binary or continuous), the same perturbed query. Two measures per pair of
    rules and level:

    * the paired mean difference of final cosines, ``mean(cos_A - cos_ref)``, with a
      normal-approximation confidence interval;
    * the outcome agreement, the fraction of queries where both rules retrieve the target
      (cosine above ``threshold``) or both fail.

    Parameters
    ----------
    df : pandas.DataFrame
        Per-query output of :func:`convergence_experiment`.
    reference : str or None, default "Binary_SDM"
        Compare every other rule with this one; ``None`` compares every pair ``(A, B)`` with
        ``B`` before ``A`` in the frame's order of rules.
    threshold : float, default 0.99
        Retrieval threshold on the cosine.
    confidence : float, default 0.95

    Returns
    -------
    pandas.DataFrame
        Columns ``setting`` (if the frame has it), ``n``, ``d``, ``level``, ``algorithm``,
        ``reference``, ``count``, ``mean_diff``, ``ci_low``, ``ci_high``, ``outcome_agreement``,
        ``retrieved``, ``retrieved_reference``.

    Raises
    ------
    ValueError
        If ``df`` lacks columns, ``reference`` is unknown or absent from ``df``, or
        ``confidence`` is not in ``(0, 1)``.
    """
    _check_frame(df, ["algorithm", "n", "d", "level", "dataset", "repeat", "query", "cosine"])
    confidence = _check_confidence(confidence)
    group = _group_keys(df)
    keys = group + ["dataset", "repeat", "query"]
    wide = df.pivot_table(index=keys, columns="algorithm", values="cosine", observed=True)
    order = (list(df["algorithm"].cat.categories) if isinstance(df["algorithm"].dtype, pd.CategoricalDtype)
             else sorted(df["algorithm"].astype(str).unique()))
    present = [a for a in order if a in wide.columns]
    if reference is not None:
        reference = resolve_algorithm(reference)
        if reference not in present:
            raise ValueError(f"reference {reference!r} is not in the frame (has {present})")
        pairs = [(a, reference) for a in present if a != reference]
    else:
        pairs = [(a, b) for i, b in enumerate(present) for a in present[i + 1:]]
    rows = []
    for a, b in pairs:
        sub = wide[[a, b]].dropna()
        if sub.empty:
            continue
        ra, rb = sub[a] > threshold, sub[b] > threshold
        tmp = pd.DataFrame({"diff": sub[a] - sub[b], "agree": ra == rb, "ra": ra, "rb": rb}).reset_index()
        agg = tmp.groupby(group, observed=True).agg(
            count=("diff", "size"), mean_diff=("diff", "mean"), sd=("diff", "std"),
            outcome_agreement=("agree", "mean"), retrieved=("ra", "mean"),
            retrieved_reference=("rb", "mean")).reset_index()
        agg["algorithm"], agg["reference"] = a, b
        rows.append(agg)
    columns = group + ["algorithm", "reference"] + _AGREEMENT_COLUMNS
    if not rows:
        return pd.DataFrame(columns=columns)
    out = pd.concat(rows, ignore_index=True)
    sem = (out["sd"] / np.sqrt(out["count"])).fillna(0.0).to_numpy()
    out["ci_low"], out["ci_high"] = _ci(out["mean_diff"].to_numpy(), sem, confidence)
    return out[columns]


def agreement_summary(agree: pd.DataFrame) -> pd.DataFrame:
    """Worst case over perturbation levels of :func:`agreement`.

    Parameters
    ----------
    agree : pandas.DataFrame
        Output of :func:`agreement`.

    Returns
    -------
    pandas.DataFrame
        One row per ``(setting, n, d, algorithm, reference)``: ``max_abs_diff`` (the largest
        ``|mean_diff|`` over levels), ``level_at_max`` and that level's ``ci_low`` and
        ``ci_high``; ``min_agreement`` (the smallest outcome agreement) and
        ``level_at_min_agreement``.

    Raises
    ------
    ValueError
        If ``agree`` lacks the columns of :func:`agreement`.
    """
    _check_frame(agree, ["n", "d", "level", "algorithm", "reference", "mean_diff", "ci_low", "ci_high",
                         "outcome_agreement"])
    keys = (["setting"] if "setting" in agree.columns else []) + ["n", "d", "algorithm", "reference"]
    rows = []
    for key, g in agree.groupby(keys, sort=False, observed=True):
        i = int(g["mean_diff"].abs().to_numpy().argmax())
        j = int(g["outcome_agreement"].to_numpy().argmin())
        row = dict(zip(keys, key))
        row.update(max_abs_diff=float(abs(g["mean_diff"].iloc[i])), level_at_max=int(g["level"].iloc[i]),
                   ci_low=float(g["ci_low"].iloc[i]), ci_high=float(g["ci_high"].iloc[i]),
                   min_agreement=float(g["outcome_agreement"].iloc[j]),
                   level_at_min_agreement=int(g["level"].iloc[j]))
        rows.append(row)
    return pd.DataFrame(rows, columns=keys + ["max_abs_diff", "level_at_max", "ci_low", "ci_high",
                                             "min_agreement", "level_at_min_agreement"])


# ==========================================================================================
# 7. Presets
# ==========================================================================================


@dataclass(frozen=True)
class ConvergenceSetting:
    """One run of a preset: the arguments of :func:`convergence_experiment`.

    ``algorithms`` and ``r`` default to the preset's rules and :data:`PAPER_NEURONS`; ``name``
    labels the rows (the ``setting`` column), default ``"n=<n>"``. ``data`` is ``None`` (random
    patterns) or ``"digits"``: scikit-learn's handwritten digits, centred training images of
    :func:`assocmem.datasets.load_digits_patterns` (1,347 rows, ``n = 64``), stored and queried
    from the same rows (:func:`setting_data`).
    """

    n: int
    m: int
    radii: tuple[int, ...]
    levels: tuple[int, ...]
    num_queries: int
    num_datasets: int
    num_repeats: int
    algorithms: tuple[str, ...] | None = None
    r: int | None = None
    name: str | None = None
    data: str | None = None

    def __post_init__(self):
        if self.data not in DATA_SOURCES:
            raise ValueError(f"data must be one of {DATA_SOURCES}; got {self.data!r}")

    @property
    def convergences_per_level(self) -> int:
        """Convergences per rule, radius and level (the paper: 15,360)."""
        return self.num_queries * self.num_datasets * self.num_repeats

    @property
    def label(self) -> str:
        return self.name or f"n={self.n}"


#: Pattern sources of a :class:`ConvergenceSetting`: random patterns or the digits.
DATA_SOURCES = (None, "digits")


def setting_data(setting: ConvergenceSetting) -> np.ndarray | None:
    """The patterns a setting stores: ``None`` (random patterns) or the digits' training rows.

    Returns
    -------
    numpy.ndarray or None
        For ``data="digits"``: the centred training images of
        :func:`assocmem.datasets.load_digits_patterns` (defaults: 25 % stratified test split,
        seed 0), shape ``(1347, 64)``, float64. The same array every call.

    Raises
    ------
    ImportError
        If scikit-learn is missing (digits only).
    """
    if setting.data is None:
        return None
    from assocmem.datasets import load_digits_patterns

    return load_digits_patterns().train


@dataclass(frozen=True)
class ConvergencePreset:
    """A named list of :class:`ConvergenceSetting` with a label for figures."""

    name: str
    settings: tuple[ConvergenceSetting, ...]
    label: str
    algorithms: tuple[str, ...] = ALGORITHMS
    dtype: torch.dtype = torch.float32


_LEVELS_64 = tuple(perturbation_levels(12))
_LEVELS_1000 = tuple(perturbation_levels(375))
_PAPER_64 = ConvergenceSetting(64, 1024, tuple(paper_radii(64)), _LEVELS_64, 1024, 3, 5)
_PAPER_1000 = ConvergenceSetting(1000, 1024, tuple(paper_radii(1000)), _LEVELS_1000, 1024, 3, 5)
#: The five rules with continuous queries (App. B.7 runs these on images).
CONTINUOUS_ALGORITHMS: tuple[str, ...] = tuple(a for a in ALGORITHMS if algorithm_spec(a).space == "continuous")
_DIGITS = ConvergenceSetting(64, 1024, tuple(paper_radii(64)), _LEVELS_64, 1024, 3, 5,
                             algorithms=CONTINUOUS_ALGORITHMS, name="digits", data="digits")

#: ``"quick"``: ``n = 64``, 256 convergences per level, radii 5, 11, 15, 19, on random patterns
#: and on the digits (5 s on one core; for the book build and CI). ``"cpu"``: the paper's sizes,
#: 15,360 convergences per level (3 pattern sets x 5 perturbation draws x 1024 targets) at
#: ``n = 64`` and ``n = 1000``, all six radii and eight rules, plus the five continuous rules on
#: the digits (setting ``"digits"``): 11.9 million convergences, 14.8 min on one thread of a
#: two-core machine with the other core busy. ``"paper"``: ``"cpu"`` plus the authors' neuron
#: comparison at ``n = 64`` with ``r = 10^5`` neurons (``Binary_SDM_NeuronLimit`` against
#: ``Binary_Neuron_SDM``, setting ``"n=64,r=1e5"``), i.e. everything App. B.7 ran on random
#: patterns (the explicit neurons add tens of minutes on a CPU).
PRESETS: dict[str, ConvergencePreset] = {
    "quick": ConvergencePreset(
        name="quick",
        settings=(ConvergenceSetting(64, 1024, (5, 11, 15, 19), _LEVELS_64, 256, 1, 1),
                  ConvergenceSetting(64, 1024, (5, 11, 15, 19), _LEVELS_64, 256, 1, 1,
                                     algorithms=CONTINUOUS_ALGORITHMS, name="digits", data="digits")),
        label=("quick: n = 64, m = 1024, 256 convergences per level, d in {5, 11, 15, 19}, "
               "random patterns and the digits"),
    ),
    "cpu": ConvergencePreset(
        name="cpu",
        settings=(_PAPER_64, _PAPER_1000, _DIGITS),
        label=("cpu: the paper's 15,360 convergences per level (3 pattern sets x 5 draws x 1024) "
               "at n = 64 and n = 1000, all six radii, and the continuous rules on the digits"),
    ),
    "paper": ConvergencePreset(
        name="paper",
        settings=(_PAPER_64, _PAPER_1000, _DIGITS,
                  ConvergenceSetting(64, 1024, tuple(paper_radii(64)), _LEVELS_64, 1024, 3, 5,
                                     algorithms=("Binary_SDM_NeuronLimit", "Binary_Neuron_SDM"),
                                     r=10**5, name="n=64,r=1e5")),
        label=("paper: the cpu preset plus the r = 10^5 neuron comparison at n = 64 "
               "(Binary_SDM_NeuronLimit vs Binary_Neuron_SDM), 15,360 convergences per level"),
    ),
}


def get_preset(name: str) -> ConvergencePreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)


def run_preset(name: str, seed=0, device="cpu", algorithms=None, dtype=None, num_threads=1,
               show_progress: bool = True) -> pd.DataFrame:
    """Run a preset: :func:`convergence_experiment` for each of its settings, concatenated.

    Parameters
    ----------
    name : {"quick", "cpu", "paper"}
    seed : int, default 0
    device : str or torch.device, default "cpu"
    algorithms : str or iterable of str, optional
        Restrict every setting to these rules, or to one rule given by name (default: each
        setting's, else the preset's).
    dtype : torch.dtype, optional
        Default: the preset's (float32, as the authors' ``torch.Tensor``).
    num_threads : int or None, default 1
        torch CPU threads during the run (restored afterwards; ignored off the CPU). One
        thread is the safe choice: each read is small, and on a shared two-core machine a second
        OpenMP thread made the runs eight times *slower* when the other core was busy. ``None``
        leaves torch's setting alone.
    show_progress : bool, default True

    Returns
    -------
    pandas.DataFrame
        As :func:`convergence_experiment`, with a ``setting`` column naming each setting;
        ``attrs["preset"]`` and ``attrs["label"]`` name the preset.

    Raises
    ------
    ValueError
        If the preset is unknown, or as :func:`convergence_experiment`.
    """
    preset = get_preset(name)
    frames = []
    wanted = None if algorithms is None else _algorithm_names(algorithms)
    for st in preset.settings:
        algos = list(st.algorithms or preset.algorithms)
        if wanted is not None:
            algos = [a for a in algos if a in wanted]
            if not algos:
                continue
        frames.append(convergence_experiment(
            n=st.n, m=st.m, radii=st.radii, algorithms=algos, levels=st.levels,
            num_queries=st.num_queries, seed=seed, device=device, num_datasets=st.num_datasets,
            num_repeats=st.num_repeats, r=st.r, dtype=dtype or preset.dtype, setting=st.label,
            data=setting_data(st),
            num_threads=num_threads, show_progress=show_progress))
    if not frames:
        raise ValueError(f"none of {algorithms!r} is run by the preset {name!r}")
    order = [a for a in ALL_ALGORITHMS if any(a in f["algorithm"].cat.categories for f in frames)]
    settings = [st.label for st in preset.settings]
    for f in frames:
        f["algorithm"] = pd.Categorical(f["algorithm"].astype(str), categories=order)
        f["setting"] = pd.Categorical(f["setting"].astype(str), categories=settings)
    out = pd.concat(frames, ignore_index=True)
    out.attrs["preset"] = preset.name
    out.attrs["label"] = preset.label
    out.attrs["config"] = [f.attrs.get("config") for f in frames]
    return out
