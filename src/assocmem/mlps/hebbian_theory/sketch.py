"""Lemma B.2: bilinear features sketch the quadratic kernel ``K_2``, with an error that shrinks like ``m^{-1/2}``.

With ``A, G`` iid ``N(0, 1)`` of shape ``(m, d)``, the features ``g(x) = (A x) * (G x) / sqrt(m)``
give ``E[<g(x), g(z)>] = <x, z>^2``. :func:`sketch_kernel` evaluates the sketched kernel,
:func:`sketch_variance` its exact variance (from Isserlis' theorem; it does not depend on ``d``),
:func:`sketch_error` measures bias and error by Monte Carlo over fresh draws at every width
(:class:`SketchErrors`), and :func:`loglog_fit` fits the slope of the error against ``m`` with its
standard error; :func:`pair_with_overlap` / :func:`overlap_pairs` make input pairs with a given
overlap and :func:`bonferroni_z` the z threshold for many simultaneous checks. Source: seed 001,
Lemma B.2 and the remark after its proof (App. B.2.2), eq. 8; Isserlis (1918). Used by chapter 11
("MLPs are kernel Hebbians").

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): Sec. 4.1 (eqs. 7-8),
App. B.2.2 (Lemma B.2).
L. Isserlis (1918), on the moments of the normal distribution (fourth moments in Lemma B.2's variance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_real, positive_int as _positive_int, seed_int as _seed
from assocmem.devices import resolve_device
from assocmem.mlps._checks import check_finite_result, float_tensor, real_array
from assocmem.mlps.hebbian_theory._common import _F64, _f64, _generator, _randn

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "pair_with_overlap",
    "overlap_pairs",
    "bonferroni_z",
    "sketch_kernel",
    "sketch_variance",
    "SketchErrors",
    "sketch_error",
    "LogLogFit",
    "loglog_fit",
]


def pair_with_overlap(d: int, rho: float, seed: int = 0,
                      device: str | torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Two unit vectors ``x, z`` in ``R^d`` with ``<x, z> = rho`` exactly (up to rounding).

    Raises
    ------
    ValueError
        ``d < 2``, or a ``rho`` that is not a real number in ``[-1, 1]`` (booleans and strings
        refused).
    """
    d = _positive_int("d", d)
    rho = as_real(rho, "rho")
    if d < 2 or not -1.0 <= rho <= 1.0:
        raise ValueError(f"need d >= 2 and |rho| <= 1; got d={d}, rho={rho!r}")
    dev = resolve_device(device, dtype=_F64)
    Q, _ = torch.linalg.qr(_randn(d, 2, generator=_generator(seed), device=dev))
    e1, e2 = Q[:, 0], Q[:, 1]  # orthonormal
    return e1, rho * e1 + math.sqrt(max(0.0, 1.0 - rho * rho)) * e2


