"""Counting facts: the information-theoretic lower bound on fact storage, and Hebbian capacities.

Two halves, both for the chapter "Facts, margins and the counting bound" (Part II).

**The counting bound** (seed 001, Theorem 2.4, proved in App. B.1). A model whose ``W``
parameters are stored with ``b`` bits each has at most ``2^{bW}`` parameter settings. A setting
stores at most one fact set (Definition 2.1 asks for a *strict* argmax, so the stored value of
every key is determined by the parameters), and there are ``V^F`` fact sets
``f: [F] -> [V]``. Storing all of them therefore needs ``2^{bW} >= V^F``, i.e.

    W >= F log2(V) / b.

Here the bound is evaluated exactly with Python integers (:func:`num_fact_sets`,
:func:`min_parameters`) next to the real-valued formula (:func:`min_parameters_bound`), and
inverted into the largest number of facts a parameter budget can hold (:func:`max_facts`). The
variant for *injective* maps (``V! / (V - F)!`` of them; ``F!`` for the tied tables of the
capacity sweeps, whose map is a permutation) is available throughout with ``injective=True``.

**Hebbian memories on random facts** (seed 001, Sec. 2.2, eq. 5 and Sec. 4, eq. 6). The Hebbian
memory ``W = sum_t v_f(t) k_t^T`` is Part I's outer-product memory
(:class:`assocmem.linear.memory.OuterProductMemory`) written with the fact targets; in kernel form it reads
``y_i = sum_t K(k_t, k_i) v_f(t)`` with the linear kernel ``K(x, z) = <x, z>``. Replacing the
kernel by ``K_2(x, z) = <x, z>^2`` gives the exact quadratic-kernel memory
(:func:`assocmem.mlps.mlp.exact_k2_memory`). :func:`hebbian_point` measures accuracy and margins of
either on one fact set, :func:`hebbian_f_sweep` sweeps the number of facts at fixed ``d``, and
:func:`hebbian_capacity` / :func:`hebbian_capacity_scan` find the largest ``F`` a draw stores.

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

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from assocmem._checks import lookup
from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.margins import fact_margins, gram_from_features, output_margins, signal_crosstalk
from assocmem.linear.memory import OuterProductMemory
from assocmem.mlps.mlp import exact_k2_memory
from assocmem.sweeps.search import SearchResult, smallest_width

__all__ = [
    "num_fact_sets",
    "log2_num_fact_sets",
    "min_parameters",
    "min_parameters_bound",
    "max_facts",
    "HEBBIAN_KERNELS",
    "hebbian_memory",
    "hebbian_gram",
    "hebbian_point",
    "hebbian_f_sweep",
    "hebbian_capacity",
    "hebbian_capacity_scan",
    "CapacityResult",
    "kernel_second_moment",
    "crosstalk_second_moment",
    "crosstalk_second_moment_mc",
    "HEURISTIC_CONSTANTS",
    "capacity_heuristic",
    "PowerLawFit",
    "power_law_fit",
    "geometric_grid",
    "CountingPreset",
    "PRESETS",
    "get_preset",
]

#: Kernels of the Hebbian memories compared in the chapter: ``<x, z>`` and ``<x, z>^2``.
HEBBIAN_KERNELS = ("linear", "k2")

#: Largest ``F log2 V`` (in bits) evaluated with exact integers (a 2^27-bit integer is 16 MiB).
EXACT_BITS_LIMIT = 2**27


# ----------------------------------------------------------------------------------------------
# validation


def _count(name: str, value, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_injective(num_keys: int, num_values: int) -> None:
    if num_keys > num_values:
        raise ValueError(
            f"an injective map needs F <= V; got F = {num_keys} keys and V = {num_values} values"
        )


# ----------------------------------------------------------------------------------------------
# Theorem 2.4: counting fact sets


def log2_num_fact_sets(num_keys: int, num_values: int, *, injective: bool = False) -> float:
    """``log2`` of the number of fact sets, in floating point.

    ``F log2 V`` for all maps ``f: [F] -> [V]``; ``log2(V! / (V - F)!)`` for injective maps
    (computed with ``lgamma``).

    Parameters
    ----------
    num_keys : int
        ``F = |K| >= 0``.
    num_values : int
        ``V = |V| >= 1``.
    injective : bool, default False
        Count only injective maps (needs ``F <= V``).

    Returns
    -------
    float
        The information, in bits, needed to single out one fact set.

    Raises
    ------
    ValueError
        Negative or non-integer sizes, ``V = 0``, or ``F > V`` with ``injective``.

    References
    ----------
    Seed 001, App. B.1 (the count ``|V|^{|K|}``).
    """
    F = _count("num_keys", num_keys)
    V = _count("num_values", num_values, 1)
    if not injective:
        return F * math.log2(V)
    _check_injective(F, V)
    return (math.lgamma(V + 1) - math.lgamma(V - F + 1)) / math.log(2)


def num_fact_sets(num_keys: int, num_values: int, *, injective: bool = False) -> int:
    """The number of fact sets, as an exact Python integer.

    ``V^F`` maps ``f: [F] -> [V]`` (each key takes any value independently); with ``injective``,
    ``V! / (V - F)!`` (``F!`` when ``V = F``: the permutations of a tied table).

    Parameters
    ----------
    num_keys, num_values : int
        ``F >= 0`` and ``V >= 1``.
    injective : bool, default False

    Returns
    -------
    int

    Raises
    ------
    ValueError
        As :func:`log2_num_fact_sets`, or a count above ``2^EXACT_BITS_LIMIT`` (use the
        floating-point forms there).

    References
    ----------
    Seed 001, App. B.1.
    """
    F = _count("num_keys", num_keys)
    V = _count("num_values", num_values, 1)
    if injective:
        _check_injective(F, V)
    bits = log2_num_fact_sets(F, V, injective=injective)
    if bits > EXACT_BITS_LIMIT:
        raise ValueError(
            f"the count has about {bits:.3g} bits, beyond the exact limit {EXACT_BITS_LIMIT}; "
            "use log2_num_fact_sets or method='float'"
        )
    if injective:
        return math.perm(V, F)
    return V**F


def _ceil_log2(n: int) -> int:
    """``ceil(log2 n)`` for an integer ``n >= 1``, exactly."""
    return (n - 1).bit_length()


def min_parameters(num_keys: int, num_values: int, bits: int, *, injective: bool = False,
                   method: str = "exact") -> int:
    """Smallest ``W`` with ``2^{bW} >=`` the number of fact sets: Theorem 2.4's bound as an integer.

    With ``N`` fact sets, ``2^{bW} >= N`` holds exactly when ``bW >= ceil(log2 N)``, so
    ``W_min = ceil(ceil(log2 N) / b)``. ``method="exact"`` computes ``ceil(log2 N)`` from the
    integer ``N`` (:func:`num_fact_sets`); ``method="float"`` rounds the floating-point
    ``log2 N`` up, which can be off by one only when ``log2 N`` lies within rounding of an integer.

    Parameters
    ----------
    num_keys : int
        ``F >= 0``.
    num_values : int
        ``V >= 1``.
    bits : int
        Bits per parameter, ``b >= 1``.
    injective : bool, default False
        Count injective maps only (``F <= V``).
    method : {"exact", "float"}, default "exact"

    Returns
    -------
    int
        The fewest parameters that can distinguish every fact set; ``0`` when there is only one
        (``V = 1`` or ``F = 0``).

    Raises
    ------
    ValueError
        Bad sizes or bits, an unknown method, or an exact count too large
        (:data:`EXACT_BITS_LIMIT`).

    References
    ----------
    Seed 001, Theorem 2.4 and App. B.1 (``2^{bW} >= |V|^{|K|}``).
    """
    b = _count("bits", bits, 1)
    if method == "exact":
        need = _ceil_log2(num_fact_sets(num_keys, num_values, injective=injective))
    elif method == "float":
        need = math.ceil(log2_num_fact_sets(num_keys, num_values, injective=injective))
    else:
        raise ValueError(f"method must be 'exact' or 'float'; got {method!r}")
    return -(-need // b)


def min_parameters_bound(num_keys, num_values, bits, *, injective: bool = False):
    """The real-valued bound ``log2(N) / b`` (``= F log2 V / b`` for all maps).

    Scalars give a float, computed as before. If any argument is array-like (a NumPy array, list,
    tuple or pandas Series) the three broadcast against each other (NumPy rules) and the formula
    is evaluated elementwise: ``F log2 V / b``, or ``log2(V! / (V - F)!) / b`` through ``lgamma``
    with ``injective``. Array entries are read as real numbers and need not be integers (e.g. a
    plotted line of ``F``); a scalar ``num_keys`` / ``num_values`` must still be an integer.

    Parameters
    ----------
    num_keys : int or array-like of float
        ``F >= 0``.
    num_values : int or array-like of float
        ``V >= 1``.
    bits : float or array-like of float
        Bits per parameter, ``b > 0`` and finite.
    injective : bool, default False
        Count injective maps only (``F <= V``, elementwise).

    Returns
    -------
    float, or numpy.ndarray of float64
        A float for scalar arguments; otherwise an array of the broadcast shape (a NumPy float64
        scalar when that shape is ``()``).

    Raises
    ------
    ValueError
        Bad sizes (negative, non-integer for a scalar, ``V < 1``, ``F > V`` with ``injective``,
        non-finite or non-real array entries), shapes that do not broadcast, or a non-positive
        ``bits``.

    References
    ----------
    Seed 001, Theorem 2.4 (``W >= |K| log2 |V| / b``), App. B.1.
    """
    if any(_is_array(x) for x in (num_keys, num_values, bits)):
        return _min_parameters_bound_array(num_keys, num_values, bits, injective)
    b = float(bits)
    if not (b > 0 and math.isfinite(b)):
        raise ValueError(f"bits must be a positive number; got {bits!r}")
    return log2_num_fact_sets(num_keys, num_values, injective=injective) / b


def _is_array(x) -> bool:
    """Whether ``x`` is array-like for :func:`min_parameters_bound` (not a Python or NumPy scalar)."""
    return isinstance(x, (np.ndarray, list, tuple, pd.Series, pd.Index))


def _real_array(name: str, x) -> np.ndarray:
    """``x`` as a float64 array of finite real numbers (booleans and complex numbers rejected)."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise ValueError(f"{name} must be an array of real numbers; got {x!r}") from exc
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    return arr


