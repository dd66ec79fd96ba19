"""The gradient-descent baseline: a bilinear gated MLP trained by full-batch Adam.

:func:`train_mlp` trains a :class:`~assocmem.mlps.mlp.architectures.BilinearMLP` without biases from
``nn.Linear``'s default initialisation, with Adam and a cosine-annealed learning rate, one full
batch per epoch, on the cross-entropy of the value logits (the criterion of the capacity sweeps) or
the mean squared error to the targets (editing), stopping early at a loss tolerance or at full
accuracy. Source: seed 001, App. A.1.1 ("GD"), App. A.3.1 (the capacity protocol), App. A.4.5
("GD MLP Setup"). Used by chapter 10 ("Facts, margins and the counting bound") and chapter 13
("Facts per parameter", through :mod:`assocmem.mlps.capacity_sweeps`).

References
----------
Seed 001: R. Garcia, J. Liu, R. Junkins, S. Eyuboglu, A. Rudra, C. Re, "MLPs are Hebbians:
Constructing Efficient Fact-Storing MLPs for Transformers" (arXiv 2607.10034): App. A.1.1, A.3.1, A.4.5.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from assocmem._checks import as_real, positive_int as _positive_int, seed_int as _seed
from assocmem.devices import resolve_device
from assocmem.dtypes import cast_checked, check_float_dtype, resolve_dtype
from assocmem._checks import as_bool
from assocmem.mlps.facts import FactSet
from assocmem.mlps.mlp._common import _F64, _checked_facts, _nonneg_float
from assocmem.mlps.mlp.architectures import BilinearMLP

__all__ = [
    "train_mlp",
]


def train_mlp(
    facts: FactSet,
    m: int,
    epochs: int = 10000,
    lr: float = 1e-3,
    loss: str = "ce",
    seed: int = 0,
    device: str | torch.device | None = None,
    tol: float = 1e-7,
    *,
    lr_min: float = 1e-6,
    stop_at_full_accuracy: bool = False,
    check_every: int = 50,
    dtype: torch.dtype | None = None,
    record_every: int = 100,
) -> BilinearMLP:
    """Bilinear gated MLP ``B((A x) * (G x))`` without biases trained by full-batch gradient descent.

    The GD baseline of App. A.1.1: Adam with learning rate ``lr``, cosine annealing from ``lr`` to
    ``lr_min`` over ``epochs`` epochs (``torch.optim.lr_scheduler.CosineAnnealingLR``), one full
    batch (all ``F`` keys) per epoch.

    * ``loss="ce"``: cross-entropy of the value logits ``MLP(k_i) V^T`` ``(F, V)`` against
      ``mapping`` (the criterion of the capacity sweeps; accuracy is its argmax).
    * ``loss="mse"``: mean over facts of ``||MLP(k_i) - v_f(i)||^2`` (used for editing).

    Early stopping: training stops as soon as the epoch's loss is ``<= tol`` (checked every
    epoch), and, when ``stop_at_full_accuracy`` is set, as soon as every fact decodes correctly
    (argmax over every value row, checked every ``check_every`` epochs and at the last epoch).
    Initialisation: ``nn.Linear``'s default (Kaiming-uniform), i.e. ``A, G ~ U(-1/sqrt(d), 1/sqrt(d))``
    and ``B ~ U(-1/sqrt(m), 1/sqrt(m))``, drawn on the CPU from a generator seeded with ``seed``
    (``A``, ``G``, ``B`` in that order). Runs in ``dtype`` (float32 by default).

    Parameters
    ----------
    facts : FactSet
    m : int
        Hidden width.
    epochs : int, default 10000
    lr : float, default 1e-3
    loss : {"ce", "mse"}, default "ce"
    seed : int, default 0
    device : str or torch.device, optional
        ``None``: torch's default device (``torch.get_default_device()``).
    tol : float, default 1e-7
        Stop when the loss is at most ``tol``.
    lr_min : float, default 1e-6
        Final learning rate of the cosine schedule.
    stop_at_full_accuracy : bool, default False
    check_every : int, default 50
    dtype : torch.dtype, optional
        ``None``: torch's default dtype (``torch.get_default_dtype()``).
        torch.float32 or torch.float64 (float16 / bfloat16 are refused, :mod:`assocmem.dtypes`).
    record_every : int, default 100
        Keep the loss every ``record_every`` epochs in ``info["losses"]``.

    Returns
    -------
    BilinearMLP
        On ``device``, weights detached (``requires_grad=False``); ``construction = "gd"``;
        ``info`` holds ``epochs_run``, ``final_loss``, ``stopped`` (``"tol"``, ``"accuracy"`` or
        ``"epochs"``), ``accuracy`` and the recorded ``losses`` as ``(epoch, loss)`` pairs.

    Raises
    ------
    ValueError
        Not a FactSet, ``m < 1``, ``epochs < 1``, an ``lr`` that is not a finite real ``> 0``,
        an ``lr_min`` or ``tol`` that is not a finite real ``>= 0`` (booleans and strings are
        refused), an unknown loss, a ``stop_at_full_accuracy`` that is not a bool, a dtype other
        than float32 / float64, keys or values that overflow ``dtype``, or a training run that
        diverges (a non-finite loss: lower ``lr``).

    References
    ----------
    Seed 001, App. A.1.1 ("GD": Adam at ``1e-3``, cosine-annealed to ``1e-6``, 10,000 epochs),
    App. A.3.1 (the capacity protocol), App. A.4.5 ("GD MLP Setup": early stopping once the
    objective falls below ``1e-7``, and MSE for editing).
    """
    dtype = resolve_dtype(dtype)
    facts = _checked_facts(facts, require_unit_keys=False)
    m = _positive_int("m", m)
    epochs = _positive_int("epochs", epochs)
    check_every = _positive_int("check_every", check_every)
    record_every = _positive_int("record_every", record_every)
    if loss not in ("ce", "mse"):
        raise ValueError(f"loss must be 'ce' or 'mse'; got {loss!r}")
    lr = as_real(lr, "lr", minimum=0.0, strict_min=True)
    lr_min = _nonneg_float("lr_min", lr_min)
    tol = _nonneg_float("tol", tol)
    stop_at_full_accuracy = as_bool(stop_at_full_accuracy, "stop_at_full_accuracy")
    check_float_dtype(dtype)
    dev = resolve_device(device, dtype=dtype)
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    d, d_c = facts.dim, facts.values.shape[1]
    ba, bb = 1.0 / math.sqrt(d), 1.0 / math.sqrt(m)
    A = (torch.rand(m, d, generator=gen, dtype=_F64) * 2 - 1) * ba  # (m, d)
    G = (torch.rand(m, d, generator=gen, dtype=_F64) * 2 - 1) * ba  # (m, d)
    B = (torch.rand(d_c, m, generator=gen, dtype=_F64) * 2 - 1) * bb  # (d_c, m)
    model = BilinearMLP(*(t.to(device=dev, dtype=dtype) for t in (A, G, B)), construction="gd",
                        trainable=True)
    K = cast_checked(facts.keys, dtype, "facts.keys").to(dev)  # (F, d)
    V = cast_checked(facts.values, dtype, "facts.values").to(dev)  # (V, d)
    f = facts.mapping.to(dev)  # (F,)
    T = V[f]  # (F, d)
    opt = torch.optim.Adam(model.parameters(), lr=float(lr))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=lr_min)

    def full_accuracy() -> float:
        with torch.no_grad():
            return (torch.argmax(model(K) @ V.T, dim=1) == f).float().mean().item()

    losses: list[tuple[int, float]] = []
    stopped, value, epoch = "epochs", float("nan"), 0
    for epoch in range(1, epochs + 1):
        opt.zero_grad(set_to_none=True)
        out = model(K)  # (F, d_c)
        if loss == "ce":
            obj = nn.functional.cross_entropy(out @ V.T, f)  # logits (F, V)
        else:
            obj = ((out - T) ** 2).sum(dim=1).mean()
        obj.backward()
        opt.step()
        sched.step()
        value = obj.item()
        if not math.isfinite(value):
            raise ValueError(f"training diverged: the {loss} loss is {value} at epoch {epoch} (lr = {lr:g}); "
                             "lower lr")
        if epoch % record_every == 0 or epoch == 1:
            losses.append((epoch, value))
        if value <= tol:
            stopped = "tol"
            break
        if stop_at_full_accuracy and (epoch % check_every == 0 or epoch == epochs):
            if full_accuracy() == 1.0:
                stopped = "accuracy"
                break
    model.requires_grad_(False)
    model.info = {"epochs_run": epoch, "final_loss": value, "stopped": stopped, "loss": loss,
                  "accuracy": full_accuracy(), "losses": losses, "seed": int(seed), "lr": float(lr)}
    return model
