"""Softmax attention and unnormalised causal linear attention, in the seed's conventions.

* :func:`softmax_attention`: ``o_t = sum_{i<=t} softmax_i(q_t^T k_i) v_i`` (Vaswani et al. 2017),
  *without* the ``1/sqrt(d_k)`` scaling by default, as in the seed (§2).
* :func:`linear_attention`: the softmax replaced by the plain dot product and the normaliser
  dropped (seed §3; Katharopoulos et al. 2020 without feature map or denominator):
  ``o_t = sum_{i<=t} v_i (k_i^T q_t) = S_t q_t`` with ``S_t = sum_{i<=t} v_i k_i^T`` of shape
  ``(d_v, d_k)``. Three forms compute the same thing and are tested equal:

  - ``"parallel"``: ``(Q K^T ∘ M) V`` with the causal mask ``M`` (quadratic in ``T``);
  - ``"recurrent"``: the reference loop carrying ``S_t`` (the seed's recurrent network);
  - ``"chunked"``: causal-masked ``(Q K^T) V`` inside each chunk plus ``Q`` times the state carried
    over from earlier chunks (the form fast kernels use).

Decoding one token at a time (seed §2-§3), with exact counts of what each keeps and does:

* :class:`KVCacheDecoder`: softmax attention with a key-value cache, ``t (d_k + d_v)`` numbers held
  after ``t`` tokens and ``t (d_k + d_v)`` multiply-accumulates at step ``t``;
* :class:`LinearAttentionDecoder`: the recurrent state ``S_t``, ``d_v d_k`` numbers and ``2 d_v d_k``
  multiply-accumulates per step whatever ``t``.

Also :func:`linear_attention_agreement` (the three forms against a rounding bound) and the two
diagnostics of using one vector for query, key and value (seed §1), :func:`self_top_rate` and
:func:`score_asymmetry`.

Tensors are ``(..., T, d)``: time on the second-to-last axis, features last, any leading batch or
head axes. Libraries such as flash-linear-attention store the state as ``(d_k, d_v)`` (the
transpose of the seed's ``S``) and scale queries by ``1/sqrt(d_k)``; we follow the seed.

References
----------
Vaswani, A., et al. (2017). Attention is all you need. NeurIPS.
Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs: fast
autoregressive transformers with linear attention. ICML.
Schlag, I., Irie, K., & Schmidhuber, J. (2021). Linear transformers are secretly fast weight
programmers. ICML.
Kohonen, T. (1972). Correlation matrix memories; Anderson, J. A. (1972). A simple neural network
generating an interactive memory.
Yang, S., et al. (2024). Gated linear attention transformers with hardware-efficient training. ICML
(the chunkwise form).
Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1 (rounding bounds).
"""

from __future__ import annotations

import numbers

import torch

__all__ = [
    "causal_mask",
    "softmax_attention",
    "softmax_weights",
    "linear_attention",
    "LINEAR_ATTENTION_FORMS",
    "gamma",
    "linear_attention_agreement",
    "self_top_rate",
    "score_asymmetry",
    "KVCacheDecoder",
    "LinearAttentionDecoder",
    "decode",
]

#: The forms accepted by :func:`linear_attention`.
LINEAR_ATTENTION_FORMS = ("parallel", "recurrent", "chunked")


def causal_mask(T: int, device: str | torch.device | None = None) -> torch.Tensor:
    """Lower-triangular boolean mask ``M[t, i] = (i <= t)``.

    Parameters
    ----------
    T : int
        Sequence length.
    device : str, torch.device or None
        Device of the mask (``None``: torch's default device).

    Returns
    -------
    torch.Tensor, shape ``(T, T)``, dtype bool
        True where query position ``t`` may see key position ``i``.

    Raises
    ------
    ValueError
        If ``T`` is negative.

    References
    ----------
    Seed §2: "the sum runs over ``i <= t``".
    """
    if T < 0:
        raise ValueError(f"T must be non-negative; got {T}")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    """Shared shape checks; messages name the offending shapes."""
    shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
        if x.ndim < 2:
            raise ValueError(f"q, k, v must have shape (..., T, d); got {shapes}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share the key dimension d_k (last axis); got {shapes}")
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"k and v must have the same leading shape (..., T); got {shapes}")
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q, k, v must have the same batch dimensions (...); got {shapes}")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal attention needs as many queries as keys (same T); got {shapes}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(
            f"q, k, v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype} ({shapes})"
        )