def _min_parameters_bound_array(num_keys, num_values, bits, injective: bool):
    """Elementwise :func:`min_parameters_bound` with NumPy broadcasting."""
    F = _real_array("num_keys", num_keys)
    V = _real_array("num_values", num_values)
    b = _real_array("bits", bits)
    try:
        F, V, b = np.broadcast_arrays(F, V, b)
    except ValueError as exc:
        raise ValueError(
            f"num_keys, num_values and bits must broadcast; got shapes {F.shape}, {V.shape}, {b.shape}"
        ) from exc
    if (F < 0).any():
        raise ValueError(f"num_keys must be >= 0; got a minimum of {F.min()!r}")
    if (V < 1).any():
        raise ValueError(f"num_values must be >= 1; got a minimum of {V.min()!r}")
    if not (b > 0).all():
        raise ValueError(f"bits must be positive numbers; got a minimum of {b.min()!r}")
    if not injective:
        return F * np.log2(V) / b
    if (F > V).any():
        raise ValueError("an injective map needs F <= V in every entry")
    lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
    return (lgamma(V + 1) - lgamma(V - F + 1)) / math.log(2) / b


def max_facts(num_parameters: int, bits: int, *, num_values: int | None = None,
              injective: bool = False) -> int:
    """Largest ``F`` whose fact sets a budget of ``W`` parameters at ``b`` bits can all tell apart.

    The inverse of :func:`min_parameters`: the largest ``F`` with ``N(F) <= 2^{bW}``, where
    ``N(F) = V^F`` for a fixed value table of ``V`` rows, or ``N(F) = F^F`` when ``num_values`` is
    None (``V = F``, the tables of the seed's capacity sweeps; ``F!`` with ``injective``). This is
    an *upper bound* on any model's fact-storage capacity (Definition 2.3) at that budget. Found by
    bisection on the floating-point ``log2 N``, then settled with exact integer comparisons.

    Parameters
    ----------
    num_parameters : int
        ``W >= 0``.
    bits : int
        ``b >= 1``.
    num_values : int, optional
        ``V >= 2``; None ties it to ``F``.
    injective : bool, default False

    Returns
    -------
    int
        ``F_max``; with ``V`` fixed and ``injective``, at most ``V``.

    Raises
    ------
    ValueError
        Bad arguments, ``V = 1`` (every ``F`` fits: one fact set), or a budget whose exact
        check exceeds :data:`EXACT_BITS_LIMIT`.

    References
    ----------
    Seed 001, Definition 2.3 and Theorem 2.4; Sec. 1 (capacity ``F = Theta(W / log W)``).
    """
    W = _count("num_parameters", num_parameters)
    b = _count("bits", bits, 1)
    budget = b * W
    if num_values is not None:
        V = _count("num_values", num_values, 2)
        hi_cap = V if injective else None

        def size(F: int) -> int:
            return V
    else:
        hi_cap = None

        def size(F: int) -> int:
            return max(F, 1)

    def fits_float(F: int) -> bool:
        return log2_num_fact_sets(F, size(F), injective=injective) <= budget

    def fits_exact(F: int) -> bool:
        if F == 0:
            return True
        n = num_fact_sets(F, size(F), injective=injective)
        return _ceil_log2(n) <= budget  # n <= 2^budget  <=>  ceil(log2 n) <= budget

    # bracket: N(F) >= 2^(F - 1) for F >= 1 with V = F (F^F) or V >= 2, so F <= budget + 1
    lo, hi = 0, budget + 2
    if hi_cap is not None:
        hi = min(hi, hi_cap + 1)
    while hi - lo > 1:  # fits_float(lo), not fits_float(hi) (or hi beyond the cap)
        mid = (lo + hi) // 2
        if fits_float(mid):
            lo = mid
        else:
            hi = mid
    F = lo
    # settle the last step exactly (float log2 may be off within rounding)
    while F > 0 and not fits_exact(F):
        F -= 1
    while (hi_cap is None or F + 1 <= hi_cap) and fits_exact(F + 1):
        F += 1
    return F


