"""Tests of the effective-beta readings (assocmem.sdm.trained.effective_beta)."""

import numpy as np
import pytest
import torch

from assocmem.sdm.trained.effective_beta import (gpt2_attention_inputs, gpt2_effective_betas,
                                                 load_gpt2, log_linear_beta, max_softmax_input)


def test_max_softmax_input_is_the_largest_unmasked_score_per_head():
    s = np.zeros((2, 3, 4))
    s[1, 2, 3] = 9.0
    s[0, 1, 0] = 5.0
    np.testing.assert_array_equal(max_softmax_input(s), [0.0, 5.0, 9.0])
    mask = np.ones((2, 3, 4), dtype=bool)
    mask[1, 2, 3] = False
    assert max_softmax_input(s, mask=mask)[2] == 0.0


def test_log_linear_beta_recovers_a_temperature_with_per_query_offsets():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (20, 7))
    s = 12.5 * x + rng.normal(size=(20, 1))  # one intercept per query
    beta, r2 = log_linear_beta(s, x)
    assert abs(beta - 12.5) < 1e-10 and abs(r2 - 1) < 1e-12
    mask = np.tril(np.ones((20, 7), dtype=bool))
    assert abs(log_linear_beta(s, x, mask=mask)[0] - 12.5) < 1e-10
    with pytest.raises(ValueError, match="x does not vary within any query"):
        log_linear_beta(s, np.ones_like(x))


transformers = pytest.importorskip("transformers")


def _tiny_gpt2(**flags):
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=16, n_positions=32, vocab_size=50,
                                  bos_token_id=0, eos_token_id=0,
                                  attn_implementation="eager", **flags)
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(cfg).eval()


@pytest.mark.parametrize("flags", [{}, {"scale_attn_weights": False},
                                   {"scale_attn_by_inverse_layer_idx": True},
                                   {"scale_attn_weights": False, "scale_attn_by_inverse_layer_idx": True}])
def test_gpt2_scores_reproduce_the_models_own_attention_weights(flags):
    model = _tiny_gpt2(**flags)
    with torch.no_grad():  # scores of order 10, so that a wrong factor changes the weights visibly
        for blk in model.transformer.h:
            blk.attn.c_attn.weight.mul_(20.0)
    ids = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(1))
    layers = gpt2_attention_inputs(model, ids)
    with torch.no_grad():
        att = model(ids, output_attentions=True).attentions
    assert len(layers) == 2
    for d, a in zip(layers, att):
        s = np.where(d["mask"], d["scores"], -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        np.testing.assert_allclose(w, a.double().numpy(), atol=1e-5)
        assert np.all(np.abs(d["cosines"]) <= 1 + 1e-12)


class _OnGPU(torch.Tensor):
    """Stands for an activation on a GPU: ``numpy()`` refuses it, as torch does, until ``cpu()``."""

    def numpy(self, *args, **kwargs):
        raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                        "tensor to host memory first.")

    def cpu(self, *args, **kwargs):
        return self.as_subclass(torch.Tensor)


def test_gpt2_activations_come_back_to_the_cpu_before_numpy():
    model = _tiny_gpt2()
    ids = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(1))
    plain = gpt2_attention_inputs(model, ids)
    handles = [blk.attn.c_attn.register_forward_hook(lambda _m, _i, out: out.as_subclass(_OnGPU))
               for blk in model.transformer.h]
    try:
        moved = gpt2_attention_inputs(model, ids)
    finally:
        for h in handles:
            h.remove()
    for a, b in zip(moved, plain):
        assert isinstance(a["scores"], np.ndarray)
        np.testing.assert_array_equal(a["scores"], b["scores"])
        np.testing.assert_array_equal(a["cosines"], b["cosines"])


def test_gpt2_effective_betas_has_a_row_per_layer_and_head():
    model = _tiny_gpt2()
    ids = torch.randint(0, 50, (1, 12), generator=torch.Generator().manual_seed(2))
    df = gpt2_effective_betas(model, ids)
    assert list(df.columns) == ["layer", "head", "max_input", "fitted_beta", "fit_r2"]
    assert len(df) == 4 and np.isfinite(df[["max_input", "fitted_beta"]].to_numpy()).all()


def test_gpt2_inputs_are_checked():
    model = _tiny_gpt2()
    with pytest.raises(ValueError, match=r"input_ids must lie in \[0, 50\)"):
        gpt2_attention_inputs(model, torch.tensor([[0, 60]]))
    with pytest.raises(TypeError, match="must be a transformers GPT2Model"):
        gpt2_attention_inputs(torch.nn.Linear(2, 2), torch.tensor([[0, 1]]))
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        load_gpt2("")
