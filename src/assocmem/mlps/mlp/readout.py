"""The Hebbian readout of Algorithm 1, raw or whitened, and the blocked Cholesky that solves it.

From the feature matrix ``Phi`` ``(F, m)`` and the targets ``C_f`` ``(F, d_c)``,
:func:`hebbian_readout` returns the readout ``B`` ``(d_c, m)``: the Hebbian ``B0 = C_f^T Phi / F``
(Algorithm 1, line 5), its diagonal whitening (lines 9-11), or the full ridge-whitened readout
``B0 (Sigma + ridge I)^{-1}`` with ``Sigma = Phi^T Phi / F`` (eqs. 12-13, primal, ``m <= F``) or
``C_f^T (Phi Phi^T + ridge I)^{-1} Phi`` (eq. 14, dual, ``m > F``). The full readouts are solved by
Cholesky of the lower triangle of a Gram matrix; on the CPU the Gram matrix is formed in row
panels and large factorisations are blocked (the private ``_gram_lower`` and
``_cholesky_lower``), with one GEMM / one LAPACK call under autograd and on other devices.
:func:`hebbian_readout_reference` is the plain version of the full readout that the fast one is
tested against and benchmarked beside (the library's convention: a fast path's reference is a
function named ``<fast path>_reference`` in the same module): the whole Gram matrix and one
``torch.linalg.solve`` of the normal equations. Source: seed 001, Algorithm 1 (App. B.2.3) and App. B.2.4 (eqs. 12-14). Used through
:func:`~assocmem.mlps.mlp.hebbian.hebbian_mlp` and
:func:`~assocmem.mlps.mlp.data_dependent.data_dependent_mlp`, i.e. by chapters 10-13.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Algorithm 1 (App. B.2.3),
App. B.2.4 (eqs. 12-14).
"""

from __future__ import annotations

import torch

from assocmem.dtypes import cast_checked
from assocmem.mlps._checks import all_finite, check_finite_result, float_tensor
from assocmem.mlps.mlp._common import _nonneg_float, _tracks_grad

__all__ = [
    "WHITENINGS",
    "hebbian_readout",
    "hebbian_readout_reference",
]


#: Readout whitening modes of Algorithm 1.
WHITENINGS = ("none", "diag", "full")

#: Seed 001's names of its constructions (App. A.1.1) that are one whitening mode of Algorithm 1:
#: the mode a caller who writes the construction's name for ``whitening`` means.
_CONSTRUCTION_MODES = {"unwhitened": "none", "whitened": "full"}


def _check_whitening(whitening: str) -> str:
    """``whitening`` checked to be one of :data:`WHITENINGS` (Algorithm 1's modes).

    Raises
    ------
    ValueError
        Any other value; a construction's name (``"whitened"``) is told the mode it is
        (``whitening='full'``), the name the builders' ``method`` takes.
    """
    if whitening in WHITENINGS:
        return whitening
    hint = ""
    if isinstance(whitening, str) and whitening in _CONSTRUCTION_MODES:
        hint = (f" ({whitening!r} names a construction of seed 001, App. A.1.1, the builders' method; its "
                f"readout mode is whitening={_CONSTRUCTION_MODES[whitening]!r})")
    raise ValueError(f"whitening must be one of {WHITENINGS}; got {whitening!r}{hint}")


#: Up to this size :func:`_gram_lower` is one GEMM; above it, row panels of the lower triangle.
_GRAM_ONE_GEMM_MAX = 128
#: Above this size :func:`_cholesky_lower` (on the CPU) is blocked; up to it, one LAPACK call.
_CHOL_LAPACK_MAX = 256
#: Column-panel width of the blocked Cholesky.
_CHOL_BLOCK = 64


