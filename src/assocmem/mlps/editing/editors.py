"""Weight-editing baselines on a linear associative memory: ROME, MEMIT and AlphaEdit.

The three methods that seed 001 (Sec. 5.2, App. A.4.5, Table 1) sets against MLP swapping all
edit one matrix, the fact expert's output projection ``W`` of shape ``(d_out, d_in)``, seen as a
linear associative memory: a *key* ``k`` (the expert's hidden activation at the last prompt token,
``d_in`` wide) is read out as ``W k``. An edit asks the keys ``k_1 .. k_n`` of the altered facts to
read out new *targets* ``v_1 .. v_n`` (in seed 001's setting, the expert's output plus a residual
learned so that the model predicts the new author). Each function here takes ``W``, the edited
keys and their targets and returns the edited matrix; none modifies its input.

Conventions. Keys and targets are passed as **rows**, ``keys`` ``(n, d_in)`` and ``targets``
``(n, d_out)``, as everywhere in the book; the formulas in the docstrings use the papers' column
convention ``K = keys^T`` ``(d_in, n)``, ``V = targets^T`` and the residual ``R = V - W K``
``(d_out, n)``. The preserved-key statistic is the **uncentred** second moment
``C = (1/N) sum_j k_j k_j^T`` over ``N`` preserved keys (:func:`key_covariance`), the averaged
moment MEMIT's regulariser scales by ``lambda``. All solves run in float64 (inputs of another
float dtype are cast; the result is float64).

Singular systems. ROME needs ``C^{-1}``; a covariance of fewer independent preserved keys than
``d_in`` is singular, and ROME then raises unless a ``ridge`` is given, which replaces ``C`` by
``C + ridge I`` (documented, never silent). MEMIT raises when ``lambda C + K K^T`` is singular
(``lambda = 0`` with fewer edited keys than ``d_in``, for instance). AlphaEdit's system
``K K^T P + alpha I`` is always invertible for ``alpha > 0``; its projector is the one that can
vanish, and then AlphaEdit raises (below).

References
----------
K. Meng, D. Bau, A. Andonian, Y. Belinkov, "Locating and Editing Factual Associations in GPT"
(ROME), NeurIPS 2022, Sec. 3.1, eq. (2): ``W_hat = W + Lambda (C^{-1} k_*)^T`` with
``Lambda = (v_* - W k_*) / ((C^{-1} k_*)^T k_*)``.
K. Meng, A. S. Sharma, A. Andonian, Y. Belinkov, D. Bau, "Mass-Editing Memory in a Transformer"
(MEMIT), ICLR 2023, Sec. 4.1, eqs. (9)-(14): ``Delta = R K_1^T (C_0 + K_1 K_1^T)^{-1}`` with
``C_0 = lambda E[k k^T]`` (eq. (14), the preserved-key moment).
J. Fang et al., "AlphaEdit: Null-Space Constrained Knowledge Editing for Language Models",
ICLR 2025, Sec. 3.1-3.2, eqs. (7)-(14): ``P = U_hat U_hat^T`` from the eigenvectors of
``K_0 K_0^T`` with near-zero eigenvalues, ``Delta P = R K_1^T P (K_1 K_1^T P + I)^{-1}``
(eq. (14) without previously edited keys).
Seed 001, Sec. 5.2 and App. A.4.5 (the one-layer adaptation: one relation, no KL term, residuals
from one templated prompt per fact).
"""

from __future__ import annotations

import torch

from assocmem._checks import as_real
from assocmem.mlps._checks import check_finite_result, float_tensor

__all__ = [
    "key_covariance",
    "nullspace_projector",
    "rome_edit",
    "memit_edit",
    "alphaedit_edit",
]

_F64 = torch.float64
#: Relative size, against the largest eigenvalue, below which a symmetric PSD system is treated as
#: singular: a few hundred float64 rounding units (``eps`` is 2.2e-16).
_SINGULAR_RTOL = 1e3 * torch.finfo(_F64).eps


def _matrix(W) -> torch.Tensor:
    W = float_tensor(W, "W", ndim=2)
    if W.shape[0] == 0 or W.shape[1] == 0:
        raise ValueError(f"W must have shape (d_out, d_in) with d_out, d_in >= 1; got {tuple(W.shape)}")
    return W.to(_F64)


