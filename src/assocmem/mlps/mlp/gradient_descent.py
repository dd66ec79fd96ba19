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

import functools
import math
from collections.abc import Sequence

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
    "train_mlps",
    "train_mlps_reference",
]


def _initial_weights(facts: FactSet, m: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``nn.Linear``'s default initialisation of ``A, G`` ``(m, d)`` and ``B`` ``(d_c, m)``, float64.

    Drawn on the CPU from a generator seeded with ``seed``, ``A``, ``G``, ``B`` in that order.
    """
    gen = torch.Generator(device="cpu").manual_seed(_seed(seed))
    d, d_c = facts.dim, facts.values.shape[1]
    ba, bb = 1.0 / math.sqrt(d), 1.0 / math.sqrt(m)
    A = (torch.rand(m, d, generator=gen, dtype=_F64) * 2 - 1) * ba  # (m, d)
    G = (torch.rand(m, d, generator=gen, dtype=_F64) * 2 - 1) * ba  # (m, d)
    B = (torch.rand(d_c, m, generator=gen, dtype=_F64) * 2 - 1) * bb  # (d_c, m)
    return A, G, B


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
    A, G, B = _initial_weights(facts, m, seed)
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
    model.info = _training_info(epoch, value, stopped, loss, full_accuracy(), losses, int(seed), float(lr))
    return model


def _training_info(epochs_run: int, final_loss: float, stopped: str, loss: str, accuracy: float,
                   losses: list[tuple[int, float]], seed: int, lr: float) -> dict:
    """The ``info`` of a trained GD model (:func:`train_mlp`, :func:`train_mlps`)."""
    return {"epochs_run": epochs_run, "final_loss": final_loss, "stopped": stopped, "loss": loss,
            "accuracy": accuracy, "losses": losses, "seed": seed, "lr": lr}


@functools.lru_cache(maxsize=16)
def _cosine_lrs(lr: float, lr_min: float, epochs: int) -> tuple[float, ...]:
    """The learning rate of each epoch's step, as ``CosineAnnealingLR`` sets it in :func:`train_mlp`.

    Computed by stepping torch's own scheduler on a dummy optimiser, so that the two training
    paths use the same floats (torch's recursive form of the schedule, not a closed form).
    """
    dummy = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([dummy], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=lr_min)
    lrs = []
    for _ in range(epochs):
        lrs.append(float(opt.param_groups[0]["lr"]))
        opt.step()  # no gradient: changes nothing, keeps the scheduler's call-order check quiet
        sched.step()
    return tuple(lrs)


def _logits_through_values(F: int, V: int, d_c: int, m: int) -> bool:
    """Whether ``H (V B)^T`` costs fewer flops than ``(H B^T) V^T`` for the logits ``(F, V)``."""
    return V * d_c * m + F * m * V < F * m * d_c + F * d_c * V


def _views(flat: torch.Tensor, P: int, m: int, d: int, d_c: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``AG`` ``(P, 2, m, d)`` (``A = AG[:, 0]``, ``G = AG[:, 1]``) and ``B`` ``(P, d_c, m)``, views of ``flat``."""
    n = P * 2 * m * d
    return flat[:n].view(P, 2, m, d), flat[n:].view(P, d_c, m)


def _losses_and_grads(flat: torch.Tensor, grad: torch.Tensor, P: int, m: int, K: torch.Tensor, V: torch.Tensor,
                      f: torch.Tensor, T: torch.Tensor, loss: str) -> torch.Tensor:
    """Each probe's loss ``(P,)``; writes the gradient of their sum into ``grad`` (same layout as ``flat``).

    Stacked zero-padded weights (:func:`_views`): keys ``K`` ``(F, d)``, value rows ``V``
    ``(V, d_c)``, mapping ``f`` ``(F,)``, targets ``T = V[f]`` ``(F, d_c)``. The first layer of
    every probe is one GEMM, and so is its gradient; the cross-entropy logits are ``H (V B)^T``
    when that is cheaper than ``(H B^T) V^T`` (narrow probes): the same function summed in another
    order. The gradient is written out by hand (the chain rule through the softmax, the product
    of the two branches and the GEMMs; tested against autograd in
    ``tests/mlps/mlp/test_gradient_descent.py``).
    """
    F, d = K.shape
    n_val, d_c = V.shape
    AG, B = _views(flat, P, m, d, d_c)
    dAG, dB = _views(grad, P, m, d, d_c)
    Z1 = (K @ AG.reshape(P * 2 * m, d).T).view(F, P, 2, m)  # both branches of every probe, one GEMM
    U, W = Z1[:, :, 0].transpose(0, 1), Z1[:, :, 1].transpose(0, 1)  # (P, F, m) each, views
    H = torch.mul(U, W, out=torch.empty(P, F, m, dtype=K.dtype, device=K.device))  # (P, F, m): the features
    narrow = loss == "ce" and _logits_through_values(F, n_val, d_c, m)
    if narrow:
        C = torch.matmul(V, B)  # (P, V, m)
        Z = torch.bmm(H, C.transpose(1, 2))  # (P, F, V)
    else:
        out = torch.bmm(H, B.transpose(1, 2))  # (P, F, d_c)
    if loss == "ce":
        if not narrow:
            Z = (out.reshape(P * F, d_c) @ V.T).view(P, F, n_val)
        logp = torch.log_softmax(Z, dim=2)  # (P, F, V)
        rows = torch.arange(F, device=K.device)
        losses = -logp[:, rows, f].mean(dim=1)  # (P,)
        dZ = logp.exp_()  # the softmax, in place of logp
        dZ[:, rows, f] -= 1.0  # F times d(mean cross-entropy)/dZ: the 1/F is applied to smaller factors
        if narrow:
            dH = torch.bmm(dZ, C).mul_(1.0 / F)  # (P, F, m)
            torch.matmul(V.T, torch.bmm(dZ.transpose(1, 2), H), out=dB)  # (P, d_c, m)
            dB.mul_(1.0 / F)
        else:
            dout = (dZ.reshape(P * F, n_val) @ V).view(P, F, d_c).mul_(1.0 / F)
    else:
        diff = out - T
        losses = (diff * diff).sum(dim=2).mean(dim=1)
        dout = diff.mul_(2.0 / F)
    if not narrow:
        dH = torch.bmm(dout, B)  # (P, F, m)
        torch.bmm(dout.transpose(1, 2), H, out=dB)  # (P, d_c, m)
    dZ1 = torch.empty_like(Z1)  # (F, P, 2, m), the layout of Z1
    torch.mul(dH, W, out=dZ1[:, :, 0].transpose(0, 1))
    torch.mul(dH, U, out=dZ1[:, :, 1].transpose(0, 1))
    torch.mm(dZ1.view(F, P * 2 * m).T, K, out=dAG.view(P * 2 * m, d))
    return losses


def _probe_seeds(seed, n: int) -> list[int]:
    if isinstance(seed, Sequence) and not isinstance(seed, str):
        seeds = [_seed(s) for s in seed]
        if len(seeds) != n:
            raise ValueError(f"seed must be one integer or one per width ({n}); got {len(seeds)} seeds")
        return seeds
    return [_seed(seed)] * n


def _probe_flops(m: int, F: int, V: int, d: int, d_c: int) -> float:
    """Flops of one probe's epoch at width ``m`` (forward and backward), for grouping probes."""
    first = 2 * F * d * 2 * m
    if _logits_through_values(F, V, d_c, m):
        second = 2 * (V * d_c * m + F * m * V)
    else:
        second = 2 * (F * m * d_c + F * d_c * V)
    return 3.0 * (first + second) + 20.0 * F * V  # the softmax's passes, counted as flops


def _stack_groups(widths: list[int], F: int, V: int, d: int, d_c: int) -> list[list[int]]:
    """Probes (indices into ``widths``) grouped into stacks, widths in increasing order: a probe
    joins the current stack while padding everyone to its width costs at most 1.5 times the
    probes' own flops (a narrow probe is not padded to a wide one)."""
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    groups: list[list[int]] = []
    for i in order:
        if groups:
            g = groups[-1]
            own = sum(_probe_flops(widths[j], F, V, d, d_c) for j in g + [i])
            if (len(g) + 1) * _probe_flops(widths[i], F, V, d, d_c) <= 1.5 * own:
                g.append(i)
                continue
        groups.append([i])
    return groups


def _train_stack(K: torch.Tensor, V: torch.Tensor, f: torch.Tensor, T: torch.Tensor, widths: list[int],
                 seeds: list[int], facts: FactSet, epochs: int, lrs: tuple[float, ...], lr: float, loss: str,
                 tol: float, check_every: int, record_every: int, dev: torch.device) -> list[BilinearMLP]:
    """:func:`train_mlps` for one stack of probes (see there); ``lrs`` the schedule's rates."""
    P = len(widths)
    dtype = K.dtype
    d, d_c = K.shape[1], V.shape[1]
    m_max = max(widths)
    flat0 = torch.zeros(P * (2 * m_max * d + d_c * m_max), dtype=_F64)
    AG0, B0 = _views(flat0, P, m_max, d, d_c)
    for p, (m, s) in enumerate(zip(widths, seeds)):
        AG0[p, 0, :m], AG0[p, 1, :m], B0[p, :, :m] = _initial_weights(facts, m, s)
    theta = flat0.to(device=dev, dtype=dtype)
    theta.grad = torch.zeros_like(theta)
    fused = True if dev.type in ("cpu", "cuda") else None

    def adam(params: torch.Tensor) -> torch.optim.Adam:
        return torch.optim.Adam([params], lr=lrs[0], fused=fused)

    opt = adam(theta)
    ids = list(range(P))  # the probe of each row of the stack
    done: dict[int, dict] = {}  # probe -> its weights and stop record, once it left the stack
    history: dict[int, list[tuple[int, float]]] = {p: [] for p in range(P)}
    stop_at: dict[int, tuple[int, float]] = {}  # probe -> (epoch, loss) of its stop
    active = torch.ones(P, dtype=torch.bool, device=dev)
    kept = theta.detach().clone()  # the weights of the probes that stopped (stack layout)
    m_cur = m_max

    def row_map() -> torch.Tensor:
        """The stack row of every entry of the flat layout."""
        rows = torch.arange(len(ids), device=dev)
        return torch.cat((rows.repeat_interleave(2 * m_cur * d), rows.repeat_interleave(d_c * m_cur)))

    rowmap = row_map()
    buf = torch.empty(check_every, P, dtype=dtype, device=dev)  # this block's losses, one row per epoch
    block_start = 1

    def read_block(epoch: int) -> None:
        """Each probe's losses since the last read: records, and the epoch it stopped (or diverged) at."""
        block = buf[: epoch - block_start + 1].tolist()
        for row, probe in enumerate(ids):
            for i, value in enumerate(v[row] for v in block):
                ep = block_start + i
                if ep % record_every == 0 or ep == 1:
                    history[probe].append((ep, value))
                if not value > tol:  # at most tol, or not finite
                    if not math.isfinite(value):
                        raise ValueError(f"training diverged: the {loss} loss of width {widths[probe]} is {value} "
                                         f"at epoch {ep} (lr = {lr:g}); lower lr")
                    stop_at[probe] = (ep, value)
                    break
            else:  # still training: its latest loss (the final record once epoch == epochs)
                stop_at[probe] = (epoch, value)

    def leave(rows: list[int]) -> None:
        """Move stack rows ``rows`` into ``done``."""
        AGk, Bk = _views(kept, len(ids), m_cur, d, d_c)
        for row in rows:
            probe = ids[row]
            m = widths[probe]
            ep, value = stop_at[probe]
            done[probe] = {"A": AGk[row, 0, :m].clone(), "G": AGk[row, 1, :m].clone(), "B": Bk[row, :, :m].clone(),
                           "final_loss": value, "epochs_run": ep,
                           "stopped": "tol" if value <= tol else "epochs"}

    def trimmed(flat: torch.Tensor, idx: torch.Tensor, m_new: int) -> torch.Tensor:
        AGf, Bf = _views(flat, len(ids), m_cur, d, d_c)
        return torch.cat((AGf[idx, :, :m_new].reshape(-1), Bf[idx, :, :m_new].reshape(-1)))

    for epoch in range(1, epochs + 1):
        opt.param_groups[0]["lr"] = lrs[epoch - 1]
        with torch.no_grad():
            L = _losses_and_grads(theta, theta.grad, len(ids), m_cur, K, V, f, T, loss)  # (P_stack,)
        opt.step()
        with torch.no_grad():
            buf[epoch - block_start].copy_(L)
            still = active & (L > tol)  # a loss at most tol, or not finite, ends a probe's training
            if check_every > 1:  # the weights after a stopping probe's last step, kept on the device
                torch.where((active ^ still)[rowmap], theta, kept, out=kept)
            active = still
        if epoch % check_every != 0 and epoch != epochs:
            continue
        read_block(epoch)
        block_start = epoch + 1
        if epoch == epochs:
            if check_every > 1:
                torch.where(active[rowmap], theta.detach(), kept, out=kept)  # these ran every epoch
            else:
                kept = theta.detach().clone()
            leave(list(range(len(ids))))
            break
        live = active.tolist()
        if all(live):
            continue
        if check_every == 1:  # read right after the step: the stack holds the stopped probes' weights
            kept = theta.detach().clone()
        leave([r for r, a in enumerate(live) if not a])
        keep = [r for r, a in enumerate(live) if a]
        if not keep:
            break
        idx = torch.tensor(keep, device=dev)
        m_new = max(widths[ids[r]] for r in keep)
        st = opt.state[theta]
        new_theta = trimmed(theta.detach(), idx, m_new)
        new_theta.grad = torch.zeros_like(new_theta)
        new_opt = adam(new_theta)
        new_opt.state[new_theta] = {"step": st["step"].clone(), "exp_avg": trimmed(st["exp_avg"], idx, m_new),
                                    "exp_avg_sq": trimmed(st["exp_avg_sq"], idx, m_new)}
        kept = trimmed(kept, idx, m_new)
        theta, opt, ids, m_cur = new_theta, new_opt, [ids[r] for r in keep], m_new
        active = active[idx]
        rowmap = row_map()
        buf = torch.empty(check_every, len(ids), dtype=dtype, device=dev)

    models = []
    for p, m in enumerate(widths):
        rec = done[p]
        model = BilinearMLP(rec["A"], rec["G"], rec["B"], construction="gd")
        with torch.no_grad():
            acc = (torch.argmax(model(K) @ V.T, dim=1) == f).float().mean().item()
        model.info = _training_info(rec["epochs_run"], rec["final_loss"], rec["stopped"], loss, acc, history[p],
                                    seeds[p], float(lr))
        models.append(model)
    return models


def train_mlps(
    facts: FactSet,
    widths: Sequence[int],
    epochs: int = 10000,
    lr: float = 1e-3,
    loss: str = "ce",
    seed: int | Sequence[int] = 0,
    device: str | torch.device | None = None,
    tol: float = 1e-7,
    *,
    lr_min: float = 1e-6,
    check_every: int | None = None,
    dtype: torch.dtype | None = None,
    record_every: int = 100,
) -> list[BilinearMLP]:
    """Several GD baselines of different widths trained at once: :func:`train_mlp` for each width.

    The fast path of the GD capacity search (issue 30). Probe ``p`` is the MLP that
    ``train_mlp(facts, widths[p], epochs, lr, loss, seeds[p], device, tol, lr_min=lr_min,
    dtype=dtype)`` trains: the same initial weights (drawn per probe from its seed), Adam at the
    same learning rate on the same cosine schedule (torch's scheduler's floats), one full batch
    per epoch, and the same stopping rule: a probe stops after the step of the first epoch whose
    loss is ``<= tol``, and its weights are the weights after that step. The probes' weights are
    stacked and zero-padded to the widest probe, ``A, G`` ``(P, m_max, d)`` and ``B``
    ``(P, d_c, m_max)``, in one flat buffer; padded units receive exactly zero gradient and stay
    zero. The gradient of the summed losses (written out by hand, one GEMM per layer for all
    probes) gives every probe its own gradient, and one fused Adam step over the buffer updates
    them all (Adam is elementwise, so each probe keeps its own moments). Widths far apart go into
    separate stacks, one after another (a probe joins a stack while padding the stack to its width
    costs at most 1.5 times the probes' own flops). The losses stay on the device; the host reads
    them every ``check_every`` epochs (on a GPU, the only synchronisation), finds each probe's
    stop and drops stopped probes from the stack; between reads a stopping probe's weights are
    kept on the device. The result differs from
    :func:`train_mlp`'s only by floating-point rounding (other summation orders: one GEMM for all
    probes, and cross-entropy logits computed as ``H (V B)^T`` when that is cheaper), which a long
    training can amplify; :func:`train_mlps_reference` is the plain one-width loop it is tested
    against (``tests/mlps/mlp/test_gradient_descent.py``).

    Parameters
    ----------
    facts : FactSet
    widths : sequence of int
        Hidden widths of the probes (``P >= 1``; repeats allowed, e.g. several seeds of a width).
    epochs, lr, loss, tol, lr_min, record_every
        As :func:`train_mlp`.
    seed : int or sequence of int, default 0
        One seed for every probe (the capacity search's rule: the same seed at every width) or
        one per probe.
    device : str or torch.device, optional
        ``None``: torch's default device.
    check_every : int, optional
        Epochs between the host's reads of the losses (stopped probes are then dropped).
        ``None``: 1 on the CPU (reading a CPU tensor synchronises nothing, and a read after every
        step spares the per-epoch copy of the stopping probes' weights), 50 on other devices.
    dtype : torch.dtype, optional
        ``None``: torch's default dtype; float32 or float64.

    Returns
    -------
    list of BilinearMLP
        One per width, in the order of ``widths``, as :func:`train_mlp` returns them (``info``
        with ``epochs_run``, ``final_loss``, ``stopped`` (``"tol"`` or ``"epochs"``),
        ``accuracy``, ``losses``).

    Raises
    ------
    ValueError
        As :func:`train_mlp`; an empty ``widths``, a width that is not a positive integer, or a
        seed sequence whose length is not ``len(widths)``. A probe whose loss is not finite
        raises (as :func:`train_mlp` does), at the next read of the flags.

    References
    ----------
    Seed 001, App. A.1.1 ("GD"), App. A.3.1 (the capacity protocol), App. A.4.5 (stopping below
    ``1e-7``).
    """
    dtype = resolve_dtype(dtype)
    facts = _checked_facts(facts, require_unit_keys=False)
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or len(widths) == 0:
        raise ValueError(f"widths must be a non-empty sequence of positive integers; got {widths!r}")
    widths = [_positive_int("widths", w) for w in widths]
    P = len(widths)
    seeds = _probe_seeds(seed, P)
    epochs = _positive_int("epochs", epochs)
    record_every = _positive_int("record_every", record_every)
    if loss not in ("ce", "mse"):
        raise ValueError(f"loss must be 'ce' or 'mse'; got {loss!r}")
    lr = as_real(lr, "lr", minimum=0.0, strict_min=True)
    lr_min = _nonneg_float("lr_min", lr_min)
    tol = _nonneg_float("tol", tol)
    check_float_dtype(dtype)
    dev = resolve_device(device, dtype=dtype)
    check_every = (1 if dev.type == "cpu" else 50) if check_every is None else _positive_int("check_every", check_every)
    d, d_c = facts.dim, facts.values.shape[1]
    K = cast_checked(facts.keys, dtype, "facts.keys").to(dev)  # (F, d)
    V = cast_checked(facts.values, dtype, "facts.values").to(dev)  # (V, d_c)
    f = facts.mapping.to(dev)  # (F,)
    T = V[f]  # (F, d_c)

    lrs = _cosine_lrs(float(lr), float(lr_min), epochs)
    models: list[BilinearMLP | None] = [None] * P
    for group in _stack_groups(widths, facts.num_facts, facts.values.shape[0], d, d_c):
        trained = _train_stack(K, V, f, T, [widths[i] for i in group], [seeds[i] for i in group], facts,
                               epochs, lrs, float(lr), loss, tol, check_every, record_every, dev)
        for i, model in zip(group, trained):
            models[i] = model
    return models


def train_mlps_reference(
    facts: FactSet,
    widths: Sequence[int],
    epochs: int = 10000,
    lr: float = 1e-3,
    loss: str = "ce",
    seed: int | Sequence[int] = 0,
    device: str | torch.device | None = None,
    tol: float = 1e-7,
    *,
    lr_min: float = 1e-6,
    dtype: torch.dtype | None = None,
    record_every: int = 100,
) -> list[BilinearMLP]:
    """Plain reference for :func:`train_mlps`: :func:`train_mlp` once per width, one after another.

    Parameters and returns as :func:`train_mlps` (no ``check_every``: the one-width loop reads
    the loss every epoch). Raises what :func:`train_mlp` raises, and ``ValueError`` on an empty
    ``widths`` or a seed sequence of the wrong length.
    """
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or len(widths) == 0:
        raise ValueError(f"widths must be a non-empty sequence of positive integers; got {widths!r}")
    seeds = _probe_seeds(seed, len(widths))
    return [train_mlp(facts, m, epochs=epochs, lr=lr, loss=loss, seed=s, device=device, tol=tol, lr_min=lr_min,
                      dtype=dtype, record_every=record_every) for m, s in zip(widths, seeds)]
