"""Attention noise (Def. 5.1), the bound of Theorem 5.2 (eq. 11) and the local Lipschitz constant."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from assocmem.mlps.mlp import hebbian_mlp
from assocmem.mlps.transformer import (
    attention_noise,
    fact_map,
    fact_set,
    local_lipschitz,
    noise_ceiling,
    noise_ceiling_bound,
)
from tests.mlps.transformer._helpers import F64, copy_the_key, tiny


def test_noise_is_a_distance_between_unit_vectors():
    task, E, model = tiny()
    n = attention_noise(model, task, 3, seed=0)
    assert n.shape == (task.num_facts, 3) and n.dtype == F64
    assert float(n.min()) >= 0 and float(n.max()) <= 2
    assert noise_ceiling(model, task, 3, seed=0) == float(n.max())
    u = model.mlp_input(torch.tensor([[8, 0, 9, 10, 8, 9, 10, task.query_token]]))
    assert n.dtype == F64 and u.shape == (1, 16)


def test_an_exact_key_copy_has_no_noise_and_the_mlp_plays_no_part():
    task, E, model = tiny()
    copy_the_key(model)
    assert noise_ceiling(model, task, 8, seed=0) < 1e-14
    mlp = hebbian_mlp(fact_set(E, task, fact_map(task, 0)), 16, "none")
    assert torch.equal(attention_noise(model, task, 2, 1), attention_noise(model.with_mlp(mlp), task, 2, 1))


def test_noise_ceiling_bound_formula_and_scaling():
    b = noise_ceiling_bound(0.2, 4.0, 256, 64)
    assert math.isclose(b, 0.2 / (4.0 * math.sqrt(256 * math.log(256) / 64)), rel_tol=1e-15)
    assert math.isclose(noise_ceiling_bound(0.4, 4.0, 256, 64), 2 * b, rel_tol=1e-15)
    assert math.isclose(noise_ceiling_bound(0.2, 4.0, 256, 256), 2 * b, rel_tol=1e-15)


def test_local_lipschitz_closed_form_matches_autograd():
    task, E, _ = tiny()
    mlp = hebbian_mlp(fact_set(E, task, fact_map(task, 0)), 20, "full")

    class Wrapped(nn.Module):  # hides the BilinearMLP type: the generic autograd path
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)

    pts = E[:5]
    closed, generic = local_lipschitz(mlp, pts), local_lipschitz(Wrapped(mlp), pts)
    assert torch.allclose(closed, generic, rtol=1e-10, atol=0)
    # a linear map's Jacobian is itself
    lin = nn.Linear(16, 16, bias=False).double()
    assert torch.allclose(local_lipschitz(lin, pts), torch.linalg.matrix_norm(lin.weight.detach(), ord=2).expand(5))


def test_noisy_margin_threshold_is_eq_70_solved_for_eps():
    from assocmem.mlps.transformer.noise import noisy_margin_threshold

    F, d, mu, L, g = 512, 64, 0.5, 30.0, 2.0
    eps = noisy_margin_threshold(g, L, F, d, mu, delta=0.05)
    log_term = math.log(2 * F * F / 0.05)  # C0 = 2, the union bound's
    drop = 2 * (1 + mu) * L * eps + 2 * math.sqrt(2) * L * eps * math.sqrt(F * log_term / d)
    assert math.isclose(drop, g, rel_tol=1e-13)  # eq. 70's right side is zero at the threshold
    assert math.isclose(noisy_margin_threshold(2 * g, L, F, d, mu), 2 * eps, rel_tol=1e-13)
    assert noisy_margin_threshold(g, L, F, d, mu, delta=0.5) > eps  # a likelier failure, more room
    assert noisy_margin_threshold(g, L, F, 4 * d, mu) > eps
    for bad in (dict(margin=0.0), dict(lipschitz=-1.0), dict(coherence=1.5), dict(delta=1.0),
                dict(c0=1.0), dict(num_facts=1)):
        args = dict(margin=g, lipschitz=L, num_facts=F, d=d, coherence=mu) | bad
        with pytest.raises(ValueError):
            noisy_margin_threshold(**args)