def _edits(W: torch.Tensor, keys, targets) -> tuple[torch.Tensor, torch.Tensor]:
    """``keys`` ``(n, d_in)`` and ``targets`` ``(n, d_out)`` checked against ``W``, as float64."""
    d_out, d_in = W.shape
    keys = float_tensor(keys, "keys", ndim=2, min_rows=1)
    targets = float_tensor(targets, "targets", ndim=2, min_rows=1)
    if keys.shape[1] != d_in:
        raise ValueError(f"keys must have shape (n, d_in) with d_in = {d_in} (W's columns); got {tuple(keys.shape)}")
    if targets.shape != (keys.shape[0], d_out):
        raise ValueError(f"targets must have shape (n, d_out) = ({keys.shape[0]}, {d_out}) (one row per key, "
                         f"W's rows); got {tuple(targets.shape)}")
    return keys.to(_F64), targets.to(_F64)


def _covariance(C, d_in: int) -> torch.Tensor:
    """``C`` checked: a finite symmetric ``(d_in, d_in)`` matrix with no negative eigenvalue beyond rounding."""
    C = float_tensor(C, "C", ndim=2).to(_F64)
    if C.shape != (d_in, d_in):
        raise ValueError(f"C must have shape (d_in, d_in) = ({d_in}, {d_in}); got {tuple(C.shape)}")
    scale = float(C.abs().max())
    if float((C - C.T).abs().max()) > 1e-10 * max(scale, 1e-300):
        raise ValueError("C must be symmetric (an uncentred key covariance, see key_covariance)")
    C = (C + C.T) / 2
    if scale > 0 and float(torch.linalg.eigvalsh(C)[0]) < -1e-10 * scale:
        raise ValueError("C must be positive semidefinite (an uncentred key covariance, see key_covariance)")
    return C


def _spd_solve_right(A: torch.Tensor, S: torch.Tensor, what: str) -> torch.Tensor:
    """``A S^{-1}`` for a symmetric PSD ``S``; a clear error when ``S`` is singular to float64 precision."""
    evals = torch.linalg.eigvalsh(S)
    top = float(evals[-1])
    if top <= 0 or float(evals[0]) <= _SINGULAR_RTOL * top:
        cond = "inf" if float(evals[0]) <= 0 else f"{top / float(evals[0]):.2g}"
        raise ValueError(f"{what} is singular to float64 precision (condition number {cond}); {_SINGULAR_HINT[what]}")
    L = torch.linalg.cholesky(S)
    return torch.cholesky_solve(A.T, L).T  # S symmetric: (S^{-1} A^T)^T = A S^{-1}


_SINGULAR_HINT = {
    "C + ridge I": "C has fewer independent preserved keys than d_in; pass ridge > 0",
    "lam C + K K^T": "use lam > 0 with a full-rank preserved-key covariance, or more edited keys",
}


def key_covariance(keys: torch.Tensor) -> torch.Tensor:
    """The uncentred second moment of keys, ``C = (1/N) sum_j k_j k_j^T = K^T K / N``.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(N, d_in)``
        One preserved key per row, ``N >= 1``; real and finite (cast to float64).

    Returns
    -------
    torch.Tensor, shape ``(d_in, d_in)``, float64
        Symmetric positive semidefinite; singular when the keys span fewer than ``d_in``
        directions.

    Raises
    ------
    ValueError
        Not a 2-D real tensor, no rows, non-finite entries, or a moment that overflows float64.

    References
    ----------
    ROME Sec. 3.1 and MEMIT eq. (14) (``C = E[k k^T]``, estimated from a sample of keys);
    AlphaEdit Sec. 3.2 (``K_0 K_0^T``, the same matrix up to the factor ``N``).
    """
    K = float_tensor(keys, "keys", ndim=2, min_rows=1).to(_F64)
    C = K.T @ K / K.shape[0]
    return check_finite_result((C + C.T) / 2, "the key covariance")


