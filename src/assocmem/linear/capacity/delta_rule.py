"""The least-squares memory and the delta rule, batched: one sweep as an affine map, and its limit.

The delta rule writes ``S <- S + beta (v_i - S k_i) k_i^T`` for each pair in turn (Widrow & Hoff
1960; Schlag et al. 2021). A sweep over the ``n`` pairs is cyclic relaxed Kaczmarz (Kaczmarz 1937)
on the system ``S K = V``, whose minimum-norm least-squares solution is ``S* = V K^+`` (seed §6;
Kohonen & Ruohonen 1973). For a batch of independent pair sets at once, this module computes
``S*`` (:func:`least_squares_state`), one sweep as the affine map ``S -> S M + C``
(:func:`delta_pass_map`), and where infinitely many sweeps with a fixed ``beta`` end up
(:func:`delta_limit`): ``S*`` for independent keys, but for ``n > d_k`` a point at distance
``O(beta)`` from ``S*``, since the system is then inconsistent (Censor, Eggermont & Gordon 1983).
The batched sweep mirrors :class:`assocmem.linear.memory.DeltaRuleMemory` (tests hold them equal).
Chapter 03 ("How much can a matrix remember?") uses it, as do the Monte Carlo read errors
(:mod:`~assocmem.linear.capacity.read_error`) and the convergence experiments
(:mod:`~assocmem.linear.capacity.delta_convergence`).

References
----------
Seed "How much can a matrix remember?", §6-§7.
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
Widrow, B., & Hoff, M. E. (1960). Adaptive switching circuits. IRE WESCON Convention Record.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Kaczmarz, S. (1937). Angenaherte Auflosung von Systemen linearer Gleichungen. Bull. Int. Acad.
Polon. Sci. Lett. A, 35, 355-357.
Censor, Y., Eggermont, P. P. B., & Gordon, D. (1983). Strong underrelaxation in Kaczmarz's method
for inconsistent systems. Numerische Mathematik, 41, 83-92.
"""

from __future__ import annotations

import torch

from assocmem.linear._args import optional_tolerance
from assocmem.linear.capacity._common import _check_batch, _check_beta

__all__ = [
    "least_squares_state",
    "delta_pass_map",
    "delta_limit",
]


def _delta_sweep_(S: torch.Tensor, keys: torch.Tensor, targets: torch.Tensor, beta: float) -> torch.Tensor:
    """One delta-rule sweep over the pairs in order, updating ``S`` in place; returns ``S``.

    ``S`` is ``(B, r, d_k)``, ``keys`` ``(B, n, d_k)``, ``targets`` ``(B, n, r)``. Same arithmetic as
    :meth:`assocmem.linear.memory.DeltaRuleMemory.write`: ``S += beta (t_i - S k_i) k_i^T`` for each ``i``
    (the loop is over ``n``, the batch is over trials).
    """
    for i in range(keys.shape[1]):
        k_i = keys[:, i, :]  # (B, d_k)
        error = targets[:, i, :] - torch.bmm(S, k_i.unsqueeze(-1)).squeeze(-1)  # t_i - S k_i, (B, r)
        S.add_(error.unsqueeze(-1) * k_i.unsqueeze(-2), alpha=beta)  # S += beta error k_i^T
    return S


