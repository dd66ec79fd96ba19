"""Attention noise: how far the MLP's input at the query position lies from the exact key.

Inside a Transformer the MLP is not queried with the stored key ``k_i`` but with the attention's
output at ``Q``, here the unit-normalised ``u`` of
:meth:`~assocmem.mlps.transformer.model.SSFRTransformer.mlp_input`. Definition 5.1 calls the
worst deviation the *attention noise ceiling*,

    eps_attn = max_i max_{q in Q_i} ||q - k_i||_2 ,

over every query ``q`` the attention can produce for key ``i``. :func:`attention_noise` measures
``||u - k_i||_2`` for every key and ``contexts_per_key`` sampled junk contexts and
:func:`noise_ceiling` takes the maximum: a lower estimate of ``eps_attn`` (the sampled contexts
are a subset of all of them), as in App. A.4.1.

Theorem 5.2 (eq. 11) asks for ``eps_attn <~ c0 / (L_bil sqrt(F log F / d))`` so that a bilinear MLP
with margin ``gamma_min > c0`` stays usable; :func:`noise_ceiling_bound` evaluates that right side
with its absolute constant set to 1 (the theorem fixes it only up to a constant), and
:func:`local_lipschitz` estimates ``L_bil`` by the spectral norm of the MLP's Jacobian at given
points (a lower bound on the Lipschitz constant over any set containing them).

Units: distances between unit vectors, in ``[0, 2]``; computed in float64 from the model's
``u`` (float32 by default, so a noise-free attention gives about ``1e-7``, not 0).

References
----------
Seed 001, Definition 5.1, Theorem 5.2 (eq. 11), App. A.4.1 (the noise sweep: ``J`` in
``{2, 4, 8, 16}``, ``V_J = J``), App. B.10.1 (eqs. 74-78, the formal noisy-margin statement).
"""

from __future__ import annotations

import math

import torch

from assocmem._checks import as_int, as_real
from assocmem.mlps._checks import float_tensor
from assocmem.mlps.mlp import BilinearMLP
from assocmem.mlps.transformer.model import SSFRTransformer
from assocmem.mlps.transformer.ssfr import SSFRTask, identity_map, ssfr_eval_batch

__all__ = [
    "attention_noise",
    "noise_ceiling",
    "noise_ceiling_bound",
    "local_lipschitz",
    "noisy_margin_threshold",
]


def attention_noise(model: SSFRTransformer, task: SSFRTask, contexts_per_key: int = 4,
                    seed: int = 0) -> torch.Tensor:
    """``||u - k_i||_2`` for every key ``i`` and ``contexts_per_key`` sampled junk contexts.

    ``u`` is the unit-normalised attention output at the query position (the MLP's input) and
    ``k_i`` the key's embedding row. The MLP plays no part (the noise is the attention's).

    Parameters
    ----------
    model : SSFRTransformer
    task : SSFRTask
        Must be the model's task.
    contexts_per_key : int, default 4
        ``C >= 1``.
    seed : int, default 0
        Seed of the junk (the same contexts as :func:`~assocmem.mlps.transformer.evaluation.ssfr_correct`
        with the same seed).

    Returns
    -------
    torch.Tensor, shape ``(F, C)``, float64, CPU
        Entries in ``[0, 2]``.

    Raises
    ------
    ValueError
        Not an SSFRTransformer, another task, ``C < 1`` or a non-integer seed.

    References
    ----------
    Seed 001, Definition 5.1 and App. A.4.1.
    """
    if not isinstance(model, SSFRTransformer):
        raise ValueError(f"model must be an SSFRTransformer; got {type(model).__name__}")
    if task != model.task:
        raise ValueError(f"task {task} is not the model's task {model.task}")
    batch = ssfr_eval_batch(task, identity_map(task), contexts_per_key, seed)
    n = batch.tokens.shape[0]
    rows = model.chunk_rows(n)
    out = torch.empty(n, dtype=torch.float64)
    keys = model.embedding[: task.num_facts].double()  # (F, d)
    with torch.no_grad():
        for s in range(0, n, rows):
            e = min(n, s + rows)
            u, _ = model._block(batch.tokens[s:e].to(model.device))  # (rows, d)
            diff = u.double() - keys[batch.keys[s:e].to(model.device)]
            out[s:e] = torch.linalg.vector_norm(diff, dim=1).cpu()
    return out.reshape(task.num_facts, contexts_per_key)


