"""Helpers shared by the tests of assocmem.mlps.mlp."""

import torch


def accuracy(model, facts) -> float:
    """Fraction of facts i with argmax_j <MLP(k_i), v_j> == mapping[i], over every value row."""
    with torch.no_grad():
        s = model(facts.keys).to(torch.float64) @ facts.values.T  # (F, V)
    return (s.argmax(dim=1) == facts.mapping).double().mean().item()
