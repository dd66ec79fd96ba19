"""Lemma B.3: full whitening minimises the kernel energy ``||K_M||_F^2`` among normalised preconditioners.

Among PSD preconditioners ``M`` with ``tr(M Sigma) = m`` (eq. 16), ``M = Sigma^{-1}`` minimises
``||Phi M Phi^T||_F^2``, and the minimum is ``F^2 m``. :func:`feature_covariance` is ``Sigma``
(eq. 12); :func:`kernel_energy` evaluates the energy without the ``F x F`` kernel (checked against
:func:`kernel_energy_reference`), :func:`whitened_kernel_energy` at full whitening, and
:func:`key_crowding` the statistic ``E_K``; :func:`random_preconditioners` draws normalised SPD
matrices (:func:`normalise_preconditioner`) in four families and :func:`preconditioner_experiment`
compares them with the three readouts of Algorithm 1. Source: seed 001, App. B.2.4 (eqs. 12-16,
Lemma B.3), Definition B.10. Used by chapter 11 ("MLPs are kernel Hebbians").

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): App. B.2.3 (Algorithm 1),
B.2.4 (eqs. 12-16, Lemma B.3).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int, positive_int as _positive_int, seed_int as _seed
from assocmem.mlps._checks import check_finite_result
from assocmem.mlps.hebbian_theory._common import _F64, _f64, _generator, _randn

__all__ = [
    "feature_covariance",
    "kernel_energy",
    "kernel_energy_reference",
    "whitened_kernel_energy",
    "key_crowding",
    "normalise_preconditioner",
    "random_preconditioners",
    "preconditioner_experiment",
]


def feature_covariance(Phi: torch.Tensor) -> torch.Tensor:
    """``Sigma = Phi^T Phi / F`` (eq. 12), shape ``(m, m)``, for ``Phi`` of shape ``(F, m)``.

    Raises
    ------
    ValueError
        ``Phi`` that is not a finite real 2-D array (float16 / bfloat16 refused), ``F = 0``, or a
        covariance that overflows float64.
    """
    Phi = _stored_features(Phi)
    return check_finite_result(Phi.T @ Phi / Phi.shape[0], "Sigma = Phi^T Phi / F")


def _stored_features(Phi) -> torch.Tensor:
    """``Phi`` ``(F, m)`` as a finite float64 tensor with at least one stored row."""
    Phi = _f64(Phi, "Phi", 2)
    if Phi.shape[0] == 0:
        raise ValueError("Phi must have at least one row (F >= 1 stored keys); got shape "
                         f"{tuple(Phi.shape)}")
    return Phi


def _preconditioners(M, m: int) -> torch.Tensor:
    """``M`` ``(..., m, m)`` as a finite float64 tensor."""
    M = _f64(M, "M")
    if M.dim() < 2 or M.shape[-2:] != (m, m):
        raise ValueError(f"M must have shape (..., {m}, {m}); got {tuple(M.shape)}")
    return M


def _covariance(sigma) -> torch.Tensor:
    """``sigma`` ``(m, m)`` as a finite float64 tensor."""
    sigma = _f64(sigma, "sigma", 2)
    if sigma.shape[0] != sigma.shape[1]:
        raise ValueError(f"sigma must be square (m, m); got {tuple(sigma.shape)}")
    return sigma


def kernel_energy_reference(Phi: torch.Tensor, M: torch.Tensor) -> float:
    """``||Phi M Phi^T||_F^2`` computed from the ``F x F`` kernel itself (reference form).

    Raises
    ------
    ValueError
        Inputs that are not finite real 2-D arrays (float16 / bfloat16 refused), ``F = 0``,
        ``M`` not ``(m, m)``, or an energy that overflows float64.
    """
    Phi = _stored_features(Phi)
    M = _preconditioners(M, Phi.shape[1])
    if M.dim() != 2:
        raise ValueError(f"M must be 2-D (m, m); got shape {tuple(M.shape)}")
    K = Phi @ M @ Phi.T  # (F, F)
    return float(check_finite_result((K * K).sum(), "||Phi M Phi^T||_F^2"))


def kernel_energy(sigma: torch.Tensor, M: torch.Tensor, F: int) -> torch.Tensor:
    """``||K_M||_F^2 = F^2 tr(M Sigma M Sigma)`` without forming the ``F x F`` kernel.

    ``||Phi M Phi^T||_F^2 = tr(M Phi^T Phi M Phi^T Phi)`` and ``Phi^T Phi = F Sigma``.

    Parameters
    ----------
    sigma : torch.Tensor, shape ``(m, m)``
    M : torch.Tensor, shape ``(..., m, m)``
        One preconditioner or a batch of them.
    F : int
        ``F >= 1``.

    Returns
    -------
    torch.Tensor, shape ``(...)``, float64

    Raises
    ------
    ValueError
        ``sigma`` or ``M`` that is not a finite real array of the stated shape (float16 /
        bfloat16 refused), an ``F`` that is not an integer ``>= 1``, or an energy that overflows
        float64.
    """
    sigma = _covariance(sigma)
    M = _preconditioners(M, sigma.shape[0]).to(sigma.device)
    F = as_int(F, "F", minimum=1)
    MS = M @ sigma  # (..., m, m)
    return check_finite_result(F * F * (MS * MS.transpose(-1, -2)).sum((-1, -2)), "||K_M||_F^2")  # tr(MS MS)


def whitened_kernel_energy(Phi: torch.Tensor) -> float:
    """``||Phi Sigma^{-1} Phi^T||_F^2`` (full whitening), which equals ``F^2 m`` when ``Sigma`` is invertible.

    Computed from the ``F x F`` kernel, with ``Sigma^{-1} Phi^T`` by Cholesky.

    Raises
    ------
    ValueError
        ``Sigma`` is singular (``rank Phi < m``), ``Phi`` is not a finite real 2-D array
        (float16 / bfloat16 refused) or has no row, or the energy overflows float64.

    References
    ----------
    Seed 001, App. B.2.4, Lemma B.3.
    """
    Phi = _stored_features(Phi)
    sigma = feature_covariance(Phi)
    L, info = torch.linalg.cholesky_ex(sigma)
    if int(info) != 0:
        raise ValueError("Sigma is singular; full whitening needs rank Phi = m")
    K = Phi @ torch.cholesky_solve(Phi.T, L)  # (F, F)
    return float(check_finite_result((K * K).sum(), "||Phi Sigma^-1 Phi^T||_F^2"))


def key_crowding(Phi: torch.Tensor, M: torch.Tensor, sigma: torch.Tensor | None = None) -> torch.Tensor:
    """``E_K = max_i sum_{t != i} (K_M)_ti^2`` for ``K_M = Phi M Phi^T`` without forming ``K_M``.

    ``sum_t (K_M)_ti^2 = (K_M^2)_ii = F phi_i^T M Sigma M phi_i`` and ``(K_M)_ii = phi_i^T M phi_i``.

    Parameters
    ----------
    Phi : torch.Tensor, shape ``(F, m)``
    M : torch.Tensor, shape ``(..., m, m)``
    sigma : torch.Tensor, shape ``(m, m)``, optional
        ``Phi^T Phi / F``, if already computed.

    Returns
    -------
    torch.Tensor, shape ``(...)``, float64

    Raises
    ------
    ValueError
        Inputs that are not finite real arrays of the stated shapes (float16 / bfloat16
        refused), ``F = 0``, or a statistic that overflows float64.

    References
    ----------
    Seed 001, App. B.2.4 (the key-crowding statistic before eq. 15), Definition B.10.
    """
    Phi = _stored_features(Phi)
    F, m = Phi.shape
    M = _preconditioners(M, m).to(Phi.device)
    sigma = feature_covariance(Phi) if sigma is None else _covariance(sigma).to(Phi.device)
    if sigma.shape != (m, m):
        raise ValueError(f"sigma must have shape ({m}, {m}); got {tuple(sigma.shape)}")
    col = F * ((Phi @ (M @ sigma @ M)) * Phi).sum(-1)  # (..., F): sum_t K_ti^2
    diag = ((Phi @ M) * Phi).sum(-1)  # (..., F): K_ii
    return check_finite_result((col - diag**2).max(-1).values, "E_K")


def normalise_preconditioner(M: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Scale ``M`` so that ``tr(M Sigma) = m`` (eq. 16: the average self-kernel is fixed).

    Raises
    ------
    ValueError
        Inputs that are not finite real arrays of shapes ``(..., m, m)`` and ``(m, m)`` (float16 /
        bfloat16 refused), or a preconditioner with ``tr(M Sigma) <= 0`` (no positive scale
        normalises it; ``M`` and ``Sigma`` must be positive semi-definite and not orthogonal).
    """
    sigma = _covariance(sigma)
    m = sigma.shape[0]
    M = _preconditioners(M, m).to(sigma.device)
    t = (M * sigma.T).sum((-1, -2))  # tr(M Sigma), (...)
    if not bool((t > 0).all()):
        raise ValueError("every preconditioner needs tr(M Sigma) > 0 to be normalised to tr(M Sigma) = m; "
                         f"got a minimum of {float(t.min()):.3g}")
    return check_finite_result(M * (m / t)[..., None, None], "the normalised preconditioner")