def softmax_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = True,
    scale: float | None = None,
) -> torch.Tensor:
    """Softmax attention, ``o_t = sum_i softmax_i(scale * q_t^T k_i) v_i``.

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T_q, d_k)``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``
        Keys.
    v : torch.Tensor, shape ``(..., T, d_v)``
        Values. ``q``, ``k``, ``v`` share dtype and batch dimensions.
    causal : bool, default True
        If True, position ``t`` attends only to ``i <= t`` (requires ``T_q == T``).
    scale : float or None, default None
        Multiplier of the scores. ``None`` means 1, following the seed, which omits the
        ``1/sqrt(d_k)`` that libraries (and Vaswani et al.) use by default; pass
        ``scale=d_k ** -0.5`` to get theirs.

    Returns
    -------
    torch.Tensor, shape ``(..., T_q, d_v)``

    Raises
    ------
    ValueError
        On mismatched shapes or dtypes (the message names the shapes).

    Notes
    -----
    Numerically stable: masked scores are set to ``-inf`` and :func:`torch.softmax` subtracts
    the row maximum. Under the causal mask every row keeps its diagonal, so no row is empty.

    References
    ----------
    Seed §2. Vaswani et al. (2017), Attention is all you need.
    """
    _check_qkv(q, k, v, causal)
    weights = _softmax_weights(q, k, causal, scale)  # (..., T_q, T)
    return weights @ v  # (..., T_q, d_v)


def _softmax_weights(q, k, causal: bool, scale: float | None) -> torch.Tensor:
    """Row-wise softmax of the (masked, scaled) scores; no input checks."""
    scale = 1.0 if scale is None else float(scale)
    scores = scale * (q @ k.transpose(-2, -1))  # (..., T_q, T)
    if causal:
        T = k.shape[-2]
        scores = scores.masked_fill(~causal_mask(T, device=scores.device), float("-inf"))
    return torch.softmax(scores, dim=-1)  # (..., T_q, T)


def softmax_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    causal: bool = True,
    scale: float | None = None,
) -> torch.Tensor:
    """The attention weights ``w_{t,i} = exp(s_{t,i}) / sum_{j<=t} exp(s_{t,j})``, ``s = scale q_t^T k_i``.

    These are the weights :func:`softmax_attention` averages the values with; masked entries
    (``i > t`` when ``causal``) are exactly zero.

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T_q, d_k)``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``
        Keys, same dtype and batch dimensions as ``q``.
    causal : bool, default True
        If True, row ``t`` has weight only on ``i <= t`` (requires ``T_q == T``).
    scale : float or None, default None
        Multiplier of the scores; ``None`` means 1 (the seed's convention).

    Returns
    -------
    torch.Tensor, shape ``(..., T_q, T)``
        Nonnegative; each row sums to one up to rounding.

    Raises
    ------
    ValueError
        On mismatched shapes or dtypes.

    References
    ----------
    Seed §2 (the softmax: exponentiate, divide by the total).
    """
    _check_qkv(q, k, k, causal)  # k stands in for v: only q-k compatibility is checked
    return _softmax_weights(q, k, causal, scale)


def _linear_attention_parallel(q, k, v, causal: bool) -> torch.Tensor:
    """``(Q K^T ∘ M) V``: the quadratic form."""
    scores = q @ k.transpose(-2, -1)  # (..., T_q, T)
    if causal:
        scores = scores.tril_()  # the causal mask M: zero out i > t (in place, no (T, T) mask built)
    return scores @ v  # (..., T_q, d_v)