def _gram_lower(X: torch.Tensor, shift: float) -> torch.Tensor:
    """``X^T X + shift I`` for ``X`` ``(n, m)``, valid in its lower triangle only (what Cholesky reads).

    Up to ``m = 128`` one GEMM. Above, the rows are cut into panels of ``b = max(128, m // 4)``:
    panel ``[i, e)`` is the GEMM ``X[:, i:e]^T X[:, :e]``, written in place into ``S[i:e, :e]``
    (the strictly lower block row plus the diagonal block), and ``S[i:e, e:]`` is zeroed. That is
    ``(p + 1) / (2 p)`` of the flops of the full product for ``p`` panels (5/8 for ``m = 512``),
    in GEMMs still large enough to run near the machine's GEMM rate.
    """
    m = X.shape[1]
    if m <= _GRAM_ONE_GEMM_MAX:
        S = X.T @ X  # (m, m)
    else:
        S = torch.empty(m, m, dtype=X.dtype, device=X.device)
        XT = X.T  # (m, n) view
        grad = _tracks_grad(X)
        for i, e in _gram_panels(m):
            if grad:  # out= is not differentiable
                S[i:e, :e] = XT[i:e] @ X[:, :e]
            else:
                torch.mm(XT[i:e], X[:, :e], out=S[i:e, :e])  # (b, e)
            S[i:e, e:] = 0.0
    S.diagonal().add_(shift)
    return S


