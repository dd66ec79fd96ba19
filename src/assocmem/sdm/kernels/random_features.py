"""Binary random features: neuron-view SDM as linear attention with the feature map of the ball.

An SDM with ``r`` neurons maps an address to the binary features ``phi_tau(x) = 1[d(x, x_tau)
<= d]``, one per neuron (:func:`binary_random_features`); its read is then normalised linear
attention ``phi(q)^T S / phi(q)^T z`` (Katharopoulos et al. 2020) with the storage ``S`` and the
counters ``z`` of the neurons (:func:`sdm_as_linear_attention`, computed with
:func:`assocmem.linear.attention.linear_attention`). For uniform random neurons
``phi(xi)^T phi(p)`` is binomial with mean ``I(d(xi, p), d, n) r / 2^n``, the circle
intersection of Bricken & Pehlevan (2021), Eq. 2: a random-feature approximation of the ball
kernel, as the Performers' positive features approximate the softmax kernel (Choromanski et al.
2021; seed 002, "Connections"). :func:`shared_feature_counts` and :func:`feature_kernel_mc`
test the mean by Monte Carlo; :func:`neurons_for_precision` gives the neurons a weight of a given
relative precision needs (seed 002, claim C16). Used by chapter 35.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from assocmem._checks import as_int as _as_int
from assocmem._checks import as_real
from assocmem.linear.attention import linear_attention
from assocmem.sdm._common import _binary, _finish_read, _generator
from assocmem.sdm.geometry.intersection import circle_intersection
from assocmem.sdm.kernels._common import _check_d, _check_n
from assocmem.sdm.read._checks import _real
from assocmem.sdm.read.hamming import pairwise_hamming

if TYPE_CHECKING:
    from assocmem._typing import ArrayLike, Seed
    from collections.abc import Iterable

__all__ = [
    "binary_random_features",
    "sdm_as_linear_attention",
    "shared_feature_counts",
    "feature_kernel_mc",
    "neurons_for_precision",
]

_MC_CHUNK = 50  # neuron draws processed together in shared_feature_counts


def binary_random_features(x: ArrayLike, neuron_addresses: ArrayLike, d: int) -> torch.Tensor:
    """The SDM feature map ``phi_tau(x) = 1[d(x, x_tau) <= d]`` for ``r`` neurons.

    Parameters
    ----------
    x : torch.Tensor or array_like, shape ``(..., n)``
        Binary addresses.
    neuron_addresses : torch.Tensor or array_like, shape ``(r, n)``
        Binary neuron addresses (random for SDM; all ``2^n`` for the exhaustive memory).
    d : int
        Radius, ``0 <= d <= n``.

    Returns
    -------
    torch.Tensor, shape ``(..., r)``, float64, entries 0.0 or 1.0, on ``x``'s device

    Raises
    ------
    ValueError
        On non-binary entries, mismatched ``n`` or ``d`` outside ``[0, n]``.

    References
    ----------
    Seed 002, "Connections" (binary random features); Bricken & Pehlevan (2021), §1; Kanerva
    (1988), Ch. 7.
    """
    x = _binary(x, "x")
    n = x.shape[-1]
    d = _check_d(d, n)
    return (pairwise_hamming(x, neuron_addresses) <= d).to(torch.float64)  # (..., r)


def sdm_as_linear_attention(query: ArrayLike, addresses: ArrayLike, pointers: ArrayLike,
                            neuron_addresses: ArrayLike, d: int, d_read: int | None = None,
                            threshold: bool = False, empty: str = "nan") -> torch.Tensor:
    """Neuron-view SDM computed as normalised linear attention with the binary feature map.

    Keys ``phi_w(p_a^mu)``, values ``p_p^mu``, query ``phi_r(xi)``:

        xi_new = g( phi_r(xi)^T S / phi_r(xi)^T z ),  S = sum_mu phi_w(p_a^mu) p_p^mu^T,
                                                     z = sum_mu phi_w(p_a^mu),

    the normalised linear attention of Katharopoulos et al. (2020). ``S`` is the neurons' storage
    (``NeuronSDM.storage``) and ``z`` their counters. The numerator and the normaliser are both
    computed with :func:`assocmem.linear.attention.linear_attention` (non-causal, parallel form), the
    normaliser as linear attention with all-ones values.

    Parameters
    ----------
    query : torch.Tensor or array_like, shape ``(..., n)``
        Binary read addresses.
    addresses : torch.Tensor or array_like, shape ``(m, n)``
        Binary pattern addresses (the keys before the feature map), ``m >= 1``.
    pointers : torch.Tensor or array_like, shape ``(m, n_p)``
        Pointers (the values).
    neuron_addresses : torch.Tensor or array_like, shape ``(r, n)``
        Binary neuron addresses.
    d : int
        Write radius (and read radius unless ``d_read`` is given), ``0 <= d <= n``.
    d_read : int, optional
        A separate read radius (App. B.6 sets the write radius to 0). Default ``d``.
    threshold : bool, default False
        Apply the majority threshold ``g``.
    empty : {"nan", "query", "raise"}, default "nan"
        For a query sharing no neuron with any pattern, as in :func:`assocmem.sdm.sdm_read`.

    Returns
    -------
    torch.Tensor, shape ``(..., n_p)``
        Computed in float64, returned in the query's dtype if it is floating point, else in
        torch's default dtype. With integer pointers, equal bit for bit to
        :meth:`assocmem.sdm.NeuronSDM.read` on the same neurons (every sum is of integers below
        ``2^53``).

    Raises
    ------
    ValueError
        On non-binary addresses, float16/bfloat16 inputs, non-finite pointers, mismatched
        shapes, radii outside ``[0, n]``, an unknown ``empty``, or an empty row with
        ``empty="raise"``.

    References
    ----------
    Seed 002, "Neuron-view SDM is linear attention with a fixed binary feature map";
    Katharopoulos et al. (2020), Eq. 6; Bricken & Pehlevan (2021), Eq. 1.
    """
    query = _binary(query, "query")
    addresses = _binary(addresses, "addresses").to(query.device)
    neurons = _binary(neuron_addresses, "neuron_addresses").to(query.device)
    pointers = _real(pointers, "pointers").to(device=query.device, dtype=torch.float64)
    n = query.shape[-1]
    if addresses.ndim != 2 or addresses.shape[1] != n or addresses.shape[0] < 1:
        raise ValueError(f"addresses must have shape (m, n) = (m, {n}) with m >= 1, got {tuple(addresses.shape)}")
    if neurons.ndim != 2 or neurons.shape[1] != n or neurons.shape[0] < 1:
        raise ValueError(f"neuron_addresses must have shape (r, n) = (r, {n}), got {tuple(neurons.shape)}")
    if pointers.ndim != 2 or pointers.shape[0] != addresses.shape[0]:
        raise ValueError(f"pointers must have shape (m, n_p) with m = {addresses.shape[0]}, got "
                         f"{tuple(pointers.shape)}")
    d = _check_d(d, n)
    d_read = d if d_read is None else _check_d(d_read, n)
    lead = query.shape[:-1]
    q = binary_random_features(query.reshape(-1, n), neurons, d_read)  # (Q, r)
    k = binary_random_features(addresses, neurons, d)  # (m, r)
    num = linear_attention(q, k, pointers, causal=False)  # (Q, n_p) = phi(xi)^T S
    den = linear_attention(q, k, torch.ones_like(pointers[:, :1]), causal=False)  # (Q, 1) = phi(xi)^T z
    num, den = num.reshape(*lead, -1), den.reshape(*lead, 1)
    return _finish_read(num, den, query, threshold, empty)


def _check_dvs(dvs, n: int) -> list[int]:
    """Distances ``dvs`` as a list of ints in ``[0, n]`` (``dv`` named in the message)."""
    if isinstance(dvs, (str, bytes)) or not hasattr(dvs, "__iter__"):
        raise ValueError(f"dvs must be an iterable of distances, got {dvs!r}")
    out = []
    for v in dvs:
        v = _as_int(v, "dv")
        if v < 0 or v > n:
            raise ValueError(f"a distance dv must lie in [0, n] = [0, {n}], got {v}")
        out.append(v)
    return out


def shared_feature_counts(dvs: Iterable[int], d: int, n: int, r: int, draws: int,
                          seed: int = 0) -> np.ndarray:
    """``phi(xi)^T phi(p)`` for fresh random neurons, a fresh query and patterns at given distances.

    Each draw samples ``r`` neuron addresses uniformly from ``{0, 1}^n``, a uniform query ``xi``
    and, for each ``dv``, a pattern at distance exactly ``dv`` from it (the first ``dv`` positions
    of one random order flipped, so the patterns of one draw are nested), and counts the neurons
    within ``d`` of both, ``phi(xi)^T phi(p)`` with ``phi`` the feature map of
    :func:`binary_random_features` (evaluated in batch through the bipolar identity
    ``s(x)^T s(x_tau) = n - 2 d(x, x_tau)``). Given ``xi`` and ``p``, each neuron is in both balls
    with probability ``I(dv, d, n) / 2^n``, so every column is i.i.d. ``Binomial(r, I / 2^n)``
    across draws, with mean ``I r / 2^n``; columns of one draw share neurons and are correlated.

    Parameters
    ----------
    dvs : iterable of int
        Distances in ``[0, n]``.
    d : int
        Radius, ``0 <= d <= n``.
    n : int
        Dimension, ``n >= 1``.
    r : int
        Neurons per draw, ``>= 1``.
    draws : int
        Independent neuron draws, ``>= 1``.
    seed : int, default 0
        Seed of the CPU ``torch.Generator``.

    Returns
    -------
    numpy.ndarray, shape ``(draws, len(dvs))``, int64

    Raises
    ------
    ValueError
        If a size is out of range, ``dvs`` is not an iterable of integers in ``[0, n]``, or
        ``seed`` is not an integer in ``[-2^63, 2^64 - 1]``.

    References
    ----------
    Seed 002, "Connections" (``E[phi(xi)^T phi(p)] = I r / 2^n``); Bricken & Pehlevan (2021),
    §1 and Fig. 11.
    """
    n = _check_n(n)
    d = _check_d(d, n)
    dv_list = _check_dvs(dvs, n)
    r, draws = _as_int(r, "r"), _as_int(draws, "draws")
    if not dv_list or r < 1 or draws < 1:
        raise ValueError(f"need at least one distance, r >= 1 and draws >= 1; got {len(dv_list)}, {r}, {draws}")
    gen = _generator(seed)
    dv_t = torch.tensor(dv_list, dtype=torch.int64)  # (D,)
    out = []
    for start in range(0, draws, _MC_CHUNK):
        b = min(_MC_CHUNK, draws - start)
        neurons = torch.randint(0, 2, (b, r, n), generator=gen, dtype=torch.uint8)  # (b, r, n)
        xi = torch.randint(0, 2, (b, 1, n), generator=gen, dtype=torch.uint8)  # (b, 1, n)
        # a pattern at distance dv flips the first dv positions of a random order (nested in dv)
        rank = torch.rand(b, n, generator=gen, dtype=torch.float64).argsort(-1).argsort(-1)  # (b, n)
        flip = (rank[:, None, :] < dv_t[None, :, None]).to(torch.uint8)  # (b, D, n)
        ps = xi ^ flip  # (b, D, n)
        s_neur = 2.0 * neurons.to(torch.float64) - 1.0  # (b, r, n)
        # phi_tau(x) = 1[d(x, x_tau) <= d]  <=>  s(x)^T s(x_tau) >= n - 2d  (exact in float64)
        f_xi = ((2.0 * xi.to(torch.float64) - 1.0) @ s_neur.transpose(1, 2)) >= n - 2 * d  # (b, 1, r)
        f_p = ((2.0 * ps.to(torch.float64) - 1.0) @ s_neur.transpose(1, 2)) >= n - 2 * d  # (b, D, r)
        out.append((f_p & f_xi).sum(-1))  # (b, D)
    return torch.cat(out).numpy().astype(np.int64)


def feature_kernel_mc(dvs: Iterable[int], d: int, n: int, r: int, draws: int,
                      seed: int = 0) -> pd.DataFrame:
    """Monte Carlo mean of ``phi(xi)^T phi(p)`` against the exact ``I r / 2^n``, per distance.

    Parameters
    ----------
    dvs, d, n, r, draws, seed
        As in :func:`shared_feature_counts`.

    Returns
    -------
    pandas.DataFrame
        One row per ``dv`` with columns ``dv``, ``mean`` (sample mean), ``se`` (standard error,
        sample standard deviation over ``sqrt(draws)``), ``exact`` (``I r / 2^n``, exact
        rational rounded once), ``binomial_se`` (``sqrt(r q (1 - q) / draws)``, ``q = I / 2^n``),
        ``z`` (``(mean - exact) / binomial_se``; 0 where ``q = 0``), ``all_integer`` and
        ``distinct`` (number of distinct count values seen). With ``draws = 1`` the sample
        standard deviation, hence ``se``, is undefined and NaN.

    Raises
    ------
    ValueError
        As :func:`shared_feature_counts`.

    References
    ----------
    Seed 002, "Connections"; Bricken & Pehlevan (2021), §1.
    """
    dv_list = _check_dvs(dvs, _check_n(n))  # a list: a generator would be empty the second time
    counts = shared_feature_counts(dv_list, d, n, r, draws, seed)
    rows = []
    for j, dv in enumerate(dv_list):
        c = counts[:, j].astype(np.float64)
        q = Fraction(circle_intersection(dv, d, n), 1 << n)
        exact = float(q * r)
        bse = math.sqrt(float(r * q * (1 - q)) / counts.shape[0])
        se = c.std(ddof=1) / math.sqrt(len(c)) if len(c) > 1 else math.nan
        rows.append(dict(dv=dv, mean=c.mean(), se=se, exact=exact,
                         binomial_se=bse, z=(c.mean() - exact) / bse if bse > 0 else 0.0,
                         all_integer=bool(np.all(counts[:, j] == np.round(counts[:, j]))),
                         distinct=int(np.unique(counts[:, j]).size)))
    return pd.DataFrame(rows)


def neurons_for_precision(dv: int, d: int, n: int, rel_sd: float) -> float:
    """Neurons ``r`` for which the shared-neuron count at distance ``dv`` has relative SD ``rel_sd``.

    The count is ``Binomial(r, q)``, ``q = I(dv, d, n) / 2^n``, with relative standard deviation
    ``sqrt((1 - q) / (r q))``; solving for ``r`` gives ``(1 - q) / (q rel_sd^2)``.

    Parameters
    ----------
    dv, d, n : int
        Distance, radius, dimension (``I(dv, d, n) > 0`` needed, i.e. ``dv <= 2d``).
    rel_sd : float
        Target relative standard deviation, ``> 0``.

    Returns
    -------
    float
        ``r`` (not rounded).

    Raises
    ------
    ValueError
        If ``I(dv, d, n) = 0``, or ``rel_sd`` is not a finite real number ``> 0`` (booleans
        and strings are refused).

    References
    ----------
    Seed 002, claim C16 and "Bearing on the record" (biologically sized ``r``).
    """
    I = circle_intersection(dv, d, n)
    if I == 0:
        raise ValueError(f"I({dv}, {d}, {n}) = 0: no number of neurons gives this pattern a weight")
    s = as_real(rel_sd, "rel_sd")  # refuses booleans, strings, NaN and infinities
    if not s > 0:
        raise ValueError(f"rel_sd must be a finite positive number, got {rel_sd!r}")
    q = Fraction(I, 1 << _check_n(n))
    return float((1 - q) / q) / (s * s)
