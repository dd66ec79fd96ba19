"""Every memory of the book behind one interface: thin adapters to :class:`AssociativeMemory`.

Each adapter holds one of the library's memories and fits its natural interface to
``write(keys, values)`` / ``read(queries)`` (:mod:`assocmem.memory_protocol`, which states the
conventions for ``num_parameters`` and ``num_bits``). The science stays in the Parts; an adapter
converts, delegates and counts. Chapter 50 ("One table for every memory") measures them all.

====================  ====================================================================  ====================
name                  the memory (where it lives)                                           ``num_parameters``
====================  ====================================================================  ====================
``outer_product``     ``S = sum_i v_i k_i^T``                                               ``d_v d_k``
                      (:class:`~assocmem.linear.memory.OuterProductMemory`)
``least_squares``     ``S = V K^+``                                                         ``d_v d_k``
                      (:class:`~assocmem.linear.memory.LeastSquaresMemory`)
``delta_rule``        Widrow-Hoff, ``beta = 1``, one pass                                   ``d_v d_k``
                      (:class:`~assocmem.linear.memory.DeltaRuleMemory`)
``linear_attention``  the recurrent state of causal linear attention                        ``d_v d_k``
                      (:class:`~assocmem.linear.attention.LinearAttentionDecoder`)
``softmax_cache``     softmax attention over a key-value cache, scale 1                     ``n (d_k + d_v)``
                      (seed 000, §2; :func:`~assocmem.linear.attention.softmax_attention`)
``mlp_<method>``      the MLPs of Part II, width ``m``: ``unwhitened``, ``whitened``,       ``3 m d``
                      ``data_dependent``, ``ntk``, ``gd``
                      (:func:`~assocmem.mlps.capacity_sweeps.build_memory`)
``binary_sdm``        Kanerva's SDM with ``r`` random neurons on the signs of the keys      ``r (d_k + d_v + 1)``
                      (:class:`~assocmem.sdm.read.NeuronSDM`)
``continuous_sdm``    SDM on the sphere with a neuron everywhere: cap-intersection          ``n (d_k + d_v)``
                      weights (``Cont_SDM``, :mod:`assocmem.sdm.convergence.read_rules`)
``hopfield``          classical Hopfield network on ``[sign k; sign v]``                    ``(d_k + d_v)^2``
                      (:func:`~assocmem.sdm.kernels.hopfield.sign_keep`)
``modern_hopfield``   modern (dense) Hopfield retrieval, inverse temperature ``beta``       ``n (d_k + d_v)``
                      (:func:`~assocmem.sdm.read.attention_read`)
====================  ====================================================================  ====================

:func:`make_memory` builds one by name at a given key width ``d`` and *size* (the knob that sets
its parameter count: the MLP's width ``m``, the SDM's neuron count ``r``; ``None`` for the
memories whose size the key width or the number of pairs fixes).

References
----------
Seed 000 ("How much can a matrix remember?"), §2-§7; seed 001 ("MLPs are Hebbians"), Sec. 4.3 and
App. A.1.1; seed 002 (the review of Bricken & Pehlevan 2021). Hopfield, J. J. (1982), Neural
networks and physical systems with emergent collective computational abilities, PNAS 79.
Ramsauer, H., et al. (2021), Hopfield networks is all you need, ICLR (the modern Hopfield update
``xi <- X softmax(beta X^T xi)``, their eq. 3). Kanerva, P. (1988), Sparse distributed memory.
"""

from __future__ import annotations

import math
import inspect
from dataclasses import dataclass

import torch

