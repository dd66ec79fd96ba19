"""The sketched-``K_2`` Hebbian MLP of Algorithm 1 and its infinite-width limit, the exact-``K_2`` memory.

:func:`hebbian_mlp` draws ``A_bar, G_bar`` iid ``N(0, 1)`` and sets ``A = m^{-1/4} A_bar``,
``G = m^{-1/4} G_bar``, so that the features of the :class:`~assocmem.mlps.mlp.architectures.BilinearMLP`
are ``g(x) = (A_bar x) * (G_bar x) / sqrt(m)`` and ``E[<g(x), g(z)>] = <x, z>^2`` (Lemma B.2); its
readout is :func:`~assocmem.mlps.mlp.readout.hebbian_readout`, raw or whitened.
:func:`exact_k2_memory` is the limit ``m -> infinity`` of the unwhitened construction,
``H(x) = (1/F) sum_t c_f(t) <k_t, x>^2`` (an :class:`~assocmem.mlps.mlp.architectures.ExactK2Memory`).
:func:`hebbian_mlp_reference` is the plain whitened construction that :func:`hebbian_mlp` is
tested against and benchmarked beside (same weights, features as two GEMMs, the readout by
:func:`~assocmem.mlps.mlp.readout.hebbian_readout_reference`). :func:`hebbian_mlp` runs with
torch's threads capped at the cores other processes leave free
(:func:`assocmem.benchmarking.load_capped_threads`). Source: seed 001, Sec. 4.1 (eqs. 7-8), Algorithm 1 (App. B.2.3), App. B.2.4 (eqs. 12-14), Lemma B.2
(App. B.2.2), App. A.1.1 and A.3.2.

Names, as seed 001 spells them. Algorithm 1's readout mode is the keyword ``whitening``, one of
``"none"``, ``"diag"``, ``"full"`` (default ``"none"``, Algorithm 1's default: the unwhitened
construction). The constructions the seed compares (App. A.1.1, A.4.3) are the ``method`` of the
builders and sweeps (:func:`assocmem.mlps.capacity_sweeps.build_memory`,
:func:`assocmem.mlps.transformer.insertion.build_mlp`): ``"unwhitened"`` is ``whitening="none"``,
``"whitened"`` is ``whitening="full"`` with ridge ``1e-6`` (this function's default ridge),
``"data_dependent"`` is :func:`~assocmem.mlps.mlp.data_dependent.data_dependent_mlp`; beside them
``"ntk"`` and ``"gd"``. In the comparison of every memory (:mod:`assocmem.compare.adapters`) the same
constructions are the memories ``"mlp_<method>"`` (``"mlp_whitened"``). A module's
``construction`` records the mode it was built with (``"hebbian-full"``).

Used by chapter 10 ("Facts, margins and the counting bound"),
chapter 11 ("MLPs are kernel Hebbians", through the Theorem 3.1 check on Algorithm 1's ``B0``),
chapter 12 ("How margins scale", through :mod:`assocmem.mlps.margin_sweeps`) and chapter 13
("Facts per parameter", through :mod:`assocmem.mlps.capacity_sweeps`).

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Sec. 4.1 (eqs. 7-8),
Sec. 4.3, App. A.1.1 (MLP variants), A.3.2 (the exact-``K_2`` ``F``-sweep), B.2.2 (Lemma B.2),
B.2.3 (Algorithm 1), B.2.4 (eqs. 12-14).
"""

from __future__ import annotations

import torch

from assocmem._checks import as_bool
from assocmem.benchmarking import load_capped_threads
from assocmem._checks import positive_int as _positive_int, seed_int as _seed
from assocmem.mlps.facts import FactSet
from assocmem.mlps.mlp._common import (_F64, _check_draw, _checked_facts, _gaussian, _nested_unit_weights,
                                      _nonneg_float)
from assocmem.mlps.mlp.architectures import BilinearMLP, ExactK2Memory, _stacked_features
from assocmem.mlps.mlp.readout import _check_whitening, hebbian_readout, hebbian_readout_reference