def _check_positive_definite(sigma: torch.Tensor) -> None:
    """A :class:`ValueError` unless ``sigma`` is (numerically) positive definite."""
    _, info = torch.linalg.cholesky_ex(sigma)
    ev = torch.linalg.eigvalsh((sigma + sigma.T) / 2)
    if int(info) != 0 or not float(ev[0]) > sigma.shape[0] * float(torch.finfo(_F64).eps) * float(ev[-1]):
        raise ValueError(
            f"Sigma must be positive definite (smallest eigenvalue {float(ev[0]):.3g}, largest "
            f"{float(ev[-1]):.3g}): its negative powers and full whitening need rank Phi = m"
        )


def _sym_sqrt(sigma: torch.Tensor, power: float) -> torch.Tensor:
    ev, U = torch.linalg.eigh(sigma)
    return (U * ev**power) @ U.T


def random_preconditioners(sigma: torch.Tensor, n: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random SPD preconditioners ``M`` with ``tr(M Sigma) = m``, in four families of ``n`` each.

    * ``"wishart"``: ``W W^T / k`` with ``W`` ``(m, k)`` standard Gaussian, ``k`` uniform in ``[m, 4m]``
      (generic SPD matrices, far from the optimum);
    * ``"diagonal"``: ``diag(exp(s xi))`` with ``xi ~ N(0, 1)``, ``s`` log-uniform in ``[0.1, 3]``
      (rescaled features);
    * ``"partial"``: ``Sigma^{-p}`` with ``p`` uniform in ``[0, 1]`` (between no and full whitening);
    * ``"perturbed"``: ``Sigma^{-1/2} exp(eps S) Sigma^{-1/2}``, ``S`` a symmetric Gaussian matrix of
      unit Frobenius norm, ``eps`` log-uniform in ``[10^-3, 1]`` (close to the optimum).

    Parameters
    ----------
    sigma : torch.Tensor, shape ``(m, m)``, positive definite
    n : int
        Matrices per family.
    seed : int, default 0

    Returns
    -------
    dict
        Family name -> tensor ``(n, m, m)``, each normalised by :func:`normalise_preconditioner`.

    Raises
    ------
    ValueError
        A ``sigma`` that is not a finite real ``(m, m)`` array or not positive definite (the
        ``"partial"`` and ``"perturbed"`` families take its negative powers), ``n < 1``, or a
        non-integer seed.
    """
    sigma = _covariance(sigma)
    _check_positive_definite(sigma)
    n = _positive_int("n", n)
    m, dev = sigma.shape[0], sigma.device
    gen = _generator(seed)
    rng = np.random.default_rng(_seed(seed))
    out = {}
    ks = rng.integers(m, 4 * m + 1, size=n)
    out["wishart"] = torch.stack([
        (W := _randn(m, int(k), generator=gen, device=dev)) @ W.T / int(k) for k in ks
    ])
    s = torch.as_tensor(np.exp(rng.uniform(math.log(0.1), math.log(3.0), size=n)), dtype=_F64, device=dev)
    xi = _randn(n, m, generator=gen, device=dev)
    out["diagonal"] = torch.diag_embed(torch.exp(s[:, None] * xi))
    ev, U = torch.linalg.eigh(sigma)
    p = torch.as_tensor(rng.uniform(0.0, 1.0, size=n), dtype=_F64, device=dev)
    out["partial"] = (U[None] * ev[None, None, :] ** (-p[:, None, None])) @ U.T[None]
    eps = torch.as_tensor(np.exp(rng.uniform(math.log(1e-3), 0.0, size=n)), dtype=_F64, device=dev)
    S = _randn(n, m, m, generator=gen, device=dev)
    S = S + S.transpose(-1, -2)
    S = S / torch.linalg.matrix_norm(S)[:, None, None]
    isq = _sym_sqrt(sigma, -0.5)
    out["perturbed"] = isq @ torch.linalg.matrix_exp(eps[:, None, None] * S) @ isq
    return {k: normalise_preconditioner(v, sigma) for k, v in out.items()}


def preconditioner_experiment(Phi: torch.Tensor, n: int, seed: int = 0) -> pd.DataFrame:
    """``||K_M||_F^2`` and ``E_K`` for random preconditioners and the three of Algorithm 1.

    Parameters
    ----------
    Phi : torch.Tensor, shape ``(F, m)``, ``rank m``
    n : int
        Random matrices per family (:func:`random_preconditioners`).
    seed : int, default 0

    Returns
    -------
    pandas.DataFrame
        Columns ``family`` (``"full"``, ``"none"``, ``"diag"`` for ``Sigma^{-1}``, ``I`` and
        ``diag(Sigma)^{-1}``, then the random families), ``energy`` (``||K_M||_F^2``), ``ratio``
        (``energy / (F^2 m)``, Lemma B.3 says ``>= 1`` with equality only for ``full``),
        ``e_k`` and ``e_k_ratio`` (``E_K`` relative to full whitening's). Every ``M`` satisfies
        ``tr(M Sigma) = m``.

    Raises
    ------
    ValueError
        ``Phi`` that is not a finite real 2-D array (float16 / bfloat16 refused) or has no row,
        a singular ``Sigma`` (``rank Phi < m``: full whitening needs ``Sigma^{-1}``), ``n < 1``,
        or a non-integer seed.

    References
    ----------
    Seed 001, App. B.2.4 (eqs. 15-16, Lemma B.3), Algorithm 1 lines 6-19.
    """
    Phi = _stored_features(Phi)
    F, m = Phi.shape
    sigma = feature_covariance(Phi)
    _check_positive_definite(sigma)
    refs = {
        "full": torch.linalg.inv(sigma),
        "none": torch.eye(m, dtype=_F64, device=Phi.device),
        "diag": torch.diag(1.0 / sigma.diagonal()),
    }
    fams = {k: normalise_preconditioner(v, sigma)[None] for k, v in refs.items()}
    fams.update(random_preconditioners(sigma, n, seed))
    rows = []
    chunk = max(1, 2**24 // (F * m))  # bounds the (chunk, F, m) intermediate of key_crowding
    for fam, Ms in fams.items():
        for start in range(0, Ms.shape[0], chunk):
            Mc = Ms[start:start + chunk]  # (c, m, m)
            energy = kernel_energy(sigma, Mc, F).cpu().numpy()
            ek = key_crowding(Phi, Mc, sigma).cpu().numpy()
            rows += [{"family": fam, "energy": float(e), "e_k": float(k)} for e, k in zip(energy, ek)]
    df = pd.DataFrame(rows)
    df["ratio"] = df["energy"] / (F * F * m)
    df["e_k_ratio"] = df["e_k"] / float(df.loc[df.family == "full", "e_k"].iloc[0])
    return df