# ----------------------------------------------------------------------------------------------
# Hebbian memories on random facts (eq. 5 and its quadratic-kernel version)


def _check_kernel(kernel: str) -> str:
    if kernel not in HEBBIAN_KERNELS:
        raise ValueError(f"kernel must be one of {HEBBIAN_KERNELS}; got {kernel!r}")
    return kernel


def hebbian_memory(facts: FactSet, kernel: str = "linear"):
    """The Hebbian memory of a fact set, as a model ``(F, d) -> (F, d)``.

    * ``"linear"``: eq. 5, ``W = sum_t v_f(t) k_t^T``, built as Part I's
      :class:`~assocmem.linear.memory.OuterProductMemory` written with the keys and the targets
      ``C_f`` (state ``S = W``, shape ``(d, d)``; read ``S x``; no ``1/F``).
    * ``"k2"``: :func:`assocmem.mlps.mlp.exact_k2_memory`, ``H(x) = (1/F) sum_t v_f(t) <k_t, x>^2``.

    Parameters
    ----------
    facts : FactSet
    kernel : {"linear", "k2"}, default "linear"

    Returns
    -------
    OuterProductMemory or ExactK2Memory
        float64, on the fact set's device.

    Raises
    ------
    ValueError
        An unknown kernel or a malformed fact set.

    References
    ----------
    Seed 001, eq. 5 (Sec. 2.2); eq. 8 and Lemma B.2 (the ``K_2`` kernel).
    """
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be a FactSet; got {type(facts).__name__}")
    if _check_kernel(kernel) == "linear":
        d = facts.dim
        mem = OuterProductMemory(d, d, dtype=torch.float64, device=facts.keys.device)
        return mem.write(facts.keys.to(torch.float64), facts.targets.to(torch.float64))
    return exact_k2_memory(facts, require_unit_keys=False)


