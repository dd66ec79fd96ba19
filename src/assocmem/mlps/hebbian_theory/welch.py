"""Lemma B.34 (Welch / Frobenius): a PSD kernel of rank at most ``m`` has ``||K||_F^2 >= tr(K)^2 / m``.

Hence ``E_col >= (tr(K)^2 / m - sum_i K_ii^2) / F``; equality in the first holds exactly for tight
frames. :func:`welch_frobenius_bound` evaluates both sides and Welch's coherence bound for one
kernel (:class:`WelchFrobenius`); :func:`random_rank_m_kernels` draws kernels in five families,
:func:`harmonic_frame` and :func:`simplex_etf` build tight frames that attain the bound, and
:func:`welch_study` tabulates them. Source: seed 001, App. B.8.6 (Definition B.33, Lemma B.34);
Welch (1974). Used by chapter 11 ("MLPs are kernel Hebbians").

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): App. B.8.6 (Definition B.33,
Lemma B.34).
L. R. Welch (1974), "Lower bounds on the maximum cross correlation of signals".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import torch

from assocmem._checks import positive_int as _positive_int, seed_int as _seed
from assocmem.mlps.hebbian_theory._common import _EPS, _F64, _f64, _generator, unit_rows

__all__ = [
    "WelchFrobenius",
    "welch_frobenius_bound",
    "harmonic_frame",
    "simplex_etf",
    "random_rank_m_kernels",
    "welch_study",
]


@dataclass(frozen=True)
class WelchFrobenius:
    """The quantities of Lemma B.34 for one PSD kernel ``K`` ``(F, F)`` of rank at most ``m``.

    Attributes
    ----------
    F, m : int
    frobenius_sq : float
        ``||K||_F^2``.
    trace : float
        ``tr K``.
    bound : float
        ``tr(K)^2 / m``; the lemma says ``frobenius_sq >= bound``.
    e_col : float
        ``max_i sum_{t != i} K_ti^2``.
    e_col_bound : float
        ``(tr(K)^2 / m - sum_i K_ii^2) / F``; the lemma says ``e_col >= e_col_bound``.
    max_offdiag_sq : float
        ``max_{i != j} K_ij^2 / (K_ii K_jj)`` (squared coherence of the feature vectors).
    welch_bound : float
        ``(F - m) / (m (F - 1))``: Welch's bound on ``max_offdiag_sq`` (for ``F > m``; 0 otherwise).
    """

    F: int
    m: int
    frobenius_sq: float
    trace: float
    bound: float
    e_col: float
    e_col_bound: float
    max_offdiag_sq: float
    welch_bound: float

    @property
    def ratio(self) -> float:
        """``||K||_F^2 / (tr(K)^2 / m)``, at least 1."""
        return self.frobenius_sq / self.bound


def welch_frobenius_bound(K: torch.Tensor, m: int | None = None) -> WelchFrobenius:
    """Evaluate both sides of Lemma B.34 (and Welch's coherence bound) for a kernel matrix.

    Parameters
    ----------
    K : torch.Tensor, shape ``(F, F)``
        Symmetric PSD, ``F >= 2``.
    m : int, optional
        The rank bound; defaults to the numerical rank of ``K`` (eigenvalues above
        ``F eps lambda_max``). Any ``m >= rank K`` is valid.

    Returns
    -------
    WelchFrobenius

    Raises
    ------
    ValueError
        ``K`` that is not a finite real 2-D array (float16 / bfloat16 refused), not square,
        ``F < 2``, a diagonal entry ``K_ii <= 0`` (the coherence divides by ``K_ii K_jj``; a PSD
        kernel with ``K_ii = 0`` has a zero row), or an ``m`` that is not an integer at least the
        numerical rank of ``K``.

    References
    ----------
    Seed 001, App. B.8.6, Definition B.33 and Lemma B.34; Welch (1974).
    """
    K = _f64(K, "K", 2)
    F = K.shape[0]
    if K.shape[1] != F or F < 2:
        raise ValueError(f"K must be square with F >= 2; got shape {tuple(K.shape)}")
    ev = torch.linalg.eigvalsh((K + K.T) / 2)
    rank = int((ev > F * _EPS * float(ev[-1].clamp_min(0))).sum())
    m = rank if m is None else _positive_int("m", m)
    if m < rank:
        raise ValueError(f"m = {m} is below the numerical rank {rank} of K")
    diag = K.diagonal()
    if not bool((diag > 0).all()):
        raise ValueError(f"K must have a positive diagonal (the coherence divides by K_ii K_jj); got a "
                         f"minimum of {float(diag.min()):.3g}")
    tr = float(diag.sum())
    frob = float((K * K).sum())
    bound = tr * tr / m
    off = K - torch.diag(diag)
    e_col = float((off * off).sum(0).max())
    e_col_bound = (bound - float((diag * diag).sum())) / F
    coh = off * off / torch.outer(diag, diag)
    welch = (F - m) / (m * (F - 1)) if F > m else 0.0
    return WelchFrobenius(F=F, m=m, frobenius_sq=frob, trace=tr, bound=bound, e_col=e_col,
                          e_col_bound=e_col_bound, max_offdiag_sq=float(coh.max()), welch_bound=welch)


def harmonic_frame(F: int, m: int) -> torch.Tensor:
    """A real unit-norm tight frame of ``F`` vectors in ``R^m`` (rows), ``F > m``: ``Phi^T Phi = (F/m) I``.

    Row ``k`` holds ``sqrt(2/m) (cos(2 pi k j / F), sin(2 pi k j / F))`` for ``j = 1, ..., floor(m/2)``,
    plus a constant ``1/sqrt(m)`` column when ``m`` is odd. Its Gram matrix attains Lemma B.34 with
    equality.

    Raises
    ------
    ValueError
        ``F <= m``.
    """
    F, m = _positive_int("F", F), _positive_int("m", m)
    if F <= m:
        raise ValueError(f"need F > m for a tight frame with distinct frequencies; got F={F}, m={m}")
    k = torch.arange(F, dtype=_F64)[:, None]
    j = torch.arange(1, m // 2 + 1, dtype=_F64)[None, :]
    ang = 2 * math.pi * k * j / F  # (F, m // 2)
    cols = [torch.cos(ang), torch.sin(ang)]
    Phi = torch.cat(cols, 1) * math.sqrt(2.0 / m)
    if m % 2:
        Phi = torch.cat([torch.full((F, 1), 1.0 / math.sqrt(m), dtype=_F64), Phi], 1)
    return Phi  # (F, m)


def simplex_etf(m: int) -> torch.Tensor:
    """The regular simplex: ``m + 1`` unit vectors in ``R^m`` with all inner products ``-1/m`` (rows).

    An equiangular tight frame: it attains Lemma B.34 and Welch's coherence bound with equality.
    """
    m = _positive_int("m", m)
    E = torch.eye(m + 1, dtype=_F64) - 1.0 / (m + 1)  # centred basis of R^{m+1}, rank m
    Q, _ = torch.linalg.qr(E)  # first m columns span the centred hyperplane
    X = E @ Q[:, :m]  # (m + 1, m): coordinates in that hyperplane
    return unit_rows(X)


def random_rank_m_kernels(F: int, m: int, n: int, seed: int = 0) -> list[tuple[str, torch.Tensor]]:
    """Random PSD kernels ``Phi Phi^T`` of rank at most ``m``, ``(F, F)``, in five families.

    * ``"gaussian"``: ``Phi`` iid ``N(0, 1)``;
    * ``"unit rows"``: Gaussian rows normalised (``K_ii = 1``, the isotropic setting of the lemma);
    * ``"anisotropic"``: Gaussian with column scales ``exp(s xi)``, ``s`` uniform in ``[0.25, 1]``
      (spread eigenvalues, far from tight);
    * ``"bilinear"``: sketched-``K_2`` features ``g(k)`` of unit Gaussian keys in ``R^d``, ``d`` with
      ``d(d+1)/2 >= m`` (the paper's kernel);
    * ``"low rank"``: rank ``m // 2`` (the bound with the nominal ``m`` is then loose by design).

    Returns
    -------
    list of (family, K)
        ``n`` kernels per family.
    """
    F, m, n = _positive_int("F", F), _positive_int("m", m), _positive_int("n", n)
    gen = _generator(seed)
    d = 2
    while d * (d + 1) // 2 < m:
        d += 1
    out = []
    for _ in range(n):
        Phi = torch.randn(F, m, generator=gen, dtype=_F64)
        out.append(("gaussian", Phi @ Phi.T))
        U = unit_rows(torch.randn(F, m, generator=gen, dtype=_F64))
        out.append(("unit rows", U @ U.T))
        s = 0.25 + 0.75 * torch.rand((), generator=gen, dtype=_F64)
        Z = torch.randn(F, m, generator=gen, dtype=_F64) * torch.exp(s * torch.randn(m, generator=gen, dtype=_F64))
        out.append(("anisotropic", Z @ Z.T))
        keys = unit_rows(torch.randn(F, d, generator=gen, dtype=_F64))
        A = torch.randn(m, d, generator=gen, dtype=_F64)
        G = torch.randn(m, d, generator=gen, dtype=_F64)
        g = (keys @ A.T) * (keys @ G.T) / math.sqrt(m)  # (F, m)
        out.append(("bilinear", g @ g.T))
        r = max(1, m // 2)
        L = torch.randn(F, r, generator=gen, dtype=_F64)
        out.append(("low rank", L @ L.T))
    return out


def welch_study(F: int, ms: Sequence[int], n: int, seed: int = 0) -> pd.DataFrame:
    """Lemma B.34 on random rank-``m`` kernels and on two tight frames, one row per kernel.

    Parameters
    ----------
    F : int
        Size of the random kernels (``F > max(ms)``).
    ms : sequence of int
        Ranks.
    n : int
        Random kernels per family and rank (:func:`random_rank_m_kernels`).
    seed : int, default 0

    Returns
    -------
    pandas.DataFrame
        Columns ``family, F, m, frobenius_sq, bound, ratio, e_col, e_col_bound, coherence_ratio``
        (``max_{i != j} K_ij^2 / (K_ii K_jj)`` over Welch's ``(F - m) / (m (F - 1))``) and ``tol``
        (``F^2 u``: the rounding bound of a sum of ``F^2`` terms, for the equality checks). The
        families are those of :func:`random_rank_m_kernels` plus ``"harmonic frame"`` (``F`` vectors)
        and ``"simplex ETF"`` (``m + 1`` vectors).

    References
    ----------
    Seed 001, App. B.8.6, Lemma B.34; Welch (1974).
    """
    F, n = _positive_int("F", F), _positive_int("n", n)
    rows = []
    for m in ms:
        m = _positive_int("m", m)
        kernels = random_rank_m_kernels(F, m, n, seed=_seed(seed) + m)
        H = harmonic_frame(F, m)
        S = simplex_etf(m)
        kernels += [("harmonic frame", H @ H.T), ("simplex ETF", S @ S.T)]
        for fam, K in kernels:
            w = welch_frobenius_bound(K, m)
            rows.append({"family": fam, "F": w.F, "m": m, "frobenius_sq": w.frobenius_sq, "bound": w.bound,
                         "ratio": w.ratio, "e_col": w.e_col, "e_col_bound": w.e_col_bound,
                         "coherence_ratio": w.max_offdiag_sq / w.welch_bound if w.welch_bound > 0 else math.nan,
                         "tol": w.F**2 * _EPS / 2})
    return pd.DataFrame(rows)
