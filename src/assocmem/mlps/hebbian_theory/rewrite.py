"""Theorem 3.1 (MLPs are Hebbians): a gated MLP is a whitened kernel Hebbian memory of its stored inputs.

A gated MLP ``MLP(x) = B phi(x)`` with ``phi(x) = (A x) * sigma(G x)`` (:class:`GatedMLP`,
:func:`gated_mlp`: identity, ReLU and SiLU gates) equals, for *every* input ``z``, the kernel
Hebbian memory ``H(z) = sum_t K(x_t, z) c_t`` over its stored inputs ``x_t``, with the whitened
kernel ``K(x, z) = phi(x)^T Sigma^{-1} phi(z)``, ``Sigma = (1/F) sum_t phi(x_t) phi(x_t)^T``, and the
codes ``c_t = MLP(x_t) / F`` -- provided ``Sigma`` is invertible. :func:`hebbian_rewrite` builds the
memory from the stored inputs and the MLP's outputs alone (:class:`HebbianRewrite`, with
``Sigma^{-1}`` or the pseudo-inverse), :func:`rewrite_errors` and :func:`rewrite_tolerance` compare
it with the MLP against a float64 rounding bound, and :func:`theorem31_study` runs the check on
random MLPs, on Algorithm 1's MLP and where ``Sigma`` is singular. Source: seed 001, Sec. 3.1
(Theorem 3.1), App. B.2.1 (Theorem B.1 and its proof), Algorithm 1 (App. B.2.3); Higham (2002) for
the tolerance. Used by chapter 11 ("MLPs are kernel Hebbians").

References
----------
Seed 001: R. Garcia et al., "MLPs are Hebbians: Constructing Efficient Fact-Storing MLPs for
Transformers" (2026): Sec. 3.1 (Theorem 3.1),
Sec. 4.1 (eqs. 7-8), App. B.2.1 (Theorem B.1), B.2.3 (Algorithm 1).
N. J. Higham (2002), *Accuracy and Stability of Numerical Algorithms*, 2nd ed. (Cholesky error bounds).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import torch
from torch import nn

from assocmem._checks import positive_int as _positive_int, seed_int as _seed
from assocmem.devices import resolve_device
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.linear.memory import LeastSquaresMemory, OuterProductMemory
from assocmem.mlps._checks import batch_input, check_finite_result, float_tensor
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.hebbian_theory._common import _EPS, _F64, _generator, _randn, unit_rows
from assocmem.mlps.margins import hebbian_readout
from assocmem.mlps.mlp.hebbian import hebbian_mlp

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
]


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
        From the constructor, on mismatched shapes, weights that are not finite 2-D tensors of one
        dtype (float16 / bfloat16 refused) or an unknown gate; from :meth:`features` and
        :meth:`forward`, on an input that is not a finite real tensor ``(..., d)`` (float16 /
        bfloat16 refused) or overflows the weights' dtype when cast to it.
    """

    def __init__(self, A: torch.Tensor, G: torch.Tensor, B: torch.Tensor, gate: str = "identity") -> None:
        super().__init__()
        A, G, B = (float_tensor(w, name, 2) for w, name in ((A, "A"), (G, "G"), (B, "B")))
        if len({A.dtype, G.dtype, B.dtype}) > 1:
            raise ValueError(f"A, G and B must share a dtype; got {A.dtype}, {G.dtype}, {B.dtype}")
        if A.dim() != 2 or A.shape != G.shape or B.dim() != 2 or B.shape[1] != A.shape[0]:
            raise ValueError(
                f"need A, G of shape (m, d) and B of shape (d_c, m); got {tuple(A.shape)}, "
                f"{tuple(G.shape)}, {tuple(B.shape)}"
            )
        if not isinstance(gate, str) or gate not in GATES:
            raise ValueError(f"unknown gate {gate!r}; expected one of {sorted(GATES)}")
        self.A = nn.Parameter(A, requires_grad=False)  # (m, d)
        self.G = nn.Parameter(G, requires_grad=False)  # (m, d)
        self.B = nn.Parameter(B, requires_grad=False)  # (d_c, m)
        self.gate = gate

    @classmethod
    def empty(cls, d: int, m: int, d_out: int | None = None, gate: str = "identity", *,
              dtype: torch.dtype | None = None, device: str | torch.device | None = None) -> "GatedMLP":
        """A module of the given shape with zero weights, to load a ``state_dict`` into.

        ``device="meta"`` (or a ``torch.device("meta")`` context, which ``device=None`` follows)
        allocates nothing; ``load_state_dict(saved, assign=True)`` then takes the saved weights
        and the saved gate.

        Raises
        ------
        ValueError
            If a width is not a positive integer, ``dtype`` is not float32 or float64, or the
            gate is unknown.
        """
        dtype = resolve_dtype(dtype)
        d, m = _positive_int("d", d), _positive_int("m", m)
        d_out = d if d_out is None else _positive_int("d_out", d_out)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"dtype must be a torch.dtype; got {dtype!r}")
        check_float_dtype(dtype, "dtype")
        A, G, B = (torch.zeros(shape, dtype=dtype, device=device) for shape in ((m, d), (m, d), (d_out, m)))
        return cls(A, G, B, gate=gate)

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the weights: the gate's name."""
        return {"gate": self.gate}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record; a ValueError unless it names a known gate."""
        if not isinstance(state, dict) or set(state) != {"gate"} or state["gate"] not in GATES:
            raise ValueError(f"the extra state of a GatedMLP must be {{'gate': one of {sorted(GATES)}}}; "
                             f"got {state!r}")
        self.gate = state["gate"]

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden activations ``phi(x) = (A x) * sigma(G x)``: ``(..., d) -> (..., m)``."""
        x = batch_input(x, self.A.shape[1], dtype=self.A.dtype)  # (..., d)
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
              device: str | torch.device | None = None) -> GatedMLP:
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
        Seeds one CPU generator that draws ``A``, then ``G``, then ``B`` (moved to ``device``
        afterwards: a seed gives the same MLP on every device).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

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
    dev = resolve_device(device, dtype=_F64)
    gen = _generator(seed)
    A = _randn(m, d, generator=gen, device=dev) / math.sqrt(d)
    G = _randn(m, d, generator=gen, device=dev) / math.sqrt(d)
    B = _randn(d_out, m, generator=gen, device=dev) / math.sqrt(m)
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
        """``F``, the number of stored inputs ``x_t`` (rows of :attr:`stored`): the facts whose
        codes the memory sums, and the ``F`` of ``Sigma = Phi^T Phi / F``."""
        return self.stored.shape[0]

    @property
    def width(self) -> int:
        """``m``, the MLP's hidden width: the length of a feature vector ``phi(x)`` (columns of
        :attr:`stored_features`), so ``Sigma`` is ``(m, m)``."""
        return self.stored_features.shape[1]

    def _phi(self, x, name: str) -> torch.Tensor:
        """Features ``(Q, m)`` of a batch of inputs ``(Q, d)``, checked finite."""
        x = batch_input(x, self.stored.shape[1], name)
        if x.dim() != 2:
            raise ValueError(f"{name} must be 2-D (Q, d); got shape {tuple(x.shape)}")
        return check_finite_result(self._features(x).to(_F64), f"the features of {name}")

    def kernel(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """``K(x_a, z_b) = phi(x_a)^T Sigma^{-1} phi(z_b)``, shape ``(n_x, n_z)``.

        Raises
        ------
        ValueError
            ``x`` or ``z`` that is not a finite real tensor ``(n, d)`` (float16 / bfloat16
            refused), or a kernel that overflows float64.
        """
        return check_finite_result(self._phi(x, "x") @ self._whiten(self._phi(z, "z")).T, "the kernel")

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        """``H(z) = sum_t K(x_t, z) c_t``: ``(Q, d) -> (Q, d_c)``.

        Raises
        ------
        ValueError
            ``z`` that is not a finite real tensor ``(Q, d)`` (float16 / bfloat16 refused), or
            reads that overflow float64.
        """
        gram = self.stored_features @ self._whiten(self._phi(z, "z")).T  # (F, Q)
        return hebbian_readout(gram, self.codes)  # (Q, d_c)


def hebbian_rewrite(model: Callable[[torch.Tensor], torch.Tensor], stored: torch.Tensor, *,
                    inverse: str = "solve",
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
        Unknown ``inverse``; no feature map; ``stored`` that is not a finite real 2-D tensor with
        at least one row (float16 / bfloat16 refused); features or MLP outputs of the stored
        inputs that are not finite or of the wrong shape; or, for ``"solve"``, a singular
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
    float_tensor(stored, "stored", 2, min_rows=1)
    with torch.no_grad():
        Phi = phi_fn(stored).to(_F64)  # (F, m)
        Y = model(stored).to(_F64)  # (F, d_c): y_t = MLP(x_t)
    if Phi.dim() != 2 or Y.dim() != 2 or Phi.shape[0] != stored.shape[0] or Y.shape[0] != stored.shape[0]:
        raise ValueError(f"features(stored) and model(stored) must be 2-D with {stored.shape[0]} rows; got "
                         f"{tuple(Phi.shape)}, {tuple(Y.shape)}")
    check_finite_result(Phi, "features(stored)")
    check_finite_result(Y, "model(stored)")
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


def rewrite_errors(model: Callable[[torch.Tensor], torch.Tensor], rewrite: HebbianRewrite,
                   queries: torch.Tensor) -> dict[str, float]:
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

    Raises
    ------
    ValueError
        Queries that are not a finite real tensor ``(Q, d)`` (float16 / bfloat16 refused), MLP
        outputs that are not finite, or an MLP that outputs only zeros on the stored inputs or the
        queries (the relative error is then undefined).
    """
    out = {}
    with torch.no_grad():
        for name, z in (("stored", rewrite.stored), ("fresh", queries)):
            h = rewrite(z)  # (Q, d_c); checks z
            y = check_finite_result(model(z).to(_F64), f"model({name} inputs)")  # (Q, d_c)
            scale = float(y.abs().max()) if y.numel() else 0.0
            if scale == 0.0:
                raise ValueError(f"the MLP's outputs on the {name} inputs are all zero (or there are none): "
                                 "the relative error max |H - MLP| / max |MLP| is undefined")
            out[name] = float((h - y).abs().max()) / scale
            out[f"scale_{name}"] = scale
    return out


def random_unit_inputs(n: int, d: int, seed: int = 0,
                       device: str | torch.device | None = None) -> torch.Tensor:
    """``n`` iid uniform points on the unit sphere of ``R^d``, shape ``(n, d)``, float64."""
    n, d = _positive_int("n", n), _positive_int("d", d)
    dev = resolve_device(device, dtype=_F64)
    return unit_rows(_randn(n, d, generator=_generator(seed), device=dev))


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


def theorem31_study(d: int, m: int, F: int, queries: int, seed: int = 0,
                    device: str | torch.device | None = None) -> pd.DataFrame:
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
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

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
    dev = resolve_device(device, dtype=_F64)
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