__all__ = [
    "hebbian_mlp",
    "hebbian_mlp_reference",
    "exact_k2_memory",
]


def hebbian_mlp(
    facts: FactSet,
    m: int,
    whitening: str = "none",
    ridge: float = 1e-6,
    seed: int = 0,
    *,
    branch: str = "auto",
    require_unit_keys: bool = True,
    return_features: bool = False,
    draw: str = "block",
) -> BilinearMLP | tuple[BilinearMLP, torch.Tensor]:
    """Sketched-``K_2`` Hebbian MLP of Algorithm 1, with optional readout whitening.

    1. Draw ``A_bar, G_bar`` iid ``N(0, 1)`` of shape ``(m, d)`` (one generator seeded with
       ``seed``; ``A_bar`` first; see ``draw`` for the two orders) and set ``A = m^{-1/4} A_bar``, ``G = m^{-1/4} G_bar``, so the
       features are ``g(x) = (A_bar x) * (G_bar x) / sqrt(m)`` (lines 1-2).
    2. ``Phi`` ``(F, m)`` with rows ``g(k_i)``; ``C_f`` ``(F, d)`` with rows ``v_f(i)`` (lines 3-4).
    3. Readout by :func:`hebbian_readout`: ``none`` ``B0 = C_f^T Phi / F``; ``diag`` divides each
       column by ``Sigma_rr + ridge`` (the diagonal of the feature covariance); ``full`` uses the
       primal ``B0 (Sigma + ridge I)^{-1}`` for ``m <= F`` and the dual
       ``C_f^T (Phi Phi^T + ridge I)^{-1} Phi`` for ``m > F``.

    Everything is computed in float64 on the fact set's device (Cholesky + triangular solves);
    the returned module is in the fact set's dtype (float64 for a float64 fact set; a float32
    fact set gives a float32 module that composes with a float32 model).
    The dual branch interpolates once ``m >= F`` (generically 100 % accurate there). On the CPU
    the construction runs with torch's threads capped at the cores that other processes leave
    free (:func:`assocmem.benchmarking.load_capped_threads`; the result does not depend on it
    beyond rounding).

    Parameters
    ----------
    facts : FactSet
        Keys ``(F, d)`` on the unit sphere, values ``(V, d)``, mapping ``(F,)``.
    m : int
        Hidden width, ``m >= 1``.
    whitening : {"none", "diag", "full"}, default "none"
        Algorithm 1's readout mode: ``"none"`` is the seed's unwhitened construction, ``"full"``
        (with the default ridge) its whitened one; ``"diag"`` divides by the feature variances.
    ridge : float, default 1e-6
        ``lambda`` of eqs. 13-14 and Algorithm 1 line 11, a finite real ``>= 0`` (booleans and
        strings are refused). ``0`` is allowed; a singular system then raises.
    seed : int, default 0
        Seed of ``A_bar, G_bar``.
    branch : {"auto", "primal", "dual"}, default "auto"
        Force a branch of the full whitening (for checks).
    require_unit_keys : bool, default True
        Check that the keys are unit vectors (the construction's scale ``K(k, k) ~ 1`` assumes it).
    return_features : bool, default False
        Also return the feature matrix ``Phi`` of step 2, so that the model's outputs on its own
        keys are ``Phi @ model.B.T`` without computing the features again (e.g. its accuracy by
        :func:`assocmem.mlps.margins.accuracy_from_outputs`, as ``benchmarks/bench_mlp.py`` times
        construction plus accuracy).
    draw : {"block", "nested"}, default "block"
        How ``A_bar, G_bar`` come from the generator (CPU, seeded with ``seed``, float64, then
        moved to the fact set's device). ``"block"`` (the default, every committed result): one
        ``torch.randn(2m, d)``, rows ``:m`` are ``A_bar`` and rows ``m:`` ``G_bar``; since torch's
        CPU normal sampler is not prefix-consistent across sizes, widths ``m < M`` share no rows.
        ``"nested"``: ``ceil(m / 64)`` chunks, chunk ``j`` one ``torch.randn(2, 64, d)`` call (its
        first ``(64, d)`` half rows ``64 j ..`` of ``A_bar``, its second those of ``G_bar``), cut
        to ``m`` rows: width ``m``'s unit weights are, bit for bit, the first ``m`` rows of any
        larger width's (so are the unscaled features ``sqrt(m) Phi``), which lets a capacity
        search reuse features and Gram matrices across widths
        (:func:`assocmem.mlps.mlp.whitened_search.whitened_nested_search`). The two draws give
        different, equally distributed weights (another sample of the same construction).

    Returns
    -------
    model : BilinearMLP
        ``features(x) = g(x)``, ``B`` ``(d, m)``, ``num_parameters = 3 m d``; ``construction`` is
        ``"hebbian-<whitening>"``; ``info["branch"]`` is the full-whitening branch used
        (``"primal"`` or ``"dual"``).
    Phi : torch.Tensor, shape ``(F, m)``, float64
        Only with ``return_features=True``: row ``i`` is ``g(k_i)``, on the fact set's device, as
        :func:`bilinear_features` computes it (equal to ``model.features(facts.keys)`` up to
        rounding). It shares no memory with the model.

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, keys off the sphere, an unknown mode or branch, a ridge that is
        negative, non-finite or not a real number, a singular system with ``ridge = 0``, a
        ``require_unit_keys`` or ``return_features`` that is not a bool, an unknown ``draw``, or
        a readout that overflows float64.

    References
    ----------
    Seed 001, Sec. 4.1 (eqs. 7-8), Algorithm 1 (App. B.2.3), App. B.2.4 (eqs. 12-14), App. A.1.1.

    Examples
    --------
    >>> from assocmem.mlps.facts import make_fact_set
    >>> from assocmem.mlps.margins import accuracy, accuracy_from_outputs
    >>> facts = make_fact_set(256, 32, seed=0)
    >>> model, Phi = hebbian_mlp(facts, 200, "full", return_features=True)
    >>> accuracy_from_outputs(Phi @ model.B.T, facts) == accuracy(model, facts)
    True
    """
    with load_capped_threads():  # the input checks too: their elementwise passes are parallel regions
        facts = _checked_facts(facts, as_bool(require_unit_keys, "require_unit_keys"))
        m = _positive_int("m", m)
        _check_whitening(whitening)
        if branch not in ("auto", "primal", "dual"):
            raise ValueError(f"branch must be 'auto', 'primal' or 'dual'; got {branch!r}")
        ridge = _nonneg_float("ridge", ridge)
        return_features = as_bool(return_features, "return_features")
        draw = _check_draw(draw)
        gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
        dev = facts.keys.device
        K = facts.keys.to(_F64)  # (F, d)
        d = K.shape[1]
        if draw == "block":
            AG = _gaussian(2 * m, d, gen).to(dev).mul_(m ** -0.25)  # (2m, d): [A; G]
        else:
            AG = torch.cat(_nested_unit_weights(m, d, gen)).to(dev).mul_(m ** -0.25)  # (2m, d): [A; G]
        A, G = AG[:m], AG[m:]
        Phi = _stacked_features(K, AG)  # (F, m), = bilinear_features(K, A, G)
        B = hebbian_readout(Phi, facts.targets.to(_F64), whitening, ridge, branch)  # (d, m)
        # float64 inside (the whitened readout's Cholesky needs it); the module in the facts' dtype
        model = BilinearMLP(A.clone(), G.clone(), B, construction=f"hebbian-{whitening}").to(facts.keys.dtype)
    used = branch if branch != "auto" else ("primal" if m <= K.shape[0] else "dual")
    model.info = {"whitening": whitening, "ridge": float(ridge), "seed": int(seed),
                  "branch": used if whitening == "full" else None}
    if draw != "block":
        model.info["draw"] = draw
    return (model, Phi) if return_features else model