def hebbian_gram(keys: torch.Tensor, kernel: str = "linear") -> torch.Tensor:
    """Kernel Gram matrix ``K[t, i] = K(k_t, k_i)`` of the stored keys, float64.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``
    kernel : {"linear", "k2"}
        ``<k_t, k_i>`` (identity features: :func:`assocmem.mlps.margins.gram_from_features` of the keys)
        or ``<k_t, k_i>^2``.

    Returns
    -------
    torch.Tensor, shape ``(F, F)``, float64

    Raises
    ------
    ValueError
        An unknown kernel or keys that are not 2-D.

    References
    ----------
    Seed 001, App. B.4 (Gram matrix), eq. 8.
    """
    _check_kernel(kernel)
    if not isinstance(keys, torch.Tensor) or keys.dim() != 2:
        raise ValueError("keys must be a 2-D tensor (F, d)")
    g = gram_from_features(keys)  # (F, F): <k_t, k_i>
    return g if kernel == "linear" else g**2


def hebbian_point(facts: FactSet, kernel: str = "linear") -> dict:
    """Accuracy and margins of one Hebbian memory on one fact set.

    Parameters
    ----------
    facts : FactSet
        Needs ``V >= 2``.
    kernel : {"linear", "k2"}

    Returns
    -------
    dict
        ``accuracy`` -- fraction of facts whose target wins the argmax over every value row
        strictly, read from the *model's own outputs* (:func:`hebbian_memory`, Definition 2.1);
        ``frac_positive`` -- fraction of kernel-scale margins ``gamma_i > 0``;
        ``gamma_min``, ``gamma_median`` -- minimum and median kernel-scale margin;
        ``n_stored`` -- number of facts with ``gamma_i > 0``.

    Raises
    ------
    ValueError
        An unknown kernel or a malformed fact set.

    References
    ----------
    Seed 001, Definitions 2.1 and 2.2; App. B.4 (kernel-Hebbian margins).
    """
    model = hebbian_memory(facts, kernel)
    gam = fact_margins(hebbian_gram(facts.keys, kernel), facts)  # (F,)
    out = output_margins(model, facts)  # (F,), the model's own scale
    return {
        "accuracy": float((out > 0).double().mean()),
        "frac_positive": float((gam > 0).double().mean()),
        "gamma_min": float(gam.min()),
        "gamma_median": float(gam.median()),
        "n_stored": int((gam > 0).sum()),
    }


