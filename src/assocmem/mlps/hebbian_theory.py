"""The kernel-Hebbian reading of MLPs, checked: Theorem 3.1, Lemmas B.2, B.3 and B.34 of seed 001.

Four statements of *MLPs are Hebbians* are about exact algebra or simple probability, so each can be
checked directly on random instances:

* **Theorem 3.1 / B.1** (MLPs are Hebbians). A gated MLP ``MLP(x) = B phi(x)`` with
  ``phi(x) = (A x) * sigma(G x)`` equals, for *every* input ``z``, the kernel Hebbian memory
  ``H(z) = sum_t K(x_t, z) c_t`` over its stored inputs ``x_t``, with the whitened kernel
  ``K(x, z) = phi(x)^T Sigma^{-1} phi(z)``, ``Sigma = (1/F) sum_t phi(x_t) phi(x_t)^T``, and the codes
  ``c_t = MLP(x_t) / F`` -- provided ``Sigma`` is invertible. :class:`GatedMLP`, :func:`gated_mlp`
  (identity, ReLU and SiLU gates), :func:`hebbian_rewrite` and :func:`rewrite_errors`.
* **Lemma B.2** (bilinear features sketch ``K_2``). With ``A, G`` iid ``N(0, 1)`` of shape ``(m, d)``,
  ``g(x) = (A x) * (G x) / sqrt(m)`` gives ``E[<g(x), g(z)>] = <x, z>^2``; the error shrinks like
  ``m^{-1/2}``. :func:`sketch_kernel`, :func:`sketch_variance` (the exact variance, from Isserlis'
  theorem), :func:`sketch_error` and :func:`loglog_fit`.
* **Lemma B.3** (whitening minimises ``||K_M||_F^2``). Among PSD preconditioners ``M`` with
  ``tr(M Sigma) = m``, ``M = Sigma^{-1}`` minimises ``||Phi M Phi^T||_F^2``, and the minimum is
  ``F^2 m``. :func:`kernel_energy`, :func:`whitened_kernel_energy`, :func:`random_preconditioners`
  and :func:`preconditioner_experiment`.
* **Lemma B.34** (Welch / Frobenius). A PSD kernel of rank at most ``m`` has
  ``||K||_F^2 >= tr(K)^2 / m`` and hence ``E_col >= (tr(K)^2 / m - sum_i K_ii^2) / F``; equality in the
  first holds exactly for tight frames. :func:`welch_frobenius_bound`, :func:`random_rank_m_kernels`,
  :func:`harmonic_frame` and :func:`simplex_etf`.

Conventions
-----------
Rows throughout, as in seed 001: stored inputs (keys) are ``(F, d)``, the feature matrix ``Phi`` is
``(F, m)`` with row ``t`` equal to ``phi(x_t)``, readouts are ``(d_c, m)``, Gram matrices are
``(F, Q)`` with entry ``[t, i] = K(x_t, z_i)``. Everything is float64.

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): Sec. 3.1 (Theorem 3.1), Sec. 4.1 (eqs. 7-8), App. B.2.1 (Theorem B.1),
B.2.2 (Lemma B.2), B.2.3 (Algorithm 1), B.2.4 (eqs. 12-16, Lemma B.3), B.8.6 (Definition B.33,
Lemma B.34).
L. Isserlis (1918), on the moments of the normal distribution (fourth moments in Lemma B.2's variance).
L. R. Welch (1974), "Lower bounds on the maximum cross correlation of signals".
N. J. Higham (2002), *Accuracy and Stability of Numerical Algorithms*, 2nd ed. (Cholesky error bounds).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from assocmem._checks import lookup, positive_int as _positive_int, seed_int as _seed
from assocmem.devices import resolve_device
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.margins import hebbian_readout
from assocmem.linear.memory import LeastSquaresMemory, OuterProductMemory
from assocmem.mlps.mlp import hebbian_mlp

__all__ = [
    "GATES",
    "GatedMLP",
    "gated_mlp",
    "HebbianRewrite",
    "hebbian_rewrite",
    "rewrite_errors",
    "rewrite_tolerance",
    "random_unit_inputs",
    "theorem31_study",
    "unit_rows",
    "pair_with_overlap",
    "overlap_pairs",
    "bonferroni_z",
    "sketch_kernel",
    "sketch_variance",
    "SketchErrors",
    "sketch_error",
    "LogLogFit",
    "loglog_fit",
    "feature_covariance",
    "kernel_energy",
    "kernel_energy_reference",
    "whitened_kernel_energy",
    "key_crowding",
    "normalise_preconditioner",
    "random_preconditioners",
    "preconditioner_experiment",
    "WelchFrobenius",
    "welch_frobenius_bound",
    "harmonic_frame",
    "simplex_etf",
    "random_rank_m_kernels",
    "welch_study",
    "HebbianTheoryPreset",
    "PRESETS",
    "get_preset",
]

_F64 = torch.float64
_EPS = float(torch.finfo(_F64).eps)


# ----------------------------------------------------------------------------------------------
# presets


@dataclass(frozen=True)
class HebbianTheoryPreset:
    """Sizes of the experiments of the chapter "MLPs are kernel Hebbians"."""

    d: int  # key dimension of the Theorem 3.1 check
    m: int  # hidden width of the Theorem 3.1 check (m <= F and m <= d(d+1)/2 keep Sigma invertible)
    F: int  # number of stored inputs of the Theorem 3.1 check
    queries: int  # fresh queries on which MLP and Hebbian rewrite are compared
    sketch_d: int  # dimension of the (x, z) pairs of the Lemma B.2 experiment
    sketch_ms: tuple[int, ...]  # feature widths m of the Lemma B.2 experiment
    sketch_draws: int  # independent (A, G) draws per width
    precond_d: int  # key dimension of the Lemma B.3 experiment
    precond_F: int  # stored keys of the Lemma B.3 experiment
    precond_m: int  # feature width of the Lemma B.3 experiment
    precond_n: int  # random preconditioners per family
    welch_F: int  # stored items of the Lemma B.34 kernels
    welch_ms: tuple[int, ...]  # ranks m of the Lemma B.34 kernels
    welch_n: int  # random kernels per (family, m)


#: ``"quick"`` runs in the book and CI (seconds on two cores); ``"full"`` has larger sizes and five times
#: the Monte Carlo draws (minutes on a CPU).
PRESETS: dict[str, HebbianTheoryPreset] = {
    "quick": HebbianTheoryPreset(
        d=32, m=64, F=256, queries=256,
        sketch_d=16, sketch_ms=(4, 8, 16, 32, 64, 128, 256, 512, 1024), sketch_draws=400,
        precond_d=16, precond_F=256, precond_m=64, precond_n=250,
        welch_F=128, welch_ms=(8, 16, 32, 64), welch_n=12,
    ),
    "full": HebbianTheoryPreset(
        d=64, m=256, F=1024, queries=1024,
        sketch_d=64, sketch_ms=(4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
        sketch_draws=2000,
        precond_d=32, precond_F=1024, precond_m=256, precond_n=1000,
        welch_F=512, welch_ms=(8, 16, 32, 64, 128, 256), welch_n=30,
    ),
}


def get_preset(name: str) -> HebbianTheoryPreset:
    """The preset called ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`PRESETS` (the message lists them).
    """
    return lookup(PRESETS, name)


# ----------------------------------------------------------------------------------------------
# validation helpers


def _f64(x, name: str, ndim: int | None = None, device=None) -> torch.Tensor:
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x, dtype=np.float64))
    t = t.to(dtype=_F64, device=device if device is not None else t.device)
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} has non-finite entries")
    return t


def _generator(seed: int, device: torch.device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(_seed(seed))
    return g


# ----------------------------------------------------------------------------------------------
# Theorem 3.1: gated MLPs and their Hebbian rewrite

#: The gates ``sigma`` of ``phi(x) = (A x) * sigma(G x)``: identity (the paper's bilinear MLP), ReLU, SiLU.
GATES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "identity": lambda u: u,
    "relu": torch.relu,
    "silu": nn.functional.silu,
}


class GatedMLP(nn.Module):
    """A gated MLP without biases, ``MLP(x) = B ((A x) * sigma(G x))`` (seed 001, eq. 4).

    Parameters
    ----------
    A, G : torch.Tensor, shape ``(m, d)``
        Value-branch and gate-branch projections.
    B : torch.Tensor, shape ``(d_c, m)``
        Readout.
    gate : {"identity", "relu", "silu"}
        The gate nonlinearity ``sigma``. ``"identity"`` is the bilinear MLP of Sec. 4.1.

    Raises
    ------
    ValueError
        Mismatched shapes or an unknown gate.
    """

    def __init__(self, A: torch.Tensor, G: torch.Tensor, B: torch.Tensor, gate: str = "identity") -> None:
        super().__init__()
        if A.dim() != 2 or A.shape != G.shape or B.dim() != 2 or B.shape[1] != A.shape[0]:
            raise ValueError(
                f"need A, G of shape (m, d) and B of shape (d_c, m); got {tuple(A.shape)}, "
                f"{tuple(G.shape)}, {tuple(B.shape)}"
            )
        if gate not in GATES:
            raise ValueError(f"unknown gate {gate!r}; expected one of {sorted(GATES)}")
        self.A = nn.Parameter(A, requires_grad=False)  # (m, d)
        self.G = nn.Parameter(G, requires_grad=False)  # (m, d)
        self.B = nn.Parameter(B, requires_grad=False)  # (d_c, m)
        self.gate = gate

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden activations ``phi(x) = (A x) * sigma(G x)``: ``(..., d) -> (..., m)``."""
        x = x.to(self.A.dtype)  # (..., d)
        return (x @ self.A.T) * GATES[self.gate](x @ self.G.T)  # (..., m)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``MLP(x) = B phi(x)``: ``(..., d) -> (..., d_c)``."""
        return self.features(x) @ self.B.T  # (..., d_c)

    @property
    def num_parameters(self) -> int:
        """``2 m d + d_c m``: every entry of ``A``, ``G`` and ``B`` (no biases)."""
        m, d = self.A.shape
        return 2 * m * d + self.B.shape[0] * m

    def extra_repr(self) -> str:
        m, d = self.A.shape
        return f"d={d}, m={m}, d_out={self.B.shape[0]}, gate={self.gate!r}"


