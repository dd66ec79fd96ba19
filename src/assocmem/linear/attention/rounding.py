"""How closely the forms of linear attention agree in floating point: Higham's ``gamma_n`` bound.

The parallel, recurrent and chunked forms of :func:`~assocmem.linear.attention.linear_forms.linear_attention`
add the same ``t d_k`` products in different orders, so in floating point they differ by at most
``2 gamma_{N+2}`` times the same sum over absolute values, with ``gamma_n = n u / (1 - n u)``
(Higham 2002, Lemma 3.1 and §3.1; :func:`gamma`). :func:`linear_attention_agreement` runs the forms
on random sequences and reports their differences against that bound (and exact agreement on
small-integer data). Chapter 01 ("From attention to a matrix") checks the equality of the
forms of seed §3 with it.

References
----------
Seed 000 ("How much can a matrix remember?"), §3.
Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1 (rounding bounds).
Katharopoulos, A., Vyas, A., Pappas, N., & Fleuret, F. (2020). Transformers are RNNs: fast
autoregressive transformers with linear attention. ICML (§3.4, the recurrence).
"""

from __future__ import annotations

import torch

from assocmem._checks import as_int, as_real, positive_int
from assocmem.dtypes import check_float_dtype, resolve_dtype
from assocmem.linear.attention.linear_forms import linear_attention
from assocmem.devices import resolve_device

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from collections.abc import Iterable

__all__ = [
    "FLOAT64_UNIT_ROUNDOFF",
    "gamma",
    "linear_attention_agreement",
]

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
        If ``n`` is not an integer (a boolean or ``2.5`` is refused) or ``n < 0``, ``u`` is not
        a finite real number ``>= 0``, or ``n u >= 1`` (the bound is then void).

    References
    ----------
    Higham, N. J. (2002). Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1.
    """
    n = as_int(n, "n")
    if n < 0:
        raise ValueError(f"n must be >= 0; got {n}")
    u = as_real(u, "u", minimum=0.0)
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
    T_values: Iterable[int],
    chunk_sizes: Iterable[int],
    d_k: int = 64,
    d_v: int = 64,
    *,
    seed: int = 0,
    data: str = "gaussian",
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> pd.DataFrame:
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
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        float32 or float64 (float16 and bfloat16 are refused).
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).

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
        For an unknown ``data``, a ``T`` or chunk size that is not an integer ``>= 1``, ``d_k``
        or ``d_v`` not a positive integer, a non-integer ``seed``, or a ``dtype`` other than
        float32 or float64 (float16 and bfloat16 are refused, naming the supported dtypes).

    References
    ----------
    Seed §3 (recurrence ``S_t = S_{t-1} + v_t k_t^T``); Katharopoulos et al. (2020) §3.4;
    Higham (2002) §3.1 for the rounding bound.
    """
    dtype = resolve_dtype(dtype)
    device = resolve_device(device, dtype=dtype)
    import pandas as pd

    if isinstance(dtype, torch.dtype) and not dtype.is_floating_point:
        raise ValueError(f"dtype must be floating point (torch.float32 or torch.float64); got {dtype}")
    dtype = check_float_dtype(dtype)
    if data not in ("gaussian", "integer"):
        raise ValueError(f"unknown data {data!r}; expected 'gaussian' or 'integer'")
    T_values = [as_int(T, "T_values entry") for T in T_values]
    chunk_sizes = [as_int(c, "chunk_sizes entry") for c in chunk_sizes]
    if any(T < 1 for T in T_values) or any(c < 1 for c in chunk_sizes):
        raise ValueError(f"T values and chunk sizes must be >= 1; got {T_values}, {chunk_sizes}")
    d_k, d_v = positive_int("d_k", d_k), positive_int("d_v", d_v)
    u = torch.finfo(dtype).eps / 2
    g = torch.Generator().manual_seed(as_int(seed, "seed"))
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