def nullspace_projector(C: torch.Tensor, rel_tol: float = 1e-2) -> torch.Tensor:
    """AlphaEdit's projector onto the near-null space of a preserved-key covariance.

    With the eigendecomposition ``C = U diag(s) U^T`` (``s`` descending), the directions kept are
    the eigenvectors whose eigenvalue is at most ``rel_tol * s_max``; ``P = U_hat U_hat^T``.
    The threshold is **relative** to the spectrum, so it does not depend on the keys' scale or on
    whether ``C`` is a sum or a mean; an absolute threshold can select every direction or none.

    Parameters
    ----------
    C : torch.Tensor, shape ``(d_in, d_in)``
        Symmetric positive semidefinite (:func:`key_covariance` of the preserved keys); float64.
    rel_tol : float, default 1e-2
        In ``[0, 1)``. ``0`` keeps only exact zero eigenvalues (at float64 rounding level,
        ``d_in * eps * s_max``).

    Returns
    -------
    torch.Tensor, shape ``(d_in, d_in)``, float64
        Symmetric and idempotent; ``P k = 0`` (to rounding) for every key in the span of the
        eigenvectors above the threshold.

    Raises
    ------
    ValueError
        ``C`` not a finite symmetric PSD ``(d, d)`` matrix, ``C = 0``, ``rel_tol`` outside ``[0, 1)``,
        or **no** eigenvalue below the threshold: the projector would be zero and an edit through
        it would change nothing, which is reported instead of done silently.

    References
    ----------
    AlphaEdit (Fang et al. 2025), Sec. 3.2, eqs. (8)-(10) (SVD of ``K_0 K_0^T``, eigenvectors of
    the zero eigenvalues, ``P = U_hat U_hat^T``); the relative threshold is this book's choice
    (REFERENCE, "Fact editing baselines").
    """
    rel_tol = as_real(rel_tol, "rel_tol", minimum=0.0)
    if rel_tol >= 1:
        raise ValueError(f"rel_tol must be in [0, 1); got {rel_tol!r}")
    C = float_tensor(C, "C", ndim=2)
    if C.shape[0] != C.shape[1] or C.shape[0] == 0:
        raise ValueError(f"C must be a square (d_in, d_in) matrix; got {tuple(C.shape)}")
    C = _covariance(C, C.shape[0])
    s, U = torch.linalg.eigh(C)  # ascending
    top = float(s[-1])
    if top <= 0:
        raise ValueError("C is zero: no preserved keys to protect, so there is no null space to project on")
    floor = max(rel_tol, C.shape[0] * torch.finfo(_F64).eps) * top
    keep = s <= floor
    if not bool(keep.any()):
        raise ValueError(
            f"the AlphaEdit projector is zero: no eigenvalue of C is <= rel_tol * s_max = {floor:.3g} "
            f"(smallest {float(s[0]):.3g}); raise rel_tol, or the preserved keys span all of R^{C.shape[0]}")
    U_hat = U[:, keep]
    return U_hat @ U_hat.T


