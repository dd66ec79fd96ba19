"""Stand-in memories for the margin tests, built here so that the tests do not depend on
assocmem.mlps.mlp: the unwhitened sketched-K2 Hebbian MLP with bilinear features
``phi(x) = (A x) * (G x) / sqrt(m)``, the exact quadratic kernel, its features, and an
orthonormal fact set.
"""

from __future__ import annotations

import math

import torch

from assocmem.mlps.facts import FactSet


class BilinearHebbian(torch.nn.Module):
    """Unwhitened sketched-K2 Hebbian MLP: phi(x) = (A x) * (G x) / sqrt(m), B = C_f^T Phi / F."""

    def __init__(self, facts: FactSet, m: int, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        d = facts.dim
        self.A = torch.randn(m, d, generator=gen, dtype=torch.float64)
        self.G = torch.randn(m, d, generator=gen, dtype=torch.float64)
        self.m = m
        phi = self.features(facts.keys)  # (F, m)
        self.B = facts.targets.T @ phi / facts.num_facts  # (d, m)

    def features(self, x):
        return (x @ self.A.T) * (x @ self.G.T) / math.sqrt(self.m)

    def forward(self, x):
        return self.features(x) @ self.B.T


class ExactK2:
    """Hebbian memory with the exact quadratic kernel K2(x, z) = <x, z>^2 (no features)."""

    def __init__(self, facts: FactSet):
        self.keys = facts.keys
        self.targets = facts.targets
        self.F = facts.num_facts

    def kernel(self, x, z):
        return (x @ z.T) ** 2

    def __call__(self, x):
        return self.kernel(self.keys, x).T @ self.targets / self.F


def k2_features(x):
    """Exact K2 features x (x) x, so that <phi(x), phi(z)> = <x, z>^2."""
    return torch.einsum("ni,nj->nij", x, x).reshape(x.shape[0], -1)


def orthonormal_fact_set(F, d, perm=None):
    eye = torch.eye(d, dtype=torch.float64)
    keys = eye[:F]
    values = eye[torch.arange(d - 1, d - 1 - F, -1)]  # different rows of the basis
    mapping = torch.arange(F) if perm is None else torch.as_tensor(perm)
    return FactSet(keys, values, mapping)
