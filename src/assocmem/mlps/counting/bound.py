"""The counting bound: the information-theoretic lower bound on the parameters that store every fact set.

A model whose ``W`` parameters are stored with ``b`` bits each has at most ``2^{bW}`` parameter
settings. A setting stores at most one fact set (Definition 2.1 asks for a *strict* argmax, so the
stored value of every key is determined by the parameters), and there are ``V^F`` fact sets
``f: [F] -> [V]``. Storing all of them therefore needs ``2^{bW} >= V^F``, i.e.
``W >= F log2(V) / b`` (seed 001, Theorem 2.4, proved in App. B.1). Here the bound is evaluated
exactly with Python integers (:func:`num_fact_sets`, :func:`min_parameters`) next to the
real-valued formula (:func:`min_parameters_bound`, also on arrays), and inverted into the largest
number of facts a parameter budget can hold (:func:`max_facts`). The variant for *injective* maps
(``V! / (V - F)!`` of them; ``F!`` for the tied tables of the capacity sweeps, whose map is a
permutation) is available throughout with ``injective=True``. Used by chapter 10 ("Facts, margins
and the counting bound") and by chapter 13 ("Facts per parameter", whose capacity plots draw
:func:`min_parameters_bound` through :mod:`assocmem.mlps.capacity_sweeps`).

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 1 (capacity
``F = Theta(W / log W)``), Sec. 2.1 (Definitions 2.1-2.3, Theorem 2.4), App. B.1 (proof of
Theorem 2.4).
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from assocmem._checks import as_real
from assocmem._checks import as_bool

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "num_fact_sets",
    "log2_num_fact_sets",
    "min_parameters",
    "min_parameters_bound",
    "max_facts",
]


#: Largest ``F log2 V`` (in bits) evaluated with exact integers (a 2^27-bit integer is 16 MiB).
EXACT_BITS_LIMIT = 2**27


def _count(name: str, value, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_injective(num_keys: int, num_values: int) -> None:
    if num_keys > num_values:
        raise ValueError(
            f"an injective map needs F <= V; got F = {num_keys} keys and V = {num_values} values"
        )


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
        Negative or non-integer sizes, ``V = 0``, ``F > V`` with ``injective``, or an
        ``injective`` that is not a bool.

    References
    ----------
    Seed 001, App. B.1 (the count ``|V|^{|K|}``).
    """
    F = _count("num_keys", num_keys)
    V = _count("num_values", num_values, 1)
    if not as_bool(injective, "injective"):
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
    if as_bool(injective, "injective"):
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


def min_parameters_bound(num_keys: ArrayLike, num_values: ArrayLike, bits: ArrayLike, *,
                         injective: bool = False) -> float | np.ndarray:
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
        Bits per parameter, ``b > 0`` and finite (a bool or a string is refused).
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
        non-finite or non-real array entries), shapes that do not broadcast, a ``bits`` that is
        not a positive real number (booleans and strings refused), or an ``injective`` that is
        not a bool.

    References
    ----------
    Seed 001, Theorem 2.4 (``W >= |K| log2 |V| / b``), App. B.1.
    """
    injective = as_bool(injective, "injective")
    if any(_is_array(x) for x in (num_keys, num_values, bits)):
        return _min_parameters_bound_array(num_keys, num_values, bits, injective)
    try:
        b = as_real(bits, "bits")
    except ValueError:
        raise ValueError(f"bits must be a positive number; got {bits!r}") from None
    if b <= 0:
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
        Bad arguments (an ``injective`` that is not a bool among them), ``V = 1`` (every ``F``
        fits: one fact set), or a budget whose exact check exceeds :data:`EXACT_BITS_LIMIT`.

    References
    ----------
    Seed 001, Definition 2.3 and Theorem 2.4; Sec. 1 (capacity ``F = Theta(W / log W)``).
    """
    W = _count("num_parameters", num_parameters)
    b = _count("bits", bits, 1)
    injective = as_bool(injective, "injective")
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