def _gram_panels(m: int) -> list[tuple[int, int]]:
    """Row panels ``[i, e)`` of :func:`_gram_lower` for an ``m x m`` Gram matrix (one for ``m <= 128``).

    Panel ``[i, e)`` costs ``2 n (e - i) e`` flops for ``n`` rows of ``X``.
    """
    b = m if m <= _GRAM_ONE_GEMM_MAX else max(_GRAM_ONE_GEMM_MAX, m // 4)
    return [(i, min(i + b, m)) for i in range(0, m, b)]


def _cholesky_lower(S: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Lower Cholesky factor of a symmetric matrix from its lower triangle: ``(L, info)``.

    ``info`` is ``0`` on success and otherwise the (1-based) order of the first leading minor that
    is not positive definite, as in LAPACK ``potrf`` and :func:`torch.linalg.cholesky_ex`.

    On the CPU, above ``n = 256``, a left-looking blocked factorisation in 64-column panels
    *overwrites* ``S`` (its lower triangle becomes ``L``; the strict upper triangle is zeroed):
    each panel is updated by one GEMM against the finished columns, its diagonal block factored
    by LAPACK, and the rest of the panel solved against that block (TRSM). With one thread on the
    benchmark machine this is 1.5-2x faster than one ``potrf`` call for ``n = 512 .. 2048``. On
    other devices, for small ``n`` and under autograd it is one call of
    :func:`torch.linalg.cholesky_ex` (``S`` untouched).
    """
    n = S.shape[0]
    if S.device.type != "cpu" or n <= _CHOL_LAPACK_MAX or _tracks_grad(S):
        L, info = torch.linalg.cholesky_ex(S)
        return L, int(info)
    L = S
    for j in range(0, n, _CHOL_BLOCK):
        e = min(j + _CHOL_BLOCK, n)
        if j:
            L[j:, j:e].addmm_(L[j:, :j], L[j:e, :j].T, alpha=-1.0)  # panel -= L[j:, :j] L[j:e, :j]^T
        Ljj, info = torch.linalg.cholesky_ex(L[j:e, j:e])  # (b, b)
        if int(info) != 0:
            return L, j + int(info)
        L[j:e, j:e] = Ljj
        if e < n:
            L[e:, j:e] = torch.linalg.solve_triangular(Ljj.mT, L[e:, j:e], upper=True, left=False)
    return L.tril_(), 0


def _cholesky(S: torch.Tensor, ridge: float, what: str) -> torch.Tensor:
    """Cholesky factor of an SPD matrix, with a clear error when it is (numerically) singular.

    May overwrite ``S`` (see :func:`_cholesky_lower`); only its lower triangle is read.
    """
    n, dtype = S.shape[0], S.dtype
    L, info = _cholesky_lower(S)
    if info != 0:
        raise ValueError(
            f"the {what} system is singular or not positive definite (Cholesky failed at pivot "
            f"{info}); use a positive ridge (the paper uses 1e-6)"
            + ("" if ridge == 0 else f" larger than {ridge:g}")
        )
    if ridge == 0:
        piv = L.diagonal() ** 2
        if (piv.min() / piv.max()).item() < n * torch.finfo(dtype).eps:
            raise ValueError(
                f"the {what} system is numerically singular (ridge = 0; pivot ratio "
                f"{(piv.min() / piv.max()).item():.2e}): the features have rank below the system size "
                "(rank Phi <= min(F, m, d(d+1)/2)). Use a positive ridge (the paper uses 1e-6)."
            )
    return L


def hebbian_readout(
    Phi: torch.Tensor,
    targets: torch.Tensor,
    whitening: str = "full",
    ridge: float = 1e-6,
    branch: str = "auto",
) -> torch.Tensor:
    """Readout ``B`` of Algorithm 1 from the feature matrix, raw or whitened.

    With ``Sigma = Phi^T Phi / F`` (the uncentred empirical feature covariance, eq. 12):

    * ``none``: ``B0 = C_f^T Phi / F`` (line 5);
    * ``diag``: ``B[:, r] = B0[:, r] / (Sigma_rr + ridge)`` (lines 9-11): each feature is divided
      by its mean square over the stored keys, i.e. ``Sigma`` is replaced by its diagonal;
    * ``full``, primal (``m <= F``): ``B = B0 (Sigma + ridge I_m)^{-1}`` (eq. 13), computed as
      ``B = (C_f^T Phi) L^{-T} L^{-1}`` with ``L L^T = Phi^T Phi + F ridge I`` (Cholesky of the
      lower triangle of the Gram matrix, then two triangular solves);
    * ``full``, dual (``m > F``): ``B = C_f^T (Phi Phi^T + ridge I_F)^{-1} Phi`` (eq. 14), by
      Cholesky of the ``F x F`` Gram matrix.

    The two full branches are the same matrix when the dual's ridge is ``F`` times the primal's
    (push-through identity); with the paper's conventions (ridge ``1e-6`` in both) they differ
    only by that ridge scaling ("equivalent up to scaling", App. B.2.4).

    Parameters
    ----------
    Phi : torch.Tensor, shape ``(F, m)``, ``F >= 1``, float64 recommended
        Finite; float32 or float64 (the computation runs in this dtype), integer and boolean
        tensors are read as float64, float16 / bfloat16 are refused (:mod:`assocmem.dtypes`).
    targets : torch.Tensor, shape ``(F, d_c)``
        ``C_f``: row ``i`` is ``c_f(i)``. Finite; cast to the dtype of ``Phi``.
    whitening : {"none", "diag", "full"}, default "full"
    ridge : float, default 1e-6
        ``lambda >= 0``, a real number (booleans and strings are refused). With ``0`` a singular
        system raises; a positive ridge regularises it (the paper's ``1e-6``).
    branch : {"auto", "primal", "dual"}, default "auto"
        For ``full``: ``auto`` is primal for ``m <= F`` and dual otherwise, as in Algorithm 1.

    Returns
    -------
    torch.Tensor, shape ``(d_c, m)``

    Raises
    ------
    ValueError
        Unknown mode or branch; ``Phi`` or ``targets`` that is not a tensor, not 2-D, float16 /
        bfloat16 or has a NaN or infinite entry; ``F = 0`` (no stored key); mismatched shapes; a
        ridge that is negative, non-finite or not a real number; a singular system (a zero
        feature for ``diag``, a rank-deficient Gram matrix for ``full``) with no ridge; or a
        computation that overflows the dtype of ``Phi`` (features or targets too large).

    References
    ----------
    Seed 001, Algorithm 1; App. B.2.4, eqs. 12-14.
    """
    _check_whitening(whitening)
    if branch not in ("auto", "primal", "dual"):
        raise ValueError(f"branch must be 'auto', 'primal' or 'dual'; got {branch!r}")
    Phi = float_tensor(Phi, "Phi", 2, min_rows=1)
    targets = float_tensor(targets, "targets", 2)
    if Phi.shape[0] != targets.shape[0]:
        raise ValueError(f"need Phi (F, m) and targets (F, d_c); got {tuple(Phi.shape)}, {tuple(targets.shape)}")
    lam = _nonneg_float("ridge", ridge)
    F, m = Phi.shape
    C = cast_checked(targets, Phi.dtype, "targets")
    if whitening == "none":
        return check_finite_result((C.T @ Phi) / F, "the readout C_f^T Phi / F")  # (d_c, m)
    if whitening == "diag":
        s = check_finite_result((Phi * Phi).mean(dim=0) + lam, "diag(Sigma), the mean square of each feature,")
        if (s <= 0).any():
            raise ValueError(
                "diagonal whitening divides by a zero feature variance (a feature vanishes on every "
                "stored key); use a positive ridge"
            )
        return check_finite_result((C.T @ Phi) / F / s, "the diag-whitened readout")  # (d_c, m)
    if branch == "primal" or (branch == "auto" and m <= F):
        S = _gram_lower(Phi, F * lam)  # (m, m)  Phi^T Phi + F lam I, lower triangle
        _check_gram(S, "primal Gram matrix Phi^T Phi")
        L = _cholesky(S, lam, "primal whitening (m x m)")  # (m, m), may reuse S's storage
        R = C.T @ Phi  # (d_c, m)  F B0
        Y = torch.linalg.solve_triangular(L.mT, R, upper=True, left=False)  # (d_c, m)  R L^{-T}
        B = torch.linalg.solve_triangular(L, Y, upper=False, left=False)  # (d_c, m)  R S^{-1}
        return check_finite_result(B, "the whitened readout")
    Kg = _gram_lower(Phi.T, lam)  # (F, F)  Phi Phi^T + lam I
    _check_gram(Kg, "dual Gram matrix Phi Phi^T")
    L = _cholesky(Kg, lam, "dual whitening (F x F)")
    return check_finite_result(torch.cholesky_solve(C, L).T @ Phi, "the whitened readout")  # (d_c, m)


def hebbian_readout_reference(Phi: torch.Tensor, targets: torch.Tensor, ridge: float = 1e-6) -> torch.Tensor:
    """Plain reference for the full ridge-whitened readout of :func:`hebbian_readout`.

    The normal equations solved as written, with the whole Gram matrix and one general
    :func:`torch.linalg.solve` (LU): primal (``m <= F``) ``B^T = (Phi^T Phi + F ridge I)^{-1}
    Phi^T C_f`` (eq. 13 times ``F / F``), dual (``m > F``) ``B^T = Phi^T (Phi Phi^T + ridge
    I)^{-1} C_f`` (eq. 14). No blocking, no Cholesky, no symmetry used: short and obviously
    correct, for tests and for the same-run baseline of ``benchmarks/bench_ratios.py``. It
    agrees with ``hebbian_readout(Phi, targets, "full", ridge)`` up to the conditioning of the
    system times float64 rounding.

    Parameters
    ----------
    Phi : torch.Tensor, shape ``(F, m)``
        Finite features, ``F >= 1`` (the computation runs in their float dtype).
    targets : torch.Tensor, shape ``(F, d_c)``
        ``C_f``, finite.
    ridge : float, default 1e-6
        ``lambda > 0`` (a finite real number; the plain solve has no rank check, so ``0`` is
        refused).

    Returns
    -------
    torch.Tensor, shape ``(d_c, m)``

    Raises
    ------
    ValueError
        ``Phi`` or ``targets`` not a finite 2-D float tensor (float16 / bfloat16 refused),
        ``F = 0``, mismatched row counts, or a ridge that is not a finite real ``> 0``.

    References
    ----------
    Seed 001, App. B.2.4, eqs. 12-14.
    """
    Phi = float_tensor(Phi, "Phi", 2, min_rows=1)
    targets = float_tensor(targets, "targets", 2)
    if Phi.shape[0] != targets.shape[0]:
        raise ValueError(f"need Phi (F, m) and targets (F, d_c); got {tuple(Phi.shape)}, {tuple(targets.shape)}")
    lam = _nonneg_float("ridge", ridge)
    if lam == 0:
        raise ValueError("the reference readout needs a positive ridge (the paper uses 1e-6)")
    C = cast_checked(targets, Phi.dtype, "targets")
    F, m = Phi.shape
    if m <= F:
        S = Phi.T @ Phi + F * lam * torch.eye(m, dtype=Phi.dtype, device=Phi.device)  # (m, m)
        return torch.linalg.solve(S, Phi.T @ C).T  # (d_c, m)
    K = Phi @ Phi.T + lam * torch.eye(F, dtype=Phi.dtype, device=Phi.device)  # (F, F)
    return (Phi.T @ torch.linalg.solve(K, C)).T  # (d_c, m)


def _check_gram(S: torch.Tensor, what: str) -> None:
    """A :class:`ValueError` if the Gram matrix of finite features overflowed its dtype.

    Its diagonal holds the squared norms, and every entry is at most the largest of them
    (Cauchy-Schwarz), so a finite diagonal is a finite lower triangle.
    """
    if not all_finite(S.diagonal()):
        raise ValueError(f"the {what} overflows {S.dtype} (largest finite value "
                         f"{torch.finfo(S.dtype).max:.2g}): the features are too large; rescale them")
