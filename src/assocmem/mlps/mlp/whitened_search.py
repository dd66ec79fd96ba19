"""Whitened capacity search that reuses features and Gram matrices across the widths it probes.

The capacity search of :mod:`assocmem.mlps.capacity_sweeps` asks, width after width, whether
the whitened Hebbian MLP of Algorithm 1 (``hebbian_mlp(facts, m, "full", ridge=1e-6, seed)``)
stores every fact. Built from scratch, each probe draws new weights and forms the features
``Phi`` ``(F, m)``, the Gram matrix ``Phi^T Phi`` and its Cholesky factor again. With the
*nested* draw of the unit weights (``draw="nested"`` of
:func:`~assocmem.mlps.mlp.hebbian.hebbian_mlp`: width ``m``'s ``A_bar, G_bar`` are the first
``m`` rows of every larger width's) the work of one probe is largely the work of the next:

* the unscaled features ``Psi = (K A_bar^T) * (K G_bar^T)`` ``(F, M)`` of the largest width
  ``M`` built so far hold every smaller width's as their first ``m`` columns, and
  ``Phi_m = Psi[:, :m] / sqrt(m)`` (Algorithm 1 scales ``A = m^{-1/4} A_bar``);
* the unscaled Gram matrix ``Psi^T Psi`` ``(M, M)`` holds every smaller width's as its leading
  block, and the right-hand side ``Psi^T C_f`` ``(M, d_c)`` its first rows.

:class:`NestedWhitenedCache` keeps those three and extends them block-wise when the search asks
for a larger width (only the new feature columns, the new Gram block rows and the new right-hand
side rows are computed); a smaller width is answered from their leading blocks. What it cannot
reuse is the Cholesky factor. The primal system of width ``m`` is
``S_m = Phi_m^T Phi_m + F lambda I = (Psi_m^T Psi_m + m F lambda I) / m``: with the
``m^{-1/4}`` scaling of Algorithm 1 and a ridge on the feature covariance (eq. 13) the shift of
the unscaled Gram block grows with ``m``, so ``S_m`` is *not* the leading block of ``S_M`` (up
to a scale) and the leading ``m x m`` block of ``chol(S_M)`` is not ``chol(S_m)``. Reusing it
would change the readout (the ridge) and hence, at marginal widths, the answer. Each probe
therefore factors its own ``m x m`` system: ``m^3 / 3`` flops, about a ninth of what the
features and the Gram matrix it saves cost (``4 F m d + F m^2`` at ``d = 64``, ``F = 1024``,
``m = 512``). What remains per probe is that factorisation, two triangular solves, the outputs
``Phi_m B^T`` and the scores against every value row (``2 F V d`` flops, the largest part at
that size). Widths ``m > F`` take the dual branch (eq. 14) on the cached features, with their
own ``F x F`` Gram matrix.

:func:`whitened_nested_search` is that search (the galloping search of
:func:`assocmem.sweeps.smallest_width`), what ``capacity_search(facts, "whitened", seed,
draw="nested")`` runs; :func:`whitened_nested_search_reference` is its plain reference (the
library's convention: ``<fast path>_reference`` in the same module): the same search path, every
width built from scratch by :func:`~assocmem.mlps.mlp.hebbian.hebbian_mlp_reference` with the
same nested draw (whole Gram matrix, one ``torch.linalg.solve``) and scored by
:func:`~assocmem.mlps.margins.accuracy`. Both answer the same width when their accuracies agree
at every probed width (tested on a capacity fact set). The default ``draw="block"`` of the
builders and of :func:`~assocmem.mlps.capacity_sweeps.capacity_search` (every committed result)
is untouched: the nested draw is another sample of the same construction, so a search with it
can end at a different width.

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): Algorithm 1
(App. B.2.3), App. B.2.4 (eqs. 12-14), App. A.1.1 (the whitened variant, ridge ``1e-6``),
App. A.3.1 (the capacity protocol).
"""

from __future__ import annotations

import torch

from assocmem._checks import positive_int as _positive_int, seed_int
from assocmem.benchmarking import load_capped_threads
from assocmem.mlps._checks import check_finite_result
from assocmem.mlps.facts import FactSet
from assocmem.mlps.margins.decoding import accuracy, accuracy_from_outputs
from assocmem.mlps.mlp._common import (_F64, NESTED_CHUNK, _checked_facts, _nested_chunk,
                                       _nonneg_float)
from assocmem.mlps.mlp.architectures import _stacked_features
from assocmem.mlps.mlp.hebbian import hebbian_mlp_reference
from assocmem.mlps.mlp.readout import _check_gram, _cholesky, hebbian_readout
from assocmem.sweeps.search import SearchResult, smallest_width