def _linear_attention_recurrent(q, k, v) -> torch.Tensor:
    """Reference loop: ``S_t = S_{t-1} + v_t k_t^T``, ``o_t = S_t q_t`` with ``S`` as ``(d_v, d_k)``."""
    *batch, T, d_k = k.shape
    d_v = v.shape[-1]
    S = q.new_zeros(*batch, d_v, d_k)  # (..., d_v, d_k)
    outputs = []
    for t in range(T):
        S = S + torch.einsum("...v,...k->...vk", v[..., t, :], k[..., t, :])  # write v_t k_t^T
        outputs.append(torch.einsum("...vk,...k->...v", S, q[..., t, :]))  # read S_t q_t
    if not outputs:
        return q.new_zeros(*batch, 0, d_v)
    return torch.stack(outputs, dim=-2)  # (..., T, d_v)


def _linear_attention_chunked(q, k, v, chunk_size: int) -> torch.Tensor:
    """Intra-chunk causal ``(Q K^T ∘ M) V`` plus inter-chunk ``Q S^T`` from the carried state."""
    *batch, T, d_k = k.shape
    d_v = v.shape[-1]
    S = q.new_zeros(*batch, d_v, d_k)  # state of all earlier chunks, (..., d_v, d_k)
    mask = causal_mask(min(chunk_size, T), device=q.device)  # (C, C)
    outputs = []
    for start in range(0, T, chunk_size):
        stop = min(start + chunk_size, T)
        c = stop - start
        qc, kc, vc = q[..., start:stop, :], k[..., start:stop, :], v[..., start:stop, :]  # (..., c, d)
        intra = ((qc @ kc.transpose(-2, -1)) * mask[:c, :c]) @ vc  # (..., c, d_v)
        inter = torch.einsum("...ck,...vk->...cv", qc, S)  # S_prev q_t for each t, (..., c, d_v)
        outputs.append(intra + inter)
        S = S + torch.einsum("...cv,...ck->...vk", vc, kc)  # add this chunk's V_c^T K_c
    if not outputs:
        return q.new_zeros(*batch, 0, d_v)
    return torch.cat(outputs, dim=-2)  # (..., T, d_v)


def linear_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    form: str = "parallel",
    chunk_size: int = 64,
    causal: bool = True,
) -> torch.Tensor:
    """Unnormalised linear attention, ``o_t = S_t q_t`` with ``S_t = sum_{i<=t} v_i k_i^T``.

    Equivalently ``o_t = sum_{i<=t} v_i (k_i^T q_t)``: softmax attention with ``exp`` replaced by
    the identity and no normaliser (seed §3). There is no feature map and no ``1/sqrt(d_k)``.

    Parameters
    ----------
    q : torch.Tensor, shape ``(..., T, d_k)``
        Queries.
    k : torch.Tensor, shape ``(..., T, d_k)``
        Keys.
    v : torch.Tensor, shape ``(..., T, d_v)``
        Values. ``q``, ``k``, ``v`` share dtype and batch dimensions.
    form : {"parallel", "recurrent", "chunked"}, default "parallel"
        ``"parallel"``: ``(Q K^T ∘ M) V``, memory ``O(T^2)``.
        ``"recurrent"``: loop over ``t`` carrying ``S_t`` of shape ``(..., d_v, d_k)``; the
        readable reference.
        ``"chunked"``: within each chunk of ``chunk_size`` positions the causal-masked
        ``(Q_c K_c^T) V_c``, plus ``Q_c`` read against the state of all earlier chunks, which is
        then updated by ``V_c^T K_c``. ``T`` need not be a multiple of ``chunk_size``.
    chunk_size : int, default 64
        Chunk length for ``form="chunked"`` (must be >= 1 whatever the form).
    causal : bool, default True
        If False, every query reads the full state ``S_T`` (only ``form="parallel"``; the
        query count ``T_q`` may then differ from ``T``).

    Returns
    -------
    torch.Tensor, shape ``(..., T, d_v)``
        The three forms agree up to rounding.

    Raises
    ------
    ValueError
        For an unknown ``form`` (the message lists the allowed ones), ``chunk_size < 1``,
        ``causal=False`` with a non-parallel form, or mismatched shapes/dtypes (named).

    References
    ----------
    Seed §3 ("Removing the softmax"). Katharopoulos et al. (2020), Transformers are RNNs, §3.2
    (without the feature map and normaliser). Chunkwise form as in Yang et al. (2024), Gated
    linear attention transformers with hardware-efficient training, §2.
    """
    if form not in LINEAR_ATTENTION_FORMS:
        raise ValueError(f"unknown form {form!r}; expected one of {LINEAR_ATTENTION_FORMS}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1; got {chunk_size!r}")
    if not causal and form != "parallel":
        raise ValueError(
            f"causal=False is only supported for form='parallel'; got form={form!r} "
            "(the recurrent and chunked forms are causal by construction)"
        )
    _check_qkv(q, k, v, causal)
    chunk_size = int(chunk_size)
    if form == "parallel":
        return _linear_attention_parallel(q, k, v, causal)
    if form == "recurrent":
        return _linear_attention_recurrent(q, k, v)
    return _linear_attention_chunked(q, k, v, chunk_size)


