"""Near-twin statistics of a fact set (assocmem.mlps.lm_embeddings.twins): planted twins are
counted, the gap decides what counts, bad input is refused."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.facts import FactSet
from assocmem.mlps.lm_embeddings.twins import near_twin_stats


def test_near_twin_stats_count_planted_twins():
    g = torch.Generator().manual_seed(1)
    keys = torch.nn.functional.normalize(torch.randn(10, 6, generator=g, dtype=torch.float64), dim=1)
    values = torch.nn.functional.normalize(torch.randn(10, 6, generator=g, dtype=torch.float64), dim=1)
    keys[1] = keys[0]  # one key twin pair
    values[5] = torch.nn.functional.normalize(values[4] + 1e-6, dim=0)  # one value twin pair
    stats = near_twin_stats(FactSet(keys, values, torch.arange(10)))
    assert stats["key_twin_share"] == pytest.approx(0.2)
    assert stats["value_twin_share"] == pytest.approx(0.2)
    assert stats["pair_twin_share"] == pytest.approx(0.4)
    assert stats["key_nn_median"] < 1.0
    # a gap too small to call a 1e-6 perturbation a twin: only the exact copy counts
    assert near_twin_stats(FactSet(keys, values, torch.arange(10)), 1e-15)["value_twin_share"] == 0.0


@pytest.mark.parametrize("kwargs, match", [
    ({"facts": "x"}, "FactSet"),
    ({"twin_gap": 0.0}, "twin_gap"),
    ({"twin_gap": 1.0}, "twin_gap"),
    ({"one": True}, "two facts"),
])
def test_near_twin_stats_refuses(kwargs, match):
    k = torch.eye(3, dtype=torch.float64)
    facts = FactSet(k[:1], k[:1], torch.arange(1)) if kwargs.pop("one", False) else FactSet(k, k, torch.arange(3))
    args = {"facts": facts, "twin_gap": 1e-4, **kwargs}
    with pytest.raises(ValueError, match=match):
        near_twin_stats(**args)