def kernel_second_moment(d: int, kernel: str = "linear") -> float:
    """``mu = E[K(k, k')^2]`` for independent keys uniform on the unit sphere ``S^{d-1}``.

    ``<k, k'>`` is distributed as one coordinate of a uniform unit vector, so
    ``E<k, k'>^2 = 1/d`` and ``E<k, k'>^4 = 3 / (d (d + 2))``.

    Parameters
    ----------
    d : int
        ``d >= 1``.
    kernel : {"linear", "k2"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad ``d`` or kernel.
    """
    d = _count("d", d, 1)
    return 1.0 / d if _check_kernel(kernel) == "linear" else 3.0 / (d * (d + 2))


def crosstalk_second_moment(num_facts: int, d: int, kernel: str = "linear") -> float:
    """Exact ``E[z_ij^2]`` of the cross-talk of eq. 6 for untied random facts.

    For an untied table (keys and values independent and uniform on ``S^{d-1}``, identity map)
    and a pair ``i != j``, the cross-talk ``z_ij = sum_{t != i} K(k_t, k_i) <v_i - v_j, v_t>``
    (competitor ``t = j`` included, as in eq. 6) has

        E[z_ij^2] = mu * (2 (F - 2) / d + 1 + 1/d),    mu = E[K(k, k')^2]

    (:func:`kernel_second_moment`): each of the ``F - 2`` bystanders ``t`` contributes
    ``mu E<u, v_t>^2 = mu |u|^2 / d`` with ``E|u|^2 = E|v_i - v_j|^2 = 2``, the competitor
    contributes ``mu E(1 - <v_i, v_j>)^2 = mu (1 + 1/d)``, and every cross term has a factor
    ``<u, v_t>`` of mean zero.

    Parameters
    ----------
    num_facts : int
        ``F >= 2``.
    d : int
    kernel : {"linear", "k2"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad sizes or kernel.

    References
    ----------
    Seed 001, eq. 6 (signal and cross-talk); App. B.4, eq. 25.
    """
    F = _count("num_facts", num_facts, 2)
    d = _count("d", d, 1)
    return kernel_second_moment(d, kernel) * (2.0 * (F - 2) / d + 1.0 + 1.0 / d)


def crosstalk_second_moment_mc(num_facts: int, d: int, kernel: str = "linear",
                               seeds=range(20)) -> tuple[float, float]:
    """Monte Carlo ``E[z_ij^2]`` over all pairs ``i != j`` of untied fact sets, with its standard error.

    Each seed draws ``make_fact_set(F, d, tied=False, seed=s)`` and averages ``z_ij^2`` over the
    ``F (F - 1)`` pairs, with ``z`` from :func:`assocmem.mlps.margins.signal_crosstalk`; the pairs of
    one draw are dependent, so the standard error is taken across seeds.

    Returns
    -------
    (float, float)
        Mean over seeds, and its standard error (``std / sqrt(n_seeds)``).

    Raises
    ------
    ValueError
        Fewer than two seeds, or bad sizes.
    """
    seeds = list(seeds)
    if len(seeds) < 2:
        raise ValueError("need at least two seeds for a standard error")
    F = _count("num_facts", num_facts, 2)
    per_seed = []
    for s in seeds:
        facts = make_fact_set(F, d, tied=False, seed=int(s))
        _, z = signal_crosstalk(hebbian_gram(facts.keys, kernel), facts.targets)  # (F, F)
        per_seed.append(float((z**2).sum()) / (F * (F - 1)))  # diagonal of z is zero
    x = torch.tensor(per_seed, dtype=torch.float64)
    return float(x.mean()), float(x.std() / math.sqrt(len(seeds)))