def gated_mlp(d: int, m: int, d_out: int | None = None, gate: str = "relu", seed: int = 0,
              device="cpu") -> GatedMLP:
    """A random gated MLP: ``A, G`` iid ``N(0, 1/d)``, ``B`` iid ``N(0, 1/m)``, float64.

    The scales only keep activations of order one for unit inputs; Theorem 3.1 holds for any
    weights.

    Parameters
    ----------
    d, m : int
        Input and hidden widths.
    d_out : int, optional
        Output width ``d_c``; defaults to ``d``.
    gate : {"identity", "relu", "silu"}, default "relu"
    seed : int, default 0
        Seeds one generator that draws ``A``, then ``G``, then ``B``.
    device : str or torch.device, default "cpu"

    Returns
    -------
    GatedMLP

    Raises
    ------
    ValueError
        Non-positive sizes, an unknown gate or a non-integer seed.
    """
    d, m = _positive_int("d", d), _positive_int("m", m)
    d_out = d if d_out is None else _positive_int("d_out", d_out)
    dev = resolve_device(device)
    gen = _generator(seed, dev)
    A = torch.randn(m, d, generator=gen, dtype=_F64, device=dev) / math.sqrt(d)
    G = torch.randn(m, d, generator=gen, dtype=_F64, device=dev) / math.sqrt(d)
    B = torch.randn(d_out, m, generator=gen, dtype=_F64, device=dev) / math.sqrt(m)
    return GatedMLP(A, G, B, gate=gate)


