"""Helpers shared by the tests of assocmem.mlps.mlp."""

import torch


def accuracy(model, facts) -> float:
    """Fraction of facts i with argmax_j <MLP(k_i), v_j> == mapping[i], over every value row."""
    with torch.no_grad():
        dtype = next(model.parameters(), facts.keys).dtype  # forward does not cast (GD: float32)
        s = model(facts.keys.to(dtype)).to(torch.float64) @ facts.values.T  # (F, V)
    return (s.argmax(dim=1) == facts.mapping).double().mean().item()
