"""Closed-form pair sums of the margin analysis, shared by the cross-talk split and the statistics.

Every pairwise quantity of seed 001, App. B.5-B.6, indexed ``[i, j]``: the excluded terms
``a_ij = <v_i - v_j, c_i>`` and ``b_ij = <v_i - v_j, c_j>``, the value-difference energies
``E_v(i, j)`` and ``E~_v(i, j)`` (Definition B.13, eq. 32), the sums ``<1, Y^{(ij)}>``
(Definition B.12), the kernel-column energies ``E_K(i)`` and ``E~_K(i, j)`` (Definition B.10,
eq. 32) and the cross-talk ``sum_{t != i} K_ti <v_i - v_j, c_t>`` with its truncation (eqs. 25,
30). ``_pair_terms`` expands the sums over ``t`` into matrix products of ``P[a, t] = <v_a, c_t>``
and the Gram matrix (``O(F^2 (F + d))`` time, ``O(F^2)`` memory) and sets an energy at rounding
level (below :data:`ROUNDING_FACTOR` times its rounding error) to exactly 0. Private: used by
:func:`~assocmem.mlps.margins.kernel_margins.signal_crosstalk` and the statistics of
:mod:`~assocmem.mlps.margins.geometry` (chapters 10 and 12).
"""

from __future__ import annotations

import torch

#: Multiple of float64 machine epsilon, times the magnitudes that enter a closed-form pair
#: energy, below which that energy is rounding noise and is treated as an exact zero
#: (see :func:`geometry_statistics`).
ROUNDING_FACTOR = 8.0


def _pair_terms(g: torch.Tensor, v: torch.Tensor, c: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every pairwise quantity of App. B.5-B.6 in closed form, indexed ``[i, j]``.

    With ``P[a, t] = <v_a, c_t>`` the value-difference inner products are
    ``Y^{(ij)}_t = <v_i - v_j, c_t> = P[i, t] - P[j, t]``; sums over ``t`` expand into matrix
    products, and the excluded terms ``t = i`` and ``t = j`` are ``a_ij = P[i, i] - P[j, i]`` and
    ``b_ij = P[i, j] - P[j, j]``. Energies obtained by subtraction carry a rounding error of order
    ``eps * F * (n_i + n_j)`` (``n_a = sum_t P[a, t]^2``); below ``ROUNDING_FACTOR`` times that
    they are set to exactly 0. Tested against direct loops in tests/mlps/margins/test_geometry.py.
    """
    F = g.shape[0]
    eps = torch.finfo(torch.float64).eps
    P = v @ c.T  # (F, F): P[a, t] = <v_a, c_t>
    n2 = (P * P).sum(1)  # (F,)  sum_t P[a, t]^2
    r1 = P.sum(1)  # (F,)  sum_t P[a, t]
    dP = P.diagonal()  # (F,)  P[a, a]
    a = dP[:, None] - P.T  # (F, F) <v_i - v_j, c_i>
    b = P - dP[None, :]  # (F, F) <v_i - v_j, c_j>
    full2 = torch.cdist(P, P, p=2.0, compute_mode="donot_use_mm_for_euclid_dist") ** 2
    full1 = r1[:, None] - r1[None, :]  # sum_t <v_i - v_j, c_t>
    v_floor = ROUNDING_FACTOR * F * eps * (n2[:, None] + n2[None, :])
    e_v_ij = full2 - a * a  # sum_{t != i} <v_i - v_j, c_t>^2          (Def. B.13, B.15)
    e_v_tilde = e_v_ij - b * b  # sum_{t not in {i, j}} (...)^2         (eq. 32)
    e_v_ij = torch.where(e_v_ij <= v_floor, torch.zeros_like(e_v_ij), e_v_ij)
    e_v_tilde = torch.where(e_v_tilde <= v_floor, torch.zeros_like(e_v_tilde), e_v_tilde)
    if F == 2:
        e_v_tilde = torch.zeros_like(e_v_tilde)  # empty sum
    sum_y = full1 - a - b  # <1, Y^{(ij)}>                              (Def. B.12)
    # kernel side: column i of the Gram is the query of item i
    off = g.masked_fill(torch.eye(F, dtype=torch.bool, device=g.device), 0.0)
    e_k_i = (off * off).sum(0)  # (F,) sum_{t != i} K_ti^2, no subtraction   (Def. B.10)
    e_k_tilde = e_k_i[:, None] - g.T * g.T  # sum_{t not in {i, j}} K_ti^2   (eq. 32)
    k_floor = ROUNDING_FACTOR * eps * e_k_i[:, None]
    e_k_tilde = torch.where(e_k_tilde <= k_floor, torch.zeros_like(e_k_tilde), e_k_tilde)
    if F == 2:
        e_k_tilde = torch.zeros_like(e_k_tilde)
    Q = P @ g  # (F, F): Q[a, i] = sum_t P[a, t] K_ti
    dg = g.diagonal()
    z = Q.diagonal()[:, None] - Q.T - dg[:, None] * a  # sum_{t != i} K_ti <v_i - v_j, c_t>
    z_tilde = z - g.T * b  # sum_{t not in {i,j}} K_ti <v_i - v_j, c_t>  (eq. 30)
    return {
        "P": P,
        "a": a,
        "b": b,
        "e_v_ij": e_v_ij,
        "e_v_tilde": e_v_tilde,
        "sum_y": sum_y,
        "e_k_i": e_k_i,
        "e_k_tilde": e_k_tilde,
        "z": z,
        "z_tilde": z_tilde,
    }
