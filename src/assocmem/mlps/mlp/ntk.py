"""The NTK baseline: the degree-1 Hermite construction of a gated ReLU MLP (Nichani et al., 2024).

:func:`ntk_mlp` draws the gate ``W_gate`` iid ``N(0, 1)`` and a readout ``P`` with unit columns,
and sets ``W_up = (1/m) (H * (C_f P))^T K`` with the degree-1 Hermite features ``H = K W_gate^T``;
averaged over the random weights the
:class:`~assocmem.mlps.mlp.architectures.GatedReLUMLP` it returns is a ``K_2`` Hebbian memory
(Stein's lemma). Source: seed 001, App. B.3 and App. A.1.1 ("NTK"); E. Nichani, J. D. Lee,
A. Bietti (2024). Used by chapter 10 ("Facts, margins and the counting bound") and chapter 13
("Facts per parameter", through :mod:`assocmem.mlps.capacity_sweeps`).

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): App. A.1.1, App. B.3.
E. Nichani, J. D. Lee, A. Bietti (2024), "Understanding Factual Recall in Transformers via
Associative Memories".
"""

from __future__ import annotations

import torch

from assocmem._checks import positive_int as _positive_int, seed_int as _seed
from assocmem._checks import as_bool
from assocmem.mlps.facts import FactSet
from assocmem.mlps.mlp._common import _F64, _checked_facts, _gaussian
from assocmem.mlps.mlp.architectures import GatedReLUMLP

__all__ = [
    "ntk_mlp",
]


def ntk_mlp(facts: FactSet, m: int, seed: int = 0, *, require_unit_keys: bool = True) -> GatedReLUMLP:
    """NTK baseline: the degree-1 Hermite construction of Nichani et al. (2024), as in App. B.3.

    ``W_gate`` ``(m, d)`` iid ``N(0, 1)``; ``P`` ``(d_c, m)`` with columns uniform on the unit sphere;
    ``H = He_1(K W_gate^T) = K W_gate^T`` ``(F, m)``;
    ``W_up = (1/m) (H * (C_f P))^T K`` ``(m, d)``; ``MLP(x) = P (ReLU(W_gate x) * (W_up x))``.

    Reconciliation with App. B.3: the shapes there are consistent (``C_f P`` is ``(F, m)``, so
    ``W_up`` is ``(m, d)``). Neuron ``r`` computes ``ReLU(w_r . x) (u_r . x)`` with
    ``u_r = (1/m) sum_i (w_r . k_i)(c_f(i) . p_r) k_i``; averaging over ``w_r`` (Stein's lemma,
    ``E[ReLU(w.x)(w.k)] = <x, k>/2``) and ``p_r`` (``E[p p^T] = I/d_c``) gives
    ``E[MLP(x)] = (1/(2 d_c)) sum_i <k_i, x>^2 c_f(i)``: a ``K_2`` Hebbian memory, as B.3 states.
    Draw order from one generator seeded with ``seed``: ``W_gate`` then the Gaussian ``P``.

    Parameters
    ----------
    facts : FactSet
    m : int
    seed : int, default 0
    require_unit_keys : bool, default True

    Returns
    -------
    GatedReLUMLP
        In the fact set's dtype (computed in float64), ``num_parameters = 3 m d`` (``d_c = d``).

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, keys off the sphere, or a ``require_unit_keys`` that is not a
        bool.

    References
    ----------
    Seed 001, App. B.3 and App. A.1.1 ("NTK"); Nichani, Lee & Bietti (2024).
    """
    facts = _checked_facts(facts, as_bool(require_unit_keys, "require_unit_keys"))
    m = _positive_int("m", m)
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    dev = facts.keys.device
    K = facts.keys.to(_F64)  # (F, d)
    C = facts.targets.to(_F64)  # (F, d_c)
    d, d_c = K.shape[1], C.shape[1]
    W_gate = _gaussian(m, d, gen).to(dev)  # (m, d)
    P = _gaussian(d_c, m, gen).to(dev)  # (d_c, m)
    P = P / torch.linalg.vector_norm(P, dim=0, keepdim=True)  # unit columns p_r
    H = K @ W_gate.T  # (F, m)  He_1 features
    W_up = (H * (C @ P)).T @ K / m  # (m, d)
    model = GatedReLUMLP(W_gate, W_up, P).to(facts.keys.dtype)  # float64 inside, the facts' dtype out
    model.info = {"seed": int(seed), "hermite_degree": 1}
    return model