__all__ = [
    "NestedWhitenedCache",
    "whitened_nested_search",
    "whitened_nested_search_reference",
]

#: Row panels of the Gram extension: at least this many rows per GEMM.
_GRAM_PANEL_MIN = 128


def _round_up(m: int) -> int:
    return -(-m // NESTED_CHUNK) * NESTED_CHUNK


def _float64_facts(facts: FactSet) -> FactSet:
    """The fact set, checked (keys on the sphere), with float64 keys and values."""
    facts = _checked_facts(facts, True)
    return FactSet(facts.keys.to(_F64), facts.values.to(_F64), facts.mapping, unit_norm=False)


class NestedWhitenedCache:
    """Whitened Hebbian MLPs of every width from one nested draw, sharing features and Gram matrix.

    Width ``m`` is ``hebbian_mlp(facts, m, "full", ridge, seed, draw="nested")`` (Algorithm 1,
    whitened readout, eq. 13 for ``m <= F`` and eq. 14 above): :meth:`readout` returns its
    readout ``B`` and :meth:`accuracy` its accuracy on the stored keys, both without rebuilding
    what a larger width already built. Internally, on the fact set's device, in float64: the
    unscaled features ``Psi`` ``(F, M)`` (``Psi[:, r] = (K a_r) * (K g_r)`` for the unit rows
    ``a_r, g_r``), their Gram matrix ``Psi^T Psi`` (lower triangle, ``min(M, F)`` square) and
    ``Psi^T C_f`` ``(M, d_c)``, for the largest width ``M`` asked so far rounded up to the draw's
    64-row chunks. A larger width extends the three by the new columns / block rows only; every
    width factors its own system (the ridge does not nest; see the module docstring).

    Precision: everything, the outputs and the scores included, is float64, so :meth:`accuracy`
    is the accuracy of the float64 construction. ``hebbian_mlp`` returns its module in the fact
    set's dtype; for a float32 fact set (torch's default dtype, e.g. the capacity sweep's) that
    module's accuracy can differ from this one on a fact whose margin is within float32 rounding.
    The reference search scores the float64 module for the same reason.

    Memory: ``F M + min(M, F)^2 + M (2 d + d_c)`` float64 entries for the largest width ``M``
    asked (at ``F = 1024``, ``M = 1024``: 16 MiB).

    Parameters
    ----------
    facts : FactSet
        Keys ``(F, d)`` on the unit sphere, values ``(V, d)``, mapping ``(F,)`` (any float dtype;
        the computation runs in float64 on the keys' device).
    seed : int, default 0
        Seed of the nested draw of ``A_bar, G_bar`` (a CPU generator, as in ``hebbian_mlp``).
    ridge : float, default 1e-6
        ``lambda >= 0`` of eqs. 13-14 (``0`` allowed; a singular system then raises).

    Raises
    ------
    ValueError
        Not a FactSet, keys off the sphere, a seed that is not an integer, or a ridge that is
        negative, non-finite or not a real number; from :meth:`readout` and :meth:`accuracy`, a
        width that is not an integer ``>= 1`` or a singular system with ``ridge = 0``.

    References
    ----------
    Seed 001, Algorithm 1 (App. B.2.3), App. B.2.4 (eqs. 12-14), App. A.1.1.
    """

    def __init__(self, facts: FactSet, seed: int = 0, ridge: float = 1e-6) -> None:
        self.facts = _float64_facts(facts)
        self.ridge = _nonneg_float("ridge", ridge)
        self.seed = seed_int(seed)
        self._gen = torch.Generator(device="cpu").manual_seed(self.seed)
        self._K = self.facts.keys.to(_F64)  # (F, d)
        self._C = self.facts.targets.to(_F64)  # (F, d_c)
        F, d = self._K.shape
        dev = self._K.device
        self._Abar = torch.empty(0, d, dtype=_F64, device=dev)  # (M, d) unit rows drawn so far
        self._Gbar = torch.empty(0, d, dtype=_F64, device=dev)  # (M, d)
        self._Psi = torch.empty(F, 0, dtype=_F64, device=dev)  # (F, M) unscaled features
        self._P = torch.empty(0, self._C.shape[1], dtype=_F64, device=dev)  # (M, d_c) Psi^T C
        self._S = torch.empty(0, 0, dtype=_F64, device=dev)  # (n, n) Psi^T Psi, lower, n <= F

    @property
    def width(self) -> int:
        """The number of feature columns built so far (a multiple of 64, ``0`` before any call)."""
        return self._Psi.shape[1]

    @property
    def gram_width(self) -> int:
        """The order of the Gram matrix built so far (at most ``F``)."""
        return self._S.shape[0]

    def _extend_features(self, m: int) -> None:
        """Features, unit rows and ``Psi^T C`` up to width ``round_up(m, 64)``."""
        M0 = self.width
        if m <= M0:
            return
        M1 = _round_up(m)
        pieces = [_nested_chunk(self._gen, self._K.shape[1]) for _ in range((M1 - M0) // NESTED_CHUNK)]
        dev = self._K.device
        Anew = torch.cat([a for a, _ in pieces]).to(dev)  # (M1 - M0, d)
        Gnew = torch.cat([g for _, g in pieces]).to(dev)
        Psi_new = _stacked_features(self._K, torch.cat((Anew, Gnew)))  # (F, M1 - M0)
        check_finite_result(Psi_new, "the features (K A_bar^T) * (K G_bar^T)")
        self._Abar = torch.cat((self._Abar, Anew))
        self._Gbar = torch.cat((self._Gbar, Gnew))
        self._Psi = torch.cat((self._Psi, Psi_new), dim=1)  # (F, M1)
        self._P = torch.cat((self._P, Psi_new.T @ self._C))  # (M1, d_c)

    def _extend_gram(self, m: int) -> None:
        """The lower triangle of ``Psi^T Psi`` up to order ``min(round_up(m, 64), F)``, block rows only."""
        n0 = self.gram_width
        if m <= n0:
            return
        n1 = min(_round_up(m), self._K.shape[0])
        self._extend_features(n1)
        S = torch.zeros(n1, n1, dtype=_F64, device=self._K.device)  # (n1, n1)
        S[:n0, :n0] = self._S
        Psi = self._Psi
        b = max(_GRAM_PANEL_MIN, (n1 - n0) // 4)
        for i in range(n0, n1, b):  # block row [i, e): Psi[:, i:e]^T Psi[:, :e], the lower part
            e = min(i + b, n1)
            torch.mm(Psi[:, i:e].T, Psi[:, :e], out=S[i:e, :e])  # (e - i, e)
        # above the diagonal blocks S stays zero; only the lower triangle is ever read
        self._S = S

    def features(self, m: int) -> torch.Tensor:
        """``Phi`` ``(F, m)`` float64 of width ``m``: ``Psi[:, :m] / sqrt(m)`` (a new tensor).

        Raises
        ------
        ValueError
            A width that is not an integer ``>= 1``.
        """
        m = _positive_int("m", m)
        self._extend_features(m)
        return self._Psi[:, :m] * m ** -0.5

    def unit_weights(self, m: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(A_bar, G_bar)``, each ``(m, d)`` float64: the nested draw's first ``m`` unit rows (copies).

        Bit for bit those of ``hebbian_mlp(..., draw="nested")`` at width ``m`` before its scaling
        by ``m^{-1/4}``.

        Raises
        ------
        ValueError
            A width that is not an integer ``>= 1``.
        """
        m = _positive_int("m", m)
        self._extend_features(m)
        return self._Abar[:m].clone(), self._Gbar[:m].clone()

    def readout(self, m: int) -> torch.Tensor:
        """The whitened readout ``B`` ``(d_c, m)`` float64 of width ``m`` (eq. 13 or 14).

        ``m <= F`` (primal): ``S = G_m / m + F lambda I`` from the leading block ``G_m`` of the
        cached Gram matrix, its Cholesky factor ``L`` and ``B = (Psi_m^T C_f / sqrt(m))^T L^{-T}
        L^{-1}`` by two triangular solves. ``m > F`` (dual):
        ``B = sqrt(m) C_f^T (Psi_m Psi_m^T + m lambda I)^{-1} Psi_m``, which is eq. 14 for
        ``Phi_m = Psi_m / sqrt(m)``, by :func:`~assocmem.mlps.mlp.readout.hebbian_readout`.
        Equal to ``hebbian_mlp(facts, m, "full", ridge, seed, draw="nested").B`` up to the
        system's conditioning times float64 rounding (tested).

        Raises
        ------
        ValueError
            A width that is not an integer ``>= 1``; a singular system with ``ridge = 0``; a
            readout that overflows float64.
        """
        m = _positive_int("m", m)
        F = self._K.shape[0]
        self._extend_features(m)
        if m > F:
            B = hebbian_readout(self._Psi[:, :m], self._C, "full", m * self.ridge, "dual")
            return B.mul_(m ** 0.5)  # (d_c, m)
        self._extend_gram(m)
        S = self._S[:m, :m] * (1.0 / m)  # (m, m): Phi^T Phi, lower triangle read
        S.diagonal().add_(F * self.ridge)
        _check_gram(S, "primal Gram matrix Phi^T Phi")
        L = _cholesky(S, self.ridge, "primal whitening (m x m)")  # may reuse S's storage
        R = self._P[:m].T * m ** -0.5  # (d_c, m): C^T Phi = F B0
        Y = torch.linalg.solve_triangular(L.mT, R, upper=True, left=False)  # R L^{-T}
        B = torch.linalg.solve_triangular(L, Y, upper=False, left=False)  # R S^{-1}
        return check_finite_result(B, "the whitened readout")

    def accuracy(self, m: int) -> float:
        """Accuracy of width ``m`` on the stored keys (strict argmax over every value row).

        The outputs ``Phi_m B^T = Psi_m B^T / sqrt(m)`` ``(F, d_c)`` from the cached features,
        scored by :func:`~assocmem.mlps.margins.accuracy_from_outputs` (Definition 2.1).

        Raises
        ------
        ValueError
            As :meth:`readout`.
        """
        B = self.readout(m)
        m = B.shape[1]
        outputs = (self._Psi[:, :m] @ B.T).mul_(m ** -0.5)  # (F, d_c)
        return accuracy_from_outputs(outputs, self.facts)


def whitened_nested_search(facts: FactSet, seed: int = 0, *, lo: int = 1, hi: int = 65536,
                           verify: int = 2, target: float = 1.0,
                           ridge: float = 1e-6) -> SearchResult:
    """Smallest width at which the whitened Hebbian MLP (nested draw) stores every fact.

    :func:`assocmem.sweeps.smallest_width` (gallop, bisection, verification) over the widths of
    one :class:`NestedWhitenedCache`: width ``m`` is ``hebbian_mlp(facts, m, "full", ridge, seed,
    draw="nested")`` scored by :func:`~assocmem.mlps.margins.accuracy`, and each probe reuses the
    features, Gram matrix and right-hand side of the largest width built so far. Each probe runs
    with torch's threads capped at the free cores
    (:func:`assocmem.benchmarking.load_capped_threads`), as :func:`capacity_search` does.

    Parameters
    ----------
    facts : FactSet
        Keys on the unit sphere.
    seed : int, default 0
        Seed of the nested draw.
    lo, hi : int, default 1 and 65536
    verify : int, default 2
    target : float, default 1.0
        As in :func:`assocmem.sweeps.smallest_width`.
    ridge : float, default 1e-6
        ``lambda`` of eqs. 13-14 (App. A.1.1's ``1e-6``).

    Returns
    -------
    SearchResult
        As :func:`assocmem.sweeps.smallest_width`.

    Raises
    ------
    ValueError
        What :class:`NestedWhitenedCache` or :func:`~assocmem.sweeps.smallest_width` rejects
        (a bad fact set, seed, ridge, range, ``verify`` or ``target``).

    References
    ----------
    Seed 001, App. A.3.1 (capacity protocol), Algorithm 1 and eqs. 12-14.
    """
    cache = NestedWhitenedCache(facts, seed, ridge)

    def accuracy_at(m: int) -> float:
        with load_capped_threads():
            return cache.accuracy(m)

    return smallest_width(accuracy_at, lo=lo, hi=hi, target=target, verify=verify)


def whitened_nested_search_reference(facts: FactSet, seed: int = 0, *, lo: int = 1,
                                     hi: int = 65536, verify: int = 2, target: float = 1.0,
                                     ridge: float = 1e-6) -> SearchResult:
    """Plain reference for :func:`whitened_nested_search`: every width built from scratch.

    The same search (:func:`assocmem.sweeps.smallest_width` with the same range, ``verify`` and
    ``target``, so the same widths in the same order while the accuracies agree), each width
    built by :func:`~assocmem.mlps.mlp.hebbian.hebbian_mlp_reference` with ``draw="nested"``
    (whole Gram matrix, one ``torch.linalg.solve``; nothing kept between widths) and scored by
    :func:`~assocmem.mlps.margins.accuracy` on the model's forward pass, in float64 (the fact set
    is cast to float64 first, as the fast search computes). No thread policy.

    Parameters
    ----------
    As :func:`whitened_nested_search` (``ridge`` must be ``> 0``: the plain solve has no rank
    check).

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        A bad fact set, seed, range, ``verify`` or ``target``, or a ridge that is not a finite
        real ``> 0``.

    References
    ----------
    Seed 001, App. A.3.1, Algorithm 1 and eqs. 12-14.
    """
    lam = _nonneg_float("ridge", ridge)
    if lam == 0:
        raise ValueError("the reference search needs a positive ridge (the paper uses 1e-6)")
    facts = _float64_facts(facts)
    seed = seed_int(seed)

    def accuracy_at(m: int) -> float:
        return accuracy(hebbian_mlp_reference(facts, m, lam, seed, draw="nested"), facts)

    return smallest_width(accuracy_at, lo=lo, hi=hi, target=target, verify=verify)