# --------------------------------------------------------------------------- agreement of the forms

#: Unit roundoff of IEEE float64, ``2**-53``.
FLOAT64_UNIT_ROUNDOFF = 2.0**-53


def gamma(n: int, u: float = FLOAT64_UNIT_ROUNDOFF) -> float:
    """Higham's constant ``gamma_n = n u / (1 - n u)``.

    A sum of ``n`` floating-point terms (or a product of ``n`` factors), evaluated in *any* order,
    has relative forward error at most ``gamma_n`` measured against the sum of the terms' absolute
    values (Higham 2002, Lemma 3.1 and §3.1).

    Parameters
    ----------
    n : int
        Number of rounded operations along one term's path (``n >= 0``).
    u : float, default ``2**-53``
        Unit roundoff of the arithmetic (float64 by default; ``2**-24`` for float32).

    Returns
    -------
    float
        ``n u / (1 - n u)``.

    Raises
    ------
    ValueError
        If ``n < 0`` or ``n u >= 1`` (the bound is then void).

    References
    ----------
    Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0; got {n}")
    if n * u >= 1:
        raise ValueError(f"n u = {n * u} >= 1: the bound gamma_n is void")
    return n * u / (1 - n * u)


def _sample_qkv(T: int, d_k: int, d_v: int, data: str, generator: torch.Generator, dtype, device):
    """Random ``q, k, v`` of shape ``(T, d)``: standard normal, or integers in ``[-3, 3]``."""
    if data == "gaussian":
        return tuple(torch.randn(T, d, generator=generator, dtype=dtype).to(device) for d in (d_k, d_k, d_v))
    if data == "integer":
        return tuple(
            torch.randint(-3, 4, (T, d), generator=generator).to(dtype=dtype, device=device) for d in (d_k, d_k, d_v)
        )
    raise ValueError(f"unknown data {data!r}; expected 'gaussian' or 'integer'")


def linear_attention_agreement(
    T_values,
    chunk_sizes,
    d_k: int = 64,
    d_v: int = 64,
    *,
    seed: int = 0,
    data: str = "gaussian",
    dtype: torch.dtype = torch.float64,
    device: str | torch.device = "cpu",
):
    """Compare the recurrent and chunked forms of causal linear attention with the parallel form.

    For each ``T`` one random sequence is drawn and all forms are run on it. In exact arithmetic
    they are the same sum ``o_t = sum_{i<=t} sum_m v_i k_{i,m} q_{t,m}`` of ``N = t d_k`` products,
    only added in different orders, so in floating point two forms differ by at most
    ``2 gamma_{N+2}`` times the same sum taken over absolute values,
    ``A_t = sum_{i<=t} |v_i| (|k_i|^T |q_t|)`` (each product has two rounded multiplications
    and at most ``N`` rounded additions on its path; see :func:`gamma`). With ``data="integer"``
    every product and partial sum is a small integer, exactly representable, so the forms must
    agree exactly.

    Parameters
    ----------
    T_values : iterable of int
        Sequence lengths (each ``>= 1``).
    chunk_sizes : iterable of int
        Chunk lengths for ``form="chunked"`` (each ``>= 1``; need not divide ``T``).
    d_k, d_v : int, default 64
        Key and value dimensions.
    seed : int, default 0
        Seed of the ``torch.Generator`` that draws the sequences (one draw per ``T``, in order).
    data : {"gaussian", "integer"}, default "gaussian"
        Standard normal entries, or integers uniform in ``[-3, 3]``.
    dtype : torch.dtype, default float64
    device : str or torch.device, default "cpu"

    Returns
    -------
    pandas.DataFrame
        One row per ``(T, form, chunk_size)`` with columns ``T``, ``form`` (``"recurrent"`` or
        ``"chunked"``), ``chunk_size`` (0 for the recurrent form), ``max_abs_diff``
        (``max |o - o_parallel|``), ``output_scale`` (``max |o_parallel|``), ``rel_diff``
        (``max_abs_diff / output_scale``), ``diff_over_abs_sum`` (``max_{t,j} |o - o_par|_{tj} /
        A_{tj}``) and ``bound`` (``2 gamma_{T d_k + 2}`` for ``dtype``'s unit roundoff), so
        ``diff_over_abs_sum <= bound`` is the guaranteed agreement.

    Raises
    ------
    ValueError
        For an unknown ``data``, a ``T`` or chunk size below 1, or a non-floating ``dtype``.

    References
    ----------
    Seed §3 (recurrence ``S_t = S_{t-1} + v_t k_t^T``); Katharopoulos et al. (2020) §3.4;
    Higham (2002) §3.1 for the rounding bound.
    """
    import pandas as pd

    if not dtype.is_floating_point:
        raise ValueError(f"dtype must be floating point; got {dtype}")
    T_values, chunk_sizes = [int(T) for T in T_values], [int(c) for c in chunk_sizes]
    if any(T < 1 for T in T_values) or any(c < 1 for c in chunk_sizes):
        raise ValueError(f"T values and chunk sizes must be >= 1; got {T_values}, {chunk_sizes}")
    u = torch.finfo(dtype).eps / 2
    g = torch.Generator().manual_seed(seed)
    rows = []
    for T in T_values:
        q, k, v = _sample_qkv(T, d_k, d_v, data, g, dtype, device)  # (T, d_k), (T, d_k), (T, d_v)
        ref = linear_attention(q, k, v, form="parallel")  # (T, d_v)
        abs_sum = linear_attention(q.abs(), k.abs(), v.abs(), form="parallel")  # A, (T, d_v)
        runs = [("recurrent", 0, linear_attention(q, k, v, form="recurrent"))]
        runs += [("chunked", c, linear_attention(q, k, v, form="chunked", chunk_size=c)) for c in chunk_sizes]
        scale = float(ref.abs().max())
        for form, c, out in runs:
            diff = (out - ref).abs()  # (T, d_v)
            ratio = torch.where(abs_sum > 0, diff / abs_sum.clamp_min(torch.finfo(dtype).tiny), diff)
            rows.append(
                {
                    "T": T,
                    "form": form,
                    "chunk_size": c,
                    "max_abs_diff": float(diff.max()),
                    "output_scale": scale,
                    "rel_diff": float(diff.max()) / scale if scale > 0 else float(diff.max()),
                    "diff_over_abs_sum": float(ratio.max()),
                    "bound": 2 * gamma(T * d_k + 2, u),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- one vector, three jobs


def _check_square_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (..., T, d); got q {tuple(q.shape)}, k {tuple(k.shape)}")
    return q @ k.transpose(-2, -1)  # (..., T, T)


def self_top_rate(q: torch.Tensor, k: torch.Tensor) -> float:
    """Fraction of positions whose own key scores at least as high as every other key.

    Position ``t`` counts when ``q_t^T k_t >= q_t^T k_i`` for all ``i`` (non-causal: all ``T``
    keys compete; ties count for ``t``). When the query and key are the same unit vector
    (``q = k = x``) the rate is 1 by the Cauchy-Schwarz inequality: a token finds itself, or an
    exact copy, first (seed §1).

    Parameters
    ----------
    q, k : torch.Tensor, shape ``(..., T, d)``
        Queries and keys, same shape and dtype.

    Returns
    -------
    float
        In ``[0, 1]``, averaged over positions and leading dimensions.

    Raises
    ------
    ValueError
        If ``q`` and ``k`` do not have the same shape ``(..., T, d)``.

    References
    ----------
    Seed §1 ("a token scores highest against tokens that resemble itself").
    """
    scores = _check_square_scores(q, k)  # (..., T, T)
    own = scores.diagonal(dim1=-2, dim2=-1)  # (..., T)
    return float((own >= scores.amax(dim=-1)).to(torch.float64).mean())


def score_asymmetry(q: torch.Tensor, k: torch.Tensor) -> float:
    """Relative asymmetry ``||A - A^T||_F / ||A||_F`` of the score matrix ``A = Q K^T``.

    Zero when queries and keys are the same vectors: then ``x_t^T x_i = x_i^T x_t``, and if
    ``t`` finds ``i`` then ``i`` finds ``t`` equally well (seed §1). Separate query and key maps
    make it order one.

    Parameters
    ----------
    q, k : torch.Tensor, shape ``(..., T, d)``
        Queries and keys, same shape and dtype.

    Returns
    -------
    float
        ``0`` for a symmetric score matrix (up to rounding), at most 2.

    Raises
    ------
    ValueError
        If ``q`` and ``k`` do not have the same shape ``(..., T, d)``.

    References
    ----------
    Seed §1 ("the score is symmetric").
    """
    A = _check_square_scores(q, k)  # (..., T, T)
    norm = float(torch.linalg.matrix_norm(A).square().sum().sqrt())
    if norm == 0:
        return 0.0
    return float(torch.linalg.matrix_norm(A - A.transpose(-2, -1)).square().sum().sqrt()) / norm


# --------------------------------------------------------------------------- decoding one token at a time


class _Decoder:
    """Shared bookkeeping of the step-by-step decoders."""

    def __init__(self, d_k: int, d_v: int, dtype: torch.dtype, device) -> None:
        for name, d in (("d_k", d_k), ("d_v", d_v)):
            if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
                raise ValueError(f"{name} must be a positive integer; got {d!r}")
        if not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point dtype; got {dtype}")
        self.d_k, self.d_v, self.dtype = int(d_k), int(d_v), dtype
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        self.reset()

    def reset(self):
        """Forget every token seen; the decoder is as new."""
        self.t = 0  # tokens consumed so far
        self.batch_shape: tuple[int, ...] | None = None
        self.last_step_macs = 0  # multiply-accumulates of the latest step, per sequence
        self.total_macs = 0  # multiply-accumulates since reset, per sequence
        self._reset_state()
        return self

    def _check_token(self, q, k, v) -> None:
        shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        if q.ndim < 1 or q.shape[-1] != self.d_k or k.shape[-1] != self.d_k or v.shape[-1] != self.d_v:
            raise ValueError(f"expected q, k of shape (..., {self.d_k}) and v of shape (..., {self.d_v}); got {shapes}")
        if not (q.shape[:-1] == k.shape[:-1] == v.shape[:-1]):
            raise ValueError(f"q, k, v must share their leading (batch) shape; got {shapes}")
        if self.batch_shape is not None and q.shape[:-1] != self.batch_shape:
            raise ValueError(f"batch shape changed from {self.batch_shape} to {tuple(q.shape[:-1])}; call reset()")
        if not (q.dtype == k.dtype == v.dtype == self.dtype):
            raise ValueError(f"q, k, v must have the decoder's dtype {self.dtype}; got {q.dtype}, {k.dtype}, {v.dtype}")

    def step(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Consume token ``t``'s query, key and value; return its output ``o_t``.

        Parameters
        ----------
        q, k : torch.Tensor, shape ``(..., d_k)``
        v : torch.Tensor, shape ``(..., d_v)``
            One token (any leading batch or head dimensions, fixed between resets), in the
            decoder's dtype and on its device.

        Returns
        -------
        torch.Tensor, shape ``(..., d_v)``

        Raises
        ------
        ValueError
            On wrong trailing dimensions, mismatched or changed batch shapes, or a wrong dtype.
        """
        self._check_token(q, k, v)
        if self.batch_shape is None:
            self.batch_shape = tuple(q.shape[:-1])
            self._allocate()
        out = self._step(q, k, v)
        self.t += 1
        self.total_macs += self.last_step_macs
        return out

    @property
    def numbers_held(self) -> int:
        """How many numbers the decoder must keep to produce the next output (all batch entries)."""
        raise NotImplementedError


class KVCacheDecoder(_Decoder):
    """Causal softmax attention, one token at a time, with a key-value cache.

    Step ``t`` (counting from 1) appends ``(k_t, v_t)`` to the cache and returns
    ``o_t = sum_{i<=t} softmax_i(scale q_t^T k_i) v_i``. The query sits inside every exponential
    and in the normaliser, so nothing can be summed ahead of time: every pair is kept (seed §2).

    Parameters
    ----------
    d_k, d_v : int
        Key and value dimensions.
    scale : float or None, default None
        Multiplier of the scores; ``None`` is 1, as in the seed.
    dtype : torch.dtype, default float64
    device : str or torch.device, default "cpu"
    capacity : int, default 64
        Initial number of cache slots; the buffers double when full (amortised O(1) appends), as
        a serving system that preallocates would.

    Attributes
    ----------
    t : int
        Tokens consumed.
    last_step_macs, total_macs : int
        Multiply-accumulates per sequence in the latest step and since reset: ``t d_k`` for the
        scores and ``t d_v`` for the weighted sum of values at step ``t``. The ``O(t)``
        exponentials and divisions are not counted.

    Raises
    ------
    ValueError
        If ``d_k``, ``d_v`` or ``capacity`` is not a positive integer, or ``dtype`` is not floating.

    Examples
    --------
    >>> dec = KVCacheDecoder(4, 3)
    >>> o = dec.step(torch.ones(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64),
    ...              torch.ones(3, dtype=torch.float64))
    >>> dec.numbers_held  # one token: d_k + d_v
    7

    References
    ----------
    Seed §2 ("This store is the key-value cache, and it grows with t"). Vaswani et al. (2017).
    """

    def __init__(self, d_k: int, d_v: int, *, scale: float | None = None, dtype: torch.dtype = torch.float64,
                 device: str | torch.device = "cpu", capacity: int = 64) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 1:
            raise ValueError(f"capacity must be a positive integer; got {capacity!r}")
        self.capacity0 = int(capacity)
        self.scale = 1.0 if scale is None else float(scale)
        super().__init__(d_k, d_v, dtype, device)

    def _reset_state(self) -> None:
        self._K = self._V = None

    def _allocate(self, capacity: int | None = None) -> None:
        cap = self.capacity0 if capacity is None else capacity
        K = torch.empty(*self.batch_shape, cap, self.d_k, dtype=self.dtype, device=self.device)  # (..., cap, d_k)
        V = torch.empty(*self.batch_shape, cap, self.d_v, dtype=self.dtype, device=self.device)  # (..., cap, d_v)
        if self._K is not None:
            K[..., : self.t, :] = self._K[..., : self.t, :]
            V[..., : self.t, :] = self._V[..., : self.t, :]
        self._K, self._V = K, V

    def _step(self, q, k, v):
        t = self.t
        if t == self._K.shape[-2]:
            self._allocate(2 * t)  # full: double the buffers
        self._K[..., t, :] = k
        self._V[..., t, :] = v
        K, V = self._K[..., : t + 1, :], self._V[..., : t + 1, :]  # (..., t+1, d_k), (..., t+1, d_v)
        scores = (K @ q.unsqueeze(-1)).squeeze(-1)  # k_i^T q_t for i <= t, (..., t+1)
        w = torch.softmax(self.scale * scores, dim=-1)  # (..., t+1)
        self.last_step_macs = (t + 1) * (self.d_k + self.d_v)
        return (w.unsqueeze(-2) @ V).squeeze(-2)  # sum_i w_i v_i, (..., d_v)

    @property
    def numbers_held(self) -> int:
        """Entries of the cached keys and values, ``t (d_k + d_v)`` per sequence (not the spare slots)."""
        if self._K is None:
            return 0
        return self._K[..., : self.t, :].numel() + self._V[..., : self.t, :].numel()

    @property
    def numbers_allocated(self) -> int:
        """Entries of the cache buffers including unused slots (at most twice :attr:`numbers_held`)."""
        return 0 if self._K is None else self._K.numel() + self._V.numel()


class LinearAttentionDecoder(_Decoder):
    """Causal linear attention, one token at a time: the recurrent state ``S_t = S_{t-1} + v_t k_t^T``.

    Step ``t`` writes ``v_t k_t^T`` into ``S`` (shape ``(..., d_v, d_k)``) and returns
    ``o_t = S_t q_t``, equal to ``linear_attention(q, k, v)[..., t - 1, :]``. The pair is then
    discarded: the state is all the decoder keeps (seed §3).

    Parameters
    ----------
    d_k, d_v : int
        Key and value dimensions.
    dtype : torch.dtype, default float64
    device : str or torch.device, default "cpu"

    Attributes
    ----------
    t : int
        Tokens consumed.
    S : torch.Tensor or None, shape ``(..., d_v, d_k)``
        The state (``None`` before the first token, whose shape fixes the batch dimensions).
    last_step_macs, total_macs : int
        Multiply-accumulates per sequence: ``d_v d_k`` to write the outer product and ``d_v d_k``
        to read ``S q``, whatever ``t``.

    Raises
    ------
    ValueError
        If ``d_k`` or ``d_v`` is not a positive integer, or ``dtype`` is not floating.

    References
    ----------
    Seed §3 ("S_t is updated by adding one term per step"). Katharopoulos et al. (2020) §3.4;
    Schlag, Irie & Schmidhuber (2021) (fast weights); Kohonen (1972), Anderson (1972)
    (correlation matrix memory).
    """

    def __init__(self, d_k: int, d_v: int, *, dtype: torch.dtype = torch.float64,
                 device: str | torch.device = "cpu") -> None:
        super().__init__(d_k, d_v, dtype, device)

    def _reset_state(self) -> None:
        self.S = None

    def _allocate(self) -> None:
        self.S = torch.zeros(*self.batch_shape, self.d_v, self.d_k, dtype=self.dtype, device=self.device)

    def _step(self, q, k, v):
        self.S += v.unsqueeze(-1) * k.unsqueeze(-2)  # write v_t k_t^T, (..., d_v, d_k)
        self.last_step_macs = 2 * self.d_v * self.d_k
        return (self.S @ q.unsqueeze(-1)).squeeze(-1)  # read S_t q_t, (..., d_v)

    @property
    def numbers_held(self) -> int:
        """Entries of the state, ``d_v d_k`` per sequence, whatever ``t``."""
        return 0 if self.S is None else self.S.numel()


def decode(decoder: _Decoder, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    """Feed a whole sequence through a step decoder, one token at a time, and record its costs.

    Parameters
    ----------
    decoder : KVCacheDecoder or LinearAttentionDecoder
        Used as is (call ``reset()`` first for a fresh start).
    q, k : torch.Tensor, shape ``(..., T, d_k)``
    v : torch.Tensor, shape ``(..., T, d_v)``

    Returns
    -------
    outputs : torch.Tensor, shape ``(..., T, d_v)``
        ``o_1, ..., o_T``.
    record : pandas.DataFrame
        One row per step with columns ``t`` (tokens consumed, 1..T), ``numbers_held`` (after the
        step, all batch entries) and ``step_macs`` (per sequence).

    Raises
    ------
    ValueError
        On shape or dtype mismatches (from :meth:`step`).
    """
    import pandas as pd

    _check_qkv(q, k, v, causal=True)
    outs, rows = [], []
    for t in range(k.shape[-2]):
        outs.append(decoder.step(q[..., t, :], k[..., t, :], v[..., t, :]))
        rows.append({"t": decoder.t, "numbers_held": decoder.numbers_held, "step_macs": decoder.last_step_macs})
    out = torch.stack(outs, dim=-2) if outs else q.new_zeros(*q.shape[:-2], 0, v.shape[-1])
    return out, pd.DataFrame(rows, columns=["t", "numbers_held", "step_macs"])