def hebbian_mlp_reference(facts: FactSet, m: int, ridge: float = 1e-6, seed: int = 0, *,
                          draw: str = "block") -> BilinearMLP:
    """Plain reference for ``hebbian_mlp(facts, m, "full", ridge, seed)``: the whitened construction.

    The same weights (with the default ``draw``: ``A_bar, G_bar`` drawn as one ``(2m, d)`` block
    from a generator seeded with ``seed``, ``A_bar`` first, scaled by ``m^{-1/4}``), the features as two plain GEMMs
    ``(K A^T) * (K G^T)`` and the readout by
    :func:`~assocmem.mlps.mlp.readout.hebbian_readout_reference` (whole Gram matrix, one
    ``torch.linalg.solve``; primal for ``m <= F``, dual otherwise). No blocking, no thread
    policy. Its readout agrees with :func:`hebbian_mlp`'s up to the system's conditioning times
    float64 rounding (tested).

    Parameters
    ----------
    facts : FactSet
        Keys on the unit sphere.
    m : int
        Hidden width, ``>= 1``.
    ridge : float, default 1e-6
        ``lambda > 0``.
    seed : int, default 0
    draw : {"block", "nested"}, default "block"
        The draw of ``A_bar, G_bar``, as in :func:`hebbian_mlp` (``"nested"``: 64-row chunks,
        each width's unit weights the first rows of every larger width's).

    Returns
    -------
    BilinearMLP
        ``construction = "hebbian-full"``.

    Raises
    ------
    ValueError
        Not a FactSet, keys off the sphere, ``m < 1``, a ridge that is not a finite real
        ``> 0``, or an unknown ``draw``.

    References
    ----------
    Seed 001, Algorithm 1 (App. B.2.3), App. B.2.4 (eqs. 12-14).
    """
    facts = _checked_facts(facts, True)
    m = _positive_int("m", m)
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    K = facts.keys.to(_F64)  # (F, d)
    if _check_draw(draw) == "block":
        AG = torch.randn(2 * m, K.shape[1], generator=gen, dtype=_F64).to(K.device) * m ** -0.25
    else:
        AG = torch.cat(_nested_unit_weights(m, K.shape[1], gen)).to(K.device) * m ** -0.25
    A, G = AG[:m], AG[m:]  # (m, d) each
    Phi = (K @ A.T) * (K @ G.T)  # (F, m)
    B = hebbian_readout_reference(Phi, facts.targets.to(_F64), ridge)  # (d, m)
    return BilinearMLP(A.clone(), G.clone(), B, construction="hebbian-full").to(facts.keys.dtype)


def exact_k2_memory(facts: FactSet, *, require_unit_keys: bool = True) -> ExactK2Memory:
    """Hebbian memory with the exact quadratic kernel, ``H(x) = (1/F) sum_t c_f(t) <k_t, x>^2``.

    The infinite-width limit of :func:`hebbian_mlp` with ``whitening="none"`` (Lemma B.2); used by
    the exact-``K_2`` margin sweeps (App. A.3.2).

    Parameters
    ----------
    facts : FactSet
    require_unit_keys : bool, default True

    Returns
    -------
    ExactK2Memory
        In the fact set's dtype (built from float64 copies), with ``kernel(x, z) = (x @ z.T) ** 2``
        and no ``features``.

    Raises
    ------
    ValueError
        Not a FactSet, keys off the sphere, or a ``require_unit_keys`` that is not a bool.

    References
    ----------
    Seed 001, eq. 8; Lemma B.2; App. A.3.2 (the exact-``K_2`` ``F``-sweep).
    """
    facts = _checked_facts(facts, as_bool(require_unit_keys, "require_unit_keys"))
    return ExactK2Memory(facts.keys.to(_F64).clone(), facts.targets.to(_F64).clone()).to(facts.keys.dtype)