def rome_edit(W: torch.Tensor, keys: torch.Tensor, targets: torch.Tensor, C: torch.Tensor, *,
              ridge: float = 0.0) -> torch.Tensor:
    """ROME: one rank-one update per edited fact, applied in sequence.

    For each edit ``(k, v)`` in order, with ``W`` the current matrix,
    ``r = v - W k``, ``u = C^{-1} k`` and ``W <- W + r u^T / (u^T k)``. After the update
    ``W k = v`` exactly, and every key ``k'`` with ``k'^T C^{-1} k = 0`` reads out as before (the
    update is the smallest change, in the ``C``-weighted norm, that inserts ``k -> v``). In a
    sequence a later edit can move an earlier edited key's read-out (by the later update's
    ``u^T k_earlier`` component); only the last edit is exact in general.

    Parameters
    ----------
    W : torch.Tensor, shape ``(d_out, d_in)``
        The memory (the fact expert's output projection). Not modified.
    keys : torch.Tensor, shape ``(n, d_in)``
        Edited keys, one per row, in the order they are applied; none may be zero.
    targets : torch.Tensor, shape ``(n, d_out)``
        The read-out each key must have after its edit (``W k + residual``).
    C : torch.Tensor, shape ``(d_in, d_in)``
        Uncentred covariance of the preserved keys (:func:`key_covariance`).
    ridge : float, default 0
        ``>= 0``; ROME uses ``C + ridge I``. Needed when ``C`` is singular.

    Returns
    -------
    torch.Tensor, shape ``(d_out, d_in)``, float64
        The edited matrix.

    Raises
    ------
    ValueError
        Wrong shapes or ranks, non-finite entries, a ``C`` that is not symmetric PSD, a negative
        ridge, ``C + ridge I`` singular to float64 precision (the message says to pass a ridge),
        a zero key (``k^T C^{-1} k = 0``), or an update that overflows float64.

    References
    ----------
    Meng et al. 2022 (ROME), Sec. 3.1, eq. (2) and App. A: ``W_hat = W + Lambda (C^{-1} k_*)^T``,
    ``Lambda = (v_* - W k_*) / ((C^{-1} k_*)^T k_*)``. Seed 001, App. A.4.5: applied at the final
    prompt token, one edit after another, without the KL term.
    """
    W = _matrix(W).clone()
    keys, targets = _edits(W, keys, targets)
    ridge = as_real(ridge, "ridge", minimum=0.0)
    C = _covariance(C, W.shape[1]) + ridge * torch.eye(W.shape[1], dtype=_F64)
    Cinv_K = _spd_solve_right(keys, C, "C + ridge I")  # (n, d_in): row i = (C^{-1} k_i)^T (C symmetric)
    for i in range(keys.shape[0]):
        k, u = keys[i], Cinv_K[i]
        denom = float(u @ k)
        if not denom > 0:
            raise ValueError(f"edited key {i} is zero (k^T C^-1 k = {denom:.3g}); ROME cannot insert it")
        r = targets[i] - W @ k  # (d_out,)
        W += torch.outer(r, u) / denom
    return check_finite_result(W, "the ROME update")


def memit_edit(W: torch.Tensor, keys: torch.Tensor, targets: torch.Tensor, C: torch.Tensor, *,
               lam: float) -> torch.Tensor:
    """MEMIT: one batched least-squares update for all edited facts.

    ``Delta = R K^T (lam C + K K^T)^{-1}`` with ``K = keys^T`` ``(d_in, n)`` and the residual
    ``R = V - W K``; the edited matrix ``W + Delta`` minimises
    ``||(W + Delta) K - V||_F^2 + lam tr(Delta C Delta^T)``, the squared error on the edited facts
    plus ``lam`` times the mean squared change ``(1/N) sum_j ||Delta k_j||^2`` of the ``N``
    preserved keys' read-outs (``C = K_p K_p^T / N``). As ``lam -> 0`` with ``n <= d_in`` independent keys every target is
    hit; with ``n = d_in`` the exact ``lam = 0`` solve is allowed.

    Parameters
    ----------
    W : torch.Tensor, shape ``(d_out, d_in)``
        Not modified.
    keys : torch.Tensor, shape ``(n, d_in)``
    targets : torch.Tensor, shape ``(n, d_out)``
    C : torch.Tensor, shape ``(d_in, d_in)``
        Uncentred covariance of the preserved keys (:func:`key_covariance`), symmetric PSD.
    lam : float
        Keyword-only, ``>= 0``: the weight of the preserved-key term (MEMIT's ``lambda``, the
        "mom2 update weight"; seed 001 reports ``lambda = 150`` best at its scale).

    Returns
    -------
    torch.Tensor, shape ``(d_out, d_in)``, float64

    Raises
    ------
    ValueError
        Wrong shapes, non-finite entries, a ``C`` that is not symmetric PSD, a negative ``lam``, or
        ``lam C + K K^T`` singular to float64 precision.

    References
    ----------
    Meng et al. 2023 (MEMIT), Sec. 4.1, eqs. (9)-(14): ``Delta = R K_1^T (C_0 + K_1 K_1^T)^{-1}``,
    ``C_0 = lambda E[k k^T]`` from preserved keys; one layer here (seed 001, App. A.4.5), so the
    residual is not spread over layers.
    """
    W = _matrix(W)
    keys, targets = _edits(W, keys, targets)
    lam = as_real(lam, "lam", minimum=0.0)
    C = _covariance(C, W.shape[1])
    R = targets.T - W @ keys.T  # (d_out, n)
    S = lam * C + keys.T @ keys  # (d_in, d_in)
    delta = _spd_solve_right(R @ keys, S, "lam C + K K^T")  # R K^T S^{-1}
    return check_finite_result(W + delta, "the MEMIT update")


