"""The neuron view of an SDM: ``r`` explicit neurons (hard locations), random or exhaustive.

Kanerva (1988, Ch. 7) stores patterns in ``r`` neurons with fixed addresses
``x_tau in {0, 1}^n``: a write adds the pointer to the storage vector of every neuron within
Hamming radius ``d`` of the pattern address, a read sums the storage vectors of the neurons
within ``d`` of the query and divides by the number of patterns they hold. With the binary
feature map ``phi_tau(x) = 1[d(x, x_tau) <= d]`` this is linear attention (Katharopoulos et al.
2020). :class:`NeuronSDM` holds uniform random neurons (the number a query and a pattern share
is then binomial with mean ``I r / 2^n``; Bricken & Pehlevan 2021, §1 and App. B.1), neurons at
given addresses, or a neuron at every address (``r = 2^n``, App. B.5), whose read equals the
pattern view of Eq. 1 (:mod:`assocmem.sdm.read.pattern_view`) bit for bit. Used by chapters 30
and 35, and as ``Binary_Neuron_SDM`` in the convergence experiments of chapter 36.
"""

from __future__ import annotations

import torch
from torch import nn

from assocmem.devices import resolve_device
from assocmem.sdm._common import _as_int, _binary, _finish_read, _generator
from assocmem.sdm.read._checks import _check_memory, _check_radius, _real
from assocmem.sdm.read.pattern_view import _check_empty_policy
from assocmem.sdm.read.patterns import flip_bits

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Iterable

__all__ = [
    "NeuronSDM",
]

_ENUMERATE_MAX_N = 20  # NeuronSDM.exhaustive: at most 2^20 neurons


