"""The data-dependent bilinear MLP: least-squares refits of the factors (eqs. 17-18), then the whitened readout.

Starting from the Hebbian construction, :func:`data_dependent_mlp` refits the gate factor ``G`` and
then the value factor ``A`` of a :class:`~assocmem.mlps.mlp.architectures.BilinearMLP` by least
squares against the initial Hebbian readout ``W0`` (eqs. 17 and 18), and finishes with the full
ridge-whitened readout of the fitted features. Each refit is linear in the free ``(m, d)`` factor:
:func:`solve_factor` solves it matrix-free by preconditioned conjugate gradients on the normal
equations (a per-unit rank-1 block preconditioner, no ``(m d) x (m d)`` matrix), and
:func:`solve_factor_reference` solves it densely with an explicit Jacobian (a check at small
sizes). :func:`data_dependent_mlp_reference` is the plain construction it is benchmarked beside: the
same two refits by textbook Jacobi-preconditioned CG on whole ``(F, m)`` matrices, then
:func:`~assocmem.mlps.mlp.readout.hebbian_readout_reference` (the library's convention: a fast
path's reference is ``<fast path>_reference`` in the same module). :func:`data_dependent_mlp`
runs with torch's threads capped at the cores other processes leave free
(:func:`assocmem.benchmarking.load_capped_threads`). Source: seed 001, App. B.2.5 (eqs. 17-18), App. A.1.1 ("Data-dependent"), Sec. 4.3. Used by
chapter 10 ("Facts, margins and the counting bound") and chapter 13 ("Facts per parameter", through
:mod:`assocmem.mlps.capacity_sweeps`).

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 4.3,
App. A.1.1, App. B.2.5 (eqs. 17-18).
Hestenes & Stiefel (1952), conjugate gradients; Saad (2003), *Iterative Methods for Sparse Linear
Systems*, ch. 9 (preconditioned CG).
"""

from __future__ import annotations

import math
import time

import torch

from assocmem._checks import positive_int as _positive_int, seed_int as _seed
from assocmem.dtypes import cast_checked
from assocmem._checks import as_bool
from assocmem.benchmarking import load_capped_threads
from assocmem.mlps._checks import check_finite_result, float_tensor
from assocmem.mlps.facts import FactSet
from assocmem.mlps.mlp._common import _F64, _checked_facts, _gaussian, _nonneg_float
from assocmem.mlps.mlp.architectures import BilinearMLP, bilinear_features
from assocmem.mlps.mlp.readout import hebbian_readout, hebbian_readout_reference

__all__ = [
    "solve_factor",
    "solve_factor_reference",
    "data_dependent_mlp",
    "data_dependent_mlp_reference",
]


