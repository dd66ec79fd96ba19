"""Value norms, LayerNorm's distance from the sphere, and a mixture read (claims C11-C14).

Seed 002 (the review of Bricken & Pehlevan 2021) lists these claims of §4 and App. A.3:

* **C12** — attention weights mislead when value norms vary: a token with a small weight but a
  large ``|v|`` can contribute more than one with a large weight. :func:`weight_contribution`
  compares, over many queries, the weight ``w_ij`` with the contribution ``w_ij |v_ij|`` (the
  App. A.3, Fig. 8 analysis): their correlation, and how often the most-attended position is
  not the largest contributor.
* **C11** — LayerNorm stands in for L2 normalisation. :func:`sphere_distance` measures how far
  vectors after LayerNorm are from a sphere (the relative spread of their norms, which L2
  normalisation makes exactly 0) and :func:`beta_spread` what that does to the reading of
  ``beta``: the effective inverse temperature of a pair is ``beta |q| |k| / d``, not one number.
* **C14** — multi-head attention lets SDM output a distribution. :func:`duplicate_key_read`
  shows the one computation the argument implies: a single softmax head whose context holds the
  same key with several values already returns their empirical mixture.

Chapter 37.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from assocmem._checks import as_int, as_real, holds_bool_or_str
from assocmem.sdm.trained._common import real_array
from assocmem.sdm.trained.recall import check_seed

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike
    from collections.abc import Sequence

__all__ = ["weight_contribution", "sphere_distance", "beta_spread", "duplicate_key_read"]


def _arr(x, name: str) -> np.ndarray:
    a = real_array(x, name)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def weight_contribution(weights: ArrayLike, value_norms: ArrayLike) -> dict:
    """Attention weight against weight x value norm over many queries (App. A.3, Fig. 8).

    Parameters
    ----------
    weights, value_norms : array_like or torch.Tensor, shape (..., K)
        Attention weights (each row over the last axis sums to 1) and the L2 norm of the value
        at each position; same shape, at least 2-d.

    Returns
    -------
    dict
        ``pearson`` (correlation of ``w`` and ``w |v|`` over all entries), ``spearman`` (of
        their ranks), ``top_mismatch`` (fraction of rows whose largest weight is not at the
        largest contribution), ``norm_cv`` (coefficient of variation of the value norms) and
        ``entries``.

    Raises
    ------
    ValueError
        If the shapes differ or are below 2-d, an input is not finite, a weight or norm is
        negative, a row's weights do not sum to 1 (tolerance ``1e-6``), or the weights or the
        contributions do not vary at all (all value norms zero, or uniform weights), where a
        correlation is undefined.
    """
    w = _arr(weights, "weights")
    v = _arr(value_norms, "value_norms")
    if w.shape != v.shape or w.ndim < 2 or w.shape[-1] < 2:
        raise ValueError(f"weights and value_norms must share a shape (..., K >= 2); got "
                         f"{w.shape} and {v.shape}")
    if (w < 0).any() or (v < 0).any():
        raise ValueError("weights and value norms must be >= 0")
    if not np.allclose(w.sum(-1), 1.0, atol=1e-6):
        raise ValueError("each row of weights must sum to 1")
    c = w * v
    wf, cf = w.ravel(), c.ravel()
    if not (wf.std() > 0 and cf.std() > 0):
        raise ValueError("the weights or the contributions w |v| do not vary (uniform weights or "
                         "all value norms zero): their correlation is undefined")
    pearson = float(np.corrcoef(wf, cf)[0, 1])
    rank = lambda a: np.argsort(np.argsort(a, kind="stable"), kind="stable")  # noqa: E731
    spearman = float(np.corrcoef(rank(wf), rank(cf))[0, 1])
    w2, c2 = w.reshape(-1, w.shape[-1]), c.reshape(-1, c.shape[-1])
    mismatch = float(np.mean(w2.argmax(-1) != c2.argmax(-1)))
    return dict(pearson=pearson, spearman=spearman, top_mismatch=mismatch,
                norm_cv=float(v.std() / v.mean()),
                entries=int(wf.size))


def sphere_distance(norms: ArrayLike, dim: int) -> dict:
    """How far vectors of ``norms`` are from the sphere of radius ``sqrt(dim)`` (LayerNorm's).

    Parameters
    ----------
    norms : array_like or torch.Tensor
        L2 norms of the vectors after LayerNorm (any shape, at least one entry).
    dim : int
        Their dimension: without gain and bias a LayerNorm output has norm ``sqrt(dim)``
        (up to its ``eps``).

    Returns
    -------
    dict
        Of the relative norms ``rho = |x| / sqrt(dim)``: ``mean``, ``sd``, ``cv`` (sd / mean,
        0 on a sphere of any radius; it does not depend on the norms' scale, also for norms near
        the ends of float64's range, 1e300 or subnormal), ``min`` and ``max``.

    Raises
    ------
    ValueError
        If ``norms`` is empty, not finite or negative, all zero (the CV is undefined), or
        ``dim`` is not a positive integer.
    """
    n = _arr(norms, "norms").ravel()
    dim = as_int(dim, "dim", minimum=1)
    if n.size == 0 or (n < 0).any():
        raise ValueError("norms must be non-empty and >= 0")
    if not n.max() > 0:
        raise ValueError("norms are all zero: the relative spread (CV) is undefined")
    # Scale by a power of two so that the largest norm lies in [0.5, 1): exact, so the statistics
    # are those of the unscaled norms bit for bit, but no square in the SD overflows (norms near
    # 1e200) or underflows (subnormal norms near 1e-320). The CV is scale-free.
    _, e = np.frexp(n.max())
    rho = np.ldexp(n, -int(e)) / np.sqrt(dim)
    mean, sd = rho.mean(), rho.std()
    back = lambda x: float(np.ldexp(x, int(e)))  # noqa: E731
    return dict(mean=back(mean), sd=back(sd), cv=float(sd / mean), min=back(rho.min()), max=back(rho.max()))


def beta_spread(beta: float, query_norms: ArrayLike, key_norms: ArrayLike, dim: int,
                quantiles: Sequence[float] = (0.05, 0.5, 0.95)) -> np.ndarray:
    """Quantiles of the effective inverse temperature ``beta |q| |k| / dim`` over all pairs.

    Parameters
    ----------
    beta : float
        The head's learned ``beta`` (> 0).
    query_norms : array_like, shape (B,)
        Norms of the queries after LayerNorm.
    key_norms : array_like, shape (B, K)
        Norms of the keys each query sees.
    dim : int
        Head dimension (the score is ``beta <q, k> / dim``).
    quantiles : sequence of float in [0, 1], default (0.05, 0.5, 0.95)

    Returns
    -------
    numpy.ndarray
        The quantiles, float64. With L2-normalised vectors scaled to ``sqrt(dim)`` every entry
        equals ``beta``.

    Raises
    ------
    ValueError
        If ``beta`` is not finite and positive, the shapes do not match or are empty (no query
        or no key), a norm is negative or not finite, ``quantiles`` is not a non-empty sequence
        (a bare float is refused) or holds a value outside ``[0, 1]``, or a quantile's value is
        beyond float64's range. Products whose intermediate ``beta |q| |k|`` would overflow or
        underflow are computed in mantissa-exponent form (the quantile, not NaN).
    """
    b = as_real(beta, "beta", minimum=0.0, strict_min=True)
    q = _arr(query_norms, "query_norms")
    k = _arr(key_norms, "key_norms")
    dim = as_int(dim, "dim", minimum=1)
    if q.ndim != 1 or k.ndim != 2 or k.shape[0] != q.shape[0]:
        raise ValueError(f"query_norms must be (B,) and key_norms (B, K); got {q.shape}, {k.shape}")
    if k.size == 0:
        raise ValueError(f"need at least one query and one key; got key_norms of shape {k.shape}")
    if (q < 0).any() or (k < 0).any():
        raise ValueError("norms must be >= 0")
    if isinstance(quantiles, (str, bytes)) or not hasattr(quantiles, "__iter__"):
        raise ValueError(f"quantiles must be a sequence of numbers in [0, 1], e.g. (0.5,); got {quantiles!r}")
    qs = np.asarray([as_real(x, "quantile", minimum=0.0, maximum=1.0) for x in quantiles], dtype=float)
    if qs.ndim != 1 or qs.size == 0:
        raise ValueError(f"quantiles must be a non-empty sequence of numbers in [0, 1]; got {quantiles!r}")
    with np.errstate(over="ignore", under="ignore"):
        eff = b * q[:, None] * k / dim
    lost = (eff < np.finfo(np.float64).tiny) & (q[:, None] > 0) & (k > 0)  # an intermediate underflowed
    if np.isfinite(eff).all() and not lost.any():
        return np.quantile(eff, qs)
    return _product_quantiles(b, q, k, dim, qs)


def _product_quantiles(b: float, q: np.ndarray, k: np.ndarray, dim: int, qs: np.ndarray) -> np.ndarray:
    """Quantiles (numpy's linear rule) of ``b q_i k_ij / dim`` computed without intermediate overflow.

    Each product is held as mantissa and exponent (``np.frexp``), ordered by its base-2 logarithm,
    and only the two order statistics each quantile interpolates are formed as floats.

    Raises
    ------
    ValueError
        If a quantile's value itself lies beyond float64's range.
    """
    mb, eb = np.frexp(b)
    mq, eq = np.frexp(q)
    mk, ek = np.frexp(k)
    mant = (mb * mq[:, None] * mk / dim).ravel()
    expo = (eb + eq[:, None] + ek).ravel()
    with np.errstate(divide="ignore"):
        order = np.argsort(np.log2(mant) + expo, kind="stable")  # zeros first (-inf)
    last = mant.size - 1
    out = []
    for p in qs:
        h = last * p
        lo = int(np.floor(h))
        hi, t = min(lo + 1, last), h - lo
        with np.errstate(over="ignore"):
            a = np.ldexp(mant[order[lo]], expo[order[lo]])
            c = np.ldexp(mant[order[hi]], expo[order[hi]])
        if not (np.isfinite(a) and np.isfinite(c)):
            raise ValueError(f"the effective inverse temperatures beta |q| |k| / dim overflow float64 at the "
                             f"{p:g} quantile (beta = {b:g}, largest norms {q.max():.3g} and {k.max():.3g})")
        out.append(a + (c - a) * t)
    return np.asarray(out, dtype=np.float64)


def duplicate_key_read(counts: Sequence[int], beta: float, n: int = 64,
                       seed: int = 0) -> np.ndarray:
    """One softmax head reading a context in which one key is stored with several values.

    The context holds the key ``A`` (a random unit vector in ``R^n``) ``counts[j]`` times with
    value ``j`` (one-hot), plus nothing else; the query is ``A``. Every copy of ``A`` gets the same
    score, so the read returns ``counts / sum(counts)`` whatever ``beta`` is: a single head
    already outputs the empirical conditional distribution of the values, the "probabilistic
    output" seed 002's claim C14 credits to multi-head attention.

    Parameters
    ----------
    counts : sequence of int
        How often each value follows ``A`` (``>= 0``, at least one positive).
    beta : float
        Inverse temperature (finite, ``>= 0``).
    n : int
        Key dimension.
    seed : int
        Seed of the random key, in ``[0, 2**63 - 1)``.

    Returns
    -------
    numpy.ndarray, shape (len(counts),)
        The read, float64 (the weight on each value).

    Raises
    ------
    ValueError
        If ``counts`` is empty, holds a negative or non-integer count or sums to 0, or ``beta``,
        ``n`` or ``seed`` is out of range.
    """
    cs = np.asarray(counts)
    if holds_bool_or_str(counts) or cs.dtype == bool or cs.ndim != 1 or cs.size == 0 or not np.issubdtype(cs.dtype, np.integer) or (cs < 0).any() \
            or cs.sum() == 0:
        raise ValueError(f"counts must be a 1-d sequence of integers >= 0 with a positive sum; "
                         f"got {counts!r}")
    beta = as_real(beta, "beta", minimum=0.0)
    n = as_int(n, "n", minimum=1)
    g = torch.Generator().manual_seed(check_seed(seed))
    a = torch.randn(n, generator=g, dtype=torch.float64)
    a = a / a.norm()
    keys = a.repeat(int(cs.sum()), 1)
    values = torch.nn.functional.one_hot(torch.as_tensor(np.repeat(np.arange(cs.size), cs)),
                                         cs.size).double()
    w = torch.softmax(beta * (keys @ a), dim=0)
    return (w @ values).numpy()
