"""Kanerva's normal approximation of the circle intersection fraction ``I(dv, d, n) / 2^n``.

For a uniformly random address, the distances to two centres ``dv`` apart are sums of ``n`` fair
``+-1/2`` steps about ``n/2`` with correlation ``rho = 1 - 2 dv / n``. Replacing them by the
bivariate normal with the same moments turns the intersection fraction into Kanerva's integral
``Phi_2(c_p, c_p; rho)``, ``c_p = (d - n/2) / sqrt(n/4)``, evaluated in closed form with Owen's
``T`` function or by quadrature (:func:`circle_intersection_continuous`; real ``dv`` and ``d``
allowed, with an optional continuity correction). Source: Kanerva (1988), Ch. 7 and App. B;
Bricken & Pehlevan (2021), App. B.1 and Fig. 10. Chapter 31 sets it against the exact count of
:mod:`assocmem.sdm.geometry.intersection`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import special, stats

from assocmem.sdm._common import _real_array
from assocmem.sdm.geometry._common import _check_n, _check_real_radius

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "circle_intersection_continuous",
]


def circle_intersection_continuous(dv: ArrayLike, d: float, n: int, *,
                                   continuity_correction: bool = False,
                                   method: str = "owens_t") -> float | np.ndarray:
    """Kanerva's normal approximation of the intersection fraction ``I(dv, d, n) / 2^n``.

    For a uniformly random address ``x``, the distances ``X = d(x, xi)`` and ``Y = d(x, p)``
    are ``X = U + V`` and ``Y = U + dv - V`` with ``U ~ Bin(n - dv, 1/2)`` (the positions where
    the centres agree) and ``V ~ Bin(dv, 1/2)`` independent. Each is a sum of ``n`` fair
    ``+-1/2`` steps about ``n/2``: mean ``n/2``, variance ``n/4``, covariance
    ``(n - 2 dv)/4``. Replacing ``(X, Y)`` by the bivariate normal with these moments::

        I / 2^n ~= P(Z1 <= c_p, Z2 <= c_p) = Phi_2(c_p, c_p; rho),
        c_p = (d - n/2) / sqrt(n/4),  rho = 1 - 2 dv / n,
                = int_{-inf}^{c_p} phi(z) Phi((c_p - rho z) / sqrt(1 - rho^2)) dz,

    which is Kanerva's integral. For equal limits it has the closed form
    ``Phi(c_p) - 2 T(c_p, sqrt((1 - rho)/(1 + rho)))`` with Owen's ``T`` function; at
    ``rho = -1`` it is ``max(0, 2 Phi(c_p) - 1)``.

    Parameters
    ----------
    dv : float or array_like
        Distance(s) between the centres, in ``[0, n]`` (real values allowed: this is a continuous
        approximation).
    d : float
        Radius in ``[0, n]`` (real allowed).
    n : int
        Dimension, ``n >= 1``.
    continuity_correction : bool, default False
        Use ``d + 1/2`` in ``c_p`` (not in Kanerva's formula; usually closer to the exact count).
    method : {"owens_t", "quad"}
        ``"owens_t"`` (default, vectorised, absolute accuracy ~1e-16) or ``"quad"``
        (``scipy.integrate.quad`` of the 1-D integral per value, relative accuracy also in the
        far tail).

    Returns
    -------
    float or numpy.ndarray
        The approximate fraction, a float for scalar ``dv``, else an array shaped like ``dv``.
        Multiply by ``r`` for the expected number of neurons.

    Raises
    ------
    ValueError
        If ``n < 1``, ``dv`` or ``d`` is outside ``[0, n]``, not finite, a boolean or a string,
        or ``method`` is unknown.

    References
    ----------
    Kanerva (1988), Ch. 7 and App. B (the normal approximation with
    ``c_p = (d - n/2)/sqrt(n/4)``); Bricken & Pehlevan (2021), App. B.1 and Fig. 10.
    """
    n = _check_n(n)
    dr = _check_real_radius(d, n)
    dv_arr = _real_array(dv, "dv")
    if dv_arr.size and (dv_arr.min() < 0 or dv_arr.max() > n):
        raise ValueError(f"dv must lie in [0, n] = [0, {n}], got {dv!r}")
    scalar = dv_arr.ndim == 0
    h = ((dr + (0.5 if continuity_correction else 0.0)) - n / 2) / math.sqrt(n / 4)
    rho = 1.0 - 2.0 * np.atleast_1d(dv_arr) / n
    if method == "owens_t":
        out = np.empty_like(rho)
        anti = rho <= -1.0
        out[anti] = max(0.0, 2.0 * special.ndtr(h) - 1.0)
        r = rho[~anti]
        out[~anti] = special.ndtr(h) - 2.0 * special.owens_t(h, np.sqrt((1.0 - r) / (1.0 + r)))
        out = np.clip(out, 0.0, 1.0)
    elif method == "quad":
        from scipy import integrate

        out = np.empty_like(rho)
        for i, r in enumerate(rho):
            if r >= 1.0:
                out[i] = special.ndtr(h)
            elif r <= -1.0:
                out[i] = max(0.0, 2.0 * special.ndtr(h) - 1.0)
            else:
                s = math.sqrt(1.0 - r * r)
                f = lambda z: stats.norm.pdf(z) * special.ndtr((h - r * z) / s)  # noqa: E731
                out[i] = integrate.quad(f, -np.inf, h, epsabs=0.0, epsrel=1e-12, limit=200)[0]
    else:
        raise ValueError(f"method must be 'owens_t' or 'quad', got {method!r}")
    return float(out[0]) if scalar else out.reshape(dv_arr.shape)