def alphaedit_edit(W: torch.Tensor, keys: torch.Tensor, targets: torch.Tensor, P: torch.Tensor, *,
                   alpha: float = 1.0) -> torch.Tensor:
    """AlphaEdit: the MEMIT-style update projected onto the preserved keys' null space.

    ``Delta = R K^T P (K K^T P + alpha I)^{-1}`` with ``K = keys^T``, ``R = V - W K`` and ``P`` the
    projector of :func:`nullspace_projector`. It is ``Delta' P`` for the ``Delta'`` minimising
    ``||(W + Delta' P) K - V||_F^2 + alpha ||Delta' P||_F^2``, so every key ``k_p`` with
    ``P k_p = 0`` reads out exactly as before (``(K K^T P + alpha I) k_p = alpha k_p``). For
    edited keys inside the null space (``P K = K``) the residual left is ``R alpha (K^T K +
    alpha I)^{-1}``: the edit is exact only as ``alpha -> 0``.

    Computed as ``Delta = R (K^T P K + alpha I_n)^{-1} K^T P``, equal by the push-through identity
    ``K^T P (K K^T P + alpha I) = (K^T P K + alpha I) K^T P``: an ``n x n`` symmetric positive
    definite solve whose result ends in ``P``, so the preserved read-outs stay unchanged to
    rounding even for small ``alpha`` (the ``d_in x d_in`` form amplifies rounding by
    ``1/alpha`` there).

    Parameters
    ----------
    W : torch.Tensor, shape ``(d_out, d_in)``
        Not modified.
    keys : torch.Tensor, shape ``(n, d_in)``
    targets : torch.Tensor, shape ``(n, d_out)``
    P : torch.Tensor, shape ``(d_in, d_in)``
        Symmetric idempotent projector (:func:`nullspace_projector`), not zero.
    alpha : float, default 1.0
        Keyword-only, ``> 0``: weight of the ``||Delta' P||^2`` term (AlphaEdit's ``I``, i.e.
        ``alpha = 1``); it keeps the system invertible.

    Returns
    -------
    torch.Tensor, shape ``(d_out, d_in)``, float64

    Raises
    ------
    ValueError
        Wrong shapes, non-finite entries, ``alpha <= 0``, a ``P`` that is not a symmetric
        idempotent matrix, or a zero ``P`` (the edit would do nothing).

    References
    ----------
    Fang et al. 2025 (AlphaEdit), Sec. 3.2, eqs. (11)-(14):
    ``Delta_AlphaEdit P = R K_1^T P (K_p K_p^T P + K_1 K_1^T P + I)^{-1}``, here with no earlier
    edits (``K_p`` empty) as in seed 001's single-batch setting (App. A.4.5).
    """
    W = _matrix(W)
    keys, targets = _edits(W, keys, targets)
    alpha = as_real(alpha, "alpha", minimum=0.0, strict_min=True)
    d_in = W.shape[1]
    P = float_tensor(P, "P", ndim=2).to(_F64)
    if P.shape != (d_in, d_in):
        raise ValueError(f"P must have shape (d_in, d_in) = ({d_in}, {d_in}); got {tuple(P.shape)}")
    if float(P.abs().max()) == 0.0:
        raise ValueError("P is zero: the AlphaEdit update would change nothing (see nullspace_projector)")
    if float((P - P.T).abs().max()) > 1e-10 or float((P @ P - P).abs().max()) > 1e-8:
        raise ValueError("P must be a symmetric idempotent projector (see nullspace_projector)")
    R = targets.T - W @ keys.T  # (d_out, n)
    KP = keys @ P  # (n, d_in) = (P K)^T
    G = KP @ keys.T + alpha * torch.eye(keys.shape[0], dtype=_F64)  # (n, n) = K^T P K + alpha I, SPD
    G = (G + G.T) / 2
    delta = torch.cholesky_solve(R.T, torch.linalg.cholesky(G)).T @ KP  # R G^{-1} K^T P
    return check_finite_result(W + delta, "the AlphaEdit update")
