"""Softmax attention as the posterior of a von Mises-Fisher mixture on the sphere.

With unit keys, ``softmax(beta k_mu^T q)`` is the posterior responsibility of component ``mu``
in an equal-weight mixture of von Mises-Fisher densities ``C_n(beta) exp(beta k_mu^T x)`` on
``S^{n-1}``; with keys of unequal norms the concentrations differ and the mixture weights must
cancel their normalisers, equal only when all key norms are (seed 002, "Connections";
Bricken & Pehlevan 2021, §3; Query-Key Normalisation, Henry et al. 2020). This module gives the
normaliser in a form that does not overflow (:func:`vmf_log_normalizer`, through the scaled
Bessel function), the density (:func:`vmf_log_density`), the responsibilities of a mixture
(:func:`vmf_responsibilities`, explicitly or through ``scipy.stats.vonmises_fisher``) and the
mixture that reproduces softmax with unnormalised keys (:func:`attention_as_vmf_mixture`). Used
by chapter 35.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import special, stats

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.sdm._common import _log_bessel_ive, _real_array
from assocmem.sdm.kernels._common import _unit_rows

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "vmf_log_normalizer",
    "vmf_log_density",
    "vmf_responsibilities",
    "attention_as_vmf_mixture",
]


def _check_unit(x: np.ndarray, name: str) -> None:
    if np.any(np.abs(np.linalg.norm(x, axis=-1) - 1.0) > 1e-12):
        raise ValueError(f"{name} must be unit vectors (|norm - 1| <= 1e-12)")


def vmf_log_normalizer(n: int, kappa: ArrayLike) -> np.ndarray:
    """``log C_n(kappa)``, the normaliser of the von Mises-Fisher density on ``S^{n-1}``.

    ``f(x; mu, kappa) = C_n(kappa) exp(kappa mu^T x)`` with
    ``C_n(kappa) = kappa^{n/2 - 1} / ((2 pi)^{n/2} I_{n/2 - 1}(kappa))`` (``I_v`` the modified
    Bessel function of the first kind), evaluated with the scaled Bessel function
    ``ive = I_v e^{-kappa}`` so that large ``kappa`` does not overflow. At ``kappa = 0`` it is the
    uniform density ``Gamma(n/2) / (2 pi^{n/2})``.

    Parameters
    ----------
    n : int
        Ambient dimension, ``n >= 2``.
    kappa : float or array_like
        Concentrations, ``>= 0``.

    Returns
    -------
    numpy.ndarray (0-d for a scalar), float64

    Raises
    ------
    ValueError
        If ``n < 2`` or a ``kappa`` is negative, not finite, a boolean or a string.

    References
    ----------
    Mardia & Jupp (2000), Directional Statistics, §9.3; seed 002, "Connections".
    """
    n = _as_int(n, "n")
    if n < 2:
        raise ValueError(f"the vMF density needs n >= 2, got {n}")
    k = _real_array(kappa, "kappa")  # refuses booleans, strings, NaN and infinities
    if np.any(k < 0):
        raise ValueError("kappa must be finite and >= 0")
    v = n / 2 - 1
    safe = np.where(k > 0, k, 1.0)
    # log ive without underflow: at n = 1000, kappa = 10 scipy's ive is 0 and the log -inf
    out = v * np.log(safe) - (n / 2) * math.log(2 * math.pi) - (_log_bessel_ive(v, safe) + safe)
    uniform = special.gammaln(n / 2) - math.log(2.0) - (n / 2) * math.log(math.pi)
    return np.where(k > 0, out, uniform)


def vmf_log_density(x: ArrayLike, mu: ArrayLike, kappa: float) -> np.ndarray:
    """Log von Mises-Fisher density ``log C_n(kappa) + kappa mu^T x`` on ``S^{n-1}``.

    Parameters
    ----------
    x : array_like, shape ``(..., n)``
        Unit vectors.
    mu : array_like, shape ``(n,)``
        Unit mean direction.
    kappa : float
        Concentration, ``>= 0``.

    Returns
    -------
    numpy.ndarray, shape ``(...)``, float64

    Raises
    ------
    ValueError
        If shapes disagree, ``n < 2``, ``x`` or ``mu`` is not finite or not of unit norm
        (``|norm - 1| > 1e-12``: the density lives on the sphere), or ``kappa`` is not a finite
        real number ``>= 0``.

    References
    ----------
    Mardia & Jupp (2000), §9.3.
    """
    x = _real_array(x, "x")
    mu = _real_array(mu, "mu")
    if mu.ndim != 1 or x.ndim < 1 or x.shape[-1] != mu.shape[0]:
        raise ValueError(f"x (..., n) and mu (n,) must share n, got {x.shape} and {mu.shape}")
    _check_unit(x, "x")
    _check_unit(mu, "mu")
    k = as_real(kappa, "kappa")
    return vmf_log_normalizer(mu.shape[0], k) + k * (x @ mu)


def vmf_responsibilities(query: ArrayLike, means: ArrayLike, kappa: ArrayLike,
                         log_weights: ArrayLike | None = None,
                         method: str = "explicit") -> np.ndarray:
    """Posterior responsibilities ``P(component mu | x)`` of a von Mises-Fisher mixture.

    ``r_mu(x) = pi_mu f(x; mu_mu, kappa_mu) / sum_nu pi_nu f(x; mu_nu, kappa_nu)``. With equal
    weights and a common ``kappa`` the normalisers cancel and ``r(x) = softmax(kappa M x)``: softmax
    attention with unit keys ``M`` and inverse temperature ``beta = kappa`` (seed 002,
    "Connections").

    Parameters
    ----------
    query : array_like, shape ``(..., n)``
        Unit query vectors.
    means : array_like, shape ``(m, n)``
        Unit mean directions (the keys), ``m >= 1``.
    kappa : float or array_like of shape ``(m,)``
        Concentration(s), ``>= 0``.
    log_weights : array_like of shape ``(m,)``, optional
        Log mixture weights (need not be normalised). Default: equal weights.
    method : {"explicit", "scipy"}, default "explicit"
        ``"explicit"``: :func:`vmf_log_density` with its normaliser. ``"scipy"``:
        ``scipy.stats.vonmises_fisher(mu, kappa).logpdf`` (scipy >= 1.11), one component at a time.

    Returns
    -------
    numpy.ndarray, shape ``(..., m)``, float64
        Nonnegative, summing to one over ``m``.

    Raises
    ------
    ValueError
        On shape mismatch, non-unit or non-finite inputs, invalid ``kappa`` (negative, not
        finite, a boolean or a string, or of a shape other than ``()`` or ``(m,)``), non-finite
        ``log_weights`` or an unknown ``method``.

    References
    ----------
    Seed 002, "Connections" (softmax as the posterior of an equal-weight vMF mixture);
    Bricken & Pehlevan (2021), Eq. 6.
    """
    means = _unit_rows(means, "means")
    m, n = means.shape
    q = _real_array(query, "query")  # finite: a NaN query would pass the unit-norm test
    if q.ndim < 1 or q.shape[-1] != n:
        raise ValueError(f"query must have last axis n = {n}, got shape {q.shape}")
    _check_unit(q, "query")
    k = _real_array(kappa, "kappa")
    if k.ndim > 1 or (k.ndim == 1 and k.shape != (m,)):
        raise ValueError(f"kappa must be a number or have shape ({m},), got shape {k.shape}")
    if np.any(k < 0):
        raise ValueError("kappa must be finite and >= 0")
    kap = np.broadcast_to(k, (m,))
    lw = np.zeros(m) if log_weights is None else _real_array(log_weights, "log_weights")
    if lw.shape != (m,):
        raise ValueError(f"log_weights must have shape ({m},), got {lw.shape}")
    if method == "explicit":
        logf = np.stack([vmf_log_density(q, means[i], kap[i]) for i in range(m)], axis=-1)
    elif method == "scipy":
        if not hasattr(stats, "vonmises_fisher"):
            raise ValueError("method='scipy' needs scipy >= 1.11 (scipy.stats.vonmises_fisher)")
        flat = q.reshape(-1, n)
        logf = np.stack([stats.vonmises_fisher(means[i], kap[i]).logpdf(flat) for i in range(m)], axis=-1)
        logf = logf.reshape(*q.shape[:-1], m)
    else:
        raise ValueError(f"method must be 'explicit' or 'scipy', got {method!r}")
    a = logf + lw
    return np.exp(a - special.logsumexp(a, axis=-1, keepdims=True))


def attention_as_vmf_mixture(keys: ArrayLike, beta: float) -> tuple[np.ndarray, np.ndarray,
                             np.ndarray]:
    """The vMF mixture whose posterior is ``softmax(beta K^T q)`` for unit ``q`` and any keys.

    ``exp(beta k^T q) = exp(kappa mu^T q)`` with ``mu = k / |k|`` and ``kappa = beta |k|``, and
    ``exp(kappa mu^T q) = f(q; mu, kappa) / C_n(kappa)``. So softmax attention over unnormalised
    keys is the posterior of a vMF mixture with concentrations ``beta |k_mu|`` *and* mixture
    weights ``pi_mu`` proportional to ``1 / C_n(beta |k_mu|)``: the weights are equal only when
    all key norms are equal, as with Query-Key Normalisation.

    Parameters
    ----------
    keys : array_like, shape ``(m, n)``
        Nonzero keys.
    beta : float
        Inverse temperature, ``> 0``.

    Returns
    -------
    directions : numpy.ndarray, shape ``(m, n)``
        ``k_mu / |k_mu|``.
    kappa : numpy.ndarray, shape ``(m,)``
        ``beta |k_mu|``.
    log_weights : numpy.ndarray, shape ``(m,)``
        ``-log C_n(kappa_mu)`` (unnormalised).

    Raises
    ------
    ValueError
        If a key is zero or not finite, ``keys`` is not ``(m, n)`` with ``m >= 1``,
        ``n >= 2``, ``beta`` is not a finite positive real number (booleans and strings are
        refused), or ``beta |k|`` overflows.

    References
    ----------
    Seed 002, "Connections"; Henry et al. (2020) (QK-norm); Bricken & Pehlevan (2021), §3.
    """
    k = _real_array(keys, "keys")  # no booleans, strings, NaN or infinities
    if k.ndim != 2 or k.shape[0] < 1 or k.shape[1] < 2:
        raise ValueError(f"keys must have shape (m, n) with m >= 1, n >= 2, got {k.shape}")
    b = as_real(beta, "beta")
    if not b > 0:
        raise ValueError(f"beta must be a finite positive number, got {beta!r}")
    norms = np.linalg.norm(k, axis=1)
    with np.errstate(over="ignore"):
        kappa_ok = np.all(np.isfinite(b * norms))
    if not kappa_ok:
        raise ValueError(f"beta * |k| overflows float64 (beta = {b!r}); the concentrations would be "
                         "infinite")
    if np.any(norms == 0):
        raise ValueError("keys must be nonzero")
    kappa = b * norms
    return k / norms[:, None], kappa, -vmf_log_normalizer(k.shape[1], kappa)
