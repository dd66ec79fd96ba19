"""The main modules' ``forward`` follows torch (issue 29, item 3): sync-free (no graph break under
``torch.compile``'s tracer), no cast of the caller's tensors, clear errors on a wrong dtype,
width or device, and float32 models work end to end."""

import pytest
import torch

from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory
from assocmem.mlps.facts import make_fact_set
from assocmem.mlps.mlp import hebbian_mlp
from assocmem.mlps.mlp.architectures import ExactK2Memory


def _modules():
    facts = make_fact_set(32, 8, tied=True, seed=0)
    keys = facts.keys
    values = torch.randn(32, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    return {
        "OuterProductMemory": OuterProductMemory(8, 5, device="cpu").write(keys, values),
        "LeastSquaresMemory": LeastSquaresMemory(8, 5, device="cpu").write(keys[:6], values[:6]),
        "DeltaRuleMemory": DeltaRuleMemory(8, 5, device="cpu").write(keys, values),
        "BilinearMLP (whitened)": hebbian_mlp(facts, 40, "full"),
        "ExactK2Memory": ExactK2Memory(keys, facts.values[facts.mapping]),
    }


@pytest.mark.parametrize("name", list(_modules()))
def test_forward_traces_without_a_graph_break(name):
    module = _modules()[name]
    x = torch.randn(7, 8, dtype=torch.float64)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(module)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1


@pytest.mark.parametrize("name", list(_modules()))
def test_forward_does_not_cast_and_says_so(name):
    module = _modules()[name]
    with pytest.raises(TypeError, match="forward does not cast"):
        module(torch.randn(3, 8, dtype=torch.float32))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 8\)"):
        module(torch.randn(3, 9, dtype=torch.float64))
    with pytest.raises(TypeError, match="torch.Tensor"):
        module([[0.0] * 8])
    with pytest.raises(TypeError, match="must be a floating-point tensor, got torch.int64"):
        module(torch.ones(3, 8, dtype=torch.int64))


@pytest.mark.float32_default  # written for torch's default float32 tensors
@pytest.mark.parametrize("name", list(_modules()))
def test_a_float32_module_in_a_float32_model(name):
    module = _modules()[name].float()
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), module, torch.nn.ReLU())
    out = model(torch.randn(3, 4))  # torch's default dtype, float32, end to end
    assert out.dtype == torch.float32 and torch.isfinite(out).all()
