"""Private helpers shared by :mod:`assocmem.sdm.read` and :mod:`assocmem.sdm.kernels`.

Input validation (:func:`_as_int`, :func:`_as_tensor`, :func:`_binary`), seeded generators
(:func:`_generator`), the majority threshold on a tensor (:func:`_majority`, the body of the
public :func:`assocmem.sdm.read.majority`) and the last step of every SDM read
(:func:`_finish_read`: normalise, threshold, handle queries that activate no neuron). Nothing here
is public API; both modules import these names so that the rules live in one place.

References
----------
Bricken & Pehlevan (2021), "Attention Approximates Sparse Distributed Memory", Eq. 1 (the read
and its majority threshold ``g``); Kanerva (1988), *Sparse Distributed Memory*, Ch. 7.
"""

from __future__ import annotations

import torch

from assocmem._checks import as_int as _as_int


def _as_tensor(x, name: str) -> torch.Tensor:
    """``x`` itself if it is a tensor, else :func:`torch.as_tensor` of it (a ValueError if impossible)."""
    if isinstance(x, torch.Tensor):
        return x
    try:
        return torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"{name} must be a tensor or array-like, got {type(x).__name__}") from err


def _binary(x, name: str, min_ndim: int = 1) -> torch.Tensor:
    """``x`` as a tensor after checking that every entry is 0 or 1 (bool becomes uint8)."""
    x = _as_tensor(x, name)
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(x.shape)}")
    if x.dtype == torch.bool:
        return x.to(torch.uint8)
    if x.is_complex():
        raise ValueError(f"{name} must be binary (entries 0 or 1), got a complex tensor")
    if x.numel() and not bool(((x == 0) | (x == 1)).all()):
        bad = x[~((x == 0) | (x == 1))].flatten()[0].item()
        raise ValueError(f"{name} must be binary (entries 0 or 1), found {bad!r}")
    return x


def _generator(seed) -> torch.Generator:
    """A CPU generator from an int seed (or the generator itself)."""
    if isinstance(seed, torch.Generator):
        return seed
    return torch.Generator().manual_seed(_as_int(seed, "seed"))


def _majority(x: torch.Tensor) -> torch.Tensor:
    """Element-wise ``1.0`` where ``x > 1/2``, ``0.0`` elsewhere, NaN kept (``x`` float64)."""
    return torch.where(torch.isnan(x), x, (x > 0.5).to(torch.float64))


def _finish_read(num: torch.Tensor, den: torch.Tensor, query: torch.Tensor, threshold: bool,
                 empty: str) -> torch.Tensor:
    """``num / den`` with the majority threshold and the policy for ``den = 0``."""
    empty_rows = den == 0  # (..., 1)
    if bool(empty_rows.any()):
        if empty == "raise":
            k = int(empty_rows.sum())
            raise ValueError(f"{k} quer{'y' if k == 1 else 'ies'} share no neuron with any stored "
                             "pattern (all weights are zero): the read is undefined")
        if empty == "query" and num.shape[-1] != query.shape[-1]:
            raise ValueError(f"empty='query' returns the query, which needs pointers of the query's "
                             f"size n = {query.shape[-1]}, got n_p = {num.shape[-1]}")
    out = num / torch.where(empty_rows, torch.ones_like(den), den)  # (..., n_p)
    if threshold:
        out = _majority(out.to(torch.float64))
    if empty == "query":
        out = torch.where(empty_rows, query.to(torch.float64), out)
    else:
        out = out.masked_fill(empty_rows, float("nan"))
    return out
