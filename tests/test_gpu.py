"""The same computations on CUDA as on the CPU (skipped without a GPU)."""

import pytest
import torch

from assocmem.linear.attention import linear_attention, softmax_attention
from assocmem.linear.capacity import read_error_mc
from assocmem.linear.memory import DeltaRuleMemory, LeastSquaresMemory, OuterProductMemory

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("cls", [OuterProductMemory, LeastSquaresMemory, DeltaRuleMemory])
def test_memories_agree_across_devices(cls):
    g = torch.Generator().manual_seed(0)
    keys = torch.nn.functional.normalize(torch.randn(40, 32, generator=g, dtype=torch.float64), dim=-1)
    values = torch.randn(40, 8, generator=g, dtype=torch.float64)
    reads = []
    for dev in ("cpu", "cuda"):
        mem = cls(32, 8, device=dev)
        mem.write(keys.to(dev), values.to(dev))
        reads.append(mem.read(keys.to(dev)).cpu())
    torch.testing.assert_close(reads[0], reads[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("form", ["parallel", "recurrent", "chunked"])
def test_attention_agrees_across_devices(form):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 100, 16, generator=g, dtype=torch.float64) for _ in range(3))
    cpu = linear_attention(q, k, v, form=form)
    gpu = linear_attention(q.cuda(), k.cuda(), v.cuda(), form=form).cpu()
    torch.testing.assert_close(cpu, gpu, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(softmax_attention(q, k, v), softmax_attention(q.cuda(), k.cuda(), v.cuda()).cpu())


def test_monte_carlo_runs_on_cuda():
    res = read_error_mc("additive", n=33, d_k=32, trials=64, seed=0, device="cuda")
    assert abs(res.mean - 1.0) < 5 * res.sem