def noise_ceiling(model: SSFRTransformer, task: SSFRTask, contexts_per_key: int = 4, seed: int = 0) -> float:
    """The sampled attention-noise ceiling: the largest entry of :func:`attention_noise`.

    A lower estimate of Definition 5.1's ``eps_attn`` (a maximum over sampled contexts, every key).

    Raises
    ------
    ValueError
        As :func:`attention_noise`.
    """
    return float(attention_noise(model, task, contexts_per_key, seed).max())


def noise_ceiling_bound(c0: float, lipschitz: float, num_facts: int, d: int) -> float:
    """The right side of Theorem 5.2's condition (eq. 11) with its absolute constant set to 1.

    ``c0 / (L_bil sqrt(F ln F / d))``: the attention noise a bilinear MLP with margin
    ``gamma_min > c0`` and Lipschitz constant ``L_bil`` tolerates, up to the theorem's unknown
    absolute constant (eq. 78 has ``1 / (2 C_2)`` and ``ln(C_0 F^2 / delta)`` in place of ``ln F``).
    Only its scaling in ``F``, ``d``, ``c0`` and ``L_bil`` is a statement of the theorem.

    Parameters
    ----------
    c0 : float
        Margin floor, ``> 0`` (on the scale of the MLP's output).
    lipschitz : float
        ``L_bil``, ``> 0`` (same output scale, per unit input distance).
    num_facts : int
        ``F >= 2``.
    d : int
        ``d >= 1``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``c0`` or ``lipschitz`` not a finite real ``> 0``, ``F < 2`` or ``d < 1``.

    References
    ----------
    Seed 001, Theorem 5.2 (eq. 11) and App. B.10.1 (eq. 78).
    """
    c0 = as_real(c0, "c0", minimum=0.0, strict_min=True)
    L = as_real(lipschitz, "lipschitz", minimum=0.0, strict_min=True)
    F = as_int(num_facts, "num_facts", minimum=2)
    d = as_int(d, "d", minimum=1)
    return c0 / (L * math.sqrt(F * math.log(F) / d))


def noisy_margin_threshold(margin: float, lipschitz: float, num_facts: int, d: int, coherence: float,
                           delta: float = 0.05, c0: float = 2.0) -> float:
    """The noise below which Theorem B.62 (eq. 70) keeps every margin positive, with the proof's constants.

    Eq. 70 bounds the noisy margin by ``gamma_ij(k~_i) >= gamma_ij(k_i) - 2 (1 + mu_v) L eps -
    2 sqrt(2) L eps sqrt(F Lg / d)`` with ``Lg = ln(C0 F^2 / delta)``, simultaneously for all pairs
    with probability at least ``1 - delta``. It is the form of Theorem 5.2 / Corollaries B.63-B.65
    whose constants the proof states (eqs. 71-78 absorb them into unnamed ``C_1``, ``C_2``,
    ``c_0``): every constant is explicit but ``C0``, the union bound's, which the proof needs to be
    at least 2 (``F (F - 1)`` ordered pairs at ``delta / (C0 F^2)`` each must total at most
    ``delta / 2``). Solving ``margin - L eps (2 (1 + mu_v) + 2 sqrt(2 F Lg / d)) > 0`` for ``eps``:

        ``eps* = margin / (L (2 (1 + mu_v) + 2 sqrt(2) sqrt(F Lg / d)))``.

    Parameters
    ----------
    margin : float
        ``gamma_min(k) > 0``, the clean minimum margin (output scale).
    lipschitz : float
        ``L_bil > 0``, the Lipschitz constant in the query on the same output scale (eq. 69; the
        main text's eq. 11 calls it the MLP's Lipschitz constant).
    num_facts, d : int
        ``F >= 2``, ``d >= 1``.
    coherence : float
        ``mu_v`` in ``[0, 1]``: the largest ``|<v_i, v_j>|`` over distinct unit values.
    delta : float, default 0.05
        Failure probability in ``(0, 1)``.
    c0 : float, default 2.0
        The union bound's constant, ``>= 2`` for the proof to hold.

    Returns
    -------
    float
        ``eps*`` (a chord distance, the unit of Definition 5.1).

    Raises
    ------
    ValueError
        A non-positive or non-finite ``margin`` or ``lipschitz``, ``coherence`` outside ``[0, 1]``,
        ``delta`` outside ``(0, 1)``, ``c0 < 2``, ``F < 2`` or ``d < 1``.

    References
    ----------
    Seed 001, App. B.10.1: Theorem B.62 (eq. 70, and its proof), Corollaries B.63-B.65.
    """
    margin = as_real(margin, "margin", minimum=0.0, strict_min=True)
    L = as_real(lipschitz, "lipschitz", minimum=0.0, strict_min=True)
    F = as_int(num_facts, "num_facts", minimum=2)
    d = as_int(d, "d", minimum=1)
    mu = as_real(coherence, "coherence", minimum=0.0, maximum=1.0)
    delta = as_real(delta, "delta", minimum=0.0, maximum=1.0, strict_min=True)
    if delta >= 1.0:
        raise ValueError(f"delta must be in (0, 1); got {delta}")
    c0 = as_real(c0, "c0", minimum=2.0)
    log_term = math.log(c0 * F * F / delta)
    return margin / (L * (2 * (1 + mu) + 2 * math.sqrt(2) * math.sqrt(F * log_term / d)))


