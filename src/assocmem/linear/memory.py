"""Matrix memories: a state ``S`` of shape ``(d_v, d_k)`` written with key-value pairs, read by ``S q``.

Three ways to fill the same matrix, as in the seed "How much can a matrix remember?" (Part I):

* :class:`OuterProductMemory`: additive (Hebbian, correlation-matrix) memory
  ``S = sum_i v_i k_i^T``, the state of unnormalised linear attention (seed §3, §5;
  Kohonen 1972; Anderson 1972; Katharopoulos et al. 2020).
* :class:`LeastSquaresMemory`: the optimal linear associative memory ``S* = V K^+``, which for
  linearly independent keys is ``V G^{-1} K^T`` and stores each value under the dual vector of its
  key (seed §6; Kohonen & Ruohonen 1973).
* :class:`DeltaRuleMemory`: the Widrow-Hoff / DeltaNet update
  ``S_t = S_{t-1} + beta (v_t - S_{t-1} k_t) k_t^T``, online gradient descent on
  ``||S K - V||_F^2`` (Widrow & Hoff 1960; Schlag, Irie & Schmidhuber 2021).

Shape convention
----------------
The seed stacks keys and values as *columns*, ``K = [k_1 ... k_n]`` of shape ``(d_k, n)`` and
``V = [v_1 ... v_n]`` of shape ``(d_v, n)``. This module takes them as *rows*, like a data matrix:
``keys`` is ``(n, d_k)`` (``= K^T``) and ``values`` is ``(n, d_v)`` (``= V^T``). The conversion
happens once, at the ``write``/``read`` boundary; the state ``S`` itself is stored exactly as in
the seed, ``(d_v, d_k)``, so that a read is ``S q``.

References
----------
Anderson, J. A. (1972). A simple neural network generating an interactive memory.
Kohonen, T. (1972). Correlation matrix memories. IEEE Trans. Computers C-21(4).
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
Katharopoulos, A., et al. (2020). Transformers are RNNs. ICML.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Widrow, B., & Hoff, M. E. (1960). Adaptive switching circuits. IRE WESCON Convention Record.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch
from torch import nn

from assocmem._checks import as_real, module_input, positive_int
from assocmem.devices import resolve_device
from assocmem.dtypes import cast_checked, check_float_dtype, resolve_dtype
from assocmem._checks import as_bool
from assocmem.linear._args import (check_beta, check_loaded_state, checked_result, floating_dtype,
                                   real_tensor, stable_norms)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "MatrixMemory",
    "MemoryOverflowError",
    "OuterProductMemory",
    "LeastSquaresMemory",
    "DeltaRuleMemory",
    "gram_matrix",
]

#: Tolerance on ``| ||k_i|| - 1 |`` used by ``write(..., require_unit_keys=True)``.
UNIT_KEY_TOL = 1e-6


def _shape(x: torch.Tensor) -> tuple[int, ...]:
    return tuple(x.shape)


class MemoryOverflowError(FloatingPointError, ValueError):
    """A write or read of finite input left the range of the memory's dtype; nothing was changed.

    Both a :class:`FloatingPointError` (what the delta rule's divergence always raised) and a
    :class:`ValueError` (the library's error for an input it cannot serve).
    """


def _tolerance(tol, name: str) -> float | None:
    """``None`` or a finite float ``>= 0`` (:func:`assocmem._checks.as_real`). A value that is no
    real number at all (a string, a boolean, a list) raises :class:`TypeError`, a bad number
    :class:`ValueError`; both say what is allowed."""
    if tol is None:
        return None
    message = f"{name} must be a finite non-negative number or None; got {tol!r}"
    is_number = (isinstance(tol, numbers.Real) or getattr(tol, "ndim", None) == 0) and not isinstance(
        tol, (bool, np.bool_, str, bytes))
    try:
        value = as_real(tol, name, minimum=0.0)
    except ValueError:
        raise (ValueError if is_number else TypeError)(message) from None
    return value


def gram_matrix(keys: torch.Tensor) -> torch.Tensor:
    """Gram matrix of the keys: all pairwise dot products.

    In the seed's notation (keys as columns of ``K``, shape ``(d_k, n)``) this is ``G = K^T K``.
    Here keys are rows, so it is computed as ``keys @ keys.T``. Entry ``G[i, j] = k_i^T k_j``;
    the diagonal holds the squared key norms, the off-diagonal entries the overlaps that leak
    wrong values into an additive read (seed §5).

    Parameters
    ----------
    keys : torch.Tensor, shape ``(..., n, d_k)``
        Keys as rows; leading batch dimensions are allowed. float32 or float64; integer keys
        give the exact integer Gram matrix, boolean keys are cast to float64.

    Returns
    -------
    torch.Tensor, shape ``(..., n, n)``
        The Gram matrix, same dtype and device as ``keys`` (float64 for boolean keys).

    Raises
    ------
    ValueError
        If ``keys`` has fewer than 2 dimensions, is not an array of real numbers, has non-finite
        entries, is float16/bfloat16 (the message names the supported dtypes), or a dot product
        overflows the dtype even when computed in float64.

    References
    ----------
    Seed §5 ("Two pairs, and the Gram matrix").
    """
    keys = real_tensor(keys, "keys")
    if keys.ndim < 2:
        raise ValueError(f"keys must be at least 2-D (n, d_k); got shape {_shape(keys)}")
    if keys.dtype == torch.bool:
        keys = keys.to(torch.float64)
    if keys.is_floating_point():
        check_float_dtype(keys.dtype, "keys dtype")
        if not bool(torch.isfinite(keys).all()):
            raise ValueError("keys contain non-finite entries (nan or inf)")
    G = keys @ keys.transpose(-2, -1)  # (..., n, n)
    return checked_result(G, "the Gram matrix keys @ keys.T",
                          lambda: keys.double() @ keys.double().transpose(-2, -1))


class MatrixMemory(nn.Module):
    """Base class: a ``(d_v, d_k)`` state ``S`` with shared validation, ``read`` and ``reset``.

    Subclasses implement :meth:`write`. The state is a buffer (not a parameter): memories are
    *written*, not trained, but the writes are ordinary differentiable torch operations, so
    gradients flow through them to the keys and values if those require grad.

    ``device="meta"`` is allowed too: an empty memory (shapes, no storage) to load a
    ``state_dict`` into with ``load_state_dict(saved, assign=True)``, the torch idiom. It has no
    values to write or read, nor do meta inputs: :meth:`write` and :meth:`read` refuse them with
    a ValueError saying so (:meth:`forward` maps meta queries to a meta output of their shape).

    Parameters
    ----------
    d_k : int
        Key (and query) dimension.
    d_v : int
        Value dimension.
    dtype : torch.dtype or str, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Dtype of the state, float32 or float64; inputs are converted to it. A string names a torch dtype
        (``"float64"``, ``"torch.float32"``, ``"double"``).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Passed to :func:`assocmem.devices.resolve_device` with ``dtype`` (a float64 memory is
        never placed on MPS, which has no float64).

    Raises
    ------
    ValueError
        If ``d_k`` or ``d_v`` is not a positive integer, or ``dtype`` is not float32 or float64
        (float16 and bfloat16 are refused, naming the supported dtypes; a string that names no
        torch dtype is refused too).
    TypeError
        If ``dtype`` is neither a ``torch.dtype`` nor a string.
    """

    S: torch.Tensor

    def __init__(
        self,
        d_k: int,
        d_v: int,
        *,
        dtype: torch.dtype | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        dtype = resolve_dtype(dtype)
        super().__init__()
        self.d_k = positive_int("d_k", d_k)
        self.d_v = positive_int("d_v", d_v)
        dtype = floating_dtype(dtype)
        dev = resolve_device(device, dtype=dtype)
        self.register_buffer("S", torch.zeros(d_v, d_k, dtype=dtype, device=dev))  # (d_v, d_k)
        self.num_pairs = 0  # rows passed to write() since the last reset (passes not counted)
        self.register_load_state_dict_post_hook(check_loaded_state)

    # ------------------------------------------------------------------ conventions
    @property
    def num_parameters(self) -> int:
        """Number of stored numbers, ``d_v * d_k``.

        Convention: we count the entries of the state ``S``, the fixed budget the seed asks
        about ("a fixed number of numbers, a matrix ``S``", §2). This is the ``W`` on the
        x-axis of capacity plots. It deliberately does *not* count the pairs that
        :class:`LeastSquaresMemory` keeps in order to refit; those are the price of the
        optimal memory (a key-value cache), not part of the recurrent state.
        """
        return self.d_v * self.d_k

    @property
    def dtype(self) -> torch.dtype:
        """Dtype of the state ``S``."""
        return self.S.dtype

    @property
    def device(self) -> torch.device:
        """Device of the state ``S``."""
        return self.S.device

    def extra_repr(self) -> str:
        return f"d_k={self.d_k}, d_v={self.d_v}, dtype={self.dtype}, num_pairs={self.num_pairs}"

    # ------------------------------------------------------------------ state_dict
    #: Buffers whose first dimension grows with the pairs written (a fresh memory loads any size).
    _growing_buffers: tuple[str, ...] = ()

    #: Construction settings saved beside ``num_pairs`` (a fresh memory built with other settings
    #: takes the saved ones); each is checked by :meth:`_check_setting` when loaded.
    _saved_settings: tuple[str, ...] = ()

    def _check_setting(self, name: str, value):
        """``value`` of the setting ``name``, checked as the constructor checks it."""
        raise NotImplementedError  # pragma: no cover - only called for _saved_settings

    def get_extra_state(self) -> dict:
        """What ``state_dict`` saves beside the buffers: the number of pairs written and the
        construction settings (``rtol``, ``atol`` of the least-squares memory, ``beta`` of the
        delta rule)."""
        return {"num_pairs": int(self.num_pairs), **{n: getattr(self, n) for n in self._saved_settings}}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s record (``load_state_dict``); a record without the
        settings (saved before they were) keeps this memory's own."""
        allowed = {"num_pairs", *self._saved_settings}
        if (not isinstance(state, dict) or not isinstance(state.get("num_pairs"), int) or state["num_pairs"] < 0
                or set(state) - allowed):
            raise ValueError(f"the extra state of a {type(self).__name__} must be {{'num_pairs': int >= 0"
                             + "".join(f", {n!r}: ..." for n in self._saved_settings) + f"}}; got {state!r}")
        settings = {n: self._check_setting(n, state[n]) for n in self._saved_settings if n in state}
        self.num_pairs = state["num_pairs"]
        for name, value in settings.items():
            setattr(self, name, value)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # A memory built fresh holds no pairs: its growing buffers take the saved number of rows
        # (the other dimension must match, which load_state_dict checks as usual).
        for name in self._growing_buffers:
            saved = state_dict.get(prefix + name)
            mine = getattr(self, name)
            if isinstance(saved, torch.Tensor) and saved.dim() == 2 and saved.shape[1:] == mine.shape[1:]:
                setattr(self, name, mine.new_empty(saved.shape))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _check_loaded(self) -> None:
        """The state just loaded is one a memory could hold (``load_state_dict``'s post hook):
        ``S`` of shape ``(d_v, d_k)``, float32 or float64, finite (no write leaves a non-finite
        state: they raise first). Subclasses add their own buffers' checks."""
        S = self.S
        if tuple(S.shape) != (self.d_v, self.d_k):
            raise ValueError(f"S must have shape (d_v, d_k) = ({self.d_v}, {self.d_k}); got {_shape(S)}")
        if not S.is_floating_point():
            raise ValueError(f"S must be float32 or float64; got dtype {S.dtype}")
        check_float_dtype(S.dtype, "S dtype")
        if not S.is_meta and not bool(torch.isfinite(S).all()):
            raise ValueError("the stored state S has non-finite entries (nan or inf); a memory's writes "
                             "never leave one (they raise first), so the state dict is corrupt")

    def _check_finite_state(self) -> None:
        """Raise if the stored state ``S`` is not finite (a corrupt state dict, or ``S`` edited by hand)."""
        if not bool(torch.isfinite(self.S).all()):
            raise ValueError("the memory's stored state S has non-finite entries (nan or inf), so every "
                             "read through them is non-finite; writes never leave such a state, so it was "
                             "loaded or edited by hand: load a finite state dict, or reset() the memory")

    # ------------------------------------------------------------------ validation
    def _check_not_meta(self, op: str, **tensors: torch.Tensor) -> None:
        """A write or read needs values: a memory or an input on the meta device is refused."""
        if self.S.is_meta:
            raise ValueError(f"cannot {op} a {type(self).__name__} on the meta device: it has shapes and no "
                             "values (load a state dict into it with load_state_dict(saved, assign=True), "
                             "or build it on a real device)")
        for name, x in tensors.items():
            if x.is_meta:
                raise ValueError(f"{name} are on the meta device (shapes, no values): {op} needs values; "
                                 f"pass tensors on a real device (this memory is on {self.device})")

    def _check_own_dtype(self) -> None:
        """The state may have been converted after construction (``mem.half()``, ``mem.to(...)``)."""
        if self.S.dtype not in (torch.float32, torch.float64):
            check_float_dtype(self.S.dtype, "the memory's state dtype (converted after construction?)")

    def _to_state(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """Finite ``x`` (already checked) on the memory's device and in its dtype; an overflow of
        the cast (float64 input beyond float32's range) is reported as one."""
        return cast_checked(x.to(device=self.device), self.dtype, name)

    def _check_pairs(
        self, keys, values, require_unit_keys: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate and convert ``keys (n, d_k)`` and ``values (n, d_v)``."""
        self._check_own_dtype()
        require_unit_keys = as_bool(require_unit_keys, "require_unit_keys")
        keys = real_tensor(keys, "keys")
        values = real_tensor(values, "values")
        self._check_not_meta("write", keys=keys, values=values)
        if keys.ndim != 2:
            raise ValueError(
                f"keys must be 2-D with shape (n, d_k) = (n, {self.d_k}); got shape {_shape(keys)}"
            )
        if values.ndim != 2:
            raise ValueError(
                f"values must be 2-D with shape (n, d_v) = (n, {self.d_v}); got shape {_shape(values)}"
            )
        if keys.shape[0] != values.shape[0]:
            raise ValueError(
                "keys and values must have the same number of rows (pairs); got keys shape "
                f"{_shape(keys)} and values shape {_shape(values)}"
            )
        if keys.shape[1] != self.d_k:
            raise ValueError(
                f"keys must have last dimension d_k={self.d_k}; got keys shape {_shape(keys)}"
            )
        if values.shape[1] != self.d_v:
            raise ValueError(
                f"values must have last dimension d_v={self.d_v}; got values shape {_shape(values)}"
            )
        if keys.is_floating_point() and not torch.isfinite(keys).all():
            raise ValueError("keys contain non-finite entries (nan or inf)")
        if values.is_floating_point() and not torch.isfinite(values).all():
            raise ValueError("values contain non-finite entries (nan or inf)")
        keys, values = self._to_state(keys, "keys"), self._to_state(values, "values")
        if require_unit_keys and keys.shape[0] > 0:
            norms = stable_norms(keys, dim=1)  # (n,); finite even for keys of 1e200
            dev = (norms - 1).abs()
            if (dev > UNIT_KEY_TOL).any():
                i = int(dev.argmax())
                raise ValueError(
                    f"require_unit_keys=True but key {i} has norm {float(norms[i]):.9g} "
                    f"(allowed deviation from 1 is {UNIT_KEY_TOL:g})"
                )
        return keys, values

    def _check_queries(self, queries) -> torch.Tensor:
        self._check_own_dtype()
        queries = real_tensor(queries, "queries")
        self._check_not_meta("read", queries=queries)
        if queries.ndim < 1 or queries.shape[-1] != self.d_k:
            raise ValueError(
                f"queries must have shape (..., d_k) with d_k={self.d_k}; got shape {_shape(queries)}"
            )
        if queries.is_floating_point() and not torch.isfinite(queries).all():
            raise ValueError("queries contain non-finite entries (nan or inf)")
        return self._to_state(queries, "queries")

    def _overflow(self, what: str, n: int, passes: int = 1) -> MemoryOverflowError:
        return MemoryOverflowError(
            f"{what} overflowed to non-finite values (dtype {self.dtype}, largest finite value "
            f"{torch.finfo(self.dtype).max:.2g}) while writing {n} pairs x {passes} passes, although "
            "the keys and values are finite; the state is unchanged. Rescale the keys or values"
            + (", or use dtype=torch.float64" if self.dtype != torch.float64 else "")
        )

    # ------------------------------------------------------------------ interface
    def write(self, keys: ArrayLike, values: ArrayLike, *, require_unit_keys: bool = False) -> "MatrixMemory":
        raise NotImplementedError

    def read(self, queries: ArrayLike) -> torch.Tensor:
        """Read the memory: ``S q`` for every query.

        Parameters
        ----------
        queries : array-like, shape ``(..., d_k)``
            One query per row; any leading dimensions. Converted to the memory's dtype/device.

        Returns
        -------
        torch.Tensor, shape ``(..., d_v)``
            ``S q`` for each query (computed as ``queries @ S.T``).

        Raises
        ------
        ValueError
            If ``queries`` is not an array of real numbers, its last dimension is not ``d_k``, it
            or the memory is on the meta device (no values to read), it has non-finite entries, a
            finite query overflows the memory's dtype when cast to it, the stored state ``S`` is
            not finite (a corrupt state loaded or edited by hand; the message says so), or the
            read ``S q`` itself is beyond the dtype's range (it is recomputed in float64 first,
            so only a result that float32 cannot hold raises).

        References
        ----------
        Seed §3 ("Retrieving means multiplying the state by a query").
        """
        queries = self._check_queries(queries)
        out = queries @ self.S.T  # (..., d_k) @ (d_k, d_v) -> (..., d_v)
        if bool(torch.isfinite(out).all()):
            return out
        self._check_finite_state()  # a non-finite state is named as such, not as an overflow
        return checked_result(out, "the read S q", lambda: queries.double() @ self.S.double().T,
                              "rescale the queries" + (" or use dtype=torch.float64"
                                                       if self.dtype != torch.float64 else ""))

    def forward(self, queries: torch.Tensor) -> torch.Tensor:
        """``S q`` for every query, as a module is called: ``(..., d_k) -> (..., d_v)``.

        Sync-free, like torch's own layers: ``queries`` must be a tensor of the state's dtype and
        device (nothing is cast; :func:`assocmem._checks.module_input`) and its values are not
        inspected, so a model that holds the memory can be traced by ``torch.compile`` without
        graph breaks. :meth:`read` is the validated form: it takes array-likes, casts them, and
        refuses non-finite queries and overflowing reads.

        Raises
        ------
        TypeError
            If ``queries`` is not a tensor or has another dtype than the state.
        ValueError
            If its last dimension is not ``d_k`` or it is on another device.
        """
        queries = module_input(queries, self.d_k, self.S, "queries")
        return queries @ self.S.T  # (..., d_k) @ (d_k, d_v) -> (..., d_v)

    def reset(self) -> "MatrixMemory":
        """Forget everything: set ``S`` to zero (and drop any stored pairs). Returns ``self``."""
        self.S = torch.zeros_like(self.S)
        self.num_pairs = 0
        return self


class OuterProductMemory(MatrixMemory):
    """Additive (Hebbian, correlation-matrix) memory: ``S += sum_i v_i k_i^T``.

    Each pair is written by adding its outer product; writes accumulate across calls. In the
    seed's column notation one call adds ``V K^T``. Reading a stored key gives
    ``S k_j = sum_i v_i (k_i^T k_j)``, i.e. the wanted value scaled by ``||k_j||^2`` plus
    interference weighted by the key overlaps (column ``j`` of ``V G``). Recall is exact for every
    pair iff the keys are orthonormal (``G = I``). This is the state of unnormalised causal linear
    attention.

    Parameters
    ----------
    d_k : int
        Key (and query) dimension.
    d_v : int
        Value dimension.
    dtype : torch.dtype or str, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Dtype of the state, float32 or float64 (a string names a torch dtype, e.g. ``"float64"``).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Resolved with :func:`assocmem.devices.resolve_device`.

    Raises
    ------
    ValueError
        If ``d_k`` or ``d_v`` is not a positive integer, or ``dtype`` is not float32 or float64
        (float16 and bfloat16 are refused, naming the supported dtypes).
    TypeError
        If ``dtype`` is neither a ``torch.dtype`` nor a string.

    References
    ----------
    Seed §3, §4, §5. Kohonen (1972), Correlation matrix memories; Anderson (1972);
    Katharopoulos et al. (2020).
    """

    def write(self, keys: ArrayLike, values: ArrayLike, *,
              require_unit_keys: bool = False) -> "OuterProductMemory":
        """Add ``sum_i v_i k_i^T`` to the state.

        Parameters
        ----------
        keys : array-like, shape ``(n, d_k)``
            Keys as rows (the seed's ``K^T``; the seed stacks them as columns ``(d_k, n)``).
        values : array-like, shape ``(n, d_v)``
            Values as rows (the seed's ``V^T``).
        require_unit_keys : bool, default False
            If True, raise unless every key has norm 1 within ``1e-6`` (the seed assumes
            ``||k_i|| = 1``, §4).

        Returns
        -------
        OuterProductMemory
            ``self``, so calls chain: ``mem.write(K, V).read(Q)``.

        Raises
        ------
        ValueError
            On shape mismatches (the message names both shapes), input that is not real numbers,
            non-finite input, finite input that overflows the memory's dtype when cast to it, a
            non-boolean ``require_unit_keys``, or non-unit keys when it is set. Nothing is written.
        MemoryOverflowError
            (a ``ValueError`` and a ``FloatingPointError``) if the new state has an entry beyond
            the dtype's range (float32 overflows above ``3.4e38``); the state is left as it was.

        References
        ----------
        Seed §3 (update ``S_t = S_{t-1} + v_t k_t^T``), §5 (``S = V K^T``).
        """
        keys, values = self._check_pairs(keys, values, require_unit_keys)
        S = self.S + values.T @ keys  # (d_v, n) @ (n, d_k) -> (d_v, d_k)
        if not bool(torch.isfinite(S).all()):
            raise self._overflow("the outer-product state S + V K^T", keys.shape[0])
        self.S = S  # assigned only once everything has been computed and checked
        self.num_pairs += keys.shape[0]
        return self


class LeastSquaresMemory(MatrixMemory):
    """Optimal linear associative memory ``S* = V K^+`` over every pair written so far.

    ``S*`` minimises ``||S K - V||_F^2`` (seed §6) and, among minimisers, has the smallest
    Frobenius norm. When the keys are linearly independent (``n <= d_k`` and rank ``n``), the
    Gram matrix ``G = K^T K`` is invertible, ``S* = V G^{-1} K^T`` and every value is recalled
    exactly even for overlapping keys: each value is stored under the dual vector of its key
    (:meth:`dual_basis`). When ``n > d_k`` the keys are dependent and ``S*`` is the best
    compromise in squared error.

    The memory keeps all written pairs (a key-value cache; that is why linear attention cannot
    use it, seed §6) and refits ``S`` after every :meth:`write`.

    Implementation: ``S* = V K^+`` is computed with :func:`torch.linalg.pinv` of the row-stacked
    keys (``keys^+`` has shape ``(d_k, n)`` and ``K^+ = (keys^+)^T``), which works on every device,
    including rank-deficient cases. Singular values below
    ``max(atol, rtol * sigma_max)`` are treated as zero; with both left ``None`` torch uses
    ``rtol = eps(dtype) * max(n, d_k)`` (the usual ``rcond``) and ``atol = 0``.

    Parameters
    ----------
    d_k : int
        Key (and query) dimension.
    d_v : int
        Value dimension.
    rtol : float or None, default None
        Relative cut-off for small singular values in the pseudoinverse (numpy's ``rcond``).
    atol : float or None, default None
        Absolute cut-off for small singular values.
    dtype : torch.dtype or str, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Dtype of the state and of the stored pairs, float32 or float64 (a string names a torch dtype). float64 is advised: ``G^{-1}`` amplifies
        rounding by the condition number of the keys.
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Resolved with :func:`assocmem.devices.resolve_device`.

    Attributes
    ----------
    stored_keys : torch.Tensor, shape ``(n, d_k)``
        Every key written since the last :meth:`reset`, as rows (buffer).
    stored_values : torch.Tensor, shape ``(n, d_v)``
        The matching values, as rows (buffer).

    Raises
    ------
    ValueError
        If ``d_k`` or ``d_v`` is not a positive integer, a tolerance is negative or not finite,
        or ``dtype`` is not float32 or float64 (float16 and bfloat16 are refused, naming the
        supported dtypes).
    TypeError
        If a tolerance is not a real number (a string, a boolean, a list), or ``dtype`` is
        neither a ``torch.dtype`` nor a string.

    References
    ----------
    Seed §6 ("The best a fixed matrix can do"). Kohonen & Ruohonen (1973), Representation of
    associated data by matrix operators.
    """

    stored_keys: torch.Tensor
    _growing_buffers = ("stored_keys", "stored_values")
    _saved_settings = ("rtol", "atol")
    stored_values: torch.Tensor

    def __init__(
        self,
        d_k: int,
        d_v: int,
        *,
        rtol: float | None = None,
        atol: float | None = None,
        dtype: torch.dtype | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        rtol, atol = _tolerance(rtol, "rtol"), _tolerance(atol, "atol")
        self.rtol = rtol
        self.atol = atol
        dev, dt = self.S.device, self.S.dtype
        self.register_buffer("stored_keys", torch.zeros(0, d_k, dtype=dt, device=dev))  # (n, d_k)
        self.register_buffer("stored_values", torch.zeros(0, d_v, dtype=dt, device=dev))  # (n, d_v)

    def _check_setting(self, name: str, value) -> float | None:
        return _tolerance(value, name)

    def _check_loaded(self) -> None:
        """``S`` as for every memory, and the stored pairs consistent with it: ``stored_keys``
        ``(n, d_k)`` and ``stored_values`` ``(n, d_v)`` with one ``n`` equal to ``num_pairs``, in
        ``S``'s dtype and device, finite."""
        super()._check_loaded()
        K, V = self.stored_keys, self.stored_values
        if K.dim() != 2 or K.shape[1] != self.d_k or V.dim() != 2 or V.shape[1] != self.d_v:
            raise ValueError(f"stored_keys and stored_values must have shapes (n, d_k) = (n, {self.d_k}) and "
                             f"(n, d_v) = (n, {self.d_v}); got {_shape(K)} and {_shape(V)}")
        if K.shape[0] != V.shape[0]:
            raise ValueError(f"stored_keys and stored_values must hold one row per pair; got {K.shape[0]} key "
                             f"rows and {V.shape[0]} value rows")
        if K.shape[0] != self.num_pairs:
            raise ValueError(f"the extra state's num_pairs = {self.num_pairs} disagrees with the "
                             f"{K.shape[0]} stored pairs")
        for name, x in (("stored_keys", K), ("stored_values", V)):
            if x.dtype != self.S.dtype or x.device != self.S.device:
                raise ValueError(f"{name} must have S's dtype and device ({self.S.dtype} on {self.S.device}); "
                                 f"got {x.dtype} on {x.device}")
            if not x.is_meta and not bool(torch.isfinite(x).all()):
                raise ValueError(f"{name} has non-finite entries (nan or inf)")

    def _pinv_keys(self) -> torch.Tensor:
        """``keys^+`` of shape ``(d_k, n)``; its transpose is the seed's ``K^+`` ``(n, d_k)``."""
        return torch.linalg.pinv(self.stored_keys, atol=self.atol, rtol=self.rtol)  # (d_k, n)

    def write(self, keys: ArrayLike, values: ArrayLike, *,
              require_unit_keys: bool = False) -> "LeastSquaresMemory":
        """Append pairs and refit ``S = V K^+`` over everything written so far.

        Parameters
        ----------
        keys : array-like, shape ``(n, d_k)``
            Keys as rows (the seed's ``K^T``; the seed stacks them as columns ``(d_k, n)``).
        values : array-like, shape ``(n, d_v)``
            Values as rows (the seed's ``V^T``).
        require_unit_keys : bool, default False
            If True, raise unless every key has norm 1 within ``1e-6``.

        Returns
        -------
        LeastSquaresMemory
            ``self``.

        Raises
        ------
        ValueError
            On shape mismatches (naming the shapes), input that is not real numbers, non-finite
            input, finite input that overflows the memory's dtype when cast to it, a non-boolean
            ``require_unit_keys``, or non-unit keys when it is set.
        MemoryOverflowError
            (a ``ValueError`` and a ``FloatingPointError``) if the refitted state has an entry
            beyond the dtype's range.

        If anything raises (the pseudoinverse included), the stored pairs, ``S`` and
        ``num_pairs`` are left exactly as they were.

        References
        ----------
        Seed §6: ``S* = V K^+``, and ``S* = V G^{-1} K^T`` for independent keys.
        """
        keys, values = self._check_pairs(keys, values, require_unit_keys)
        all_keys = torch.cat([self.stored_keys, keys], dim=0)  # (N, d_k)
        all_values = torch.cat([self.stored_values, values], dim=0)  # (N, d_v)
        S = self.S
        if all_keys.shape[0] > 0:
            # Seed: S* = V K^+ with V (d_v, N), K^+ (N, d_k). Rows: V = values.T, K^+ = pinv(keys).T.
            pinv = torch.linalg.pinv(all_keys, atol=self.atol, rtol=self.rtol)  # (d_k, N)
            S = all_values.T @ pinv.T  # (d_v, N) @ (N, d_k) -> (d_v, d_k)
            if not bool(torch.isfinite(S).all()):
                raise self._overflow("the least-squares state V K^+", keys.shape[0])
        # Everything is computed: assign together, so that a failure above changes nothing.
        self.stored_keys, self.stored_values, self.S = all_keys, all_values, S
        self.num_pairs = all_keys.shape[0]
        return self

    def key_rank(self) -> int:
        """Numerical rank of the stored keys, with the same tolerances as the pseudoinverse."""
        if self.stored_keys.shape[0] == 0:
            return 0
        return int(torch.linalg.matrix_rank(self.stored_keys, atol=self.atol, rtol=self.rtol))

    def dual_basis(self) -> torch.Tensor:
        """Dual vectors ``k~_i`` of the stored keys, as rows.

        In the seed's notation ``k~_i`` is column ``i`` of ``K G^{-1}``; here they are returned as
        rows, ``(K G^{-1})^T = G^{-1} keys``, which for independent keys equals the seed's ``K^+``.
        They satisfy ``k~_i^T k_j = delta_ij`` (biorthogonality), and ``S* = sum_i v_i k~_i^T``.
        For two unit keys at angle ``theta``, ``||k~_i|| = 1 / sin(theta)``.

        Returns
        -------
        torch.Tensor, shape ``(n, d_k)``
            Row ``i`` is the dual vector of the ``i``-th stored key.

        Raises
        ------
        ValueError
            If the stored keys are linearly dependent (numerical rank below ``n``); the message
            names the rank. The dual basis exists only for independent keys.

        References
        ----------
        Seed §6 (dual basis and Figure 3).
        """
        n = self.stored_keys.shape[0]
        rank = self.key_rank()
        if rank < n:
            raise ValueError(
                f"the {n} stored keys are linearly dependent (rank {rank} < n = {n}, d_k = "
                f"{self.d_k}); the dual basis exists only for linearly independent keys"
            )
        if n == 0:
            return self.stored_keys.clone()  # (0, d_k)
        return self._pinv_keys().T  # (n, d_k)

    def reset(self) -> "LeastSquaresMemory":
        """Forget every pair and set ``S`` to zero. Returns ``self``."""
        super().reset()
        self.stored_keys = self.stored_keys[:0].clone()
        self.stored_values = self.stored_values[:0].clone()
        return self


class DeltaRuleMemory(MatrixMemory):
    """Delta-rule (Widrow-Hoff, DeltaNet) memory, written one pair at a time.

    For each pair in order, ``S_t = S_{t-1} + beta (v_t - S_{t-1} k_t) k_t^T``: read what the
    memory currently returns for ``k_t``, and write only the correction. This is one step of
    online gradient descent on ``1/2 ||S k_t - v_t||^2`` with learning rate ``beta``, so sweeping
    the pairs is stochastic gradient descent on ``||S K - V||_F^2`` (Kaczmarz's method for
    ``beta = 1``). Consequences (Schlag et al. 2021):

    * with unit keys and ``beta = 1`` a freshly written pair is recalled exactly;
    * with orthonormal keys and ``beta = 1``, starting from ``S = 0``, it equals both the additive
      and the least-squares memory;
    * with unit, linearly independent keys, repeated passes (``passes > 1``) converge to the
      least-squares memory ``S* = V K^+`` (starting from ``S = 0`` the iterates stay in the span
      of the keys, so the limit is the minimum-norm solution). When ``n > d_k`` there is no exact
      solution; with a fixed ``beta`` the iterates then settle into a cycle near ``S*`` whose
      distance shrinks with ``beta``.

    For keys that are not unit-norm the step on pair ``t`` is effectively ``beta ||k_t||^2``:
    the write multiplies the state's error along ``k_t`` by ``1 - beta ||k_t||^2``, which stays
    at most 1 in size only while ``beta ||k_t||^2 <= 2``. At ``beta ||k_t||^2 = 2`` the error
    flips sign without shrinking, beyond 2 it grows at every write (for keys of norm 3 at
    ``beta = 1`` the factor is ``-8``: the state soon holds numbers like ``1e100``, and keys of
    norm 30 overflow it to infinity and NaN). :meth:`write` therefore refuses keys with
    ``beta ||k_t||^2 >= 2`` unless ``allow_unstable=True``, and it raises rather than store a
    state with non-finite entries.

    Parameters
    ----------
    d_k : int
        Key (and query) dimension.
    d_v : int
        Value dimension.
    beta : float, default 1.0
        Writing strength (learning rate), in ``(0, 1]``.
    dtype : torch.dtype or str, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Dtype of the state, float32 or float64 (a string names a torch dtype, e.g. ``"float64"``).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
        Resolved with :func:`assocmem.devices.resolve_device`.

    Raises
    ------
    ValueError
        If ``beta`` is not a real number in ``(0, 1]`` (a boolean or a string is refused, not
        read as a number), a dimension is not a positive integer, or ``dtype`` is not float32 or
        float64 (float16 and bfloat16 are refused, naming the supported dtypes).
    TypeError
        If ``dtype`` is neither a ``torch.dtype`` nor a string.

    References
    ----------
    Widrow & Hoff (1960), Adaptive switching circuits. Schlag, Irie & Schmidhuber (2021), Linear
    transformers are secretly fast weight programmers, ICML. Seed §3 and §6 (the memory it
    approaches).
    """

    def __init__(
        self,
        d_k: int,
        d_v: int,
        beta: float = 1.0,
        *,
        dtype: torch.dtype | None = None,
        device: str | torch.device | None = None,
    ) -> None:
        dtype = resolve_dtype(dtype)
        device = resolve_device(device, dtype=dtype)
        super().__init__(d_k, d_v, dtype=dtype, device=device)
        self.beta = check_beta(beta)

    _saved_settings = ("beta",)

    def _check_setting(self, name: str, value) -> float:
        return check_beta(value)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", beta={self.beta}"

    def write(
        self,
        keys: ArrayLike,
        values: ArrayLike,
        passes: int = 1,
        *,
        require_unit_keys: bool = False,
        allow_unstable: bool = False,
    ) -> "DeltaRuleMemory":
        """Apply the delta rule to each pair in row order, ``passes`` times over the batch.

        Parameters
        ----------
        keys : array-like, shape ``(n, d_k)``
            Keys as rows (the seed's ``K^T``; the seed stacks them as columns ``(d_k, n)``).
            The seed and DeltaNet assume unit keys.
        values : array-like, shape ``(n, d_v)``
            Values as rows (the seed's ``V^T``).
        passes : int, default 1
            Number of sweeps over the ``n`` pairs (epochs of online gradient descent).
        require_unit_keys : bool, default False
            If True, raise unless every key has norm 1 within ``1e-6``.
        allow_unstable : bool, default False
            The step on pair ``t`` is stable only while ``beta ||k_t||^2 < 2`` (see the class
            docstring); by default a key with ``beta ||k_t||^2 >= 2`` is refused before anything
            is written. Pass True to run such steps anyway (to study the divergence); the
            write still raises if the state stops being finite.

        Returns
        -------
        DeltaRuleMemory
            ``self``.

        Raises
        ------
        ValueError
            On shape mismatches (naming the shapes), input that is not real numbers, non-finite
            input, finite input that overflows the memory's dtype when cast to it, non-unit keys
            when ``require_unit_keys`` is set, ``passes`` not a positive integer, a flag that is
            not a boolean, or, unless ``allow_unstable`` is set, a key with
            ``beta ||k_t||^2 >= 2`` (the message names the first such key, its norm and the
            condition). Nothing is written.
        MemoryOverflowError
            (a ``FloatingPointError`` and a ``ValueError``) if the state has a non-finite entry
            (overflow) after the write; the state is left as it was before the call.

        References
        ----------
        Schlag et al. (2021), eq. for the delta update; Widrow & Hoff (1960).
        """
        passes = positive_int("passes", passes)
        allow_unstable = as_bool(allow_unstable, "allow_unstable")
        keys, values = self._check_pairs(keys, values, require_unit_keys)
        if keys.shape[0] > 0 and not allow_unstable:
            steps = self.beta * (keys.detach() ** 2).sum(dim=1)  # (n,): beta ||k_t||^2
            unstable = steps >= 2
            if bool(unstable.any()):
                i = int(unstable.nonzero()[0, 0])
                norm = float(stable_norms(keys[i].detach()))  # finite even where ||k||^2 overflows
                raise ValueError(
                    f"key {i} has norm {norm:.6g}, so its delta "
                    f"step beta ||k||^2 = {self.beta * norm * norm:.6g} is not below 2 (beta = {self.beta}); "
                    f"the update is stable only for beta ||k_t||^2 < 2 "
                    f"({int(unstable.sum())} of {keys.shape[0]} keys fail). Normalise the keys, "
                    "lower beta, or pass allow_unstable=True to run the divergent steps anyway"
                )
        S = self.S  # (d_v, d_k)
        for _ in range(passes):
            for k_t, v_t in zip(keys, values):  # k_t (d_k,), v_t (d_v,)
                error = v_t - S @ k_t  # (d_v,)
                S = S + self.beta * torch.outer(error, k_t)  # (d_v, d_k)
        if not bool(torch.isfinite(S).all()):
            raise MemoryOverflowError(
                f"the delta-rule state overflowed to non-finite values (dtype {self.dtype}) while "
                f"writing {keys.shape[0]} pairs x {passes} passes; the state is unchanged. "
                "Steps with beta ||k_t||^2 >= 2 diverge; normalise the keys or lower beta"
            )
        self.S = S  # the loop built a new tensor; only now is the state replaced
        self.num_pairs += keys.shape[0]
        return self
