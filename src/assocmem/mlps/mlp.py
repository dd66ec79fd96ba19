"""Fact-storing MLPs: closed-form Hebbian constructions, the NTK baseline and gradient descent.

Every memory here maps a key ``x`` in ``R^d`` to an output in ``R^{d_c}`` that is decoded by inner
products with the value rows: fact ``i`` is stored when ``argmax_j <MLP(k_i), v_j> = f(i)``
(seed 001, Definition 2.1). Each is a :class:`FactMLP` (a ``torch.nn.Module``) with a
``num_parameters`` property whose docstring states what is counted (the ``W`` of the capacity
plots).

* :class:`BilinearMLP` -- the gated bilinear MLP ``MLP(x) = B((A x) * (G x))`` (eq. 4 with
  ``sigma = id``, eq. 7). Its hidden activations are the *features* ``phi(x) = (A x) * (G x)``, so
  ``MLP(x) = B phi(x)`` and the MLP is a kernel memory with ``K(x, z) = phi(x) . phi(z)``
  (Sec. 3.1, Theorem B.1). Built by

  - :func:`hebbian_mlp`: the sketched-``K_2`` Hebbian construction of Algorithm 1 (App. B.2.3),
    with readout whitening ``none`` / ``diag`` / ``full`` (App. B.2.4, eqs. 12-14);
  - :func:`data_dependent_mlp`: two least-squares refits of the factors (App. B.2.5,
    eqs. 17-18) followed by the whitened readout;
  - :func:`train_mlp`: gradient descent (App. A.1.1, the GD baseline).

* :class:`ExactK2Memory` -- the Hebbian kernel memory with the exact quadratic kernel
  ``K_2(x, z) = <x, z>^2`` (eq. 8 without the sketch), used by the exact margin sweeps.
* :class:`GatedReLUMLP` -- ``P (ReLU(W_gate x) * (W_up x))``, built by :func:`ntk_mlp`: the
  degree-1 Hermite construction of Nichani et al. (2024) as described in App. B.3.

Conventions
-----------
Rows throughout, as in the seed: keys ``K`` are ``(F, d)``, the targets ``C_f`` are ``(F, d_c)``
with row ``i`` the code ``c_f(i) = v_f(i)`` (:attr:`~assocmem.mlps.facts.FactSet.targets`), the
feature matrix ``Phi`` is ``(F, m)`` with row ``i`` ``phi(k_i)``, and the readout ``B`` is
``(d_c, m)``. Constructions run in float64 on the device of the fact set; gradient descent runs in
float32 by default. A module's ``forward`` casts its input to the module's dtype, so a float32
model can be queried with float64 keys.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 2.2 (eq. 4),
Sec. 3.1 (Theorem 3.1 / B.1), Sec. 4.1 (eqs. 7-8), Sec. 4.3 (whitened and data-dependent
variants), App. A.1.1 (MLP variants), A.3.1 (capacity protocol), B.2.2 (Lemma B.2), B.2.3
(Algorithm 1), B.2.4 (eqs. 12-14), B.2.5 (eqs. 17-18), B.3 (NTK baseline).
E. Nichani, J. D. Lee, A. Bietti (2024), "Understanding Factual Recall in Transformers via
Associative Memories".
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch
from torch import nn

from assocmem._checks import positive_int as _positive_int, seed_int as _seed
from assocmem.devices import resolve_device
from assocmem.mlps.facts import UNIT_NORM_TOL, FactSet

__all__ = [
    "FactMLP",
    "BilinearConfig",
    "BilinearMLP",
    "ExactK2Memory",
    "GatedReLUMLP",
    "bilinear_features",
    "hebbian_readout",
    "solve_factor",
    "solve_factor_reference",
    "hebbian_mlp",
    "exact_k2_memory",
    "data_dependent_mlp",
    "ntk_mlp",
    "train_mlp",
    "WHITENINGS",
]

#: Readout whitening modes of Algorithm 1.
WHITENINGS = ("none", "diag", "full")

_F64 = torch.float64


# ----------------------------------------------------------------------------------------------
# validation helpers


def _nonneg_float(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative number; got {value!r}") from None
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite non-negative number; got {value!r}")
    return x


def _checked_facts(facts, require_unit_keys: bool) -> FactSet:
    """Re-validate a fact set (its tensors may have been edited in place since construction)."""
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be an assocmem.mlps.facts.FactSet; got {type(facts).__name__}")
    # FactSet.__post_init__ checks shapes, F >= 1, finiteness and the map's range.
    facts = FactSet(facts.keys, facts.values, facts.mapping, unit_norm=False)
    if require_unit_keys:
        err = (torch.linalg.vector_norm(facts.keys.to(_F64), dim=-1) - 1.0).abs().max().item()
        if err > UNIT_NORM_TOL:
            raise ValueError(
                "this construction assumes keys on the unit sphere (so that K(k, k) ~ 1); the worst "
                f"key norm is off by {err:.3g}. Normalise the keys or pass require_unit_keys=False."
            )
    return facts


def _checked_input(x, d: int, name: str = "x") -> torch.Tensor:
    """Validate a batch of inputs ``(..., d)`` to a fact memory: a tensor of width ``d``, finite.

    Mirrors :class:`assocmem.linear.memory.MatrixMemory`'s query check: the wrong width or a NaN would
    otherwise give a shape error deep in a matmul or a silent NaN output.
    """
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of shape (..., d) with d = {d}; got "
                         f"{type(x).__name__}")
    if x.dim() < 1 or x.shape[-1] != d:
        raise ValueError(f"{name} must have shape (..., d) with d = {d} (the input width of this "
                         f"memory); got shape {tuple(x.shape)}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains non-finite entries (nan or inf)")
    return x


def _gaussian(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(rows, cols, generator=gen, dtype=_F64)


# ----------------------------------------------------------------------------------------------
# modules


class FactMLP(nn.Module):
    """Base class of the fact-storing memories: ``forward(x: (..., d)) -> (..., d_c)``.

    Subclasses define ``forward`` and the property ``num_parameters``.
    """

    @property
    def num_parameters(self) -> int:  # pragma: no cover - abstract
        """Number of real parameters; each subclass states its counting convention."""
        raise NotImplementedError


@dataclass(frozen=True)
class BilinearConfig:
    """Shape of a bilinear gated MLP ``B((A x) * (G x))``."""

    d: int  # input width: the key embedding dimension
    m: int  # hidden width: the number of bilinear features (neurons)
    d_out: int  # output width d_c: the code / value dimension (d_c = d by default)


class BilinearMLP(FactMLP):
    """The gated bilinear MLP ``MLP(x) = B((A x) * (G x))`` without biases (seed eqs. 4 and 7).

    The hidden activations ``phi(x) = (A x) * (G x)`` are the *features* of a kernel memory:
    ``MLP(x) = B phi(x)`` and ``K(x, z) = phi(x) . phi(z)`` (Theorem B.1). For the sketched-``K_2``
    construction the ``1/sqrt(m)`` of Algorithm 1 is folded into the factors, ``A = m^{-1/4} A_bar``
    and ``G = m^{-1/4} G_bar`` with ``A_bar, G_bar`` iid ``N(0, 1)`` (as in Prop. B.7), so that
    ``features`` is exactly the ``g(x)`` of Algorithm 1 and ``E[K(x, z)] = <x, z>^2`` (Lemma B.2).

    Parameters
    ----------
    A, G : torch.Tensor, shape ``(m, d)``
        The two input projections (value branch and gate branch).
    B : torch.Tensor, shape ``(d_c, m)``
        The readout.
    construction : str
        How the weights were obtained (e.g. ``"hebbian-full"``, ``"data-dependent"``, ``"gd"``).
    trainable : bool, default False
        Whether the weights require gradients.

    Attributes
    ----------
    config : BilinearConfig
    info : dict
        Diagnostics of the construction (solver iterations, residuals, training history).

    Raises
    ------
    ValueError
        From the constructor, on inconsistent shapes; from :meth:`features`, :meth:`kernel`
        and :meth:`forward`, on an input that is not a tensor of shape ``(..., d)`` or has
        non-finite entries (as :class:`assocmem.linear.memory.MatrixMemory` rejects such queries).
    """

    def __init__(self, A: torch.Tensor, G: torch.Tensor, B: torch.Tensor, construction: str = "",
                 trainable: bool = False) -> None:
        super().__init__()
        if A.dim() != 2 or A.shape != G.shape or B.dim() != 2 or B.shape[1] != A.shape[0]:
            raise ValueError(
                f"need A, G of shape (m, d) and B of shape (d_c, m); got {tuple(A.shape)}, "
                f"{tuple(G.shape)}, {tuple(B.shape)}"
            )
        self.config = BilinearConfig(d=A.shape[1], m=A.shape[0], d_out=B.shape[0])
        self.A = nn.Parameter(A, requires_grad=trainable)  # (m, d)
        self.G = nn.Parameter(G, requires_grad=trainable)  # (m, d)
        self.B = nn.Parameter(B, requires_grad=trainable)  # (d_c, m)
        self.construction = construction
        self.info: dict = {}

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden activations ``phi(x) = (A x) * (G x)``, shape ``(..., m)``.

        ``x`` is a tensor of shape ``(..., d)``, converted to the weights' dtype; a wrong width
        or a non-finite entry raises :class:`ValueError`.
        """
        x = _checked_input(x, self.config.d).to(self.A.dtype)  # (..., d)
        return (x @ self.A.T) * (x @ self.G.T)  # (..., m)

    def kernel(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """The induced kernel ``K(x_a, z_b) = phi(x_a) . phi(z_b)``, shape ``(n_x, n_z)``."""
        return self.features(x) @ self.features(z).T  # (n_x, n_z)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``MLP(x) = phi(x) @ B.T``: ``(..., d) -> (..., d_c)``."""
        return self.features(x) @ self.B.T  # (..., d_c)

    @property
    def num_parameters(self) -> int:
        """``W = 2 m d + d_c m`` (``= 3 m d`` when ``d_c = d``): every entry of ``A``, ``G`` and ``B``.

        This is the ``W`` of the paper's capacity plots (Sec. 4.3, App. A.3.1): the random factors
        of the sketched construction are counted like trained ones, since the MLP has to store them.
        There are no biases.
        """
        c = self.config
        return 2 * c.m * c.d + c.d_out * c.m

    def extra_repr(self) -> str:
        c = self.config
        return f"d={c.d}, m={c.m}, d_out={c.d_out}, construction={self.construction!r}"


class ExactK2Memory(FactMLP):
    """Hebbian kernel memory with the exact quadratic kernel ``K_2(x, z) = <x, z>^2`` (eq. 8, no sketch).

    ``H(x) = (1/F) sum_t c_f(t) <k_t, x>^2``: the infinite-width limit of the unwhitened
    sketched construction ``B_0 g(x)`` (Lemma B.2), including its ``1/F``. The margins of the
    paper are quoted on the kernel-Hebbian scale without the ``1/F``
    (:func:`assocmem.mlps.margins.fact_margins` uses :meth:`kernel`); the ``1/F`` does not change any
    argmax.

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``
    targets : torch.Tensor, shape ``(F, d_c)``
        Row ``t`` is ``c_f(t)``.
    """

    def __init__(self, keys: torch.Tensor, targets: torch.Tensor) -> None:
        super().__init__()
        if keys.dim() != 2 or targets.dim() != 2 or keys.shape[0] != targets.shape[0]:
            raise ValueError(
                f"need keys (F, d) and targets (F, d_c); got {tuple(keys.shape)}, {tuple(targets.shape)}"
            )
        self.register_buffer("keys", keys)  # (F, d)
        self.register_buffer("targets", targets)  # (F, d_c)

    def kernel(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """``K_2(x_a, z_b) = <x_a, z_b>^2``, shape ``(n_x, n_z)``."""
        d = self.keys.shape[1]
        return (_checked_input(x, d) @ _checked_input(z, d, "z").T) ** 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(1/F) sum_t c_f(t) <k_t, x>^2``: ``(..., d) -> (..., d_c)``."""
        x = _checked_input(x, self.keys.shape[1]).to(self.keys.dtype)  # (..., d)
        return ((x @ self.keys.T) ** 2) @ self.targets / self.keys.shape[0]  # (..., d_c)

    @property
    def num_parameters(self) -> int:
        """``d_c d (d + 1) / 2``: the free entries of the ``d_c`` symmetric quadratic forms.

        ``H(x)_c = x^T S_c x`` with ``S_c = (1/F) sum_t c_f(t),c k_t k_t^T`` symmetric ``d x d``; this
        is the smallest parametric form of the memory (it is evaluated through the stored keys, which
        is cheaper for ``F < d^2``, but what it represents is the ``d_c`` forms).
        """
        d = self.keys.shape[1]
        return self.targets.shape[1] * d * (d + 1) // 2


class GatedReLUMLP(FactMLP):
    """``MLP(x) = P (ReLU(W_gate x) * (W_up x))``: the gated ReLU MLP of the NTK baseline (App. B.3).

    Parameters
    ----------
    W_gate, W_up : torch.Tensor, shape ``(m, d)``
    P : torch.Tensor, shape ``(d_c, m)``
        Readout with unit columns ``p_r``.
    """

    def __init__(self, W_gate: torch.Tensor, W_up: torch.Tensor, P: torch.Tensor) -> None:
        super().__init__()
        if W_gate.dim() != 2 or W_gate.shape != W_up.shape or P.dim() != 2 or P.shape[1] != W_gate.shape[0]:
            raise ValueError("need W_gate, W_up of shape (m, d) and P of shape (d_c, m)")
        self.W_gate = nn.Parameter(W_gate, requires_grad=False)  # (m, d)
        self.W_up = nn.Parameter(W_up, requires_grad=False)  # (m, d)
        self.P = nn.Parameter(P, requires_grad=False)  # (d_c, m)
        self.info: dict = {}

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden activations ``ReLU(W_gate x) * (W_up x)``, shape ``(..., m)``.

        (Named ``hidden``, not ``features``: the NTK MLP is not a Hebbian memory in these
        activations, so kernel-margin code must not treat them as one.)
        """
        x = _checked_input(x, self.W_gate.shape[1]).to(self.W_gate.dtype)  # (..., d)
        return torch.relu(x @ self.W_gate.T) * (x @ self.W_up.T)  # (..., m)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``P hidden(x)``: ``(..., d) -> (..., d_c)``."""
        return self.hidden(x) @ self.P.T  # (..., d_c)

    @property
    def num_parameters(self) -> int:
        """``W = 2 m d + d_c m`` (``= 3 m d`` when ``d_c = d``): ``W_gate``, ``W_up`` and ``P``; no biases.

        The random readout ``P`` is counted like the gate, as for the Hebbian MLPs: every entry
        of every weight matrix the MLP has to store is a parameter, whether it was drawn at
        random or fitted (so the NTK and the bilinear MLPs both have ``3 m d`` parameters when
        ``d_c = d``). This MLP has no biases; one that had them would add them to the count.
        """
        m, d = self.W_gate.shape
        return 2 * m * d + self.P.shape[0] * m


# ----------------------------------------------------------------------------------------------
# building blocks


def bilinear_features(keys: torch.Tensor, A: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """Feature matrix ``Phi(A, G) = (K A^T) * (K G^T)``, shape ``(F, m)`` (App. B.2.5).

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``
    A, G : torch.Tensor, shape ``(m, d)``

    Returns
    -------
    torch.Tensor, shape ``(F, m)``, dtype of the inputs

    References
    ----------
    Seed 001, Algorithm 1 lines 2 and 4; App. B.2.5.
    """
    return _stacked_features(keys, torch.cat((A, G)))


def _stacked_features(keys: torch.Tensor, AG: torch.Tensor) -> torch.Tensor:
    """:func:`bilinear_features` from the stacked factors ``AG = [A; G]`` ``(2m, d)``.

    One GEMM gives both branches, ``keys @ AG.T`` ``(F, 2m)``, and the product of its halves is
    ``Phi``. On the CPU (two-dimensional keys, no autograd) the GEMM runs over row blocks of about
    1 MiB into one reused workspace and each block's product is written straight into a
    contiguous ``(F, m)`` result, so the ``(F, 2m)`` intermediate never leaves the cache. Each
    entry is the same length-``d`` dot product as in the single GEMM (bit-for-bit equal in the
    tests). Elsewhere the product overwrites the first half of the ``(F, 2m)`` GEMM output and
    the result is a view of it with row stride ``2m``.
    """
    m = AG.shape[0] // 2
    if keys.device.type != "cpu" or keys.dim() != 2 or _tracks_grad(keys, AG) or keys.dtype != AG.dtype:
        both = keys @ AG.T  # (F, 2m)
        return both[:, :m].mul_(both[:, m:])  # (F, m)
    F = keys.shape[0]
    rows = max(1, min(F, max(16, _BLOCK_ELEMENTS // max(1, 2 * m))))
    Phi = torch.empty(F, m, dtype=keys.dtype, device=keys.device)  # (F, m)
    work = torch.empty(rows, 2 * m, dtype=keys.dtype, device=keys.device)  # (rows, 2m) workspace
    AGt = AG.T  # (d, 2m)
    for s in range(0, F, rows):
        e = min(s + rows, F)
        both = work[: e - s]
        torch.mm(keys[s:e], AGt, out=both)  # (rows, 2m)
        torch.mul(both[:, :m], both[:, m:], out=Phi[s:e])
    return Phi


#: Entries of a row-block workspace (1 MiB of float64), for the blocked CPU loops.
_BLOCK_ELEMENTS = 1 << 17


def _tracks_grad(*tensors: torch.Tensor) -> bool:
    """Whether autograd records operations on any of ``tensors`` (then no ``out=`` / in-place tricks)."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)

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
    Phi : torch.Tensor, shape ``(F, m)``, float64 recommended
    targets : torch.Tensor, shape ``(F, d_c)``
        ``C_f``: row ``i`` is ``c_f(i)``.
    whitening : {"none", "diag", "full"}, default "full"
    ridge : float, default 1e-6
        ``lambda >= 0``. With ``0`` a singular system raises.
    branch : {"auto", "primal", "dual"}, default "auto"
        For ``full``: ``auto`` is primal for ``m <= F`` and dual otherwise, as in Algorithm 1.

    Returns
    -------
    torch.Tensor, shape ``(d_c, m)``

    Raises
    ------
    ValueError
        Unknown mode or branch, mismatched shapes, a negative ridge, or a singular system
        (a zero feature for ``diag``, a rank-deficient Gram matrix for ``full``) with no ridge.

    References
    ----------
    Seed 001, Algorithm 1; App. B.2.4, eqs. 12-14.
    """
    if whitening not in WHITENINGS:
        raise ValueError(f"whitening must be one of {WHITENINGS}; got {whitening!r}")
    if branch not in ("auto", "primal", "dual"):
        raise ValueError(f"branch must be 'auto', 'primal' or 'dual'; got {branch!r}")
    if Phi.dim() != 2 or targets.dim() != 2 or Phi.shape[0] != targets.shape[0]:
        raise ValueError(f"need Phi (F, m) and targets (F, d_c); got {tuple(Phi.shape)}, {tuple(targets.shape)}")
    lam = _nonneg_float("ridge", ridge)
    F, m = Phi.shape
    C = targets.to(Phi.dtype)
    if whitening == "none":
        return (C.T @ Phi) / F  # (d_c, m)
    if whitening == "diag":
        s = (Phi * Phi).mean(dim=0) + lam  # (m,)  diag(Sigma) + ridge
        if (s <= 0).any():
            raise ValueError(
                "diagonal whitening divides by a zero feature variance (a feature vanishes on every "
                "stored key); use a positive ridge"
            )
        return (C.T @ Phi) / F / s  # (d_c, m)
    if branch == "primal" or (branch == "auto" and m <= F):
        S = _gram_lower(Phi, F * lam)  # (m, m)  Phi^T Phi + F lam I, lower triangle
        L = _cholesky(S, lam, "primal whitening (m x m)")  # (m, m), may reuse S's storage
        R = C.T @ Phi  # (d_c, m)  F B0
        Y = torch.linalg.solve_triangular(L.mT, R, upper=True, left=False)  # (d_c, m)  R L^{-T}
        return torch.linalg.solve_triangular(L, Y, upper=False, left=False)  # (d_c, m)  R S^{-1}
    Kg = _gram_lower(Phi.T, lam)  # (F, F)  Phi Phi^T + lam I
    L = _cholesky(Kg, lam, "dual whitening (F x F)")
    return torch.cholesky_solve(C, L).T @ Phi  # (d_c, m)


# ----------------------------------------------------------------------------------------------
# the factor least-squares problem of eqs. 17-18


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
    keys : torch.Tensor, shape ``(F, d)``
    fixed : torch.Tensor, shape ``(m, d)``
        The factor ``Y`` held fixed.
    readout : torch.Tensor, shape ``(d_c, m)``
        ``W`` (the Hebbian readout ``B_0`` in eqs. 17-18).
    targets : torch.Tensor, shape ``(F, d_c)``
        ``C`` (``C_f``); the right-hand side of the normal equations is ``L^*(C)``.
    metric : torch.Tensor, shape ``(d_c, d_c)``, optional
        Symmetric PSD output metric ``M`` on the left-hand side: the equations solved are
        ``L^*(L(X) M) = L^*(C)``. ``None`` is the identity, i.e. eq. 17's output-space objective
        ``|| C - Phi W^T ||_F^2``. ``M = V^T V`` with ``C = C_f`` gives the *score-space* objective
        ``|| E - Phi W^T V^T ||_F^2`` against the one-hot ``(F, V)`` matrix ``E`` (because
        ``E V = C_f``).
    x0 : torch.Tensor, shape ``(m, d)``, optional
        Starting point (default zero).
    tol : float, default 1e-3
        Stop when ``||L^*(C) - L^*(L(X) M)|| <= tol ||L^*(C)||``.
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
        Mismatched shapes, ``tol < 0``, ``max_iter < 1`` or an unknown preconditioner.

    References
    ----------
    Seed 001, App. B.2.5, eqs. 17-18 (each subproblem is linear in the free factor).
    Hestenes & Stiefel (1952), conjugate gradients; Saad (2003), *Iterative Methods for Sparse
    Linear Systems*, ch. 9 (preconditioned CG).
    """
    t_start = time.perf_counter()
    K, Y, W, C = keys, fixed, readout, targets
    F, d = K.shape
    m = Y.shape[0]
    if Y.shape != (m, d) or W.dim() != 2 or W.shape[1] != m or C.shape != (F, W.shape[0]):
        raise ValueError(
            f"inconsistent shapes: keys {tuple(K.shape)}, fixed {tuple(Y.shape)}, readout "
            f"{tuple(W.shape)}, targets {tuple(C.shape)}"
        )
    tol = _nonneg_float("tol", tol)
    max_iter = _positive_int("max_iter", max_iter)
    if preconditioner not in ("rank1", "jacobi"):
        raise ValueError(f"preconditioner must be 'rank1' or 'jacobi'; got {preconditioner!r}")
    d_c = W.shape[0]
    if metric is not None and metric.shape != (d_c, d_c):
        raise ValueError(f"metric must have shape ({d_c}, {d_c}); got {tuple(metric.shape)}")
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
    X = torch.zeros(m, d, dtype=K.dtype, device=K.device) if x0 is None else x0.to(K.dtype).clone()
    info = {"iterations": 0, "relative_residual": 0.0, "converged": True, "flops": flops,
            "seconds": 0.0}
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

    Returns
    -------
    torch.Tensor, shape ``(m, d)``
    """
    K, Y, W = keys.to(_F64), fixed.to(_F64), readout.to(_F64)
    P = K @ Y.T  # (F, m)
    J = torch.einsum("ir,cr,ia->icra", P, W, K)  # (F, d_c, m, d): d L(X)[i, c] / d X[r, a]
    if values is None:
        lhs, rhs = J, targets.to(_F64)  # (F, d_c, m, d), (F, d_c)
    else:
        V = values.to(_F64)
        lhs = torch.einsum("icra,jc->ijra", J, V)  # (F, V, m, d)
        rhs = torch.zeros(K.shape[0], V.shape[0], dtype=_F64)
        rhs[torch.arange(K.shape[0]), mapping] = 1.0  # one-hot E
    m, d = Y.shape
    sol = torch.linalg.lstsq(lhs.reshape(-1, m * d).cpu(), rhs.reshape(-1, 1).cpu(), driver="gelsd").solution
    return sol.reshape(m, d).to(keys.device)


# ----------------------------------------------------------------------------------------------
# constructions


def hebbian_mlp(
    facts: FactSet,
    m: int,
    whitening: str = "none",
    ridge: float = 1e-6,
    seed: int = 0,
    *,
    branch: str = "auto",
    require_unit_keys: bool = True,
    return_features: bool = False,
) -> BilinearMLP | tuple[BilinearMLP, torch.Tensor]:
    """Sketched-``K_2`` Hebbian MLP of Algorithm 1, with optional readout whitening.

    1. Draw ``A_bar, G_bar`` iid ``N(0, 1)`` of shape ``(m, d)`` (one generator seeded with
       ``seed``; ``A_bar`` first) and set ``A = m^{-1/4} A_bar``, ``G = m^{-1/4} G_bar``, so the
       features are ``g(x) = (A_bar x) * (G_bar x) / sqrt(m)`` (lines 1-2).
    2. ``Phi`` ``(F, m)`` with rows ``g(k_i)``; ``C_f`` ``(F, d)`` with rows ``v_f(i)`` (lines 3-4).
    3. Readout by :func:`hebbian_readout`: ``none`` ``B0 = C_f^T Phi / F``; ``diag`` divides each
       column by ``Sigma_rr + ridge`` (the diagonal of the feature covariance); ``full`` uses the
       primal ``B0 (Sigma + ridge I)^{-1}`` for ``m <= F`` and the dual
       ``C_f^T (Phi Phi^T + ridge I)^{-1} Phi`` for ``m > F``.

    Everything is computed in float64 on the fact set's device (Cholesky + triangular solves).
    The dual branch interpolates once ``m >= F`` (generically 100 % accurate there).

    Parameters
    ----------
    facts : FactSet
        Keys ``(F, d)`` on the unit sphere, values ``(V, d)``, mapping ``(F,)``.
    m : int
        Hidden width, ``m >= 1``.
    whitening : {"none", "diag", "full"}, default "none"
    ridge : float, default 1e-6
        ``lambda`` of eqs. 13-14 and Algorithm 1 line 11. ``0`` is allowed; a singular system then
        raises.
    seed : int, default 0
        Seed of ``A_bar, G_bar``.
    branch : {"auto", "primal", "dual"}, default "auto"
        Force a branch of the full whitening (for checks).
    require_unit_keys : bool, default True
        Check that the keys are unit vectors (the construction's scale ``K(k, k) ~ 1`` assumes it).
    return_features : bool, default False
        Also return the feature matrix ``Phi`` of step 2, so that the model's outputs on its own
        keys are ``Phi @ model.B.T`` without computing the features again (e.g. its accuracy by
        :func:`assocmem.mlps.margins.accuracy_from_outputs`, as ``benchmarks/bench_mlp.py`` times
        construction plus accuracy).

    Returns
    -------
    model : BilinearMLP
        ``features(x) = g(x)``, ``B`` ``(d, m)``, ``num_parameters = 3 m d``; ``construction`` is
        ``"hebbian-<whitening>"``; ``info["branch"]`` is the full-whitening branch used
        (``"primal"`` or ``"dual"``).
    Phi : torch.Tensor, shape ``(F, m)``, float64
        Only with ``return_features=True``: row ``i`` is ``g(k_i)``, on the fact set's device, as
        :func:`bilinear_features` computes it (equal to ``model.features(facts.keys)`` up to
        rounding). It shares no memory with the model.

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, keys off the sphere, an unknown mode, a negative ridge, a
        singular system with ``ridge = 0``, or a ``return_features`` that is not a bool.

    References
    ----------
    Seed 001, Sec. 4.1 (eqs. 7-8), Algorithm 1 (App. B.2.3), App. B.2.4 (eqs. 12-14), App. A.1.1.

    Examples
    --------
    >>> from assocmem.mlps.facts import make_fact_set
    >>> from assocmem.mlps.margins import accuracy, accuracy_from_outputs
    >>> facts = make_fact_set(256, 32, seed=0)
    >>> model, Phi = hebbian_mlp(facts, 200, "full", return_features=True)
    >>> accuracy_from_outputs(Phi @ model.B.T, facts) == accuracy(model, facts)
    True
    """
    facts = _checked_facts(facts, require_unit_keys)
    m = _positive_int("m", m)
    if whitening not in WHITENINGS:
        raise ValueError(f"whitening must be one of {WHITENINGS}; got {whitening!r}")
    if not isinstance(return_features, bool):
        raise ValueError(f"return_features must be True or False; got {return_features!r}")
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    dev = facts.keys.device
    K = facts.keys.to(_F64)  # (F, d)
    d = K.shape[1]
    AG = _gaussian(2 * m, d, gen).to(dev).mul_(m ** -0.25)  # (2m, d): [A; G]
    A, G = AG[:m], AG[m:]
    Phi = _stacked_features(K, AG)  # (F, m), = bilinear_features(K, A, G)
    B = hebbian_readout(Phi, facts.targets.to(_F64), whitening, ridge, branch)  # (d, m)
    model = BilinearMLP(A.clone(), G.clone(), B, construction=f"hebbian-{whitening}")
    used = branch if branch != "auto" else ("primal" if m <= K.shape[0] else "dual")
    model.info = {"whitening": whitening, "ridge": float(ridge), "seed": int(seed),
                  "branch": used if whitening == "full" else None}
    return (model, Phi) if return_features else model


def exact_k2_memory(facts: FactSet, *, require_unit_keys: bool = True) -> ExactK2Memory:
    """Hebbian memory with the exact quadratic kernel, ``H(x) = (1/F) sum_t c_f(t) <k_t, x>^2``.

    The infinite-width limit of :func:`hebbian_mlp` with ``whitening="none"`` (Lemma B.2); used by
    the exact-``K_2`` margin sweeps (App. A.3.2).

    Parameters
    ----------
    facts : FactSet
    require_unit_keys : bool, default True

    Returns
    -------
    ExactK2Memory
        float64, with ``kernel(x, z) = (x @ z.T) ** 2`` and no ``features``.

    Raises
    ------
    ValueError
        Not a FactSet, or keys off the sphere.

    References
    ----------
    Seed 001, eq. 8; Lemma B.2; App. A.3.2 (the exact-``K_2`` ``F``-sweep).
    """
    facts = _checked_facts(facts, require_unit_keys)
    return ExactK2Memory(facts.keys.to(_F64).clone(), facts.targets.to(_F64).clone())


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
        residuals and flop counts.

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, keys off the sphere, an unknown objective, a negative or
        non-finite ``cg_tol`` or ``ridge``, ``cg_max_iter < 1`` (each message names the
        argument), a singular readout system with ``ridge = 0``.

    References
    ----------
    Seed 001, App. B.2.5 (eqs. 17-18), App. A.1.1 ("Data-dependent"), Sec. 4.3.
    """
    facts = _checked_facts(facts, require_unit_keys)
    m = _positive_int("m", m)
    if objective not in ("output", "score"):
        raise ValueError(f"objective must be 'output' or 'score'; got {objective!r}")
    # checked here, under the caller's names, before any work (solve_factor calls them tol/max_iter)
    cg_tol = _nonneg_float("cg_tol", cg_tol)
    cg_max_iter = _positive_int("cg_max_iter", cg_max_iter)
    _nonneg_float("ridge", ridge)
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
    model = BilinearMLP(A1, G1, B, construction="data-dependent")
    model.info = {"seed": int(seed), "ridge": float(ridge), "objective": objective,
                  "solve_G": info_g, "solve_A": info_a}
    return model


def ntk_mlp(facts: FactSet, m: int, seed: int = 0, *, require_unit_keys: bool = True) -> GatedReLUMLP:
    """NTK baseline: the degree-1 Hermite construction of Nichani et al. (2024), as in App. B.3.

    ``W_gate`` ``(m, d)`` iid ``N(0, 1)``; ``P`` ``(d_c, m)`` with columns uniform on the unit sphere;
    ``H = He_1(K W_gate^T) = K W_gate^T`` ``(F, m)``;
    ``W_up = (1/m) (H * (C_f P))^T K`` ``(m, d)``; ``MLP(x) = P (ReLU(W_gate x) * (W_up x))``.

    Reconciliation with App. B.3: the shapes there are consistent (``C_f P`` is ``(F, m)``, so
    ``W_up`` is ``(m, d)``). Neuron ``r`` computes ``ReLU(w_r . x) (u_r . x)`` with
    ``u_r = (1/m) sum_i (w_r . k_i)(c_f(i) . p_r) k_i``; averaging over ``w_r`` (Stein's lemma,
    ``E[ReLU(w.x)(w.k)] = <x, k>/2``) and ``p_r`` (``E[p p^T] = I/d_c``) gives
    ``E[MLP(x)] = (1/(2 d_c)) sum_i <k_i, x>^2 c_f(i)``: a ``K_2`` Hebbian memory, as B.3 states.
    Draw order from one generator seeded with ``seed``: ``W_gate`` then the Gaussian ``P``.

    Parameters
    ----------
    facts : FactSet
    m : int
    seed : int, default 0
    require_unit_keys : bool, default True

    Returns
    -------
    GatedReLUMLP
        float64, ``num_parameters = 3 m d`` (``d_c = d``).

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, keys off the sphere.

    References
    ----------
    Seed 001, App. B.3 and App. A.1.1 ("NTK"); Nichani, Lee & Bietti (2024).
    """
    facts = _checked_facts(facts, require_unit_keys)
    m = _positive_int("m", m)
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    dev = facts.keys.device
    K = facts.keys.to(_F64)  # (F, d)
    C = facts.targets.to(_F64)  # (F, d_c)
    d, d_c = K.shape[1], C.shape[1]
    W_gate = _gaussian(m, d, gen).to(dev)  # (m, d)
    P = _gaussian(d_c, m, gen).to(dev)  # (d_c, m)
    P = P / torch.linalg.vector_norm(P, dim=0, keepdim=True)  # unit columns p_r
    H = K @ W_gate.T  # (F, m)  He_1 features
    W_up = (H * (C @ P)).T @ K / m  # (m, d)
    model = GatedReLUMLP(W_gate, W_up, P)
    model.info = {"seed": int(seed), "hermite_degree": 1}
    return model


def train_mlp(
    facts: FactSet,
    m: int,
    epochs: int = 10000,
    lr: float = 1e-3,
    loss: str = "ce",
    seed: int = 0,
    device="auto",
    tol: float = 1e-7,
    *,
    lr_min: float = 1e-6,
    stop_at_full_accuracy: bool = False,
    check_every: int = 50,
    dtype: torch.dtype = torch.float32,
    record_every: int = 100,
) -> BilinearMLP:
    """Bilinear gated MLP ``B((A x) * (G x))`` without biases trained by full-batch gradient descent.

    The GD baseline of App. A.1.1: Adam with learning rate ``lr``, cosine annealing from ``lr`` to
    ``lr_min`` over ``epochs`` epochs (``torch.optim.lr_scheduler.CosineAnnealingLR``), one full
    batch (all ``F`` keys) per epoch.

    * ``loss="ce"``: cross-entropy of the value logits ``MLP(k_i) V^T`` ``(F, V)`` against
      ``mapping`` (the criterion of the capacity sweeps; accuracy is its argmax).
    * ``loss="mse"``: mean over facts of ``||MLP(k_i) - v_f(i)||^2`` (used for editing).

    Early stopping: training stops as soon as the epoch's loss is ``<= tol`` (checked every
    epoch), and, when ``stop_at_full_accuracy`` is set, as soon as every fact decodes correctly
    (argmax over every value row, checked every ``check_every`` epochs and at the last epoch).
    Initialisation: ``nn.Linear``'s default (Kaiming-uniform), i.e. ``A, G ~ U(-1/sqrt(d), 1/sqrt(d))``
    and ``B ~ U(-1/sqrt(m), 1/sqrt(m))``, drawn on the CPU from a generator seeded with ``seed``
    (``A``, ``G``, ``B`` in that order). Runs in ``dtype`` (float32 by default).

    Parameters
    ----------
    facts : FactSet
    m : int
        Hidden width.
    epochs : int, default 10000
    lr : float, default 1e-3
    loss : {"ce", "mse"}, default "ce"
    seed : int, default 0
    device : str or torch.device, default "auto"
    tol : float, default 1e-7
        Stop when the loss is at most ``tol``.
    lr_min : float, default 1e-6
        Final learning rate of the cosine schedule.
    stop_at_full_accuracy : bool, default False
    check_every : int, default 50
    dtype : torch.dtype, default torch.float32
    record_every : int, default 100
        Keep the loss every ``record_every`` epochs in ``info["losses"]``.

    Returns
    -------
    BilinearMLP
        On ``device``, weights detached (``requires_grad=False``); ``construction = "gd"``;
        ``info`` holds ``epochs_run``, ``final_loss``, ``stopped`` (``"tol"``, ``"accuracy"`` or
        ``"epochs"``), ``accuracy`` and the recorded ``losses`` as ``(epoch, loss)`` pairs.

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, ``epochs < 1``, ``lr <= 0``, an unknown loss, or a
        non-floating dtype.

    References
    ----------
    Seed 001, App. A.1.1 ("GD": Adam at ``1e-3``, cosine-annealed to ``1e-6``, 10,000 epochs),
    App. A.3.1 (the capacity protocol), App. A.4.5 ("GD MLP Setup": early stopping once the
    objective falls below ``1e-7``, and MSE for editing).
    """
    facts = _checked_facts(facts, require_unit_keys=False)
    m = _positive_int("m", m)
    epochs = _positive_int("epochs", epochs)
    check_every = _positive_int("check_every", check_every)
    record_every = _positive_int("record_every", record_every)
    if loss not in ("ce", "mse"):
        raise ValueError(f"loss must be 'ce' or 'mse'; got {loss!r}")
    if not (float(lr) > 0 and math.isfinite(float(lr))):
        raise ValueError(f"lr must be a positive number; got {lr!r}")
    lr_min = _nonneg_float("lr_min", lr_min)
    tol = _nonneg_float("tol", tol)
    if not dtype.is_floating_point:
        raise ValueError(f"dtype must be floating point; got {dtype}")
    dev = resolve_device(device)
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    d, d_c = facts.dim, facts.values.shape[1]
    ba, bb = 1.0 / math.sqrt(d), 1.0 / math.sqrt(m)
    A = (torch.rand(m, d, generator=gen, dtype=_F64) * 2 - 1) * ba  # (m, d)
    G = (torch.rand(m, d, generator=gen, dtype=_F64) * 2 - 1) * ba  # (m, d)
    B = (torch.rand(d_c, m, generator=gen, dtype=_F64) * 2 - 1) * bb  # (d_c, m)
    model = BilinearMLP(*(t.to(device=dev, dtype=dtype) for t in (A, G, B)), construction="gd",
                        trainable=True)
    K = facts.keys.to(device=dev, dtype=dtype)  # (F, d)
    V = facts.values.to(device=dev, dtype=dtype)  # (V, d)
    f = facts.mapping.to(dev)  # (F,)
    T = V[f]  # (F, d)
    opt = torch.optim.Adam(model.parameters(), lr=float(lr))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=lr_min)

    def full_accuracy() -> float:
        with torch.no_grad():
            return (torch.argmax(model(K) @ V.T, dim=1) == f).float().mean().item()

    losses: list[tuple[int, float]] = []
    stopped, value, epoch = "epochs", float("nan"), 0
    for epoch in range(1, epochs + 1):
        opt.zero_grad(set_to_none=True)
        out = model(K)  # (F, d_c)
        if loss == "ce":
            obj = nn.functional.cross_entropy(out @ V.T, f)  # logits (F, V)
        else:
            obj = ((out - T) ** 2).sum(dim=1).mean()
        obj.backward()
        opt.step()
        sched.step()
        value = obj.item()
        if epoch % record_every == 0 or epoch == 1:
            losses.append((epoch, value))
        if value <= tol:
            stopped = "tol"
            break
        if stop_at_full_accuracy and (epoch % check_every == 0 or epoch == epochs):
            if full_accuracy() == 1.0:
                stopped = "accuracy"
                break
    model.requires_grad_(False)
    model.info = {"epochs_run": epoch, "final_loss": value, "stopped": stopped, "loss": loss,
                  "accuracy": full_accuracy(), "losses": losses, "seed": int(seed), "lr": float(lr)}
    return model