def local_lipschitz(mlp: torch.nn.Module, points: torch.Tensor) -> torch.Tensor:
    """Spectral norm of the MLP's Jacobian at each point: a local Lipschitz constant.

    For the bilinear MLP ``B((A x) * (G x))`` the Jacobian is ``B (diag(G x) A + diag(A x) G)``,
    formed in closed form; other modules go through :func:`torch.autograd.functional.jacobian`
    one point at a time. The maximum over points is a lower bound on ``L_bil`` over any set that
    contains them.

    Parameters
    ----------
    mlp : torch.nn.Module
        Maps ``(n, d) -> (n, d_c)``.
    points : torch.Tensor, shape ``(n, d)``
        Finite; e.g. the stored keys or the attention's outputs.

    Returns
    -------
    torch.Tensor, shape ``(n,)``, float64, CPU

    Raises
    ------
    ValueError
        Points that are not a finite 2-D real tensor, or whose width is not the MLP's input width.

    References
    ----------
    Seed 001, App. B.10.1 (the Lipschitz constant ``L_bil`` of eq. 69).
    """
    x = float_tensor(points, "points", 2).double()
    width = _input_width(mlp)
    if width is not None and x.shape[1] != width:
        raise ValueError(f"points must have shape (n, d) with d = {width}, the MLP's input width; "
                         f"got {tuple(x.shape)}")
    if isinstance(mlp, BilinearMLP):
        A, G, B = (w.detach().double().cpu() for w in (mlp.A, mlp.G, mlp.B))
        x = x.cpu()
        ax, gx = x @ A.T, x @ G.T  # (n, m)
        m, d = A.shape
        rows = max(1, (1 << 22) // (m * d))
        out = torch.empty(x.shape[0], dtype=torch.float64)
        for s in range(0, x.shape[0], rows):
            e = min(x.shape[0], s + rows)
            M = gx[s:e, :, None] * A + ax[s:e, :, None] * G  # (rows, m, d): d(Ax * Gx)/dx
            out[s:e] = torch.linalg.matrix_norm(B @ M, ord=2)  # (rows, d_c, d) Jacobians
        return out
    dev = next(iter(mlp.parameters()), x).device
    dt = next(iter(mlp.parameters()), x).dtype
    out = torch.empty(x.shape[0], dtype=torch.float64)
    for i in range(x.shape[0]):
        try:
            J = torch.autograd.functional.jacobian(lambda z: mlp(z.unsqueeze(0)).squeeze(0),
                                                   x[i].to(device=dev, dtype=dt))
        except RuntimeError as exc:
            raise ValueError(f"the MLP fails on a point of width {x.shape[1]}: {exc}") from None
        out[i] = torch.linalg.matrix_norm(J.double().cpu(), ord=2)
    return out


def _input_width(mlp) -> int | None:
    """The MLP's input width where it declares one (``config.d`` or the columns of ``A``), else None."""
    width = getattr(getattr(mlp, "config", None), "d", None)
    if width is None and isinstance(getattr(mlp, "A", None), torch.Tensor):
        width = mlp.A.shape[1]
    return None if width is None else int(width)
