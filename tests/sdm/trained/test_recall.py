"""Tests of the associative-recall task and model (assocmem.sdm.trained.recall)."""

import math

import numpy as np
import pytest
import torch

from assocmem.sdm.trained.recall import (RecallAttention, RecallConfig, evaluate_recall,
                                         make_recall_batch, train_recall)

TINY = dict(n=16, m=8, vocab=8, steps=20, batch=8)


def _batch(b=4, m=5, n=16, vocab=8, noise=0.0, seed=0):
    return make_recall_batch(b, m, n, vocab, noise, torch.Generator().manual_seed(seed))


def test_a_batch_has_the_stated_shapes_and_a_noiseless_query_is_its_address():
    bt = _batch()
    assert bt.addresses.shape == (4, 5, 16) and bt.queries.shape == (4, 16)
    assert set(bt.addresses.unique().tolist()) == {-1.0, 1.0}
    rows = torch.arange(4)
    assert torch.equal(bt.queries, bt.addresses[rows, bt.targets])
    assert torch.equal(bt.labels, bt.values[rows, bt.targets])
    cos = bt.input_cosines
    assert torch.allclose(cos[rows, bt.targets], torch.ones(4, dtype=torch.float64))


def test_query_noise_flips_about_the_stated_fraction_of_bits():
    bt = make_recall_batch(400, 3, 64, 8, 0.25, torch.Generator().manual_seed(1))
    rows = torch.arange(400)
    flipped = (bt.queries != bt.addresses[rows, bt.targets]).double().mean().item()
    se = math.sqrt(0.25 * 0.75 / (400 * 64))
    assert abs(flipped - 0.25) < 5 * se


def test_qk_norm_scores_are_beta_times_the_projected_cosine():
    model = RecallAttention(RecallConfig(**TINY, beta_init=7.0))
    ro = model.readout(_batch())
    assert torch.allclose(ro.scores, 7.0 * ro.cosines, atol=1e-12)
    assert torch.allclose(ro.weights.sum(-1), torch.ones(4, 1, dtype=torch.float64))
    assert ro.logits.shape == (4, 8)
    np.testing.assert_allclose(model.betas(), [7.0])


def test_l2_values_have_unit_norm_and_layernorm_norms_are_sqrt_d_at_init():
    model = RecallAttention(RecallConfig(**TINY, values="l2", qk="layernorm", heads=2))
    ro = model.readout(_batch())
    assert torch.allclose(ro.value_norms, torch.ones_like(ro.value_norms))
    # unit gain, zero bias: |LN(x)| = sqrt(d_head) up to LayerNorm's eps
    assert torch.allclose(ro.query_norms, torch.full_like(ro.query_norms, math.sqrt(8)), rtol=1e-4)


def test_dot_product_model_has_no_beta():
    model = RecallAttention(RecallConfig(**TINY, qk="none"))
    assert np.isnan(model.betas()).all()
    ro = model.readout(_batch())
    q = _batch().queries @ model.w_q
    assert ro.query_norms.shape == (4, 1)
    assert torch.allclose(ro.query_norms[:, 0], q.norm(dim=-1))


def test_training_is_deterministic_and_records_its_history():
    a, b = train_recall(RecallConfig(**TINY)), train_recall(RecallConfig(**TINY))
    assert np.array_equal(a.history["loss"], b.history["loss"])
    assert np.array_equal(a.history["beta"], b.history["beta"])
    assert list(a.history["step"]) == [20]
    for pa, pb in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(pa, pb)


def test_a_trained_model_beats_chance_and_evaluation_counts_add_up():
    tr = train_recall(RecallConfig(n=16, m=4, vocab=4, noise=0.0, steps=100, batch=16, lr=2e-2))
    ev = evaluate_recall(tr.model, 4, queries=400, seed=3)
    assert ev["queries"] == 400 and 0 <= ev["correct"] <= 400
    assert ev["accuracy"] == ev["correct"] / 400
    assert ev["accuracy"] > 0.5  # chance is 1/4
    assert ev == evaluate_recall(tr.model, 4, queries=400, seed=3)


def test_the_model_refuses_a_batch_of_the_wrong_width_or_vocabulary():
    model = RecallAttention(RecallConfig(**TINY))
    with pytest.raises(ValueError, match="the model needs width 16"):
        model.readout(_batch(n=12))
    with pytest.raises(ValueError, match=r"value tokens must lie in \[0, 8\)"):
        model.readout(_batch(vocab=20, seed=5))


def test_a_diverging_training_raises_at_the_first_non_finite_loss():
    from assocmem._checks import TrainingDiverged
    with pytest.raises(TrainingDiverged, match=r"train_recall diverged: the loss is nan at step 2 \(lr = 1e\+30\)") as err:
        train_recall(RecallConfig(**{**TINY, "lr": 1e30, "beta_lr": 1e30}))
    assert isinstance(err.value, FloatingPointError) and isinstance(err.value, ValueError)


def test_an_injected_nan_loss_stops_the_training_at_its_step(scale_loss_at):
    scale_loss_at(torch.nn.functional, 3, math.nan)
    with pytest.raises(FloatingPointError, match="the loss is nan at step 3 .*No model is returned"):
        train_recall(RecallConfig(**TINY))


def test_a_finite_blow_up_of_the_loss_stops_the_training_at_its_step(scale_loss_at):
    """A loss of some 1e6 nats is finite, but the targets' mean probability exp(-loss) is below
    float64's smallest normal number: the training stops there (it used to go on)."""
    scale_loss_at(torch.nn.functional, 3, 1e6)
    with pytest.raises(FloatingPointError, match=r"the loss is [\d.]+e\+0[56] at step 3, above 708 nats .*No"):
        train_recall(RecallConfig(**TINY))


def test_a_last_update_that_blows_up_the_weights_raises():
    """lr = 1e15 for one step leaves finite weights near 1e15 whose loss is not finite: the loss
    after the last update is checked as every other (such a model used to be returned)."""
    from assocmem._checks import TrainingDiverged
    with pytest.raises(TrainingDiverged, match=r"train_recall diverged: the loss is .* after the last update "
                                               r"\(step 1\).*No model is returned"):
        train_recall(RecallConfig(**{**TINY, "steps": 1, "lr": 1e15, "beta_lr": 1e15}))


def test_a_last_update_that_leaves_a_non_finite_weight_raises(monkeypatch):
    real, calls = torch.optim.AdamW.step, []

    def step(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == TINY["steps"]:
            self.param_groups[0]["params"][0].data[0, 0] = math.inf
        return out

    monkeypatch.setattr(torch.optim.AdamW, "step", step)
    with pytest.raises(ValueError, match="the last update left a non-finite weight"):
        train_recall(RecallConfig(**TINY))


def test_evaluating_a_model_with_non_finite_weights_raises():
    model = RecallAttention(RecallConfig(**TINY))
    with torch.no_grad():
        model.w_q[0, 0] = math.nan
    with pytest.raises(ValueError, match="parameter 'w_q' is not finite"):
        evaluate_recall(model, 4, queries=10)
    model = RecallAttention(RecallConfig(**TINY))
    with torch.no_grad():
        model.unembed.mul_(1e300)
        model.embed.mul_(1e300)
    with pytest.raises(ValueError, match="logits are not finite"):
        evaluate_recall(model, 4, queries=10)
