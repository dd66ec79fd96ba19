"""Noise injected into the SSFR Transformer's MLP input (assocmem.mlps.transformer.injection)."""

from __future__ import annotations

import pytest
import torch

from assocmem.mlps.mlp import hebbian_mlp
from assocmem.mlps.transformer import fact_map, fact_set, ssfr_correct
from assocmem.mlps.transformer.injection import injected_correct, query_inputs, tangent_noise
from tests.mlps.transformer._helpers import F64, copy_the_key, tiny


def test_tangent_noise_moves_each_unit_row_by_the_chord():
    x = torch.nn.functional.normalize(torch.randn(50, 8, dtype=F64, generator=torch.Generator().manual_seed(0)))
    for eps in (0.0, 0.1, 1.0, 2.0):
        y = tangent_noise(x, eps, seed=3)
        torch.testing.assert_close(y.norm(dim=1), torch.ones(50, dtype=F64), rtol=0, atol=1e-14)
        torch.testing.assert_close((y - x).norm(dim=1), torch.full((50,), eps, dtype=F64), rtol=0, atol=1e-14)
    assert torch.equal(tangent_noise(x, 0.3, 5), tangent_noise(x, 0.3, 5))
    assert not torch.equal(tangent_noise(x, 0.3, 5), tangent_noise(x, 0.3, 6))
    assert tangent_noise(x.float(), 0.3, 5).dtype == torch.float32


@pytest.mark.parametrize("bad, match", [(dict(eps=2.5), "eps"), (dict(eps=-0.1), "eps"),
                                        (dict(points=torch.ones(4)), "floating"),
                                        (dict(points=torch.ones(4, 1)), "floating"),
                                        (dict(points=torch.full((2, 3), float("nan"))), "finite")])
def test_tangent_noise_refuses_bad_input(bad, match):
    args = dict(points=torch.eye(3, dtype=F64), eps=0.1, seed=0) | bad
    with pytest.raises(ValueError, match=match):
        tangent_noise(**args)


def test_no_injection_gives_the_models_own_answers():
    task, E, model = tiny(F=8, d=16)
    mapping = fact_map(task, 1)
    model = model.with_mlp(hebbian_mlp(fact_set(E, task, mapping), 64, "full"))
    u, targets = query_inputs(model, task, mapping, 3, seed=2)
    assert u.shape == (8 * 3, 16) and torch.equal(targets.reshape(8, 3)[:, 0], mapping)
    got = injected_correct(model, u, targets).reshape(8, 3)
    assert torch.equal(got, ssfr_correct(model, task, mapping, 3, seed=2))


def test_noise_of_the_size_of_the_sphere_breaks_recall_and_small_noise_does_not():
    task, E, model = tiny(F=8, d=16)
    copy_the_key(model)  # a noise-free attention: u = k
    mapping = fact_map(task, 1)
    model = model.with_mlp(hebbian_mlp(fact_set(E, task, mapping), 256, "full"))
    u, targets = query_inputs(model, task, mapping, 4, seed=0)
    assert injected_correct(model, u, targets).all()
    assert injected_correct(model, tangent_noise(u, 1e-3, 0), targets).all()
    # chord sqrt(2): a direction orthogonal to the key (not the antipode: a bilinear MLP is even)
    far = injected_correct(model, tangent_noise(u, 2**0.5, 0), targets)
    assert far.double().mean() < 0.5


def test_injected_correct_refuses_bad_input():
    task, E, model = tiny(F=8, d=16)
    u, targets = query_inputs(model, task, fact_map(task, 0), 1, seed=0)
    with pytest.raises(ValueError, match="shape"):
        injected_correct(model, u[:, :4], targets)
    with pytest.raises(ValueError, match="targets"):
        injected_correct(model, u, targets[:3])
    with pytest.raises(ValueError, match="fact tokens"):
        injected_correct(model, u, targets + 8)
    with pytest.raises(ValueError, match="SSFRTransformer"):
        injected_correct(object(), u, targets)
    with pytest.raises(ValueError, match="task"):
        query_inputs(model, tiny(F=6, d=16)[0], fact_map(task, 0), 1, seed=0)