def overlap_pairs(d: int, rhos: Sequence[float], seed: int = 0,
                  device: str | torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Stacked :func:`pair_with_overlap` pairs: ``x, z`` of shape ``(len(rhos), d)`` with ``<x_i, z_i> = rhos[i]``.

    Raises
    ------
    ValueError
        An empty ``rhos``, or anything :func:`pair_with_overlap` rejects.
    """
    device = resolve_device(device)
    rhos = list(rhos)
    if not rhos:
        raise ValueError("rhos must hold at least one overlap")
    pairs = [pair_with_overlap(d, r, seed=_seed(seed) + i, device=device) for i, r in enumerate(rhos)]
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def bonferroni_z(n_tests: int, alpha: float = 1e-3) -> float:
    """Two-sided z threshold so that ``n_tests`` Gaussian z-scores all pass with probability ``>= 1 - alpha``.

    ``Phi^{-1}(1 - alpha / (2 n))``: 3.29 for one test at ``alpha = 10^-3``, 4.26 for 45 tests.

    Raises
    ------
    ValueError
        ``n_tests < 1``, or an ``alpha`` that is not a real number in ``(0, 1)`` (booleans and
        strings refused).
    """
    n_tests = _positive_int("n_tests", n_tests)
    alpha = as_real(alpha, "alpha")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    return float(NormalDist().inv_cdf(1 - alpha / (2 * n_tests)))


def sketch_kernel(x: torch.Tensor, z: torch.Tensor, A: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """The sketched kernel ``K_m(x, z) = <g(x), g(z)>`` with ``g(x) = (A x) * (G x) / sqrt(m)``.

    Parameters
    ----------
    x, z : torch.Tensor, shape ``(n, d)``
        Paired rows: entry ``i`` of the result is ``K_m(x_i, z_i)``.
    A, G : torch.Tensor, shape ``(..., m, d)``
        iid ``N(0, 1)`` factors (unscaled; the ``1/sqrt(m)`` is applied here). Leading batch
        dimensions give independent sketches.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``

    Raises
    ------
    ValueError
        Inputs that are not finite real tensors of one dtype (float16 / bfloat16 refused), or
        shapes other than the ones above.

    References
    ----------
    Seed 001, Lemma B.2 (App. B.2.2) and eq. 8.
    """
    x, z = _pairs(x, z)
    A, G = float_tensor(A, "A"), float_tensor(G, "G")
    if A.dim() < 2 or A.shape != G.shape or A.shape[-1] != x.shape[1]:
        raise ValueError(f"A and G must have one shape (..., m, {x.shape[1]}); got {tuple(A.shape)}, "
                         f"{tuple(G.shape)}")
    if len({x.dtype, A.dtype, G.dtype}) > 1:
        raise ValueError(f"x, z, A and G must share a dtype; got {x.dtype}, {A.dtype}, {G.dtype}")
    m = A.shape[-2]
    ax, az = A @ x.T, A @ z.T  # (..., m, n)
    gx, gz = G @ x.T, G @ z.T  # (..., m, n)
    return check_finite_result((ax * az * gx * gz).sum(-2) / m, "the sketched kernel")  # (..., n)


def sketch_variance(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Exact variance of one summand ``(a.x)(a.z)(g.x)(g.z)`` of the sketch, so ``Var K_m = this / m``.

    With ``a, g`` independent ``N(0, I_d)``, Isserlis' theorem gives
    ``E[(a.x)^2 (a.z)^2] = |x|^2 |z|^2 + 2 <x, z>^2``, so the variance is
    ``(|x|^2 |z|^2 + 2 <x, z>^2)^2 - <x, z>^4``: ``8`` for ``x = z`` on the sphere, ``1`` for
    orthogonal unit vectors. It does not depend on ``d``.

    Parameters
    ----------
    x, z : torch.Tensor, shape ``(n, d)``

    Returns
    -------
    torch.Tensor, shape ``(n,)``

    Raises
    ------
    ValueError
        ``x`` and ``z`` that are not finite real 2-D tensors of one shape and dtype.
    """
    x, z = _pairs(x, z)
    rho = (x * z).sum(-1)
    nn2 = (x * x).sum(-1) * (z * z).sum(-1)
    return (nn2 + 2 * rho**2) ** 2 - rho**4


def _pairs(x, z) -> tuple[torch.Tensor, torch.Tensor]:
    """Paired rows ``x, z`` ``(n, d)``: finite real tensors of one shape and dtype."""
    x, z = float_tensor(x, "x", 2), float_tensor(z, "z", 2)
    if x.shape != z.shape or x.dtype != z.dtype:
        raise ValueError(f"x and z must have one shape and dtype; got {tuple(x.shape)} {x.dtype}, "
                         f"{tuple(z.shape)} {z.dtype}")
    return x, z


@dataclass
class SketchErrors:
    """Monte Carlo of the sketched ``K_2`` kernel (Lemma B.2), returned by :func:`sketch_error`.

    Attributes
    ----------
    ms : np.ndarray, shape ``(n_m,)``
        Feature widths.
    rho : np.ndarray, shape ``(n_pairs,)``
        ``<x, z>`` of each pair; the target is ``rho^2``.
    draws : int
        Independent ``(A, G)`` draws per width.
    mean, mean_se : np.ndarray, shape ``(n_m, n_pairs)``
        Sample mean of ``K_m`` over the draws and its standard error.
    mse : np.ndarray, shape ``(n_m, n_pairs)``
        Mean of ``(K_m - rho^2)^2`` over the draws.
    predicted_mse : np.ndarray, shape ``(n_m, n_pairs)``
        ``sketch_variance / m``, exact.
    rms : np.ndarray, shape ``(n_m,)``
        Root of the pair-averaged mean squared error.
    se_log_rms : np.ndarray, shape ``(n_m,)``
        Delta-method standard error of ``log rms`` (from the spread of the per-draw squared errors).
    predicted_rms : np.ndarray, shape ``(n_m,)``
        ``sqrt(mean over pairs of predicted_mse)``.
    """

    ms: np.ndarray
    rho: np.ndarray
    draws: int
    mean: np.ndarray
    mean_se: np.ndarray
    mse: np.ndarray
    predicted_mse: np.ndarray
    rms: np.ndarray
    se_log_rms: np.ndarray
    predicted_rms: np.ndarray

    def bias_z(self) -> np.ndarray:
        """``(mean - rho^2) / mean_se``, shape ``(n_m, n_pairs)``: unbiasedness in standard errors."""
        return (self.mean - self.rho[None, :] ** 2) / self.mean_se

    def frame(self) -> pd.DataFrame:
        """One row per width and pair."""
        rows = []
        for a, m in enumerate(self.ms):
            for b, r in enumerate(self.rho):
                rows.append({"m": int(m), "rho": float(r), "mean": self.mean[a, b], "mean_se": self.mean_se[a, b],
                             "mse": self.mse[a, b], "predicted_mse": self.predicted_mse[a, b]})
        return pd.DataFrame(rows)


def sketch_error(x: torch.Tensor, z: torch.Tensor, ms: Sequence[int], draws: int, seed: int = 0,
                 device: str | torch.device | None = None, max_rows: int = 2**20) -> SketchErrors:
    """Measure bias and error of the bilinear sketch ``K_m(x, z)`` against ``K_2 = <x, z>^2``.

    For every width ``m`` it draws ``draws`` independent pairs ``(A, G)`` of ``(m, d)`` standard
    Gaussian matrices (fresh ones for every width, so the widths are independent experiments) and
    evaluates :func:`sketch_kernel` on every pair ``(x_i, z_i)``.

    Parameters
    ----------
    x, z : torch.Tensor, shape ``(n_pairs, d)``
    ms : sequence of int
        Widths, each ``>= 1``.
    draws : int
        Draws per width, ``>= 2``.
    seed : int, default 0
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    max_rows : int, default 2**20
        At most this many sketch rows ``(draw, r)`` are held at once (memory bound).

    Returns
    -------
    SketchErrors

    Raises
    ------
    ValueError
        ``x`` or ``z`` not finite real 2-D arrays (float16 / bfloat16 refused), mismatched shapes,
        an empty ``ms`` or a width below 1, ``draws < 2``, or ``max_rows < 1``.

    References
    ----------
    Seed 001, Lemma B.2 and the remark after its proof (App. B.2.2).
    """
    dev = resolve_device(device, dtype=_F64)
    x, z = _f64(x, "x", 2, dev), _f64(z, "z", 2, dev)
    if x.shape != z.shape:
        raise ValueError(f"x and z must have the same shape; got {tuple(x.shape)}, {tuple(z.shape)}")
    ms = [_positive_int("m", m) for m in ms]
    if not ms:
        raise ValueError("ms must not be empty")
    draws = _positive_int("draws", draws)
    max_rows = _positive_int("max_rows", max_rows)
    if draws < 2:
        raise ValueError("draws must be at least 2 (standard errors need a spread)")
    d = x.shape[1]
    gen = _generator(seed)
    target = (x * z).sum(-1) ** 2  # (n,)
    var1 = sketch_variance(x, z)  # (n,)
    n_m, n = len(ms), x.shape[0]
    mean, mean_se, mse = (np.empty((n_m, n)) for _ in range(3))
    rms, se_log = np.empty(n_m), np.empty(n_m)
    for a, m in enumerate(ms):
        per_chunk = max(1, max_rows // m)
        vals = []
        for start in range(0, draws, per_chunk):
            b = min(per_chunk, draws - start)
            A = _randn(b, m, d, generator=gen, device=dev)
            G = _randn(b, m, d, generator=gen, device=dev)
            vals.append(sketch_kernel(x, z, A, G))  # (b, n)
        K = torch.cat(vals).cpu().numpy()  # (draws, n)
        err2 = (K - target.cpu().numpy()) ** 2  # (draws, n)
        mean[a] = K.mean(0)
        mean_se[a] = K.std(0, ddof=1) / math.sqrt(draws)
        mse[a] = err2.mean(0)
        per_draw = err2.mean(1)  # (draws,): the pairs share (A, G), so average within a draw first
        mu = per_draw.mean()
        rms[a] = math.sqrt(mu)
        se_log[a] = 0.5 * per_draw.std(ddof=1) / (mu * math.sqrt(draws))  # d log sqrt(mu) = d mu / (2 mu)
    ms_arr = np.asarray(ms, dtype=float)
    pred_mse = var1.cpu().numpy()[None, :] / ms_arr[:, None]
    return SketchErrors(ms=np.asarray(ms), rho=(x * z).sum(-1).cpu().numpy(), draws=draws, mean=mean,
                        mean_se=mean_se, mse=mse, predicted_mse=pred_mse, rms=rms, se_log_rms=se_log,
                        predicted_rms=np.sqrt(pred_mse.mean(1)))


@dataclass(frozen=True)
class LogLogFit:
    """Least-squares line ``log y = intercept + slope log x`` with the slope's standard error."""

    slope: float
    slope_se: float  # from the per-point standard errors of log y (independent points)
    intercept: float


def loglog_fit(x: ArrayLike, y: ArrayLike, se_log_y: ArrayLike) -> LogLogFit:
    """Ordinary least squares of ``log y`` on ``log x``, and the standard error of the slope.

    The points are independent Monte Carlo estimates with standard errors ``se_log_y`` (on the log
    scale), so ``Var(slope) = sum_j w_j^2 se_j^2`` with the OLS weights
    ``w_j = (u_j - mean u) / sum_k (u_k - mean u)^2``, ``u = log x``.

    Parameters
    ----------
    x, y, se_log_y : array-like, shape ``(n,)``, ``n >= 2``, ``x, y > 0``

    Returns
    -------
    LogLogFit

    Raises
    ------
    ValueError
        Fewer than two points, non-positive ``x`` or ``y``, a negative standard error, entries
        that are not finite real numbers (booleans and strings refused), or all ``x`` equal.
    """
    xa, v, s = real_array(x, "x"), real_array(y, "y"), real_array(se_log_y, "se_log_y")
    if xa.shape != v.shape or xa.shape != s.shape or xa.ndim != 1 or xa.size < 2:
        raise ValueError("x, y and se_log_y must be 1-D arrays of the same length >= 2")
    if not (np.all(xa > 0) and np.all(v > 0)):
        raise ValueError("x and y must be positive")
    if np.any(s < 0):
        raise ValueError("se_log_y must be >= 0 (standard errors)")
    u = np.log(xa)
    v = np.log(v)
    du = u - u.mean()
    sxx = float((du**2).sum())
    if sxx == 0:
        raise ValueError("all x are equal; the slope is undefined")
    w = du / sxx
    slope = float((w * v).sum())
    return LogLogFit(slope=slope, slope_se=float(math.sqrt((w**2 * s**2).sum())),
                     intercept=float(v.mean() - slope * u.mean()))
