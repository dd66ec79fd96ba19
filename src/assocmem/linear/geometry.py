"""The geometry of a few stored pairs: key coordinates, overlaps, and reads of noisy queries.

Helpers for seed 000 §4-§6 that are not closed forms (those live in :mod:`assocmem.linear.theory`):

* :func:`unit_vectors_2d`, :func:`circle_directions`: keys and query directions in the plane,
  where every figure of the seed is drawn;
* :func:`coherence`: the largest overlap ``max_{i != j} |cos(k_i, k_j)|`` of a set of keys, the
  quantity that makes a third key in the plane overlap the first two;
* :func:`additive_weights` and :func:`key_coordinates`: the two readings of a query. The additive
  memory ``S = V K^T`` weights value ``v_i`` by the perpendicular drop ``k_i^T q``; the
  least-squares memory ``S* = V K^+`` weights it by the coordinate ``c_i`` of ``q`` in the basis of
  keys, ``q = sum_i c_i k_i``;
* :func:`keys_with_gram`: keys with a prescribed Gram matrix;
* :func:`noisy_read_errors`: ``||S (k + eps u) - v||`` over noise directions ``u``, whose maximum
  over ``u`` is ``eps`` times the largest singular value for an exact memory;
* :func:`least_squares_from_moments`: the least-squares memory from two sums of outer products,
  ``S* = (V K^T)(K K^T)^+``.

Shape convention: as in :mod:`assocmem.linear.memory`, keys are rows, ``keys`` of shape ``(n, d_k)``
(the seed's ``K^T``; the seed stacks keys as columns, ``K`` of shape ``(d_k, n)``), values are rows
``(n, d_v)``, and a memory state ``S`` is ``(d_v, d_k)`` so that a read is ``S q``.

References
----------
Seed "How much can a matrix remember?", §4 (one pair), §5 (Gram matrix), §6 (least squares, dual
basis, the second reading).
Kohonen, T., & Ruohonen, M. (1973). Representation of associated data by matrix operators.
Welch, L. R. (1974). Lower bounds on the maximum cross correlation of signals.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from assocmem._checks import as_real
from assocmem.devices import resolve_device
from assocmem.dtypes import cast_checked, check_float_dtype, resolve_dtype
from assocmem.linear._args import checked_result, optional_tolerance

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike

__all__ = [
    "unit_vectors_2d",
    "circle_directions",
    "coherence",
    "additive_weights",
    "key_coordinates",
    "keys_with_gram",
    "noisy_read_errors",
    "least_squares_from_moments",
]


def _shape(x: torch.Tensor) -> tuple[int, ...]:
    return tuple(x.shape)


def _real_float(x, name: str, dtype: torch.dtype | None = None, *,
                numbers_only: bool = False) -> torch.Tensor:
    """``x`` as a finite float32/float64 tensor: ``dtype`` if given, else ``x``'s own float dtype
    (float64 for non-tensors and integers). ``numbers_only`` refuses booleans (an ``eps`` or an
    angle of ``True`` is a mistake, not 1)."""
    if numbers_only and (isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) in (torch.bool, np.bool_)):
        raise ValueError(f"{name} must be real numbers, got the boolean {x!r}")
    if not isinstance(x, torch.Tensor):
        # Python numbers and numpy arrays: convert to float64 (exact for Python floats), never
        # through torch's float32 default; the cast to ``dtype`` below reports an overflow.
        try:
            x = torch.as_tensor(x, dtype=torch.complex128 if np.iscomplexobj(x) else torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"{name} must be a real number or an array of real numbers; got "
                             f"{type(x).__name__} {x!r:.80}") from None
    if x.is_complex():
        raise ValueError(f"{name} must be real; got dtype {x.dtype}")
    if x.is_floating_point() and not torch.isfinite(x).all():
        raise ValueError(f"{name} contains non-finite entries (nan or inf)")
    target = dtype if dtype is not None else (x.dtype if x.is_floating_point() else torch.float64)
    check_float_dtype(target, f"{name} dtype")  # float16/bfloat16 refused, naming float32/float64
    return cast_checked(x, target, name)  # a finite float64 beyond float32's range is an overflow


def _ldexp(x: float, e: int) -> float:
    try:
        return math.ldexp(x, e)
    except OverflowError:
        return math.copysign(math.inf, x)


def _check_dtype(dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point dtype (torch.float32 or torch.float64); got {dtype}")
    return check_float_dtype(dtype)


def _check_keys(keys, name: str = "keys") -> torch.Tensor:
    keys = _real_float(keys, name)
    if keys.ndim < 2:
        raise ValueError(f"{name} must be at least 2-D (..., n, d_k); got shape {_shape(keys)}")
    return keys


def unit_vectors_2d(angles: ArrayLike, *, dtype: torch.dtype | None = None,
                    device: str | torch.device | None = None) -> torch.Tensor:
    """Unit vectors in the plane at the given angles: ``(cos a, sin a)``.

    Parameters
    ----------
    angles : float or array-like, shape ``(...)``
        Angles in radians, measured counter-clockwise from the first axis.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Floating dtype of the result.
    device : str, torch.device or None, default None
        ``None`` keeps the device of ``angles`` (the CPU for non-tensors); anything else goes
        through :func:`assocmem.devices.resolve_device` (``"auto"`` picks CUDA, MPS, then CPU).

    Returns
    -------
    torch.Tensor, shape ``(..., 2)``
        One unit vector per angle.

    Raises
    ------
    ValueError
        If an angle is non-finite or not a real number (a boolean or a string is refused), or
        ``dtype`` is not float32 or float64 (float16 and bfloat16 are refused, naming the
        supported dtypes).

    References
    ----------
    Seed §4: the figures use ``d_k = d_v = 2`` so that keys, queries and values are arrows.
    """
    dtype = resolve_dtype(dtype)
    dtype = _check_dtype(dtype)
    a = _real_float(angles, "angles", dtype, numbers_only=True)
    if device is not None:
        a = a.to(resolve_device(device, dtype=dtype))
    return torch.stack([torch.cos(a), torch.sin(a)], dim=-1)  # (..., 2)


def circle_directions(m: int, *, dtype: torch.dtype | None = None,
                      device: str | torch.device | None = None) -> torch.Tensor:
    """``m`` unit vectors evenly spaced on the unit circle, at angles ``2 pi j / m``.

    Used as query directions: the image of these points under a ``(d_v, 2)`` matrix traces the
    ellipse whose long semi-axis is the largest singular value. Taking the maximum of
    ``||S u||`` over them underestimates ``sigma_max`` by a relative amount of at most
    ``(pi / m)^2 / 2``, since the best grid point is within ``pi / m`` of the top singular direction.

    Parameters
    ----------
    m : int
        Number of directions, ``>= 1``.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        Floating dtype of the result.
    device : str, torch.device or None, default None
        ``None`` for the CPU, else resolved with :func:`assocmem.devices.resolve_device`.

    Returns
    -------
    torch.Tensor, shape ``(m, 2)``

    Raises
    ------
    ValueError
        If ``m`` is not a positive integer, or ``dtype`` is not float32 or float64.
    """
    dtype = resolve_dtype(dtype)
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
        raise ValueError(f"m must be a positive integer; got {m!r}")
    dtype = _check_dtype(dtype)
    angles = torch.arange(int(m), dtype=dtype) * (2 * math.pi / int(m))  # (m,)
    return unit_vectors_2d(angles, dtype=dtype, device=device)  # (m, 2)


def coherence(keys: ArrayLike) -> torch.Tensor:
    """Largest overlap between two different keys, ``max_{i != j} |cos angle(k_i, k_j)|``.

    This is the largest off-diagonal entry of the Gram matrix of the normalised keys, the worst
    leak of one value into the read of another key in an additive memory (seed §5).

    Parameters
    ----------
    keys : array-like, shape ``(..., n, d_k)``
        Keys as rows, ``n >= 2``; leading batch dimensions are allowed (e.g. many triples at once,
        ``(B, 3, 2)``). Keys need not be unit length; they are normalised first.

    Returns
    -------
    torch.Tensor, shape ``(...)``
        The coherence of each set of keys, in ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``keys`` is not at least 2-D, has fewer than two keys, contains a zero key, is
        non-finite or not real numbers, or is float16/bfloat16.

    References
    ----------
    Seed §5 ("in the plane a third key always overlaps the first two"). The lower bounds are
    :func:`assocmem.linear.theory.planar_coherence_bound` and :func:`assocmem.linear.theory.welch_bound`.
    """
    keys = _check_keys(keys)
    n = keys.shape[-2]
    if n < 2:
        raise ValueError(f"coherence needs at least two keys; got shape {_shape(keys)}")
    if (keys == 0).all(dim=-1).any():
        raise ValueError("a key has zero length; its angle to the others is undefined")
    # Scale each key by the power of two nearest its largest entry (exact, and angles do not
    # depend on lengths), so that norms of keys like 1e200 or 1e-200 neither overflow nor vanish.
    _, e = torch.frexp(keys.abs().amax(dim=-1, keepdim=True))
    keys = torch.ldexp(keys, -e)  # (..., n, d_k), largest entry of each key in [0.5, 1)
    norms = torch.linalg.vector_norm(keys, dim=-1, keepdim=True)  # (..., n, 1)
    unit = keys / norms  # (..., n, d_k)
    cos = unit @ unit.transpose(-2, -1)  # (..., n, n)
    off = ~torch.eye(n, dtype=torch.bool, device=keys.device)  # (n, n)
    return cos.abs()[..., off].amax(dim=-1)  # (...)


def additive_weights(keys: ArrayLike, queries: ArrayLike) -> torch.Tensor:
    """Weights the additive memory puts on each value: the perpendicular drops ``k_i^T q``.

    ``S q = V K^T q = sum_i (k_i^T q) v_i``: the query is dropped perpendicularly onto each key
    on its own, and the length of each drop (times ``||k_i||``) weights that key's value.

    Parameters
    ----------
    keys : array-like, shape ``(n, d_k)``
        Keys as rows.
    queries : array-like, shape ``(..., d_k)``
        Queries as rows.

    Returns
    -------
    torch.Tensor, shape ``(..., n)``
        ``w[..., i] = k_i^T q``.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite input or input that is not real numbers, float16 or
        bfloat16 keys, or a weight beyond the dtype's range (a float32 overflow is recomputed in
        float64 first; only a weight float32 cannot hold raises).

    References
    ----------
    Seed §5 (two pairs) and §6 ("a perpendicular drop onto each key separately").
    """
    keys, queries = _check_keys_queries(keys, queries)
    return checked_result(queries @ keys.T, "the weights k_i^T q",  # (..., d_k) @ (d_k, n) -> (..., n)
                          lambda: queries.double() @ keys.double().T)


def key_coordinates(keys: ArrayLike, queries: ArrayLike, *, rtol: float | None = None) -> torch.Tensor:
    """Coordinates of each query in the basis of keys: ``c`` with ``q = sum_i c_i k_i``.

    For linearly independent keys and a query in their span the coordinates are unique, and
    ``c_i = k~_i^T q`` with ``k~_i`` the dual vectors; the least-squares memory reads
    ``S* q = sum_i c_i v_i`` (seed §6, "walking to the query along the key directions"). For a
    query outside the span, ``c`` are the coordinates of its orthogonal projection onto the span.
    Computed as ``c = K^+ q`` with :func:`torch.linalg.pinv`.

    Parameters
    ----------
    keys : array-like, shape ``(n, d_k)``
        Linearly independent keys as rows (so ``n <= d_k``).
    queries : array-like, shape ``(..., d_k)``
        Queries as rows.
    rtol : float or None, default None
        Relative cut-off for the rank test and the pseudoinverse (torch's default when ``None``).

    Returns
    -------
    torch.Tensor, shape ``(..., n)``
        ``c[..., i]``, the coefficient of ``k_i``.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite input or input that is not real numbers, float16 or
        bfloat16 keys, an ``rtol`` that is not a finite number ``>= 0``, a coordinate beyond the
        dtype's range, or if the keys are linearly dependent (the coordinates are then not
        unique; the message gives the rank).

    References
    ----------
    Seed §6 ("There is a second way to read the same formula").
    """
    rtol = optional_tolerance(rtol, "rtol")
    keys, queries = _check_keys_queries(keys, queries)
    n, d_k = keys.shape
    rank = int(torch.linalg.matrix_rank(keys, rtol=rtol)) if n else 0
    if rank < n:
        raise ValueError(
            f"the {n} keys are linearly dependent (rank {rank} < n = {n}, d_k = {d_k}); "
            "coordinates in the key basis are defined only for independent keys"
        )
    pinv = torch.linalg.pinv(keys, rtol=rtol)  # (d_k, n); its transpose is the seed's K^+ (n, d_k)
    return checked_result(queries @ pinv, "the coordinates K^+ q",  # (..., d_k) @ (d_k, n) -> (..., n)
                          lambda: queries.double() @ pinv.double())


def _check_keys_queries(keys, queries) -> tuple[torch.Tensor, torch.Tensor]:
    keys = _real_float(keys, "keys")
    queries = _real_float(queries, "queries", keys.dtype).to(keys.device)
    if keys.ndim != 2:
        raise ValueError(f"keys must be 2-D with shape (n, d_k); got shape {_shape(keys)}")
    if queries.ndim < 1 or queries.shape[-1] != keys.shape[1]:
        raise ValueError(
            f"queries must have shape (..., d_k) with d_k = {keys.shape[1]} (from keys shape "
            f"{_shape(keys)}); got shape {_shape(queries)}"
        )
    return keys, queries


def keys_with_gram(gram: ArrayLike, *, rtol: float = 1e-12) -> torch.Tensor:
    """Keys, as rows, whose Gram matrix is ``gram``: ``keys @ keys.T == gram``.

    Factorises the symmetric positive semidefinite ``G = U diag(lam) U^T`` and returns
    ``U diag(sqrt(lam))`` restricted to the eigenvalues above ``rtol * max(lam)``, so the keys live
    in ``R^r`` with ``r = rank(G)``. Any rotation of the result has the same Gram matrix.

    Parameters
    ----------
    gram : array-like, shape ``(n, n)``
        Symmetric positive semidefinite matrix.
    rtol : float, default 1e-12
        Eigenvalues below ``rtol * max(lam)`` in absolute value count as zero.

    Returns
    -------
    torch.Tensor, shape ``(n, r)``
        Keys as rows; unit keys when ``diag(gram) = 1``.

    Raises
    ------
    ValueError
        If ``gram`` is not square, not symmetric (to ``1e-12`` relative), or has an eigenvalue
        below ``-rtol * max(lam)`` (not positive semidefinite), or is zero; if it is non-finite,
        not real numbers or float16/bfloat16; or if ``rtol`` is not a finite number ``>= 0``.

    References
    ----------
    Seed §5 (the Gram matrix ``G = K^T K`` determines every additive read ``V G``).
    """
    rtol = as_real(rtol, "rtol", minimum=0.0)
    G = _real_float(gram, "gram")
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"gram must be a square matrix; got shape {_shape(G)}")
    scale = float(G.abs().max()) if G.numel() else 0.0
    if scale == 0.0:
        raise ValueError("gram is zero; there are no keys to build")
    # Entries near the ends of the dtype's range would overflow G - G^T or the eigensolver: work
    # on G 4^-j (exact, a power of two) and scale the keys back by 2^j.
    j = 0 if 1e-100 < scale < 1e100 else math.frexp(scale)[1] // 2
    G = torch.ldexp(G, torch.tensor(-2 * j, device=G.device)) if j else G
    if float((G - G.T).abs().max()) > 1e-12 * float(G.abs().max()):
        raise ValueError("gram must be symmetric")
    lam, U = torch.linalg.eigh(G)  # ascending eigenvalues (n,), eigenvectors (n, n)
    top = float(lam[-1])
    if float(lam[0]) < -rtol * top:
        raise ValueError(
            f"gram is not positive semidefinite (smallest eigenvalue {_ldexp(float(lam[0]), 2 * j):.3g}); "
            "it is not the Gram matrix of any real vectors"
        )
    keep = lam > rtol * top  # (n,)
    keys = U[:, keep] * lam[keep].sqrt()  # (n, r)
    return torch.ldexp(keys, torch.tensor(j, device=keys.device)) if j else keys


def noisy_read_errors(S: ArrayLike, key: ArrayLike, value: ArrayLike, eps: ArrayLike,
                      directions: ArrayLike) -> torch.Tensor:
    """Read errors ``||S (k + eps u) - v||`` for queries pushed off a key by noise ``eps u``.

    By linearity ``S (k + eps u) - v = (S k - v) + eps S u``. For a memory that recalls ``k``
    exactly (least squares with independent keys) the first term vanishes, so the error is
    ``eps ||S u||``, and its maximum over unit ``u`` is ``eps sigma_max(S)``: the worst-case
    amplification of query noise is the largest singular value (seed §6). For the additive memory
    the first term is the interference ``sum_{i != j} (k_i^T k) v_i``.

    Parameters
    ----------
    S : array-like, shape ``(d_v, d_k)``
        Memory state.
    key : array-like, shape ``(d_k,)``
        The stored key the query is meant to hit.
    value : array-like, shape ``(d_v,)``
        The value stored under it.
    eps : float or array-like, shape ``(E,)``
        Noise sizes, ``>= 0``.
    directions : array-like, shape ``(m, d_k)``
        Noise directions ``u``; normally unit vectors (e.g. :func:`circle_directions`).

    Returns
    -------
    torch.Tensor, shape ``(m,)`` for scalar ``eps``, else ``(E, m)``
        ``||S (k + eps u) - v||`` for every noise size and direction.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite input or input that is not real numbers (a boolean
        ``eps`` is refused), float16/bfloat16 ``S``, a negative ``eps``, or an error beyond the
        dtype's range.

    References
    ----------
    Seed §6 ("A query that is slightly off k_1 then gives a read that is far from v_1").
    """
    S = _real_float(S, "S")
    if S.ndim != 2:
        raise ValueError(f"S must be 2-D with shape (d_v, d_k); got shape {_shape(S)}")
    d_v, d_k = S.shape
    key = _real_float(key, "key", S.dtype).to(S.device)
    value = _real_float(value, "value", S.dtype).to(S.device)
    eps_t = _real_float(eps, "eps", S.dtype, numbers_only=True).to(S.device)
    u = _real_float(directions, "directions", S.dtype).to(S.device)
    if key.shape != (d_k,):
        raise ValueError(f"key must have shape (d_k,) = ({d_k},); got shape {_shape(key)}")
    if value.shape != (d_v,):
        raise ValueError(f"value must have shape (d_v,) = ({d_v},); got shape {_shape(value)}")
    if u.ndim != 2 or u.shape[1] != d_k:
        raise ValueError(f"directions must have shape (m, d_k) with d_k = {d_k}; got shape {_shape(u)}")
    if eps_t.ndim > 1:
        raise ValueError(f"eps must be a scalar or 1-D; got shape {_shape(eps_t)}")
    if (eps_t < 0).any():
        raise ValueError(f"eps must be >= 0; got {eps!r}")
    def errors_of(S, key, value, eps_t, u):
        queries = key + eps_t.reshape(-1, 1, 1) * u  # (E, m, d_k)
        return torch.linalg.vector_norm(queries @ S.T - value, dim=-1)  # (E, m)

    errors = checked_result(errors_of(S, key, value, eps_t, u), "the read errors ||S (k + eps u) - v||",
                            lambda: errors_of(*(x.double() for x in (S, key, value, eps_t, u))))
    return errors[0] if eps_t.ndim == 0 else errors


def least_squares_from_moments(state: ArrayLike, key_moment: ArrayLike, *,
                               rtol: float | None = None) -> torch.Tensor:
    """The least-squares memory from two sums of outer products: ``S* = (V K^T) (K K^T)^+``.

    The identity ``K^+ = K^T (K K^T)^+`` holds for every matrix, so ``S* = V K^+`` needs only the
    additive state ``S = V K^T = sum_i v_i k_i^T`` and the ``d_k x d_k`` key moment
    ``C = K K^T = sum_i k_i k_i^T``. Both are sums of one outer product per pair (``C`` is the
    additive memory that stores each key as its own value), so a recurrent memory can accumulate
    them and discard every pair. ``G = K^T K`` is never formed. When the keys span ``R^{d_k}``
    (possible only for ``n >= d_k``), ``C`` is invertible and this is ``S C^{-1}``, the normal
    equations of seed §6's least-squares problem.

    Parameters
    ----------
    state : array-like, shape ``(d_v, d_k)``
        The additive state ``sum_i v_i k_i^T``.
    key_moment : array-like, shape ``(d_k, d_k)``
        ``sum_i k_i k_i^T`` over the same pairs (symmetric positive semidefinite).
    rtol : float or None, default None
        Relative cut-off for small eigenvalues of ``C`` in the pseudoinverse (torch's default,
        ``eps * d_k``, when ``None``). The eigenvalues of ``C`` are the squared singular values of
        the keys, so this cut-off acts on the keys' singular values squared.

    Returns
    -------
    torch.Tensor, shape ``(d_v, d_k)``
        ``S C^+``, equal to :class:`assocmem.linear.memory.LeastSquaresMemory`'s ``S`` for the same pairs
        up to rounding.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite input or input that is not real numbers, float16 or
        bfloat16 ``state``, a ``key_moment`` that is not symmetric (to ``1e-8`` relative; the
        pseudoinverse reads only one triangle of it), an ``rtol`` that is not a finite number
        ``>= 0``, or a result beyond the dtype's range.

    References
    ----------
    Seed §6 (``S* = V K^+``); Kohonen & Ruohonen (1973).
    """
    rtol = optional_tolerance(rtol, "rtol")
    S = _real_float(state, "state")
    C = _real_float(key_moment, "key_moment", S.dtype).to(S.device)
    if S.ndim != 2:
        raise ValueError(f"state must be 2-D with shape (d_v, d_k); got shape {_shape(S)}")
    d_k = S.shape[1]
    if C.shape != (d_k, d_k):
        raise ValueError(
            f"key_moment must have shape (d_k, d_k) = ({d_k}, {d_k}) to match state shape "
            f"{_shape(S)}; got shape {_shape(C)}"
        )
    if C.numel():
        scale, asym = float(C.abs().amax()), float((C - C.T).abs().amax())
        if asym > 1e-8 * scale:
            raise ValueError("key_moment must be symmetric (it is sum_i k_i k_i^T); got one with "
                             f"max |C - C^T| = {asym:.3g} against max |C| = {scale:.3g}")
    C_plus = torch.linalg.pinv(C, rtol=rtol, hermitian=True)  # (d_k, d_k)
    return checked_result(S @ C_plus, "the least-squares state S C^+",  # (d_v, d_k) @ (d_k, d_k)
                          lambda: S.double() @ C_plus.double())
