"""Margins under noisy queries: perturbed keys, the mixed Gram matrix, the query-Lipschitz constant.

The noisy-margin diagnostic of seed 001 ("MLPs are Hebbians", App. A.4.2; theory in App. B.10.1,
eqs. 68-69) reads a perturbed query ``k~_i = k_i + eps u_i``, with ``u_i`` uniform on the unit
sphere and the query not renormalised (:func:`perturb_queries`), against the stored keys through
the mixed Gram matrix ``<phi(k_t), phi(k~_i)>``: :func:`noisy_fact_margins` returns the
kernel-Hebbian margins ``gamma_i(k~_i)`` and :func:`query_lipschitz` the empirical
query-Lipschitz constant of the kernel (eq. 69) that enters the noisy bound of eq. 74
(:func:`~assocmem.mlps.margins.bounds.noisy_margin_bound`). Chapter 12 (How margins scale) uses
them in its noisy-query sweep (:mod:`assocmem.mlps.margin_sweeps`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from assocmem._checks import seed_int
from assocmem.dtypes import cast_checked
from assocmem.mlps.margins._common import _as_f64, _facts_parts, _is_array, _pos_number
from assocmem.mlps.margins.kernel_margins import fact_margins, kernel_gram

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, KernelModel
    from assocmem.mlps.facts import FactSet

__all__ = [
    "perturb_queries",
    "noisy_fact_margins",
    "query_lipschitz",
]


def perturb_queries(keys: ArrayLike, eps: float, *, seed: int = 0,
                    directions: ArrayLike | None = None) -> torch.Tensor:
    """Noisy keys ``k~_i = k_i + eps u_i`` with ``u_i`` uniform on the unit sphere.

    Parameters
    ----------
    keys : array-like, shape ``(F, d)``
        Stored keys, finite real numbers (returned dtype/device follow a float32 / float64 tensor
        input; float64 otherwise; float16 / bfloat16 are refused).
    eps : float
        Noise radius, a finite real ``>= 0`` (App. A.4.2 sweeps 0.01 to 2); booleans and strings
        are refused.
    seed : int, default 0
        Seed of the directions (drawn on the CPU in float64, so a seed gives the same noise on
        every device).
    directions : array-like, shape ``(F, d)``, optional
        Use these directions instead of random ones; each row is normalised to the unit sphere.

    Returns
    -------
    torch.Tensor, shape ``(F, d)``
        Not renormalised (as in App. A.4.2); ``||k~_i - k_i|| = eps``.

    Raises
    ------
    ValueError
        Keys that are not a finite real 2-D array (float16 / bfloat16 refused), an ``eps`` that is
        negative, non-finite or not a real number, a non-integer seed, directions of the wrong
        shape, non-finite or with a zero row, or noisy keys that overflow the keys' dtype.

    References
    ----------
    Seed 001, App. A.4.2; App. B.10.1, eq. 68.
    """
    k64 = _as_f64(keys, "keys", 2)
    k = keys if isinstance(keys, torch.Tensor) else k64
    e = _pos_number("eps", eps, strict=False)
    if directions is None:
        gen = torch.Generator(device="cpu").manual_seed(seed_int(seed))
        u = torch.randn(k.shape, generator=gen, dtype=torch.float64)  # (F, d)
    else:
        u = _as_f64(directions, "directions", 2)
        if u.shape != k.shape:
            raise ValueError(f"directions must have shape {tuple(k.shape)}; got {tuple(u.shape)}")
    norms = torch.linalg.vector_norm(u, dim=-1, keepdim=True)
    if (norms == 0).any():
        raise ValueError("directions must have non-zero rows")
    u = (u / norms).to(device=k.device)
    out = k64.to(k.device) + e * u
    return cast_checked(out, k.dtype, "the noisy keys") if k.is_floating_point() else out


def noisy_fact_margins(model: KernelModel, facts: FactSet, eps: float, *, seed: int = 0,
                       directions: ArrayLike | None = None,
                       codes: ArrayLike | None = None) -> torch.Tensor:
    """Per-fact kernel-Hebbian margins under noisy queries (the mixed Gram of App. A.4.2).

    Reads ``y_i = sum_t <phi(k_t), phi(k~_i)> c_f(t)`` with ``k~_i = k_i + eps u_i`` (stored keys on
    the memory side, noisy keys on the query side) and returns ``gamma_i(k~_i)``.

    Parameters
    ----------
    model : object
        Exposes ``features`` or ``kernel`` (see :func:`kernel_gram`).
    facts : FactSet
    eps : float
        Noise radius ``>= 0``; ``eps = 0`` gives :func:`fact_margins`.
    seed : int, default 0
        Seed of the noise directions.
    directions : array-like, shape ``(F, d)``, optional
        Fixed directions (normalised), e.g. to reuse one draw across an ``eps`` sweep.
    codes : array-like, shape ``(V, d)``, optional
        Code table (default the values).

    Returns
    -------
    torch.Tensor, shape ``(F,)``, float64

    Raises
    ------
    ValueError
        As :func:`perturb_queries` and :func:`fact_margins`; a Gram-matrix source (the mixed Gram
        needs the model); ``facts`` that is not a fact set.

    References
    ----------
    Seed 001, App. A.4.2 (noisy-margin diagnostic); App. B.10.1 (``gamma_min(k~)``).
    """
    if _is_array(model):
        raise ValueError(
            "noisy margins need a model exposing features or kernel, not a Gram matrix"
        )
    _facts_parts(facts)
    q = perturb_queries(facts.keys, eps, seed=seed, directions=directions)
    return fact_margins(model, facts, codes=codes, queries=q)


def query_lipschitz(model: KernelModel, facts: FactSet, queries: ArrayLike) -> float:
    """Empirical query-Lipschitz constant of a kernel on stored keys (eq. 69).

    ``max_{t, i} |K(k_t, q_i) - K(k_t, k_i)| / ||q_i - k_i||`` over the facts whose query moved.

    Parameters
    ----------
    model : object
        Exposes ``features`` or ``kernel``.
    facts : FactSet
    queries : array-like, shape ``(F, d)``
        Perturbed queries ``q_i`` (e.g. from :func:`perturb_queries`).

    Returns
    -------
    float
        ``0.0`` when no query moved.

    Raises
    ------
    ValueError
        Queries of the wrong shape, not finite real numbers (float16 / bfloat16 refused) or
        overflowing the keys' dtype, a malformed fact set, or a source without features/kernel.

    References
    ----------
    Seed 001, App. B.10.1, eq. 69 (``L_k``) and Corollary B.63 (``L_bil``).
    """
    keys, _, _ = _facts_parts(facts)
    q = _as_f64(queries, "queries", 2).to(keys.device)
    if q.shape != keys.shape:
        raise ValueError(f"queries must have shape {tuple(keys.shape)}; got {tuple(q.shape)}")
    clean = kernel_gram(model, facts.keys)  # (F, F)
    noisy = kernel_gram(model, facts.keys, cast_checked(q, facts.keys.dtype, "queries"))  # (F, F)
    dist = torch.linalg.vector_norm(q - keys, dim=-1)  # (F,)
    moved = dist > 0
    if not moved.any():
        return 0.0
    ratio = (noisy - clean).abs()[:, moved] / dist[moved][None, :]
    return float(ratio.max())