def least_squares_state(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The least-squares memory ``S* = V K^+`` for a batch of pair sets.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows (the seed's ``K^T`` per trial).
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows (the seed's ``V^T``).

    Returns
    -------
    torch.Tensor, shape ``(B, d_v, d_k)``
        ``S*`` per trial, the minimum-norm minimiser of ``||S K - V||_F^2``, computed as
        ``(keys^+ values)^T`` with :func:`torch.linalg.pinv` (default cut-offs).

    Raises
    ------
    ValueError
        If the shapes do not match (both are named), or ``keys``/``values`` are not finite
        float32/float64 tensors of one dtype on one device (float16 and bfloat16 are refused).

    References
    ----------
    Seed §6 (``S* = V K^+``); Kohonen & Ruohonen (1973).
    """
    _check_batch(keys, values)
    return (torch.linalg.pinv(keys) @ values).transpose(-2, -1)  # ((B, d_k, n) @ (B, n, d_v))^T


def delta_pass_map(keys: torch.Tensor, values: torch.Tensor, beta: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """One sweep of the delta rule as an affine map ``S -> S M + C``.

    A delta step ``S <- S + beta (v_i - S k_i) k_i^T = S (I - beta k_i k_i^T) + beta v_i k_i^T`` is
    affine in ``S``, so a sweep over the ``n`` pairs in order is too, with

    ``M = (I - beta k_1 k_1^T) (I - beta k_2 k_2^T) ... (I - beta k_n k_n^T)`` and ``C`` the state one
    sweep writes into an empty memory. ``P`` sweeps from ``S = 0`` give ``C (I + M + ... + M^{P-1})``.
    Both are computed in one sweep of the delta rule on the stacked state ``[S; I]`` with targets
    ``[v_i; 0]`` (the rows of ``M`` are what a sweep does to the identity when nothing is written).

    Parameters
    ----------
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows, one set per trial (unit keys, as in the seed).
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows.
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]``.

    Returns
    -------
    M : torch.Tensor, shape ``(B, d_k, d_k)``
        Linear part of the sweep (acts on the right of ``S``).
    C : torch.Tensor, shape ``(B, d_v, d_k)``
        The state after one sweep from ``S = 0``.

    Raises
    ------
    ValueError
        Mismatched shapes, keys or values that are not finite float32/float64 tensors of one
        dtype on one device, or ``beta`` not a real number in ``(0, 1]`` (a boolean or a string
        is refused).

    References
    ----------
    Widrow & Hoff (1960); Schlag et al. (2021) (the delta rule). Kaczmarz (1937) (cyclic
    projections, the ``beta = 1`` case).
    """
    _check_batch(keys, values)
    beta = _check_beta(beta)
    B, n, d_k = keys.shape
    d_v = values.shape[-1]
    eye = torch.eye(d_k, dtype=keys.dtype, device=keys.device).expand(B, d_k, d_k)
    state = torch.cat([keys.new_zeros(B, d_v, d_k), eye], dim=1)  # [S; I], (B, d_v + d_k, d_k)
    targets = torch.cat([values, keys.new_zeros(B, n, d_k)], dim=-1)  # [v_i; 0], (B, n, d_v + d_k)
    _delta_sweep_(state, keys, targets, beta)
    return state[:, d_v:, :], state[:, :d_v, :]  # M (B, d_k, d_k), C (B, d_v, d_k)


def delta_limit(keys: torch.Tensor, values: torch.Tensor, beta: float = 1.0, rtol: float | None = None) -> torch.Tensor:
    """End-of-sweep limit of the delta rule repeated forever from ``S = 0`` with a fixed ``beta``.

    The iterates ``S_P`` (state after ``P`` sweeps) converge to the fixed point of the sweep map,
    ``S_inf = S_inf M + C`` (:func:`delta_pass_map`). Starting from zero, every row of ``S`` stays in
    the span of the keys, where ``M`` is a strict contraction for ``beta`` in ``(0, 1]``; with ``U``
    an orthonormal basis of that span the fixed point is
    ``S_inf = C U (I - U^T M U)^{-1} U^T``. Then:

    * linearly independent keys (``n <= d_k``): the system ``S K = V`` is consistent and
      ``S_inf = S*`` for every ``beta``;
    * ``n > d_k``: the system is inconsistent; ``S_inf`` depends on ``beta`` and on the order of
      the pairs, and ``S_inf = S* + O(beta)`` (Censor, Eggermont & Gordon 1983). Within a sweep the
      state cycles through ``n`` different matrices (a limit cycle); ``S_inf`` is the one reached
      after the last pair.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(B, n, d_k)``
        Keys as rows.
    values : torch.Tensor, shape ``(B, n, d_v)``
        Values as rows.
    beta : float, default 1.0
        Delta-rule step in ``(0, 1]``.
    rtol : float or None, default None
        Singular values of the keys below ``rtol * sigma_max`` count as zero when finding their
        span; ``None`` means ``eps(dtype) * max(n, d_k)``.

    Returns
    -------
    torch.Tensor, shape ``(B, d_v, d_k)``
        ``S_inf`` per trial.

    Raises
    ------
    ValueError
        Mismatched shapes, keys or values that are not finite float32/float64 tensors of one
        dtype on one device, ``beta`` not a real number in ``(0, 1]`` (a boolean or a string
        is refused), or ``rtol`` not a finite number ``>= 0``.

    References
    ----------
    Kaczmarz (1937); Censor, Eggermont & Gordon (1983), Strong underrelaxation in Kaczmarz's method
    for inconsistent systems; Schlag et al. (2021) (the delta rule in linear attention).
    """
    rtol = optional_tolerance(rtol, "rtol")
    M, C = delta_pass_map(keys, values, beta)  # (B, d_k, d_k), (B, d_v, d_k)
    B, n, d_k = keys.shape
    U, sv, _ = torch.linalg.svd(keys.transpose(-2, -1), full_matrices=False)  # U (B, d_k, r), sv (B, r)
    cut = (torch.finfo(keys.dtype).eps * max(n, d_k)) if rtol is None else float(rtol)
    U = U * (sv > cut * sv[:, :1]).unsqueeze(-2)  # drop null directions: those columns become 0
    r = U.shape[-1]
    eye = torch.eye(r, dtype=keys.dtype, device=keys.device)
    A = eye - U.transpose(-2, -1) @ M @ U  # I - U^T M U, (B, r, r); identity on dropped columns
    X = torch.linalg.solve(A, C @ U, left=False)  # X A = C U, (B, d_v, r)
    return X @ U.transpose(-2, -1)  # (B, d_v, d_k)
