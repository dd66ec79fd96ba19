"""Near-twins in a fact set drawn from captured language-model pairs (chapter 17).

A small templated corpus gives many pairs whose keys (or values) are the same direction up to
rounding: the same template position after different subjects. This module measures how many facts
of a set have such a *near-twin*, another key (value) at cosine above ``1 - twin_gap``.
:mod:`assocmem.mlps.lm_dedup_sweeps` and :mod:`assocmem.mlps.lm_block_sweeps` record it for every
fact set they draw.
"""

from __future__ import annotations

import numpy as np
import torch

from assocmem._checks import as_real
from assocmem.mlps.facts import FactSet

__all__ = ["near_twin_stats"]


def near_twin_stats(facts: FactSet, twin_gap: float = 1e-4) -> dict:
    """How many facts of a set have a near-twin: another key (value) at cosine above ``1 - twin_gap``.

    Parameters
    ----------
    facts : FactSet
        Unit-norm keys ``(F, d)`` and values ``(F, d)`` (as :func:`sample_fact_set` draws them),
        ``F >= 2``.
    twin_gap : float, default 1e-4
        In ``(0, 1)``.

    Returns
    -------
    dict
        ``key_twin_share``, ``value_twin_share`` (fractions of keys, values with a near-twin),
        ``pair_twin_share`` (of facts whose key or value has one) and ``key_nn_median`` (the
        median over keys of the largest cosine with another key); floats.

    Raises
    ------
    ValueError
        ``facts`` not a :class:`FactSet`, fewer than two facts, or ``twin_gap`` outside ``(0, 1)``.
    """
    if not isinstance(facts, FactSet):
        raise ValueError(f"facts must be a FactSet; got {type(facts).__name__}")
    gap = as_real(twin_gap, "twin_gap", minimum=0.0, strict_min=True, maximum=1.0)
    if not gap < 1.0:
        raise ValueError(f"twin_gap must lie in (0, 1); got {twin_gap}")
    if facts.keys.shape[0] < 2:
        raise ValueError(f"need at least two facts; got {facts.keys.shape[0]}")
    out, twins = {}, []
    for name, z in (("key", facts.keys), ("value", facts.values)):
        z = torch.nn.functional.normalize(z.to(torch.float64), dim=1)
        c = z @ z.T
        c.fill_diagonal_(-2.0)
        nn = c.amax(dim=1).cpu().numpy()
        twins.append(nn > 1.0 - gap)
        out[f"{name}_twin_share"] = float(np.mean(twins[-1]))
        if name == "key":
            out["key_nn_median"] = float(np.median(nn))
    out["pair_twin_share"] = float(np.mean(twins[0] | twins[1]))
    return out