@dataclass
class HebbianRewrite:
    """The whitened kernel Hebbian memory of Theorem B.1, ``H(z) = sum_t K(x_t, z) c_t``.

    Built by :func:`hebbian_rewrite`. With ``Phi`` the ``(F, m)`` stored features and
    ``Sigma = Phi^T Phi / F``, the kernel is ``K(x, z) = phi(x)^T Sigma^{-1} phi(z)`` (``inverse="solve"``,
    by Cholesky) or ``phi(x)^T Sigma^+ phi(z)`` (``inverse="pinv"``, the Moore-Penrose pseudo-inverse,
    from the SVD of ``Phi``), and the codes are ``c_t = MLP(x_t) / F`` (the theorem's ``1/F``
    moved into the codes).

    Attributes
    ----------
    stored : torch.Tensor, shape ``(F, d)``
        The stored inputs ``x_t``.
    stored_features : torch.Tensor, shape ``(F, m)``
        ``Phi``.
    codes : torch.Tensor, shape ``(F, d_c)``
        ``c_t = MLP(x_t) / F``.
    sigma : torch.Tensor, shape ``(m, m)``
        The empirical feature covariance ``Sigma``.
    inverse : {"solve", "pinv"}
    cond : float
        Condition number of ``Sigma`` (``inf`` when singular); for ``pinv``, of its retained part.
    rank : int
        Numerical rank of ``Phi`` (singular values above ``max(F, m) eps s_max``).
    """

    stored: torch.Tensor
    stored_features: torch.Tensor
    codes: torch.Tensor
    sigma: torch.Tensor
    inverse: str
    cond: float
    rank: int
    _features: Callable[[torch.Tensor], torch.Tensor]
    _whiten: Callable[[torch.Tensor], torch.Tensor]

    @property
    def num_stored(self) -> int:
        """``F``."""
        return self.stored.shape[0]

    @property
    def width(self) -> int:
        """``m``."""
        return self.stored_features.shape[1]

    def kernel(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """``K(x_a, z_b) = phi(x_a)^T Sigma^{-1} phi(z_b)``, shape ``(n_x, n_z)``."""
        return self._features(x).to(_F64) @ self._whiten(self._features(z).to(_F64)).T  # (n_x, n_z)

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        """``H(z) = sum_t K(x_t, z) c_t``: ``(Q, d) -> (Q, d_c)``."""
        gram = self.stored_features @ self._whiten(self._features(z).to(_F64)).T  # (F, Q)
        return hebbian_readout(gram, self.codes)  # (Q, d_c)


def hebbian_rewrite(model, stored: torch.Tensor, *, inverse: str = "solve",
                    features: Callable[[torch.Tensor], torch.Tensor] | None = None) -> HebbianRewrite:
    """Rewrite an MLP ``x -> B phi(x)`` as the whitened kernel Hebbian memory of Theorem B.1.

    Only the stored inputs, the feature map and the MLP's outputs on the stored inputs are used;
    the readout ``B`` is never read. That the rewrite then agrees with the MLP at *other* inputs is
    the content of the theorem.

    Parameters
    ----------
    model : callable
        ``model(x: (Q, d)) -> (Q, d_c)``, linear in its features (any :class:`GatedMLP`, or
        :class:`assocmem.mlps.mlp.BilinearMLP`).
    stored : torch.Tensor, shape ``(F, d)``
        The stored inputs ``x_t``.
    inverse : {"solve", "pinv"}, default "solve"
        ``"solve"``: the theorem as stated, ``Sigma^{-1}`` by Cholesky (raises if ``Sigma`` is
        numerically singular). ``"pinv"``: the pseudo-inverse ``Sigma^+``, defined for every ``F``
        and ``m``; it reproduces the MLP on the stored inputs, and elsewhere only on the span of the
        stored features.
    features : callable, optional
        The feature map ``phi``; defaults to ``model.features``.

    Returns
    -------
    HebbianRewrite

    Raises
    ------
    ValueError
        Unknown ``inverse``; no feature map; ``stored`` not 2-D; or, for ``"solve"``, a singular
        ``Sigma`` (it needs ``m <= F``, and for the bilinear gate also ``m <= d(d+1)/2``, since
        ``(A x) * (G x)`` lies in the ``d(d+1)/2``-dimensional space of quadratic forms).

    References
    ----------
    Seed 001, Sec. 3.1 (Theorem 3.1), App. B.2.1 (Theorem B.1 and its proof).
    """
    if inverse not in ("solve", "pinv"):
        raise ValueError(f"inverse must be 'solve' or 'pinv'; got {inverse!r}")
    phi_fn = features if features is not None else getattr(model, "features", None)
    if not callable(phi_fn):
        raise ValueError("pass features= or a model with a features(x) method")
    if not isinstance(stored, torch.Tensor) or stored.dim() != 2:
        raise ValueError("stored must be a 2-D tensor (F, d)")
    with torch.no_grad():
        Phi = phi_fn(stored).to(_F64)  # (F, m)
        Y = model(stored).to(_F64)  # (F, d_c): y_t = MLP(x_t)
    F, m = Phi.shape
    sigma = Phi.T @ Phi / F  # (m, m)
    s = torch.linalg.svdvals(Phi)  # (min(F, m),)
    cut = max(F, m) * _EPS * float(s[0]) if s.numel() else 0.0
    rank = int((s > cut).sum())
    if inverse == "solve":
        L, info = torch.linalg.cholesky_ex(sigma)
        ev = torch.linalg.eigvalsh(sigma)
        cond = float(ev[-1] / ev[0]) if float(ev[0]) > 0 else math.inf
        if int(info) != 0 or rank < m or not cond < 1.0 / (m * _EPS):
            raise ValueError(
                f"Sigma is singular (rank Phi = {rank} < m = {m}; F = {F}): Theorem B.1 needs an "
                "invertible feature covariance, i.e. m <= F and features that span R^m (for the "
                "bilinear gate m <= d(d+1)/2). Use inverse='pinv'."
            )

        def whiten(P: torch.Tensor) -> torch.Tensor:  # rows p -> Sigma^{-1} p
            return torch.cholesky_solve(P.T, L).T  # (Q, m)
    else:
        U, S, Vh = torch.linalg.svd(Phi, full_matrices=False)  # Phi = U S Vh
        keep = S > cut
        Vk, Sk = Vh[keep].T, S[keep]  # (m, r), (r,)
        cond = float((Sk[0] / Sk[-1]) ** 2) if Sk.numel() else math.inf

        def whiten(P: torch.Tensor) -> torch.Tensor:  # rows p -> Sigma^+ p = F V S^-2 V^T p
            return F * ((P @ Vk) / Sk**2) @ Vk.T  # (Q, m)

    return HebbianRewrite(stored=stored.to(_F64), stored_features=Phi, codes=Y / F, sigma=sigma,
                          inverse=inverse, cond=cond, rank=rank, _features=phi_fn, _whiten=whiten)


def rewrite_tolerance(rewrite: HebbianRewrite) -> float:
    """Rounding tolerance for ``max |H(z) - MLP(z)| / max |MLP(z)|`` in float64.

    ``(3 m + F) u kappa(Sigma)``: a Cholesky solve with an ``m x m`` matrix has a relative forward
    error of at most about ``3 m u kappa`` (Higham 2002, Thm 10.4 with the usual
    ``kappa``-amplification), and forming ``Sigma`` and the sums over ``F`` stored items adds
    ``F u kappa`` at most. ``u`` is the float64 unit roundoff ``2^-53``; ``eps = 2u`` is used, a
    factor two of headroom. A worst-case bound: observed errors are orders of magnitude smaller.
    """
    return (3 * rewrite.width + rewrite.num_stored) * _EPS * rewrite.cond


def rewrite_errors(model, rewrite: HebbianRewrite, queries: torch.Tensor) -> dict[str, float]:
    """How far the Hebbian rewrite is from the MLP, on the stored inputs and on fresh queries.

    Parameters
    ----------
    model : callable
        The MLP, ``(Q, d) -> (Q, d_c)``.
    rewrite : HebbianRewrite
    queries : torch.Tensor, shape ``(Q, d)``
        Inputs not among the stored ones.

    Returns
    -------
    dict
        ``stored`` and ``fresh``: ``max |H(z) - MLP(z)| / max |MLP(z)|`` over the stored inputs and
        over the queries; ``scale_stored``, ``scale_fresh``: the ``max |MLP(z)|`` used.
    """
    out = {}
    with torch.no_grad():
        for name, z in (("stored", rewrite.stored), ("fresh", queries)):
            y = model(z).to(_F64)  # (Q, d_c)
            h = rewrite(z)  # (Q, d_c)
            scale = float(y.abs().max())
            out[name] = float((h - y).abs().max()) / scale
            out[f"scale_{name}"] = scale
    return out


def random_unit_inputs(n: int, d: int, seed: int = 0, device="cpu") -> torch.Tensor:
    """``n`` iid uniform points on the unit sphere of ``R^d``, shape ``(n, d)``, float64."""
    n, d = _positive_int("n", n), _positive_int("d", d)
    dev = resolve_device(device)
    return unit_rows(torch.randn(n, d, generator=_generator(seed, dev), dtype=_F64, device=dev))


def _rewrite_row(model, stored, queries, inverse, **info) -> dict:
    rw = hebbian_rewrite(model, stored, inverse=inverse)
    err = rewrite_errors(model, rw, queries)
    row = dict(info, F=rw.num_stored, m=rw.width, rank=rw.rank, inverse=inverse, cond=rw.cond,
               err_stored=err["stored"], err_fresh=err["fresh"], tol=rewrite_tolerance(rw))
    if inverse == "solve":  # the two Part I readings of the proof, checked on the readout B
        Phi, Y = rw.stored_features, rw.codes * rw.num_stored  # (F, m), (F, d_c)
        B = model.B.detach().to(_F64)  # (d_c, m)
        ls = LeastSquaresMemory(rw.width, B.shape[0], device=Phi.device).write(Phi, Y).S  # V K^+
        hebb = OuterProductMemory(rw.width, B.shape[0], device=Phi.device).write(Phi, Y / rw.num_stored).S
        row["err_ls_memory"] = float((ls - B).abs().max() / B.abs().max())
        row["err_hebbian_step"] = float((hebb - B @ rw.sigma).abs().max() / hebb.abs().max())
    return row


def theorem31_study(d: int, m: int, F: int, queries: int, seed: int = 0, device="cpu") -> pd.DataFrame:
    """Theorem 3.1 on random gated MLPs, and what happens when ``Sigma`` is singular.

    Cases (one row each):

    * ``"theorem"`` (every gate): a random :func:`gated_mlp` of width ``m <= F``; ``Sigma`` is
      invertible and the rewrite uses ``Sigma^{-1}``. Also checks the two steps of the proof read
      as Part I memories: the Hebbian weight ``W = (1/F) sum_t y_t phi(x_t)^T``
      (:class:`~assocmem.linear.memory.OuterProductMemory` in feature space) equals ``B Sigma``
      (``err_hebbian_step``), and ``B`` equals the least-squares memory ``V K^+`` with keys
      ``phi(x_t)`` and values ``y_t`` (:class:`~assocmem.linear.memory.LeastSquaresMemory`,
      ``err_ls_memory``).
    * ``"m > F, random B"`` (every gate): width ``2F``; ``Sigma`` is singular, the rewrite uses
      ``Sigma^+``: exact on the stored inputs only (for the identity gate this needs
      ``F < d(d+1)/2``; otherwise the stored features already span the feature range, as in the
      last case).
    * ``"m > F, Algorithm 1 B0"``: the unwhitened sketched-``K_2`` MLP of Algorithm 1
      (:func:`assocmem.mlps.mlp.hebbian_mlp`) at width ``2F`` on a tied fact set: its readout
      ``B0 = C_f^T Phi / F`` lies in the span of the stored features, so ``Sigma^+`` is exact
      everywhere.
    * ``"m > d(d+1)/2, bilinear"``: identity gate with ``d' (d'+1)/2 < m <= F``: ``Sigma`` is
      singular whatever ``F`` (the features are quadratic forms), the stored features span the
      whole feature range, so ``Sigma^+`` is exact everywhere.

    Parameters
    ----------
    d, m, F : int
        Key dimension, hidden width and number of stored inputs (``m <= F``, ``m <= d(d+1)/2``).
    queries : int
        Fresh unit-norm queries.
    seed : int, default 0
    device : str or torch.device, default "cpu"

    Returns
    -------
    pandas.DataFrame
        Columns ``gate, case, F, m, d, rank, inverse, cond, err_stored, err_fresh, tol`` and, for
        the theorem rows, ``err_ls_memory, err_hebbian_step``. Errors are
        ``max |H - MLP| / max |MLP|`` (or ``/ max |B|``); ``tol`` is :func:`rewrite_tolerance`.

    Raises
    ------
    ValueError
        ``m > F`` or ``m > d(d+1)/2``.

    References
    ----------
    Seed 001, Sec. 3.1 (Theorem 3.1), App. B.2.1 (Theorem B.1), Algorithm 1 (App. B.2.3).
    """
    d, m, F, queries = (_positive_int(k, v) for k, v in (("d", d), ("m", m), ("F", F), ("queries", queries)))
    if m > F or m > d * (d + 1) // 2:
        raise ValueError(f"need m <= F and m <= d(d+1)/2 for the theorem rows; got d={d}, m={m}, F={F}")
    dev = resolve_device(device)
    seed = _seed(seed)
    X = random_unit_inputs(F, d, seed, dev)  # (F, d) stored inputs
    Z = random_unit_inputs(queries, d, seed + 1, dev)  # (Q, d) fresh queries
    rows = []
    for gate in GATES:
        rows.append(_rewrite_row(gated_mlp(d, m, gate=gate, seed=seed + 2, device=dev), X, Z, "solve",
                                 gate=gate, case="theorem", d=d))
    for gate in GATES:
        rows.append(_rewrite_row(gated_mlp(d, 2 * F, gate=gate, seed=seed + 3, device=dev), X, Z, "pinv",
                                 gate=gate, case="m > F, random B", d=d))
    facts = make_fact_set(F, d, tied=True, seed=seed + 4).to(dev)
    alg1 = hebbian_mlp(facts, 2 * F, whitening="none", seed=seed + 5)
    rows.append(_rewrite_row(alg1, facts.keys, Z, "pinv", gate="identity", case="m > F, Algorithm 1 B0", d=d))
    d_small = max(2, int((math.isqrt(8 * m + 1) - 1) // 2))  # largest d' with d'(d'+1)/2 <= m
    while d_small * (d_small + 1) // 2 >= m and d_small > 2:
        d_small -= 1
    Xs = random_unit_inputs(F, d_small, seed + 6, dev)
    Zs = random_unit_inputs(queries, d_small, seed + 7, dev)
    rows.append(_rewrite_row(gated_mlp(d_small, m, d_out=d, gate="identity", seed=seed + 8, device=dev), Xs, Zs,
                             "pinv", gate="identity", case="m > d(d+1)/2, bilinear", d=d_small))
    cols = ["gate", "case", "F", "m", "d", "rank", "inverse", "cond", "err_stored", "err_fresh", "tol",
            "err_ls_memory", "err_hebbian_step"]
    return pd.DataFrame(rows).reindex(columns=cols)


# ----------------------------------------------------------------------------------------------
# Lemma B.2: the bilinear sketch of K_2


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit Euclidean norm."""
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def pair_with_overlap(d: int, rho: float, seed: int = 0, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Two unit vectors ``x, z`` in ``R^d`` with ``<x, z> = rho`` exactly (up to rounding).

    Raises
    ------
    ValueError
        ``d < 2`` or ``|rho| > 1``.
    """
    d = _positive_int("d", d)
    if d < 2 or not -1.0 <= float(rho) <= 1.0:
        raise ValueError(f"need d >= 2 and |rho| <= 1; got d={d}, rho={rho!r}")
    dev = resolve_device(device)
    Q, _ = torch.linalg.qr(torch.randn(d, 2, generator=_generator(seed, dev), dtype=_F64, device=dev))
    e1, e2 = Q[:, 0], Q[:, 1]  # orthonormal
    return e1, rho * e1 + math.sqrt(max(0.0, 1.0 - rho * rho)) * e2


def overlap_pairs(d: int, rhos: Sequence[float], seed: int = 0, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Stacked :func:`pair_with_overlap` pairs: ``x, z`` of shape ``(len(rhos), d)`` with ``<x_i, z_i> = rhos[i]``."""
    pairs = [pair_with_overlap(d, r, seed=_seed(seed) + i, device=device) for i, r in enumerate(rhos)]
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def bonferroni_z(n_tests: int, alpha: float = 1e-3) -> float:
    """Two-sided z threshold so that ``n_tests`` Gaussian z-scores all pass with probability ``>= 1 - alpha``.

    ``Phi^{-1}(1 - alpha / (2 n))``: 3.29 for one test at ``alpha = 10^-3``, 4.26 for 45 tests.
    """
    n_tests = _positive_int("n_tests", n_tests)
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

    References
    ----------
    Seed 001, Lemma B.2 (App. B.2.2) and eq. 8.
    """
    m = A.shape[-2]
    ax, az = A @ x.T, A @ z.T  # (..., m, n)
    gx, gz = G @ x.T, G @ z.T  # (..., m, n)
    return (ax * az * gx * gz).sum(-2) / m  # (..., n)


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
    """
    rho = (x * z).sum(-1)
    nn2 = (x * x).sum(-1) * (z * z).sum(-1)
    return (nn2 + 2 * rho**2) ** 2 - rho**4


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
                 device="cpu", max_rows: int = 2**20) -> SketchErrors:
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
    device : str or torch.device, default "cpu"
    max_rows : int, default 2**20
        At most this many sketch rows ``(draw, r)`` are held at once (memory bound).

    Returns
    -------
    SketchErrors

    Raises
    ------
    ValueError
        Mismatched shapes, an empty ``ms``, ``draws < 2``.

    References
    ----------
    Seed 001, Lemma B.2 and the remark after its proof (App. B.2.2).
    """
    dev = resolve_device(device)
    x, z = _f64(x, "x", 2, dev), _f64(z, "z", 2, dev)
    if x.shape != z.shape:
        raise ValueError(f"x and z must have the same shape; got {tuple(x.shape)}, {tuple(z.shape)}")
    ms = [_positive_int("m", m) for m in ms]
    if not ms:
        raise ValueError("ms must not be empty")
    draws = _positive_int("draws", draws)
    if draws < 2:
        raise ValueError("draws must be at least 2 (standard errors need a spread)")
    d = x.shape[1]
    gen = _generator(seed, dev)
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
            A = torch.randn(b, m, d, generator=gen, dtype=_F64, device=dev)
            G = torch.randn(b, m, d, generator=gen, dtype=_F64, device=dev)
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


def loglog_fit(x, y, se_log_y) -> LogLogFit:
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
        Fewer than two points, non-positive ``x`` or ``y``, or all ``x`` equal.
    """
    u, v = np.log(np.asarray(x, dtype=float)), np.asarray(y, dtype=float)
    s = np.asarray(se_log_y, dtype=float)
    if u.shape != v.shape or u.shape != s.shape or u.size < 2:
        raise ValueError("x, y and se_log_y must be 1-D arrays of the same length >= 2")
    if not (np.all(np.isfinite(u)) and np.all(v > 0)):
        raise ValueError("x and y must be positive")
    v = np.log(v)
    du = u - u.mean()
    sxx = float((du**2).sum())
    if sxx == 0:
        raise ValueError("all x are equal; the slope is undefined")
    w = du / sxx
    slope = float((w * v).sum())
    return LogLogFit(slope=slope, slope_se=float(math.sqrt((w**2 * s**2).sum())),
                     intercept=float(v.mean() - slope * u.mean()))


# ----------------------------------------------------------------------------------------------
# Lemma B.3: whitening minimises ||K_M||_F^2


def feature_covariance(Phi: torch.Tensor) -> torch.Tensor:
    """``Sigma = Phi^T Phi / F`` (eq. 12), shape ``(m, m)``, for ``Phi`` of shape ``(F, m)``."""
    Phi = _f64(Phi, "Phi", 2)
    return Phi.T @ Phi / Phi.shape[0]


def kernel_energy_reference(Phi: torch.Tensor, M: torch.Tensor) -> float:
    """``||Phi M Phi^T||_F^2`` computed from the ``F x F`` kernel itself (reference form)."""
    Phi, M = _f64(Phi, "Phi", 2), _f64(M, "M", 2)
    K = Phi @ M @ Phi.T  # (F, F)
    return float((K * K).sum())


def kernel_energy(sigma: torch.Tensor, M: torch.Tensor, F: int) -> torch.Tensor:
    """``||K_M||_F^2 = F^2 tr(M Sigma M Sigma)`` without forming the ``F x F`` kernel.

    ``||Phi M Phi^T||_F^2 = tr(M Phi^T Phi M Phi^T Phi)`` and ``Phi^T Phi = F Sigma``.

    Parameters
    ----------
    sigma : torch.Tensor, shape ``(m, m)``
    M : torch.Tensor, shape ``(..., m, m)``
        One preconditioner or a batch of them.
    F : int

    Returns
    -------
    torch.Tensor, shape ``(...)``
    """
    MS = M @ sigma  # (..., m, m)
    return F * F * (MS * MS.transpose(-1, -2)).sum((-1, -2))  # tr(MS MS)


def whitened_kernel_energy(Phi: torch.Tensor) -> float:
    """``||Phi Sigma^{-1} Phi^T||_F^2`` (full whitening), which equals ``F^2 m`` when ``Sigma`` is invertible.

    Computed from the ``F x F`` kernel, with ``Sigma^{-1} Phi^T`` by Cholesky.

    Raises
    ------
    ValueError
        ``Sigma`` is singular (``rank Phi < m``).

    References
    ----------
    Seed 001, App. B.2.4, Lemma B.3.
    """
    Phi = _f64(Phi, "Phi", 2)
    sigma = feature_covariance(Phi)
    L, info = torch.linalg.cholesky_ex(sigma)
    if int(info) != 0:
        raise ValueError("Sigma is singular; full whitening needs rank Phi = m")
    K = Phi @ torch.cholesky_solve(Phi.T, L)  # (F, F)
    return float((K * K).sum())


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
    torch.Tensor, shape ``(...)``

    References
    ----------
    Seed 001, App. B.2.4 (the key-crowding statistic before eq. 15), Definition B.10.
    """
    F = Phi.shape[0]
    sigma = feature_covariance(Phi) if sigma is None else sigma
    col = F * ((Phi @ (M @ sigma @ M)) * Phi).sum(-1)  # (..., F): sum_t K_ti^2
    diag = ((Phi @ M) * Phi).sum(-1)  # (..., F): K_ii
    return (col - diag**2).max(-1).values


def normalise_preconditioner(M: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Scale ``M`` so that ``tr(M Sigma) = m`` (eq. 16: the average self-kernel is fixed)."""
    m = sigma.shape[0]
    t = (M * sigma.T).sum((-1, -2))  # tr(M Sigma), (...)
    return M * (m / t)[..., None, None]


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
    """
    sigma = _f64(sigma, "sigma", 2)
    n = _positive_int("n", n)
    m, dev = sigma.shape[0], sigma.device
    gen = _generator(seed, dev)
    rng = np.random.default_rng(_seed(seed))
    out = {}
    ks = rng.integers(m, 4 * m + 1, size=n)
    out["wishart"] = torch.stack([
        (W := torch.randn(m, int(k), generator=gen, dtype=_F64, device=dev)) @ W.T / int(k) for k in ks
    ])
    s = torch.as_tensor(np.exp(rng.uniform(math.log(0.1), math.log(3.0), size=n)), dtype=_F64, device=dev)
    xi = torch.randn(n, m, generator=gen, dtype=_F64, device=dev)
    out["diagonal"] = torch.diag_embed(torch.exp(s[:, None] * xi))
    ev, U = torch.linalg.eigh(sigma)
    p = torch.as_tensor(rng.uniform(0.0, 1.0, size=n), dtype=_F64, device=dev)
    out["partial"] = (U[None] * ev[None, None, :] ** (-p[:, None, None])) @ U.T[None]
    eps = torch.as_tensor(np.exp(rng.uniform(math.log(1e-3), 0.0, size=n)), dtype=_F64, device=dev)
    S = torch.randn(n, m, m, generator=gen, dtype=_F64, device=dev)
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

    References
    ----------
    Seed 001, App. B.2.4 (eqs. 15-16, Lemma B.3), Algorithm 1 lines 6-19.
    """
    Phi = _f64(Phi, "Phi", 2)
    F, m = Phi.shape
    sigma = feature_covariance(Phi)
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


# ----------------------------------------------------------------------------------------------
# Lemma B.34: Welch / Frobenius


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
        Not square, ``F < 2``, or an ``m`` below the numerical rank of ``K``.

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
    gen = _generator(seed, torch.device("cpu"))
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