def solve_factor(
    keys: torch.Tensor,
    fixed: torch.Tensor,
    readout: torch.Tensor,
    targets: torch.Tensor,
    *,
    metric: torch.Tensor | None = None,
    x0: torch.Tensor | None = None,
    tol: float = 1e-3,
    max_iter: int = 200,
    preconditioner: str = "rank1",
    chunk_size: int | None = None,
) -> tuple[torch.Tensor, dict]:
    """Least squares for one factor of a bilinear MLP with the other factor and the readout fixed.

    Solves ``min_X || C - Phi(Y, X) W^T ||_F^2`` over ``X`` in ``R^{m x d}`` (or its score-space
    variant, see ``metric``), where ``Phi(Y, X) = (K Y^T) * (K X^T)``, by preconditioned
    conjugate gradients on the normal equations ``L^*(L(X) M) = L^*(C)`` with

    * ``L(X) = (P * (K X^T)) W^T`` (``P = K Y^T``, ``(F, m)``), the linear map ``X -> F x d_c``,
    * ``L^*(R) = ((R W) * P)^T K``, its adjoint.

    Matrix-free: one application of the normal operator is four thin GEMMs (``8 F m d`` flops for
    ``d_c = d``), fused over row blocks of ``F`` so that the ``(F, m)`` intermediates stay in cache;
    no ``(m d) x (m d)`` matrix is formed.

    Preconditioner. Hidden unit ``r``'s diagonal block of the normal operator is
    ``(w_r^T M w_r) T_r`` with ``T_r = sum_i P_ir^2 k_i k_i^T`` (``d x d``). For keys spread over
    the sphere ``T_r`` is close to ``alpha_r I + beta_r y_r y_r^T / |y_r|^2`` (the fourth moment
    of the sphere puts three times the weight on ``y_r``); ``"rank1"`` (default) matches
    ``alpha_r, beta_r`` to the exact ``tr T_r = sum_i P_ir^2 |k_i|^2`` and
    ``y_r^T T_r y_r / |y_r|^2 = sum_i P_ir^4 / |y_r|^2`` and inverts it by Sherman-Morrison
    (``O(F m)`` set-up, ``O(m d)`` per application). ``"jacobi"`` uses the exact diagonal
    ``(w_r^T M w_r) sum_i P_ir^2 K_ia^2``. On the capacity problems (``d = 64``) "rank1" needs about
    half the iterations of "jacobi"; both keep the operator's symmetry, so CG converges for any
    key geometry.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``, ``F >= 1``
        float32 or float64: the solve runs in this dtype, and the other tensors are cast to it.
        Every tensor argument must be finite (float16 / bfloat16 are refused).
    fixed : torch.Tensor, shape ``(m, d)``
        The factor ``Y`` held fixed.
    readout : torch.Tensor, shape ``(d_c, m)``
        ``W`` (the Hebbian readout ``B_0`` in eqs. 17-18).
    targets : torch.Tensor, shape ``(F, d_c)``
        ``C`` (``C_f``); the right-hand side of the normal equations is ``L^*(C)``.
    metric : torch.Tensor, shape ``(d_c, d_c)``, optional
        Symmetric positive semi-definite output metric ``M`` on the left-hand side (an indefinite
        one can break CG down, which raises): the equations solved are
        ``L^*(L(X) M) = L^*(C)``. ``None`` is the identity, i.e. eq. 17's output-space objective
        ``|| C - Phi W^T ||_F^2``. ``M = V^T V`` with ``C = C_f`` gives the *score-space* objective
        ``|| E - Phi W^T V^T ||_F^2`` against the one-hot ``(F, V)`` matrix ``E`` (because
        ``E V = C_f``).
    x0 : torch.Tensor, shape ``(m, d)``, optional
        Starting point (default zero).
    tol : float, default 1e-3
        Stop when ``||L^*(C) - L^*(L(X) M)|| <= tol ||L^*(C)||``; a finite real ``>= 0``.
    max_iter : int, default 200
    preconditioner : {"rank1", "jacobi"}, default "rank1"
    chunk_size : int, optional
        Rows of ``F`` per fused block; default about ``2^18 / m`` (a 2 MiB float64 block).

    Returns
    -------
    X : torch.Tensor, shape ``(m, d)``
    info : dict
        ``iterations``, ``relative_residual`` (of the normal equations), ``converged``,
        ``flops`` (of the matrix products) and wall-clock ``seconds`` (for benchmarks).

    Raises
    ------
    ValueError
        Tensors that are not finite 2-D tensors (float16 / bfloat16 refused), ``F = 0``,
        mismatched shapes (``x0`` included), a ``tol`` that is negative, non-finite or not a
        real number, ``max_iter < 1``, an unknown preconditioner, a cast to the keys' dtype that
        overflows, or a CG breakdown (a non-finite iterate: the normal operator is not positive
        semi-definite along the search direction, e.g. an indefinite ``metric``, or the
        products overflow).

    References
    ----------
    Seed 001, App. B.2.5, eqs. 17-18 (each subproblem is linear in the free factor).
    Hestenes & Stiefel (1952), conjugate gradients; Saad (2003), *Iterative Methods for Sparse
    Linear Systems*, ch. 9 (preconditioned CG).
    """
    t_start = time.perf_counter()
    K = float_tensor(keys, "keys", 2, min_rows=1)
    Y, W, C = (cast_checked(float_tensor(x, name, 2), K.dtype, name)
               for x, name in ((fixed, "fixed"), (readout, "readout"), (targets, "targets")))
    F, d = K.shape
    m = Y.shape[0]
    if Y.shape != (m, d) or W.shape[1] != m or C.shape != (F, W.shape[0]):
        raise ValueError(
            f"inconsistent shapes: keys {tuple(K.shape)}, fixed {tuple(Y.shape)}, readout "
            f"{tuple(W.shape)}, targets {tuple(C.shape)}"
        )
    tol = _nonneg_float("tol", tol)
    max_iter = _positive_int("max_iter", max_iter)
    if preconditioner not in ("rank1", "jacobi"):
        raise ValueError(f"preconditioner must be 'rank1' or 'jacobi'; got {preconditioner!r}")
    d_c = W.shape[0]
    if metric is not None:
        metric = cast_checked(float_tensor(metric, "metric", 2), K.dtype, "metric")
        if metric.shape != (d_c, d_c):
            raise ValueError(f"metric must have shape ({d_c}, {d_c}); got {tuple(metric.shape)}")
    if x0 is not None:
        x0 = cast_checked(float_tensor(x0, "x0", 2), K.dtype, "x0")
        if x0.shape != (m, d):
            raise ValueError(f"x0 must have the shape of the free factor ({m}, {d}); got {tuple(x0.shape)}")
    chunk = max(1, (1 << 18) // m) if chunk_size is None else _positive_int("chunk_size", chunk_size)
    chunk = min(chunk, F)
    P = K @ Y.T  # (F, m)
    W = W.contiguous()  # (d_c, m)
    Wt = W.T.contiguous()  # (m, d_c)
    WM = W if metric is None else (metric @ W).contiguous()  # (d_c, m): M W
    blocks = [(s, min(s + chunk, F)) for s in range(0, F, chunk)]
    ubuf = torch.empty(chunk, m, dtype=K.dtype, device=K.device)  # (c, m) workspace
    rbuf = torch.empty(chunk, d_c, dtype=K.dtype, device=K.device)  # (c, d_c) workspace

    def adjoint(R: torch.Tensor, WR: torch.Tensor) -> torch.Tensor:  # (F, d_c) -> (m, d)
        out = torch.zeros(m, d, dtype=K.dtype, device=K.device)
        for s, e in blocks:
            u = ubuf[: e - s]
            torch.mm(R[s:e], WR, out=u)  # (c, m)
            u.mul_(P[s:e])
            out.addmm_(u.T, K[s:e])  # (m, d)
        return out

    def normal(X: torch.Tensor) -> torch.Tensor:  # (m, d) -> (m, d): L^*(L(X) M)
        out = torch.zeros(m, d, dtype=K.dtype, device=K.device)
        Xt = X.T  # (d, m)
        for s, e in blocks:
            u, r = ubuf[: e - s], rbuf[: e - s]
            Pc, Kc = P[s:e], K[s:e]
            torch.mm(Kc, Xt, out=u)  # (c, m)  K X^T
            u.mul_(Pc)  # Phi(Y, X) rows
            torch.mm(u, Wt, out=r)  # (c, d_c)  L(X)
            torch.mm(r, WM, out=u)  # (c, m)   L(X) M W
            u.mul_(Pc)
            out.addmm_(u.T, Kc)  # (m, d)
        return out

    wMw = (W * WM).sum(dim=0)  # (m,)  w_r^T M w_r
    tiny = torch.finfo(K.dtype).tiny
    if preconditioner == "jacobi":
        diag = (wMw[:, None] * ((P * P).T @ (K * K))).clamp_(min=tiny)  # (m, d)

        def precondition(r: torch.Tensor) -> torch.Tensor:
            return r / diag
    else:
        P2 = P * P  # (F, m)
        trace = P2.T @ (K * K).sum(dim=1)  # (m,)  tr T_r
        ynorm2 = (Y * Y).sum(dim=1).clamp(min=tiny)  # (m,)
        along = (P2 * P2).sum(dim=0) / ynorm2  # (m,)  yhat^T T_r yhat
        yhat = Y / ynorm2.sqrt()[:, None]  # (m, d)
        if d > 1:
            alpha = ((trace - along) / (d - 1)).clamp(min=tiny)
            gamma = ((along - alpha) / along.clamp(min=tiny)).clamp(min=0.0, max=1.0 - 1e-12)
        else:
            alpha, gamma = along.clamp(min=tiny), torch.zeros_like(along)
        scale = 1.0 / (wMw * alpha).clamp(min=tiny)  # (m,)

        def precondition(r: torch.Tensor) -> torch.Tensor:
            # (alpha I + beta yhat yhat^T)^{-1} = (I - beta/(alpha+beta) yhat yhat^T) / alpha
            z = r - (gamma * (r * yhat).sum(dim=1))[:, None] * yhat
            return z * scale[:, None]

    flops_mv = 8 * F * m * max(d, d_c)
    flops = 2 * F * d * m + 4 * F * m * max(d, d_c)  # P and the right-hand side
    b = adjoint(C, W)  # (m, d)  L^*(C)
    bnorm = torch.linalg.vector_norm(b).item()
    X = torch.zeros(m, d, dtype=K.dtype, device=K.device) if x0 is None else x0.clone()
    info = {"iterations": 0, "relative_residual": 0.0, "converged": True, "flops": flops,
            "seconds": 0.0}
    if not math.isfinite(bnorm):
        raise ValueError(f"the right-hand side L^*(targets) overflows {K.dtype}; rescale the inputs")
    if bnorm == 0.0:
        info["seconds"] = time.perf_counter() - t_start
        return X.zero_(), info
    if x0 is None:
        r = b.clone()
    else:
        r = b - normal(X)
        flops += flops_mv
    rel = torch.linalg.vector_norm(r).item() / bnorm
    z = precondition(r)
    p = z.clone()
    rz = (r * z).sum()
    it = 0
    while rel > tol and it < max_iter:
        q = normal(p)
        alpha_k = rz / (p * q).sum()
        X.add_(p * alpha_k)
        r.sub_(q * alpha_k)
        it += 1
        rel = torch.linalg.vector_norm(r).item() / bnorm
        if rel <= tol:
            break
        z = precondition(r)
        rz_new = (r * z).sum()
        p.mul_(rz_new / rz).add_(z)
        rz = rz_new
    if not math.isfinite(rel):
        raise ValueError(
            f"conjugate gradients broke down after {it} iterations (a non-finite residual): the "
            "normal operator is not positive semi-definite along the search direction (is the "
            "metric PSD?) or its products overflow; rescale the inputs"
        )
    check_finite_result(X, "the solution of the factor least squares")
    flops += it * flops_mv
    info.update(iterations=it, relative_residual=rel, converged=rel <= tol, flops=flops,
                seconds=time.perf_counter() - t_start)
    return X, info


def solve_factor_reference(
    keys: torch.Tensor,
    fixed: torch.Tensor,
    readout: torch.Tensor,
    targets: torch.Tensor,
    values: torch.Tensor | None = None,
    mapping: torch.Tensor | None = None,
) -> torch.Tensor:
    """Dense reference for :func:`solve_factor`: explicit Jacobian and ``torch.linalg.lstsq``.

    Output space (``values is None``): ``min_X || C - ((K Y^T) * (K X^T)) W^T ||_F``.
    Score space (``values`` and ``mapping`` given): ``min_X || E - ((K Y^T) * (K X^T)) W^T V^T ||_F``
    with ``E[i, mapping[i]] = 1``. Minimum-norm solution (``gelsd``). Memory
    ``O(F d_c m d)``: for tests at small sizes only.

    The system is built on the device of ``keys`` (the other inputs are moved there) and solved
    on the CPU (``gelsd`` is a CPU driver).

    Returns
    -------
    torch.Tensor, shape ``(m, d)``, float64, on the device of ``keys``

    Raises
    ------
    ValueError
        Tensors that are not finite 2-D tensors (float16 / bfloat16 refused), ``F = 0``,
        mismatched shapes, ``values`` without ``mapping`` (or the reverse), or map entries
        outside ``[0, V)``.
    """
    K = float_tensor(keys, "keys", 2, min_rows=1).to(_F64)
    Y = float_tensor(fixed, "fixed", 2).to(device=K.device, dtype=_F64)
    W = float_tensor(readout, "readout", 2).to(device=K.device, dtype=_F64)
    F, d = K.shape
    if Y.shape[1] != d or W.shape[1] != Y.shape[0]:
        raise ValueError(f"inconsistent shapes: keys {tuple(K.shape)}, fixed {tuple(Y.shape)}, "
                         f"readout {tuple(W.shape)}")
    if (values is None) != (mapping is None):
        raise ValueError("pass values and mapping together (score space) or neither (output space)")
    if values is None:
        targets = float_tensor(targets, "targets", 2)
        if targets.shape != (F, W.shape[0]):
            raise ValueError(f"targets must have shape ({F}, {W.shape[0]}); got {tuple(targets.shape)}")
    else:
        values = float_tensor(values, "values", 2)
        mapping = torch.as_tensor(mapping, device=K.device)  # beside the keys, where E is built
        if values.shape[1] != W.shape[0] or mapping.shape != (F,) or mapping.is_floating_point():
            raise ValueError(f"need values (V, {W.shape[0]}) and an integer mapping ({F},); got "
                             f"{tuple(values.shape)}, {tuple(mapping.shape)} {mapping.dtype}")
        if int(mapping.min()) < 0 or int(mapping.max()) >= values.shape[0]:
            raise ValueError(f"mapping entries must lie in [0, V) = [0, {values.shape[0]})")
    P = K @ Y.T  # (F, m)
    J = torch.einsum("ir,cr,ia->icra", P, W, K)  # (F, d_c, m, d): d L(X)[i, c] / d X[r, a]
    if values is None:
        lhs, rhs = J, targets.to(device=K.device, dtype=_F64)  # (F, d_c, m, d), (F, d_c)
    else:
        V = values.to(device=K.device, dtype=_F64)
        lhs = torch.einsum("icra,jc->ijra", J, V)  # (F, V, m, d)
        rhs = torch.zeros(K.shape[0], V.shape[0], dtype=_F64, device=K.device)  # beside the keys, as the map
        rhs[torch.arange(K.shape[0], device=K.device), mapping] = 1.0  # one-hot E
    m, d = Y.shape
    sol = torch.linalg.lstsq(lhs.reshape(-1, m * d).cpu(), rhs.reshape(-1, 1).cpu(), driver="gelsd").solution
    return sol.reshape(m, d).to(keys.device)


def data_dependent_mlp(
    facts: FactSet,
    m: int,
    seed: int = 0,
    *,
    ridge: float = 1e-6,
    objective: str = "output",
    cg_tol: float = 1e-2,
    cg_max_iter: int = 200,
    require_unit_keys: bool = True,
) -> BilinearMLP:
    """Data-dependent bilinear MLP: two least-squares refits of the factors, then the whitened readout.

    1. ``A0 = m^{-1/4} A_bar``, ``G0 = m^{-1/4} G_bar`` with ``A_bar, G_bar`` iid ``N(0, 1)``
       (the same draw as :func:`hebbian_mlp` with the same seed) and the Hebbian readout
       ``W0 = B0 = C_f^T Phi(A0, G0) / F``.
    2. ``G1 = argmin_G || C_f - Phi(A0, G) W0^T ||_F^2`` (eq. 17), started from ``G0``.
    3. ``A1 = argmin_A || C_f - Phi(A, G1) W0^T ||_F^2`` (eq. 18), started from ``A0``; both
       against the initial ``W0``.
    4. ``B = `` the full ridge-whitened readout (eq. 13, dual branch for ``m > F``) on
       ``Phi1 = Phi(A1, G1)``.

    Each solve is linear in the free ``(m, d)`` factor; it is done matrix-free by preconditioned
    conjugate gradients on the normal equations in float64 (:func:`solve_factor`: four GEMMs of
    ``2 F m d`` flops per iteration, a per-unit rank-1 block preconditioner, no ``(m d) x (m d)``
    matrix formed). A direct solve would need that normal matrix, ``sum_i (M * p_i p_i^T)``
    Kronecker ``k_i k_i^T``, which has no Kronecker-product shortcut and costs ``O(m^2 d^2 F)`` to
    form and ``O(m^3 d^3)`` to factor: far dearer at the sizes of interest.

    Objective: ``objective="output"`` (default) solves eq. 17-18 as written, in the
    ``d_c``-dimensional output space. ``objective="score"`` solves the authors' code's variant,
    regressing the ``F x V`` score matrix ``Phi W0^T V^T`` to the one-hot matrix ``E``; its
    normal equations differ only by the output metric ``V^T V`` (since ``E V = C_f``), which is
    close to ``(V/d) I`` for isotropic values. Were it exactly ``c I``, the minimisers of the
    ``G`` step would be the output-space ones scaled by ``1/c``, those of the ``A`` step would
    not change, and the whitened readout would absorb the scale of the features (up to the
    ridge); that is why the two objectives should give similar capacity for isotropic values.
    We default to the output space because it is what the paper states and it does not depend
    on the size of the value table.

    The solves are stopped at a relative normal-equation residual ``cg_tol`` (default ``1e-2``):
    in binary searches for the smallest width with 100 % accuracy (``d = 64``, tied; ``F = 256``,
    seeds 0-2, and ``F = 1024``, seed 0) ``cg_tol = 1e-2`` gave the same width as a converged
    solve (``1e-6``) in all four cases, at a third of the iterations; ``1e-1`` did not. Pass a
    smaller ``cg_tol`` for the argmin itself.

    Parameters
    ----------
    facts : FactSet
    m : int
        Hidden width.
    seed : int, default 0
    ridge : float, default 1e-6
        Ridge of the final whitened readout.
    objective : {"output", "score"}, default "output"
    cg_tol : float, default 1e-2
        Relative residual of the normal equations at which each CG solve stops.
    cg_max_iter : int, default 200
        Iteration cap per solve (``info`` records whether ``cg_tol`` was reached).
    require_unit_keys : bool, default True

    Returns
    -------
    BilinearMLP
        ``construction = "data-dependent"``; ``info`` holds the two solves' iterations,
        residuals and flop counts. Computed in float64, returned in the fact set's dtype.

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, keys off the sphere, an unknown objective, a ``cg_tol`` or
        ``ridge`` that is negative, non-finite or not a real number (a bool or a string),
        ``cg_max_iter < 1``, a ``require_unit_keys`` that is not a bool (each message names the
        argument), a CG breakdown, or a singular readout system with ``ridge = 0``.

    References
    ----------
    Seed 001, App. B.2.5 (eqs. 17-18), App. A.1.1 ("Data-dependent"), Sec. 4.3.
    """
    with load_capped_threads():  # the input checks too: their elementwise passes are parallel regions
        facts = _checked_facts(facts, as_bool(require_unit_keys, "require_unit_keys"))
        m = _positive_int("m", m)
        if objective not in ("output", "score"):
            raise ValueError(f"objective must be 'output' or 'score'; got {objective!r}")
        # checked here, under the caller's names, before any work (solve_factor calls them tol/max_iter)
        cg_tol = _nonneg_float("cg_tol", cg_tol)
        cg_max_iter = _positive_int("cg_max_iter", cg_max_iter)
        ridge = _nonneg_float("ridge", ridge)
        gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
        dev = facts.keys.device
        K = facts.keys.to(_F64)  # (F, d)
        C = facts.targets.to(_F64)  # (F, d)
        F, d = K.shape
        AG = _gaussian(2 * m, d, gen).to(dev).mul_(m ** -0.25)  # (2m, d)
        A0, G0 = AG[:m], AG[m:]
        W0 = hebbian_readout(bilinear_features(K, A0, G0), C, "none")  # (d, m)
        metric = None
        if objective == "score":
            V = facts.values.to(_F64)
            metric = V.T @ V  # (d, d)
        G1, info_g = solve_factor(K, A0, W0, C, metric=metric, x0=G0, tol=cg_tol, max_iter=cg_max_iter)
        A1, info_a = solve_factor(K, G1, W0, C, metric=metric, x0=A0, tol=cg_tol, max_iter=cg_max_iter)
        Phi1 = bilinear_features(K, A1, G1)  # (F, m)
        B = hebbian_readout(Phi1, C, "full", ridge)  # (d, m)
        # float64 inside (CG solves and the whitened readout); the module in the facts' dtype
        model = BilinearMLP(A1, G1, B, construction="data-dependent").to(facts.keys.dtype)
    model.info = {"seed": int(seed), "ridge": float(ridge), "objective": objective,
                  "solve_G": info_g, "solve_A": info_a}
    return model


def _plain_cg(K, Y, W, C, X, tol: float, max_iter: int) -> tuple[torch.Tensor, int]:
    """Jacobi-preconditioned CG on ``L^*(L(X)) = L^*(C)``, ``L(X) = ((K Y^T) * (K X^T)) W^T``, from ``X``."""
    P = K @ Y.T  # (F, m)

    def normal(X):  # (m, d) -> (m, d)
        return ((((P * (K @ X.T)) @ W.T) @ W) * P).T @ K

    diag = (W * W).sum(0)[:, None] * ((P * P).T @ (K * K))  # (m, d), the operator's diagonal
    b = (((C @ W) * P).T @ K)  # (m, d)  L^*(C)
    X = X.clone()
    r = b - normal(X)
    z = r / diag
    p, rz = z.clone(), (r * z).sum()
    it = 0
    while it < max_iter and torch.linalg.vector_norm(r) > tol * torch.linalg.vector_norm(b):
        q = normal(p)
        step = rz / (p * q).sum()
        X += step * p
        r -= step * q
        z = r / diag
        rz, rz_old = (r * z).sum(), rz
        p = z + (rz / rz_old) * p
        it += 1
    return X, it


def data_dependent_mlp_reference(facts: FactSet, m: int, seed: int = 0, *, ridge: float = 1e-6,
                                 cg_tol: float = 1e-2, cg_max_iter: int = 200) -> BilinearMLP:
    """Plain reference for :func:`data_dependent_mlp` (output-space objective, eqs. 17-18).

    The same steps and starting point (``A0, G0`` as in :func:`hebbian_mlp`, ``W0 = C_f^T
    Phi0 / F``; ``G1`` from eq. 17, then ``A1`` from eq. 18, then the whitened readout), with
    each refit solved by textbook conjugate gradients on the normal equations, preconditioned
    by the operator's exact diagonal (Jacobi), written on whole ``(F, m)`` matrices, and the
    readout by :func:`~assocmem.mlps.mlp.readout.hebbian_readout_reference`. The stopping rule
    is the fast path's (relative normal-equation residual ``cg_tol``), so the two stop at
    different iterates of the same least-squares problems: solved to a tight ``cg_tol`` they
    agree (tested); at the default ``1e-2`` they are two approximations of equal quality.

    Parameters
    ----------
    facts : FactSet
        Keys on the unit sphere.
    m : int
        Hidden width, ``>= 1``.
    seed : int, default 0
    ridge : float, default 1e-6
        Ridge of the whitened readout, ``> 0``.
    cg_tol : float, default 1e-2
    cg_max_iter : int, default 200

    Returns
    -------
    BilinearMLP
        ``construction = "data-dependent"``; ``info`` holds ``iterations_G`` and
        ``iterations_A``.

    Raises
    ------
    ValueError
        Not a FactSet, keys off the sphere, ``m < 1``, ``cg_max_iter < 1``, a ``cg_tol`` that is
        not a finite real ``>= 0`` or a ridge that is not a finite real ``> 0``.

    References
    ----------
    Seed 001, App. B.2.5 (eqs. 17-18). Saad (2003), ch. 9 (preconditioned CG).
    """
    facts = _checked_facts(facts, True)
    m = _positive_int("m", m)
    cg_tol = _nonneg_float("cg_tol", cg_tol)
    cg_max_iter = _positive_int("cg_max_iter", cg_max_iter)
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    K, C = facts.keys.to(_F64), facts.targets.to(_F64)  # (F, d), (F, d)
    AG = torch.randn(2 * m, K.shape[1], generator=gen, dtype=_F64).to(K.device) * m ** -0.25
    A0, G0 = AG[:m], AG[m:]  # (m, d) each
    W0 = C.T @ ((K @ A0.T) * (K @ G0.T)) / K.shape[0]  # (d, m)
    G1, it_g = _plain_cg(K, A0, W0, C, G0, cg_tol, cg_max_iter)
    A1, it_a = _plain_cg(K, G1, W0, C, A0, cg_tol, cg_max_iter)
    B = hebbian_readout_reference((K @ A1.T) * (K @ G1.T), C, ridge)  # (d, m)
    model = BilinearMLP(A1, G1, B, construction="data-dependent").to(facts.keys.dtype)
    model.info = {"iterations_G": it_g, "iterations_A": it_a}
    return model
