"""The fact-storing memories as modules, with their parameter counts and the bilinear features.

Every memory maps a key ``x`` in ``R^d`` to an output in ``R^{d_c}`` that is decoded by inner
products with the value rows: fact ``i`` is stored when ``argmax_j <MLP(k_i), v_j> = f(i)``
(seed 001, Definition 2.1). Each is a :class:`FactMLP` (a ``torch.nn.Module``) whose
``num_parameters`` docstring states what is counted (the ``W`` of the capacity plots).
:class:`BilinearMLP` is the gated bilinear MLP ``MLP(x) = B((A x) * (G x))`` (eq. 4 with
``sigma = id``, eq. 7); its hidden activations are the *features* ``phi(x) = (A x) * (G x)``, so
``MLP(x) = B phi(x)`` is a kernel memory with ``K(x, z) = phi(x) . phi(z)`` (Sec. 3.1,
Theorem B.1), and :func:`bilinear_features` computes the feature matrix ``Phi`` of a batch of keys
(App. B.2.5). :class:`ExactK2Memory` is the Hebbian kernel memory with the exact quadratic kernel
``K_2(x, z) = <x, z>^2`` (eq. 8 without the sketch); :class:`GatedReLUMLP` is the
``P (ReLU(W_gate x) * (W_up x))`` of the NTK baseline (App. B.3). The constructions that fill
these modules are in the sibling modules :mod:`~assocmem.mlps.mlp.hebbian`,
:mod:`~assocmem.mlps.mlp.data_dependent`, :mod:`~assocmem.mlps.mlp.ntk` and
:mod:`~assocmem.mlps.mlp.gradient_descent`. Used by chapters 10-13 ("Facts, margins and the
counting bound", "MLPs are kernel Hebbians" -- which calls :func:`bilinear_features` itself --,
"How margins scale", "Facts per parameter").

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 2.2 (eq. 4),
Sec. 3.1 (Theorem 3.1 / B.1), Sec. 4.1 (eqs. 7-8), Sec. 4.3 and App. A.3.1 (the parameter count
``W``), App. B.2.5 (the feature matrix), B.3 (NTK baseline).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from assocmem._checks import as_bool, module_input, positive_int
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.mlps._checks import batch_input, check_finite_result, float_tensor
from assocmem.mlps.mlp._common import _tracks_grad

__all__ = [
    "FactMLP",
    "BilinearConfig",
    "BilinearMLP",
    "ExactK2Memory",
    "GatedReLUMLP",
    "bilinear_features",
]


def _checked_input(x, d: int, name: str = "x", dtype: torch.dtype | None = None) -> torch.Tensor:
    """Validate a batch of inputs ``(..., d)`` to a fact memory (:func:`assocmem.mlps._checks.batch_input`).

    Mirrors :class:`assocmem.linear.memory.MatrixMemory`'s query check: the wrong width or a NaN would
    otherwise give a shape error deep in a matmul or a silent NaN output. float16 / bfloat16 inputs
    are refused (:mod:`assocmem.dtypes`); with ``dtype`` the input is cast to it, and a cast that
    overflows (float64 entries beyond float32's range) is reported as such.
    """
    return batch_input(x, d, name, dtype)


def _weights(named: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """The weight matrices of a memory, each a finite 2-D tensor, all of one dtype."""
    out = [float_tensor(w, name, 2) for name, w in named.items()]
    if len({w.dtype for w in out}) > 1 or len({w.device for w in out}) > 1:
        raise ValueError(f"{', '.join(named)} must share one dtype and device; got "
                         f"{[str(w.dtype) for w in out]} on {[str(w.device) for w in out]}")
    return out


def _empty(shapes: dict[str, tuple[int, ...]], dtype, device) -> list[torch.Tensor]:
    """Zero weights of the given shapes (sizes checked by the caller) for ``empty``: no storage on
    the meta device, and well-defined values (``torch.empty`` could hold NaNs) elsewhere."""
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype; got {dtype!r}")
    check_float_dtype(dtype, "dtype")
    return [torch.zeros(shape, dtype=dtype, device=device) for shape in shapes.values()]


def _widths(**sizes) -> list[int]:
    """Each size as a positive int (``None`` for ``d_out`` means ``d``)."""
    if sizes.get("d_out") is None:
        sizes["d_out"] = sizes["d"]
    return [positive_int(name, size) for name, size in sizes.items()]


def _extra(module: nn.Module, names: tuple[str, ...]) -> dict:
    """The attributes ``names`` of ``module`` for ``get_extra_state`` (copied, so the saved record
    does not change with the module)."""
    return {name: copy.deepcopy(getattr(module, name)) for name in names}


def _set_extra(module: nn.Module, state, types: dict[str, type]) -> None:
    """Restore ``set_extra_state``'s record: a dict with exactly ``types``' keys, each of its type."""
    if not isinstance(state, dict) or set(state) != set(types) or not all(
            isinstance(state[k], tp) for k, tp in types.items()):
        want = ", ".join(f"{k!r}: {tp.__name__}" for k, tp in types.items())
        raise ValueError(f"the extra state of a {type(module).__name__} must be {{{want}}}; got {state!r}")
    for name in types:
        setattr(module, name, copy.deepcopy(state[name]))


class FactMLP(nn.Module):
    """Base class of the fact-storing memories: ``forward(x: (..., d)) -> (..., d_c)``.

    Subclasses define ``forward`` and the property ``num_parameters``.

    A ``state_dict`` holds the weights and, as extra state, the construction's record
    (``construction`` and ``info`` where the module has them), so a module built with
    ``empty(...)`` -- on the meta device, without values, or on any device -- and then
    ``load_state_dict(saved, assign=True)`` is the saved one. After a load the weights are
    checked as the constructor checks them (float32 or float64, one dtype and device, finite):
    ``load_state_dict`` raises a ValueError naming the state dict otherwise.
    """

    def __init__(self) -> None:
        """The module machinery of every fact memory: ``load_state_dict`` checks what it loads
        (float32 or float64 weights, one dtype and device, finite). Subclasses take the weights."""
        super().__init__()
        self.register_load_state_dict_post_hook(_check_loaded_weights)

    @property
    def num_parameters(self) -> int:  # pragma: no cover - abstract
        """Number of real parameters; each subclass states its counting convention."""
        raise NotImplementedError


def _check_loaded_weights(module: nn.Module, incompatible_keys) -> None:
    """After ``load_state_dict``: the weights are what the constructor accepts (float32 or float64,
    one dtype and one device, finite), or a ValueError naming the state dict.

    With ``assign=True`` the module takes the saved tensors as they are, so a float16 or a
    mixed-dtype state dict would otherwise load and fail later deep in a matmul.
    """
    named = {**dict(module.named_parameters(recurse=False)), **dict(module.named_buffers(recurse=False))}
    try:
        for name, w in named.items():
            if not w.is_floating_point():
                raise ValueError(f"{name} must be float32 or float64; got dtype {w.dtype}")
        _weights(named)
    except ValueError as err:
        raise ValueError(f"the state dict loaded into this {type(module).__name__} is not a usable one: "
                         f"{err} (load a state dict saved by a {type(module).__name__}, or convert its "
                         "tensors to one floating dtype, float32 or float64)") from None


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
        From the constructor, on inconsistent shapes, weights that are not finite 2-D tensors of
        one dtype (float16 / bfloat16 refused, :mod:`assocmem.dtypes`) or a ``trainable`` that is
        not a bool; from :meth:`features`, :meth:`kernel` and :meth:`forward`, on an input that
        is not a real tensor of shape ``(..., d)``, is float16 / bfloat16, has non-finite
        entries (as :class:`assocmem.linear.memory.MatrixMemory` rejects such queries) or
        overflows the weights' dtype when cast to it.
    """

    def __init__(self, A: torch.Tensor, G: torch.Tensor, B: torch.Tensor, construction: str = "",
                 trainable: bool = False) -> None:
        super().__init__()
        A, G, B = _weights({"A": A, "G": G, "B": B})
        trainable = as_bool(trainable, "trainable")
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

    @classmethod
    def empty(cls, d: int, m: int, d_out: int | None = None, *, dtype: torch.dtype | None = None,
              device: str | torch.device | None = None, construction: str = "",
              trainable: bool = False) -> "BilinearMLP":
        """A module of the given shape with zero weights, to load a ``state_dict`` into.

        ``BilinearMLP.empty(d, m, device="meta")`` (or inside ``with torch.device("meta"):``)
        allocates nothing; ``load_state_dict(saved, assign=True)`` then takes the saved tensors
        (their dtype and device) and the saved ``construction`` and ``info``.

        Parameters
        ----------
        d, m : int
            Input and hidden widths, ``>= 1``.
        d_out : int, optional
            Output width ``d_c`` (default ``d``).
        dtype : torch.dtype, optional
            ``None``: torch's default dtype (``torch.get_default_dtype()``).
            float32 or float64 (the constructions' dtype by default).
        device : str, torch.device or None
            Passed to :func:`torch.zeros`; ``None`` is torch's current default device (so a
            ``torch.device("meta")`` context applies).
        construction, trainable
            As in the constructor.

        Raises
        ------
        ValueError
            If a width is not a positive integer or ``dtype`` is not float32 or float64.
        """
        dtype = resolve_dtype(dtype)
        d, m, d_out = _widths(d=d, m=m, d_out=d_out)
        A, G, B = _empty({"A": (m, d), "G": (m, d), "B": (d_out, m)}, dtype, device)
        return cls(A, G, B, construction=construction, trainable=trainable)

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the weights: ``construction`` and ``info``."""
        return _extra(self, ("construction", "info"))

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record (``load_state_dict``).

        Raises
        ------
        ValueError
            If the record is not ``{"construction": str, "info": dict}``.
        """
        _set_extra(self, state, {"construction": str, "info": dict})

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden activations ``phi(x) = (A x) * (G x)``, shape ``(..., m)``.

        ``x`` is a tensor of shape ``(..., d)``, converted to the weights' dtype; a wrong width
        or a non-finite entry raises :class:`ValueError`.
        """
        x = _checked_input(x, self.config.d, dtype=self.A.dtype)  # (..., d)
        return (x @ self.A.T) * (x @ self.G.T)  # (..., m)

    def kernel(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """The induced kernel ``K(x_a, z_b) = phi(x_a) . phi(z_b)``, shape ``(n_x, n_z)``."""
        return self.features(x) @ self.features(z).T  # (n_x, n_z)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``MLP(x) = phi(x) @ B.T``: ``(..., d) -> (..., d_c)``.

        Sync-free, like torch's own layers: ``x`` must be a tensor of the weights' dtype and
        device (nothing is cast; :func:`assocmem._checks.module_input`) and its values are not
        inspected. :meth:`features` validates the values and casts.
        """
        x = module_input(x, self.config.d, self.A)  # (..., d)
        return ((x @ self.A.T) * (x @ self.G.T)) @ self.B.T  # (..., d_c)

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

    Raises
    ------
    ValueError
        From the constructor, on tensors that are not finite, 2-D and of one dtype (float16 /
        bfloat16 refused) or have different numbers of rows, or ``F = 0``; from :meth:`kernel`
        and :meth:`forward`, on inputs as :class:`BilinearMLP` rejects them.
    """

    def __init__(self, keys: torch.Tensor, targets: torch.Tensor) -> None:
        super().__init__()
        keys, targets = _weights({"keys": keys, "targets": targets})
        if keys.shape[0] == 0:
            raise ValueError("keys must hold at least one stored key (F >= 1); got F = 0")
        if keys.dim() != 2 or targets.dim() != 2 or keys.shape[0] != targets.shape[0]:
            raise ValueError(
                f"need keys (F, d) and targets (F, d_c); got {tuple(keys.shape)}, {tuple(targets.shape)}"
            )
        self.register_buffer("keys", keys)  # (F, d)
        self.register_buffer("targets", targets)  # (F, d_c)

    @classmethod
    def empty(cls, F: int, d: int, d_out: int | None = None, *, dtype: torch.dtype | None = None,
              device: str | torch.device | None = None) -> "ExactK2Memory":
        """A memory of ``F`` facts with zero keys and targets, to load a ``state_dict`` into.

        Parameters
        ----------
        F, d : int
            Stored keys and their width, ``>= 1``.
        d_out : int, optional
            Width ``d_c`` of the targets (default ``d``).
        dtype, device
            As in :meth:`BilinearMLP.empty` (``device="meta"`` allocates nothing; load with
            ``assign=True``).

        Raises
        ------
        ValueError
            If a size is not a positive integer or ``dtype`` is not float32 or float64.
        """
        dtype = resolve_dtype(dtype)
        F, d, d_out = _widths(F=F, d=d, d_out=d_out)
        keys, targets = _empty({"keys": (F, d), "targets": (F, d_out)}, dtype, device)
        return cls(keys, targets)

    def kernel(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """``K_2(x_a, z_b) = <x_a, z_b>^2``, shape ``(n_x, n_z)``."""
        d = self.keys.shape[1]
        x, z = _checked_input(x, d), _checked_input(z, d, "z")
        dt = torch.promote_types(x.dtype, z.dtype)
        return (x.to(dt) @ z.to(dt).T) ** 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(1/F) sum_t c_f(t) <k_t, x>^2``: ``(..., d) -> (..., d_c)``; sync-free, no cast
        (as :meth:`BilinearMLP.forward`)."""
        x = module_input(x, self.keys.shape[1], self.keys)  # (..., d)
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

    Raises
    ------
    ValueError
        From the constructor, on inconsistent shapes or weights that are not finite 2-D tensors
        of one dtype (float16 / bfloat16 refused); from :meth:`hidden` and :meth:`forward`, on
        inputs as :class:`BilinearMLP` rejects them.
    """

    def __init__(self, W_gate: torch.Tensor, W_up: torch.Tensor, P: torch.Tensor) -> None:
        super().__init__()
        W_gate, W_up, P = _weights({"W_gate": W_gate, "W_up": W_up, "P": P})
        if W_gate.dim() != 2 or W_gate.shape != W_up.shape or P.dim() != 2 or P.shape[1] != W_gate.shape[0]:
            raise ValueError("need W_gate, W_up of shape (m, d) and P of shape (d_c, m)")
        self.W_gate = nn.Parameter(W_gate, requires_grad=False)  # (m, d)
        self.W_up = nn.Parameter(W_up, requires_grad=False)  # (m, d)
        self.P = nn.Parameter(P, requires_grad=False)  # (d_c, m)
        self.info: dict = {}

    @classmethod
    def empty(cls, d: int, m: int, d_out: int | None = None, *, dtype: torch.dtype | None = None,
              device: str | torch.device | None = None) -> "GatedReLUMLP":
        """A module of the given shape with zero weights, to load a ``state_dict`` into (as
        :meth:`BilinearMLP.empty`; ``d_out`` defaults to ``d``).

        Raises
        ------
        ValueError
            If a width is not a positive integer or ``dtype`` is not float32 or float64.
        """
        dtype = resolve_dtype(dtype)
        d, m, d_out = _widths(d=d, m=m, d_out=d_out)
        W_gate, W_up, P = _empty({"W_gate": (m, d), "W_up": (m, d), "P": (d_out, m)}, dtype, device)
        return cls(W_gate, W_up, P)

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the weights: ``info``."""
        return _extra(self, ("info",))

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record; a ValueError unless it is ``{"info": dict}``."""
        _set_extra(self, state, {"info": dict})

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden activations ``ReLU(W_gate x) * (W_up x)``, shape ``(..., m)``.

        (Named ``hidden``, not ``features``: the NTK MLP is not a Hebbian memory in these
        activations, so kernel-margin code must not treat them as one.)
        """
        x = _checked_input(x, self.W_gate.shape[1], dtype=self.W_gate.dtype)  # (..., d)
        return torch.relu(x @ self.W_gate.T) * (x @ self.W_up.T)  # (..., m)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``P hidden(x)``: ``(..., d) -> (..., d_c)``; sync-free, no cast (as
        :meth:`BilinearMLP.forward`; :meth:`hidden` validates and casts)."""
        x = module_input(x, self.W_gate.shape[1], self.W_gate)  # (..., d)
        return (torch.relu(x @ self.W_gate.T) * (x @ self.W_up.T)) @ self.P.T  # (..., d_c)

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


def bilinear_features(keys: torch.Tensor, A: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """Feature matrix ``Phi(A, G) = (K A^T) * (K G^T)``, shape ``(F, m)`` (App. B.2.5).

    Parameters
    ----------
    keys : torch.Tensor, shape ``(F, d)``
    A, G : torch.Tensor, shape ``(m, d)``

    Returns
    -------
    torch.Tensor, shape ``(F, m)``, dtype of the inputs

    Raises
    ------
    ValueError
        Inputs that are not finite 2-D tensors of one dtype (float16 / bfloat16 refused), ``A``
        and ``G`` of different shapes or a width other than that of the keys, or features that
        overflow the dtype.

    References
    ----------
    Seed 001, Algorithm 1 lines 2 and 4; App. B.2.5.
    """
    keys, A, G = _weights({"keys": keys, "A": A, "G": G})
    if A.shape != G.shape or A.shape[1] != keys.shape[1]:
        raise ValueError(f"need keys (F, d) and A, G of shape (m, d); got {tuple(keys.shape)}, "
                         f"{tuple(A.shape)}, {tuple(G.shape)}")
    return check_finite_result(_stacked_features(keys, torch.cat((A, G))), "the features (K A^T) * (K G^T)")


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