from assocmem._checks import as_bool, as_int, as_real, positive_int, seed_int
from assocmem.linear.attention import LinearAttentionDecoder, softmax_attention
from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory
from assocmem.memory_protocol import AssociativeMemory
from assocmem.mlps._checks import module_dtype
from assocmem.mlps.facts import FactSet
from assocmem.sdm.convergence.read_rules import make_read_rule
from assocmem.sdm.geometry.balls import ball_size
from assocmem.sdm.kernels.hopfield import sign_keep
from assocmem.sdm.read.attention import attention_read
from assocmem.sdm.read.hamming import sign_binarize
from assocmem.sdm.read.neuron_view import NeuronSDM
from assocmem.dtypes import resolve_dtype
from assocmem.devices import resolve_device

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: The MLP memories of Part II, by the names of :data:`assocmem.mlps.capacity_sweeps.METHODS`. (The
#: builders are imported when an MLP is written: importing that sweep module registers the sweeps,
#: which imports this module's own sweep, so a module-level import would be circular.)
MLP_METHODS = ("gd", "ntk", "unwhitened", "whitened", "data_dependent")

__all__ = [
    "MLP_METHODS",
    "MEMORIES",
    "MemoryInfo",
    "MEMORY_INFO",
    "WRITE_RULES",
    "make_memory",
    "MatrixAdapter",
    "LinearAttentionState",
    "SoftmaxCache",
    "MLPAdapter",
    "BinarySDM",
    "ContinuousSDM",
    "ClassicalHopfield",
    "ModernHopfield",
    "sdm_radius",
]


# --------------------------------------------------------------------------------------------
# Part I: matrices and attention


class MatrixAdapter(AssociativeMemory):
    """A ``d_v x d_k`` matrix memory of Part I: outer-product, least-squares or delta rule.

    Delegates to :class:`~assocmem.linear.memory.OuterProductMemory`,
    :class:`~assocmem.linear.memory.LeastSquaresMemory` or
    :class:`~assocmem.linear.memory.DeltaRuleMemory` (``beta``, one pass per write by default),
    which check their own input further (the delta rule refuses keys with ``beta ||k||^2 >= 2``).

    Parameters
    ----------
    d_k, d_v : int
    rule : {"outer_product", "least_squares", "delta_rule"}
    beta : float, default 1.0
        Delta rule only: the writing strength.
    passes : int, default 1
        Delta rule only: sweeps over the pairs of each write.
    dtype, device
        As :class:`~assocmem.memory_protocol.AssociativeMemory`.

    Raises
    ------
    ValueError
        An unknown rule, or what the wrapped memory refuses.

    References
    ----------
    Seed 000, §3 (additive), §6 (least squares); Widrow & Hoff (1960), Schlag et al. (2021).
    """

    RULES = ("outer_product", "least_squares", "delta_rule")

    def __init__(self, d_k: int, d_v: int, rule: str = "outer_product", *, beta: float = 1.0, passes: int = 1,
                 dtype: torch.dtype | None = None, device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        if rule not in self.RULES:
            raise ValueError(f"unknown rule {rule!r}; valid rules: {', '.join(self.RULES)}")
        self.rule, self.name = rule, rule
        self.passes = positive_int("passes", passes)
        if rule == "outer_product":
            self.memory = OuterProductMemory(d_k, d_v, dtype=self.dtype, device=self.device)
        elif rule == "least_squares":
            self.memory = LeastSquaresMemory(d_k, d_v, dtype=self.dtype, device=self.device)
        else:
            self.memory = DeltaRuleMemory(d_k, d_v, beta, dtype=self.dtype, device=self.device)

    def _write(self, keys, values) -> None:
        if self.rule == "delta_rule":
            self.memory.write(keys, values, passes=self.passes)
        else:
            self.memory.write(keys, values)

    def _read(self, queries):
        return self.memory.read(queries)

    def _reset(self) -> None:
        self.memory.reset()

    @property
    def num_parameters(self) -> int:
        """``d_v d_k``, the entries of the state (the least-squares memory's kept pairs are not read)."""
        return self.memory.num_parameters


class LinearAttentionState(AssociativeMemory):
    """Causal linear attention's recurrent state ``S_t = S_{t-1} + v_t k_t^T``, read by ``S q``.

    A write feeds the pairs, in order, as tokens to a
    :class:`~assocmem.linear.attention.LinearAttentionDecoder` (its per-token outputs are
    discarded); a read multiplies the decoder's state by the queries. It is the outer-product
    memory built token by token (seed 000, §3), and the conformance tests check that it equals it.

    Parameters
    ----------
    d_k, d_v : int
    dtype, device
        As :class:`~assocmem.memory_protocol.AssociativeMemory`.

    References
    ----------
    Seed 000, §3; Katharopoulos et al. (2020), §3.4.
    """

    name = "linear_attention"

    def __init__(self, d_k: int, d_v: int, *, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        self.decoder = LinearAttentionDecoder(d_k, d_v, dtype=self.dtype, device=self.device)

    def _write(self, keys, values) -> None:
        for k_t, v_t in zip(keys, values):  # (d_k,), (d_v,): one token each
            self.decoder.step(k_t, k_t, v_t)

    def _read(self, queries):
        return queries @ self.decoder.S.T  # (B, d_k) @ (d_k, d_v)

    def _reset(self) -> None:
        self.decoder.reset()

    @property
    def num_parameters(self) -> int:
        """``d_v d_k``, the state (what the decoder holds, :attr:`LinearAttentionDecoder.numbers_held`)."""
        return self.d_v * self.d_k


class _PairStore(AssociativeMemory):
    """A memory that keeps every written pair (the cache, continuous SDM, modern Hopfield).

    ``keys`` ``(n, d_k)`` and ``values`` ``(n, d_v)`` grow with each write, in ``store_dtype``
    (the memory's dtype unless a subclass says otherwise); a read uses them all.
    """

    @property
    def store_dtype(self) -> torch.dtype:
        return self.dtype

    def _write(self, keys, values) -> None:
        self.keys = torch.cat([self.keys, keys.to(self.store_dtype)])
        self.values = torch.cat([self.values, values.to(self.store_dtype)])

    def _reset(self) -> None:
        self.keys = torch.zeros(0, self.d_k, dtype=self.store_dtype, device=self.device)
        self.values = torch.zeros(0, self.d_v, dtype=self.store_dtype, device=self.device)

    @property
    def num_parameters(self) -> int:
        """``n (d_k + d_v)``: the stored keys and values."""
        return self.keys.shape[0] * (self.d_k + self.d_v)


class SoftmaxCache(_PairStore):
    """Softmax attention over a key-value cache: ``sum_i softmax_i(scale q^T k_i) v_i``.

    Every written pair is kept (the cache, seed 000 §2) and a read is non-causal softmax attention
    of the queries over it (:func:`~assocmem.linear.attention.softmax_attention`).

    Parameters
    ----------
    d_k, d_v : int
    scale : float or None, default None
        Multiplier of the scores; ``None`` is the seed's 1 (no ``1/sqrt(d_k)``).
    dtype, device

    References
    ----------
    Seed 000, §2; Vaswani et al. (2017).
    """

    name = "softmax_cache"

    def __init__(self, d_k: int, d_v: int, *, scale: float | None = None, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        self.scale = None if scale is None else as_real(scale, "scale")
        self._reset()

    def _read(self, queries):
        return softmax_attention(queries, self.keys, self.values, causal=False, scale=self.scale)


# --------------------------------------------------------------------------------------------
# Part II: MLPs


class MLPAdapter(AssociativeMemory):
    """One of Part II's fact-storing MLPs of width ``m``, built from every pair written so far.

    A write appends the pairs to the fact set (keys, values as the value table, the identity map)
    and builds the memory with :func:`assocmem.mlps.capacity_sweeps.build_memory` (the same
    builders, ridge and seeds as chapter 13); a read is the MLP's output. The MLPs store facts
    between keys and values of one width ``d`` on the unit sphere.

    Parameters
    ----------
    d : int
        Key and value width (``d_k = d_v = d``).
    m : int
        Hidden width; ``num_parameters = 3 m d``.
    method : str
        One of ``gd``, ``ntk``, ``unwhitened``, ``whitened``, ``data_dependent``.
    seed : int, default 0
        Seed of the random weights (features, gate, initialisation).
    epochs, lr : int, float
        Gradient descent only.
    dtype, device

    Raises
    ------
    ValueError
        On :meth:`write`: keys or values off the unit sphere (the fact set refuses them), or what
        the builder refuses. On construction: an unknown method.

    References
    ----------
    Seed 001, Sec. 4.3, App. A.1.1 and A.3.1.
    """

    def __init__(self, d: int, m: int, method: str = "whitened", seed: int = 0, *, epochs: int = 10000,
                 lr: float = 1e-3, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d, d, dtype=dtype, device=device)
        if method not in MLP_METHODS:
            hint = (f" ({method!r} is the memory's name in make_memory; its method is {method[4:]!r})"
                    if isinstance(method, str) and method[4:] in MLP_METHODS and method.startswith("mlp_") else "")
            raise ValueError(f"unknown MLP method {method!r}; valid methods: {', '.join(MLP_METHODS)}{hint}")
        self.method, self.name = method, f"mlp_{method}"
        self.m = positive_int("m", m)
        self.seed = seed_int(seed)
        self.epochs, self.lr = positive_int("epochs", epochs), as_real(lr, "lr", minimum=0.0, strict_min=True)
        self._reset()

    def _write(self, keys, values) -> None:
        from assocmem.mlps.capacity_sweeps import build_memory  # not at import time: see MLP_METHODS

        k = torch.cat([self.keys, keys.double()])
        v = torch.cat([self.values, values.double()])
        # pairs that share a value (facts mapped to one row) store that row once, with a map: a
        # fact set refuses a value table with equal rows (decoding would count a tie)
        table, mapping = torch.unique(v, dim=0, return_inverse=True)
        if table.shape[0] == v.shape[0]:  # all distinct: the table in write order, as always
            table, mapping = v, torch.arange(k.shape[0], device=k.device)
        facts = FactSet(k, table, mapping, unit_norm=True)
        model = build_memory(self.method, facts, self.m, self.seed, epochs=self.epochs, lr=self.lr,
                             device=self.device)
        self.keys, self.values, self.model = k, v, model

    def _read(self, queries):
        with torch.no_grad():  # the MLP computes in its own dtype; the answer in the queries'
            return self.model(queries.to(module_dtype(self.model))).to(queries.dtype)

    def _reset(self) -> None:
        self.keys = torch.zeros(0, self.d_k, dtype=torch.float64, device=self.device)
        self.values = torch.zeros(0, self.d_v, dtype=torch.float64, device=self.device)
        self.model = None

    @property
    def num_parameters(self) -> int:
        """``3 m d``: the factors ``A``, ``G`` (``m x d``) and the readout (``d x m``), seed 001's ``W``."""
        return 3 * self.m * self.d_k


# --------------------------------------------------------------------------------------------
# Part III: SDM and Hopfield


def sdm_radius(n: int, r: int, active: float = 16.0) -> int:
    """The smallest Hamming radius at which an address activates ``active`` of ``r`` random neurons on average.

    A random neuron lies within ``d`` of an address with probability ``|B(d)| / 2^n``, so the
    expected number activated is ``r |B(d)| / 2^n``; the radius returned is the smallest ``d``
    with that at least ``active`` (``n`` if none is).

    Raises
    ------
    ValueError
        ``n`` or ``r`` not a positive integer, or ``active`` not a positive number.
    """
    n, r = positive_int("n", n), positive_int("r", r)
    active = as_real(active, "active", minimum=0.0, strict_min=True)
    for d in range(n + 1):
        if r * ball_size(d, n) >= active * 2**n:
            return d
    return n


class BinarySDM(AssociativeMemory):
    """Kanerva's sparse distributed memory with ``r`` random neurons, addressed by the signs of the keys.

    A key becomes the binary address ``1[k > 0]`` (:func:`assocmem.sdm.read.sign_binarize`, the
    binarisation of App. B.7); its value is the pointer, written to every neuron within the radius
    of the address (:meth:`assocmem.sdm.read.NeuronSDM.write`). A read returns the normalised sum
    of the contents of the neurons within the radius of the query's address (no threshold: the
    output stays in value space); a query that activates no written neuron reads the zero vector,
    which decodes to no fact.

    Parameters
    ----------
    d_k, d_v : int
        Address bits ``n = d_k``, pointer width ``d_v``.
    r : int
        Number of neurons.
    radius : int or None, default None
        Read and write radius; ``None`` takes :func:`sdm_radius` with ``active`` neurons per address.
    active : float, default 16
        Expected neurons per address when the radius is chosen.
    seed : int, default 0
        Seed of the neuron addresses.
    dtype, device

    References
    ----------
    Kanerva (1988), Ch. 7; Bricken & Pehlevan (2021), §1 and App. B.7; seed 002.
    """

    name = "binary_sdm"

    def __init__(self, d_k: int, d_v: int, r: int, *, radius: int | None = None, active: float = 16.0,
                 seed: int = 0, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        self.r = positive_int("r", r)
        self.radius = sdm_radius(d_k, self.r, active) if radius is None else as_int(radius, "radius", minimum=0)
        self.seed = seed_int(seed)
        self.sdm = NeuronSDM(d_k, self.r, self.radius, seed=self.seed, device=self.device)

    def _write(self, keys, values) -> None:
        self.sdm.write(sign_binarize(keys), values.double())

    def _read(self, queries):
        out = self.sdm.read(sign_binarize(queries), threshold=False, empty="nan")  # (B, d_v) float64
        return torch.nan_to_num(out, nan=0.0)  # an empty read is no answer: the zero vector

    def _reset(self) -> None:
        self.sdm.reset()

    @property
    def num_parameters(self) -> int:
        """``r (d_k + d_v + 1)``: each neuron's address bits, its contents and its count."""
        return self.r * (self.d_k + self.d_v + 1)

    @property
    def num_bits(self) -> int:
        """``r d_k`` address bits (one each) plus ``r (d_v + 1)`` float64 contents and counts."""
        return self.r * self.d_k + 64 * self.r * (self.d_v + 1)


class ContinuousSDM(_PairStore):
    """SDM on the unit sphere with a neuron at every point: each pattern weighted by its cap intersection.

    Bricken & Pehlevan's continuous SDM (App. B.3; the rule ``Cont_SDM`` of App. B.7) weights
    stored pattern ``mu`` by the area ``Ic`` of the intersection of the caps of cosine radius
    ``1 - 2 d / n`` around the query and around its key. Keys and their values are kept (the
    pattern view: with every neuron present, the patterns are what the memory holds); a read is
    ``sum_mu Ic_mu v_mu / sum_mu Ic_mu``, the zero vector when no cap overlaps. The weights come
    from :meth:`assocmem.sdm.convergence.read_rules.ReadRule.raw_weights`.

    Parameters
    ----------
    d_k, d_v : int
        ``n = d_k >= 2``.
    radius : int or None, default None
        Hamming-equivalent radius ``d``; ``None`` is ``n // 4`` (caps of cosine radius 1/2).
    dtype, device

    References
    ----------
    Bricken & Pehlevan (2021), App. B.3 and B.7; seed 002, "Connections".
    """

    name = "continuous_sdm"

    def __init__(self, d_k: int, d_v: int, *, radius: int | None = None, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        if d_k < 2:
            raise ValueError(f"continuous SDM needs d_k >= 2; got {d_k}")
        self.radius = d_k // 4 if radius is None else as_int(radius, "radius", minimum=0)
        self.rule = make_read_rule("Cont_SDM", d_k, self.radius, device=self.device, dtype=torch.float64)
        self._reset()

    def _write(self, keys, values) -> None:
        if bool((torch.linalg.vector_norm(keys, dim=1) == 0).any()):
            raise ValueError("continuous SDM keys must be non-zero (they are addresses on the sphere)")
        super()._write(keys, values)

    def _read(self, queries):
        if bool((torch.linalg.vector_norm(queries, dim=1) == 0).any()):
            raise ValueError("continuous SDM queries must be non-zero (they are addresses on the sphere)")
        w = self.rule.raw_weights(queries.double(), self.keys)  # (B, n)
        den = w.sum(dim=1, keepdim=True)
        return (w @ self.values) / torch.where(den > 0, den, torch.ones_like(den))

    @property
    def store_dtype(self) -> torch.dtype:
        """float64: the cap-intersection weights are computed in float64."""
        return torch.float64


def _bipolar(x: torch.Tensor) -> torch.Tensor:
    return 2.0 * sign_binarize(x).to(torch.float64) - 1.0


class ClassicalHopfield(AssociativeMemory):
    """Hopfield's network on ``N = d_k + d_v`` units, storing ``[sign k; sign v]``, recalling the value half.

    A write adds ``x x^T`` to the couplings ``T`` for each bipolar pattern
    ``x = [sign(k); sign(v)]`` (Hopfield 1982; the self-couplings are kept, as App. B.6 keeps them).
    A read is pattern completion: the key half is set to ``sign(q)``, the value half to the sign of
    its field from the key half, then ``steps`` synchronous updates ``x <- sign(T x)`` of all units
    (a unit with zero field keeps its value, :func:`assocmem.sdm.kernels.hopfield.sign_keep`) stop
    early at a fixed point. The output is the value half scaled by ``1 / sqrt(d_v)``, a unit vector.

    Parameters
    ----------
    d_k, d_v : int
    steps : int, default 5
        Most synchronous updates per read.
    dtype, device

    References
    ----------
    Hopfield (1982); Bricken & Pehlevan (2021), App. B.6; seed 002, claim C9.
    """

    name = "hopfield"

    def __init__(self, d_k: int, d_v: int, *, steps: int = 5, dtype: torch.dtype | None = None,
                 device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        self.steps = as_int(steps, "steps", minimum=0)
        self._reset()

    def _write(self, keys, values) -> None:
        x = torch.cat([_bipolar(keys), _bipolar(values)], dim=1)  # (n, N)
        self.T = self.T + x.T @ x  # (N, N), exact integers in float64

    def _read(self, queries):
        xk = _bipolar(queries)  # (B, d_k)
        xv = sign_keep(xk @ self.T[: self.d_k, self.d_k :], torch.ones(xk.shape[0], self.d_v, dtype=torch.float64,
                                                                          device=xk.device))
        x = torch.cat([xk, xv], dim=1)  # (B, N)
        for _ in range(self.steps):
            new = sign_keep(x @ self.T, x)
            if torch.equal(new, x):
                break
            x = new
        return x[:, self.d_k :] / math.sqrt(self.d_v)

    def _reset(self) -> None:
        N = self.d_k + self.d_v
        self.T = torch.zeros(N, N, dtype=torch.float64, device=self.device)

    @property
    def num_parameters(self) -> int:
        """``(d_k + d_v)^2``, the couplings ``T``."""
        return (self.d_k + self.d_v) ** 2


class ModernHopfield(_PairStore):
    """Modern (dense) Hopfield retrieval: ``steps`` updates ``xi <- K^T softmax(beta K xi)``, then the value read.

    The stored keys are the patterns of Ramsauer et al. (2021, eq. 3); the query is moved towards
    the nearest stored key by ``steps`` updates, and the output is ``V^T softmax(beta K xi)``
    (their Hopfield layer with values). With ``steps = 0`` this is softmax attention at inverse
    temperature ``beta`` (:func:`assocmem.sdm.read.attention_read` without normalisation).

    Parameters
    ----------
    d_k, d_v : int
    beta : float, default 16
        Inverse temperature. Large enough that random unit keys are separated at the sizes of
        chapter 50; the cache of seed 000 is the same read at ``beta = 1``.
    steps : int, default 1
    dtype, device

    References
    ----------
    Ramsauer, H., et al. (2021), Hopfield networks is all you need, ICLR, eq. 3 and Theorem 3.
    """

    name = "modern_hopfield"

    def __init__(self, d_k: int, d_v: int, *, beta: float = 16.0, steps: int = 1,
                 dtype: torch.dtype | None = None, device: str | torch.device | None = None) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        self.beta = as_real(beta, "beta", minimum=0.0, strict_min=True)
        self.steps = as_int(steps, "steps", minimum=0)
        self._reset()

    def _read(self, queries):
        xi = queries
        for _ in range(self.steps):
            xi = attention_read(xi, self.keys, self.keys, self.beta, normalize=False)
        return attention_read(xi, self.keys, self.values, self.beta, normalize=False)


# --------------------------------------------------------------------------------------------
# the catalogue


@dataclass(frozen=True)
class MemoryInfo:
    """How chapter 50 labels and sizes one memory.

    Attributes
    ----------
    label : str
        The name shown in tables and plots.
    part : str
        The Part it comes from (``"I"``, ``"II"``, ``"III"``).
    size : str or None
        The knob that sets ``num_parameters`` (``"m"``, ``"r"``), or None when the key width fixes
        it (matrices, Hopfield) or it grows with the pairs written (caches).
    grows_with_pairs : bool
        Whether ``num_parameters`` is proportional to the number of pairs (caches, pattern views).
    unit_sphere : bool
        Whether the memory needs unit keys and values of one width (the MLPs).
    write_rule : {"sums", "fits", "keeps"}
        How a write treats the keys' geometry (:data:`WRITE_RULES`): ``"sums"`` adds one term per
        pair whatever the other keys are (outer product, linear attention, the unwhitened and NTK
        MLPs, binary SDM, Hopfield); ``"fits"`` solves for the stored keys jointly, inverting or
        whitening their Gram matrix (least squares, the whitened and data-dependent MLPs),
        correcting each write by the current error (the delta rule) or training on them (GD);
        ``"keeps"`` stores the pairs and reads through a kernel of the query and every key (the
        caches, continuous SDM, modern Hopfield). Chapter 50 compares the spike's cost by it.
    trained : bool
        Whether the memory comes out of a training (the GD MLP): its results are a sample over
        initialisations, and the ``memory_table`` sweep stores several trainings of it.

    Raises
    ------
    ValueError
        On construction: an empty label, a part other than ``"I"``, ``"II"``, ``"III"``, a size
        other than None, ``"m"``, ``"r"``, an unknown write rule, or a flag that is not a bool.
    """

    label: str
    part: str
    size: str | None = None
    grows_with_pairs: bool = False
    unit_sphere: bool = False
    write_rule: str = "sums"
    trained: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError(f"label must be a non-empty str; got {self.label!r}")
        if self.part not in ("I", "II", "III"):
            raise ValueError(f"part must be 'I', 'II' or 'III'; got {self.part!r}")
        if self.size not in (None, "m", "r"):
            raise ValueError(f"size must be None, 'm' or 'r'; got {self.size!r}")
        if self.write_rule not in WRITE_RULES:
            raise ValueError(f"write_rule must be one of {WRITE_RULES}; got {self.write_rule!r}")
        for name in ("grows_with_pairs", "unit_sphere", "trained"):
            as_bool(getattr(self, name), name)


#: The write rules of :attr:`MemoryInfo.write_rule`.
WRITE_RULES = ("sums", "fits", "keeps")


_MLP_LABELS = {"gd": "GD MLP", "ntk": "NTK MLP", "unwhitened": "unwhitened MLP", "whitened": "whitened MLP",
               "data_dependent": "data-dependent MLP"}

MEMORY_INFO = {
    "outer_product": MemoryInfo("outer product", "I"),
    "least_squares": MemoryInfo("least squares", "I", write_rule="fits"),
    "delta_rule": MemoryInfo("delta rule", "I", write_rule="fits"),
    "linear_attention": MemoryInfo("linear attention", "I"),
    "softmax_cache": MemoryInfo("softmax KV cache", "I", grows_with_pairs=True, write_rule="keeps"),
    **{f"mlp_{m}": MemoryInfo(_MLP_LABELS[m], "II", size="m", unit_sphere=True,
                              write_rule="sums" if m in ("ntk", "unwhitened") else "fits", trained=m == "gd")
      for m in MLP_METHODS},
    "binary_sdm": MemoryInfo("binary SDM", "III", size="r"),
    "continuous_sdm": MemoryInfo("continuous SDM", "III", grows_with_pairs=True, write_rule="keeps"),
    "hopfield": MemoryInfo("Hopfield", "III"),
    "modern_hopfield": MemoryInfo("modern Hopfield", "III", grows_with_pairs=True, write_rule="keeps"),
}
#: Every memory :func:`make_memory` builds, in the order of chapter 50's table.
MEMORIES = tuple(MEMORY_INFO)


def _adapter_class(name: str) -> type:
    if name in MatrixAdapter.RULES:
        return MatrixAdapter
    if name.startswith("mlp_"):
        return MLPAdapter
    return {"linear_attention": LinearAttentionState, "softmax_cache": SoftmaxCache, "binary_sdm": BinarySDM,
            "continuous_sdm": ContinuousSDM, "hopfield": ClassicalHopfield, "modern_hopfield": ModernHopfield}[name]


def _keyword_options(cls: type) -> tuple[str, ...]:
    """The keyword arguments ``make_memory`` may pass on to ``cls`` (its own, not d, size, dtype, device)."""
    fixed = {"self", "d", "d_k", "d_v", "m", "r", "rule", "method", "seed", "dtype", "device"}
    params = inspect.signature(cls.__init__).parameters.values()
    return tuple(p.name for p in params if p.name not in fixed and p.kind is not p.VAR_KEYWORD)


_OPTIONS = {cls: _keyword_options(cls) for cls in (MatrixAdapter, LinearAttentionState, SoftmaxCache, MLPAdapter,
                                                     BinarySDM, ContinuousSDM, ClassicalHopfield, ModernHopfield)}


def make_memory(name: str, d: int, size: int | None = None, seed: int = 0, *,
                dtype: torch.dtype | None = None, device: str | torch.device | None = None,
                **options: Any) -> AssociativeMemory:
    """Build the memory ``name`` for keys and values of width ``d`` at a given size.

    Parameters
    ----------
    name : str
        One of :data:`MEMORIES`.
    d : int
        Key and value width (``d_k = d_v = d``).
    size : int or None
        The memory's size knob (:attr:`MemoryInfo.size`): the MLP's width ``m``, the SDM's neuron
        count ``r``; must be None for the others.
    seed : int, default 0
        Seed of the memory's random parts (MLP weights, SDM neurons).
    dtype, device
    **options
        Passed to the adapter (``epochs`` for ``mlp_gd``, ``beta`` for ``modern_hopfield``, ...).

    Returns
    -------
    AssociativeMemory

    Raises
    ------
    ValueError
        An unknown name (the message lists the valid ones), a missing or superfluous size, or an
        option the memory's adapter does not take (the message lists the ones it takes).
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    if name not in MEMORY_INFO:
        hint = (f" (the MLP built by method {name!r} is the memory 'mlp_{name}')"
                if isinstance(name, str) and name in MLP_METHODS else "")
        raise ValueError(f"unknown memory {name!r}; valid memories: {', '.join(MEMORIES)}{hint}")
    info = MEMORY_INFO[name]
    if (info.size is None) != (size is None):
        raise ValueError(f"{name}: size must be {'None' if info.size is None else 'the ' + info.size}; got {size!r}")
    valid = _OPTIONS[_adapter_class(name)]
    if name in MatrixAdapter.RULES and name != "delta_rule":  # beta and passes are the delta rule's
        valid = tuple(o for o in valid if o not in ("beta", "passes"))
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"{name}: unknown option(s) {', '.join(unknown)}; valid options: "
                         f"{', '.join(valid) if valid else 'none'}")
    kw = dict(dtype=dtype, device=device)
    if name in MatrixAdapter.RULES:
        return MatrixAdapter(d, d, name, **options, **kw)
    if name == "linear_attention":
        return LinearAttentionState(d, d, **options, **kw)
    if name == "softmax_cache":
        return SoftmaxCache(d, d, **options, **kw)
    if name.startswith("mlp_"):
        return MLPAdapter(d, size, name[4:], seed, **options, **kw)
    if name == "binary_sdm":
        return BinarySDM(d, d, size, seed=seed, **options, **kw)
    if name == "continuous_sdm":
        return ContinuousSDM(d, d, **options, **kw)
    if name == "hopfield":
        return ClassicalHopfield(d, d, **options, **kw)
    return ModernHopfield(d, d, **options, **kw)