#: The extreme-value heuristic ``F ln F = c d^p`` for the capacity, as ``kernel: (c, p)``.
HEURISTIC_CONSTANTS = {"linear": (1.0 / 8.0, 2), "k2": (1.0 / 24.0, 3)}


def capacity_heuristic(d, kernel: str = "linear"):
    """Heuristic capacity: the ``F`` solving ``F ln F = c d^p`` (:data:`HEURISTIC_CONSTANTS`).

    To leading order for ``F >> d`` the cross-talk variance is ``2 mu F / d``
    (:func:`crosstalk_second_moment`: ``2F/d^2`` linear, ``6F/d^3`` for ``K_2``); the smallest of
    about ``F^2`` margins of mean 1 then reaches zero when ``sigma sqrt(2 ln F^2) = 1``, i.e.
    ``4 sigma^2 ln F = 1``: ``F ln F = d^2/8`` (linear) and ``F ln F = d^3/24`` (``K_2``). A
    heuristic (Gaussian tails, independent pairs, ``O(1/d)`` terms dropped), not a bound.

    Parameters
    ----------
    d : float or array-like
        Embedding width(s).
    kernel : {"linear", "k2"}

    Returns
    -------
    float or numpy.ndarray
        ``F`` with ``F ln F = c d^p`` (``F = X / W(X)`` with ``W`` the Lambert function, solved by
        Newton's method on ``u = ln F``).

    Raises
    ------
    ValueError
        An unknown kernel or ``d <= 0``.
    """
    import numpy as np

    c, p = HEURISTIC_CONSTANTS[_check_kernel(kernel)]
    dd = np.asarray(d, dtype=float)
    if np.any(dd <= 0):
        raise ValueError("d must be positive")
    X = c * dd**p
    u = np.log1p(X)  # start: u e^u = X has its root below log(1 + X)
    for _ in range(60):
        u = u - (u * np.exp(u) - X) / (np.exp(u) * (1.0 + u))
    out = np.exp(u)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class PowerLawFit:
    """Least-squares fit ``log y = log a + p log x`` (see :func:`power_law_fit`)."""

    exponent: float  # p
    exponent_se: float  # its standard error (ordinary least squares, residual variance)
    prefactor: float  # a
    n: int  # number of points


def power_law_fit(x, y) -> PowerLawFit:
    """Fit ``y = a x^p`` by ordinary least squares on ``(log x, log y)``.

    Parameters
    ----------
    x, y : array-like of positive numbers, same length ``n >= 3``
        Repeated ``x`` (several seeds per width) are allowed; the standard error of ``p`` is the
        textbook OLS one, ``sqrt(s^2 / sum (log x - mean)^2)`` with ``s^2`` the residual variance
        on ``n - 2`` degrees of freedom.

    Returns
    -------
    PowerLawFit

    Raises
    ------
    ValueError
        Fewer than three points, non-positive values, or a single distinct ``x``.
    """
    import numpy as np

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1 or xa.size < 3:
        raise ValueError("x and y must be 1-D of the same length >= 3")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(ya)) and np.all(xa > 0) and np.all(ya > 0)):
        raise ValueError("x and y must be positive and finite")
    lx, ly = np.log(xa), np.log(ya)
    sxx = float(((lx - lx.mean()) ** 2).sum())
    if sxx == 0:
        raise ValueError("x needs at least two distinct values")
    p = float(((lx - lx.mean()) * (ly - ly.mean())).sum() / sxx)
    a = float(ly.mean() - p * lx.mean())
    resid = ly - (a + p * lx)
    s2 = float((resid**2).sum() / (lx.size - 2))
    return PowerLawFit(exponent=p, exponent_se=math.sqrt(s2 / sxx), prefactor=math.exp(a), n=int(lx.size))


