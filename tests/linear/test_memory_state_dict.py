"""A matrix memory's state_dict round trip (issue 29, item 3): a fresh memory of the same shape
loads a written one, pairs and count included, and reads the same."""

import pytest
import torch

from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory


@pytest.mark.parametrize("cls", [OuterProductMemory, LeastSquaresMemory, DeltaRuleMemory])
def test_a_fresh_memory_loads_a_written_one(cls):
    g = torch.Generator().manual_seed(0)
    keys = torch.nn.functional.normalize(torch.randn(6, 8, dtype=torch.float64, generator=g), dim=-1)
    values = torch.randn(6, 3, dtype=torch.float64, generator=g)
    written = cls(8, 3, device="cpu").write(keys, values)
    fresh = cls(8, 3, device="cpu")
    fresh.load_state_dict(written.state_dict())
    assert fresh.num_pairs == written.num_pairs == 6
    q = torch.randn(4, 8, dtype=torch.float64, generator=g)
    assert torch.equal(fresh(q), written(q))
    if cls is LeastSquaresMemory:  # the kept pairs came along: a further write refits on all of them
        more = torch.nn.functional.normalize(torch.randn(1, 8, dtype=torch.float64, generator=g), dim=-1)
        v = torch.randn(1, 3, dtype=torch.float64, generator=g)
        torch.testing.assert_close(fresh.write(more, v).S, written.write(more, v).S, rtol=0, atol=1e-12)


def test_a_state_of_another_shape_is_refused():
    written = OuterProductMemory(8, 3, device="cpu")
    with pytest.raises(RuntimeError, match="size mismatch"):
        OuterProductMemory(9, 3, device="cpu").load_state_dict(written.state_dict())
    bad = written.state_dict()
    bad["_extra_state"] = {"num_pairs": -1}
    with pytest.raises(ValueError, match="num_pairs"):
        OuterProductMemory(8, 3, device="cpu").load_state_dict(bad)
