"""The theory curves of the minimum margin: the isotropic, Table 2, penalty and noisy-query bounds.

Each function evaluates one lower bound of seed 001 ("MLPs are Hebbians") on ``gamma_min`` as a
curve in the sizes and the geometric statistics, with its absolute constants as keyword arguments
so that they can be fitted (:mod:`~assocmem.mlps.margins.fits`): the logarithm
``L = log(C_L F^2 / delta)`` of the bounds (:func:`log_term`); the isotropic curve
``C_s - C_x sqrt(F L / (m d))`` (:func:`isotropic_bound`, eq. 9 / Corollary B.31) and the full
isotropic bound of Theorem B.30 (:func:`isotropic_bound_eq56`, eq. 56); the three non-isotropic
cells of Table 2 (:func:`arbitrary_keys_bound`, eq. 46; :func:`arbitrary_values_bound`, eq. 51;
:func:`arbitrary_bound`, eq. 44); the bound with the competitor absorbed into the signal
(:func:`absorbed_bound`, eq. 43); the penalty form of Theorem 4.3 (:func:`penalty_bound`,
eq. 10); and the noisy-query curve (:func:`noisy_margin_bound`, eq. 74). Every curve takes
scalars or arrays and returns a float or an ndarray. Chapter 12 (How margins scale) compares the
measured margins with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from assocmem._checks import as_real
from assocmem.mlps.margins._common import _arr

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "log_term",
    "isotropic_bound",
    "isotropic_bound_eq56",
    "arbitrary_keys_bound",
    "arbitrary_values_bound",
    "arbitrary_bound",
    "absorbed_bound",
    "penalty_bound",
    "noisy_margin_bound",
]


def _out(x: np.ndarray):
    if not np.all(np.isfinite(x)):  # finite, checked inputs: only an overflow gets here
        raise ValueError("the curve overflows float64 (largest finite value 1.8e+308); rescale the inputs")
    return float(x) if np.ndim(x) == 0 else x


def _consts(**named) -> list[float]:
    """The curve's absolute constants as finite floats (:func:`assocmem._checks.as_real`: a bool,
    a string, NaN or inf is refused, named in the message)."""
    return [as_real(v, k) for k, v in named.items()]


def _positive_arr(x, name: str) -> np.ndarray:
    a = _arr(x, name)
    if np.any(a <= 0):
        raise ValueError(f"{name} must be positive")
    return a


def log_term(F: ArrayLike, C_L: float = 1.0, delta: float = 0.5) -> float | np.ndarray:
    """The logarithm ``L = log(C_L F^2 / delta)`` of the margin bounds, floored at 0.

    Parameters
    ----------
    F : array-like
        Number of facts, ``> 0``.
    C_L : float, default 1.0
        The absolute constant ``C_0`` of the theorems, ``>= 0``.
    delta : float, default 0.5
        Failure probability in ``(0, 1)``; the book fixes 0.5 for the fitted curves (a convention:
        with ``C_L`` fitted, only ``C_L / delta`` is identified).

    Returns
    -------
    float or ndarray
        ``log(max(C_L F^2 / delta, 1))``: the floor keeps ``L >= 0`` (and the square roots real)
        for any non-negative ``C_L``.

    Raises
    ------
    ValueError
        Non-positive ``F``, a ``C_L`` that is negative or not a finite real number, or a ``delta``
        outside ``(0, 1)`` (booleans and strings are refused, and so are such array entries).

    References
    ----------
    Seed 001, Theorems B.17-B.30 (``L := log(C_0 F^2 / delta)``).
    """
    F = _positive_arr(F, "F")
    C_L = as_real(C_L, "C_L", minimum=0.0)
    delta = as_real(delta, "delta")
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}")
    return _out(np.log(np.maximum(C_L * F * F / delta, 1.0)))


def isotropic_bound(F: ArrayLike, m: ArrayLike, d: ArrayLike, *, C_s: float = 1.0, C_x: float = 1.0,
                    C_L: float = 1.0, delta: float = 0.5) -> float | np.ndarray:
    """Isotropic margin curve ``C_s - C_x sqrt(F L / (m d))``, ``L = log(C_L F^2 / delta)``.

    Parameters
    ----------
    F, m, d : array-like
        Facts, feature width and embedding width (broadcast together; all ``> 0``).
    C_s : float, default 1.0
        Signal level (1 in the theorem; fitted because the empirical ``gamma_min`` at small ``F``
        sits near 0.5).
    C_x : float, default 1.0
        Cross-talk constant ``C``.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-positive sizes, invalid ``C_L`` or ``delta``, or a constant that is not a finite real
        number (a bool, a string, NaN or inf); array arguments holding booleans, strings or
        non-finite entries.

    References
    ----------
    Seed 001, eq. 9 (Theorem 4.1), Corollary B.31, Table 2 (random keys, random values), in the
    form fitted in Sec. 4.2.
    """
    C_s, C_x = _consts(C_s=C_s, C_x=C_x)
    m_, d_ = _positive_arr(m, "m"), _positive_arr(d, "d")
    L = np.asarray(log_term(F, C_L, delta))
    F_ = _arr(F, "F")
    return _out(C_s - C_x * np.sqrt(F_ * L / (m_ * d_)))


def isotropic_bound_eq56(
    F: ArrayLike, m: ArrayLike, d: ArrayLike, *, C_s: float = 1.0, C_1: float = 1.0,
    C_2: float = 1.0, C_3: float = 1.0, C_4: float = 1.0, C_L: float = 1.0, delta: float = 0.5
) -> float | np.ndarray:
    """Full isotropic bound of Theorem B.30 with a signal level ``C_s``.

    ``C_s - C_1 sqrt(L/m) - C_2 sqrt(L/(d-1)) - C_3 sqrt(L) sqrt(F/d^3)
    - C_4 sqrt(L) sqrt(F/(m d))``; the theorem has ``C_s = 1`` and ``eps_v = C_2 sqrt(L/(d-1))``.

    Parameters
    ----------
    F, m, d : array-like
        Broadcast together; ``F, m > 0`` and ``d > 1``.
    C_s, C_1, C_2, C_3, C_4 : float
        Signal level and the four absolute constants of eq. 56.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Non-positive sizes, ``d <= 1``, invalid ``C_L`` or ``delta``, or a constant that is not a
        finite real number (a bool, a string, NaN or inf); array arguments holding booleans, strings
        or non-finite entries.

    Notes
    -----
    Along a sweep of one size the terms that do not involve it are constant and only their sum
    is identifiable; fit such a sweep with ``free`` restricted accordingly.

    References
    ----------
    Seed 001, App. B.8.4, eq. 56 (Theorem B.30).
    """
    C_s, C_1, C_2, C_3, C_4 = _consts(C_s=C_s, C_1=C_1, C_2=C_2, C_3=C_3, C_4=C_4)
    F_, m_, d_ = _positive_arr(F, "F"), _positive_arr(m, "m"), _arr(d, "d")
    if np.any(d_ <= 1):
        raise ValueError("d must be > 1 in eq. 56 (it divides by d - 1)")
    L = np.asarray(log_term(F_, C_L, delta))
    sL = np.sqrt(L)
    out = (
        C_s
        - C_1 * np.sqrt(L / m_)
        - C_2 * np.sqrt(L / (d_ - 1))
        - C_3 * sL * np.sqrt(F_ / d_**3)
        - C_4 * sL * np.sqrt(F_ / (m_ * d_))
    )
    return _out(out)


def arbitrary_keys_bound(
    k_min_diag: ArrayLike, k_max_off: ArrayLike, e_k: ArrayLike, F: ArrayLike, d: ArrayLike, *,
    C_s: float = 1.0, C_x: float = 1.0, C_v: float = 1.0, C_L: float = 1.0, delta: float = 0.5
) -> float | np.ndarray:
    """Margin curve for arbitrary keys and isotropic values (Table 2, eq. 46).

    ``C_s [K_min^diag (1 - eps_v) - K_max^off] - C_x sqrt(E_K) sqrt(L / d)`` with
    ``eps_v = C_v sqrt(L / (d - 1))``; the theorem has ``C_s = 1``.

    Parameters
    ----------
    k_min_diag, k_max_off, e_k : array-like
        ``K_min^diag``, ``K_max^off`` (Def. B.9) and ``E_K`` (Def. B.10 / eq. 45) per point.
    F, d : array-like
        Facts and embedding width (``d > 1``).
    C_s, C_x, C_v : float
        Signal level, cross-talk constant ``C`` and the constant of ``eps_v``.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Negative ``E_K``, ``d <= 1``, invalid ``C_L`` or ``delta``, or a constant that is not a
        finite real number (a bool, a string, NaN or inf); array arguments holding booleans, strings
        or non-finite entries.

    References
    ----------
    Seed 001, App. B.8.2, Theorem B.28, eq. 46; Table 2 (arbitrary keys, random values);
    App. A.3.2 (key-spike sweep).
    """
    C_s, C_x, C_v = _consts(C_s=C_s, C_x=C_x, C_v=C_v)
    kd, ko, ek = _arr(k_min_diag, "k_min_diag"), _arr(k_max_off, "k_max_off"), _arr(e_k, "e_k")
    if np.any(ek < 0):
        raise ValueError("e_k must be >= 0")
    d_ = _arr(d, "d")
    if np.any(d_ <= 1):
        raise ValueError("d must be > 1 (eps_v divides by d - 1)")
    L = np.asarray(log_term(F, C_L, delta))
    eps_v = C_v * np.sqrt(L / (d_ - 1))
    return _out(C_s * (kd * (1 - eps_v) - ko) - C_x * np.sqrt(ek) * np.sqrt(L / d_))


def arbitrary_values_bound(
    v_min: ArrayLike, b_y: ArrayLike, e_v: ArrayLike, l_v: ArrayLike, F: ArrayLike, m: ArrayLike, *,
    C_s: float = 1.0, C_x: float = 1.0, C_k: float = 1.0, C_L: float = 1.0, delta: float = 0.5
) -> float | np.ndarray:
    """Margin curve for isotropic keys and arbitrary values (Table 2, eq. 51).

    ``C_s (1 - eps_k) V_min - C_x (B_Y + sqrt(E_v) sqrt(L_v)) sqrt(L / m)`` with
    ``eps_k = C_k sqrt(L / m)``. Eq. 51 writes ``sigma sqrt(L)`` for the last factor; Table 2
    uses ``sqrt(L / m)`` since ``sigma ~ 1/sqrt(m)`` under ``m <= d^2 / L``.

    Parameters
    ----------
    v_min, b_y, e_v, l_v : array-like
        ``V_min`` (Def. B.11), ``B_Y`` (Def. B.12), ``E_v`` (Def. B.13), ``L_v`` (Def. B.14).
    F, m : array-like
        Facts and feature width.
    C_s, C_x, C_k : float
        Signal level, cross-talk constant and the constant of ``eps_k``.
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Negative statistics, non-positive ``m``, invalid ``C_L`` or ``delta``, or a constant that is
        not a finite real number (a bool, a string, NaN or inf); array arguments holding booleans,
        strings or non-finite entries.

    References
    ----------
    Seed 001, App. B.8.3, Theorem B.29, eq. 51; Table 2 (random keys, arbitrary values);
    App. A.3.2 (value-spike sweep).
    """
    C_s, C_x, C_k = _consts(C_s=C_s, C_x=C_x, C_k=C_k)
    vm, by = _arr(v_min, "v_min"), _arr(b_y, "b_y")
    ev, lv = _arr(e_v, "e_v"), _arr(l_v, "l_v")
    if np.any(ev < 0) or np.any(lv < 0) or np.any(by < 0):
        raise ValueError("b_y, e_v and l_v must be >= 0")
    m_ = _positive_arr(m, "m")
    L = np.asarray(log_term(F, C_L, delta))
    r = np.sqrt(L / m_)
    return _out(C_s * (1 - C_k * r) * vm - C_x * (by + np.sqrt(ev) * np.sqrt(lv)) * r)


def arbitrary_bound(k_min_diag: ArrayLike, v_min: ArrayLike, e_k: ArrayLike, e_v: ArrayLike,
                    kappa: ArrayLike, *, C_s: float = 1.0, C_x: float = 1.0) -> float | np.ndarray:
    """Deterministic margin bound for arbitrary keys and values (Table 2, eq. 44).

    ``C_s K_min^diag V_min - C_x sqrt(E_K) sqrt(E_v) kappa``. With ``C_s = C_x = 1`` this is
    Theorem B.25's eq. 44 and holds for every Gram and value set with ``V_ij >= 0`` (eq. 40) and
    ``K_ii >= 0``: ``gamma_min`` is never below it.

    Parameters
    ----------
    k_min_diag, v_min, e_k, e_v, kappa : array-like
        Definitions B.9, B.11, B.10, B.13, B.15.
    C_s, C_x : float
        Fitted signal and cross-talk constants (1 and 1 in the theorem).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Negative energies, or a constant that is not a finite real number (a bool, a string, NaN or
        inf); array arguments holding booleans, strings or non-finite entries.

    References
    ----------
    Seed 001, App. B.8.1, Theorem B.25, eq. 44; Table 2 (arbitrary keys, arbitrary values);
    App. A.3.2 (both-spike sweep).
    """
    C_s, C_x = _consts(C_s=C_s, C_x=C_x)
    kd, vm = _arr(k_min_diag, "k_min_diag"), _arr(v_min, "v_min")
    ek, ev, ka = _arr(e_k, "e_k"), _arr(e_v, "e_v"), _arr(kappa, "kappa")
    if np.any(ek < 0) or np.any(ev < 0) or np.any(ka < 0):
        raise ValueError("e_k, e_v and kappa must be >= 0")
    return _out(C_s * kd * vm - C_x * np.sqrt(ek) * np.sqrt(ev) * ka)


def absorbed_bound(k_min_diag: ArrayLike, k_max_off: ArrayLike, v_min: ArrayLike, v_max: ArrayLike,
                   e_k_tilde: ArrayLike, e_v_tilde: ArrayLike,
                   kappa_tilde: ArrayLike) -> float | np.ndarray:
    """Deterministic margin bound with the competitor absorbed into the signal (eq. 43).

    ``K_min^diag V_min - K_max^off V_max - sqrt(E~_K) sqrt(E~_v) kappa~``; holds for every Gram
    and value set under eq. 40.

    Parameters
    ----------
    k_min_diag, k_max_off, v_min, v_max : array-like
        Definitions B.9 and B.11.
    e_k_tilde, e_v_tilde, kappa_tilde : array-like
        The truncated statistics of eq. 34 (fields of :class:`GeometryStatistics`).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Negative energies, or arguments holding booleans, strings or non-finite entries.

    References
    ----------
    Seed 001, App. B.8.1, Theorem B.25, eq. 43 (with Theorems B.16 and B.21).
    """
    kd, ko, vm, vx = (_arr(x, name) for x, name in ((k_min_diag, "k_min_diag"), (k_max_off, "k_max_off"),
                                                     (v_min, "v_min"), (v_max, "v_max")))
    ek, ev, ka = (_arr(x, name) for x, name in ((e_k_tilde, "e_k_tilde"), (e_v_tilde, "e_v_tilde"),
                                                (kappa_tilde, "kappa_tilde")))
    if np.any(ek < 0) or np.any(ev < 0) or np.any(ka < 0):
        raise ValueError("e_k_tilde, e_v_tilde and kappa_tilde must be >= 0")
    return _out(kd * vm - ko * vx - np.sqrt(ek) * np.sqrt(ev) * ka)


def penalty_bound(s_sig: ArrayLike, p_key: ArrayLike, p_val: ArrayLike, p_align: ArrayLike,
                  F: ArrayLike, m: ArrayLike, d: ArrayLike, *, C_s: float = 0.5,
                  C_x: float = 1.0) -> float | np.ndarray:
    """Penalty form of the general margin bound (eq. 10, Corollary B.26).

    ``C_s S_sig - C_x P_key P_val P_align sqrt(F log F / (m d))``; Corollary B.26 proves it with
    ``C_s = 1/2`` and ``C_x = 1`` when ``d >= 4 log F``.

    Parameters
    ----------
    s_sig, p_key, p_val, p_align : array-like
        The penalty statistics (:class:`PenaltyStatistics`).
    F, m, d : array-like
        Facts (``>= 2``), feature width, embedding width.
    C_s, C_x : float
        Signal and cross-talk constants.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Invalid sizes, or a constant that is not a finite real number (a bool, a string, NaN or
        inf); array arguments holding booleans, strings or non-finite entries.

    References
    ----------
    Seed 001, eq. 10 (Theorem 4.3) and Corollary B.26.
    """
    C_s, C_x = _consts(C_s=C_s, C_x=C_x)
    ss, pk, pv, pa = (_arr(x, name) for x, name in ((s_sig, "s_sig"), (p_key, "p_key"), (p_val, "p_val"),
                                                     (p_align, "p_align")))
    F_, m_, d_ = _positive_arr(F, "F"), _positive_arr(m, "m"), _positive_arr(d, "d")
    if np.any(F_ < 2):
        raise ValueError("F must be >= 2")
    return _out(C_s * ss - C_x * pk * pv * pa * np.sqrt(F_ * np.log(F_) / (m_ * d_)))


def noisy_margin_bound(gamma_clean: ArrayLike, eps: ArrayLike, F: ArrayLike, d: ArrayLike, *,
                       C_n: float = 1.0, C_L: float = 1.0,
                       delta: float = 0.5) -> float | np.ndarray:
    """Noisy-query margin curve ``gamma_min(k) - C_n eps sqrt(F L / d)`` (eq. 74).

    ``C_n`` stands for ``C_2 L_bil``, the absolute constant times the query-Lipschitz constant of
    the kernel (eq. 69; estimate ``L_bil`` with :func:`query_lipschitz`).

    Parameters
    ----------
    gamma_clean : array-like
        Clean minimum margin ``gamma_min(k)``.
    eps : array-like
        Noise radius ``||k~_i - k_i|| <= eps`` (eq. 68), ``>= 0``.
    F, d : array-like
        Facts and embedding width.
    C_n : float, default 1.0
    C_L, delta : float
        See :func:`log_term`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Negative ``eps``, non-positive sizes, invalid ``C_L`` or ``delta``, or a constant that is
        not a finite real number (a bool, a string, NaN or inf); array arguments holding booleans,
        strings or non-finite entries.

    References
    ----------
    Seed 001, App. B.10.1, Theorem B.62 and Corollary B.63 (eq. 74); App. A.4.2.
    """
    (C_n,) = _consts(C_n=C_n)
    g0, e = _arr(gamma_clean, "gamma_clean"), _arr(eps, "eps")
    if np.any(e < 0):
        raise ValueError("eps must be >= 0")
    d_ = _positive_arr(d, "d")
    L = np.asarray(log_term(F, C_L, delta))
    return _out(g0 - C_n * e * np.sqrt(_arr(F, "F") * L / d_))
