"""Tests for assocmem.mlps.margins.bit_complexity: the uniform symmetric quantiser (App. B.2.6), the
search for the fewest bits with a positive margin, and bad input.
"""

from __future__ import annotations

import math

import pytest
import torch

from assocmem.mlps import margins as M
from assocmem.mlps.facts import make_fact_set
from tests.mlps.margins._memories import BilinearHebbian


@pytest.mark.parametrize("bits", [1, 2, 3, 5, 8, 12])
def test_quantizer_properties(bits):
    gen = torch.Generator().manual_seed(bits)
    x = torch.randn(40, 30, generator=gen, dtype=torch.float64)
    q = M.quantize(x, bits)
    step = M.quantization_step(x, bits)
    s = float(x.abs().max())
    assert step == pytest.approx(2 * s / 2**bits)
    assert float((q - x).abs().max()) <= step / 2 * (1 + 1e-12)  # error <= half a step
    assert torch.unique(q).numel() <= 2**bits
    torch.testing.assert_close(M.quantize(-x, bits), -q)  # symmetric
    assert float(q.abs().max()) <= s - step / 2 + 1e-12
    levels = torch.unique(q) / step - 0.5  # integer codes in [-2^(b-1), 2^(b-1) - 1]
    torch.testing.assert_close(levels, levels.round())
    assert levels.min() >= -(2 ** (bits - 1)) and levels.max() <= 2 ** (bits - 1) - 1


@pytest.mark.float32_default  # written for torch's default float32 tensors
def test_quantizer_special_cases():
    x = torch.tensor([-2.0, -0.1, 0.3, 2.0], dtype=torch.float32)
    q1 = M.quantize(x, 1)
    assert q1.dtype == torch.float32
    torch.testing.assert_close(q1, torch.tensor([-1.0, -1.0, 1.0, 1.0]))  # +-s/2
    assert torch.equal(M.quantize(torch.zeros(3, 3), 4), torch.zeros(3, 3))
    errs = [float((M.quantize(x, b) - x).abs().max()) for b in range(1, 12)]
    assert all(e2 <= e1 + 1e-7 for e1, e2 in zip(errs, errs[1:]))  # finer with more bits here
    out = M.quantize_matrices({"A": x, "B": 2 * x}, 3)
    assert set(out) == {"A", "B"}
    torch.testing.assert_close(out["B"], 2 * out["A"])  # one scale per matrix


def test_min_bits_for_positive_margin():
    facts = make_fact_set(16, 16, tied=False, seed=0)
    model = BilinearHebbian(facts, m=256, seed=0)
    mats = {"A": model.A / model.m**0.25, "G": model.G / model.m**0.25, "B": model.B}

    def margin(A, G, B):
        out = ((facts.keys @ A.T) * (facts.keys @ G.T)) @ B.T  # the MLP B((A x) * (G x))
        return M.score_margins(out @ facts.values.T, facts.mapping).min()

    res = M.min_bits_for_positive_margin(margin, mats, max_bits=16)
    assert res.full_precision_margin == pytest.approx(float(M.output_margins(model, facts).min()))
    assert res.full_precision_margin > 0
    assert res.bits is not None and res.margins[-1] == (res.bits, res.margins[-1][1])
    assert res.margins[-1][1] > 0 and all(g <= 0 for _, g in res.margins[:-1])
    seq = [mats["A"], mats["G"], mats["B"]]
    full = M.min_bits_for_positive_margin(margin, seq, max_bits=12, scan_all=True)
    assert [b for b, _ in full.margins] == list(range(1, 13)) and full.bits == res.bits
    assert M.min_bits_for_positive_margin(lambda **kw: -1.0, mats, max_bits=3).bits is None


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="bits"):
        M.quantize(torch.ones(3), 0)
    with pytest.raises(ValueError, match="bits"):
        M.quantize(torch.ones(3), 2.5)
    with pytest.raises(ValueError, match="bits"):
        M.min_bits_for_positive_margin(lambda *a: 1.0, [torch.ones(2)], min_bits=0)
    with pytest.raises(ValueError, match="finite"):
        M.quantize(torch.tensor([1.0, math.nan]), 4)