class NeuronSDM(nn.Module):
    """Kanerva's SDM with ``r`` explicit neurons (hard locations).

    Each neuron ``tau`` has a fixed address ``x_tau in {0, 1}^n``, a storage vector ``s_tau`` (the
    sum of the pointers written to it) and a count ``c_tau`` (how many patterns were written to
    it). With the binary feature map ``phi_tau(x) = 1[d(x, x_tau) <= d]``,

        write:  s_tau += sum_mu phi_tau(p_a^mu) p_p^mu,   c_tau += sum_mu phi_tau(p_a^mu),
        read:   xi_new = g( sum_tau phi_tau(xi) s_tau / sum_tau phi_tau(xi) c_tau ).

    Exchanging the sums shows the read is Eq. 1 with weights ``w_mu = phi(xi)^T phi(p_a^mu)``,
    the number of neurons within ``d`` of both (:meth:`shared_neurons`). With a neuron at every
    address (:meth:`exhaustive`) that number is ``I(d(p_a^mu, xi), d, n)``; with ``r`` uniform
    random neurons it is ``Binomial(r, I / 2^n)``. The storage ``S = Phi(P_a)^T P_p`` and the read
    ``phi(xi)^T S / phi(xi)^T Phi(P_a)^T 1`` are linear attention with the feature map ``phi``.
    The read and write radius are the same ``d``, as the paper assumes.

    Parameters
    ----------
    n : int
        Address length in bits, ``>= 1``.
    r : int
        Number of neurons, ``>= 1``. Addresses are drawn i.i.d. uniform (with replacement).
    d : int
        Read and write radius, ``0 <= d <= n``.
    seed : int or torch.Generator, default 0
        Seed of the CPU generator for the neuron addresses (the same neurons on every device).
        A generator must be a CPU one; another device's is refused (ValueError).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Where addresses and storage live.
    chunk_size : int, default 16384
        Neurons processed at a time (bounds the ``(queries, chunk)`` activation matrices).

    Attributes
    ----------
    neuron_addresses : torch.Tensor, shape ``(r, n)``, uint8
    storage : torch.Tensor, shape ``(r, n_p)``, float64, or None before the first write
    counts : torch.Tensor, shape ``(r,)``, float64
        Patterns written to each neuron (exact integers).

    Raises
    ------
    ValueError
        If ``n < 1``, ``r < 1``, ``d`` outside ``[0, n]``, ``chunk_size < 1``, or ``seed`` is
        not an integer in ``[-2^63, 2^64 - 1]``.

    References
    ----------
    Kanerva (1988), Ch. 7; Bricken & Pehlevan (2021), §1 and Eq. 1, App. B.7
    (``Binary_Neuron_SDM``); Katharopoulos et al. (2020) (linear attention).

    Examples
    --------
    >>> mem = NeuronSDM(n=16, r=4096, d=5, seed=0, device="cpu")
    >>> P = random_binary_patterns(10, 16, seed=1, device="cpu")
    >>> out = mem.write(P, P).read(P, threshold=True)  # (10, 16)
    """

    def __init__(self, n: int, r: int, d: int, seed: int = 0, device: str | torch.device | None = None,
                 chunk_size: int = 16384) -> None:
        """An empty SDM of ``r`` neurons at i.i.d. uniform addresses in ``{0, 1}^n``, radius ``d``.

        ``n`` address bits (``>= 1``), ``r`` neurons (``>= 1``), read and write radius ``d`` in
        ``[0, n]``; ``seed`` seeds the CPU generator of the addresses (the same neurons on every
        device), ``device`` places addresses, storage and counts, and ``chunk_size`` neurons are
        processed at a time. Nothing is stored until :meth:`write`. See the class docstring for
        the model and the errors raised; :meth:`from_addresses`, :meth:`exhaustive` and
        :meth:`empty` build the other kinds.
        """
        super().__init__()
        n, r = _as_int(n, "n"), _as_int(r, "r")
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if r < 1:
            raise ValueError(f"r must be >= 1 neuron, got {r}")
        addresses = torch.randint(0, 2, (r, n), generator=_generator(seed), dtype=torch.uint8)
        self._setup(addresses, d, resolve_device(device, dtype=torch.float64), chunk_size)  # float64 contents

    def _setup(self, addresses: torch.Tensor, d, device: torch.device, chunk_size) -> None:
        self.n = int(addresses.shape[1])
        self.r = int(addresses.shape[0])
        self.d = _check_radius(d, self.n)
        self.chunk_size = _as_int(chunk_size, "chunk_size")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        self.register_buffer("neuron_addresses", addresses.to(device))
        self.register_buffer("storage", None)
        self.register_buffer("counts", torch.zeros(self.r, dtype=torch.float64, device=device))

    @classmethod
    def from_addresses(cls, addresses: ArrayLike, d: int, device: str | torch.device | None = None,
                       chunk_size: int = 16384) -> "NeuronSDM":
        """An SDM whose neurons sit at the given addresses.

        Parameters
        ----------
        addresses : torch.Tensor or array_like, shape ``(r, n)``
            Binary neuron addresses, ``r >= 1``.
        d : int
            Read and write radius, ``0 <= d <= n``.
        device, chunk_size
            As in the constructor.

        Returns
        -------
        NeuronSDM

        Raises
        ------
        ValueError
            On non-binary entries, float16/bfloat16 addresses, a shape other than ``(r, n)``
            with ``r, n >= 1``, or ``d`` outside ``[0, n]``.
        """
        addresses = _binary(addresses, "addresses")
        if addresses.ndim != 2 or addresses.shape[0] < 1 or addresses.shape[1] < 1:
            raise ValueError(f"neuron addresses must have shape (r, n) with r, n >= 1, got "
                             f"{tuple(addresses.shape)}")
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        obj._setup(addresses.to(torch.uint8), d, resolve_device(device, dtype=torch.float64), chunk_size)
        return obj

    @classmethod
    def exhaustive(cls, n: int, d: int, device: str | torch.device | None = None,
                   chunk_size: int = 16384) -> "NeuronSDM":
        """An SDM with a neuron at every one of the ``2^n`` addresses (``n <= 20``).

        Its shared-neuron counts are the circle intersection ``I(dv, d, n)`` exactly, and its
        read equals the pattern view :func:`sdm_read`.

        Parameters
        ----------
        n : int
            Address length, ``1 <= n <= 20``.
        d : int
            Read and write radius, ``0 <= d <= n``.
        device, chunk_size
            As in the constructor.

        Returns
        -------
        NeuronSDM
            Neuron ``tau`` has the binary expansion of ``tau`` as its address (bit ``i`` of
            ``tau`` at position ``i``).

        Raises
        ------
        ValueError
            If ``n`` is outside ``[1, 20]`` or ``d`` outside ``[0, n]``.

        References
        ----------
        Bricken & Pehlevan (2021), App. B.5 (``r = 2^n``: "every address holds a neuron").
        """
        device = resolve_device(device)
        n = _as_int(n, "n")
        if n < 1 or n > _ENUMERATE_MAX_N:
            raise ValueError(f"exhaustive neurons need 1 <= n <= {_ENUMERATE_MAX_N}, got n = {n}")
        idx = torch.arange(1 << n, dtype=torch.int64)
        bits = ((idx[:, None] >> torch.arange(n, dtype=torch.int64)) & 1).to(torch.uint8)  # (2^n, n)
        return cls.from_addresses(bits, d, device=device, chunk_size=chunk_size)

    @classmethod
    def empty(cls, n: int, r: int, d: int, *, device: str | torch.device | None = None,
              chunk_size: int = 16384) -> "NeuronSDM":
        """An SDM of ``r`` neurons all at the zero address, to load a ``state_dict`` into.

        ``NeuronSDM.empty(n, r, d, device="meta")`` (or inside ``with torch.device("meta"):``,
        which ``device=None`` follows) allocates nothing and draws nothing;
        ``load_state_dict(saved, assign=True)`` then takes the saved addresses, storage, counts and
        radius. Nothing is drawn (the constructor's random addresses are not needed).

        Parameters
        ----------
        n, r : int
            Address length and number of neurons, ``>= 1``.
        d : int
            Read and write radius, ``0 <= d <= n`` (the loaded state's radius replaces it).
        device : str, torch.device or None
            Passed to :func:`torch.zeros`; ``None`` is torch's current default device.
        chunk_size : int, default 16384
            As in the constructor.

        Raises
        ------
        ValueError
            If ``n < 1``, ``r < 1``, ``d`` outside ``[0, n]`` or ``chunk_size < 1``.
        """
        n, r = _as_int(n, "n"), _as_int(r, "r")
        if n < 1 or r < 1:
            raise ValueError(f"need n >= 1 and r >= 1 neurons, got n = {n}, r = {r}")
        obj = cls.__new__(cls)
        nn.Module.__init__(obj)
        addresses = torch.zeros(r, n, dtype=torch.uint8, device=device)
        obj._setup(addresses, d, addresses.device, chunk_size)
        return obj

    # --------------------------------------------------------------------------------------
    # state_dict: the buffers, the radius as extra state, and a storage that exists only once
    # something was written (a fresh SDM loads a written one, and a written one a fresh one)

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the buffers: the radius ``d``."""
        return {"d": int(self.d)}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record; a ValueError unless it is ``{"d": int}`` with
        ``0 <= d <= n``."""
        if not isinstance(state, dict) or set(state) != {"d"}:
            raise ValueError(f"the extra state of a NeuronSDM must be {{'d': int}}; got {state!r}")
        self.d = _check_radius(state["d"], self.n)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        saved = state_dict.get(prefix + "storage")
        if isinstance(saved, torch.Tensor) and saved.dim() == 2 and self.storage is None:
            self.storage = torch.empty(saved.shape, dtype=torch.float64, device=self.device)
        elif saved is None and prefix + "counts" in state_dict and self.storage is not None:
            self.storage = None  # the saved SDM held no writes
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    @property
    def device(self) -> torch.device:
        """Where the neurons live."""
        return self.neuron_addresses.device

    @property
    def pointer_dim(self) -> int | None:
        """``n_p``, the pointer size fixed by the first write (None before)."""
        return None if self.storage is None else int(self.storage.shape[1])

    def extra_repr(self) -> str:
        return f"n={self.n}, r={self.r}, d={self.d}, pointer_dim={self.pointer_dim}"

    def _chunks(self):
        for lo in range(0, self.r, self.chunk_size):
            yield slice(lo, min(lo + self.chunk_size, self.r))

    def _signs(self, x: torch.Tensor) -> torch.Tensor:
        """Bipolar ``2x - 1`` in float32: products and sums of ``+-1`` are exact below ``2^24``."""
        dtype = torch.float32 if self.n < 2**24 else torch.float64
        return 2.0 * x.to(dtype) - 1.0

    def _active(self, signs: torch.Tensor, sl: slice) -> torch.Tensor:
        """``phi(x)`` for the neurons in ``sl`` from the signs of ``x``: ``(..., C)`` bool.

        ``d(x, x_tau) <= d`` if and only if ``s(x)^T s(x_tau) = n - 2 d(x, x_tau) >= n - 2 d``:
        one matrix product and one comparison per chunk.
        """
        neuron_signs = self._signs(self.neuron_addresses[sl])  # (C, n)
        return signs @ neuron_signs.T >= self.n - 2 * self.d  # (..., C)

    def _check_addresses(self, x, name: str, min_ndim: int = 1) -> torch.Tensor:
        x = _binary(x, name, min_ndim=min_ndim).to(self.device)
        if x.shape[-1] != self.n:
            raise ValueError(f"{name} must have n = {self.n} bits (last axis), got shape "
                             f"{tuple(x.shape)}")
        return x

    def activation(self, x: ArrayLike) -> torch.Tensor:
        """Which neurons an address activates, ``phi_tau(x) = 1[d(x, x_tau) <= d]``.

        Parameters
        ----------
        x : torch.Tensor or array_like, shape ``(..., n)``
            Binary addresses.

        Returns
        -------
        torch.Tensor, shape ``(..., r)``, dtype bool

        Raises
        ------
        ValueError
            On non-binary entries, float16/bfloat16 input or the wrong number of bits.
        """
        x = self._check_addresses(x, "x")
        signs = self._signs(x)
        return torch.cat([self._active(signs, sl) for sl in self._chunks()], dim=-1)

    def write(self, addresses: ArrayLike, pointers: ArrayLike) -> "NeuronSDM":
        """Add each pointer to every neuron within ``d`` of its address.

        ``S += Phi(P_a)^T P_p`` and ``c += Phi(P_a)^T 1``. Writes accumulate.

        Parameters
        ----------
        addresses : torch.Tensor or array_like, shape ``(m, n)``
            Binary pattern addresses, ``m >= 1``.
        pointers : torch.Tensor or array_like, shape ``(m, n_p)``
            Pointers (real; binary for the thresholded read). ``n_p`` must match earlier writes.

        Returns
        -------
        NeuronSDM
            ``self``, so that ``mem.write(P, P).read(q)`` chains.

        Raises
        ------
        ValueError
            On non-binary addresses, float16/bfloat16 inputs, shape mismatch, an empty write
            (``m = 0``), non-finite pointers, a pointer size different from an earlier write,
            or sums that overflow float64.

        Notes
        -----
        Atomic: the increments of ``storage`` and ``counts`` are computed in full before either
        is assigned, so a write that raises leaves the memory exactly as it was.
        """
        addresses = self._check_addresses(addresses, "addresses", min_ndim=2)
        pointers = _real(pointers, "pointers").to(device=self.device, dtype=torch.float64)
        _check_memory(addresses, pointers, self.n)
        if self.storage is not None and pointers.shape[1] != self.storage.shape[1]:
            raise ValueError(f"pointers have n_p = {pointers.shape[1]}, but earlier writes had "
                             f"n_p = {self.storage.shape[1]}")
        # compute the whole increment first and assign it only when nothing can fail any more,
        # so that a write that raises (bad input, out of memory) leaves the memory as it was
        signs = self._signs(addresses)
        add_storage = torch.zeros(self.r, pointers.shape[1], dtype=torch.float64, device=self.device)
        add_counts = torch.zeros(self.r, dtype=torch.float64, device=self.device)
        for sl in self._chunks():
            act = self._active(signs, sl).to(torch.float64)  # (m, C)
            add_storage[sl] = act.T @ pointers  # (C, n_p)
            add_counts[sl] = act.sum(0)  # (C,)
        new_storage = add_storage if self.storage is None else self.storage + add_storage
        if not bool(torch.isfinite(new_storage).all()):
            raise ValueError("the write overflows float64 storage (pointer sums beyond 1.8e308); "
                             "the memory is unchanged")
        # commit: in place where the tensors exist, so views of storage and counts stay views
        if self.storage is None:
            self.storage = new_storage
        else:
            self.storage.copy_(new_storage)
        self.counts.add_(add_counts)
        return self

    def read(self, query: ArrayLike, threshold: bool = False, empty: str = "nan") -> torch.Tensor:
        """Sum the neurons within ``d`` of the query, normalise, and optionally threshold.

        ``sum_tau phi_tau(xi) s_tau / sum_tau phi_tau(xi) c_tau``, then ``g`` if ``threshold``.

        Parameters
        ----------
        query : torch.Tensor or array_like, shape ``(..., n)``
            Binary read addresses.
        threshold : bool, default False
            Apply the majority threshold :func:`majority`.
        empty : {"nan", "query", "raise"}, default "nan"
            For a query whose active neurons hold no pattern (denominator 0), as in
            :func:`sdm_read`: by default its row is NaN; ``"raise"`` makes it an error.

        Returns
        -------
        torch.Tensor, shape ``(..., n_p)``
            The reads; with ``empty="nan"`` (the default) the rows of empty reads are NaN.
            Computed in float64 (exact counts), returned in the query's dtype if it is
            floating point, else in torch's default dtype.

        Raises
        ------
        RuntimeError
            If nothing has been written.
        ValueError
            On non-binary entries, float16/bfloat16 input, the wrong number of bits, an unknown
            ``empty``, or an empty row with ``empty="raise"``.
        """
        _check_empty_policy(empty)
        if self.storage is None:
            raise RuntimeError("nothing has been written to this NeuronSDM; call write() first")
        query = self._check_addresses(query, "query")
        num = torch.zeros(*query.shape[:-1], self.storage.shape[1], dtype=torch.float64, device=self.device)
        den = torch.zeros(*query.shape[:-1], 1, dtype=torch.float64, device=self.device)
        signs = self._signs(query)
        for sl in self._chunks():
            act = self._active(signs, sl).to(torch.float64)  # (..., C)
            num += act @ self.storage[sl]  # (..., n_p)
            den += (act @ self.counts[sl]).unsqueeze(-1)  # (..., 1)
        return _finish_read(num, den, query, threshold, empty)

    def shared_neurons(self, query: ArrayLike, addresses: ArrayLike, paired: bool = False) -> torch.Tensor:
        """Number of neurons within ``d`` of both a query and a pattern address.

        The pattern weight of the neuron view, ``w_mu = phi(xi)^T phi(p_a^mu)``. Its expectation
        over uniform random neuron addresses is ``I(d(xi, p_a^mu), d, n) r / 2^n``
        (:func:`assocmem.sdm.expected_neurons`); for :meth:`exhaustive` it is ``I`` exactly.

        Parameters
        ----------
        query : torch.Tensor or array_like, shape ``(..., n)``
            Binary queries.
        addresses : torch.Tensor or array_like, shape ``(m, n)``, or ``(..., n)`` if ``paired``
            Binary pattern addresses.
        paired : bool, default False
            ``False``: every query against every address, ``(..., m)``. ``True``: query ``i``
            against address ``i`` only (shapes must broadcast), ``(...)``.

        Returns
        -------
        torch.Tensor, dtype int64, shape ``(..., m)`` or (paired) the broadcast leading shape

        Raises
        ------
        ValueError
            On non-binary entries, float16/bfloat16 input, the wrong number of bits, or
            (unpaired) addresses that are not 2-D.
        """
        query = self._check_addresses(query, "query")
        addresses = self._check_addresses(addresses, "addresses")
        if not paired and addresses.ndim != 2:
            raise ValueError(f"addresses must have shape (m, n) unless paired=True, got "
                             f"{tuple(addresses.shape)}")
        sq, sp = self._signs(query), self._signs(addresses)
        total = None
        for sl in self._chunks():
            aq, ap = self._active(sq, sl), self._active(sp, sl)  # (..., C), bool
            if paired:
                part = (aq & ap).sum(-1)  # (...), int64
            else:
                part = (aq.to(torch.float64) @ ap.to(torch.float64).T).round().to(torch.int64)
            total = part if total is None else total + part
        return total

    def sample_shared_neurons(self, dvs: int | Iterable[int], num_pairs: int, seed: int = 0) -> torch.Tensor:
        """Shared-neuron counts of random query-pattern pairs at given Hamming distances.

        For each distance ``dv``, draws ``num_pairs`` uniform queries and, for each, a pattern
        at distance exactly ``dv`` (:func:`flip_bits`), and counts the neurons within ``d`` of
        both. For a *fixed* set of neurons, every neuron lies in the intersection for the same
        number of the pairs at distance ``dv`` (the hypercube is vertex-transitive), so the
        count of a uniformly random pair has expectation exactly ``I(dv, d, n) r / 2^n`` whatever
        the neurons are, and the pairs are i.i.d. given the neurons: the sample mean and its
        standard error test :func:`assocmem.sdm.expected_neurons` without redrawing neurons.

        Parameters
        ----------
        dvs : int or iterable of int
            Distances, each in ``[0, n]``.
        num_pairs : int
            Pairs per distance, ``>= 1``.
        seed : int, default 0
            Seed of the CPU generator for the pairs.

        Returns
        -------
        torch.Tensor, shape ``(len(dvs), num_pairs)`` (``(num_pairs,)`` for a scalar ``dvs``),
        dtype int64

        Raises
        ------
        ValueError
            If a distance is outside ``[0, n]`` or ``num_pairs < 1``.

        References
        ----------
        Bricken & Pehlevan (2021), §1 and App. B.1 (Fig. 11 checks ``I r / 2^n`` by simulation).
        """
        if isinstance(dvs, (str, bytes)):
            raise ValueError(f"dvs must be an integer or an iterable of integers, got {dvs!r}")
        scalar = not hasattr(dvs, "__iter__") or getattr(dvs, "ndim", None) == 0
        dv_list = [_as_int(v, "dv") for v in ([dvs] if scalar else list(dvs))]
        if not dv_list or any(v < 0 or v > self.n for v in dv_list):
            raise ValueError(f"distances must be a nonempty set in [0, n] = [0, {self.n}], got {dvs!r}")
        num_pairs = _as_int(num_pairs, "num_pairs")
        if num_pairs < 1:
            raise ValueError(f"num_pairs must be >= 1, got {num_pairs}")
        gen = _generator(seed)
        out = []
        for dv in dv_list:
            q = torch.randint(0, 2, (num_pairs, self.n), generator=gen, dtype=torch.uint8)
            p = flip_bits(q, dv, seed=gen)
            out.append(self.shared_neurons(q, p, paired=True))  # (num_pairs,)
        counts = torch.stack(out)  # (len(dvs), num_pairs)
        return counts[0] if scalar else counts

    def reset(self) -> "NeuronSDM":
        """Forget every write (the neuron addresses stay)."""
        self.storage = None
        self.counts.zero_()
        return self

    def forward(self, query: ArrayLike) -> torch.Tensor:
        """Same as :meth:`read` with the defaults."""
        return self.read(query)
