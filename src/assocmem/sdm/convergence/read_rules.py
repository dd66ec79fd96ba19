"""One read of the App. B.7 rules, vectorised over a batch of queries: :class:`ReadRule`.

Each rule of Bricken & Pehlevan (2021), App. B.7, reads ``sum_mu w_mu p_mu / sum_mu w_mu`` from
an autoassociative memory and then applies the majority threshold ``g(e) = 1[e > 1/2]``
(binary rules) or L2-normalises (continuous rules); the rules differ in the pattern weight
``w_mu``:

=============================  ==========  ==================================================  =========
name                           space       pattern weight ``w_mu``                             output
=============================  ==========  ==================================================  =========
``Binary_SDM``                 binary      ``I(dv_mu, d, n)``, the exact circle intersection   majority
``Binary_SDM_NeuronLimit``     binary      ``I r / 2^n`` stochastically rounded to integers    majority
``Binary_SDM_BFit_Attention``  binary      ``exp(beta (1 - 2 dv_mu / n))``, beta fit to ``I``  majority
``Cont_SDM``                   continuous  ``Ic(rho_mu)``, the cap intersection (App. B.3)     unit norm
``Cont_SDM_NeuronLimit``       continuous  ``Ic r`` stochastically rounded to integers         unit norm
``Cont_Binary_SDM``            continuous  ``I(floor(n/2 (1 - rho_mu)), d, n)`` (Eq. 5)        unit norm
``Cont_SDM_BFit_Attention``    continuous  ``exp(beta rho_mu)``, beta fit to ``I``             unit norm
``Cont_SDM_CFit_Attention``    continuous  ``exp(beta rho_mu)``, beta fit to ``Ic``            unit norm
=============================  ==========  ==================================================  =========

with ``dv_mu`` the Hamming distance and ``rho_mu`` the cosine between the query and pattern
``mu``; ``Binary_Neuron_SDM`` reads through ``r`` explicit neurons
(:class:`assocmem.sdm.read.NeuronSDM`). :func:`make_read_rule` builds a :class:`ReadRule`, whose
per-distance weight tables (the circle intersection, expected neuron counts, and the cap
intersection interpolated on a grid uniform in ``sin(t/2)``) are computed once on the host in
log space, so that ``r = 2^64`` and ``n = 1000`` neither overflow nor underflow;
:class:`PreparedPatterns` holds the stored patterns in the form a rule reads them.
:func:`cont_sdm_read_reference` is the plain ``Cont_SDM`` read that the tabulated one is tested
against and benchmarked beside (``<fast path>_reference``, the library's convention). Used by the
convergence and learnt-projection experiments of chapter 36 and by ``bench_sdm_read.py``.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.benchmarking import load_capped_threads
from assocmem.devices import resolve_device, uniform_on_cpu_
from assocmem.dtypes import cast_checked, resolve_dtype
from assocmem.sdm._common import _torch_seed, _unit_norm
from assocmem.sdm.convergence._common import _as_tensor, _check_dtype
from assocmem.sdm.convergence.algorithms import PAPER_NEURONS, algorithm_spec
from assocmem.sdm.geometry._common import _check_r
from assocmem.sdm.geometry.beta_fit import fit_beta
from assocmem.sdm.geometry.intersection import circle_intersection_table
from assocmem.sdm.geometry.spherical_caps import log_cap_intersection
from assocmem.sdm.read.neuron_view import NeuronSDM

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = ["ReadRule", "PreparedPatterns", "make_read_rule", "cont_sdm_read_reference"]

#: Most neurons ``Binary_Neuron_SDM`` may hold (their addresses take ``r n`` bytes).
_MAX_EXPLICIT_NEURONS = 2**26


@functools.lru_cache(maxsize=512)
def _log_intersection_table(n: int, d: int) -> np.ndarray:
    """``log I(dv, d, n)`` for ``dv = 0..n`` (``-inf`` where ``I = 0``), from exact integers."""
    table = circle_intersection_table(n, d)
    return np.array([math.log(v) if v > 0 else -math.inf for v in table], dtype=np.float64)


@functools.lru_cache(maxsize=512)
def _expected_count_table(n: int, d: int, r: Fraction) -> np.ndarray:
    """``I(dv, d, n) r / 2^n`` for ``dv = 0..n``, exact rationals rounded once to float64."""
    table = circle_intersection_table(n, d)
    scale = r / (1 << n)
    return np.array([float(Fraction(v) * scale) for v in table], dtype=np.float64)


@dataclass(frozen=True)
class _CapTable:
    """``log Ic`` on a grid uniform in ``u = sin(t/2) = sqrt((1 - rho)/2)``, for interpolation.

    Where the caps stop overlapping (``t = 2 theta``, ``u = u0 = sin theta``, if ``theta <
    pi/2``) ``Ic`` vanishes like ``(u0 - u)^(n/2)`` (the lens between two touching caps of the
    ``(n-1)``-sphere), so ``log Ic`` has a logarithmic singularity there. The table holds the
    smooth remainder ``h = log Ic - (n/2) log((K - 1)(u0 - u))`` and the reader adds the
    singular term back; without an edge, ``h = log Ic``.
    """

    base: np.ndarray  # (K - 1,) h at the left node of each cell (-inf beyond the edge)
    slope: np.ndarray  # (K - 1,) increment of h across the cell (finite everywhere)
    size: int  # K
    u_zero: float  # Ic = 0 for u >= u_zero (inf if the caps always overlap)
    edge_power: float  # n/2 if there is an edge, else 0


@functools.lru_cache(maxsize=128)
def _cap_table(n: int, d: int, size: int) -> _CapTable:
    u = np.linspace(0.0, 1.0, size)
    rho = np.clip(1.0 - 2.0 * u * u, -1.0, 1.0)
    logs = np.asarray(log_cap_intersection(rho, d, n), dtype=np.float64)
    c = 1.0 - 2.0 * d / n
    theta = math.acos(max(-1.0, min(1.0, c)))
    has_edge = 2.0 * theta < math.pi and d > 0
    u_zero = math.sin(theta) if has_edge else math.inf
    power = n / 2.0 if has_edge else 0.0
    h = logs.copy()
    if has_edge:
        k1 = size - 1
        inside = u < u_zero
        h[inside] -= power * np.log(k1 * (u_zero - u[inside]))
        h[~inside] = -math.inf
    left, right = h[:-1], h[1:]
    both = np.isfinite(left) & np.isfinite(right)
    slope = np.where(both, right - np.where(both, left, 0.0), 0.0)
    if has_edge:  # the cell holding the edge: extrapolate the smooth part from its left neighbour
        last = np.flatnonzero(np.isfinite(left) & ~np.isfinite(right))
        for j in last:
            if j >= 1 and both[j - 1]:
                slope[j] = slope[j - 1]
    return _CapTable(base=left.copy(), slope=slope, size=size, u_zero=u_zero, edge_power=power)


@dataclass
class PreparedPatterns:
    """Stored patterns in the form a :class:`ReadRule` reads them (see :meth:`ReadRule.prepare`).

    Attributes
    ----------
    patterns : torch.Tensor, shape ``(m, n)``
        0/1 (binary rules) or unit rows (continuous rules), in the rule's dtype and device.
    transposed : torch.Tensor, shape ``(n, m)``
        ``patterns.T``, contiguous.
    ones : torch.Tensor or None, shape ``(m,)``
        Number of ones per binary pattern (for Hamming distances).
    memory : NeuronSDM or None
        The neurons holding the patterns (``Binary_Neuron_SDM`` only).
    """

    patterns: torch.Tensor
    transposed: torch.Tensor
    ones: torch.Tensor | None = None
    memory: NeuronSDM | None = None

    @property
    def m(self) -> int:
        return int(self.patterns.shape[0])


def _same_device(a: torch.device, b: torch.device) -> bool:
    """``cuda`` and ``cuda:0`` are the same device when the current one is 0."""
    if a.type != b.type:
        return False
    if a.index is None or b.index is None:
        current = torch.cuda.current_device() if a.type == "cuda" and torch.cuda.is_available() else 0
        return (a.index if a.index is not None else current) == (b.index if b.index is not None else current)
    return a.index == b.index


class _Workspace:
    """Named ``(rows, m)`` buffers, allocated on first use."""

    _DTYPES = {"i": torch.int32}

    def __init__(self, rows: int, m: int, dtype: torch.dtype, device: torch.device):
        self.rows, self.m, self.dtype, self.device = rows, m, dtype, device
        self._buffers: dict[str, torch.Tensor] = {}

    def view(self, name: str, b: int) -> torch.Tensor:
        """The first ``b`` rows of buffer ``name`` (contiguous)."""
        buf = self._buffers.get(name)
        if buf is None:
            buf = torch.empty(self.rows, self.m, dtype=self._DTYPES.get(name, self.dtype), device=self.device)
            self._buffers[name] = buf
        return buf[:b]


class ReadRule:
    """One SDM or attention read, vectorised over a batch of queries.

    Build with :func:`make_read_rule`. ``rule(queries, patterns)`` performs one read of every
    query from an autoassociative memory holding ``patterns`` (pointers = addresses):

        xi_new = g( sum_mu w_mu p_mu / sum_mu w_mu ),

    with the weights ``w_mu`` of the rule (module docstring), ``g`` the majority threshold for
    binary rules and L2 normalisation for continuous ones. A query whose weights are all zero
    (no pattern within ``2d`` for the binary intersection, none inside the cap overlap, or every
    neuron count rounded to 0) is returned unchanged, as in the authors' code.

    Weights are computed in log space and each query's weights are divided by their largest
    value before they are exponentiated, so nothing overflows (``r = 2^64``, ``n = 1000``) and no
    nonempty read underflows to an empty one. Neuron-limited rules instead use absolute expected
    counts (``<= r``) so that the stochastic rounding sees the true fractional parts; the
    expected-count table is an exact rational rounded once.

    Parameters
    ----------
    name : str or Algorithm
        One of :data:`ALL_ALGORITHMS`.
    n : int
        Dimension, ``>= 2``.
    d : int
        Radius, ``0 <= d <= n``. Continuous rules use the threshold cosine ``1 - 2d/n``.
    r : int or float, optional
        Number of neurons, for the neuron-limited rules and ``Binary_Neuron_SDM`` (required
        there, ignored elsewhere). The expected count of neurons in an intersection is
        ``I r / 2^n`` (binary) or ``Ic r`` (continuous, ``Ic`` an area fraction); each read draws
        ``floor(c) + Bernoulli(c - floor(c))`` independently per query and pattern, an integer
        with mean ``c`` (stochastic rounding; the authors' model of a finite neuron count).
        :data:`PAPER_NEURONS` holds the authors' values.
    beta : float, optional
        Inverse temperature for the softmax rules; default: fitted (Eq. 10) to the binary
        (``BFit``) or cap (``CFit``) intersection over ``dv = 0..d-1``.
    beta_convention : {"authors", "ols"}, default "authors"
        Slope convention of the fit (:func:`assocmem.sdm.fit_beta`); ``"authors"`` reproduces
        the paper's betas.
    seed : int, default 0
        Seed of the stochastic rounding and of ``Binary_Neuron_SDM``'s neuron addresses; both
        draw on the CPU and move to the rule's device (a seed, the same numbers on every device).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where reads run.
    dtype : torch.float32 or torch.float64, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Floating type of the reads. Hamming distances are exact in both (integers below
        ``2^24``); ``float32`` is about twice as fast on CPUs.
    cap_table_size : int, default 8193
        Grid points of the cap-intersection table (``Cont_SDM*``).
    authors_cap_counts : bool, default False
        ``Cont_SDM_NeuronLimit`` only: multiply the expected counts by ``e^2 / 2``, as the
        authors' code does (its ``cap_intersection`` in ``SDM_Circ_Inter_Funcs.py`` adds ``2``
        to the log-area where it means ``log 2``; [BP21-code]). The factor
        cancels in normalised weights but not in counts that are rounded to integers.
    chunk_size : int, default 256
        Queries per block. The ``(block, m)`` weight matrices live in buffers reused across
        reads (a rule is therefore not safe to share between threads).

    Attributes
    ----------
    name, n, d, r, beta, spec, device, dtype

    Raises
    ------
    ValueError
        From :func:`make_read_rule`.

    Notes
    -----
    State: the generator of the stochastic rounding, changed by :meth:`manual_seed` and by the
    reads of neuron-limited rules. Both are atomic: a call that raises leaves it as it was.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1, Eq. 2, Eq. 5, Eq. 6, Eq. 9, Eq. 10, App. B.3, App. B.7;
    the authors' ``Implementations_Associative_Memory.py`` (``update_using_cache``).
    """

    def __init__(self, name: str, n: int, d: int, *, r: float | None = None, beta: float | None = None,
                 beta_convention: str = "authors", seed: int = 0, device: str | torch.device | None = None,
                 dtype: torch.dtype | None = None, cap_table_size: int = 8193, chunk_size: int = 256,
                 authors_cap_counts: bool = False) -> None:
        dtype = resolve_dtype(dtype)
        self.spec = algorithm_spec(name)
        self.name = self.spec.name
        self.n = _as_int(n, "n")
        if self.n < 2:
            raise ValueError(f"n must be >= 2, got {self.n}")
        self.d = _as_int(d, "d")
        if self.d < 0 or self.d > self.n:
            raise ValueError(f"the radius d must lie in [0, n] = [0, {self.n}], got d = {self.d}")
        self.dtype = _check_dtype(dtype)
        self.device = resolve_device(device, dtype=self.dtype)
        self.chunk_size = _as_int(chunk_size, "chunk_size")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        if beta_convention not in ("authors", "ols"):
            raise ValueError(f"beta_convention must be 'authors' or 'ols', got {beta_convention!r}")
        self.beta_convention = beta_convention
        self.seed = _torch_seed(seed)
        self.r = None
        if self.spec.needs_r:
            if r is None:
                raise ValueError(f"{self.name} needs the number of neurons r (e.g. PAPER_NEURONS"
                                 f"[{self.n}] = {PAPER_NEURONS.get(self.n, 'n/a')})")
            fr = _check_r(r)
            self.r = int(fr) if fr.denominator == 1 else float(r)
            self._r_fraction = fr
            if self.spec.neuron_limited and fr > 10**300:
                raise ValueError(f"r = {r!r} is too large for neuron counts in floating point")
            if self.spec.weights == "neurons" and (fr.denominator != 1 or fr > _MAX_EXPLICIT_NEURONS):
                raise ValueError(f"Binary_Neuron_SDM stores r explicit neurons: r must be an integer "
                                 f"<= {_MAX_EXPLICIT_NEURONS}, got {r!r} (the authors used r = 10^5)")
        self.beta = None
        if self.spec.weights == "softmax":
            if beta is None:
                if self.d < 2:
                    raise ValueError(f"fitting beta needs d >= 2 (the fit uses dv = 0..d-1), got "
                                     f"d = {self.d}; pass beta explicitly")
                beta = fit_beta(self.n, self.d, convention=beta_convention,
                                intersection=self.spec.beta_fit).beta
            try:
                b = as_real(beta, "beta")  # no booleans, strings, NaN or infinities
            except ValueError:
                raise ValueError(f"beta must be a finite real number, got {beta!r}") from None
            top = float(torch.finfo(self.dtype).max)
            if 2.0 * abs(b) > top:  # the binary read forms beta - 2 beta dv / n, down to -beta
                raise ValueError(f"beta = {b!r} overflows the {self.dtype} read (|beta| must stay "
                                 f"below {top / 2:.3g}); use dtype=torch.float64")
            self.beta = b
        self.cap_table_size = _as_int(cap_table_size, "cap_table_size")
        if self.cap_table_size < 2:
            raise ValueError(f"cap_table_size must be >= 2, got {self.cap_table_size}")
        self.authors_cap_counts = bool(authors_cap_counts)
        self._ws = None
        self._build_tables()
        self.manual_seed(self.seed)

    # --------------------------------------------------------------------------------------

    def _to(self, array: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(array, dtype=self.dtype).to(self.device)

    def _build_tables(self) -> None:
        spec, n, d = self.spec, self.n, self.d
        self._log_table = self._count_table = self._cap = None
        if spec.weights == "intersection":
            if spec.neuron_limited:
                counts = _expected_count_table(n, d, self._r_fraction)
                if self.dtype == torch.float32 and counts.max() > 3e38:
                    raise ValueError("expected neuron counts overflow float32; use dtype=torch.float64")
                self._count_table = self._to(counts)
            else:
                self._log_table = self._to(_log_intersection_table(n, d))
        elif spec.weights == "cap":
            tab = _cap_table(n, d, self.cap_table_size)
            self._cap = tab
            self._cap_base = self._to(tab.base)
            self._cap_slope = self._to(tab.slope)
            self._log_r = (math.log(self._r_fraction.numerator) - math.log(self._r_fraction.denominator)
                           if spec.neuron_limited else 0.0)
            if spec.neuron_limited and self.authors_cap_counts:
                self._log_r += 2.0 - math.log(2.0)
            if spec.neuron_limited and self.dtype == torch.float32 and self._log_r > 87.0:
                raise ValueError("r overflows float32 neuron counts; use dtype=torch.float64")
        # snapping for Cont_Binary_SDM: distances within rounding of an integer count as it
        self._snap = 16.0 * n * float(torch.finfo(self.dtype).eps)
        # exp floor (see _safe_exp) and the tiny positive floor of log arguments
        tiny = float(torch.finfo(self.dtype).tiny)
        self._exp_floor = math.log(tiny) + 1.0
        self._zero_below = math.exp(self._exp_floor + 0.5)
        self._log_floor = tiny * 2.0**24
        self._log_edge_cut = math.log(self._log_floor) + 1.0

    def manual_seed(self, seed: int) -> "ReadRule":
        """Reseed the stochastic rounding (neuron-limited rules); returns ``self``.

        Raises
        ------
        ValueError
            If ``seed`` is not an integer in ``[-2^63, 2^64 - 1]``; the generator is then
            unchanged.
        """
        self._generator = torch.Generator(device="cpu").manual_seed(_torch_seed(seed))  # CPU draws
        return self

    def __repr__(self) -> str:
        extra = []
        if self.r is not None:
            extra.append(f"r={self.r}")
        if self.beta is not None:
            extra.append(f"beta={self.beta:.4g}")
        tail = (", " + ", ".join(extra)) if extra else ""
        return (f"ReadRule({self.name!r}, n={self.n}, d={self.d}{tail}, device={str(self.device)!r}, "
                f"dtype={self.dtype})")

    @property
    def space(self) -> str:
        """``"binary"`` or ``"continuous"``."""
        return self.spec.space

    @property
    def is_binary(self) -> bool:
        return self.spec.space == "binary"

    # --------------------------------------------------------------------------------------
    # input preparation

    def _rows(self, x, name: str, min_rows: int) -> torch.Tensor:
        x = _as_tensor(x, name)
        if x.ndim != 2:
            raise ValueError(f"{name} must have shape ({'B' if name == 'queries' else 'm'}, n), got "
                             f"{tuple(x.shape)}")
        if x.shape[1] != self.n:
            raise ValueError(f"{name} have n = {x.shape[1]} components but the rule has n = {self.n}")
        if x.shape[0] < min_rows:
            raise ValueError(f"{name} must have at least {min_rows} row(s), got {x.shape[0]}")
        if x.is_complex():
            raise ValueError(f"{name} must be real, got a complex tensor")
        x = x.to(self.device)
        if self.is_binary:
            if x.dtype == torch.bool:
                x = x.to(torch.uint8)
            if x.numel() and not bool(((x == 0) | (x == 1)).all()):
                raise ValueError(f"{name} must be binary (entries 0 or 1) for {self.name}")
            return x.to(self.dtype)
        if x.is_floating_point() and x.numel() and not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name} must have finite entries")
        x = cast_checked(x, self.dtype, name)  # float64 beyond float32's range: an overflow error
        norm = _unit_norm(x)  # no overflow to inf (and a zero row) for float32 entries > 1e19
        if bool((norm == 0).any()):
            raise ValueError(f"{name} has a zero vector, which cannot be L2-normalised")
        return x / norm

    def prepare_queries(self, queries: ArrayLike) -> torch.Tensor:
        """Validate queries and put them in the rule's form.

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)``
            0/1 vectors (binary rules) or nonzero real vectors (continuous rules).

        Returns
        -------
        torch.Tensor, shape ``(B, n)``
            On the rule's device and dtype; continuous queries L2-normalised.

        Raises
        ------
        ValueError
            On a shape other than ``(B, n)``, float16/bfloat16 input (:mod:`assocmem.dtypes`),
            non-binary entries (binary rules), non-finite entries, entries that overflow the
            rule's dtype or zero vectors (continuous rules).
        """
        return self._rows(queries, "queries", 0)

    def prepare(self, patterns: ArrayLike | PreparedPatterns) -> PreparedPatterns:
        """Validate the stored patterns once, for many reads (:meth:`step`, :func:`converge`).

        Parameters
        ----------
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``
            0/1 rows (binary rules) or nonzero real rows (continuous rules, L2-normalised
            here), ``m >= 1``. A :class:`PreparedPatterns` is returned as is.

        Returns
        -------
        PreparedPatterns
            For ``Binary_Neuron_SDM`` this writes the patterns into ``r`` random neurons
            (seeded by the rule's ``seed``).

        Raises
        ------
        ValueError
            As :meth:`prepare_queries`, if ``m = 0``, or for a :class:`PreparedPatterns` made by
            a rule of another space, dtype, device, ``n`` or (``Binary_Neuron_SDM``) other
            neurons, which this rule would read wrongly.
        """
        if isinstance(patterns, PreparedPatterns):
            self._check_prepared(patterns)
            return patterns
        p = self._rows(patterns, "patterns", 1)
        prep = PreparedPatterns(patterns=p, transposed=p.T.contiguous())
        if self.is_binary:
            prep.ones = p.sum(-1)
        if self.spec.weights == "neurons":
            mem = NeuronSDM(self.n, self.r, self.d, seed=self.seed, device=self.device)
            prep.memory = mem.write(p, p)
        return prep

    def _check_prepared(self, prep: PreparedPatterns) -> None:
        """A :class:`PreparedPatterns` made for this kind of rule (else reads would be wrong)."""
        p = prep.patterns
        problems = []
        if p.ndim != 2 or p.shape[1] != self.n or p.shape[0] < 1:
            problems.append(f"shape {tuple(p.shape)}, not (m, {self.n}) with m >= 1")
        if p.dtype != self.dtype:
            problems.append(f"dtype {p.dtype}, not {self.dtype}")
        if not _same_device(p.device, self.device):
            problems.append(f"device {p.device}, not {self.device}")
        if (prep.ones is not None) != self.is_binary:
            problems.append(f"prepared for a {'binary' if prep.ones is not None else 'continuous'} "
                            f"rule, not a {self.space} one")
        if self.spec.weights == "neurons":
            mem = prep.memory
            if mem is None or mem.n != self.n or mem.r != self.r or mem.d != self.d:
                problems.append(f"its neurons are not this rule's (n = {self.n}, r = {self.r}, "
                                f"d = {self.d})")
        if problems:
            raise ValueError(f"patterns is a PreparedPatterns that {self.name} cannot read: "
                             + "; ".join(problems) + ". Call this rule's prepare()")

    # --------------------------------------------------------------------------------------
    # weights

    def _workspace(self, rows: int, m: int) -> "_Workspace":
        """Buffers for one block of ``rows`` queries against ``m`` patterns, reused across reads.

        Fresh multi-megabyte tensors cost page faults on every read; on a CPU that is most of the
        time of a read. The buffers are kept for the largest block seen with this ``m``.
        """
        ws = self._ws
        if ws is None or ws.m != m or ws.rows < rows:
            ws = self._ws = _Workspace(max(rows, 1), m, self.dtype, self.device)
        return ws

    def _block_weights(self, x: torch.Tensor, prep: PreparedPatterns) -> tuple[torch.Tensor, torch.Tensor]:
        """Unnormalised weights ``(b, m)`` (scaled per row) and their row sums ``(b, 1)``.

        The weights live in a workspace buffer that the next call overwrites.
        """
        spec, n = self.spec, self.n
        b, m = x.shape[0], prep.m
        ws = self._workspace(b, m)
        s = torch.mm(x, prep.transposed, out=ws.view("s", b))  # overlaps (binary) or cosines
        if self.is_binary:
            dist = s.mul_(-2.0).add_(prep.ones).add_(x.sum(-1, keepdim=True))  # exact integers
            if spec.weights == "softmax":
                logw = dist.mul_(-2.0 * self.beta / n).add_(self.beta)
            else:
                table = self._count_table if spec.neuron_limited else self._log_table
                logw = self._lookup(table, dist, ws, b)
                if spec.neuron_limited:
                    return self._finish_counts(logw, ws, b)
        else:
            cos = s.clamp_(-1.0, 1.0)
            if spec.weights == "softmax":
                logw = cos.mul_(self.beta)
            elif spec.weights == "intersection":  # Cont_Binary_SDM: Eq. 5 with the floor
                h = cos.neg_().add_(1.0).mul_(0.5 * n).add_(self._snap).floor_().clamp_(0, n)
                logw = self._lookup(self._log_table, h, ws, b)
            else:  # cap
                logw = self._cap_log_weights(cos, ws, b)
                if spec.neuron_limited:
                    counts = self._safe_exp(logw.add_(self._log_r))
                    return self._finish_counts(counts, ws, b)
        top = logw.amax(-1, keepdim=True)
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
        w = self._safe_exp(logw.sub_(top))
        return w, w.sum(-1, keepdim=True)

    @staticmethod
    def _lookup(table: torch.Tensor, index: torch.Tensor, ws: "_Workspace", b: int) -> torch.Tensor:
        """``table[index]`` for integer-valued float ``index``, into workspace buffers."""
        idx = ws.view("i", b)
        idx.copy_(index)  # float -> int32; int32 indices gather fast
        out = ws.view("a", b)
        torch.index_select(table, 0, idx.view(-1), out=out.view(-1))
        return out

    def _safe_exp(self, logw: torch.Tensor) -> torch.Tensor:
        """``exp`` in place, with weights below the dtype's smallest normal number set to 0.

        CPU ``exp`` takes a slow path (tens of times slower) for arguments that underflow or are
        ``-inf``. Clamping at ``log(tiny) + 1`` keeps it fast; the clamped entries, which
        underflow anyway, are then set to exactly 0, so zero weights stay zero.
        """
        w = logw.clamp_(min=self._exp_floor).exp_()
        return torch.nn.functional.threshold_(w, self._zero_below, 0.0)

    def _finish_counts(self, counts: torch.Tensor, ws: "_Workspace",
                       b: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Stochastic rounding in place: ``floor(c) + 1[U < c - floor(c)]``, ``U ~ uniform(0, 1)``."""
        low = torch.floor(counts, out=ws.view("b", b))
        frac = counts.sub_(low)
        u = uniform_on_cpu_(ws.view("c", b), self._generator)
        w = low.add_(u.lt_(frac))  # lt_ writes 1.0 / 0.0 in u's dtype
        return w, w.sum(-1, keepdim=True)

    def _cap_log_weights(self, cos: torch.Tensor, ws: "_Workspace | None" = None, b: int = 0) -> torch.Tensor:
        """``log Ic`` at the cosines ``cos`` (overwritten), interpolated from the table."""
        if ws is None:
            b = cos.numel()
            ws = _Workspace(b, 1, cos.dtype, cos.device)
            cos = cos.reshape(b, 1).clone()
        tab = self._cap
        k1 = tab.size - 1
        a = 0.5 * k1 * k1
        # grid position (K - 1) u with u = sin(t/2) = sqrt((1 - cos)/2), in place
        pos = cos.mul_(-a).add_(a).clamp_(0.0, float(k1 * k1)).sqrt_()
        edge = None
        if tab.edge_power:  # (n/2) log((K - 1)(u0 - u)); -inf from the edge of the support on
            edge = torch.sub(pos, tab.u_zero * k1, out=ws.view("b", b)).neg_()
            # CPU log is slow on zeros: floor the argument at a tiny normal number, which no
            # point inside the support reaches ((K - 1)(u0 - u) is either 0 or at least about
            # an ulp of K), and send the floored entries to -inf in one pass.
            edge.clamp_(min=self._log_floor).log_()
            torch.nn.functional.threshold_(edge, self._log_edge_cut, -math.inf)
        low = torch.floor(pos, out=ws.view("c", b)).clamp_(max=k1 - 1)
        idx = ws.view("i", b)
        idx.copy_(low)
        flat = idx.view(-1)
        base = ws.view("a", b)
        torch.index_select(self._cap_base, 0, flat, out=base.view(-1))
        slope = ws.view("d", b)
        torch.index_select(self._cap_slope, 0, flat, out=slope.view(-1))
        logw = base.addcmul_(pos.sub_(low), slope)
        if edge is not None:
            logw.add_(edge, alpha=tab.edge_power)
        return logw

    # --------------------------------------------------------------------------------------
    # reads

    def _block_read(self, x: torch.Tensor, prep: PreparedPatterns) -> tuple[torch.Tensor, torch.Tensor]:
        if self.spec.weights == "neurons":
            out = prep.memory.read(x, threshold=True, empty="nan").to(self.dtype)
            empty = torch.isnan(out).any(-1)
            return torch.where(empty.unsqueeze(-1), x, out), empty
        w, den = self._block_weights(x, prep)
        empty = den.squeeze(-1) == 0
        out = (w @ prep.patterns).div_(torch.where(den == 0, torch.ones_like(den), den))
        if self.is_binary:
            out = (out > 0.5).to(self.dtype)
        else:
            norm = torch.linalg.vector_norm(out, dim=-1, keepdim=True)
            empty = empty | (norm.squeeze(-1) == 0) | ~torch.isfinite(norm.squeeze(-1))
            out = out.div_(torch.where(norm > 0, norm, torch.ones_like(norm)))
        out = torch.where(empty.unsqueeze(-1), x, out)
        return out, empty

    def step(self, queries: torch.Tensor, prepared: PreparedPatterns) -> tuple[torch.Tensor, torch.Tensor]:
        """One read without input checks, for loops (:func:`converge`, benchmarks).

        Runs with torch's threads capped at the cores other processes leave free
        (:func:`assocmem.benchmarking.load_capped_threads`).

        Parameters
        ----------
        queries : torch.Tensor, shape ``(B, n)``
            Output of :meth:`prepare_queries` (or of an earlier step).
        prepared : PreparedPatterns
            Output of :meth:`prepare`.

        Returns
        -------
        new : torch.Tensor, shape ``(B, n)``
            The read; rows with all weights zero are the query itself.
        empty : torch.Tensor, shape ``(B,)``, bool
            Which rows had all weights zero (or, continuous, a zero read).
        """
        with self._generator_kept_on_error(), load_capped_threads():
            if queries.shape[0] <= self.chunk_size:
                return self._block_read(queries, prepared)
            outs, empties = [], []
            for lo in range(0, queries.shape[0], self.chunk_size):
                o, e = self._block_read(queries[lo:lo + self.chunk_size], prepared)
                outs.append(o)
                empties.append(e)
            return torch.cat(outs), torch.cat(empties)

    @contextlib.contextmanager
    def _generator_kept_on_error(self):
        """Restore the stochastic-rounding generator if the block raises (reads are atomic).

        The generator is the only state a read changes (the workspace holds scratch buffers);
        a read that fails half-way, after some blocks drew their counts, leaves it as it was.
        """
        state = self._generator.get_state() if self.spec.neuron_limited else None
        try:
            yield
        except BaseException:
            if state is not None:
                self._generator.set_state(state)
            raise

    def read(self, queries: ArrayLike, patterns: ArrayLike | PreparedPatterns,
             return_empty: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """One read of every query (validated inputs).

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)`` or ``(n,)``
            Binary (binary rules) or real nonzero (continuous rules) queries.
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``
            Stored patterns, ``m >= 1``.
        return_empty : bool, default False
            Also return which queries had all weights zero (left unchanged).

        Returns
        -------
        new : torch.Tensor, shape ``(B, n)`` (``(n,)`` for a 1-D query)
            0/1 floats (binary rules) or unit vectors (continuous rules), on the rule's device
            in its dtype.
        empty : torch.Tensor, shape ``(B,)``, bool
            Only if ``return_empty``.

        Raises
        ------
        ValueError
            On shape mismatch, float16/bfloat16 input, non-binary entries for a binary rule,
            zero or non-finite vectors for a continuous rule, an empty memory, or a
            :class:`PreparedPatterns` of another rule (see :meth:`prepare`).

        Notes
        -----
        Atomic: the only state a read changes is the generator of the stochastic rounding
        (neuron-limited rules); a read that raises restores it.

        References
        ----------
        Bricken & Pehlevan (2021), Eq. 1 and App. B.7.
        """
        q = _as_tensor(queries, "queries")
        single = q.ndim == 1
        if single:
            q = q.unsqueeze(0)
        x = self.prepare_queries(q)
        out, empty = self.step(x, self.prepare(patterns))
        if single:
            out, empty = out[0], empty[0]
        return (out, empty) if return_empty else out

    __call__ = read

    def weights(self, queries: ArrayLike, patterns: ArrayLike | PreparedPatterns) -> torch.Tensor:
        """Normalised read weights ``w_mu / sum_nu w_nu`` of every query.

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)``
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``

        Returns
        -------
        torch.Tensor, shape ``(B, m)``
            Rows sum to one; rows with all weights zero are NaN. Neuron-limited rules return
            one stochastic draw.

        Raises
        ------
        ValueError
            As :meth:`read`; also for ``Binary_Neuron_SDM`` (its weights are shared-neuron counts,
            see :meth:`assocmem.sdm.read.NeuronSDM.shared_neurons`).
        """
        w, den = self._weights(queries, patterns)
        return w / den

    def raw_weights(self, queries: ArrayLike, patterns: ArrayLike | PreparedPatterns) -> torch.Tensor:
        """Un-normalised read weights of every query.

        Parameters
        ----------
        queries : torch.Tensor or array_like, shape ``(B, n)``
        patterns : torch.Tensor, array_like or PreparedPatterns, shape ``(m, n)``

        Returns
        -------
        torch.Tensor, shape ``(B, m)``
            Neuron-limited rules: one draw of the integer neuron counts (mean ``I r / 2^n`` or
            ``Ic r``). Other rules: the weights divided by each row's largest weight (rows with
            all weights zero stay zero).

        Raises
        ------
        ValueError
            As :meth:`weights`.
        """
        w, _ = self._weights(queries, patterns)
        return w

    def _weights(self, queries, patterns) -> tuple[torch.Tensor, torch.Tensor]:
        if self.spec.weights == "neurons":
            raise ValueError("Binary_Neuron_SDM has no weight table; use NeuronSDM.shared_neurons")
        x = self.prepare_queries(queries)
        prep = self.prepare(patterns)
        ws, dens = [], []
        with self._generator_kept_on_error():
            for lo in range(0, max(x.shape[0], 1), self.chunk_size):
                w, den = self._block_weights(x[lo:lo + self.chunk_size], prep)
                ws.append(w.clone())  # the block's weights live in a buffer the next block reuses
                dens.append(den)
        return torch.cat(ws), torch.cat(dens)

    def log_weight_table(self) -> np.ndarray:
        """Log weight at each Hamming distance ``0..n`` (rules whose weights depend on it).

        Returns
        -------
        numpy.ndarray, shape ``(n + 1,)``
            ``log I`` (``Binary_SDM``, ``Cont_Binary_SDM``), ``log(I r / 2^n)`` (expected
            counts, ``Binary_SDM_NeuronLimit``) or ``beta (1 - 2 dv / n)``
            (``Binary_SDM_BFit_Attention``); ``-inf`` where the weight is 0.

        Raises
        ------
        ValueError
            For rules whose weights are not a function of a Hamming distance.
        """
        spec = self.spec
        if spec.weights == "intersection" and not spec.neuron_limited:
            return _log_intersection_table(self.n, self.d).copy()
        if spec.weights == "intersection":
            with np.errstate(divide="ignore"):
                return np.log(_expected_count_table(self.n, self.d, self._r_fraction))
        if spec.weights == "softmax" and spec.space == "binary":
            return self.beta * (1.0 - 2.0 * np.arange(self.n + 1) / self.n)
        raise ValueError(f"{self.name} weights are not a function of a Hamming distance")


def make_read_rule(name: str, n: int, d: int, **kwargs: Any) -> ReadRule:
    """Build the read rule ``name`` for dimension ``n`` and radius ``d``.

    Parameters
    ----------
    name : str or Algorithm
        One of :data:`ALL_ALGORITHMS` (case, ``_`` and ``-`` are ignored).
    n : int
        Dimension, ``>= 2``.
    d : int
        Radius, ``0 <= d <= n``.
    **kwargs
        ``r``, ``beta``, ``beta_convention``, ``seed``, ``device``, ``dtype``,
        ``cap_table_size``, ``chunk_size``: see :class:`ReadRule`.

    Returns
    -------
    ReadRule

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names), ``n < 2``, ``d`` is outside
        ``[0, n]``, a neuron-limited rule gets no positive ``r``, a softmax rule with ``d < 2``
        gets no ``beta``, ``beta`` is not a finite real number (booleans and strings are refused)
        or so large that ``2 |beta|`` overflows ``dtype``, ``dtype`` is not float32/float64
        (float16/bfloat16 are refused with the reason), ``seed`` is not an integer in
        ``[-2^63, 2^64 - 1]``, or another option is invalid.
    RuntimeError
        If the device is not available.

    Examples
    --------
    >>> rule = make_read_rule("Cont_SDM_CFit_Attention", n=64, d=11, device="cpu")
    >>> _, P = random_patterns(16, 64, seed=0)
    >>> bool(torch.allclose(rule(P, P), P.to(rule.dtype), atol=1e-6))
    True

    References
    ----------
    Bricken & Pehlevan (2021), App. B.7.
    """
    return ReadRule(name, n, d, **kwargs)


def cont_sdm_read_reference(queries: torch.Tensor, patterns: torch.Tensor, n: int, d: int) -> torch.Tensor:
    """Plain reference for one ``Cont_SDM`` read: exact cap-intersection weights, float64, no tables.

    ``xi_new = normalise(sum_mu Ic(rho_mu) p_mu)`` with ``rho_mu`` the cosine between the unit
    query and the unit pattern ``mu`` and ``Ic`` the cap intersection evaluated directly by
    :func:`assocmem.sdm.log_cap_intersection` (Gauss-Legendre quadrature) at every cosine; a
    query with all weights zero is returned (normalised) unchanged. The tabulated
    :class:`ReadRule` agrees with it up to the table's interpolation error.

    Parameters
    ----------
    queries : torch.Tensor, shape ``(B, n)``
        Nonzero real queries.
    patterns : torch.Tensor, shape ``(m, n)``
        Nonzero real patterns, ``m >= 1``.
    n : int
        Dimension (``>= 2``; must match the tensors).
    d : int
        Radius, ``0 <= d <= n`` (threshold cosine ``1 - 2 d / n``).

    Returns
    -------
    torch.Tensor, shape ``(B, n)``, float64, on the CPU

    Raises
    ------
    ValueError
        Tensors that are not 2-D with ``n`` columns, an empty memory, zero or non-finite rows,
        or ``d`` outside ``[0, n]``.

    References
    ----------
    Bricken & Pehlevan (2021), Eq. 1, App. B.3 (Eq. 22) and App. B.7 (``Cont_SDM``).
    """
    x, p = (torch.as_tensor(t).detach().to("cpu", torch.float64) for t in (queries, patterns))
    if x.ndim != 2 or p.ndim != 2 or x.shape[1] != n or p.shape[1] != n or p.shape[0] < 1:
        raise ValueError(f"need queries (B, {n}) and patterns (m >= 1, {n}); got {tuple(x.shape)}, "
                         f"{tuple(p.shape)}")
    for t, name in ((x, "queries"), (p, "patterns")):
        if not bool(torch.isfinite(t).all()) or bool((t.norm(dim=1) == 0).any()):
            raise ValueError(f"{name} must have finite, nonzero rows")
    x, p = x / x.norm(dim=1, keepdim=True), p / p.norm(dim=1, keepdim=True)
    cos = (x @ p.T).clamp(-1.0, 1.0)  # (B, m)
    logw = torch.from_numpy(np.asarray(log_cap_intersection(cos.numpy(), d, n), dtype=np.float64))
    top = logw.amax(dim=1, keepdim=True)  # (B, 1)
    w = torch.exp(logw - torch.where(torch.isfinite(top), top, torch.zeros_like(top)))  # (B, m)
    out = w @ p  # (B, n)
    norm = out.norm(dim=1, keepdim=True)
    return torch.where(norm > 0, out / torch.where(norm > 0, norm, torch.ones_like(norm)), x)