def geometric_grid(lo: int, hi: int, per_octave: int = 2) -> list[int]:
    """Integers from ``lo`` to ``hi`` spaced ``2^(1/per_octave)`` apart (rounded, deduplicated).

    Raises
    ------
    ValueError
        ``lo < 1``, ``hi < lo`` or ``per_octave < 1``.
    """
    lo, hi = _count("lo", lo, 1), _count("hi", hi, 1)
    per_octave = _count("per_octave", per_octave, 1)
    if hi < lo:
        raise ValueError(f"hi must be >= lo; got {lo}, {hi}")
    n = math.floor(per_octave * math.log2(hi / lo) + 1e-9)
    grid = [round(lo * 2 ** (k / per_octave)) for k in range(n + 1)] + [hi]
    return sorted(set(grid))


def hebbian_f_sweep(d: int, num_facts, kernels=HEBBIAN_KERNELS, seeds=(0,), tied=(True,),
                    device="cpu") -> pd.DataFrame:
    """Accuracy and margins of the Hebbian memories as the number of facts grows at fixed ``d``.

    Every point draws a fresh fact set ``make_fact_set(F, d, tied=..., seed=seed)``; both kernels
    see the same draw.

    Parameters
    ----------
    d : int
        Embedding width.
    num_facts : iterable of int
        The values of ``F``.
    kernels : iterable of {"linear", "k2"}
    seeds : iterable of int
    tied : iterable of bool
        Tied (values = permuted keys) and/or untied tables.
    device : str, default "cpu"

    Returns
    -------
    pandas.DataFrame
        One row per (kernel, tied, F, seed) with the columns of :func:`hebbian_point` plus
        ``kernel, tied, d, F, seed``.

    Raises
    ------
    ValueError
        Bad sizes or an unknown kernel.

    References
    ----------
    Seed 001, eq. 5; App. A.3.2 (the exact-``K_2`` ``F``-sweep uses ``d = 32``).
    """
    kernels = [_check_kernel(k) for k in kernels]
    rows = []
    for t in tied:
        for F in num_facts:
            for s in seeds:
                facts = make_fact_set(int(F), d, tied=bool(t), seed=int(s), device=device)
                for k in kernels:
                    rows.append({"kernel": k, "tied": bool(t), "d": d, "F": int(F), "seed": int(s),
                                 **hebbian_point(facts, k)})
    return pd.DataFrame(rows)


def _margins_unchecked(gram: torch.Tensor, facts: FactSet) -> torch.Tensor:
    """:func:`assocmem.mlps.margins.fact_margins` of a Gram matrix without re-validating its input.

    The same arithmetic (``y_i = sum_t K[t, i] c_f(t)``, scores against every value row, target
    minus best rival); the capacity search calls it many times on fact sets that
    :class:`~assocmem.mlps.facts.FactSet` has already validated. ``tests/test_counting.py`` holds the
    two equal.
    """
    values = facts.values.to(torch.float64)  # (V, d)
    y = gram.T @ values[facts.mapping]  # (F, d): row i is sum_t K[t, i] v_f(t)
    s = y @ values.T  # (F, V)
    rows = torch.arange(s.shape[0], device=s.device)
    target = s[rows, facts.mapping].clone()  # (F,)
    s[rows, facts.mapping] = -math.inf
    return target - s.max(dim=1).values  # (F,)


@dataclass(frozen=True)
class CapacityResult:
    """Largest ``F`` one seeded draw stores (see :func:`hebbian_capacity`)."""

    capacity: int  # largest F stored before the first failure found (first_failure - 1)
    first_failure: int  # smallest F found to fail, with the next `verify` F failing too
    search: SearchResult  # the search over F (evaluations, monotonicity violations)


def hebbian_capacity(d: int, kernel: str = "linear", seed: int = 0, tied: bool = True, *,
                     lo: int = 2, hi: int = 65536, verify: int = 2, device="cpu") -> CapacityResult:
    """Largest number of random facts a Hebbian memory stores, for one seeded family of draws.

    For each ``F`` the draw is ``make_fact_set(F, d, tied, seed)``; it *fails* when some fact's
    kernel-scale margin is ``<= 0``. :func:`assocmem.sweeps.smallest_width` (gallop, bisect,
    verify) finds the smallest failing ``F`` whose next ``verify`` values of ``F`` fail as well;
    the capacity is one less. Success is not monotone in ``F`` (each ``F`` is a new draw), so the
    result is the search's documented rule, not the largest ``F`` that ever succeeds.

    Parameters
    ----------
    d : int
    kernel : {"linear", "k2"}
    seed : int, default 0
    tied : bool, default True
    lo, hi : int
        Range of ``F`` searched (``lo >= 2``: a margin needs a competitor).
    verify : int, default 2
    device : str, default "cpu"

    Returns
    -------
    CapacityResult

    Raises
    ------
    ValueError
        Bad arguments, or no failure up to ``hi``.

    References
    ----------
    Seed 001, Definitions 2.1 and 2.3 (capacity: the most facts stored at a fixed budget).
    """
    _check_kernel(kernel)
    lo = _count("lo", lo, 2)

    def fails(F: int) -> float:
        facts = make_fact_set(F, d, tied=tied, seed=seed, device=device)
        return float(_margins_unchecked(hebbian_gram(facts.keys, kernel), facts).min() <= 0)

    res = smallest_width(fails, lo=lo, hi=hi, target=1.0, verify=verify)
    if res.m is None:
        raise ValueError(f"no failure found for F in [{lo}, {hi}]; raise hi")
    return CapacityResult(capacity=res.m - 1, first_failure=res.m, search=res)


def hebbian_capacity_scan(dims, kernels=HEBBIAN_KERNELS, seeds=(0,), tied: bool = True,
                          device="cpu") -> pd.DataFrame:
    """:func:`hebbian_capacity` for every (kernel, d, seed).

    Parameters
    ----------
    dims : mapping of kernel -> iterable of int, or iterable of int
        Embedding widths per kernel (or the same widths for every kernel).
    kernels : iterable of {"linear", "k2"}
    seeds : iterable of int
    tied : bool, default True
    device : str, default "cpu"

    Returns
    -------
    pandas.DataFrame
        Columns ``kernel, d, seed, capacity, evaluations, monotone``.

    Raises
    ------
    ValueError
        As :func:`hebbian_capacity`.
    """
    rows = []
    for k in kernels:
        ds = dims[k] if isinstance(dims, dict) else dims
        for d in ds:
            for s in seeds:
                r = hebbian_capacity(int(d), k, seed=int(s), tied=tied, device=device)
                rows.append({"kernel": k, "d": int(d), "seed": int(s), "capacity": r.capacity,
                             "evaluations": r.search.n_evaluations, "monotone": r.search.monotone})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# presets


@dataclass(frozen=True)
class CountingPreset:
    """Sizes of the experiments in the chapter "Facts, margins and the counting bound"."""

    sweep_d: int  # embedding width of the F-sweep (the seed's exact-K2 F-sweep uses d = 32)
    sweep_f: tuple[int, ...]  # numbers of facts of the F-sweep
    sweep_seeds: tuple[int, ...]  # seeds per point of the F-sweep
    example_f: int  # number of facts of the one-fact margin illustration (at sweep_d)
    worked_d: int  # width of the worked example of Theorem 2.4
    worked_f: int  # facts (= value rows) of the worked example
    not_rerun: tuple[str, ...]  # constructions whose stored width is quoted, not rebuilt (too slow)
    capacity_dims: tuple[tuple[str, tuple[int, ...]], ...]  # (kernel, widths d) of the scan
    capacity_seeds: tuple[int, ...]  # seeds per (kernel, d) of the capacity scan
    moment_f: int  # facts of the Monte Carlo check of the cross-talk second moment
    moment_d: int  # its embedding width
    moment_seeds: int  # its number of independent untied fact sets



PRESETS: dict[str, CountingPreset] = {
    "quick": CountingPreset(
        sweep_d=32, sweep_f=tuple(geometric_grid(4, 2048, 2)), sweep_seeds=(0,),
        example_f=64, worked_d=64, worked_f=256, not_rerun=("GD",),
        capacity_dims=(("linear", (8, 16, 24, 32, 48, 64, 96)), ("k2", (8, 16, 24, 32, 40, 48))),
        capacity_seeds=(0, 1, 2, 3, 4), moment_f=64, moment_d=32, moment_seeds=50,
    ),
    "full": CountingPreset(
        sweep_d=32, sweep_f=tuple(geometric_grid(4, 4096, 4)), sweep_seeds=(0, 1, 2, 3, 4),
        example_f=64, worked_d=64, worked_f=256, not_rerun=(),
        capacity_dims=(("linear", (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)),
                       ("k2", (8, 16, 24, 32, 40, 48, 64, 80, 96))),
        capacity_seeds=tuple(range(10)), moment_f=64, moment_d=32, moment_seeds=400,
    ),
}


def get_preset(name: str) -> CountingPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not in :data:`PRESETS` (the message lists the valid names).
    """
    return lookup(PRESETS, name)
